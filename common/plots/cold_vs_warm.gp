# One run's steps with no warm-up beside the same run with untimed warm-up forwards, on one log
# axis: the cold first step's size against the warm ones. Each series is the per-step CPU time
# (step,phase,cpu_us,gpu_us,gated: the CSV of common/plots/steps.gp); every step is drawn, the
# wait and warm-up steps too, each with its value written above it.
# usage: gnuplot -c common/plots/call.gp common/plots/cold_vs_warm.gp COLD.csv OUT.png TITLE WARM.csv
#        gnuplot -e "csv='cold.csv'; csv2='warm.csv'; png='out.png'; title='...'" cold_vs_warm.gp
set datafile separator ","
set terminal pngcairo size 900,500 font "sans,10"
set output png
set title title noenhanced
set xlabel "step"
set ylabel "CPU time of the step, microseconds (log scale)"
set logscale y
set yrange [3:500000]
set format y "%.0f"
set grid ytics lc rgb "#cccccc"
set xtics 1
stats csv using 1 skip 1 nooutput
set xrange [-0.4:STATS_max + 0.4]
set key top right
set style data linespoints
plot csv  using 1:3 skip 1 pt 7 ps 1.2 lw 2 lc rgb "#d62728" title "no warm-up: step 0 is the process's first forward", \
     csv2 using 1:3 skip 1 pt 5 ps 1.2 lw 2 lc rgb "#1f77b4" title "5 untimed warm-up forwards first", \
     csv  using 1:3:(sprintf($3 >= 1000 ? "%.0f ms" : "%.0f us", $3 >= 1000 ? $3 / 1000 : $3)) skip 1 with labels offset 0,1 tc rgb "#d62728" notitle, \
     csv2 using 1:3:(sprintf("%.0f us", $3)) skip 1 with labels offset 0,-1.1 tc rgb "#1f77b4" notitle

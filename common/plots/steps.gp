# Per-step CPU dispatch and GPU time of one run, from its CSV (step,phase,cpu_us,gpu_us,gated).
# Wait and warm-up steps are drawn hollow: they ran but the articles' schedule does not record
# them. Log scale, because a cold first step can be a thousand times wider than the rest.
# usage: gnuplot -e "csv='run.csv'; png='run.png'; title='...'" steps.gp
set datafile separator ","
set terminal pngcairo size 900,500 font "sans,10"
set output png
set title title noenhanced
set xlabel "step"
set ylabel "microseconds (log scale)"
set logscale y
set grid ytics mytics
set key top right
stats csv using 1 skip 1 nooutput
if (STATS_max <= 24) { set xtics 1 } else { set format x "%.0f" }
set style data linespoints
active(c) = strcol(2) eq "active" ? column(c) : 1/0
early(c) = strcol(2) ne "active" ? column(c) : 1/0
plot csv using 1:(active(3)) skip 1 pt 7 lc rgb "#d62728" title "CPU dispatch (active)", \
     ''  using 1:(early(3))  skip 1 pt 6 lc rgb "#d62728" title "CPU dispatch (wait/warm-up)", \
     ''  using 1:(active(4)) skip 1 pt 7 lc rgb "#1f77b4" title "GPU time (active)", \
     ''  using 1:(early(4))  skip 1 pt 6 lc rgb "#1f77b4" title "GPU time (wait/warm-up)"

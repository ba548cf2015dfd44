# One run's steps with no warm-up beside the same run with untimed warm-up forwards, on one log
# axis: the cold first step's size against the warm ones. Each series is the per-step CPU time
# (step,phase,cpu_us,gpu_us,gated: the CSV of common/plots/steps.gp); every step is drawn, the
# wait and warm-up steps too, each with its value written above it.
# usage: gnuplot -c common/plots/call.gp common/plots/cold_vs_warm.gp COLD.csv OUT.png TITLE WARM.csv
#        gnuplot -e "csv='cold.csv'; csv2='warm.csv'; png='out.png'; title='...'" cold_vs_warm.gp
set datafile separator ","
set terminal pngcairo size 900,500 font "sans,10"
set output png
# the language of the words: ko when the PNG's name ends in _ko.png (bench/figures.sh draws both);
# code names (kernels, variants, flags) and units stay as they are in both
lang = (strlen(png) > 7 && png[strlen(png) - 6:] eq "_ko.png") ? "ko" : "en"
T(en, ko) = (lang eq "ko") ? ko : en
set title title noenhanced
set xlabel T("step", "스텝")
set ylabel T("CPU time of the step, microseconds (log scale)", "스텝의 CPU 시간, µs (로그 축)")
set logscale y
set yrange [3:500000]
set format y "%.0f"
set grid ytics lc rgb "#cccccc"
set xtics 1
stats csv using 1 skip 1 nooutput
set xrange [-0.4:STATS_max + 0.4]
set key top right
set style data linespoints
us_fmt = T("%.0f us", "%.0f µs")
plot csv  using 1:3 skip 1 pt 7 ps 1.2 lw 2 lc rgb "#d62728" title T("no warm-up: step 0 is the process's first forward", "워밍업 없음: 스텝 0이 프로세스의 첫 forward"), \
     csv2 using 1:3 skip 1 pt 5 ps 1.2 lw 2 lc rgb "#1f77b4" title T("5 untimed warm-up forwards first", "시간을 재지 않는 워밍업 forward 5번을 먼저"), \
     csv  using 1:3:(sprintf($3 >= 1000 ? "%.0f ms" : us_fmt, $3 >= 1000 ? $3 / 1000 : $3)) skip 1 with labels offset 0,1 tc rgb "#d62728" notitle, \
     csv2 using 1:3:(sprintf(us_fmt, $3)) skip 1 with labels offset 0,-1.1 tc rgb "#1f77b4" notitle

# The fusion ladder of one run, from its ladder CSV
# (rung or variant,kernels,hbm_mb,fwd_us,step_us,tflops,pct_floor,speedup,floor_us,rel_err,sm_mhz,power_w): per
# rung, the time per forward issued back to back and the GPU time of one step, against the floor
# (dashed) set by the measured GEMM and copy ceilings. Each bar is labelled with its speed-up over
# eager and, below it, the median SM clock and board power while it ran back to back: a rung
# that runs at a lower clock runs slower for that reason alone.
# usage: gnuplot -e "csv='ladder.csv'; png='ladder.png'; title='...'" ladder.gp
set datafile separator ","
set datafile missing "NaN"
set terminal pngcairo size 900,550 font "sans,10"
set output png
set title title noenhanced
set ylabel "microseconds per forward"
set yrange [0:*]
set grid ytics
set key top right
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics noenhanced
stats csv using 9 skip 1 nooutput
floor = STATS_records > 0 && STATS_invalid < STATS_records ? STATS_max : 0
if (floor > 0) {
    set arrow from graph 0, first floor to graph 1, first floor nohead dt 2 lw 2 lc rgb "#555555"
    set label sprintf("floor %.1f us", floor) at graph 0.01, first floor offset 1,0.8 noenhanced
}
plot csv using 4:xtic(1) skip 1 lc rgb "#1f77b4" title "per forward, back to back", \
     ''  using 5 skip 1 lc rgb "#ff7f0e" title "per step, GPU time only", \
     ''  using ($0 - 0.15):4:(sprintf("%.2fx", $8)) skip 1 with labels offset 0,0.8 notitle, \
     ''  using ($0 - 0.15):(0):(column(11) > 0 ? sprintf("%.0f MHz\n%.0f W", column(11), column(12)) : "") skip 1 \
         with labels offset 0,1.6 font "sans,8" tc rgb "#ffffff" notitle

# The fusion ladder of one run, from its ladder CSV
# (rung or variant,kernels,hbm_mb,fwd_us,step_us,tflops,pct_floor,speedup,floor_us,rel_err,sm_mhz,power_w,
# forwards): per rung, the time per forward issued back to back and the GPU time of one step, against the floor
# (dashed) set by the measured GEMM and copy ceilings. Each bar is labelled with its speed-up over
# eager, and its name on the x axis with the median SM clock and board power while it ran back
# to back: a rung that runs at a lower clock runs slower for that reason alone.
# usage: gnuplot -e "csv='ladder.csv'; png='ladder.png'; title='...'" ladder.gp
set datafile separator ","
set datafile missing "NaN"
set terminal pngcairo size 900,550 font "sans,10"
set output png
# the language of the words: ko when the PNG's name ends in _ko.png (bench/figures.sh draws both);
# code names (kernels, variants, flags) and units stay as they are in both
lang = (strlen(png) > 7 && png[strlen(png) - 6:] eq "_ko.png") ? "ko" : "en"
T(en, ko) = (lang eq "ko") ? ko : en
set title title noenhanced
set ylabel T("microseconds per forward", "forward당 시간 (µs)")
set yrange [0:*]
set grid ytics
set key outside top center horizontal
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics noenhanced
set bmargin 5
stats csv using 4 skip 1 nooutput name "T"
set yrange [0:T_max * 1.12]   # room above the tallest bar for its label
set style textbox opaque noborder
stats csv using 9 skip 1 nooutput
floor = STATS_records > 0 && STATS_invalid < STATS_records ? STATS_max : 0
if (floor > 0) {
    set arrow from graph 0, first floor to graph 1, first floor nohead dt 2 lw 2 lc rgb "#555555"
    set label sprintf(T("floor %.1f us", "하한 %.1f µs"), floor) at graph 0.995, first floor right offset 0,0.8 front boxed noenhanced
}
# each bar's speed-up over eager, over its blue bar (a little further left in Korean: 배 is wider than x)
times_fmt = T("%.2fx", "%.2f배")
times_x = T(0.15, 0.18)
# each rung's name, with the median SM clock and board power while it ran back to back
rung(name, mhz, w) = mhz > 0 ? sprintf("%s\n%.0f MHz\n%.0f W", name, mhz, w) : name
plot csv using 4:xtic(rung(strcol(1), column(11), column(12))) skip 1 lc rgb "#1f77b4" title T("per forward, back to back", "forward당, 연달아 실행"), \
     ''  using 5 skip 1 lc rgb "#ff7f0e" title T("per step, GPU time only", "스텝당, GPU 시간만"), \
     ''  using ($0 - times_x):4:(sprintf(times_fmt, $8)) skip 1 with labels offset 0,0.8 notitle

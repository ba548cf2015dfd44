# Per-step CPU dispatch and GPU time of one run, from its CSV (step,phase,cpu_us,gpu_us,gated).
# Wait and warm-up steps are drawn hollow: they ran but the articles' schedule does not record
# them. A few recorded steps: a log scale, on which a cold first step a thousand times longer
# than the rest still fits. Ten or more (a distribution): a linear scale from zero fitted to the
# recorded steps, on which a spread of a few percent shows; an unrecorded step off that scale is
# drawn at the top edge with its value written beside it.
# usage: gnuplot -e "csv='run.csv'; png='run.png'; title='...'" steps.gp
set datafile separator ","
set terminal pngcairo size 900,500 font "sans,10"
set output png
# the language of the words: ko when the PNG's name ends in _ko.png (bench/figures.sh draws both);
# code names (kernels, variants, flags) and units stay as they are in both
lang = (strlen(png) > 7 && png[strlen(png) - 6:] eq "_ko.png") ? "ko" : "en"
T(en, ko) = (lang eq "ko") ? ko : en
set title title noenhanced
set xlabel T("step", "스텝")
act(c) = strcol(2) eq "active" ? column(c) : 1/0
stats csv using (act(3)) skip 1 nooutput name "C"
stats csv using (act(4)) skip 1 nooutput name "G"
if (C_records >= 10) {
    top = 1.25 * (C_max > G_max ? C_max : G_max)
    set ylabel T("microseconds", "시간 (µs)")
    set yrange [0:top]
    set grid ytics
} else {
    top = 1e300
    set ylabel T("microseconds (log scale)", "시간 (µs, 로그 축)")
    set logscale y
    set grid ytics mytics
}
set key top right
stats csv using 1 skip 1 nooutput
if (STATS_max <= 24) { set xtics 1 } else { set format x "%.0f" }
set style data linespoints
active(c) = strcol(2) eq "active" ? column(c) : 1/0
early(c) = strcol(2) ne "active" ? column(c) : 1/0
# an unrecorded step past the top: at the edge, its value beside it
us_fmt = T("%s %.0f us", "%s %.0f µs")
clip(v) = v > top ? top * 0.985 : v
off(c) = strcol(2) ne "active" && column(c) > top ? column(c) : 1/0
plot csv using 1:(active(3)) skip 1 pt 7 lc rgb "#d62728" title T("CPU dispatch (active)", "CPU 발행 시간 (활성 스텝)"), \
     ''  using 1:(clip(early(3))) skip 1 pt 6 lc rgb "#d62728" title T("CPU dispatch (wait/warm-up)", "CPU 발행 시간 (대기/워밍업 스텝)"), \
     ''  using 1:(active(4)) skip 1 pt 7 lc rgb "#1f77b4" title T("GPU time (active)", "GPU 시간 (활성 스텝)"), \
     ''  using 1:(clip(early(4))) skip 1 pt 6 lc rgb "#1f77b4" title T("GPU time (wait/warm-up)", "GPU 시간 (대기/워밍업 스텝)"), \
     ''  using 1:(off(3) * 0 + top * (0.94 - 0.13 * $1)):(sprintf(us_fmt, "CPU", off(3))) skip 1 with labels left offset 1,0 tc rgb "#d62728" notitle, \
     ''  using 1:(off(4) * 0 + top * (0.88 - 0.13 * $1)):(sprintf(us_fmt, "GPU", off(4))) skip 1 with labels left offset 1,0 tc rgb "#1f77b4" notitle

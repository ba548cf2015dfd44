# CPU dispatch vs GPU time per step against problem size, from a --sweep CSV
# (size,cpu_us,gpu_us,back_to_back_us,...). Below the crossing the GPU waits for the CPU
# (overhead-bound); above it the CPU waits for the GPU (compute-bound).
# usage: gnuplot -e "csv='sweep.csv'; png='sweep.png'; title='...'" crossover.gp
set datafile separator ","
set terminal pngcairo size 900,550 font "sans,10"
set output png
# the language of the words: ko when the PNG's name ends in _ko.png (bench/figures.sh draws both);
# code names (kernels, variants, flags) and units stay as they are in both
lang = (strlen(png) > 7 && png[strlen(png) - 6:] eq "_ko.png") ? "ko" : "en"
T(en, ko) = (lang eq "ko") ? ko : en
set title title noenhanced
set xlabel T("size (x, w, b are size x size)", "크기 (x, w, b는 크기 x 크기 행렬)")
set ylabel T("microseconds per step", "스텝당 시간 (µs)")
set logscale xy 2
set format y "%g"
set grid
set key left top
# the crossing: first size where the GPU time passes the CPU dispatch time, interpolated in log
stats csv using 1 skip 1 nooutput
# the x range, so that the label sits on the side of the line with room for it
stats csv using 1 skip 1 nooutput name "X"
mid = sqrt(X_min * X_max)
cross = -1
prev_size = 0; prev_diff = 0
f(s, d) = (cross < 0 && prev_size > 0 && prev_diff < 0 && d >= 0) ? \
          (cross = exp(log(prev_size) + (log(s) - log(prev_size)) * (-prev_diff) / (d - prev_diff)), 0) : 0
g(s, d) = (prev_size = s, prev_diff = d, 0)
stats csv using (f($1, log($3) - log($2)) + g($1, log($3) - log($2))) skip 1 nooutput
# the label near the top; in Korean under the key, whose longer lines would reach it
label_y = T(0.95, 0.8)
if (cross > 0) {
    set arrow from cross, graph 0 to cross, graph 1 nohead dt 2 lc rgb "#555555"
    set label 1 sprintf(T("crossover near size %.0f", "교차점: 크기 %.0f 근처"), cross) at cross, graph label_y noenhanced
    if (cross > mid) { set label 1 right offset -1,0 } else { set label 1 left offset 1,0 }
}
plot csv using 1:2 skip 1 with linespoints pt 7 lc rgb "#d62728" title T("CPU dispatch per step", "스텝당 CPU 발행 시간"), \
     ''  using 1:3 skip 1 with linespoints pt 7 lc rgb "#1f77b4" title T("GPU time per step", "스텝당 GPU 시간"), \
     ''  using 1:4 skip 1 with linespoints pt 5 lc rgb "#2ca02c" title T("back to back (per step)", "연달아 실행 (스텝당)")

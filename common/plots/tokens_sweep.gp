# Time per forward against the number of tokens (batch x seq), from a --sweep CSV
# (tokens,cpu_us,gpu_us,back_to_back_us,...): CPU dispatch per forward, GPU time per forward,
# and forwards issued back to back. Below the crossing the GPU waits for the CPU
# (overhead-bound); above it the CPU waits for the GPU (compute-bound).
# usage: gnuplot -e "csv='sweep.csv'; png='sweep.png'; title='...'" tokens_sweep.gp
set datafile separator ","
set terminal pngcairo size 900,550 font "sans,10"
set output png
# the language of the words: ko when the PNG's name ends in _ko.png (bench/figures.sh draws both);
# code names (kernels, variants, flags) and units stay as they are in both
lang = (strlen(png) > 7 && png[strlen(png) - 6:] eq "_ko.png") ? "ko" : "en"
T(en, ko) = (lang eq "ko") ? ko : en
set title title noenhanced
set xlabel T("tokens per forward (batch x seq)", "forward당 토큰 수 (batch x seq)")
set ylabel T("microseconds per forward", "forward당 시간 (µs)")
set logscale xy 2
set format y "%g"
set grid
set key left top
# the crossing: first token count where the GPU time passes the CPU dispatch time, interpolated in log
# the x range, so that the label sits on the side of the line with room for it
stats csv using 1 skip 1 nooutput name "X"
mid = sqrt(X_min * X_max)
cross = -1
prev_x = 0; prev_diff = 0
f(x, d) = (cross < 0 && prev_x > 0 && prev_diff < 0 && d >= 0) ? \
          (cross = exp(log(prev_x) + (log(x) - log(prev_x)) * (-prev_diff) / (d - prev_diff)), 0) : 0
g(x, d) = (prev_x = x, prev_diff = d, 0)
stats csv using (f($1, log($3) - log($2)) + g($1, log($3) - log($2))) skip 1 nooutput
# the label near the top; in Korean under the key, whose longer lines would reach it
label_y = T(0.95, 0.8)
if (cross > 0) {
    set arrow from cross, graph 0 to cross, graph 1 nohead dt 2 lc rgb "#555555"
    set label 1 sprintf(T("crossover near %.0f tokens", "교차점: 토큰 %.0f개 근처"), cross) at cross, graph label_y noenhanced
    if (cross > mid) { set label 1 right offset -1,0 } else { set label 1 left offset 1,0 }
}
plot csv using 1:2 skip 1 with linespoints pt 7 lc rgb "#d62728" title T("CPU dispatch per forward", "forward당 CPU 발행 시간"), \
     ''  using 1:3 skip 1 with linespoints pt 7 lc rgb "#1f77b4" title T("GPU time per forward", "forward당 GPU 시간"), \
     ''  using 1:4 skip 1 with linespoints pt 5 lc rgb "#2ca02c" title T("back to back (per forward)", "연달아 실행 (forward당)")

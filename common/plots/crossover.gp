# CPU dispatch vs GPU time per step against problem size, from a --sweep CSV
# (size,cpu_us,gpu_us,back_to_back_us,...). Below the crossing the GPU waits for the CPU
# (overhead-bound); above it the CPU waits for the GPU (compute-bound).
# usage: gnuplot -e "csv='sweep.csv'; png='sweep.png'; title='...'" crossover.gp
set datafile separator ","
set terminal pngcairo size 900,550 font "sans,10"
set output png
set title title noenhanced
set xlabel "size (x, w, b are size x size)"
set ylabel "microseconds per step"
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
if (cross > 0) {
    set arrow from cross, graph 0 to cross, graph 1 nohead dt 2 lc rgb "#555555"
    set label 1 sprintf("crossover near size %.0f", cross) at cross, graph 0.95 noenhanced
    if (cross > mid) { set label 1 right offset -1,0 } else { set label 1 left offset 1,0 }
}
plot csv using 1:2 skip 1 with linespoints pt 7 lc rgb "#d62728" title "CPU dispatch per step", \
     ''  using 1:3 skip 1 with linespoints pt 7 lc rgb "#1f77b4" title "GPU time per step", \
     ''  using 1:4 skip 1 with linespoints pt 5 lc rgb "#2ca02c" title "back to back (per step)"

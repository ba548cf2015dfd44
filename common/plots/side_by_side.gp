# Ours next to PyTorch: per-step CPU dispatch and GPU time of two runs, from their CSVs
# (step,phase,cpu_us,gpu_us,gated). Red: CPU dispatch, blue: GPU time; filled circles and solid
# lines for ours, hollow squares and dashed lines for PyTorch. Log scale: cold first steps
# (PyTorch's torch.compile step 0 includes the compilation) are orders of magnitude wider.
# usage: gnuplot -e "csv1='ours.csv'; csv2='torch.csv'; label1='ours'; label2='PyTorch'; \
#                    png='side_by_side.png'; title='...'" side_by_side.gp
set datafile separator ","
set terminal pngcairo size 1000,600 font "sans,10"
set output png
set title title noenhanced
set xlabel "step (wait and warm-up steps first, then the active ones)"
set ylabel "microseconds (log scale)"
set logscale y
set grid ytics mytics
set key below maxcols 2 noenhanced
stats csv1 using 1 skip 1 nooutput
if (STATS_max <= 24) { set xtics 1 } else { set format x "%.0f" }
set style data linespoints
plot csv1 using 1:3 skip 1 pt 7 lc rgb "#d62728" dt 1 title label1." CPU dispatch", \
     csv1 using 1:4 skip 1 pt 7 lc rgb "#1f77b4" dt 1 title label1." GPU time", \
     csv2 using 1:3 skip 1 pt 4 lc rgb "#d62728" dt 2 title label2." CPU dispatch", \
     csv2 using 1:4 skip 1 pt 4 lc rgb "#1f77b4" dt 2 title label2." GPU time"

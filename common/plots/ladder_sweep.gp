# Time per forward of every rung against the token count, from a --sweep CSV
# (tokens,<one column per rung>,floor; NaN where a rung does not apply). Log-log: where two lines
# cross, the faster rung changes. The floor (dashed) comes from the measured GEMM and copy ceilings.
# usage: gnuplot -e "csv='sweep.csv'; png='sweep.png'; title='...'" ladder_sweep.gp
set datafile separator ","
set datafile missing "NaN"
set terminal pngcairo size 900,550 font "sans,10"
set output png
# the language of the words: ko when the PNG's name ends in _ko.png (bench/figures.sh draws both);
# code names (kernels, variants, flags) and units stay as they are in both
lang = (strlen(png) > 7 && png[strlen(png) - 6:] eq "_ko.png") ? "ko" : "en"
T(en, ko) = (lang eq "ko") ? ko : en
set title title noenhanced
set xlabel T("tokens (batch x seq)", "토큰 수 (batch x seq)")
set ylabel T("microseconds per forward (back to back)", "forward당 시간, 연달아 실행 (µs)")
set logscale x 2
set logscale y 10
set format x "%.0f"
set format y "%g"
set grid xtics ytics mytics
set key outside right top noenhanced
stats csv skip 1 nooutput
ncol = STATS_columns
plot for [i=2:ncol-1] csv using 1:i with linespoints pt 7 ps 0.7 lw 1.5 title columnheader(i), \
     csv using 1:ncol with lines dt 2 lw 2 lc rgb "#555555" title T("floor", "하한")

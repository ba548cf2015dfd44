# SM clock and board power over one long run, from its clocks CSV (t_ms,sm_mhz,power_w,temp_c),
# sampled every few milliseconds. Steps, not lines: a reading holds until the next one. When the
# clock steps down as power reaches its limit, the same kernels take longer: the back-to-back
# time of a run is the time at these clocks, not at the boost clock of one step measured alone.
# usage: gnuplot -e "csv='clocks.csv'; png='clocks.png'; title='...'" clocks.gp
set datafile separator ","
set datafile missing "nan"
set terminal pngcairo size 900,500 font "sans,10"
set output png
# the language of the words: ko when the PNG's name ends in _ko.png (bench/figures.sh draws both);
# code names (kernels, variants, flags) and units stay as they are in both
lang = (strlen(png) > 7 && png[strlen(png) - 6:] eq "_ko.png") ? "ko" : "en"
T(en, ko) = (lang eq "ko") ? ko : en
set title title noenhanced
set xlabel T("seconds since the start of the run", "실행을 시작한 뒤 지난 시간 (초)")
set ylabel T("SM clock (MHz)", "SM 클럭 (MHz)") textcolor rgb "#1f77b4"
set y2label T("board power (W)", "보드 전력 (W)") textcolor rgb "#d62728"
set ytics nomirror textcolor rgb "#1f77b4"
set y2tics textcolor rgb "#d62728"
# from zero, with room above the highest reading for the key
stats csv using 2 skip 1 nooutput
set yrange [0:1.15 * STATS_max]
stats csv using 3 skip 1 nooutput
set y2range [0:1.15 * STATS_max]
set grid ytics
set key top right
plot csv using ($1 / 1000):2 skip 1 with steps lw 2 lc rgb "#1f77b4" title T("SM clock", "SM 클럭"), \
     ''  using ($1 / 1000):3 skip 1 axes x1y2 with steps lw 1 lc rgb "#d62728" title T("board power", "보드 전력")

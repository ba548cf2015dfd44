# One ratio of the shape grid (bench/shape_grid.py) as a heat map, from its CSV
# (x,y,value,tokens,model): token counts across, models (dim x hidden) down, one cell per point,
# coloured by the ratio and labelled with it. The colours are centred on 1 (white): green where
# the ratio is under 1, red over it. A point not measured is a blank cell.
# usage: gnuplot -e "csv='heat_gemm.csv'; png='heat_gemm.png'; title='...'" grid_heatmap.gp
set datafile separator ","
set terminal pngcairo size 900,420 font "sans,10"
set output png
# the language of the words: ko when the PNG's name ends in _ko.png (bench/shape_grid.py draws both)
lang = (strlen(png) > 7 && png[strlen(png) - 6:] eq "_ko.png") ? "ko" : "en"
T(en, ko) = (lang eq "ko") ? ko : en
set title title noenhanced
set xlabel T("tokens per forward", "forward당 토큰 수")
set ylabel T("model: dim x hidden", "모델: dim x hidden")
stats csv using 1 skip 1 nooutput name "X"
stats csv using 2 skip 1 nooutput name "Y"
stats csv using 3 skip 1 nooutput name "V"
set xrange [-0.5:X_max + 0.5]
set yrange [-0.5:Y_max + 0.5]
# symmetric in log around 1, so that 0.5 and 2 are as far from white
span = V_max > 1 / V_min ? V_max : 1 / V_min
span = span < 1.25 ? 1.25 : span
set logscale cb
set cbrange [1 / span:span]
set palette defined (0 "#1a9850", 0.5 "#ffffff", 1 "#d73027")
set cblabel T("ratio (log scale)", "비 (로그 눈금)")
set xtics () noenhanced
set ytics () noenhanced
unset key
set style fill solid 1.0 noborder
plot csv using 1:2:(0.5):(0.5):3:xtic(strcol(4)) skip 1 with boxxyerror fillcolor palette, \
     ''  using 1:2:(0):(0):ytic(strcol(5)) skip 1 with points pt -1, \
     ''  using 1:2:(sprintf("%.2f", $3)) skip 1 with labels font "sans,10" noenhanced

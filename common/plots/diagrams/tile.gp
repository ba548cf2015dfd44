# Version 6's tile and its accumulators, drawn from the code (04_fused_mlp/gemm/6_pingpong.cuh):
# the product x [Wg; Wu]^T, [M, 2 hidden], cut into tiles of BM x BN = 128 x 64 (line 36: BM,
# BN, BK); a tile of m needs the gate tile and the up tile at the same place, the same 128 rows of
# x against 64 rows of Wg and 64 of Wu, stepped through K in slices of BK = 64 (the TMA boxes of
# one stage: x 128 x 64, Wg and Wu 64 x 64, lines 37-38). On the right, one consumer warpgroup's
# registers: d[2][64] per thread, d[h] the rows 64 h .. 64 h + 63 as one wgmma m64n128k16 per 16
# of K whose 128 columns are 64 of gate then 64 of up (mma_step, lines 45-59), so gate register i
# pairs with up register i + 32 (geglu_at, lines 61-65); only gelu(g) * u leaves, as two 64 x 64
# boxes stored by TMA (store_tile_tma, lines 86-116). Tile j of a block goes to consumer j % 2
# (lines 10-13, 166). Versions 2-5 for contrast: a 128 x 128 tile, warpgroup 1 rows 0-63 and
# warpgroup 2 rows 64-127, one wgmma m64n256k16 each (2_wgmma.cuh, lines 10-14).
# The numbers of tiles and of K steps come from the shape CSV (tokens,dim,hidden,sms).
# The labels are English, or Korean when the PNG's name ends in _ko.png (bench/diagrams.sh draws
# both); the code's names (gate, up, x, Wg^T, kt, d[h], wgmma) stay as the code writes them.
# usage: gnuplot -e "csv='common/plots/diagrams/article.csv'; png='tile.png'; title='...'" tile.gp
set datafile separator ","
stats csv using 1 skip 1 nooutput
tokens = int(STATS_max)
stats csv using 2 skip 1 nooutput
dim = int(STATS_max)
stats csv using 3 skip 1 nooutput
hidden = int(STATS_max)
# 6_pingpong.cuh, line 36
BM = 128; BN = 64; BK = 64
tiles_m = (tokens + BM - 1) / BM
tiles_n = (hidden + BN - 1) / BN
ktiles = (dim + BK - 1) / BK

# the language of the labels: ko when the PNG's name ends in _ko.png, else en (as gpu.gp)
lang = (strlen(png) > 7 && png[strlen(png) - 6:] eq "_ko.png") ? "ko" : "en"
T(en, ko) = (lang eq "ko") ? ko : en

set terminal pngcairo size 900,520 font "sans,10" noenhanced
set output png
W = 900.; H = 520.
set lmargin at screen 0; set rmargin at screen 1; set bmargin at screen 0; set tmargin at screen 1
set xrange [0:W]; set yrange [0:H]
unset border; unset tics; unset key
set label 1 title at W / 2, H - 16 center font ",12"

rect(x1, y1, x2, y2, c) = sprintf("set object rect from %g,%g to %g,%g fc rgb '%s' fs solid 1 border lc rgb '#404040' lw 1 back", x1, y1, x2, y2, c)
thin(x1, y1, x2, y2, c) = sprintf("set object rect from %g,%g to %g,%g fc rgb '%s' fs solid 1 noborder back", x1, y1, x2, y2, c)
line(x1, y1, x2, y2, c) = sprintf("set arrow from %g,%g to %g,%g nohead lc rgb '%s' lw 1 back", x1, y1, x2, y2, c)
grey = "#e4e4e4"; gate = "#aec7e8"; gate_d = "#1f77b4"; up = "#ffbb78"; up_d = "#ff7f0e"; mcol = "#98df8a"; slice = "#555555"

# ---- left: the product, schematic sizes; a few tiles drawn, the counts written ----
# output [M, 2 hidden]: gate half and up half, 4 tile rows x 5 tile columns drawn in each
ox = 165; oy = 90; th = 48; tw = 36; nr = 4; nc = 5
gx = ox; ux = ox + nc * tw + 12
pick_r = 1; pick_c = 2          # the tile followed through the picture
eval rect(gx, oy, gx + nc * tw, oy + nr * th, grey)
eval rect(ux, oy, ux + nc * tw, oy + nr * th, grey)
do for [i = 1:nc - 1] { eval line(gx + i * tw, oy, gx + i * tw, oy + nr * th, "#b0b0b0"); eval line(ux + i * tw, oy, ux + i * tw, oy + nr * th, "#b0b0b0") }
do for [i = 1:nr - 1] { eval line(gx, oy + i * th, gx + nc * tw, oy + i * th, "#b0b0b0"); eval line(ux, oy + i * th, ux + nc * tw, oy + i * th, "#b0b0b0") }
ty = oy + (nr - 1 - pick_r) * th
eval rect(gx + pick_c * tw, ty, gx + (pick_c + 1) * tw, ty + th, gate_d)
eval rect(ux + pick_c * tw, ty, ux + (pick_c + 1) * tw, ty + th, up_d)
set label "gate = x Wg^T" at gx + nc * tw / 2, oy - 13 center
set label "up = x Wu^T" at ux + nc * tw / 2, oy - 13 center
set label sprintf("%d", BM) at gx + pick_c * tw - 3, ty + th / 2 right font ",8"
set label sprintf("%d", BN) at gx + (pick_c + 0.5) * tw, ty + th + 7 center font ",8" front

# x [M, dim]: the tile's 128 rows, in K slices of 64
xx = 20; xw = 120
eval rect(xx, oy, xx + xw, oy + nr * th, grey)
eval rect(xx, ty, xx + xw, ty + th, "#c7c7c7")
sw = xw / ktiles
do for [k = 1:ktiles - 1] { eval line(xx + k * sw, ty, xx + k * sw, ty + th, "#808080") }
eval rect(xx + 3 * sw, ty, xx + 4 * sw, ty + th, slice)
set label "x [M, dim]" at xx + xw / 2, oy - 13 center
set label T(sprintf("K: %d slices of %d", ktiles, BK), sprintf("K: %d씩 조각 %d개", BK, ktiles)) at xx + xw / 2, oy + nr * th + 10 center font ",9"
set label "kt" at xx + 3.5 * sw, ty - 8 center font ",8"

# [Wg; Wu]^T [dim, 2 hidden]: the gate tile's 64 columns of Wg^T and the up tile's of Wu^T
wy = oy + nr * th + 22; wh = 120
eval rect(gx, wy, gx + nc * tw, wy + wh, grey)
eval rect(ux, wy, ux + nc * tw, wy + wh, grey)
eval rect(gx + pick_c * tw, wy, gx + (pick_c + 1) * tw, wy + wh, gate)
eval rect(ux + pick_c * tw, wy, ux + (pick_c + 1) * tw, wy + wh, up)
sh = wh / ktiles
do for [k = 1:ktiles - 1] { eval line(gx + pick_c * tw, wy + wh - k * sh, gx + (pick_c + 1) * tw, wy + wh - k * sh, "#808080"); eval line(ux + pick_c * tw, wy + wh - k * sh, ux + (pick_c + 1) * tw, wy + wh - k * sh, "#808080") }
eval rect(gx + pick_c * tw, wy + wh - 4 * sh, gx + (pick_c + 1) * tw, wy + wh - 3 * sh, gate_d)
eval rect(ux + pick_c * tw, wy + wh - 4 * sh, ux + (pick_c + 1) * tw, wy + wh - 3 * sh, up_d)
set label "Wg^T [dim, hidden]" at gx + nc * tw / 2, wy + wh + 12 center
set label "Wu^T [dim, hidden]" at ux + nc * tw / 2, wy + wh + 12 center
set label "kt" at gx + pick_c * tw - 3, wy + wh - 3.5 * sh right font ",8"

# one step of K: the three boxes of one stage of the ring
set label T(sprintf("one step kt of K:\nx box %d x %d,\nWg and Wu boxes\n%d x %d each:\none 32 KB stage\nof the ring", BM, BK, BN, BK), \
    sprintf("K 스텝 kt 하나:\nx 박스 %d x %d,\nWg, Wu 박스\n각각 %d x %d:\n링의 32 KB\n단계 하나", BM, BK, BN, BK)) at xx, wy + wh - 6 left font ",9"

# the counts, under the picture
set label T(sprintf("[M, 2 hidden] = [%d, 2 x %d]: %d x %d tiles of %d x %d in each half; K = dim = %d", tokens, hidden, tiles_m, tiles_n, BM, BN, dim), \
    sprintf("[M, 2 hidden] = [%d, 2 x %d]: 절반마다 %d x %d 타일이 %d x %d개; K = dim = %d", tokens, hidden, BM, BN, tiles_m, tiles_n, dim)) at xx, 52 left
set label T("versions 2-5: a 128 x 128 tile; warpgroup 1 rows 0-63, warpgroup 2 rows 64-127, one wgmma m64n256k16 each", \
    "버전 2~5: 128 x 128 타일; 워프그룹 1은 0~63행, 워프그룹 2는 64~127행을 맡고 각자 wgmma m64n256k16 하나") at xx, 28 left font ",9" textcolor rgb "#555555"

# ---- right: one consumer warpgroup's accumulators for that tile ----
rx = 590; rw = 115; rh = 62; ry = 300
eval rect(rx, ry + rh, rx + rw, ry + 2 * rh, gate)
eval rect(rx + rw, ry + rh, rx + 2 * rw, ry + 2 * rh, up)
eval rect(rx, ry, rx + rw, ry + rh, gate)
eval rect(rx + rw, ry, rx + 2 * rw, ry + rh, up)
set label T("gate: 64 columns", "gate: 64열") at rx + rw / 2, ry + 2 * rh + 10 center font ",9"
set label T("up: 64 columns", "up: 64열") at rx + 1.5 * rw, ry + 2 * rh + 10 center font ",9"
set label T("rows 0-63: d[0]\nregs 0-31", "0~63행: d[0]\n레지스터 0~31") at rx + rw / 2, ry + 1.5 * rh center font ",9"
set label T("rows 0-63: d[0]\nregs 32-63", "0~63행: d[0]\n레지스터 32~63") at rx + 1.5 * rw, ry + 1.5 * rh center font ",9"
set label T("rows 64-127: d[1]\nregs 0-31", "64~127행: d[1]\n레지스터 0~31") at rx + rw / 2, ry + 0.5 * rh center font ",9"
set label T("rows 64-127: d[1]\nregs 32-63", "64~127행: d[1]\n레지스터 32~63") at rx + 1.5 * rw, ry + 0.5 * rh center font ",9"
set label T("one consumer warpgroup (128 threads)", "소비자 워프그룹 하나(스레드 128개)가") at rx - 10, H - 46 left font ",9"
set label T("owns the tile: d[2][64] fp32 a thread", "타일을 맡음: 스레드마다 fp32 d[2][64]") at rx - 10, H - 60 left font ",9"
set label T("each d[h]: one wgmma m64n128k16 per 16 of K", "d[h]마다 K 16에 wgmma m64n128k16 하나") at rx - 10, ry - 12 left font ",9"
set arrow from ux + (pick_c + 1) * tw + 4, ty + th / 2 to rx - 6, ry + rh lc rgb "#404040" lw 1.5 filled

# the epilogue: gelu(g) * u, register i with register i + 32, into two 64 x 64 boxes of m
mw = 150; mx = rx + rw - mw / 2; my = 150; mh = 48
eval rect(mx, my + mh, mx + mw, my + 2 * mh, mcol)
eval rect(mx, my, mx + mw, my + mh, mcol)
set label T("rows 0-63: box 64 x 64", "0~63행: 64 x 64 박스") at mx + mw / 2, my + 1.5 * mh center font ",9"
set label T("rows 64-127: box 64 x 64", "64~127행: 64 x 64 박스") at mx + mw / 2, my + 0.5 * mh center font ",9"
set arrow from rx + rw, ry - 22 to rx + rw, my + 2 * mh + 3 lc rgb "#404040" lw 1.5 filled
set label "gelu(d[h][i]) * d[h][i + 32]" at rx + rw + 8, ry - 36 left font ",9"
set label T("only m is written (TMA stores):", "m만 씀(TMA 저장):") at rx - 10, my - 12 left font ",9"
set label T("gate and up never leave the registers", "gate와 up은 레지스터를 떠나지 않음") at rx - 10, my - 26 left font ",9"
set label T("tile j of a block -> consumer j % 2", "블록의 타일 j -> 소비자 j % 2") at rx - 10, my - 46 left font ",9"
set label T("(warpgroups 1, 2; warpgroup 0 loads)", "(워프그룹 1, 2; 로드는 워프그룹 0)") at rx - 10, my - 60 left font ",9"
plot NaN notitle

# Wave quantization and version 7's stream-K schedule, computed from the shape CSV
# (tokens,dim,hidden,sms) with the code's own rules (04_fused_mlp/gemm/7_stream_k.cuh): tiles of
# 128 x 64 (6_pingpong.cuh, line 36), dim / 64 steps of K each. Top: version 6, block b of
# min(tiles, SMs) takes tiles b, b + grid, ... (6_pingpong.cuh, line 166), so the last partial wave
# leaves SMs idle (7_stream_k.cuh, lines 4-8). Middle: version 7 on every SM (gemm_geglu.cu,
# EVERY_SM, lines 210-214): the whole waves but the last stay whole, the partial wave and the
# one before it are split into one equal range of steps of K per block (split_of, lines 54-61;
# range_start and for_each_piece, lines 69-86). Right: the first blocks' ranges laid along the
# split steps: a piece with k0 > 0 saves its fp32 sums into its block's slot (128 x 128 floats,
# 64 KB, lines 42-43) and raises the block's flag; the piece holding the tile's first step (k0 = 0) owns it:
# it waits for the later blocks' flags, adds their slots in block order and runs the epilogue
# (lines 220-235). Time in tile-times (a tile's whole K loop); epilogues and the scratch round
# trip are not drawn.
# The labels are English, or Korean when the PNG's name ends in _ko.png (bench/diagrams.sh draws
# both); the code's names (k0, SM b, k 0-63) stay as the code writes them.
# usage: gnuplot -e "csv='common/plots/diagrams/llama_512.csv'; png='stream_k.png'; title='...'" stream_k.gp
set datafile separator ","
stats csv using 1 skip 1 nooutput
tokens = int(STATS_max)
stats csv using 2 skip 1 nooutput
dim = int(STATS_max)
stats csv using 3 skip 1 nooutput
hidden = int(STATS_max)
stats csv using 4 skip 1 nooutput
sms = int(STATS_max)
BM = 128; BN = 64; BK = 64
tiles = ((tokens + BM - 1) / BM) * ((hidden + BN - 1) / BN)
ktiles = (dim + BK - 1) / BK
min(a, b) = a < b ? a : b
# version 6: one block per SM, at most one per tile
grid6 = min(tiles, sms); waves6 = tiles / grid6; rest6 = tiles % grid6
end6 = waves6 + (rest6 > 0)
# version 7 (split_of): every SM that has a step of K to do
grid = min(tiles * ktiles, sms); waves = tiles / grid; rest = tiles % grid
dp = rest == 0 ? tiles : (waves >= 1 ? (waves - 1) * grid : 0)
sk_steps = (tiles - dp) * ktiles
range_start(b) = sk_steps * b / grid
dpw = dp / grid                       # whole waves, data-parallel
end7 = dpw + 1.0 * (range_start(1) - range_start(0) + (sk_steps % grid != 0)) / ktiles

# the language of the labels: ko when the PNG's name ends in _ko.png, else en (as gpu.gp)
lang = (strlen(png) > 7 && png[strlen(png) - 6:] eq "_ko.png") ? "ko" : "en"
T(en, ko) = (lang eq "ko") ? ko : en

set terminal pngcairo size 900,600 font "sans,10" noenhanced
set output png
W = 900.; H = 600.
set lmargin at screen 0; set rmargin at screen 1; set bmargin at screen 0; set tmargin at screen 1
set xrange [0:W]; set yrange [0:H]
unset border; unset tics; unset key
set label 1 title at W / 2, H - 16 center font ",12"

rect(x1, y1, x2, y2, c) = sprintf("set object rect from %g,%g to %g,%g fc rgb '%s' fs solid 1 border lc rgb '#404040' lw 1 back", x1, y1, x2, y2, c)
flat(x1, y1, x2, y2, c) = sprintf("set object rect from %g,%g to %g,%g fc rgb '%s' fs solid 1 noborder back", x1, y1, x2, y2, c)
line(x1, y1, x2, y2, c, d) = sprintf("set arrow from %g,%g to %g,%g nohead lc rgb '%s' lw 1 dt %d front", x1, y1, x2, y2, c, d)
arr(x1, y1, x2, y2, c) = sprintf("set arrow from %g,%g to %g,%g head filled size 6,25 lc rgb '%s' lw 1.2 front", x1, y1, x2, y2, c)
wave1 = "#aec7e8"; wave2 = "#c6dbef"; lastw = "#1f77b4"; owner = "#2ca02c"; part = "#bcbd22"; idle = "#fbe3e3"

# ---- the two schedules: SMs down (0 at the top), time across ----
px0 = 70.; px1 = 490.; tmax = end6 + 0.4
TX(t) = px0 + t * (px1 - px0) / tmax
ph = 150.
SY(top, sm) = top - sm * ph / sms      # the top edge of SM sm's row
axis(top, lbl) = sprintf("set label '%s' at %g,%g left font ',9'", lbl, px0, top + 10)
do for [panel = 0:1] {
    top = panel == 0 ? 535. : 315.
    eval line(px0, top - ph, px1, top - ph, "#404040", 1)
    do for [t = 0:end6] {
        eval line(TX(t), top - ph, TX(t), top - ph - 4, "#404040", 1)
        eval sprintf("set label '%d' at %g,%g center font ',8'", t, TX(t), top - ph - 12)
    }
    eval sprintf("set label 'SM 0' at %g,%g right font ',8'", px0 - 4, top - 3)
    eval sprintf("set label 'SM %d' at %g,%g right font ',8'", sms - 1, px0 - 4, top - ph + 3)
}
set label T(sprintf("version 6: block b takes tiles b, b + %d, ...: %d waves and %d tiles", grid6, waves6, rest6), \
    sprintf("버전 6: 블록 b가 타일 b, b + %d, ...를 맡음: 웨이브 %d번과 타일 %d개", grid6, waves6, rest6)) at px0, 535 + 12 left
set label T(sprintf("version 7: %d whole waves; the last %d tiles' %d steps of K in %d ranges", dpw, tiles - dp, sk_steps, grid), \
    sprintf("버전 7: 온전한 웨이브 %d번; 마지막 타일 %d개의 K %d 스텝을 구간 %d개로", dpw, tiles - dp, sk_steps, grid)) at px0, 315 + 12 left
set label T(sprintf("tile-times (one tile: %d steps of K)", ktiles), sprintf("타일 시간 (타일 하나: K %d 스텝)", ktiles)) at px1, 315 - ph - 26 right font ",9"

# version 6
top = 535.
do for [w = 0:waves6 - 1] {
    eval rect(TX(w), SY(top, grid6), TX(w + 1), top, w % 2 ? wave2 : wave1)
    eval sprintf(T("set label 'tiles %d-%d' at", "set label '타일 %d~%d' at") . " %g,%g center font ',8' rotate by 90 front", w * grid6, (w + 1) * grid6 - 1, TX(w + 0.5), (top + SY(top, grid6)) / 2)
}
if (rest6 > 0) {
    eval rect(TX(waves6), SY(top, rest6), TX(waves6 + 1), top, lastw)
    eval rect(TX(waves6), SY(top, sms), TX(waves6 + 1), SY(top, rest6), idle)
    eval sprintf(T("set label '%d SMs idle' at", "set label 'SM %d개 쉼' at") . " %g,%g center font ',9' textcolor rgb '#d62728' front", sms - rest6, TX(waves6 + 0.5), (SY(top, rest6) + SY(top, sms)) / 2)
    eval sprintf("set label '%d' at %g,%g left font ',8' front", rest6, TX(waves6 + 1) + 3, SY(top, rest6) + 5)
}
if (grid6 < sms) {
    eval rect(TX(0), SY(top, sms), TX(end6), SY(top, grid6), idle)
    eval sprintf(T("set label '%d SMs idle' at", "set label 'SM %d개 쉼' at") . " %g,%g center font ',9' textcolor rgb '#d62728' front", sms - grid6, TX(end6 / 2.), (SY(top, grid6) + SY(top, sms)) / 2)
}
eval line(TX(end6), top + 4, TX(end6), 315 - ph - 2, "#d62728", 2)
eval sprintf(T("set label 'done: %d' at", "set label '끝: %d' at") . " %g,%g left font ',9' textcolor rgb '#d62728'", end6, TX(end6) + 3, 535 - 8)

# version 7: the whole waves, then each block's range of the split steps, piece by piece
top = 315.
do for [w = 0:dpw - 1] {
    eval rect(TX(w), SY(top, grid), TX(w + 1), top, w % 2 ? wave2 : wave1)
    eval sprintf(T("set label 'tiles %d-%d' at", "set label '타일 %d~%d' at") . " %g,%g center font ',8' rotate by 90 front", w * grid, (w + 1) * grid - 1, TX(w + 0.5), top - ph / 2)
}
do for [b = 0:grid - 1] {
    lo = range_start(b); hi = range_start(b + 1); it = lo
    while (it < hi) {
        t = it / ktiles; k0 = it - t * ktiles; k1 = min(ktiles, k0 + hi - it)
        t0 = dpw + 1.0 * (it - lo) / ktiles; t1 = t0 + 1.0 * (k1 - k0) / ktiles
        eval flat(TX(t0), SY(top, b + 1), TX(t1), SY(top, b), k0 > 0 ? part : owner)
        eval flat(TX(t1) - 0.6, SY(top, b + 1), TX(t1), SY(top, b), "#ffffff")
        it = it + k1 - k0
    }
}
if (grid < sms) { eval rect(TX(0), SY(top, sms), TX(end6), SY(top, grid), idle) }
eval line(TX(end7), top + 4, TX(end7), top - ph - 2, owner, 2)
eval sprintf(T("set label 'done: %.2f' at", "set label '끝: %.2f' at") . " %g,%g left font ',9' textcolor rgb '%s'", end7, TX(end7) + 3, 315 - 8, owner)

# ---- right: the first blocks' ranges along the split steps, tiles cut across blocks ----
NZ = 4
zx0 = 590.; zx1 = 885.; zs = (zx1 - zx0) / range_start(NZ)
ZX(it) = zx0 + it * zs
zr = 36.; zg = 34.; ztop = 490.
ZY(b) = ztop - b * (zr + zg)           # the top of block b's row
set label T("version 7's split steps in order; block b gets", "버전 7이 나눈 스텝을 차례로; 블록 b가 맡는 구간") at zx0 - 40, ztop + 52 left font ",9"
set label sprintf("[%d b / %d, %d (b + 1) / %d):", sk_steps, grid, sk_steps, grid) at zx0 - 40, ztop + 38 left font ",9"
do for [t = 0:range_start(NZ) / ktiles] {
    eval line(ZX(t * ktiles), ZY(NZ - 1) - zr - 4, ZX(t * ktiles), ztop + 6, "#999999", 2)
    if ((t + 1) * ktiles <= range_start(NZ) + ktiles / 2) {
        eval sprintf(T("set label 'tile %d' at", "set label '타일 %d' at") . " %g,%g center font ',8'", dp + t, ZX((t + 0.5) * ktiles), ztop + 22)
    }
}
do for [b = 0:NZ - 1] {
    lo = range_start(b); hi = range_start(b + 1); it = lo
    eval sprintf(T("set label 'block %d' at", "set label '블록 %d' at") . " %g,%g right font ',8'", b, ZX(lo) - 3, ZY(b) - zr / 2)
    while (it < hi) {
        t = it / ktiles; k0 = it - t * ktiles; k1 = min(ktiles, k0 + hi - it)
        eval rect(ZX(it), ZY(b) - zr, ZX(it + k1 - k0), ZY(b), k0 > 0 ? part : owner)
        if ((k1 - k0) * zs > 46) {
            eval sprintf(T("set label 'k %d-%d' at", "set label 'k %d~%d' at") . " %g,%g center font ',8' front", k0, k1 - 1, ZX(it + (k1 - k0) / 2.), ZY(b) - zr / 2)
        } else {
            # below a later piece (its arrow leaves from its top), above an owner (its arrows come from below)
            eval sprintf(T("set label 'k %d-%d' at", "set label 'k %d~%d' at") . " %g,%g center font ',7' front", k0, k1 - 1, ZX(it + (k1 - k0) / 2.), k0 > 0 ? ZY(b) - zr - 8 : ZY(b) + 8)
        }
        if (k0 > 0) {   # its sums go to the tile's owner: the block whose range holds the tile's first step
            ob = b - 1
            while (ob > 0 && range_start(ob) > t * ktiles) { ob = ob - 1 }
            eval arr(ZX(it) + 6, ZY(b) + 1, min(ZX(it), ZX(range_start(ob + 1))) - 6, ZY(ob) - zr - 1, "#404040")
        }
        it = it + k1 - k0
    }
}
set label T("slot, flag", "슬롯, 플래그") at ZX(range_start(1)) - 8, ZY(0) - zr - zg / 2 right font ",8"

# ---- legend ----
ly = 108.
eval rect(20, ly, 40, ly + 14, wave1)
set label T("a whole tile (data-parallel)", "온전한 타일 (데이터 병렬)") at 46, ly + 7 left font ",9"
eval rect(20, ly - 24, 40, ly - 10, owner)
set label T("owner piece, k0 = 0: waits for the later blocks' flags, adds their slots in block order, runs the epilogue", "소유자 조각, k0 = 0: 뒤 블록들의 플래그를 기다려 그 슬롯을 블록 순서대로 더하고 에필로그를 실행") at 46, ly - 17 left font ",9"
eval rect(20, ly - 48, 40, ly - 34, part)
set label T("later piece, k0 > 0: its fp32 sums into its block's slot (128 x 128 floats, 64 KB), then raises its block's flag", "뒤쪽 조각, k0 > 0: fp32 합계를 자기 블록의 슬롯(float 128 x 128개, 64 KB)에 쓰고 블록의 플래그를 올림") at 46, ly - 41 left font ",9"
eval rect(20, ly - 72, 40, ly - 58, idle)
set label T("idle", "쉼") at 46, ly - 65 left font ",9"
set label T(sprintf("a range: %d or %d steps, %.2f tiles; a piece with k0 > 0 is its block's first, an owner that waits its block's last", sk_steps / grid, sk_steps / grid + 1, 1.0 * sk_steps / grid / ktiles), \
    sprintf("구간 하나: %d 또는 %d 스텝, 타일 %.2f개; k0 > 0인 조각은 블록의 첫 조각, 기다리는 소유자는 블록의 마지막 조각", sk_steps / grid, sk_steps / grid + 1, 1.0 * sk_steps / grid / ktiles)) at 20, ly - 89 left font ",9"
plot NaN notitle

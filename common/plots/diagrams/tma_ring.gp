# Version 3's ring of shared-memory stages, drawn from the code (04_fused_mlp/gemm/
# 3_tma_producer.cuh, the ring from 2_wgmma.cuh): STAGES = 4 stages of 48 KB (x 128 x 64, Wg
# and Wu 128 x 64 each: 2_wgmma.cuh, lines 36-38), two mbarriers per stage (ring_init, lines
# 58-77): full[s] counts the producer's one arrival and the 49152 bytes its three TMA loads
# deliver (produce_tile, lines 79-93), empty[s] the arrivals of the 8 consumer warps (lines
# 95-118), each of which releases a stage one step after it issued the wgmmas reading it
# (wait_group 1). Producer and consumers keep (stage, phase) and flip the phase when the stage
# wraps to 0 (struct Ring, lines 43-56); the producer waits on empty with the opposite parity,
# so its first pass goes through at once (ptx.cuh, mbar_wait, lines 142-154). The strip at the
# bottom: one tile's steps of K (dim / 64 of them, from the shape CSV) through the ring.
# Versions 6 and 7 differ as the footnote says (6_pingpong.cuh, lines 14-17, 36-38, 134-135).
# The labels are English, or Korean when the PNG's name ends in _ko.png (bench/diagrams.sh draws
# both); the code's names (full[s], empty[s], phase, wgmma, wait_group) stay as the code writes them.
# usage: gnuplot -e "csv='common/plots/diagrams/article.csv'; png='ring.png'; title='...'" tma_ring.gp
set datafile separator ","
stats csv using 2 skip 1 nooutput
dim = int(STATS_max)
# 2_wgmma.cuh, line 36; 3_tma_producer.cuh, line 40
BM = 128; BN = 128; BK = 64; STAGES = 4; CONSUMER_WARPS = 8
STAGE_BYTES = BM * BK * 2 + 2 * BN * BK * 2
ktiles = (dim + BK - 1) / BK

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
seg(x1, y1, x2, y2, c) = sprintf("set arrow from %g,%g to %g,%g nohead lc rgb '%s' lw 2 front", x1, y1, x2, y2, c)
arr(x1, y1, x2, y2, c) = sprintf("set arrow from %g,%g to %g,%g head filled size 8,25 lc rgb '%s' lw 2 front", x1, y1, x2, y2, c)
xcol = "#c7c7c7"; gcol = "#aec7e8"; ucol = "#ffbb78"; prod = "#c5b0d5"; cons = "#9edae5"
fullc = "#2ca02c"; emptyc = "#d62728"; p0 = "#f2f2f2"; p1 = "#bdbdbd"

# ---- the producer ----
py = 470
eval rect(20, py, 250, py + 70, prod)
set label T("producer", "생산자") at 135, py + 52 center font ",11"
set label T("warpgroup 0, thread 0 only", "워프그룹 0의 스레드 0만") at 135, py + 33 center font ",9"
set label T("(its other 127 threads exit)", "(나머지 스레드 127개는 종료)") at 135, py + 17 center font ",9"
set label T("for each step of K, into stage s:", "K 스텝마다, 단계 s에:") at 270, py + 62 left
set label T("1  wait empty[s], parity phase ^ 1   (the consumers are done with s)", "1  empty[s]를 패리티 phase ^ 1로 기다림   (소비자들이 s를 다 씀)") at 270, py + 44 left font ",9" textcolor rgb emptyc
set label T(sprintf("2  arrive.expect_tx(full[s], %d bytes)", STAGE_BYTES), sprintf("2  arrive.expect_tx(full[s], %d바이트)", STAGE_BYTES)) at 270, py + 28 left font ",9" textcolor rgb fullc
set label T("3  three TMA loads, x, Wg, Wu, into s; the engine counts their bytes on full[s]", "3  x, Wg, Wu를 s로 TMA 로드 세 번; 엔진이 그 바이트를 full[s]에 셈") at 270, py + 12 left font ",9" textcolor rgb fullc

# ---- the ring: STAGES stages, each with its two barriers ----
x0 = 130; sw = 150; gap = 18; ry = 310; bh = 32
do for [s = 0:STAGES - 1] {
    sx = x0 + s * (sw + gap)
    eval rect(sx, ry, sx + sw, ry + 3 * bh + 22, "#ffffff")
    eval rect(sx + 6, ry + 2 * bh + 4, sx + sw - 6, ry + 3 * bh + 2, xcol)
    eval rect(sx + 6, ry + bh + 4, sx + sw - 6, ry + 2 * bh + 2, gcol)
    eval rect(sx + 6, ry + 4, sx + sw - 6, ry + bh + 2, ucol)
    eval sprintf(T("set label 'stage %d: %d KB' at", "set label '단계 %d: %d KB' at") . " %g,%g center font ',10'", s, STAGE_BYTES / 1024, sx + sw / 2, ry + 3 * bh + 12)
    eval sprintf("set label 'x  %d x %d' at %g,%g center font ',9'", BM, BK, sx + sw / 2, ry + 2.5 * bh + 3)
    eval sprintf("set label 'Wg %d x %d' at %g,%g center font ',9'", BN, BK, sx + sw / 2, ry + 1.5 * bh + 3)
    eval sprintf("set label 'Wu %d x %d' at %g,%g center font ',9'", BN, BK, sx + sw / 2, ry + 0.5 * bh + 3)
    eval rect(sx, ry - 34, sx + sw / 2 - 3, ry - 8, "#e5f5e0")
    eval rect(sx + sw / 2 + 3, ry - 34, sx + sw, ry - 8, "#fde0dd")
    eval sprintf("set label 'full[%d]' at %g,%g center font ',9' textcolor rgb '%s'", s, sx + sw / 4, ry - 21, fullc)
    eval sprintf("set label 'empty[%d]' at %g,%g center font ',9' textcolor rgb '%s'", s, sx + 3 * sw / 4 + 1, ry - 21, emptyc)
}
xe = x0 + STAGES * (sw + gap) - gap
set label T(sprintf("full[s]: 1 arrival + %d bytes", STAGE_BYTES), sprintf("full[s]: 도착 1번 + %d바이트", STAGE_BYTES)) at (x0 + xe) / 2, ry - 46 center font ",9" textcolor rgb fullc
set label T(sprintf("empty[s]: %d arrivals, one per consumer warp", CONSUMER_WARPS), sprintf("empty[s]: 도착 %d번, 소비자 워프마다 한 번", CONSUMER_WARPS)) at (x0 + xe) / 2, ry - 60 center font ",9" textcolor rgb emptyc
# producer -> ring, ring -> consumers
eval arr(135, py, 135 + 40, ry + 3 * bh + 26, "#7b4f9d")
set label "TMA" at 120, py - 18 right font ",9" textcolor rgb "#7b4f9d"
# the wrap-around: after the last stage, stage 0 again with the phase flipped
wy = ry + 1.5 * bh + 10
eval seg(xe, wy, xe + 30, wy, "#555555")
eval seg(xe + 30, wy, xe + 30, ry + 3 * bh + 40, "#555555")
eval seg(xe + 30, ry + 3 * bh + 40, x0 - 25, ry + 3 * bh + 40, "#555555")
eval seg(x0 - 25, ry + 3 * bh + 40, x0 - 25, wy, "#555555")
eval arr(x0 - 25, wy, x0 - 2, wy, "#555555")
set label T(sprintf("stage %d -> 0:", STAGES - 1), sprintf("단계 %d -> 0:", STAGES - 1)) at xe + 36, wy + 12 left font ",9"
set label "phase ^= 1" at xe + 36, wy - 4 left font ",9"
set label T("(a new pass)", "(새 바퀴)") at xe + 36, wy - 20 left font ",9"

# ---- the consumers ----
cy = 190; ch = 42
eval rect(x0, cy, x0 + 2 * sw + gap / 2 - 4, cy + ch, cons)
eval rect(x0 + 2 * sw + 1.5 * gap + 4, cy, xe, cy + ch, cons)
set label T("consumer: warpgroup 1, rows 0-63", "소비자: 워프그룹 1, 0~63행") at x0 + sw, cy + ch / 2 center
set label T("consumer: warpgroup 2, rows 64-127", "소비자: 워프그룹 2, 64~127행") at xe - sw - gap / 4, cy + ch / 2 center
eval arr(x0 + sw / 2, ry - 38, x0 + sw / 2, cy + ch + 2, "#17becf")
eval arr(xe - sw / 2, ry - 38, xe - sw / 2, cy + ch + 2, "#17becf")
set label T("wgmma reads s", "wgmma가 s를 읽음") at x0 + sw / 2 - 6, ry - 52 right font ",9" textcolor rgb "#17a2b8"
set label T("wgmma reads s", "wgmma가 s를 읽음") at xe - sw / 2 + 6, ry - 52 left font ",9" textcolor rgb "#17a2b8"
set label T("each consumer, each step of K, from stage s:", "소비자마다, K 스텝마다, 단계 s에서:") at x0, cy - 14 left
set label T("1  wait full[s], parity phase   2  4 wgmma m64n256k16 from s   3  wait_group 1: the step before has retired,", "1  full[s]를 패리티 phase로 기다림   2  s에서 wgmma m64n256k16 4개   3  wait_group 1: 앞 스텝이 끝남,") at x0, cy - 30 left font ",9"
set label T("    lane 0 of each warp arrives on that step's empty[s]: the 8th arrival hands the stage back to the producer", "    워프마다 레인 0이 그 스텝의 empty[s]에 도착: 8번째 도착이 단계를 생산자에게 돌려줌") at x0, cy - 44 left font ",9" textcolor rgb emptyc

# ---- one tile's steps of K through the ring: stage and parity ----
ty = 80; tw = (xe - x0) / ktiles
set label T(sprintf("%d steps of K", ktiles), sprintf("K %d 스텝", ktiles)) at 20, ty + 22 left font ",9"
set label sprintf("(dim %d / %d)", dim, BK) at 20, ty + 8 left font ",9"
do for [k = 0:ktiles - 1] {
    ph = (k / STAGES) % 2
    eval rect(x0 + k * tw, ty, x0 + (k + 1) * tw - 2, ty + 30, ph ? p1 : p0)
    eval sprintf("set label 'kt %d: s%d' at %g,%g center font ',8'", k, k % STAGES, x0 + (k + 0.5) * tw - 1, ty + 15)
}
do for [p = 0:(ktiles - 1) / STAGES] {
    a = x0 + p * STAGES * tw; b = x0 + ((p + 1) * STAGES < ktiles ? (p + 1) * STAGES : ktiles) * tw
    eval sprintf(T("set label 'pass %d: full parity %d, empty parity %d' at", "set label '바퀴 %d: full 패리티 %d, empty 패리티 %d' at") . " %g,%g center font ',8'", p, p % 2, 1 - p % 2, (a + b) / 2, ty - 10)
}
set label T("a fresh barrier counts its phase 'before 0' (parity 1) as completed: the producer's first pass waits for nothing", "새 배리어는 '0 이전' 페이즈(패리티 1)를 끝난 것으로 침: 생산자의 첫 바퀴는 아무것도 기다리지 않음") at x0, 30 left font ",8" textcolor rgb "#555555"
set label T("versions 6, 7: 6 stages of 32 KB; empty[s] counts the 4 warps of the one consumer that reads s", "버전 6, 7: 32 KB 단계 6개; empty[s]는 s를 읽는 소비자 하나의 워프 4개를 셈") at x0, 14 left font ",8" textcolor rgb "#555555"
plot NaN notitle

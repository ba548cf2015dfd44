# Version 6's ping-pong schedule as a timeline, drawn from the code (04_fused_mlp/gemm/
# 6_pingpong.cuh): time across, one lane per warpgroup. The producer (warpgroup 0, one thread)
# fills the 6-stage ring in tile order (lines 142-160), each load labelled with its stage; tile j
# of the block goes to consumer j % 2 (line 166). A consumer starts tile j's K loop only when
# the other has finished tile j - 1's (the wait on turn[other], line 171), and hands the turn over
# right after its own last wait on the ring (line 192), before it drains its wgmmas and runs the
# epilogue: gelu(g) * u into its shared-memory boxes and the TMA stores (lines 193-198). So the
# tensor cores go from one consumer's tile to the other's without a gap, where version 5's two
# consumers share one 128 x 128 tile and both run its epilogue while no wgmma is issued (the
# bottom lane; 5_tma_store.cuh, lines 26-27). Steps of K per tile: dim / 64 from the shape CSV;
# the lengths are schematic: a step of K is one unit, a load its latency, an epilogue EPI units.
# Version 7 keeps these lanes and adds setmaxnreg: producer 40 registers, consumers 232
# (7_stream_k.cuh, lines 44-46, 164, 182).
# The labels are English, or Korean when the PNG's name ends in _ko.png (bench/diagrams.sh draws
# both); the code's names (turn[c], wgmma, setmaxnreg) stay as the code writes them.
# usage: gnuplot -e "csv='common/plots/diagrams/article.csv'; png='pingpong.png'; title='...'" pingpong.gp
set datafile separator ","
stats csv using 2 skip 1 nooutput
dim = int(STATS_max)
# 6_pingpong.cuh, line 36
BK = 64; STAGES = 6
ktiles = (dim + BK - 1) / BK
TILES = 4           # tiles of the block drawn: j = 0 .. 3
EPI = 4.0           # an epilogue, in steps of K (schematic)
LAT = 0.85          # a TMA load's latency (schematic)
T = TILES * ktiles + EPI          # version 6's last epilogue ends here
T5 = (TILES / 2) * (2 * ktiles + EPI)   # version 5: half as many tiles, each twice the work

# the language of the labels: ko when the PNG's name ends in _ko.png, else en (as gpu.gp); the
# time T above is why the switch is called L here
lang = (strlen(png) > 7 && png[strlen(png) - 6:] eq "_ko.png") ? "ko" : "en"
L(en, ko) = (lang eq "ko") ? ko : en

set terminal pngcairo size 900,440 font "sans,10" noenhanced
set output png
W = 900.; H = 440.
set lmargin at screen 0; set rmargin at screen 1; set bmargin at screen 0; set tmargin at screen 1
set xrange [0:W]; set yrange [0:H]
unset border; unset tics; unset key
set label 1 title at W / 2, H - 16 center font ",12"

rect(x1, y1, x2, y2, c) = sprintf("set object rect from %g,%g to %g,%g fc rgb '%s' fs solid 1 border lc rgb '#404040' lw 1 back", x1, y1, x2, y2, c)
flat(x1, y1, x2, y2, c) = sprintf("set object rect from %g,%g to %g,%g fc rgb '%s' fs solid 1 noborder back", x1, y1, x2, y2, c)
tick(x1, y1, x2, y2) = sprintf("set arrow from %g,%g to %g,%g nohead lc rgb '#ffffff' lw 1 front", x1, y1, x2, y2)
arr(x1, y1, x2, y2, c) = sprintf("set arrow from %g,%g to %g,%g head filled size 6,25 lc rgb '%s' lw 1.5 front", x1, y1, x2, y2, c)
c0 = "#1f77b4"; c0l = "#aec7e8"; c1 = "#ff7f0e"; c1l = "#ffbb78"; epi = "#98df8a"; idle = "#eeeeee"

x0 = 200.; u = (W - x0 - 20) / (T5 + 1.5)      # pixels per step of K; time 0 at x0 + 1.5 u
X(t) = x0 + (t + 1.5) * u
lh = 34                                           # lane height
Y(lane) = H - 84 - lane * 64                      # bottom of lane 0, 1, ...

# lane labels
set label L("producer (warpgroup 0,", "생산자 (워프그룹 0,")  at 14, Y(0) + lh / 2 + 7 left
set label L("1 thread): TMA loads", "스레드 1개): TMA 로드")    at 14, Y(0) + lh / 2 - 7 left
set label L("consumer 1", "소비자 1")              at 14, Y(1) + lh / 2 + 7 left textcolor rgb c0
set label L("(warpgroup 1)", "(워프그룹 1)")           at 14, Y(1) + lh / 2 - 7 left textcolor rgb c0
set label L("consumer 2", "소비자 2")              at 14, Y(2) + lh / 2 + 7 left textcolor rgb c1
set label L("(warpgroup 2)", "(워프그룹 2)")           at 14, Y(2) + lh / 2 - 7 left textcolor rgb c1
set label L("tensor cores", "텐서 코어")            at 14, Y(3) + lh / 2 + 7 left
set label L("(version 6)", "(버전 6)")             at 14, Y(3) + lh / 2 - 7 left
set label L("tensor cores, version 5", "텐서 코어, 버전 5") at 14, Y(4) + lh / 2 + 7 left textcolor rgb "#555555"
set label L("(one 128 x 128 tile)", "(128 x 128 타일 하나)")   at 14, Y(4) + lh / 2 - 7 left textcolor rgb "#555555"

# the producer: the ring's 6 stages filled at once, then one load per released stage; load of
# ring position p (stage p % 6) goes out when the step 5 before it has released its stage
eval rect(X(-1.4), Y(0), X(-0.1), Y(0) + lh, "#c5b0d5")
set label L(sprintf("0-%d", STAGES - 1), sprintf("0~%d", STAGES - 1)) at X(-0.75), Y(0) + lh / 2 center font ",8"
do for [p = STAGES:TILES * ktiles - 1] {
    t = p - STAGES + 1
    eval rect(X(t), Y(0) + 4, X(t + LAT), Y(0) + lh - 4, (p / ktiles) % 2 ? c1l : c0l)
    eval sprintf("set label '%d' at %g,%g center font ',8' front", p % STAGES, X(t + LAT / 2), Y(0) + lh / 2)
}

# the consumers: tile j on consumer j % 2, its K loop from j ktiles, then its epilogue
do for [j = 0:TILES - 1] {
    c = j % 2; yl = Y(1 + c); a = j * ktiles; b = (j + 1) * ktiles
    eval rect(X(a), yl, X(b), yl + lh, c ? c1 : c0)
    do for [k = 1:ktiles - 1] { eval tick(X(a + k), yl, X(a + k), yl + 5) }
    eval sprintf(L("set label 'tile %d, %d steps of K' at", "set label '타일 %d, K %d 스텝' at") . " %g,%g center font ',9' textcolor rgb '#ffffff' front", j, ktiles, X((a + b) / 2.), yl + lh / 2)
    eval rect(X(b), yl, X(b + EPI), yl + lh, epi)
    eval sprintf(L("set label 'epilogue' at", "set label '에필로그' at") . " %g,%g center font ',7' front", X(b + EPI / 2), yl + lh / 2)
    # the tensor cores run this tile's wgmmas
    eval rect(X(a), Y(3), X(b), Y(3) + lh, c ? c1l : c0l)
    eval sprintf(L("set label 'tile %d' at", "set label '타일 %d' at") . " %g,%g center font ',9' front", j, X((a + b) / 2.), Y(3) + lh / 2)
    # the turn handed over at the end of the K loop
    if (j < TILES - 1) {
        eval arr(X(b), yl + (c ? lh + 2 : -2), X(b), Y(1 + 1 - c) + (c ? -2 : lh + 2), "#404040")
        eval sprintf("set label 'turn[%d]' at %g,%g left font ',8' front", c, X(b) + 3, (yl + Y(2 - c) + lh) / 2.)
    }
    # waiting for its next turn
    if (j + 2 < TILES) {
        eval flat(X(b + EPI), yl + 8, X(b + ktiles), yl + lh - 8, idle)
        eval sprintf(L("set label 'waits turn[%d]' at", "set label 'turn[%d]을 기다림' at") . " %g,%g center font ',8' textcolor rgb '#777777' front", 1 - c, X(b + EPI + (ktiles - EPI) / 2.), yl + lh / 2)
    }
}
# consumer 2 before its first tile
eval flat(X(0), Y(2) + 8, X(ktiles), Y(2) + lh - 8, idle)
set label L("waits turn[0]", "turn[0]을 기다림") at X(ktiles / 2.), Y(2) + lh / 2 center font ",8" textcolor rgb "#777777" front

# version 5: both consumers on one tile of twice the width, then both in its epilogue
do for [j = 0:TILES / 2 - 1] {
    a = j * (2 * ktiles + EPI); b = a + 2 * ktiles
    eval rect(X(a), Y(4), X(b), Y(4) + lh, "#c7c7c7")
    eval sprintf(L("set label 'a 128 x 128 tile, %d steps of K, both consumers' at", "set label '128 x 128 타일, K %d 스텝, 소비자 둘 다' at") . " %g,%g center font ',8' front", ktiles, X((a + b) / 2.), Y(4) + lh / 2)
    eval rect(X(b), Y(4), X(b + EPI), Y(4) + lh, "#ffffff")
    eval sprintf(L("set label 'idle' at", "set label '쉼' at") . " %g,%g center font ',8' textcolor rgb '#d62728' front", X(b + EPI / 2), Y(4) + lh / 2)
}
set label L("both in the epilogue: no wgmma", "둘 다 에필로그 중: wgmma 없음") at X(2 * ktiles + EPI / 2), Y(4) - 10 center font ",8" textcolor rgb "#d62728"

set label L("each load: the stage it fills (0-5), coloured by the consumer that reads it", "각 로드: 채우는 단계 (0~5), 색은 그 단계를 읽는 소비자") at X(0), Y(0) + lh + 8 left font ",8"
# the time axis
set arrow from X(0), Y(4) - 26 to X(T5 + 0.5), Y(4) - 26 head filled size 6,25 lc rgb "#404040" lw 1
set label L("time (schematic: one unit = one step of K's wgmma; an epilogue drawn as 4 steps)", "시간 (개념도: 한 칸 = K 한 스텝의 wgmma; 에필로그는 4스텝으로 그림)") at X(0), Y(4) - 40 left font ",9"
set label L(sprintf("the same 4 tiles of m: version 6 done at %.0f units, version 5 at %.0f", T, T5), sprintf("같은 m 타일 4개: 버전 6은 %.0f칸, 버전 5는 %.0f칸에 끝남", T, T5)) at X(0), Y(4) - 54 left font ",9"
set label L("version 7: the same lanes, with setmaxnreg: the producer down to 40 registers a thread, the consumers up to 232", "버전 7: 레인은 같고 setmaxnreg로 스레드당 레지스터를 생산자는 40개로 줄이고 소비자는 232개로 늘림") at X(0), Y(4) - 68 left font ",8" textcolor rgb "#555555"
set arrow from X(T), Y(3) - 4 to X(T), Y(4) + lh + 2 nohead dt 2 lc rgb "#404040" front
plot NaN notitle

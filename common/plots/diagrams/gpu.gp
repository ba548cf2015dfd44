# The GPU in a dozen terms (docs/00_gpu_primer.md), schematic: a CPU thread issuing launches into
# a stream; the GPU's SMs (8 drawn), each running a thread block of warps beside its shared
# memory and tensor cores, two of them a cluster; the L2 cache all SMs share; HBM under it. On the
# right, a GEMM's output cut into tiles, one thread block each, handed to the 8 SMs in waves: the
# last wave is partial and leaves SMs idle. The line under it counts the same for a real shape on
# a real SM count, from the shape CSV (tokens,dim,hidden,sms) and the tile of the stream-K
# diagram (128 x 64): the numbers are arithmetic on the shape, not measurements.
# The labels are English, or Korean when the PNG's name ends in _ko.png (bench/diagrams.sh draws both).
# usage: gnuplot -e "csv='common/plots/diagrams/llama_512.csv'; png='gpu.png'; title='...'" gpu.gp
set datafile separator ","
stats csv using 1 skip 1 nooutput
tokens = int(STATS_max)
stats csv using 2 skip 1 nooutput
dim = int(STATS_max)
stats csv using 3 skip 1 nooutput
hidden = int(STATS_max)
stats csv using 4 skip 1 nooutput
sms = int(STATS_max)
BM = 128; BN = 64
real_tiles = ((tokens + BM - 1) / BM) * ((hidden + BN - 1) / BN)
real_full = real_tiles / sms
real_last = real_tiles - real_full * sms

# the language of the labels: ko when the PNG's name ends in _ko.png (call.gp passes no more
# arguments: a loaded script sees none), else en
lang = (strlen(png) > 7 && png[strlen(png) - 6:] eq "_ko.png") ? "ko" : "en"
T(en, ko) = (lang eq "ko") ? ko : en

set terminal pngcairo size 1200,600 font "sans,10" noenhanced
set output png
W = 1200.; H = 600.
set lmargin at screen 0; set rmargin at screen 1; set bmargin at screen 0; set tmargin at screen 1
set xrange [0:W]; set yrange [0:H]
unset border; unset tics; unset key
set label 1 title at W / 2, H - 16 center font ",12"

rect(x1, y1, x2, y2, c) = sprintf("set object rect from %g,%g to %g,%g fc rgb '%s' fs solid 1 border lc rgb '#404040' lw 1 back", x1, y1, x2, y2, c)
thin(x1, y1, x2, y2, c) = sprintf("set object rect from %g,%g to %g,%g fc rgb '%s' fs solid 1 noborder back", x1, y1, x2, y2, c)
dashed(x1, y1, x2, y2, c) = sprintf("set object rect from %g,%g to %g,%g fs empty border lc rgb '%s' lw 1.5 dt 2 front", x1, y1, x2, y2, c)
arrow(x1, y1, x2, y2) = sprintf("set arrow from %g,%g to %g,%g lc rgb '#404040' lw 1.5 filled", x1, y1, x2, y2)
twoway(x1, y1, x2, y2) = sprintf("set arrow from %g,%g to %g,%g heads lc rgb '#404040' lw 1.5 filled", x1, y1, x2, y2)
grey = "#e4e4e4"; cpu = "#c5b0d5"; smc = "#dbe9f6"; warp = "#1f77b4"; smem = "#98df8a"; tc = "#ff9896"
l2c = "#ffdd99"; hbm = "#c7c7c7"
array wave[5] = ["#aec7e8", "#ffbb78", "#c5e0b4", "#f7b6d2", "#d62728"]

# ---- left: the CPU and the stream ----
cx1 = 20; cx2 = 200; cy1 = 400; cy2 = 560
eval rect(cx1, cy1, cx2, cy2, cpu)
set label T("CPU thread", "CPU 스레드") at (cx1 + cx2) / 2, cy2 - 16 center font ",11"
set label T("launch(k1)  returns", "launch(k1)  곧 반환") at cx1 + 10, cy2 - 44 left font ",9"
set label T("launch(k2)  returns", "launch(k2)  곧 반환") at cx1 + 10, cy2 - 62 left font ",9"
set label T("launch(k3)  returns", "launch(k3)  곧 반환") at cx1 + 10, cy2 - 80 left font ",9"
set label T("a few µs of CPU each;", "런치마다 CPU 시간 몇 µs,") at cx1 + 10, cy2 - 106 left font ",9"
set label T("it does not wait for the GPU", "GPU를 기다리지 않음") at cx1 + 10, cy2 - 120 left font ",9"
set label T("(a CUDA graph: one launch for many)", "(CUDA 그래프: 여러 커널을 한 번에)") at cx1 + 10, cy2 - 140 left font ",8" textcolor rgb "#555555"
# the stream: a queue, first in on the right
sx = 220; sy = 455; sw = 58; sh = 36
do for [i = 0:2] {
    eval rect(sx + i * (sw + 4), sy, sx + i * (sw + 4) + sw, sy + sh, "#fdfdfd")
    set label sprintf("k%d", 3 - i) at sx + i * (sw + 4) + sw / 2, sy + sh / 2 center
}
set label T("stream: a queue of GPU work,", "스트림: GPU 작업의 큐,") at sx, sy + sh + 28 left font ",9"
set label T("run in order, one after another", "넣은 순서대로 하나씩 실행") at sx, sy + sh + 14 left font ",9"
eval arrow(cx2 + 2, sy + sh / 2, sx - 2, sy + sh / 2)
eval arrow(sx + 3 * (sw + 4), sy + sh / 2, 428, sy + sh / 2)

# what the SM boxes show, in words
set label T("inside an SM:", "SM 안에서:") at cx1, 330 left
set label T("a warp: 32 threads that run one", "워프: 한 명령어를 함께 실행하는") at cx1, 310 left font ",9"
set label T("instruction together", "스레드 32개") at cx1, 296 left font ",9"
set label T("a thread block: warps on one SM,", "스레드 블록: SM 하나에 머무는 워프들,") at cx1, 276 left font ",9"
set label T("sharing its smem", "그 SM의 공유 메모리를 함께 씀") at cx1, 262 left font ",9"
set label T("occupancy: the warps (blocks) an", "점유율: SM 하나가 한 번에 품는") at cx1, 242 left font ",9"
set label T("SM holds at once", "워프(블록)의 수") at cx1, 228 left font ",9"
set label T("a cluster: blocks on neighbouring", "클러스터: 이웃한 SM들의 블록,") at cx1, 208 left font ",9"
set label T("SMs that read each other's smem", "서로의 공유 메모리를 읽음") at cx1, 194 left font ",9"

# ---- middle: the GPU ----
gx1 = 430; gx2 = 770; gy1 = 40; gy2 = 570
eval rect(gx1, gy1, gx2, gy2, "#f7f7f7")
set label T(sprintf("GPU: %d SMs on an H200; 8 drawn", sms), sprintf("GPU: H200의 SM %d개 중 8개", sms)) at (gx1 + gx2) / 2, gy2 - 14 center font ",11"
smw = 76; smh = 122; gap = 6
smx(i) = gx1 + 10 + (i % 4) * (smw + gap)
smy(i) = (i < 4) ? 420 : 272
do for [i = 0:7] {
    x = smx(i); y = smy(i)
    eval rect(x, y, x + smw, y + smh, smc)
    set label sprintf("SM %d", i) at x + smw / 2, y + smh - 10 center font ",9"
    # one thread block: 4 warps of 32 threads, in lockstep
    do for [k = 0:3] { eval thin(x + 6, y + 76 - k * 11, x + 44, y + 82 - k * 11, warp) }
    eval thin(x + 50, y + 44, x + smw - 6, y + 82, tc)
    eval thin(x + 6, y + 8, x + smw - 6, y + 26, smem)
}
# the labels of SM 0, the one followed
set label T("block", "블록") at smx(0) + 25, smy(0) + 96 center font ",8"
set label "TC" at smx(0) + 63, smy(0) + 63 center font ",8"
set label T("smem", "공유 메모리") at smx(0) + smw / 2, smy(0) + 17 center font ",8"
set label T("warps", "워프") at smx(4) + 25, smy(4) + 96 center font ",8"
set label "TC" at smx(4) + 63, smy(4) + 63 center font ",8"
set label T("smem", "공유 메모리") at smx(4) + smw / 2, smy(4) + 17 center font ",8"
# a cluster: SM 2 and SM 3 read each other's shared memory
eval dashed(smx(2) - 3, smy(2) - 3, smx(3) + smw + 3, smy(3) + smh + 3, "#d62728")
set label T("cluster", "클러스터") at smx(3) + smw + 3, smy(3) - 12 right font ",9" textcolor rgb "#d62728"
set label T(sprintf("... and %d more SMs", sms - 8), sprintf("... 그 밖의 SM %d개", sms - 8)) at gx2 - 14, 255 right font ",9" textcolor rgb "#555555"
# L2 and HBM
eval rect(gx1 + 10, 190, gx2 - 10, 236, l2c)
set label T("L2 cache: shared by every SM", "L2 캐시: 모든 SM이 함께 씀") at (gx1 + gx2) / 2, 213 center
eval twoway(gx1 + 60, 238, gx1 + 60, 268)
eval rect(gx1 + 10, 60, gx2 - 10, 150, hbm)
set label T("HBM: the GPU's main memory", "HBM: GPU 메인 메모리") at (gx1 + gx2) / 2, 118 center font ",11"
set label T("weights, activations, every tensor", "가중치, 활성값, 모든 텐서") at (gx1 + gx2) / 2, 96 center font ",9"
set label T("the slowest and largest level", "가장 크고 가장 느린 층") at (gx1 + gx2) / 2, 80 center font ",9"
eval twoway((gx1 + gx2) / 2, 152, (gx1 + gx2) / 2, 188)
set label T("TC: tensor cores (matrix multiply)    smem: shared memory, one SM's scratchpad", "TC: 텐서 코어 (행렬 곱셈 유닛)    공유 메모리: SM 하나의 스크래치패드") at gx1, 24 left font ",8" textcolor rgb "#555555"

# ---- right: a GEMM's output in tiles, handed to the 8 SMs in waves ----
nr = 6; nc = 6; tw = 44; tx = 840; ty = 250
do for [r = 0:nr - 1] {
    do for [c = 0:nc - 1] {
        t = r * nc + c
        w = t / 8
        x = tx + c * tw; y = ty + (nr - 1 - r) * tw
        eval rect(x, y, x + tw, y + tw, wave[w + 1])
        set label sprintf("SM %d", t % 8) at x + tw / 2, y + tw / 2 center font ",8" textcolor rgb (w == 4 ? "#ffffff" : "#202020") front
    }
}
set label T("a GEMM's output C, in tiles:", "타일로 나눈 GEMM의 출력 C:") at tx, ty + nr * tw + 44 left
set label T("one thread block computes one tile;", "스레드 블록 하나가 타일 하나를 계산,") at tx, ty + nr * tw + 30 left font ",9"
set label T("the grid: the blocks of one launch, one per tile", "그리드: 런치 한 번의 블록 전체, 타일마다 하나") at tx, ty + nr * tw + 16 left font ",9"
do for [w = 0:4] {
    eval rect(tx + w * 66, ty - 40, tx + w * 66 + 14, ty - 26, wave[w + 1])
    set label T(sprintf("wave %d", w + 1), sprintf("웨이브 %d", w + 1)) at tx + w * 66 + 18, ty - 33 left font ",9"
}
set label T("36 tiles on 8 SMs: 4 full waves, then a fifth", "SM 8개에 타일 36개: 꽉 찬 웨이브 4번 뒤") at tx, ty - 58 left font ",9"
set label T("of 4 tiles while 4 SMs idle", "다섯 번째는 타일 4개, SM 4개는 놂") at tx, ty - 72 left font ",9"
set label T("epilogue: each block adds the bias, applies the", "에필로그: 블록마다 타일에 편향을 더하고") at tx, ty - 104 left font ",9"
set label T("activation to its tile, then writes it to HBM", "활성화 함수를 적용한 뒤 HBM에 씀") at tx, ty - 118 left font ",9"
# the real count, from the shape CSV
set label T(sprintf("on an H200, a %d x %d output in tiles of %d x %d:", tokens, hidden, BM, BN), sprintf("H200에서 %d x %d 출력을 %d x %d 타일로 나누면:", tokens, hidden, BM, BN)) at tx, 100 left font ",9"
set label T(sprintf("%d tiles on %d SMs = %d full waves", real_tiles, sms, real_full), sprintf("타일 %d개, SM %d개: 꽉 찬 웨이브 %d번", real_tiles, sms, real_full)) at tx, 85 left font ",9"
set label T(sprintf("and a last one of %d tiles (%d SMs idle)", real_last, sms - real_last), sprintf("마지막 웨이브는 타일 %d개 (SM %d개는 놂)", real_last, sms - real_last)) at tx, 70 left font ",9"
plot NaN notitle

# The decode forward block by block, from bin/decode_timeline --csv: one row per block (kernel,
# block, sm, start_us, issued_us, waited_us, computed_us, end_us), each block a horizontal line
# from its start to its end, coloured by what it is doing. gate_up's blocks at the bottom, the
# down kernel's above them.
# usage: gnuplot -e "csv='timeline.csv'; png='timeline.png'; title='...'" decode_timeline.gp
set datafile separator ","
set terminal pngcairo size 1000,620 font "sans,10" noenhanced
set output png
# the language of the words: ko when the PNG's name ends in _ko.png (bench/figures.sh draws both);
# code names (kernels, variants, flags) and units stay as they are in both
lang = (strlen(png) > 7 && png[strlen(png) - 6:] eq "_ko.png") ? "ko" : "en"
T(en, ko) = (lang eq "ko") ? ko : en
set title title noenhanced
set xlabel T("microseconds from the first gate_up block's start", "첫 gate_up 블록이 시작한 뒤 지난 시간 (µs)")
set ylabel T("block (gate_up below, down above)", "블록 (아래는 gate_up, 위는 down)")
set grid xtics
set key outside bottom center horizontal
set bmargin 8
gap = 16
# gate_up blocks keep their index; down blocks sit above the last gate_up block
y(k) = strcol(1) eq "gate_up" ? column(2) : (strcol(1) eq "down" ? column(2) + up_blocks + gap : 1/0)
stats csv using (strcol(1) eq "gate_up" ? column(2) : 1/0) every ::1 nooutput
up_blocks = STATS_max + 1
set yrange [-5:*]
seg(k, a, b) = strcol(1) eq k ? column(b) - column(a) : 1/0
plot csv every ::1 using 4:(y(0)):(seg("gate_up", 4, 5)):(0) with vectors nohead lw 1 lc rgb "#aec7e8" title T("gate_up: issuing its loads", "gate_up: 로드 발행"), \
     ''  every ::1 using 5:(y(0)):(seg("gate_up", 5, 7)):(0) with vectors nohead lw 1 lc rgb "#1f77b4" title T("gate_up: loads in flight, mma", "gate_up: 로드 진행 중, mma"), \
     ''  every ::1 using 7:(y(0)):(seg("gate_up", 7, 8)):(0) with vectors nohead lw 1 lc rgb "#7f7f7f" title T("sum over warps, write (both kernels)", "워프 간 합산, 쓰기 (두 커널 모두)"), \
     ''  every ::1 using 4:(y(0)):(seg("down", 4, 5)):(0) with vectors nohead lw 1 lc rgb "#ffbb78" title T("down: issuing its weight loads", "down: 가중치 로드 발행"), \
     ''  every ::1 using 5:(y(0)):(seg("down", 5, 6)):(0) with vectors nohead lw 1 lc rgb "#d62728" title T("down: waiting for gate_up", "down: gate_up을 기다림"), \
     ''  every ::1 using 6:(y(0)):(seg("down", 6, 7)):(0) with vectors nohead lw 1 lc rgb "#ff7f0e" title T("down: m and weights in, mma", "down: m과 가중치 도착, mma"), \
     ''  every ::1 using 7:(y(0)):(seg("down", 7, 8)):(0) with vectors nohead lw 1 lc rgb "#7f7f7f" notitle

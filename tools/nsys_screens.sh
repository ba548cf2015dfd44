#!/usr/bin/env bash
# tools/nsys_screens.sh [--reports DIR] [--out DIR] [--display :N]
#   Draws the screenshots of docs/nsight-systems.md: the Nsight Systems GUI (nsys-ui) with our
#   committed reports open, on a virtual X display, driven by keyboard and mouse, captured, cropped
#   and labelled. Needs no GPU. Writes:
#     OUT/nsys_01_steps.png    01_matmul_add at size 64: the three active steps
#     OUT/nsys_01_step3.png    the same report, zoomed into ProfilerStep#3: its GEMM and add kernels
#     OUT/nsys_03_eager.png    03_simple_mlp at the article's shape: one eager forward
#     OUT/nsys_04_graph.png    04_fused_mlp's decode graph: the graph's nodes on the GPU
# Options:
#   --reports DIR   the reports (default docs/results/h200-2026-12-03/nsys), as
#                   DIR/01_matmul_add/64_bf16_cold_eager.nsys2024.nsys-rep, ...
#   --out DIR       where the PNGs go (default docs/img)
#   --display :N    the X display to start Xvfb on (default: the first free one from :99)
# Needs: Xvfb, xdotool, ImageMagick (import, convert) and nsys-ui of Nsight Systems 2024.2.3 (the
#   layout its clicks expect): NSYS_UI, else nsys-ui on PATH, else the one tools/nsys_host.sh
#   --experimental unpacked into .nsys/host-2024 (or NSYS_HOST_PREFIX, as there). On Debian 12
#   nsys-ui also needs the packages libxcb-icccm4 libxcb-image0 libxcb-keysyms1
#   libxcb-render-util0 libxcb-xinerama0 libxkbcommon-x11-0 libxcb-cursor0 (and Mesa's libgl1
#   and libegl1, which it renders with).
# Exit status: 0 done, 1 bad input (nothing created), 2 a tool is missing (nothing created),
#   3 the GUI did not come up or did not show what was expected (the line says which step).
# The GUI runs with a home directory of its own (a temporary one), so its settings and layout are
#   the defaults every time, and the screenshots come out the same.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 1

die() { echo "nsys_screens: error: $*" >&2; exit 1; }
missing() { echo "nsys_screens: missing: $*" >&2; exit 2; }
fail() { echo "nsys_screens: failed: $*" >&2; exit 3; }

reports=docs/results/h200-2026-12-03/nsys out=docs/img display=''
while [ $# -gt 0 ]; do
    case $1 in
    --reports) [ $# -ge 2 ] || die "--reports needs a directory"; reports=$2; shift ;;
    --out) [ $# -ge 2 ] || die "--out needs a directory"; out=$2; shift ;;
    --display) [ $# -ge 2 ] || die "--display needs a value like :99"; display=$2; shift ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) die "unexpected argument '$1' (see --help)" ;;
    esac
    shift
done
for v in "$reports" "$out" "$display"; do
    case $v in *[[:cntrl:]]*) die "an argument holds control characters" ;; esac
done

rep01=$reports/01_matmul_add/64_bf16_cold_eager.nsys2024.nsys-rep
rep03=$reports/03_simple_mlp/64x128_768x3072_bf16_cold_eager.nsys2024.nsys-rep
rep04=$reports/04_fused_mlp/1x8_768x3072_bf16_cold_graph.nsys2024.nsys-rep
[ -d "$reports" ] || die "--reports $reports: no such directory"
for r in "$rep01" "$rep03" "$rep04"; do
    [ -f "$r" ] || die "$r: no such report"
done
if [ -e "$out" ] && [ ! -d "$out" ]; then die "--out $out: not a directory"; fi
if [ -d "$out" ] && [ ! -w "$out" ]; then die "--out $out: not writable"; fi
if [ -n "$display" ]; then
    [[ $display =~ ^:[0-9]{1,4}$ ]] || die "--display '$display': expected :N, e.g. :99"
    [ ! -e "/tmp/.X11-unix/X${display#:}" ] || die "--display $display is in use"
fi

for t in Xvfb xdotool import convert; do
    command -v "$t" >/dev/null || missing "$t (Debian: apt-get install xvfb xdotool imagemagick)"
done
ui=${NSYS_UI:-$(command -v nsys-ui || true)}
if [ -z "$ui" ]; then
    c=${NSYS_HOST_PREFIX:-$repo/.nsys/host-2024}/root/usr/lib/nsight-systems/bin/nsys-ui
    [ -x "$c" ] && ui=$c
fi
{ [ -n "$ui" ] && [ -x "$ui" ]; } ||
    missing "nsys-ui (set NSYS_UI=..., put it on PATH, or run tools/nsys_host.sh --experimental)"
uibin=$(dirname "$(readlink -f "$ui")")/../host-linux-x64/nsys-ui.bin
[ -f "$uibin" ] || uibin=$(dirname "$(readlink -f "$ui")")/nsys-ui.bin
if [ -f "$uibin" ]; then
    lost=$(ldd "$(dirname "$uibin")/Plugins/platforms/libqxcb.so" 2>/dev/null |
        awk -v d="$(dirname "$uibin")" '$2 == "=>" && $3 == "not" {print $1}' |
        while read -r l; do [ -e "$(dirname "$uibin")/$l" ] || echo "$l"; done | tr '\n' ' ')
    [ -z "$lost" ] || missing "libraries nsys-ui's X11 plugin loads: ${lost% } (see --help for the packages)"
fi

# --- from here on, work: a scratch directory, Xvfb, nsys-ui ---
scratch=$(mktemp -d) || exit 1
xpid='' uipid=''
cleanup() {
    [ -z "$uipid" ] || close_report
    [ -z "$xpid" ] || kill "$xpid" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "$display" ]; then
    n=99
    while [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ]; do n=$((n + 1)); done
    display=:$n
fi
W=1600 H=1000
Xvfb "$display" -screen 0 "${W}x${H}x24" -nolisten tcp >"$scratch/xvfb.log" 2>&1 &
xpid=$!
export DISPLAY=$display
for _ in $(seq 50); do xdotool getmouselocation >/dev/null 2>&1 && break; sleep 0.2; done
xdotool getmouselocation >/dev/null 2>&1 || fail "Xvfb $display did not start: $(tail -n 1 "$scratch/xvfb.log")"

# The GUI's settings: usage collection already answered (no), so no dialog comes first.
home=$scratch/home
mkdir -p "$home/.config/NVIDIA Corporation"
cat >"$home/.config/NVIDIA Corporation/NVIDIA Nsight Systems.ini" <<'INI'
[CorePlugin.Environment]
CorePlugin.ShowVersionUpdateNotifications=false

[CorePlugin.Privacy]
AskedFor_NVIDIA%20Nsight%20Systems_=HasAsked
CorePlugin.AllowAnalytics=false
INI

shot() { import -window root "$1"; }   # the whole screen

# The timeline's data area, in screen pixels, with the window at W x H and the side panel closed.
X0=270 X1=1568

# band_cols Y HEIGHT [FILE]: "LEFT RIGHT" of what is drawn in a horizontal band of the timeline
band_cols() {
    local y=$1 h=$2 f=${3:-$scratch/now.png} g
    [ -n "${3:-}" ] || shot "$f"
    g=$(convert "$f" -crop "$((X1 - X0))x$h+$X0+$y" +repage -fuzz 6% -trim -format '%w %X' info: 2>/dev/null)
    local gw gx
    read -r gw gx <<<"$g"
    if [ -z "${gw:-}" ] || [ "$gw" -le 1 ]; then return 1; fi
    echo "$((X0 + ${gx#+})) $((X0 + ${gx#+} + gw))"
}

# runs Y HEIGHT [FILE]: "LEFT RIGHT" per line, for each stretch of columns where something is
# drawn in that horizontal band of the timeline, 4 pixels or wider: columns darker than the band's
# lightest (the row's background; take a band of a few pixels at the top of a row's bars, above
# their text, where a bar's fill is darker than the row)
runs() {
    local y=$1 h=$2 f=${3:-$scratch/now.png}
    [ -n "${3:-}" ] || shot "$f"
    convert "$f" -crop "$((X1 - X0))x$h+$X0+$y" +repage -colorspace gray -scale "$((X1 - X0))x1!" \
        -depth 8 txt:- 2>/dev/null |
        awk -v x0="$X0" -F'[,:() ]+' 'NR > 1 { v[$1] = $4; n = $1 + 1 }
            END { bg = v[0]; for (i = 0; i < n; i++) if (v[i] > bg) bg = v[i]
                  on = 0
                  for (i = 0; i <= n; i++) {
                      d = (i < n) && (bg - v[i] > 6)
                      if (d && !on) { s = i; on = 1 }
                      if (!d && on) { if (i - s > 3) print x0 + s, x0 + i; on = 0 }
                  } }'
}

# the pointer to the window's status bar, so that no cursor line or tooltip is drawn on the timeline
off() { xdotool mousemove 800 995; sleep 0.5; }

# zoom_cols LEFT RIGHT: select that time range (drag over an empty part of the timeline), zoom in
zoom_cols() {
    xdotool mousemove "$1" 700 mousedown 1 sleep 0.2 mousemove $(( ($1 + $2) / 2 )) 700 sleep 0.2 \
        mousemove "$2" 700 sleep 0.2 mouseup 1
    sleep 0.5
    xdotool key shift+z
    sleep 1.5
    off
}

# open N REPORT: start nsys-ui on it, wait for its window, lay it out
open_report() {
    local rep=$2 w
    # a temporary directory of its own too: nsys-ui keeps a single-instance socket there, which
    # would hand the next report to an instance on its way out
    mkdir -p "$scratch/tmp$1"
    HOME=$home TMPDIR=$scratch/tmp$1 setsid "$ui" "$rep" >"$scratch/ui.log" 2>&1 &
    uipid=$!
    w=$(timeout 90 xdotool search --sync --onlyvisible --name 'NVIDIA Nsight Systems 20' 2>/dev/null | head -n 1)
    [ -n "$w" ] || fail "nsys-ui showed no window within 90 s: $(tail -n 3 "$scratch/ui.log" | tr '\n' ' ')"
    # the main window can be replaced once while the report loads: size the one there, until
    # the one there has the size
    for _ in $(seq 30); do
        sleep 1
        w=$(xdotool search --onlyvisible --name 'NVIDIA Nsight Systems 20' 2>/dev/null | tail -n 1)
        [ -n "$w" ] || continue
        xdotool windowsize "$w" "$W" "$H" windowmove "$w" 0 0 2>/dev/null
        sleep 1
        xdotool getwindowgeometry "$w" 2>/dev/null | grep -q "Geometry: ${W}x$H" && break
    done
    # wait for the report's rows: something drawn left of the timeline, under the ruler
    for _ in $(seq 60); do
        band_cols 95 40 >/dev/null && break
        sleep 0.5
    done
    xdotool mousemove 354 36 click 1          # close the Project Explorer
    sleep 1
    xdotool mousemove 806 522 mousedown 1 sleep 0.3 mousemove 806 700 sleep 0.3 \
        mousemove 806 930 sleep 0.3 mouseup 1  # the Events View's splitter, down: a taller timeline
    sleep 1
    xdotool mousemove 22 115 click 1          # expand the CUDA HW row
    sleep 1
}

close_report() {
    kill -- "-$uipid" 2>/dev/null
    for _ in $(seq 50); do pgrep -g "$uipid" >/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$uipid" 2>/dev/null
    wait "$uipid" 2>/dev/null
    uipid=''
}

# label TEXT_X TEXT_Y FROM_X FROM_Y TO_X TO_Y TEXT: the text (its top left corner at TEXT_X,
# TEXT_Y) and an arrow from FROM to TO, as convert arguments appended to the array `draw`
draw=()
label() {
    local fx=$3 fy=$4 tx=$5 ty=$6 head
    head=$(awk -v fx="$fx" -v fy="$fy" -v tx="$tx" -v ty="$ty" 'BEGIN {
        a = atan2(ty - fy, tx - fx); l = 12
        printf "%d,%d %d,%d %d,%d", tx, ty, tx - l * cos(a - 0.4), ty - l * sin(a - 0.4),
               tx - l * cos(a + 0.4), ty - l * sin(a + 0.4) }')
    draw+=(-stroke "$ink" -strokewidth 3 -draw "line $fx,$fy $tx,$ty" -strokewidth 1 -fill "$ink"
           -draw "polygon $head" -stroke none)
    [ -z "$7" ] || draw+=(-fill "$ink" -undercolor '#ffffffd8' -annotate "+$1+$(($2 + 17))" " $7 ")
}
ink='#c8102e'
font=DejaVu-Sans-Bold
# (grep reads the whole list: with -q it could stop early and, under pipefail, fail the pipe)
[ "$(convert -list font 2>/dev/null | grep -c "Font: $font\$")" -gt 0 ] || font=''

# finish NAME GEOMETRY: crop the last shot, draw the labels, write OUT/NAME.png
finish() {
    convert "$scratch/now.png" ${font:+-font "$font"} -pointsize 17 "${draw[@]}" -crop "$2" +repage \
        -strip -define png:compression-level=9 "$out/$1.png" || fail "writing $out/$1.png"
    [ -z "$debug" ] || cp "$scratch/now.png" "$debug/$1.full.png"
    echo "nsys_screens: $out/$1.png ($(du -k "$out/$1.png" | cut -f1) KB)"
    draw=()
}
# zoom_band NAME Y HEIGHT: zoom to what a row holds (twice: the first pass is a few pixels wide)
zoom_band() {
    local l r
    for _ in 1 2; do
        off
        read -r l r < <(band_cols "$2" "$3") || fail "$1: nothing drawn in the row at y=$2"
        zoom_cols $((l - 12)) $((r + 12))
    done
}
nth() { sed -n "${1}p"; }
found() { local v; for v in "$@"; do [ -n "$v" ] || return 1; done; }   # every argument non-empty                         # the Nth of runs' lines

mkdir -p "$out" || die "--out $out: cannot create it"
debug=${NSYS_SCREENS_DEBUG:-}

# --- 01_matmul_add, size 64: the three steps, then step 3 ---
open_report 01 "$rep01"
zoom_band 01 254 56
shot "$scratch/now.png"
read -r s2l _ < <(runs 254 3 "$scratch/now.png" | nth 1)
read -r f2l _ < <(runs 275 3 "$scratch/now.png" | nth 1)
read -r k1l _ < <(runs 109 8 "$scratch/now.png" | nth 1)
found "${s2l:-}" "${f2l:-}" "${k1l:-}" || fail "01: the steps' ranges or kernels not found"
label 300 392 330 398 $((s2l + 40)) 268 "ProfilerStep#2 (NVTX)"
label 620 392 650 398 $((f2l + 60)) 288 "the forward's range (matmul_add)"
label $((k1l - 400)) 111 $((k1l - 30)) 120 $((k1l - 2)) 120 "the GEMM kernel on the CUDA row"
finish nsys_01_steps 1566x340+0+86
# step 3: from its range's start to step 4's
read -r s3l _ < <(runs 254 3 "$scratch/now.png" | nth 2)
read -r s4l _ < <(runs 254 3 "$scratch/now.png" | nth 3)
found "${s3l:-}" "${s4l:-}" || fail "01: ProfilerStep#3 and #4 not found"
zoom_cols $((s3l - 3)) $((s4l - 3))
off; shot "$scratch/now.png"
read -r gl gr < <(runs 296 3 "$scratch/now.png" | nth 1)
read -r al _ < <(runs 320 3 "$scratch/now.png" | awk -v l="${gl:-0}" -v r="${gr:-0}" \
    '$1 >= l && $1 < r && $2 - $1 > w { w = $2 - $1; a = $0 } END { print a }')
read -r kl _ < <(runs 109 4 "$scratch/now.png" | nth 1)
found "${gl:-}" "${al:-}" "${kl:-}" || fail "01: step 3's gemm range, launch or kernel not found"
label $((gl + 20)) 422 $((gl + 50)) 428 $((gl + 50)) 306 "gemm: our NVTX range around the GEMM"
label $((al + 60)) 392 $((al + 70)) 398 $((al + 70)) 330 "its launch (CUDA API)"
label $((kl - 400)) 111 $((kl - 30)) 120 $((kl - 2)) 120 "the GEMM kernel on the CUDA row"
label $((kl - 400)) 170 $((kl - 30)) 180 $((kl - 2)) 180 "the ranges, projected onto the GPU"
finish nsys_01_step3 1566x370+0+86
close_report

# --- 03_simple_mlp at the article's shape: step 3, one eager forward ---
open_report 03 "$rep03"
zoom_band 03 290 60
shot "$scratch/now.png"
read -r s3l _ < <(runs 290 3 "$scratch/now.png" | nth 2)
read -r s4l _ < <(runs 290 3 "$scratch/now.png" | nth 3)
found "${s3l:-}" "${s4l:-}" || fail "03: ProfilerStep#3 and #4 not found"
zoom_cols $((s3l - 3)) $((s4l - 3))
off; shot "$scratch/now.png"
read -r fl _ < <(runs 311 3 "$scratch/now.png" | nth 1)
read -r gl _ < <(runs 332 3 "$scratch/now.png" | nth 1)
read -r kl _ < <(runs 109 4 "$scratch/now.png" | awk '$2 - $1 > 20' | nth 1)
read -r pl pr < <(runs 216 3 "$scratch/now.png" | awk '$2 - $1 > 20' | nth 1)
found "${fl:-}" "${gl:-}" "${kl:-}" "${pl:-}" ||
    fail "03: step 3's forward, gate_proj, GEMM kernel or GPU ranges not found"
label $((fl + 330)) 412 $((fl + 340)) 418 $((fl + 200)) 326 "the forward's range (mlp_fwd): CPU time"
label $((gl - 10)) 442 $((gl + 20)) 448 $((gl + 20)) 347 "gate_proj: our range around the cuBLAS call"
label $((kl + 250)) 257 $((kl + 260)) 262 $((kl + 140)) 150 "cuBLAS's GEMM kernel, on the CUDA row"
label $(((pl + pr) / 2 + 200)) 257 $(((pl + pr) / 2 + 210)) 262 $(((pl + pr) / 2 + 140)) 222 "the forward on the GPU"
finish nsys_03_eager 1566x390+0+86
close_report

# --- 04_fused_mlp, the decode graph, recorded with --cuda-graph-trace=node: step 3 ---
open_report 04 "$rep04"
zoom_band 04 190 60
shot "$scratch/now.png"
read -r s3l _ < <(runs 189 3 "$scratch/now.png" | nth 2)
read -r s4l _ < <(runs 189 3 "$scratch/now.png" | nth 3)
found "${s3l:-}" "${s4l:-}" || fail "04: ProfilerStep#3 and #4 not found"
zoom_cols $((s3l - 3)) $((s4l - 3))
off; shot "$scratch/now.png"
read -r gl gr < <(runs 231 3 "$scratch/now.png" | nth 1)
read -r al _ < <(runs 255 3 "$scratch/now.png" | awk -v l="${gl:-0}" -v r="${gr:-0}" \
    '$1 >= l && $1 < r && $2 - $1 > w { w = $2 - $1; a = $0 } END { print a }')
read -r k1l k1r < <(runs 109 4 "$scratch/now.png" | nth 1)
read -r k2l _ < <(runs 109 4 "$scratch/now.png" | tail -n 1)
found "${gl:-}" "${al:-}" "${k1l:-}" "${k2l:-}" ||
    fail "04: step 3's graph_launch range, cudaGraphLaunch or the graph's kernels not found"
label $((gl + 20)) 322 $((gl + 50)) 328 $((gl + 50)) 243 "graph_launch (NVTX)"
label $((al + 100)) 352 $((al + 130)) 358 $((al + 130)) 266 "cudaGraphLaunch (CUDA API)"
label $((k1l - 560)) 150 $((k1l - 60)) 158 $(((k1l + k1r) / 2)) 142 "graph nodes: decode_gate_up, decode_down_split"
label 0 0 $((k1l - 60)) 158 $((k2l + 40)) 142 ""
finish nsys_04_graph 1566x310+0+86
close_report

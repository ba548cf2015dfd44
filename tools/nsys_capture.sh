#!/usr/bin/env bash
# tools/nsys_capture.sh [OPTIONS] STAGE [FLAGS...]
#   Records one run of bin/STAGE under Nsight Systems, from cudaProfilerStart to cudaProfilerStop
#   (the active steps), and summarises it:
#     traces/STAGE/<tag>.nsys-rep    the report: open it in the Nsight Systems GUI
#     traces/STAGE/<tag>.nsys.txt    nsys stats: NVTX ranges, CUDA API calls, GPU kernels, GPU trace
#     traces/STAGE/<tag>.sqlite      the export nsys stats reads
#   <tag> is the name the stage gives its own outputs for the same flags (e.g. 4096_bf16_cold_eager),
#   so the report sits next to our .json trace and .txt table of the same run.
# Options:
#   --cold          capture from step 0, the cold one: adds --wait 0 --warmup-steps 0, so every
#                   step is active and cudaProfilerStart runs before step 0 (by default step 0 is
#                   a wait step, run before the capture starts)
#   --record-only   record, and stop there: keep the raw .qdstrm when this nsys has no importer
#                   (import it on another machine with `tools/nsys_capture.sh --import FILE`)
#   --import FILE   turn a recorded .qdstrm into a .nsys-rep next to it, then summarise it
#   --suffix S      append S to the tag (to keep the captures of two nsys versions apart)
#   --trace LIST    what nsys traces (default cuda,nvtx,cublas)
# Environment: NSYS (default: nsys on PATH, else the one tools/nsys_host.sh unpacked: 2024.2.3
#   from .nsys/host-2024 (--experimental) before 2023.4.4 from .nsys/host, as 2024.2.3's importer
#   is the one that reads the captures of a CUDA 13 run completely; docs/validation.md),
#   QDSTRM_IMPORTER (default: the importer of that nsys's own install).
# The stage runs with --no-trace: our own CUPTI trace cannot run under nsys, which owns CUPTI
# (the stage would notice and skip it anyway); ./run STAGE FLAGS writes it in a run of its own.
# The stage's own outputs under nsys (timed under a tool, so not measurements) go to a scratch
# directory and are dropped.
set -uo pipefail
here=$(readlink -f -- "$0") && repo=${here%/tools/*} && cd "$repo" || exit 1
prog=nsys_capture usage="tools/nsys_capture.sh [--cold] [--record-only] [--suffix S] [--trace LIST] STAGE [FLAGS...] | --import FILE"
# shellcheck source=tools/lib_args.sh
. tools/lib_args.sh

# The command line, before nsys is looked for and before anything is made: one line and exit 1
# if bad. Each option once; --help alone.
help_or_flags "$@"
[ -z "$help_asked" ] || set --
cold=0 record_only=0 import='' suffix='' trace=cuda,nvtx,cublas seen=" "
while [ $# -gt 0 ]; do
    case $1 in
    --cold | --record-only | --import | --suffix | --trace)
        [[ $seen != *" $1 "* ]] || die "$1 given twice"
        seen+="$1 " ;;
    esac
    case $1 in
    --cold) cold=1 ;;
    --record-only) record_only=1 ;;
    --import) [ $# -ge 2 ] || die "--import needs a .qdstrm file"; import=$2; shift ;;
    --suffix) [ $# -ge 2 ] || die "--suffix needs a value"; suffix=$2; shift ;;
    --trace) [ $# -ge 2 ] || die "--trace needs a list"; trace=$2; shift ;;
    -*) die "unknown flag '$1' (usage: $usage)" ;;
    *) break ;;
    esac
    shift
done
! has_control "$suffix" || die "--suffix: '$suffix' holds a control character"
[[ $suffix =~ ^[A-Za-z0-9._-]*$ ]] || die "--suffix: '$suffix' may hold letters, digits, '.', '_' and '-' only"
[[ $trace =~ ^[a-z0-9_-]+(,[a-z0-9_-]+)*$ ]] || die "--trace: '$trace' is not a comma-separated list of what nsys traces"
if [ -n "$import" ]; then
    [ $# -eq 0 ] || die "--import takes no STAGE: '$1'"
    in_file --import "$import"
    case $import in
    *.qdstrm | *.nsys-rep) ;;
    *) die "--import: $import: not a .qdstrm or .nsys-rep" ;;
    esac
    [ "$cold$record_only" = 00 ] || die "--cold and --record-only are for a capture, not an --import"
elif [ -z "$help_asked" ]; then
    [ $# -ge 1 ] || die "STAGE is missing (usage: $usage)"
    stage=${1%/}; shift
    if [[ $stage != [0-9][0-9]_* || $stage == */* ]] || [ ! -f "$stage/main.c" ]; then
        die "unknown stage '$stage'"
    fi
    # the stage's own flags, checked by the stage (built as bin/STAGE: `make STAGE` writes .last_stage)
    if [ ! -x "bin/$stage" ]; then
        make --no-print-directory -s "bin/$stage" >/dev/null || die "building $stage failed (make $stage shows why)"
    fi
    flags=("$@")
    [ "$cold" = 1 ] && flags+=(--wait 0 --warmup-steps 0)
    "bin/$stage" "${flags[@]}" --no-trace --no-plot --help >/dev/null || exit 1
fi
help_done

nsys=${NSYS:-$(command -v nsys || true)}
if [ -z "$nsys" ]; then
    for c in "$repo/.nsys/host-2024/bin/nsys" "$repo/.nsys/host/bin/nsys"; do
        [ -x "$c" ] && { nsys=$c; break; }
    done
fi
if [ -z "$nsys" ] || [ ! -x "$nsys" ]; then
    die "no nsys: put it on PATH, set NSYS=..., or run tools/nsys_host.sh --experimental"
fi

# The importer ships with the host side of an install, next to the recorder's directory.
importer() {
    if [ -n "${QDSTRM_IMPORTER:-}" ]; then echo "$QDSTRM_IMPORTER"; return; fi
    local d; d=$(dirname "$(readlink -f "$nsys")")
    for c in "$d/../host-linux-x64/QdstrmImporter" "$d/QdstrmImporter"; do
        [ -x "$c" ] && { echo "$c"; return; }
    done
}

# Report names changed in nsys 2023.x (nvtxppsum -> nvtx_sum, ...); use what this nsys knows.
reports() {
    local known; known=$("$nsys" stats --help-reports 2>/dev/null)
    local out=() pair
    for pair in nvtx_sum:nvtxppsum cuda_api_sum:cudaapisum cuda_gpu_kern_sum:gpukernsum cuda_gpu_trace:gputrace; do
        local new=${pair%%:*} old=${pair##*:}
        if grep -qw "$new" <<<"$known"; then out+=("$new"); elif grep -qw "$old" <<<"$known"; then out+=("$old"); fi
    done
    local IFS=,; echo "${out[*]}"
}

summarise() { # REP [NOTE]: writes REP's .nsys.txt (and the .sqlite beside it)
    local rep=$1 note=${2:-} base=${1%.nsys-rep} list
    list=$(reports)
    [ -n "$list" ] || die "$nsys stats knows none of the reports wanted"
    { echo "# $("$nsys" --version 2>/dev/null)"
      [ -z "$note" ] || echo "# $note"
      "$nsys" stats -q --force-export=true -r "$list" -f column "$rep" 2>&1; } >"$base.nsys.txt"
    grep -q '^ \*\* ' "$base.nsys.txt" ||
        echo "# the report holds no NVTX, CUDA API or GPU data" >>"$base.nsys.txt"
    echo "nsys_capture: $base.nsys.txt"
}

import_qdstrm() { # QDSTRM: its .nsys-rep beside it, then the summary
    local q=$1 imp; imp=$(importer)
    [ -n "$imp" ] || die "no QdstrmImporter beside $nsys (set QDSTRM_IMPORTER=..., or use tools/nsys_host.sh's)"
    local rep=${q%.qdstrm}.nsys-rep log=${q%.qdstrm}.import.log note='' why
    rm -f "$rep"
    "$imp" -f -i "$q" -o "$rep" >"$log" 2>&1
    local rc=$?
    [ -f "$rep" ] || { cat "$log" >&2; die "$(basename "$imp") could not import $q"; }
    # The importer keeps what it processed before an error and exits non-zero: the report is
    # then incomplete (e.g. a recorder newer than the importer, or a CUDA API call the
    # importer's version does not know), and says so on its first line.
    if [ "$rc" -ne 0 ]; then
        why=$(sed -n 's/.*\[QuadDCommon::tag_message\*\] = \(.*\)\\n"$/\1/p' "$log" | head -n 1)
        note="importer: exit status $rc, report incomplete: ${why:-see $log}"
        echo "nsys_capture: warning: $q: $note" >&2
    fi
    echo "nsys_capture: $rep"
    summarise "$rep" "$note"
}

if [ -n "$import" ]; then
    case $import in
    *.qdstrm) import_qdstrm "$import" ;;
    *.nsys-rep) summarise "$import" ;;
    esac
    exit 0
fi

scratch=$(mktemp -d) || exit 1
trap 'rm -rf "$scratch"' EXIT
echo "nsys_capture: $("$nsys" --version)"
# --cuda-graph-trace=node: a replayed graph's kernels one by one, as our CUPTI trace records them
# (nsys's default traces a graph as one range and lists none of its kernels).
echo "+ nsys profile -t $trace --cuda-graph-trace=node --capture-range=cudaProfilerApi --capture-range-end=stop bin/$stage ${flags[*]} --no-trace --no-plot"
"$nsys" profile -t "$trace" --cuda-graph-trace=node --capture-range=cudaProfilerApi --capture-range-end=stop \
    -s none --cpuctxsw=none -f true -o "$scratch/capture" \
    "bin/$stage" "${flags[@]}" --no-trace --no-plot --out "$scratch/out" 2>&1 | tee "$scratch/log"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || { echo "nsys_capture: nsys profile exit status $rc" >&2; exit "$rc"; }

csv=$(find "$scratch/out" -maxdepth 1 -name '*.csv' 2>/dev/null | sort | head -n 1)
[ -n "$csv" ] || die "the stage wrote no .csv under nsys, so its run's tag is unknown"
tag=$(basename "$csv" .csv)$suffix
dir=traces/$stage
mkdir -p "$dir"
cp "$scratch/log" "$dir/$tag.nsys.log"
if [ -f "$scratch/capture.nsys-rep" ]; then
    mv "$scratch/capture.nsys-rep" "$dir/$tag.nsys-rep"
    echo "nsys_capture: $dir/$tag.nsys-rep"
    [ "$record_only" = 1 ] || summarise "$dir/$tag.nsys-rep"
elif [ -f "$scratch/capture.qdstrm" ]; then
    mv "$scratch/capture.qdstrm" "$dir/$tag.qdstrm"
    echo "nsys_capture: $dir/$tag.qdstrm (not imported: this nsys has no importer)"
    [ "$record_only" = 1 ] || import_qdstrm "$dir/$tag.qdstrm"
else
    die "nsys wrote neither a .nsys-rep nor a .qdstrm (see $dir/$tag.nsys.log)"
fi

# shellcheck shell=bash
# lib_cli.sh: sourced by the command-line tests (not a test itself).
#
# no_gpu_waived NAME NEEDLE COMMAND...
#   On a machine without a usable GPU: COMMAND must exit 2 with one line, on stdout, containing
#   NEEDLE (the "waived" line); prints PASS or FAIL "NAME no-gpu-waived". With a GPU: SKIP.
#   Uses the caller's temporary files $out and $err.
# shellcheck disable=SC2154 # $out and $err are set by the script that sources this file
no_gpu_waived() {
    local name=$1 needle=$2
    shift 2
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
        echo "SKIP $name no-gpu-waived: a GPU is present"
        return
    fi
    "$@" >"$out" 2>"$err"
    local rc=$?
    if [ "$rc" -eq 2 ] && grep -q "$needle" "$out" && [ "$(cat "$out" "$err" | wc -l)" -eq 1 ]; then
        echo "PASS $name no-gpu-waived"
    else
        echo "FAIL $name no-gpu-waived: exit $rc, output: $(cat "$out" "$err")"
    fi
}

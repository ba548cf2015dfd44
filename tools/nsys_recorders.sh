# shellcheck shell=bash disable=SC2004  # rec is the caller's associative array
# tools/nsys_recorders.sh: sourced by tools/nsys_h200.sh and tools/h200_fixtures.sh on a GPU machine.
# find_nsys_recorders DIR fills `rec` (name -> nsys binary) and `order` (the names, in the order
# found) with the Nsight Systems recorders at hand: an nsys already installed (NSYS_INSTALLED,
# PATH, the CUDA toolkit, Nsight Compute's copy), then each recorder that tools/nsys_host.sh
# --target-pack packed under .nsys/target/, unpacked into DIR. Each is named after its version's
# year (nsys2025, nsys2024, ...): a capture's suffix then says which recorder made it, and so
# which importer can read it completely. The caller declares `declare -A rec; order=()`.

add_nsys_recorder() { # NSYS: under the name nsys<year of its version>, unless that name is taken
    local name
    name=nsys$("$1" --version 2>/dev/null | sed -n 's/.*Nsight Systems version \(20[0-9][0-9]\)\..*/\1/p' | head -n 1)
    [ "$name" != nsys ] || { echo "$1: no version"; return 0; }
    [ -z "${rec[$name]:-}" ] || return 0
    rec[$name]=$1
    order+=("$name")
}

find_nsys_recorders() { # DIR
    local c pack dest
    for c in "${NSYS_INSTALLED:-}" "$(command -v nsys 2>/dev/null)" /usr/local/cuda*/bin/nsys \
             /usr/local/cuda*/nsight-compute*/host/target-linux-x64/nsys \
             /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys /opt/nvidia/nsight-systems/*/bin/nsys; do
        [ -n "$c" ] && [ -x "$c" ] && { add_nsys_recorder "$c"; break; }
    done
    for pack in .nsys/target/nsys-target-*.tar.xz; do
        [ -f "$pack" ] || continue
        dest=$1/$(basename "$pack" .tar.xz)
        mkdir -p "$dest" || continue
        if tar -C "$dest" -xJf "$pack" 2>&1 ||
           python3 -c 'import sys,tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$pack" "$dest"; then
            add_nsys_recorder "$dest/target-linux-x64/nsys"
        fi
    done
    [ ${#order[@]} -gt 0 ] || echo "no recorder: no nsys on this machine, none packed under .nsys/target/" \
        "(tools/nsys_host.sh --target-pack packs one)"
}

#!/usr/bin/env bash
# tools/nsys_host.sh [--target-pack]
#   Unpacks Nsight Systems 2023.4.4 (Debian's non-free `nsight-systems` and
#   `nsight-systems-target`) into a private prefix, without installing anything system-wide:
#   the `nsys` CLI (stats, export, and profile where a GPU is) and QdstrmImporter, which turns a
#   raw .qdstrm into a .nsys-rep on a machine without a GPU. Prints the prefix's bin directory
#   on its last line (nsys and QdstrmImporter are there). Idempotent: a second call only checks.
#   --target-pack  also writes the recorder alone (target-linux-x64, without the CUPTI builds for
#                  CUDA 10 and 11) as one .tar.xz under .nsys/target/, small enough to carry to
#                  a GPU machine and unpack there (tools/nsys_h200.sh does).
# The packages come from Debian's "trixie" suite through a private apt configuration (own sources
# list, state and cache under the prefix) pointing at the mirror this system already uses; the one
# library the host side needs that is not on a Debian 12 system (libssh) comes from that system's
# own suite, extracted likewise.
# Environment: NSYS_HOST_PREFIX (default .nsys/host in the repository).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=${NSYS_HOST_PREFIX:-$repo/.nsys/host}
pack=0
[ "${1:-}" = "--target-pack" ] && pack=1

say() { echo "nsys_host: $*" >&2; }
die() { echo "nsys_host: error: $*" >&2; exit 1; }

root=$prefix/root
lib=$root/usr/lib
target=$lib/x86_64-linux-gnu/nsight-systems/target-linux-x64
host=$lib/nsight-systems/host-linux-x64

works() {
    [ -x "$prefix/bin/nsys" ] && [ -x "$prefix/bin/QdstrmImporter" ] &&
        "$prefix/bin/nsys" --version >/dev/null 2>&1 &&
        "$prefix/bin/QdstrmImporter" --version >/dev/null 2>&1
}

if ! works; then
    { command -v apt-get >/dev/null && command -v dpkg >/dev/null; } || die "needs apt-get and dpkg (Debian or Ubuntu)"
    src=/etc/apt/sources.list.d/debian.sources
    [ -f "$src" ] || die "$src not found: cannot tell which Debian mirror to use"
    mirror=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' "$src")
    [ -n "$mirror" ] || die "no mirror URI in $src"
    keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    apt=$prefix/apt
    mkdir -p "$apt"/etc/apt.conf.d "$apt"/etc/preferences.d "$apt"/etc/sources.list.d \
             "$apt"/state/lists/partial "$apt"/cache/archives/partial "$prefix/debs"
    touch "$apt/state/status"
    echo "deb [signed-by=$keyring] $mirror trixie main contrib non-free" >"$apt/etc/sources.list"
    cat >"$apt/apt.conf" <<CONF
Dir::Etc "$apt/etc";
Dir::Etc::sourcelist "$apt/etc/sources.list";
Dir::Etc::sourceparts "$apt/etc/sources.list.d";
Dir::Etc::preferencesparts "$apt/etc/preferences.d";
Dir::Etc::parts "$apt/etc/apt.conf.d";
Dir::State "$apt/state";
Dir::State::status "$apt/state/status";
Dir::Cache "$apt/cache";
APT::Architecture "amd64";
APT::Architectures "amd64";
APT::Sandbox::User "root";
CONF
    say "private apt: trixie non-free from the system's mirror"
    APT_CONFIG=$apt/apt.conf apt-get -q update >"$prefix/apt-update.log" 2>&1 ||
        { cat "$prefix/apt-update.log" >&2; die "apt-get update (private configuration) failed"; }
    (cd "$prefix/debs" &&
        APT_CONFIG=$apt/apt.conf apt-get -q download nsight-systems nsight-systems-target &&
        apt-get -q -o APT::Sandbox::User=root download libssh-4) >"$prefix/apt-download.log" 2>&1 ||
        { cat "$prefix/apt-download.log" >&2; die "apt-get download failed"; }
    rm -rf "$root"
    for deb in "$prefix"/debs/nsight-systems_*.deb "$prefix"/debs/nsight-systems-target_*.deb \
               "$prefix"/debs/libssh-4_*.deb; do
        say "unpacking $(basename "$deb")"
        dpkg -x "$deb" "$root"
    done
    # The Debian layout splits host and target under two directories; nsys looks for the host
    # side (QdstrmImporter, the exporter, the stats scripts) next to its own directory.
    ln -sfn ../../nsight-systems/host-linux-x64 "$lib/x86_64-linux-gnu/nsight-systems/host-linux-x64"
    # nsys stats runs its report scripts with host-linux-x64/python/lib as the module path;
    # Debian moved their modules to the system's python path.
    mkdir -p "$host/python/lib"
    for m in nsysstats.py gpustats.py kernel_helper.py; do
        ln -sfn "../../../../x86_64-linux-gnu/nsight-systems/target-linux-x64/python/lib/$m" "$host/python/lib/$m"
    done
    mkdir -p "$prefix/bin"
    ln -sfn ../root/usr/lib/nsight-systems/bin/nsys "$prefix/bin/nsys"
    ln -sfn ../root/usr/lib/nsight-systems/host-linux-x64/QdstrmImporter "$prefix/bin/QdstrmImporter"
    works || { "$prefix/bin/nsys" --version; "$prefix/bin/QdstrmImporter" --version; die "unpacked, but nsys or QdstrmImporter does not run"; }
fi

if [ "$pack" = 1 ]; then
    version=$("$prefix/bin/nsys" --version | awk '{print $NF}' | cut -d- -f1)
    out=$repo/.nsys/target/nsys-target-$version.tar.xz
    if [ ! -s "$out" ]; then
        mkdir -p "$(dirname "$out")"
        say "packing the recorder into $out (a few minutes)"
        tar -C "$(dirname "$target")" -cf - --exclude='libcupti.so.1[01].*' target-linux-x64 |
            xz -T0 -6 >"$out.tmp"
        mv "$out.tmp" "$out"
    fi
    say "recorder pack: $out ($(du -h "$out" | cut -f1))"
fi

say "$("$prefix/bin/nsys" --version)"
echo "$prefix/bin"

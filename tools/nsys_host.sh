#!/usr/bin/env bash
# tools/nsys_host.sh [--experimental] [--target-pack] [--importer-pack]
#   Unpacks Nsight Systems (Debian's non-free `nsight-systems` and `nsight-systems-target`) into a
#   private prefix, without installing anything system-wide: the `nsys` CLI (stats, export, and
#   profile where a GPU is) and QdstrmImporter, which turns a raw .qdstrm into a .nsys-rep on a
#   machine without a GPU. Prints the prefix's bin directory on its last line (nsys and
#   QdstrmImporter are there). Idempotent: a second call only checks.
#   (default)       2023.4.4, from Debian's "trixie" suite, into .nsys/host
#   --experimental  2024.2.3, from Debian's "experimental" suite, into .nsys/host-2024: a newer
#                   importer (it knows the CUDA API up to 12.5), with the Arrow and Parquet
#                   libraries of the same build that its host side needs
#   --target-pack   also writes the recorder alone (target-linux-x64, without the CUPTI builds for
#                   CUDA 10 and 11) as one .tar.xz under .nsys/target/, small enough to carry to
#                   a GPU machine and unpack there (tools/nsys_h200.sh and tools/h200_fixtures.sh
#                   do).
#   --importer-pack also writes QdstrmImporter alone, with the libraries it loads (the host side's,
#                   and the system's beyond the C and C++ runtimes, which a GPU machine's base
#                   system may lack), as one .tar.xz under .nsys/target/ (16 MB for 2024.2.3).
#                   Unpacked into the folder that holds the recorder's target-linux-x64, it sits
#                   where that recorder looks for its importer (host-linux-x64/), and `nsys
#                   profile` there writes a .nsys-rep instead of a .qdstrm.
# The packages come through a private apt configuration (own sources list, state and cache under
# the prefix) pointing at the mirror this system already uses; the one library the host side
# needs that is not on a Debian 12 system (libssh) comes from that system's own suite, extracted
# likewise. The packages declare a newer C library than Debian 12's; the binaries run on it.
# Environment: NSYS_HOST_PREFIX (default as above).
set -euo pipefail
here=$(readlink -f -- "$0") && repo=${here%/tools/*}
prog=nsys_host usage="tools/nsys_host.sh [--experimental] [--target-pack] [--importer-pack]"
# shellcheck source=tools/lib_args.sh
. "$repo/tools/lib_args.sh"
# The command line and the environment, before anything is fetched: one line and exit 1 if bad.
help_or_flags "$@"
[ -z "$help_asked" ] || set --
suite=trixie pack=0 importer_pack=0
for arg in "$@"; do
    case $arg in
    --experimental) [ "$suite" = trixie ] || die "--experimental given twice"; suite=experimental ;;
    --target-pack) [ "$pack" = 0 ] || die "--target-pack given twice"; pack=1 ;;
    --importer-pack) [ "$importer_pack" = 0 ] || die "--importer-pack given twice"; importer_pack=1 ;;
    -*) die "unknown flag '$arg' (usage: $usage)" ;;
    *) die "unexpected argument '$arg' (usage: $usage)" ;;
    esac
done
[ -z "${NSYS_HOST_PREFIX+x}" ] || out_dir NSYS_HOST_PREFIX "$NSYS_HOST_PREFIX"
help_done
if [ "$suite" = experimental ]; then
    prefix=${NSYS_HOST_PREFIX:-$repo/.nsys/host-2024}
    # experimental's Release file may carry a Valid-Until already past here; its signature is
    # still checked
    apt_options=(-o Acquire::Check-Valid-Until=false)
    host_libs=(libarrow500 libparquet500)
else
    prefix=${NSYS_HOST_PREFIX:-$repo/.nsys/host}
    apt_options=()
    host_libs=()
fi

say() { echo "nsys_host: $*" >&2; }

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
    echo "deb [signed-by=$keyring] $mirror $suite main contrib non-free" >"$apt/etc/sources.list"
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
    say "private apt: $suite non-free from the system's mirror"
    APT_CONFIG=$apt/apt.conf apt-get -q "${apt_options[@]}" update >"$prefix/apt-update.log" 2>&1 ||
        { cat "$prefix/apt-update.log" >&2; die "apt-get update (private configuration) failed"; }
    grep -q "^E:" "$prefix/apt-update.log" &&
        { cat "$prefix/apt-update.log" >&2; die "apt-get update (private configuration) failed"; }
    (cd "$prefix/debs" &&
        APT_CONFIG=$apt/apt.conf apt-get -q "${apt_options[@]}" download nsight-systems \
            nsight-systems-target "${host_libs[@]}" &&
        apt-get -q -o APT::Sandbox::User=root download libssh-4) >"$prefix/apt-download.log" 2>&1 ||
        { cat "$prefix/apt-download.log" >&2; die "apt-get download failed"; }
    rm -rf "$root"
    for deb in "$prefix"/debs/*.deb; do
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
    # The host side finds its libraries beside itself ($ORIGIN), as it finds libssh: the Arrow and
    # Parquet libraries of 2024.2.3 go there too.
    for l in "$lib"/x86_64-linux-gnu/libarrow.so.* "$lib"/x86_64-linux-gnu/libparquet.so.*; do
        [ -e "$l" ] && ln -sfn "../../x86_64-linux-gnu/$(basename "$l")" "$host/$(basename "$l")"
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

if [ "$importer_pack" = 1 ]; then
    version=$("$prefix/bin/nsys" --version | awk '{print $NF}' | cut -d- -f1)
    out=$repo/.nsys/target/nsys-importer-$version.tar.xz
    if [ ! -s "$out" ]; then
        mkdir -p "$(dirname "$out")"
        staging=$(mktemp -d)
        mkdir "$staging/host-linux-x64"
        cp -L "$host/QdstrmImporter" "$staging/host-linux-x64/"
        # every library ldd resolves for it, but the C and C++ runtimes and zlib, which any system
        # that runs the stages has; it finds the rest beside itself (its rpath is $ORIGIN)
        ldd "$host/QdstrmImporter" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r l; do
            case $(basename "$l") in
            libc.so.*|libm.so.*|libdl.so.*|librt.so.*|libpthread.so.*|libutil.so.*|libresolv.so.*|\
            libgcc_s.so.*|libstdc++.so.*|libz.so.*) ;;
            *) cp -L "$l" "$staging/host-linux-x64/" ;;
            esac
        done
        say "packing the importer into $out"
        tar -C "$staging" -cf - host-linux-x64 | xz -T0 -6 >"$out.tmp"
        rm -rf "$staging"
        mv "$out.tmp" "$out"
    fi
    say "importer pack: $out ($(du -h "$out" | cut -f1))"
fi

say "$("$prefix/bin/nsys" --version)"
echo "$prefix/bin"

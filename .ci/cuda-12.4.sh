#!/usr/bin/env bash
# A CUDA 12.4 toolkit for the oldest-toolkit build of CI, from Debian trixie's non-free
# nvidia-cuda-toolkit, unpacked into a private prefix (default /opt/cuda-12.4) that looks like
# NVIDIA's own layout (bin, include, lib64), so `make CUDA_HOME=<prefix>` needs nothing else.
# Nothing is installed into the system: apt runs on its own sources list, lists and cache, and the
# packages are unpacked with dpkg -x. The archive's address is the one this machine's apt already
# uses for Debian, with the suite set to trixie.
# Usage: .ci/cuda-12.4.sh [PREFIX]   (prints PREFIX; does nothing when PREFIX is already complete)
set -euo pipefail
prefix=$(realpath -m "${1:-/opt/cuda-12.4}")
if [ -f "$prefix/.complete" ] && "$prefix/bin/nvcc" --version 2>/dev/null | grep -q 'release 12\.4'; then
    echo "$prefix"
    exit 0
fi

# Only what the project builds against: nvcc and its back end, the headers, and the run-time
# libraries it links (cudart, cuBLAS, cuBLASLt, CUPTI); libcu++ carries <nv/target>, which the
# half and bfloat16 headers include. nvidia-cuda-dev's static libraries (2 GB) are left packed.
packages=(nvidia-cuda-toolkit nvidia-cuda-dev libcudart12 libnvvm4 libcublas12 libcublaslt12
          libcupti12 libcupti-dev libcu++-dev)

# The Debian archive this machine uses: the entry for its own release, from a deb822 .sources
# file or a one-line sources.list.
. /etc/os-release
codename=${VERSION_CODENAME:?this machine does not say which Debian release it runs}
uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v rel="$codename" '
    /^URIs:/   { uri = $2 }
    /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == rel) found = uri }
    /^$/       { uri = "" }
    END        { print found }')
if [ -z "$uri" ]; then
    uri=$(awk -v rel="$codename" '
        $1 == "deb" { sub(/\[[^]]*\] */, ""); if ($3 == rel) { print $2; exit } }' /etc/apt/sources.list 2>/dev/null)
fi
[ -n "$uri" ] || { echo "cuda-12.4.sh: error: no Debian archive for $codename in /etc/apt" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri trixie main contrib non-free" \
    >"$work/sources.list"
apt_opts=(-q -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
          -o Dir::State::status=/dev/null -o Acquire::Languages=none -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update >/dev/null
(cd "$work/debs" && apt-get "${apt_opts[@]}" download "${packages[@]}" >/dev/null)

rm -rf "$prefix.partial"
mkdir -p "$prefix.partial/root"
for deb in "$work"/debs/*.deb; do
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$prefix.partial/root" --exclude='*.a' --exclude=./usr/share
done

# NVIDIA's layout on top of Debian's: nvcc and its helpers live in usr/lib/nvidia-cuda-toolkit/bin
# (with Debian's gcc wrapper, which picks a host compiler this nvcc supports), the assembler and
# linkers in usr/bin, headers in usr/include, libraries in usr/lib/x86_64-linux-gnu. Debian's
# nvcc.profile names those directories from /; this one names them from nvcc's own directory.
cd "$prefix.partial"
toolkit=root/usr/lib/nvidia-cuda-toolkit
ln -s "$toolkit/bin" bin
ln -s root/usr/include include
ln -s root/usr/lib/x86_64-linux-gnu lib64
rm -f "$toolkit/bin/nvcc.profile"
cat >"$toolkit/bin/nvcc.profile" <<'EOF'
TOP = $(_HERE_)/../../..
NVVMIR_LIBRARY_DIR = $(TOP)/lib/nvidia-cuda-toolkit/libdevice
LD_LIBRARY_PATH += $(TOP)/lib/x86_64-linux-gnu:
PATH += $(_HERE_):$(TOP)/bin:
INCLUDES += "-I$(TOP)/include" $(_SPACE_)
LIBRARIES =+ $(_SPACE_) "-L$(TOP)/lib/x86_64-linux-gnu"
EOF
bin/nvcc --version | grep -q 'release 12\.4' || { echo "cuda-12.4.sh: error: bin/nvcc is not 12.4" >&2; exit 1; }
touch .complete
cd /
rm -rf "$prefix"
mv "$prefix.partial" "$prefix"
echo "$prefix"

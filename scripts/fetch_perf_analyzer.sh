#!/usr/bin/env bash
# Obtains Triton's load generator, perf_analyzer, unchanged, and prints the path of a wrapper
# that runs it (arguments passed through).
#
# perf_analyzer ships as the PyPI wheel perf-analyzer (a prebuilt C++ binary inside), built
# for glibc >= 2.38 and libstdc++ from GCC 13+, newer than Debian bookworm's (2.36, GCC 12).
# So the wheel is only downloaded (pip download for its platform tag; nothing installed) and
# the binary runs with Debian trixie's loader and runtime libraries (libc6, libstdc++6,
# libgcc-s1, libssl3t64, zlib1g), fetched with apt-get download into the cache through a
# private apt configuration — the system's apt sources and installed packages are untouched.
# The binary itself is not modified.
#
#   BRAID_PA_DIR      cache directory (default ~/.cache/braid/perf-analyzer-$BRAID_PA_VERSION)
#   BRAID_PA_VERSION  PyPI version of perf-analyzer (default 2.60.0)
#
# Idempotent: a complete cache (its stamp file) returns at once without the network.
# Nothing fetched here is ever committed.
set -euo pipefail

version="${BRAID_PA_VERSION:-2.60.0}"
dir="${BRAID_PA_DIR:-$HOME/.cache/braid/perf-analyzer-$version}"
wrapper="$dir/perf_analyzer"
stamp="$dir/.complete"

if [ -f "$stamp" ] && [ -x "$wrapper" ]; then
  echo "$wrapper"
  exit 0
fi

say() { echo "fetch_perf_analyzer: $*" >&2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$dir"

# 1. the wheel (manylinux_2_38: pip refuses it for this machine unless asked for that tag)
pip="$(command -v pip3 || command -v pip || true)"
[ -n "$pip" ] || { say "pip not found"; exit 1; }
say "pip download perf-analyzer==$version"
"$pip" download --quiet --no-deps --only-binary=:all: --platform manylinux_2_38_x86_64 \
  -d "$tmp/wheel" "perf-analyzer==$version" >&2
whl="$(ls "$tmp"/wheel/perf_analyzer-*.whl | head -n1)"
python3 -m zipfile -e "$whl" "$tmp/unpacked" >&2
bin="$tmp/unpacked/perf_analyzer/bin/perf_analyzer"
[ -f "$bin" ] || { say "no perf_analyzer/bin/perf_analyzer in $(basename "$whl")"; exit 1; }

# 2. trixie's runtime, through a private apt state (lists and archives under $tmp)
apt_root="$tmp/apt"
mkdir -p "$apt_root/lists/partial" "$apt_root/cache/archives/partial" "$apt_root/prefs" "$tmp/debs"
echo "deb http://deb.debian.org/debian trixie main" > "$apt_root/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$apt_root/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
          -o "Dir::State::Lists=$apt_root/lists" -o "Dir::Cache=$apt_root/cache"
          -o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=$apt_root/prefs"
          -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
say "apt-get download Debian trixie's libc6 libstdc++6 libgcc-s1 libssl3t64 zlib1g"
apt-get "${apt_opts[@]}" -qq update >&2
(cd "$tmp/debs" && apt-get "${apt_opts[@]}" -qq download libc6 libstdc++6 libgcc-s1 libssl3t64 zlib1g >&2)
rm -rf "$dir/runtime"
mkdir -p "$dir/runtime"
for deb in "$tmp"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/runtime"; done
[ -x "$dir/runtime/usr/lib64/ld-linux-x86-64.so.2" ] || { say "trixie's loader missing"; exit 1; }

install -m 0755 "$bin" "$dir/perf_analyzer.bin"
cat > "$wrapper.tmp" <<EOF
#!/bin/sh
# perf_analyzer $version (PyPI perf-analyzer), run with Debian trixie's loader and libraries
# (scripts/fetch_perf_analyzer.sh). Arguments are perf_analyzer's own.
r="$dir/runtime"
exec "\$r/usr/lib64/ld-linux-x86-64.so.2" --library-path "\$r/usr/lib/x86_64-linux-gnu" \\
  "$dir/perf_analyzer.bin" "\$@"
EOF
chmod 0755 "$wrapper.tmp"
mv -f "$wrapper.tmp" "$wrapper"
"$wrapper" --version >/dev/null 2>&1 || "$wrapper" -h >/dev/null 2>&1 || true
touch "$stamp"
say "perf_analyzer $version -> $wrapper"
echo "$wrapper"

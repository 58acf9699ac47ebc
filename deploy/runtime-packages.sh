#!/bin/sh
# Prints, one a line, the Debian packages that hold the shared libraries BINARY loads
# (ldd's list, transitively), so the runtime image installs exactly those and nothing of the
# build toolchain. Fails, naming the library, when one belongs to no package.
# Usage: deploy/runtime-packages.sh BINARY
set -eu
bin=${1:?usage: runtime-packages.sh BINARY}
libs=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
for lib in $libs; do
  # usrmerge: ldd names /lib/..., dpkg records /usr/lib/... (or the versioned file behind)
  pkg=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "/usr$lib" 2>/dev/null ||
        dpkg -S "$(readlink -f "$lib")" 2>/dev/null || true)
  if [ -z "$pkg" ]; then
    echo "runtime-packages.sh: $lib (needed by $bin) belongs to no Debian package" >&2
    exit 1
  fi
  echo "${pkg%%:*}"
done | sort -u

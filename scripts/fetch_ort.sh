#!/usr/bin/env bash
# Obtains ONNX Runtime's CPU library (libonnxruntime.so.1) for braid's ORT fallback engine
# and its benchmark, and prints the path of the .so on stdout.
#
# ONNX Runtime is not in Debian; its linux-x64 CPU build ships inside the npm package
# onnxruntime-node. We only `npm pack` the tarball (no install, no install scripts, no
# other download) and copy the one library out of it. Idempotent: a cached copy is reused.
#
#   BRAID_ORT_DIR      cache directory (default ~/.cache/braid/ort-$BRAID_ORT_VERSION)
#   BRAID_ORT_VERSION  npm version of onnxruntime-node (default 1.30.0)
#
# The binary is never committed: it lives in the cache directory only.
set -euo pipefail

version="${BRAID_ORT_VERSION:-1.30.0}"
dir="${BRAID_ORT_DIR:-$HOME/.cache/braid/ort-$version}"
lib="$dir/libonnxruntime.so.1"

if [ -s "$lib" ]; then
  echo "$lib"
  exit 0
fi

command -v npm >/dev/null || { echo "fetch_ort: npm not found (apt-get install npm)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "fetch_ort: npm pack onnxruntime-node@$version" >&2
(cd "$tmp" && npm pack --silent --ignore-scripts "onnxruntime-node@$version" >/dev/null)
tgz="$(ls "$tmp"/onnxruntime-node-*.tgz 2>/dev/null | head -n1)"
[ -n "$tgz" ] || { echo "fetch_ort: npm pack produced no tarball" >&2; exit 1; }

# The documented location; if the package layout ever moves, look for the .so by name.
member="package/bin/napi-v6/linux/x64/libonnxruntime.so.1"
if ! tar -tzf "$tgz" "$member" >/dev/null 2>&1; then
  member="$(tar -tzf "$tgz" | grep -E '/linux/x64/libonnxruntime\.so(\.1)?$' | head -n1 || true)"
  [ -n "$member" ] || { echo "fetch_ort: no linux/x64 libonnxruntime.so in $(basename "$tgz")" >&2; exit 1; }
fi

tar -xzf "$tgz" -C "$tmp" "$member"
mkdir -p "$dir"
# Copy then rename, so a concurrent or interrupted run never leaves a half-written library.
cp "$tmp/$member" "$lib.tmp.$$"
chmod 0755 "$lib.tmp.$$"
mv -f "$lib.tmp.$$" "$lib"
echo "fetch_ort: onnxruntime $version -> $lib" >&2
echo "$lib"

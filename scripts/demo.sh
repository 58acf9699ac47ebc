#!/usr/bin/env bash
# Set up, build, and run the bundled demo model (a tiny CNN classifier) with the offline
# runner: `braid inspect` shows how it was partitioned and fused, `braid run` classifies
# the bundled image and `braid bench` times it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build=${BRAID_BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null
ninja -C "$build" client/braid >/dev/null
model=daemon/demo-repository/tinycnn/1/model.onnx
set -x
"$build/client/braid" inspect "$model"
"$build/client/braid" run "$model" --input image=tests/fixtures/demo/image.npy
"$build/client/braid" bench "$model" --iters 200 --threads 1

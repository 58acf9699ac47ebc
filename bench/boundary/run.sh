#!/usr/bin/env bash
# The boundary benchmark: BERT-2 (tests/runtime/models, opset 17) all on oneDNN, all on the ONNX
# Runtime engine, and with Softmax forced to ORT, in one process, at 1 and 2 threads.
#
#   bench/boundary/run.sh
#   RUNS=50 THREADS="1" FALLBACK_OPS=Softmax,Erf MODEL=bert2_op17 bench/boundary/run.sh
#
# Environment: RUNS (default 30), WARMUP (5), THREADS ("1 2"), MODEL (bert2_op17, a name
# gen_models.py knows), FALLBACK_OPS (Softmax), BUILD_DIR (<repo>/build-bench, release),
# BENCH (use this binary instead of building), BRAID_ORT_DIR, BRAID_MODEL_CACHE.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
RUNS="${RUNS:-30}"
WARMUP="${WARMUP:-5}"
THREADS="${THREADS:-1 2}"
MODEL="${MODEL:-bert2_op17}"
FALLBACK_OPS="${FALLBACK_OPS:-Softmax}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"
MODEL_DIR="${BRAID_MODEL_CACHE:-$HOME/.cache/braid/models}"

echo "== onnxruntime"
ORT="$("$ROOT/scripts/fetch_ort.sh")"
echo "== model"
/usr/bin/python3 "$ROOT/tests/runtime/models/gen_models.py" --out "$MODEL_DIR" --only "$MODEL"
if [ -z "${BENCH:-}" ]; then
  echo "== build ($BUILD_DIR)"
  [ -f "$BUILD_DIR/build.ninja" ] ||
    meson setup "$BUILD_DIR" "$ROOT" --buildtype=release -Dtests=false | tail -n 3
  ninja -C "$BUILD_DIR" bench/boundary/braid-bench-boundary | tail -n 1
  BENCH="$BUILD_DIR/bench/boundary/braid-bench-boundary"
fi
for t in $THREADS; do
  echo "== $MODEL, $t thread(s)"
  "$BENCH" --model "$MODEL_DIR/$MODEL.onnx" --fallback-ops "$FALLBACK_OPS" --threads "$t" \
    --runs "$RUNS" --warmup "$WARMUP" --ort "$ORT"
done

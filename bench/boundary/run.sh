#!/usr/bin/env bash
# The boundary benchmark: BERT-2 (tests/runtime/models, opset 17) all on oneDNN, all on the ONNX
# Runtime engine, and with Softmax forced to ORT, in one process, at 1 and 2 threads. With
# FALLBACK=tf, the TensorFlow engine instead: the Keras small_cnn GraphDef TensorFlow makes
# itself (tests/runtime/keras/gen_keras.py) on braid's engines, and with Relu and Softmax
# forced to TensorFlow's C API.
#
#   bench/boundary/run.sh
#   RUNS=50 THREADS="1" FALLBACK_OPS=Softmax,Erf MODEL=bert2_op17 bench/boundary/run.sh
#   FALLBACK=tf bench/boundary/run.sh
#
# Environment: RUNS (default 30), WARMUP (5), THREADS ("1 2"), FALLBACK (ort, or tf), MODEL
# (bert2_op17, a name gen_models.py knows; with tf: small_cnn, a name gen_keras.py knows),
# FALLBACK_OPS (Softmax; with tf: Relu,Softmax), BUILD_DIR (<repo>/build-bench, release),
# BENCH (use this binary instead of building), BRAID_ORT_DIR, BRAID_MODEL_CACHE,
# BRAID_KERAS_DIR (~/.cache/braid/keras).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
RUNS="${RUNS:-30}"
WARMUP="${WARMUP:-5}"
THREADS="${THREADS:-1 2}"
FALLBACK="${FALLBACK:-ort}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"

if [ "$FALLBACK" = tf ]; then
  MODEL="${MODEL:-small_cnn}"
  FALLBACK_OPS="${FALLBACK_OPS:-Relu,Softmax}"
  KERAS_DIR="${BRAID_KERAS_DIR:-$HOME/.cache/braid/keras}"
  echo "== tensorflow"
  TFLIB="$("$ROOT/scripts/fetch_tf.sh")"
  echo "== model"
  TF_CPP_MIN_LOG_LEVEL=2 "$HOME/.cache/braid/tf-venv/bin/python" "$ROOT/tests/runtime/keras/gen_keras.py" \
    --out "$KERAS_DIR" --only "$MODEL"
  MODEL_FILE="$KERAS_DIR/$MODEL/model.pb"
  PEER=(--fallback tf --tf "$TFLIB")
else
  MODEL="${MODEL:-bert2_op17}"
  FALLBACK_OPS="${FALLBACK_OPS:-Softmax}"
  MODEL_DIR="${BRAID_MODEL_CACHE:-$HOME/.cache/braid/models}"
  echo "== onnxruntime"
  ORT="$("$ROOT/scripts/fetch_ort.sh")"
  echo "== model"
  /usr/bin/python3 "$ROOT/tests/runtime/models/gen_models.py" --out "$MODEL_DIR" --only "$MODEL"
  MODEL_FILE="$MODEL_DIR/$MODEL.onnx"
  PEER=(--ort "$ORT")
fi
if [ -z "${BENCH:-}" ]; then
  echo "== build ($BUILD_DIR)"
  [ -f "$BUILD_DIR/build.ninja" ] ||
    meson setup "$BUILD_DIR" "$ROOT" --buildtype=release -Dtests=false | tail -n 3
  ninja -C "$BUILD_DIR" bench/boundary/braid-bench-boundary | tail -n 1
  BENCH="$BUILD_DIR/bench/boundary/braid-bench-boundary"
fi
for t in $THREADS; do
  echo "== $MODEL, $t thread(s)"
  "$BENCH" --model "$MODEL_FILE" --fallback-ops "$FALLBACK_OPS" --threads "$t" \
    --runs "$RUNS" --warmup "$WARMUP" "${PEER[@]}"
done

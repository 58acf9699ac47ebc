#!/usr/bin/env bash
# The TensorFlow benchmark: braid against TensorFlow's own C API session on the Keras models
# TensorFlow makes itself (tests/runtime/keras/gen_keras.py: MobileNetV2, ResNet50,
# EfficientNetB0, a Transformer encoder, GRU and LSTM text models (Keras's while loops, one
# LSTM unrolled), a GRU cell braid does not lift, a detection head; random seeded weights,
# frozen GraphDefs), at 1 and 2 threads, with the machine's FP32 peak
# measured in the same run. One command:
#
#   bench/tf/run.sh                                 # every model, defaults
#   MODELS="resnet50 mobilenet_v2" RUNS=10 bench/tf/run.sh
#
# Steps: generate the models (gen_keras.py with the TensorFlow venv's Python, cached in
# $BRAID_KERAS_DIR); build a release build dir with braid-bench-tf, the braid CLI and
# braid-peak; measure the FP32 peak (one large oneDNN matmul; the best sample over the run)
# at each thread count; then per model:
#   - TensorFlow (braid-bench-tf): the frozen GraphDef imported with TF_GraphImportGraphDef
#     into a session with intra_op_parallelism_threads = N, inter_op = 1 (a serialized
#     ConfigProto), one TF_SessionRun per inference; its answer is checked against the
#     generator's reference (TensorFlow's Python), so the harness is known to compute the model;
#   - braid (`braid run`, then `braid bench`): checked against the same reference
#     (max |braid - tf| / max |tf| <= 1e-4 on float outputs), and timed only if it agrees,
#     with every engine allowed (oneDNN, native, and TensorFlow's C API for what braid
#     leaves to it, at N intra-op threads too). The graph is model.pb (no shapes recorded);
#     if braid cannot run it, model_shapes.pb (the same graph with TensorFlow's
#     `_output_shapes`), and the table's "graph" column says which both engines ran;
#   - both on the same seeded input, at each thread count, ROUNDS alternating processes
#     (TensorFlow, braid, TensorFlow, braid, ...), each RUNS runs after WARMUP: the table shows
#     the fastest of the rounds' medians (STAT; bench/lib/rounds.sh says why) and the ratio TF/braid (> 1: braid is faster; the
#     target is >= 1.3 on every model).
# A model braid cannot run is shown with TensorFlow's time, braid FAILED and the reason; the
# run goes on. The table is printed at the end and written to $BRAID_KERAS_DIR/bench-last-run.txt.
#
# Environment:
#   RUNS        timed runs per process (default 20)
#   WARMUP      untimed runs first (default 3)
#   ROUNDS      alternating processes per engine, model and thread count (default 3)
#   STAT        min (default): each engine's fastest round median; median: the median one
#   THREADS     thread counts (default "1 2")
#   MODELS      subset (default: all; gen_keras.py --list names them)
#   BRAID_KERAS_DIR      the generated models (default ~/.cache/braid/keras)
#   BRAID_TF_PYTHON      Python with tensorflow (default ~/.cache/braid/tf-venv/bin/python)
#   BRAID_LIBTENSORFLOW  libtensorflow_cc.so.2 (default: the venv's tensorflow package)
#   BUILD_DIR   meson build directory (default <repo>/build-bench, release build)
#
# Exit status: 0 if braid matched TensorFlow and was timed on every model at every thread
# count, 1 if not (the table says which and why), 2 on bad usage, a failed build or no TensorFlow.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=bench/lib/build.sh
source "$ROOT/bench/lib/build.sh"        # bench_args, bench_build
bench_args "$@"
GEN="$ROOT/tests/runtime/keras/gen_keras.py"
PY=/usr/bin/python3                 # Debian's python: numpy
TFPY="${BRAID_TF_PYTHON:-$HOME/.cache/braid/tf-venv/bin/python}"
RUNS="${RUNS:-20}"
WARMUP="${WARMUP:-3}"
ROUNDS="${ROUNDS:-3}"
THREADS="${THREADS:-1 2}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"
export BRAID_KERAS_DIR="${BRAID_KERAS_DIR:-$HOME/.cache/braid/keras}"
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
KD="$BRAID_KERAS_DIR"
BENCH_TIMEOUT=900                   # seconds for one timed process
# shellcheck source=bench/lib/rounds.sh
source "$ROOT/bench/lib/rounds.sh"     # field, median, round_stat (checks STAT), measure_peak

if [ ! -x "$TFPY" ]; then
  echo "bench/tf/run.sh: no TensorFlow Python at $TFPY (scripts/setup.sh makes the venv)" >&2
  exit 2
fi
TFLIB="${BRAID_LIBTENSORFLOW:-$(ls "$HOME"/.cache/braid/tf-venv/lib/python3*/site-packages/tensorflow/libtensorflow_cc.so.2 2>/dev/null | tail -n1)}"
if [ ! -f "$TFLIB" ]; then
  echo "bench/tf/run.sh: no libtensorflow_cc.so.2 (set BRAID_LIBTENSORFLOW; scripts/setup.sh installs it)" >&2
  exit 2
fi
ALL="$("$TFPY" "$GEN" --list | tr '\n' ' ')"
MODELS="${MODELS:-$ALL}"
for m in $MODELS; do
  case " $ALL " in *" $m "*) ;; *) echo "bench/tf/run.sh: unknown model '$m' (the models: $ALL)" >&2; exit 2 ;; esac
done

echo "== models ($KD)"
# shellcheck disable=SC2086
"$TFPY" "$GEN" --out "$KD" --only $MODELS 2> >(grep -v -e '^WARNING: All log' -e 'oneDNN custom operations' >&2)

bench_build -j2 bench/tf/braid-bench-tf cli/braid bench/peak/braid-peak
TFB="$BUILD_DIR/bench/tf/braid-bench-tf"
BRAID="$BUILD_DIR/cli/braid"
PEAK="$BUILD_DIR/bench/peak/braid-peak"

WORK="$(mktemp -d)"
LOG="$WORK/log"
ERR="$WORK/err"
trap 'rm -rf "$WORK"' EXIT
# The FP32 peak at each thread count: the best of samples through the run (measure_peak,
# bench/lib/rounds.sh; a neighbour's burst only lowers a sample); the range shows how noisy
# the machine was.
declare -A peak lowest samples
echo "== FP32 peak (before the models)"
measure_peak

# meta M KEY: a value from the model's meta.json (inputs[0] fields, gflop, the fetch list).
meta() {
  "$PY" - "$KD/$1/meta.json" "$2" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1])); k = sys.argv[2]; i = m["inputs"][0]
print({"in_name": i["tensor"].split(":")[0], "in_file": i["file"], "in_dtype": i["dtype"],
       "in_shape": ",".join(map(str, i["shape"])), "gflop": m["gflop"], "n_in": len(m["inputs"]),
       "fetch": " ".join(o["tensor"] for o in m["outputs"])}[k])
EOF
}

# check_outputs M DIR KIND: compare DIR's outputs (KIND tf: out_<i>.bin with shapes in $LOG;
# braid: <node>.npy) with the references; prints "ok <maxrel>" or "FAILED <why>".
check_outputs() {
  "$PY" - "$KD/$1" "$2" "$3" "$LOG" <<'EOF'
import json, os, sys
import numpy as np
cache, d, kind, log = sys.argv[1:]
meta = json.load(open(os.path.join(cache, "meta.json")))
shapes = {}
if kind == "tf":
    for line in open(log):
        if line.startswith("OUT "):
            f = line.split()
            shapes[int(f[1])] = [int(x) for x in f[3].split("=")[1].split(",") if x]
worst = 0.0
for i, o in enumerate(meta["outputs"]):
    ref = np.load(os.path.join(cache, o["file"]))
    if kind == "tf":
        got = np.fromfile(os.path.join(d, "out_%d.bin" % i), dtype=ref.dtype).reshape(shapes[i])
    else:
        node = o["tensor"][:-2] if o["tensor"].endswith(":0") else o["tensor"]
        p = [os.path.join(d, c.replace("/", "_").replace(":", "_") + ".npy") for c in (node, o["tensor"])]
        p = [x for x in p if os.path.isfile(x)]
        if not p:
            print("FAILED no output %s" % o["tensor"]); sys.exit()
        got = np.load(p[0])
    if got.shape != ref.shape:
        print("FAILED %s: shape %s, TensorFlow %s" % (o["name"], list(got.shape), list(ref.shape))); sys.exit()
    if np.issubdtype(ref.dtype, np.floating):
        rel = float(np.max(np.abs(got.astype(np.float64) - ref)) / max(float(np.max(np.abs(ref))), 1e-30)) if ref.size else 0.0
        if not rel <= 1e-4:
            print("FAILED %s: rel error %.2e > 1e-4" % (o["name"], rel)); sys.exit()
        worst = max(worst, rel)
    elif not np.array_equal(got, ref):
        print("FAILED %s: integer output differs" % o["name"]); sys.exit()
print("ok %.1e" % worst)
EOF
}

# time_model M T: ROUNDS rounds of one process timing TensorFlow, then one timing braid
# (unless braid failed the check); sets TF_MS, BRAID_MS (round_stat of the rounds' medians).
time_model() {
  local m=$1 t=$2 r tm bm tf_meds="" braid_meds=""
  TF_MS=""; BRAID_MS=""; TF_LOAD=""; BRAID_LOAD=""
  for ((r = 1; r <= ROUNDS; r++)); do
    timeout "$BENCH_TIMEOUT" "$TFB" --lib "$TFLIB" --model "$MODEL_FILE" "${TF_ARGS[@]}" \
      --threads "$t" --runs "$RUNS" --warmup "$WARMUP" >"$LOG" 2>"$ERR" || { cat "$ERR" >&2; return 1; }
    tm="$(field median_ms "$(grep '^TF ' "$LOG" | tail -n1)")"; tf_meds+=" $tm"
    TF_LOAD="$(field load_ms "$(grep '^TF ' "$LOG" | tail -n1)")"
    bm="-"
    if [ "$BRAID_OK" = 1 ]; then
      timeout "$BENCH_TIMEOUT" "$BRAID" bench "$MODEL_FILE" --threads "$t" --iters "$RUNS" \
        --warmup "$WARMUP" --tf-library "$TFLIB" --tf-threads "$t" "${BRAID_IN[@]}" >"$LOG" 2>"$ERR" ||
        { cat "$ERR" >&2; return 1; }
      bm="$(sed -n 's/^latency ms: median \([0-9.]*\).*/\1/p' "$LOG")"; braid_meds+=" $bm"
      BRAID_LOAD="$(sed -n 's/.*load+compile: \([0-9.]*\) ms.*/\1/p' "$LOG")"
    fi
    echo "   round $r: TensorFlow $tm ms, braid $bm ms" >&2
  done
  TF_MS="$(round_stat <<<"$tf_meds")"
  [ -z "$braid_meds" ] || BRAID_MS="$(round_stat <<<"$braid_meds")"
}

status=0
rows=()
rows_why=()
for m in $MODELS; do
  if [ "$(meta "$m" n_in)" != 1 ]; then
    echo "bench/tf/run.sh: $m has more than one input; braid-bench-tf feeds one" >&2; exit 2
  fi
  measure_peak --repeats 3 --warmup 1
  g="$(meta "$m" gflop)"
  in_name="$(meta "$m" in_name)"; in_file="$KD/$m/$(meta "$m" in_file)"
  "$PY" -c 'import numpy as np, sys; np.load(sys.argv[1]).tofile(sys.argv[2])' "$in_file" "$WORK/in.bin"
  TF_ARGS=(--input "$in_name=$WORK/in.bin" --dtype "$(meta "$m" in_dtype)" --shape "$(meta "$m" in_shape)")
  for f in $(meta "$m" fetch); do TF_ARGS+=(--fetch "$f"); done
  BRAID_IN=(--input "$in_name=$in_file")

  echo "== $m ($g GFLOP): check braid and TensorFlow's C API session against TensorFlow's reference"
  BRAID_OK=0
  why=""
  for GRAPH in model.pb model_shapes.pb; do
    rm -rf "$WORK/braid"
    if "$BRAID" run "$KD/$m/$GRAPH" "${BRAID_IN[@]}" --output "$WORK/braid" --threads 1 \
         --tf-library "$TFLIB" --tf-threads 1 >"$LOG" 2>"$ERR"; then
      bcheck="$(check_outputs "$m" "$WORK/braid" braid)"
      [ "${bcheck%% *}" = ok ] && BRAID_OK=1 || why+="${why:+; }$GRAPH: ${bcheck#FAILED }"
    else
      bcheck="FAILED"
      why+="${why:+; }$GRAPH: $(grep -v '^$' "$ERR" | tail -n1 | cut -c1-160)"
    fi
    echo "   braid on $GRAPH: $bcheck"
    [ "$BRAID_OK" = 1 ] && break
  done
  [ "$BRAID_OK" = 1 ] || GRAPH=model.pb
  MODEL_FILE="$KD/$m/$GRAPH"
  rm -rf "$WORK/tf"; mkdir -p "$WORK/tf"
  tfcheck="FAILED"
  if "$TFB" --lib "$TFLIB" --model "$MODEL_FILE" "${TF_ARGS[@]}" --runs 1 --warmup 0 \
       --write "$WORK/tf" >"$LOG" 2>"$ERR"; then
    tfcheck="$(check_outputs "$m" "$WORK/tf" tf)"
  else
    tfcheck="FAILED $(grep -v '^$' "$ERR" | tail -n1)"
  fi
  echo "   TensorFlow C API on $GRAPH: $tfcheck"
  if [ "${tfcheck%% *}" != ok ]; then
    status=1
    rows+=("name=$m threads=- gflop=$g graph=$GRAPH tf_ms=FAILED braid_ms=- check=tf:FAILED")
    continue
  fi
  [ "$BRAID_OK" = 1 ] || { status=1; rows_why+=("$m: ${why:-braid did not match TensorFlow}"); }
  for t in $THREADS; do
    echo "== $m, $t thread(s)"
    if time_model "$m" "$t"; then
      ratio="-"
      [ -z "$BRAID_MS" ] || ratio="$(awk -v o="$TF_MS" -v b="$BRAID_MS" 'BEGIN { printf "%.2f", o / b }')"
      rows+=("name=$m threads=$t gflop=$g graph=$GRAPH tf_ms=$TF_MS braid_ms=${BRAID_MS:-FAILED} ratio=$ratio check=${bcheck// /_} tf_load=$TF_LOAD braid_load=${BRAID_LOAD:--}")
    else
      status=1
      rows+=("name=$m threads=$t gflop=$g graph=$GRAPH tf_ms=FAILED braid_ms=FAILED check=${bcheck// /_}")
    fi
  done
done
echo "== FP32 peak (after the models)"
measure_peak

ms() { awk -v v="$1" 'BEGIN { if (v ~ /^[0-9.]+$/) printf "%.2f", v; else printf "%s", v }'; }
pct() { awk -v g="$1" -v ms="$2" -v p="$3" \
  'BEGIN { if (ms+0 > 0 && p+0 > 0 && g+0 > 0) printf "%.1f%%", 100 * g / (ms / 1000) / p; else printf "-" }'; }
table() {
  echo "braid vs TensorFlow $("$TFPY" -c 'import tensorflow as tf; print(tf.__version__)' 2>/dev/null) (C API session, $(basename "$TFLIB")), models $KD, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) vCPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "$STAT of $ROUNDS alternating processes' medians of $RUNS runs after $WARMUP warm-up (STAT=$STAT); same input, same threads"
  echo "(TensorFlow: intra_op = N, inter_op = 1; braid: N oneDNN threads, its TensorFlow fallback at N intra-op)."
  echo "TF/braid > 1: braid is faster (target >= 1.3); % peak: braid's GFLOP/s over the FP32 peak at N threads;"
  echo "check: braid's max rel error vs TensorFlow's reference (braid is timed only when it matches);"
  echo "graph: plain = model.pb, shapes = model_shapes.pb (with _output_shapes; used when braid cannot run plain)"
  echo
  printf '%-20s %3s %7s %-6s %9s %9s %8s %7s %8s %9s  %s\n' model thr GFLOP graph "TF ms" "braid ms" TF/braid "% peak" "TF load" "braid ld" check
  local r
  for r in "${rows[@]}"; do
    local g bm t
    g="$(field gflop "$r")"; bm="$(field braid_ms "$r")"; t="$(field threads "$r")"
    printf '%-20s %3s %7s %-6s %9s %9s %8s %7s %8s %9s  %s\n' "$(field name "$r")" "$t" "$g" \
      "$(field graph "$r" | sed 's/model_shapes.pb/shapes/; s/model.pb/plain/')" \
      "$(ms "$(field tf_ms "$r")")" "$(ms "$bm")" "$(field ratio "$r")" "$(pct "$g" "$bm" "${peak[$t]:-}")" \
      "$(ms "$(field tf_load "$r")")" "$(ms "$(field braid_load "$r")")" "$(field check "$r" | tr _ ' ' | cut -c1-40)"
  done
  echo
  for t in $THREADS; do
    printf '%s\n' "${rows[@]}" | awk -v t="$t" '
      { r = ""; th = ""; for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "ratio") r = kv[2]; if (kv[1] == "threads") th = kv[2] } }
      th == t && r ~ /^[0-9.]+$/ && r > 0 { n++; s += log(r); if (min == "" || r < min) { min = r; who = $1 } }
      END { sub(/^name=/, "", who)
            if (n) printf "%d thread(s): geomean TF/braid %.2f over %d models, min %.2f (%s)\n", t, exp(s / n), n, min, who
            else printf "%d thread(s): no model ran on braid\n", t }'
    echo "FP32 peak at $t thread(s): ${peak[$t]:-?} GFLOP/s (best of ${samples[$t]:-0} samples; lowest ${lowest[$t]:-?})"
  done
  if [ ${#rows_why[@]} -gt 0 ]; then
    echo
    echo "braid did not run or match (TensorFlow timed alone):"
    printf '  %s\n' "${rows_why[@]}"
  fi
}
echo
echo "== results"
table | tee "$KD/bench-last-run.txt"
exit "$status"

#!/usr/bin/env bash
# Dynamic batching on and off: Triton's perf_analyzer (unchanged; scripts/fetch_perf_analyzer.sh)
# over gRPC at concurrency 1, 4, 16 and 64, against one braidd serving each model twice —
# NAME_solo (max_batch_size 64, each request run alone) and NAME_batched (the same file with
# config.json "dynamic_batching"). Prints throughput and p50/p99 latency per level, and the
# server's plan runs per request (execution_count / success count) for the batched model. First,
# the in-process ceiling: what the engines themselves gain from a batch (below).
#
#   bench/batching/run.sh
#   MODELS=mlp CONCURRENCY="1 16" WINDOW_MS=2000 bench/batching/run.sh
#
# Models (each request one row): tinycnn (the demo model, image [N,3,32,32]), mlp
# (x [N,1024] through 8 MatMuls 1024x1024: a model whose runs get cheaper per row with more
# rows), generated into the temporary repository with tests/e2e/e2e_models.py; and the two of
# issue 13, mobilenet_v2 (torchvision MobileNetV2, image [N,3,224,224]) and bert2 (a 2-layer
# BERT encoder, input_ids [N,128]; perf_analyzer sends zeros, valid token ids), exported with
# a dynamic batch by bench/batching/gen_models.py into BRAID_MODEL_CACHE (~/.cache/braid/models).
#
# Environment:
#   MODELS        default "mobilenet_v2 bert2 tinycnn mlp"
#   CONCURRENCY   levels (default "1 4 16 64")
#   DELAY_US      the batched model's max_queue_delay_microseconds (default 500)
#   PREFERRED     its preferred_batch_size as JSON (default "[]")
#   WINDOW_MS     perf_analyzer's measurement window (default 3000); STABILITY (default 25)
#   BUILD_DIR     meson build directory (default <repo>/build-bench, release); BRAIDD overrides
#   BRAIDD_ARGS   extra braidd flags (e.g. "--workers 2 --threads-per-worker 1")
#   OUT           where CSVs and logs go (default a temp dir)
#   CEILING_BATCH the batch of the in-process ceiling (default 8): what batching can gain at most
#   CEILING_THREADS its threads (default 1: a braidd worker's on 2 cores)
# Do not run it on a machine that others are measuring on: it loads every core.
set -euo pipefail

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MODELS="${MODELS:-mobilenet_v2 bert2 tinycnn mlp}"
MODEL_DIR="${BRAID_MODEL_CACHE:-$HOME/.cache/braid/models}"
LEVELS="${CONCURRENCY:-1 4 16 64}"
DELAY_US="${DELAY_US:-500}"
PREFERRED="${PREFERRED:-[]}"
WINDOW_MS="${WINDOW_MS:-3000}"
STABILITY="${STABILITY:-25}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"
PY=/usr/bin/python3
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

# shellcheck source=bench/lib/braidd.sh
source "$ROOT/bench/lib/braidd.sh"
PA="$("$ROOT/scripts/fetch_perf_analyzer.sh")"
bench_braidd_build

bench_workdir batching

echo "== models"
case " $MODELS " in *" mobilenet_v2 "*|*" bert2 "*) $PY "$ROOT/bench/batching/gen_models.py" "$MODEL_DIR" ;; esac
ROOT="$ROOT" $PY - "$WORK/repo" "$MODELS" "$DELAY_US" "$PREFERRED" "$MODEL_DIR" <<'EOF'
import json, os, shutil, sys
sys.path.insert(0, os.path.join(os.environ.get("ROOT", "."), "tests", "e2e"))
import e2e_models
repo, models, delay, preferred = sys.argv[1], sys.argv[2].split(), int(sys.argv[3]), json.loads(sys.argv[4])
cache = sys.argv[5]
for m in models:
    if m == "tinycnn":
        data = open(e2e_models.demo_model_path(), "rb").read()
    elif m == "mlp":
        data = e2e_models.slow_matmul(rows="N", n=1024, depth=8)
    elif m in ("mobilenet_v2", "bert2"):
        data = open(os.path.join(cache, m + "_dyn.onnx"), "rb").read()
    else:
        sys.exit("unknown model %s (mobilenet_v2, bert2, tinycnn, mlp)" % m)
    for variant, extra in (("solo", {}), ("batched", {"dynamic_batching": {
            "max_queue_delay_microseconds": delay, "preferred_batch_size": preferred}})):
        name = "%s_%s" % (m, variant)
        e2e_models.write_repository_model(repo, name, data)
        e2e_models.write_model_config(repo, name, dict({"max_batch_size": 64, "queue_limit": 256}, **extra))
        print("  ", name, json.dumps(extra))
EOF

# What batching can gain at most on this machine: each model run in process (braid bench, one
# stream of CEILING_THREADS threads: a braidd worker's, 1 by default on 2 cores) at batch 1 and
# at CEILING_BATCH rows, by braid and by ONNX Runtime; the gain is rows/s at CEILING_BATCH over
# rows/s at batch 1. A served model cannot gain more from batching than its engine does.
echo "== in process: rows/s at batch 1 and ${CEILING_BATCH:=8} (${CEILING_THREADS:=1} thread(s), one stream)"
ninja -C "$BUILD_DIR" cli/braid >/dev/null
printf "%-14s %-6s %12s %12s %8s\n" model engine "rows/s b=1" "rows/s b=$CEILING_BATCH" gain
for m in $MODELS; do
  model="$WORK/repo/${m}_solo/1/model.onnx"
  for engine in braid ort; do
    rates=()
    for b in 1 "$CEILING_BATCH"; do
      args="$($PY - "$model" "$b" "$WORK/ceiling_${m}_$b" <<'EOF'
import sys, numpy as np, onnx
model, b, base = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
for i in onnx.load(model, load_external_data=False).graph.input:
    t = i.type.tensor_type
    shape = [b if k == 0 else d.dim_value for k, d in enumerate(t.shape.dim)]
    dtype = np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.elem_type])
    x = rng.standard_normal(shape).astype(dtype) if dtype.kind == "f" else np.zeros(shape, dtype)
    np.save("%s_%s.npy" % (base, i.name), x)
    print("--input %s=%s_%s.npy" % (i.name, base, i.name), end=" ")
EOF
)"
      extra=()
      [ "$engine" = ort ] && extra=(--engine ort --ort-threads "$CEILING_THREADS")
      # shellcheck disable=SC2086
      ips="$("$BUILD_DIR/cli/braid" bench "$model" -t "$CEILING_THREADS" -n 20 -w 3 $args "${extra[@]}" 2>&1 |
             sed -n 's/^throughput: \([0-9.]*\) inferences.*/\1/p')"
      rates+=("$($PY -c "print('%.1f' % (float('${ips:-0}') * $b))")")
    done
    printf "%-14s %-6s %12s %12s %8s\n" "$m" "$engine" "${rates[0]}" "${rates[1]}" \
      "$($PY -c "a, b = float('${rates[0]}'), float('${rates[1]}'); print('%.2fx' % (b / a) if a else '-')")"
  done
done

echo "== braidd"
# shellcheck disable=SC2086
bench_braidd_start "$WORK/repo" "$WORK/braidd.log" ${BRAIDD_ARGS:-}
echo "   $("$BRAIDD" --version 2>/dev/null | head -n1) on $GRPC, $(nproc) cores; perf_analyzer $("$PA" --version 2>&1 | head -n1)"

runs_per_request() {    # execution_count / success count of model $1 (from the REST stats)
  curl -sf "http://$REST/v2/models/$1/stats" | $PY -c '
import json, sys
m = json.load(sys.stdin)["model_stats"][0]
n = m["inference_stats"]["success"]["count"]
print("%.3f" % (m["execution_count"] / n) if n else "-")'
}

for m in $MODELS; do
  echo
  echo "== $m (one row per request)"
  printf "%-9s %11s %12s %10s %10s %14s\n" mode concurrency "infer/s" "p50 us" "p99 us" "runs/request"
  for c in $LEVELS; do
    for variant in solo batched; do
      name="${m}_$variant"
      csv="$OUT/$name.c$c.csv"
      data=()
      [ "$m" = bert2 ] && data=(--input-data zero)     # token ids must be in the vocabulary
      if ! "$PA" -m "$name" -u "$GRPC" -i grpc -b 1 --concurrency-range "$c" "${data[@]}" \
           --measurement-interval "$WINDOW_MS" --stability-percentage "$STABILITY" \
           --max-trials 6 -f "$csv" >"$OUT/$name.c$c.log" 2>&1; then
        printf "%-9s %11s  %s\n" "$variant" "$c" "not stable or failed: $(grep -m1 -iE 'fail|error' "$OUT/$name.c$c.log" || tail -n1 "$OUT/$name.c$c.log")"
        continue
      fi
      ratio="$(runs_per_request "$name")"
      $PY - "$csv" "$c" "$variant" "$ratio" <<'EOF'
import csv, sys
row = next(csv.DictReader(open(sys.argv[1])))
f = lambda k: float(row.get(k) or 0)
print("%-9s %11s %12.1f %10.0f %10.0f %14s" % (sys.argv[3], sys.argv[2], f("Inferences/Second"),
      f("p50 latency"), f("p99 latency"), sys.argv[4]))
EOF
    done
  done
done
bench_braidd_stop
echo
echo "runs/request: plan runs per answered request since start (cumulative over the levels)."
echo "CSVs and perf_analyzer's logs: $OUT"

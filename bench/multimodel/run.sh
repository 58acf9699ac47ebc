#!/usr/bin/env bash
# Many models sharing the cores (issue 13, item 3): one braidd (its defaults: workers and
# threads sized to the CPUs it may use, one budget for every model) serves four models; Triton's
# perf_analyzer (unchanged; scripts/fetch_perf_analyzer.sh) drives each alone, then all four at
# once, each at the same concurrency, for the same fixed windows.
#
#   bench/multimodel/run.sh
#   CONCURRENCY=8 WINDOW_MS=5000 bench/multimodel/run.sh
#
# For each model i, T_i is its throughput alone and t_i in the mix. The machine's useful work
# in the mix is U = sum_i t_i / T_i (1.0: the cores do as much as for the best model alone;
# target >= 0.9). braidd's workers take the models' queues round-robin, a request at a time, so
# the models get equal request rates; a model is starved when its rate t_i is below half the
# mean. Per model: throughput and p50/p99 alone and mixed, and its share t_i / T_i.
#
# Models: mobilenet_v2, resnet18 and efficientnet_b0 from the zoo (bench/zoo/gen_zoo.py, cached
# in BRAID_ZOO_DIR) and bert2 (a 2-layer BERT encoder, seq 128, bench/batching/gen_models.py,
# cached in BRAID_MODEL_CACHE; fed zero token ids).
#
# Environment:
#   CONCURRENCY   requests in flight per model (default 4)
#   WINDOW_MS     perf_analyzer's window (default 4000); WINDOWS windows per run (default 3)
#   BUILD_DIR     release build (default <repo>/build-bench); BRAIDD overrides; BRAIDD_ARGS
#   OUT           where CSVs and logs go (default a temp dir)
# Do not run it where others are measuring: it loads every core.
set -euo pipefail

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
C="${CONCURRENCY:-4}"
WINDOW_MS="${WINDOW_MS:-4000}"
WINDOWS="${WINDOWS:-3}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"
ZOO="${BRAID_ZOO_DIR:-$HOME/.cache/braid/zoo}"
MODEL_DIR="${BRAID_MODEL_CACHE:-$HOME/.cache/braid/models}"
MODELS="mobilenet_v2 resnet18 efficientnet_b0 bert2"
PY=/usr/bin/python3
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

# shellcheck source=bench/lib/braidd.sh
source "$ROOT/bench/lib/braidd.sh"
PA="$("$ROOT/scripts/fetch_perf_analyzer.sh")"
bench_braidd_build

bench_workdir multimodel

echo "== models"
$PY "$ROOT/bench/batching/gen_models.py" "$MODEL_DIR" >/dev/null
for m in $MODELS; do
  mkdir -p "$WORK/repo/$m/1"
  if [ "$m" = bert2 ]; then
    # a hard link or a copy: braidd refuses a symlink leading out of the model's folder
    ln -f "$MODEL_DIR/bert2_dyn.onnx" "$WORK/repo/$m/1/model.onnx" 2>/dev/null ||
      cp "$MODEL_DIR/bert2_dyn.onnx" "$WORK/repo/$m/1/model.onnx"
    echo '{"max_batch_size": 8}' > "$WORK/repo/$m/config.json"
  else
    [ -f "$ZOO/$m.onnx" ] || $PY "$ROOT/bench/zoo/gen_zoo.py" --out "$ZOO" --only "$m" | tail -n 1
    ln -f "$ZOO/$m.onnx" "$WORK/repo/$m/1/model.onnx" 2>/dev/null || cp "$ZOO/$m.onnx" "$WORK/repo/$m/1/model.onnx"
  fi
done

echo "== braidd"
# shellcheck disable=SC2086
bench_braidd_start "$WORK/repo" "$WORK/braidd.log" ${BRAIDD_ARGS:-}
echo "   $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $C in flight per model, $WINDOWS x $WINDOW_MS ms"

pa() {    # pa MODEL CSV LOG: one fixed-length perf_analyzer run (no stability search)
  local args=()
  [ "$1" = bert2 ] && args=(--input-data zero)
  "$PA" -m "$1" -u "$GRPC" -i grpc --concurrency-range "$C" "${args[@]}" \
    --measurement-interval "$WINDOW_MS" --stability-percentage 999 --max-trials "$WINDOWS" \
    -f "$2" >"$3" 2>&1
}

for m in $MODELS; do      # warm every model's connection and plan first
  pa "$m" "$OUT/$m.warm.csv" "$OUT/$m.warm.log" || true
done
echo "== each alone"
for m in $MODELS; do
  pa "$m" "$OUT/$m.alone.csv" "$OUT/$m.alone.log" || { echo "$m alone failed:"; tail -n 5 "$OUT/$m.alone.log"; exit 1; }
done
echo "== all four at once"
pids=()
for m in $MODELS; do
  pa "$m" "$OUT/$m.mixed.csv" "$OUT/$m.mixed.log" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "a mixed run failed: see $OUT/*.mixed.log"; exit 1; }; done

$PY - "$OUT" $MODELS <<'PYEOF'
import csv, os, sys
out, models = sys.argv[1], sys.argv[2:]
def row(m, kind):
    r = next(csv.DictReader(open(os.path.join(out, "%s.%s.csv" % (m, kind)))))
    return float(r["Inferences/Second"]), float(r["p50 latency"]), float(r["p99 latency"])
print("%-16s %10s %9s %9s   %10s %9s %9s   %7s" % ("model", "alone/s", "p50 ms", "p99 ms",
      "mixed/s", "p50 ms", "p99 ms", "share"))
u, shares = 0.0, []
for m in models:
    a, b = row(m, "alone"), row(m, "mixed")
    share = b[0] / a[0] if a[0] else 0.0
    u += share
    shares.append((share, m))
    print("%-16s %10.1f %9.2f %9.2f   %10.1f %9.2f %9.2f   %7.3f" % (m, a[0], a[1] / 1e3, a[2] / 1e3,
          b[0], b[1] / 1e3, b[2] / 1e3, share))
rates = [row(m, "mixed")[0] for m in models]
mean = sum(rates) / len(rates)
slow = min(zip(rates, models))
print("\nuseful work in the mix U = sum(mixed/alone) = %.3f (target >= 0.9)" % u)
print("request rates in the mix: %.1f to %.1f /s; slowest %s (starved below %.1f, half the mean)"
      % (slow[0], max(rates), slow[1], mean / 2))
print("starved: %s" % ("yes" if slow[0] < mean / 2 else "no"))
PYEOF
echo "CSVs and perf_analyzer's logs: $OUT"

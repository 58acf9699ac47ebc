#!/usr/bin/env bash
# Triton's load generator, perf_analyzer (unchanged; scripts/fetch_perf_analyzer.sh), against
# braidd over gRPC: a concurrency sweep on three models, with the server-side breakdown
# perf_analyzer reads from braidd's statistics (queue, compute input / infer / output).
#
#   bench/perf_analyzer.sh
#   MODELS="tinycnn resnet50" CONCURRENCY=1:8:2 bench/perf_analyzer.sh
#
# Models: tinycnn (the demo model), resnet50 and bert_base from the zoo (bench/zoo/gen_zoo.py,
# cached in $BRAID_ZOO_DIR, generated when missing). braidd runs with its defaults (workers
# and threads sized to the machine) on 127.0.0.1 free ports. perf_analyzer's measurement:
# time windows of WINDOW_MS, stability STABILITY % (perf_analyzer's default 10 rarely holds
# on a shared 2-core machine; the report says which levels did not stabilise).
# Output: one table per model (perf_analyzer's own), and CSVs in $OUT (default a temp dir).
#
# Environment:
#   MODELS       default "tinycnn resnet50 bert_base"
#   CONCURRENCY  perf_analyzer's --concurrency-range START:END:STEP (default 1:32:... as
#                1 2 4 8 16 32, one run per level)
#   WINDOW_MS    measurement window (default 3000); STABILITY (default 25)
#   PROTOCOL     grpc (default) or http (braidd's REST port)
#   BUILD_DIR    meson build directory (default <repo>/build-bench, release); BRAIDD overrides
#   BRAID_ZOO_DIR  zoo cache (default ~/.cache/braid/zoo); OUT  where CSVs go
set -euo pipefail

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODELS="${MODELS:-tinycnn resnet50 bert_base}"
LEVELS="${CONCURRENCY:-1 2 4 8 16 32}"
WINDOW_MS="${WINDOW_MS:-3000}"
STABILITY="${STABILITY:-25}"
PROTOCOL="${PROTOCOL:-grpc}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"
ZOO="${BRAID_ZOO_DIR:-$HOME/.cache/braid/zoo}"
PY=/usr/bin/python3

# shellcheck source=bench/lib/braidd.sh
source "$ROOT/bench/lib/braidd.sh"
PA="$("$ROOT/scripts/fetch_perf_analyzer.sh")"
bench_braidd_build

bench_workdir perf-analyzer

echo "== models"
shapes=()
for m in $MODELS; do
  mkdir -p "$WORK/repo/$m/1"
  case "$m" in
    tinycnn) cp "$ROOT/daemon/demo-repository/tinycnn/1/model.onnx" "$WORK/repo/$m/1/"
             shapes+=("$m=image:1,3,32,32") ;;
    *)       [ -f "$ZOO/$m.onnx" ] || $PY "$ROOT/bench/zoo/gen_zoo.py" --out "$ZOO" --only "$m" | tail -n 1
             ln -f "$ZOO/$m.onnx" "$WORK/repo/$m/1/model.onnx" 2>/dev/null || cp "$ZOO/$m.onnx" "$WORK/repo/$m/1/model.onnx"   # a link out of the folder is refused
             shapes+=("$m=") ;;              # the zoo's inputs are static
  esac
done

echo "== braidd"
bench_braidd_start "$WORK/repo" "$WORK/braidd.log"
URL="$GRPC"
[ "$PROTOCOL" = http ] && URL="$REST"
echo "   $("$BRAIDD" --version 2>/dev/null | head -n1) on $GRPC, $(nproc) cores; perf_analyzer $("$PA" --version 2>&1 | head -n1)"

for m in $MODELS; do
  shape_args=()
  # token-id inputs: perf_analyzer's random int64s are out of any vocabulary; zeros are ids
  case "$m" in bert_base|gpt2|lstm_tagger|bert2) shape_args=(--input-data zero) ;; esac
  for s in "${shapes[@]}"; do
    [ "${s%%=*}" = "$m" ] && [ -n "${s#*=}" ] && shape_args+=(--shape "${s#*=}")
  done
  echo
  echo "== $m"
  printf "%11s %12s %10s %10s %10s %10s %10s %10s\n" concurrency "infer/s" "p50 us" "p99 us" \
    "queue us" "c.in us" "infer us" "c.out us"
  for c in $LEVELS; do
    csv="$OUT/$m.c$c.csv"
    if ! "$PA" -m "$m" -u "$URL" -i "$PROTOCOL" "${shape_args[@]}" --concurrency-range "$c" \
         --measurement-interval "$WINDOW_MS" --stability-percentage "$STABILITY" \
         --max-trials 6 -f "$csv" >"$OUT/$m.c$c.log" 2>&1; then
      printf "%11s  %s\n" "$c" "not stable or failed: $(grep -m1 -iE 'fail|error' "$OUT/$m.c$c.log" || tail -n1 "$OUT/$m.c$c.log")"
      continue
    fi
    $PY - "$csv" "$c" <<'EOF'
import csv, sys
row = next(csv.DictReader(open(sys.argv[1])))
f = lambda k: float(row.get(k) or 0)
print("%11s %12.1f %10.0f %10.0f %10.0f %10.0f %10.0f %10.0f" % (
    sys.argv[2], f("Inferences/Second"), f("p50 latency"), f("p99 latency"), f("Server Queue"),
    f("Server Compute Input"), f("Server Compute Infer"), f("Server Compute Output")))
EOF
  done
done
bench_braidd_stop
echo
echo "CSVs and perf_analyzer's logs: $OUT"

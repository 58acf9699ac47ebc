#!/usr/bin/env bash
# The reproducible benchmark: braid against ONNX Runtime 1.30 (CPU) on ResNet-50 and on a
# 12-layer BERT-base encoder (seq 128), at 1 and 2 threads, interleaved runs, one table.
#
#   bench/run.sh                      # from anywhere; all defaults
#   RUNS=50 THREADS="1 2" bench/run.sh
#
# Environment:
#   RUNS        timed rounds per configuration (default 30; at least 20 is meaningful)
#   WARMUP      untimed rounds first (default 5)
#   THREADS     thread counts to measure (default "1 2")
#   MODELS      benchmark models (default "resnet50 bert12")
#   BUILD_DIR   meson build directory (default <repo>/build-bench, release build)
#   BENCH       use this braid-bench-ort binary instead of building one
#   BRAID_ORT_DIR, BRAID_MODEL_CACHE   caches of fetch_ort.sh and gen_models.py
#
# Needs the Debian packages of scripts/setup.sh plus npm (for fetch_ort.sh). Exits non-zero
# if any configuration failed; the table still shows ORT's numbers for it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${RUNS:-30}"
WARMUP="${WARMUP:-5}"
THREADS="${THREADS:-1 2}"
MODELS="${MODELS:-resnet50 bert12}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"
MODEL_DIR="${BRAID_MODEL_CACHE:-$HOME/.cache/braid/models}"
PEAK_PER_CORE=250          # FP32 GFLOP/s per core of this machine (docs/performance.md)

# FLOPs of one inference (2 per multiply-add), for GFLOP/s and % of peak:
#   resnet50  4.09 G multiply-adds (convolutions + classifier)
#   bert12    12 x (4*128*768*768 + 2*128*768*3072 + 2*12*128*128*64) = 11.17 G multiply-adds
gflop_of() {
  case "$1" in
    resnet50) echo 8.18 ;;
    bert12)   echo 22.35 ;;
    *)        echo 0 ;;
  esac
}

echo "== onnxruntime"
ORT="$("$ROOT/scripts/fetch_ort.sh")"

echo "== models"
/usr/bin/python3 "$ROOT/tests/runtime/models/gen_models.py" --bench --out "$MODEL_DIR" --only $MODELS

if [ -z "${BENCH:-}" ]; then
  # shellcheck source=bench/lib/build.sh
  source "$ROOT/bench/lib/build.sh"
  bench_build bench/braid-bench-ort
  BENCH="$BUILD_DIR/bench/braid-bench-ort"
fi

LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
status=0
results=()
for m in $MODELS; do
  for t in $THREADS; do
    echo "== $m, $t thread(s)"
    g="$(gflop_of "$m")"
    if "$BENCH" --model "$MODEL_DIR/$m.onnx" --threads "$t" --runs "$RUNS" --warmup "$WARMUP" \
         --ort "$ORT" --gflop "$g" | tee "$LOG"; then
      line="$(grep '^RESULT ' "$LOG" | tail -n1)"
    else
      status=1
      echo "!! braid failed on $m at $t thread(s); timing ONNX Runtime alone"
      "$BENCH" --model "$MODEL_DIR/$m.onnx" --threads "$t" --runs "$RUNS" --warmup "$WARMUP" \
        --ort "$ORT" --gflop "$g" --ort-only | tee "$LOG" || true
      line="$(grep '^RESULT ' "$LOG" | tail -n1 || true)"
      line="${line/braid_ms=-/braid_ms=FAILED}"
    fi
    results+=("name=$m gflop=$g $line")
  done
done

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
ms() { awk -v v="$1" 'BEGIN { if (v ~ /^[0-9.]+$/) printf "%.1f", v; else printf "%s", v }'; }
pct() {   # % of the FP32 peak of T cores at MS per inference of G GFLOP
  awk -v g="$1" -v ms="$2" -v t="$3" -v p="$PEAK_PER_CORE" \
    'BEGIN { if (ms+0 > 0) printf "%.0f%%", 100 * g / (ms / 1000) / (p * t); else printf "-" }'
}

echo
echo "== results: median ms over $RUNS interleaved runs (p90); ORT/braid > 1 means braid is faster"
printf '%-9s %3s  %-16s %-16s %9s  %7s %9s  %s\n' model thr "ORT ms (p90)" "braid ms (p90)" ORT/braid \
  "ORT %pk" "braid %pk" "max diff"
for r in "${results[@]}"; do
  m="$(field name "$r")"; t="$(field threads "$r")"; g="$(field gflop "$r")"
  om="$(field ort_ms "$r")"; op="$(field ort_p90 "$r")"
  bm="$(field braid_ms "$r")"; bp="$(field braid_p90 "$r")"
  printf '%-9s %3s  %-16s %-16s %9s  %7s %9s  %s\n' "$m" "$t" "$(ms "$om") ($(ms "$op"))" "$(ms "$bm") ($(ms "$bp"))" "$(field ratio "$r")" \
    "$(pct "$g" "$om" "$t")" "$(pct "$g" "$bm" "$t")" "$(field maxdiff "$r")"
done
exit "$status"

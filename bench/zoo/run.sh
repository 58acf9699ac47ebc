#!/usr/bin/env bash
# The zoo benchmark: braid against ONNX Runtime 1.30 (CPU) on 14 public architectures
# (bench/zoo/gen_zoo.py: CNNs, ViT, BERT, a GPT-2-style decoder, an LSTM tagger), at 1 and 2
# threads, with the machine's FP32 peak measured in the same run. One command:
#
#   bench/zoo/run.sh                               # everything, defaults
#   RUNS=10 MODELS="resnet50 gpt2" THREADS=1 bench/zoo/run.sh
#
# Steps: fetch ORT (scripts/fetch_ort.sh); generate the models (gen_zoo.py, cached); build a
# release build dir with braid-bench-ort, the braid CLI and braid-peak; measure the FP32 peak
# (one large oneDNN matmul; the best of samples taken through the run) at each thread count;
# then per model: check braid's outputs against PyTorch's (check.py, through `braid run`),
# and if they agree time braid and ORT, interleaved, on the same inputs, at each thread
# count (braid-bench-ort): each engine with its default thread pool policy (ORT spins; braid
# spins ~60 us, runtime/omp_env.h) and alone in its process (--ort-only, --braid-only),
# processes alternating for ROUNDS rounds, so neither engine's workers run into the other's
# timing; the table shows the median of the rounds' medians.
# A model that fails to export, fails the check or fails in
# braid-bench-ort is shown FAILED and the run goes on.
# The table is printed at the end and written to $BRAID_ZOO_DIR/last-run.txt.
#
# Environment:
#   RUNS        timed rounds per model and thread count (default 20)
#   WARMUP      untimed rounds first (default 3)
#   ROUNDS      alternating processes per engine, model and thread count (default 3)
#   ORT_SPIN    1: ORT's workers spin, its default (default 1); 0: they sleep
#   THREADS     thread counts (default "1 2")
#   MODELS      subset of the zoo (default: all; gen_zoo.py --list names them)
#   BRAID_ZOO_DIR  models, references, manifest.json, last-run.txt (default ~/.cache/braid/zoo)
#   BUILD_DIR   meson build directory (default <repo>/build-bench, release build)
#   BRAID_ORT_DIR  cache of fetch_ort.sh
#
# Exit status: 0 if every model passed the check and ran on braid at every thread count,
# 1 if any did not (the table says which and why), 2 on bad usage or a failed build.
set -euo pipefail

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi
if [ $# -gt 0 ]; then
  echo "bench/zoo/run.sh: takes no arguments (see --help; settings are environment variables)" >&2
  exit 2
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/bench/zoo"
PY=/usr/bin/python3                 # Debian's python: torch, torchvision, onnx, numpy
RUNS="${RUNS:-20}"
WARMUP="${WARMUP:-3}"
ROUNDS="${ROUNDS:-3}"
ORT_SPIN="${ORT_SPIN:-1}"
THREADS="${THREADS:-1 2}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"
export BRAID_ZOO_DIR="${BRAID_ZOO_DIR:-$HOME/.cache/braid/zoo}"
ZOO="$BRAID_ZOO_DIR"
ZOO_MODELS="$("$PY" "$HERE/gen_zoo.py" --list | tr '\n' ' ')"
MODELS="${MODELS:-$ZOO_MODELS}"
for m in $MODELS; do
  case " $ZOO_MODELS " in
    *" $m "*) ;;
    *) echo "bench/zoo/run.sh: unknown model '$m' (the zoo: $ZOO_MODELS)" >&2; exit 2 ;;
  esac
done
BENCH_TIMEOUT=1800                  # seconds for one braid-bench-ort run

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# time_model M T G: ROUNDS rounds of one process timing ORT alone, then one timing braid alone
# (each RUNS runs after WARMUP, same inputs), so neither engine's thread pool runs into the
# other's timing; prints one RESULT-style line with the medians of the rounds' medians.
time_model() {
  local m=$1 t=$2 g=$3 r ort_meds="" braid_meds="" bline="" om_r
  for ((r = 1; r <= ROUNDS; r++)); do
    timeout "$BENCH_TIMEOUT" "$BENCH" --model "$ZOO/$m.onnx" --threads "$t" --runs "$RUNS" \
      --warmup "$WARMUP" --ort-spin "$ORT_SPIN" --ort "$ORT" --gflop "$g" --ort-only 2>"$ERR" >"$LOG" || return 1
    om_r="$(field ort_ms "$(grep '^RESULT ' "$LOG" | tail -n1)")"
    ort_meds+=" $om_r"
    timeout "$BENCH_TIMEOUT" "$BENCH" --model "$ZOO/$m.onnx" --threads "$t" --runs "$RUNS" \
      --warmup "$WARMUP" --ort "$ORT" --gflop "$g" --braid-only 2>"$ERR" >"$LOG" || return 1
    bline="$(grep '^RESULT ' "$LOG" | tail -n1)"
    braid_meds+=" $(field braid_ms "$bline")"
    echo "   round $r: ORT $om_r ms, braid $(field braid_ms "$bline") ms" >&2
  done
  local om bm
  om="$(median <<<"$ort_meds")"; bm="$(median <<<"$braid_meds")"
  echo "threads=$t ort_ms=$om braid_ms=$bm ratio=$(awk -v o="$om" -v b="$bm" 'BEGIN { printf "%.3f", o / b }') " \
       "steps=$(field steps "$bline") engines=$(field engines "$bline") reorders=$(field reorders "$bline")" \
       "ort_load_ms=$(field ort_load_ms "$bline") braid_load_ms=$(field braid_load_ms "$bline")"
  echo "   ORT medians:$ort_meds; braid medians:$braid_meds" >&2
}

echo "== onnxruntime"
ORT="$("$ROOT/scripts/fetch_ort.sh")"
echo "$ORT"

echo "== models ($ZOO)"
gen_status=0
# shellcheck disable=SC2086
"$PY" "$HERE/gen_zoo.py" --out "$ZOO" --only $MODELS || gen_status=$?

echo "== build ($BUILD_DIR)"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  meson setup "$BUILD_DIR" "$ROOT" --buildtype=release -Dtests=false | tail -n 3
fi
if ! out="$(ninja -C "$BUILD_DIR" bench/braid-bench-ort cli/braid bench/peak/braid-peak 2>&1)"; then
  echo "$out" | tail -n 40
  echo "bench/zoo/run.sh: build failed" >&2
  exit 2
fi
BENCH="$BUILD_DIR/bench/braid-bench-ort"
BRAID="$BUILD_DIR/cli/braid"
PEAK="$BUILD_DIR/bench/peak/braid-peak"

LOG="$(mktemp)"
ERR="$(mktemp)"
trap 'rm -f "$LOG" "$ERR"' EXIT
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

# The FP32 peak at each thread count, sampled many times: in full before and after the
# models, briefly before each model. A neighbour's burst only lowers a sample, so the peak
# is the best sample; the table also gives the range, which shows how noisy the run was.
declare -A peak lowest samples
measure_peak() {   # extra braid-peak arguments
  local t g
  for t in $THREADS; do
    g=""
    if "$PEAK" --threads "$t" "$@" >"$LOG"; then
      g="$(field gflops "$(grep '^PEAK ' "$LOG" | tail -n1)")"
    fi
    grep -v '^PEAK ' "$LOG" || true
    [ -n "$g" ] || continue
    samples[$t]=$(( ${samples[$t]:-0} + 1 ))
    if awk -v a="$g" -v b="${peak[$t]:-0}" 'BEGIN { exit !(a > b) }'; then peak[$t]="$g"; fi
    if awk -v a="$g" -v b="${lowest[$t]:-1e30}" 'BEGIN { exit !(a < b) }'; then lowest[$t]="$g"; fi
  done
}
echo "== FP32 peak (before the models)"
measure_peak

# name -> GFLOP of one inference, from the manifest ("" if the model is not in it).
gflop_of() {
  "$PY" -c 'import json, sys
m = json.load(open(sys.argv[1]))["models"].get(sys.argv[2])
print(m["gflop"] if m else "")' "$ZOO/manifest.json" "$1" 2>/dev/null || true
}

status=$(( gen_status != 0 ))
rows=()          # one "key=value ..." line per model and thread count
failures=()      # "model [threads]: message"
for m in $MODELS; do
  g="$(gflop_of "$m")"
  if [ -z "$g" ]; then
    status=1
    failures+=("$m: not generated (gen_zoo.py failed; see its output above)")
    rows+=("name=$m threads=- gflop=- check=FAILED braid_ms=FAILED")
    continue
  fi
  measure_peak --repeats 3 --warmup 1
  echo "== $m ($g GFLOP): check against PyTorch"
  "$PY" "$HERE/check.py" --braid "$BRAID" --zoo "$ZOO" "$m" | tee "$LOG" || true
  cline="$(grep '^CHECK ' "$LOG" | tail -n1)"
  cres="$(field result "$cline")"
  if [ "$cres" != "ok" ]; then
    status=1
    failures+=("$m: check ${cres:-FAILED}: $(sed -n 's/.* error=//p' <<<"$cline")")
    rows+=("name=$m threads=- gflop=$g check=${cres:-FAILED} braid_ms=FAILED")
    continue
  fi
  check="ok $(field maxrel "$cline")"
  for t in $THREADS; do
    echo "== $m, $t thread(s)"
    if line="$(time_model "$m" "$t" "$g")"; then
      rows+=("name=$m gflop=$g check=${check// /_} $line")
    else
      status=1
      cat "$ERR" >&2
      msg="$(grep -v '^$' "$ERR" | tail -n1)"
      failures+=("$m at $t thread(s): ${msg:-braid-bench-ort failed (exit status, no message)}")
      rows+=("name=$m threads=$t gflop=$g check=${check// /_} braid_ms=FAILED")
    fi
  done
done

ms() { awk -v v="$1" 'BEGIN { if (v ~ /^[0-9.]+$/) printf "%.2f", v; else printf "%s", v }'; }
pct() {   # % of peak P GFLOP/s at MS per inference of G GFLOP
  awk -v g="$1" -v ms="$2" -v p="$3" \
    'BEGIN { if (ms+0 > 0 && p+0 > 0 && g+0 > 0) printf "%.1f%%", 100 * g / (ms / 1000) / p; else printf "-" }'
}

table() {
  echo "braid vs ONNX Runtime $(basename "$(dirname "$ORT")"), zoo $ZOO, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') (family $(grep -m1 'cpu family' /proc/cpuinfo | sed 's/.*: //'), model $(grep -m1 '^model\s' /proc/cpuinfo | sed 's/.*: //')), $(nproc) vCPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "median of $ROUNDS alternating processes' medians of $RUNS runs after $WARMUP warm-up; ORT/braid > 1: braid is faster;"
  echo "% peak: braid's GFLOP/s over the FP32 peak at the same thread count; check: max rel error vs PyTorch"
  echo
  printf '%-19s %3s %7s %9s %9s %9s %8s %5s %-26s %-10s %s\n' model thr GFLOP "ORT ms" "braid ms" \
    ORT/braid "% peak" steps engines reorders check
  for r in "${rows[@]}"; do
    local m t g om bm ratio c st en re
    m="$(field name "$r")"; t="$(field threads "$r")"; g="$(field gflop "$r")"
    om="$(field ort_ms "$r")"; bm="$(field braid_ms "$r")"; ratio="$(field ratio "$r")"
    st="$(field steps "$r")"; en="$(field engines "$r")"; re="$(field reorders "$r")"
    c="$(field check "$r")"
    printf '%-19s %3s %7s %9s %9s %9s %8s %5s %-26s %-10s %s\n' "$m" "$t" "$g" "$(ms "${om:--}")" \
      "$(ms "${bm:--}")" "${ratio:--}" "$(pct "$g" "$bm" "${peak[$t]:-}")" "${st:--}" "${en:--}" \
      "${re:--}" "${c//_/ }"
  done
  echo
  for t in $THREADS; do
    printf '%s\n' "${rows[@]}" | awk -v t="$t" '
      { r = ""; th = ""
        for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "ratio") r = kv[2]; if (kv[1] == "threads") th = kv[2] } }
      th == t && r ~ /^[0-9.]+$/ && r > 0 { n++; s += log(r); if (min == "" || r < min) { min = r; who = $1 } }
      END {
        sub(/^name=/, "", who)
        if (n) printf "%d thread(s): geomean ORT/braid %.3f over %d models, min %.3f (%s)\n", t, exp(s / n), n, min, who
        else printf "%d thread(s): no model ran on braid\n", t }'
  done
  for t in $THREADS; do
    echo "FP32 peak at $t thread(s): ${peak[$t]:-?} GFLOP/s (best of ${samples[$t]:-0} oneDNN matmul samples over the run; lowest ${lowest[$t]:-?})"
  done
  if [ ${#failures[@]} -gt 0 ]; then
    echo
    echo "failed:"
    printf '  %s\n' "${failures[@]}"
  fi
}

echo "== FP32 peak (after the models)"
measure_peak

echo
echo "== results"
table | tee "$ZOO/last-run.txt"
exit "$status"

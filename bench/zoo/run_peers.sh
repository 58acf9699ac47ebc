#!/usr/bin/env bash
# The zoo benchmark of issue 24: braid against two peers, ONNX Runtime 1.30 and OpenVINO
# 2026.4 (CPU, FP32), on every zoo model at batch 1 and at its batched / longer shapes, at 1
# and 2 threads, with the machine's FP32 peak measured in the same run. One command:
#
#   bench/zoo/run_peers.sh                              # everything, defaults (~3.5-4 h: README)
#   RUNS=10 ROUNDS=2 bench/zoo/run_peers.sh             # lighter (~2 h)
#   QUICK=1 bench/zoo/run_peers.sh                      # RUNS=5 WARMUP=1 ROUNDS=1, no cliff map (~50 min)
#   MODELS="resnet50 minilm_l6" bench/zoo/run_peers.sh  # models with all their variants
#   MODELS="minilm_l6.b4 regnety_400mf.b8" THREADS=2 bench/zoo/run_peers.sh   # single entries
#
# Steps: fetch ORT (scripts/fetch_ort.sh) and OpenVINO (scripts/fetch_openvino.sh, a venv
# under ~/.cache/braid); generate the models (gen_zoo.py: 14 models, batch 1, static, and
# gen_zoo_dynamic.py: their dynamic exports with variants NAME.VARIANT, e.g. resnet50.b8;
# gen_zoo_families.py and gen_zoo_more.py: 31 models with dynamic axes and variants; all
# cached); build braid-bench-ort, the braid CLI and braid-peak (release); measure the FP32
# peak. Then per manifest entry (a model's base shape, then each variant):
#   1. check.py: braid's outputs against PyTorch's on the entry's inputs (rel <= 1e-3). An
#      entry that fails is not timed; its row says why.
#   2. cliffs.py (threads 1): oneDNN reference kernels per run at the entry's shapes (the
#      'refs' column; CLIFFS=0 skips it).
#   3. per thread count, ROUNDS rounds of three processes, each engine alone in its own:
#      ONNX Runtime (braid-bench-ort --ort-only), OpenVINO (ov_bench.py: LATENCY hint, 1
#      stream, N threads, INFERENCE_PRECISION_HINT=f32, shapes fixed to the entry's), braid
#      (braid-bench-ort --braid-only). All three get the entry's .npy inputs (the same bytes,
#      the same shapes) and N threads; each runs WARMUP then RUNS timed inferences and prints
#      its median; the table shows each engine's fastest round median (STAT=min; STAT=median
#      for the median round; bench/lib/rounds.sh says why). OpenVINO's outputs are checked
#      against PyTorch's too, ORT's against braid's (braid-bench-ort).
# The table (printed at the end, written to $BRAID_ZOO_DIR/last-run.txt): per entry and
# thread count the three times, ORT/braid, OV/braid and best/braid (the faster peer over
# braid; > 1: braid is faster), refs and check; then per thread count and for batch-1 and
# batched rows apart, the geomean and the minimum of each ratio, and the rows below 0.9.
#
# Environment:
#   MODELS      models (all their entries) or entries NAME.VARIANT (default: the whole zoo)
#   THREADS     thread counts (default "1 2")
#   RUNS        timed inferences per process (default 20)
#   WARMUP      untimed inferences first (default 3)
#   ROUNDS      rounds of the three processes per entry and thread count (default 3)
#   QUICK       1: RUNS=5 WARMUP=1 ROUNDS=1 CLIFFS=0 unless set (a smoke run, not a result)
#   CLIFFS      1 (default): count oneDNN reference kernels per entry (cliffs.py); 0: skip
#   STAT        min (default): each engine's fastest round; median: the median round
#   ORT_SPIN    1: ORT's workers spin, its default (default 1); 0: they sleep
#   OV_SHAPES   auto (default): OpenVINO compiles for the entry's shapes, and with the file's
#               dynamic dims if that does not match PyTorch (listed under the table);
#               static: fixed shapes only; dynamic: the file's dynamic dims only
#   BRAID_ZOO_DIR  models, references, manifest.json, last-run.txt (default ~/.cache/braid/zoo)
#   BUILD_DIR   meson build directory (default <repo>/build-bench, release build)
#
# Exit status: 0 if every entry passed the check and ran on braid at every thread count, 1 if
# any did not (the table says which and why), 2 on bad usage or a failed build.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=bench/lib/build.sh
source "$ROOT/bench/lib/build.sh"        # bench_args, bench_build
bench_args "$@"
HERE="$ROOT/bench/zoo"
PY=/usr/bin/python3                 # Debian's python: torch, torchvision, onnx, numpy
QUICK="${QUICK:-0}"
if [ "$QUICK" = 1 ]; then
  RUNS="${RUNS:-5}"; WARMUP="${WARMUP:-1}"; ROUNDS="${ROUNDS:-1}"; CLIFFS="${CLIFFS:-0}"
fi
RUNS="${RUNS:-20}"
WARMUP="${WARMUP:-3}"
ROUNDS="${ROUNDS:-3}"
CLIFFS="${CLIFFS:-1}"
ORT_SPIN="${ORT_SPIN:-1}"
OV_SHAPES="${OV_SHAPES:-auto}"
THREADS="${THREADS:-1 2}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"
export BRAID_ZOO_DIR="${BRAID_ZOO_DIR:-$HOME/.cache/braid/zoo}"
ZOO="$BRAID_ZOO_DIR"
BENCH_TIMEOUT=1800                  # seconds for one process
case "$OV_SHAPES" in auto|static|dynamic) ;; *) echo "$(bench_name): OV_SHAPES: auto, static or dynamic" >&2; exit 2 ;; esac

# The generators and their models; MODELS names models or entries of any of them. The int8
# models are quantized by ONNX Runtime's quantizer, in a venv of their own (scripts/fetch_quant.sh).
GENS="gen_zoo.py gen_zoo_families.py gen_zoo_more.py gen_zoo_int8.py"
QPY="$("$ROOT/scripts/fetch_quant.sh")"
py_of() { if [ "$1" = gen_zoo_int8.py ]; then echo "$QPY"; else echo "$PY"; fi; }
declare -A GEN_OF
ALL=""
for g in $GENS; do
  for m in $("$(py_of "$g")" "$HERE/$g" --list); do GEN_OF[$m]=$g; ALL+=" $m"; done
done
MODELS="${MODELS:-$ALL}"
declare -A WANT
for e in $MODELS; do
  m="${e%%.*}"
  [ -n "${GEN_OF[$m]:-}" ] || { echo "$(bench_name): unknown model '$m' (the zoo:$ALL)" >&2; exit 2; }
  g="${GEN_OF[$m]}"
  WANT[$g]+=" $m"
done

# shellcheck source=bench/lib/rounds.sh
source "$ROOT/bench/lib/rounds.sh"

echo "== onnxruntime"
ORT="$("$ROOT/scripts/fetch_ort.sh")"
echo "$ORT"
echo "== OpenVINO (venv)"
OVPY="$("$ROOT/scripts/fetch_openvino.sh")"
OV_VERSION="$("$OVPY" -c 'import openvino; print(openvino.get_version().split("-")[0])')"
echo "$OVPY: openvino $OV_VERSION"

echo "== models ($ZOO)"
gen_status=0
for g in $GENS; do
  [ -z "${WANT[$g]:-}" ] && continue
  # shellcheck disable=SC2086
  "$(py_of "$g")" "$HERE/$g" --out "$ZOO" --only $(tr ' ' '\n' <<<"${WANT[$g]}" | sort -u) || gen_status=1
  # gen_zoo.py's models are static, batch 1; their dynamic exports and variants (b8, ...):
  # shellcheck disable=SC2086
  [ "$g" != gen_zoo.py ] ||
    "$PY" "$HERE/gen_zoo_dynamic.py" --out "$ZOO" --only $(tr ' ' '\n' <<<"${WANT[$g]}" | sort -u) || gen_status=1
done

bench_build bench/braid-bench-ort cli/braid bench/peak/braid-peak
BENCH="$BUILD_DIR/bench/braid-bench-ort"
BRAID="$BUILD_DIR/cli/braid"
PEAK="$BUILD_DIR/bench/peak/braid-peak"

LOG="$(mktemp)"
ERR="$(mktemp)"
OVERR="$(mktemp)"                   # ov_bench.py's error when OpenVINO failed
trap 'rm -f "$LOG" "$ERR" "$OVERR"' EXIT
declare -A peak lowest samples
echo "== FP32 peak (before the models)"
measure_peak

# The entries to time, in order: per model its base entry then its variants. One line each:
# NAME ONNX GFLOP BATCH --input n=path ...  (BATCH: dim 0 of the first input).
mapfile -t ENTRIES < <("$PY" - "$ZOO" $MODELS <<'EOF'
import json, os, sys
zoo, want = sys.argv[1], sys.argv[2:]
man = json.load(open(os.path.join(zoo, "manifest.json")))["models"]
for w in want:
    keys = [w] if "." in w else [k for k, e in man.items()
                                 if k == w or e.get("variant_of") == w]
    for k in keys:
        e = man.get(k)
        if e is None:
            print("%s - - - MISSING" % k)
            continue
        ins = " ".join("--input %s=%s" % (t["name"], os.path.join(zoo, t["file"]))
                       for t in e["inputs"])
        if "quantization" in e:
            # braid-bench-ort's sanity check compares braid with ONNX Runtime's own run, whose
            # fused int8 kernels may differ from the QDQ semantics by a third of the output
            # (README, "The int8 zoo"): check.py has compared braid with the reference
            ins = "--atol 1 " + ins
        shape = e["inputs"][0]["shape"]
        print("%s %s %s %s %s" % (k, os.path.join(zoo, e["onnx"]), e["gflop"],
                                  shape[0] if shape else 1, ins))
EOF
)

# time_entry E ONNX T INPUTS...: ROUNDS rounds of ORT, OpenVINO and braid, each in its own process;
# prints one line of key=value fields (round_stat of each engine's round medians).
time_entry() {
  local e=$1 onnx=$2 t=$3 r om bm vm ov_meds="" ort_meds="" braid_meds="" bline="" vline="" ovst
  shift 3
  for ((r = 1; r <= ROUNDS; r++)); do
    timeout "$BENCH_TIMEOUT" "$BENCH" --model "$onnx" --threads "$t" --runs "$RUNS" --warmup "$WARMUP" \
      --ort-spin "$ORT_SPIN" --ort "$ORT" --ort-only "$@" 2>"$ERR" >"$LOG" || return 1
    om="$(field ort_ms "$(grep '^RESULT ' "$LOG" | tail -n1)")"
    ort_meds+=" $om"
    ovst=0
    timeout "$BENCH_TIMEOUT" "$OVPY" "$HERE/ov_bench.py" --zoo "$ZOO" --threads "$t" --runs "$RUNS" \
      --warmup "$WARMUP" --shapes "$OV_SHAPES" "$e" 2>>"$ERR" >"$LOG" || ovst=$?
    if [ "$ovst" = 0 ]; then
      vline="$(grep '^OV ' "$LOG" | tail -n1)"
      vm="$(field median_ms "$vline")"
      [ "$(field check "$vline")" = ok ] || vm=MISMATCH
    else
      vm=FAILED
      vline=""
      grep -v '^$' "$ERR" | tail -n1 | cut -c1-300 >"$OVERR"   # for failures: in the table
    fi
    ov_meds+=" $vm"
    timeout "$BENCH_TIMEOUT" "$BENCH" --model "$onnx" --threads "$t" --runs "$RUNS" --warmup "$WARMUP" \
      --ort "$ORT" --braid-only "$@" 2>"$ERR" >"$LOG" || return 1
    bline="$(grep '^RESULT ' "$LOG" | tail -n1)"
    bm="$(field braid_ms "$bline")"
    braid_meds+=" $bm"
    echo "   round $r: ORT $om ms, OV $vm ms, braid $bm ms" >&2
  done
  om="$(round_stat <<<"$ort_meds")"; bm="$(round_stat <<<"$braid_meds")"
  vm="$(tr ' ' '\n' <<<"$ov_meds" | grep -E '^[0-9.]+$' | round_stat || true)"
  [ -n "$vm" ] || vm="$(awk '{ print $1 }' <<<"$ov_meds")"
  echo "threads=$t ort_ms=$om ov_ms=$vm braid_ms=$bm steps=$(field steps "$bline")" \
       "engines=$(field engines "$bline") ov_check=$(field maxrel "$vline") ov_shapes=$(field shapes "$vline")"
}

status=$(( gen_status != 0 ))
rows=()
failures=()
notes=()
for line in "${ENTRIES[@]}"; do
  read -r e onnx g b ins <<<"$line"
  if [ "$ins" = MISSING ]; then
    status=1
    failures+=("$e: not in the manifest (its generator failed? see above)")
    rows+=("name=$e threads=- gflop=- batch=- check=FAILED braid_ms=FAILED")
    continue
  fi
  # shellcheck disable=SC2206
  inargs=($ins)
  measure_peak --repeats 3 --warmup 1
  echo "== $e ($g GFLOP, batch $b): check against PyTorch"
  "$PY" "$HERE/check.py" --braid "$BRAID" --zoo "$ZOO" "$e" | tee "$LOG" || true
  cline="$(grep '^CHECK ' "$LOG" | tail -n1)"
  cres="$(field result "$cline")"
  if [ "$cres" != ok ]; then
    status=1
    failures+=("$e: check ${cres:-FAILED}: $(sed -n 's/.* error=//p' <<<"$cline")")
    rows+=("name=$e threads=- gflop=$g batch=$b check=${cres:-FAILED} braid_ms=FAILED")
    continue
  fi
  check="ok_$(field maxrel "$cline")"
  refs=-
  if [ "$CLIFFS" = 1 ]; then
    "$PY" "$HERE/cliffs.py" --braid "$BRAID" --zoo "$ZOO" "$e" >"$LOG" 2>&1 || true
    grep -E '^  ref/run' "$LOG" || true
    refs="$(field ref_per_run "$(grep '^CLIFF ' "$LOG" | tail -n1)")"
    : "${refs:=-}"
  fi
  for t in $THREADS; do
    echo "== $e, $t thread(s)"
    if out="$(time_entry "$e" "$onnx" "$t" "${inargs[@]}")"; then
      rows+=("name=$e gflop=$g batch=$b check=$check refs=$refs $out")
      [ "$(field ov_ms "$out")" != FAILED ] || failures+=("$e at $t thread(s): $(cat "$OVERR")")
      [ "$OV_SHAPES" != auto ] || [ "$(field ov_shapes "$out")" != dynamic ] ||
        notes+=("$e at $t thread(s): OpenVINO with the shapes fixed did not match PyTorch; timed with dynamic dims")
      [ "$(field ov_ms "$out")" != MISMATCH ] ||
        failures+=("$e at $t thread(s): OpenVINO's outputs differ from PyTorch's (max rel $(field ov_check "$out")); not counted")
    else
      status=1
      cat "$ERR" >&2
      msg="$(grep -v '^$' "$ERR" | tail -n1)"
      failures+=("$e at $t thread(s): ${msg:-braid-bench-ort failed (exit status, no message)}")
      rows+=("name=$e threads=$t gflop=$g batch=$b check=$check refs=$refs braid_ms=FAILED")
    fi
  done
done

echo "== FP32 peak (after the models)"
measure_peak

table() {
  echo "braid vs ONNX Runtime $(basename "$(dirname "$ORT")") and OpenVINO $OV_VERSION (CPU, FP32), zoo $ZOO, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') (family $(grep -m1 'cpu family' /proc/cpuinfo | sed 's/.*: //'), model $(grep -m1 '^model\s' /proc/cpuinfo | sed 's/.*: //')), $(nproc) vCPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "$STAT of $ROUNDS rounds of (ORT, OV, braid) processes' medians of $RUNS runs after $WARMUP warm-up;"
  echo "OpenVINO: PERFORMANCE_HINT=LATENCY NUM_STREAMS=1 INFERENCE_NUM_THREADS=N INFERENCE_PRECISION_HINT=f32, shapes $OV_SHAPES;"
  echo "ORT: N intra-op threads (spin $ORT_SPIN); X/braid > 1: braid is faster; best = the faster peer;"
  echo "refs: oneDNN reference kernels per run (cliffs.py, 1 thread); check: max rel error vs PyTorch"
  echo
  printf '%-28s %3s %5s %8s %9s %9s %9s %8s %8s %8s %4s %s\n' entry thr batch GFLOP "braid ms" \
    "ORT ms" "OV ms" ORT/br OV/br best/br refs check
  local r
  for r in "${rows[@]}"; do
    awk -v line="$r" 'function f(k,   i, n, kv, a) { n = split(line, a, " ")
        for (i = 1; i <= n; i++) { split(a[i], kv, "="); if (kv[1] == k) return kv[2] } return "-" }
      function num(v) { return v ~ /^[0-9.]+$/ && v > 0 }
      function ms(v) { return num(v) ? sprintf("%.2f", v) : v }
      function ratio(p, b) { return num(p) && num(b) ? sprintf("%.3f", p / b) : "-" }
      BEGIN { o = f("ort_ms"); v = f("ov_ms"); b = f("braid_ms")
        best = num(o) ? o : ""; if (num(v) && (best == "" || v + 0 < best + 0)) best = v
        c = f("check"); gsub(/_/, " ", c)
        printf "%-28s %3s %5s %8s %9s %9s %9s %8s %8s %8s %4s %s\n", f("name"), f("threads"),
          f("batch"), f("gflop"), ms(b), ms(o), ms(v), ratio(o, b), ratio(v, b),
          best == "" ? "-" : ratio(best, b), f("refs"), c }'
  done
  echo
  local t grp
  for t in $THREADS; do
    for grp in batch1 batched all; do
      printf '%s\n' "${rows[@]}" | awk -v t="$t" -v grp="$grp" -v cliffs="$((CLIFFS == 1))" '
        function f(k,   i, kv) { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] } return "" }
        function num(v) { return v ~ /^[0-9.]+$/ && v > 0 }
        f("threads") == t {
          b = f("batch") + 0
          if ((grp == "batch1" && b != 1) || (grp == "batched" && b <= 1)) next
          n_rows++
          br = f("braid_ms"); o = f("ort_ms"); v = f("ov_ms"); name = f("name")
          if (!num(br)) next
          if (num(o)) { no++; so += log(o / br); if (mo == "" || o / br < mo) { mo = o / br; wo = name } }
          if (num(v)) { nv++; sv += log(v / br); if (mv == "" || v / br < mv) { mv = v / br; wv = name } }
          best = num(o) ? o : ""; if (num(v) && (best == "" || v + 0 < best + 0)) best = v
          if (best != "") { nb++; sb += log(best / br); if (mb == "" || best / br < mb) { mb = best / br; wb = name } }
          if ((num(o) && o / br < 0.9) || (num(v) && v / br < 0.9)) below++
          refs += f("refs") + 0
        }
        END {
          label = grp == "batch1" ? "batch-1 rows" : grp == "batched" ? "batched rows" : "all rows"
          if (!nb) { printf "%d thread(s), %s: none timed\n", t, label; exit }
          ort = no ? sprintf("%.3f (min %.3f %s)", exp(so / no), mo, wo) : "- (no row)"
          ov = nv ? sprintf("%.3f (min %.3f %s)", exp(sv / nv), mv, wv) : "- (no row)"
          printf "%d thread(s), %-12s geomean best/braid %.3f (min %.3f %s), ORT/braid %s, OV/braid %s; %d of %d rows timed, %d below 0.9x a peer, %s ref kernels/run\n",
            t, label ":", exp(sb / nb), mb, wb, ort, ov, nb, n_rows, below, cliffs ? refs : "-" }'
    done
  done
  for t in $THREADS; do
    echo "FP32 peak at $t thread(s): ${peak[$t]:-?} GFLOP/s (best of ${samples[$t]:-0} oneDNN matmul samples over the run; lowest ${lowest[$t]:-?})"
  done
  if [ ${#notes[@]} -gt 0 ]; then
    echo
    echo "notes:"
    printf '  %s\n' "${notes[@]}"
  fi
  if [ ${#failures[@]} -gt 0 ]; then
    echo
    echo "failed:"
    printf '  %s\n' "${failures[@]}"
  fi
}

echo
echo "== results"
table | tee "$ZOO/last-run.txt"
exit "$status"

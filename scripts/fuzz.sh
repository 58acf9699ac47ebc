#!/usr/bin/env bash
# Fuzz every harness in tests/fuzz with libFuzzer under ASan+UBSan (clang), SECONDS each.
#
#   scripts/fuzz.sh [SECONDS] [HARNESS...]     default: 60 s each, every harness
#
# Builds build-fuzz/ (CC=clang, -Dfuzz=true). Each harness starts from its committed seed
# corpus (tests/fuzz/corpus/NAME, read only) plus what earlier runs found
# (build-fuzz/corpus/NAME); a crash leaves its input in build-fuzz/crashes/NAME/ and makes the
# script exit 1. Keep a fixed crash's input as a regression: copy it into
# tests/fuzz/corpus/NAME/ (the test suite replays that folder on every run).
# Prints one line per harness: executions, coverage, result. Env: BRAID_FUZZ_BUILD_DIR,
# BRAID_FUZZ_JOBS (parallel harnesses, default 1), BRAID_FUZZ_ARGS (more libFuzzer flags, e.g.
# "-entropic=0": on http_pipeline libFuzzer's entropic scheduler spent 64% of the time
# updating feature frequencies; without it the harness runs 3x the inputs a second).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
secs=${1:-60}
shift || true
build=${BRAID_FUZZ_BUILD_DIR:-$root/build-fuzz}

if ! command -v clang >/dev/null; then
  echo "fuzz: clang not found: run scripts/setup.sh (Debian's clang)" >&2
  exit 2
fi
if [ -f "$build/build.ninja" ]; then
  CC=clang meson setup --reconfigure "$build" -Dfuzz=true >/dev/null
else
  CC=clang meson setup "$build" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debugoptimized >/dev/null
fi || { echo "fuzz: meson setup failed" >&2; exit 2; }

mapfile -t all < <(sed -n "s/^ *\['\([a-z0-9_]*\)',.*/\1/p" tests/fuzz/meson.build)
harnesses=("$@")
((${#harnesses[@]})) || harnesses=("${all[@]}")
targets=()
for h in "${harnesses[@]}"; do targets+=("tests/fuzz/fuzz_$h"); done
ninja -C "$build" "${targets[@]}" >/dev/null || { echo "fuzz: build failed" >&2; exit 2; }

export OMP_WAIT_POLICY=passive
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# One harness: fuzz it, print its line; exit 0 when it found nothing.
fuzz_one() {
  local h=$1 work=$build/corpus/$1 crashes=$build/crashes/$1 log=$build/fuzz-$1.log rc execs cov
  mkdir -p "$work" "$crashes"
  "$build/tests/fuzz/fuzz_$h" "$work" "tests/fuzz/corpus/$h" -max_total_time="$secs" \
    -rss_limit_mb=4096 -malloc_limit_mb=4096 -timeout=20 -print_final_stats=1 \
    -artifact_prefix="$crashes/" ${BRAID_FUZZ_ARGS:-} >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  if [ $rc -eq 0 ]; then
    echo "fuzz $h: ${execs:-?} executions in ${secs}s, ${cov:-cov: ?}, no crash"
  else
    echo "fuzz $h: FAILED after ${execs:-?} executions (exit $rc): see $log and $crashes/"
  fi
  return $rc
}

jobs=${BRAID_FUZZ_JOBS:-1}
status=0 running=0
for h in "${harnesses[@]}"; do
  if ((running >= jobs)); then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_one "$h" &
  running=$((running + 1))
done
while ((running > 0)); do
  wait -n || status=1
  running=$((running - 1))
done
exit $status

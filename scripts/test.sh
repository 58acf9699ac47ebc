#!/usr/bin/env bash
# Set up, build and run braid's whole test suite: the normal build (all suites), an
# ASan+UBSan build of the unit-level suites, and each libFuzzer harness for a short bounded
# time (clang, ASan+UBSan). Last line: "N passed, N failed".
# Usage: scripts/test.sh [meson test args...]   (e.g. --suite core)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bash scripts/setup.sh || exit 1

build=${BRAID_BUILD_DIR:-$root/build}
asan=${BRAID_ASAN_BUILD_DIR:-$root/build-asan}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}

configure() {   # dir, extra meson args...
  local dir=$1; shift
  if [ -f "$dir/build.ninja" ]; then meson setup --reconfigure "$dir" "$@" >/dev/null
  else meson setup "$dir" "$@" >/dev/null; fi
}

status=0
configure "$build" && ninja -C "$build" || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
meson test -C "$build" --print-errorlogs --num-processes 1 "$@" || status=1

# Sanitizers: everything but the whole-model suite (model-sized runs are slow under ASan;
# the daemon and e2e suites exercise the same executor on the demo model).
if [ -z "${BRAID_SKIP_ASAN:-}" ]; then
  configure "$asan" -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug &&
    ninja -C "$asan" || { echo "sanitizer build failed"; status=1; }
  # ONNX Runtime leaks a few bytes inside itself once loaded: suppressed by name only.
  # TensorFlow (tfengine's live tests, loaded from scripts/fetch_tf.sh's venv) needs no
  # suppression: LSan reports nothing from tensorflow-cpu 2.21 there (docs/tensorflow.md).
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions=$root/tests/backends/ort/lsan.supp \
    meson test -C "$asan" --print-errorlogs --num-processes 1 \
      --suite core --suite proto --suite onnx --suite tf --suite shape --suite passes \
      --suite dnnl --suite ort --suite tfengine --suite backend_ops \
      --suite runtime --suite models --suite tf_ops --suite tfjs --suite mixed \
      --suite daemon --suite daemon_http --suite client --suite cli --suite e2e --suite fuzz || status=1
fi

# Fuzzing: every libFuzzer harness (tests/fuzz) for a short bounded time under ASan+UBSan,
# built with clang; long runs are scripts/fuzz.sh SECONDS (docs/reliability.md).
fuzz=${BRAID_FUZZ_BUILD_DIR:-$root/build-fuzz}
if [ -z "${BRAID_SKIP_FUZZ:-}" ]; then
  if command -v clang >/dev/null; then
    if [ -f "$fuzz/build.ninja" ]; then meson setup --reconfigure "$fuzz" >/dev/null
    else CC=clang meson setup "$fuzz" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
    fi || status=1
    # Only the harnesses (and what they link): the rest of the tree is gcc's to test.
    mapfile -t fuzzers < <(ninja -C "$fuzz" -t targets all 2>/dev/null |
                           grep -o '^tests/fuzz/fuzz_[a-z0-9_]*' | sort -u)
    ((${#fuzzers[@]} == 0)) || ninja -C "$fuzz" "${fuzzers[@]}" || { echo "fuzz build failed"; status=1; }
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      meson test -C "$fuzz" --no-rebuild --print-errorlogs --num-processes 1 --suite fuzz_run || status=1
  else
    echo "test: clang not found, fuzzing skipped (scripts/setup.sh installs it)"; status=1
  fi
fi

/usr/bin/python3 - "$build" "$asan" "$fuzz" <<'PY'
import json, os, sys
passed = failed = skipped = 0
for d in sys.argv[1:]:
    log = os.path.join(d, "meson-logs", "testlog.json")
    if not os.path.exists(log):
        continue
    for line in open(log):
        r = json.loads(line).get("result")
        if r in ("OK", "EXPECTEDFAIL"): passed += 1
        elif r == "SKIP": skipped += 1
        else: failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status

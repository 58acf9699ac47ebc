# Sourced by the benchmarks: the usual command line and the release build they time. Not a
# script of its own.
#
#   source "$ROOT/bench/lib/build.sh"
#   bench_name              the calling script's path in the repository (for messages)
#   bench_args "$@"         --help/-h prints the calling script's header comment and exits 0;
#                           any other argument is refused with exit 2 (settings are
#                           environment variables)
#   bench_build TARGET...   meson setup $BUILD_DIR (release, no tests) when it has no
#                           build.ninja yet, then ninja the TARGETs; a failure prints the end
#                           of ninja's output and exits 2

bench_name() { realpath --relative-to="$ROOT" "$0"; }

bench_args() {
  if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
  fi
  if [ $# -gt 0 ]; then
    echo "$(bench_name): takes no arguments (see --help; settings are environment variables)" >&2
    exit 2
  fi
}

bench_build() {
  local out
  echo "== build ($BUILD_DIR)"
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    meson setup "$BUILD_DIR" "$ROOT" --buildtype=release -Dtests=false | tail -n 3
  fi
  if ! out="$(ninja -C "$BUILD_DIR" "$@" 2>&1)"; then
    echo "$out" | tail -n 40
    echo "$(bench_name): build failed" >&2
    exit 2
  fi
}

#!/usr/bin/env bash
# braidd soak: 16 clients infer while one model is hot-reloaded every second and another is
# loaded and unloaded in a loop, then SIGTERM in the middle of the traffic (README.md).
#
#   bench/soak/run.sh --seconds 600                  # the documented run (docs/reliability.md)
#   bench/soak/run.sh --seconds 20 --json out.json   # what the e2e suite runs
#
# Environment: BRAIDD (default <repo>/build/daemon/braidd, built here if missing),
# BUILD_DIR (<repo>/build). Every other argument goes to soak.py (--help lists them).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
if [ -z "${BRAIDD:-}" ]; then
  [ -f "$BUILD_DIR/build.ninja" ] || meson setup "$BUILD_DIR" "$ROOT" | tail -n 3
  ninja -C "$BUILD_DIR" daemon/braidd | tail -n 1
  export BRAIDD="$BUILD_DIR/daemon/braidd"
fi
# The Python stubs of the build when present; otherwise the e2e fixture generates them.
if [ -z "${BRAID_PROTO_PY:-}" ] && [ -f "$BUILD_DIR/proto/inference_pb2_grpc.py" ]; then
  export BRAID_PROTO_PY="$BUILD_DIR/proto"
fi
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
exec /usr/bin/python3 "$ROOT/bench/soak/soak.py" --braidd "$BRAIDD" "$@"

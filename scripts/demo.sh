#!/usr/bin/env bash
# Set up, build, and start braidd on 127.0.0.1 serving the bundled demo repository
# (daemon/demo-repository: "tinycnn", a small CNN classifier). Runs in the foreground;
# Ctrl-C (SIGINT) or SIGTERM drains and stops it. Try it from another terminal with the
# commands printed below. Extra arguments are passed to braidd (e.g. --allow-uploads).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build=${BRAID_BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null
ninja -C "$build" daemon/braidd cli/braid >/dev/null

cat <<HINT
braidd is starting on 127.0.0.1 (REST :8000, gRPC :8001, HTTP :8002). In another terminal:
  $build/cli/braid models
  $build/cli/braid infer tinycnn --input image=tests/fixtures/demo/image.npy
  curl -s 127.0.0.1:8002/v2/status
  curl -s 127.0.0.1:8002/metrics | grep braid_requests_total
  curl -s 127.0.0.1:8000/v2/models/tinycnn
HINT
exec "$build/daemon/braidd" --repository daemon/demo-repository \
  --grpc-address 127.0.0.1:8001 --http-address 127.0.0.1:8002 --rest-address 127.0.0.1:8000 "$@"

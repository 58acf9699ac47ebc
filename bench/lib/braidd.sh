# Sourced by the benchmarks that drive a live braidd (bench/perf_analyzer.sh,
# bench/batching/run.sh, bench/multimodel/run.sh): build it, start it on free loopback ports,
# wait until it is ready. Not a script of its own.
#
#   source "$ROOT/bench/lib/braidd.sh"
#   bench_workdir NAME                 # WORK (a fresh /tmp/braid-NAME.*), OUT (default WORK),
#                                      # WORK/repo; on exit braidd is stopped and WORK removed
#                                      # unless it is OUT
#   bench_braidd_build                 # BRAIDD, unless already set: $BUILD_DIR/daemon/braidd
#   bench_braidd_start REPO LOG [braidd flags...]
#                                      # sets PID, GRPC, HTTP, REST (host:port); exits on failure
#   bench_braidd_stop                  # SIGTERM and wait (also on exit, through the caller's trap)

bench_workdir() {
  WORK="$(mktemp -d "/tmp/braid-$1.XXXXXX")"
  OUT="${OUT:-$WORK}"
  mkdir -p "$OUT" "$WORK/repo"
  PID=""
  trap 'bench_braidd_stop; [ "$OUT" = "$WORK" ] || rm -rf "$WORK"' EXIT
}

# shellcheck source=bench/lib/build.sh
source "$ROOT/bench/lib/build.sh"

bench_braidd_build() {
  if [ -z "${BRAIDD:-}" ]; then
    bench_build daemon/braidd
    BRAIDD="$BUILD_DIR/daemon/braidd"
  fi
}

bench_braidd_start() {
  local repo="$1" log="$2"
  shift 2
  local ports="$log.ports"
  rm -f "$ports"
  "$BRAIDD" --repository "$repo" --grpc-address 127.0.0.1:0 --http-address 127.0.0.1:0 \
    --rest-address 127.0.0.1:0 --port-file "$ports" --log-level warn "$@" 2>"$log" &
  PID=$!
  for _ in $(seq 1 600); do [ -s "$ports" ] && break; sleep 0.1; done
  [ -s "$ports" ] || { echo "braidd wrote no port file:"; tail -n 20 "$log"; exit 1; }
  GRPC="127.0.0.1:$(cut -d' ' -f1 "$ports")"
  HTTP="127.0.0.1:$(cut -d' ' -f2 "$ports")"
  REST="127.0.0.1:$(cut -d' ' -f3 "$ports")"
  for _ in $(seq 1 1200); do    # the start-up loads have finished (docs/operations.md)
    curl -sf -o /dev/null "http://$HTTP/v2/health/ready" && return 0
    kill -0 "$PID" 2>/dev/null || { echo "braidd exited:"; tail -n 20 "$log"; exit 1; }
    sleep 0.5
  done
  echo "braidd did not turn ready in 10 minutes:"; tail -n 20 "$log"; exit 1
}

bench_braidd_stop() {
  [ -z "${PID:-}" ] || { kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }
  PID=""
}

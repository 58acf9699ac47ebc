#!/usr/bin/env bash
# braidd's benchmarks, one table:
#   1. RPC latency: >= 5000 sequential ModelInfer calls of a tiny model (x[1,16] + c) against
#      braidd and the same request bytes against a bare gRPC C-core echo server, interleaved
#      in blocks in the same run; p50/p99 of each and braidd's p50 over the echo's
#      (target <= 1.3). The same for ServerLive (an empty request, answered on braidd's cq
#      thread) against an echo server registered on that method.
#   2. Throughput: ResNet-50 with 16 concurrent clients against braidd vs the in-process
#      `braid bench` with the same total threads (target >= 90%); alternated ROUNDS times
#      (braidd's calls/s over the in-process 1000 / mean ms, both means over time).
#
#   bench/daemon/run.sh
#   CALLS=20000 ROUNDS=5 bench/daemon/run.sh
#   BRAIDD_BASE=/tmp/braidd-old LATENCY_ONLY=1 bench/daemon/run.sh   # before/after, interleaved
#
# Environment:
#   CALLS        sequential calls per target (default 5000); BLOCK calls per block (250)
#   CONCURRENCY  clients in flight for the throughput run (default 16)
#   DURATION     seconds per braidd throughput measurement (default 10); ROUNDS (default 3)
#   THREADS      total threads of both sides (default: nproc); `braid bench --threads THREADS`
#   CONFIGS      braidd shapes WORKERSxTHREADS_PER_WORKER to measure (default "1xTHREADS
#                THREADSx1": one worker using every thread, and one single-threaded worker per
#                thread, which is what braidd's automatic sizing picks)
#   INPROC_ITERS timed in-process inferences per round (default 40)
#   BUILD_DIR    meson build directory (default <repo>/build-bench, release)
#   BRAIDD, BRAID, ECHO_SERVER, RPC_BENCH   use these binaries instead of building
#   BRAIDD_BASE  a second braidd (e.g. built from an older commit) measured in the same latency
#                runs as target "base", interleaved with braidd and the echo
#   LATENCY_ONLY 1: skip the throughput runs
#   BRAID_MODEL_CACHE   where gen_models.py keeps resnet50.onnx (~/.cache/braid/models)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CALLS="${CALLS:-5000}"
BLOCK="${BLOCK:-250}"
CONCURRENCY="${CONCURRENCY:-16}"
DURATION="${DURATION:-10}"
ROUNDS="${ROUNDS:-3}"
THREADS="${THREADS:-$(nproc)}"
CONFIGS="${CONFIGS:-1x$THREADS ${THREADS}x1}"
INPROC_ITERS="${INPROC_ITERS:-40}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"
MODEL_DIR="${BRAID_MODEL_CACHE:-$HOME/.cache/braid/models}"
PY=/usr/bin/python3
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

if [ -z "${BRAIDD:-}" ] || [ -z "${BRAID:-}" ] || [ -z "${ECHO_SERVER:-}" ] || [ -z "${RPC_BENCH:-}" ]; then
  echo "== build ($BUILD_DIR)"
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    meson setup "$BUILD_DIR" "$ROOT" --buildtype=release -Dtests=false | tail -n 3
  fi
  if ! out="$(ninja -C "$BUILD_DIR" daemon/braidd cli/braid bench/daemon/echo-server \
                bench/daemon/rpc-bench 2>&1)"; then
    echo "$out" | tail -n 40
    echo "bench/daemon: build failed" >&2
    exit 1
  fi
  BRAIDD="${BRAIDD:-$BUILD_DIR/daemon/braidd}"
  BRAID="${BRAID:-$BUILD_DIR/cli/braid}"
  ECHO_SERVER="${ECHO_SERVER:-$BUILD_DIR/bench/daemon/echo-server}"
  RPC_BENCH="${RPC_BENCH:-$BUILD_DIR/bench/daemon/rpc-bench}"
  if [ -d "$BUILD_DIR/proto" ] && [ -z "${BRAID_PROTO_PY:-}" ]; then
    ninja -C "$BUILD_DIR" proto/inference_pb2.py proto/inference_pb2_grpc.py \
      proto/health_pb2.py proto/health_pb2_grpc.py >/dev/null 2>&1 && export BRAID_PROTO_PY="$BUILD_DIR/proto"
  fi
fi

echo "== models"
$PY "$ROOT/tests/runtime/models/gen_models.py" --bench --out "$MODEL_DIR" --only resnet50 | tail -n 2
WORK="$(mktemp -d /tmp/braid-bench-daemon.XXXXXX)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]+"${PIDS[@]}"}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
$PY "$ROOT/bench/daemon/bench_inputs.py" prepare "$WORK" --resnet50 "$MODEL_DIR/resnet50.onnx"

wait_port_file() {   # FILE PID LOG
  for _ in $(seq 1 600); do
    if [ -s "$1" ] && [ "$(tail -c1 "$1" | od -An -c | tr -d ' ')" = '\n' ]; then return 0; fi
    if ! kill -0 "$2" 2>/dev/null; then echo "server exited early:"; tail -n 30 "$3"; exit 1; fi
    sleep 0.1
  done
  echo "no port file after 60 s:"; tail -n 30 "$3"; exit 1
}
stop() {             # PID NAME: SIGTERM, and the exit code must be 0
  kill -TERM "$1"
  local rc=0
  wait "$1" || rc=$?
  local keep=() p
  for p in "${PIDS[@]+"${PIDS[@]}"}"; do [ "$p" = "$1" ] || keep+=("$p"); done
  PIDS=("${keep[@]+"${keep[@]}"}")   # reaped: never signal that number again
  [ "$rc" -eq 0 ] || { echo "!! $2 exited with $rc after SIGTERM"; return 1; }
}

echo "== start the echo server, and braidd for the latency run (daemon defaults)"
start_braidd() {     # extra braidd flags...; sets BRAIDD_PID and GRPC_PORT
  rm -f "$WORK/braidd.ports"
  "$BRAIDD" --repository "$WORK/repo" --grpc-address 127.0.0.1:0 --http-address 127.0.0.1:0 --rest-address 127.0.0.1:0 \
    --port-file "$WORK/braidd.ports" --queue-limit 64 --log-level warn "$@" 2>>"$WORK/braidd.log" &
  BRAIDD_PID=$!; PIDS+=("$BRAIDD_PID")
  wait_port_file "$WORK/braidd.ports" "$BRAIDD_PID" "$WORK/braidd.log"
  GRPC_PORT="$(cut -d' ' -f1 "$WORK/braidd.ports")"
  for _ in $(seq 1 600); do   # every model loaded and answering correctly
    $PY "$ROOT/bench/daemon/bench_inputs.py" check "$WORK" "127.0.0.1:$GRPC_PORT" tiny_add resnet50 \
      >"$WORK/check.log" 2>&1 && break
    sleep 0.2
  done
  cat "$WORK/check.log"
}
"$ECHO_SERVER" --port-file "$WORK/echo.port" 2>"$WORK/echo.log" &
ECHO_PID=$!; PIDS+=("$ECHO_PID")
wait_port_file "$WORK/echo.port" "$ECHO_PID" "$WORK/echo.log"
ECHO_PORT="$(cat "$WORK/echo.port")"
LIVE_METHOD=/inference.GRPCInferenceService/ServerLive
"$ECHO_SERVER" --method "$LIVE_METHOD" --port-file "$WORK/echo-live.port" 2>"$WORK/echo-live.log" &
ECHO_LIVE_PID=$!; PIDS+=("$ECHO_LIVE_PID")
wait_port_file "$WORK/echo-live.port" "$ECHO_LIVE_PID" "$WORK/echo-live.log"
ECHO_LIVE_PORT="$(cat "$WORK/echo-live.port")"
: >"$WORK/empty.req"                 # ServerLiveRequest has no fields: zero bytes, both sides
start_braidd
BASE_TARGET=()
if [ -n "${BRAIDD_BASE:-}" ]; then
  echo "== start the base braidd ($BRAIDD_BASE)"
  NEW_PID="$BRAIDD_PID"; NEW_PORT="$GRPC_PORT"
  BRAIDD_SAVED="$BRAIDD"; BRAIDD="$BRAIDD_BASE"
  start_braidd
  BRAIDD="$BRAIDD_SAVED"; BASE_PID="$BRAIDD_PID"; BASE_TARGET=(base="127.0.0.1:$GRPC_PORT")
  BRAIDD_PID="$NEW_PID"; GRPC_PORT="$NEW_PORT"
fi
echo "load average before the latency runs: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== RPC latency: $CALLS sequential calls each, blocks of $BLOCK, interleaved"
"$RPC_BENCH" latency --request "$WORK/tiny_add.req" --calls "$CALLS" --block "$BLOCK" \
  braidd="127.0.0.1:$GRPC_PORT" "${BASE_TARGET[@]+"${BASE_TARGET[@]}"}" echo="127.0.0.1:$ECHO_PORT" | tee "$WORK/latency.txt"
LAT="$(grep '^RESULT ' "$WORK/latency.txt")"
echo "== ServerLive latency (answered on braidd's cq thread): $CALLS calls each, same blocks"
"$RPC_BENCH" latency --method "$LIVE_METHOD" --request "$WORK/empty.req" --calls "$CALLS" \
  --block "$BLOCK" braidd="127.0.0.1:$GRPC_PORT" "${BASE_TARGET[@]+"${BASE_TARGET[@]}"}" \
  echo="127.0.0.1:$ECHO_LIVE_PORT" | tee "$WORK/live.txt"
LIVE="$(grep '^RESULT ' "$WORK/live.txt")"
LOAD_LAT="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "load average after the latency runs: $LOAD_LAT"
[ -z "${BASE_PID:-}" ] || stop "$BASE_PID" braidd-base
stop "$ECHO_PID" echo-server
stop "$ECHO_LIVE_PID" echo-server
stop "$BRAIDD_PID" braidd

# Throughput: rounds alternate the in-process run and braidd, so noise hits both alike.
# In-process inferences/s = 1000 / mean latency (like braidd's calls / elapsed, a mean).
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
TP_ROWS=()
[ "${LATENCY_ONLY:-0}" = 1 ] && CONFIGS=""
for cfg in $CONFIGS; do
  w="${cfg%x*}"; t="${cfg#*x}"
  echo "== ResNet-50: braidd $w worker(s) x $t thread(s), $CONCURRENCY clients vs braid bench --threads $THREADS; $ROUNDS rounds"
  start_braidd --workers "$w" --threads-per-worker "$t"
  : >"$WORK/tp.txt"
  for r in $(seq 1 "$ROUNDS"); do
    "$BRAID" bench "$MODEL_DIR/resnet50.onnx" --threads "$THREADS" --iters "$INPROC_ITERS" --warmup 3 >"$WORK/inproc.txt"
    ip="$(sed -n 's/.* mean \([0-9.]*\).*/\1/p' "$WORK/inproc.txt" | awk '{ printf "%.2f", 1000 / $1 }')"
    "$RPC_BENCH" throughput --request "$WORK/resnet50.req" --concurrency "$CONCURRENCY" \
      --seconds "$DURATION" --warmup-seconds 3 braidd="127.0.0.1:$GRPC_PORT" >"$WORK/rpc.txt"
    rps="$(sed -n 's/^RESULT .* rps=\([0-9.]*\) .*/\1/p' "$WORK/rpc.txt")"
    p50="$(sed -n 's/^RESULT .* p50_ms=\([0-9.]*\) .*/\1/p' "$WORK/rpc.txt")"
    echo "round $r: in-process $ip inf/s, braidd $rps inf/s (client p50 $p50 ms)" | tee -a "$WORK/tp.txt"
  done
  stop "$BRAIDD_PID" braidd
  ipm="$(sed -n 's/.*in-process \([0-9.]*\) .*/\1/p' "$WORK/tp.txt" | median)"
  rpm="$(sed -n 's/.*braidd \([0-9.]*\) inf.*/\1/p' "$WORK/tp.txt" | median)"
  TP_ROWS+=("$w $t $rpm $ipm")
done

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
echo
echo "== results ($(nproc) cores, OMP_WAIT_POLICY=$OMP_WAIT_POLICY; medians of $ROUNDS rounds for throughput;"
echo "   load average after the latency runs $LOAD_LAT, now $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-40s %12s %16s %9s %8s\n' "measurement" "braidd" "reference" "ratio" "target"
printf '%-40s %12s %16s %9s %8s\n' "tiny model RPC p50 (us), $CALLS calls" "$(field braidd_p50_us "$LAT")" \
  "$(field echo_p50_us "$LAT") echo" "$(field ratio_p50 "$LAT")x" "<= 1.3x"
printf '%-40s %12s %16s %9s %8s\n' "tiny model RPC p99 (us)" "$(field braidd_p99_us "$LAT")" \
  "$(field echo_p99_us "$LAT") echo" "" ""
printf '%-40s %12s %16s %9s %8s\n' "ServerLive RPC p50 (us)" "$(field braidd_p50_us "$LIVE")" \
  "$(field echo_p50_us "$LIVE") echo" "$(field ratio_p50 "$LIVE")x" "<= 1.3x"
if [ -n "${BASE_PID:-}" ]; then
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3fx", a / b }'; }
  printf '%-40s %12s %16s %9s %8s\n' "  base braidd: tiny model RPC p50 (us)" "$(field base_p50_us "$LAT")" \
    "$(field echo_p50_us "$LAT") echo" "$(ratio "$(field base_p50_us "$LAT")" "$(field echo_p50_us "$LAT")")" ""
  printf '%-40s %12s %16s %9s %8s\n' "  base braidd: ServerLive RPC p50 (us)" "$(field base_p50_us "$LIVE")" \
    "$(field echo_p50_us "$LIVE") echo" "$(ratio "$(field base_p50_us "$LIVE")" "$(field echo_p50_us "$LIVE")")" ""
fi
for row in "${TP_ROWS[@]}"; do
  read -r w t rpm ipm <<<"$row"
  printf '%-40s %12s %16s %9s %8s\n' "ResNet-50 inf/s, $CONCURRENCY clients, ${w}x${t}" "$rpm" "$ipm in-proc" \
    "$(awk -v a="$rpm" -v b="$ipm" 'BEGIN { printf "%.1f%%", 100 * a / b }')" ">= 90%"
done

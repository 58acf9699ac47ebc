# Sourced by the in-process benchmarks that time braid against a peer in alternating rounds
# (bench/zoo/run.sh, bench/tf/run.sh): the statistic over the rounds and the FP32 peak sampled
# through a run. Not a script of its own.
#
#   source "$ROOT/bench/lib/build.sh"      # first: bench_name
#   source "$ROOT/bench/lib/rounds.sh"
#   field KEY LINE        the value of " KEY=value" in LINE
#   median                the median of the numbers on stdin (spaces or newlines)
#   round_stat            the rounds' medians on stdin -> the one reported, by STAT:
#                           min (default): the fastest round. Another process on these 2-vCPU
#                             machines only ever slows a round, and at 2 threads whole
#                             processes land in a slow state: the same binary, SqueezeNet at
#                             2 threads, took 3.2-3.4 ms in most processes and 5.6-7.1 ms in
#                             some (docs/performance.md). The fastest round is each engine
#                             on the machine as it is when nothing interferes, the same rule
#                             as the FP32 peak's best sample.
#                           median: the median round
#   measure_peak [ARGS]   runs $PEAK --threads T ARGS for each T in $THREADS (output in $LOG);
#                         keeps the best sample in peak[T], the lowest in lowest[T], and the
#                         count in samples[T] (declare -A peak lowest samples first)

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

median() {
  tr ' ' '\n' | grep -v '^$' | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

STAT="${STAT:-min}"
case "$STAT" in
  min|median) ;;
  *) echo "$(bench_name): STAT is min or median, not '$STAT'" >&2; exit 2 ;;
esac

round_stat() {
  if [ "$STAT" = median ]; then
    median
  else
    tr ' ' '\n' | grep -v '^$' | sort -g | head -n1
  fi
}

measure_peak() {
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

#!/usr/bin/env bash
# Turns the logs of a fuzz/run.sh run into the rows of the table in docs/reliability.md ("Fuzzing").
#
#   fuzz/summarize.sh [LOG_DIR]          (default fuzz/logs)
#
# One row per attempt (`<target>.<n>.log`, in the order of runs.tsv): executions and peak RSS
# from libFuzzer's final statistics (the last status line when a failure cut them short),
# seconds from its `Done … in S second(s)` line (else the wall time run.sh recorded), the
# slowest input, and the result: `no failure`, `stopped at the time budget`, or the failure
# (panic message, timeout, out-of-memory) with the artifact libFuzzer wrote. Then one line per
# target with the executions of all its attempts and whether 10^7 was reached.
set -u
LOG_DIR=${1:-$(dirname "$0")/logs}
RUNS_TSV="$LOG_DIR/runs.tsv"
GOAL=${GOAL:-10000000}
[ -f "$RUNS_TSV" ] || { echo "no $RUNS_TSV" >&2; exit 1; }

row() {
  local t=$1 n=$2 wall=$3 rc=$4 log="$LOG_DIR/$1.$2.log"
  local execs secs rss slow result
  execs=$(grep -a '^stat::number_of_executed_units' "$log" 2>/dev/null | awk '{print $2}')
  if [ -z "$execs" ]; then # cut short: the last status line "#N ... rss: XMb"
    execs=$(grep -aoE '^#[0-9]+' "$log" 2>/dev/null | tail -1 | tr -d '#')
  fi
  rss=$(grep -a '^stat::peak_rss_mb' "$log" 2>/dev/null | awk '{print $2}')
  [ -z "$rss" ] && rss=$(grep -aoE 'rss: [0-9]+Mb' "$log" 2>/dev/null | tail -1 | grep -oE '[0-9]+')
  slow=$(grep -a '^stat::slowest_unit_time_sec' "$log" 2>/dev/null | awk '{print $2}')
  secs=$(grep -aoE '^Done [0-9]+ runs in [0-9]+ second' "$log" 2>/dev/null | awk '{print $5}')
  if grep -aq 'ERROR: libFuzzer: timeout' "$log" 2>/dev/null; then
    result="failure: an input ran over the per-input timeout (hang)"
  elif grep -aq 'ERROR: libFuzzer: out-of-memory' "$log" 2>/dev/null; then
    result="failure: out of memory (over the RSS limit)"
  elif grep -aq 'panicked at' "$log" 2>/dev/null; then
    local where msg
    where=$(grep -a -m1 'panicked at' "$log" | sed -E 's/.*panicked at ([^ ]+):.*/\1/; s/:$//')
    msg=$(grep -a -m1 -A1 'panicked at' "$log" | tail -1 | cut -c1-120)
    result="failure at $where: $msg"
  elif grep -aq 'ERROR: libFuzzer' "$log" 2>/dev/null; then
    result="failure: $(grep -a -m1 'ERROR: libFuzzer' "$log" | sed 's/.*ERROR: libFuzzer: //')"
  elif [ "$rc" = skipped ]; then
    result="not run (no time left)"
  elif [ "$rc" != 0 ]; then
    result="stopped (exit code $rc)"
  elif [ "${execs:-0}" -ge "$GOAL" ]; then
    result="no failure"
  else
    result="no failure (stopped at the time budget)"
  fi
  local artifact
  artifact=$(grep -aoE 'Test unit written to [^ ]+' "$log" 2>/dev/null | tail -1 | awk '{print $5}')
  [ -n "$artifact" ] && result="$result; input \`$artifact\`"
  [ -z "$secs" ] && secs="$wall (wall)"
  printf '| `%s` | %s | %s | %s | %s | %s |\n' "$t" "${execs:-0}" "$secs" "${rss:-?}" "${slow:-?}" "$result"
  echo "$t ${execs:-0}" >>"$TOTALS"
}

TOTALS=$(mktemp)
trap 'rm -f "$TOTALS"' EXIT
echo '| target | executions | seconds | peak RSS (MB) | slowest input (s) | result |'
echo '|---|---|---|---|---|---|'
while IFS=$'\t' read -r t n wall rc _budget; do
  row "$t" "$n" "$wall" "$rc"
done <"$RUNS_TSV"
echo
echo 'Executions per target (all attempts):'
echo
awk -v goal="$GOAL" '{sum[$1] += $2; if (!($1 in order)) { order[$1] = n++; names[n-1] = $1 } }
  END { for (i = 0; i < n; i++) { t = names[i];
    printf "- `%s`: %d%s\n", t, sum[t], (sum[t] >= goal ? " (goal reached)" : " (below the goal)") } }' "$TOTALS"

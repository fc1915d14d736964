#!/usr/bin/env bash
# Runs fuzz targets one after another: up to RUNS executions each, within a time budget, with
# libFuzzer's per-input timeout (hangs) and RSS limit (memory). Seeds come from seed.py.
#
#   RUNS=10000000 SECONDS_PER_TARGET=600 fuzz/run.sh sse mapper_anthropic …
#   DEADLINE=05:20 LANES=2 LOG_DIR=/work/fuzz-logs nohup nice -n 19 fuzz/run.sh &
#
# Settings (environment):
#   RUNS                executions per target (default 10^7).
#   SECONDS_PER_TARGET  fixed time budget per target (default 600 without DEADLINE).
#   DEADLINE            a UTC time (HH:MM, today) or a Unix time: the whole run stops by then.
#                       Each target gets (time left) / (targets left in its lane), recomputed
#                       when it starts, so time a fast target does not need goes to the next
#                       ones; SECONDS_PER_TARGET, when also set, caps it.
#   LANES               targets run in this many parallel lanes (default 1); target i goes to
#                       lane i mod LANES, in the order given.
#   ATTEMPTS            a target that fails is restarted (fresh process, same corpus) within
#                       what is left of its budget, at most this many runs in all (default 3).
#   LOG_DIR             logs (default fuzz/logs): <target>.<attempt>.log (libFuzzer's output)
#                       and runs.tsv (one row per attempt: target, attempt, wall seconds, exit
#                       code, budget). fuzz/summarize.sh turns them into the docs table.
#   FUZZ_TARGET_DIR     cargo target dir (default fuzz/target); MAX_LEN (default 8192).
#   BUILD_FLAGS         flags of `cargo fuzz build` (default `-s none -O`; add `-a` for debug
#                       assertions, so arithmetic overflow panics as in the test suite).
#   TIMEOUT, RSS_LIMIT_MB  libFuzzer's per-input timeout in seconds (default 10) and RSS limit
#                       (default 2048).
#
# All targets are built once before anything runs, and the binaries are run directly, so
# editing the sources during a run does not affect it. Crash inputs go to
# fuzz/artifacts/<target>/. With no target named, all of them run.
set -u
cd "$(dirname "$0")"
FUZZ_DIR=$(pwd)
RUNS=${RUNS:-10000000}
ATTEMPTS=${ATTEMPTS:-3}
LANES=${LANES:-1}
LOG_DIR=${LOG_DIR:-$FUZZ_DIR/logs}
FUZZ_TARGET_DIR=${FUZZ_TARGET_DIR:-target}
export RUSTC_BOOTSTRAP=1
ALL="session_line mapper_openai_responses mapper_google mapper_anthropic partial_json sse validation mapper_openai_completions session_open"
# shellcheck disable=SC2206
TARGETS=(${*:-$ALL})

deadline=""
if [ -n "${DEADLINE:-}" ]; then
  case "$DEADLINE" in
    *:*) deadline=$(date -u -d "today $DEADLINE" +%s) ;;
    *) deadline=$DEADLINE ;;
  esac
  [ "$deadline" -gt "$(date +%s)" ] || { echo "DEADLINE $DEADLINE is past" >&2; exit 2; }
elif [ -z "${SECONDS_PER_TARGET:-}" ]; then
  SECONDS_PER_TARGET=600
fi

mkdir -p "$LOG_DIR"
python3 seed.py >/dev/null
# shellcheck disable=SC2086
cargo fuzz build ${BUILD_FLAGS:--s none -O} --target-dir "$FUZZ_TARGET_DIR" >"$LOG_DIR/build.log" 2>&1 ||
  { echo "build failed, see $LOG_DIR/build.log" >&2; exit 1; }
BIN_DIR=$(cd "$FUZZ_TARGET_DIR" && pwd)/x86_64-unknown-linux-gnu/release

# Seconds one target may use now: the fixed budget, or its share of the time to the deadline
# (30 s kept for starting and final statistics), whichever is smaller.
budget() {
  local left_targets=$1 b=${SECONDS_PER_TARGET:-}
  if [ -n "$deadline" ]; then
    local share=$(((deadline - $(date +%s) - 30) / left_targets))
    if [ -z "$b" ] || [ "$share" -lt "$b" ]; then b=$share; fi
  fi
  echo "$b"
}

# One target: attempts until RUNS executions, a clean finish, or the budget is spent.
run_target() {
  local t=$1 left_targets=$2 total attempt=1 start rc secs spent=0
  total=$(budget "$left_targets")
  mkdir -p "corpus/$t" "artifacts/$t"
  while [ "$attempt" -le "$ATTEMPTS" ]; do
    secs=$((total - spent))
    if [ "$secs" -lt 10 ]; then
      [ "$attempt" -eq 1 ] && printf '%s\t%s\t0\tskipped\t%s\n' "$t" "$attempt" "$secs" >>"$LOG_DIR/runs.tsv"
      return
    fi
    start=$(date +%s)
    # The outer timeout only matters if libFuzzer ignores its own -max_total_time.
    timeout -k 30 $((secs + 60)) "$BIN_DIR/$t" "corpus/$t" \
      -runs="$RUNS" -max_total_time="$secs" -timeout="${TIMEOUT:-10}" -rss_limit_mb="${RSS_LIMIT_MB:-2048}" \
      -max_len="${MAX_LEN:-8192}" -print_final_stats=1 -artifact_prefix="artifacts/$t/" \
      >"$LOG_DIR/$t.$attempt.log" 2>&1
    rc=$?
    spent=$((spent + $(date +%s) - start))
    printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$attempt" "$(($(date +%s) - start))" "$rc" "$secs" >>"$LOG_DIR/runs.tsv"
    echo "$t attempt=$attempt rc=$rc seconds=$(($(date +%s) - start))"
    [ "$rc" -eq 0 ] && return
    attempt=$((attempt + 1))
  done
}

lane() {
  local n=$1 i left
  local mine=()
  for i in "${!TARGETS[@]}"; do
    [ $((i % LANES)) -eq "$n" ] && mine+=("${TARGETS[$i]}")
  done
  left=${#mine[@]}
  for t in "${mine[@]}"; do
    run_target "$t" "$left"
    left=$((left - 1))
  done
}

echo "start $(date -u +%FT%TZ) targets=${TARGETS[*]} lanes=$LANES deadline=${DEADLINE:-none}" >>"$LOG_DIR/runs.tsv.info"
for ((n = 0; n < LANES; n++)); do
  lane "$n" &
done
wait
echo "end $(date -u +%FT%TZ)" >>"$LOG_DIR/runs.tsv.info"

#!/usr/bin/env bash
# Runs fuzz targets one after another: up to RUNS executions or SECONDS seconds each, with
# libFuzzer's per-input timeout (hangs) and RSS limit (memory). Seeds come from seed.py.
#
#   RUNS=10000000 SECONDS_PER_TARGET=600 fuzz/run.sh sse mapper_anthropic …
#
# Prints one summary line per target: name, executions, seconds, result. Logs and any crash
# inputs go to fuzz/logs/ and fuzz/artifacts/<target>/.
set -u
cd "$(dirname "$0")"
RUNS=${RUNS:-10000000}
SECS=${SECONDS_PER_TARGET:-600}
export RUSTC_BOOTSTRAP=1
FUZZ_TARGET_DIR=${FUZZ_TARGET_DIR:-target}
mkdir -p logs
python3 seed.py >/dev/null
for t in "$@"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  start=$(date +%s)
  nice -n 10 cargo fuzz run -s none -O --target-dir "$FUZZ_TARGET_DIR" "$t" "corpus/$t" -- \
    -runs="$RUNS" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
    -max_len="${MAX_LEN:-8192}" -print_final_stats=1 -artifact_prefix="artifacts/$t/" \
    >"logs/$t.log" 2>&1
  rc=$?
  end=$(date +%s)
  execs=$(grep -a 'stat::number_of_executed_units' "logs/$t.log" | awk '{print $2}')
  echo "$t execs=${execs:-?} seconds=$((end - start)) rc=$rc"
done

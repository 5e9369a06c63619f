#!/usr/bin/env bash
# Runs one fuzz target for SECONDS (default 300) at low priority, one
# process (the machine's 2 cores are shared): ./fuzz/run.sh TARGET [SECONDS].
# FUZZ_ARGS adds libFuzzer flags, e.g. "-fork=1 -ignore_crashes=1" to go on
# past a known crash (each one is still written to fuzz/artifacts/).
# Needs `cargo install cargo-fuzz`; stable Rust, no sanitizer (see
# docs/robustness.md). Its log, with libFuzzer's final stats, goes to
# fuzz/logs/TARGET.log; new inputs to fuzz/corpus/TARGET (not committed).
set -euo pipefail
cd "$(dirname "$0")"
target=$1
secs=${2:-300}
case $target in
  wire_*) seeds=seeds/wire; max_len=4096 ;;
  audio_*) seeds=seeds/${target#audio_}; max_len=16384 ;;
  cover) seeds=seeds/cover; max_len=16384 ;;
  config_toml|keymap|sound_json|journals) seeds=seeds/$target; max_len=4096 ;;
  # Past the 64 KiB line limit, so the refusal is reached too.
  ctl_request) seeds=seeds/$target; max_len=70000 ;;
  *) echo "unknown target $target" >&2; exit 2 ;;
esac
mkdir -p "corpus/$target" logs artifacts
# -timeout: one input decoding for 10 s is a hang; the allocator in
# src/lib.rs aborts on one allocation over EARMARK_FUZZ_MAX_ALLOC_MB.
nice -n 15 cargo fuzz run --sanitizer none "$target" "corpus/$target" "$seeds" -- \
  -max_total_time="$secs" -max_len="$max_len" -timeout=10 -rss_limit_mb=1024 \
  -print_final_stats=1 -artifact_prefix="artifacts/$target-" ${FUZZ_ARGS:-} \
  >"logs/$target.log" 2>&1 || status=$?
grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|^#[0-9]+.*DONE" "logs/$target.log" || tail -3 "logs/$target.log"
exit "${status:-0}"

#!/usr/bin/env bash
# Runs one fuzz target (fuzz/fuzz_targets/TARGET.rs) for SECONDS (default 600) at the
# lowest CPU priority, one libFuzzer process, from the seeds fuzz/seeds.py cuts from the
# shared traces and samples (made on the first run). Needs the nightly toolchain and
# cargo-fuzz (`cargo install cargo-fuzz --locked`: ~3 min). Build output goes to
# $FUZZ_TARGET_DIR (default fuzz/target), the corpus to fuzz/corpus/TARGET, crashes to
# fuzz/artifacts/TARGET, the log to fuzz/logs/TARGET.log (all ignored by git).
# Usage: scripts/fuzz.sh TARGET [SECONDS] [more libFuzzer flags]
#        scripts/fuzz.sh all [SECONDS]   (every target, one after the other)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET [SECONDS] [libFuzzer flags]}
secs=${2:-600}
shift $(($# < 2 ? $# : 2))
targets=(pipeline split gzip_stream field_readers event_parses number_arrays kernels node_reads proto_packets source_maps)
if [ "$target" = all ]; then
    for t in "${targets[@]}"; do "$0" "$t" "$secs" "$@"; done
    exit 0
fi
case $target in
    event_parses | number_arrays | kernels | node_reads) max_len=4096 ;;
    *) max_len=65536 ;;
esac
[ -d fuzz/corpus/pipeline ] || python3 fuzz/seeds.py
mkdir -p "fuzz/corpus/$target" fuzz/logs
target_dir=${FUZZ_TARGET_DIR:-$PWD/fuzz/target}
cd fuzz
cargo +nightly fuzz build --target-dir "$target_dir" "$target"
log=logs/$target.log
echo "fuzzing $target for $secs s at $(git rev-parse --short HEAD) (log: fuzz/$log)"
# One process writing its own log, so targets can run side by side (with -jobs=1 each wrote
# fuzz-0.log in this folder: two at once mixed their logs); a hang of 30 s or 2 GB of
# memory is a finding too.
status=0
nice -n 19 cargo +nightly fuzz run --target-dir "$target_dir" "$target" -- \
    -max_total_time="$secs" -max_len="$max_len" -timeout=30 \
    -rss_limit_mb=2048 -print_final_stats=1 "$@" >"$log" 2>&1 || status=$?
grep -E "^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb|SUMMARY|panicked|Test unit written" "$log" || true
exit $status

#!/usr/bin/env bash
# End-to-end benchmark, side by side in one run (the machine is noisy: compare ratios).
#
# Usage: scripts/bench.sh [--big] [--runs N] [FILE...]
#   With no FILE: builds (once) and measures the benchmark traces in $BENCH_DIR
#   (default /tmp/taskchain-bench): 1 GB traces made from a ProfileChunk-heavy trace
#   (lighthouse cpu-profiler-m86) and from a DevTools recording dominated by other events
#   (devtools-frontend web-dev-outermost-frames), their .json.gz, and with --big a 4 GB one.
#   For each file and each run: `cat FILE > /dev/null`, the memchr byte scan
#   (tools/bytescan.rs, one thread), `zcat` for .gz, and taskchain (all cores, -q,
#   --scope renderers). Prints wall time, MB/s, peak RSS and peak anonymous RSS, and the
#   ratios taskchain ÷ byte scan (and ÷ zcat for .gz); keeps the best of N runs.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=3
big=0
files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --big) big=1; shift ;;
    *) files+=("$1"); shift ;;
  esac
done
shared=../shared/traces
dir=${BENCH_DIR:-/tmp/taskchain-bench}
cargo build --release --quiet --example bytescan
cargo build --release --quiet
tc=target/release/taskchain
scan=target/release/examples/bytescan
if [ ${#files[@]} -eq 0 ]; then
  mkdir -p "$dir"
  [ -f "$dir/profile-1g.json" ] || scripts/make-big-trace $shared/public/lighthouse/cpu-profiler-m86.trace.json.gz "$dir/profile-1g.json" 1G --gzip
  [ -f "$dir/events-1g.json" ] || scripts/make-big-trace $shared/public/devtools-frontend/web-dev-outermost-frames.json.gz "$dir/events-1g.json" 1G --gzip
  files=("$dir/profile-1g.json" "$dir/events-1g.json" "$dir/profile-1g.json.gz" "$dir/events-1g.json.gz")
  if [ $big = 1 ]; then
    [ -f "$dir/profile-4g.json" ] || scripts/make-big-trace $shared/public/lighthouse/cpu-profiler-m86.trace.json.gz "$dir/profile-4g.json" 4.2G
    files+=("$dir/profile-4g.json")
  fi
fi

best() { # best wall time of N runs of a command; prints "wall rss anon"
  local bw=999999 brss=0 banon=0 line
  for _ in $(seq "$runs"); do
    line=$(python3 scripts/measure.py -- "$@" 2>/dev/null)
    local w=${line#wall_s=}; w=${w%% *}
    local r=${line#*peak_rss_kb=}; r=${r%% *}
    local a=${line#*peak_anon_kb=}; a=${a%% *}
    if awk "BEGIN{exit !($w < $bw)}"; then bw=$w; brss=$r; banon=$a; fi
  done
  echo "$bw $brss $banon"
}

printf "%-26s %-10s %9s %9s %12s %12s\n" file reader wall_s MB/s peak_rss_MB anon_MB
for f in "${files[@]}"; do
  cat "$f" > /dev/null  # page cache
  if [[ $f == *.gz ]]; then size=$(gzip -dc "$f" | wc -c); else size=$(stat -c %s "$f"); fi
  name=$(basename "$f")
  declare -A wall=()
  for reader in cat bytescan zcat taskchain; do
    case $reader in
      cat) cmd=(cat "$f") ;;
      bytescan) cmd=("$scan" "$f") ;;
      zcat) [[ $f == *.gz ]] || continue; cmd=(gzip -dc "$f") ;;
      taskchain) cmd=("$tc" -q --scope renderers "$f") ;;
    esac
    read -r w rss anon < <(best "${cmd[@]}")
    wall[$reader]=$w
    printf "%-26s %-10s %9.3f %9.0f %12.0f %12.0f\n" "$name" "$reader" "$w" \
      "$(awk "BEGIN{print $size/1e6/$w}")" "$(awk "BEGIN{print $rss/1024}")" "$(awk "BEGIN{print $anon/1024}")"
  done
  ratio=$(awk "BEGIN{printf \"%.2f\", ${wall[taskchain]}/${wall[bytescan]}}")
  line="  taskchain / bytescan = $ratio"
  if [[ $f == *.gz ]]; then
    line+=", taskchain / zcat = $(awk "BEGIN{printf \"%.2f\", ${wall[taskchain]}/${wall[zcat]}}")"
  fi
  echo "$line"
  unset wall
done

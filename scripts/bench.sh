#!/usr/bin/env bash
# End-to-end benchmark, side by side in one run (the machine is noisy: compare ratios).
#
# Usage: scripts/bench.sh [--big] [--runs N] [--baseline BIN] [FILE...]
#   --baseline BIN: also run another taskchain binary (e.g. a release build of the previous
#   main) on every input, interleaved with the others, and print its time beside this build's.
#   With no FILE: builds (once) and measures the benchmark inputs in $BENCH_DIR
#   (default /tmp/taskchain-bench): 1 GB traces made from a ProfileChunk-heavy trace
#   (lighthouse cpu-profiler-m86) and from a DevTools recording dominated by other events
#   (devtools-frontend web-dev-screenshot-source-ids), their .json.gz, the batch of 400
#   real .json.gz (the 40 public traces ×10, copied to $BENCH_DIR/batch: a folder search does not
#   follow links out of the folder) on 2
#   threads (also against the yardstick on zlib-rs for every file, `bytescan --zlib-rs`:
#   the yardstick issue 19 names), and with --big a 4 GB trace. The protobuf row and its
#   JSON twin (issue 44): `proto-twin.pftrace`, the seven Perfetto protobuf recordings of
#   tests/data/proto-chromium 20 times over (~216 MB), and `proto-twin.json`, the same
#   events written as JSON without taskchain (scripts/make-proto-twin, ~294 MB): the same
#   content in both formats, each against the yardstick over its own bytes.
#   The yardstick (tools/bytescan.rs) is the fastest pass over the same bytes: memchr
#   counting `{` over the mapped file, or over the .gz inflated by the decoder taskchain
#   itself uses for it (libdeflate for one gzip member of at most 48 MiB inflated, else
#   flate2 on zlib-rs, CPU features detected at run time), on one thread per file and as
#   many threads as taskchain gets for the batch. For each input, N rounds
#   (3) run `cat`, `zcat` (for .gz), the yardstick and taskchain (-q, --scope renderers)
#   one after another, so the readers are interleaved; the best wall time of each is kept,
#   with its CPU time (user + system), peak RSS and peak anonymous RSS. Ends with the
#   summary table: yardstick, taskchain, ratio, taskchain's anonymous RSS ÷ the
#   uncompressed size.
#   The source-map rows (issue 46; with no FILE, or alone with --maps-only): a
#   production-size webpack 5 + terser build and 100 traces of it in $BENCH_DIR/prodmaps
#   (scripts/make-prodmaps: npm and Chromium). The first use of its map, taskchain on one
#   trace with `--source-maps`, against the floor: the map decoded by the `sourcemap`
#   crate alone (tools/mapdecode.rs); and the batch of 100 traces on 2 threads with the
#   map against the same batch without.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=3
big=0
maps=1
maps_only=0
baseline=
files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --big) big=1; shift ;;
    --maps-only) maps_only=1; shift ;;
    --baseline) baseline=$(realpath "$2"); shift 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
shared=../shared/traces
dir=${BENCH_DIR:-/tmp/taskchain-bench}
cargo build --release --quiet --example bytescan --example mapdecode
cargo build --release --quiet
tc=target/release/taskchain
scan=target/release/examples/bytescan
mapdecode=target/release/examples/mapdecode
[ ${#files[@]} -eq 0 ] || maps=0
if [ ${#files[@]} -eq 0 ] && [ $maps_only = 0 ]; then
  mkdir -p "$dir/batch"
  [ -f "$dir/profile-1g.json.gz" ] || scripts/make-big-trace $shared/public/lighthouse/cpu-profiler-m86.trace.json.gz "$dir/profile-1g.json" 1G --gzip
  [ -f "$dir/events-1g.json.gz" ] || scripts/make-big-trace $shared/public/devtools-frontend/web-dev-screenshot-source-ids.json.gz "$dir/events-1g.json" 1G --gzip
  for r in 0 1 2 3 4 5 6 7 8 9; do
    for f in $shared/public/*/*.json.gz; do
      g="$dir/batch/r$r-$(basename "$(dirname "$f")")-$(basename "$f")"
      [ -f "$g" ] || cp "$f" "$g"
    done
  done
  [ -f "$dir/proto-twin.json" ] || scripts/make-proto-twin "$dir/proto-twin" 20
  files=("$dir/profile-1g.json" "$dir/events-1g.json" "$dir/profile-1g.json.gz" "$dir/events-1g.json.gz"
    "$dir/proto-twin.pftrace" "$dir/proto-twin.json" "$dir/batch")
  if [ $big = 1 ]; then
    [ -f "$dir/profile-4g.json" ] || scripts/make-big-trace $shared/public/lighthouse/cpu-profiler-m86.trace.json.gz "$dir/profile-4g.json" 4.2G
    files+=("$dir/profile-4g.json")
  fi
fi

mb() { awk "BEGIN{printf \"%.0f\", $1/1e6}"; }
# Runs "${cmd[@]}" once; keeps its wall time, CPU time, peak RSS and peak anonymous RSS
# in wall, cpu, rss and anon under $reader when it is the reader's best wall time so far.
measure_best() {
  local line w c r a x
  line=$(python3 scripts/measure.py -- "${cmd[@]}" 2>/dev/null)
  w=${line#wall_s=}; w=${w%% *}
  # A reader that could not read the input (exit code 2 or more; 1 is a failed gate): the
  # baseline then gets no ratio, its time not being a reading of the input.
  x=${line#*exit=}; x=${x%% *}
  [ "$x" -lt 2 ] || failed[$reader]=$x
  if [ -z "${wall[$reader]:-}" ] || awk "BEGIN{exit !($w < ${wall[$reader]})}"; then
    wall[$reader]=$w
    c=${line#*cpu_s=}; cpu[$reader]=${c%% *}
    r=${line#*peak_rss_kb=}; rss[$reader]=${r%% *}
    a=${line#*peak_anon_kb=}; anon[$reader]=${a%% *}
  fi
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; $(date -u '+%F %H:%M UTC'); $(git rev-parse --short HEAD)"
printf "%-26s %-10s %8s %8s %8s %10s %9s\n" input reader wall_s cpu_s MB/s peak_rss_MB anon_MB
summary=()
for f in "${files[@]}"; do
  name=$(basename "$f")
  threads=1
  if [ -d "$f" ]; then
    # A batch: every .json.gz in the folder, on 2 threads for both.
    mapfile -t inputs < <(find -L "$f" -maxdepth 1 -name '*.json.gz' | sort)
    threads=2
    cat "${inputs[@]}" > /dev/null
    size=0; for g in "${inputs[@]}"; do size=$((size + $(gzip -dc "$g" | wc -c))); done
    csize=$(cat "${inputs[@]}" | wc -c)
    label="${#inputs[@]} .json.gz files ($(mb "$csize") MB, $(mb "$size") MB inflated), 2 threads"
    readers=(cat bytescan zlib-rs taskchain)
  else
    inputs=("$f")
    cat "$f" > /dev/null # page cache
    if [[ $f == *.gz ]]; then
      size=$(gzip -dc "$f" | wc -c)
      label="$name ($(mb "$(stat -c %s "$f")") MB, $(mb "$size") MB inflated)"
      readers=(zcat bytescan taskchain)
    else
      size=$(stat -c %s "$f")
      label="$name ($(mb "$size") MB)"
      readers=(cat bytescan taskchain)
    fi
  fi
  [ -z "$baseline" ] || readers+=(baseline)
  declare -A wall=() cpu=() rss=() anon=() failed=()
  for _ in $(seq "$runs"); do
    for reader in "${readers[@]}"; do
      case $reader in
        cat) cmd=(cat "${inputs[@]}") ;;
        zcat) cmd=(gzip -dc "$f") ;;
        bytescan) cmd=("$scan" -j "$threads" "${inputs[@]}") ;;
        zlib-rs) cmd=("$scan" --zlib-rs -j "$threads" "${inputs[@]}") ;;
        taskchain | baseline)
          bin=$tc; [ $reader = taskchain ] || bin=$baseline
          if [ -d "$f" ]; then cmd=("$bin" -q --scope renderers -j 2 "$f"); else cmd=("$bin" -q --scope renderers "$f"); fi ;;
      esac
      measure_best
    done
  done
  for reader in "${readers[@]}"; do
    printf "%-26s %-10s %8.3f %8.3f %8.0f %10.0f %9.0f\n" "$name" "$reader" "${wall[$reader]}" "${cpu[$reader]}" \
      "$(awk "BEGIN{print $size/1e6/${wall[$reader]}}")" "$(awk "BEGIN{print ${rss[$reader]}*1024/1e6}")" "$(awk "BEGIN{print ${anon[$reader]}*1024/1e6}")"
  done
  ratio=$(awk "BEGIN{printf \"%.2f\", ${wall[taskchain]}/${wall[bytescan]}}")
  cratio=$(awk "BEGIN{printf \"%.2f\", ${cpu[taskchain]}/${cpu[bytescan]}}")
  anon_x=$(awk "BEGIN{printf \"%.3f\", ${anon[taskchain]}*1024/$size}")
  tmbs=$(awk "BEGIN{printf \"%.0f\", $size/1e6/${wall[taskchain]}}")
  summary+=("| $label | ${wall[bytescan]} s | ${wall[taskchain]} s ($tmbs MB/s) | ${ratio}× (CPU ${cratio}×) | $(awk "BEGIN{printf \"%.0f\", ${anon[taskchain]}*1024/1e6}") MB (${anon_x}×) |")
  if [ -n "${failed[baseline]:-}" ]; then
    summary+=("| the same, this build ÷ the baseline build | the baseline exited with ${failed[baseline]} (it cannot read this input) | | | |")
  elif [ -n "${wall[baseline]:-}" ]; then
    bratio=$(awk "BEGIN{printf \"%.3f\", ${wall[taskchain]}/${wall[baseline]}}")
    bcratio=$(awk "BEGIN{printf \"%.3f\", ${cpu[taskchain]}/${cpu[baseline]}}")
    summary+=("| the same, this build ÷ the baseline build | ${wall[baseline]} s | ${wall[taskchain]} s | ${bratio}× (CPU ${bcratio}×) | |")
  fi
  if [ -n "${wall[zlib-rs]:-}" ]; then
    # The batch against the yardstick issue 19 names (zlib-rs for every file).
    zratio=$(awk "BEGIN{printf \"%.2f\", ${wall[taskchain]}/${wall[zlib-rs]}}")
    zcratio=$(awk "BEGIN{printf \"%.2f\", ${cpu[taskchain]}/${cpu[zlib-rs]}}")
    summary+=("| the same, yardstick on zlib-rs for every file | ${wall[zlib-rs]} s | ${wall[taskchain]} s | ${zratio}× (CPU ${zcratio}×) | |")
  fi
  unset wall cpu rss anon failed
done
# The source-map rows: the production-size build of scripts/sourcemaps/prod and its traces.
pm=$dir/prodmaps
pmap=$pm/site/dist/app.min.js.map
if [ $maps = 1 ] && { [ ! -f "$pmap" ] || [ ! -d "$pm/batch" ]; }; then
  echo "source-map rows skipped: no production build and traces in $pm (make them: scripts/make-prodmaps $pm; npm and Chromium)"
elif [ $maps = 1 ]; then
  mirror="http://127.0.0.1:37039/=$pm/site"
  mapfile -t traces < <(find "$pm/batch" -maxdepth 1 -name '*.json' | sort)
  one=${traces[0]}
  cat "$pmap" "${traces[@]}" > /dev/null # page cache
  nsources=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["sources"]))' "$pmap")
  distinct=$(md5sum "${traces[@]}" | cut -d' ' -f1 | sort -u | wc -l)
  bsize=$(cat "${traces[@]}" | wc -c)
  declare -A wall=() cpu=() rss=() anon=() failed=()
  readers=(mapdecode one one-maps batch batch-maps)
  for _ in $(seq "$runs"); do
    for reader in "${readers[@]}"; do
      case $reader in
        mapdecode) cmd=("$mapdecode" "$pmap") ;;
        one) cmd=("$tc" -q --scope renderers "$one") ;;
        one-maps) cmd=("$tc" -q --scope renderers --source-maps "$mirror" "$one") ;;
        batch) cmd=("$tc" -q --scope renderers -j 2 "$pm/batch") ;;
        batch-maps) cmd=("$tc" -q --scope renderers -j 2 --source-maps "$mirror" "$pm/batch") ;;
      esac
      measure_best
    done
  done
  for reader in "${readers[@]}"; do
    case $reader in mapdecode) size=$(stat -c %s "$pmap") ;; one*) size=$(stat -c %s "$one") ;; *) size=$bsize ;; esac
    printf "%-26s %-10s %8.3f %8.3f %8.0f %10.0f %9.0f\n" prodmaps "$reader" "${wall[$reader]}" "${cpu[$reader]}" \
      "$(awk "BEGIN{print $size/1e6/${wall[$reader]}}")" "$(awk "BEGIN{print ${rss[$reader]}*1024/1e6}")" "$(awk "BEGIN{print ${anon[$reader]}*1024/1e6}")"
  done
  x() { awk "BEGIN{printf \"%.2f\", ($1)/($2)}"; }
  # First use: taskchain on one trace with the map against the floor, and what the map
  # adds to that run (with the map minus without) against the same floor.
  summary+=("| first use of the map: $(basename "$one") ($(mb "$(stat -c %s "$one")") MB) with app.min.js.map ($(mb "$(stat -c %s "$pmap")") MB, $nsources sources; floor: the \`sourcemap\` crate's decode) | ${wall[mapdecode]} s | ${wall[one-maps]} s (without the map ${wall[one]} s) | $(x "${wall[one-maps]}" "${wall[mapdecode]}")× (CPU $(x "${cpu[one-maps]}" "${cpu[mapdecode]}")×); the map's part $(x "${wall[one-maps]}-${wall[one]}" "${wall[mapdecode]}")× | $(mb "${anon[one-maps]}*1024") MB |")
  summary+=("| ${#traces[@]} traces of that build ($distinct distinct, $(mb "$bsize") MB), 2 threads, with the map ÷ without | ${wall[batch]} s | ${wall[batch-maps]} s | $(x "${wall[batch-maps]}" "${wall[batch]}")× (CPU $(x "${cpu[batch-maps]}" "${cpu[batch]}")×) | $(mb "${anon[batch-maps]}*1024") MB |")
  unset wall cpu rss anon failed
fi
echo
echo "yardstick: tools/bytescan.rs (memchr over the mapped bytes, or over the inflated bytes: libdeflate whole for one member of <= 48 MiB, else flate2/zlib-rs); best of $runs, interleaved"
echo "| input | yardstick | taskchain | ratio (wall; CPU) | taskchain anon RSS (÷ uncompressed) |"
echo "|---|---:|---:|---:|---:|"
printf "%s\n" "${summary[@]}"

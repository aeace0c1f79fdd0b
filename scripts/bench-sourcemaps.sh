#!/usr/bin/env bash
# What symbolication adds to a batch: 100 copies of one recording of a minified build
# (default samples/sm-rollup-terser, uncompressed, so decompression does not hide it),
# run side by side and interleaved, without maps, with `--source-maps PREFIX=DIR`, and
# with `--source-maps DIR`. Prints each run's wall and CPU (user + system) time, and the
# median of each with its ratio to the run without maps (on a loaded machine the CPU time
# is the steadier figure).
#
# Usage: scripts/bench-sourcemaps.sh [--runs N] [--copies N] [BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=7
copies=100
tc=
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --copies) copies=$2; shift 2 ;;
    *) tc=$1; shift ;;
  esac
done
if [ -z "$tc" ]; then
  cargo build --release --quiet
  tc=target/release/taskchain
fi
dir=$(mktemp -d /tmp/taskchain-sm-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
zcat samples/sm-rollup-terser/trace.json.gz > "$dir/one.json"
for i in $(seq -w 1 "$copies"); do cp "$dir/one.json" "$dir/t$i.json"; done
rm "$dir/one.json"
cat "$dir"/*.json > /dev/null # page cache
mirror="http://127.0.0.1:37038/=samples/sm-site"
folder="samples/sm-site/dist/rollup-terser"
declare -A wall cpu
# "wall_ms cpu_ms" of one run.
measure() {
  local s e t
  s=$(date +%s%N)
  t=$( { /usr/bin/env TIMEFORMAT='%U %S' bash -c 'time "$@" > /dev/null' _ "$@"; } 2>&1 | tail -1)
  e=$(date +%s%N)
  echo "$(( (e - s) / 1000000 )) $(echo "$t" | awk '{printf "%d", ($1 + $2) * 1000}')"
}
for r in $(seq 1 "$runs"); do
  line="run $r:"
  for k in none mirror folder; do
    case $k in
      none) m=$(measure "$tc" -q --format json "$dir") ;;
      mirror) m=$(measure "$tc" -q --format json --source-maps "$mirror" "$dir") ;;
      folder) m=$(measure "$tc" -q --format json --source-maps "$folder" "$dir") ;;
    esac
    set -- $m
    wall[$k]+="$1 "; cpu[$k]+="$2 "
    line+=" $k ${1} ms wall ${2} ms cpu,"
  done
  echo "$line"
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
pct() { awk "BEGIN{printf \"%+.1f%%\", ($1/$2-1)*100}"; }
echo "$copies traces of $(du -sh "$dir" | cut -f1), medians of $runs runs:"
for kind in wall cpu; do
  declare -n t=$kind
  n=$(echo "${t[none]}" | median); m=$(echo "${t[mirror]}" | median); f=$(echo "${t[folder]}" | median)
  echo "  $kind: no maps $n ms, PREFIX=DIR $m ms ($(pct "$m" "$n")), DIR $f ms ($(pct "$f" "$n"))"
done
# The symbolicated output is the one expected (the chain of the click task).
"$tc" -q --source-maps "$mirror" "$dir" | grep -q "handleImportClick (../../src/main.js:13:17) > transformRows" || { echo "wrong output" >&2; exit 1; }

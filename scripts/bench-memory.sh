#!/usr/bin/env bash
# Peak memory against the input's shape (issue 18 §5): a benchmark, not a test.
#
# Usage: scripts/bench-memory.sh [--keep] [--name-mib N] [--bin BINARY] [SHAPE...]
#   Generates each shape (scripts/make-memory-shapes) into $MEMORY_DIR (default
#   /work/scratch/memory), runs taskchain on it under /usr/bin/time -v (-j2, CSV to a
#   file) and prints the peak RSS, its ratio to the input (or, for the long tasks, to
#   the CSV written) and the target, side by side. The inputs are deleted afterwards
#   unless --keep. SHAPE: samples | dense | nodes | tasks | name | maps | hugemap
#   (default: all). `maps` is a folder of 40 traces each embedding its own map: its input
#   size is the folder's.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${MEMORY_DIR:-/work/scratch/memory}
keep=0
mib=256
bin=
shapes=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1; shift ;;
    --name-mib) mib=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) shapes+=("$1"); shift ;;
  esac
done
[ ${#shapes[@]} -gt 0 ] || shapes=(samples dense nodes tasks name maps hugemap)
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin=target/release/taskchain
fi
mkdir -p "$dir"
files=()
for s in "${shapes[@]}"; do
  case $s in
    samples) files+=(samples.cpuprofile) ;;
    dense) files+=(dense.cpuprofile) ;;
    maps) files+=(maps) ;;
    hugemap) files+=(hugemap.json) ;;
    nodes) files+=(nodes.cpuprofile) ;;
    tasks) files+=(tasks.json) ;;
    name) files+=(name.cpuprofile name.json) ;;
  esac
  case $s in
    name) want=name.json ;;
    samples) want=samples.cpuprofile ;;
    nodes) want=nodes.cpuprofile ;;
    dense) want=dense.cpuprofile ;;
    maps) want=maps/trace-39.json ;;
    *) want=$s.json ;;
  esac
  [ -f "$dir/$want" ] || scripts/make-memory-shapes "$dir" "$s" --name-mib "$mib"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }
printf '%-20s %10s %10s %12s %8s %9s %6s %s\n' input "input MB" "CSV MB" "peak RSS MB" ratio target within "exit"
for f in "${files[@]}"; do
  in=$(du -sb "$dir/$f" | cut -f1)
  out="$tmp/$f.csv"
  rc=0
  /usr/bin/time -v -o "$tmp/time.txt" "$bin" -q -j2 "$dir/$f" -o "$out" 2>"$tmp/stderr.txt" || rc=$?
  kb=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$tmp/time.txt")
  rss=$((kb * 1024))
  csv=$(stat -c %s "$out" 2>/dev/null || echo 0)
  case $f in
    tasks.json) base=$csv; target="2× CSV"; limit=$((2 * csv)) ;;
    # A kept string is cut at 1 MiB: the input's own pages (mapped) and a little more.
    name.*) base=$in; target="input+"; limit=$((in + (256 << 20))) ;;
    *) base=$in; target="3× input"; limit=$((3 * in)) ;;
  esac
  ratio=$(awk -v r="$rss" -v b="$base" 'BEGIN { printf "%.2f", (b > 0 ? r / b : 0) }')
  within=$([ "$rss" -le "$limit" ] && echo yes || echo NO)
  printf '%-20s %10s %10s %12s %8s %9s %6s %s\n' "$f" "$(mb "$in")" "$(mb "$csv")" "$(mb "$rss")" "$ratio×" "$target" "$within" "$rc"
  rm -f "$out"
done
if [ $keep = 0 ]; then
  for f in "${files[@]}"; do rm -rf "${dir:?}/$f"; done
fi

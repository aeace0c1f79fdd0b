#!/usr/bin/env bash
# deploy/k8s/indexed-job.yaml without a cluster: N local processes, each with the
# JOB_COMPLETION_INDEX Kubernetes gives pod k of an Indexed Job and the same arguments as
# the Job's container, then checks that the union of their outputs is one run's: the
# same task rows, the same summary rows, every trace in exactly one shard.
#
# Usage: scripts/k8s-sim.sh [N] [TASKCHAIN]   (default 4, target/release/taskchain)
#   Traces: every sample under samples/ that runs with default flags (CSV outputs, so the
#   check needs only sort and diff; the Job writes Parquet, which the DuckDB check covers).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-4}
tc=$(realpath "${2:-target/release/taskchain}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for t in samples/*/trace.*; do
  [ -e "$(dirname "$t")/args" ] || echo "$t"
done > "$work/files.txt"

pids=()
for k in $(seq 0 $((n - 1))); do
  JOB_COMPLETION_INDEX=$k "$tc" --quiet --shard-from-env="$n" --files-from="$work/files.txt" \
    --output="$work/results/tasks/shard={shard}/tasks.csv" \
    --summary="$work/results/summary/shard={shard}/summary.csv" &
  pids+=($!)
done
codes=()
for p in "${pids[@]}"; do
  wait "$p" && codes+=(0) || codes+=($?)
done
echo "exit codes of the $n pods: ${codes[*]}"
for c in "${codes[@]}"; do [ "$c" = 0 ] || { echo "k8s-sim: a pod failed" >&2; exit 1; }; done

mkdir "$work/one"
"$tc" --quiet --files-from="$work/files.txt" --output="$work/one/tasks.csv" \
  --summary="$work/one/summary.csv"
for t in tasks summary; do
  # The rows without their header, in any order: each shard holds a share of the files.
  tail -q -n +2 "$work"/results/$t/shard=*/$t.csv | sort > "$work/union-$t.csv"
  tail -n +2 "$work/one/$t.csv" | sort > "$work/one-$t.csv"
  if ! cmp -s "$work/union-$t.csv" "$work/one-$t.csv"; then
    diff "$work/one-$t.csv" "$work/union-$t.csv" | head -20 >&2
    echo "k8s-sim: the union of the $t outputs differs from one run" >&2
    exit 1
  fi
done
files=$(wc -l < "$work/files.txt")
shards=$(ls "$work/results/tasks" | tr '\n' ' ')
echo "k8s-sim: $n shards ($shards) of $files traces: $(wc -l < "$work/one-tasks.csv") task rows and $(wc -l < "$work/one-summary.csv") summary rows, the same as one run"

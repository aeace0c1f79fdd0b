#!/usr/bin/env bash
# The DuckDB recipe of docs/SCALE-OUT.md, checked: shards of the sample corpus written as
# hive-partitioned Parquet (`-o out/tasks/shard={shard}/tasks.parquet`), then one DuckDB query
# over the folder must give the same top chains as `--aggregate` of one run over the same
# traces (and so must the README's 5-line query, run as printed), the summaries' union
# must be the single run's, and every trace_id must be the
# hash docs/SCALE-OUT.md defines (computed here in Python).
#
# Usage: scripts/duckdb-check.sh [TASKCHAIN]   (default target/debug/taskchain)
# Installs DuckDB's Python package into a throwaway venv (removed at exit; nothing cached).
set -euo pipefail
cd "$(dirname "$0")/.."
tc=$(realpath "${1:-target/debug/taskchain}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir duckdb

# The corpus: every sample trace that runs with default flags, as a list of paths.
for t in samples/*/trace.*; do
  [ -e "$(dirname "$t")/args" ] || echo "$t"
done > "$work/files.txt"
shards=3
for i in $(seq 0 $((shards - 1))); do
  JOB_COMPLETION_INDEX=$i "$tc" -q --shard-from-env $shards --files-from - \
    -o "$work/out/tasks/shard={shard}/tasks.parquet" \
    --summary "$work/out/summary/shard={shard}/summary.parquet" < "$work/files.txt"
done
"$tc" -q --files-from "$work/files.txt" -o /dev/null \
  --aggregate "$work/aggregate.csv" --summary "$work/summary.csv"

"$work/venv/bin/python" - "$work" "$PWD" <<'PY'
import csv, hashlib, sys
import duckdb

work = sys.argv[1]
tasks = f"read_parquet('{work}/out/tasks/*/tasks.parquet', hive_partitioning = true)"
# The query of docs/SCALE-OUT.md, with the columns of --aggregate.
top = duckdb.sql(f"""
    SELECT chain, any_value(leaf_function) AS leaf_function, any_value(leaf_url) AS leaf_url,
           count(*) AS long_tasks, count(*) FILTER (status = 'ok') AS ok_tasks,
           count(DISTINCT file) AS files, sum(stack_ms) AS stack_ms_total,
           list_sort(list(stack_ms))[greatest(1, ceil(0.50 * count(*)))::INT] AS p50,
           list_sort(list(stack_ms))[greatest(1, ceil(0.95 * count(*)))::INT] AS p95,
           sum(task_dur_ms) AS task_ms_total
    FROM {tasks} WHERE chain_depth > 0
    GROUP BY chain ORDER BY stack_ms_total DESC, chain""").fetchall()
with open(f"{work}/aggregate.csv", newline="") as f:
    want = list(csv.DictReader(f))
assert len(top) == len(want), (len(top), len(want))
for got, w in zip(top, want):
    assert got[0] == w["chain"], (got[0], w["chain"])
    assert got[1:3] == (w["leaf_function"], w["leaf_url"]), (got, w)
    assert got[3:6] == (int(w["long_tasks"]), int(w["ok_tasks"]), int(w["files"])), (got, w)
    # Sums of ms rounded per task may differ from the rounded sum by 0.5 µs a task.
    for g, k in zip(got[6:], ["stack_ms_total", "stack_ms_p50", "stack_ms_p95", "task_ms_total"]):
        assert abs(g - float(w[k])) <= 0.0005 * got[3] + 1e-9, (k, g, w[k])

# Typed columns, the shard column from the folder names, one shard per file.
types = dict(duckdb.sql(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM {tasks})").fetchall())
assert types["task_dur_ms"] == "DOUBLE" and types["window_samples"] == "BIGINT", types
assert types["flags"] == "VARCHAR[]" and types["shard"] == "BIGINT", types
assert types["chain_frames"].startswith("STRUCT(") and types["chain_frames"].endswith("[]"), types
summary = duckdb.sql(f"""SELECT file, trace_id, bytes, status, long_tasks, shard
    FROM read_parquet('{work}/out/summary/*/summary.parquet', hive_partitioning = true) ORDER BY file""").fetchall()
with open(f"{work}/summary.csv", newline="") as f:
    single = sorted(csv.DictReader(f), key=lambda r: r["file"])
assert [(r[0], r[2], r[3], r[4]) for r in summary] == [
    (r["file"], int(r["bytes"]), r["status"], int(r["long_tasks"])) for r in single], "summary"

# The README's 5-line query, as printed there, run in the folder holding out/.
readme = open("README.md").read()
query = readme.split("```sql\n", 1)[1].split("```", 1)[0]
import os
os.chdir(work)
ten = duckdb.sql(query).fetchall()
os.chdir(sys.argv[2])
assert [(r[0], r[1]) for r in ten] == [(w["chain"], int(w["long_tasks"])) for w in want[:10]], ten
assert all(abs(r[3] - float(w["stack_ms_total"])) <= 0.05 for r, w in zip(ten, want)), ten

def trace_id(path):
    """docs/SCALE-OUT.md: sha256(size LE64 ‖ first MiB ‖ the rest of the last MiB)[:16]."""
    data = open(path, "rb").read()
    n, edge = len(data), 1 << 20
    h = hashlib.sha256(n.to_bytes(8, "little") + data[:edge] + data[max(edge, n - edge):])
    return h.hexdigest()[:32]

for file, tid, *_ in summary:
    assert tid == trace_id(file), (file, tid)
shards = sorted({r[5] for r in summary})
print(f"duckdb {duckdb.__version__}: {len(top)} chains over {len(summary)} traces in "
      f"shards {shards} equal --aggregate of one run; trace_ids match the documented hash")
PY

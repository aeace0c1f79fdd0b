#!/usr/bin/env bash
# The DuckDB recipe of docs/SCALE-OUT.md, checked: shards of a trace corpus written as
# hive-partitioned Parquet (`-o out/tasks/shard={shard}/tasks.parquet`), then one DuckDB query
# over the folder must give the same top chains as `--aggregate` of one run over the same
# traces (and so must the README's 5-line query, run as printed), the summaries' union
# must be the single run's, the columns must have their documented types, and every
# trace_id must be the hash docs/SCALE-OUT.md defines (computed here in Python).
#
# The corpus: every sample trace, in groups by its `args` file (the samples with the same
# flags are one run), and the shared traces (TRACES, default ../shared/traces, if present)
# with the default-flags group.
#
# Usage: scripts/duckdb-check.sh [TASKCHAIN]   (default target/debug/taskchain)
# Installs DuckDB's Python package into a throwaway venv (removed at exit; nothing cached).
set -euo pipefail
cd "$(dirname "$0")/.."
tc=$(realpath "${1:-target/debug/taskchain}")
traces=${TRACES:-../shared/traces}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir duckdb

# One line per trace: its flags (the sample's args file, or none), a tab, its path.
for t in samples/*/trace.*; do
  a="$(dirname "$t")/args"
  printf '%s\t%s\n' "$([ -e "$a" ] && tr -s '\n' ' ' < "$a" | sed 's/ *$//')" "$t"
done > "$work/corpus.tsv"
if [ -d "$traces" ]; then
  find "$traces" \( -name '*.json' -o -name '*.json.gz' -o -name '*.cpuprofile' \) \
    ! -name '*groundtruth*' ! -name 'provenance.json' ! -path '*/site/*' ! -path '*/oracle/*' | sort | sed 's/^/\t/' \
    >> "$work/corpus.tsv"
fi

# Each group: 3 shards (fewer for fewer files) as the recipe writes them, and one run.
groups=()
k=0
while IFS= read -r args; do
  g="$work/g$k"
  mkdir -p "$g"
  awk -F'\t' -v a="$args" '$1 == a { print $2 }' "$work/corpus.tsv" > "$g/files.txt"
  read -ra flags <<< "$args"
  shards=$(( $(wc -l < "$g/files.txt") < 3 ? $(wc -l < "$g/files.txt") : 3 ))
  for i in $(seq 0 $((shards - 1))); do
    JOB_COMPLETION_INDEX=$i "$tc" -q "${flags[@]}" --shard-from-env $shards --files-from - \
      -o "$g/out/tasks/shard={shard}/tasks.parquet" \
      --summary "$g/out/summary/shard={shard}/summary.parquet" < "$g/files.txt"
  done
  # --chain-key exact: the recipe groups by the task rows' exact `chain` text.
  "$tc" -q "${flags[@]}" --files-from "$g/files.txt" -o /dev/null --chain-key exact \
    --aggregate "$g/aggregate.csv" --summary "$g/summary.csv"
  groups+=("$g")
  k=$((k + 1))
done < <(cut -f1 "$work/corpus.tsv" | sort -u)

"$work/venv/bin/python" - "$PWD" "${groups[@]}" <<'PY'
import csv, hashlib, os, sys
import duckdb

def trace_id(path):
    """docs/SCALE-OUT.md: sha256(size LE64 ‖ first MiB ‖ the rest of the last MiB)[:16]."""
    data = open(path, "rb").read()
    n, edge = len(data), 1 << 20
    h = hashlib.sha256(n.to_bytes(8, "little") + data[:edge] + data[max(edge, n - edge):])
    return h.hexdigest()[:32]

root, groups = sys.argv[1], sys.argv[2:]
doc_query = open("docs/SCALE-OUT.md").read().split("```sql\n")[2].split("```", 1)[0]
assert "file_row_number = true" in doc_query, doc_query
chains = traces = 0
for g in groups:
    tasks = (f"read_parquet('{g}/out/tasks/*/tasks.parquet', hive_partitioning = true, "
             "file_row_number = true)")
    # The query of docs/SCALE-OUT.md with every column of --aggregate, as printed there, run
    # in the folder holding out/.
    os.chdir(g)
    top = duckdb.sql(doc_query).fetchall()
    os.chdir(root)
    with open(f"{g}/aggregate.csv", newline="") as f:
        want = list(csv.DictReader(f))
    assert len(top) == len(want), (g, len(top), len(want))
    for got, w in zip(top, want):
        assert got[0] == w["chain"], (got[0], w["chain"])
        assert got[1:3] == (w["leaf_function"], w["leaf_url"]), (got, w)
        assert got[3:6] == (int(w["long_tasks"]), int(w["ok_tasks"]), int(w["files"])), (got, w)
        # Sums of ms rounded per task may differ from the rounded sum by 0.5 µs a task.
        for v, k in zip(got[6:], ["stack_ms_total", "stack_ms_p50", "stack_ms_p95", "task_ms_total"]):
            assert abs(v - float(w[k])) <= 0.0005 * got[3] + 1e-9, (k, v, w[k])

    # Typed columns, the shard column from the folder names.
    types = dict(duckdb.sql(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM {tasks})").fetchall())
    want_types = {"file": "VARCHAR", "trace_id": "VARCHAR", "pid": "BIGINT",
                  "task_dur_ms": "DOUBLE", "stack_ms": "DOUBLE", "confidence": "DOUBLE",
                  "window_samples": "BIGINT", "chain_depth": "BIGINT", "flags": "VARCHAR[]",
                  "shard": "BIGINT", "chain": "VARCHAR", "leaf_original_line": "BIGINT"}
    assert {c: types.get(c) for c in want_types} == want_types, types
    frame = ("STRUCT(\"function\" VARCHAR, url VARCHAR, line BIGINT, \"column\" BIGINT, "
             "recursion_depth BIGINT, original_function VARCHAR, original_source VARCHAR, "
             "original_line BIGINT, original_column BIGINT, original_ignore_listed BOOLEAN)[]")
    assert types["chain_frames"] == frame, types["chain_frames"]
    summary = duckdb.sql(f"""SELECT file, trace_id, bytes, status, long_tasks, shard
        FROM read_parquet('{g}/out/summary/*/summary.parquet', hive_partitioning = true)
        ORDER BY file""").fetchall()
    with open(f"{g}/summary.csv", newline="") as f:
        single = sorted(csv.DictReader(f), key=lambda r: r["file"])
    assert [(r[0], r[2], r[3], r[4]) for r in summary] == [
        (r["file"], int(r["bytes"]), r["status"], int(r["long_tasks"])) for r in single], "summary"
    for file, tid, *_ in summary:
        assert tid == trace_id(file), (file, tid)
    chains, traces = chains + len(top), traces + len(summary)

    if g == groups[0]:
        # The README's 5-line query, as printed there, run in the folder holding out/.
        readme = open("README.md").read()
        query = readme.split("```sql\n", 1)[1].split("```", 1)[0]
        os.chdir(g)
        ten = duckdb.sql(query).fetchall()
        os.chdir(root)
        assert [(r[0], r[1]) for r in ten] == [(w["chain"], int(w["long_tasks"])) for w in want[:10]], ten
        assert all(abs(r[3] - float(w["stack_ms_total"])) <= 0.05 for r, w in zip(ten, want)), ten

print(f"duckdb {duckdb.__version__}: {chains} chains over {traces} traces in {len(groups)} "
      "flag groups, sharded, equal --aggregate of one run; types and trace_ids as documented")
PY

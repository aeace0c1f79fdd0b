#!/usr/bin/env bash
# The Spark recipe of docs/SCALE-OUT.md, run in local mode: a list of trace paths as an RDD,
# `RDD.pipe` of each partition's paths through `taskchain --files-from -`, each partition
# writing its own Parquet (`out/tasks/partition=K/tasks.parquet`, and a summary beside it);
# then Spark reads the folder back as one table and the union must equal a single run's
# rows (tasks and summaries, every column, as multisets).
#
# Usage: scripts/spark-local.sh [TASKCHAIN] [PARTITIONS]
#   (default target/release/taskchain, 4 partitions; TRACES=DIR adds its traces to the
#   sample corpus, default ../shared/traces if present; VENV=DIR keeps the pyspark venv
#   there for the next run instead of a throwaway one). Not in CI: pyspark is ~400 MB.
# Installs Java from the Debian package (openjdk-17-jre-headless, or the default JRE)
# when no `java` is on PATH, and pyspark from PyPI into a venv.
set -euo pipefail
cd "$(dirname "$0")/.."
tc=$(realpath "${1:-target/release/taskchain}")
parts=${2:-4}
traces=${TRACES:-../shared/traces}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! command -v java >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless ||
    apt-get install -y -qq --no-install-recommends default-jre-headless
fi
venv=${VENV:-$work/venv}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import pyspark' 2>/dev/null ||
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir pyspark

# The corpus: the samples that run with default flags, and the shared traces.
for t in samples/*/trace.*; do
  [ -e "$(dirname "$t")/args" ] || realpath "$t"
done > "$work/files.txt"
if [ -d "$traces" ]; then
  find "$(realpath "$traces")" \( -name '*.json' -o -name '*.json.gz' -o -name '*.cpuprofile' \) \
    ! -name '*groundtruth*' ! -name 'provenance.json' ! -path '*/site/*' | sort >> "$work/files.txt"
fi
mkdir "$work/one"
"$tc" -q --files-from "$work/files.txt" -o "$work/one/tasks.parquet" \
  --summary "$work/one/summary.parquet"

# What each partition's process runs: its first line names the partition (the driver puts
# it there), the rest are paths; it prints the partition and taskchain's exit code.
cat > "$work/worker.sh" <<SH
#!/bin/sh
read -r _ i
d="$work/out/tasks/partition=\$i" s="$work/out/summary/partition=\$i"
mkdir -p "\$d" "\$s"
"$tc" -q --files-from - -o "\$d/tasks.parquet" --summary "\$s/summary.parquet"
echo "\$i \$?"
SH
chmod +x "$work/worker.sh"

"$venv/bin/python" - "$work" "$parts" <<'PY'
import sys, time
from pyspark.sql import SparkSession

work, parts = sys.argv[1], int(sys.argv[2])
spark = (SparkSession.builder.master("local[2]").appName("taskchain-spark-local")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
sc = spark.sparkContext
paths = [l.strip() for l in open(f"{work}/files.txt") if l.strip()]
t0 = time.time()
# Workers get paths, not bytes: each partition's paths go to one taskchain on its stdin.
# The first line of each partition is `#partition K` (a comment to --files-from, read by
# worker.sh to name its output folder).
rdd = sc.parallelize(paths, parts).mapPartitionsWithIndex(
    lambda k, it: [f"#partition {k}"] + list(it))
codes = sorted(tuple(map(int, l.split())) for l in rdd.pipe(f"{work}/worker.sh").collect())
took = time.time() - t0
assert [k for k, _ in codes] == list(range(parts)), codes
assert all(c == 0 for _, c in codes), f"exit codes by partition: {codes}"

def same(name):
    """The partitions' union against the single run: every column, rows as a multiset."""
    union = spark.read.parquet(f"{work}/out/{name}")
    one = spark.read.parquet(f"{work}/one/{name}.parquet")
    assert union.columns == one.columns + ["partition"], (union.columns, one.columns)
    union = union.drop("partition")
    assert union.schema == one.schema, (union.schema, one.schema)
    n = one.count()
    assert union.count() == n and union.exceptAll(one).count() == 0 \
        and one.exceptAll(union).count() == 0, name
    return n

tasks, files = same("tasks"), same("summary")
per = spark.read.parquet(f"{work}/out/summary").groupBy("partition").count().orderBy("partition")
print(f"spark {spark.version} local[2], {parts} partitions: RDD.pipe of {len(paths)} paths "
      f"through taskchain in {took:.1f} s; files per partition "
      f"{[r['count'] for r in per.collect()]}; the union of the partitions' Parquet equals "
      f"one run: {tasks} task rows, {files} summary rows, every column")
spark.stop()
PY

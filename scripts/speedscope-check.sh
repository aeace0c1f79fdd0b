#!/usr/bin/env bash
# Checks `--speedscope` output of every sample against the file-format schema that the
# `speedscope` npm package ships (dist/release/file-format-schema.json), with Ajv. Both
# packages go into target/speedscope-check (never committed). Usage:
#   scripts/speedscope-check.sh [path/to/taskchain]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/taskchain}
dir=target/speedscope-check
mkdir -p "$dir"
if [ ! -f "$dir/node_modules/speedscope/dist/release/file-format-schema.json" ] \
    || [ ! -d "$dir/node_modules/ajv" ]; then
  npm install --prefix "$dir" --no-audit --no-fund --silent speedscope@1 ajv@8
fi
files=()
for case in samples/*/; do
  trace=$(ls "$case"trace.* 2>/dev/null | head -n 1) || true
  [ -n "$trace" ] || continue
  name=$(basename "$case")
  args=()
  if [ -f "$case/args" ]; then read -r -a args < "$case/args"; fi
  "$bin" -q -o /dev/null "${args[@]}" --speedscope "$dir/$name.json" "$trace" || [ $? -eq 2 ]
  files+=("$dir/$name.json")
done
node scripts/speedscope-check.cjs "$dir" "${files[@]}"

#!/usr/bin/env bash
# action.yml's run step: taskchain over the given traces with the given budgets; the
# Markdown report is appended to the job summary, the rows go to the output file, and the
# step's exit code is taskchain's (1: over budget, 2: a trace could not be read; every
# output is written first).
#
# Environment: TRACES (paths, folders or quoted globs, one per line or space-separated),
# BUDGETS (KEY=VALUE, one per line or space-separated; keys as `--budget`), OUTPUT (the
# report file), ARGS (more options, space-separated), TASKCHAIN (the binary; default:
# `taskchain` on the PATH), GITHUB_STEP_SUMMARY (the Markdown goes there; unset: stdout).
set -euo pipefail
bin=${TASKCHAIN:-taskchain}
args=()
# Word splitting on purpose: TRACES, BUDGETS and ARGS are lists; globs are left to taskchain.
set -f
for t in ${TRACES:?TRACES names no trace}; do args+=("$t"); done
for b in ${BUDGETS:-}; do args+=(--budget "$b"); done
for a in ${ARGS:-}; do args+=("$a"); done
set +f
md=$(mktemp)
trap 'rm -f "$md"' EXIT
code=0
"$bin" "${args[@]}" -o "${OUTPUT:-taskchain.csv}" --markdown "$md" || code=$?
cat "$md" >> "${GITHUB_STEP_SUMMARY:-/dev/stdout}"
exit "$code"

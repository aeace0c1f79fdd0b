#!/usr/bin/env bash
# Builds the Python wheel of pyproject.toml (maturin `bindings = "bin"`: taskchain's binary,
# no Python module), installs it into a fresh venv with pip, and runs the wheel's
# taskchain on a sample, whose tasks must equal the sample's expected CSV.
#
# Usage: scripts/build-wheel.sh   (the wheel goes to target/wheels/)
# Installs maturin from PyPI into a throwaway venv (removed at exit). The build is cargo's
# release build (`--locked`, in target/), so it reuses a release build already there.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/build"
"$work/build/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir 'maturin>=1.7,<2'
rm -f target/wheels/taskchain-*.whl
t0=$(date +%s)
"$work/build/bin/maturin" build --release --locked --out target/wheels
t1=$(date +%s)
wheel=$(ls target/wheels/taskchain-*.whl)

# A fresh venv, the wheel alone (no index: it must need nothing else), its taskchain.
python3 -m venv "$work/try"
"$work/try/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"
tc="$work/try/bin/taskchain"
sample=samples/chromium-click-chain
"$tc" -q "$sample/trace.json.gz" -o "$work/tasks.csv"
diff "$sample/expected/tasks.csv" "$work/tasks.csv"
printf 'wheel %s (%s KB), built in %s s; pip-installed into a fresh venv, its %s equals %s\n' \
  "$(basename "$wheel")" "$(( $(stat -c %s "$wheel") / 1024 ))" "$((t1 - t0))" \
  "$("$tc" --version)" "$sample/expected/tasks.csv"

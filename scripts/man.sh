#!/usr/bin/env bash
# Writes the man pages (taskchain.1, taskchain-compare.1, taskchain-completions.1) into DIR
# (default target/man) from the command line's own definition, with clap_mangen (a
# dev-dependency: a plain `cargo install` does not build it). Read one with
# `man target/man/taskchain.1`; install with `install -Dm644 target/man/*.1 -t /usr/local/share/man/man1`.
#
# Usage: scripts/man.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --locked --example man -- "${1:-target/man}"

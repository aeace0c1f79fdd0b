#!/usr/bin/env bash
# action.yml's install step: puts a taskchain binary on the job's PATH.
#
#   install.sh download   the release archive of this version and platform (scripts/release-archive's
#                         names), checked against its .sha256; prints installed=true|false for
#                         $GITHUB_OUTPUT (false: no archive for this platform or version, or a bad sum)
#   install.sh cargo      `cargo install --locked` from the action's own repository and ref, unless
#                         a taskchain of this version is already in ~/.cargo/bin (the action caches it)
#
# Environment: TASKCHAIN_VERSION (the version to install), TASKCHAIN_RELEASES (the releases'
# download base: <base>/v<version>/<archive>), TASKCHAIN_GIT and TASKCHAIN_REF (for cargo),
# TASKCHAIN_INSTALL_DIR (where the download goes), GITHUB_PATH (the folder is appended).
set -euo pipefail
version=${TASKCHAIN_VERSION:?}
dir=${TASKCHAIN_INSTALL_DIR:-${RUNNER_TEMP:-/tmp}/taskchain-bin}

target() {
  local arch os
  case "$(uname -m)" in x86_64 | amd64) arch=x86_64 ;; aarch64 | arm64) arch=aarch64 ;; *) return 1 ;; esac
  case "$(uname -s)" in
    Linux) os=unknown-linux-gnu ;;
    Darwin) os=apple-darwin ;;
    MINGW* | MSYS* | CYGWIN* | Windows_NT) [ "$arch" = x86_64 ] || return 1; os=pc-windows-msvc ;;
    *) return 1 ;;
  esac
  echo "$arch-$os"
}

case "${1:-}" in
download)
  if ! t=$(target); then
    echo "taskchain: no release archive for $(uname -s) $(uname -m)" >&2
    echo installed=false; exit 0
  fi
  name="taskchain-$version-$t"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  base="${TASKCHAIN_RELEASES:?}/v$version"
  if ! curl -fsSL --retry 3 -o "$work/$name.tar.gz" "$base/$name.tar.gz" ||
    ! curl -fsSL --retry 3 -o "$work/$name.tar.gz.sha256" "$base/$name.tar.gz.sha256"; then
    echo "taskchain: no release archive $name.tar.gz" >&2
    echo installed=false; exit 0
  fi
  sum=sha256sum
  command -v sha256sum >/dev/null || sum='shasum -a 256'
  if ! (cd "$work" && $sum -c "$name.tar.gz.sha256" >&2); then
    echo "taskchain: $name.tar.gz does not match its SHA-256 file: not used" >&2
    echo installed=false; exit 0
  fi
  mkdir -p "$dir"
  tar -xzf "$work/$name.tar.gz" -C "$work"
  cp "$work/$name"/taskchain* "$dir/"
  [ -z "${GITHUB_PATH:-}" ] || echo "$dir" >> "$GITHUB_PATH"
  echo "taskchain: installed $("$dir"/taskchain --version) from $name.tar.gz" >&2
  echo installed=true
  ;;
cargo)
  have=$(taskchain --version 2>/dev/null || true)
  # `taskchain --version` prints "taskchain VERSION (commit ...)".
  if [ "${have%% (*}" = "taskchain $version" ]; then
    echo "taskchain: $have already installed (cached)" >&2
  else
    cargo install --locked --force --git "${TASKCHAIN_GIT:?}" ${TASKCHAIN_REF:+--rev "$TASKCHAIN_REF"} taskchain >&2
  fi
  [ -z "${GITHUB_PATH:-}" ] || echo "${CARGO_HOME:-$HOME/.cargo}/bin" >> "$GITHUB_PATH"
  echo installed=true
  ;;
*)
  echo "usage: $0 download|cargo" >&2
  exit 2
  ;;
esac

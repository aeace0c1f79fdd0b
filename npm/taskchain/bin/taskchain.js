#!/usr/bin/env node
// The `taskchain` command of the npm package: runs the native binary of the platform
// package npm installed beside it (an optional dependency whose `os` and `cpu` match this
// machine, as esbuild and Biome ship theirs), with the same arguments, standard streams and
// exit code. TASKCHAIN_BINARY_PATH names another binary to run instead.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');

// `process.platform process.arch` -> the package holding that platform's binary; the same
// table is in scripts/npm-packages.
const PLATFORMS = {
  'linux x64': '@taskchain/linux-x64',
  'linux arm64': '@taskchain/linux-arm64',
  'darwin x64': '@taskchain/darwin-x64',
  'darwin arm64': '@taskchain/darwin-arm64',
  'win32 x64': '@taskchain/win32-x64',
};

function fail(message) {
  process.stderr.write(`taskchain: error: ${message}\n`);
  process.exit(2);
}

function binaryPath() {
  if (process.env.TASKCHAIN_BINARY_PATH) return process.env.TASKCHAIN_BINARY_PATH;
  const key = `${process.platform} ${process.arch}`;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    fail(`no prebuilt binary for ${key}; build one with \`cargo install --locked taskchain\``);
  }
  const exe = process.platform === 'win32' ? 'taskchain.exe' : 'taskchain';
  let path;
  try {
    path = require.resolve(`${pkg}/bin/${exe}`);
  } catch {
    fail(`the package ${pkg} (this platform's binary) is not installed: ` +
      'install without --omit=optional / --no-optional, or set TASKCHAIN_BINARY_PATH');
  }
  // Some installers drop the executable bit of a packed file.
  if (process.platform !== 'win32') {
    try {
      fs.accessSync(path, fs.constants.X_OK);
    } catch {
      fs.chmodSync(path, 0o755);
    }
  }
  return path;
}

const result = spawnSync(binaryPath(), process.argv.slice(2), { stdio: 'inherit' });
if (result.error) fail(`could not run ${result.error.path || 'taskchain'}: ${result.error.message}`);
// A binary ended by a signal (Ctrl-C): end this process by the same signal, so that the
// shell sees what it would have seen without the launcher.
if (result.signal) process.kill(process.pid, result.signal);
process.exit(result.status ?? 2);

#!/usr/bin/env node
// Builds taskchain's npm packages from built binaries, in the way esbuild, Biome and oxlint
// ship native tools: one package per platform (`@taskchain/<os>-<cpu>`, its `os`, `cpu`
// and, on Linux, `libc` fields naming where it runs) holding the binary, and the launcher
// package `taskchain` (npm/taskchain: bin/taskchain.js) listing every platform package as an
// optional dependency of the same version, so npm installs only the one that fits.
//
// Usage: node scripts/npm-packages.mjs OUTDIR BINARY=TARGET [BINARY=TARGET ...]
//   BINARY  a built taskchain (a release build for publishing; any build packs, the tests
//           pack the debug one); TARGET its Rust target triple
// Writes OUTDIR/<package folder>/ and, with `npm pack`, OUTDIR/*.tgz; prints the tarballs'
// paths. The version is Cargo.toml's. Publish the platform packages before the launcher.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Rust target triple -> npm's `process.platform`, `process.arch` (and libc); the launcher's
// table (npm/taskchain/bin/taskchain.js) maps them back to these package names.
const TARGETS = {
  'x86_64-unknown-linux-gnu': { os: 'linux', cpu: 'x64', libc: 'glibc' },
  'aarch64-unknown-linux-gnu': { os: 'linux', cpu: 'arm64', libc: 'glibc' },
  'x86_64-apple-darwin': { os: 'darwin', cpu: 'x64' },
  'aarch64-apple-darwin': { os: 'darwin', cpu: 'arm64' },
  'x86_64-pc-windows-msvc': { os: 'win32', cpu: 'x64' },
};

function usage(message) {
  process.stderr.write(`npm-packages: ${message}\n` +
    'usage: node scripts/npm-packages.mjs OUTDIR BINARY=TARGET [BINARY=TARGET ...]\n');
  process.exit(2);
}

const [outArg, ...pairs] = process.argv.slice(2);
if (!outArg || pairs.length === 0) usage('an output folder and at least one BINARY=TARGET');
const out = path.resolve(outArg);
const cargo = fs.readFileSync(path.join(root, 'Cargo.toml'), 'utf8');
const version = cargo.match(/^version = "([^"]+)"$/m)[1];
const description = cargo.match(/^description = "([^"]+)"$/m)[1];
const license = cargo.match(/^license = "([^"]+)"$/m)[1];
const common = { version, description, license, keywords: ['chrome', 'trace', 'long-tasks', 'performance', 'profiling'] };

fs.mkdirSync(out, { recursive: true });
const folders = [];
for (const pair of pairs) {
  const at = pair.lastIndexOf('=');
  if (at < 0) usage(`${pair}: not BINARY=TARGET`);
  const [binary, target] = [pair.slice(0, at), pair.slice(at + 1)];
  const platform = TARGETS[target];
  if (!platform) usage(`${target}: no npm platform for this target (known: ${Object.keys(TARGETS).join(', ')})`);
  if (!fs.statSync(binary, { throwIfNoEntry: false })?.isFile()) usage(`${binary}: no such file`);
  const name = `@taskchain/${platform.os}-${platform.cpu}`;
  const dir = path.join(out, `${platform.os}-${platform.cpu}`);
  const exe = platform.os === 'win32' ? 'taskchain.exe' : 'taskchain';
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
  fs.copyFileSync(binary, path.join(dir, 'bin', exe));
  fs.chmodSync(path.join(dir, 'bin', exe), 0o755);
  const pkg = {
    name,
    ...common,
    description: `The taskchain binary for ${target}; install the \`taskchain\` package, which picks it.`,
    os: [platform.os],
    cpu: [platform.cpu],
    ...(platform.libc ? { libc: [platform.libc] } : {}),
    files: [`bin/${exe}`],
    preferUnplugged: true,
  };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
  folders.push(dir);
}

// The launcher: every known platform is an optional dependency, whether or not its binary
// was built here (npm skips those whose os/cpu do not match).
const launcher = path.join(out, 'taskchain');
fs.rmSync(launcher, { recursive: true, force: true });
fs.cpSync(path.join(root, 'npm', 'taskchain'), launcher, { recursive: true });
fs.chmodSync(path.join(launcher, 'bin', 'taskchain.js'), 0o755);
const optionalDependencies = Object.fromEntries(
  Object.values(TARGETS).map((p) => [`@taskchain/${p.os}-${p.cpu}`, version]));
const pkg = {
  name: 'taskchain',
  ...common,
  bin: { taskchain: 'bin/taskchain.js' },
  files: ['bin/taskchain.js', 'README.md'],
  engines: { node: '>=18' },
  optionalDependencies,
};
fs.writeFileSync(path.join(launcher, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
folders.push(launcher);

for (const dir of folders) {
  const made = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', out],
    { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
  console.log(path.join(out, made[0].filename));
}

//! Installing without a Rust toolchain: the npm packages (scripts/npm-packages.mjs), the
//! release archives and their `cargo binstall` metadata (scripts/release-archive,
//! Cargo.toml), and the scripts of the GitHub Action (action.yml, scripts/action/). Each
//! packs this build's own `taskchain` (the debug one: any build packs) and runs it as a
//! user of that channel would, offline.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The binary under test.
fn binary() -> PathBuf {
    assert_cmd::cargo::cargo_bin("taskchain")
}

/// This machine's Rust target triple, for the platforms the packages know.
fn host_target() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-gnu",
        ("linux", "aarch64") => "aarch64-unknown-linux-gnu",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        ("windows", "x86_64") => "x86_64-pc-windows-msvc",
        other => panic!("no package for {other:?}"),
    }
}

fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Runs `cmd`, panics with its output unless it exits 0; returns its stdout.
fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e} (is it installed? CI installs it: .ci/run)"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The sample every channel runs, and its checked rows (`samples/README.md`).
const SAMPLE: &str = "samples/chromium-click-chain/trace.json.gz";

fn expected_rows() -> String {
    std::fs::read_to_string(root().join("samples/chromium-click-chain/expected/tasks.csv")).unwrap()
}

#[test]
fn npm_tarballs_install_into_an_empty_project_and_run_offline() {
    let tmp = tempfile::tempdir().unwrap();
    let packs = tmp.path().join("packs");
    let made = run(Command::new("node")
        .arg(root().join("scripts/npm-packages.mjs"))
        .arg(&packs)
        .arg(format!("{}={}", binary().display(), host_target()))
        .current_dir(root()));
    let tarballs: Vec<&str> = made.lines().collect();
    let platform = match host_target() {
        "x86_64-unknown-linux-gnu" => "linux-x64",
        "aarch64-unknown-linux-gnu" => "linux-arm64",
        "x86_64-apple-darwin" => "darwin-x64",
        "aarch64-apple-darwin" => "darwin-arm64",
        _ => "win32-x64",
    };
    let v = version();
    let want = [
        packs.join(format!("taskchain-{platform}-{v}.tgz")),
        packs.join(format!("taskchain-{v}.tgz")),
    ];
    assert_eq!(
        tarballs,
        want.iter().map(|p| p.to_str().unwrap()).collect::<Vec<_>>()
    );

    // The platform package says where it runs; the launcher lists it at the same version.
    let manifest = |dir: &str| -> serde_json::Value {
        serde_json::from_str(
            &std::fs::read_to_string(packs.join(dir).join("package.json")).unwrap(),
        )
        .unwrap()
    };
    let plat = manifest(platform);
    assert_eq!(plat["name"], format!("@taskchain/{platform}"));
    let (os, cpu) = platform.split_once('-').unwrap();
    assert_eq!(plat["os"], serde_json::json!([os]));
    assert_eq!(plat["cpu"], serde_json::json!([cpu]));
    let launcher = manifest("taskchain");
    assert_eq!(launcher["version"], v);
    assert_eq!(
        launcher["optionalDependencies"][format!("@taskchain/{platform}")],
        v
    );
    assert_eq!(
        launcher["optionalDependencies"].as_object().unwrap().len(),
        5
    );
    assert_eq!(launcher["bin"]["taskchain"], "bin/taskchain.js");

    // An empty project; both tarballs installed with no network and a cache of its own.
    let project = tmp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        project.join("package.json"),
        r#"{"name":"try","version":"1.0.0","private":true}"#,
    )
    .unwrap();
    let npm = |args: &[&str]| {
        let mut c = Command::new("npm");
        c.arg(args[0])
            .arg("--cache")
            .arg(tmp.path().join("cache"))
            .args(&args[1..])
            .current_dir(&project)
            .env("npm_config_update_notifier", "false");
        c
    };
    run(npm(&["install", "--offline", "--no-audit", "--no-fund"]).args(&want));
    std::fs::copy(root().join(SAMPLE), project.join("trace.json.gz")).unwrap();

    // `npx taskchain` on a sample: the sample's checked rows, for the file as named here.
    let rows = run(&mut npm(&[
        "exec",
        "--offline",
        "--",
        "taskchain",
        "-q",
        "trace.json.gz",
    ]));
    assert_eq!(rows, expected_rows().replace(SAMPLE, "trace.json.gz"));
    let shown = run(&mut npm(&[
        "exec",
        "--offline",
        "--",
        "taskchain",
        "--version",
    ]));
    assert!(shown.starts_with(&format!("taskchain {v} ")), "{shown}");
    // The binary's exit code comes through the launcher: 2 for a file that cannot be read.
    let out = npm(&["exec", "--offline", "--", "taskchain", "missing.json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.json"));
}

/// Cargo.toml's `[package.metadata.binstall]` value of `key`.
fn binstall(key: &str) -> String {
    let toml = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let section = toml.split("[package.metadata.binstall]").nth(1).unwrap();
    let line = section
        .lines()
        .find(|l| l.starts_with(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} in [package.metadata.binstall]"));
    line.split_once(" = ")
        .unwrap()
        .1
        .trim_matches('"')
        .to_owned()
}

#[test]
fn release_archive_has_binstalls_names_a_true_sha256_and_a_binary_that_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");
    let (v, target) = (version(), host_target());
    let made = run(Command::new(root().join("scripts/release-archive"))
        .arg(binary())
        .arg(target)
        .arg(&dist));
    let name = format!("taskchain-{v}-{target}");
    let archive = dist.join(format!("{name}.tar.gz"));
    assert_eq!(made.trim(), archive.to_str().unwrap());

    // cargo-binstall's template, filled in as it fills it, names this archive and the
    // binary inside it.
    let fill = |t: &str| {
        t.replace("{ repo }", "REPO")
            .replace("{ version }", v)
            .replace("{ target }", target)
            .replace("{ bin }", "taskchain")
            .replace("{ binary-ext }", std::env::consts::EXE_SUFFIX)
    };
    assert_eq!(
        fill(&binstall("pkg-url")),
        format!("REPO/releases/download/v{v}/{name}.tar.gz")
    );
    assert_eq!(binstall("pkg-fmt"), "tgz");

    // The SHA-256 file holds the archive's digest, computed here independently.
    let digest = Sha256::digest(std::fs::read(&archive).unwrap());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        std::fs::read_to_string(dist.join(format!("{name}.tar.gz.sha256"))).unwrap(),
        format!("{hex}  {name}.tar.gz\n")
    );

    run(Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(tmp.path()));
    let bin = tmp.path().join(fill(&binstall("bin-dir")));
    let out = run(Command::new(&bin).args(["-q", SAMPLE]).current_dir(root()));
    assert_eq!(out, expected_rows());
    assert!(tmp.path().join(&name).join("README.md").is_file());
}

/// An executable shell script at `path`.
fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    let mut perm = std::fs::metadata(path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(path, perm).unwrap();
}

#[test]
fn action_installs_the_release_archive_checked_else_falls_back_to_cargo() {
    let tmp = tempfile::tempdir().unwrap();
    let (v, target) = (version(), host_target());
    // A release folder laid out as the download base: <base>/v<version>/<archive>.
    let base = tmp.path().join("releases");
    run(Command::new(root().join("scripts/release-archive"))
        .arg(binary())
        .arg(target)
        .arg(base.join(format!("v{v}"))));
    // A `cargo` that only says how it was called: the fallback must not build here.
    let fake = tmp.path().join("fakebin");
    std::fs::create_dir(&fake).unwrap();
    let calls = tmp.path().join("cargo-calls");
    script(
        &fake.join("cargo"),
        &format!("echo \"$@\" >> {}", calls.display()),
    );
    let path = format!("{}:/usr/bin:/bin", fake.display());
    let install = |mode: &str, base: &Path, dir: &Path, gh_path: &Path| {
        run(Command::new(root().join("scripts/action/install.sh"))
            .arg(mode)
            .env("PATH", &path)
            .env("HOME", tmp.path())
            .env("TASKCHAIN_VERSION", v)
            .env("TASKCHAIN_RELEASES", format!("file://{}", base.display()))
            .env("TASKCHAIN_GIT", "GIT-ADDRESS")
            .env("TASKCHAIN_REF", "v9")
            .env("TASKCHAIN_INSTALL_DIR", dir)
            .env("GITHUB_PATH", gh_path))
    };

    // The archive of this platform: unpacked, its binary on the job's PATH.
    let dir = tmp.path().join("bin");
    let gh_path = tmp.path().join("github-path");
    assert_eq!(
        install("download", &base, &dir, &gh_path),
        "installed=true\n"
    );
    assert_eq!(
        std::fs::read_to_string(&gh_path).unwrap(),
        format!("{}\n", dir.display())
    );
    let shown = run(Command::new(dir.join("taskchain")).arg("--version"));
    assert!(shown.starts_with(&format!("taskchain {v} ")), "{shown}");

    // An archive that does not match its SHA-256 file is not used.
    let bad = tmp.path().join("bad");
    let from = base.join(format!("v{v}"));
    std::fs::create_dir_all(bad.join(format!("v{v}"))).unwrap();
    for f in std::fs::read_dir(&from).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, bad.join(format!("v{v}")).join(f.file_name().unwrap())).unwrap();
    }
    let archive = bad.join(format!("v{v}/taskchain-{v}-{target}.tar.gz"));
    let mut bytes = std::fs::read(&archive).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&archive, bytes).unwrap();
    let dir2 = tmp.path().join("bin2");
    assert_eq!(
        install("download", &bad, &dir2, &gh_path),
        "installed=false\n"
    );
    assert!(!dir2.join("taskchain").exists());
    // No release for the version at all: the same.
    let none = tmp.path().join("none");
    assert_eq!(
        install("download", &none, &dir2, &gh_path),
        "installed=false\n"
    );

    // Then cargo: from the action's repository and ref, locked.
    assert_eq!(install("cargo", &none, &dir2, &gh_path), "installed=true\n");
    assert_eq!(
        std::fs::read_to_string(&calls).unwrap(),
        "install --locked --force --git GIT-ADDRESS --rev v9 taskchain\n"
    );
    // ... unless the cache restored this very version to ~/.cargo/bin.
    std::fs::create_dir_all(tmp.path().join(".cargo/bin")).unwrap();
    script(
        &tmp.path().join(".cargo/bin/taskchain"),
        &format!("echo 'taskchain {v} (commit 0123456789ab)'"),
    );
    std::fs::remove_file(&calls).unwrap();
    let path = format!("{}:{path}", tmp.path().join(".cargo/bin").display());
    run(Command::new(root().join("scripts/action/install.sh"))
        .arg("cargo")
        .env("PATH", &path)
        .env("HOME", tmp.path())
        .env("TASKCHAIN_VERSION", v)
        .env("TASKCHAIN_GIT", "GIT-ADDRESS"));
    assert!(
        !calls.exists(),
        "cargo ran though the cached binary is this version"
    );
}

#[test]
fn action_runs_with_budgets_and_appends_the_markdown_to_the_job_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let summary = tmp.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let step = |budgets: &str| {
        Command::new(root().join("scripts/action/run.sh"))
            .current_dir(root())
            .env("TASKCHAIN", binary())
            // Two inputs on two lines, as a workflow's `|` block gives them.
            .env(
                "TRACES",
                format!("{SAMPLE}\nsamples/chromium-iframes/trace.json.gz"),
            )
            .env("BUDGETS", budgets)
            .env("OUTPUT", tmp.path().join("tasks.csv"))
            .env("ARGS", "--threshold-ms 50")
            .env("GITHUB_STEP_SUMMARY", &summary)
            .output()
            .unwrap()
    };
    // The click sample's long task lasts 155.337 ms (its expected rows): over a budget of
    // 150, within one of 160. Exit 1 is the gate's; the summary is written either way.
    let over = step("max-task-ms=150\ntbt-ms=100000");
    assert_eq!(
        over.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&over.stderr)
    );
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.starts_with("earlier step\n## taskchain\n"), "{md}");
    assert!(md.contains("max-task-ms is 155.337 (budget 150)"), "{md}");
    assert!(md.contains("onOrderClick"), "{md}");
    let (header, rows) = crate::common::read_csv(&tmp.path().join("tasks.csv"));
    assert_eq!(header[0], "file");
    assert!(rows.iter().any(|r| r[0] == SAMPLE));
    assert!(
        rows.iter()
            .any(|r| r[0] == "samples/chromium-iframes/trace.json.gz")
    );

    let within = step("max-task-ms=160");
    assert_eq!(
        within.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&within.stderr)
    );
    let md2 = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(md2.matches("## taskchain").count(), 2);
    assert!(!md2[md.len()..].contains("Budget breaches"));
}

//! Sets `TASKCHAIN_LONG_VERSION` for `taskchain --version`: the package version and, when
//! known, the commit it was built from — from `git` when building in a checkout (a clone,
//! a worktree, `cargo install --git`), else from the `.cargo_vcs_info.json` that
//! `cargo package` writes into a published tarball. Without either (a plain tarball, no
//! `git` installed) the version stands alone. Nothing is fetched.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Only files that exist: Cargo reruns a build script on every build while a watched
    // path is missing, and each rerun rebuilds the crate.
    watch(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".cargo_vcs_info.json"));
    let version = env!("CARGO_PKG_VERSION");
    let long = match from_git().or_else(from_vcs_info) {
        Some(commit) => format!("{version} (commit {commit})"),
        None => version.to_string(),
    };
    println!("cargo:rustc-env=TASKCHAIN_LONG_VERSION={long}");
}

/// Asks Cargo to run this again when `path` changes, if it exists.
fn watch(path: &Path) {
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// `git` run in the package folder, `None` when it fails or is not installed.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

/// The checked-out commit (12 hex digits); asks Cargo to run this again when HEAD moves
/// (HEAD itself, the branch it names, and packed refs, wherever a worktree keeps them).
fn from_git() -> Option<String> {
    // Only the package's own repository: a tarball unpacked inside some other checkout
    // must not take that checkout's commit.
    let top = git(&["rev-parse", "--show-toplevel"])?;
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).canonicalize().ok()?;
    if Path::new(&top).canonicalize().ok()? != here {
        return None;
    }
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--path-format=absolute", "--git-path", &name]) {
            watch(Path::new(&path));
        }
    }
    Some(commit)
}

/// `git.sha1` of `.cargo_vcs_info.json` (written by `cargo package`), first 12 digits.
fn from_vcs_info() -> Option<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(".cargo_vcs_info.json");
    let text = std::fs::read_to_string(path).ok()?;
    // `"sha1": "<40 hex digits>"`; read without a JSON parser (no build dependency).
    let rest = &text[text.find("\"sha1\"")? + 6..];
    let start = rest.find('"')? + 1;
    let sha: String = rest[start..]
        .chars()
        .take_while(|c| c.is_ascii_hexdigit())
        .collect();
    (sha.len() >= 12).then(|| sha[..12].to_string())
}

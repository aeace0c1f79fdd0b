//! Command-line paths → the sorted list of inputs.
//!
//! A folder is searched recursively for `*.json`, `*.json.gz` and `*.cpuprofile`
//! (and `*.cpuprofile.gz`); a file named directly is taken whatever its name; `-` is
//! standard input. The result is sorted and free of duplicates so that runs are repeatable.
//! Files found by a folder search are [`InputPath::Found`]: one that turns out not to be a
//! trace (a Lighthouse `devtoolslog.json`, a `package.json`) is skipped with a note, while
//! a file named on the command line that is not a trace is an error.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::InputPath;
use crate::error::{Error, Result};

/// True for the file names a folder search takes.
pub fn is_trace_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    [".json", ".json.gz", ".cpuprofile", ".cpuprofile.gz"]
        .iter()
        .any(|s| name.ends_with(s))
}

/// Expands command-line paths: sorted, each file once (by its canonical path, so a file
/// named directly and found again in a folder is read once). Errors: [`Error::Io`] for a
/// folder that cannot be listed, [`Error::NoTraces`] for a folder without trace files.
/// Folder searches follow symbolic links but never enter a folder twice (no loops), and
/// take only regular files (no FIFOs, sockets or devices, which could block).
pub fn expand(args: &[PathBuf]) -> Vec<Result<InputPath>> {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    let mut seen_dirs = HashSet::new();
    for a in args {
        if a.as_os_str() == "-" {
            found.push(InputPath::Stdin);
        } else if a.is_dir() {
            let before = found.len();
            walk(a, &mut seen_dirs, &mut found, &mut errors);
            if found.len() == before {
                errors.push(Error::NoTraces { path: a.clone() });
            }
        } else {
            found.push(InputPath::File(a.clone()));
        }
    }
    found.sort();
    let mut seen_files = HashSet::new();
    found.retain(|inp| match inp {
        InputPath::Stdin => true,
        InputPath::File(p) | InputPath::Found(p) => {
            seen_files.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        }
    });
    found
        .into_iter()
        .map(Ok)
        .chain(errors.into_iter().map(Err))
        .collect()
}

fn walk(
    dir: &Path,
    seen: &mut HashSet<PathBuf>,
    out: &mut Vec<InputPath>,
    errors: &mut Vec<Error>,
) {
    if !seen.insert(std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())) {
        return; // a symbolic link back to a folder already searched
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(source) => {
            errors.push(Error::Io {
                path: dir.to_path_buf(),
                source,
            });
            return;
        }
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        // Follows symbolic links.
        let Ok(meta) = std::fs::metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            walk(&p, seen, out, errors);
        } else if meta.is_file() && is_trace_name(&p) {
            out.push(InputPath::Found(p));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_searched_recursively_and_sorted() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        for f in ["b.json", "sub/a.json.gz", "c.cpuprofile", "notes.txt"] {
            std::fs::write(d.path().join(f), b"[]").unwrap();
        }
        let got: Vec<String> = expand(&[d.path().to_path_buf()])
            .into_iter()
            .map(|r| r.unwrap().display_name())
            .map(|s| s.replace(&d.path().display().to_string(), ""))
            .collect();
        assert_eq!(got, ["/b.json", "/c.cpuprofile", "/sub/a.json.gz"]);
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_fifos_and_duplicates() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::write(root.join("a.json"), b"[]").unwrap();
        std::os::unix::fs::symlink(".", root.join("self")).unwrap();
        std::os::unix::fs::symlink(".", root.join("again")).unwrap();
        let fifo = root.join("pipe.json");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        // The folder, and the same file named directly: read once, as the named file.
        let got: Vec<InputPath> = expand(&[root.to_path_buf(), root.join("a.json")])
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(got, [InputPath::File(root.join("a.json"))]);
        let empty = root.join("empty");
        std::fs::create_dir(&empty).unwrap();
        let r = expand(std::slice::from_ref(&empty));
        assert!(matches!(&r[..], [Err(Error::NoTraces { .. })]));
    }
}

//! Command-line paths → the sorted list of inputs.
//!
//! A folder is searched recursively for `*.json`, `*.json.gz` and `*.cpuprofile`
//! (and `*.cpuprofile.gz`); a file named directly is taken whatever its name; `-` is
//! standard input. The result is sorted and free of duplicates so that runs are repeatable.
//! Files found by a folder search are [`InputPath::Found`]: one that turns out not to be a
//! trace (a Lighthouse `devtoolslog.json`, a `package.json`) is skipped with a note, while
//! a file named on the command line that is not a trace is an error.

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

/// Expands command-line paths. Errors: [`Error::Io`] for a path that does not exist or a
/// folder that cannot be listed.
pub fn expand(args: &[PathBuf]) -> Vec<Result<InputPath>> {
    let mut out = Vec::new();
    for a in args {
        if a.as_os_str() == "-" {
            out.push(Ok(InputPath::Stdin));
        } else if a.is_dir() {
            walk(a, &mut out);
        } else {
            out.push(Ok(InputPath::File(a.clone())));
        }
    }
    let (mut ok, errs): (Vec<_>, Vec<_>) = out.into_iter().partition(|r| r.is_ok());
    ok.sort_by(|a, b| a.as_ref().ok().cmp(&b.as_ref().ok()));
    ok.dedup_by(|a, b| a.as_ref().ok() == b.as_ref().ok());
    ok.extend(errs);
    ok
}

fn walk(dir: &Path, out: &mut Vec<Result<InputPath>>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(source) => {
            out.push(Err(Error::Io {
                path: dir.to_path_buf(),
                source,
            }));
            return;
        }
    };
    for entry in entries.flatten() {
        let p = entry.path();
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() || (ft.is_symlink() && p.is_dir()) {
            walk(&p, out);
        } else if is_trace_name(&p) {
            out.push(Ok(InputPath::Found(p)));
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
}

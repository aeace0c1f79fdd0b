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
    expand_marked(args.iter().map(|a| (a.clone(), false)))
}

/// [`expand`] of paths marked `true` when a glob found them: such a file is taken as a
/// folder search takes it ([`InputPath::Found`]), not as one named on the command line.
fn expand_marked(args: impl Iterator<Item = (PathBuf, bool)>) -> Vec<Result<InputPath>> {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    let mut seen_dirs = HashSet::new();
    for (a, globbed) in args {
        let a = &a;
        if globbed && !a.is_dir() {
            found.push(InputPath::Found(a.clone()));
        } else if a.as_os_str() == "-" {
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
    // Named files before found ones, so that a file both named and found counts as named.
    found.sort();
    let mut seen_files = HashSet::new();
    let mut stdin_seen = false;
    found.retain(|inp| match inp {
        // Standard input can be read once: `- -` is one input.
        InputPath::Stdin => !std::mem::replace(&mut stdin_seen, true),
        InputPath::File(p) | InputPath::Found(p) => {
            seen_files.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        }
    });
    let mut all: Vec<Result<InputPath>> = found
        .into_iter()
        .map(Ok)
        .chain(errors.into_iter().map(Err))
        .collect();
    // Input order is report order: by the name the reports show.
    all.sort_by_cached_key(|r| match r {
        Ok(inp) => inp.display_name(),
        Err(e) => e.path().display().to_string(),
    });
    all
}

/// The inputs of a run: `paths` (files, folders, `-`, and quoted globs such as
/// `'traces/**/*.json.gz'`, expanded here when no file has that name), the paths listed in
/// `files_from` (one per line; `-` reads them from standard input; blank lines and lines
/// starting with `#` are skipped), and of those, with `shard = (i, n)`, only every n-th
/// starting at the i-th (1-based) of the sorted list. Errors: `files_from` cannot be read,
/// or a glob is malformed.
pub fn inputs(
    paths: &[PathBuf],
    files_from: Option<&Path>,
    shard: Option<(usize, usize)>,
) -> anyhow::Result<Vec<Result<InputPath>>> {
    use anyhow::Context;
    let mut args: Vec<(PathBuf, bool)> = Vec::new();
    let mut unmatched = Vec::new();
    let listed = match files_from {
        None => String::new(),
        Some(f) if f.as_os_str() == "-" => std::io::read_to_string(std::io::stdin().lock())
            .context("cannot read the list of files from standard input")?,
        Some(f) => std::fs::read_to_string(f)
            .with_context(|| format!("cannot read the list of files {}", f.display()))?,
    };
    let from_list = listed
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(PathBuf::from);
    for p in paths.iter().cloned().chain(from_list) {
        let text = p.to_string_lossy();
        let is_glob = text.contains(['*', '?', '[']) && !p.exists();
        if !is_glob {
            args.push((p, false));
            continue;
        }
        // Like a folder search: trace-named regular files, and folders searched.
        let matches: Vec<PathBuf> = glob::glob(&text)
            .with_context(|| format!("bad glob pattern {text:?}"))?
            .flatten()
            .filter(|m| m.is_dir() || (m.is_file() && is_trace_name(m)))
            .collect();
        if matches.is_empty() {
            unmatched.push(Error::NoMatch { pattern: p.clone() });
        }
        args.extend(matches.into_iter().map(|m| (m, true)));
    }
    if files_from.is_some_and(|f| f.as_os_str() == "-")
        && args.iter().any(|(a, _)| a.as_os_str() == "-")
    {
        anyhow::bail!(
            "standard input cannot be both the list of files (--files-from -) and a trace (-)"
        );
    }
    let mut all = expand_marked(args.into_iter());
    all.extend(unmatched.into_iter().map(Err));
    if let Some((i, n)) = shard {
        all = all
            .into_iter()
            .enumerate()
            .filter(|(k, _)| k % n == i - 1)
            .map(|(_, r)| r)
            .collect();
    }
    Ok(all)
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

    #[test]
    fn globs_lists_and_shards() {
        let d = tempfile::tempdir().unwrap();
        let names: Vec<String> = (0..7).map(|k| format!("t{k}.json")).collect();
        for n in &names {
            std::fs::write(d.path().join(n), b"[]").unwrap();
        }
        let list = d.path().join("list.txt");
        std::fs::write(
            &list,
            format!("# traces\n\n{}\n", d.path().join("t6.json").display()),
        )
        .unwrap();
        let glob = d.path().join("t[0-5].json");
        let names_of = |v: Vec<Result<InputPath>>| -> Vec<String> {
            v.into_iter()
                .map(|r| {
                    r.unwrap()
                        .path()
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect()
        };
        let all = names_of(inputs(std::slice::from_ref(&glob), Some(&list), None).unwrap());
        assert_eq!(all, names);
        // Three shards: every file exactly once.
        let mut union = Vec::new();
        for i in 1..=3 {
            let part =
                names_of(inputs(std::slice::from_ref(&glob), Some(&list), Some((i, 3))).unwrap());
            assert!(part.len() == 2 || part.len() == 3);
            union.extend(part);
        }
        union.sort();
        assert_eq!(union, names);
        // A glob matching nothing is an error entry, not silence.
        let none = inputs(&[d.path().join("x*.json")], None, None).unwrap();
        assert!(matches!(&none[..], [Err(Error::NoMatch { .. })]));
        // A glob takes trace-named files only, as a folder search does.
        std::fs::write(d.path().join("notes.md"), b"x").unwrap();
        let star = names_of(inputs(&[d.path().join("*")], None, None).unwrap());
        assert!(!star.iter().any(|n| n == "notes.md" || n == "list.txt"));
        // What a glob finds is skipped, not failed, when it is not a trace (as in a folder).
        let found = inputs(std::slice::from_ref(&glob), None, None).unwrap();
        assert!(found.iter().all(|r| matches!(r, Ok(InputPath::Found(_)))));
        let named = inputs(&[d.path().join("t0.json")], None, None).unwrap();
        assert!(matches!(&named[..], [Ok(InputPath::File(_))]));
    }
}

//! Command-line paths → the sorted list of inputs.
//!
//! A folder is searched recursively for `*.json`, `*.json.gz` and `*.cpuprofile`
//! (and `*.cpuprofile.gz`), and Perfetto protobuf traces, `*.pftrace` and
//! `*.perfetto-trace` (and their `.gz`); a file named directly is taken whatever its name; `-` is
//! standard input. The result is sorted and free of duplicates so that runs are repeatable.
//! Files found by a folder search are [`InputPath::Found`]: one that turns out not to be a
//! trace (a Lighthouse `devtoolslog.json`, a `package.json`) is skipped with a note, while
//! a file named on the command line that is not a trace is an error.
//!
//! Searches (folders and quoted globs) are bounded: each real folder is entered once (by
//! device and inode, so `self -> .` and `up -> ..` end), at most [`MAX_DEPTH`] levels
//! deep, and a symbolic link that leads out of the folder being searched is not followed
//! (a note says so) unless `--follow-links` is given. Each real file is read once: the
//! same file reached by a second name (a link, a second argument) is left out with a note.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::InputPath;
use crate::error::{Error, Result};

/// Deepest folder nesting a search enters, below the folder named.
pub(crate) const MAX_DEPTH: usize = 64;

/// True for the file names a folder search takes.
pub(crate) fn is_trace_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    [
        ".json",
        ".json.gz",
        ".cpuprofile",
        ".cpuprofile.gz",
        ".pftrace",
        ".pftrace.gz",
        ".perfetto-trace",
        ".perfetto-trace.gz",
    ]
    .iter()
    .any(|s| name.ends_with(s))
}

/// A real file or folder: device and inode (the canonical path where there are none).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum FileId {
    #[cfg(unix)]
    Inode(u64, u64),
    #[cfg_attr(unix, allow(dead_code))]
    Path(PathBuf),
}

fn file_id(p: &Path) -> Option<FileId> {
    let meta = std::fs::metadata(p).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = &meta;
        Some(FileId::Inode(meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        std::fs::canonicalize(p).ok().map(FileId::Path)
    }
}

/// Expands command-line paths: sorted, each real file once (so a file named directly and
/// found again in a folder is read once, as the named file, and the other name gets an
/// [`Error::LeftOut`] note). Errors: [`Error::Io`] for a folder that cannot be listed,
/// [`Error::NoTraces`] for a folder without trace files. Folder searches take only regular
/// files (no FIFOs, sockets or devices, which could block) and follow symbolic links only
/// inside the folder named, unless `follow_links`.
#[cfg(test)]
fn expand(args: &[PathBuf], follow_links: bool) -> Vec<Result<InputPath>> {
    let mut w = Walker::new(follow_links);
    expand_marked(args.iter().map(|a| (a.clone(), false)), &mut w)
}

/// [`expand`] of paths marked `true` when a glob found them: such a file is taken as a
/// folder search takes it ([`InputPath::Found`]), not as one named on the command line.
fn expand_marked(
    args: impl Iterator<Item = (PathBuf, bool)>,
    w: &mut Walker,
) -> Vec<Result<InputPath>> {
    for (a, globbed) in args {
        let a = &a;
        if globbed && !a.is_dir() {
            w.found.push(InputPath::Found(a.clone()));
        } else if a.as_os_str() == "-" {
            w.found.push(InputPath::Stdin);
        } else if a.is_dir() {
            let before = w.found.len();
            let root = std::fs::canonicalize(a).unwrap_or_else(|_| a.clone());
            w.search(a, &root, 0, None);
            if w.found.len() == before {
                w.errors.push(Error::NoTraces { path: a.clone() });
            }
        } else {
            w.found.push(InputPath::File(a.clone()));
        }
    }
    let mut found = std::mem::take(&mut w.found);
    // Named files before found ones, so that a file both named and found counts as named;
    // a name given twice is one input (one error when it is missing, however many times
    // a list names it).
    found.sort();
    found.dedup();
    let mut first_name: HashMap<FileId, PathBuf> = HashMap::new();
    let mut stdin_seen = false;
    found.retain(|inp| match inp {
        // Standard input can be read once: `- -` is one input.
        InputPath::Stdin => !std::mem::replace(&mut stdin_seen, true),
        InputPath::File(p) | InputPath::Found(p) => {
            let Some(id) = file_id(p) else {
                return true; // not there: its error comes when it is opened
            };
            match first_name.get(&id) {
                None => {
                    first_name.insert(id, p.clone());
                    true
                }
                Some(first) if first == p => false, // the same name twice
                Some(first) => {
                    w.notes.push(Error::LeftOut {
                        path: p.clone(),
                        reason: format!("the same file as {}: read once", first.display()),
                    });
                    false
                }
            }
        }
    });
    let mut all: Vec<Result<InputPath>> = found
        .into_iter()
        .map(Ok)
        .chain(w.errors.drain(..).map(Err))
        .chain(w.notes.drain(..).map(Err))
        .collect();
    // Input order is report order: by the name the reports show.
    all.sort_by_cached_key(|r| match r {
        Ok(inp) => inp.display_name(),
        Err(e) => crate::error::path_text(e.path()),
    });
    all
}

/// The inputs of a run: `paths` (files, folders, `-`, and quoted globs such as
/// `'traces/**/*.json.gz'`, expanded here when no file has that name), the paths listed in
/// `files_from` (one per line; `-` reads them from standard input; blank lines and lines
/// starting with `#` are skipped), and of those, with `shard = (i, n)`, only every n-th
/// starting at the i-th (1-based) of the sorted list. Searches follow symbolic links out
/// of the folder searched only with `follow_links`. Errors: `files_from` cannot be read,
/// or a glob is malformed.
pub(crate) fn inputs(
    paths: &[PathBuf],
    files_from: Option<&Path>,
    shard: Option<(usize, usize)>,
    follow_links: bool,
) -> anyhow::Result<Vec<Result<InputPath>>> {
    use anyhow::Context;
    let mut args: Vec<(PathBuf, bool)> = Vec::new();
    let mut w = Walker::new(follow_links);
    let listed: Vec<u8> = match files_from {
        None => Vec::new(),
        Some(f) if f.as_os_str() == "-" => {
            if super::std_fd_was_closed(0) {
                anyhow::bail!(
                    "cannot read the list of files from standard input (--files-from -): it is closed"
                );
            }
            let mut list = Vec::new();
            std::io::Read::read_to_end(
                &mut std::io::Read::take(std::io::stdin().lock(), MAX_LIST_BYTES + 1),
                &mut list,
            )
            .context("cannot read the list of files from standard input")?;
            if list.len() as u64 > MAX_LIST_BYTES {
                anyhow::bail!(
                    "the list of files on standard input is over the limit of {} MiB",
                    MAX_LIST_BYTES >> 20
                );
            }
            list
        }
        Some(f) => super::side::read(f, MAX_LIST_BYTES).map_err(|e| {
            anyhow::anyhow!("the list of files {} {}", crate::error::path_text(f), e.why)
        })?,
    };
    // Lines are paths as bytes (a name need not be UTF-8: `find` prints what is there).
    let from_list = listed
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
        .map(path_of_bytes);
    let mut unmatched = Vec::new();
    for p in paths.iter().cloned().chain(from_list) {
        // A name that is not UTF-8 is a name, never a pattern.
        let Some(text) = p.to_str() else {
            args.push((p, false));
            continue;
        };
        let is_glob = text.contains(['*', '?', '[']) && !p.exists();
        if !is_glob {
            args.push((p, false));
            continue;
        }
        // Like a folder search: trace-named regular files, and folders searched.
        let pattern =
            glob::Pattern::new(text).with_context(|| format!("bad glob pattern {text:?}"))?;
        let before = (w.found.len(), w.notes.len());
        w.glob(&p, &pattern);
        if (w.found.len(), w.notes.len()) == before {
            unmatched.push(Error::NoMatch { pattern: p.clone() });
        }
        let matched: Vec<InputPath> = w.found.drain(before.0..).collect();
        args.extend(matched.into_iter().map(|m| (m.path(), true)));
    }
    if files_from.is_some_and(|f| f.as_os_str() == "-")
        && args.iter().any(|(a, _)| a.as_os_str() == "-")
    {
        anyhow::bail!(
            "standard input cannot be both the list of files (--files-from -) and a trace (-)"
        );
    }
    let mut all = expand_marked(args.into_iter(), &mut w);
    unmatched.sort_by(|a, b| a.path().cmp(b.path()));
    unmatched.dedup_by(|a, b| a.path() == b.path());
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

/// A `--files-from` list may hold at most this many bytes (a million paths take ~100 MB).
const MAX_LIST_BYTES: u64 = 1 << 30;

/// A path from the bytes of a list's line (on Unix any bytes; elsewhere as UTF-8, lossily).
fn path_of_bytes(b: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(b))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(b).into_owned())
    }
}

/// One run's folder searches: what they found, and the folders already entered.
struct Walker {
    follow_links: bool,
    seen_dirs: HashSet<FileId>,
    found: Vec<InputPath>,
    errors: Vec<Error>,
    notes: Vec<Error>,
}

impl Walker {
    fn new(follow_links: bool) -> Walker {
        Walker {
            follow_links,
            seen_dirs: HashSet::new(),
            found: Vec::new(),
            errors: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The sorted entries of `dir` (`""` is the current folder, and its entries are
    /// named without a `./`), or `None` after noting why it cannot be listed.
    fn entries(&mut self, dir: &Path) -> Option<Vec<PathBuf>> {
        let listed = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        match std::fs::read_dir(listed) {
            Ok(e) => {
                let mut v: Vec<PathBuf> = e.flatten().map(|e| dir.join(e.file_name())).collect();
                v.sort();
                Some(v)
            }
            Err(source) => {
                self.errors.push(Error::Io {
                    path: dir.to_path_buf(),
                    source,
                });
                None
            }
        }
    }

    /// The metadata of `p` (through a link), or `None` when it is not to be taken: gone,
    /// a dangling or looping link, or a link out of `root` (noted, unless following).
    fn enter(&mut self, p: &Path, root: &Path) -> Option<std::fs::Metadata> {
        let link = std::fs::symlink_metadata(p).ok()?.file_type().is_symlink();
        let meta = std::fs::metadata(p).ok()?;
        if link && !self.follow_links {
            let target = std::fs::canonicalize(p).ok()?;
            if !target.starts_with(root) && (meta.is_dir() || is_trace_name(p)) {
                self.notes.push(Error::LeftOut {
                    path: p.to_path_buf(),
                    reason: format!(
                        "a symbolic link out of the folder searched (to {}): not followed; --follow-links follows it",
                        target.display()
                    ),
                });
                return None;
            }
        }
        Some(meta)
    }

    /// Whether to enter folder `dir` at `depth`: once per real folder, and not too deep.
    fn first_visit(&mut self, dir: &Path, depth: usize) -> bool {
        if let Some(id) = file_id(dir)
            && !self.seen_dirs.insert(id)
        {
            return false; // a link back to a folder already searched
        }
        if depth > MAX_DEPTH {
            self.notes.push(Error::LeftOut {
                path: dir.to_path_buf(),
                reason: format!("folders nested deeper than {MAX_DEPTH} levels: not searched"),
            });
            return false;
        }
        true
    }

    /// Searches `dir` (inside canonical `root`) for trace-named regular files, or with
    /// `pattern`, for paths it matches (a matched folder is searched whole).
    fn search(&mut self, dir: &Path, root: &Path, depth: usize, pattern: Option<&GlobWalk>) {
        if !self.first_visit(dir, depth) {
            return;
        }
        let Some(entries) = self.entries(dir) else {
            return;
        };
        for p in entries {
            let matched = pattern.is_none_or(|g| g.matches(&p));
            let Some(meta) = self.enter(&p, root) else {
                continue;
            };
            if meta.is_dir() {
                if matched {
                    self.search(&p, root, depth + 1, None);
                } else if pattern.is_some_and(|g| g.descends(depth + 1)) {
                    self.search(&p, root, depth + 1, pattern);
                }
            } else if matched && meta.is_file() && is_trace_name(&p) {
                self.found.push(InputPath::Found(p));
            }
        }
    }

    /// Expands glob `pattern` (spelled `text`) as a bounded search from its literal start.
    fn glob(&mut self, text: &Path, pattern: &glob::Pattern) {
        let g = GlobWalk::new(text, pattern);
        let dir = if g.base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &g.base
        };
        if !dir.is_dir() {
            return;
        }
        let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let base = g.base.clone();
        // Each glob searches its own tree (a folder searched for another argument is
        // searched again for this one; its files are read once all the same).
        let seen = std::mem::take(&mut self.seen_dirs);
        self.search(&base, &root, 0, Some(&g));
        self.seen_dirs = seen;
    }
}

/// A glob pattern split into its literal start folder and the rest.
struct GlobWalk<'a> {
    pattern: &'a glob::Pattern,
    base: PathBuf,
    /// Components below `base`: the deepest a match can be, unless `**`.
    levels: usize,
    any_depth: bool,
}

impl<'a> GlobWalk<'a> {
    fn new(text: &Path, pattern: &'a glob::Pattern) -> GlobWalk<'a> {
        let mut base = PathBuf::new();
        let mut rest = Vec::new();
        for c in text.components() {
            let s = c.as_os_str().to_string_lossy();
            if rest.is_empty() && !s.contains(['*', '?', '[']) {
                base.push(c);
            } else {
                rest.push(s.into_owned());
            }
        }
        GlobWalk {
            pattern,
            base,
            levels: rest.len(),
            any_depth: rest.iter().any(|s| s.contains("**")),
        }
    }
    fn matches(&self, p: &Path) -> bool {
        let opts = glob::MatchOptions {
            require_literal_separator: true,
            ..Default::default()
        };
        self.pattern.matches_path_with(p, opts)
    }
    /// True when a match can lie below a folder at `depth` (1 = an entry of `base`).
    fn descends(&self, depth: usize) -> bool {
        self.any_depth || depth < self.levels
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_searched_recursively_and_sorted() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        for f in [
            "b.json",
            "sub/a.json.gz",
            "c.cpuprofile",
            "notes.txt",
            "d.pftrace",
            "sub/e.perfetto-trace.gz",
            "f.proto",
        ] {
            std::fs::write(d.path().join(f), b"[]").unwrap();
        }
        let got: Vec<String> = expand(&[d.path().to_path_buf()], false)
            .into_iter()
            .map(|r| r.unwrap().display_name())
            .map(|s| s.replace(&d.path().display().to_string(), ""))
            .collect();
        assert_eq!(
            got,
            [
                "/b.json",
                "/c.cpuprofile",
                "/d.pftrace",
                "/sub/a.json.gz",
                "/sub/e.perfetto-trace.gz"
            ]
        );
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
        let got: Vec<InputPath> = expand(&[root.to_path_buf(), root.join("a.json")], false)
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(got, [InputPath::File(root.join("a.json"))]);
        let empty = root.join("empty");
        std::fs::create_dir(&empty).unwrap();
        let r = expand(std::slice::from_ref(&empty), false);
        assert!(matches!(&r[..], [Err(Error::NoTraces { .. })]));
    }

    /// The notes (left-out names) and the inputs of an expansion, by file name.
    #[cfg(unix)]
    fn split(all: Vec<Result<InputPath>>, root: &Path) -> (Vec<String>, Vec<String>) {
        let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
        let (mut ok, mut notes) = (Vec::new(), Vec::new());
        for r in all {
            match r {
                Ok(inp) => ok.push(rel(&inp.path())),
                Err(Error::LeftOut { path, reason }) => {
                    notes.push(format!("{}: {reason}", rel(&path)))
                }
                Err(e) => panic!("unexpected error {e}"),
            }
        }
        (ok, notes)
    }

    #[cfg(unix)]
    #[test]
    fn glob_over_symlink_loops_visits_each_real_file_once() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("t");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a.json"), b"[]").unwrap();
        std::fs::write(root.join("sub/b.json"), b"[]").unwrap();
        std::os::unix::fs::symlink(".", root.join("self")).unwrap();
        std::os::unix::fs::symlink("..", root.join("sub/up")).unwrap();
        std::os::unix::fs::symlink("..", root.join("up")).unwrap();
        std::fs::write(d.path().join("outside.json"), b"[]").unwrap();
        let pattern = root.join("**/*.json");
        let (ok, notes) = split(inputs(&[pattern], None, None, false).unwrap(), &root);
        assert_eq!(ok, ["a.json", "sub/b.json"]);
        // `sub/up` leads back inside (entered once already); `up` leads out: said.
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("up: a symbolic link out of the folder searched"));
    }

    #[cfg(unix)]
    #[test]
    fn folder_search_never_leaves_through_a_link_unless_follow_links() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("t");
        std::fs::create_dir(&root).unwrap();
        std::fs::create_dir(d.path().join("elsewhere")).unwrap();
        std::fs::write(root.join("a.json"), b"[]").unwrap();
        std::fs::write(d.path().join("elsewhere/x.json"), b"[]").unwrap();
        std::fs::write(d.path().join("secret.json"), b"[]").unwrap();
        std::os::unix::fs::symlink("..", root.join("up")).unwrap();
        std::os::unix::fs::symlink("../elsewhere", root.join("there")).unwrap();
        std::os::unix::fs::symlink("../secret.json", root.join("s.json")).unwrap();
        let (ok, notes) = split(expand(std::slice::from_ref(&root), false), &root);
        assert_eq!(ok, ["a.json"]);
        let names: Vec<&str> = notes.iter().map(|n| n.split(':').next().unwrap()).collect();
        assert_eq!(names, ["s.json", "there", "up"]);
        // Followed on request, each real file still once: `up` and `there` both reach x
        // (its folder is entered once, silently), `up` and `s.json` reach the secret (said).
        let (ok, notes) = split(expand(std::slice::from_ref(&root), true), &root);
        assert_eq!(ok, ["a.json", "s.json", "there/x.json"]);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("up/secret.json: the same file as "));
    }

    #[cfg(unix)]
    #[test]
    fn same_file_named_twice_through_a_link_is_read_once_and_said() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::write(root.join("a.json"), b"[]").unwrap();
        std::os::unix::fs::symlink("a.json", root.join("b.json")).unwrap();
        let (ok, notes) = split(
            expand(&[root.join("b.json"), root.join("a.json")], false),
            root,
        );
        assert_eq!(ok, ["a.json"]);
        assert_eq!(
            notes,
            ["b.json: the same file as ".to_string()
                + &root.join("a.json").display().to_string()
                + ": read once"]
        );
        // The same spelling twice is simply one input.
        let (ok, notes) = split(
            expand(&[root.join("a.json"), root.join("a.json")], false),
            root,
        );
        assert_eq!((ok.len(), notes.len()), (1, 0));
    }

    #[test]
    fn folders_nested_deeper_than_the_limit_are_noted() {
        let d = tempfile::tempdir().unwrap();
        let mut deep = d.path().to_path_buf();
        for _ in 0..=MAX_DEPTH + 1 {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(d.path().join("top.json"), b"[]").unwrap();
        std::fs::write(deep.join("x.json"), b"[]").unwrap();
        let all = expand(&[d.path().to_path_buf()], false);
        let notes: Vec<String> = all
            .iter()
            .filter_map(|r| r.as_ref().err().map(|e| e.to_string()))
            .collect();
        assert_eq!(all.iter().filter(|r| r.is_ok()).count(), 1);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].ends_with("folders nested deeper than 64 levels: not searched"));
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
        let all = names_of(inputs(std::slice::from_ref(&glob), Some(&list), None, false).unwrap());
        assert_eq!(all, names);
        // Three shards: every file exactly once.
        let mut union = Vec::new();
        for i in 1..=3 {
            let part = names_of(
                inputs(
                    std::slice::from_ref(&glob),
                    Some(&list),
                    Some((i, 3)),
                    false,
                )
                .unwrap(),
            );
            assert!(part.len() == 2 || part.len() == 3);
            union.extend(part);
        }
        union.sort();
        assert_eq!(union, names);
        // A glob matching nothing is an error entry, not silence.
        let none = inputs(&[d.path().join("x*.json")], None, None, false).unwrap();
        assert!(matches!(&none[..], [Err(Error::NoMatch { .. })]));
        // A glob takes trace-named files only, as a folder search does.
        std::fs::write(d.path().join("notes.md"), b"x").unwrap();
        let star = names_of(inputs(&[d.path().join("*")], None, None, false).unwrap());
        assert!(!star.iter().any(|n| n == "notes.md" || n == "list.txt"));
        // What a glob finds is skipped, not failed, when it is not a trace (as in a folder).
        let found = inputs(std::slice::from_ref(&glob), None, None, false).unwrap();
        assert!(found.iter().all(|r| matches!(r, Ok(InputPath::Found(_)))));
        let named = inputs(&[d.path().join("t0.json")], None, None, false).unwrap();
        assert!(matches!(&named[..], [Ok(InputPath::File(_))]));
    }
}

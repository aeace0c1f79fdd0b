//! Output files: every report and extra output is written to a temporary file in the
//! target's folder and renamed over it when complete, so a killed run never leaves half a
//! report; an interrupt removes the temporary files; outputs that would overwrite an input
//! or each other are refused before any input is read.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::error::Error;
use crate::input::InputPath;

/// An output file.
pub(crate) enum OutFile {
    Stdout,
    /// A FIFO, a device or another non-regular file: written in place.
    Direct(File, PathBuf),
    /// A regular file (or a link to one): written to a temporary file in the same folder
    /// and renamed over it when complete, so a killed run never leaves half a report.
    Atomic(tempfile::NamedTempFile, PathBuf),
}

impl OutFile {
    /// Opens `path` (`None` or `-`: standard output). A missing folder is an error naming
    /// it, or with `create_dirs` is created. Errors: standard output is closed (`>&-`), the
    /// path is a folder, its folder cannot be written.
    pub(crate) fn open(path: Option<&Path>, create_dirs: bool) -> anyhow::Result<OutFile> {
        let Some(p) = path.filter(|p| p.as_os_str() != "-") else {
            return stdout();
        };
        let cannot = || format!("cannot write {}", p.display());
        // `/dev/stdout` (or a path that is where standard output goes): write to our own
        // standard output, so that `>> summary.md` appends instead of being replaced.
        if is_stdout(p) {
            return stdout();
        }
        // Other descriptors (`/dev/fd/3`, `/proc/self/fd/3`): write through, appending.
        if p.starts_with("/dev/fd") || p.starts_with("/proc/self/fd") {
            let f = File::options().append(true).open(p).with_context(cannot)?;
            return Ok(OutFile::Direct(f, p.to_path_buf()));
        }
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => anyhow::bail!("cannot write {}: it is a folder", p.display()),
            Ok(m) if !m.is_file() => {
                let f = File::options().write(true).open(p).with_context(cannot)?;
                Ok(OutFile::Direct(f, p.to_path_buf()))
            }
            existing => {
                // Write through a symbolic link to its target; keep an existing file's mode.
                let target = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
                let dir = target
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                let mode = match existing {
                    Ok(m) => m.permissions(),
                    Err(_) => default_permissions(),
                };
                if !dir.is_dir() {
                    if !create_dirs {
                        anyhow::bail!(
                            "{}: the folder {} does not exist (--create-dirs creates it)",
                            cannot(),
                            dir.display()
                        );
                    }
                    std::fs::create_dir_all(dir).with_context(|| {
                        format!("{}: cannot create the folder {}", cannot(), dir.display())
                    })?;
                }
                remove_stale_temp_files(dir);
                let tmp = tempfile::Builder::new()
                    .prefix(&temp_prefix(std::process::id()))
                    .permissions(mode)
                    .tempfile_in(dir)
                    // The error without the temporary file's name, kept as a source so
                    // that the exit code can tell a full disk from a missing folder.
                    .map_err(|e| {
                        anyhow::Error::new(std::io::Error::from(e.kind())).context(cannot())
                    })?;
                pending_temp_files(|t| t.push(tmp.path().to_path_buf()));
                Ok(OutFile::Atomic(tmp, target))
            }
        }
    }

    /// Where to write.
    pub(crate) fn writer(&mut self) -> Box<dyn Write + '_> {
        match self {
            OutFile::Stdout => Box::new(std::io::stdout().lock()),
            OutFile::Direct(f, _) => Box::new(f),
            OutFile::Atomic(t, _) => Box::new(t),
        }
    }

    /// The output as messages name it.
    pub(crate) fn name(&self) -> String {
        match self {
            OutFile::Stdout => "standard output".into(),
            OutFile::Direct(_, p) | OutFile::Atomic(_, p) => p.display().to_string(),
        }
    }

    /// Writes the whole output with `fill`, then puts it in place; errors name the output.
    pub(crate) fn fill(
        mut self,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        let name = self.name();
        let mut w = self.writer();
        fill(&mut w)
            .and_then(|()| w.flush())
            .with_context(|| format!("cannot write {name}"))?;
        drop(w);
        self.commit()
    }

    /// Puts a complete output in place.
    pub(crate) fn commit(self) -> anyhow::Result<()> {
        match self {
            OutFile::Stdout | OutFile::Direct(..) => Ok(()),
            OutFile::Atomic(tmp, p) => {
                let at = tmp.path().to_path_buf();
                pending_temp_files(|t| t.retain(|x| *x != at));
                tmp.persist(&p).map_err(|e| {
                    anyhow::Error::new(e.error).context(format!("cannot write {}", p.display()))
                })?;
                Ok(())
            }
        }
    }
}

/// Standard output as an output, refused when it was closed (`>&-`): the report would
/// be lost without an error.
fn stdout() -> anyhow::Result<OutFile> {
    if crate::input::std_fd_was_closed(1) {
        anyhow::bail!("cannot write the report: standard output is closed");
    }
    Ok(OutFile::Stdout)
}

/// The name prefix of this process's temporary files: `.taskchain-<pid>-`, so that a later
/// run can tell a dead run's leftovers ([`remove_stale_temp_files`]).
fn temp_prefix(pid: u32) -> String {
    format!(".taskchain-{pid}-")
}

/// Removes the temporary files in `dir` that a killed run (`kill -9`, a crash) left: named
/// `.taskchain-<pid>-…` with a pid that is not running. Files of live processes, and any
/// file without a pid in its name, are left alone.
fn remove_stale_temp_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(".taskchain-"))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id()
            && !process_is_running(pid)
            && e.file_type().is_ok_and(|t| t.is_file())
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// True unless the OS says no process has id `pid` (a process of another user counts as
/// running).
fn process_is_running(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return true;
        };
        // SAFETY: signal 0 only checks that the process exists.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Temporary output files not yet renamed into place, for [`remove_on_interrupt`].
fn pending_temp_files<R>(f: impl FnOnce(&mut Vec<PathBuf>) -> R) -> R {
    static PENDING: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    f(&mut PENDING.lock().unwrap_or_else(|p| p.into_inner()))
}

/// A cleanup to run on an interrupt (a browser to stop and its profile folder to remove).
type Cleanup = Box<dyn FnMut() + Send>;

/// Cleanups registered with [`on_interrupt`], by key.
fn interrupt_cleanups<R>(f: impl FnOnce(&mut Vec<(u64, Cleanup)>) -> R) -> R {
    static CLEANUPS: std::sync::Mutex<Vec<(u64, Cleanup)>> = std::sync::Mutex::new(Vec::new());
    f(&mut CLEANUPS.lock().unwrap_or_else(|p| p.into_inner()))
}

/// Runs `cleanup` if the run is interrupted before [`forget_on_interrupt`] is called with
/// the key returned.
#[cfg_attr(not(feature = "record"), allow(dead_code))]
pub(crate) fn on_interrupt(cleanup: Cleanup) -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let key = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    interrupt_cleanups(|c| c.push((key, cleanup)));
    key
}

/// Drops the cleanup registered under `key` (its work was done).
#[cfg_attr(not(feature = "record"), allow(dead_code))]
pub(crate) fn forget_on_interrupt(key: u64) {
    interrupt_cleanups(|c| c.retain(|(k, _)| *k != key));
}

/// Set once SIGINT or SIGTERM arrived ([`remove_on_interrupt`]).
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// True once SIGINT or SIGTERM arrived: the handler is cleaning up and will end the process
/// with 130. A failure the cleanup caused (the browser it stopped closed the connection)
/// is not the run's to report.
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
}

/// On SIGINT or SIGTERM, runs the cleanups registered (a browser to stop), removes the temporary
/// output files (the targets were never touched) and exits with 130. SIGKILL cannot be
/// caught: its temporary files stay.
pub fn remove_on_interrupt() {
    let _ = ctrlc::set_handler(|| {
        INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
        for (_, mut f) in interrupt_cleanups(std::mem::take) {
            f();
        }
        pending_temp_files(|t| {
            for p in t.drain(..) {
                let _ = std::fs::remove_file(p);
            }
        });
        // Said even with -q: exit 130 alone reads as a crash in a CI log.
        say!("taskchain: interrupted: no output was put in place");
        std::process::exit(crate::exit::INTERRUPTED.into());
    });
}

/// True when `p` is (or leads to) where standard output goes.
fn is_stdout(p: &Path) -> bool {
    let named = ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]
        .iter()
        .any(|s| p == Path::new(s));
    named
        || matches!(
            (std::fs::canonicalize(p), std::fs::canonicalize("/proc/self/fd/1")),
            (Ok(a), Ok(b)) if a == b && !a.starts_with("/dev/null")
        )
}

/// Refuses outputs that would overwrite an input or each other, and two outputs on
/// standard output (they would be mixed in one stream). `outputs` are (flag, path) with
/// `None` for an output not asked for; the main report, written to standard output when
/// `-o` is not given, is passed as `-` then. `read_from`: folders files are read from
/// (`--source-maps`: maps, scripts, original sources), inside which no output may be.
pub(crate) fn check_outputs(
    outputs: &[(&str, Option<&Path>)],
    inputs: &[std::result::Result<InputPath, Error>],
    read_from: &[PathBuf],
) -> anyhow::Result<()> {
    let mut seen: Vec<(PathBuf, Option<FileId>, &str)> = Vec::new();
    let mut on_stdout: Option<&str> = None;
    let reads_stdin = inputs
        .iter()
        .flatten()
        .any(|i| matches!(i, InputPath::Stdin) || i.path().as_os_str() == "-");
    let stdin = if reads_stdin { stdin_id() } else { None };
    for &(flag, path) in outputs {
        let Some(p) = path else { continue };
        if p.as_os_str() == "-" || is_stdout(p) {
            if let Some(other) = on_stdout {
                anyhow::bail!(
                    "{other} and {flag} would both write to standard output; give one of them a file"
                );
            }
            on_stdout = Some(flag);
            continue;
        }
        let place = output_place(p);
        let id = std::fs::metadata(p)
            .ok()
            .filter(|m| m.is_file())
            .and_then(|m| file_id(&m));
        if let Some((_, _, other)) = seen
            .iter()
            .find(|(q, qid, _)| *q == place || (id.is_some() && *qid == id))
        {
            anyhow::bail!("{flag} and {other} both name {}", p.display());
        }
        if let Some(dir) = read_from.iter().find(|d| place.starts_with(d)) {
            anyhow::bail!(
                "{flag} {} is inside {}, which source maps and sources are read from: writing there could replace an input",
                p.display(),
                dir.display()
            );
        }
        if id.is_some() && id == stdin {
            anyhow::bail!(
                "{flag} {} is the file standard input reads: writing it would replace the input",
                p.display()
            );
        }
        if let Some(id) = &id {
            for inp in inputs.iter().flatten() {
                if let InputPath::File(q) | InputPath::Found(q) = inp
                    && std::fs::metadata(q).ok().and_then(|m| file_id(&m)).as_ref() == Some(id)
                {
                    let hint = if matches!(inp, InputPath::Found(_)) {
                        " (a folder search found it: write reports outside the searched folders)"
                    } else {
                        ""
                    };
                    anyhow::bail!("{flag} {} would overwrite an input{hint}", p.display());
                }
            }
        }
        seen.push((place, id, flag));
    }
    Ok(())
}

/// A file's device and inode.
type FileId = (u64, u64);

#[cfg(unix)]
fn file_id(m: &std::fs::Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata) -> Option<FileId> {
    None
}

/// The regular file standard input reads, if it is one.
fn stdin_id() -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
        let m = File::from(fd).metadata().ok()?;
        m.is_file().then(|| file_id(&m)).flatten()
    }
    #[cfg(not(unix))]
    None
}

/// Where output path `p` leads, the same for every spelling (`x.csv`, `./x.csv`,
/// `sub/../x.csv`, `/abs/x.csv`, through a link to its folder) whether or not it exists:
/// its canonical path, else its folder's canonical path and its name, else the absolute
/// path with `.` and `..` removed by name.
fn output_place(p: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    if let (Some(dir), Some(name)) = (abs.parent(), abs.file_name())
        && let Ok(d) = std::fs::canonicalize(dir)
    {
        return d.join(name);
    }
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(unix)]
fn default_permissions() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    // The OS applies the umask, as for any newly created file.
    std::fs::Permissions::from_mode(0o666)
}

#[cfg(not(unix))]
fn default_permissions() -> std::fs::Permissions {
    tempfile::tempfile()
        .and_then(|f| f.metadata())
        .map(|m| m.permissions())
        .expect("a temporary file")
}

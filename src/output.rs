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
    /// Opens `path` (`None` or `-`: standard output).
    pub(crate) fn open(path: Option<&Path>) -> anyhow::Result<OutFile> {
        let Some(p) = path.filter(|p| p.as_os_str() != "-") else {
            return Ok(OutFile::Stdout);
        };
        let cannot = || format!("cannot write {}", p.display());
        // `/dev/stdout` (or a path that is where standard output goes): write to our own
        // standard output, so that `>> summary.md` appends instead of being replaced.
        if is_stdout(p) {
            return Ok(OutFile::Stdout);
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
                let tmp = tempfile::Builder::new()
                    .prefix(".taskchain-")
                    .permissions(mode)
                    .tempfile_in(dir)
                    .map_err(|e| {
                        anyhow::anyhow!("{}: {}", cannot(), std::io::Error::from(e.kind()))
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
    fn name(&self) -> String {
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
                tmp.persist(&p)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {}", p.display(), e.error))?;
                Ok(())
            }
        }
    }
}

/// Temporary output files not yet renamed into place, for [`remove_on_interrupt`].
fn pending_temp_files<R>(f: impl FnOnce(&mut Vec<PathBuf>) -> R) -> R {
    static PENDING: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    f(&mut PENDING.lock().unwrap_or_else(|p| p.into_inner()))
}

/// On SIGINT or SIGTERM, removes the temporary output files (the targets were never
/// touched) and exits with 130. SIGKILL cannot be caught: its temporary files stay.
pub fn remove_on_interrupt() {
    let _ = ctrlc::set_handler(|| {
        pending_temp_files(|t| {
            for p in t.drain(..) {
                let _ = std::fs::remove_file(p);
            }
        });
        std::process::exit(130);
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
/// `-o` is not given, is passed as `-` then.
pub(crate) fn check_outputs(
    outputs: &[(&str, Option<&Path>)],
    inputs: &[std::result::Result<InputPath, Error>],
) -> anyhow::Result<()> {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let mut seen: Vec<(PathBuf, &str)> = Vec::new();
    let mut on_stdout: Option<&str> = None;
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
        let Some(c) = canon(p).filter(|c| std::fs::metadata(c).is_ok_and(|m| m.is_file())) else {
            // Not there yet: compare the names as given.
            if let Some((_, other)) = seen.iter().find(|(q, _)| q == p) {
                anyhow::bail!("{flag} and {other} both name {}", p.display());
            }
            seen.push((p.to_path_buf(), flag));
            continue;
        };
        if let Some((_, other)) = seen.iter().find(|(q, _)| *q == c) {
            anyhow::bail!("{flag} and {other} both name {}", p.display());
        }
        for inp in inputs.iter().flatten() {
            if let InputPath::File(q) | InputPath::Found(q) = inp
                && canon(q).as_ref() == Some(&c)
            {
                let hint = if matches!(inp, InputPath::Found(_)) {
                    " (a folder search found it: write reports outside the searched folders)"
                } else {
                    ""
                };
                anyhow::bail!(
                    "{flag} {} would overwrite an input trace{hint}",
                    p.display()
                );
            }
        }
        seen.push((c, flag));
    }
    Ok(())
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

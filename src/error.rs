//! Errors that stop one input file (or the whole run, for usage errors).
//!
//! Odd but usable data is not an error: it is counted in [`crate::vocab::Diagnostics`].
//! Every message names the file and says what is wrong and where (byte offset, event index).

use std::path::PathBuf;

/// An error that makes one input unreadable: the error type of the front door
/// ([`crate::analyze_path`], [`crate::analyze_bytes`]). Its `Display` names the file and
/// says what is wrong (`trace.json: invalid JSON at byte 12 (event 0): expected ','`);
/// [`std::error::Error::source`] gives the OS or decoder error underneath, if any. Classify
/// by variant: [`Error::is_retryable`] says whether a rerun may succeed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be opened, mapped or read.
    Io {
        /// The input.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The gzip stream is corrupt or cut off.
    Gzip {
        /// The input.
        path: PathBuf,
        /// The decoder's error.
        #[source]
        source: std::io::Error,
    },
    /// The content is not a trace (nor another accepted format).
    NotATrace {
        /// The input.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },
    /// A JSON object of another kind (a `package.json`, a Lighthouse `devtoolslog.json`):
    /// skipped, not an error, when found by a folder search.
    OtherJson {
        /// The input.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },
    /// A folder named on the command line holds no trace files.
    NoTraces {
        /// The folder.
        path: PathBuf,
    },
    /// A glob pattern that matches no trace file.
    NoMatch {
        /// The pattern.
        pattern: PathBuf,
    },
    /// An input left out on purpose, with a note: the same file reached by a second name,
    /// a symbolic link out of the folder searched, a folder nested too deep.
    LeftOut {
        /// The name left out.
        path: PathBuf,
        /// Why, and what was read instead.
        reason: String,
    },
    /// The event array is broken before any usable event.
    Json {
        /// The input.
        path: PathBuf,
        /// 0-based byte offset in the (decompressed) file.
        offset: u64,
        /// 0-based index of the event being read.
        event_index: u64,
        /// What was expected.
        reason: String,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "cannot read {}: {source}", path_text(path)),
            _ => write!(f, "{}: {}", path_text(self.path()), self.reason()),
        }
    }
}

impl Error {
    /// What is wrong, without the file name the message starts with (the `error` of a
    /// JSON report's failed file). An [`Error::Io`] keeps its whole message, `cannot read
    /// FILE: …`, which does not start with the file name.
    pub fn reason(&self) -> String {
        match self {
            Error::Io { .. } => self.to_string(),
            Error::Gzip { source, .. } => format!("bad gzip data: {source}"),
            Error::NotATrace { reason, .. } | Error::OtherJson { reason, .. } => {
                format!("not a trace: {reason}")
            }
            Error::NoTraces { .. } => {
                "no trace files (*.json, *.json.gz, *.cpuprofile) in this folder".to_string()
            }
            Error::NoMatch { .. } => {
                "no trace file (*.json, *.json.gz, *.cpuprofile) matches this pattern".to_string()
            }
            Error::LeftOut { reason, .. } => reason.clone(),
            Error::Json {
                offset,
                event_index,
                reason,
                ..
            } => format!("invalid JSON at byte {offset} (event {event_index}): {reason}"),
        }
    }

    /// The input (or folder) the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Error::Io { path, .. }
            | Error::Gzip { path, .. }
            | Error::NotATrace { path, .. }
            | Error::OtherJson { path, .. }
            | Error::NoTraces { path }
            | Error::NoMatch { pattern: path }
            | Error::LeftOut { path, .. }
            | Error::Json { path, .. } => path,
        }
    }
}

/// Why one file's bytes could not be analysed (the caller adds the path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnalyzeError {
    /// Not a trace, nor another accepted format.
    NotATrace(String),
    /// A JSON object of some other kind (see [`Error::OtherJson`]).
    OtherJson(String),
    /// The event array is broken before the first event.
    Json {
        /// Byte offset.
        offset: u64,
        /// Event index.
        event_index: u64,
        /// What was expected.
        reason: String,
    },
}

impl Error {
    /// True when running again may succeed: an I/O error that says nothing about the
    /// input itself (see [`io_retryable`]). A missing or unreadable file, bad gzip or
    /// bad JSON stays bad.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Io { source, .. } => io_retryable(source),
            _ => false,
        }
    }
}

impl AnalyzeError {
    /// The error with the input it is about.
    pub fn at(self, path: PathBuf) -> Error {
        match self {
            AnalyzeError::NotATrace(reason) => Error::NotATrace { path, reason },
            AnalyzeError::OtherJson(reason) => Error::OtherJson { path, reason },
            AnalyzeError::Json {
                offset,
                event_index,
                reason,
            } => Error::Json {
                path,
                offset,
                event_index,
                reason,
            },
        }
    }
}

/// True for I/O errors a retry may fix: the device or network failed (`EIO`, a stale NFS
/// handle, a timeout, a reset connection), resources ran out (no space, quota, memory,
/// open files) or the call was interrupted. Not: a missing file, no permission, a folder
/// where a file was wanted, bad data.
pub fn io_retryable(e: &std::io::Error) -> bool {
    use std::io::ErrorKind as K;
    /// `EIO`, `ENFILE`, `EMFILE` (the same numbers on Linux and macOS).
    const RETRYABLE_ERRNO: [i32; 3] = [5, 23, 24];
    matches!(
        e.kind(),
        K::Interrupted
            | K::TimedOut
            | K::WouldBlock
            | K::ResourceBusy
            | K::StaleNetworkFileHandle
            | K::StorageFull
            | K::QuotaExceeded
            | K::OutOfMemory
            | K::ConnectionReset
            | K::ConnectionAborted
            | K::NotConnected
            | K::NetworkDown
            | K::NetworkUnreachable
            | K::HostUnreachable
    ) || e
        .raw_os_error()
        .is_some_and(|n| RETRYABLE_ERRNO.contains(&n))
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A path as reports and messages show it, losslessly: as it is when it is UTF-8 without a
/// `\\`; else each byte that is not UTF-8 as `\\xNN` and each `\\` doubled, so that two
/// names that differ only in such bytes (paths are bytes on Unix; `find` prints them)
/// are shown as two.
pub(crate) fn path_text(path: &std::path::Path) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = path.as_os_str().as_bytes();
        if let Ok(s) = std::str::from_utf8(bytes)
            && !s.contains('\\')
        {
            return s.to_string();
        }
        let mut out = String::with_capacity(bytes.len() + 8);
        for chunk in bytes.utf8_chunks() {
            for c in chunk.valid().chars() {
                if c == '\\' {
                    out.push_str("\\\\");
                } else {
                    out.push(c);
                }
            }
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
        out
    }
    #[cfg(not(unix))]
    {
        path.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error as IoError, ErrorKind};

    fn io(e: IoError) -> Error {
        Error::Io {
            path: "x.json".into(),
            source: e,
        }
    }

    #[test]
    fn the_message_is_the_file_then_the_reason_and_the_source_is_chained() {
        use std::error::Error as _;
        let json = Error::Json {
            path: "t.json".into(),
            offset: 12,
            event_index: 0,
            reason: "expected ','".into(),
        };
        assert_eq!(
            json.to_string(),
            "t.json: invalid JSON at byte 12 (event 0): expected ','"
        );
        assert_eq!(
            json.reason(),
            "invalid JSON at byte 12 (event 0): expected ','"
        );
        assert!(json.source().is_none());
        let gz = Error::Gzip {
            path: "t.json.gz".into(),
            source: IoError::new(ErrorKind::InvalidData, "corrupt deflate stream"),
        };
        assert_eq!(
            gz.to_string(),
            "t.json.gz: bad gzip data: corrupt deflate stream"
        );
        assert_eq!(gz.source().unwrap().to_string(), "corrupt deflate stream");
        // An I/O error does not start with the file name: its reason is the whole message.
        let missing = io(IoError::from_raw_os_error(2));
        assert!(missing.to_string().starts_with("cannot read x.json: "));
        assert_eq!(missing.reason(), missing.to_string());
        let os = missing.source().unwrap().downcast_ref::<IoError>().unwrap();
        assert_eq!(os.raw_os_error(), Some(2));
    }

    #[test]
    fn device_and_resource_failures_are_retryable_missing_files_are_not() {
        // Linux errno values: EIO 5, ENOSPC 28, EDQUOT 122, ESTALE 116, EMFILE 24.
        for n in [5, 28, 122, 116, 24] {
            assert!(
                io(IoError::from_raw_os_error(n)).is_retryable(),
                "errno {n}"
            );
        }
        // ENOENT 2, EACCES 13, EISDIR 21.
        for n in [2, 13, 21] {
            assert!(
                !io(IoError::from_raw_os_error(n)).is_retryable(),
                "errno {n}"
            );
        }
        assert!(!io(IoError::from(ErrorKind::InvalidData)).is_retryable());
        let bad = Error::Json {
            path: "x.json".into(),
            offset: 0,
            event_index: 0,
            reason: "x".into(),
        };
        assert!(!bad.is_retryable());
    }
}

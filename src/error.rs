//! Errors that stop one input file (or the whole run, for usage errors).
//!
//! Odd but usable data is not an error: it is counted in [`crate::vocab::Diagnostics`].
//! Every message names the file and says what is wrong and where (byte offset, event index).

use std::path::PathBuf;

/// An error that makes one input unreadable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be opened, mapped or read.
    #[error("cannot read {}: {source}", .path.display())]
    Io {
        /// The input.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The gzip stream is corrupt or cut off.
    #[error("{}: bad gzip data: {source}", .path.display())]
    Gzip {
        /// The input.
        path: PathBuf,
        /// The decoder's error.
        #[source]
        source: std::io::Error,
    },
    /// The content is not a trace (nor another accepted format).
    #[error("{}: not a trace: {reason}", .path.display())]
    NotATrace {
        /// The input.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },
    /// A JSON object of another kind (a `package.json`, a Lighthouse `devtoolslog.json`):
    /// skipped, not an error, when found by a folder search.
    #[error("{}: not a trace: {reason}", .path.display())]
    OtherJson {
        /// The input.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },
    /// A folder named on the command line holds no trace files.
    #[error("{}: no trace files (*.json, *.json.gz, *.cpuprofile) in this folder", .path.display())]
    NoTraces {
        /// The folder.
        path: PathBuf,
    },
    /// A glob pattern that matches no trace file.
    #[error("{}: no trace file (*.json, *.json.gz, *.cpuprofile) matches this pattern", .pattern.display())]
    NoMatch {
        /// The pattern.
        pattern: PathBuf,
    },
    /// An input left out on purpose, with a note: the same file reached by a second name,
    /// a symbolic link out of the folder searched, a folder nested too deep.
    #[error("{}: {reason}", .path.display())]
    LeftOut {
        /// The name left out.
        path: PathBuf,
        /// Why, and what was read instead.
        reason: String,
    },
    /// The event array is broken before any usable event.
    #[error("{}: invalid JSON at byte {offset} (event {event_index}): {reason}", .path.display())]
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

impl Error {
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
    /// A JSON object of some other kind (see [`error::Error::OtherJson`]).
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

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

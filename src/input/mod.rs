//! Input: a path (or `-` for standard input) → the bytes of one trace file.
//!
//! Plain files are memory-mapped read-only and never copied. Gzip is detected by its magic
//! bytes `1f 8b` (not by the file name) and decoded with a multi-member decoder, since
//! concatenated gzip members are one legal stream. [`envelope`] then says where the trace
//! events start.

pub mod envelope;
pub mod paths;

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// One input as given on the command line or found in a folder.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InputPath {
    /// A file named on the command line.
    File(PathBuf),
    /// A file found by searching a folder.
    Found(PathBuf),
    /// Standard input (`-`).
    Stdin,
}

impl InputPath {
    /// The path as reports show it (`-` for standard input).
    pub fn display_name(&self) -> String {
        match self {
            InputPath::File(p) | InputPath::Found(p) => p.display().to_string(),
            InputPath::Stdin => "-".to_string(),
        }
    }
    /// The path used in error messages.
    pub fn path(&self) -> PathBuf {
        match self {
            InputPath::File(p) | InputPath::Found(p) => p.clone(),
            InputPath::Stdin => PathBuf::from("-"),
        }
    }
}

/// The whole (decompressed) content of one input.
pub enum TraceBytes {
    /// A read-only map of a plain file.
    Mapped(memmap2::Mmap),
    /// Decoded gzip, standard input, or an empty file.
    Owned(Vec<u8>),
}

impl Deref for TraceBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            TraceBytes::Mapped(m) => m,
            TraceBytes::Owned(v) => v,
        }
    }
}

/// True when `b` starts with the gzip magic bytes.
pub fn is_gzip(b: &[u8]) -> bool {
    b.starts_with(&[0x1f, 0x8b])
}

/// Reads one input. Errors: [`Error::Io`] when it cannot be opened or read,
/// [`Error::Gzip`] when its gzip stream is corrupt.
pub fn read(input: &InputPath) -> Result<TraceBytes> {
    match input {
        InputPath::Stdin => {
            let mut v = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut v)
                .map_err(|source| Error::Io {
                    path: input.path(),
                    source,
                })?;
            decode_if_gzip(Path::new("-"), TraceBytes::Owned(v))
        }
        InputPath::File(path) | InputPath::Found(path) => {
            let io = |source| Error::Io {
                path: path.clone(),
                source,
            };
            let file = File::open(path).map_err(io)?;
            let len = file.metadata().map_err(io)?.len();
            if len == 0 {
                return Ok(TraceBytes::Owned(Vec::new()));
            }
            // SAFETY: the map is read-only; a file truncated by another process while we
            // read it can still fault (SIGBUS), as for every mmap-based reader.
            let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
            #[cfg(unix)]
            let _ = map.advise(memmap2::Advice::Sequential);
            decode_if_gzip(path, TraceBytes::Mapped(map))
        }
    }
}

fn decode_if_gzip(path: &Path, bytes: TraceBytes) -> Result<TraceBytes> {
    if !is_gzip(&bytes) {
        return Ok(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(8));
    flate2::read::MultiGzDecoder::new(&bytes[..])
        .read_to_end(&mut out)
        .map_err(|source| Error::Gzip {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(TraceBytes::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn multi_member_gzip_is_read_whole() {
        let mut all = Vec::new();
        for part in [&b"[{\"a\":1},"[..], &b"{\"b\":2}]"[..]] {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(part).unwrap();
            all.extend(e.finish().unwrap());
        }
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json"); // no .gz suffix: detected by magic bytes
        std::fs::write(&p, &all).unwrap();
        let b = read(&InputPath::File(p)).unwrap();
        assert_eq!(&b[..], b"[{\"a\":1},{\"b\":2}]");
    }

    #[test]
    fn missing_file_is_io_error_naming_it() {
        let e = read(&InputPath::File("/nonexistent/x.json".into()))
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .starts_with("cannot read /nonexistent/x.json:")
        );
    }
}

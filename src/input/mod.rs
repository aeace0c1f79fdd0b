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

/// One input's bytes, and what went wrong in a gzip stream after some data was decoded.
pub struct TraceData {
    /// The whole (decompressed) content.
    pub bytes: TraceBytes,
    /// Set when the gzip stream breaks off or has junk after its end: the part decoded
    /// before it is in `bytes`.
    pub gzip_problem: Option<String>,
}

/// Reads one input. Errors: [`Error::Io`] when it cannot be opened or read,
/// [`Error::Gzip`] when its gzip stream is broken before any data. Regular files are
/// mapped; pipes, FIFOs and devices are read as a stream.
pub fn read(input: &InputPath) -> Result<TraceData> {
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
            let mut file = File::open(path).map_err(io)?;
            let meta = file.metadata().map_err(io)?;
            if !meta.is_file() {
                let mut v = Vec::new();
                file.read_to_end(&mut v).map_err(io)?;
                return decode_if_gzip(path, TraceBytes::Owned(v));
            }
            let len = meta.len();
            if len == 0 {
                return decode_if_gzip(path, TraceBytes::Owned(Vec::new()));
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

fn decode_if_gzip(path: &Path, bytes: TraceBytes) -> Result<TraceData> {
    if !is_gzip(&bytes) {
        return Ok(TraceData {
            bytes,
            gzip_problem: None,
        });
    }
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(8));
    let problem = match flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut out) {
        Ok(_) => None,
        Err(source) if out.is_empty() => {
            return Err(Error::Gzip {
                path: path.to_path_buf(),
                source,
            });
        }
        // Cut off, or junk after the last member (`gzip -d` also keeps what it decoded).
        Err(e) => Some(format!(
            "gzip stream broken after {} decoded bytes ({e}); the decoded part was used",
            out.len()
        )),
    };
    Ok(TraceData {
        bytes: TraceBytes::Owned(out),
        gzip_problem: problem,
    })
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
        let b = read(&InputPath::File(p.clone())).unwrap();
        assert_eq!(&b.bytes[..], b"[{\"a\":1},{\"b\":2}]");
        assert_eq!(b.gzip_problem, None);
        // Cut off in the second member: the first member's bytes are kept.
        std::fs::write(&p, &all[..all.len() - 10]).unwrap();
        let b = read(&InputPath::File(p)).unwrap();
        assert!(b.bytes.starts_with(b"[{\"a\":1},"));
        assert!(
            b.gzip_problem
                .unwrap()
                .starts_with("gzip stream broken after")
        );
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

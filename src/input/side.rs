//! Side inputs: every file taskchain reads besides the traces (source maps, scripts and
//! original sources, `--party-overrides`, `--tasks`, `--files-from`) is read here, under
//! the rules trace inputs have: a regular file up to a size limit, a FIFO once something
//! writes to it within [`super::FIFO_WAIT_MS`] (10 s) and up to the same limit, and no
//! device, socket or folder (refused by name: `/dev/zero` would never end, a FIFO nothing
//! writes to would wait forever). Memory for the bytes is asked for before they are read,
//! so a file whose size cannot be had costs that file, not the run.

use std::io::Read;
use std::path::Path;

/// Why a side input was not read.
#[derive(Debug)]
pub(crate) struct SideError {
    /// What is wrong, as a phrase after the file's name (`is 80000000 bytes, over the
    /// limit of 64 MiB`, `cannot be read (…)`, `is a character device, …`).
    pub(crate) why: String,
    /// The file is larger than the limit (it exists and is readable).
    pub(crate) over_limit: bool,
}

impl SideError {
    fn new(why: String) -> Self {
        SideError {
            why,
            over_limit: false,
        }
    }
}

/// Reads the file at `path` whole, refusing more than `limit` bytes, a FIFO nothing writes
/// to within 10 s, and anything that is not a regular file or a FIFO.
pub(crate) fn read(path: &Path, limit: u64) -> Result<Vec<u8>, SideError> {
    let io = |e: std::io::Error| SideError::new(format!("cannot be read ({e})"));
    let meta = std::fs::metadata(path).map_err(io)?;
    let over = |len: Option<u64>| SideError {
        why: match len {
            Some(len) => format!("is {len} bytes, over the limit of {}", limit_text(limit)),
            None => format!("is over the limit of {}", limit_text(limit)),
        },
        over_limit: true,
    };
    let kind = meta.file_type();
    let file = if kind.is_file() {
        if meta.len() > limit {
            return Err(over(Some(meta.len())));
        }
        std::fs::File::open(path).map_err(io)?
    } else {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if !kind.is_fifo() {
                return Err(SideError::new(format!("is {}", super::special_kind(&kind))));
            }
            match super::open_fifo(path) {
                Ok(f) => f,
                Err(super::FifoError::Io(e)) => return Err(io(e)),
                Err(super::FifoError::Silent(why)) => {
                    return Err(SideError::new(format!("is {why}")));
                }
            }
        }
        #[cfg(not(unix))]
        return Err(SideError::new(format!("is {}", super::special_kind(&kind))));
    };
    let mut out = Vec::new();
    let want = if kind.is_file() { meta.len() } else { 64 << 10 };
    out.try_reserve_exact(want as usize)
        .map_err(|_| SideError::new(format!("cannot be read: no memory for its {want} bytes")))?;
    file.take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(io)?;
    if out.len() as u64 > limit {
        return Err(over(None));
    }
    Ok(out)
}

/// `64 MiB`, `512 KiB` or `100 bytes`.
fn limit_text(limit: u64) -> String {
    if limit >= 1 << 20 && limit.is_multiple_of(1 << 20) {
        format!("{} MiB", limit >> 20)
    } else if limit >= 1 << 10 && limit.is_multiple_of(1 << 10) {
        format!("{} KiB", limit >> 10)
    } else {
        format!("{limit} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn side_inputs_refuse_devices_silent_fifos_and_what_is_over_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x.json");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read(&f, 10).unwrap(), b"0123456789");
        let e = read(&f, 9).unwrap_err();
        assert!(e.over_limit);
        assert_eq!(e.why, "is 10 bytes, over the limit of 9 bytes");
        #[cfg(unix)]
        {
            let e = read(Path::new("/dev/zero"), 1 << 20).unwrap_err();
            assert_eq!(e.why, "is a character device, not a regular file or a pipe");
            assert!(!e.over_limit);
            let e = read(dir.path(), 1 << 20).unwrap_err();
            assert!(
                e.why.contains("cannot be read") || e.why.contains("folder"),
                "{}",
                e.why
            );
            // A FIFO nothing writes to is refused after the wait (shortened here).
            let fifo = dir.path().join("p.map");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: mkfifo on a path in a fresh temporary folder.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            let before = crate::input::FIFO_WAIT_MS.swap(200, Ordering::Relaxed);
            let t = std::time::Instant::now();
            let e = read(&fifo, 1 << 20).unwrap_err();
            crate::input::FIFO_WAIT_MS.store(before, Ordering::Relaxed);
            assert!(e.why.contains("nothing wrote to within 0.2 s"), "{}", e.why);
            assert!(t.elapsed() < std::time::Duration::from_secs(5));
            // A FIFO written to is read, up to the limit.
            let writer = {
                let fifo = fifo.clone();
                std::thread::spawn(move || {
                    std::fs::write(&fifo, vec![b'a'; 100]).unwrap();
                })
            };
            let e = read(&fifo, 50).unwrap_err();
            assert_eq!(e.why, "is over the limit of 50 bytes");
            writer.join().unwrap();
        }
    }
}

//! Advice to the kernel about the pages of an input held in memory, given range by range
//! by the stage that reads them (the scan walks a large file in ranges on several
//! threads, so each thread advises on its own range and the kernel's work is shared).
//!
//! Only a read-only map of a file takes advice: its page-table entries can be filled in
//! one call before a range is read (Linux `MADV_POPULATE_READ`, 5.14 and later; else the
//! pages fault in as they are read), and dropped once it has been read (`MADV_DONTNEED`:
//! the pages stay in the page cache, and a later read faults them in again with the same
//! bytes). Bytes we own are never advised: `MADV_DONTNEED` would zero them.

/// What the bytes being read are, as far as advice about their pages goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pages {
    /// Memory of our own (or of unknown kind): no advice.
    Owned,
    /// A read-only map of a file (private or shared), whose pages can be dropped and
    /// faulted in again at will.
    FileMap,
}

impl Pages {
    /// Before `range` (bytes of the input) is read whole: fills its page-table entries in
    /// one call rather than a fault every few pages. Advice only: failure is ignored.
    #[inline]
    pub(crate) fn will_read(self, range: &[u8]) {
        #[cfg(target_os = "linux")]
        if self == Pages::FileMap {
            advise(range, libc::MADV_POPULATE_READ);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = range;
    }

    /// After `range` (bytes of the input) has been read and is not needed again (field
    /// data, once parsed): lets its pages go, so that they no longer count in the
    /// process's memory. A later read of them faults them in again.
    #[inline]
    pub(crate) fn done_with(self, range: &[u8]) {
        #[cfg(unix)]
        if self == Pages::FileMap {
            advise(range, libc::MADV_DONTNEED);
        }
        #[cfg(not(unix))]
        let _ = range;
    }
}

/// `madvise(advice)` over the whole pages that hold `range`.
#[cfg(unix)]
fn advise(range: &[u8], advice: libc::c_int) {
    if range.is_empty() {
        return;
    }
    // SAFETY: sysconf has no preconditions.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => return,
    };
    let start = range.as_ptr() as usize;
    let from = start & !(page - 1);
    let to = start + range.len();
    // SAFETY: [from, to) covers the pages of `range`, which belong to one read-only file
    // map (`Pages::FileMap` is only given for such bytes; a map starts on a page and its
    // last page is mapped whole). Neither advice changes the bytes a read of the map
    // sees: POPULATE_READ only fills page tables, and DONTNEED on a file map only drops
    // them, the next read faulting the same bytes in from the page cache.
    let _ = unsafe { libc::madvise(from as *mut libc::c_void, to - from, advice) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_on_a_file_map_leaves_its_bytes_as_they_are() {
        use std::io::Write;
        let mut f = tempfile::tempfile().unwrap();
        let bytes: Vec<u8> = (0..3 * 4096 + 100).map(|i| (i % 251) as u8).collect();
        f.write_all(&bytes).unwrap();
        // SAFETY: a private temporary file nobody else writes.
        let map = unsafe { memmap2::Mmap::map(&f) }.unwrap();
        let middle = &map[4000..9000];
        Pages::FileMap.will_read(middle);
        assert_eq!(middle, &bytes[4000..9000]);
        Pages::FileMap.done_with(middle);
        // Dropped pages fault in again with the file's bytes.
        assert_eq!(&map[..], &bytes[..]);
        Pages::FileMap.done_with(&map);
        assert_eq!(&map[..], &bytes[..]);
    }

    #[test]
    fn owned_bytes_are_never_advised() {
        // DONTNEED on our own (private anonymous) memory would zero it: Owned gives none.
        let v: Vec<u8> = vec![7; 5 * 4096];
        Pages::Owned.will_read(&v);
        Pages::Owned.done_with(&v);
        assert!(v.iter().all(|&b| b == 7));
    }
}

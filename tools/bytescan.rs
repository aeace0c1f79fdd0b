//! Yardstick for scripts/bench.sh: the fastest possible pass over traces — map each file
//! (or inflate a .gz with the decoder taskchain uses for it: libdeflate for one gzip
//! member of at most 48 MiB inflated, into one reused buffer; else flate2 on zlib-rs, CPU
//! features detected at run time, into one reused 4 MB block) and count `{` bytes with
//! memchr.
//! With `--zlib-rs`, every .gz goes through flate2 on zlib-rs (the yardstick of BENCHMARKS.md:
//! zlib-rs inflate and memchr), small ones too.
//! Files are shared among `-j N` threads (default 1), each taking the next file, as a
//! batch run of taskchain does. Prints the count.
//!
//! Usage: cargo run --release --example bytescan -- [--zlib-rs] [-j N] FILE...

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The count of `{` in `gz` inflated into `whole` when taskchain inflates it whole with
/// libdeflate (one gzip member of at most 48 MiB inflated), read the same way.
fn one_member(gz: &[u8], whole: &mut Vec<u8>) -> Option<usize> {
    let size = taskchain::internals::input::inflated_whole_size(gz)?;
    taskchain::internals::input::one_member_into(gz, size, whole)
        .then(|| memchr::memchr_iter(b'{', whole).count())
}

fn count(
    path: &str,
    buf: &mut [u8],
    whole: &mut Vec<u8>,
    zlib_only: bool,
) -> std::io::Result<usize> {
    let file = std::fs::File::open(path)?;
    // SAFETY: read-only map of a file nobody is expected to truncate during the run.
    let map = unsafe { memmap2::Mmap::map(&file)? };
    if !map.starts_with(&[0x1f, 0x8b]) {
        return Ok(memchr::memchr_iter(b'{', &map).count());
    }
    if !zlib_only && let Some(n) = one_member(&map, whole) {
        return Ok(n);
    }
    let mut dec = flate2::read::MultiGzDecoder::new(&map[..]);
    let mut n = 0usize;
    loop {
        let got = dec.read(buf)?;
        if got == 0 {
            return Ok(n);
        }
        n += memchr::memchr_iter(b'{', &buf[..got]).count();
    }
}

fn main() -> std::io::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let zlib_only = args.first().map(String::as_str) == Some("--zlib-rs");
    if zlib_only {
        args.remove(0);
    }
    let mut jobs = 1usize;
    if args.first().map(String::as_str) == Some("-j") && args.len() > 1 {
        jobs = args[1].parse().expect("-j N: a number of threads");
        args.drain(..2);
    }
    assert!(
        !args.is_empty(),
        "usage: bytescan [--zlib-rs] [-j N] FILE..."
    );
    let next = AtomicUsize::new(0);
    let total = std::thread::scope(|s| {
        let workers: Vec<_> = (0..jobs.max(1))
            .map(|_| {
                s.spawn(|| -> std::io::Result<usize> {
                    let (mut buf, mut whole) = (vec![0u8; 4 << 20], Vec::new());
                    let mut n = 0;
                    while let Some(path) = args.get(next.fetch_add(1, Ordering::Relaxed)) {
                        n += count(path, &mut buf, &mut whole, zlib_only)?;
                    }
                    Ok(n)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker panicked"))
            .sum::<std::io::Result<usize>>()
    })?;
    println!("{total}");
    Ok(())
}

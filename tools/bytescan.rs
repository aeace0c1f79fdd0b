//! Baseline for scripts/bench.sh: the fastest possible pass over a trace — map the file
//! (or stream a .gz through the same decoder taskchain uses) and count `{` bytes with
//! memchr on one thread. Prints the count.
//!
//! Usage: cargo run --release --example bytescan -- FILE

use std::io::Read;

fn main() -> std::io::Result<()> {
    let path = std::env::args().nth(1).expect("usage: bytescan FILE");
    let file = std::fs::File::open(&path)?;
    // SAFETY: read-only map of a file nobody is expected to truncate during the run.
    let map = unsafe { memmap2::Mmap::map(&file)? };
    let count = if map.starts_with(&[0x1f, 0x8b]) {
        let mut dec = flate2::read::MultiGzDecoder::new(&map[..]);
        let mut buf = vec![0u8; 1 << 20];
        let mut n = 0usize;
        loop {
            let got = dec.read(&mut buf)?;
            if got == 0 {
                break;
            }
            n += memchr::memchr_iter(b'{', &buf[..got]).count();
        }
        n
    } else {
        memchr::memchr_iter(b'{', &map).count()
    };
    println!("{count}");
    Ok(())
}

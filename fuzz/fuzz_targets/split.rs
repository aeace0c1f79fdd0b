//! The parallel scan gives what the sequential one gives: the same bytes analysed on one
//! thread (one walk, in the usual 16 MB steps) and on two threads with the event array cut
//! into ranges of 16–264 bytes (so that small inputs are split, the split points guessed
//! and verified, and ranges walked again where a guess was wrong), as `-j1` and `-j2` do on
//! large files. The two reports must be the same, warnings and errors included.
#![no_main]

mod common;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use taskchain::analyze_bytes;
use taskchain::internals::scan::with_range_bytes;

fn pool(threads: usize) -> &'static rayon::ThreadPool {
    static POOLS: [OnceLock<rayon::ThreadPool>; 2] = [OnceLock::new(), OnceLock::new()];
    POOLS[threads - 1].get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool")
    })
}

fuzz_target!(|data: &[u8]| {
    let (knobs, trace) = common::control(data);
    let settings = common::settings(knobs);
    let range = 16 + (knobs as usize >> 3) * 8;
    let one = pool(1).install(|| analyze_bytes("f", trace, &settings));
    let two = pool(2).install(|| with_range_bytes(range, || analyze_bytes("f", trace, &settings)));
    common::assert_same("one thread vs two in ranges", &one, &two);
});

//! Arbitrary bytes through the whole pipeline, both ways a trace can arrive: as one buffer
//! (scan in ranges, sample arrays left in the file) and as a stream of small blocks
//! (arrays read at once, as from standard input). Never a panic, never an out-of-bounds
//! read; and both ways must give the same report (rows, counts, warnings) or the same
//! error.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use taskchain::analyze_bytes;
use taskchain::internals::analyze_stream;

fuzz_target!(|data: &[u8]| {
    let (knobs, trace) = common::control(data);
    let settings = common::settings(knobs);
    let whole = analyze_bytes("f", trace, &settings);
    let block = 1 + (knobs as usize >> 3);
    let blocks = trace
        .chunks(block)
        .map(|c| Ok(c.to_vec()))
        .collect::<Vec<_>>();
    let streamed = analyze_stream("f", blocks.into_iter(), &settings);
    common::assert_same("whole vs streamed", &whole, &streamed);
});

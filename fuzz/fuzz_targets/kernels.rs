//! Every instruction set's copy of the number-array kernels (scalar, SSE2, SSSE3,
//! AVX-512BW where the CPU has it) gives what the scalar reference gives on the same
//! bytes: `plain_sum`, `digit_array_end`, `plain_uints_into`; and the block operations
//! under them (`classify64`, `classify16`, `shifted_equal64`) give the scalar bits; and
//! the container skip 64 and 16 bytes a step ends where the byte-by-byte one does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use taskchain::internals::json::copies::{blocks_on_every_copy, every_copy, skips_on_every_copy};

fuzz_target!(|data: &[u8]| {
    // The array kernels read an array at the start; one is opened when the input lacks it.
    let owned;
    let b = if data.first() == Some(&b'[') {
        data
    } else {
        owned = [b"[".as_slice(), data].concat();
        &owned
    };
    let c = every_copy(b);
    for (name, got) in &c.sums[1..] {
        assert_eq!(*got, c.sums[0].1, "{name} plain_sum");
    }
    for (name, got) in &c.ends[1..] {
        assert_eq!(*got, c.ends[0].1, "{name} digit_array_end");
    }
    for (name, got) in &c.uints[1..] {
        assert_eq!(*got, c.uints[0].1, "{name} plain_uints_into");
    }
    // The block operations, on the first 80 bytes (padded with commas).
    let mut w = [b','; 80];
    let n = data.len().min(80);
    w[..n].copy_from_slice(&data[..n]);
    let blocks = blocks_on_every_copy(&w);
    for (name, got) in &blocks[1..] {
        assert_eq!(*got, blocks[0].1, "{name} block operations");
    }
    // The container skip, on the input as it is (an object or array at its start).
    let skips = skips_on_every_copy(data);
    for (name, got) in skips.iter().skip(1) {
        assert_eq!(*got, skips[0].1, "{name} container skip");
    }
});

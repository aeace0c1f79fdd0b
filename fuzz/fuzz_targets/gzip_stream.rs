//! A trace read from gzip gives what the same bytes give read whole: the input is
//! compressed (as one gzip member, or as two members cut at a byte the control byte picks,
//! as `cat a.gz b.gz` makes), inflated by taskchain's gzip reader and handed to the stream
//! scan in blocks of 1–32 bytes, and the report must be the one of the plain bytes mapped
//! (sample arrays left in the file), warnings and errors included. libdeflate's
//! whole-member read, and the read of a file inflated whole (into reused buffers), agree
//! with the reader on those bytes and on the raw input.
#![no_main]

mod common;

use std::io::{Read, Write};

use flate2::Compression;
use flate2::write::GzEncoder;
use libfuzzer_sys::fuzz_target;
use taskchain::analyze_bytes;
use taskchain::internals::analyze_stream;
use taskchain::internals::input::{GzipReader, inflated_whole, one_member_into};

fn gzip(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for part in parts {
        let mut e = GzEncoder::new(Vec::new(), Compression::fast());
        e.write_all(part).expect("in memory");
        out.extend(e.finish().expect("in memory"));
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let (knobs, trace) = common::control(data);
    let settings = common::settings(knobs);
    let block = 1 + (knobs as usize >> 3);
    // Bit 2 (also the fallback policy): two members, cut in the middle.
    let compressed = if knobs & 4 == 0 {
        gzip(&[trace])
    } else {
        let (a, b) = trace.split_at(trace.len() / 2);
        gzip(&[a, b])
    };
    // libdeflate's whole-member read (taskchain's for one member of a known size) gives
    // what the reader gives whenever it takes the bytes: the member made here (which it
    // must take), the two made here (which it must not), the fuzzer's raw bytes.
    for (gz, one) in [(&compressed[..], Some(knobs & 4 == 0)), (data, None)] {
        let size = gz.len().checked_sub(4).map_or(0, |n| {
            u32::from_le_bytes(gz[n..].try_into().expect("4 bytes")) as usize
        });
        let mut whole = Vec::new();
        let took = one_member_into(gz, size.min(1 << 24), &mut whole);
        if let Some(one) = one {
            assert_eq!(took, one, "one member taken whole");
        }
        if took {
            let mut out = Vec::new();
            GzipReader::new(gz)
                .read_to_end(&mut out)
                .expect("the reader reads what libdeflate reads");
            assert_eq!(whole, out, "libdeflate vs the reader");
        }
        // Read whole as a `.json.gz` file is, in a buffer reused from input to input:
        // the reader's bytes, none of an earlier input's.
        if let Some(inflated) = inflated_whole(gz) {
            let mut out = Vec::new();
            GzipReader::new(gz)
                .read_to_end(&mut out)
                .expect("what is read whole reads to its end");
            assert!(*inflated == out[..], "read whole vs the reader");
        }
    }
    let mut reader = GzipReader::new(&compressed);
    let blocks = std::iter::from_fn(move || {
        let mut buf = vec![0; block];
        match reader.read(&mut buf) {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some(Ok(buf))
            }
            Err(e) => Some(Err(e)),
        }
    });
    let streamed = analyze_stream("f", blocks, &settings);
    let whole = analyze_bytes("f", trace, &settings);
    common::assert_same("plain vs gzip", &whole, &streamed);
});

//! The Perfetto protobuf reader on any bytes: it never panics, and the packet walk of the
//! bytes in blocks of 1–64 bytes (as a gzip stream hands them over) gives what the walk of
//! the bytes whole gives: the same events, task marks, profiles, thread names, warnings
//! and end. Then the whole analysis, read whole and streamed, must agree (the bytes after
//! a first packet `0a 02 08 00`, so that they are sniffed as protobuf when they go on with
//! another packet).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use taskchain::analyze_bytes;
use taskchain::internals::analyze_stream;
use taskchain::internals::scan::{ScannedTrace, scan_proto, scan_proto_stream};

/// What the two walks must agree on.
fn summary(t: &ScannedTrace) -> String {
    let mut names: Vec<_> = t.thread_names.iter().collect();
    names.sort();
    format!(
        "{} {:?} {} {} {} {:?} {:?} {:?} {:?}",
        t.events,
        t.end,
        t.task_marks.len(),
        t.profiles.len(),
        t.profile_data.len(),
        names,
        t.first_ts,
        t.last_ts,
        t.diagnostics
    )
}

fuzz_target!(|data: &[u8]| {
    let (knobs, trace) = common::control(data);
    let block = 1 + (knobs as usize >> 2);
    let whole = scan_proto(trace);
    let mut blocks = trace.chunks(block).map(|c| Ok(c.to_vec()));
    let (streamed, error) = scan_proto_stream(Vec::new(), true, &mut blocks);
    assert!(error.is_none());
    assert_eq!(summary(&whole), summary(&streamed), "blocks of {block}");

    let mut framed = vec![0x0a, 0x02, 0x08, 0x00];
    framed.extend_from_slice(trace);
    let settings = common::settings(knobs);
    let a = analyze_bytes("f.pftrace", &framed, &settings);
    let blocks = framed.chunks(block).map(|c| Ok(c.to_vec()));
    let b = analyze_stream("f.pftrace", blocks, &settings);
    common::assert_same("proto whole vs streamed", &a, &b);
});

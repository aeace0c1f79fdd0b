//! Inputs the fuzzer (fuzz/fuzz_targets/pipeline.rs) once broke, kept so they stay fixed:
//! each must give the same long tasks (or the same error) read whole and read as a stream
//! of small blocks. The first byte of each file is the fuzz target's control byte.
//! `slow-envelope-1-byte-blocks` took 10 s in 1-byte blocks (the envelope was looked for
//! again after every block); it now takes milliseconds. `leading-comma-in-event-array`
//! (`[,{...}]`) and `number-before-first-event` (`[1,{...}]`) were refused read whole (the
//! first element was not an object) but read as a stream; both ways now read the events,
//! and an array with no object at all is refused the same way by both.
//! `chunk-args-cut-by-a-block`: `ProfileChunk` args with braces inside a number array,
//! cut by a block boundary; the stream skipped the cut args by their braces (ending them
//! early) where the whole file read them to their real end. Cut chunk args now wait for
//! the rest of the bytes.

use taskchain::{Settings, analyze_bytes, analyze_stream};

#[test]
fn whole_and_streamed_reads_agree() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        let (control, trace) = data.split_at(1);
        let s = Settings::default();
        let whole = analyze_bytes("f", trace, &s);
        let block = 1 + (control[0] as usize >> 3);
        let blocks: Vec<std::io::Result<Vec<u8>>> =
            trace.chunks(block).map(|c| Ok(c.to_vec())).collect();
        let streamed = analyze_stream("f", blocks.into_iter(), &s);
        match (whole, streamed) {
            (Ok(a), Ok(b)) => assert_eq!(a.rows, b.rows),
            (Err(a), Err(b)) => assert_eq!(a, b),
            (a, b) => panic!("whole {:?} vs streamed {:?}", a.err(), b.err()),
        }
        n += 1;
    }
    assert!(n >= 3);
}

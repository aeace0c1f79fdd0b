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
//! the rest of the bytes. `url-cut-inside-a-character` (a `.cpuprofile`, from the
//! `field_readers` target): a frame URL with bytes of a character across byte 11, where
//! `filesystem:` would end, panicked in the party lookup (a `str` sliced inside a
//! character) and the file was lost as an internal error.

use taskchain::internals::analyze_stream;
use taskchain::{Settings, analyze_bytes};

/// The bytes of `tests/fuzz-regressions/<name>` after its control byte.
fn regression_trace(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-regressions")
        .join(name);
    std::fs::read(path).unwrap()[1..].to_vec()
}

/// Checks that `trace` read whole and as a stream of blocks of 1, 2, 3, 7 and 4,096 bytes
/// gives the one note `note` and the same rows.
fn one_note_everywhere(trace: &[u8], note: &str) {
    let s = Settings::default();
    let whole = analyze_bytes("f", trace, &s).unwrap();
    assert_eq!(whole.diagnostics.notes(), [note]);
    for block in [1, 2, 3, 7, 4096] {
        let blocks: Vec<std::io::Result<Vec<u8>>> =
            trace.chunks(block).map(|c| Ok(c.to_vec())).collect();
        let streamed = analyze_stream("f", blocks.into_iter(), &s).unwrap();
        assert_eq!(
            streamed.diagnostics.notes(),
            [note],
            "{note}: blocks of {block}"
        );
        assert_eq!(streamed.rows, whole.rows, "{note}: blocks of {block}");
    }
}

/// Reads `tests/fuzz-regressions/<name>` whole and as a stream of blocks (the size the
/// control byte says) and checks they agree: the same rows, or the same error.
fn whole_and_streamed_agree(name: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-regressions")
        .join(name);
    let data = std::fs::read(&path).unwrap();
    let (control, trace) = data.split_at(1);
    let s = Settings::default();
    let whole = analyze_bytes("f", trace, &s);
    let block = 1 + (control[0] as usize >> 3);
    let blocks: Vec<std::io::Result<Vec<u8>>> =
        trace.chunks(block).map(|c| Ok(c.to_vec())).collect();
    let streamed = analyze_stream("f", blocks.into_iter(), &s);
    match (whole, streamed) {
        (Ok(a), Ok(b)) => assert_eq!(a.rows, b.rows, "{name}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}"),
        (a, b) => panic!("{name}: whole {:?} vs streamed {:?}", a.err(), b.err()),
    }
}

/// One test per file, named after it; `FILES` lists them for the completeness check.
macro_rules! regressions {
    ($($test:ident => $file:literal,)*) => {
        $(#[test] fn $test() { whole_and_streamed_agree($file); })*
        const FILES: &[&str] = &[$($file),*];
    };
}

regressions! {
    chunk_args_cut_by_a_block => "chunk-args-cut-by-a-block",
    leading_comma_in_event_array => "leading-comma-in-event-array",
    number_before_first_event => "number-before-first-event",
    url_cut_inside_a_character => "url-cut-inside-a-character",
    whole_vs_stream_115b8ca4 => "whole-vs-stream-115b8ca4",
    whole_vs_stream_8b622367 => "whole-vs-stream-8b622367",
}

/// `url-cut-inside-a-character` in a valid file: `samples/field-cpuprofile` with its URL
/// made `/ü例/w.js` (`例` is bytes 4–6, across byte 5 where `blob:` would end) gives that
/// sample's one row (`expected/tasks.csv`: 60 ms from 501 ms, confidence 1, the `work`
/// frame at 5:3) with the URL kept.
#[test]
fn url_cut_inside_a_character_keeps_its_row() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples/field-cpuprofile/trace.cpuprofile");
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace("file:///w.js", "/ü例/w.js");
    let rep = analyze_bytes("f", text.as_bytes(), &Settings::default()).unwrap();
    assert_eq!(rep.rows.len(), 1);
    let row = &rep.rows[0];
    assert_eq!(
        row.task_dur,
        taskchain::time::TimeDelta::from_micros(60_000)
    );
    assert_eq!(row.confidence, 1.0);
    assert_eq!(
        taskchain::report::chain_text(&row.chain),
        "work (/ü例/w.js:5:3)"
    );
}

/// The file that took 10 s in 1-byte blocks: bounded at 5 s (milliseconds in a release
/// build; the bound leaves room for a debug build on a loaded machine).
#[test]
fn slow_envelope_1_byte_blocks() {
    let start = std::time::Instant::now();
    whole_and_streamed_agree("slow-envelope-1-byte-blocks");
    let took = start.elapsed();
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
}

/// `trailing-bytes-unwarned-in-stream` (a bare `[...]` trace, damaged inside, then 19,991
/// bytes that are no trace): read in blocks of 1–3 bytes, the stream's block ended right
/// after the `]`, that was taken for the end of the input and the bytes after it went
/// unwarned. Every block size now says what the whole file says: the 37,091-byte trace's
/// array closes at byte 17,099, so bytes 17,100.. (37,091 − 17,100 = 19,991) are ignored.
#[test]
fn trailing_bytes_unwarned_in_stream() {
    let trace = regression_trace("trailing-bytes-unwarned-in-stream");
    assert_eq!(trace.len(), 37_091);
    one_note_everywhere(
        &trace,
        "19991 bytes after the end of the trace, from byte 17100, ignored (not trace events)",
    );
}

/// `split-walk-resumed-past-the-next-guess` (from the `split` target): read on two threads
/// in ranges of 16 bytes, a range whose guessed start was wrong is walked again from where
/// the walk before it ended, which was past the next range's guessed start; the page
/// advice before that walk sliced the bytes backwards and panicked (the file was lost as
/// an internal error). It must give what one thread gives (the control byte sets the
/// threshold to 0).
#[test]
fn split_walk_resumed_past_the_next_guess() {
    use taskchain::internals::scan::with_range_bytes;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-regressions/split-walk-resumed-past-the-next-guess");
    let data = std::fs::read(path).unwrap();
    let trace = &data[1..];
    let s = Settings {
        threshold: taskchain::time::TimeDelta::ZERO,
        ..Settings::default()
    };
    let pool = |n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let one = pool(1).install(|| analyze_bytes("f", trace, &s).unwrap());
    let two = pool(2).install(|| with_range_bytes(16, || analyze_bytes("f", trace, &s).unwrap()));
    // Its 37 events: one profile of 600 samples (one chunk's arrays of unequal length),
    // no task on a renderer main thread.
    assert_eq!(
        (one.events, one.stats.profiles, one.stats.samples),
        (37, 1, 600)
    );
    assert_eq!(one.rows, two.rows);
    assert_eq!(one.diagnostics, two.diagnostics);
    assert_eq!((two.events, two.stats.samples), (37, 600));
}

#[test]
fn every_regression_file_has_its_test() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let mut on_disk: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut tested: Vec<String> = FILES.iter().map(|s| s.to_string()).collect();
    tested.push("slow-envelope-1-byte-blocks".into());
    tested.push("trailing-bytes-unwarned-in-stream".into());
    tested.push("split-walk-resumed-past-the-next-guess".into());
    tested.push("nul-bytes-then-brace-after-the-end".into());
    tested.sort();
    assert_eq!(on_disk, tested);
}

/// `nul-bytes-then-brace-after-the-end` (from the `pipeline` target): a DevTools-style
/// trace whose event array's `]` (byte 9,066) is followed by 80 NUL bytes and then the
/// object's `}` and a newline. Read whole, the 82 bytes after the `]` are "not trace events"
/// (a `}` is among them); read in 1-byte blocks, the stream had so far seen only NULs after
/// the `]` when it judged them, called them "NUL padding" and did not look at the rest.
/// Every block size now says what the whole file says, and with the `}` made a NUL too both
/// ways say "NUL padding".
#[test]
fn nul_bytes_then_more_after_the_end_are_not_padding() {
    let trace = regression_trace("nul-bytes-then-brace-after-the-end");
    assert_eq!(trace.len(), 9_149);
    let mut padded = trace.clone();
    padded[9_147] = 0; // the `}` before the final newline
    for (bytes, what) in [(&trace, "not trace events"), (&padded, "NUL padding")] {
        one_note_everywhere(
            bytes,
            &format!("82 bytes after the end of the trace, from byte 9067, ignored ({what})"),
        );
    }
}

//! Golden tests: every case in `samples/` must give exactly `expected/tasks.csv`, with 1
//! and with 2 worker threads. `BLESS=1 cargo test --test samples` rewrites the expected
//! files; a blessed file is a claim, so check its diff by hand or against the ground truth
//! (`tests/ground_truth.rs`, `scripts/reference.py`) before committing.

mod common;

use common::*;
use taskchain::report::Format;

fn first_difference(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}:\n  expected: {x}\n  actual:   {y}", i + 1);
        }
    }
    format!(
        "line counts differ: expected {}, actual {}",
        a.lines().count(),
        b.lines().count()
    )
}

fn check(case: &str) {
    let args = case_args(case);
    let path = trace_path(case);
    let one = report(&args, std::slice::from_ref(&path), Format::Csv, 1);
    let two = report(&args, &[path], Format::Csv, 2);
    assert_eq!(one, two, "{case}: -j1 and -j2 differ");
    let actual = String::from_utf8(one).unwrap();
    let expected_path = case_dir(case).join("expected/tasks.csv");
    if std::env::var_os("BLESS").is_some() {
        std::fs::create_dir_all(expected_path.parent().unwrap()).unwrap();
        std::fs::write(&expected_path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&expected_path)
        .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
    if expected != actual {
        let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("samples-actual")
            .join(case);
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("tasks.csv"), &actual).unwrap();
        panic!(
            "{case}: output differs from expected ({} written); {}",
            out.join("tasks.csv").display(),
            first_difference(&expected, &actual)
        );
    }
}

macro_rules! cases {
    ($($name:ident => $dir:literal,)*) => {
        $(#[test] fn $name() { check($dir); })*
        const CASES: &[&str] = &[$($dir),*];
    };
}

cases! {
    cpu_profiler_m86 => "cpu-profiler-m86",
    recursive_blocking_js => "recursive-blocking-js",
    chrome_70_worker => "chrome-70-worker",
    chrome_66_cpuprofile_worker => "chrome-66-cpuprofile-worker",
    multiple_top_level_renderers => "multiple-top-level-renderers",
    timespan_no_profile_m103 => "timespan-no-profile-m103",
    chromium_click_chain => "chromium-click-chain",
    chromium_iframes => "chromium-iframes",
    chromium_native_layout => "chromium-native-layout",
    chromium_session_15s => "chromium-session-15s",
    chromium_split_70_30 => "chromium-split-70-30",
    chromium_startup_load_browsertarget => "chromium-startup-load-browsertarget",
    chromium_worker_and_main => "chromium-worker-and-main",
    truncated_click_chain => "truncated-click-chain",
    field_bundle => "field-bundle",
    field_cpuprofile => "field-cpuprofile",
    field_legacy_profile => "field-legacy-profile",
    field_chromium_bundle => "field-chromium-bundle",
    node_cpu_prof => "node-cpu-prof",
}

#[test]
fn every_sample_folder_is_a_case() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let mut listed: Vec<String> = CASES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed);
}

/// Every event of every sample trace: the compact event parse (tried first) and the
/// general one give the same event, and the compact one reads every event of the traces
/// in Chrome's own layout (it would otherwise silently stop paying for itself); the
/// pretty-printed DevTools fixture is the general parse's.
#[test]
fn compact_and_general_event_parses_agree_on_every_sample_event() {
    use std::io::Read;
    use taskchain::scan::envelope::{Envelope, detect};
    use taskchain::scan::{self, event::TraceEvent};
    let mut total = 0;
    for case in CASES {
        let path = case_dir(case).join(trace_path(case).file_name().unwrap());
        let raw = std::fs::read(&path).unwrap();
        let b = if path.extension().is_some_and(|e| e == "gz") {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(&raw[..])
                .read_to_end(&mut out)
                .unwrap();
            out
        } else {
            raw
        };
        let Ok(Envelope::Events { start, .. }) = detect(&b) else {
            continue; // .cpuprofile files hold no event array
        };
        let (mut events, mut compact) = (0usize, 0usize);
        scan::walk(&b, start, usize::MAX, false, |ev| {
            let at = ev.offset as usize;
            let (general, end) = TraceEvent::parse_general(&b, at, 0).unwrap();
            assert_eq!(*ev, general, "{case}: event at byte {at}");
            if let Some((fast, fast_end)) = TraceEvent::parse_compact(&b, at, 0) {
                assert_eq!((fast, fast_end), (general, end), "{case}: byte {at}");
                compact += 1;
            }
            events += 1;
        });
        let expected = if *case == "recursive-blocking-js" {
            0
        } else {
            events
        };
        assert_eq!(compact, expected, "{case}: events read compact of {events}");
        total += events;
    }
    assert!(total > 100_000, "{total} events");
}

//! Golden tests: every case in `samples/` must give exactly `expected/tasks.csv`, with 1
//! and with 2 worker threads, and `expected/tasks.json` (`--format json`), both written
//! by the `taskchain` binary as a user runs it. `BLESS=1 cargo test` rewrites the expected
//! files; a blessed file is a claim, so check its diff by hand or against the ground truth
//! (`tests/ground_truth.rs`, `scripts/reference.py`) before committing. The JSON golden is
//! also checked against the CSV one, field by field ([`json_agrees_with_csv`]).

use crate::common::*;
use serde_json::Value;
use taskchain::report::Format;

fn check(case: &str) {
    let args = case_args(case);
    let path = trace_path(case);
    let one = report(&args, std::slice::from_ref(&path), Format::Csv, 1);
    let two = report(&args, std::slice::from_ref(&path), Format::Csv, 2);
    assert_eq!(one, two, "{case}: -j1 and -j2 differ");
    let csv = String::from_utf8(one).unwrap();
    golden(&path.with_file_name("expected/tasks.csv"), &csv);
    let json =
        String::from_utf8(report(&args, std::slice::from_ref(&path), Format::Json, 2)).unwrap();
    json_agrees_with_csv(case, &json, &csv);
    golden(&path.with_file_name("expected/tasks.json"), &json);
}

/// The JSON report says what the CSV says: one task per row in the same order, every CSV
/// column that is a JSON key with the same value (numbers as numbers, empty as null),
/// `flags` the `;`-separated CSV flags as a list, and `chain` one frame per ` > `-separated
/// CSV frame, each named as the CSV names it (its function, or the source map's original).
/// The head names the version and the options the case ran with.
fn json_agrees_with_csv(case: &str, json: &str, csv: &str) {
    let doc: Value = serde_json::from_str(json).unwrap();
    assert_eq!(
        doc["taskchain_version"],
        env!("CARGO_PKG_VERSION"),
        "{case}"
    );
    let options = &doc["options"];
    let args = case_args(case);
    let scope = if args.contains(&"all".to_string()) {
        "all"
    } else {
        "main-frame"
    };
    assert_eq!(options["scope"], scope, "{case}");
    assert_eq!(options["threshold_ms"], 50.0, "{case}");
    assert_eq!(options["lookback_ms"], Value::Null, "{case}");
    let maps: Vec<&str> = args
        .iter()
        .skip_while(|a| *a != "--source-maps")
        .skip(1)
        .take(1)
        .map(String::as_str)
        .collect();
    assert_eq!(options["source_maps"], serde_json::json!(maps), "{case}");
    let tasks = doc["tasks"].as_array().unwrap();
    let mut rows = ::csv::Reader::from_reader(csv.as_bytes());
    let headers = rows.headers().unwrap().clone();
    let rows: Vec<::csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(tasks.len(), rows.len(), "{case}: tasks");
    for (i, (task, row)) in tasks.iter().zip(&rows).enumerate() {
        for (name, text) in headers.iter().zip(row) {
            let at = format!("{case}: task {i}, {name}");
            // The leaf's owner is `task_party` / `task_vendor` in JSON.
            let key = match name {
                "leaf_party" => "task_party",
                "leaf_vendor" => "task_vendor",
                _ => name,
            };
            let Some(value) = task.get(key) else {
                panic!("{at}: no such key in the JSON task")
            };
            match (name, value) {
                ("flags", Value::Array(list)) => {
                    let list: Vec<&str> = list.iter().map(|f| f.as_str().unwrap()).collect();
                    assert_eq!(list.join(";"), text, "{at}");
                    assert!(list.iter().all(|f| !f.is_empty()), "{at}");
                }
                ("chain", Value::Array(frames)) => {
                    let shown: Vec<&str> = if text.is_empty() {
                        vec![]
                    } else {
                        text.split(" > ").collect()
                    };
                    assert_eq!(frames.len(), shown.len(), "{at}");
                    for (f, s) in frames.iter().zip(shown) {
                        let named = |k: &str| f[k].as_str().is_some_and(|n| s.starts_with(n));
                        assert!(named("function") || named("original_function"), "{at}: {s}");
                    }
                }
                (_, Value::Null) => assert_eq!(text, "", "{at}"),
                (_, Value::String(s)) => assert_eq!(s, text, "{at}"),
                (_, Value::Number(n)) => {
                    assert_eq!(n.as_f64(), text.parse::<f64>().ok(), "{at}: {text}")
                }
                (_, other) => panic!("{at}: {other}"),
            }
        }
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
    proto_click_chain => "proto-click-chain",
    proto_iframes => "proto-iframes",
    proto_startup_load => "proto-startup-load",
    truncated_click_chain => "truncated-click-chain",
    field_bundle => "field-bundle",
    field_cpuprofile => "field-cpuprofile",
    field_legacy_profile => "field-legacy-profile",
    field_chromium_bundle => "field-chromium-bundle",
    node_cpu_prof => "node-cpu-prof",
    parties_shop => "parties-shop",
    interactions_shop => "interactions-shop",
    recursion_and_triggers => "recursion-and-triggers",
    sm_rollup_terser => "sm-rollup-terser",
    sm_webpack_no_rundown => "sm-webpack-no-rundown",
    sm_index_map => "sm-index-map",
    sm_data_url => "sm-data-url",
    sm_embedded => "sm-embedded",
    sm_missing_map => "sm-missing-map",
    sm_broken_map => "sm-broken-map",
}

/// The chain column of the row whose chain starts with `entry`, run with `args`.
fn chain_of(case: &str, args: &[&str], entry: &str) -> (String, String) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let csv = String::from_utf8(report(&args, &[trace_path(case)], Format::Csv, 1)).unwrap();
    let mut rows = ::csv::Reader::from_reader(csv.as_bytes());
    let row = rows
        .records()
        .map(|r| r.unwrap())
        .find(|r| r[18].starts_with(entry))
        .unwrap_or_else(|| panic!("no row starting {entry}"));
    // Frames without their URLs, then the status.
    let frames: Vec<String> = row[18]
        .split(" > ")
        .map(|f| match f.split_once(" (") {
            Some((name, rest)) => match rest.rsplit_once(") ") {
                Some((_, depth)) => format!("{name} {depth}"),
                None => name.to_string(),
            },
            None => f.to_string(),
        })
        .collect();
    (frames.join(" > "), format!("{} {}", &row[11], &row[10]))
}

#[test]
fn recorded_direct_and_mutual_recursion_collapse_by_mode() {
    // scripts/record-chains.js: onFibClick > computeFib > fib(18) recurses 18 calls deep
    // (fib(18) … fib(1)), spinning 4 ms per call and 10 ms at the bottom; onMutualClick >
    // isEven(12) alternates isEven / isOdd, 7 calls of isEven (12, 10, …, 0), spinning in
    // each, 30 ms at isEven(0).
    let case = "recursion-and-triggers";
    let fib = |mode: &str| chain_of(case, &["--collapse-recursion", mode], "onFibClick");
    // Exact stacks: one depth of fib with 0.110 of the task.
    let (chain, status) = fib("none");
    assert!(chain.ends_with("fib > fib > fib > spin"), "{chain}");
    assert_eq!(status, "low_confidence 0.110");
    for mode in ["direct", "all"] {
        assert_eq!(
            fib(mode),
            (
                "onFibClick > computeFib > fib ×18 > spin".to_string(),
                "ok 0.871".to_string()
            )
        );
    }
    let mutual = |mode: &str| chain_of(case, &["--collapse-recursion", mode], "onMutualClick");
    // Direct collapses nothing: isEven's caller is isOdd.
    assert_eq!(mutual("direct"), mutual("none"));
    assert_eq!(mutual("direct").1, "low_confidence 0.357");
    // All: the ladder is one frame, the spins called from isEven one group (58 of the
    // 82 ms spun: 30 + 7 × 4), the ones from isOdd (6 × 4) another.
    assert_eq!(
        mutual("all"),
        (
            "onMutualClick > isEven ×7 > spin".to_string(),
            "ok 0.672".to_string()
        )
    );
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
    // compare-builds holds run sets for `compare`, checked in tests/cli.rs; sm-site is the
    // site (bundles, maps, sources) the sm-* cases' --source-maps mirror.
    let mut listed: Vec<String> = CASES
        .iter()
        .chain(&["compare-builds", "sm-site"])
        .map(|s| s.to_string())
        .collect();
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
    use taskchain::internals::scan::{self, Envelope, TraceEvent, detect};
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
        // Chrome's layout and pretty-printed ones (recursive-blocking-js) alike.
        assert_eq!(compact, events, "{case}: events read compact of {events}");
        total += events;
    }
    assert!(total > 100_000, "{total} events");
}

#[test]
fn recorded_triggers_name_what_started_each_task() {
    // scripts/record-chains.js, in order: the page's load (about:blank's pagehide before
    // it), boot.js evaluated at load, recursion.js's evaluation (no URL in its event), the
    // two clicks, setTimeout(onTimer, 50), requestAnimationFrame(onFrame), a
    // MessageChannel message to onMessage, and a keystroke whose keydown listener (onKey,
    // the target stack) and input listener (onInput) ran in one task.
    let csv = String::from_utf8(report(
        &[],
        &[trace_path("recursion-and-triggers")],
        Format::Csv,
        1,
    ))
    .unwrap();
    let mut rows = ::csv::Reader::from_reader(csv.as_bytes());
    let headers = rows.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (trigger, detail) = (col("trigger"), col("trigger_detail"));
    let got: Vec<(String, String)> = rows
        .records()
        .map(|r| r.unwrap())
        .map(|r| {
            // Detail without the server's port.
            let shown = r[detail]
                .split("http://127.0.0.1:")
                .enumerate()
                .map(|(i, p)| {
                    if i == 0 {
                        p
                    } else {
                        p.split_once('/').map_or(p, |x| x.1)
                    }
                })
                .collect::<Vec<_>>()
                .join("");
            (r[trigger].to_string(), shown)
        })
        .collect();
    let want = [
        ("event:pagehide", ""),
        ("script", "boot.js"),
        ("script", ""),
        ("event:click", "onFibClick recursion.js:12:20"),
        ("event:click", "onMutualClick recursion.js:15:23"),
        (
            "timer",
            "id 1, setTimeout 50 ms: onTimer recursion.js:16:17",
        ),
        ("animation-frame", "onFrame recursion.js:17:17"),
        ("function-call", "onMessage recursion.js:18:19"),
        ("event:keydown", "onKey recursion.js:19:15"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(got, want);
}

/// The status precedence of docs/METHOD.md §1 on every sample's checked rows: a VM-state
/// top stack (`(program)`, `(garbage collector)`, `(idle)`) is `non_js` only when it holds
/// at least the minimum confidence (0.5, the samples' default) from at least 3 samples;
/// else the row is `low_confidence`, never `non_js` or `ok`.
#[test]
fn vm_state_top_stacks_are_non_js_only_when_confident() {
    let mut seen = [0usize; 2];
    for case in sample_cases() {
        let args = case_args(&case);
        if args.iter().any(|a| a.contains("confidence")) {
            continue;
        }
        let path = case_dir(&case).join("expected/tasks.csv");
        if !path.exists() {
            continue;
        }
        let (header, rows) = read_csv(&path);
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        let (leaf, status, conf, window) = (
            col("leaf_function"),
            col("status"),
            col("confidence"),
            col("window_samples"),
        );
        for r in &rows {
            if !["(program)", "(garbage collector)", "(idle)"].contains(&r[leaf].as_str()) {
                continue;
            }
            let confident =
                r[conf].parse::<f64>().unwrap() >= 0.5 && r[window].parse::<u64>().unwrap() >= 3;
            let want = if confident {
                "non_js"
            } else {
                "low_confidence"
            };
            assert_eq!(r[status], want, "{case}: {r:?}");
            seen[usize::from(confident)] += 1;
        }
    }
    // Both sides of the rule occur in the samples.
    assert!(seen[0] > 0 && seen[1] > 0, "{seen:?}");
}

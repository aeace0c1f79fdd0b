//! Hostile source maps and side inputs, on small inputs built here. Every rule of
//! docs/ERRORS.md "Hostile inputs" has a test here or in the module it names.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::taskchain;

/// The `sm-embedded` sample (a trace carrying its map in `metadata.sourceMaps`), as JSON.
fn embedded_sample() -> Value {
    let mut text = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/sm-embedded/trace.json.gz"),
        )
        .unwrap(),
    )
    .read_to_string(&mut text)
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(v).unwrap()).unwrap();
    p
}

fn run(args: &[&std::ffi::OsStr]) -> std::process::Output {
    taskchain().args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The CSV rows of `out`'s standard output.
fn rows(out: &std::process::Output) -> Vec<Vec<String>> {
    let mut r = csv::Reader::from_reader(&out.stdout[..]);
    r.records()
        .map(|x| x.unwrap().iter().map(str::to_owned).collect())
        .collect()
}

/// Column `leaf_original_function` (23) and `leaf_original_source` (24) of the `ok` row.
fn leaf_original(out: &std::process::Output) -> (String, String) {
    let r = rows(out);
    let ok = r.iter().find(|r| r[11] == "ok").expect("an ok row");
    (ok[23].clone(), ok[24].clone())
}

#[test]
fn an_original_source_nested_too_deep_costs_its_names_not_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = embedded_sample();
    let map = &mut t["metadata"]["sourceMaps"][0]["sourceMap"];
    let sources: Vec<String> = map["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let hot = sources.iter().position(|s| s.ends_with("hot.js")).unwrap();
    let original = map["sourcesContent"][hot].as_str().unwrap().to_string();
    // 1,200 nested parentheses at the end of hot.js (it killed the process with SIGABRT):
    // parsed now, the name is kept.
    let deep = |n: usize| {
        format!(
            "{original}\nvar deep = {}1{};\n",
            "(".repeat(n),
            ")".repeat(n)
        )
    };
    map["sourcesContent"][hot] = Value::String(deep(1200));
    let ok = write(dir.path(), "ok.json", &t);
    let out = run(&[ok.as_os_str()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        leaf_original(&out),
        ("scoreRows".into(), "../../src/hot.js".into())
    );
    // 50,000 levels: not parsed; the frame keeps its original source and position, loses
    // its original function name, and a warning says why.
    let map = &mut t["metadata"]["sourceMaps"][0]["sourceMap"];
    map["sourcesContent"][hot] = Value::String(deep(50_000));
    let bad = write(dir.path(), "deep.json", &t);
    for extra in [&[][..], &["--chain-names", "generated"][..]] {
        let mut args: Vec<&std::ffi::OsStr> = vec![bad.as_os_str()];
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        let out = run(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(
            leaf_original(&out),
            (String::new(), "../../src/hot.js".into())
        );
        let err = text(&out.stderr);
        assert!(
            err.contains("original source ../../src/hot.js nests too deep to parse (about 5"),
            "{err}"
        );
    }
    // `compare` reads the same way.
    let out = taskchain()
        .arg("compare")
        .arg(&bad)
        .arg("--")
        .arg(&ok)
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn one_null_entry_in_metadata_source_maps_costs_that_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = embedded_sample();
    let maps = t["metadata"]["sourceMaps"].as_array_mut().unwrap();
    maps.insert(0, Value::Null);
    maps.push(serde_json::json!({"url": "http://x/y.js", "sourceMap": 5}));
    let p = write(dir.path(), "null.json", &t);
    let out = run(&[p.as_os_str()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        leaf_original(&out),
        ("scoreRows".into(), "../../src/hot.js".into())
    );
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "metadata.sourceMaps entries that are not {url, sourceMapUrl, sourceMap} objects with a map object or text (skipped; the other entries are read): 2"
        ),
        "{err}"
    );
}

#[test]
fn a_data_url_map_over_a_mib_is_read_whole() {
    // The sm-data-url sample's map URL is `data:…;base64,…` on its script's rundown event;
    // padded past 1 MiB of base64 (a 780 KB map), it was cut by the 1 MiB string rule and
    // called "not base64". The padding is a source nothing maps to.
    let mut text_gz = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/sm-data-url/trace.json.gz"),
        )
        .unwrap(),
    )
    .read_to_string(&mut text_gz)
    .unwrap();
    let mut t: Value = serde_json::from_str(&text_gz).unwrap();
    // Chrome leaves a `data:` map URL out of the rundown event (`sourceMapUrlElided`): it
    // is the `sourceMappingURL` comment of the script's text, on a `-sources` event.
    let mut found = 0;
    const HEAD: &str = "sourceMappingURL=data:application/json;base64,";
    for ev in t["traceEvents"].as_array_mut().unwrap() {
        let Some(source) = ev
            .pointer("/args/data/sourceText")
            .and_then(|u| u.as_str().map(str::to_string))
        else {
            continue;
        };
        let Some(at) = source.find(HEAD) else {
            continue;
        };
        let b64 = source[at + HEAD.len()..].split_whitespace().next().unwrap();
        let json = data_encoding::BASE64.decode(b64.as_bytes()).unwrap();
        let mut map: Value = serde_json::from_slice(&json).unwrap();
        map["sources"].as_array_mut().unwrap().push("pad.js".into());
        if let Some(c) = map["sourcesContent"].as_array_mut() {
            c.push(Value::String("x".repeat(900_000)));
        }
        let padded = data_encoding::BASE64.encode(&serde_json::to_vec(&map).unwrap());
        assert!(padded.len() > 1 << 20);
        let new = format!("{}{HEAD}{padded}\n", &source[..at]);
        *ev.pointer_mut("/args/data/sourceText").unwrap() = Value::String(new);
        found += 1;
    }
    assert!(found > 0, "the sample has a data: URL in a script's text");
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "big-data-url.json", &t);
    let out = run(&[p.as_os_str()]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("not base64"), "{err}");
    let r = rows(&out);
    assert!(
        r.iter().any(|r| !r[24].is_empty()),
        "a frame got its original: {r:?}"
    );
}

#[test]
fn side_inputs_that_are_devices_or_silent_fifos_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    std::fs::write(&trace, crate::lossless::small_trace(1)).unwrap();
    for (flag, value) in [
        ("--party-overrides", "/dev/zero"),
        ("--tasks", "/dev/zero"),
        ("--files-from", "/dev/zero"),
    ] {
        let out = taskchain()
            .arg(&trace)
            .args([flag, value])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("a character device"),
            "{flag}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_missing_file_named_a_million_times_is_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("list.txt");
    let trace = dir.path().join("t.json");
    std::fs::write(&trace, crate::lossless::small_trace(1)).unwrap();
    let mut text_list = String::new();
    for _ in 0..200_000 {
        text_list.push_str("/nonexistent/x.json\n");
    }
    text_list.push_str(&format!("{}\n{}\n", trace.display(), trace.display()));
    std::fs::write(&list, text_list).unwrap();
    let out = taskchain()
        .arg("--files-from")
        .arg(&list)
        .arg("-q")
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(err.matches("/nonexistent/x.json").count(), 1, "{err}");
    assert_eq!(rows(&out).len(), 1, "the trace's row");
}

#[cfg(unix)]
#[test]
fn names_that_are_not_utf8_are_kept_and_shown_apart() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let trace = crate::lossless::small_trace(1);
    // Two names that differ only in a byte that is not UTF-8 (shown as U+FFFD both).
    let a = dir.path().join(std::ffi::OsStr::from_bytes(b"a\xff.json"));
    let b = dir.path().join(std::ffi::OsStr::from_bytes(b"a\xfe.json"));
    std::fs::write(&a, &trace).unwrap();
    std::fs::write(&b, &trace).unwrap();
    let mut list = Vec::new();
    for p in [&a, &b] {
        list.extend_from_slice(p.as_os_str().as_bytes());
        list.push(b'\n');
    }
    let listed = dir.path().join("list");
    std::fs::write(&listed, &list).unwrap();
    let out = taskchain()
        .arg("--files-from")
        .arg(&listed)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let files: Vec<String> = rows(&out).into_iter().map(|r| r[0].clone()).collect();
    let shown = |p: &Path| {
        let s = p.as_os_str().as_bytes();
        let dirlen = dir.path().as_os_str().len();
        format!("{}/a\\x{:02x}.json", dir.path().display(), s[dirlen + 2])
    };
    assert_eq!(files, [shown(&b), shown(&a)]);
}

#[test]
fn an_output_onto_the_overrides_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    std::fs::write(&trace, crate::lossless::small_trace(1)).unwrap();
    let overrides = dir.path().join("o.json");
    std::fs::write(&overrides, br#"{"first_party_domains": ["a.test"]}"#).unwrap();
    let out = taskchain()
        .arg(&trace)
        .arg("--party-overrides")
        .arg(&overrides)
        .arg("-o")
        .arg(&overrides)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(&overrides).unwrap(),
        br#"{"first_party_domains": ["a.test"]}"#
    );
}

#[test]
fn junk_time_deltas_in_a_cpuprofile_skip_their_samples() {
    // Samples every 10 ms of f (node 2); the fourth delta is 1e400 (was read as 0).
    let p = r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}},{"id":2,"parent":1,"callFrame":{"functionName":"f","scriptId":"1","url":"a.js","lineNumber":0,"columnNumber":0}}],"startTime":0,"endTime":100000,"samples":[2,2,2,2,2,2,2,2],"timeDeltas":[10000,10000,10000,1e400,10000,10000,10000,10000]}"#;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p.cpuprofile");
    std::fs::write(&f, p).unwrap();
    let out = taskchain().arg(&f).output().unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("timeDeltas values that are not a time (not a number, or outside ±2^53 µs): their samples skipped (the later ones keep their times): 1"),
        "{err}"
    );
}

#[test]
fn odd_stack_ids_and_infinite_timestamps_cost_their_samples() {
    let bundle = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/field-bundle/trace.json"),
    )
    .unwrap();
    // The sample at 130 ms (stack 2, in the first task) gets stackId 0.5; the one at 270 ms
    // (after both tasks) a timestamp of 1e400.
    let odd = bundle
        .replacen(
            "\"timestamp\": 130.0,\n    \"stackId\": 2",
            "\"timestamp\": 130.0,\n    \"stackId\": 0.5",
            1,
        )
        .replacen("\"timestamp\": 270.0", "\"timestamp\": 1e400", 1);
    assert!(odd.contains("0.5") && odd.contains("1e400"));
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("b.json");
    std::fs::write(&f, &odd).unwrap();
    let out = taskchain().arg(&f).output().unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("samples whose stackId is not an integer (skipped): 1"),
        "{err}"
    );
    assert!(
        err.contains("samples without a numeric timestamp (skipped): 1"),
        "{err}"
    );
    let r = rows(&out);
    // The first task keeps its chain (3 of 5 candidate samples in stack 2: 100 110 150,
    // 120 in stack 1, 140 none), and is not `non_js`.
    assert_eq!(r[0][11], "ok", "{r:?}");
    assert_eq!(r[0][7..9], ["5", "3"], "{r:?}");
}

/// A trace of two renderers: pid 1's main thread opens a task `B` at 1 s and has no more
/// events (a renderer left behind by a navigation); pid 2's runs until 6 s. With
/// `busy_until_us`, pid 1's profile samples `(program)` every 10 ms from 1 s to then.
fn open_task_trace(busy_until_us: Option<i64>) -> String {
    let mut ev = vec![
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}}"#
            .to_string(),
        r#"{"ph":"M","name":"thread_name","pid":2,"tid":2,"args":{"name":"CrRendererMain"}}"#
            .to_string(),
        r#"{"ph":"B","name":"RunTask","cat":"toplevel","pid":1,"tid":1,"ts":1000000}"#.to_string(),
        r#"{"ph":"X","name":"RunTask","cat":"toplevel","pid":2,"tid":2,"ts":5990000,"dur":10000}"#
            .to_string(),
    ];
    if let Some(until) = busy_until_us {
        let n = ((until - 1_000_000) / 10_000) as usize;
        ev.push(r#"{"ph":"P","name":"Profile","id":"0x1","pid":1,"tid":1,"ts":1000000,"args":{"data":{"startTime":1000000}}}"#.to_string());
        let samples = vec!["2"; n + 1].join(",");
        let deltas = vec!["10000"; n + 1].join(",");
        ev.push(format!(
            r#"{{"ph":"P","name":"ProfileChunk","id":"0x1","pid":1,"tid":1,"ts":{until},"args":{{"data":{{"cpuProfile":{{"nodes":[{{"id":1,"callFrame":{{"functionName":"(root)","scriptId":0}}}},{{"id":2,"parent":1,"callFrame":{{"functionName":"(program)","scriptId":0}}}},{{"id":3,"parent":1,"callFrame":{{"functionName":"(idle)","scriptId":0}}}}],"samples":[{samples},3,3]}},"timeDeltas":[0,{deltas},500000]}}}}}}"#
        ));
    }
    format!("{{\"traceEvents\":[\n{}\n]}}\n", ev.join(",\n"))
}

#[test]
fn an_open_task_ends_at_its_threads_last_busy_sample() {
    let dir = tempfile::tempdir().unwrap();
    // No more events, no samples: the task ends where it began, no long task (it was a
    // 5 s long task to the trace's end).
    let f = dir.path().join("stale.json");
    std::fs::write(&f, open_task_trace(None)).unwrap();
    let out = taskchain().arg(&f).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(rows(&out).len(), 0, "{}", text(&out.stdout));
    // The warning says what the open task means for the report: here, no row.
    assert!(
        text(&out.stderr).contains(&format!(
            "taskchain: warning: {}: 1 task never ends in the trace (a B event without its E): \
             each was taken to end at its thread's last task event or its profile's last busy \
             sample; none of them is a long task of this report\n",
            f.display()
        )),
        "{}",
        text(&out.stderr)
    );
    // Native work sampled until 2.9 s (then idle): a 1.9 s task, flagged incomplete.
    let f = dir.path().join("busy.json");
    std::fs::write(&f, open_task_trace(Some(2_900_000))).unwrap();
    let out = taskchain().arg(&f).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let r = rows(&out);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!((r[0][1].as_str(), r[0][6].as_str()), ("1", "1900.000"));
    assert!(r[0][12].contains("incomplete"), "{:?}", r[0]);
    // The row it touched, by its start: the trace's first event, so 0 ms.
    assert!(
        text(&out.stderr).contains(
            "sample; 1 of the report's rows (task_start_ms 0.000) is such a task, flagged \
             incomplete: its duration_ms is a lower bound\n"
        ),
        "{}",
        text(&out.stderr)
    );
}

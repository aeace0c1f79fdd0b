//! Field data on hand-built samples, every value worked out by hand.

use crate::common::taskchain;
use predicates::prelude::*;

fn rows(args: &[&str]) -> Vec<Vec<String>> {
    let out = taskchain().args(args).arg("-q").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut r = csv::Reader::from_reader(&out.stdout[..]);
    r.records()
        .map(|x| x.unwrap().iter().map(str::to_owned).collect())
        .collect()
}

// Columns: 4 task_ts_us, 5 task_start_ms, 6 task_dur_ms, 7 window_samples, 8 target_samples,
// 9 stack_ms, 10 confidence, 11 status, 13 leaf_function, 15 leaf_line, 16 leaf_column,
// 18 chain, 19 task_source, 20-22 LoAF invoker, URL, function.

#[test]
fn bundle_with_long_tasks_and_loaf() {
    let r = rows(&["samples/field-bundle/trace.json"]);
    assert_eq!(r.len(), 2);
    // Samples every 10 ms; the window reaches back one median interval: [90, 160) holds
    // 100 110 130 150 (stack 2), 120 (stack 1), 140 (no stack) → 6 candidates, 4 targets,
    // each standing 10 ms → 40 of 60 ms = 0.667.
    let t = &r[0];
    assert_eq!(
        t[4..12],
        [
            "100000", "100.000", "60.000", "6", "4", "40.000", "0.667", "ok"
        ]
    );
    // Frames are 1-based in the JS Self-Profiling API and stay so in reports.
    assert_eq!(
        (t[13].as_str(), t[15].as_str(), t[16].as_str()),
        ("(anonymous)", "30", "1")
    );
    assert_eq!(
        t[18],
        "onClick (https://a.example/app.js:10:5) > render (https://a.example/app.js:20:3) > (anonymous) (https://a.example/app.js:30:1)"
    );
    // The LoAF script overlapping [100, 160) most: onclick (58 ms) over setTimeout (2 ms).
    assert_eq!(
        t[19..23],
        [
            "longtask",
            "BUTTON#go.onclick",
            "https://a.example/app.js",
            "onClick"
        ]
    );
    // Second task [200, 260): 190..250 are all stack-less samples → native, not a chain.
    assert_eq!(r[1][7..12], ["7", "7", "70.000", "1.000", "non_js"]);
    assert_eq!(r[1][18], "(no stack)");
}

#[test]
fn cpuprofile_parent_links_root_last_long_first_gap_busy_span() {
    let r = rows(&["samples/field-cpuprofile/trace.cpuprofile"]);
    // startTime 1.0 s; first delta 0.5 s (an idle sample at 1.5 s); 60 `work` samples 1 ms
    // apart from 1.501 s; idle again at 1.561 s → one busy span [1.501, 1.561) = 60 ms.
    assert_eq!(r.len(), 1);
    assert_eq!(
        r[0][4..12],
        [
            "1501000", "501.000", "60.000", "61", "60", "60.000", "1.000", "ok"
        ]
    );
    assert_eq!(
        (r[0][18].as_str(), r[0][19].as_str()),
        ("work (file:///w.js:5:3)", "busy_span")
    );
}

#[test]
fn legacy_head_tree_profile() {
    let r = rows(&["samples/field-legacy-profile/trace.cpuprofile"]);
    // startTime 10 s; idle at 10.000 s, 70 `loop` samples from 10.001 s, idle at 10.071 s.
    assert_eq!(
        r[0][4..12],
        [
            "10001000", "1.000", "70.000", "71", "70", "70.000", "1.000", "ok"
        ]
    );
    // The old V8 API numbered lines from 1 (0: unknown), so lineNumber 2 and 7 stay 2 and 7.
    assert_eq!(r[0][18], "outer (file:///l.js:2) > loop (file:///l.js:7)");
}

#[test]
fn tasks_file_and_explicit_lookback() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.json");
    // One long task on the profile's clock (ms): 1501–1556 ms.
    std::fs::write(
        &tasks,
        r#"[{"name":"self","entryType":"longtask","startTime":1501,"duration":55}]"#,
    )
    .unwrap();
    let t = tasks.to_str().unwrap();
    let r = rows(&[
        "samples/field-cpuprofile/trace.cpuprofile",
        "--tasks",
        t,
        "--lookback-ms",
        "0",
    ]);
    // No lookback: [1501, 1556) holds 55 work samples.
    assert_eq!(
        r[0][4..12],
        [
            "1501000", "501.000", "55.000", "55", "55", "55.000", "1.000", "ok"
        ]
    );
    assert_eq!(r[0][19], "longtask");
}

#[test]
fn few_samples_are_low_confidence_whatever_the_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("two.json");
    // A 60 ms task with two samples 30 ms apart on one stack: ratio 1.0, but 2 < 3 samples.
    std::fs::write(
        &f,
        r#"{"profile":{"resources":[],"frames":[{"name":"f"}],"stacks":[{"frameId":0}],
            "samples":[{"timestamp":10,"stackId":0},{"timestamp":40,"stackId":0},{"timestamp":70}]},
            "longTasks":[{"entryType":"longtask","startTime":10,"duration":60}]}"#,
    )
    .unwrap();
    let r = rows(&[f.to_str().unwrap(), "--lookback-ms", "0"]);
    assert_eq!(r[0][7..12], ["2", "2", "60.000", "1.000", "low_confidence"]);
}

#[test]
fn busy_spans_of_a_bare_profiler_trace_and_ties() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bare.json");
    // Busy from 0 to 80 ms (first stack-less sample); stacks a, b, a, b, …: a tie of 4–4,
    // which goes to the group whose first sample is earliest (a at 0 ms).
    std::fs::write(
        &f,
        r#"{"resources":[],"frames":[{"name":"a"},{"name":"b"}],"stacks":[{"frameId":0},{"frameId":1}],
            "samples":[{"timestamp":0,"stackId":0},{"timestamp":10,"stackId":1},{"timestamp":20,"stackId":0},{"timestamp":30,"stackId":1},
                       {"timestamp":40,"stackId":0},{"timestamp":50,"stackId":1},{"timestamp":60,"stackId":0},{"timestamp":70,"stackId":1},
                       {"timestamp":80},{"timestamp":90}]}"#,
    )
    .unwrap();
    let r = rows(&[f.to_str().unwrap()]);
    assert_eq!(r.len(), 1);
    // Span [0, 80): 80 ms; lookback 10 ms adds nothing before 0. a: 4 samples, 40 ms = 0.5.
    assert_eq!(
        r[0][4..12],
        ["0", "0.000", "80.000", "8", "4", "40.000", "0.500", "ok"]
    );
    assert_eq!((r[0][18].as_str(), r[0][19].as_str()), ("a", "busy_span"));
}

#[test]
fn look_alikes_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let heap = dir.path().join("x.heapprofile");
    std::fs::write(&heap, r#"{"head":{"callFrame":{"functionName":"(root)"},"selfSize":0,"id":1,"children":[]},"samples":[{"size":8,"nodeId":1,"ordinal":1}]}"#).unwrap();
    taskchain()
        .arg(&heap)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "x.heapprofile: not a trace: a heap-sampling profile",
        ));
}

#[test]
fn real_chromium_bundle_gets_the_known_chains_and_entry_points() {
    // Recorded from headless Chromium (scripts/record-field-bundle): the page's known hot
    // code is a click chain (~150 ms) and a timer chain (~90 ms), sampled every ~10 ms.
    let r = rows(&["samples/field-chromium-bundle/trace.json"]);
    assert_eq!(r.len(), 2);
    let names = |row: &Vec<String>| -> Vec<String> {
        row[18]
            .split(" > ")
            .map(|f| f.split(" (").next().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(&r[0]),
        ["onRecalcClick", "recalcSheet", "sumColumns", "spin"]
    );
    assert_eq!(names(&r[1]), ["onSyncTimer", "rebuildIndex", "spin"]);
    assert_eq!(
        r[0][20..23],
        [
            "BUTTON#go.onclick",
            "http://127.0.0.1:8766/app.js",
            "onRecalcClick"
        ]
    );
    assert_eq!(r[1][20], "TimerHandler:setTimeout");
    assert!(r.iter().all(|x| x[11] == "ok" && x[12].is_empty()));
}

#[test]
fn real_node_profile_busy_spans() {
    // Node 20 --cpu-prof of scripts/record-node-profile/busy.js: ~120 ms in recursive fib
    // under onTimer, then ~80 ms in an anonymous timer callback (line 6).
    let r = rows(&["samples/node-cpu-prof/trace.cpuprofile"]);
    assert_eq!(r.len(), 2);
    assert!(r[0][18].contains("onTimer (file:///tmp/nodeprof/busy.js:4:17) > computeReport"));
    assert_eq!(r[0][13], "fib");
    assert!(r[1][18].ends_with("> (anonymous) (file:///tmp/nodeprof/busy.js:6:12)"));
    assert_eq!((r[1][11].as_str(), r[1][19].as_str()), ("ok", "busy_span"));
}

#[test]
fn empty_entry_lists_mean_no_long_tasks_and_bad_entries_warn() {
    let dir = tempfile::tempdir().unwrap();
    let profile = r#"{"resources":[],"frames":[{"name":"f"}],"stacks":[{"frameId":0}],
        "samples":[{"timestamp":0,"stackId":0},{"timestamp":50,"stackId":0},{"timestamp":100,"stackId":0},{"timestamp":150}]}"#;
    // The page observed no long task: no rows, not busy spans.
    let f = dir.path().join("none.json");
    std::fs::write(
        &f,
        format!(r#"{{"profile":{profile},"longTasks":[],"longAnimationFrames":[]}}"#),
    )
    .unwrap();
    assert!(rows(&[f.to_str().unwrap()]).is_empty());
    // Entries that are not entries are counted, not silently dropped.
    let f = dir.path().join("bad.json");
    std::fs::write(&f, format!(r#"{{"profile":{profile},"longTasks":[{{"startTime":"x","duration":60}},{{"startTime":0,"duration":-5}}]}}"#)).unwrap();
    taskchain()
        .arg(&f)
        .assert()
        .success()
        .stdout(predicate::str::contains("\n").count(1))
        .stderr(predicate::str::contains(
            "long-task entries without a numeric startTime and a duration ≥ 0 (skipped): 2",
        ));
    // A --tasks file that holds no entry list is an error, before any work.
    let t = dir.path().join("t.json");
    std::fs::write(&t, r#"{"a":1}"#).unwrap();
    taskchain()
        .arg(&f)
        .arg("--tasks")
        .arg(&t)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("want an array of long-task"));
}

#[test]
fn oldest_head_tree_profile_without_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("old.cpuprofile");
    // 100 samples spread evenly over 0.1 s: 1 ms apart; samples 10..79 busy in `g`.
    let samples: Vec<String> = (0..100)
        .map(|k| {
            if (10..80).contains(&k) {
                "2".into()
            } else {
                "3".into()
            }
        })
        .collect();
    std::fs::write(
        &f,
        format!(
            r#"{{"head":{{"functionName":"(root)","id":1,"children":[{{"functionName":"g","url":"g.js","lineNumber":4,"id":2,"children":[]}},{{"functionName":"(idle)","id":3,"children":[]}}]}},"startTime":1.0,"endTime":1.1,"samples":[{}]}}"#,
            samples.join(",")
        ),
    )
    .unwrap();
    let r = rows(&[f.to_str().unwrap(), "--lookback-ms", "0"]);
    // Busy from 1.010 s to 1.080 s: 70 ms, 70 samples of g.
    assert_eq!(
        r[0][4..12],
        [
            "1010000", "10.000", "70.000", "70", "70", "70.000", "1.000", "ok"
        ]
    );
    assert_eq!(r[0][18], "g (g.js:4)");
}

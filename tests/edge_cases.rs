//! Hand-made traces for the edge cases of scopes, tasks and profiles, run end to end through
//! `analyze_bytes`. Every expected value is worked out in the comments.

use taskchain::chain::ChainStatus;
use taskchain::report::{chain_text, confidence_number, micros_text, millis_text};
use taskchain::{Settings, analyze_bytes};

fn rows(json: &str) -> Vec<(i64, String, String, ChainStatus, String, usize)> {
    let rep = analyze_bytes("t.json", json.as_bytes(), &Settings::default()).unwrap();
    rep.rows
        .iter()
        .map(|r| {
            (
                r.thread.pid.0,
                micros_text(r.task_ts),
                format!("{:.3}", confidence_number(r.confidence)),
                r.status,
                chain_text(&r.chain),
                r.window_samples,
            )
        })
        .collect()
}

fn chunk(pid: i64, id: &str, ts: i64, nodes: &str, samples: &str, deltas: &str) -> String {
    format!(
        r#"{{"ph":"P","name":"ProfileChunk","id":"{id}","pid":{pid},"tid":99,"ts":{ts},"args":{{"data":{{"cpuProfile":{{"nodes":[{nodes}],"samples":[{samples}]}},"timeDeltas":[{deltas}]}}}}}}"#
    )
}

const ROOT: &str = r#"{"id":1,"callFrame":{"functionName":"(root)","scriptId":0}}"#;

#[test]
fn profile_ids_repeat_across_processes_and_metadata_comes_last() {
    let node = |name: &str, url: &str, line: i32| {
        format!(
            r#"{{"id":2,"parent":1,"callFrame":{{"functionName":"{name}","url":"{url}","lineNumber":{line},"columnNumber":2,"scriptId":3}}}}"#
        )
    };
    let six = "2,2,2,2,2,2";
    let deltas = "10000,10000,10000,10000,10000,10000";
    let trace = format!(
        "[{},{},{},{},{},{},{},{}]",
        r#"{"ph":"P","name":"Profile","id":"0x1","pid":1,"tid":1,"ts":1004,"args":{"data":{"startTime":1000}}}"#,
        r#"{"ph":"P","name":"Profile","id":"0x1","pid":2,"tid":1,"ts":1004,"args":{"data":{"startTime":1000}}}"#,
        chunk(
            2,
            "0x1",
            70000,
            &format!("{ROOT},{}", node("two", "b.js", 4)),
            six,
            deltas
        ),
        chunk(
            1,
            "0x1",
            70000,
            &format!("{ROOT},{}", node("one", "a.js", 0)),
            six,
            deltas
        ),
        r#"{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":11000,"dur":60000}"#,
        r#"{"ph":"X","name":"RunTask","pid":2,"tid":1,"ts":11000,"dur":60000}"#,
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}}"#,
        r#"{"ph":"M","name":"thread_name","pid":2,"tid":1,"args":{"name":"CrRendererMain"}}"#,
    );
    // Samples at 1000 + 10 000·k µs = 11 000 … 61 000, all in [11 000, 71 000); the last
    // stands one median interval (10 ms) → 60 ms of 60 ms.
    assert_eq!(
        rows(&trace),
        [
            (
                1,
                "11000".into(),
                "1.000".into(),
                ChainStatus::Ok,
                "one (a.js:1:3)".into(),
                6
            ),
            (
                2,
                "11000".into(),
                "1.000".into(),
                ChainStatus::Ok,
                "two (b.js:5:3)".into(),
                6
            ),
        ]
    );
    let rep = analyze_bytes("t.json", trace.as_bytes(), &Settings::default()).unwrap();
    // First non-metadata ts is the Profile's 1004 µs.
    assert_eq!(millis_text(rep.rows[0].task_start), "9.996");
    assert_eq!(&*rep.rows[0].thread_name, "CrRendererMain");
}

#[test]
fn chunks_are_taken_in_ts_order_and_parents_may_come_later() {
    let a = r#"{"id":2,"parent":1,"callFrame":{"functionName":"a","scriptId":1}}"#;
    let b = r#"{"id":3,"parent":2,"callFrame":{"functionName":"b","scriptId":1}}"#;
    // The second chunk (ts 3000) is first in the file, and the Profile event is last.
    let trace = format!(
        "[{},{},{},{},{}]",
        chunk(1, "0x1", 60000, b, "3,3", "10000,10000"),
        chunk(
            1,
            "0x1",
            40000,
            &format!("{ROOT},{a}"),
            "2,2",
            "10000,10000"
        ),
        r#"{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":25000,"dur":55000}"#,
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}}"#,
        r#"{"ph":"P","name":"Profile","id":"0x1","pid":1,"tid":1,"ts":0,"args":{"data":{"startTime":0}}}"#,
    );
    // In ts order the samples are a@10 ms, a@20, b@30, b@40; window [25, 80) ms holds the
    // two b samples (10 ms + one median interval 10 ms = 20 ms of 55 → 0.364).
    // In file order b would come first and the window would hold a, a.
    assert_eq!(
        rows(&trace),
        [(
            1,
            "25000".into(),
            "0.364".into(),
            ChainStatus::LowConfidence,
            "a > b".into(),
            2
        )]
    );
}

#[test]
fn profile_without_id_is_keyed_by_thread() {
    let trace = format!(
        "[{},{},{},{}]",
        r#"{"ph":"P","name":"Profile","pid":1,"tid":1,"ts":0,"args":{"data":{"startTime":0}}}"#,
        r#"{"ph":"P","name":"ProfileChunk","pid":1,"tid":1,"ts":90000,"args":{"data":{"cpuProfile":{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}},{"id":2,"parent":1,"callFrame":{"functionName":"f"}}],"samples":[2,2,2,2,2,2]},"timeDeltas":[10000,10000,10000,10000,10000,10000]}}}"#,
        r#"{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":10000,"dur":60000}"#,
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}}"#,
    );
    assert_eq!(
        rows(&trace),
        [(
            1,
            "10000".into(),
            "1.000".into(),
            ChainStatus::Ok,
            "f".into(),
            6
        )]
    );
}

#[test]
fn legacy_cpu_profile_event_uses_its_start_time() {
    // Chrome 65/66: one `CpuProfile` instant at the end, nodes with `children`, deltas
    // inside cpuProfile counted from cpuProfile.startTime (1000 µs), root listed last.
    let trace = r#"[
{"ph":"X","name":"MessageLoop::RunTask","pid":1,"tid":1,"ts":1000,"dur":80000},
{"ph":"X","name":"ThreadControllerImpl::DoWork","pid":1,"tid":1,"ts":1001,"dur":79990},
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}},
{"ph":"I","name":"CpuProfile","pid":1,"tid":1,"ts":999999,"args":{"data":{"cpuProfile":{
 "nodes":[{"id":2,"callFrame":{"functionName":"g","url":"x.js","lineNumber":-1,"columnNumber":-1}},
          {"id":1,"callFrame":{"functionName":"(root)"},"children":[2,3]},
          {"id":3,"callFrame":{"functionName":"(idle)"}}],
 "startTime":1000,"endTime":90000,"samples":[3,2,2,2,2,3],"timeDeltas":[0,10000,20000,20000,20000,5000]}}}}
]"#;
    // Samples: idle@1000, g@11000, g@31000, g@51000, g@71000, idle@76000. The nested DoWork
    // is not a second task. Window [1000, 81000): g stands 20+20+20+5 = 65 ms of 80.
    assert_eq!(
        rows(trace),
        [(
            1,
            "1000".into(),
            "0.813".into(),
            ChainStatus::Ok,
            "g (x.js)".into(),
            6
        )]
    );
}

#[test]
fn start_time_on_another_clock_falls_back_to_profile_ts() {
    let trace = format!(
        "[{},{},{},{}]",
        // startTime is 5000 s away from ts: another clock (a machine suspend).
        r#"{"ph":"P","name":"Profile","id":"0x1","pid":1,"tid":1,"ts":5000000000,"args":{"data":{"startTime":1000}}}"#,
        chunk(
            1,
            "0x1",
            5000100000,
            &format!(r#"{ROOT},{{"id":2,"parent":1,"callFrame":{{"functionName":"f"}}}}"#),
            "2,2,2,2,2,2",
            "10000,10000,10000,10000,10000,10000"
        ),
        r#"{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":5000010000,"dur":60000}"#,
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}}"#,
    );
    let rep = analyze_bytes("t.json", trace.as_bytes(), &Settings::default()).unwrap();
    assert_eq!(rep.rows[0].window_samples, 6);
    assert_eq!(rep.rows[0].flags.to_text(), "profile_start_on_other_clock");
}

#[test]
fn windows_left_empty_by_bad_samples_say_why() {
    // One task [10, 70) ms; the profile's six samples (10–60 ms) either all name node 7,
    // which no node has, or hold a token that is not JSON (`Infinity`): no sample is left
    // for the task (`no_samples`), and a warning counts what was left out.
    let warnings = |samples: &str| {
        let chunk = format!(
            r#"{{"ph":"P","name":"ProfileChunk","pid":1,"tid":1,"ts":90000,"args":{{"data":{{"cpuProfile":{{"nodes":[{ROOT},{{"id":2,"parent":1,"callFrame":{{"functionName":"f"}}}}],"samples":[{samples}]}},"timeDeltas":[10000,10000,10000,10000,10000,10000]}}}}}}"#
        );
        let trace = format!(
            "[{},{chunk},{},{}]",
            r#"{"ph":"P","name":"Profile","pid":1,"tid":1,"ts":0,"args":{"data":{"startTime":0}}}"#,
            r#"{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":10000,"dur":60000}"#,
            r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}}"#,
        );
        let rep = analyze_bytes("t.json", trace.as_bytes(), &Settings::default()).unwrap();
        assert_eq!(rep.rows.len(), 1);
        assert_eq!(rep.rows[0].status, ChainStatus::NoSamples);
        rep.diagnostics.iter().collect::<Vec<_>>()
    };
    assert_eq!(
        warnings("7,7,7,7,7,7"),
        [("samples naming unknown nodes (skipped)", 6)]
    );
    assert_eq!(
        warnings("2,2,Infinity,2,2,2"),
        [(
            "profile chunks whose samples could not be read, met by task windows (left out)",
            1
        )]
    );
}

/// Samples naming no node are no one's next sample: the last known sample of a window
/// stands for the mean interval when no known sample follows it anywhere in the profile,
/// and for the time to the window end when one follows in a chunk after the window.
#[test]
fn unknown_samples_after_the_last_known_one_do_not_stretch_its_weight() {
    let f = r#"{"id":2,"parent":1,"callFrame":{"functionName":"f","url":"u.js","lineNumber":1,"columnNumber":1,"scriptId":1}}"#;
    let head = [
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}}"#,
        r#"{"ph":"P","name":"Profile","id":"0x1","pid":1,"tid":1,"ts":1000000,"args":{"data":{"startTime":1000000}}}"#,
        r#"{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":1000000,"dur":60000}"#,
    ]
    .join(",");
    // Known samples (node 2) at 1 001 000, 1 002 000, 1 003 000 µs; node 9 (unknown) at
    // 1 004 000. Window [1 000 000, 1 060 000). Weights 1 + 1 ms, then the last known one:
    // no known sample after it, so the mean interval (4 − 1 ms) / 3 = 1 ms. 3 of 60 ms.
    let first = chunk(
        1,
        "0x1",
        1000001,
        &format!("{ROOT},{f}"),
        "2,2,2,9",
        "1000,1000,1000,1000",
    );
    let trace = format!("[{head},{first}]");
    let expected = |confidence: &str, status| {
        vec![(
            1,
            "1000000".to_string(),
            confidence.to_string(),
            status,
            "f (u.js:2:2)".to_string(),
            3,
        )]
    };
    assert_eq!(rows(&trace), expected("0.050", ChainStatus::LowConfidence));
    // A later chunk with a known sample at 1 100 000 (96 ms after the unknown one), wholly
    // after the window: the last known sample in the window stands until the window end,
    // 1 060 000 − 1 003 000 = 57 ms. 1 + 1 + 57 = 59 of 60 ms.
    let later = chunk(1, "0x1", 1100001, "", "2", "96000");
    let trace = format!("[{head},{first},{later}]");
    assert_eq!(rows(&trace), expected("0.983", ChainStatus::Ok));
}

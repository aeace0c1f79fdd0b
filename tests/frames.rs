//! Long animation frames and the breakdown of a window's time (docs/METHOD.md
//! §2.9, §2.10) on `samples/interactions-shop`, checked against the DevTools trace engine's
//! own reading of the same trace (`samples/interactions-shop/oracle/trace.json`, written by
//! `scripts/devtools-interactions.mjs`: its AnimationFrames handler, LONG_TASK warnings and
//! ForcedReflow insight) and against the page's code (`scripts/interaction-pages/`).

use crate::common::*;
use serde_json::Value;

fn oracle() -> Value {
    let p = case_dir("interactions-shop").join("oracle/trace.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Runs taskchain on the sample with `--animation-frames` (JSON) and the task report as
/// JSON; returns (frames, tasks).
fn run() -> (Vec<Value>, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let frames = dir.path().join("frames.json");
    let out = taskchain()
        .arg(trace_path("interactions-shop"))
        .args(["--format", "json", "--animation-frames"])
        .arg(&frames)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tasks: Value = serde_json::from_slice(&out.stdout).unwrap();
    let frames: Value = serde_json::from_str(&std::fs::read_to_string(&frames).unwrap()).unwrap();
    (
        frames["animation_frames"].as_array().unwrap().clone(),
        tasks["tasks"].as_array().unwrap().clone(),
    )
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The seven parts of a row's time.
fn parts(r: &Value, idle: bool) -> f64 {
    let mut keys = vec![
        "scripting_ms",
        "style_layout_ms",
        "paint_composite_ms",
        "gc_ms",
        "parse_compile_ms",
        "other_ms",
    ];
    if idle {
        keys.push("idle_ms");
    }
    keys.iter().map(|k| f(&r[*k])).sum()
}

#[test]
fn long_frames_are_the_engines_with_their_scripts_chains_and_breakdowns() {
    let (frames, _) = run();
    let oracle = oracle();
    let want = oracle["long_animation_frames"].as_array().unwrap();
    // Every frame the engine has over 50 ms, and no other: same start, length, blocking
    // time and script count.
    assert_eq!(frames.len(), want.len());
    for (got, want) in frames.iter().zip(want) {
        assert_eq!(got["frame_ts_us"], want["ts"]);
        assert!((f(&got["duration_ms"]) - f(&want["dur_ms"])).abs() < 0.001);
        assert_eq!(
            f(&got["blocking_duration_ms"]),
            f(&want["blocking_duration_ms"])
        );
        assert_eq!(got["num_scripts"], want["num_scripts"]);
        assert_eq!(
            got["scripts"].as_array().unwrap().len() as u64,
            want["num_scripts"].as_u64().unwrap()
        );
        // The breakdown covers the frame: the parts sum to its length (± 1 ms).
        let d = f(&got["duration_ms"]);
        assert!((parts(got, true) - d).abs() <= 1.0, "{got}");
    }
    // The pages' code (scripts/interaction-pages): the keyboard frame runs
    // onSearchKeydown > rankSuggestions, the pay frame two script entries, the page's first
    // and the vendor's listener (Chrome gives no function name for it; the chain names
    // it, 120 ms against 35).
    let chain = |r: &Value| -> Vec<String> {
        r["chain"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["function"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(chain(&frames[0]), ["onSearchKeydown", "rankSuggestions"]);
    assert_eq!(frames[0]["scripts"][0]["invoker"], "INPUT#search.keydown");
    assert_eq!(
        chain(&frames[1]),
        ["onAddToCart", "recalcTotals", "applyDiscounts"]
    );
    assert_eq!(chain(&frames[2]), ["pollStock", "mergeInventory"]);
    assert_eq!(frames[2]["scripts"][0]["invoker_type"], "USER_CALLBACK");
    let pay = &frames[4];
    let scripts = pay["scripts"].as_array().unwrap();
    assert_eq!(scripts.len(), 2);
    assert_eq!(scripts[0]["function"], "onPayClick");
    assert_eq!(scripts[1]["invoker"], "BUTTON#pay.click");
    assert_eq!(scripts[1]["source_url"], "http://cdn.tagvendor.test/tag.js");
    assert_eq!(chain(pay), ["vendorCollect", "encodeBeacon"]);
    // The restyle frame: no script, its time style and layout (16,000 cells).
    let restyle = &frames[5];
    assert_eq!(restyle["num_scripts"], 0);
    assert_eq!(restyle["status"], "non_js");
    assert!(f(&restyle["style_layout_ms"]) > 0.8 * f(&restyle["duration_ms"]));
}

#[test]
fn forced_layout_is_the_engines_forced_reflow_with_its_function() {
    let (frames, tasks) = run();
    // The engine's ForcedReflow insight: 230 events, 99.078 ms, all at sizeBars chart.js
    // 25:19 (0-based; 26:20 as the event stacks give it, the offsetHeight read).
    let reflow = &oracle()["forced_reflow"][0]["functions"][0];
    assert_eq!(reflow["function"], "sizeBars");
    let want = f(&reflow["total_ms"]);
    let chart = frames
        .iter()
        .find(|r| r["chain"].as_array().unwrap().last().unwrap()["function"] == "sizeBars")
        .expect("the chart frame");
    assert!((f(&chart["forced_layout_ms"]) - want).abs() < 0.001);
    assert_eq!(
        chart["forced_layout_function"],
        "sizeBars http://www.shop-inp.test/chart.js:26:20"
    );
    let task = tasks
        .iter()
        .find(|t| t["leaf_function"] == "sizeBars")
        .expect("the chart task");
    assert!((f(&task["forced_layout_ms"]) - want).abs() < 0.001);
    assert_eq!(
        task["forced_layout_function"],
        chart["forced_layout_function"]
    );
    // A task's parts sum to its length; its forced layout is part of its style and layout.
    for t in &tasks {
        assert!((parts(t, false) - f(&t["task_dur_ms"])).abs() <= 1.0, "{t}");
        assert!(f(&t["forced_layout_ms"]) <= f(&t["style_layout_ms"]) + 0.001);
    }
    // The engine's long tasks are taskchain's.
    let oracle = oracle();
    let want = oracle["long_tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), want.len());
    for (t, w) in tasks.iter().zip(want) {
        assert_eq!(t["task_ts_us"], w["ts"]);
    }
}

/// Runs taskchain on the sample with `--interactions OUT` (`name`: its file name, the
/// format by extension) and returns OUT's text.
fn interactions(name: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(name);
    taskchain()
        .arg(trace_path("interactions-shop"))
        .args(["-q", "-o", "-", "--interactions"])
        .arg(&out)
        .assert()
        .success();
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn a_phase_without_javascript_says_what_the_main_thread_did() {
    let v: Value = serde_json::from_str(&interactions("i.json")).unwrap();
    let rows = v["interactions"].as_array().unwrap();
    let by_id = |id: i64| rows.iter().find(|r| r["interaction_id"] == id).unwrap();
    // Every phase of every interaction: the parts sum to the phase (± 1 ms), forced layout
    // is part of style and layout.
    for r in rows {
        for (name, p) in r["phases"].as_object().unwrap() {
            let d = f(&p["duration_ms"]);
            assert!((parts(p, true) - d).abs() <= 1.0, "{name} {p}");
            assert!(f(&p["forced_layout_ms"]) <= f(&p["style_layout_ms"]) + 0.001);
        }
    }
    // The restyle click (9093, grid.js): its presentation delay 612,951,178 →
    // 613,332,926 µs ran no JavaScript (624 samples, none of JS). The trace's events in it
    // (pid = tid 25685), by hand: UpdateLayoutTree 76.118, Layout 60.861, PrePaint 208.211
    // + 0.015 + 0.005, Layerize 3.510, HitTest 0.041 + 0.040 (the second inside Commit)
    // = 348.801 ms style and layout; Paint 14.735 (another Paint nested in it) and Commit
    // 4.013 less its HitTest = 18.708 ms paint; four RunTasks cover 347.224 (clipped) +
    // 0.007 + 24.004 + 0.178 = 371.413 ms: 3.904 ms of it in no event, and 10.335 ms
    // idle between them (the thread waiting for the frame).
    let p = &by_id(9093)["phases"]["presentation_delay"];
    assert_eq!(p["status"], "non_js");
    assert_eq!(p["js_samples"], 0);
    let got: Vec<f64> = [
        "scripting_ms",
        "style_layout_ms",
        "paint_composite_ms",
        "gc_ms",
        "parse_compile_ms",
        "other_ms",
        "idle_ms",
        "forced_layout_ms",
    ]
    .iter()
    .map(|k| f(&p[*k]))
    .collect();
    assert_eq!(
        got,
        [0.0, 348.801, 18.708, 0.0, 0.0, 3.904, 10.335, 0.0],
        "{p}"
    );
    assert_eq!(f(&p["duration_ms"]), 381.748);
    // The chart click's presentation delay holds drawChart's frame: the forced layouts
    // the engine's ForcedReflow insight counts (99.078 ms), forced by sizeBars.
    let p = &by_id(9072)["phases"]["presentation_delay"];
    let reflow = &oracle()["forced_reflow"][0]["functions"][0];
    assert!((f(&p["forced_layout_ms"]) - f(&reflow["total_ms"])).abs() < 0.001);
    assert_eq!(
        p["forced_layout_function"],
        "sizeBars http://www.shop-inp.test/chart.js:26:20"
    );
    // CSV: each phase's breakdown flattened.
    let text = interactions("i.csv");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rec = reader
        .records()
        .map(Result::unwrap)
        .find(|r| &r[col("interaction_id")] == "9093")
        .unwrap();
    assert_eq!(&rec[col("presentation_delay_status")], "non_js");
    assert_eq!(&rec[col("presentation_delay_style_layout_ms")], "348.801");
    assert_eq!(&rec[col("presentation_delay_paint_composite_ms")], "18.708");
    assert_eq!(&rec[col("presentation_delay_idle_ms")], "10.335");
    assert_eq!(&rec[col("processing_forced_layout_ms")], "0.000");
}

#[test]
fn interactions_and_long_animation_frames_name_each_other() {
    let v: Value = serde_json::from_str(&interactions("i.json")).unwrap();
    let (frames, _) = run();
    // The engine's long animation frames (its AnimationFrames handler) and the page's
    // interactions: each slow interaction overlaps the one frame that holds its slow
    // part; the timer's frame (`pollStock`, 607,263,179 µs) began 35 ms before the
    // click it delayed (9065, 607,298,369 µs); the quick toggle (9086, 12 ms) is in no
    // long frame.
    let want: [(i64, &[i64]); 7] = [
        (9051, &[604341883]),
        (9058, &[605779392]),
        (9065, &[607263179]),
        (9072, &[608812792]),
        (9079, &[610126689]),
        (9086, &[]),
        (9093, &[612945770]),
    ];
    let oracle = oracle();
    let engine: Vec<i64> = oracle["long_animation_frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["ts"].as_i64().unwrap())
        .collect();
    for (id, ts) in want {
        let i = v["interactions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["interaction_id"] == id)
            .unwrap();
        let got: Vec<i64> = i["animation_frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_i64().unwrap())
            .collect();
        assert_eq!(got, ts, "{id}");
        assert!(ts.iter().all(|t| engine.contains(t)), "{id}");
        // And the frame names the interaction.
        for t in ts {
            let f = frames.iter().find(|f| f["frame_ts_us"] == *t).unwrap();
            assert_eq!(f["interactions"], serde_json::json!([id]), "{id}");
        }
    }
}

#[test]
fn a_forced_layout_without_a_stack_trace_is_named_from_the_samples() {
    // The sample's trace without `disabled-by-default-devtools.timeline.stack`: every
    // `beginData.stackTrace` removed (232 style and layout events).
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(
            std::fs::File::open(trace_path("interactions-shop")).unwrap(),
        ),
        &mut text,
    )
    .unwrap();
    let mut trace: Value = serde_json::from_str(&text).unwrap();
    let mut stripped = 0;
    for e in trace["traceEvents"].as_array_mut().unwrap() {
        if let Some(d) = e
            .pointer_mut("/args/beginData")
            .and_then(Value::as_object_mut)
        {
            stripped += usize::from(d.remove("stackTrace").is_some());
        }
    }
    assert_eq!(stripped, 232);
    let path = dir.path().join("no-stacks.json");
    std::fs::write(&path, serde_json::to_vec(&trace).unwrap()).unwrap();
    let out = taskchain()
        .arg(&path)
        .args(["--format", "json", "--interactions"])
        .arg(dir.path().join("i.json"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let tasks: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The chart task's 230 forced layouts (99.078 ms) each fall inside sizeBars' loop:
    // the samples in them run sizeBars, whose call frame is the function itself —
    // chart.js line 14, column 18 made 1-based (`function sizeBars(` has its `(` there),
    // where the event stacks named the offsetHeight read (26:20).
    let want = "sizeBars http://www.shop-inp.test/chart.js:14:18";
    let task = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["leaf_function"] == "sizeBars")
        .unwrap();
    assert_eq!(f(&task["forced_layout_ms"]), 99.078);
    assert_eq!(task["forced_layout_function"], want);
    let i: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("i.json")).unwrap()).unwrap();
    let chart = i["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["interaction_id"] == 9072)
        .unwrap();
    assert_eq!(
        chart["phases"]["presentation_delay"]["forced_layout_function"],
        want
    );
    // The keyboard task's 4.443 ms of layout inside the input's default action
    // (`EventDispatch` with no listener running): no JavaScript sample in it or before
    // it inside the dispatch, so no function is named.
    let key = &tasks["tasks"][0];
    assert_eq!(f(&key["forced_layout_ms"]), 4.443);
    assert_eq!(key["forced_layout_function"], Value::Null);
}

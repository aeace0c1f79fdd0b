//! Interactions on the shared recording (`tests/data/inp-all`, a copy of
//! `../shared/traces/interactions/`): six interactions of known code, each with a slow
//! phase, checked against the DevTools trace engine's own output (`oracle/`, from
//! `@paulirish/trace_engine` 0.0.65) and the recording's ground truth (which chain each
//! phase must name, or that it ran no JavaScript).

use std::path::{Path, PathBuf};

use serde_json::Value;
use taskchain::chain::phases::Phase;
use taskchain::report::interactions::InteractionRow;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/inp-all")
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn rows() -> Vec<InteractionRow> {
    let path = data_dir().join("inp_all_1.json.gz");
    taskchain::analyze_path(&path, &taskchain::Settings::default())
        .unwrap()
        .interactions
}

fn ms(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

#[test]
fn every_interaction_devtools_finds_with_its_phases_and_inp() {
    let oracle = json(&data_dir().join("oracle/inp_all_1.json"));
    let want = oracle["by_interaction_id"].as_array().unwrap();
    let got = rows();
    assert_eq!(got.len(), want.len());
    for w in want {
        let id = w["interaction_id"].as_i64().unwrap();
        let r = got
            .iter()
            .find(|r| r.interaction.event.interaction_id == id)
            .unwrap_or_else(|| panic!("interaction {id} not found"));
        let i = &r.interaction;
        let close = |ours: taskchain::time::TimeDelta, theirs: &Value, what: &str| {
            let ours = ours.as_nanos() as f64 / 1e6;
            // DevTools works in float µs, taskchain in ns: at most 1 µs apart.
            assert!(
                (ours - ms(theirs)).abs() <= 0.001,
                "{id} {what}: {ours} vs DevTools {theirs}"
            );
        };
        close(i.duration(), &w["duration_ms"], "duration");
        close(i.input_delay(), &w["input_delay_ms"], "input delay");
        close(i.processing(), &w["processing_ms"], "processing");
        close(
            i.presentation_delay(),
            &w["presentation_delay_ms"],
            "presentation delay",
        );
        assert_eq!(i.category.as_str(), w["type"].as_str().unwrap(), "{id}");
        assert_eq!(
            i.event.event_type,
            w["representative_type"].as_str().unwrap(),
            "{id}"
        );
        assert_eq!(
            i.kept_events as u64,
            w["kept_events"].as_u64().unwrap(),
            "{id}"
        );
        assert_eq!(
            i.is_inp,
            w["is_inp_insight"].as_bool().unwrap(),
            "{id} is_inp"
        );
        assert_eq!(
            i.event.ts.as_nanos(),
            w["ts"].as_i64().unwrap() * 1000,
            "{id} start"
        );
    }
    // The delayed click (5428, 180.568 ms) is INP: the longest of six (index 0).
    let inp: Vec<i64> = got
        .iter()
        .filter(|r| r.interaction.is_inp)
        .map(|r| r.interaction.event.interaction_id)
        .collect();
    assert_eq!(inp, [5428]);
}

/// The function names of a phase's chain without the outer frames that have no script
/// (the event-dispatch machinery, as `check.py` allows).
fn script_chain(r: &InteractionRow, p: Phase) -> Vec<String> {
    let chain = &r.phase(p).unwrap().row.chain;
    let first = chain
        .iter()
        .position(|f| !f.url.is_empty())
        .unwrap_or(chain.len());
    chain[first..].iter().map(|f| f.function.clone()).collect()
}

#[test]
fn each_slow_phase_names_the_code_written_for_it_and_the_others_no_javascript() {
    let truth = json(&data_dir().join("inp_all_1.groundtruth.json"));
    let got = rows();
    let mut chains = 0;
    let mut nulls = 0;
    for t in truth["interactions"].as_array().unwrap() {
        let id = t["interaction_id"].as_i64().unwrap();
        let r = got
            .iter()
            .find(|r| r.interaction.event.interaction_id == id)
            .unwrap();
        for p in Phase::ALL {
            let expected = &t["phases"][p.as_str()];
            let row = &r.phase(p).unwrap().row;
            match expected["check"].as_str().unwrap() {
                "chain" => {
                    let want: Vec<String> = expected["expected_chain"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap().to_string())
                        .collect();
                    assert_eq!(script_chain(r, p), want, "{id} {}", p.as_str());
                    assert_eq!(row.status.as_str(), "ok", "{id} {}", p.as_str());
                    chains += 1;
                }
                "null" => {
                    assert!(
                        row.status.as_str() != "ok",
                        "{id} {}: {:?} {:?}",
                        p.as_str(),
                        row.status,
                        script_chain(r, p)
                    );
                    nulls += 1;
                }
                _ => {}
            }
        }
    }
    assert_eq!((chains, nulls), (5, 10));
}

#[test]
fn the_input_delay_of_the_delayed_click_lists_the_timer_task_it_waited_for() {
    let got = rows();
    let r = got
        .iter()
        .find(|r| r.interaction.event.interaction_id == 5428)
        .unwrap();
    let delay = r.phase(Phase::InputDelay).unwrap();
    // One long task: the 200 ms `backgroundSync` timer armed 30 ms before the click.
    assert_eq!(delay.long_tasks.len(), 1, "{:?}", delay.long_tasks);
    let t = &delay.long_tasks[0];
    assert!(t.dur.as_nanos() > 150_000_000, "{:?}", t.dur);
    assert!(t.ts < r.interaction.event.ts);
    assert_eq!(
        delay.row.trigger.as_ref().map(|t| t.kind.as_str()),
        Some("timer")
    );
}

#[test]
fn a_field_bundle_with_event_timing_entries_gives_the_same_rows() {
    // The profile of `samples/field-bundle` (a sample every 10 ms from 100 to 270 ms:
    // `onClick > render > (anonymous)` at 100, 110, 130, 150, `onClick > render` at 120,
    // no stack from 140 on but 150) with Event Timing entries as web-vitals keeps them: a
    // pointerdown at 95 ms (processing 98–125) and its click at 96 ms (processing
    // 125–158), both painted at 95 + 104 ms; a keydown of no interaction.
    let bundle = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/field-bundle/trace.json"),
    )
    .unwrap();
    let mut v: Value = serde_json::from_str(&bundle).unwrap();
    let entry = |name: &str, id: i64, start: f64, ps: f64, pe: f64, dur: f64| {
        serde_json::json!({"name": name, "entryType": "event", "interactionId": id,
            "startTime": start, "processingStart": ps, "processingEnd": pe, "duration": dur})
    };
    v["eventTimings"] = serde_json::json!([
        entry("pointerdown", 7, 95.0, 98.0, 125.0, 104.0),
        entry("click", 7, 96.0, 125.0, 158.0, 103.0),
        entry("keydown", 0, 200.0, 201.0, 202.0, 16.0),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bundle.json");
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    let got = taskchain::analyze_path(&path, &taskchain::Settings::default())
        .unwrap()
        .interactions;
    assert_eq!(got.len(), 1);
    let r = &got[0];
    let i = &r.interaction;
    // The pointerdown is kept (earliest of the pointer events painted together), its
    // processing widened to the click's end: 3 ms input delay, 60 ms processing, 41 ms
    // presentation delay; the only interaction, so INP.
    assert_eq!(i.event.event_type, "pointerdown");
    assert_eq!(i.event_types, ["pointerdown", "click"]);
    let ms = |d: taskchain::time::TimeDelta| d.as_nanos() / 1_000_000;
    assert_eq!(
        (
            ms(i.duration()),
            ms(i.input_delay()),
            ms(i.processing()),
            ms(i.presentation_delay())
        ),
        (104, 3, 60, 41)
    );
    assert!(i.is_inp);
    // Processing [98, 158): 6 samples, 4 of the deepest stack, each standing until the
    // next sample, the last (150 ms) cut at the window's end: 10 + 10 + 10 + 8 = 38 ms.
    let p = &r.phase(Phase::Processing).unwrap().row;
    let names: Vec<&str> = p.chain.iter().map(|f| f.function.as_str()).collect();
    assert_eq!(names, ["onClick", "render", "(anonymous)"]);
    assert_eq!((p.window_samples, p.target_samples), (6, 4));
    assert_eq!(p.stack_time.as_nanos(), 38_000_000);
    assert_eq!(p.status.as_str(), "ok");
    // Presentation delay [158, 199): four samples, none of JavaScript.
    let d = r.phase(Phase::PresentationDelay).unwrap();
    assert_eq!((d.row.window_samples, d.js_samples), (4, 0));
    assert_eq!(d.row.status.as_str(), "non_js");
    // Input delay [95, 98): no sample.
    let d = &r.phase(Phase::InputDelay).unwrap().row;
    assert_eq!(d.status.as_str(), "no_samples");
}

/// Runs `taskchain -q --interactions OUT ARGS...` and returns OUT's bytes.
fn interactions_output(name: &str, args: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join(name);
    crate::common::taskchain()
        .args(["-q", "-o", "-", "--interactions"])
        .arg(&out)
        .args(args)
        .arg(data_dir().join("inp_all_1.json.gz"))
        .assert()
        .success();
    (tmp, out)
}

#[test]
fn check_py_passes_on_the_interactions_json() {
    let (_tmp, out) = interactions_output("i.json", &[]);
    let dir = data_dir();
    let run = std::process::Command::new("python3")
        .arg(dir.join("check.py"))
        .arg(dir.join("inp_all_1.groundtruth.json"))
        .arg(&out)
        .arg("--oracle-dir")
        .arg(dir.join("oracle"))
        .output()
        .expect("python3 runs check.py");
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{text}");
    // 6 found, 6 × 4 times and INP, 5 chains (leaf + chain) and 10 phases without JS.
    assert!(text.ends_with("50 passed, 0 failed\n"), "{text}");
    // The JSON contract's keys, on the INP interaction (5428, the delayed click).
    let v = json(&out);
    let i = v["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["interaction_id"] == 5428)
        .unwrap();
    for key in [
        "file",
        "pid",
        "tid",
        "interaction_id",
        "type",
        "event_types",
        "start_ts_us",
        "duration_ms",
        "input_delay_ms",
        "processing_ms",
        "presentation_delay_ms",
        "is_inp",
    ] {
        assert!(i.get(key).is_some(), "{key}");
    }
    assert_eq!(i["type"], "pointer");
    assert_eq!(i["start_ts_us"], 2801128708i64);
    assert_eq!(i["duration_ms"], 180.568);
    assert_eq!(i["is_inp"], true);
    let p = &i["phases"]["input_delay"];
    for key in [
        "chain",
        "samples",
        "target_samples",
        "stack_ms",
        "confidence",
        "status",
    ] {
        assert!(p.get(key).is_some(), "{key}");
    }
    let chain: Vec<&str> = p["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap())
        .collect();
    assert_eq!(chain.last(), Some(&"compactCache"));
    assert_eq!(p["trigger"], "timer");
    assert_eq!(p["long_tasks"].as_array().unwrap().len(), 1);
}

#[test]
fn the_csv_flattens_each_phase_and_the_summary_names_inp() {
    let (tmp, out) = interactions_output("i.csv", &[]);
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for col in [
        "processing_chain",
        "processing_confidence",
        "input_delay_status",
    ] {
        assert!(header.contains(&col), "{col}");
    }
    assert_eq!(lines.count(), 6);
    let summary = tmp.path().join("s.csv");
    crate::common::taskchain()
        .args(["-q", "-o", "-", "--summary"])
        .arg(&summary)
        .args(["--budget", "inp-ms=180"])
        .arg(data_dir().join("inp_all_1.json.gz"))
        .assert()
        .code(1);
    let s = std::fs::read_to_string(&summary).unwrap();
    // 6 interactions; INP the delayed click's 180.568 ms, over a budget of 180; 5 long
    // animation frames (the DevTools engine's count, tests/data/interactions-oracle); no
    // first contentful paint in the trace (recorded after the load): no tbt_from_fcp_ms;
    // no long task outside the main frame.
    assert!(
        s.lines().nth(1).unwrap().ends_with(",6,180.568,5,,0"),
        "{s}"
    );
}

//! Source maps: original names, sources, lines and columns of every frame of real
//! recordings, against their hand-checked ground truths (strict columns), with the maps
//! given each way (see docs/SOURCE-MAPS.md).

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/traces/sourcemaps")
}

fn taskchain() -> Command {
    Command::cargo_bin("taskchain").unwrap()
}

/// Runs `taskchain --format json ARGS TRACE`; returns the tasks and stderr.
fn run_json(trace: &Path, args: &[String]) -> (Vec<Value>, String) {
    let out = taskchain()
        .args(["--format", "json"])
        .args(args)
        .arg(trace)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        doc["tasks"].as_array().unwrap().clone(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The file name of a source (`../../src/main.js` → `main.js`), as check.py compares.
fn base(s: &str) -> &str {
    let s = s.split(['?', '#']).next().unwrap();
    s.rsplit('/').next().unwrap()
}

/// Checks every frame of every ground-truth task: generated frame as the trace has it,
/// and its original function, source file, line and column (strict).
fn check_against(groundtruth: &Path, tasks: &[Value]) {
    let gt: Value = serde_json::from_str(&std::fs::read_to_string(groundtruth).unwrap()).unwrap();
    let mut checked = 0;
    for t in gt["long_tasks"].as_array().unwrap() {
        let Some(exp) = t["expected_frames_symbolicated"].as_array() else {
            continue;
        };
        let o = &t["observed"];
        let task = tasks
            .iter()
            .find(|r| {
                r["pid"] == o["pid"]
                    && r["tid"] == o["tid"]
                    && (r["task_ts_us"].as_f64().unwrap() - o["ts"].as_f64().unwrap()).abs() <= 2.0
            })
            .unwrap_or_else(|| panic!("task {} not reported", t["id"]));
        let got: Vec<&Value> = task["chain"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["function"] != "(root)")
            .collect();
        assert_eq!(got.len(), exp.len(), "task {}: {got:?}", t["id"]);
        for (g, e) in got.iter().zip(exp) {
            for k in ["function", "url", "line", "column"] {
                assert_eq!(g[k], e[k], "task {} {k}", t["id"]);
            }
            assert_eq!(
                g["original_function"], e["original_function"],
                "task {}: {g}",
                t["id"]
            );
            assert_eq!(
                base(g["original_source"].as_str().unwrap_or("")),
                base(e["original_source"].as_str().unwrap()),
                "task {}: {g}",
                t["id"]
            );
            assert_eq!(
                g["original_line"], e["original_line"],
                "task {}: {g}",
                t["id"]
            );
            assert_eq!(
                g["original_column"], e["original_column"],
                "task {}: {g}",
                t["id"]
            );
            checked += 1;
        }
    }
    assert!(
        checked > 0,
        "no frames checked in {}",
        groundtruth.display()
    );
}

fn shared_trace() -> PathBuf {
    shared().join("sm_esbuild_rundown.json")
}

fn shared_truth() -> PathBuf {
    shared().join("sm_esbuild_rundown.groundtruth.json")
}

#[test]
fn shared_recording_with_a_mirror_of_the_server() {
    // The trace's ScriptCatchup names app.min.js.map for scriptId 4 of pid 28096.
    let site = shared().join("site").canonicalize().unwrap();
    let arg = format!("http://127.0.0.1:37037/={}/", site.display());
    let (tasks, stderr) = run_json(&shared_trace(), &["--source-maps".into(), arg]);
    check_against(&shared_truth(), &tasks);
    assert!(!stderr.contains("warning:"), "{stderr}");
}

#[test]
fn shared_recording_with_a_folder_of_maps() {
    let dir = shared().join("site/sm/dist");
    let (tasks, _) = run_json(
        &shared_trace(),
        &["--source-maps".into(), dir.display().to_string()],
    );
    check_against(&shared_truth(), &tasks);
}

#[test]
fn a_missing_map_warns_once_and_keeps_generated_names() {
    let empty = tempfile::tempdir().unwrap();
    let arg = format!("http://127.0.0.1:37037/={}", empty.path().display());
    let (tasks, stderr) = run_json(&shared_trace(), &["--source-maps".into(), arg]);
    assert_eq!(tasks.len(), 3);
    for t in &tasks {
        for f in t["chain"].as_array().unwrap() {
            assert!(
                f["original_function"].is_null() && f["original_line"].is_null(),
                "{f}"
            );
        }
    }
    // One warning for the one map, though 10 frames of 3 tasks use it.
    assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
    assert!(stderr.contains("source map http://127.0.0.1:37037/sm/dist/esbuild/app.min.js.map"));
    assert!(stderr.contains("keep their generated names"), "{stderr}");
}

#[test]
fn csv_chain_shows_originals_unless_generated_names_are_asked_for() {
    let dir = shared().join("site/sm/dist").display().to_string();
    let csv = |extra: &[&str]| {
        let out = taskchain()
            .args(["-q", "--source-maps", &dir])
            .args(extra)
            .arg(shared_trace())
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let original = csv(&[]);
    let header = original.lines().next().unwrap();
    assert!(header.ends_with(
        ",leaf_original_function,leaf_original_source,leaf_original_line,leaf_original_column,\
         trigger,trigger_detail"
    ));
    // The flush timer task: hand-checked against src/scheduler.js and src/audit.js.
    assert!(
        original.contains(
            "onFlushTimer (../../src/scheduler.js:9:10) > flush (../../src/audit.js:24:3) > \
             encodeAuditEntries (../../src/audit.js:3:35),trace,,,,encodeAuditEntries,\
             ../../src/audit.js,3,35,timer,"
        ),
        "{original}"
    );
    let generated = csv(&["--chain-names", "generated"]);
    let u = "http://127.0.0.1:37037/sm/dist/esbuild/app.min.js";
    assert!(
        generated.contains(&format!(
            "$ ({u}:2:453) > flush ({u}:2:317) > w ({u}:2:112),trace,,,,encodeAuditEntries,"
        )),
        "{generated}"
    );
}

#[test]
fn summary_counts_the_share_of_frames_symbolicated() {
    let dir = shared().join("site/sm/dist").display().to_string();
    let tmp = tempfile::tempdir().unwrap();
    let summary = tmp.path().join("s.csv");
    taskchain()
        .args(["-q", "--source-maps", &dir, "--summary"])
        .arg(&summary)
        .arg(shared_trace())
        .assert()
        .success();
    let s = std::fs::read_to_string(&summary).unwrap();
    // All 10 frames of the 3 tasks (4 + 3 + 3) are in the bundle and mapped.
    assert!(s.lines().nth(1).unwrap().ends_with(",1.000"), "{s}");
}

//! The Chromium sample traces against their ground-truth files (`samples/chromium-*/
//! groundtruth.json`, schema `longtask-groundtruth/1`, recorded from real Chromium 156 on
//! pages whose hot code is known). The same rules as `../shared/scripts/check-ground-truth`,
//! plus: the long-task count of every `--scope`, the full top stack with 1-based positions,
//! the sample counts, and the worker task that only `--scope all` may report.

use crate::common::*;
use serde_json::Value;
use taskchain::report::Format;

const META: [&str; 6] = [
    "(root)",
    "(program)",
    "(idle)",
    "(garbage collector)",
    "",
    "(anonymous)",
];

fn filtered(names: &[String], collapse: bool) -> Vec<String> {
    let mut kept: Vec<String> = names
        .iter()
        .filter(|n| !META.contains(&n.as_str()))
        .cloned()
        .collect();
    if collapse {
        kept.dedup();
    }
    kept
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn tasks(case: &str, scope: &str) -> Vec<Value> {
    let out = report(
        &["--scope".into(), scope.into()],
        &[trace_path(case)],
        Format::Json,
        2,
    );
    let doc: Value = serde_json::from_slice(&out).unwrap();
    doc["tasks"].as_array().unwrap().clone()
}

fn find<'a>(rows: &'a [Value], observed: &Value) -> &'a Value {
    rows.iter()
        .find(|r| {
            r["pid"] == observed["pid"]
                && r["tid"] == observed["tid"]
                && (r["task_ts_us"].as_f64().unwrap() - observed["ts"].as_f64().unwrap()).abs()
                    <= 2.0
        })
        .unwrap_or_else(|| panic!("task at {} not reported", observed["ts"]))
}

/// Checks one expected task (`t`: a `long_tasks` or `not_reported` entry) against `row`.
fn check_task(case: &str, t: &Value, row: &Value) {
    let id = format!("{case} {}", t["id"]);
    let chain: Vec<String> = row["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap().to_string())
        .collect();
    let leaf = row["leaf_function"].as_str().unwrap_or("");
    let want_leaf = t["expected_leaf"].as_str().unwrap();
    assert!(
        leaf == want_leaf || (want_leaf.is_empty() && leaf == "(anonymous)"),
        "{id}: leaf {leaf:?}, expected {want_leaf:?}"
    );
    let collapse = t["expected_chain_is_recursion_collapsed"]
        .as_bool()
        .unwrap_or(false);
    assert_eq!(
        filtered(&chain, collapse),
        filtered(&strings(&t["expected_chain"]), collapse),
        "{id}: chain"
    );
    let obs = &t["observed"];
    let top = &obs["top_stack"];
    // The full top stack, 1-based lines, as the ground truth's recorder printed it.
    if let Some(frames) = top["frames"].as_array()
        && !collapse
    {
        let got: Vec<Value> = row["chain"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                serde_json::json!({"function": f["function"], "url": f["url"],
                                   "line": f["line"], "column": f["column"]})
            })
            .collect();
        assert_eq!(&got, frames, "{id}: frames");
    }
    // The ground truth counts samples in [ts, ts + dur]; taskchain in [ts, ts + dur): a
    // sample exactly at the end may differ by one.
    let n = row["window_samples"].as_i64().unwrap();
    let want = obs["samples_in_task"].as_i64().unwrap();
    assert!(
        (n - want).abs() <= 1,
        "{id}: window samples {n}, expected {want}"
    );
    if !collapse {
        let n = row["target_samples"].as_i64().unwrap();
        let want = top["samples"].as_i64().unwrap();
        assert!(
            (n - want).abs() <= 1,
            "{id}: target samples {n}, expected {want}"
        );
    }
}

fn check(case: &str) {
    let gt: Value = serde_json::from_str(
        &std::fs::read_to_string(case_dir(case).join("groundtruth.json")).unwrap(),
    )
    .unwrap();
    for scope in ["main-frame", "renderers", "all"] {
        let want = gt["expected_long_task_count_by_scope"][scope]
            .as_u64()
            .unwrap();
        assert_eq!(
            tasks(case, scope).len() as u64,
            want,
            "{case}: long tasks with --scope {scope}"
        );
    }
    let renderers = tasks(case, "renderers");
    let expected = gt["long_tasks"].as_array().unwrap();
    assert_eq!(
        renderers.len(),
        expected.len(),
        "{case}: extra or missing tasks"
    );
    for t in expected {
        check_task(case, t, find(&renderers, &t["observed"]));
    }
    let all = tasks(case, "all");
    for t in gt["not_reported"].as_array().unwrap() {
        assert!(
            !renderers
                .iter()
                .any(|r| r["tid"] == t["observed"]["tid"] && r["pid"] == t["observed"]["pid"]),
            "{case}: {} reported under --scope renderers",
            t["id"]
        );
        check_task(case, t, find(&all, &t["observed"]));
    }
}

#[test]
fn click_chain() {
    check("chromium-click-chain");
}
#[test]
fn iframes() {
    check("chromium-iframes");
}
#[test]
fn native_layout() {
    check("chromium-native-layout");
}
#[test]
fn session_15s() {
    check("chromium-session-15s");
}
#[test]
fn split_70_30() {
    check("chromium-split-70-30");
}
#[test]
fn startup_load_browsertarget() {
    check("chromium-startup-load-browsertarget");
}
#[test]
fn worker_and_main() {
    check("chromium-worker-and-main");
}

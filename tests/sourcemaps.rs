//! Source maps: original names, sources, lines and columns of every frame of real
//! recordings, against their hand-checked ground truths (strict columns), with the maps
//! given each way (see docs/SOURCE-MAPS.md).

use crate::common::{sm_recording_dir, taskchain};

use std::path::{Path, PathBuf};

use serde_json::Value;

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
    sm_recording_dir().join("sm_esbuild_rundown.json")
}

fn shared_truth() -> PathBuf {
    sm_recording_dir().join("sm_esbuild_rundown.groundtruth.json")
}

/// The recording's folder of maps (and bundles), as a `--source-maps` argument.
fn maps_dir() -> String {
    sm_recording_dir()
        .join("site/sm/dist")
        .display()
        .to_string()
}

#[test]
fn shared_recording_with_a_mirror_of_the_server() {
    // The trace's ScriptCatchup names app.min.js.map for scriptId 4 of pid 28096.
    let site = sm_recording_dir().join("site").canonicalize().unwrap();
    let arg = format!("http://127.0.0.1:37037/={}/", site.display());
    let (tasks, stderr) = run_json(&shared_trace(), &["--source-maps".into(), arg]);
    check_against(&shared_truth(), &tasks);
    // The one warning counts a task whose out-of-order samples change nothing.
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].ends_with("(not flagged samples_reordered): 1"),
        "{stderr}"
    );
}

#[test]
fn shared_recording_with_a_folder_of_maps() {
    let (tasks, _) = run_json(&shared_trace(), &["--source-maps".into(), maps_dir()]);
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
    // One warning for the one map, though 10 frames of 3 tasks use it (and one counting a
    // task whose out-of-order samples change nothing).
    assert_eq!(stderr.matches("warning:").count(), 2, "{stderr}");
    assert_eq!(stderr.matches("source map ").count(), 1, "{stderr}");
    assert!(stderr.contains("source map http://127.0.0.1:37037/sm/dist/esbuild/app.min.js.map"));
    assert!(stderr.contains("keep their generated names"), "{stderr}");
}

#[test]
fn csv_chain_shows_originals_unless_generated_names_are_asked_for() {
    let dir = maps_dir();
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
    // The source-map columns, then the parties'.
    assert!(header.ends_with(
        ",leaf_original_function,leaf_original_source,leaf_original_line,leaf_original_column,\
         leaf_party,leaf_vendor,entry_party,entry_vendor,\
         trigger,trigger_detail,scripting_ms,style_layout_ms,paint_composite_ms,gc_ms,\
         parse_compile_ms,other_ms,forced_layout_ms,forced_layout_function"
    ));
    // The flush timer task: hand-checked against src/scheduler.js and src/audit.js.
    assert!(
        original.contains(
            "onFlushTimer (../../src/scheduler.js:9:10) > flush (../../src/audit.js:24:3) > \
             encodeAuditEntries (../../src/audit.js:3:35),trace,,,,encodeAuditEntries,\
             ../../src/audit.js,3,35,"
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
    let dir = maps_dir();
    let tmp = tempfile::tempdir().unwrap();
    let summary = tmp.path().join("s.csv");
    taskchain()
        .args(["-q", "--source-maps", &dir, "--summary"])
        .arg(&summary)
        .arg(shared_trace())
        .assert()
        .success();
    let s = std::fs::read_to_string(&summary).unwrap();
    // All 10 frames of the 3 tasks (4 + 3 + 3) are in the bundle and mapped; three
    // animation frames over 50 ms (132.417, 102.891, 82.258 ms by the DevTools engine's
    // AnimationFrames handler, scripts/devtools-interactions.mjs).
    let column = |name: &str| {
        let k = s.lines().next().unwrap().split(',').position(|c| c == name);
        s.lines()
            .nth(1)
            .unwrap()
            .split(',')
            .nth(k.unwrap())
            .unwrap()
            .to_string()
    };
    assert_eq!(column("frames_symbolicated"), "1.000", "{s}");
    assert_eq!(column("long_animation_frames"), "3", "{s}");
}

// The recordings of samples/sm-* (scripts/sourcemaps/): every bundle frame of every long
// task is checked against `expected/functions.json` (Mozilla's source-map library and
// acorn, scripts/sourcemaps/truth.cjs), and each task's original chain against the app's
// intended chains (samples/sm-site/src) less the functions the minifier inlined away.

const MIRROR: &str = "http://127.0.0.1:37038/=samples/sm-site";

fn sample(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(case)
}

/// Runs the case and checks its frames against its functions.json; returns the original
/// chains of the tasks with JS frames, in task order.
fn check_sample(case: &str, args: &[&str]) -> (Vec<Vec<String>>, String) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let out = taskchain()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["--format", "json"])
        .args(&args)
        .arg(sample(case).join("trace.json.gz"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(sample(case).join("expected/functions.json")).unwrap(),
    )
    .unwrap();
    let bundle = truth["bundle"]
        .as_str()
        .unwrap()
        .replace("samples/sm-site/", "");
    let mut chains = Vec::new();
    let mut checked = 0;
    for t in doc["tasks"].as_array().unwrap() {
        let mut chain = Vec::new();
        for f in t["chain"].as_array().unwrap() {
            let Some(url) = f["url"].as_str() else {
                continue;
            };
            assert!(url.ends_with(&bundle), "{case}: {url}");
            let e = truth["functions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| {
                    e["generated"]["line"] == f["line"] && e["generated"]["column"] == f["column"]
                })
                .unwrap_or_else(|| panic!("{case}: no function of the bundle at {f}"));
            let o = &e["original"];
            assert_eq!(f["original_function"], o["function"], "{case}: {f}");
            // Mozilla's library normalizes `webpack:///./src` to `webpack:///src`; taskchain
            // reports the map's own text: compare the file names.
            assert_eq!(
                base(f["original_source"].as_str().unwrap()),
                base(o["source"].as_str().unwrap()),
                "{case}: {f}"
            );
            assert_eq!(f["original_line"], o["line"], "{case}: {f}");
            assert_eq!(f["original_column"], o["column"], "{case}: {f}");
            chain.push(o["function"].as_str().unwrap().to_string());
            checked += 1;
        }
        if !chain.is_empty() {
            chains.push(chain);
        }
    }
    assert!(checked >= 8, "{case}: {checked} frames");
    (chains, stderr)
}

fn chains(c: &[&[&str]]) -> Vec<Vec<String>> {
    c.iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect()
}

#[test]
fn rollup_and_terser_with_rundown_events() {
    // terser inlined parseInventory into handleImportClick (no frame, none invented) and
    // turned scoreRows, checksumBlocks and encodeAuditEntries into anonymous IIFEs, which
    // get their original names back.
    let (got, stderr) = check_sample("sm-rollup-terser", &["--source-maps", MIRROR]);
    assert_eq!(
        got,
        chains(&[
            &["handleImportClick", "transformRows", "scoreRows"],
            &["onSyncTimer", "reconcileInventory", "checksumBlocks"],
            &["onFlushTimer", "flush", "encodeAuditEntries"],
        ])
    );
    assert!(!stderr.contains("source map"), "{stderr}");
}

#[test]
fn webpack_without_rundown_events_started_before_navigation() {
    // No map URL in the trace: the local bundle's sourceMappingURL comment names it; with
    // a folder of maps, the map is found by the script's file name.
    let expected = chains(&[
        &["handleImportClick", "transformRows", "scoreRows"],
        &["onSyncTimer", "checksumBlocks"],
        &["onFlushTimer", "flush", "encodeAuditEntries"],
    ]);
    let (got, _) = check_sample("sm-webpack-no-rundown", &["--source-maps", MIRROR]);
    assert_eq!(got, expected);
    let dir = "samples/sm-site/dist/webpack";
    let (got, _) = check_sample("sm-webpack-no-rundown", &["--source-maps", dir]);
    assert_eq!(got, expected);
}

#[test]
fn an_index_map_with_sections() {
    let (got, _) = check_sample("sm-index-map", &["--source-maps", MIRROR]);
    assert_eq!(got[0], ["handleImportClick", "transformRows", "scoreRows"]);
    assert_eq!(got.len(), 3);
}

#[test]
fn a_data_url_map_needs_no_option() {
    // Chrome leaves a data: map URL out of the rundown (sourceMapUrlElided); the script
    // text of the -sources event has it.
    let (got, _) = check_sample("sm-data-url", &[]);
    assert_eq!(
        got,
        chains(&[
            &[
                "handleImportClick",
                "parseInventory",
                "transformRows",
                "scoreRows"
            ],
            &["onSyncTimer", "reconcileInventory", "checksumBlocks"],
            &["onFlushTimer", "flush", "encodeAuditEntries"],
        ])
    );
}

#[test]
fn maps_embedded_in_the_trace_need_no_option() {
    let (got, _) = check_sample("sm-embedded", &[]);
    assert_eq!(got[2], ["onFlushTimer", "flush", "encodeAuditEntries"]);
}

#[test]
fn missing_and_broken_maps_warn_once_per_file() {
    for (case, why) in [
        ("sm-missing-map", "cannot be read"),
        ("sm-broken-map", "is not a source map"),
    ] {
        let out = taskchain()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["--format", "json", "--source-maps", MIRROR])
            .arg(sample(case).join("trace.json.gz"))
            .output()
            .unwrap();
        assert!(out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        let warnings: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("source map"))
            .collect();
        assert_eq!(warnings.len(), 1, "{case}: {stderr}");
        assert!(warnings[0].contains(why), "{case}: {stderr}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let frames: Vec<&Value> = doc["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| t["chain"].as_array().unwrap())
            .filter(|f| f["url"].is_string())
            .collect();
        assert_eq!(frames.len(), 10, "{case}");
        assert!(
            frames.iter().all(|f| f["original_function"].is_null()),
            "{case}"
        );
    }
}

/// A small trace of the shared build: one 60 ms task whose samples are all in
/// T > a > m > u (the import click chain of app.min.js, scriptId 4), and the rundown event
/// naming the map. `k` varies the task's start so the files differ.
fn tiny_trace(k: u32) -> String {
    let url = "http://127.0.0.1:37037/sm/dist/esbuild/app.min.js";
    let frame = |id: u32, parent: u32, name: &str, line: u32, col: u32| {
        format!(
            r#"{{"id":{id},"parent":{parent},"callFrame":{{"functionName":"{name}","url":"{url}","scriptId":4,"lineNumber":{line},"columnNumber":{col}}}}}"#
        )
    };
    let nodes = [
        r#"{"id":1,"callFrame":{"functionName":"(root)","scriptId":0}}"#.to_string(),
        frame(2, 1, "T", 2, 85),
        frame(3, 2, "a", 0, 575),
        frame(4, 3, "m", 0, 402),
        frame(5, 4, "u", 0, 16),
    ];
    let ts = 10_000 + k;
    format!(
        "[{}]",
        [
            r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}}"#.to_string(),
            format!(r#"{{"ph":"X","cat":"disabled-by-default-devtools.v8-source-rundown","name":"ScriptCatchup","pid":1,"tid":1,"ts":5,"dur":1,"args":{{"data":{{"isolate":"1","scriptId":4,"sourceMapUrl":"app.min.js.map","url":"{url}"}}}}}}"#),
            r#"{"ph":"P","name":"Profile","id":"0x1","pid":1,"tid":1,"ts":0,"args":{"data":{"startTime":0}}}"#.to_string(),
            format!(
                r#"{{"ph":"P","name":"ProfileChunk","id":"0x1","pid":1,"tid":1,"ts":90000,"args":{{"data":{{"cpuProfile":{{"nodes":[{}],"samples":[5,5,5,5,5,5]}},"timeDeltas":[{},10000,10000,10000,10000,10000]}}}}}}"#,
                nodes.join(","),
                ts + 1
            ),
            format!(r#"{{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":{ts},"dur":60000}}"#),
        ]
        .join(",")
    )
}

#[test]
fn a_batch_of_1000_traces_of_one_build_decodes_its_map_once() {
    use clap::Parser;
    let dir = tempfile::tempdir().unwrap();
    for k in 0..1000 {
        std::fs::write(dir.path().join(format!("t{k:04}.json")), tiny_trace(k)).unwrap();
    }
    let site = sm_recording_dir().join("site").canonicalize().unwrap();
    let argv = [
        "taskchain".to_string(),
        "-q".into(),
        "--source-maps".into(),
        format!("http://127.0.0.1:37037/={}", site.display()),
        dir.path().display().to_string(),
    ];
    let taskchain::internals::cli::Job::Report(cfg) =
        taskchain::internals::cli::Cli::try_parse_from(argv)
            .unwrap()
            .into_job()
            .unwrap()
    else {
        panic!("not a report job")
    };
    let sym = cfg.analysis.enrich.symbolicator.clone();
    assert_eq!(sym.maps_decoded(), 0);
    let res = taskchain::internals::cli::analyze_all(&cfg.paths, &cfg.analysis, 2, true).unwrap();
    assert_eq!(res.rows.len(), 1000);
    for r in &res.rows {
        let names: Vec<&str> = r
            .chain
            .iter()
            .map(|f| f.original.as_ref().unwrap().function.as_deref().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "handleImportClick",
                "parseInventory",
                "transformRows",
                "scoreRows"
            ]
        );
    }
    // 1,000 traces on 2 threads, one map: decoded once.
    assert_eq!(sym.maps_decoded(), 1);
}

#[test]
fn aggregates_and_folded_stacks_use_original_names() {
    let dir = maps_dir();
    let tmp = tempfile::tempdir().unwrap();
    let (agg, folded) = (tmp.path().join("a.csv"), tmp.path().join("f.txt"));
    taskchain()
        .args(["-q", "-o", "-", "--source-maps", &dir, "--aggregate"])
        .arg(&agg)
        .arg("--folded")
        .arg(&folded)
        .arg(shared_trace())
        .assert()
        .success();
    let agg = std::fs::read_to_string(&agg).unwrap();
    assert!(
        agg.contains(
            "onFlushTimer (../../src/scheduler.js:9:10) > flush (../../src/audit.js:24:3) > \
             encodeAuditEntries (../../src/audit.js:3:35),encodeAuditEntries,"
        ),
        "{agg}"
    );
    let folded = std::fs::read_to_string(&folded).unwrap();
    // The click task's top stack: 697 samples (the ground truth's count).
    assert!(
        folded.lines().any(|l| l
            == "handleImportClick (../../src/main.js:13:17);parseInventory (../../src/parse.js:9:17);\
                transformRows (../../src/transform.js:8:17);scoreRows (../../src/hot.js:3:17) 697"),
        "{folded}"
    );
    assert!(!folded.contains("app.min.js"), "{folded}");
}

/// The shared checker, strict (no `--lenient-columns`), on the shared recording and on each
/// sample's groundtruth.json (scripts/sourcemaps/groundtruth.py: scripts/reference.py's
/// tasks and frames, functions.json's originals).
#[test]
fn check_py_strict_passes_on_every_recording() {
    let site = sm_recording_dir().join("site").canonicalize().unwrap();
    let mut runs: Vec<(PathBuf, PathBuf, Vec<String>)> = vec![(
        shared_trace(),
        shared_truth(),
        vec![
            "--source-maps".into(),
            format!("http://127.0.0.1:37037/={}/", site.display()),
        ],
    )];
    for case in [
        "sm-rollup-terser",
        "sm-webpack-no-rundown",
        "sm-index-map",
        "sm-data-url",
        "sm-embedded",
    ] {
        let args = std::fs::read_to_string(sample(case).join("args")).unwrap_or_default();
        runs.push((
            sample(case).join("trace.json.gz"),
            sample(case).join("expected/groundtruth.json"),
            args.split_whitespace().map(str::to_string).collect(),
        ));
    }
    let tmp = tempfile::tempdir().unwrap();
    for (trace, truth, args) in runs {
        let out = tmp.path().join("out.json");
        taskchain()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["-q", "--format", "json", "-o"])
            .arg(&out)
            .args(&args)
            .arg(&trace)
            .assert()
            .success();
        let check = std::process::Command::new("python3")
            .arg(sm_recording_dir().join("check.py"))
            .arg(&truth)
            .arg(&out)
            .output()
            .expect("python3 runs check.py");
        let text = String::from_utf8_lossy(&check.stdout);
        assert!(check.status.success(), "{}: {text}", trace.display());
        assert!(text.trim_end().ends_with("18 passed, 0 failed"), "{text}");
    }
}

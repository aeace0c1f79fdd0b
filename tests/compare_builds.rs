//! `compare` across builds (`samples/compare-builds`, `samples/sm-*`): chains keep their
//! identity when lines move, a content hash in a bundle's name changes or another minifier
//! built the bundle; a task made 30% longer in every run is a regression.
//!
//! Expected values are worked out from the recordings' per-run task durations (each
//! trace's own CSV, checked against the recording script `scripts/record-chains.js`: a
//! click task spinning 120 ms, 156 ms in `slower/`, and an 80 ms timer task):
//! - click chain (`onSaveClick > saveOrder > validate > spin`), ms per run: base 132.795,
//!   123.366, 128.509, 133.496, 131.090 (mean 129.851); moved 131.185, 129.065, 130.124,
//!   127.904, 124.562 (mean 128.568); slower 161.311, 171.115, 162.764, 169.050, 170.599
//!   (mean 166.968, +28.6%, every run above every base run: p = 2/252 = 0.0079).
//! - overall long-task time per run: base 414.5, 204.3, 209.7, 351.5, 279.9; moved 212.2,
//!   446.1, 276.0, 370.4, 437.9 (page-load `(program)` tasks vary): base ranks 1, 2, 5, 6,
//!   8, U = 7, p = 2 · 39/252 = 0.31, no change.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::common::taskchain;

/// The run files of one build.
fn runs(build: &str) -> Vec<PathBuf> {
    (1..=5)
        .map(|k| {
            Path::new("samples/compare-builds")
                .join(build)
                .join(format!("run-{k}.json.gz"))
        })
        .collect()
}

/// `compare` of `base` against `candidate` with `args` before them: exit code, CSV rows
/// (column → value), stderr.
fn compare(
    args: &[&str],
    base: &[PathBuf],
    candidate: &[PathBuf],
) -> (Option<i32>, Vec<HashMap<String, String>>, String) {
    let out = taskchain()
        .arg("compare")
        .args(args)
        .args(base)
        .arg("--")
        .args(candidate)
        .output()
        .unwrap();
    let mut r = csv::Reader::from_reader(&out.stdout[..]);
    let head = r.headers().unwrap().clone();
    let rows = r
        .records()
        .map(|rec| {
            let rec = rec.unwrap();
            head.iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect();
    (
        out.status.code(),
        rows,
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The line whose chain key starts with `entry` (an entry function) and has `frames` frames.
fn line<'a>(
    rows: &'a [HashMap<String, String>],
    entry: &str,
    frames: usize,
) -> &'a HashMap<String, String> {
    let hits: Vec<_> = rows
        .iter()
        .filter(|r| {
            r["chain_key"].starts_with(&format!("{entry} ("))
                && r["chain_key"].split(" > ").count() == frames
        })
        .collect();
    assert_eq!(hits.len(), 1, "{entry}: {rows:#?}");
    hits[0]
}

fn num(r: &HashMap<String, String>, col: &str) -> f64 {
    r[col].parse().unwrap_or_else(|_| panic!("{col}: {r:?}"))
}

/// The bundle as the default chain key names it: its path, without origin or content hash.
const APP: &str = "/app.[hash].js";

#[test]
fn every_line_moved_and_a_new_hash_is_no_regression() {
    let (code, rows, err) = compare(
        &["--fail-on-regression", "10"],
        &runs("base"),
        &runs("moved"),
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        rows.iter().all(|r| r["change"] != "regression"),
        "{rows:#?}"
    );
    let overall = &rows[0];
    assert_eq!(overall["scope"], "overall");
    assert_eq!(overall["change"], "no change");
    assert!(
        (num(overall, "p_value") - 0.3095).abs() < 1e-4,
        "{overall:?}"
    );
    let click = line(&rows, "onSaveClick", 4);
    assert_eq!(
        click["chain_key"],
        format!("onSaveClick ({APP}) > saveOrder ({APP}) > validate ({APP}) > spin ({APP})")
    );
    // The chain column is exact: the candidate's positions (every line one down).
    assert!(
        click["chain"].starts_with(
            "onSaveClick (http://127.0.0.1:34169/app.8d7e6f5a.js?v=1:10:21) > saveOrder"
        ),
        "{click:?}"
    );
    assert_eq!(
        (&click["base_traces"][..], &click["candidate_traces"][..]),
        ("5", "5")
    );
    assert!(
        (num(click, "base_mean_ms") - 129.851).abs() < 0.002,
        "{click:?}"
    );
    assert!(
        (num(click, "candidate_mean_ms") - 128.568).abs() < 0.002,
        "{click:?}"
    );
    assert!((num(click, "change_pct") - -1.0).abs() < 0.05, "{click:?}");
    assert_eq!(click["change"], "no change");
    let timer = line(&rows, "refresh", 3);
    assert_eq!(timer["change"], "no change");
    assert_eq!(num(timer, "base_mean_tasks"), 1.0);
    // Every JS chain of the base is found in the candidate.
    assert!(
        rows.iter()
            .filter(|r| r["chain_key"].contains(APP))
            .all(|r| r["change"] != "new" && r["change"] != "gone"),
        "{rows:#?}"
    );
    // Keyed exactly (today's key), the same chains are gone and new: positions moved.
    let (code, rows, _) = compare(
        &["--fail-on-regression", "10", "--chain-key", "exact"],
        &runs("base"),
        &runs("moved"),
    );
    assert_eq!(code, Some(0));
    let kinds = |k: &str| {
        rows.iter()
            .filter(|r| r["chain"].starts_with("onSaveClick") || r["chain"].starts_with("refresh"))
            .filter(|r| r["change"] == k)
            .count()
    };
    assert_eq!((kinds("new"), kinds("gone")), (2, 2), "{rows:#?}");
    // `change_pct` is empty from nothing.
    assert!(
        rows.iter()
            .filter(|r| r["change"] == "new")
            .all(|r| r["change_pct"].is_empty())
    );
}

#[test]
fn a_task_30_percent_longer_in_every_run_is_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("c.md");
    let (code, rows, err) = compare(
        &[
            "--fail-on-regression",
            "10",
            "--markdown",
            md.to_str().unwrap(),
        ],
        &runs("base"),
        &runs("slower"),
    );
    assert_eq!(code, Some(1), "{err}");
    let click = line(&rows, "onSaveClick", 4);
    assert_eq!(click["change"], "regression");
    assert!(
        (num(click, "candidate_mean_ms") - 166.968).abs() < 0.002,
        "{click:?}"
    );
    assert!((num(click, "change_pct") - 28.6).abs() < 0.05, "{click:?}");
    assert_eq!(click["p_value"], "0.0079");
    assert_eq!(line(&rows, "refresh", 3)["change"], "no change");
    assert!(
        err.contains(
            "taskchain: regression: onSaveClick (http://127.0.0.1:34169/app.c41d9e07.js?v=1:9:21) > "
        ),
        "{err}"
    );
    // Markdown shortens by whole frames: the entry frame and the leaf stay whole even when
    // they alone are over the cell's 80 characters.
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains(
            "| `onSaveClick (http://127.0.0.1:34169/app.c41d9e07.js?v=1:9:21) > …2… > spin (http://127.0.0.1:34169/app.c41d9e07.js?v=1:1:14)` | `spin` |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| +28.6% |") && md.contains("| regression |"),
        "{md}"
    );
    // Without --fail-on-regression: still a regression (over 5%), exit 0.
    let (code, rows, _) = compare(&[], &runs("base"), &runs("slower"));
    assert_eq!(code, Some(0));
    assert_eq!(line(&rows, "onSaveClick", 4)["change"], "regression");
    // A minimum effect over the change: not a regression, and the gate passes.
    let (code, rows, _) = compare(
        &["--fail-on-regression", "10", "--min-effect", "30"],
        &runs("base"),
        &runs("slower"),
    );
    assert_eq!(code, Some(0));
    assert_eq!(line(&rows, "onSaveClick", 4)["change"], "no change");
}

/// Copies the base runs with `from` replaced by `to` in every event (the script's URL).
fn renamed(dir: &Path, from: &str, to: &str) -> Vec<PathBuf> {
    runs("base")
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let mut text = String::new();
            flate2::read::GzDecoder::new(std::fs::File::open(p).unwrap())
                .read_to_string(&mut text)
                .unwrap();
            assert!(text.contains(from));
            let out = dir.join(format!("run-{}.json.gz", k + 1));
            let mut gz = flate2::write::GzEncoder::new(
                std::fs::File::create(&out).unwrap(),
                flate2::Compression::fast(),
            );
            gz.write_all(text.replace(from, to).as_bytes()).unwrap();
            gz.finish().unwrap();
            out
        })
        .collect()
}

#[test]
fn bundles_differing_only_by_content_hash_are_the_same_chains() {
    let dir = tempfile::tempdir().unwrap();
    // The same runs, the bundle renamed: same samples, so every line is unchanged (p = 1).
    let same = renamed(dir.path(), "app.3f9a2b1c.js", "app.0badc0de.js");
    let (code, rows, err) = compare(&["--fail-on-regression", "0"], &runs("base"), &same);
    assert_eq!(code, Some(0), "{err}");
    for r in &rows {
        assert_eq!(
            (&r["change"][..], &r["change_pct"][..], &r["p_value"][..]),
            ("no change", "0.0", "1.0000"),
            "{r:?}"
        );
    }
    let click = line(&rows, "onSaveClick", 4);
    assert!(
        click["chain"].contains("app.0badc0de.js?v=1:9:21"),
        "{click:?}"
    );
    // A base32/64 hash after a dash (Vite's `index-BzX9k2Qa.js`) too.
    let vite = dir.path().join("vite");
    std::fs::create_dir(&vite).unwrap();
    let other = renamed(&vite, "app.3f9a2b1c.js", "app-BzX9k2Qa.js");
    let (_, rows2, _) = compare(&[], &runs("base"), &other);
    let c2 = rows2
        .iter()
        .find(|r| r["chain"].starts_with("onSaveClick"))
        .unwrap();
    assert_eq!(
        c2["change"], "new",
        "a dash is not a dot: another file name"
    );
    assert!(c2["chain_key"].contains("/app-[hash].js)"), "{c2:?}");
    // Keyed exactly, each JS chain is gone and new.
    let (_, rows, _) = compare(&["--chain-key", "exact"], &runs("base"), &same);
    assert_eq!(rows.iter().filter(|r| r["change"] == "new").count(), 2);
    assert_eq!(rows.iter().filter(|r| r["change"] == "gone").count(), 2);
}

#[test]
fn bundles_of_different_minifiers_meet_by_their_source_maps() {
    let maps = ["--source-maps", "http://127.0.0.1:37038/=samples/sm-site"];
    let rollup = [PathBuf::from("samples/sm-rollup-terser/trace.json.gz")];
    let webpack = [PathBuf::from("samples/sm-webpack-no-rundown/trace.json.gz")];
    let esbuild = [PathBuf::from("samples/sm-data-url/trace.json.gz")];
    // The chains, from each case's expected/tasks.csv (checked against the app's code in
    // tests/sourcemaps.rs): rollup + terser inlined parseInventory, webpack inlined
    // parseInventory and reconcileInventory, esbuild neither.
    let click = "handleImportClick (src/main.js) > transformRows (src/transform.js) > scoreRows (src/hot.js)";
    let flush = "onFlushTimer (src/scheduler.js) > flush (src/audit.js) > encodeAuditEntries (src/audit.js)";
    let sync = "onSyncTimer (src/scheduler.js) > reconcileInventory (src/sync.js) > checksumBlocks (src/hot.js)";
    let (code, rows, err) = compare(&maps, &rollup, &webpack);
    assert_eq!(code, Some(0), "{err}");
    let change = |rows: &[HashMap<String, String>], key: &str| {
        rows.iter()
            .find(|r| r["chain_key"] == key)
            .map(|r| r["change"].clone())
            .unwrap_or_else(|| panic!("{key}: {rows:#?}"))
    };
    assert_eq!(change(&rows, click), "no change");
    assert_eq!(change(&rows, flush), "no change");
    assert_eq!(change(&rows, sync), "gone");
    assert_eq!(
        change(
            &rows,
            "onSyncTimer (src/scheduler.js) > checksumBlocks (src/hot.js)"
        ),
        "new"
    );
    // rollup against esbuild: the timers meet, the click chain differs by the inlined frame.
    let (_, rows, _) = compare(&maps, &rollup, &esbuild);
    assert_eq!(change(&rows, flush), "no change");
    assert_eq!(change(&rows, sync), "no change");
    assert_eq!(change(&rows, click), "gone");
    // Keyed exactly, no JS chain of one build is in the other.
    let (_, rows, _) = compare(
        &[maps[0], maps[1], "--chain-key", "exact"],
        &rollup,
        &webpack,
    );
    assert!(
        rows.iter()
            .filter(|r| r["chain"].contains("src/"))
            .all(|r| r["change"] == "new" || r["change"] == "gone"),
        "{rows:#?}"
    );
}

#[test]
fn aggregate_groups_the_builds_chains_by_key() {
    let dir = tempfile::tempdir().unwrap();
    let agg = dir.path().join("a.csv");
    let run = |extra: &[&str]| {
        taskchain()
            .args(["-q", "-o", "/dev/null", "--aggregate"])
            .arg(&agg)
            .args(extra)
            .args(runs("base"))
            .args(runs("moved"))
            .assert()
            .success();
        let mut r = csv::Reader::from_path(&agg).unwrap();
        assert_eq!(
            r.headers().unwrap().iter().take(6).collect::<Vec<_>>(),
            [
                "chain",
                "leaf_function",
                "leaf_url",
                "chain_key",
                "chains",
                "long_tasks"
            ]
        );
        r.records()
            .map(|x| x.unwrap())
            .filter(|x| x[0].starts_with("onSaveClick"))
            .map(|x| {
                (
                    x[0].to_string(),
                    x[5].parse::<u64>().unwrap(),
                    x[4].to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    // Ten click tasks of two chain texts, shown with the first one's (base run 1).
    let rows = run(&[]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].0.contains("app.3f9a2b1c.js?v=1:9:21"), "{rows:?}");
    assert_eq!((rows[0].1, &rows[0].2[..]), (10, "2"));
    // Exactly: five and five.
    let rows = run(&["--chain-key", "exact"]);
    assert_eq!(rows.iter().map(|r| r.1).collect::<Vec<_>>(), [5, 5]);
}

#[test]
fn the_same_app_on_another_port_keeps_its_chains() {
    let dir = tempfile::tempdir().unwrap();
    // The base runs as if the dev server had started on another port.
    let moved = renamed(
        dir.path(),
        "http://127.0.0.1:34169/",
        "http://127.0.0.1:45611/",
    );
    let (code, rows, err) = compare(&["--fail-on-regression", "0"], &runs("base"), &moved);
    assert_eq!(code, Some(0), "{err}");
    for r in &rows {
        assert_eq!(
            (&r["change"][..], &r["p_value"][..]),
            ("no change", "1.0000"),
            "{r:?}"
        );
    }
    let click = line(&rows, "onSaveClick", 4);
    assert!(
        click["chain_key"].starts_with("onSaveClick (/"),
        "{click:?}"
    );
    assert!(!click["chain_key"].contains("127.0.0.1"), "{click:?}");
    // Keyed with the origin, the two JS chains are gone and new.
    let (_, rows, _) = compare(&["--chain-key", "origin"], &runs("base"), &moved);
    assert_eq!(rows.iter().filter(|r| r["change"] == "new").count(), 2);
    assert_eq!(rows.iter().filter(|r| r["change"] == "gone").count(), 2);
}

//! Parties on a real multi-host recording (`samples/parties-shop`): every frame's party,
//! vendor and eTLD+1 and every task's leaf and entry party against the hand-written
//! `expected/parties.json`, with and without `overrides.json`; the CSV columns, the
//! `--aggregate-by vendor` / `function` files and the Markdown owners table.

use crate::common::*;
use serde_json::Value;
use taskchain::report::Format;

const CASE: &str = "parties-shop";

fn overrides_args() -> Vec<String> {
    vec![
        "--party-overrides".into(),
        case_dir(CASE).join("overrides.json").display().to_string(),
    ]
}

fn tasks_json(args: &[String]) -> Vec<Value> {
    let out = report(args, &[trace_path(CASE)], Format::Json, 2);
    let v: Value = serde_json::from_slice(&out).unwrap();
    v["tasks"].as_array().unwrap().clone()
}

fn expected() -> Vec<Value> {
    let text = std::fs::read_to_string(case_dir(CASE).join("expected/parties.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["tasks"].as_array().unwrap().clone()
}

fn pair(t: &Value, party: &str, vendor: &str) -> Value {
    Value::Array(vec![t[party].clone(), t[vendor].clone()])
}

fn check(args: &[String], with_overrides: bool) {
    let tasks = tasks_json(args);
    let want = expected();
    assert_eq!(tasks.len(), want.len(), "long tasks");
    for (t, w) in tasks.iter().zip(&want) {
        let w = match (&w["overrides"], with_overrides) {
            (o @ Value::Object(_), true) => o,
            _ => w,
        };
        let chain: Vec<Value> = t["chain"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                Value::Array(vec![
                    f["function"].clone(),
                    f["party"].clone(),
                    f["vendor"].clone(),
                    f["etld1"].clone(),
                ])
            })
            .collect();
        let at = format!("task at {} ms", t["task_start_ms"]);
        assert_eq!(Value::Array(chain), w["chain"], "{at}: frames");
        assert_eq!(
            pair(t, "task_party", "task_vendor"),
            w["task"],
            "{at}: leaf"
        );
        assert_eq!(
            pair(t, "entry_party", "entry_vendor"),
            w["entry"],
            "{at}: entry"
        );
        let shares = t["party_shares"].as_object().unwrap();
        // (serde_json's map is sorted by key: the largest is looked for.)
        let largest = shares
            .iter()
            .max_by(|a, b| a.1.as_f64().unwrap().total_cmp(&b.1.as_f64().unwrap()))
            .unwrap()
            .0;
        assert_eq!(
            largest,
            w["largest_share"].as_str().unwrap(),
            "{at}: shares"
        );
        let sum: f64 = shares.values().map(|v| v.as_f64().unwrap()).sum();
        assert!((sum - 1.0).abs() < 0.005, "{at}: shares sum to {sum}");
        // The designed split of work (spin times), within a sampling error.
        if let Some(about) = w["shares_about"].as_object() {
            for (group, share) in about {
                let got = shares.get(group).and_then(Value::as_f64).unwrap_or(0.0);
                let want = share.as_f64().unwrap();
                assert!((got - want).abs() < 0.08, "{at}: {group} {got} vs ~{want}");
            }
        }
    }
}

#[test]
fn every_frame_and_task_without_overrides() {
    check(&[], false);
}

#[test]
fn every_frame_and_task_with_overrides() {
    check(&overrides_args(), true);
}

#[test]
fn csv_columns_name_the_leaf_and_entry_owners() {
    let out = report(&[], &[trace_path(CASE)], Format::Csv, 1);
    let mut r = csv::Reader::from_reader(&out[..]);
    let head = r.headers().unwrap().clone();
    // The party columns, then the trigger's two and the breakdown's eight.
    let tail: Vec<&str> = head.iter().skip(head.len() - 14).take(4).collect();
    assert_eq!(
        tail,
        ["leaf_party", "leaf_vendor", "entry_party", "entry_vendor"]
    );
    let rows: Vec<Vec<String>> = r
        .records()
        .map(|rec| {
            let rec = rec.unwrap();
            let n = rec.len();
            (n - 14..n - 10).map(|i| rec[i].to_string()).collect()
        })
        .collect();
    let gtm = ["first-party", "", "third-party", "Google Tag Manager"];
    let ga = ["third-party", "Google Analytics", "first-party", ""];
    assert_eq!(rows[5], gtm);
    assert_eq!(rows[6], ga);
    assert_eq!(rows[0], ["", "", "", ""]); // (program): no script URL
}

#[test]
fn aggregate_by_vendor_and_function_and_markdown_owners() {
    let dir = tempfile::tempdir().unwrap();
    let agg = dir.path().join("vendor.csv");
    let fun = dir.path().join("function.csv");
    let md = dir.path().join("r.md");
    let trace = case_dir(CASE).join("trace.json.gz");
    let run = |args: &[&str]| {
        let st = std::process::Command::new(env!("CARGO_BIN_EXE_taskchain"))
            .args(args)
            .arg("-q")
            .arg(&trace)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
    };
    let p = |x: &std::path::Path| x.display().to_string();
    run(&[
        "--aggregate",
        &p(&agg),
        "--aggregate-by",
        "vendor",
        "--markdown",
        &p(&md),
    ]);
    run(&["--aggregate", &p(&fun), "--aggregate-by", "function"]);
    let text = std::fs::read_to_string(&agg).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let owner = |name: &str| rows.iter().find(|x| &x[0] == name).unwrap().clone();
    // By leaf: first party owns inlineSpin, appSpin twice (initShop, the GTM callback)
    // and checkoutSpin; the unknown third parties the CDN and the chat widget.
    assert_eq!(&owner("first-party")[3], "4");
    assert_eq!(&owner("third-party:unknown")[3], "2");
    let ga = owner("vendor:Google Analytics");
    assert_eq!((&ga[1], &ga[2], &ga[3]), ("Google", "analytics", "1"));
    assert_eq!(&owner("(no script url)")[3], "1");
    // The tag manager owns no leaf, but a share of the samples.
    let gtm = owner("vendor:Google Tag Manager");
    assert_eq!(&gtm[3], "0");
    assert!(gtm[11].parse::<f64>().unwrap() > 0.0);

    let text = std::fs::read_to_string(&fun).unwrap();
    let keys: Vec<String> = csv::Reader::from_reader(text.as_bytes())
        .records()
        .map(|r| r.unwrap()[0].to_string())
        .collect();
    // One function's tasks meet: appSpin leads two tasks; the query is dropped.
    assert!(keys.contains(&"appSpin (https://www.shop.test/app.js)".to_string()));
    assert!(keys.contains(&"checkoutSpin (https://static.shop.test/js/checkout.js)".to_string()));
    let app = csv::Reader::from_reader(text.as_bytes())
        .records()
        .map(Result::unwrap)
        .find(|r| r[0].starts_with("appSpin"))
        .unwrap();
    assert_eq!((&app[1], &app[2]), ("2", "2")); // two chains, two long tasks

    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("### Who owns the blocking time"), "{md}");
    let first = md
        .lines()
        .skip_while(|l| !l.starts_with("| owner |"))
        .nth(2)
        .unwrap();
    assert!(first.starts_with("| first-party | 4 | "), "{first}");
}

#[test]
fn a_bad_overrides_file_fails_before_any_trace_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("o.json");
    std::fs::write(&bad, r#"{"entities": [{"name": "X", "domains": []}]}"#).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_taskchain"))
        .arg("--party-overrides")
        .arg(&bad)
        .arg("/nonexistent/trace.json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--party-overrides") && err.contains("entities[0] (X) has no \"domains\""),
        "{err}"
    );
    assert!(!err.contains("/nonexistent/trace.json"), "{err}");
}

#[test]
fn aggregate_by_function_uses_originals_when_maps_are_given() {
    let dir = crate::common::sm_recording_dir();
    let out = tempfile::tempdir().unwrap();
    let agg = out.path().join("f.csv");
    let run = |maps: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_taskchain"));
        cmd.current_dir(&dir)
            .args(["-q", "--aggregate"])
            .arg(&agg)
            .args(["--aggregate-by", "function", "--format", "json"]);
        if maps {
            cmd.args(["--source-maps", "http://127.0.0.1:37037/=site/"]);
        }
        let o = cmd.arg("sm_esbuild_rundown.json").output().unwrap();
        assert!(o.status.success());
        let keys: Vec<String> = csv::Reader::from_path(&agg)
            .unwrap()
            .records()
            .map(|r| r.unwrap()[0].to_string())
            .collect();
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        (keys, v)
    };
    // The README of the recording names the three leaves: scoreRows, checksumBlocks and
    // encodeAuditEntries, minified to u, l and w in app.min.js.
    let (keys, v) = run(true);
    assert_eq!(
        keys,
        [
            "scoreRows (../../src/hot.js)",
            "checksumBlocks (../../src/hot.js)",
            "encodeAuditEntries (../../src/audit.js)"
        ]
    );
    // Parties go by the generated script's URL: the page and bundle are on 127.0.0.1.
    for t in v["tasks"].as_array().unwrap() {
        for f in t["chain"].as_array().unwrap() {
            if f["url"].is_string() {
                assert_eq!(f["party"], "first-party", "{f}");
                assert_eq!(f["etld1"], "127.0.0.1", "{f}");
            }
        }
    }
    let (keys, _) = run(false);
    let app = "http://127.0.0.1:37037/sm/dist/esbuild/app.min.js";
    assert_eq!(
        keys,
        [
            format!("u ({app})"),
            format!("l ({app})"),
            format!("w ({app})")
        ]
    );
}

#[test]
fn an_overrides_file_with_a_description_is_read_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("o.json");
    // The sample's overrides with a comment-like key added.
    let given: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("samples/parties-shop/overrides.json").unwrap(),
    )
    .unwrap();
    let mut with = given.as_object().unwrap().clone();
    with.insert("description".into(), "who owns our scripts".into());
    std::fs::write(&file, serde_json::to_string(&with).unwrap()).unwrap();
    let run = |overrides: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_taskchain"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .arg("--party-overrides")
            .arg(overrides)
            .arg("samples/parties-shop/trace.json.gz")
            .output()
            .unwrap()
    };
    let out = run(&file);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "taskchain: warning: {}: unknown key \"description\" left out",
            file.display()
        )),
        "{err}"
    );
    // The rows are those of the file without the key.
    let plain = run(std::path::Path::new("samples/parties-shop/overrides.json"));
    assert_eq!(out.stdout, plain.stdout);
    assert!(String::from_utf8_lossy(&plain.stdout).contains("Widgetly Chat"));
}

//! Parquet outputs: each sample's task report, summary and aggregate written as
//! Parquet and read back with the `parquet` crate hold, cell for cell, the values of the
//! CSV of the same run; the columns the CSV does not have (`trace_id`, `chain_frames`,
//! `flags` as a list) agree with it and with an independent computation.

use crate::common::{self, read_csv, read_parquet, sample_cases as cases, taskchain};

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;

/// Cell `row` of column `name` as the CSV writes it, compared with the CSV's `text`: text
/// equal (null = empty), integers equal, floats equal to the CSV's decimal read as `f64`,
/// lists of names joined by `;`.
fn assert_cell(batch: &RecordBatch, name: &str, row: usize, text: &str, what: &str) {
    let col = batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("{what}: no Parquet column {name}"));
    let at = format!("{what}: row {row} column {name}");
    if col.is_null(row) {
        assert_eq!(text, "", "{at}: null in Parquet");
        return;
    }
    match col.data_type() {
        DataType::Utf8 => assert_eq!(col.as_string::<i32>().value(row), text, "{at}"),
        DataType::Int64 => assert_eq!(
            col.as_primitive::<Int64Type>().value(row).to_string(),
            text,
            "{at}"
        ),
        DataType::Float64 => {
            let v = col.as_primitive::<Float64Type>().value(row);
            let want: f64 = text
                .parse()
                .unwrap_or_else(|_| panic!("{at}: CSV {text:?}"));
            assert_eq!(v, want, "{at}");
        }
        DataType::Boolean => assert_eq!(col.as_boolean().value(row).to_string(), text, "{at}"),
        DataType::List(_) => {
            let list = col.as_list::<i32>().value(row);
            let names: Vec<&str> = (0..list.len())
                .map(|i| list.as_string::<i32>().value(i))
                .collect();
            assert_eq!(names.join(";"), text, "{at}");
        }
        t => panic!("{at}: unexpected type {t}"),
    }
}

/// Every CSV cell equals the Parquet file's; the Parquet file has the CSV's columns in
/// order, `extra` inserted after the columns named with them.
fn assert_same_table(csv: &Path, pq: &Path, extra: &[(&str, &str)], schema: &str) {
    let (head, rows) = read_csv(csv);
    let (batch, kv) = read_parquet(pq);
    let what = pq.display().to_string();
    let mut want: Vec<String> = Vec::new();
    for h in &head {
        want.push(h.clone());
        want.extend(
            extra
                .iter()
                .filter(|(after, _)| after == h)
                .map(|(_, n)| n.to_string()),
        );
    }
    let got: Vec<String> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(got, want, "{what}: columns");
    assert_eq!(batch.num_rows(), rows.len(), "{what}: rows");
    for (i, rec) in rows.iter().enumerate() {
        for (h, text) in head.iter().zip(rec) {
            assert_cell(&batch, h, i, text, &what);
        }
    }
    let kv: std::collections::HashMap<_, _> = kv.into_iter().collect();
    assert_eq!(kv.get("taskchain.schema").map(String::as_str), Some(schema));
    assert_eq!(
        kv.get("taskchain.version").map(String::as_str),
        Some(env!("CARGO_PKG_VERSION"))
    );
}

/// A frame as the `chain` column prints it (SPEC §3: `name (url:line:column)`, the parts
/// that are known).
fn frame_text(
    function: &str,
    url: &str,
    line: Option<i64>,
    column: Option<i64>,
    depth: i64,
) -> String {
    let mut loc: Vec<String> = Vec::new();
    if !url.is_empty() {
        loc.push(url.to_string());
    }
    loc.extend(line.map(|l| l.to_string()));
    loc.extend(column.map(|c| c.to_string()));
    let mut s = if loc.is_empty() {
        function.to_string()
    } else {
        format!("{function} ({})", loc.join(":"))
    };
    // Recursive calls merged into the frame (`--collapse-recursion`).
    if depth > 1 {
        s += &format!(" ×{depth}");
    }
    s
}

/// `chain_frames` spells the `chain` text frame by frame, its last frame is the leaf
/// columns, and its length is `chain_depth`.
fn assert_frames_match_chain(batch: &RecordBatch, what: &str) {
    let frames = batch
        .column_by_name("chain_frames")
        .unwrap()
        .as_list::<i32>();
    let chain = batch.column_by_name("chain").unwrap().as_string::<i32>();
    let depth = batch
        .column_by_name("chain_depth")
        .unwrap()
        .as_primitive::<Int64Type>();
    let leaf_fn = batch
        .column_by_name("leaf_function")
        .unwrap()
        .as_string::<i32>();
    let leaf_line = batch
        .column_by_name("leaf_line")
        .unwrap()
        .as_primitive::<Int64Type>();
    for row in 0..batch.num_rows() {
        let f = frames.value(row);
        let s = f.as_struct();
        let function = s.column(0).as_string::<i32>();
        let url = s.column(1).as_string::<i32>();
        let line = s.column(2).as_primitive::<Int64Type>();
        let column = s.column(3).as_primitive::<Int64Type>();
        let merged = s.column(4).as_primitive::<Int64Type>();
        let opt = |a: &arrow_array::Int64Array, i| (!a.is_null(i)).then(|| a.value(i));
        // Frames a source map names print their original in `chain` (checked against the
        // JSON report in `frames_equal_the_json_reports`).
        let original = s.column(6).as_string::<i32>();
        let texts: Vec<String> = (0..s.len())
            .map(|i| {
                frame_text(
                    function.value(i),
                    url.value(i),
                    opt(line, i),
                    opt(column, i),
                    merged.value(i),
                )
            })
            .collect();
        if original.null_count() == s.len() {
            assert_eq!(texts.join(" > "), chain.value(row), "{what}: row {row}");
        }
        assert_eq!(s.len() as i64, depth.value(row), "{what}: row {row}");
        if s.is_empty() {
            assert!(leaf_fn.is_null(row), "{what}: row {row}");
        } else {
            let last = s.len() - 1;
            assert_eq!(
                function.value(last),
                leaf_fn.value(row),
                "{what}: row {row}"
            );
            assert_eq!(opt(line, last), opt(leaf_line, row), "{what}: row {row}");
        }
    }
}

/// `chain_frames` holds, field for field, the frames of the JSON report of the same run
/// (written by its own serializer): null for JSON's null, `original_ignore_listed` false
/// and `recursion_depth` 1 where JSON leaves them out.
fn assert_frames_equal_json(batch: &RecordBatch, case: &str, dir: &Path) {
    let json = dir.join("tasks.json");
    taskchain()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("-q")
        .args(common::case_args(case))
        .arg(common::trace_path(case))
        .args(["--format", "json", "-o"])
        .arg(&json)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let tasks = v["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), batch.num_rows(), "{case}");
    let frames = batch
        .column_by_name("chain_frames")
        .unwrap()
        .as_list::<i32>();
    for (row, t) in tasks.iter().enumerate() {
        let want = t["chain"].as_array().unwrap();
        let got = frames.value(row);
        let s = got.as_struct();
        assert_eq!(s.len(), want.len(), "{case}: row {row}");
        for (i, w) in want.iter().enumerate() {
            for (k, field) in s.fields().iter().enumerate() {
                let name = field.name().as_str();
                let col = s.column(k);
                let got = if col.is_null(i) {
                    serde_json::Value::Null
                } else {
                    match col.data_type() {
                        DataType::Utf8 => col.as_string::<i32>().value(i).into(),
                        DataType::Int64 => col.as_primitive::<Int64Type>().value(i).into(),
                        DataType::Boolean => col.as_boolean().value(i).into(),
                        t => panic!("{name}: {t}"),
                    }
                };
                let expected = match (name, &w[name]) {
                    ("url", serde_json::Value::Null) => "".into(),
                    ("original_ignore_listed", serde_json::Value::Null) => false.into(),
                    ("recursion_depth", serde_json::Value::Null) => 1.into(),
                    (_, v) => v.clone(),
                };
                assert_eq!(got, expected, "{case}: row {row} frame {i} {name}");
            }
        }
    }
}

/// `trace_id` as `docs/SCALE-OUT.md` defines it, computed here on its own.
fn trace_id_of(path: &Path) -> String {
    use sha2::Digest;
    let b = std::fs::read(path).unwrap();
    let e = 1 << 20;
    let mut h = sha2::Sha256::new();
    h.update((b.len() as u64).to_le_bytes());
    h.update(&b[..b.len().min(e)]);
    h.update(&b[b.len().saturating_sub(e).max(e.min(b.len()))..]);
    h.finalize()[..16]
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn run_outputs(case: &str, dir: &Path, ext: &str) -> [PathBuf; 3] {
    let out = [
        dir.join(format!("tasks.{ext}")),
        dir.join(format!("summary.{ext}")),
        dir.join(format!("aggregate.{ext}")),
    ];
    taskchain()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("-q")
        .args(common::case_args(case))
        .arg(common::trace_path(case))
        // A file that cannot be read: a summary row of nulls (exit code 2).
        .arg("Cargo.toml")
        .arg("-o")
        .arg(&out[0])
        .arg("--summary")
        .arg(&out[1])
        .arg("--aggregate")
        .arg(&out[2])
        .assert()
        .code(2);
    out
}

#[test]
fn every_sample_reads_back_as_its_csv() {
    let dir = tempfile::tempdir().unwrap();
    let mut rows = 0;
    for case in cases() {
        let d = dir.path().join(&case);
        std::fs::create_dir_all(&d).unwrap();
        let csv = run_outputs(&case, &d, "csv");
        let pq = run_outputs(&case, &d, "parquet");
        assert_same_table(
            &csv[0],
            &pq[0],
            &[("file", "trace_id"), ("chain", "chain_frames")],
            "tasks/1",
        );
        assert_same_table(&csv[1], &pq[1], &[("file", "trace_id")], "summary/1");
        assert_same_table(&csv[2], &pq[2], &[], "aggregate/1");
        let (tasks, _) = read_parquet(&pq[0]);
        assert_frames_match_chain(&tasks, &case);
        assert_frames_equal_json(&tasks, &case, &d);
        let id =
            trace_id_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join(common::trace_path(&case)));
        let ids = tasks.column_by_name("trace_id").unwrap().as_string::<i32>();
        assert!((0..tasks.num_rows()).all(|i| ids.value(i) == id), "{case}");
        let (summary, _) = read_parquet(&pq[1]);
        let ids = summary
            .column_by_name("trace_id")
            .unwrap()
            .as_string::<i32>();
        let files = summary.column_by_name("file").unwrap().as_string::<i32>();
        let row = |name: &str| (0..2).find(|&i| files.value(i) == name).unwrap();
        let trace = common::trace_path(&case).display().to_string();
        assert_eq!(ids.value(row(&trace)), id, "{case}");
        assert!(
            ids.is_null(row("Cargo.toml")),
            "{case}: the unreadable file has no id"
        );
        rows += tasks.num_rows();
    }
    // Every sample's long tasks (the expected CSVs hold 100 rows in all).
    assert!(rows > 50, "{rows}");
}

#[test]
fn interactions_and_animation_frames_read_back_as_their_csv() {
    // `samples/interactions-shop`: seven interactions, six long animation frames.
    let dir = tempfile::tempdir().unwrap();
    let run = |ext: &str| -> [PathBuf; 2] {
        let out = [
            dir.path().join(format!("i.{ext}")),
            dir.path().join(format!("f.{ext}")),
        ];
        taskchain()
            .arg("-q")
            .arg(common::trace_path("interactions-shop"))
            .args(["-o", "-", "--interactions"])
            .arg(&out[0])
            .arg("--animation-frames")
            .arg(&out[1])
            .assert()
            .success();
        out
    };
    let csv = run("csv");
    let pq = run("parquet");
    assert_same_table(&csv[0], &pq[0], &[], "interactions/2");
    assert_same_table(&csv[1], &pq[1], &[], "animation_frames/1");
    let (interactions, _) = read_parquet(&pq[0]);
    let (frames, _) = read_parquet(&pq[1]);
    assert_eq!((interactions.num_rows(), frames.num_rows()), (7, 6));
    // Typed: the restyle frame's style and layout a number, INP a boolean.
    let col = |b: &RecordBatch, n: &str| b.column_by_name(n).unwrap().data_type().clone();
    assert_eq!(col(&frames, "style_layout_ms"), DataType::Float64);
    assert_eq!(col(&frames, "window_samples"), DataType::Int64);
    assert_eq!(col(&interactions, "is_inp"), DataType::Boolean);
    assert_eq!(
        col(&interactions, "presentation_delay_idle_ms"),
        DataType::Float64
    );
}

#[test]
fn trace_ids_are_the_documented_hash() {
    // Printed by the Python of docs/SCALE-OUT.md, an implementation of its own.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.parquet");
    let traces = [
        "samples/chromium-click-chain/trace.json.gz",
        // 1.7 MB: over 1 MiB, so its last part is the 0.7 MB after the first MiB.
        "samples/chromium-session-15s/trace.json.gz",
    ];
    taskchain()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["-q", "--summary"])
        .arg(&out)
        .args(traces)
        .args(["-o", "/dev/null"])
        .assert()
        .success();
    let (s, _) = read_parquet(&out);
    let ids = s.column_by_name("trace_id").unwrap().as_string::<i32>();
    assert_eq!(ids.value(0), "6033152f5e1616be6b698b59c24b21d6");
    assert_eq!(ids.value(1), "6b6e380f80434bd70c2f3ebe308ba724");
}

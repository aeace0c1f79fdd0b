//! Past one machine: shards of a corpus combine into the single run's outputs,
//! `trace_id` names a file's content wherever it lies, and the exit code tells a
//! scheduler whether a retry can help.

use crate::common::{self, read_csv as csv_rows, taskchain};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The trace of every sample case that runs with default flags.
fn corpus() -> Vec<PathBuf> {
    common::sample_cases()
        .into_iter()
        .filter(|case| common::case_args(case).is_empty())
        .map(|case| common::trace_path(&case))
        .collect()
}

/// Milliseconds text → whole µs.
fn us(ms: &str) -> i64 {
    (ms.parse::<f64>().unwrap() * 1000.0).round() as i64
}

#[test]
fn the_union_of_shards_is_the_single_run() {
    let files = corpus();
    assert!(files.len() >= 10, "{files:?}");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    taskchain()
        .args(["-q", "-o"])
        .arg(d.join("all.csv"))
        .arg("--summary")
        .arg(d.join("all-summary.csv"))
        .arg("--aggregate")
        .arg(d.join("all-aggregate.csv"))
        .args(&files)
        .assert()
        .success();
    const N: usize = 3;
    for index in 0..N {
        // The paths on standard input, as a launcher hands them out.
        let list: String = files.iter().map(|f| format!("{}\n", f.display())).collect();
        taskchain()
            .env("JOB_COMPLETION_INDEX", index.to_string())
            .args([
                "-q",
                "--shard-from-env",
                &N.to_string(),
                "--files-from",
                "-",
            ])
            .arg("-o")
            .arg(d.join("out/shard={shard}/tasks.csv"))
            .arg("--summary")
            .arg(d.join("out/shard={shard}/summary.csv"))
            .arg("--aggregate")
            .arg(d.join("out/shard={shard}/aggregate-of-{shards}.csv"))
            .write_stdin(list)
            .assert()
            .success();
    }
    let shard = |i: usize, name: &str| d.join(format!("out/shard={i}/{name}"));

    // Tasks: every row once, and each shard's rows in the single run's order.
    let (head, all) = csv_rows(&d.join("all.csv"));
    let mut union = Vec::new();
    for i in 1..=N {
        let (h, rows) = csv_rows(&shard(i, "tasks.csv"));
        assert_eq!(h, head);
        let mut at = 0;
        for r in &rows {
            at += all[at..]
                .iter()
                .position(|a| a == r)
                .expect("a row of the single run, in order");
        }
        union.extend(rows);
    }
    assert!(all.len() > 50, "{}", all.len());
    let (mut a, mut u) = (all.clone(), union);
    a.sort();
    u.sort();
    assert_eq!(a, u, "tasks");

    // Summary: one row per file, each file in exactly one shard.
    let (_, all_files) = csv_rows(&d.join("all-summary.csv"));
    let mut union: Vec<Vec<String>> = (1..=N)
        .flat_map(|i| csv_rows(&shard(i, "summary.csv")).1)
        .collect();
    union.sort();
    let mut a = all_files.clone();
    a.sort();
    assert_eq!(a, union, "summary");
    assert_eq!(a.len(), files.len());

    // Aggregate: the additive columns of the shards' groups sum to the single run's
    // (percentiles do not add: recompute them from the task rows). Groups are their
    // `chain_key`: `chain` is the group's first task's, which may differ between shards.
    let (head, all_groups) = csv_rows(&d.join("all-aggregate.csv"));
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let key = col("chain_key");
    let (counts, times) = (
        ["long_tasks", "ok_tasks", "files"].map(col),
        ["stack_ms_total", "task_ms_total"].map(col),
    );
    let mut sums: BTreeMap<String, ([i64; 3], [i64; 2])> = BTreeMap::new();
    for i in 1..=N {
        let (h, rows) = csv_rows(&shard(i, &format!("aggregate-of-{N}.csv")));
        assert_eq!(h, head);
        for r in rows {
            let e = sums.entry(r[key].clone()).or_default();
            for (k, &c) in counts.iter().enumerate() {
                e.0[k] += r[c].parse::<i64>().unwrap();
            }
            for (k, &c) in times.iter().enumerate() {
                e.1[k] += us(&r[c]);
            }
        }
    }
    assert_eq!(sums.len(), all_groups.len(), "the same chains");
    for r in &all_groups {
        let (c, t) = sums[&r[key]];
        assert_eq!(c, counts.map(|i| r[i].parse::<i64>().unwrap()), "{}", r[0]);
        for (k, &i) in times.iter().enumerate() {
            // Each shard rounds its total to whole µs.
            assert!((t[k] - us(&r[i])).abs() <= N as i64, "{}: {t:?}", r[0]);
        }
    }
}

#[test]
fn shard_placeholders_want_a_shard_and_the_index_must_be_in_range() {
    let trace = "samples/chromium-click-chain/trace.json.gz";
    taskchain()
        .args([trace, "-o", "out/{shard}.csv"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "give --shard I/N or --shard-from-env N",
        ));
    taskchain()
        .env("JOB_COMPLETION_INDEX", "4")
        .args([trace, "--shard-from-env", "4"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("must be 0 to 3"));
    taskchain()
        .env_remove("JOB_COMPLETION_INDEX")
        .args([trace, "--shard-from-env", "4"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("JOB_COMPLETION_INDEX is not set"));
}

#[test]
fn trace_id_is_the_same_for_copies_in_other_folders_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut copies = Vec::new();
    for (src, a, b) in [
        // Gzip (hashed as stored, compressed) and plain JSON (mapped).
        (
            "samples/chromium-click-chain/trace.json.gz",
            "a/x.json.gz",
            "b/c/y.json.gz",
        ),
        ("samples/field-bundle/trace.json", "a/f.json", "b/g.json"),
    ] {
        for name in [a, b] {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::copy(root.join(src), &p).unwrap();
            copies.push(p);
        }
    }
    let ids = |run: &str| -> BTreeMap<String, String> {
        let out = dir.path().join(format!("{run}.csv"));
        // The ids are in the Parquet outputs; the CSV summary stays as it was. Read the
        // Parquet summary back through the task table's file → trace_id pairs.
        let pq = dir.path().join(format!("{run}.parquet"));
        taskchain()
            .arg("-q")
            .args(&copies)
            .arg("-o")
            .arg(&pq)
            .arg("--summary")
            .arg(&out)
            .assert()
            .success();
        read_ids(&pq)
    };
    let first = ids("one");
    assert_eq!(first.len(), 4, "{first:?}");
    let id = |name: &str| first[&dir.path().join(name).display().to_string()].clone();
    assert_eq!(id("a/x.json.gz"), id("b/c/y.json.gz"));
    assert_eq!(id("a/f.json"), id("b/g.json"));
    assert_ne!(id("a/x.json.gz"), id("a/f.json"));
    assert_eq!(ids("two"), first, "another run");
    // Standard input has no file to name: no id.
    let bytes = std::fs::read(root.join("samples/field-bundle/trace.json")).unwrap();
    let pq = dir.path().join("stdin.parquet");
    taskchain()
        .args(["-q", "-", "-o"])
        .arg(&pq)
        .write_stdin(bytes)
        .assert()
        .success();
    assert_eq!(read_ids(&pq).into_values().collect::<Vec<_>>(), [""]);
}

/// file → trace_id ("" for null) of a task table.
fn read_ids(pq: &Path) -> BTreeMap<String, String> {
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    let (b, _) = common::read_parquet(pq);
    let file = b.column_by_name("file").unwrap().as_string::<i32>();
    let id = b.column_by_name("trace_id").unwrap().as_string::<i32>();
    (0..b.num_rows())
        .map(|i| {
            let v = if id.is_null(i) { "" } else { id.value(i) };
            (file.value(i).to_string(), v.to_string())
        })
        .collect()
}

#[test]
fn exit_codes_say_whether_a_retry_can_help() {
    let trace = "samples/chromium-click-chain/trace.json.gz";
    let code = |args: &[&str]| {
        taskchain()
            .arg("-q")
            .args(args)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(code(&[trace, "-o", "/dev/null"]), Some(0));
    assert_eq!(
        code(&[trace, "-o", "/dev/null", "--budget", "long-tasks=0"]),
        Some(1)
    );
    // Bad input, never worth a retry: not a trace, a missing file, a bad flag.
    assert_eq!(code(&["Cargo.toml", "-o", "/dev/null"]), Some(2));
    assert_eq!(code(&["no-such-trace.json", "-o", "/dev/null"]), Some(2));
    assert_eq!(code(&[trace, "--threshold-ms", "-1"]), Some(2));
    // No space left for an output (/dev/full answers every write with ENOSPC): 75.
    let out = taskchain()
        .args(["-q", trace, "-o", "/dev/full"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(75),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("/dev/full"));
    // An input that cannot be opened for want of a file descriptor (EMFILE: 0, 1, 2 and
    // the -o file leave none under `ulimit -n 4`): 75, a retry with more may read it.
    let out = std::process::Command::new("sh")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("-c")
        .arg(format!(
            "ulimit -n 4; exec '{}' -q {trace} -o /dev/null",
            assert_cmd::cargo::cargo_bin("taskchain").display()
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{err}");
    assert!(
        err.contains("cannot read samples/chromium-click-chain") && err.contains("(os error 24)"),
        "{err}"
    );
    // A retryable failure beside a bad input: 75 (the retry tells the bad input again).
    let out = taskchain()
        .args([
            "-q",
            trace,
            "Cargo.toml",
            "-o",
            "/dev/null",
            "--summary",
            "/dev/full",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(75));
}

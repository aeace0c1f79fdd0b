//! Memory bounded by the answer: field data read member by member gives the
//! rows worked out by hand, in one chunk of samples or many, in order or not; strings over
//! 1 MiB are cut and their file's rows flagged `string_cut`. (Peak memory itself is
//! measured by scripts/bench-memory.sh, not here.)

use crate::common::taskchain;

fn csv_rows(path: &std::path::Path) -> (Vec<Vec<String>>, String) {
    let out = taskchain().arg(path).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut r = csv::Reader::from_reader(&out.stdout[..]);
    let rows = r
        .records()
        .map(|x| x.unwrap().iter().map(str::to_owned).collect())
        .collect();
    (rows, String::from_utf8_lossy(&out.stderr).into_owned())
}

const NODES: &str = r#"[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2,3,4]},{"id":2,"callFrame":{"functionName":"(idle)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}},{"id":3,"callFrame":{"functionName":"f","scriptId":"1","url":"a.js","lineNumber":9,"columnNumber":4}},{"id":4,"callFrame":{"functionName":"g","scriptId":"1","url":"a.js","lineNumber":19,"columnNumber":2}}]"#;

/// 60 runs of 100 busy samples (f, g, f, …) then 50 idle ones, 1 ms apart from
/// startTime 0: 9,000 samples, more than two chunks of 4,096. With `swap`, two samples of
/// each busy run are written out of order (a negative delta), which sorting undoes.
fn profile(swap: bool) -> String {
    let mut samples = Vec::new();
    for r in 0..60 {
        let leaf = if r % 2 == 0 { 3 } else { 4 };
        samples.extend(std::iter::repeat_n(leaf, 100));
        samples.extend(std::iter::repeat_n(2, 50));
    }
    // (node, time in ms) in file order.
    let mut at: Vec<(i32, i64)> = samples.iter().zip(1..).map(|(&n, t)| (n, t)).collect();
    if swap {
        for r in 0..60 {
            at.swap(150 * r + 40, 150 * r + 41);
        }
    }
    let mut prev = 0;
    let deltas: Vec<String> = at
        .iter()
        .map(|&(_, t)| {
            let d = (t - prev) * 1000;
            prev = t;
            d.to_string()
        })
        .collect();
    let ids: Vec<String> = at.iter().map(|(n, _)| n.to_string()).collect();
    format!(
        r#"{{"nodes":{NODES},"startTime":0,"endTime":9000000,"samples":[{}],"timeDeltas":[{}]}}"#,
        ids.join(","),
        deltas.join(",")
    )
}

#[test]
fn cpuprofile_read_member_by_member_gives_the_rows_worked_out_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let in_order = dir.path().join("in-order.cpuprofile");
    let swapped = dir.path().join("swapped.cpuprofile");
    std::fs::write(&in_order, profile(false)).unwrap();
    std::fs::write(&swapped, profile(true)).unwrap();
    let (rows, _) = csv_rows(&in_order);
    assert_eq!(rows.len(), 60);
    for (r, row) in rows.iter().enumerate() {
        // Busy span r: samples 150r+1 … 150r+100 ms, ended by the idle one at 150r+101.
        let start_ms = 150 * r as i64 + 1;
        assert_eq!(row[4], (start_ms * 1000).to_string(), "row {r}");
        assert_eq!(row[5], format!("{start_ms}.000"));
        assert_eq!(row[6], "100.000");
        // The 100 busy samples are the target (run 27 spans the first chunk boundary,
        // sample 4,096; run 54 the second).
        assert_eq!(row[8], "100", "row {r}");
        assert_eq!(row[11], "ok");
        let (leaf, pos) = if r % 2 == 0 { ("f", "10") } else { ("g", "20") };
        assert_eq!((row[13].as_str(), row[15].as_str()), (leaf, pos));
        assert_eq!(row[19], "busy_span");
    }
    // Out of order in the file, the same samples once sorted: the same rows but the name.
    let (other, _) = csv_rows(&swapped);
    let strip = |rows: &[Vec<String>]| -> Vec<Vec<String>> {
        rows.iter().map(|r| r[1..].to_vec()).collect()
    };
    assert_eq!(strip(&other), strip(&rows));
}

#[test]
fn long_function_name_is_cut_to_one_mib_and_flagged() {
    let long = "x".repeat((1 << 20) + 100);
    let nodes = NODES.replace(
        r#""functionName":"f""#,
        &format!(r#""functionName":"{long}""#),
    );
    let samples = [[3; 100].as_slice(), &[2; 10]].concat();
    let ids: Vec<String> = samples.iter().map(i32::to_string).collect();
    let deltas = vec!["1000"; samples.len()].join(",");
    let doc = format!(
        r#"{{"nodes":{nodes},"startTime":0,"endTime":200000,"samples":[{}],"timeDeltas":[{deltas}]}}"#,
        ids.join(",")
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.cpuprofile");
    std::fs::write(&path, doc).unwrap();
    let (rows, stderr) = csv_rows(&path);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][13].len(), 1 << 20);
    assert!(rows[0][13].bytes().all(|b| b == b'x'));
    // (The profile's first sample is the task's first: `profile_started_inside` too.)
    assert!(
        rows[0][12].split(';').any(|f| f == "string_cut"),
        "{}",
        rows[0][12]
    );
    assert!(stderr.contains("strings longer than 1 MiB"), "{stderr}");
}

#[test]
fn long_thread_name_in_a_trace_is_cut_and_flags_the_rows() {
    let long = "t".repeat((1 << 20) + 1);
    let doc = format!(
        "{{\"traceEvents\":[\n\
         {{\"pid\":1,\"tid\":1,\"ts\":0,\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":\"thread_name\",\"args\":{{\"name\":\"CrRendererMain\"}}}},\n\
         {{\"pid\":1,\"tid\":2,\"ts\":0,\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":\"thread_name\",\"args\":{{\"name\":\"{long}\"}}}},\n\
         {{\"pid\":1,\"tid\":1,\"ts\":1000,\"ph\":\"X\",\"cat\":\"toplevel\",\"name\":\"RunTask\",\"dur\":60000}}\n]}}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.json");
    std::fs::write(&path, doc).unwrap();
    let (rows, stderr) = csv_rows(&path);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][3], "CrRendererMain");
    assert_eq!(rows[0][12], "string_cut");
    assert!(stderr.contains("strings longer than 1 MiB"), "{stderr}");
}

/// A trace of `n` RunTask events of 60 ms on one renderer main thread, 70 ms apart from
/// 1 s, and no profile: `n` rows with no chain.
fn many_tasks(n: usize) -> String {
    let mut s = String::from(
        "{\"traceEvents\":[\n{\"pid\":1,\"tid\":1,\"ts\":0,\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":\"thread_name\",\"args\":{\"name\":\"CrRendererMain\"}}",
    );
    for k in 0..n {
        s += &format!(
            ",\n{{\"pid\":1,\"tid\":1,\"ts\":{},\"ph\":\"X\",\"cat\":\"toplevel\",\"name\":\"RunTask\",\"dur\":60000}}",
            1_000_000 + k * 70_000
        );
    }
    s + "\n]}\n"
}

#[test]
fn rows_are_streamed_in_blocks_equal_to_the_collected_rows() {
    use std::sync::{Arc, Mutex};
    let trace = many_tasks(40_000);
    let collected = taskchain::analyze_bytes("t.json", trace.as_bytes(), &Default::default())
        .unwrap()
        .rows;
    assert_eq!(collected.len(), 40_000);
    let blocks: Arc<Mutex<Vec<Vec<taskchain::report::ReportRow>>>> = Default::default();
    let to = blocks.clone();
    let settings = taskchain::Settings {
        row_sink: Some(taskchain::RowSink(Arc::new(move |rows| {
            to.lock().unwrap().push(rows)
        }))),
        ..Default::default()
    };
    let rep = taskchain::analyze_bytes("t.json", trace.as_bytes(), &settings).unwrap();
    // The report keeps its counts and leaves the rows to the sink: 16,384 at a time.
    assert!(rep.rows.is_empty());
    assert_eq!(rep.long_tasks, 40_000);
    assert_eq!(rep.stats.top_level_tasks, 40_000);
    // Total blocking time: 40,000 × (60 − 50) ms; the longest task 60 ms.
    assert_eq!(rep.stats.blocking_time.as_nanos(), 40_000 * 10_000_000);
    assert_eq!(rep.stats.max_task.as_nanos(), 60_000_000);
    let blocks = std::mem::take(&mut *blocks.lock().unwrap());
    let sizes: Vec<usize> = blocks.iter().map(Vec::len).collect();
    assert_eq!(sizes, [16_384, 16_384, 7_232]);
    let streamed: Vec<_> = blocks.into_iter().flatten().collect();
    for (k, r) in streamed.iter().enumerate() {
        // In time order: task k starts 70k ms after the first (metadata has no time).
        assert_eq!(r.task_start.as_nanos(), 70 * k as i64 * 1_000_000);
    }
    assert!(streamed == collected);
}

#[test]
fn streamed_rows_give_the_same_outputs_at_any_jobs() {
    let dir = tempfile::tempdir().unwrap();
    // Three files: 20,000 rows, 3 rows, 20,000 rows, so that with two workers the rows
    // of a later file wait while an earlier one is written.
    for (name, n) in [("a.json", 20_000), ("b.json", 3), ("c.json", 20_000)] {
        std::fs::write(dir.path().join(name), many_tasks(n)).unwrap();
    }
    let run = |jobs: &str, tag: &str| {
        let out = |ext: &str| dir.path().join(format!("{tag}.{ext}"));
        let st = taskchain()
            .current_dir(dir.path())
            .args(["-q", "-j", jobs, "a.json", "b.json", "c.json", "-o"])
            .arg(out("csv"))
            .arg("--summary")
            .arg(out("summary.csv"))
            .arg("--markdown")
            .arg(out("md"))
            .output()
            .unwrap();
        assert!(st.status.success());
        let pq = taskchain()
            .current_dir(dir.path())
            .args([
                "-q", "-j", jobs, "a.json", "b.json", "c.json", "--format", "parquet", "-o",
            ])
            .arg(out("parquet"))
            .output()
            .unwrap();
        assert!(pq.status.success());
        ["csv", "summary.csv", "md", "parquet"].map(|e| std::fs::read(out(e)).unwrap())
    };
    let one = run("1", "j1");
    let two = run("2", "j2");
    assert!(one == two, "outputs differ between -j1 and -j2");
    let (_, rows) = crate::common::read_csv(&dir.path().join("j2.csv"));
    assert_eq!(rows.len(), 40_003);
    // Files in the order given, each file's rows in time order.
    let files: Vec<&str> = [0, 19_999, 20_000, 20_002, 20_003, 40_002]
        .iter()
        .map(|&i| rows[i][0].as_str())
        .collect();
    assert_eq!(
        files,
        ["a.json", "a.json", "b.json", "b.json", "c.json", "c.json"]
    );
    assert_eq!(rows[20_002][5], "140.000");
    assert_eq!(rows[40_002][4], (1_000_000 + 19_999 * 70_000).to_string());
}

/// How many times [`count_release`] was called (only the test below sets it as a hook).
static RELEASED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn count_release() {
    RELEASED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

#[test]
fn freed_memory_is_offered_back_once_after_a_streams_scan_and_not_for_bytes() {
    let trace = many_tasks(3);
    let settings = taskchain::Settings {
        release_freed: Some(count_release),
        ..Default::default()
    };
    // Bytes at hand (a mapped file, a small gzip read whole) free no read buffers.
    let whole = taskchain::analyze_bytes("t.json", trace.as_bytes(), &settings).unwrap();
    assert_eq!(RELEASED.load(std::sync::atomic::Ordering::SeqCst), 0);
    let blocks: Vec<std::io::Result<Vec<u8>>> = trace
        .as_bytes()
        .chunks(64)
        .map(|c| Ok(c.to_vec()))
        .collect();
    let streamed =
        taskchain::internals::analyze_stream("t.json", blocks.into_iter(), &settings).unwrap();
    assert_eq!(RELEASED.load(std::sync::atomic::Ordering::SeqCst), 1);
    // The three 60 ms tasks either way.
    assert_eq!(streamed.long_tasks, 3);
    assert!(streamed.rows == whole.rows);
}

#[test]
fn blocks_of_rows_are_bounded_by_the_bytes_of_their_chains() {
    use std::sync::{Arc, Mutex};
    // A function named with exactly 1 MiB (not cut) busy in 100 spans of 60 ms: each row's
    // chain holds its own 1 MiB copy, 100 MiB in one block of 16,384 rows; blocks hold at
    // most 64 MiB of chains.
    let name = "x".repeat(1 << 20);
    let nodes = NODES.replace(
        r#""functionName":"f""#,
        &format!(r#""functionName":"{name}""#),
    );
    let samples: Vec<i32> = (0..100)
        .flat_map(|_| [[3; 60].as_slice(), &[2; 10]].concat())
        .collect();
    let ids: Vec<String> = samples.iter().map(i32::to_string).collect();
    let deltas = vec!["1000"; samples.len()].join(",");
    let doc = format!(
        r#"{{"nodes":{nodes},"startTime":0,"endTime":7000000,"samples":[{}],"timeDeltas":[{deltas}]}}"#,
        ids.join(",")
    );
    // Per block: rows, and bytes of chain text.
    let blocks: Arc<Mutex<Vec<(usize, usize)>>> = Default::default();
    let to = blocks.clone();
    let settings = taskchain::Settings {
        row_sink: Some(taskchain::RowSink(Arc::new(move |rows| {
            let text = rows
                .iter()
                .flat_map(|r| &r.chain)
                .map(|f| f.function.len() + f.url.len() + f.script_id.len())
                .sum();
            assert!(
                rows.iter()
                    .all(|r| r.chain.last().unwrap().function == name)
            );
            to.lock().unwrap().push((rows.len(), text))
        }))),
        ..Default::default()
    };
    let rep = taskchain::analyze_bytes("p.cpuprofile", doc.as_bytes(), &settings).unwrap();
    assert_eq!(rep.long_tasks, 100);
    let blocks = std::mem::take(&mut *blocks.lock().unwrap());
    assert_eq!(blocks.iter().map(|b| b.0).sum::<usize>(), 100);
    assert!(blocks.len() > 1, "{blocks:?}");
    assert!(blocks.iter().all(|b| b.1 <= 64 << 20), "{blocks:?}");
}

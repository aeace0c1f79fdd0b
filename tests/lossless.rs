//! "Lose nothing": every rule has a test named after it, on inputs built here.

use std::path::Path;
use std::process::Command;

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("taskchain")
}

/// A trace of `n` long tasks (60 ms each, 100 ms apart) on one renderer main thread, each
/// with samples of its own function `f<k>` every 10 ms; one event per line as Chrome
/// writes them. The chain of task k is `f<k> (a.js:<k+1>:1)`.
pub fn small_trace(n: usize) -> String {
    let mut ev = vec![
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}}"#
            .to_string(),
        r#"{"ph":"P","name":"Profile","id":"0x1","pid":1,"tid":1,"ts":0,"args":{"data":{"startTime":0}}}"#.to_string(),
    ];
    for k in 0..n {
        let ts = 100_000 * (k as i64 + 1);
        ev.push(format!(
            r#"{{"ph":"X","name":"RunTask","cat":"toplevel","pid":1,"tid":1,"ts":{ts},"dur":60000}}"#
        ));
        // Six samples at ts+5 ms … ts+55 ms, node k+2 (function f<k>).
        let node = k + 2;
        let first = if k == 0 { ts + 5000 } else { 45_000 };
        ev.push(format!(
            r#"{{"ph":"P","name":"ProfileChunk","id":"0x1","pid":1,"tid":1,"ts":{},"args":{{"data":{{"cpuProfile":{{"nodes":[{}{{"id":{node},"parent":1,"callFrame":{{"functionName":"f{k}","url":"a.js","lineNumber":{k},"columnNumber":0,"scriptId":1}}}}],"samples":[{node},{node},{node},{node},{node},{node}]}},"timeDeltas":[{first},10000,10000,10000,10000,10000]}}}}}}"#,
            ts + 60_000,
            if k == 0 {
                r#"{"id":1,"callFrame":{"functionName":"(root)","scriptId":0}},"#
            } else {
                ""
            }
        ));
    }
    format!("{{\"traceEvents\":[\n{}\n]}}\n", ev.join(",\n"))
}

/// Runs `sh -c script` in `dir` with `$T` the taskchain binary.
pub fn sh(dir: &Path, script: &str) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .env("T", bin())
        .current_dir(dir)
        .output()
        .unwrap()
}

pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn small_trace_gives_one_row_per_task() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("t.json"), small_trace(3)).unwrap();
    let o = sh(d.path(), "$T -q t.json");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(rows.len(), 3);
    for (k, r) in rows.iter().enumerate() {
        let chain = format!(",1,f{k} (a.js:{}:1),trace,", k + 1);
        assert!(r.contains(",ok,") && r.contains(&chain), "{r}");
    }
}

#[test]
fn same_output_spelled_two_ways_is_refused() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("t.json"), small_trace(1)).unwrap();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    let abs = d.path().join("x.csv").display().to_string();
    for other in [
        "--summary ./x.csv",
        "--summary sub/../x.csv",
        "--summary nosuch/../x.csv",
        &format!("--folded {abs}"),
        &format!("--flamegraph {abs}"),
    ] {
        let o = sh(d.path(), &format!("$T -q t.json -o x.csv {other}"));
        assert_eq!(o.status.code(), Some(2), "{other}");
        assert!(stderr(&o).contains("both name"), "{other}: {}", stderr(&o));
        assert!(!d.path().join("x.csv").exists(), "{other}");
    }
    // An existing file reached by a hard link is the same file.
    std::fs::write(d.path().join("y.csv"), "old").unwrap();
    std::fs::hard_link(d.path().join("y.csv"), d.path().join("z.csv")).unwrap();
    let o = sh(d.path(), "$T -q t.json -o y.csv --summary z.csv");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(d.path().join("y.csv")).unwrap(),
        "old"
    );
}

#[test]
fn standard_input_being_an_output_file_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let trace = small_trace(1);
    std::fs::write(d.path().join("in.json"), &trace).unwrap();
    let o = sh(d.path(), "$T -q - -o in.json < in.json");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("-o in.json is the file standard input reads"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(d.path().join("in.json")).unwrap(),
        trace
    );
    // Also when the list of files comes from it.
    std::fs::write(d.path().join("list.txt"), "in.json\n").unwrap();
    let o = sh(
        d.path(),
        "$T -q --files-from - --summary list.txt < list.txt",
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(d.path().join("list.txt")).unwrap(),
        "in.json\n"
    );
}

#[test]
fn closed_stdout_is_exit_2_cannot_write_the_report() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("t.json"), small_trace(1)).unwrap();
    let o = sh(d.path(), "$T -q t.json >&-");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot write the report"),
        "{}",
        stderr(&o)
    );
    // No space left (ENOSPC) is a failure a retry may fix: 75, not 2.
    let o = sh(d.path(), "$T -q t.json > /dev/full");
    assert_eq!(o.status.code(), Some(75));
    assert!(
        stderr(&o).contains("cannot write the report"),
        "{}",
        stderr(&o)
    );
    // Written to /dev/null on purpose: fine, also opened read-write (as Python's
    // `subprocess.DEVNULL` does, and Rust's runtime for a closed descriptor: taskchain
    // looks at its descriptors before the runtime does).
    for null in ["> /dev/null", "1<>/dev/null"] {
        let o = sh(d.path(), &format!("$T -q t.json {null}"));
        assert_eq!(o.status.code(), Some(0), "{null}: {}", stderr(&o));
    }
    let o = sh(
        d.path(),
        "python3 -c 'import subprocess, sys; sys.exit(subprocess.run([sys.argv[1], \"-q\", \"t.json\"], stdout=subprocess.DEVNULL).returncode)' \"$T\"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}

#[test]
fn files_from_closed_stdin_is_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let o = sh(d.path(), "$T -q --files-from - <&-");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("standard input (--files-from -): it is closed"));
    let o = sh(d.path(), "$T -q - <&-");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read -: standard input is closed"));
    // A /dev/null opened read-write is open: read, and empty.
    let o = sh(d.path(), "$T -q - 0<>/dev/null");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("-: not a trace: the file is empty"),
        "{}",
        stderr(&o)
    );
    let o = sh(d.path(), "$T -q --files-from - 0<>/dev/null");
    assert!(!stderr(&o).contains("closed"), "{}", stderr(&o));
}

#[test]
fn stale_temp_files_of_dead_runs_are_removed() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("t.json"), small_trace(1)).unwrap();
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // A process that has ended: its pid is free (until reused, which would keep the file).
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = out.join(format!(".taskchain-{dead}-Ab12Cd"));
    let live = out.join(format!(".taskchain-{}-Ef34Gh", std::process::id()));
    let no_pid = out.join(".taskchain-Ij56Kl");
    for f in [&stale, &live, &no_pid] {
        std::fs::write(f, "partial").unwrap();
    }
    let o = sh(d.path(), "$T -q t.json -o out/r.csv");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stale.exists());
    assert!(live.exists() && no_pid.exists());
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 3, "{names:?}"); // r.csv and the two kept
}

#[test]
fn missing_output_folder_is_named_and_create_dirs_creates_it() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("t.json"), small_trace(1)).unwrap();
    let o = sh(d.path(), "$T -q t.json -o new/deep/r.csv");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot write new/deep/r.csv: the folder new/deep does not exist (--create-dirs creates it)"),
        "{}",
        stderr(&o)
    );
    let o = sh(
        d.path(),
        "$T -q t.json -o new/deep/r.csv --create-dirs --summary new/s.csv",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report = std::fs::read_to_string(d.path().join("new/deep/r.csv")).unwrap();
    assert_eq!(report.lines().count(), 2);
    assert!(d.path().join("new/s.csv").is_file());
}

/// `small_trace(n)` with an event nothing uses as its third line, and that line's offset.
pub fn trace_with_noise(n: usize) -> (String, usize) {
    let t = small_trace(n);
    let at = t.match_indices('\n').nth(2).unwrap().0 + 1;
    let noise = r#"{"ph":"I","name":"Noise","pid":1,"tid":1,"ts":50000,"args":{"x":1}},"#;
    (format!("{}{noise}\n{}", &t[..at], &t[at..]), at)
}

pub fn gzip(b: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

/// Runs taskchain on `bytes` as a whole file, a `.gz` file and standard input, at -j1 and
/// -j2; asserts that all six give the same exit code, stderr and report; returns them.
pub fn everywhere(bytes: &[u8]) -> (i32, String, String) {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("t.json"), bytes).unwrap();
    std::fs::write(d.path().join("t.json.gz"), gzip(bytes)).unwrap();
    let mut seen: Option<(i32, String, String)> = None;
    for j in ["1", "2"] {
        for (input, shown) in [
            ("t.json", "t.json"),
            ("t.json.gz", "t.json.gz"),
            ("- < t.json", "-"),
        ] {
            let o = sh(d.path(), &format!("$T -j{j} {input}"));
            // The same bytes whatever the file is called.
            // (Only where the name stands: a message may hold a `-` of its own.)
            let out = String::from_utf8(o.stdout.clone())
                .unwrap()
                .replace(&format!("\n{shown},"), "\nF,");
            let err = stderr(&o).replace(&format!(" {shown}: "), " F: ");
            let got = (o.status.code().unwrap(), err, out);
            match &seen {
                None => seen = Some(got),
                Some(s) => assert_eq!(&got, s, "{input} -j{j}"),
            }
        }
    }
    seen.unwrap()
}

pub fn flagged_rows(out: &str) -> Vec<&str> {
    out.lines()
        .skip(1)
        .filter(|l| l.contains("damaged_file"))
        .collect()
}

#[test]
fn corrupt_event_costs_that_event() {
    let (t, at) = trace_with_noise(4);
    let bad = t.replacen(r#""ts":50000"#, r##""ts"#50000"##, 1);
    let hash = bad.find("\"ts\"#").unwrap() + 4;
    let next = at + bad[at..].find('\n').unwrap() + 1;
    let (code, err, out) = everywhere(bad.as_bytes());
    assert_eq!(code, 2);
    let expected = format!(
        "invalid JSON at byte {hash} (event 2): expected ':' after a key; skipped {} bytes (1 event), resumed at byte {next}",
        next - at
    );
    assert!(err.contains(&expected), "{err}\nwanted {expected}");
    // All four tasks kept, with their chains, and flagged.
    assert_eq!(out.lines().count(), 5, "{out}");
    assert_eq!(flagged_rows(&out).len(), 4);
    for k in 0..4 {
        assert!(out.contains(&format!("f{k} (a.js:{}:1)", k + 1)));
    }
    // The intact file: no flag, exit 0.
    let (code, _, out) = everywhere(t.as_bytes());
    assert_eq!((code, flagged_rows(&out).len()), (0, 0));
}

#[test]
fn stray_bracket_in_a_profile_chunk_costs_that_chunk() {
    let t = small_trace(4);
    // Chunk of task 1: a stray `[` in its timeDeltas, which never closes.
    let chunk1 = t.find(r#""functionName":"f1""#).unwrap();
    let deltas = chunk1 + t[chunk1..].find("\"timeDeltas\":[").unwrap() + 14;
    let bad = format!("{}[{}", &t[..deltas], &t[deltas..]);
    let (code, err, out) = everywhere(bad.as_bytes());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("invalid JSON at byte"), "{err}");
    assert!(err.contains("resumed at byte"), "{err}");
    // Every task is kept and flagged: the lost chunk's time deltas shift the samples after
    // it, so rows after the damage are to be taken with care; the first keeps its chain.
    assert_eq!(out.lines().count(), 5, "{out}");
    assert!(out.contains("f0 (a.js:1:1)"), "{out}");
    assert!(!out.contains("f1 (a.js"));
    assert_eq!(flagged_rows(&out).len(), 4);
}

#[test]
fn missing_bracket_in_a_profile_chunk_costs_that_chunk() {
    let t = small_trace(4);
    let chunk2 = t.find(r#""functionName":"f2""#).unwrap();
    let samples_end = chunk2 + t[chunk2..].find("]},\"timeDeltas\"").unwrap();
    let bad = format!("{}{}", &t[..samples_end], &t[samples_end + 1..]);
    let (code, err, out) = everywhere(bad.as_bytes());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("skipped"), "{err}");
    assert_eq!(out.lines().count(), 5, "{out}");
    for k in [0, 1] {
        assert!(out.contains(&format!("f{k} (a.js:{}:1)", k + 1)), "{out}");
    }
    assert!(!out.contains("f2 (a.js"));
    assert_eq!(flagged_rows(&out).len(), 4);
}

/// The fuzz target's check (`fuzz/fuzz_targets/pipeline.rs`) on damaged recordings: a
/// whole file and the same bytes as a stream of small blocks give the same rows, the
/// same damage message and the same flags, for 300 byte flips of a trace.
#[test]
fn whole_file_and_stream_agree_on_damaged_traces() {
    use taskchain::internals::analyze_stream;
    use taskchain::{Settings, analyze_bytes};
    let (t, _) = trace_with_noise(5);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let settings = Settings::default();
    for _ in 0..300 {
        let mut b = t.clone().into_bytes();
        let at = (next() % b.len() as u64) as usize;
        b[at] = b"#[]{}\",:0 \n"[(next() % 11) as usize];
        let whole = analyze_bytes("f", &b, &settings);
        let block = 1 + (next() % 97) as usize;
        let blocks: Vec<std::io::Result<Vec<u8>>> =
            b.chunks(block).map(|c| Ok(c.to_vec())).collect();
        let streamed = analyze_stream("f", blocks.into_iter(), &settings);
        match (&whole, &streamed) {
            (Ok(a), Ok(s)) => {
                let ctx =
                    String::from_utf8_lossy(&b[at.saturating_sub(40)..(at + 40).min(b.len())]);
                assert_eq!(
                    a.rows.len(),
                    s.rows.len(),
                    "flip at {at} block {block}: {ctx}"
                );
                assert_eq!(a.broken, s.broken, "flip at {at}");
                for (x, y) in a.rows.iter().zip(&s.rows) {
                    assert_eq!(
                        (x.task_ts, x.task_dur, x.status, &x.chain, x.flags),
                        (y.task_ts, y.task_dur, y.status, &y.chain, y.flags),
                        "flip at {at}"
                    );
                }
            }
            (Err(_), Err(_)) => {}
            (a, s) => panic!(
                "flip at {at}: whole {:?} vs streamed {:?}",
                a.as_ref().err(),
                s.as_ref().err()
            ),
        }
    }
}

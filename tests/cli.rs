//! The command line: exit codes, error lines, output files, formats.

use crate::common::{self, taskchain};

use predicates::prelude::*;

const M86: &str = "samples/cpu-profiler-m86/trace.json.gz";

fn bad_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let junk = dir.join("junk.json");
    std::fs::write(&junk, [0u8, 159, 146, 150, 1, 2, 3]).unwrap();
    let heap = dir.join("heap.json");
    std::fs::write(
        &heap,
        br#"{"head":{"callFrame":{"functionName":"(root)"},"selfSize":0,"id":1,"children":[]},"samples":[{"size":16,"nodeId":1,"ordinal":1}]}"#,
    )
    .unwrap();
    let random = dir.join("random.json");
    std::fs::write(&random, br#"{"name":"left-pad","version":"1.3.0"}"#).unwrap();
    vec![junk, heap, random]
}

#[test]
fn markdown_shows_names_and_files_from_the_input_as_text() {
    // A function named `</script><img src=x onerror=…>` (tests/html_report.rs), in a file
    // whose name is a Markdown link: in the PR comment neither may render as HTML or a
    // link, so each sits in a code span (between backticks, which it cannot hold).
    let dir = tempfile::tempdir().unwrap();
    let trace = crate::html_report::hostile_trace(dir.path());
    let linked = dir.path().join("[x](https:__a.example).json");
    std::fs::rename(&trace, &linked).unwrap();
    let md = dir.path().join("r.md");
    taskchain()
        .args(["-q", "-o", "/dev/null", "--markdown"])
        .arg(&md)
        .arg(&linked)
        .assert()
        .success();
    let md = std::fs::read_to_string(&md).unwrap();
    let rows: Vec<&str> = md.lines().filter(|l| l.contains("<img")).collect();
    assert!(!rows.is_empty(), "{md}");
    for line in md
        .lines()
        .filter(|l| l.contains("<img") || l.contains("[x]("))
    {
        // Outside the code spans (odd pieces between backticks) no markup is left.
        let outside: String = line.split('`').step_by(2).collect();
        assert!(!outside.contains('<') && !outside.contains("]("), "{line}");
    }
}

#[test]
fn a_file_name_cannot_forge_a_line_of_standard_error() {
    // A file named with a new line, a GitHub Actions command and an ESC sequence, that is
    // not a trace: its error line names it with those characters escaped, one line.
    let dir = tempfile::tempdir().unwrap();
    let name = dir.path().join("a\n::error file=x::forged\u{1b}[2K.json");
    std::fs::write(&name, b"{\"name\":\"left-pad\"}").unwrap();
    let out = taskchain().arg(&name).assert().code(2).get_output().clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}"); // the file's error and the summary
    assert!(lines[0].starts_with("taskchain: error: "), "{stderr}");
    assert!(
        lines[0].contains("a\\x0a::error file=x::forged\\x1b[2K.json: not a trace"),
        "{stderr}"
    );
    assert!(!stderr.contains('\u{1b}'));
}

#[test]
fn a_standard_error_that_takes_no_line_loses_no_report() {
    // The bad files' `error:` lines and the summary go to a standard error that fails
    // every write: a pipe whose reader is gone (EPIPE; `2>&1 | head -1` once it has read
    // its line), and /dev/full (ENOSPC). The report is written all the same, with the
    // exit code of the mixed batch above (a panic on the first line gave 101, no file).
    let dir = tempfile::tempdir().unwrap();
    let bad = bad_files(dir.path());
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut sinks: Vec<(&str, std::process::Stdio)> = vec![("closed pipe", writer.into())];
    if std::path::Path::new("/dev/full").exists() {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
        sinks.push(("/dev/full", full.unwrap().into()));
    }
    for (k, (what, sink)) in sinks.into_iter().enumerate() {
        let out = dir.path().join(format!("rows{k}.csv"));
        let status = std::process::Command::new(assert_cmd::cargo::cargo_bin("taskchain"))
            .arg(M86)
            .args(&bad)
            .arg("-o")
            .arg(&out)
            .stderr(sink)
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(2), "{what}");
        let csv = std::fs::read_to_string(&out).unwrap();
        let rows: Vec<&str> = csv.lines().skip(1).collect();
        assert_eq!(rows.len(), 5, "{what}");
        assert!(rows.iter().all(|r| r.contains(",window.library.stall,")));
    }
}

#[test]
fn mixed_batch_keeps_good_rows_names_each_bad_file_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = bad_files(dir.path());
    let out = taskchain()
        .arg(M86)
        .args(&bad)
        .arg(dir.path().join("missing.json"))
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    // Header + the five long tasks of the m86 trace, every chain ending in window.library.stall.
    let rows: Vec<&str> = stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 5);
    assert!(rows.iter().all(|r| r.contains(",window.library.stall,")));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("taskchain: error:"))
        .collect();
    assert_eq!(errors.len(), 4, "{stderr}");
    assert!(errors.iter().any(|l| l.contains(
        "junk.json: not a trace: not JSON trace data: starts with byte 0x00 at offset 0"
    )));
    assert!(
        errors
            .iter()
            .any(|l| l.contains("heap.json: not a trace: a heap-sampling profile"))
    );
    assert!(
        errors.iter().any(
            |l| l.contains("random.json: not a trace: a JSON object with keys [name, version]")
        )
    );
    assert!(
        errors
            .iter()
            .any(|l| l.contains("cannot read") && l.contains("missing.json"))
    );
    assert!(stderr.contains("taskchain: 5 files,"), "{stderr}");
    assert!(stderr.contains("5 long tasks") && stderr.contains("4 failed"));
}

#[test]
fn json_and_ndjson_list_failed_files() {
    let dir = tempfile::tempdir().unwrap();
    let bad = bad_files(dir.path());
    let out = taskchain()
        .args(["--format", "json", M86])
        .arg(&bad[0])
        .assert()
        .code(2)
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["tasks"].as_array().unwrap().len(), 5);
    assert_eq!(doc["errors"].as_array().unwrap().len(), 1);
    assert!(
        doc["errors"][0]["file"]
            .as_str()
            .unwrap()
            .ends_with("junk.json")
    );
    let t = &doc["tasks"][1];
    assert_eq!(t["leaf_function"], "window.library.stall");
    assert_eq!(t["leaf_line"], 55);
    assert_eq!(t["chain"][1]["function"], "window.library.stall");

    let out = taskchain()
        .args(["--format", "ndjson", M86])
        .arg(&bad[0])
        .assert()
        .code(2)
        .get_output()
        .stdout
        .clone();
    let lines: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    // The reason alone: the file is in its own key.
    assert_eq!(
        lines[5]["error"],
        "not a trace: not JSON trace data: starts with byte 0x00 at offset 0 (want a JSON array or {\"traceEvents\": ...})"
    );
}

#[test]
fn output_file_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.csv");
    taskchain()
        .args([M86, "-q", "-o"])
        .arg(&out)
        .assert()
        .success()
        .stdout("")
        .stderr("");
    let written = std::fs::read_to_string(&out).unwrap();
    assert_eq!(written.lines().count(), 6);
    // The same trace through standard input (gzip detected by its magic bytes).
    let pipe = |stdin: Vec<u8>| {
        let out = taskchain()
            .args(["-", "-q"])
            .write_stdin(stdin)
            .assert()
            .success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let piped = pipe(std::fs::read(M86).unwrap());
    assert_eq!(
        piped.lines().nth(1).unwrap().split_once(',').unwrap().1,
        written.lines().nth(1).unwrap().split_once(',').unwrap().1
    );
    assert!(piped.lines().nth(1).unwrap().starts_with("-,"));
    // Plain JSON through standard input (read as a stream in blocks): the same rows.
    let mut plain = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(&std::fs::read(M86).unwrap()[..]),
        &mut plain,
    )
    .unwrap();
    let strip = |csv: &str| -> Vec<String> {
        csv.lines()
            .skip(1)
            .map(|l| l.split_once(',').unwrap().1.to_string())
            .collect()
    };
    assert_eq!(strip(&pipe(plain)), strip(&written));
}

#[test]
fn folder_search_skips_non_traces_without_failing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(M86, dir.path().join("trace.json.gz")).unwrap();
    std::fs::write(dir.path().join("package.json"), br#"{"name":"x"}"#).unwrap();
    // A Lighthouse devtoolslog: DevTools protocol messages, no trace event among them.
    let log = dir.path().join("defaultPass.devtoolslog.json");
    std::fs::write(
        &log,
        br#"[{"method":"Network.requestWillBeSent","params":{"requestId":"1"}},{"method":"Page.frameNavigated","params":{}}]"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("numbers.json"), b"[1,2,3]").unwrap();
    for search in [
        dir.path().to_path_buf(),
        dir.path().join("*.json*"), // a quoted glob finds as a folder search does
    ] {
        taskchain().arg(&search).assert().success().stderr(
            predicate::str::contains("skipped: ").and(predicate::str::contains("3 skipped")),
        );
    }
    // One trace was read: the totals count it alone, the summary lists the others as
    // skipped.
    let outs = tempfile::tempdir().unwrap();
    let md = outs.path().join("r.md");
    let summary = outs.path().join("s.csv");
    let out = taskchain()
        .arg(dir.path())
        .args(["-o", "/dev/null", "--markdown"])
        .arg(&md)
        .arg("--summary")
        .arg(&summary)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("taskchain: 1 file, 5 long tasks, 4 attributed (ok), ")
            && err.contains(", 3 skipped (not traces)"),
        "{err}"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("\n1 file, 5 long tasks"), "{md}");
    let s = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(
        s.lines().filter(|l| l.contains(",skipped,")).count(),
        3,
        "{s}"
    );
    // Named on the command line, each is an error with its reason.
    taskchain()
        .arg(&log)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "not a trace: a JSON array of 2 objects, none a trace event",
        ));
    taskchain()
        .arg(dir.path().join("numbers.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "not a trace: a JSON array whose elements are not objects (from byte 1)",
        ));
    // Gzip magic and then no deflate data: the gzip error, not "empty".
    let gz = dir.path().join("garbage.json.gz");
    std::fs::write(&gz, b"\x1f\x8b\x08\x00garbage-garbage").unwrap();
    taskchain()
        .arg(&gz)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "not a trace: gzip stream broken before any trace data",
        ));
}

#[test]
fn two_outputs_on_standard_output_are_refused() {
    taskchain()
        .args([M86, "--markdown", "-"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "-o and --markdown would both write to standard output",
        ));
    taskchain()
        .args([M86, "-o", "/dev/null", "--markdown", "-", "-q"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("## taskchain"));
    // The list of files and the task entries are inputs: never overwritten.
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("list.txt");
    std::fs::write(&list, format!("{M86}\n")).unwrap();
    taskchain()
        .arg("--files-from")
        .arg(&list)
        .arg("-o")
        .arg(&list)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("would overwrite an input"));
    assert_eq!(std::fs::read_to_string(&list).unwrap(), format!("{M86}\n"));
    // A failed write names the output.
    if std::path::Path::new("/dev/full").exists() {
        taskchain()
            .args([M86, "-q", "-o", "/dev/null", "--aggregate", "/dev/full"])
            .assert()
            // No space left: a retry may succeed (exit code 75).
            .code(75)
            .stderr(predicate::str::contains("cannot write /dev/full"));
    }
}

#[test]
fn standard_input_named_twice_is_read_once() {
    let gz = std::fs::read(M86).unwrap();
    let out = taskchain()
        .args(["-", "-"])
        .write_stdin(gz)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 6);
}

#[test]
fn bad_usage_exits_2() {
    taskchain().assert().code(2);
    taskchain()
        .args(["--min-confidence", "2", M86])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--min-confidence must be between 0 and 1",
        ));
    taskchain()
        .args(["--threshold-ms", "-5", M86])
        .assert()
        .code(2);
}

#[test]
fn thresholds_and_policies_change_rows() {
    // m86: tasks of 103, 1053, 1050, 1001, 1001 ms; the 103 ms one has confidence 0.487.
    let rows = |args: &[&str]| {
        let out = taskchain().args(args).arg(M86).arg("-q").output().unwrap();
        String::from_utf8(out.stdout).unwrap().lines().count() - 1
    };
    assert_eq!(rows(&[]), 5);
    assert_eq!(rows(&["--threshold-ms", "200"]), 4);
    assert_eq!(rows(&["--on-low-confidence", "drop"]), 4);
    let out = taskchain()
        .args([M86, "-q", "--on-low-confidence", "fallback"])
        .output()
        .unwrap();
    let first = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_string();
    assert!(first.contains("fallback"), "{first}");
}

#[cfg(unix)]
#[test]
fn output_through_links_and_fifos_keeps_the_file_and_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.csv");
    std::fs::write(&real, "old").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    taskchain()
        .args([M86, "-q", "-o"])
        .arg(&link)
        .assert()
        .success();
    // The link is still a link; the report is in its target, with the target's mode.
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&real).unwrap().lines().count(), 6);
    assert_eq!(
        std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o640
    );
    // A FIFO is written in place, not replaced.
    let fifo = dir.path().join("out.fifo");
    common::mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    taskchain()
        .args([M86, "-q", "-o"])
        .arg(&fifo)
        .assert()
        .success();
    assert_eq!(reader.join().unwrap().lines().count(), 6);
    assert!(!std::fs::metadata(&fifo).unwrap().is_file());
    // A folder is refused before any work.
    taskchain()
        .args([M86, "-q", "-o"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("it is a folder"));
}

#[cfg(unix)]
#[test]
fn fifo_input_is_read_as_a_stream() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("in.fifo");
    common::mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, std::fs::read(M86).unwrap()).unwrap())
    };
    let out = taskchain().arg(&fifo).arg("-q").output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 6);
}

#[test]
fn cut_gzip_keeps_the_decoded_part() {
    let dir = tempfile::tempdir().unwrap();
    let gz = std::fs::read(M86).unwrap();
    let cut = dir.path().join("cut.json.gz");
    std::fs::write(&cut, &gz[..gz.len() * 9 / 10]).unwrap();
    let out = taskchain().arg(&cut).output().unwrap();
    // Every complete event decoded before the cut is used.
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 6);
    assert!(stdout.lines().skip(1).all(|l| l.contains("truncated_file")));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("gzip stream broken ("), "{stderr}");
    // A whole file with a wrong CRC (the gzip trailer's first 4 bytes): its events are
    // complete, but the checksum that comes after them is still read, and reported.
    let mut bad = gz.clone();
    let crc = bad.len() - 8;
    bad[crc] ^= 0xFF;
    let bad_crc = dir.path().join("bad-crc.json.gz");
    std::fs::write(&bad_crc, &bad).unwrap();
    let out = taskchain().arg(&bad_crc).output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 6);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("bad-crc.json.gz: gzip checksum mismatch"),
        "{stderr}"
    );
}

#[test]
fn corrupt_middle_costs_one_event_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("mid.json");
    std::fs::write(
        &f,
        br#"[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}},
{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":0,"dur":90000},
{"ph" "X"},
{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":100000,"dur":90000}]"#,
    )
    .unwrap();
    let out = taskchain().arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8(out.stdout).unwrap();
    // Both tasks, the one after the damage too, flagged; the bad event (bytes 147–158,
    // its line) is skipped and the walk resumes at the next line, byte 159.
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    assert_eq!(
        stdout.matches(",no_profile,damaged_file,").count(),
        2,
        "{stdout}"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("invalid JSON at byte 153 (event 2): expected ':' after a key; skipped 12 bytes (1 event), resumed at byte 159"),
        "{stderr}"
    );
}

#[test]
fn empty_folders_and_empty_trace_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    taskchain()
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no trace files"));
    std::fs::write(dir.path().join("empty.json"), b"").unwrap();
    std::fs::write(dir.path().join("cut.json"), b"[").unwrap();
    taskchain()
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("empty.json: not a trace: the file is empty").and(
                predicate::str::contains("cut.json: invalid JSON at byte 1 (event 0): the file ends before the first trace event is complete"),
            ),
        );
}

#[test]
fn cut_off_gzip_without_a_profile_blames_the_cut_not_the_recording() {
    // A gzip of an event array cut inside its third event: two long tasks on a renderer
    // main thread, no profile in the part written. The same events closed properly are a
    // recording without the profiler: `no_profile`.
    let events = r#"[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}},
{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":0,"dur":90000},
{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":100000,"dur":90000},
{"ph":"P","name":"Profile","pid":1,"tid":1,"id":"0x1","ts":5,"args":{"data":{"startT"#;
    let dir = tempfile::tempdir().unwrap();
    let gz = |name: &str, text: &str| {
        use std::io::Write;
        let f = dir.path().join(name);
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(text.as_bytes()).unwrap();
        std::fs::write(&f, e.finish().unwrap()).unwrap();
        f
    };
    let cut = gz("cut.json.gz", events);
    let out = taskchain().arg(&cut).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout.matches(",profile_cut_off,truncated_file,").count(),
        2,
        "{stdout}"
    );
    let whole = events.rsplit_once(",\n").unwrap().0.to_string() + "]";
    let out = taskchain()
        .arg(gz("whole.json.gz", &whole))
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.matches(",no_profile,,").count(), 2, "{stdout}");
}

#[test]
fn output_extension_picks_the_format_and_a_disagreeing_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m86 = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(M86);
    let run = |name: &str, format: Option<&str>| {
        let mut c = taskchain();
        c.current_dir(dir.path())
            .arg("-q")
            .arg(&m86)
            .args(["-o", name]);
        if let Some(f) = format {
            c.args(["--format", f]);
        }
        c.output().unwrap()
    };
    let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
    // The m86 trace has five long tasks (its expected rows).
    assert!(run("r.json", None).status.success());
    let v: serde_json::Value = serde_json::from_slice(&read("r.json")).unwrap();
    assert_eq!(v["tasks"].as_array().unwrap().len(), 5);
    assert!(run("r.ndjson", None).status.success());
    assert!(run("r.JSONL", None).status.success());
    for name in ["r.ndjson", "r.JSONL"] {
        let text = String::from_utf8(read(name)).unwrap();
        assert_eq!(text.lines().count(), 5, "{name}");
        for l in text.lines() {
            serde_json::from_str::<serde_json::Value>(l).unwrap();
        }
    }
    assert!(run("r.csv", None).status.success());
    assert!(read("r.csv").starts_with(b"file,pid,tid,"));
    // A name with no known extension: CSV, unless --format says.
    assert!(run("r.txt", None).status.success());
    assert!(read("r.txt").starts_with(b"file,pid,tid,"));
    assert!(run("r2.txt", Some("json")).status.success());
    assert!(read("r2.txt").starts_with(b"{"));
    // Agreeing is fine; disagreeing is bad usage, and nothing is written.
    assert!(run("r3.json", Some("json")).status.success());
    let out = run("r4.json", Some("csv"));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "taskchain: error: --format csv but -o names a .json file: drop one, or make them agree\n"
    );
    assert!(!dir.path().join("r4.json").exists());
}

#[test]
fn an_empty_trace_says_there_was_nothing_to_read() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, r#"{"traceEvents":[]}"#).unwrap();
    let out = taskchain().arg(&empty).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "taskchain: warning: {}: the trace holds no events: there was nothing to read",
            empty.display()
        )),
        "{err}"
    );
    // A trace with events has no such line.
    let out = taskchain().arg(M86).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("nothing to read"));
    // The JSON report carries the warning in the file's line, also under -q.
    let out = taskchain()
        .arg(&empty)
        .args(["-q", "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["files"],
        serde_json::json!([{
            "file": empty.display().to_string(),
            "long_tasks": 0,
            "long_tasks_outside_scope": 0,
            "tbt_ms": 0.0,
            "tbt_from_fcp_ms": null,
            "warnings": ["the trace holds no events: there was nothing to read"],
        }])
    );
    assert_eq!(
        (doc["tasks"].as_array().unwrap().len(), &doc["errors"]),
        (0, &serde_json::json!([]))
    );
}

#[test]
fn not_json_names_the_character_and_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("page.json");
    std::fs::write(&html, "\u{feff}hello, not a trace").unwrap();
    let out = taskchain().arg(&html).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // The BOM's 3 bytes count: `h` is at byte 3.
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "page.json: not a trace: not JSON trace data: starts with 'h' (0x68) at offset 3"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn long_tasks_outside_the_scope_are_counted_with_the_option_that_shows_them() {
    // Rows per scope (main-frame / renderers / all): chromium-iframes 3 / 4 / 4 (an
    // out-of-process frame's renderer), chromium-session-15s 39 / 39 / 47 (workers).
    let note = |case: &str, scope: &str| {
        let out = taskchain()
            .arg(format!("samples/{case}/trace.json.gz"))
            .args(["--scope", scope, "-o", "/dev/null"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stderr)
            .unwrap()
            .lines()
            .filter(|l| l.contains("outside --scope"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        note("chromium-iframes", "main-frame"),
        [
            "taskchain: warning: samples/chromium-iframes/trace.json.gz: 1 long task on threads \
          outside --scope main-frame is not in the report: --scope renderers shows them"
        ]
    );
    assert!(note("chromium-iframes", "renderers").is_empty());
    assert_eq!(
        note("chromium-session-15s", "main-frame"),
        [
            "taskchain: warning: samples/chromium-session-15s/trace.json.gz: 8 long tasks on \
          threads outside --scope main-frame are not in the report: --scope all shows them"
        ]
    );
    assert_eq!(
        note("chromium-session-15s", "renderers"),
        [
            "taskchain: warning: samples/chromium-session-15s/trace.json.gz: 8 long tasks on \
          threads outside --scope renderers are not in the report: --scope all shows them"
        ]
    );
    assert!(note("chromium-session-15s", "all").is_empty());
    // The summary and the JSON report's file line count them too.
    let counts = |case: &str, scope: &str| {
        let out = taskchain()
            .arg(format!("samples/{case}/trace.json.gz"))
            .args(["-q", "--scope", scope, "--format", "json", "--summary", "-"])
            .args(["-o", "/dev/null"])
            .output()
            .unwrap();
        let summary = String::from_utf8(out.stdout).unwrap();
        let mut r = csv::Reader::from_reader(summary.as_bytes());
        let col = r
            .headers()
            .unwrap()
            .iter()
            .position(|h| h == "long_tasks_outside_scope")
            .unwrap();
        let row = r.records().next().unwrap().unwrap();
        row[col].to_string()
    };
    assert_eq!(counts("chromium-iframes", "main-frame"), "1");
    assert_eq!(counts("chromium-iframes", "renderers"), "0");
    assert_eq!(counts("chromium-session-15s", "main-frame"), "8");
    assert_eq!(counts("chromium-session-15s", "all"), "0");
    let out = taskchain()
        .arg("samples/chromium-session-15s/trace.json.gz")
        .args(["-q", "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["files"][0]["long_tasks_outside_scope"], 8);
    assert_eq!(doc["files"][0]["long_tasks"], 39);
}

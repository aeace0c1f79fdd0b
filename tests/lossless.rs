//! Issue 18, "lose nothing": every rule has a test named after it, on inputs built here.

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
fn sh(dir: &Path, script: &str) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .env("T", bin())
        .current_dir(dir)
        .output()
        .unwrap()
}

fn stderr(o: &std::process::Output) -> String {
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
    let o = sh(d.path(), "$T -q t.json > /dev/full");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot write the report"),
        "{}",
        stderr(&o)
    );
    // Written to /dev/null on purpose: fine.
    let o = sh(d.path(), "$T -q t.json > /dev/null");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
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

//! Batch outputs: --summary, --aggregate, --folded (golden, with values checked
//! by hand on the m86 trace), --budget exit codes, `compare` on sets with a known answer.
//! `BLESS=1 cargo test` rewrites tests/expected/batch/.

use crate::common::{self, golden, taskchain, wait_until};

use predicates::prelude::*;

const CASES: [&str; 3] = [
    "samples/cpu-profiler-m86/trace.json.gz",
    "samples/chromium-click-chain/trace.json.gz",
    "samples/recursive-blocking-js/trace.json.gz",
];

#[test]
fn summary_aggregate_folded_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    for jobs in ["1", "2"] {
        taskchain()
            .args(CASES)
            .args(["-q", "-j", jobs, "-o"])
            .arg(p("r.csv"))
            .arg("--summary")
            .arg(p("s.csv"))
            .arg("--aggregate")
            .arg(p("a.csv"))
            .arg("--folded")
            .arg(p("f.txt"))
            .arg("--flamegraph")
            .arg(p("f.svg"))
            .arg("--markdown")
            .arg(p("r.md"))
            .assert()
            .success();
        let read = |n: &str| std::fs::read_to_string(p(n)).unwrap();
        let summary = read("s.csv");
        // m86 by hand: 5 long tasks of 103.142 + 1052.668 + 1050.456 + 1000.864 + 1000.725
        // = 4207.855 ms; TBT = 4207.855 − 5 × 50 = 3957.855; the four 1 s tasks are `ok`:
        // 4104.713 / 4207.855 = 0.975; one profile of 50,294 samples (docs/METHOD.md §2.4); no
        // source maps: no share of symbolicated frames to give; no Event Timing: no
        // interaction, no INP; a 2020 trace: no animation frames. Its first contentful paint
        // (ts 459852409904) falls 14.261 ms into the 103.142 ms task (ts 459852395643),
        // which from it on blocks 38.881 ms instead of 53.142: 3957.855 − 14.261 = 3943.594
        // from FCP on. One warning: the task at 4329.437 ms holds out-of-order samples that
        // change nothing (docs/METHOD.md §2.4). No long task outside the main frame.
        let m86 = summary.lines().find(|l| l.contains("m86")).unwrap();
        assert!(
            m86.ends_with(",ok,,1,8,5,4207.855,3957.855,1052.668,0.975,1,50294,1,,0,,0,3943.594,0"),
            "{m86}"
        );
        golden(
            std::path::Path::new("tests/expected/batch/summary.csv"),
            &summary,
        );
        let aggregate = read("a.csv");
        // Chains are keyed by function names and script paths (no origin): three of the four 1 s m86
        // tasks have different anonymous callers in one script, so one key, 999.598 +
        // 999.356 + 999.035 = 2997.989 ms of stack (p50 999.356, p95 999.598), tasks of
        // 1052.668 + 1000.725 + 1000.864 = 3054.257 ms; then recursive-blocking-js's three
        // tasks (722.629 + 724.512 + 743.558 = 2190.699; tasks 2001.553 + 1015.793).
        let line = |n: usize| aggregate.lines().nth(n).unwrap().to_string();
        assert!(
            line(1).ends_with(
                ",window.library.stall,http://localhost:10200/tricky-main-thread-library.js,\
                 (anonymous) (/tricky-main-thread-consumer.js) > \
                 window.library.stall (/tricky-main-thread-library.js),\
                 3,3,3,1,2997.989,999.356,999.598,3054.257"
            ),
            "{}",
            line(1)
        );
        assert!(
            line(2).ends_with(
                ",wait,http://127.0.0.1:8080/,(anonymous) (/) > foo (/) ×11 > wait (/),\
                 2,3,3,1,2190.699,724.512,743.558,3017.346"
            ),
            "{}",
            line(2)
        );
        golden(
            std::path::Path::new("tests/expected/batch/aggregate.csv"),
            &aggregate,
        );
        let folded = read("f.txt");
        // Every sample inside a long task is counted once: click_chain's task has 721.
        let total: u64 = folded
            .lines()
            .filter(|l| {
                l.contains("orders.js")
                    || l.starts_with("(program)")
                    || l.starts_with("(garbage")
                    || l.starts_with("(idle)")
            })
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum();
        assert!(total >= 721, "{total}");
        golden(
            std::path::Path::new("tests/expected/batch/folded.txt"),
            &folded,
        );
        assert!(read("f.svg").starts_with("<?xml"));
        assert!(read("r.md").contains("### Chains that cost the most long-task time"));
    }
}

#[test]
fn aggregate_with_the_exact_chain_key_keeps_every_caller_apart() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.csv");
    taskchain()
        .args(CASES)
        .args([
            "-q",
            "-o",
            "/dev/null",
            "--chain-key",
            "exact",
            "--aggregate",
        ])
        .arg(&a)
        .assert()
        .success();
    let text = std::fs::read_to_string(&a).unwrap();
    // The four 1 s m86 tasks have different outer callers, so four chains; the biggest
    // group is recursive-blocking-js's two tasks with one chain (722.629 + 724.512), its
    // key the chain text itself.
    let first = text.lines().nth(1).unwrap();
    let chain = "(anonymous) (http://127.0.0.1:8080/:21:22) > foo (http://127.0.0.1:8080/:18:19) ×11 > wait (http://127.0.0.1:8080/:9:20)";
    assert_eq!(
        first,
        format!(
            "{chain},wait,http://127.0.0.1:8080/,{chain},1,2,2,1,1447.141,722.629,724.512,2001.553"
        )
    );
    assert_eq!(
        text.lines()
            .filter(|l| l.contains(",window.library.stall,"))
            .count(),
        5
    );
}

#[test]
fn aggregate_by_url() {
    let out = taskchain()
        .args(CASES)
        .args([
            "-q",
            "--aggregate",
            "-",
            "--aggregate-by",
            "url",
            "-o",
            "/dev/null",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "url,chains,long_tasks,ok_tasks,files,stack_ms_total,stack_ms_p50,stack_ms_p95,task_ms_total"
    );
    // m86: all five tasks end in tricky-main-thread-library.js (5 distinct chains).
    assert!(lines.iter().any(|l| l.starts_with("http://localhost:10200/tricky-main-thread-library.js,5,5,4,1,")), "{text}");
}

#[test]
fn budgets_set_exit_code_1() {
    taskchain()
        .args([
            CASES[0],
            "-q",
            "--budget",
            "tbt-ms=4000",
            "--budget",
            "long-tasks=5",
        ])
        .assert()
        .success();
    taskchain()
        .args([CASES[0], "-q", "--budget", "tbt-ms=200", "--budget", "max-task-ms=1100"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("taskchain: budget: samples/cpu-profiler-m86/trace.json.gz: tbt-ms is 3957.855 (budget 200)"))
        .stderr(predicate::str::contains("max-task-ms").not());
    taskchain()
        .args([CASES[0], "--budget", "tbt=1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown key"));
}

/// A trace with one renderer main thread and long tasks of the given durations (ms).
fn trace_with_tasks(durations_ms: &[u64]) -> String {
    let mut events = vec![
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}}"#
            .to_string(),
    ];
    let mut ts = 1_000_000u64;
    for d in durations_ms {
        events.push(format!(
            r#"{{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":{ts},"dur":{}}}"#,
            d * 1000
        ));
        ts += d * 1000 + 10_000;
    }
    format!("[{}]", events.join(","))
}

#[test]
fn compare_finds_an_added_long_task_and_not_noise() {
    let dir = tempfile::tempdir().unwrap();
    let write_set = |name: &str, extra: bool| -> Vec<std::path::PathBuf> {
        (0..5)
            .map(|k| {
                let p = dir.path().join(format!("{name}{k}.json"));
                let mut tasks = vec![100 + k];
                if extra {
                    tasks.push(80);
                }
                std::fs::write(&p, trace_with_tasks(&tasks)).unwrap();
                p
            })
            .collect()
    };
    let base = write_set("base", false);
    let same = write_set("same", false);
    let worse = write_set("worse", true);
    // Identical sets: no regression, exit 0.
    // Options come before `--`: everything after it is a candidate trace.
    let out = taskchain()
        .args(["compare", "--fail-on-regression", "5"])
        .args(&base)
        .arg("--")
        .args(&same)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let csv = String::from_utf8(out.stdout).unwrap();
    let overall = csv.lines().nth(1).unwrap();
    assert!(
        overall.starts_with("overall,,,,5,5,102.000,102.000,0.0,no change,1.00,1.00,1.0000"),
        "{overall}"
    );
    // Every candidate has an 80 ms task more: 102 → 182 ms mean, U = 0, p = 2/252.
    let out = taskchain()
        .args(["compare", "--fail-on-regression", "5", "--markdown"])
        .arg(dir.path().join("c.md"))
        .args(&base)
        .arg("--")
        .args(&worse)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let csv = String::from_utf8(out.stdout).unwrap();
    let overall = csv.lines().nth(1).unwrap();
    assert!(
        overall.starts_with("overall,,,,5,5,102.000,182.000,78.4,regression,1.00,2.00,0.0079"),
        "{overall}"
    );
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("taskchain: regression: overall long-task time: 102.000 ms → 182.000 ms")
    );
    assert!(
        std::fs::read_to_string(dir.path().join("c.md"))
            .unwrap()
            .contains("| **overall** |")
    );
    // Without --fail-on-regression the change is reported but the exit code stays 0.
    taskchain()
        .arg("compare")
        .args(&base)
        .arg("--")
        .args(&worse)
        .assert()
        .success();
    // An option after `--` would be read as a trace: refused with a hint.
    taskchain()
        .arg("compare")
        .args(&base)
        .arg("--")
        .args(&worse)
        .args(["--fail-on-regression", "5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "options of compare go before `--`",
        ));
    // Outputs that name an input trace are refused and the trace is left as it was.
    let before = std::fs::read(&worse[0]).unwrap();
    for flag in ["-o", "--markdown"] {
        taskchain()
            .args(["compare", flag])
            .arg(&worse[0])
            .args(&base)
            .arg("--")
            .args(&worse)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("would overwrite an input"));
        assert_eq!(std::fs::read(&worse[0]).unwrap(), before);
    }
    // `--markdown -` is standard output (with the CSV in a file), not a file named `-`.
    let out = taskchain()
        .current_dir(dir.path())
        .args(["compare", "-o", "c.csv", "--markdown", "-"])
        .args(&base)
        .arg("--")
        .args(&worse)
        .output()
        .unwrap();
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .starts_with("## taskchain: candidate vs baseline")
    );
    assert!(!dir.path().join("-").exists());
    assert!(
        std::fs::read_to_string(dir.path().join("c.csv"))
            .unwrap()
            .starts_with("scope,chain,")
    );
}

#[test]
fn output_appears_only_when_complete() {
    // The report goes to a temporary file beside the target and is renamed at the end:
    // while the run is going, the target does not exist yet.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("r.csv");
    let fifo = dir.path().join("in.json");
    common::mkfifo(&fifo);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("taskchain"))
        .arg(&fifo)
        .args(["-q", "-o"])
        .arg(&target)
        .spawn()
        .unwrap();
    // taskchain now waits for the FIFO's writer: the output is open, nothing renamed.
    let temps = || temp_files(dir.path());
    wait_until("the report's temporary file exists", || temps() == 1);
    assert!(!target.exists());
    // Killed now: no report, no half report.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!target.exists());
}

/// How many of taskchain's temporary files (`.taskchain-…`) are in `dir`.
fn temp_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".taskchain-")
        })
        .count()
}

#[test]
fn interrupted_run_removes_its_temporary_files() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("r.csv");
    let fifo = dir.path().join("in.json");
    common::mkfifo(&fifo);
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("taskchain"))
        .arg(&fifo)
        .args(["-q", "-o"])
        .arg(&target)
        .arg("--summary")
        .arg(dir.path().join("s.csv"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let temps = || temp_files(dir.path());
    wait_until("both temporary files exist", || temps() == 2);
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "taskchain: interrupted: no output was put in place\n"
    );
    assert_eq!(temps(), 0);
    assert!(!target.exists());
}

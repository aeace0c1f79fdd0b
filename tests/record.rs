//! `taskchain record` against a real Chromium (`.ci/run` installs Debian's): pages served
//! by a small HTTP server on 127.0.0.1 inside the test, with a known slow click handler and
//! a timer-started long task; assertions on the saved trace (its events, its own
//! timestamps) and on the report, on the errors, and that no browser process, zombie or
//! profile folder is left behind. The recordings run one at a time (a lock), so that a
//! loaded 2-core machine runs one browser at once.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

use crate::common::taskchain;

/// One recording at a time.
static ONE_BROWSER: Mutex<()> = Mutex::new(());

/// The click handler: ~250 ms of script in `onGoClick > computeTotals > spin`. The clock
/// is read once per 100,000 sums: a loop that calls `performance.now()` each time spends
/// much of its time in the native call, sampled as `(program)`.
const APP_JS: &str = "function spin(ms) {
  const end = performance.now() + ms;
  let x = 0;
  do { for (let i = 0; i < 100000; i++) x += Math.sqrt(x + i); } while (performance.now() < end);
  return x;
}
function computeTotals() { return spin(250); }
function onGoClick() { document.getElementById('out').textContent = String(computeTotals()); }
document.getElementById('go').addEventListener('click', onGoClick);
";

const PAGE: &str = "<!doctype html><html><head><title>t</title></head><body>
<button id=\"go\" style=\"width:200px;height:60px\">Go</button>
<div id=\"out\"></div>
<script src=\"app.js\"></script>
</body></html>";

/// A long task of ~300 ms started by a timer 300 ms after the load.
const TIMER_PAGE: &str = "<!doctype html><html><head><title>timer</title></head><body>
<script>
function busyTimer(ms) { const end = performance.now() + ms; let x = 0; do { for (let i = 0; i < 100000; i++) x += Math.sqrt(x + i); } while (performance.now() < end); return x; }
setTimeout(function timerTask() { document.title = String(busyTimer(300)); }, 300);
</script></body></html>";

/// Serves `PAGE` (`/page.html`), `APP_JS` (`/app.js`) and `TIMER_PAGE` (`/timer.html`) on
/// 127.0.0.1 from a thread; returns the port.
fn serve() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut line = String::new();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                // The rest of the request's head.
                let mut h = String::new();
                while reader.read_line(&mut h).is_ok_and(|n| n > 2) {
                    h.clear();
                }
                let path = line.split_whitespace().nth(1).unwrap_or("/");
                let (status, kind, body) = match path {
                    "/page.html" => ("200 OK", "text/html", PAGE),
                    "/app.js" => ("200 OK", "text/javascript", APP_JS),
                    "/timer.html" => ("200 OK", "text/html", TIMER_PAGE),
                    _ => ("404 Not Found", "text/plain", "not found"),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    port
}

/// The browser the tests drive: `CHROME_PATH`, else Debian's.
fn browser() -> PathBuf {
    let p = std::env::var_os("CHROME_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        p.exists(),
        "{} is missing: `apt-get install -y chromium` (as .ci/run does), or set CHROME_PATH",
        p.display()
    );
    p
}

/// A folder for one test: the command's TMPDIR (its browser profile goes there) and its
/// outputs.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        Scratch { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `taskchain record ARGS` with TMPDIR in the scratch folder, run in it.
    fn record(&self, args: &[&str]) -> std::process::Output {
        taskchain()
            .arg("record")
            .args(args)
            .env("TMPDIR", self.path("tmp"))
            .env("CHROME_PATH", browser())
            .current_dir(self.dir.path())
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap()
    }

    /// No profile folder left in TMPDIR, no temporary trace in the scratch folder, no
    /// browser process running with this TMPDIR, no browser process (alive or zombie)
    /// handed to this test process.
    fn assert_nothing_left(&self) {
        let tmp: Vec<_> = std::fs::read_dir(self.path("tmp"))
            .unwrap()
            .flatten()
            .collect();
        assert!(
            tmp.is_empty(),
            "left in TMPDIR: {:?}",
            tmp.iter().map(|e| e.file_name()).collect::<Vec<_>>()
        );
        let temps: Vec<_> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".taskchain-"))
            .collect();
        assert!(temps.is_empty(), "temporary files left: {temps:?}");
        let mark = self.path("tmp").to_string_lossy().to_string();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let pid = e.file_name().to_string_lossy().to_string();
            if !pid.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            assert!(
                !String::from_utf8_lossy(&cmdline).contains(&mark),
                "a browser process is still running: {pid} {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            );
        }
    }
}

/// The events of a saved trace (gzip or plain JSON, array or `{"traceEvents"}`).
fn trace_events(path: &Path) -> Vec<Value> {
    let raw = std::fs::read(path).unwrap();
    let text = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut s = String::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_string(&mut s)
            .unwrap();
        s
    } else {
        String::from_utf8(raw).unwrap()
    };
    let v: Value = serde_json::from_str(&text).unwrap();
    match v {
        Value::Array(a) => a,
        Value::Object(mut o) => match o.remove("traceEvents") {
            Some(Value::Array(a)) => a,
            _ => panic!("no traceEvents"),
        },
        _ => panic!("not a trace"),
    }
}

/// Top-level tasks of the trace at least `min_us` long: (ts, dur) in µs, in the renderer
/// that loaded a URL ending with `page` (its last `CommitLoad` event), after that load.
fn long_tasks(events: &[Value], min_us: f64, page: &str) -> Vec<(f64, f64)> {
    let commit = events
        .iter()
        .rfind(|e| {
            e["name"] == "CommitLoad"
                && e["args"]["data"]["url"]
                    .as_str()
                    .is_some_and(|u| u.ends_with(page))
        })
        .unwrap_or_else(|| panic!("no CommitLoad of {page}"));
    let (pid, committed) = (commit["pid"].clone(), commit["ts"].as_f64().unwrap());
    events
        .iter()
        .filter(|e| e["pid"] == pid && e["ts"].as_f64().is_some_and(|ts| ts > committed))
        .filter(|e| e["name"] == "RunTask" || e["name"] == "ThreadControllerImpl::RunTask")
        .filter_map(|e| Some((e["ts"].as_f64()?, e["dur"].as_f64()?)))
        .filter(|&(_, d)| d >= min_us)
        .collect()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn flow_file(s: &Scratch, port: u16, click_selectors: &str, click_timeout: u64) -> PathBuf {
    let flow = format!(
        r##"{{"title": "click go", "steps": [
  {{"type": "setViewport", "width": 800, "height": 600, "deviceScaleFactor": 1, "isMobile": false, "hasTouch": false, "isLandscape": false}},
  {{"type": "navigate", "url": "http://127.0.0.1:{port}/page.html", "assertedEvents": [{{"type": "navigation", "url": "http://127.0.0.1:{port}/page.html", "title": "t"}}]}},
  {{"type": "hover", "selectors": [["aria/Go[role=\"button\"]"]]}},
  {{"type": "click", "target": "main", "selectors": {click_selectors}, "offsetX": 20, "offsetY": 10, "timeout": {click_timeout}}},
  {{"type": "waitForElement", "selectors": [["text/Go"]]}},
  {{"type": "waitForExpression", "expression": "document.getElementById('out').textContent.length > 0"}}
]}}"##
    );
    let p = s.path("flow.json");
    std::fs::write(&p, flow).unwrap();
    p
}

#[test]
fn a_flow_records_the_click_and_reports_its_chain() {
    let _one = ONE_BROWSER.lock().unwrap_or_else(|p| p.into_inner());
    let s = Scratch::new();
    let port = serve();
    // The first selector matches nothing: the second (CSS) wins.
    let flow = flow_file(&s, port, r##"[["#missing"], ["#go"]]"##, 5000);
    let url = format!("http://127.0.0.1:{port}/page.html");
    let out = s.record(&[
        &url,
        "--flow",
        flow.to_str().unwrap(),
        "--save-trace",
        "t.json.gz",
        "--format",
        "json",
        "-o",
        "r.json",
        "--interactions",
        "i.json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The click's interaction row, its processing in the handler.
    let inter: Value = serde_json::from_slice(&std::fs::read(s.path("i.json")).unwrap()).unwrap();
    let click = inter["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| {
            i["event_types"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t == "click"))
        })
        .unwrap_or_else(|| panic!("no click interaction: {inter}"));
    assert_eq!(click["type"], "pointer", "{click}");
    assert!(click["processing_ms"].as_f64().unwrap() >= 250.0, "{click}");
    assert_eq!(
        click["phases"]["processing"]["chain"][0]["function"], "onGoClick",
        "{click}"
    );
    let events = trace_events(&s.path("t.json.gz"));
    assert!(
        events.iter().any(|e| e["name"] == "ProfileChunk"),
        "no ProfileChunk events"
    );
    // The click is an interaction: an EventTiming event of a click with an interaction id.
    assert!(
        events.iter().any(|e| e["name"] == "EventTiming"
            && e["args"]["data"]["type"] == "click"
            && e["args"]["data"]["interactionId"].as_u64().unwrap_or(0) > 0),
        "no EventTiming interaction of the click"
    );
    // The handler's ~250 ms task.
    assert!(
        !long_tasks(&events, 250_000.0, "/page.html").is_empty(),
        "no long task of 200 ms or more"
    );
    // Source rundown: the page's script is named with its URL.
    assert!(events.iter().any(|e| {
        e["cat"] == "disabled-by-default-devtools.v8-source-rundown"
            && e["args"]["data"]["url"]
                .as_str()
                .is_some_and(|u| u.ends_with("/app.js"))
    }));
    let report: Value = serde_json::from_slice(&std::fs::read(s.path("r.json")).unwrap()).unwrap();
    let tasks = report["tasks"].as_array().unwrap();
    let click = tasks
        .iter()
        .find(|t| t["trigger"] == "event:click")
        .unwrap_or_else(|| panic!("no click task in the report: {report}"));
    assert!(click["task_dur_ms"].as_f64().unwrap() >= 250.0, "{click}");
    let functions: Vec<&str> = click["chain"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["function"].as_str())
        .collect();
    assert_eq!(
        functions[..3],
        ["onGoClick", "computeTotals", "spin"],
        "{click}"
    );
    assert!(
        click["chain"][0]["url"]
            .as_str()
            .unwrap()
            .ends_with("/app.js")
    );
    s.assert_nothing_left();
}

#[test]
fn until_long_task_ends_the_trace_soon_after_the_task() {
    let _one = ONE_BROWSER.lock().unwrap_or_else(|p| p.into_inner());
    let s = Scratch::new();
    let port = serve();
    let url = format!("http://127.0.0.1:{port}/timer.html");
    // Without the stop, the recording would run 20 s. The observer stops at the page's
    // first task over 200 ms: the timer's 300 ms task, or on a loaded machine a slow
    // task of the load before it.
    let out = s.record(&[
        &url,
        "--until",
        "long-task",
        "--threshold-ms",
        "200",
        "--duration",
        "20",
        "--save-trace",
        "u.json.gz",
        "-o",
        "r.csv",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("(--until long-task)"),
        "{}",
        stderr(&out)
    );
    let events = trace_events(&s.path("u.json.gz"));
    let task_end = long_tasks(&events, 200_000.0, "/timer.html")
        .iter()
        .map(|(ts, dur)| ts + dur)
        .fold(f64::INFINITY, f64::min);
    assert!(task_end.is_finite(), "no task over 200 ms in the trace");
    let last = events
        .iter()
        .filter(|e| e["ph"] != "M")
        .filter_map(|e| Some(e["ts"].as_f64()? + e["dur"].as_f64().unwrap_or(0.0)))
        .fold(0.0, f64::max);
    assert!(last >= task_end, "the trace ends before the task's end");
    assert!(
        last - task_end <= 1_000_000.0,
        "the trace runs {:.0} ms past the long task's end",
        (last - task_end) / 1000.0
    );
    s.assert_nothing_left();
}

#[test]
fn runs_are_saved_numbered_and_reported_as_one_batch() {
    let _one = ONE_BROWSER.lock().unwrap_or_else(|p| p.into_inner());
    let s = Scratch::new();
    let port = serve();
    let url = format!("http://127.0.0.1:{port}/timer.html");
    let out = s.record(&[
        &url,
        "--runs",
        "2",
        "--duration",
        "1.5",
        "--cpu-throttle",
        "2",
        "--save-trace",
        "b.json.gz",
        "--summary",
        "s.csv",
        "-o",
        "r.csv",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary = std::fs::read_to_string(s.path("s.csv")).unwrap();
    let files: Vec<&str> = summary
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(files, ["b-1.json.gz", "b-2.json.gz"], "{summary}");
    assert!(!s.path("b.json.gz").exists());
    s.assert_nothing_left();
}

#[test]
fn a_failing_step_names_its_index_and_type_and_leaves_nothing() {
    let _one = ONE_BROWSER.lock().unwrap_or_else(|p| p.into_inner());
    let s = Scratch::new();
    let port = serve();
    let flow = flow_file(&s, port, r##"[["#missing"]]"##, 500);
    let out = s.record(&[
        "--flow",
        flow.to_str().unwrap(),
        "--save-trace",
        "t.json.gz",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("taskchain: error: ")
            && err.contains("flow step 4 (click): no element matches #missing within 500 ms"),
        "{err}"
    );
    assert!(
        !s.path("t.json.gz").exists(),
        "a partial trace at the target"
    );
    s.assert_nothing_left();
}

#[test]
fn an_unreachable_url_is_an_error() {
    let _one = ONE_BROWSER.lock().unwrap_or_else(|p| p.into_inner());
    let s = Scratch::new();
    // Port 9 (discard) on the loopback: nothing listens there.
    let out = s.record(&["http://127.0.0.1:9/", "--save-trace", "t.json.gz"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("taskchain: error: ") && err.contains("net::ERR_"),
        "{err}"
    );
    assert!(!s.path("t.json.gz").exists());
    s.assert_nothing_left();
}

#[test]
fn a_browser_that_never_answers_times_out_and_is_stopped() {
    let _one = ONE_BROWSER.lock().unwrap_or_else(|p| p.into_inner());
    let s = Scratch::new();
    // A "browser" that hangs without opening DevTools; its profile folder is in TMPDIR.
    let fake = s.path("hang.sh");
    std::fs::write(&fake, "#!/bin/sh\nsleep 60\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let started = std::time::Instant::now();
    let out = s.record(&[
        "http://127.0.0.1:9/",
        "--browser",
        fake.to_str().unwrap(),
        "--timeout",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("did not open its DevTools endpoint within 1 s"),
        "{}",
        stderr(&out)
    );
    assert!(started.elapsed().as_secs() < 30);
    // The `sleep` was killed with its process group: no process runs from the scratch folder.
    s.assert_nothing_left();
    let mark = fake.to_string_lossy().to_string();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&cmdline).contains(&mark),
            "the fake browser still runs"
        );
    }
}

#[test]
fn an_interrupted_recording_exits_130_and_leaves_nothing() {
    let _one = ONE_BROWSER.lock().unwrap_or_else(|p| p.into_inner());
    let s = Scratch::new();
    let port = serve();
    let url = format!("http://127.0.0.1:{port}/page.html");
    for signal in ["-INT", "-TERM"] {
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("taskchain"))
            .args([
                "record",
                &url,
                "--duration",
                "60",
                "--save-trace",
                "t.json.gz",
            ])
            .env("TMPDIR", s.path("tmp"))
            .env("CHROME_PATH", browser())
            .current_dir(s.path(""))
            .stderr(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Long enough for the browser to start and the recording to begin.
        std::thread::sleep(std::time::Duration::from_secs(4));
        let killed = std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        // Said once, as an interruption: not also as a failed recording (the browser the
        // handler stopped closed the connection), and the code is 130, not 2.
        assert_eq!(out.status.code(), Some(130), "{signal}: {err}");
        assert!(
            err.contains("taskchain: interrupted: no output was put in place"),
            "{err}"
        );
        assert!(!err.contains("error:"), "{signal}: {err}");
        assert!(!s.path("t.json.gz").exists());
        s.assert_nothing_left();
    }
}

#[test]
fn usage_errors_come_before_any_browser() {
    let s = Scratch::new();
    let bad = s.path("bad.json");
    std::fs::write(
        &bad,
        r#"{"title": "x", "steps": [{"type": "navigate", "url": "http://127.0.0.1:9/"}, {"type": "teleport"}]}"#,
    )
    .unwrap();
    let out = s.record(&["--flow", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with("taskchain: error: --flow ")
            && err.contains("step 2 (teleport): unknown step type"),
        "{err}"
    );
    let out = s.record(&["http://127.0.0.1:9/", "--browser", "/nonexistent/chrome"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("taskchain: error: --browser /nonexistent/chrome: no such program"),
        "{}",
        stderr(&out)
    );
    let out = taskchain()
        .args(["record", "http://127.0.0.1:9/"])
        .env("CHROME_PATH", "/nonexistent/chrome")
        .env("TMPDIR", s.path("tmp"))
        .current_dir(s.dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("CHROME_PATH=/nonexistent/chrome"),
        "{}",
        stderr(&out)
    );
    let out = s.record(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("give the URL"), "{}", stderr(&out));
    s.assert_nothing_left();
}

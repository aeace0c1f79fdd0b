//! `taskchain record`: from a URL (and a user flow) to a saved trace, then to the usual
//! report. Chromium is started (or attached to with `--connect`), a page gets the flow's
//! steps through the browser's real input pipeline while a trace is recorded with the
//! DevTools Performance panel's categories plus the V8 CPU profiler's, and the trace is
//! streamed from the browser to disk (`Tracing.start` with `ReturnAsStream`, read with
//! `IO.read`) into a temporary file renamed when complete. With `--until long-task` or
//! `slow-interaction` a `PerformanceObserver` in the page reports the first such task
//! through a binding, and tracing ends right after it. The saved files are then analysed
//! by [`crate::batch::run`] like any trace named on the command line.

mod browser;
mod cdp;
mod flow;
mod page;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use serde_json::json;

use crate::batch::{Config, RunOutcome};
use crate::output::{OutFile, check_outputs};
pub(crate) use browser::Launch;
use browser::{Browser, Search};
use cdp::{Cdp, CdpError, UNTIL_BINDING};
pub(crate) use flow::Flow;
use flow::Step;
use page::{Page, StepError};

/// The trace categories: those the DevTools Performance panel records by default
/// (`TimelineController` in devtools-frontend, screenshots left to `--screenshots`), and
/// the V8 CPU profiler's samples the chains are made of. The source rundown categories give
/// every script's URL and source for source maps.
pub(crate) const CATEGORIES: &[&str] = &[
    "-*",
    "blink.console",
    "loading",
    "blink.user_timing",
    "devtools.timeline",
    "disabled-by-default-devtools.target-rundown",
    "disabled-by-default-devtools.timeline.frame",
    "disabled-by-default-devtools.timeline.stack",
    "disabled-by-default-devtools.timeline",
    "disabled-by-default-devtools.v8-source-rundown-sources",
    "disabled-by-default-devtools.v8-source-rundown",
    "disabled-by-default-layout_shift.debug",
    "disabled-by-default-v8.inspector",
    "disabled-by-default-v8.cpu_profiler.hires",
    "disabled-by-default-lighthouse",
    "v8.execute",
    "v8",
    "cppgc",
    "navigation",
    "rail",
    "disabled-by-default-v8.cpu_profiler",
];

/// The film strip's category (`--screenshots`).
const SCREENSHOTS: &str = "disabled-by-default-devtools.screenshot";

/// After the last step, how long the page runs on before tracing ends: the interaction's
/// next paint and the timers it started.
const SETTLE: Duration = Duration::from_secs(1);

/// After the observed task ended, how long the profiler and the frame get before tracing
/// ends (the saved trace ends within about a second of the task's end).
const FLUSH: Duration = Duration::from_millis(250);

/// `IO.read` chunk size asked for.
const READ_CHUNK: u64 = 1 << 20;

/// When recording stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Until {
    /// After the first long task (`longtask` or `long-animation-frame` entry over the
    /// threshold) has ended.
    LongTask,
    /// After the first interaction (an `event` entry with an interaction id) of at least
    /// 200 ms has ended.
    SlowInteraction,
    /// After the flow's last step (without a flow: after `--duration`).
    FlowEnd,
}

/// The slowest interaction INP calls good is under 200 ms: `--until slow-interaction`
/// stops at the first at or over it.
const SLOW_INTERACTION_MS: f64 = 200.0;

/// Where the browser comes from.
#[derive(Clone, Debug)]
pub(crate) enum BrowserChoice {
    /// Start one per run.
    Launch(Launch),
    /// Attach to a running one: its `http://` or `ws://` DevTools endpoint.
    Connect(String),
}

/// `taskchain record`, resolved.
#[derive(Clone, Debug)]
pub struct RecordConfig {
    /// The page to load first (`None` with a flow that navigates itself).
    pub(crate) url: Option<String>,
    pub(crate) flow: Option<Flow>,
    pub(crate) until: Until,
    /// Without a flow, how long to record from the navigation's start.
    pub(crate) duration: Duration,
    /// `--threshold-ms`, for the observer.
    pub(crate) threshold_ms: f64,
    /// `--browser`, as given (searched when the recording starts).
    pub(crate) browser_path: Option<PathBuf>,
    pub(crate) browser: BrowserChoice,
    /// Where each run's trace goes (one per run).
    pub(crate) save: Vec<PathBuf>,
    pub(crate) cpu_throttle: Option<f64>,
    pub(crate) mobile: bool,
    pub(crate) screenshots: bool,
    /// Deadline for the browser to start, a protocol command, a page load.
    pub(crate) timeout: Duration,
    pub(crate) create_dirs: bool,
    pub(crate) quiet: bool,
}

/// `taskchain record` as a job: the recording, then the report of the saved traces.
#[derive(Clone, Debug)]
pub struct RecordJob {
    /// What to record.
    pub record: RecordConfig,
    /// The report, its `paths` filled with the saved traces.
    pub report: Config,
}

/// Records every run, then runs the report on the saved traces (in run order).
pub fn run(job: &RecordJob) -> anyhow::Result<RunOutcome> {
    let saved = record(&job.record, &job.report)?;
    let mut report = job.report.clone();
    report.paths = saved;
    crate::batch::run(&report)
}

/// Records the runs of `cfg`; returns the saved traces. Errors (exit 2): no browser, a
/// browser that exits or hangs, an unreachable URL, a crashed page, a failing step; the
/// browser is stopped and its profile removed, and no partial trace is left at the target.
pub(crate) fn record(cfg: &RecordConfig, report: &Config) -> anyhow::Result<Vec<PathBuf>> {
    // The saved traces must not be the report's outputs, nor each other.
    let mut outs: Vec<(&str, Option<&Path>)> = cfg
        .save
        .iter()
        .map(|p| ("--save-trace", Some(p.as_path())))
        .collect();
    outs.extend(report.output_paths());
    check_outputs(&outs, &[], &[])?;
    let launch = match &cfg.browser {
        BrowserChoice::Launch(l) => {
            let program = Search::of_env(cfg.browser_path.as_deref())
                .find()
                .map_err(|e| anyhow!(e))?;
            Some(Launch {
                program,
                ..l.clone()
            })
        }
        BrowserChoice::Connect(_) => None,
    };
    let runs = cfg.save.len();
    for (i, path) in cfg.save.iter().enumerate() {
        let started = Instant::now();
        let what = if runs > 1 {
            format!("run {} of {runs}", i + 1)
        } else {
            "the recording".to_string()
        };
        let size = one_run(cfg, launch.as_ref(), path).with_context(|| format!("{what} failed"))?;
        if !cfg.quiet {
            say!(
                "taskchain: recorded {} ({:.1} MB in {:.1} s)",
                path.display(),
                size as f64 / 1e6,
                started.elapsed().as_secs_f64()
            );
        }
    }
    Ok(cfg.save.clone())
}

/// With `TASKCHAIN_TIMINGS` set (as for the analysis stages), says on stderr when each
/// step of a recording was done, from the run's start.
fn timing(start: Instant, what: &str) {
    if std::env::var_os("TASKCHAIN_TIMINGS").is_some() {
        say!(
            "taskchain: timing: record: {what} done at {:.3} s",
            start.elapsed().as_secs_f64()
        );
    }
}

/// One run: a fresh browser (or a new tab of the attached one), the recording, the trace
/// saved at `path`; returns its size in bytes.
fn one_run(cfg: &RecordConfig, launch: Option<&Launch>, path: &Path) -> anyhow::Result<u64> {
    let start = Instant::now();
    let mut out = OutFile::open(Some(path), cfg.create_dirs)?;
    let mut browser = match launch {
        Some(l) => Some(Browser::launch(l).map_err(|e| anyhow!(e))?),
        None => None,
    };
    timing(start, "browser start");
    let ws_url = match (&browser, &cfg.browser) {
        (Some(b), _) => b.ws_url.clone(),
        (None, BrowserChoice::Connect(url)) if url.starts_with("ws://") => url.clone(),
        (None, BrowserChoice::Connect(url)) => {
            cdp::browser_ws_url(url, cfg.timeout).map_err(|e| anyhow!(e))?
        }
        (None, BrowserChoice::Launch(_)) => unreachable!("launched above"),
    };
    let mut cdp = Cdp::connect(&ws_url, cfg.timeout).map_err(|e| anyhow!(e))?;
    let result = session(cfg, &mut cdp, &mut out, start);
    let result = result.map_err(|e| match (e, browser.as_mut().and_then(Browser::exited)) {
        // The socket closed or timed out because the browser died: say so.
        (Failure::Cdp(CdpError::Closed(_) | CdpError::Timeout(_)), Some(status)) => {
            anyhow!("the browser exited ({status})")
        }
        (e, _) => anyhow!(e.to_string()),
    });
    cdp.close();
    // The trace is saved and the profile is thrown away: the browser is killed rather than
    // closed (a close took seconds on a loaded machine).
    if let Some(b) = &mut browser {
        b.stop(Duration::ZERO);
    }
    timing(start, "browser stop");
    let size = result?;
    out.commit()?;
    Ok(size)
}

/// Why a session failed.
enum Failure {
    Cdp(CdpError),
    /// A flow step (1-based index and type) or the page load.
    Step(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Cdp(e) => e.fmt(f),
            Failure::Step(s) => f.write_str(s),
        }
    }
}

impl From<CdpError> for Failure {
    fn from(e: CdpError) -> Failure {
        Failure::Cdp(e)
    }
}

/// The page observer for `--until`: reports the first matching entry through the binding.
fn observer_script(until: Until, threshold_ms: f64) -> String {
    let (types, min) = match until {
        Until::SlowInteraction => ("['event']", SLOW_INTERACTION_MS),
        _ => ("['longtask', 'long-animation-frame']", threshold_ms),
    };
    format!(
        r#"(() => {{
  const send = globalThis.{UNTIL_BINDING};
  if (typeof send !== 'function') return;
  let sent = false;
  for (const type of {types}) {{
    try {{
      new PerformanceObserver((list) => {{
        for (const e of list.getEntries()) {{
          if (sent || e.duration < {min} || (type === 'event' && !e.interactionId)) continue;
          sent = true;
          send(JSON.stringify({{type: e.entryType, name: e.name, start: e.startTime, duration: e.duration}}));
        }}
      }}).observe(type === 'event' ? {{type, buffered: true, durationThreshold: 16}} : {{type, buffered: true}});
    }} catch (_) {{}}
  }}
}})();"#
    )
}

/// Lighthouse's mobile defaults (its `constants.js`): a Moto G Power screen, 4× CPU
/// slowdown, and the "slow 4G" network its DevTools throttling applies (562.5 ms request
/// latency, 1,474.56 kbit/s down, 675 kbit/s up).
const MOBILE_SCREEN: (u32, u32, f64) = (412, 823, 1.75);
const MOBILE_CPU: f64 = 4.0;
const MOBILE_LATENCY_MS: f64 = 562.5;
const MOBILE_DOWN_KBPS: f64 = 1474.56;
const MOBILE_UP_KBPS: f64 = 675.0;

/// The recording on a connected browser: a new page, tracing, the flow, the trace saved
/// into `out`; returns its size.
fn session(
    cfg: &RecordConfig,
    cdp: &mut Cdp,
    out: &mut OutFile,
    start: Instant,
) -> Result<u64, Failure> {
    let t = cfg.timeout;
    // A browser we started has its first tab open (about:blank): record in it rather than
    // start another renderer. An attached browser gets a tab of its own, closed at the end.
    let own_tab = match &cfg.browser {
        BrowserChoice::Launch(_) => {
            cdp.call(None, "Target.getTargets", json!({}), t)?["targetInfos"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|i| i["type"] == "page")
                .and_then(|i| i["targetId"].as_str().map(str::to_string))
        }
        BrowserChoice::Connect(_) => None,
    };
    let (target_id, close_target) = match own_tab {
        Some(id) => (id, false),
        None => {
            let r = cdp.call(
                None,
                "Target.createTarget",
                json!({"url": "about:blank"}),
                t,
            )?;
            (r["targetId"].as_str().unwrap_or_default().to_string(), true)
        }
    };
    let attached = cdp.call(
        None,
        "Target.attachToTarget",
        json!({"targetId": target_id, "flatten": true}),
        t,
    )?;
    let session = attached["sessionId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut page = Page {
        cdp,
        session,
        timeout: t,
    };
    page.call("Page.enable", json!({}))?;
    page.call("Inspector.enable", json!({}))?;
    page.call("Runtime.enable", json!({}))?;
    if cfg.until != Until::FlowEnd {
        page.call("Runtime.addBinding", json!({ "name": UNTIL_BINDING }))?;
        page.call(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": observer_script(cfg.until, cfg.threshold_ms)}),
        )?;
    }
    if cfg.mobile {
        let (w, h, dpr) = MOBILE_SCREEN;
        page.set_viewport(w, h, dpr, true, true)?;
        page.call("Network.enable", json!({}))?;
        page.call(
            "Network.emulateNetworkConditions",
            json!({"offline": false, "latency": MOBILE_LATENCY_MS,
                   "downloadThroughput": MOBILE_DOWN_KBPS * 1024.0 / 8.0,
                   "uploadThroughput": MOBILE_UP_KBPS * 1024.0 / 8.0}),
        )?;
    }
    if let Some(rate) = cfg.cpu_throttle.or(cfg.mobile.then_some(MOBILE_CPU)) {
        page.call("Emulation.setCPUThrottlingRate", json!({ "rate": rate }))?;
    }
    let mut categories: Vec<&str> = CATEGORIES.to_vec();
    if cfg.screenshots {
        categories.push(SCREENSHOTS);
    }
    let gzip = path_is_gzip(out);
    // Started on the page's session (as DevTools and Puppeteer do), so that the trace's
    // `TracingStartedInBrowser` names this page's frames and `--scope main-frame` finds its
    // renderer among the browser's others (a headless browser has a WebUI renderer too).
    page.call(
        "Tracing.start",
        json!({
            "traceConfig": {
                "recordMode": "recordAsMuchAsPossible",
                "includedCategories": categories,
                "excludedCategories": ["*"],
            },
            "transferMode": "ReturnAsStream",
            "streamFormat": "json",
            "streamCompression": if gzip { "gzip" } else { "none" },
        }),
    )?;
    timing(start, "page set-up and Tracing.start");
    // On a failure the trace is dropped: the browser is stopped with it.
    let stopped = drive(cfg, &mut page)?;
    timing(start, "page load and flow");
    if let Some(note) = stopped
        && !cfg.quiet
    {
        say!("taskchain: note: {note}");
    }
    let size = end_tracing(page.cdp, &page.session, out, t)?;
    timing(start, "Tracing.end and the trace saved");
    if close_target {
        let _ = page.cdp.call(
            None,
            "Target.closeTarget",
            json!({"targetId": target_id}),
            t,
        );
    }
    Ok(size)
}

/// Whether the trace is saved gzip-compressed: by its name (`.gz`).
fn path_is_gzip(out: &OutFile) -> bool {
    out.name().ends_with(".gz")
}

/// Loads the URL, runs the flow and waits as `--until` says; returns a note when the
/// recording stopped at an observed task.
fn drive(cfg: &RecordConfig, page: &mut Page<'_>) -> Result<Option<String>, Failure> {
    let step_failed = |index: usize, kind: &str, e: StepError| match e {
        StepError::Step(s) => Failure::Step(format!("flow step {index} ({kind}): {s}")),
        StepError::Cdp(CdpError::Crashed) => Failure::Step(format!(
            "flow step {index} ({kind}): the page crashed (its renderer process is gone)"
        )),
        StepError::Cdp(e) => Failure::Step(format!("flow step {index} ({kind}): {e}")),
    };
    let load = |page: &mut Page<'_>, url: &str| -> Result<(), Failure> {
        page.navigate(url, cfg.timeout).map_err(|e| match e {
            StepError::Step(s) => Failure::Step(s),
            StepError::Cdp(CdpError::Crashed) => {
                Failure::Step(format!("{url}: the page crashed as it loaded"))
            }
            StepError::Cdp(e) => Failure::Cdp(e),
        })
    };
    let started = Instant::now();
    let observed = |page: &Page<'_>| page.cdp.until.clone().map(|p| stopped_note(&p, cfg.until));
    let steps = cfg.flow.as_ref().map_or(&[][..], |f| &f.steps[..]);
    // The flow's leading viewport steps apply before the URL loads.
    let lead = steps
        .iter()
        .take_while(|s| matches!(s.step, Step::SetViewport { .. }))
        .count();
    for s in &steps[..lead] {
        page.run_step(s)
            .map_err(|e| step_failed(s.index, &s.kind, e))?;
    }
    if let Some(url) = &cfg.url {
        load(page, url)?;
    }
    for s in &steps[lead..] {
        if let Some(note) = observed(page) {
            return Ok(Some(format!(
                "{note}; flow steps from {} on not run",
                s.index
            )));
        }
        page.run_step(s)
            .map_err(|e| step_failed(s.index, &s.kind, e))?;
    }
    // After the flow (or the load): the settle time, or --duration from the start
    // without a flow; with --until, up to that long for the observed task.
    let end = if cfg.flow.is_some() {
        Instant::now() + SETTLE
    } else {
        started + cfg.duration
    };
    while Instant::now() < end {
        if let Some(note) = observed(page) {
            page.pause(FLUSH)?;
            return Ok(Some(note));
        }
        page.pause(Duration::from_millis(50).min(end.saturating_duration_since(Instant::now())))?;
    }
    if let Some(note) = observed(page) {
        page.pause(FLUSH)?;
        return Ok(Some(note));
    }
    if cfg.until != Until::FlowEnd {
        return Ok(Some(format!(
            "no {} seen: the recording ran to its end",
            match cfg.until {
                Until::SlowInteraction => "slow interaction",
                _ => "long task",
            }
        )));
    }
    Ok(None)
}

/// The note for the observer's payload.
fn stopped_note(payload: &str, until: Until) -> String {
    let v: serde_json::Value = serde_json::from_str(payload).unwrap_or_default();
    let ms = v["duration"].as_f64().unwrap_or(0.0);
    let what = match v["type"].as_str() {
        Some("event") => format!(
            "an interaction ({}) of {ms:.0} ms",
            v["name"].as_str().unwrap_or("?")
        ),
        Some("long-animation-frame") => format!("a long animation frame of {ms:.0} ms"),
        _ => format!("a long task of {ms:.0} ms"),
    };
    let flag = if until == Until::SlowInteraction {
        "slow-interaction"
    } else {
        "long-task"
    };
    format!("recording stopped after {what} ended (--until {flag})")
}

/// Ends tracing and streams the trace into `out`; returns its size. A trace the browser's
/// buffer could not hold whole is kept, with a warning.
fn end_tracing(
    cdp: &mut Cdp,
    session: &str,
    out: &mut OutFile,
    t: Duration,
) -> Result<u64, Failure> {
    let s = Some(session);
    cdp.call(s, "Tracing.end", json!({}), t)?;
    let done = cdp.wait_for(t, "Tracing.tracingComplete", |e| {
        e.method == "Tracing.tracingComplete" && e.session.as_deref() == s
    })?;
    if done.params["dataLossOccurred"] == json!(true) {
        say!("taskchain: warning: the browser's trace buffer overflowed: some events are missing");
    }
    let handle = done.params["stream"]
        .as_str()
        .ok_or_else(|| Failure::Step("the browser returned no trace stream".into()))?
        .to_string();
    let name = out.name();
    let mut w = out.writer();
    let mut size = 0u64;
    loop {
        let r = cdp.call(
            s,
            "IO.read",
            json!({"handle": handle, "size": READ_CHUNK}),
            t,
        )?;
        let data = r["data"].as_str().unwrap_or_default();
        let bytes = if r["base64Encoded"] == json!(true) {
            data_encoding::BASE64
                .decode(data.as_bytes())
                .map_err(|e| Failure::Step(format!("the browser sent bad base64 ({e})")))?
        } else {
            data.as_bytes().to_vec()
        };
        w.write_all(&bytes)
            .map_err(|e| Failure::Step(format!("cannot write {name}: {e}")))?;
        size += bytes.len() as u64;
        if r["eof"] == json!(true) {
            break;
        }
    }
    w.flush()
        .map_err(|e| Failure::Step(format!("cannot write {name}: {e}")))?;
    let _ = cdp.call(s, "IO.close", json!({ "handle": handle }), t);
    Ok(size)
}

/// `trace-<host>-<UTC time>.json.gz` for `url` at `now`, in the current folder.
pub(crate) fn default_save_name(url: Option<&str>, now: std::time::SystemTime) -> PathBuf {
    let host = url
        .and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| {
            u.host_str()
                .map(str::to_string)
                .or(Some(u.scheme().to_string()))
        })
        .unwrap_or_else(|| "flow".into());
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let secs = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    PathBuf::from(format!("trace-{host}-{}.json.gz", utc_stamp(secs)))
}

/// `YYYYMMDDTHHMMSSZ` for seconds since 1970 (the civil-from-days conversion of the
/// proleptic Gregorian calendar).
fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The saved path of run `i` (1-based) of `n`: `NAME-i.json.gz` beside `NAME.json.gz`
/// when there are several runs.
pub(crate) fn run_path(base: &Path, i: usize, n: usize) -> PathBuf {
    if n <= 1 {
        return base.to_path_buf();
    }
    let name = base
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let (stem, ext) = [".json.gz", ".json"]
        .iter()
        .find_map(|e| name.strip_suffix(e).map(|s| (s.to_string(), *e)))
        .unwrap_or((name.clone(), ""));
    base.with_file_name(format!("{stem}-{i}{ext}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamps() {
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        // 2024-02-29 12:34:56 UTC (a leap day), checked with `date -u -d @1709210096`.
        assert_eq!(utc_stamp(1_709_210_096), "20240229T123456Z");
    }

    #[test]
    fn save_names() {
        let t = std::time::UNIX_EPOCH + Duration::from_secs(1_709_210_096);
        assert_eq!(
            default_save_name(Some("http://127.0.0.1:8080/p.html"), t),
            PathBuf::from("trace-127.0.0.1-20240229T123456Z.json.gz")
        );
        assert_eq!(
            run_path(Path::new("out/t.json.gz"), 2, 3),
            PathBuf::from("out/t-2.json.gz")
        );
        assert_eq!(
            run_path(Path::new("t.json.gz"), 1, 1),
            PathBuf::from("t.json.gz")
        );
        assert_eq!(run_path(Path::new("t"), 1, 2), PathBuf::from("t-1"));
    }

    #[test]
    fn categories_have_the_profiler_and_the_rundown() {
        for c in [
            "disabled-by-default-v8.cpu_profiler",
            "disabled-by-default-devtools.v8-source-rundown",
            "disabled-by-default-devtools.v8-source-rundown-sources",
            "devtools.timeline",
        ] {
            assert!(CATEGORIES.contains(&c), "{c}");
        }
    }
}

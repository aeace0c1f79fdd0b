//! `--html` and `--speedscope`: the page of every sample, of the compare fixtures and of a
//! page made to hold hostile names, checked as text (sections, a card or a row per task of
//! its JSON data, a flame chart per card with samples, nothing executable from the trace's
//! strings) and, when Chromium is installed (`.ci/run` installs it; `TASKCHAIN_CHROMIUM=1`
//! makes its absence a failure), opened in headless Chromium offline: no console message,
//! no request, and a screenshot per section under `target/html-report/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{sample_cases, taskchain, trace_path};

/// Where the pages and screenshots go (kept as the test's artifacts).
fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/html-report");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The page's data element, parsed.
fn data(html: &str) -> serde_json::Value {
    let open = "<script type=\"application/json\" id=\"taskchain-data\">";
    let start = html.find(open).expect("a data element") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).expect("the data is JSON")
}

/// Checks a page as text: its sections, one card or row per task of the data, a flame
/// chart in each card whose task has samples, and no markup but the page's own.
fn check_page(html: &str, sections: &[&str]) -> serde_json::Value {
    for s in sections {
        assert!(html.contains(&format!("<h2>{s}</h2>")), "no section {s:?}");
    }
    let d = data(html);
    let tasks = d["tasks"].as_array().unwrap();
    let cards: Vec<&str> = html.split("<article class=\"card\"").skip(1).collect();
    let rows = html.matches("class=\"task-row\"").count();
    assert_eq!(
        cards.len() + rows,
        tasks.len(),
        "cards and rows against the data"
    );
    assert_eq!(
        d["summary"]["cards"].as_u64().unwrap() as usize,
        cards.len()
    );
    for (card, task) in cards.iter().zip(tasks) {
        let card = &card[..card.find("</article>").unwrap()];
        if task["window_samples"].as_u64().unwrap() > 0 {
            assert!(
                card.contains("<svg class=\"flame\""),
                "a card without its chart"
            );
        } else {
            assert!(card.contains("No flame chart"));
        }
    }
    // Only the page's own elements: no script but the data, no external anything.
    assert_eq!(html.matches("<script").count(), 1);
    for bad in ["src=\"http", "href=\"http", "@import", "url("] {
        assert!(!html.contains(bad), "{bad}");
    }
    d
}

/// `taskchain ARGS` → the page written to `name` under [`out_dir`].
fn page(name: &str, args: &[&str]) -> (PathBuf, String) {
    let path = out_dir().join(name);
    let out = taskchain()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .arg("--html")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 2)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&path).unwrap();
    (path, html)
}

#[test]
fn every_sample_has_a_page_with_its_tasks() {
    let mut all = Vec::new();
    for case in sample_cases() {
        let trace = trace_path(&case);
        all.push(trace.display().to_string());
        let mut args = vec!["-q".to_string(), "-o".into(), "/dev/null".into()];
        args.extend(crate::common::case_args(&case));
        args.push(trace.display().to_string());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (_, html) = page(&format!("{case}.html"), &args);
        let d = check_page(
            &html,
            &[
                "Verdict",
                "Who owns the time",
                "Top chains",
                "Long tasks",
                "Traces",
            ],
        );
        assert_eq!(d["summary"]["traces"], 1, "{case}");
    }
    // Every sample in one page, the one the screenshots show.
    let mut args = vec!["-q", "-o", "/dev/null"];
    args.extend(all.iter().map(String::as_str));
    let (path, html) = page("samples.html", &args);
    let d = check_page(
        &html,
        &[
            "Verdict",
            "Who owns the time",
            "Top chains",
            "Long tasks",
            "Traces",
        ],
    );
    // The verdict is the first text of the body.
    let body = &html[html.find("<body>").unwrap()..];
    let first_p = &body[body.find("<p class=\"verdict\">").unwrap()..];
    assert!(first_p.starts_with(&format!(
        "<p class=\"verdict\">{} traces, ",
        d["summary"]["traces"]
    )));
    browse(&path, &["verdict", "owners", "chains", "tasks", "traces"]);
}

#[test]
fn compare_pages_lead_with_the_changes() {
    let path = out_dir().join("compare.html");
    let out = taskchain()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["compare", "-q", "-o", "/dev/null", "--html"])
        .arg(&path)
        .args([
            "samples/compare-builds/base",
            "--",
            "samples/compare-builds/slower",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&path).unwrap();
    check_page(
        &html,
        &[
            "Verdict",
            "Regressions",
            "Improvements",
            "New chains",
            "Gone chains",
            "Long tasks",
        ],
    );
    // The changes come before the candidate set's sections.
    assert!(html.find("<h2>Regressions</h2>") < html.find("<h2>Long tasks</h2>"));
    assert!(!data(&html)["compare"].as_array().unwrap().is_empty());
    browse(&path, &["regressions", "tasks"]);
}

/// A trace whose function name and script URL hold markup, a line separator and quotes.
pub(crate) fn hostile_trace(dir: &Path) -> PathBuf {
    let name = "</script><img src=x onerror=\\\"document.title='pwned'\\\">\u{2028}'q'";
    let url = "https://x.example/</script><script>alert(1)</script>.js?\\\"a\\\"";
    let mut events = vec![
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"ts":0,"args":{"name":"CrRendererMain"}}"#.to_string(),
        r#"{"ph":"M","name":"process_name","pid":1,"tid":0,"ts":0,"args":{"name":"Renderer"}}"#.to_string(),
        r#"{"ph":"X","cat":"disabled-by-default-devtools.timeline","name":"RunTask","pid":1,"tid":1,"ts":1000,"dur":80000}"#.to_string(),
        r#"{"ph":"P","name":"Profile","id":"0x1","pid":1,"tid":1,"ts":900,"args":{"data":{"startTime":900}}}"#.to_string(),
    ];
    let nodes = format!(
        r#"[{{"id":1,"callFrame":{{"functionName":"(root)","url":"","scriptId":0,"lineNumber":-1,"columnNumber":-1}}}},{{"id":2,"parent":1,"callFrame":{{"functionName":"{name}","url":"{url}","scriptId":5,"lineNumber":3,"columnNumber":4}}}}]"#
    );
    let samples: Vec<String> = (0..80).map(|_| "2".into()).collect();
    let deltas: Vec<String> = std::iter::once("200".to_string())
        .chain((1..80).map(|_| "1000".into()))
        .collect();
    events.push(format!(
        r#"{{"ph":"P","name":"ProfileChunk","id":"0x1","pid":1,"tid":1,"ts":1000,"args":{{"data":{{"cpuProfile":{{"nodes":{nodes},"samples":[{}]}},"timeDeltas":[{}]}}}}}}"#,
        samples.join(","),
        deltas.join(",")
    ));
    let path = dir.join("hostile.json");
    std::fs::write(&path, format!("[{}]", events.join(",\n"))).unwrap();
    path
}

#[test]
fn hostile_names_show_as_text_and_run_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let trace = hostile_trace(dir.path());
    let (path, html) = page(
        "hostile.html",
        &["-q", "-o", "/dev/null", trace.to_str().unwrap()],
    );
    let d = check_page(&html, &["Verdict", "Long tasks"]);
    let leaf = d["tasks"][0]["leaf_function"].as_str().unwrap();
    assert!(
        leaf.starts_with("</script><img"),
        "the trace's name, whole: {leaf}"
    );
    assert!(leaf.contains('\u{2028}'));
    // In the page as text; in its data as escapes.
    assert!(html.contains(
        "&lt;/script&gt;&lt;img src=x onerror=&quot;document.title=&#39;pwned&#39;&quot;&gt;"
    ));
    assert!(!html.contains("<img"));
    assert_eq!(html.matches("</script>").count(), 1);
    assert!(!html[html.find("taskchain-data").unwrap()..].contains('\u{2028}'));
    if let Some(dom) = browse(&path, &["tasks"]) {
        // Nothing ran: the title is the page's, and no element came from the name.
        assert!(
            dom.contains("<title>taskchain: 1 long task in 1 trace</title>"),
            "{dom}"
        );
        assert!(!dom.contains("<img"));
    }
}

#[test]
fn a_page_with_interactions_shows_them() {
    // Interactions come from the JSON objects of `--interactions`; the page's
    // part is tested from a hand-made file until the scan gives them.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/html/interactions.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    assert_eq!(v["interactions"].as_array().unwrap().len(), 2);
}

#[test]
fn speedscope_profiles_are_the_tasks_windows() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.speedscope.json");
    let trace = trace_path("chromium-click-chain");
    let st = taskchain()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["-q", "--format", "json", "--speedscope"])
        .arg(&out)
        .arg(&trace)
        .output()
        .unwrap();
    assert!(st.status.success());
    let rows: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        s["$schema"],
        "https://www.speedscope.app/file-format-schema.json"
    );
    // The task profiles (the click's interaction phases follow them, named so).
    let profiles: Vec<&serde_json::Value> = s["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !p["name"].as_str().unwrap().contains("· interaction "))
        .collect();
    let with_samples: Vec<&serde_json::Value> = rows["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["window_samples"].as_u64() > Some(0))
        .collect();
    assert_eq!(profiles.len(), with_samples.len());
    let frames = s["shared"]["frames"].as_array().unwrap();
    for (p, t) in profiles.iter().zip(with_samples) {
        assert_eq!(p["type"], "sampled");
        // The profile's samples weigh the window's sampled time; its chosen stack is
        // among them with the leaf the row names.
        let total: f64 = p["weights"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_f64().unwrap())
            .sum();
        assert!(total <= t["task_dur_ms"].as_f64().unwrap() + 0.001);
        let leaf = t["leaf_function"].as_str().unwrap();
        assert!(p["samples"].as_array().unwrap().iter().any(|s| {
            s.as_array()
                .unwrap()
                .last()
                .is_some_and(|i| frames[i.as_u64().unwrap() as usize]["name"] == leaf)
        }));
        assert!(
            p["name"]
                .as_str()
                .unwrap()
                .starts_with(&trace.display().to_string())
        );
    }
}

/// Requests a page made, from Chromium's net log: a request the browser makes for itself
/// (time, updates, accounts: flags cannot stop them all) has no initiator ("not an
/// origin"); any other has the page's.
fn page_requests(netlog: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(netlog).unwrap_or_default();
    // A log cut at exit lacks its closing brackets.
    let log: serde_json::Value = serde_json::from_str(&text)
        .or_else(|_| serde_json::from_str(&format!("{}]}}", text.trim_end().trim_end_matches(','))))
        .unwrap_or_default();
    log["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let p = &e["params"];
            let url = p["url"].as_str()?;
            let initiator = p["initiator"].as_str()?;
            (initiator != "not an origin").then(|| format!("{url} (from {initiator})"))
        })
        .collect()
}

/// Runs headless Chromium offline (the flags of DEVELOPERS.md, a fresh profile, a
/// resolver that finds nothing) on `file` with `extra` flags; fails on any console message
/// or request of the page.
fn chromium_offline(chromium: &Path, file: &Path, extra: &[String]) -> std::process::Output {
    let profile = tempfile::tempdir().unwrap();
    let netlog = profile.path().join("netlog.json");
    let url = format!("file://{}", file.display());
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
            "--enable-logging=stderr",
            "--v=0",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--log-net-log={}", netlog.display()))
        .args(extra)
        .arg(&url)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let console: Vec<&str> = stderr.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "{url}: console: {console:?}");
    let requests = page_requests(&netlog);
    assert!(requests.is_empty(), "{url}: requests {requests:?}");
    out
}

/// Opens `page` in headless Chromium offline (the flags of DEVELOPERS.md: no network but a
/// resolver that finds nothing), fails on any console message or request of the page,
/// takes a screenshot of each section (a copy of the page holding that section alone, 1280
/// px wide, and the first at 390 px too) and returns the DOM; `None` without Chromium.
fn browse(page: &Path, sections: &[&str]) -> Option<String> {
    let chromium = Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        assert!(
            std::env::var_os("TASKCHAIN_CHROMIUM").is_none(),
            "TASKCHAIN_CHROMIUM is set but /usr/bin/chromium is missing"
        );
        eprintln!("no /usr/bin/chromium: {} not opened", page.display());
        return None;
    }
    let stem = page.file_stem().unwrap().to_string_lossy().into_owned();
    let run = |file: &Path, extra: &[String]| chromium_offline(chromium, file, extra);
    let dom = run(page, &["--dump-dom".into()]);
    let html = std::fs::read_to_string(page).unwrap();
    let top = &html[..html.find("<main>").unwrap() + "<main>".len()];
    for (i, s) in sections.iter().enumerate() {
        let open = format!("<section id=\"{s}\">");
        let start = html.find(&open).unwrap_or_else(|| panic!("no section {s}"));
        let end = start + html[start..].find("</section>").unwrap() + "</section>".len();
        let part = page.with_file_name(format!("{stem}-{s}.html"));
        std::fs::write(
            &part,
            format!("{top}{}</main></body></html>", &html[start..end]),
        )
        .unwrap();
        let mut sizes = vec![("", "1280,1400")];
        if i == 0 {
            sizes.push(("-phone", "390,1000"));
        }
        for (suffix, size) in sizes {
            let shot = page.with_file_name(format!("{stem}-{s}{suffix}.png"));
            run(
                &part,
                &[
                    format!("--screenshot={}", shot.display()),
                    format!("--window-size={size}"),
                ],
            );
            assert!(shot.exists(), "no screenshot {}", shot.display());
        }
    }
    Some(String::from_utf8_lossy(&dom.stdout).into_owned())
}

#[test]
fn speedscope_has_a_profile_per_interaction_phase() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.speedscope.json");
    taskchain()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["-q", "-o", "-", "--speedscope"])
        .arg(&out)
        .arg(trace_path("interactions-shop"))
        .assert()
        .success();
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let frames = s["shared"]["frames"].as_array().unwrap();
    let profiles = s["profiles"].as_array().unwrap();
    let named = |needle: &str| -> Vec<&serde_json::Value> {
        profiles
            .iter()
            .filter(|p| p["name"].as_str().unwrap().contains(needle))
            .collect()
    };
    // Six long tasks, and the phases of seven interactions but the quick toggle's
    // processing (9086: 7 µs, no sample in it): 6 + 20.
    assert_eq!(named(" ms long").len(), 26);
    assert_eq!(named("· interaction ").len(), 20);
    assert!(named("interaction 9086 · processing").is_empty());
    // Each phase's window: its weights cover at most the phase, and the slow phases hold
    // the code the page ran in them (scripts/interaction-pages).
    let leaves = |p: &serde_json::Value| -> Vec<String> {
        p["samples"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s.as_array().unwrap().last())
            .map(|i| frames[i.as_u64().unwrap() as usize]["name"].to_string())
            .collect()
    };
    for (needle, leaf, ms) in [
        (
            "CrRendererMain 25685:25685 · interaction 9072 · presentation_delay · 6858.214 ms · 153.305 ms long",
            "\"sizeBars\"",
            153.305,
        ),
        (
            "interaction 9058 · processing · 3824.441 ms",
            "\"applyDiscounts\"",
            165.696,
        ),
        (
            "interaction 9065 · input_delay",
            "\"mergeInventory\"",
            194.622,
        ),
    ] {
        let p = named(needle);
        assert_eq!(p.len(), 1, "{needle}");
        assert!(leaves(p[0]).iter().any(|l| l == leaf), "{needle}");
        let total: f64 = p[0]["weights"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_f64().unwrap())
            .sum();
        assert!(total <= ms + 0.001 && total > 0.8 * ms, "{needle}: {total}");
        assert_eq!(p[0]["endValue"], ms);
    }
}

#[test]
fn the_page_says_what_the_main_thread_did() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");
    taskchain()
        .args(["-q", "-o", "-", "--html"])
        .arg(&out)
        .arg(trace_path("interactions-shop"))
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    // The restyle click's presentation delay, as tests/frames.rs checks it against the
    // trace's events (348.801, 18.708, 10.335, 3.904 ms), longest first.
    assert!(
        html.contains(
            "main thread: style and layout 348.8 ms, paint and composite 18.7 ms, \
             idle (between tasks) 10.3 ms, other (in a task, no event) 3.9 ms</span>"
        ),
        "{html}"
    );
    // The chart click's presentation delay: the forced layouts and their function.
    assert!(html.contains(
        "forced layout 99.1 ms by sizeBars http://www.shop-inp.test/chart.js:26:20</span>"
    ));
    // Every task card (six long tasks) shows the events' breakdown, not the samples'.
    assert_eq!(html.matches("<h4>What the main thread did</h4>").count(), 6);
    assert_eq!(html.matches("<h4>Where the samples were</h4>").count(), 0);
    assert!(html.contains(
        "<td>of which forced layout by <code>sizeBars http://www.shop-inp.test/chart.js:26:20</code></td><td class=\"n\">99.1 ms</td>"
    ));
}

#[test]
fn a_batch_of_200_traces_gives_a_page_under_10_mb_that_opens_offline() {
    // Every sample's trace copied (not linked: one file named twice is read once) until
    // there are 200: the page of a batch, whose cards, rows and traces are capped.
    let dir = tempfile::tempdir().unwrap();
    let cases = sample_cases();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for k in 0..200 {
        let case = &cases[k % cases.len()];
        let src = root.join(trace_path(case));
        let name = src.file_name().unwrap().to_string_lossy().into_owned();
        std::fs::copy(&src, dir.path().join(format!("{k:03}-{case}-{name}"))).unwrap();
    }
    let (path, html) = page(
        "batch-200.html",
        &["-q", "-o", "/dev/null", &dir.path().display().to_string()],
    );
    let bytes = html.len();
    assert!(bytes < 10_000_000, "{bytes} bytes");
    let sections = [
        "Verdict",
        "Who owns the time",
        "Top chains",
        "Interactions",
        "Long tasks",
        "Traces",
    ];
    let d = check_page(&html, &sections);
    assert_eq!(d["summary"]["traces"], 200);
    // The 50 longest tasks as cards, then rows.
    assert_eq!(d["summary"]["cards"], 50);
    // Offline in Chromium: no console message, no request (checked on each run); the
    // whole page at 1280 px and at a phone's 390 px, and printed.
    let chromium = Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        assert!(std::env::var_os("TASKCHAIN_CHROMIUM").is_none());
        return;
    }
    let dom = chromium_offline(chromium, &path, &["--dump-dom".into()]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert_eq!(dom.matches("<article class=\"card\"").count(), 50);
    for (suffix, size) in [("", "1280,2400"), ("-phone", "390,2400")] {
        let shot = path.with_file_name(format!("batch-200{suffix}.png"));
        chromium_offline(
            chromium,
            &path,
            &[
                format!("--screenshot={}", shot.display()),
                format!("--window-size={size}"),
            ],
        );
        assert!(shot.exists(), "{}", shot.display());
    }
    let pdf = path.with_extension("pdf");
    chromium_offline(
        chromium,
        &path,
        &[
            format!("--print-to-pdf={}", pdf.display()),
            "--no-pdf-header-footer".into(),
        ],
    );
    let head = std::fs::read(&pdf).unwrap();
    assert!(head.starts_with(b"%PDF-"), "{}", pdf.display());
}

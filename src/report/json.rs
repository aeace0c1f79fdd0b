//! JSON and NDJSON: a task object has the CSV's keys, with `chain` a list of frames
//! root → leaf, each `{"function", "url", "line", "column"}` (1-based; null when unknown)
//! and its source-map original `original_function`, `original_source`, `original_line`,
//! `original_column` (1-based; null when no map covers the frame), with
//! `"original_ignore_listed": true` for a source in the map's ignore list, and who owns
//! it: `party`, `vendor`, `etld1` (null when unknown). A task's `party_shares`: the
//! window's samples by the group of their leaf frame, shares in [0, 1] (3 decimals),
//! largest first. With `alternatives` collected (JSON reports and `--html`), a task's
//! `alternatives`: the runner-up groups of its window, largest first, each
//! `{"chain", "samples", "stack_ms", "share"}` (`share`: `stack_ms` ÷ the task's duration,
//! 3 decimals, as `confidence`).

use std::io::Write;

use serde::Serialize;

use super::{FileError, ReportRow, confidence_number, millis_number};
use crate::chain::ChainFrame;
use crate::enrich::FrameNotes;
use crate::enrich::party::FrameParty;

#[derive(Serialize)]
pub(super) struct Frame<'a> {
    function: &'a str,
    url: Option<&'a str>,
    line: Option<u32>,
    column: Option<u32>,
    original_function: Option<&'a str>,
    original_source: Option<&'a str>,
    original_line: Option<u32>,
    original_column: Option<u32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    original_ignore_listed: bool,
    party: Option<&'static str>,
    vendor: Option<&'a str>,
    etld1: Option<&'a str>,
    /// Calls merged by `--collapse-recursion`; written only when over 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    recursion_depth: Option<u32>,
}

impl<'a> Frame<'a> {
    pub(super) fn new(f: &'a ChainFrame, notes: Option<&'a FrameNotes>) -> Self {
        let o = f.original.as_deref();
        let p = notes.and_then(|n| n.party.as_ref());
        Frame {
            function: &f.function,
            url: (!f.url.is_empty()).then_some(f.url.as_str()),
            line: f.line,
            column: f.column,
            original_function: o.and_then(|o| o.function.as_deref()),
            original_source: o.map(|o| o.source.as_str()),
            original_line: o.map(|o| o.line),
            original_column: o.map(|o| o.column),
            original_ignore_listed: o.is_some_and(|o| o.ignore_listed),
            party: party_text(p),
            vendor: vendor_text(p),
            etld1: p.map(|p| &*p.etld1),
            recursion_depth: (f.recursion_depth > 1).then_some(f.recursion_depth),
        }
    }
}

/// `first-party` / `third-party`, or null.
pub(super) fn party_text(p: Option<&FrameParty>) -> Option<&'static str> {
    p.and_then(|p| p.party).map(|p| p.as_str())
}

/// The vendor's entity name, or null.
pub(super) fn vendor_text(p: Option<&FrameParty>) -> Option<&str> {
    p.and_then(|p| p.vendor.as_deref()).map(|e| e.name.as_str())
}

/// `party_shares`: group → share of the window's samples, in the order given.
struct Shares<'a>(&'a [crate::enrich::party::Share]);

impl Serialize for Shares<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let total: u64 = self.0.iter().map(|x| u64::from(x.samples)).sum();
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for x in self.0 {
            let share = (f64::from(x.samples) / total as f64 * 1000.0).round() / 1000.0;
            m.serialize_entry(&x.group, &share)?;
        }
        m.end()
    }
}

#[derive(Serialize)]
struct Task<'a> {
    file: &'a str,
    pid: i64,
    tid: i64,
    thread_name: &'a str,
    task_ts_us: serde_json::Number,
    task_start_ms: f64,
    task_dur_ms: f64,
    window_samples: usize,
    target_samples: usize,
    stack_ms: f64,
    confidence: f64,
    status: &'a str,
    flags: Vec<&'static str>,
    leaf_function: Option<&'a str>,
    leaf_url: Option<&'a str>,
    leaf_line: Option<u32>,
    leaf_column: Option<u32>,
    chain_depth: usize,
    chain: Vec<Frame<'a>>,
    task_source: &'a str,
    loaf_invoker: Option<&'a str>,
    loaf_source_url: Option<&'a str>,
    loaf_function: Option<&'a str>,
    leaf_original_function: Option<&'a str>,
    leaf_original_source: Option<&'a str>,
    leaf_original_line: Option<u32>,
    leaf_original_column: Option<u32>,
    task_party: Option<&'static str>,
    task_vendor: Option<&'a str>,
    entry_party: Option<&'static str>,
    entry_vendor: Option<&'a str>,
    party_shares: Option<Shares<'a>>,
    trigger: Option<&'a str>,
    trigger_detail: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    alternatives: Option<Vec<Alternative<'a>>>,
    #[serde(flatten)]
    breakdown: super::breakdown::BreakdownJson<'a>,
}

#[derive(Serialize)]
struct Alternative<'a> {
    chain: Vec<Frame<'a>>,
    samples: usize,
    stack_ms: f64,
    share: f64,
}

fn task(r: &ReportRow) -> Task<'_> {
    let leaf = r.leaf().map(|f| Frame::new(f, None));
    let parties = r.notes.parties.as_ref();
    let task_party = parties.and_then(|p| p.task.as_ref());
    let entry_party = parties.and_then(|p| p.entry.as_ref());
    let ns = r.task_ts.as_nanos();
    let task_ts_us = if ns % 1000 == 0 {
        serde_json::Number::from(ns / 1000)
    } else {
        serde_json::Number::from_f64(ns as f64 / 1000.0).unwrap_or_else(|| 0.into())
    };
    Task {
        file: &r.file,
        pid: r.thread.pid.0,
        tid: r.thread.tid.0,
        thread_name: &r.thread_name,
        task_ts_us,
        task_start_ms: millis_number(r.task_start),
        task_dur_ms: millis_number(r.task_dur),
        window_samples: r.window_samples,
        target_samples: r.target_samples,
        stack_ms: millis_number(r.stack_time),
        confidence: confidence_number(r.confidence),
        status: r.status.as_str(),
        flags: r.flags.names().collect(),
        leaf_function: leaf.as_ref().map(|f| f.function),
        leaf_url: leaf.as_ref().and_then(|f| f.url),
        leaf_line: leaf.as_ref().and_then(|f| f.line),
        leaf_column: leaf.as_ref().and_then(|f| f.column),
        chain_depth: r.chain.len(),
        chain: r
            .chain
            .iter()
            .enumerate()
            .map(|(i, f)| Frame::new(f, r.notes.frame(i)))
            .collect(),
        task_source: r.task_source.as_str(),
        loaf_invoker: r.loaf.as_ref().map(|l| l.invoker.as_str()),
        loaf_source_url: r.loaf.as_ref().map(|l| l.source_url.as_str()),
        loaf_function: r.loaf.as_ref().map(|l| l.function.as_str()),
        leaf_original_function: leaf.as_ref().and_then(|f| f.original_function),
        leaf_original_source: leaf.as_ref().and_then(|f| f.original_source),
        leaf_original_line: leaf.as_ref().and_then(|f| f.original_line),
        leaf_original_column: leaf.as_ref().and_then(|f| f.original_column),
        task_party: party_text(task_party),
        task_vendor: vendor_text(task_party),
        entry_party: party_text(entry_party),
        entry_vendor: vendor_text(entry_party),
        party_shares: parties
            .filter(|p| !p.shares.is_empty())
            .map(|p| Shares(&p.shares)),
        trigger: r.trigger.as_ref().map(|t| t.kind.as_str()),
        trigger_detail: r
            .trigger
            .as_ref()
            .map(|t| t.detail.as_str())
            .filter(|d| !d.is_empty()),
        alternatives: r.alternatives.as_ref().map(|alts| {
            alts.iter()
                .map(|a| Alternative {
                    chain: a.chain.iter().map(|f| Frame::new(f, None)).collect(),
                    samples: a.samples,
                    stack_ms: millis_number(a.time),
                    share: confidence_number(super::share_of(a.time, r.task_dur)),
                })
                .collect()
        }),
        breakdown: super::breakdown::BreakdownJson::new(r.breakdown.as_deref(), false),
    }
}

/// One task object as text (the HTML report's data).
#[cfg(feature = "cli")]
pub(crate) fn task_text(r: &ReportRow) -> String {
    serde_json::to_string(&task(r)).expect("a task serialises")
}

/// `taskchain_version` in a JSON report: the package version, without the commit that
/// `--version` adds, so that every build of one version writes the same bytes.
pub const TASKCHAIN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The options that shaped a report's rows, written at its head as `"options"`: each by
/// its flag's name in snake case (`threshold_ms`, `scope`, …), as given or defaulted. The
/// command line fills it; a program may leave it out.
pub type ReportOptions = serde_json::Map<String, serde_json::Value>;

/// Writes `{"taskchain_version", "options", "tasks": [...], "errors": [...], "files":
/// [...]}` a task at a time (`options` only when given; `files`: [`FileLine`]s).
pub struct JsonWriter<W: Write> {
    out: W,
    first: bool,
}

impl<W: Write> JsonWriter<W> {
    /// Starts the document.
    pub fn new(mut out: W, options: Option<&ReportOptions>) -> std::io::Result<Self> {
        #[derive(Serialize)]
        struct Head<'a> {
            taskchain_version: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            options: Option<&'a ReportOptions>,
        }
        let head = serde_json::to_vec(&Head {
            taskchain_version: TASKCHAIN_VERSION,
            options,
        })?;
        // The head object, left open for the tasks: `{"taskchain_version":…,"tasks":[`.
        out.write_all(&head[..head.len() - 1])?;
        out.write_all(b",\"tasks\":[")?;
        Ok(JsonWriter { out, first: true })
    }

    /// Writes one task object.
    pub fn task(&mut self, r: &ReportRow) -> std::io::Result<()> {
        if !self.first {
            self.out.write_all(b",")?;
        }
        self.first = false;
        serde_json::to_writer(&mut self.out, &task(r))?;
        Ok(())
    }

    /// Ends the document with the failed files, the files read, and a newline.
    pub fn finish(mut self, errors: &[FileError], files: &[FileLine]) -> std::io::Result<W> {
        self.out.write_all(b"],\"errors\":")?;
        serde_json::to_writer(&mut self.out, errors)?;
        self.out.write_all(b",\"files\":")?;
        serde_json::to_writer(&mut self.out, files)?;
        self.out.write_all(b"}\n")?;
        Ok(self.out)
    }
}

/// One file read, in a JSON report's `files`: `{"file", "long_tasks",
/// "long_tasks_outside_scope", "tbt_ms", "tbt_from_fcp_ms", "warnings"}`; `warnings` the
/// lines stderr shows for the file after `taskchain: warning: FILE: ` (also under `-q`),
/// `tbt_from_fcp_ms` null without a first contentful paint (docs/METHOD.md §2.3).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileLine {
    /// The input.
    pub file: String,
    /// Long tasks found on the threads in scope.
    pub long_tasks: usize,
    /// Long tasks on threads `--scope` leaves out.
    pub long_tasks_outside_scope: u64,
    /// Blocking time of the whole trace (ms, 3 decimals).
    pub tbt_ms: f64,
    /// Total blocking time from the first contentful paint on (ms), or null.
    pub tbt_from_fcp_ms: Option<f64>,
    /// The file's warnings, one sentence each.
    pub warnings: Vec<String>,
}

impl FileLine {
    /// The line of a file's report.
    pub fn of(r: &super::FileReport) -> FileLine {
        FileLine {
            file: r.file.clone(),
            long_tasks: r.long_tasks,
            long_tasks_outside_scope: r.stats.long_tasks_outside_scope,
            tbt_ms: millis_number(r.stats.blocking_time),
            tbt_from_fcp_ms: r.stats.blocking_time_from_fcp.map(millis_number),
            warnings: warning_lines(&r.diagnostics).collect(),
        }
    }
}

/// A file's warnings as sentences: each kind of odd input with its count (`KIND: N`), then
/// each note.
pub fn warning_lines(d: &crate::vocab::Diagnostics) -> impl Iterator<Item = String> + '_ {
    d.iter()
        .map(|(kind, n)| format!("{kind}: {n}"))
        .chain(d.notes().iter().cloned())
}

/// Writes one task as an NDJSON line.
pub fn write_task_line(out: &mut impl Write, r: &ReportRow) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, &task(r))?;
    out.write_all(b"\n")
}

/// Writes one failed file as an NDJSON line `{"file", "error"}`.
pub fn write_error_line(out: &mut impl Write, e: &FileError) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, e)?;
    out.write_all(b"\n")
}

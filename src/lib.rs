//! taskchain finds every long task in Chrome trace files and names the JavaScript call
//! chain that caused it, with a confidence figure, from the V8 CPU profiler samples
//! already in the trace.
//!
//! The pipeline, one module per stage: [`input`] reads a path into bytes (mmap, or a gzip
//! decoder) and finds the event array ([`input::envelope`]); [`scan`] walks the events and
//! keeps the few that matter; [`profile`] rebuilds each V8 profile as sample / stack /
//! frame tables; [`tasks`] finds the top-level tasks of the renderer main threads and keeps
//! the long ones; [`chain`] resolves each long task's call chain and confidence; [`report`]
//! writes CSV, JSON or NDJSON. [`batch`] runs that over many files in parallel.

pub mod batch;
pub mod chain;
pub mod cli;
pub mod compare;
pub mod error;
pub mod gate;
pub mod input;
pub mod profile;
pub mod report;
pub mod scan;
pub mod tasks;
pub mod time;

use std::path::PathBuf;

use rayon::prelude::*;

use chain::{ChainConfig, Flags};
use input::envelope::{self, Envelope, EnvelopeError};
use report::{Format, ReportRow};
use scan::Diagnostics;
use tasks::Scope;
use time::TimeDelta;

pub use batch::{BatchSummary, run};

/// What to analyse and how: the resolved command line.
#[derive(Clone, Debug)]
pub struct Config {
    /// Files, folders, globs, or `-`.
    pub paths: Vec<PathBuf>,
    /// `--files-from`: a file listing more paths, one per line (`-`: standard input).
    pub files_from: Option<PathBuf>,
    /// `--shard I/N` (1-based I).
    pub shard: Option<(usize, usize)>,
    /// Output file; `None` or `-` for standard output.
    pub output: Option<PathBuf>,
    /// Output format.
    pub format: Format,
    /// Worker threads.
    pub jobs: usize,
    /// No progress bar, no warnings, no summary on stderr (errors are still printed).
    pub quiet: bool,
    /// Per-file analysis settings.
    pub analysis: Settings,
    /// Extra outputs.
    pub outputs: Outputs,
    /// Per-file budgets (`--budget`).
    pub budgets: Vec<gate::Budget>,
}

/// The extra outputs of a batch (each `None` when not asked for).
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    /// `--summary`: one CSV row per input file.
    pub summary: Option<PathBuf>,
    /// `--aggregate`: one CSV row per distinct chain (or URL).
    pub aggregate: Option<PathBuf>,
    /// `--aggregate-by`.
    pub aggregate_by: report::aggregate::AggregateBy,
    /// `--folded`: collapsed stacks.
    pub folded: Option<PathBuf>,
    /// `--folded-weight`.
    pub folded_weight: report::folded::FoldedWeight,
    /// `--flamegraph`: SVG.
    pub flamegraph: Option<PathBuf>,
    /// `--markdown`.
    pub markdown: Option<PathBuf>,
}

/// Settings of one file's analysis.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Which threads are reported.
    pub scope: Scope,
    /// A task is long when `dur > threshold` (`--threshold-ms`, default 50 ms).
    pub threshold: TimeDelta,
    /// Chain resolution.
    pub chain: ChainConfig,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            scope: Scope::MainFrame,
            threshold: TimeDelta::from_micros(50_000),
            chain: ChainConfig::default(),
        }
    }
}

/// The result of one file.
#[derive(Debug, Default)]
pub struct FileReport {
    /// The input's name as reported.
    pub file: String,
    /// One row per long task kept (sorted by pid, tid, ts).
    pub rows: Vec<ReportRow>,
    /// Long tasks found on the threads in scope (before a `drop` policy).
    pub long_tasks: usize,
    /// Events read.
    pub events: u64,
    /// The file ends inside the event array.
    pub truncated: bool,
    /// Odd input, by kind.
    pub diagnostics: Diagnostics,
    /// Set when the event array breaks off in bytes that are not JSON: the events before
    /// were used (and their rows are kept), the rest of the file was not read.
    pub broken: Option<String>,
    /// Counts for `--summary` and `--budget`.
    pub stats: FileStats,
    /// With `collect_stacks`: the samples inside long tasks by folded stack (path,
    /// samples, time), summed over the file's tasks, sorted by path.
    pub stacks: Vec<(String, u64, TimeDelta)>,
}

/// Per-file counts (durations in ns; reports write ms).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileStats {
    /// Size of the input as stored (compressed for `.gz`), bytes.
    pub bytes: u64,
    /// Threads in scope (renderer main threads).
    pub threads: usize,
    /// Top-level tasks on them.
    pub top_level_tasks: usize,
    /// Sum of the long tasks' durations.
    pub long_task_time: TimeDelta,
    /// Total blocking time: sum over top-level tasks longer than 50 ms of `dur − 50 ms`
    /// (Lighthouse's definition, whatever `--threshold-ms` is).
    pub blocking_time: TimeDelta,
    /// The longest top-level task.
    pub max_task: TimeDelta,
    /// Sum of the durations of the rows with status `ok`.
    pub attributed_time: TimeDelta,
    /// Profiles in the trace.
    pub profiles: usize,
    /// Samples in those profiles.
    pub samples: u64,
}

/// Why one file's bytes could not be analysed (the caller adds the path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnalyzeError {
    /// Not a trace, nor another accepted format.
    NotATrace(String),
    /// A JSON object of some other kind (see [`error::Error::OtherJson`]).
    OtherJson(String),
    /// The event array is broken before the first event.
    Json {
        /// Byte offset.
        offset: u64,
        /// Event index.
        event_index: u64,
        /// What was expected.
        reason: String,
    },
}

impl From<EnvelopeError> for AnalyzeError {
    fn from(e: EnvelopeError) -> Self {
        AnalyzeError::NotATrace(e.to_string())
    }
}

/// Analyses one trace held in memory: long tasks and their chains.
pub fn analyze_bytes(file: &str, bytes: &[u8], s: &Settings) -> Result<FileReport, AnalyzeError> {
    let start = match envelope::detect(bytes)? {
        Envelope::Events { start, .. } => start,
        Envelope::OtherObject { keys } => return Err(AnalyzeError::OtherJson(describe(&keys))),
    };
    let timer = Timer::start(file);
    let trace = scan::scan(bytes, start, true).map_err(AnalyzeError::from)?;
    timer.lap("scan");
    Ok(analyze_scanned(file, trace, Some(bytes), s, &timer))
}

/// Analyses one trace arriving in blocks (a gzip stream). A stream error after some data
/// is a note in the report's diagnostics (the part before it was used).
pub fn analyze_stream(
    file: &str,
    source: impl scan::stream::BlockSource,
    s: &Settings,
) -> Result<FileReport, AnalyzeError> {
    use scan::stream::StreamError;
    let timer = Timer::start(file);
    let (trace, stream_error) = scan::stream::scan_blocks(source).map_err(|e| match e {
        StreamError::Envelope(e) => AnalyzeError::from(e),
        StreamError::OtherObject(keys) => AnalyzeError::OtherJson(describe(&keys)),
        StreamError::Scan(e) => AnalyzeError::from(e),
    })?;
    timer.lap("scan");
    let mut rep = analyze_scanned(file, trace, None, s, &timer);
    if let Some(e) = stream_error {
        rep.diagnostics.note(format!(
            "gzip stream broken ({e}) after {} events; the part before it was used",
            rep.events
        ));
    }
    Ok(rep)
}

impl From<scan::ScanError> for AnalyzeError {
    fn from(e: scan::ScanError) -> Self {
        AnalyzeError::Json {
            offset: e.offset,
            event_index: e.event_index,
            reason: e.reason,
        }
    }
}

/// Profiles, tasks and chains of a scanned trace. `file_bytes`: the whole trace, when its
/// sample arrays were left in it.
fn analyze_scanned(
    file: &str,
    mut trace: scan::ScannedTrace,
    file_bytes: Option<&[u8]>,
    s: &Settings,
    timer: &Timer<'_>,
) -> FileReport {
    let mut diagnostics = std::mem::take(&mut trace.diagnostics);
    let trace_end = trace.last_ts.unwrap_or_default();
    let threads = tasks::threads_in_scope(&trace, s.scope);
    let top = tasks::top_level_tasks(&trace.task_marks, &threads, trace_end, &mut diagnostics);
    let long = tasks::long_tasks(&top, s.threshold);
    let profiles = profile::build(&mut trace, &mut diagnostics);
    timer.lap("profiles");
    let fifty = TimeDelta::from_micros(50_000);
    let all_top = || top.values().flatten();
    let mut stats = FileStats {
        bytes: 0,
        threads: threads.len(),
        top_level_tasks: all_top().count(),
        long_task_time: long.iter().map(|t| t.dur).sum(),
        blocking_time: all_top()
            .filter(|t| t.dur > fifty)
            .map(|t| TimeDelta::from_nanos(t.dur.as_nanos() - fifty.as_nanos()))
            .sum(),
        max_task: all_top().map(|t| t.dur).max().unwrap_or_default(),
        attributed_time: TimeDelta::ZERO,
        profiles: profiles.profiles.len(),
        samples: profiles.profiles.iter().map(|p| p.sample_count).sum(),
    };
    let first_ts = trace.first_ts.unwrap_or_default();
    let truncated = trace.truncated();
    let broken = match trace.end {
        Some(scan::ArrayEnd::Broken { offset, expected }) => Some(format!(
            "invalid JSON at byte {offset} (event {}): expected {expected}; the file after it was not read",
            trace.events
        )),
        _ => None,
    };
    let chains: Vec<chain::TaskChain> = long
        .par_iter()
        .filter_map(|t| chain::resolve(t, &profiles, file_bytes, &s.chain))
        .collect();
    timer.lap("chains");
    diagnostics.add(
        "samples naming unknown nodes (skipped)",
        chains.iter().map(|c| c.unknown_samples).sum(),
    );
    stats.attributed_time = chains
        .iter()
        .filter(|c| c.status == chain::ChainStatus::Ok)
        .map(|c| c.task.dur)
        .sum();
    let mut stacks: std::collections::BTreeMap<String, (u64, TimeDelta)> = Default::default();
    for c in &chains {
        for (path, n, t) in &c.stacks {
            let e = stacks.entry(path.clone()).or_default();
            e.0 += u64::from(*n);
            e.1 = e.1 + *t;
        }
    }
    let rows = chains
        .into_iter()
        .map(|mut c| {
            c.flags.set(Flags::TRUNCATED_FILE, truncated);
            let name = trace
                .thread_names
                .get(&c.task.thread)
                .map(String::as_str)
                .unwrap_or("");
            ReportRow::new(file, name, first_ts, c)
        })
        .collect();
    FileReport {
        file: file.to_string(),
        rows,
        long_tasks: long.len(),
        events: trace.events,
        truncated,
        diagnostics,
        broken,
        stats,
        stacks: stacks.into_iter().map(|(p, (n, t))| (p, n, t)).collect(),
    }
}

/// Stage timings on stderr when the environment sets `TASKCHAIN_TIMINGS` (benchmarks).
struct Timer<'a> {
    file: &'a str,
    start: Option<std::time::Instant>,
}

impl<'a> Timer<'a> {
    fn start(file: &'a str) -> Self {
        let on = std::env::var_os("TASKCHAIN_TIMINGS").is_some();
        Timer {
            file,
            start: on.then(std::time::Instant::now),
        }
    }
    fn lap(&self, stage: &str) {
        if let Some(t) = self.start {
            eprintln!(
                "taskchain: timing: {}: {stage} done at {:?}",
                self.file,
                t.elapsed()
            );
        }
    }
}

/// Says what a JSON object without `traceEvents` is.
fn describe(keys: &[String]) -> String {
    let has = |k: &str| keys.iter().any(|x| x == k);
    if has("nodes") && has("samples") && (has("timeDeltas") || has("startTime")) {
        "a CPU profile (.cpuprofile) has no trace events: there are no tasks to attribute".into()
    } else if has("head") && has("samples") && !has("timestamps") {
        "a heap-sampling profile (head + samples), not a CPU trace".into()
    } else if has("snapshot") && has("nodes") {
        "a heap snapshot, not a CPU trace".into()
    } else {
        let shown: Vec<&str> = keys.iter().take(6).map(String::as_str).collect();
        format!(
            "a JSON object with keys [{}] and no \"traceEvents\" array",
            shown.join(", ")
        )
    }
}

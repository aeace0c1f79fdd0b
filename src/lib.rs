//! taskchain finds every long task in Chrome trace files and names the JavaScript call
//! chain that caused it, with a confidence figure, from the V8 CPU profiler samples
//! already in the trace.
//!
//! The pipeline, one module per stage: [`input`] reads a path into bytes (mmap, or a gzip
//! decoder) and finds the event array ([`input::envelope`]); [`scan`] walks the events and
//! keeps the few that matter; [`profile`] rebuilds each V8 profile as sample / stack /
//! frame tables; [`tasks`] finds the top-level tasks of the renderer main threads and keeps
//! the long ones; [`chain`] resolves each long task's call chain and confidence; [`enrich`]
//! adds what the frames mean (the page, parties); [`report`] writes CSV, JSON or NDJSON. [`batch`] runs that over many files in parallel.

pub mod batch;
pub mod chain;
pub mod cli;
pub mod compare;
pub mod enrich;
pub mod error;
pub mod field;
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

/// The hash map of the hot paths (per-task-event, per-chunk and per-node lookups): std's
/// map with foldhash, a fast hasher (randomly seeded per process), instead of SipHash.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// What to analyse and how: the resolved command line.
#[derive(Clone, Debug)]
pub struct Config {
    /// Files, folders, globs, or `-`.
    pub paths: Vec<PathBuf>,
    /// `--files-from`: a file listing more paths, one per line (`-`: standard input).
    pub files_from: Option<PathBuf>,
    /// `--shard I/N` (1-based I).
    pub shard: Option<(usize, usize)>,
    /// `--follow-links`: folder and glob searches follow symbolic links out of the folder.
    pub follow_links: bool,
    /// `--tasks`: the file the task entries were read from (never to be overwritten).
    pub tasks_file: Option<PathBuf>,
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
#[derive(Clone, Debug)]
pub struct Settings {
    /// Which threads are reported.
    pub scope: Scope,
    /// A task is long when `dur > threshold` (`--threshold-ms`, default 50 ms).
    pub threshold: TimeDelta,
    /// Chain resolution.
    pub chain: ChainConfig,
    /// `--lookback-ms` was not given: traces use 0, field data one sample interval.
    pub lookback_auto: bool,
    /// `--tasks FILE`: long-task entries for profiles that carry none.
    pub tasks: Option<std::sync::Arc<field::TaskEntries>>,
    /// Where the scan adds the bytes of this input it has read (as stored: compressed for
    /// gzip), for a progress bar that moves inside a large file.
    pub progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// The enrichment stage's settings.
    pub enrich: enrich::Enrichment,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            scope: Scope::MainFrame,
            threshold: TimeDelta::from_micros(50_000),
            chain: ChainConfig::default(),
            lookback_auto: true,
            tasks: None,
            progress: None,
            enrich: enrich::Enrichment::default(),
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

/// What a file's analysis is done with but has not freed: its profiles, task lists and
/// scan records. The caller drops it once the report is handed on, so that freeing a large
/// trace's data (for a 1 GB trace, ~10⁶ chunks and every profile's strings: tens of ms)
/// runs beside writing the report instead of before it.
#[derive(Default)]
pub struct Spare(Vec<Box<dyn Send>>);

impl Spare {
    /// Keeps `v` until the spare is dropped.
    pub fn keep<T: Send + 'static>(&mut self, v: T) {
        self.0.push(Box::new(v));
    }

    /// Drops what was kept, the parts side by side on the current rayon pool (unmapping a
    /// 1 GB file and freeing its profiles take ~30 ms each).
    pub fn drop_in_parallel(self) {
        self.0.into_par_iter().for_each(drop);
    }
}

/// Analyses one trace held in memory: long tasks and their chains.
pub fn analyze_bytes(file: &str, bytes: &[u8], s: &Settings) -> Result<FileReport, AnalyzeError> {
    analyze_bytes_sparing(file, bytes, s, &mut Spare::default())
}

/// [`analyze_bytes`], leaving what it no longer needs in `spare` for the caller to drop.
pub fn analyze_bytes_sparing(
    file: &str,
    bytes: &[u8],
    s: &Settings,
    spare: &mut Spare,
) -> Result<FileReport, AnalyzeError> {
    let start = match envelope::detect(bytes)? {
        Envelope::Events { start, .. } => start,
        Envelope::OtherObject { keys } => return analyze_other(file, bytes, &keys, s),
    };
    let timer = Timer::start(file);
    let trace = scan::scan_with_progress(bytes, start, true, s.progress.as_deref())
        .map_err(AnalyzeError::from)?;
    timer.lap("scan");
    no_trace_events(&trace)?;
    Ok(analyze_scanned(file, trace, Some(bytes), s, &timer, spare))
}

/// Refuses an array none of whose objects is a trace event (none has a `ph`): a
/// Lighthouse `devtoolslog.json` (DevTools protocol messages) or other JSON.
fn no_trace_events(trace: &scan::ScannedTrace) -> Result<(), AnalyzeError> {
    if trace.events > 0 && trace.diagnostics.count(scan::NO_PHASE) == trace.events {
        return Err(AnalyzeError::OtherJson(format!(
            "a JSON array of {} objects, none a trace event (no \"ph\"; a DevTools protocol log?)",
            trace.events
        )));
    }
    Ok(())
}

/// Analyses one trace arriving in blocks (a gzip stream). A stream error after some data
/// is a note in the report's diagnostics (the part before it was used).
pub fn analyze_stream(
    file: &str,
    source: impl scan::stream::BlockSource,
    s: &Settings,
) -> Result<FileReport, AnalyzeError> {
    analyze_stream_sparing(file, source, s, &mut Spare::default())
}

/// [`analyze_stream`], leaving what it no longer needs in `spare` for the caller to drop.
pub fn analyze_stream_sparing(
    file: &str,
    source: impl scan::stream::BlockSource,
    s: &Settings,
    spare: &mut Spare,
) -> Result<FileReport, AnalyzeError> {
    use scan::stream::StreamError;
    let timer = Timer::start(file);
    let mut source = source;
    let (trace, stream_error) = match scan::stream::scan_blocks(&mut source) {
        Ok(r) => r,
        Err(StreamError::Envelope(e)) => return Err(e.into()),
        Err(StreamError::Scan(e)) => return Err(e.into()),
        Err(StreamError::Broken(e)) => {
            return Err(AnalyzeError::NotATrace(format!(
                "gzip stream broken before any trace data ({e})"
            )));
        }
        Err(StreamError::OtherObject(keys, mut whole)) => {
            // Field data (a .cpuprofile.gz): small enough to read whole.
            while source.append_to(&mut whole).unwrap_or(false) {}
            return analyze_other(file, &whole, &keys, s);
        }
    };
    timer.lap("scan");
    no_trace_events(&trace)?;
    let mut rep = analyze_scanned(file, trace, None, s, &timer, spare);
    if let Some(e) = stream_error {
        // flate2 reports a CRC or length mismatch at the end of a member as a checksum error.
        rep.diagnostics.note(if e.to_string().contains("checksum") {
            format!("gzip checksum mismatch ({e}): the data is corrupt, its rows may be wrong")
        } else {
            format!(
                "gzip stream broken ({e}) after {} events; the part before it was used",
                rep.events
            )
        });
    }
    Ok(rep)
}

impl From<scan::ScanError> for AnalyzeError {
    fn from(e: scan::ScanError) -> Self {
        if e.reason == scan::NO_OBJECTS {
            return AnalyzeError::OtherJson(format!(
                "a JSON array whose elements are not objects (from byte {}); trace \
                 events are objects",
                e.offset
            ));
        }
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
    spare: &mut Spare,
) -> FileReport {
    let mut diagnostics = std::mem::take(&mut trace.diagnostics);
    if s.tasks.is_some() {
        diagnostics.note(
            "--tasks is for field profiles; a Chrome trace has its own tasks (ignored)".into(),
        );
    }
    let trace_end = trace.last_ts.unwrap_or_default();
    let threads = tasks::threads_in_scope(&trace, s.scope);
    // Tasks and profiles come from different parts of the scan: built side by side.
    let marks = std::mem::take(&mut trace.task_marks);
    let mut task_diagnostics = Diagnostics::default();
    let (top, profiles) = rayon::join(
        || tasks::top_level_tasks(&marks, &threads, trace_end, &mut task_diagnostics),
        || profile::build(&mut trace, &mut diagnostics),
    );
    diagnostics.merge(&task_diagnostics);
    let long = tasks::long_tasks(&top, s.threshold);
    timer.lap("profiles");
    let broken = match trace.end {
        Some(scan::ArrayEnd::Broken { offset, expected }) => Some(format!(
            "invalid JSON at byte {offset} (event {}): expected {expected}; the file after it was not read",
            trace.events
        )),
        _ => None,
    };
    let tasks: Vec<FoundTask> = long
        .iter()
        .map(|t| FoundTask {
            task: *t,
            source: "trace",
            loaf: None,
        })
        .collect();
    let mut rep = report_tasks(
        file,
        Found {
            tasks,
            top_level: top.values().flatten().copied().collect(),
            threads: threads.len(),
            thread_names: &trace.thread_names,
            first_ts: trace.first_ts.unwrap_or_default(),
            truncated: trace.truncated(),
            context: enrich::FileContext {
                pages: std::mem::take(&mut trace.pages),
            },
        },
        &profiles,
        file_bytes,
        &s.chain,
        &s.enrich,
        diagnostics,
    );
    timer.lap("chains");
    rep.events = trace.events;
    rep.broken = broken;
    spare.keep(profiles);
    spare.keep(trace);
    spare.keep((top, long, marks));
    rep
}

/// A long task with where it came from.
#[derive(Clone, Debug)]
pub struct FoundTask {
    /// The task.
    pub task: tasks::LongTask,
    /// `task_source`: `trace` (a top-level task event), `longtask`, `long-animation-frame`
    /// (field entries), `busy_span` (a run of busy samples in a profile without tasks).
    pub source: &'static str,
    /// The LoAF script that overlaps the task most, when LoAF entries were given.
    pub loaf: Option<report::LoafScript>,
}

/// What a file's task finding produced, for [`report_tasks`].
pub struct Found<'a> {
    /// The long tasks.
    pub tasks: Vec<FoundTask>,
    /// Every top-level task (for the summary's counts and blocking time).
    pub top_level: Vec<tasks::TopLevelTask>,
    /// Threads in scope.
    pub threads: usize,
    /// Thread names.
    pub thread_names: &'a std::collections::HashMap<scan::records::ThreadKey, String>,
    /// Origin of `task_start_ms`.
    pub first_ts: time::Timestamp,
    /// The input was cut off.
    pub truncated: bool,
    /// What the reading says about the recording, for the enrichment stage.
    pub context: enrich::FileContext,
}

/// Chains of the tasks → enrichment → the file's report (rows, counts, folded stacks).
pub fn report_tasks(
    file: &str,
    found: Found<'_>,
    profiles: &profile::ProfileSet,
    file_bytes: Option<&[u8]>,
    chain_config: &ChainConfig,
    enrichment: &enrich::Enrichment,
    mut diagnostics: Diagnostics,
) -> FileReport {
    let fifty = TimeDelta::from_micros(50_000);
    let top = &found.top_level;
    let mut stats = FileStats {
        bytes: 0,
        threads: found.threads,
        top_level_tasks: top.len(),
        long_task_time: found.tasks.iter().map(|t| t.task.dur).sum(),
        blocking_time: top
            .iter()
            .filter(|t| t.dur > fifty)
            .map(|t| TimeDelta::from_nanos(t.dur.as_nanos() - fifty.as_nanos()))
            .sum(),
        max_task: top.iter().map(|t| t.dur).max().unwrap_or_default(),
        attributed_time: TimeDelta::ZERO,
        profiles: profiles.profiles.len(),
        samples: profiles.profiles.iter().map(|p| p.sample_count).sum(),
    };
    let chains: Vec<(chain::TaskChain, &FoundTask)> = found
        .tasks
        .par_iter()
        .filter_map(|t| chain::resolve(&t.task, profiles, file_bytes, chain_config).map(|c| (c, t)))
        .collect();
    diagnostics.add(
        "samples naming unknown nodes (skipped)",
        chains.iter().map(|(c, _)| c.unknown_samples).sum(),
    );
    diagnostics.add(
        "profile chunks whose samples could not be read, met by task windows (left out)",
        chains.iter().map(|(c, _)| c.unreadable_chunks).sum(),
    );
    stats.attributed_time = chains
        .iter()
        .filter(|(c, _)| c.status == chain::ChainStatus::Ok)
        .map(|(c, _)| c.task.dur)
        .sum();
    let mut stacks: std::collections::BTreeMap<String, (u64, TimeDelta)> = Default::default();
    for (c, _) in &chains {
        for (path, n, t) in &c.stacks {
            let e = stacks.entry(path.clone()).or_default();
            e.0 += u64::from(*n);
            e.1 = e.1 + *t;
        }
    }
    let enricher = enrich::FileEnricher::new(enrichment, &found.context);
    let rows = chains
        .into_iter()
        .map(|(mut c, t)| {
            let notes = enricher.task(&c);
            c.flags.set(Flags::TRUNCATED_FILE, found.truncated);
            // In a cut-off file, a thread without a profile may have had one in the part
            // not written: that is the cut's doing, not the recording's.
            if found.truncated && c.status == chain::ChainStatus::NoProfile {
                c.status = chain::ChainStatus::ProfileCutOff;
            }
            let name = found
                .thread_names
                .get(&c.task.thread)
                .map(String::as_str)
                .unwrap_or("");
            let mut row = ReportRow::new(file, name, found.first_ts, c);
            row.task_source = t.source;
            row.loaf = t.loaf.clone();
            row.notes = notes;
            row
        })
        .collect();
    FileReport {
        file: file.to_string(),
        rows,
        long_tasks: found.tasks.len(),
        events: 0,
        truncated: found.truncated,
        diagnostics,
        broken: None,
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

/// A JSON object without `traceEvents`: field data, a look-alike, or other JSON.
fn analyze_other(
    file: &str,
    bytes: &[u8],
    keys: &[String],
    s: &Settings,
) -> Result<FileReport, AnalyzeError> {
    match field::format_of(keys) {
        Ok(Some(format)) => field::analyze(file, bytes, format, s),
        Err(reason) => Err(AnalyzeError::NotATrace(reason)),
        Ok(None) => {
            let shown: Vec<&str> = keys.iter().take(6).map(String::as_str).collect();
            Err(AnalyzeError::OtherJson(format!(
                "a JSON object with keys [{}] and no \"traceEvents\" array",
                shown.join(", ")
            )))
        }
    }
}

//! Reports: [`ReportRow`]s → CSV, JSON, NDJSON or Parquet bytes (docs/METHOD.md §3).
//!
//! Times are kept in ns in rows and written in milliseconds with 3 decimals (`task_ts_us`
//! in µs); lines and columns are 1-based. Rows are written in the order given: the caller
//! sorts them by (file, pid, tid, task_ts_us).

pub mod aggregate;
pub(crate) mod breakdown;
pub mod chain_key;
pub mod csv;
pub mod folded;
pub mod frames;
#[cfg(feature = "cli")]
pub(crate) mod html;
pub mod interactions;
pub mod json;
pub mod markdown;
pub mod parquet;
#[cfg(feature = "cli")]
pub(crate) mod sink;
#[cfg(feature = "cli")]
pub(crate) mod speedscope;
pub mod summary;
pub(crate) mod text;

use std::sync::Arc;

use crate::chain::{ChainFrame, ChainStatus, Flags, TaskChain};
pub use crate::reader::{LoafScript, TaskSource};
use crate::time::{TimeDelta, Timestamp, fmt_micros, fmt_millis3};
use crate::vocab::Diagnostics;
use crate::vocab::ThreadKey;

/// Output format (`--format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// One CSV row per long task.
    #[default]
    Csv,
    /// One object `{"tasks": [...], "errors": [...]}`.
    Json,
    /// One task object per line, and one `{"file", "error"}` line per failed file.
    Ndjson,
    /// Apache Parquet: the CSV's columns typed, plus `trace_id` and `chain_frames`
    /// (see [`parquet`]).
    Parquet,
}

/// Format of `--summary` and `--aggregate` (`--summary-format`, `--aggregate-format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TableFormat {
    /// CSV.
    #[default]
    Csv,
    /// Apache Parquet (see [`parquet`]).
    Parquet,
}

impl TableFormat {
    /// `given`, or else Parquet for a path ending in `.parquet` (any case), else CSV.
    pub fn for_path(path: &std::path::Path, given: Option<TableFormat>) -> TableFormat {
        given.unwrap_or_else(|| {
            if is_parquet_name(path) {
                TableFormat::Parquet
            } else {
                TableFormat::Csv
            }
        })
    }
}

/// True when `path` ends in `.parquet` (any case).
pub fn is_parquet_name(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// The CSV header: docs/METHOD.md §3's columns in order, then `task_source` and the LoAF entry point
/// (field data), empty for traces, then the leaf's source-map original (empty without one),
/// then who owns the leaf and the entry frame (empty when unknown), then the trigger (what started
/// the task), then the task's time by category and its forced layout (empty for field data).
pub const COLUMNS: [&str; 41] = [
    "file",
    "pid",
    "tid",
    "thread_name",
    "task_ts_us",
    "task_start_ms",
    "task_dur_ms",
    "window_samples",
    "target_samples",
    "stack_ms",
    "confidence",
    "status",
    "flags",
    "leaf_function",
    "leaf_url",
    "leaf_line",
    "leaf_column",
    "chain_depth",
    "chain",
    "task_source",
    "loaf_invoker",
    "loaf_source_url",
    "loaf_function",
    "leaf_original_function",
    "leaf_original_source",
    "leaf_original_line",
    "leaf_original_column",
    "leaf_party",
    "leaf_vendor",
    "entry_party",
    "entry_vendor",
    "trigger",
    "trigger_detail",
    "scripting_ms",
    "style_layout_ms",
    "paint_composite_ms",
    "gc_ms",
    "parse_compile_ms",
    "other_ms",
    "forced_layout_ms",
    "forced_layout_function",
];

/// The breakdown's times in [`COLUMNS`]' order: scripting, style and layout, paint and
/// composite, garbage collection, parsing and compiling, other, forced layout.
pub fn breakdown_times(b: &crate::chain::breakdown::Breakdown) -> [TimeDelta; 7] {
    [
        b.scripting,
        b.style_layout,
        b.paint_composite,
        b.gc,
        b.parse_compile,
        b.other,
        b.forced_layout,
    ]
}

/// One long task as reported.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportRow {
    /// The input as given (path, or `-`); shared by the rows of one file.
    pub file: Arc<str>,
    /// Thread.
    pub thread: ThreadKey,
    /// `thread_name` metadata (empty when none); shared by the rows of one thread.
    pub thread_name: Arc<str>,
    /// Task start on the trace clock.
    pub task_ts: Timestamp,
    /// Task start − the trace's first non-metadata `ts`.
    pub task_start: TimeDelta,
    /// Task duration.
    pub task_dur: TimeDelta,
    /// Candidate samples.
    pub window_samples: usize,
    /// Target samples.
    pub target_samples: usize,
    /// Time of the target samples.
    pub stack_time: TimeDelta,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// Status.
    pub status: ChainStatus,
    /// Quality notes.
    pub flags: Flags,
    /// Frames root → leaf.
    pub chain: Vec<ChainFrame>,
    /// Where the task came from.
    pub task_source: TaskSource,
    /// The LoAF entry point, for field data with LoAF entries.
    pub loaf: Option<Box<LoafScript>>,
    /// What the enrichment stage added (page, per-frame notes).
    pub notes: crate::enrich::TaskNotes,
    /// The input's trace id, the same for the same bytes anywhere (docs/SCALE-OUT.md,
    /// `trace_id`; `None` for a stream without one: standard input, a pipe of plain
    /// JSON, and when `Settings::trace_ids` is off); shared by the rows of one file.
    pub trace_id: Option<Arc<str>>,
    /// What started the task (trace rows; `None` for field data, whose LoAF entry point
    /// says it).
    pub trigger: Option<crate::chain::trigger::Trigger>,
    /// The runner-up groups of the window, when collected
    /// ([`crate::chain::ChainConfig::collect_alternatives`]).
    pub alternatives: Option<Vec<crate::chain::Alternative>>,
    /// The window's samples over time, when collected
    /// ([`crate::chain::ChainConfig::collect_timeline`]).
    pub timeline: Option<Box<crate::chain::Timeline>>,
    /// The task's time by category and its forced layout (trace rows; `None` for field
    /// data).
    pub breakdown: Option<Box<crate::chain::breakdown::Breakdown>>,
}

impl ReportRow {
    /// A row for `c` found in `file`.
    pub fn new(
        file: &Arc<str>,
        thread_name: &Arc<str>,
        first_ts: Timestamp,
        c: TaskChain,
    ) -> ReportRow {
        ReportRow {
            file: Arc::clone(file),
            thread: c.task.thread,
            thread_name: Arc::clone(thread_name),
            task_ts: c.task.ts,
            task_start: c.task.ts.since(first_ts),
            task_dur: c.task.dur,
            window_samples: c.window_samples,
            target_samples: c.target_samples,
            stack_time: c.stack_time,
            confidence: c.confidence,
            status: c.status,
            flags: c.flags,
            chain: c.chain,
            task_source: TaskSource::Trace,
            loaf: None,
            notes: Default::default(),
            trace_id: None,
            trigger: c.trigger,
            alternatives: c.alternatives,
            timeline: c.timeline,
            breakdown: c.breakdown.map(Box::new),
        }
    }
    /// The leaf frame (last of the chain).
    pub fn leaf(&self) -> Option<&ChainFrame> {
        self.chain.last()
    }
    /// The sort key of docs/METHOD.md §3: (file, pid, tid, task_ts_us).
    pub fn sort_key(&self) -> (&str, ThreadKey, Timestamp) {
        (&self.file, self.thread, self.task_ts)
    }
}

/// `part ÷ whole` in [0, 1] (0 for an empty whole): a share of a task's time.
pub fn share_of(part: TimeDelta, whole: TimeDelta) -> f64 {
    if whole.as_nanos() > 0 {
        (part.as_nanos() as f64 / whole.as_nanos() as f64).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// `task_ts_us` text: whole µs, or with 3 decimals when fractional.
pub fn micros_text(t: Timestamp) -> String {
    let mut s = String::new();
    fmt_micros(t.as_nanos(), &mut s).expect("write to String");
    s
}

/// Milliseconds with 3 decimals.
pub fn millis_text(d: TimeDelta) -> String {
    let mut s = String::new();
    fmt_millis3(d.as_nanos(), &mut s).expect("write to String");
    s
}

/// Milliseconds rounded to 3 decimals, as a number (JSON).
pub fn millis_number(d: TimeDelta) -> f64 {
    (d.as_nanos() as f64 / 1000.0).round() / 1000.0
}

/// Milliseconds rounded to whole µs half away from zero, exactly as [`millis_text`]
/// rounds them: the nearest `f64` to the text's value (Parquet).
pub fn millis_exact(d: TimeDelta) -> f64 {
    let ns = d.as_nanos();
    let v = ((ns.unsigned_abs() + 500) / 1000) as f64 / 1000.0;
    if ns < 0 { -v } else { v }
}

pub use crate::chain::round_confidence as confidence_number;

/// A frame as `name (url:line:column)` (see [`ChainFrame::text`]).
pub fn frame_text(f: &ChainFrame) -> String {
    f.text()
}

/// The chain column: frames root → leaf joined by ` > `.
pub fn chain_text(chain: &[ChainFrame]) -> String {
    let mut s = String::new();
    write_chain_text(chain, &mut s);
    s
}

/// Appends [`chain_text`] to `out`.
pub fn write_chain_text(chain: &[ChainFrame], out: &mut String) {
    for (i, f) in chain.iter().enumerate() {
        if i > 0 {
            out.push_str(" > ");
        }
        f.write_text(out);
    }
}

/// A failed file as reports list it. JSON: `{"file", "error"}` with [`FileError::reason`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    /// The input.
    pub file: String,
    /// The whole message, as stderr shows it (`file: reason`).
    pub error: String,
    /// What is wrong, without the leading `file: ` ([`crate::error::Error::reason`]).
    pub reason: String,
    /// A retry may succeed (an I/O error of the device, not of the file: see
    /// [`crate::error::Error::is_retryable`]).
    pub retryable: bool,
}

impl FileError {
    /// The file `e` is about, as reports list it.
    pub fn of(e: &crate::error::Error) -> FileError {
        FileError {
            file: e.path().display().to_string(),
            error: e.to_string(),
            reason: e.reason(),
            retryable: e.is_retryable(),
        }
    }

    /// A file that failed for `reason` (a stream broken off, an internal error): not
    /// retryable.
    pub fn new(file: &str, reason: String) -> FileError {
        FileError {
            file: file.to_string(),
            error: format!("{file}: {reason}"),
            reason,
            retryable: false,
        }
    }

    /// [`FileError::reason`].
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl serde::Serialize for FileError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("FileError", 2)?;
        st.serialize_field("file", &self.file)?;
        st.serialize_field("error", self.reason())?;
        st.end()
    }
}

/// The result of one file.
#[derive(Debug, Default)]
pub struct FileReport {
    /// The input's name as reported.
    pub file: String,
    /// The input's trace id, the same for the same bytes anywhere (docs/SCALE-OUT.md,
    /// `trace_id`; `None` for standard input or a pipe of plain JSON, and when
    /// `Settings::trace_ids` is off).
    pub trace_id: Option<String>,
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
    /// The page's interactions with their phases' chains, in `ts` order.
    pub interactions: Vec<interactions::InteractionRow>,
    /// One row per long animation frame (sorted by pid, tid, ts).
    pub frames: Vec<frames::FrameRow>,
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
    /// Blocking time of the whole trace: the sum over top-level tasks longer than 50 ms of
    /// `dur − 50 ms` (Lighthouse's blocking time of a task, whatever `--threshold-ms` is,
    /// summed from the trace's start to its end, not Lighthouse's FCP-to-TTI span).
    pub blocking_time: TimeDelta,
    /// Total blocking time from the main frame's first contentful paint to the trace's end
    /// (docs/METHOD.md §2.3); `None` when the trace has no `firstContentfulPaint` mark of
    /// its main frame.
    pub blocking_time_from_fcp: Option<TimeDelta>,
    /// The longest top-level task.
    pub max_task: TimeDelta,
    /// Sum of the durations of the rows with status `ok`.
    pub attributed_time: TimeDelta,
    /// Profiles in the trace.
    pub profiles: usize,
    /// Samples in those profiles.
    pub samples: u64,
    /// Frames with a script URL and line in the long tasks' chains.
    pub frames: u32,
    /// Of those, frames a source map gave an original position.
    pub frames_symbolicated: u32,
    /// Interactions (Event Timing, docs/METHOD.md §2.8).
    pub interactions: usize,
    /// Interaction to Next Paint: the longest duration among the INP interactions of the
    /// trace's navigations (one navigation: its INP); `None` without interactions.
    pub inp: Option<TimeDelta>,
    /// Animation frames (`AnimationFrame` events) longer than the threshold on the threads
    /// in scope (docs/METHOD.md §2.9).
    pub long_animation_frames: usize,
    /// Long tasks on threads outside `--scope` (not in the report).
    pub long_tasks_outside_scope: u64,
}

impl FileStats {
    /// The share of long-task time in rows with status `ok`, rounded to 3 decimals;
    /// `None` without long tasks.
    pub fn attributed_share(&self) -> Option<f64> {
        (self.long_task_time.as_nanos() > 0).then(|| {
            crate::chain::round_confidence(
                self.attributed_time.as_nanos() as f64 / self.long_task_time.as_nanos() as f64,
            )
        })
    }

    /// The share of the chains' frames that a source map named, rounded to 3 decimals;
    /// `None` without frames.
    pub fn symbolicated_share(&self) -> Option<f64> {
        (self.frames > 0).then(|| {
            crate::chain::round_confidence(self.frames_symbolicated as f64 / self.frames as f64)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str, url: &str, line: Option<u32>, col: Option<u32>) -> ChainFrame {
        ChainFrame {
            function: name.into(),
            url: url.into(),
            line,
            column: col,
            recursion_depth: 1,
            ..ChainFrame::default()
        }
    }

    #[test]
    fn frames_print_like_devtools_locations() {
        assert_eq!(
            frame_text(&f("busyLoop", "http://x/a.js", Some(12), Some(3))),
            "busyLoop (http://x/a.js:12:3)"
        );
        assert_eq!(frame_text(&f("(program)", "", None, None)), "(program)");
        assert_eq!(frame_text(&f("g", "", Some(2), Some(5))), "g (2:5)");
        // A url without a line, and a line without a column.
        assert_eq!(
            frame_text(&f("h", "http://x/b.js", None, None)),
            "h (http://x/b.js)"
        );
        assert_eq!(
            frame_text(&f("h", "http://x/b.js", Some(7), None)),
            "h (http://x/b.js:7)"
        );
        assert_eq!(frame_text(&f("k", "", Some(4), None)), "k (4)");
        assert_eq!(
            chain_text(&[f("a", "u", Some(1), Some(1)), f("b", "", None, None)]),
            "a (u:1:1) > b"
        );
    }

    #[test]
    fn millis_number_rounds_to_microseconds() {
        assert_eq!(millis_number(TimeDelta::from_nanos(120_345_678)), 120.346);
    }
}

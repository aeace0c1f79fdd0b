//! Long animation frames as reported (`--animation-frames FILE`): one row per frame longer
//! than `--threshold-ms` (docs/METHOD.md §2.9), with its timing, script entries, the chain of
//! its span (§1, as for a task) and its time by category (§2.10). CSV flattens the script
//! entries to their count and the longest one (Parquet: the CSV's columns, typed); JSON
//! and NDJSON list them.

use std::io::Write;
use std::sync::Arc;

use arrow_schema::{DataType, SchemaRef};
use serde::Serialize;

use super::{confidence_number, millis_number, write_chain_text};
use crate::chain::breakdown::Breakdown;
use crate::chain::{ChainFrame, ChainStatus, Flags};
use crate::scan::records::ScriptTimingInfo;
use crate::time::{TimeDelta, Timestamp, fmt_millis3};
use crate::vocab::ThreadKey;

/// One script entry of a frame as reported.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameScriptRow {
    /// From the frame's start.
    pub start: TimeDelta,
    /// Duration.
    pub dur: TimeDelta,
    /// A compile entry (`::Script::Compile`) rather than an execution.
    pub compile: bool,
    /// The trace's `animation_frame_script_timing_info`.
    pub info: ScriptTimingInfo,
}

impl FrameScriptRow {
    /// The LoAF API's `invoker` spelling: `BUTTON#pay.onclick` style, `class.property`
    /// (either alone when the other is empty).
    pub fn invoker(&self) -> String {
        let (class, property) = (&self.info.class_like_name, &self.info.property_like_name);
        match (class.is_empty(), property.is_empty()) {
            (false, false) => format!("{class}.{property}"),
            (false, true) => class.clone(),
            _ => property.clone(),
        }
    }
}

/// One long animation frame as reported.
#[derive(Clone, Debug)]
pub struct FrameRow {
    /// The input as given.
    pub file: Arc<str>,
    /// The thread.
    pub thread: ThreadKey,
    /// Its name.
    pub thread_name: Arc<str>,
    /// Start on the trace clock.
    pub ts: Timestamp,
    /// Start − the trace's first non-metadata `ts`.
    pub start: TimeDelta,
    /// Duration (end event − begin event).
    pub dur: TimeDelta,
    /// `blocking_duration_ms` as the trace writes it.
    pub blocking_ms: Option<f64>,
    /// `num_scripts` as the trace writes it.
    pub num_scripts: Option<i64>,
    /// The rendering update's start, from the frame's start.
    pub render_start: Option<TimeDelta>,
    /// Style and layout's start in the rendering update, from the frame's start.
    pub style_layout_start: Option<TimeDelta>,
    /// Script entries in time order.
    pub scripts: Vec<FrameScriptRow>,
    /// Samples in the frame's span.
    pub window_samples: usize,
    /// Samples of the chosen stack.
    pub target_samples: usize,
    /// Their time.
    pub stack_time: TimeDelta,
    /// `stack_time / dur`.
    pub confidence: f64,
    /// The chain's status (§1).
    pub status: ChainStatus,
    /// Quality notes.
    pub flags: Flags,
    /// Frames root → leaf.
    pub chain: Vec<ChainFrame>,
    /// The frame's time by category and its forced layout.
    pub breakdown: Breakdown,
    /// The interactions (`interactionId`) whose span overlaps the frame, filled by the
    /// interactions stage when it runs.
    pub interactions: Vec<i64>,
}

impl FrameRow {
    /// The longest script entry (ties: the first).
    pub fn longest_script(&self) -> Option<&FrameScriptRow> {
        self.scripts.iter().rev().max_by_key(|s| s.dur)
    }
}

/// The columns of `--animation-frames` CSV before the breakdown's.
const HEAD_COLUMNS: [&str; 25] = [
    "file",
    "pid",
    "tid",
    "thread_name",
    "frame_ts_us",
    "frame_start_ms",
    "duration_ms",
    "blocking_duration_ms",
    "num_scripts",
    "render_start_ms",
    "style_layout_start_ms",
    "script_entries",
    "top_script_invoker_type",
    "top_script_invoker",
    "top_script_function",
    "top_script_url",
    "top_script_ms",
    "window_samples",
    "target_samples",
    "stack_ms",
    "confidence",
    "status",
    "flags",
    "leaf_function",
    "chain",
];

/// The CSV header of `--animation-frames`: the frame's columns, the breakdown's
/// (`scripting_ms` … `idle_ms`, `forced_layout_ms`, `forced_layout_function`), and
/// `interactions` (the `interactionId`s of the interactions the frame overlaps,
/// `;`-joined).
pub fn frame_columns() -> Vec<&'static str> {
    HEAD_COLUMNS
        .into_iter()
        .chain(super::breakdown::csv_columns(true))
        .chain(["interactions"])
        .collect()
}

fn ms_text(t: TimeDelta) -> String {
    let mut s = String::new();
    let _ = fmt_millis3(t.as_nanos(), &mut s);
    s
}

fn opt_text<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// One frame's CSV fields, in [`frame_columns`]' order.
pub fn csv_record(r: &FrameRow) -> Vec<String> {
    let top = r.longest_script();
    let mut chain = String::new();
    write_chain_text(&r.chain, &mut chain);
    let mut record: Vec<String> = vec![
        r.file.to_string(),
        r.thread.pid.0.to_string(),
        r.thread.tid.0.to_string(),
        r.thread_name.to_string(),
        micros_text(r.ts),
        ms_text(r.start),
        ms_text(r.dur),
        opt_text(r.blocking_ms),
        opt_text(r.num_scripts),
        r.render_start.map(ms_text).unwrap_or_default(),
        r.style_layout_start.map(ms_text).unwrap_or_default(),
        r.scripts.len().to_string(),
        top.map(|s| s.info.invoker_type.clone()).unwrap_or_default(),
        top.map(FrameScriptRow::invoker).unwrap_or_default(),
        top.map(|s| s.info.function.clone()).unwrap_or_default(),
        top.map(|s| s.info.source_url.clone()).unwrap_or_default(),
        top.map(|s| ms_text(s.dur)).unwrap_or_default(),
        r.window_samples.to_string(),
        r.target_samples.to_string(),
        ms_text(r.stack_time),
        format!("{}", confidence_number(r.confidence)),
        r.status.as_str().to_string(),
        r.flags.to_text(),
        r.chain
            .last()
            .map(|f| f.shown_function().to_string())
            .unwrap_or_default(),
        chain,
    ];
    super::breakdown::csv_fields(Some(&r.breakdown), true, &mut record);
    let ids: Vec<String> = r.interactions.iter().map(i64::to_string).collect();
    record.push(ids.join(";"));
    record
}

/// Writes `rows` as CSV with [`frame_columns`] (the header first when `header`).
pub fn write_csv<W: Write>(rows: &[FrameRow], out: W, header: bool) -> std::io::Result<W> {
    let mut w = ::csv::Writer::from_writer(out);
    let io = |e: ::csv::Error| std::io::Error::other(e.to_string());
    if header {
        w.write_record(frame_columns()).map_err(io)?;
    }
    for r in rows {
        w.write_record(csv_record(r)).map_err(io)?;
    }
    w.into_inner().map_err(|e| e.into_error())
}

/// `ts` in µs as the task rows write `task_ts_us`: an integer when whole.
fn micros_text(ts: Timestamp) -> String {
    let ns = ts.as_nanos();
    if ns % 1000 == 0 {
        (ns / 1000).to_string()
    } else {
        format!("{}", ns as f64 / 1000.0)
    }
}

#[derive(Serialize)]
struct ScriptJson<'a> {
    start_ms: f64,
    duration_ms: f64,
    compile: bool,
    invoker_type: &'a str,
    invoker: String,
    function: Option<&'a str>,
    source_url: Option<&'a str>,
    char_position: Option<i64>,
    style_duration_ms: Option<f64>,
    layout_duration_ms: Option<f64>,
    pause_duration_ms: Option<f64>,
}

#[derive(Serialize)]
struct ChainFrameJson<'a> {
    function: &'a str,
    url: Option<&'a str>,
    line: Option<u32>,
    column: Option<u32>,
}

#[derive(Serialize)]
struct FrameJson<'a> {
    file: &'a str,
    pid: i64,
    tid: i64,
    thread_name: &'a str,
    frame_ts_us: serde_json::Number,
    frame_start_ms: f64,
    duration_ms: f64,
    blocking_duration_ms: Option<f64>,
    num_scripts: Option<i64>,
    render_start_ms: Option<f64>,
    style_layout_start_ms: Option<f64>,
    scripts: Vec<ScriptJson<'a>>,
    window_samples: usize,
    target_samples: usize,
    stack_ms: f64,
    confidence: f64,
    status: &'a str,
    flags: Vec<&'static str>,
    chain: Vec<ChainFrameJson<'a>>,
    #[serde(flatten)]
    breakdown: super::breakdown::BreakdownJson<'a>,
    #[serde(skip_serializing_if = "<[i64]>::is_empty")]
    interactions: &'a [i64],
}

/// A frame as its JSON object (the keys of `--animation-frames FILE.json`, docs/METHOD.md §3).
pub fn frame_json(r: &FrameRow) -> impl Serialize + '_ {
    let ns = r.ts.as_nanos();
    fn some(s: &str) -> Option<&str> {
        (!s.is_empty()).then_some(s)
    }
    FrameJson {
        file: &r.file,
        pid: r.thread.pid.0,
        tid: r.thread.tid.0,
        thread_name: &r.thread_name,
        frame_ts_us: if ns % 1000 == 0 {
            serde_json::Number::from(ns / 1000)
        } else {
            serde_json::Number::from_f64(ns as f64 / 1000.0).unwrap_or_else(|| 0.into())
        },
        frame_start_ms: millis_number(r.start),
        duration_ms: millis_number(r.dur),
        blocking_duration_ms: r.blocking_ms,
        num_scripts: r.num_scripts,
        render_start_ms: r.render_start.map(millis_number),
        style_layout_start_ms: r.style_layout_start.map(millis_number),
        scripts: r
            .scripts
            .iter()
            .map(|s| ScriptJson {
                start_ms: millis_number(s.start),
                duration_ms: millis_number(s.dur),
                compile: s.compile,
                invoker_type: &s.info.invoker_type,
                invoker: s.invoker(),
                function: some(&s.info.function),
                source_url: some(&s.info.source_url),
                char_position: s.info.char_position,
                style_duration_ms: s.info.style_duration_ms,
                layout_duration_ms: s.info.layout_duration_ms,
                pause_duration_ms: s.info.pause_duration_ms,
            })
            .collect(),
        window_samples: r.window_samples,
        target_samples: r.target_samples,
        stack_ms: millis_number(r.stack_time),
        confidence: confidence_number(r.confidence),
        status: r.status.as_str(),
        flags: r.flags.names().collect(),
        chain: r
            .chain
            .iter()
            .map(|f| ChainFrameJson {
                function: f.shown_function(),
                url: some(&f.url),
                line: f.line,
                column: f.column,
            })
            .collect(),
        breakdown: super::breakdown::BreakdownJson::new(Some(&r.breakdown), true),
        interactions: &r.interactions,
    }
}

/// How `--animation-frames` is written, by the file name's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FramesFormat {
    /// Any other name: CSV with [`frame_columns`].
    Csv,
    /// `.json`: `{"animation_frames": [...]}`.
    Json,
    /// `.ndjson`, `.jsonl`: one frame object per line.
    Ndjson,
    /// `.parquet`: the CSV's columns, typed ([`frames_schema`]).
    Parquet,
}

impl FramesFormat {
    /// The format of `path` by its extension (any case).
    pub fn for_path(path: &std::path::Path) -> FramesFormat {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "json" => FramesFormat::Json,
            "ndjson" | "jsonl" => FramesFormat::Ndjson,
            "parquet" => FramesFormat::Parquet,
            _ => FramesFormat::Csv,
        }
    }
}

/// The version of the frame table's columns.
pub const FRAMES_SCHEMA: &str = "animation_frames/1";

/// The frame table's schema: the CSV's columns typed, ids, counts and sample counts
/// `Int64`, times and confidence `Float64`, the rest `Utf8`.
pub fn frames_schema() -> SchemaRef {
    super::parquet::text_schema(&frame_columns(), |name| {
        let ints = ["pid", "tid", "num_scripts", "script_entries"];
        if ints.contains(&name) || name.ends_with("_samples") {
            DataType::Int64
        } else if name.ends_with("_ms") || name.ends_with("_us") || name == "confidence" {
            DataType::Float64
        } else {
            DataType::Utf8
        }
    })
}

/// `--animation-frames FILE.parquet`: the CSV's rows, typed, a batch per input file.
pub struct FramesParquet<W: Write> {
    table: super::parquet::TableWriter<W>,
    schema: SchemaRef,
}

impl<W: Write> FramesParquet<W> {
    /// Starts the file.
    pub fn new(out: W) -> std::io::Result<Self> {
        let schema = frames_schema();
        Ok(FramesParquet {
            table: super::parquet::TableWriter::new(out, Arc::clone(&schema), FRAMES_SCHEMA)?,
            schema,
        })
    }

    /// Writes one file's frames as a batch (nothing for none).
    pub fn file(&mut self, rows: &[FrameRow]) -> std::io::Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let fields: Vec<Vec<String>> = rows.iter().map(csv_record).collect();
        let batch = super::parquet::text_batch(&self.schema, &fields)?;
        self.table.write(&batch)
    }

    /// Writes the footer and returns the writer.
    pub fn finish(self) -> std::io::Result<W> {
        self.table.finish()
    }
}

//! Interactions as reported (`--interactions FILE`, docs/METHOD.md §3.1): one
//! [`InteractionRow`] per interaction, its three phases each with the chain, samples,
//! confidence and status of a task row; written as JSON (`{"interactions": [...]}`),
//! NDJSON (one interaction a line) or CSV (a phase's keys flattened as
//! `processing_chain`, `processing_confidence`, ...).

use std::fmt::Write as _;
use std::io::Write;
use std::sync::Arc;

use arrow_schema::{DataType, SchemaRef};
use serde::Serialize;

use super::json::{Frame, party_text, vendor_text};
use super::{ReportRow, confidence_number, millis_number, write_chain_text};
use crate::chain::phases::Phase;
use crate::interactions::Interaction;
use crate::time::{TimeDelta, Timestamp, fmt_micros, fmt_millis3};

/// A long task that overlaps an interaction's input delay: the work the input waited for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverlappingTask {
    /// The task's start on the trace clock.
    pub ts: Timestamp,
    /// Its duration.
    pub dur: TimeDelta,
    /// The part of it inside the input delay.
    pub overlap: TimeDelta,
}

/// One phase of an interaction: its window resolved as a long task is. `row` holds the
/// window (`task_ts`, `task_dur`), the chain, samples, confidence, status, flags, trigger
/// and notes exactly as a task row would.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseRow {
    /// Which phase.
    pub phase: Phase,
    /// The phase as a task row.
    pub row: ReportRow,
    /// Samples of the window whose leaf is JavaScript (0: no JavaScript ran).
    pub js_samples: usize,
    /// For the input delay: the long tasks of the thread that overlap it, in time order.
    pub long_tasks: Vec<OverlappingTask>,
}

/// One interaction as reported.
#[derive(Clone, Debug, PartialEq)]
pub struct InteractionRow {
    /// The input as given; shared by the rows of one file.
    pub file: Arc<str>,
    /// The interaction, its phases' times and whether it is the INP interaction.
    pub interaction: Interaction,
    /// The interaction's start − the trace's first `ts`.
    pub start: TimeDelta,
    /// The three phases, in time order.
    pub phases: Vec<PhaseRow>,
    /// The start (`ts`) of each long animation frame of the thread the interaction
    /// overlaps (input → next paint), in time order.
    pub animation_frames: Vec<Timestamp>,
}

impl InteractionRow {
    /// The phase `p`.
    pub fn phase(&self, p: Phase) -> Option<&PhaseRow> {
        self.phases.iter().find(|r| r.phase == p)
    }

    /// The phase with the longest window (the first on ties).
    pub fn longest_phase(&self) -> Option<&PhaseRow> {
        self.phases
            .iter()
            .fold(None, |best: Option<&PhaseRow>, p| match best {
                Some(b) if b.row.task_dur >= p.row.task_dur => Some(b),
                _ => Some(p),
            })
    }
}

/// µs on the trace clock as a JSON number: whole µs as an integer, else a fraction.
fn micros_number(t: Timestamp) -> serde_json::Number {
    let ns = t.as_nanos();
    if ns % 1000 == 0 {
        serde_json::Number::from(ns / 1000)
    } else {
        serde_json::Number::from_f64(ns as f64 / 1000.0).unwrap_or_else(|| 0.into())
    }
}

#[derive(Serialize)]
struct LongTaskJson {
    start_ts_us: serde_json::Number,
    duration_ms: f64,
    overlap_ms: f64,
}

#[derive(Serialize)]
struct PhaseJson<'a> {
    chain: Vec<Frame<'a>>,
    samples: usize,
    target_samples: usize,
    js_samples: usize,
    stack_ms: f64,
    confidence: f64,
    status: &'a str,
    flags: Vec<&'static str>,
    start_ts_us: serde_json::Number,
    duration_ms: f64,
    leaf_party: Option<&'static str>,
    leaf_vendor: Option<&'a str>,
    entry_party: Option<&'static str>,
    entry_vendor: Option<&'a str>,
    trigger: Option<&'a str>,
    trigger_detail: Option<&'a str>,
    #[serde(flatten)]
    breakdown: super::breakdown::BreakdownJson<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    long_tasks: Option<Vec<LongTaskJson>>,
}

fn phase_json(p: &PhaseRow) -> PhaseJson<'_> {
    let r = &p.row;
    let parties = r.notes.parties.as_ref();
    let task_party = parties.and_then(|p| p.task.as_ref());
    let entry_party = parties.and_then(|p| p.entry.as_ref());
    PhaseJson {
        chain: r
            .chain
            .iter()
            .enumerate()
            .map(|(i, f)| Frame::new(f, r.notes.frame(i)))
            .collect(),
        samples: r.window_samples,
        target_samples: r.target_samples,
        js_samples: p.js_samples,
        stack_ms: millis_number(r.stack_time),
        confidence: confidence_number(r.confidence),
        status: r.status.as_str(),
        flags: r.flags.names().collect(),
        start_ts_us: micros_number(r.task_ts),
        duration_ms: millis_number(r.task_dur),
        leaf_party: party_text(task_party),
        leaf_vendor: vendor_text(task_party),
        entry_party: party_text(entry_party),
        entry_vendor: vendor_text(entry_party),
        trigger: r.trigger.as_ref().map(|t| t.kind.as_str()),
        trigger_detail: r
            .trigger
            .as_ref()
            .map(|t| t.detail.as_str())
            .filter(|d| !d.is_empty()),
        breakdown: super::breakdown::BreakdownJson::new(r.breakdown.as_deref(), true),
        long_tasks: (p.phase == Phase::InputDelay).then(|| {
            p.long_tasks
                .iter()
                .map(|t| LongTaskJson {
                    start_ts_us: micros_number(t.ts),
                    duration_ms: millis_number(t.dur),
                    overlap_ms: millis_number(t.overlap),
                })
                .collect()
        }),
    }
}

#[derive(Serialize)]
struct PhasesJson<'a> {
    input_delay: Option<PhaseJson<'a>>,
    processing: Option<PhaseJson<'a>>,
    presentation_delay: Option<PhaseJson<'a>>,
}

#[derive(Serialize)]
struct InteractionJson<'a> {
    file: &'a str,
    pid: i64,
    tid: i64,
    interaction_id: i64,
    #[serde(rename = "type")]
    category: &'static str,
    event_type: &'a str,
    event_types: &'a [String],
    start_ts_us: serde_json::Number,
    start_ms: f64,
    duration_ms: f64,
    input_delay_ms: f64,
    processing_ms: f64,
    presentation_delay_ms: f64,
    is_inp: bool,
    longest_phase: Option<&'static str>,
    phases: PhasesJson<'a>,
    animation_frames: Vec<serde_json::Number>,
}

fn interaction_json(r: &InteractionRow) -> InteractionJson<'_> {
    let i = &r.interaction;
    let phase = |p| r.phase(p).map(phase_json);
    InteractionJson {
        file: &r.file,
        pid: i.event.thread.pid.0,
        tid: i.event.thread.tid.0,
        interaction_id: i.event.interaction_id,
        category: i.category.as_str(),
        event_type: &i.event.event_type,
        event_types: &i.event_types,
        start_ts_us: micros_number(i.event.ts),
        start_ms: millis_number(r.start),
        duration_ms: millis_number(i.duration()),
        input_delay_ms: millis_number(i.input_delay()),
        processing_ms: millis_number(i.processing()),
        presentation_delay_ms: millis_number(i.presentation_delay()),
        is_inp: i.is_inp,
        longest_phase: r.longest_phase().map(|p| p.phase.as_str()),
        phases: PhasesJson {
            input_delay: phase(Phase::InputDelay),
            processing: phase(Phase::Processing),
            presentation_delay: phase(Phase::PresentationDelay),
        },
        animation_frames: r
            .animation_frames
            .iter()
            .map(|&t| micros_number(t))
            .collect(),
    }
}

/// Writes `{"taskchain_version", "interactions": [...]}` an interaction at a time.
pub struct InteractionJsonWriter<W: Write> {
    out: W,
    first: bool,
}

impl<W: Write> InteractionJsonWriter<W> {
    /// Starts the document.
    pub fn new(mut out: W) -> std::io::Result<Self> {
        write!(
            out,
            "{{\"taskchain_version\":\"{}\",\"interactions\":[",
            super::json::TASKCHAIN_VERSION
        )?;
        Ok(InteractionJsonWriter { out, first: true })
    }

    /// Writes one interaction object.
    pub fn interaction(&mut self, r: &InteractionRow) -> std::io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut self.out, &interaction_json(r))?;
        Ok(())
    }

    /// Ends the document with a newline.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.write_all(b"]}\n")?;
        Ok(self.out)
    }
}

/// One interaction as its JSON object (the HTML report's data).
#[cfg(feature = "cli")]
pub(crate) fn interaction_value(r: &InteractionRow) -> serde_json::Value {
    serde_json::to_value(interaction_json(r)).unwrap_or_default()
}

/// Writes one interaction as an NDJSON line.
pub fn write_interaction_line(out: &mut impl Write, r: &InteractionRow) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, &interaction_json(r))?;
    out.write_all(b"\n")
}

/// The columns of one phase in CSV, after the phase's key and `_`, before the breakdown's
/// (`processing_scripting_ms` … `processing_forced_layout_function`).
const PHASE_COLUMNS: [&str; 11] = [
    "chain",
    "leaf_function",
    "leaf_url",
    "samples",
    "target_samples",
    "js_samples",
    "stack_ms",
    "confidence",
    "status",
    "trigger",
    "trigger_detail",
];

/// The interaction CSV's columns: the interaction's, then the phase columns (`chain`,
/// `leaf_function`, …, the breakdown's `scripting_ms` … `forced_layout_function`) for each
/// phase (`input_delay_chain`, ..., `presentation_delay_forced_layout_function`), then the
/// long tasks overlapping the input delay (`ts+ms;…`) and the long animation frames the
/// interaction overlaps (`animation_frames`: their `ts`, `;`-joined).
pub fn csv_columns() -> Vec<String> {
    let mut c: Vec<String> = [
        "file",
        "pid",
        "tid",
        "interaction_id",
        "type",
        "event_type",
        "event_types",
        "start_ts_us",
        "start_ms",
        "duration_ms",
        "input_delay_ms",
        "processing_ms",
        "presentation_delay_ms",
        "is_inp",
        "longest_phase",
    ]
    .map(String::from)
    .into();
    for p in Phase::ALL {
        for k in PHASE_COLUMNS
            .into_iter()
            .chain(super::breakdown::csv_columns(true))
        {
            c.push(format!("{}_{k}", p.as_str()));
        }
    }
    c.push("input_delay_long_tasks".into());
    c.push("animation_frames".into());
    c
}

/// Writes interactions as CSV.
pub struct InteractionCsvWriter<W: Write> {
    w: ::csv::Writer<W>,
}

impl<W: Write> InteractionCsvWriter<W> {
    /// Starts the document: writes the header.
    pub fn new(out: W) -> std::io::Result<Self> {
        let mut w = ::csv::WriterBuilder::new().from_writer(out);
        w.write_record(csv_columns())
            .map_err(std::io::Error::other)?;
        Ok(InteractionCsvWriter { w })
    }

    /// Writes one interaction.
    pub fn interaction(&mut self, r: &InteractionRow) -> std::io::Result<()> {
        let fields = csv_fields(r);
        self.w.write_record(&fields).map_err(std::io::Error::other)
    }

    /// Flushes and returns the writer.
    pub fn finish(self) -> std::io::Result<W> {
        self.w.into_inner().map_err(|e| e.into_error())
    }
}

fn ms(d: TimeDelta) -> String {
    let mut s = String::new();
    let _ = fmt_millis3(d.as_nanos(), &mut s);
    s
}

/// One interaction's CSV fields, in [`csv_columns`] order.
pub fn csv_fields(r: &InteractionRow) -> Vec<String> {
    let i = &r.interaction;
    let mut ts = String::new();
    let _ = fmt_micros(i.event.ts.as_nanos(), &mut ts);
    let mut f = vec![
        r.file.to_string(),
        i.event.thread.pid.0.to_string(),
        i.event.thread.tid.0.to_string(),
        i.event.interaction_id.to_string(),
        i.category.as_str().to_string(),
        i.event.event_type.clone(),
        i.event_types.join(";"),
        ts,
        ms(r.start),
        ms(i.duration()),
        ms(i.input_delay()),
        ms(i.processing()),
        ms(i.presentation_delay()),
        i.is_inp.to_string(),
        r.longest_phase()
            .map_or("", |p| p.phase.as_str())
            .to_string(),
    ];
    for p in Phase::ALL {
        match r.phase(p) {
            Some(p) => {
                let row = &p.row;
                let mut chain = String::new();
                write_chain_text(&row.chain, &mut chain);
                let leaf = row.leaf();
                let trigger = row.trigger.as_ref();
                f.extend([
                    chain,
                    leaf.map_or("", |l| l.function.as_str()).to_string(),
                    leaf.map_or("", |l| l.url.as_str()).to_string(),
                    row.window_samples.to_string(),
                    row.target_samples.to_string(),
                    p.js_samples.to_string(),
                    ms(row.stack_time),
                    format!("{:.3}", confidence_number(row.confidence)),
                    row.status.as_str().to_string(),
                    trigger.map_or("", |t| t.kind.as_str()).to_string(),
                    trigger.map_or("", |t| t.detail.as_str()).to_string(),
                ]);
                super::breakdown::csv_fields(row.breakdown.as_deref(), true, &mut f);
            }
            None => f.extend(std::iter::repeat_n(
                String::new(),
                PHASE_COLUMNS.len() + super::breakdown::csv_columns(true).count(),
            )),
        }
    }
    let mut tasks = String::new();
    if let Some(p) = r.phase(Phase::InputDelay) {
        for (k, t) in p.long_tasks.iter().enumerate() {
            if k > 0 {
                tasks.push(';');
            }
            let _ = fmt_micros(t.ts.as_nanos(), &mut tasks);
            let _ = write!(tasks, "+{}", ms(t.dur));
        }
    }
    f.push(tasks);
    let mut frames = String::new();
    for (k, &t) in r.animation_frames.iter().enumerate() {
        if k > 0 {
            frames.push(';');
        }
        let _ = fmt_micros(t.as_nanos(), &mut frames);
    }
    f.push(frames);
    f
}

/// `--interactions FILE`'s writer, its format chosen by the file's extension.
pub enum InteractionWriter<W: Write> {
    /// `.json`: `{"taskchain_version", "interactions": [...]}`.
    Json(InteractionJsonWriter<W>),
    /// `.ndjson` / `.jsonl`: one interaction a line.
    Ndjson(W),
    /// `.parquet`: the CSV's columns, typed.
    Parquet(Box<InteractionParquet<W>>),
    /// Anything else: CSV.
    Csv(Box<InteractionCsvWriter<W>>),
}

impl<W: Write> InteractionWriter<W> {
    /// Starts the output for `path` (JSON, NDJSON, Parquet or CSV by its extension, any
    /// case; standard output `-` is CSV).
    pub fn for_path(path: &std::path::Path, out: W) -> std::io::Result<Self> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        Ok(match ext.as_str() {
            "json" => InteractionWriter::Json(InteractionJsonWriter::new(out)?),
            "ndjson" | "jsonl" => InteractionWriter::Ndjson(out),
            "parquet" => InteractionWriter::Parquet(Box::new(InteractionParquet::new(out)?)),
            _ => InteractionWriter::Csv(Box::new(InteractionCsvWriter::new(out)?)),
        })
    }

    /// Writes one file's interactions.
    pub fn file(&mut self, rows: &[InteractionRow]) -> std::io::Result<()> {
        match self {
            InteractionWriter::Json(w) => rows.iter().try_for_each(|r| w.interaction(r)),
            InteractionWriter::Ndjson(w) => {
                rows.iter().try_for_each(|r| write_interaction_line(w, r))
            }
            InteractionWriter::Parquet(w) => w.file(rows),
            InteractionWriter::Csv(w) => rows.iter().try_for_each(|r| w.interaction(r)),
        }
    }

    /// Ends the output and returns the writer.
    pub fn finish(self) -> std::io::Result<W> {
        match self {
            InteractionWriter::Json(w) => w.finish(),
            InteractionWriter::Ndjson(mut w) => w.flush().map(|_| w),
            InteractionWriter::Parquet(w) => w.finish(),
            InteractionWriter::Csv(w) => w.finish(),
        }
    }
}

/// The version of the interaction table's columns.
pub const INTERACTIONS_SCHEMA: &str = "interactions/2";

/// The Arrow type of an interaction CSV column ([`super::interactions::csv_columns`]):
/// ids and sample counts `Int64`, times and confidences `Float64`, `is_inp` `Boolean`,
/// the rest `Utf8`.
fn interaction_type(name: &str) -> DataType {
    let counts = ["pid", "tid", "interaction_id"];
    if counts.contains(&name) || name.ends_with("samples") {
        DataType::Int64
    } else if name.ends_with("_ms") || name.ends_with("_us") || name.ends_with("confidence") {
        DataType::Float64
    } else if name == "is_inp" {
        DataType::Boolean
    } else {
        DataType::Utf8
    }
}

/// The interaction table's schema: the CSV's columns, typed (ids and counts `Int64`, times and confidences `Float64`, `is_inp` `Boolean`, text `Utf8`).
pub fn interactions_schema() -> SchemaRef {
    let columns = csv_columns();
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    super::parquet::text_schema(&names, interaction_type)
}

/// `--interactions FILE.parquet`: the CSV's rows, typed, a batch per input file.
pub struct InteractionParquet<W: Write> {
    table: super::parquet::TableWriter<W>,
}

impl<W: Write> InteractionParquet<W> {
    /// Starts the file.
    pub fn new(out: W) -> std::io::Result<Self> {
        Ok(InteractionParquet {
            table: super::parquet::TableWriter::new(
                out,
                interactions_schema(),
                INTERACTIONS_SCHEMA,
            )?,
        })
    }

    /// Writes one file's interactions as a batch (nothing for none).
    pub fn file(&mut self, rows: &[InteractionRow]) -> std::io::Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let fields: Vec<Vec<String>> = rows.iter().map(csv_fields).collect();
        let batch = super::parquet::text_batch(&interactions_schema(), &fields)?;
        self.table.write(&batch)
    }

    /// Writes the footer.
    pub fn finish(self) -> std::io::Result<W> {
        self.table.finish()
    }
}

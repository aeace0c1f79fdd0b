//! `--summary`: one CSV row per input file.

use std::io::Write;

use super::TableFormat;
use super::parquet::SummaryParquet;
use crate::report::FileReport;

/// The columns, in order. Times in ms with 3 decimals; `tbt_ms` the blocking time of the
/// whole trace and `tbt_from_fcp_ms` from the first contentful paint on (empty without one;
/// docs/METHOD.md §2.3); `attributed_share` is the share of long-task time in rows with
/// status `ok` (empty without long tasks); `frames_symbolicated` the share of the long
/// tasks' chain frames (those with a script URL) that a source map gave an original (empty
/// when no map could apply, or without such frames); `interactions` the Event Timing
/// interactions and `inp_ms` their INP (docs/METHOD.md §2.8; empty without interactions);
/// `long_animation_frames` the animation frames over the threshold on the threads in scope
/// (docs/METHOD.md §2.9); `long_tasks_outside_scope` the long tasks on threads `--scope`
/// leaves out.
pub const COLUMNS: [&str; 20] = [
    "file",
    "bytes",
    "status",
    "error",
    "renderer_main_threads",
    "top_level_tasks",
    "long_tasks",
    "long_task_ms",
    "tbt_ms",
    "max_task_ms",
    "attributed_share",
    "profiles",
    "samples",
    "warnings",
    "frames_symbolicated",
    "interactions",
    "inp_ms",
    "long_animation_frames",
    "tbt_from_fcp_ms",
    "long_tasks_outside_scope",
];

/// Writes summary rows, as CSV or Parquet.
pub enum SummaryWriter<W: Write> {
    /// CSV with [`COLUMNS`].
    Csv(Box<csv::Writer<W>>),
    /// Parquet (see [`super::parquet::summary_schema`]).
    Parquet(Box<SummaryParquet<W>>),
}

impl<W: Write> SummaryWriter<W> {
    /// Starts a summary in `format` (the CSV's header first).
    pub fn new(out: W, format: TableFormat) -> std::io::Result<Self> {
        Ok(match format {
            TableFormat::Csv => {
                let mut w = csv::Writer::from_writer(out);
                w.write_record(COLUMNS).map_err(std::io::Error::other)?;
                SummaryWriter::Csv(Box::new(w))
            }
            TableFormat::Parquet => SummaryWriter::Parquet(Box::new(SummaryParquet::new(out)?)),
        })
    }

    /// A file that was read. `status` is `ok`, or `error` when it broke off part-way.
    pub fn file(&mut self, r: &FileReport) -> std::io::Result<()> {
        let w = match self {
            SummaryWriter::Csv(w) => w,
            SummaryWriter::Parquet(p) => return p.file(r),
        };
        let s = &r.stats;
        let ms = |d: crate::time::TimeDelta| super::millis_text(d);
        let share = s
            .attributed_share()
            .map_or(String::new(), |v| format!("{v:.3}"));
        let symbolicated = s
            .symbolicated_share()
            .map_or(String::new(), |v| format!("{v:.3}"));
        w.write_record([
            r.file.as_str(),
            &s.bytes.to_string(),
            if r.broken.is_some() { "error" } else { "ok" },
            r.broken.as_deref().unwrap_or(""),
            &s.threads.to_string(),
            &s.top_level_tasks.to_string(),
            &r.long_tasks.to_string(),
            &ms(s.long_task_time),
            &ms(s.blocking_time),
            &ms(s.max_task),
            &share,
            &s.profiles.to_string(),
            &s.samples.to_string(),
            &r.diagnostics.kinds().to_string(),
            &symbolicated,
            &s.interactions.to_string(),
            &s.inp.map_or(String::new(), ms),
            &s.long_animation_frames.to_string(),
            &s.blocking_time_from_fcp.map_or(String::new(), ms),
            &s.long_tasks_outside_scope.to_string(),
        ])
        .map_err(std::io::Error::other)
    }

    /// A file that could not be read (`error`) or was skipped as not a trace (`skipped`).
    pub fn failed(&mut self, file: &str, status: &str, error: &str) -> std::io::Result<()> {
        let w = match self {
            SummaryWriter::Csv(w) => w,
            SummaryWriter::Parquet(p) => return p.failed(file, status, error),
        };
        let mut rec = vec![file, "", status, error];
        rec.resize(COLUMNS.len(), "");
        w.write_record(rec).map_err(std::io::Error::other)
    }

    /// Flushes (Parquet: writes the footer).
    pub fn finish(self) -> std::io::Result<W> {
        match self {
            SummaryWriter::Csv(w) => w.into_inner().map_err(|e| e.into_error()),
            SummaryWriter::Parquet(p) => p.finish(),
        }
    }
}

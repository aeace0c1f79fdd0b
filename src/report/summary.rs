//! `--summary`: one CSV row per input file.

use std::io::Write;

use crate::chain::round_confidence;
use crate::report::FileReport;

/// The columns, in order. Times in ms with 3 decimals; `attributed_share` is the share of
/// long-task time in rows with status `ok` (empty without long tasks); `frames_symbolicated`
/// the share of the long tasks' chain frames (those with a script URL) that a source map
/// gave an original (empty without such frames).
pub const COLUMNS: [&str; 15] = [
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
];

/// Writes summary rows.
pub struct SummaryWriter<W: Write> {
    w: csv::Writer<W>,
}

impl<W: Write> SummaryWriter<W> {
    /// Writes the header.
    pub fn new(out: W) -> std::io::Result<Self> {
        let mut w = csv::Writer::from_writer(out);
        w.write_record(COLUMNS).map_err(std::io::Error::other)?;
        Ok(SummaryWriter { w })
    }

    /// A file that was read. `status` is `ok`, or `error` when it broke off part-way.
    pub fn file(&mut self, r: &FileReport) -> std::io::Result<()> {
        let s = &r.stats;
        let ms = |d: crate::time::TimeDelta| super::millis_text(d);
        let share = if s.long_task_time.as_nanos() > 0 {
            format!(
                "{:.3}",
                round_confidence(
                    s.attributed_time.as_nanos() as f64 / s.long_task_time.as_nanos() as f64
                )
            )
        } else {
            String::new()
        };
        let symbolicated = if s.frames > 0 {
            format!(
                "{:.3}",
                round_confidence(s.frames_symbolicated as f64 / s.frames as f64)
            )
        } else {
            String::new()
        };
        self.w
            .write_record([
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
            ])
            .map_err(std::io::Error::other)
    }

    /// A file that could not be read (`error`) or was skipped as not a trace (`skipped`).
    pub fn failed(&mut self, file: &str, status: &str, error: &str) -> std::io::Result<()> {
        let mut rec = vec![file, "", status, error];
        rec.resize(COLUMNS.len(), "");
        self.w.write_record(rec).map_err(std::io::Error::other)
    }

    /// Flushes.
    pub fn finish(self) -> std::io::Result<W> {
        self.w.into_inner().map_err(|e| e.into_error())
    }
}

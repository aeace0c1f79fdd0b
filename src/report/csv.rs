//! CSV: a header and one record per [`ReportRow`], columns as [`super::COLUMNS`].

use std::io::Write;

use super::{COLUMNS, ReportRow, chain_text, confidence_number, micros_text, millis_text};

/// Writes rows as CSV (RFC 4180 quoting by the `csv` crate).
pub struct CsvWriter<W: Write> {
    w: ::csv::Writer<W>,
}

impl<W: Write> CsvWriter<W> {
    /// Starts a CSV document: writes the header.
    pub fn new(out: W) -> std::io::Result<Self> {
        let mut w = ::csv::WriterBuilder::new().from_writer(out);
        w.write_record(COLUMNS).map_err(into_io)?;
        Ok(CsvWriter { w })
    }

    /// Writes one row.
    pub fn row(&mut self, r: &ReportRow) -> std::io::Result<()> {
        let leaf = r.leaf();
        let num = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
        self.w
            .write_record([
                r.file.as_str(),
                &r.thread.pid.to_string(),
                &r.thread.tid.to_string(),
                &r.thread_name,
                &micros_text(r.task_ts),
                &millis_text(r.task_start),
                &millis_text(r.task_dur),
                &r.window_samples.to_string(),
                &r.target_samples.to_string(),
                &millis_text(r.stack_time),
                &format!("{:.3}", confidence_number(r.confidence)),
                r.status.as_str(),
                &r.flags.to_text(),
                leaf.map(|f| f.function.as_str()).unwrap_or(""),
                leaf.map(|f| f.url.as_str()).unwrap_or(""),
                &num(leaf.and_then(|f| f.line)),
                &num(leaf.and_then(|f| f.column)),
                &r.chain.len().to_string(),
                &chain_text(&r.chain),
                r.task_source,
                r.loaf.as_ref().map_or("", |l| l.invoker.as_str()),
                r.loaf.as_ref().map_or("", |l| l.source_url.as_str()),
                r.loaf.as_ref().map_or("", |l| l.function.as_str()),
            ])
            .map_err(into_io)
    }

    /// Flushes and returns the writer.
    pub fn finish(self) -> std::io::Result<W> {
        self.w.into_inner().map_err(|e| e.into_error())
    }
}

fn into_io(e: ::csv::Error) -> std::io::Error {
    match e.into_kind() {
        ::csv::ErrorKind::Io(e) => e,
        other => std::io::Error::other(format!("{other:?}")),
    }
}

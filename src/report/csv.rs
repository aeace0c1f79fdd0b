//! CSV: a header and one record per [`ReportRow`], columns as [`super::COLUMNS`].

use std::fmt::Write as _;
use std::io::Write;

use super::{COLUMNS, ReportRow, confidence_number, write_chain_text};
use crate::time::{fmt_micros, fmt_millis3};

/// Writes rows as CSV (RFC 4180 quoting by the `csv` crate).
pub struct CsvWriter<W: Write> {
    w: ::csv::Writer<W>,
    /// One field's text, reused (a report has ~10⁴ rows of ~20 fields).
    field: String,
}

impl<W: Write> CsvWriter<W> {
    /// Starts a CSV document: writes the header.
    pub fn new(out: W) -> std::io::Result<Self> {
        let mut w = ::csv::WriterBuilder::new().from_writer(out);
        w.write_record(COLUMNS).map_err(into_io)?;
        Ok(CsvWriter {
            w,
            field: String::new(),
        })
    }

    /// Writes one row.
    pub fn row(&mut self, r: &ReportRow) -> std::io::Result<()> {
        self.put_row(r).map_err(into_io)
    }

    fn put_row(&mut self, r: &ReportRow) -> ::csv::Result<()> {
        let leaf = r.leaf();
        let loaf = r.loaf.as_ref();
        let CsvWriter { w, field } = self;
        // A field formatted into the reused text.
        let mut put = |w: &mut ::csv::Writer<W>, fill: &dyn Fn(&mut String) -> std::fmt::Result| {
            field.clear();
            // Writing into a String cannot fail.
            let _ = fill(field);
            w.write_field(field.as_bytes())
        };
        let opt = |v: Option<u32>| {
            move |s: &mut String| match v {
                Some(v) => write!(s, "{v}"),
                None => Ok(()),
            }
        };
        w.write_field(r.file.as_bytes())?;
        put(w, &|s| write!(s, "{}", r.thread.pid))?;
        put(w, &|s| write!(s, "{}", r.thread.tid))?;
        w.write_field(r.thread_name.as_bytes())?;
        put(w, &|s| fmt_micros(r.task_ts.as_nanos(), s))?;
        put(w, &|s| fmt_millis3(r.task_start.as_nanos(), s))?;
        put(w, &|s| fmt_millis3(r.task_dur.as_nanos(), s))?;
        put(w, &|s| write!(s, "{}", r.window_samples))?;
        put(w, &|s| write!(s, "{}", r.target_samples))?;
        put(w, &|s| fmt_millis3(r.stack_time.as_nanos(), s))?;
        put(w, &|s| write!(s, "{:.3}", confidence_number(r.confidence)))?;
        w.write_field(r.status.as_str())?;
        w.write_field(r.flags.to_text())?;
        w.write_field(leaf.map(|f| f.function.as_str()).unwrap_or(""))?;
        w.write_field(leaf.map(|f| f.url.as_str()).unwrap_or(""))?;
        put(w, &opt(leaf.and_then(|f| f.line)))?;
        put(w, &opt(leaf.and_then(|f| f.column)))?;
        put(w, &|s| write!(s, "{}", r.chain.len()))?;
        put(w, &|s| {
            write_chain_text(&r.chain, s);
            Ok(())
        })?;
        w.write_field(r.task_source.as_str())?;
        w.write_field(loaf.map_or("", |l| l.invoker.as_str()))?;
        w.write_field(loaf.map_or("", |l| l.source_url.as_str()))?;
        w.write_field(loaf.map_or("", |l| l.function.as_str()))?;
        let original = leaf.and_then(|f| f.original.as_deref());
        w.write_field(original.and_then(|o| o.function.as_deref()).unwrap_or(""))?;
        w.write_field(original.map_or("", |o| o.source.as_str()))?;
        put(w, &opt(original.map(|o| o.line)))?;
        put(w, &opt(original.map(|o| o.column)))?;
        let parties = r.notes.parties.as_ref();
        for p in [
            parties.and_then(|p| p.task.as_ref()),
            parties.and_then(|p| p.entry.as_ref()),
        ] {
            w.write_field(p.and_then(|p| p.party).map_or("", |p| p.as_str()))?;
            w.write_field(
                p.and_then(|p| p.vendor.as_deref())
                    .map_or("", |e| e.name.as_str()),
            )?;
        }
        let trigger = r.trigger.as_ref();
        w.write_field(trigger.map_or("", |t| t.kind.as_str()))?;
        w.write_field(trigger.map_or("", |t| t.detail.as_str()))?;
        let b = r.breakdown.as_deref();
        for t in b
            .map(|b| super::breakdown_times(b).map(Some))
            .unwrap_or([None; 7])
        {
            put(w, &|s| match t {
                Some(t) => fmt_millis3(t.as_nanos(), s),
                None => Ok(()),
            })?;
        }
        w.write_field(b.map_or("", |b| b.forced_by.as_str()))?;
        w.write_record(None::<&[u8]>)
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

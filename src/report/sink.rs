//! Sinks: every output of a batch behind one interface. A batch hands each sink, in input
//! order, the rows of a file as they are made ([`Sink::rows`]), then what became of the
//! file ([`Sink::file_done`]: its [`FileReport`], whose streamed rows are gone but whose
//! other fields ride along, or its error), and at the end the run's totals
//! ([`Sink::finish`]). A sink writes to the `Write` it was made with; the caller puts the
//! file in place afterwards.

use std::io::{self, BufWriter, Write};

use super::aggregate::{AggregateBy, Aggregator};
use super::chain_key::ChainKey;
use super::csv::CsvWriter;
use super::folded::{Folded, FoldedWeight};
use super::frames::{FramesFormat, FramesParquet, frame_columns, frame_json, write_csv};
use super::markdown::{FileLine, InteractionLine, MarkdownReport};
use super::parquet::TaskParquet;
use super::summary::SummaryWriter;
use super::{FileError, FileReport, Format, ReportRow, TableFormat, json};

/// Where a sink writes (an output file, or standard output).
pub(crate) type Out<'a> = Box<dyn Write + 'a>;

/// What became of one input.
#[derive(Debug)]
// One per input file, moved once: boxing the report would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub(crate) enum FileOutcome {
    /// Read and analysed.
    Done(FileReport),
    /// Could not be read or is not a trace (named on the command line).
    Failed(FileError),
    /// Found by a folder search but some other kind of JSON: left out, with the reason.
    Skipped(FileError),
    /// Not read on purpose ([`crate::error::Error::LeftOut`]: a second name of a file
    /// read already, a link out of the folder searched): a note, not counted as a file.
    LeftOut(FileError),
}

/// One file as sinks get it once its rows are handed on.
pub(crate) struct FileDone<'a> {
    /// What became of it (a report's rows were handed on before, through [`Sink::rows`]).
    pub(crate) outcome: &'a FileOutcome,
    /// The budgets it broke, as sentences (`--budget`).
    pub(crate) breaches: &'a [String],
}

/// Counts over the whole run, for the sinks that name them at the end.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Totals {
    /// Inputs read (or failed): skipped files and left-out names not counted.
    pub(crate) files: usize,
    /// Long tasks found.
    pub(crate) long_tasks: usize,
    /// Rows with status `ok`.
    pub(crate) attributed: usize,
}

/// One output of a batch. Calls come in input order: for each file any number of
/// [`Sink::rows`], then one [`Sink::file_done`]; then [`Sink::finish`] once.
pub(crate) trait Sink {
    /// A block of the current file's rows, in report order.
    fn rows(&mut self, rows: &[ReportRow]) -> io::Result<()> {
        let _ = rows;
        Ok(())
    }
    /// The current file is done.
    fn file_done(&mut self, done: &FileDone<'_>) -> io::Result<()>;
    /// Writes what is left and flushes.
    fn finish(self: Box<Self>, totals: &Totals) -> io::Result<()>;
}

/// The main report (`-o`, `--format`), written row by row.
pub(crate) enum TaskSink<'a> {
    /// CSV.
    Csv(Box<CsvWriter<BufWriter<Out<'a>>>>),
    /// `{"tasks": [...], "errors": [...], "files": [...]}`: tasks streamed, errors and
    /// the files' lines kept for the end.
    Json(
        json::JsonWriter<BufWriter<Out<'a>>>,
        Vec<FileError>,
        Vec<json::FileLine>,
    ),
    /// One object per line; errors kept for the end.
    Ndjson(BufWriter<Out<'a>>, Vec<FileError>),
    /// Parquet: a batch per input file.
    Parquet(Box<TaskParquet<BufWriter<Out<'a>>>>),
}

impl<'a> TaskSink<'a> {
    /// Starts a report; JSON names `options` at its head when given.
    pub(crate) fn new(
        format: Format,
        out: Out<'a>,
        options: Option<&json::ReportOptions>,
    ) -> io::Result<Self> {
        let out = BufWriter::with_capacity(1 << 16, out);
        Ok(match format {
            Format::Csv => TaskSink::Csv(Box::new(CsvWriter::new(out)?)),
            Format::Json => {
                TaskSink::Json(json::JsonWriter::new(out, options)?, Vec::new(), Vec::new())
            }
            Format::Ndjson => TaskSink::Ndjson(out, Vec::new()),
            Format::Parquet => TaskSink::Parquet(Box::new(TaskParquet::new(out)?)),
        })
    }

    /// Notes a failed file (CSV and Parquet have no place for it: stderr and the summary
    /// tell).
    fn error(&mut self, e: FileError) {
        if let TaskSink::Json(_, errors, _) | TaskSink::Ndjson(_, errors) = self {
            errors.push(e)
        }
    }
}

impl Sink for TaskSink<'_> {
    fn rows(&mut self, rows: &[ReportRow]) -> io::Result<()> {
        for r in rows {
            match self {
                TaskSink::Csv(w) => w.row(r),
                TaskSink::Json(w, _, _) => w.task(r),
                TaskSink::Ndjson(w, _) => json::write_task_line(w, r),
                TaskSink::Parquet(w) => w.row(r),
            }?;
        }
        Ok(())
    }

    fn file_done(&mut self, done: &FileDone<'_>) -> io::Result<()> {
        match done.outcome {
            FileOutcome::Done(rep) => {
                if let Some(b) = &rep.broken {
                    self.error(FileError::new(&rep.file, b.clone()));
                }
                if let TaskSink::Json(_, _, files) = self {
                    files.push(json::FileLine::of(rep));
                }
                // Parquet writes a file's rows as one batch.
                if let TaskSink::Parquet(w) = self {
                    w.end_file()?;
                }
            }
            FileOutcome::Failed(e) => self.error(e.clone()),
            FileOutcome::Skipped(_) | FileOutcome::LeftOut(_) => {}
        }
        Ok(())
    }

    fn finish(self: Box<Self>, _: &Totals) -> io::Result<()> {
        match *self {
            TaskSink::Csv(w) => w.finish()?.flush(),
            TaskSink::Parquet(w) => w.finish()?.flush(),
            TaskSink::Json(w, errors, files) => w.finish(&errors, &files)?.flush(),
            TaskSink::Ndjson(mut w, errors) => {
                for e in &errors {
                    json::write_error_line(&mut w, e)?;
                }
                w.flush()
            }
        }
    }
}

/// `--summary`: a row per file as it is done.
pub(crate) struct SummarySink<'a>(SummaryWriter<Out<'a>>);

impl<'a> SummarySink<'a> {
    /// Starts a summary in `format` (the CSV's header first).
    pub(crate) fn new(out: Out<'a>, format: TableFormat) -> io::Result<Self> {
        Ok(SummarySink(SummaryWriter::new(out, format)?))
    }
}

impl Sink for SummarySink<'_> {
    fn file_done(&mut self, done: &FileDone<'_>) -> io::Result<()> {
        match done.outcome {
            FileOutcome::Done(rep) => self.0.file(rep),
            FileOutcome::Failed(e) => self.0.failed(&e.file, "error", e.reason()),
            FileOutcome::Skipped(e) => self.0.failed(&e.file, "skipped", e.reason()),
            FileOutcome::LeftOut(_) => Ok(()),
        }
    }

    fn finish(self: Box<Self>, _: &Totals) -> io::Result<()> {
        self.0.finish()?.flush()
    }
}

/// `--aggregate`: the rows grouped, written at the end.
pub(crate) struct AggregateSink<'a> {
    groups: Aggregator,
    format: TableFormat,
    out: Out<'a>,
}

impl<'a> AggregateSink<'a> {
    /// Groups by `by` and `key`, written as `format`.
    pub(crate) fn new(by: AggregateBy, key: ChainKey, format: TableFormat, out: Out<'a>) -> Self {
        AggregateSink {
            groups: Aggregator::new(by, key),
            format,
            out,
        }
    }
}

impl Sink for AggregateSink<'_> {
    fn rows(&mut self, rows: &[ReportRow]) -> io::Result<()> {
        rows.iter().for_each(|r| self.groups.add(r));
        Ok(())
    }

    fn file_done(&mut self, _: &FileDone<'_>) -> io::Result<()> {
        Ok(())
    }

    fn finish(mut self: Box<Self>, _: &Totals) -> io::Result<()> {
        let mut w = BufWriter::new(self.out);
        match self.format {
            TableFormat::Csv => self.groups.write(&mut w)?,
            TableFormat::Parquet => {
                let rows = self.groups.rows();
                super::parquet::write_aggregate(&mut w, self.groups.by(), &rows)?
            }
        }
        w.flush()
    }
}

/// `--folded` or `--flamegraph`: the files' stacks summed, written at the end.
pub(crate) struct FoldedSink<'a> {
    folded: Folded,
    /// An SVG flame graph rather than the collapsed stacks.
    svg: bool,
    out: Out<'a>,
}

impl<'a> FoldedSink<'a> {
    /// Stacks counted by `weight`, written as collapsed stacks, or with `svg` as a flame
    /// graph.
    pub(crate) fn new(weight: FoldedWeight, svg: bool, out: Out<'a>) -> Self {
        FoldedSink {
            folded: Folded::new(weight),
            svg,
            out,
        }
    }
}

impl Sink for FoldedSink<'_> {
    fn file_done(&mut self, done: &FileDone<'_>) -> io::Result<()> {
        if let FileOutcome::Done(rep) = done.outcome {
            self.folded.add(&rep.stacks);
        }
        Ok(())
    }

    fn finish(self: Box<Self>, totals: &Totals) -> io::Result<()> {
        let mut w = BufWriter::new(self.out);
        if self.svg {
            let title = format!(
                "taskchain: samples inside {} long tasks of {}",
                totals.long_tasks,
                super::text::plural(totals.files, "file", "files")
            );
            self.folded.flamegraph(&title, &mut w)?;
        } else {
            self.folded.write(&mut w)?;
        }
        w.flush()
    }
}

/// `--interactions`: each file's interactions as it is done (JSON, NDJSON, CSV or Parquet
/// by the file's extension).
pub(crate) struct InteractionSink<'a>(super::interactions::InteractionWriter<BufWriter<Out<'a>>>);

impl<'a> InteractionSink<'a> {
    /// Starts the output for `path`, written to `out`.
    pub(crate) fn new(path: &std::path::Path, out: Out<'a>) -> io::Result<Self> {
        let out = BufWriter::with_capacity(1 << 16, out);
        Ok(InteractionSink(
            super::interactions::InteractionWriter::for_path(path, out)?,
        ))
    }
}

impl Sink for InteractionSink<'_> {
    fn file_done(&mut self, done: &FileDone<'_>) -> io::Result<()> {
        match done.outcome {
            FileOutcome::Done(rep) => self.0.file(&rep.interactions),
            _ => Ok(()),
        }
    }

    fn finish(self: Box<Self>, _: &Totals) -> io::Result<()> {
        self.0.finish()?.flush()
    }
}

/// `--markdown`: totals, files, owners, top chains, breaches and failures, written at the
/// end.
pub(crate) struct MarkdownSink<'a> {
    md: MarkdownReport,
    /// The top chains, grouped by chain whatever `--aggregate-by` says.
    chains: Aggregator,
    owners: Aggregator,
    out: Out<'a>,
}

impl<'a> MarkdownSink<'a> {
    /// Chains grouped by `key`.
    pub(crate) fn new(key: ChainKey, out: Out<'a>) -> Self {
        MarkdownSink {
            md: MarkdownReport::default(),
            chains: Aggregator::new(AggregateBy::Chain, key),
            owners: Aggregator::new(AggregateBy::Vendor, key),
            out,
        }
    }
}

impl Sink for MarkdownSink<'_> {
    fn rows(&mut self, rows: &[ReportRow]) -> io::Result<()> {
        for r in rows {
            self.chains.add(r);
            self.owners.add(r);
        }
        Ok(())
    }

    fn file_done(&mut self, done: &FileDone<'_>) -> io::Result<()> {
        let m = &mut self.md;
        match done.outcome {
            FileOutcome::Done(rep) => {
                if let Some(b) = &rep.broken {
                    m.failed.push(FileError::new(&rep.file, b.clone()).error);
                }
                m.lines.push(FileLine {
                    file: rep.file.clone(),
                    long_tasks: rep.long_tasks,
                    blocking_time: rep.stats.blocking_time,
                    max_task: rep.stats.max_task,
                });
                m.breaches.extend(done.breaches.iter().cloned());
                super::markdown::keep_slowest(
                    &mut m.slowest_interactions,
                    rep.interactions.iter().map(InteractionLine::of),
                    10,
                );
            }
            FileOutcome::Failed(e) => m.failed.push(e.error.clone()),
            FileOutcome::Skipped(_) | FileOutcome::LeftOut(_) => {}
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>, totals: &Totals) -> io::Result<()> {
        let m = &mut self.md;
        m.files = totals.files;
        m.long_tasks = totals.long_tasks;
        m.attributed = totals.attributed;
        m.top_chains = self.chains.top(10);
        m.owners = self.owners.owners();
        let mut w = BufWriter::new(self.out);
        self.md.write(&mut w)?;
        w.flush()
    }
}

/// `--animation-frames`: each file's frame rows as the file is done.
pub(crate) struct FramesSink<'a> {
    out: FramesOut<'a>,
    format: FramesFormat,
    /// No frame written yet (JSON's separator).
    first: bool,
}

/// Where `--animation-frames` goes: text, or the Parquet writer.
enum FramesOut<'a> {
    Text(BufWriter<Out<'a>>),
    Parquet(Box<FramesParquet<BufWriter<Out<'a>>>>),
}

impl<'a> FramesSink<'a> {
    /// Starts the file.
    pub(crate) fn new(out: Out<'a>, format: FramesFormat) -> io::Result<Self> {
        let mut out = BufWriter::new(out);
        match format {
            FramesFormat::Json => out.write_all(b"{\"animation_frames\":[")?,
            FramesFormat::Csv => {
                let mut w = ::csv::Writer::from_writer(&mut out);
                w.write_record(frame_columns())
                    .map_err(|e| io::Error::other(e.to_string()))?;
                w.flush()?;
            }
            FramesFormat::Ndjson | FramesFormat::Parquet => {}
        }
        let out = match format {
            FramesFormat::Parquet => FramesOut::Parquet(Box::new(FramesParquet::new(out)?)),
            _ => FramesOut::Text(out),
        };
        Ok(FramesSink {
            out,
            format,
            first: true,
        })
    }
}

impl Sink for FramesSink<'_> {
    fn file_done(&mut self, done: &FileDone<'_>) -> io::Result<()> {
        let FileOutcome::Done(rep) = done.outcome else {
            return Ok(());
        };
        let out = match &mut self.out {
            FramesOut::Parquet(w) => return w.file(&rep.frames),
            FramesOut::Text(out) => out,
        };
        match self.format {
            FramesFormat::Csv => {
                write_csv(&rep.frames, &mut *out, false)?;
            }
            FramesFormat::Ndjson => {
                for r in &rep.frames {
                    serde_json::to_writer(&mut *out, &frame_json(r))?;
                    out.write_all(b"\n")?;
                }
            }
            FramesFormat::Json => {
                for r in &rep.frames {
                    out.write_all(if self.first { b"\n" } else { b",\n" })?;
                    self.first = false;
                    serde_json::to_writer(&mut *out, &frame_json(r))?;
                }
            }
            FramesFormat::Parquet => {}
        }
        Ok(())
    }

    fn finish(self: Box<Self>, _: &Totals) -> io::Result<()> {
        match self.out {
            FramesOut::Parquet(w) => w.finish()?.flush(),
            FramesOut::Text(mut out) => {
                if self.format == FramesFormat::Json {
                    out.write_all(b"\n]}\n")?;
                }
                out.flush()
            }
        }
    }
}

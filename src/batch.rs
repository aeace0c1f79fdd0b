//! Batch: many inputs → one report. Files run in parallel on a rayon pool of `--jobs`
//! threads (and each file's tasks in parallel inside it); rows are merged in the fixed
//! order of SPEC §3, so any thread count gives the same bytes. A file that fails is
//! reported on stderr and in the output's error list; the others go on.

use std::io::{IsTerminal, Write};
use std::path::Path;

use rayon::prelude::*;

use crate::error::Error;
use crate::input::{self, InputPath};
use crate::report::{FileError, Format, ReportRow, csv::CsvWriter, json};
use crate::{AnalyzeError, Config, FileReport, Settings, analyze_bytes};

/// What became of one input.
#[derive(Debug)]
pub enum FileOutcome {
    /// Read and analysed.
    Done(FileReport),
    /// Could not be read or is not a trace (named on the command line).
    Failed(FileError),
    /// Found by a folder search but not a trace: left out, with the reason.
    Skipped(FileError),
}

/// Counts for the one-line summary on stderr.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BatchSummary {
    /// Inputs.
    pub files: usize,
    /// Inputs that failed.
    pub failed: usize,
    /// Inputs skipped (found by folder search, not traces).
    pub skipped: usize,
    /// Long tasks found.
    pub long_tasks: usize,
    /// Rows with status `ok`.
    pub attributed: usize,
    /// Warning lines (kinds of odd input, per file).
    pub warnings: usize,
}

impl BatchSummary {
    /// The summary line.
    pub fn line(&self) -> String {
        format!(
            "taskchain: {} files, {} long tasks, {} attributed (ok), {} warnings, {} failed{}",
            self.files,
            self.long_tasks,
            self.attributed,
            self.warnings,
            self.failed,
            if self.skipped > 0 {
                format!(", {} skipped (not traces)", self.skipped)
            } else {
                String::new()
            }
        )
    }
}

/// Reads and analyses one input.
pub fn process(inp: &InputPath, s: &Settings) -> Result<FileReport, Error> {
    let bytes = input::read(inp)?;
    analyze_bytes(&inp.display_name(), &bytes, s).map_err(|e| match e {
        AnalyzeError::NotATrace(reason) => Error::NotATrace {
            path: inp.path(),
            reason,
        },
        AnalyzeError::Json {
            offset,
            event_index,
            reason,
        } => Error::Json {
            path: inp.path(),
            offset,
            event_index,
            reason,
        },
    })
}

/// Everything a batch found: rows in SPEC §3 order, failed files, and counts.
#[derive(Debug, Default)]
pub struct BatchResult {
    /// Rows of every file, sorted by (file, pid, tid, task_ts_us).
    pub rows: Vec<ReportRow>,
    /// Files that failed, in input order.
    pub errors: Vec<FileError>,
    /// Counts.
    pub summary: BatchSummary,
}

/// Analyses every input on a pool of `jobs` threads. Errors only when the pool cannot start.
pub fn analyze_all(
    paths: &[std::path::PathBuf],
    settings: &Settings,
    jobs: usize,
    quiet: bool,
) -> anyhow::Result<BatchResult> {
    use anyhow::Context;
    let inputs = input::paths::expand(paths);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("cannot start worker threads")?;
    let bar = progress_bar(inputs.len() as u64, quiet);
    let outcomes: Vec<FileOutcome> = pool.install(|| {
        inputs
            .par_iter()
            .map(|r| {
                let out = match r {
                    Err(e) => FileOutcome::Failed(FileError {
                        file: String::new(),
                        error: e.to_string(),
                    }),
                    Ok(inp) => outcome(inp, settings),
                };
                report_outcome(&out, quiet, &bar);
                bar.inc(1);
                out
            })
            .collect()
    });
    bar.finish_and_clear();

    let mut res = BatchResult::default();
    res.summary.files = outcomes.len();
    for o in outcomes {
        match o {
            FileOutcome::Done(rep) => {
                if let Some(b) = &rep.broken {
                    res.summary.failed += 1;
                    res.errors.push(FileError {
                        file: rep.file.clone(),
                        error: format!("{}: {b}", rep.file),
                    });
                }
                res.summary.long_tasks += rep.long_tasks;
                res.summary.warnings += rep.diagnostics.kinds();
                res.rows.extend(rep.rows);
            }
            FileOutcome::Failed(e) => {
                res.summary.failed += 1;
                res.errors.push(e);
            }
            FileOutcome::Skipped(_) => res.summary.skipped += 1,
        }
    }
    res.rows.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    res.summary.attributed = res
        .rows
        .iter()
        .filter(|r| r.status == crate::chain::ChainStatus::Ok)
        .count();
    Ok(res)
}

fn outcome(inp: &InputPath, settings: &Settings) -> FileOutcome {
    let file = inp.display_name();
    match process(inp, settings) {
        Ok(rep) => FileOutcome::Done(rep),
        Err(e @ Error::NotATrace { .. }) if matches!(inp, InputPath::Found(_)) => {
            FileOutcome::Skipped(FileError {
                file,
                error: e.to_string(),
            })
        }
        Err(e) => FileOutcome::Failed(FileError {
            file,
            error: e.to_string(),
        }),
    }
}

/// Runs the whole job: analyses every input and writes the report.
/// Returns the summary; the caller decides the exit code (2 when any file failed).
pub fn run(cfg: &Config) -> anyhow::Result<BatchSummary> {
    let res = analyze_all(&cfg.paths, &cfg.analysis, cfg.jobs, cfg.quiet)?;
    write_report(cfg, &res.rows, &res.errors)?;
    Ok(res.summary)
}

fn progress_bar(n: u64, quiet: bool) -> indicatif::ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(n);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} files ({eta})",
        )
        .expect("valid template"),
    );
    bar
}

/// Errors always go to stderr; warnings (odd input) unless `--quiet`.
fn report_outcome(o: &FileOutcome, quiet: bool, bar: &indicatif::ProgressBar) {
    let mut lines = Vec::new();
    match o {
        FileOutcome::Failed(e) => lines.push(format!("taskchain: error: {}", e.error)),
        FileOutcome::Skipped(e) if !quiet => lines.push(format!("taskchain: skipped: {}", e.error)),
        FileOutcome::Done(rep) => {
            if let Some(b) = &rep.broken {
                lines.push(format!("taskchain: error: {}: {b}", rep.file));
            }
            for (kind, n) in rep.diagnostics.iter().filter(|_| !quiet) {
                lines.push(format!("taskchain: warning: {}: {kind}: {n}", rep.file));
            }
        }
        _ => {}
    }
    for l in lines {
        if bar.is_hidden() {
            eprintln!("{l}");
        } else {
            bar.println(l);
        }
    }
}

/// Writes the report to `-o` (through a temporary file renamed when complete, so a killed
/// run never leaves half a report) or to standard output.
fn write_report(cfg: &Config, rows: &[ReportRow], errors: &[FileError]) -> anyhow::Result<()> {
    use anyhow::Context;
    match cfg.output.as_deref() {
        None => write_to(std::io::stdout().lock(), cfg.format, rows, errors),
        Some(p) if p.as_os_str() == "-" => {
            write_to(std::io::stdout().lock(), cfg.format, rows, errors)
        }
        Some(p) => {
            let dir = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let mut tmp = tempfile::NamedTempFile::new_in(dir)
                .with_context(|| format!("cannot create a file in {}", dir.display()))?;
            write_to(std::io::BufWriter::new(&mut tmp), cfg.format, rows, errors)
                .with_context(|| format!("cannot write {}", p.display()))?;
            tmp.persist(p)
                .with_context(|| format!("cannot write {}", p.display()))?;
            Ok(())
        }
    }
}

/// Writes rows (and, for JSON and NDJSON, failed files) in `format`.
pub fn write_to(
    out: impl Write,
    format: Format,
    rows: &[ReportRow],
    errors: &[FileError],
) -> anyhow::Result<()> {
    let mut out = out;
    match format {
        Format::Csv => {
            let mut w = CsvWriter::new(out)?;
            for r in rows {
                w.row(r)?;
            }
            w.finish()?.flush()?;
        }
        Format::Json => {
            json::write_document(&mut out, rows, errors)?;
            out.flush()?;
        }
        Format::Ndjson => {
            for r in rows {
                json::write_task_line(&mut out, r)?;
            }
            for e in errors {
                json::write_error_line(&mut out, e)?;
            }
            out.flush()?;
        }
    }
    Ok(())
}

//! Batch: many inputs → one report. Files run in parallel on a rayon pool of `--jobs`
//! threads (and each file's tasks in parallel inside it); rows are merged in the fixed
//! order of SPEC §3, so any thread count gives the same bytes, and stderr lines come in
//! input order too. A file that fails is reported on stderr and in the output's error
//! list; the others go on — also when analysing one of them panics.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Context;
use rayon::prelude::*;

use crate::chain::ChainStatus;
use crate::error::Error;
use crate::input::{self, InputPath};
use crate::report::{FileError, Format, ReportRow, csv::CsvWriter, json};
use crate::{AnalyzeError, Config, FileReport, Settings, analyze_bytes, analyze_stream};

/// What became of one input.
#[derive(Debug)]
pub enum FileOutcome {
    /// Read and analysed.
    Done(FileReport),
    /// Could not be read or is not a trace (named on the command line).
    Failed(FileError),
    /// Found by a folder search but some other kind of JSON: left out, with the reason.
    Skipped(FileError),
}

/// Counts for the one-line summary on stderr.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BatchSummary {
    /// Inputs.
    pub files: usize,
    /// Inputs that failed (or were read only in part).
    pub failed: usize,
    /// Inputs skipped (found by folder search, not traces).
    pub skipped: usize,
    /// Long tasks found.
    pub long_tasks: usize,
    /// Rows with status `ok`.
    pub attributed: usize,
    /// Warning lines printed (one per kind of odd input per file).
    pub warnings: usize,
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl BatchSummary {
    /// The summary line.
    pub fn line(&self) -> String {
        format!(
            "taskchain: {}, {}, {} attributed (ok), {}, {} failed{}",
            plural(self.files, "file", "files"),
            plural(self.long_tasks, "long task", "long tasks"),
            self.attributed,
            plural(self.warnings, "warning", "warnings"),
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
    let path = inp.path();
    let name = inp.display_name();
    let result = match input::open(inp)? {
        input::Source::Whole(data) => analyze_bytes(&name, &data.bytes, s),
        input::Source::Gzip(blocks) => analyze_stream(&name, blocks, s),
    };
    result.map_err(|e| match e {
        AnalyzeError::NotATrace(reason) => Error::NotATrace { path, reason },
        AnalyzeError::OtherJson(reason) => Error::OtherJson { path, reason },
        AnalyzeError::Json {
            offset,
            event_index,
            reason,
        } => Error::Json {
            path,
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
    paths: &[PathBuf],
    settings: &Settings,
    jobs: usize,
    quiet: bool,
) -> anyhow::Result<BatchResult> {
    let inputs = input::paths::expand(paths);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("cannot start worker threads")?;
    let bar = progress_bar(inputs.len() as u64, quiet);
    let log = OrderedLog::new(&bar);
    let outcomes: Vec<FileOutcome> = pool.install(|| {
        inputs
            .par_iter()
            .enumerate()
            .map(|(i, r)| {
                let out = match r {
                    Err(e) => FileOutcome::Failed(FileError {
                        file: e.path().display().to_string(),
                        error: e.to_string(),
                    }),
                    Ok(inp) => outcome(inp, settings),
                };
                log.put(i, messages(&out, quiet));
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
                res.summary.warnings += if quiet { 0 } else { rep.diagnostics.kinds() };
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
        .filter(|r| r.status == ChainStatus::Ok)
        .count();
    Ok(res)
}

fn outcome(inp: &InputPath, settings: &Settings) -> FileOutcome {
    let file = inp.display_name();
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| process(inp, settings)));
    match run {
        Ok(Ok(rep)) => FileOutcome::Done(rep),
        Ok(Err(e @ Error::OtherJson { .. })) if matches!(inp, InputPath::Found(_)) => {
            FileOutcome::Skipped(FileError {
                file,
                error: e.to_string(),
            })
        }
        Ok(Err(e)) => FileOutcome::Failed(FileError {
            file,
            error: e.to_string(),
        }),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            FileOutcome::Failed(FileError {
                error: format!("{file}: internal error ({what}); please report it with the file"),
                file,
            })
        }
    }
}

/// Runs the whole job: opens the output, analyses every input, writes the report.
/// Returns the summary; the caller decides the exit code (2 when any file failed).
pub fn run(cfg: &Config) -> anyhow::Result<BatchSummary> {
    // Open the output first, so that a bad `-o` fails before hours of work.
    let out = Output::open(cfg.output.as_deref())?;
    let res = analyze_all(&cfg.paths, &cfg.analysis, cfg.jobs, cfg.quiet)?;
    out.write(cfg.format, &res.rows, &res.errors)?;
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

/// The stderr lines of one outcome: errors always, warnings unless `quiet`.
fn messages(o: &FileOutcome, quiet: bool) -> Vec<String> {
    let mut lines = Vec::new();
    match o {
        FileOutcome::Failed(e) => lines.push(format!("taskchain: error: {}", e.error)),
        FileOutcome::Skipped(e) if !quiet => lines.push(format!("taskchain: skipped: {}", e.error)),
        FileOutcome::Done(rep) => {
            if let Some(b) = &rep.broken {
                lines.push(format!("taskchain: error: {}: {b}", rep.file));
            }
            if !quiet {
                for (kind, n) in rep.diagnostics.iter() {
                    lines.push(format!("taskchain: warning: {}: {kind}: {n}", rep.file));
                }
                for note in rep.diagnostics.notes() {
                    lines.push(format!("taskchain: warning: {}: {note}", rep.file));
                }
            }
        }
        _ => {}
    }
    lines
}

/// Prints each input's lines in input order, as soon as all inputs before it are done.
struct OrderedLog<'b> {
    bar: &'b indicatif::ProgressBar,
    state: Mutex<(usize, BTreeMap<usize, Vec<String>>)>,
}

impl<'b> OrderedLog<'b> {
    fn new(bar: &'b indicatif::ProgressBar) -> Self {
        OrderedLog {
            bar,
            state: Mutex::new((0, BTreeMap::new())),
        }
    }

    fn put(&self, index: usize, lines: Vec<String>) {
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let (next, pending) = &mut *guard;
        pending.insert(index, lines);
        while let Some(lines) = pending.remove(next) {
            for l in lines {
                if self.bar.is_hidden() {
                    eprintln!("{l}");
                } else {
                    self.bar.println(l);
                }
            }
            *next += 1;
        }
    }
}

/// Where the report goes.
enum Output {
    Stdout,
    /// A FIFO, a device or another non-regular file: written in place.
    Direct(File, PathBuf),
    /// A regular file (or a link to one): written to a temporary file in the same folder
    /// and renamed over it when complete, so a killed run never leaves half a report.
    Atomic(tempfile::NamedTempFile, PathBuf),
}

impl Output {
    fn open(path: Option<&Path>) -> anyhow::Result<Output> {
        let Some(p) = path.filter(|p| p.as_os_str() != "-") else {
            return Ok(Output::Stdout);
        };
        let cannot = || format!("cannot write {}", p.display());
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => anyhow::bail!("cannot write {}: it is a folder", p.display()),
            Ok(m) if !m.is_file() => {
                let f = File::options().write(true).open(p).with_context(cannot)?;
                Ok(Output::Direct(f, p.to_path_buf()))
            }
            existing => {
                // Write through a symbolic link to its target; keep an existing file's mode.
                let target = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
                let dir = target
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                let mode = match existing {
                    Ok(m) => m.permissions(),
                    Err(_) => default_permissions(),
                };
                let tmp = tempfile::Builder::new()
                    .prefix(".taskchain-")
                    .permissions(mode)
                    .tempfile_in(dir)
                    .map_err(|e| anyhow::anyhow!("{}: {}", cannot(), e.kind()))?;
                Ok(Output::Atomic(tmp, target))
            }
        }
    }

    fn write(self, format: Format, rows: &[ReportRow], errors: &[FileError]) -> anyhow::Result<()> {
        match self {
            Output::Stdout => write_to(std::io::stdout().lock(), format, rows, errors)
                .context("cannot write the report to standard output"),
            Output::Direct(f, p) => write_to(std::io::BufWriter::new(f), format, rows, errors)
                .with_context(|| format!("cannot write {}", p.display())),
            Output::Atomic(mut tmp, p) => {
                write_to(std::io::BufWriter::new(&mut tmp), format, rows, errors)
                    .with_context(|| format!("cannot write {}", p.display()))?;
                tmp.persist(&p)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {}", p.display(), e.error))?;
                Ok(())
            }
        }
    }
}

#[cfg(unix)]
fn default_permissions() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    // The OS applies the umask, as for any newly created file.
    std::fs::Permissions::from_mode(0o666)
}

#[cfg(not(unix))]
fn default_permissions() -> std::fs::Permissions {
    tempfile::tempfile()
        .and_then(|f| f.metadata())
        .map(|m| m.permissions())
        .expect("a temporary file")
}

/// Writes rows (and, for JSON and NDJSON, failed files) in `format`.
pub fn write_to(
    out: impl Write,
    format: Format,
    rows: &[ReportRow],
    errors: &[FileError],
) -> std::io::Result<()> {
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

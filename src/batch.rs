//! Batch: many inputs → the report and the extra outputs. `--jobs` workers take files in
//! input order (each file's own work runs in parallel on the same rayon pool) and their
//! outcomes are handed, in input order, to streaming sinks: rows are written as files
//! finish, so memory is bounded by the largest file, not the corpus, and any thread count
//! gives the same bytes (docs/METHOD.md §3 row order, stderr lines included). A file that fails is
//! reported on stderr and in the outputs; the others go on, also when analysing one of
//! them panics. Every output file is written to a temporary file and renamed when
//! complete.

use std::collections::BTreeMap;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use anyhow::Context;

use crate::analyze::{Settings, analyze_input_deferring};
use crate::chain::ChainStatus;
use crate::error::Error;
use crate::gate::{self, Breach};
use crate::input::{self, InputPath};
use crate::output::{OutFile, check_outputs};
use crate::report::aggregate::AggregateBy;
use crate::report::frames::FramesFormat;
use crate::report::html::HtmlSink;
pub(crate) use crate::report::sink::FileOutcome;
use crate::report::sink::{
    AggregateSink, FileDone, FoldedSink, FramesSink, InteractionSink, MarkdownSink, Out, Sink,
    SummarySink, TaskSink, Totals,
};
use crate::report::speedscope::SpeedscopeSink;
use crate::report::text::plural;
use crate::report::{FileError, FileReport, Format, ReportRow, TableFormat, json};
use crate::vocab::DeferredDrop;

/// What to analyse and how: the resolved command line.
#[derive(Clone, Debug)]
pub struct Config {
    /// Files, folders, globs, or `-`.
    pub paths: Vec<PathBuf>,
    /// `--files-from`: a file listing more paths, one per line (`-`: standard input).
    pub files_from: Option<PathBuf>,
    /// `--shard I/N` (1-based I), or `--shard-from-env N`.
    pub shard: Option<(usize, usize)>,
    /// Folders to create before writing: those named by `{shard}` in output paths.
    pub output_dirs: Vec<PathBuf>,
    /// `--follow-links`: folder and glob searches follow symbolic links out of the folder.
    pub follow_links: bool,
    /// `--create-dirs`: create an output's missing folders.
    pub create_dirs: bool,
    /// `--tasks`: the file the task entries were read from (never to be overwritten).
    pub tasks_file: Option<PathBuf>,
    /// Output file; `None` or `-` for standard output.
    pub output: Option<PathBuf>,
    /// Output format.
    pub format: Format,
    /// Worker threads.
    pub jobs: usize,
    /// No progress bar, no warnings, no summary on stderr (errors are still printed).
    pub quiet: bool,
    /// Per-file analysis settings.
    pub analysis: Settings,
    /// Extra outputs.
    pub outputs: Outputs,
    /// Per-file budgets (`--budget`).
    pub budgets: Vec<gate::Budget>,
    /// The options a JSON report names at its head (`"options"`), `None` to leave them out.
    pub report_options: Option<json::ReportOptions>,
}

/// The extra outputs of a batch (each `None` when not asked for).
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    /// `--summary`: one row per input file.
    pub summary: Option<PathBuf>,
    /// Its format (`--summary-format`, or by the name's extension).
    pub summary_format: TableFormat,
    /// `--aggregate`: one row per distinct chain (or URL).
    pub aggregate: Option<PathBuf>,
    /// Its format (`--aggregate-format`, or by the name's extension).
    pub aggregate_format: TableFormat,
    /// `--aggregate-by`.
    pub aggregate_by: AggregateBy,
    /// `--chain-key`: how --aggregate and the Markdown's top chains group chains.
    pub chain_key: crate::report::chain_key::ChainKey,
    /// `--folded`: collapsed stacks.
    pub folded: Option<PathBuf>,
    /// `--folded-weight`.
    pub folded_weight: crate::report::folded::FoldedWeight,
    /// `--flamegraph`: SVG.
    pub flamegraph: Option<PathBuf>,
    /// `--markdown`.
    pub markdown: Option<PathBuf>,
    /// `--interactions`: one row per interaction (format by the name's extension).
    pub interactions: Option<PathBuf>,
    /// `--html`: the report as one self-contained page.
    pub html: Option<PathBuf>,
    /// `--html-tasks`: cards (with a flame chart) for this many of the longest tasks.
    pub html_tasks: usize,
    /// `--speedscope`: each long task's window as a speedscope profile.
    pub speedscope: Option<PathBuf>,
    /// `--animation-frames`: one row per long animation frame (CSV, JSON or NDJSON by the
    /// name's extension).
    pub animation_frames: Option<PathBuf>,
}

/// Counts for the one-line summary on stderr.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BatchSummary {
    /// Inputs read as traces or profiles (or that failed): neither skipped nor left out.
    pub files: usize,
    /// Inputs that failed (or were read only in part).
    pub failed: usize,
    /// Of them, failed for a reason a retry may fix ([`crate::error::io_retryable`]).
    pub retryable: usize,
    /// Inputs skipped (found by folder search, not traces).
    pub skipped: usize,
    /// Names left out ([`FileOutcome::LeftOut`]).
    pub left_out: usize,
    /// Long tasks found.
    pub long_tasks: usize,
    /// Rows with status `ok`.
    pub attributed: usize,
    /// Warning lines printed (one per kind of odd input per file).
    pub warnings: usize,
    /// Budget breaches.
    pub breaches: usize,
}

impl BatchSummary {
    /// The summary line.
    pub fn line(&self) -> String {
        let mut s = format!(
            "taskchain: {}, {}, {} attributed (ok), {}, {} failed",
            plural(self.files, "file", "files"),
            plural(self.long_tasks, "long task", "long tasks"),
            self.attributed,
            plural(self.warnings, "warning", "warnings"),
            self.failed,
        );
        if self.retryable > 0 {
            s += &format!(" ({} may succeed on a retry)", self.retryable);
        }
        if self.skipped > 0 {
            s += &format!(", {} skipped (not traces)", self.skipped);
        }
        if self.left_out > 0 {
            s += &format!(", {} left out (see the notes)", self.left_out);
        }
        if self.breaches > 0 {
            s += &format!(
                ", {}",
                plural(self.breaches, "budget breach", "budget breaches")
            );
        }
        s
    }
}

/// The outcome of one input, and what to drop once it is handed on.
fn outcome(inp: &InputPath, settings: &Settings, later: &mut DeferredDrop) -> FileOutcome {
    let file = inp.display_name();
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        analyze_input_deferring(inp, settings, later)
    }));
    match run {
        Ok(Ok(rep)) => FileOutcome::Done(rep),
        Ok(Err(e @ Error::OtherJson { .. })) if matches!(inp, InputPath::Found(_)) => {
            FileOutcome::Skipped(FileError {
                file,
                ..FileError::of(&e)
            })
        }
        Ok(Err(e)) => FileOutcome::Failed(FileError {
            file,
            ..FileError::of(&e)
        }),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            FileOutcome::Failed(FileError::new(
                &file,
                format!("internal error ({what}); please report it with the file"),
            ))
        }
    }
}

/// Analyses `inputs` on `jobs` workers and hands each outcome to `sink` in input order,
/// as soon as every input before it is done. `sink` returning an error stops the run
/// (files already started finish first).
pub(crate) fn for_each_outcome(
    inputs: &[std::result::Result<InputPath, Error>],
    settings: &Settings,
    jobs: usize,
    quiet: bool,
    mut sink: impl FnMut(FileOutcome) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    for_each_handed(inputs, settings, jobs, quiet, false, |h| match h {
        Handed::Outcome(o) => sink(o),
        Handed::Rows(_) => Ok(()),
    })
}

/// What [`for_each_handed`] hands on, in input order.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Handed {
    /// A block of the next file's rows (when streaming), in report order.
    Rows(Vec<ReportRow>),
    /// What became of the next file: after its rows, whose report has none left.
    Outcome(FileOutcome),
}

/// Rows blocks in flight from the workers to the sink at most (each ≤ 16,384 rows and
/// ~64 MiB of chains, `analyze::CHAIN_BLOCK_BYTES`):
/// a worker making rows faster than the sink writes them waits.
const ROW_BLOCKS_IN_FLIGHT: usize = 4;

/// [`for_each_outcome`], and with `stream_rows` each file's rows handed on as they are
/// made ([`crate::analyze::RowSink`]) rather than in its report: the file being written
/// streams, the rows of files finished ahead of it wait in memory for their turn.
pub(crate) fn for_each_handed(
    inputs: &[std::result::Result<InputPath, Error>],
    settings: &Settings,
    jobs: usize,
    quiet: bool,
    stream_rows: bool,
    mut sink: impl FnMut(Handed) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("cannot start worker threads")?;
    let bar = progress_bar(inputs, quiet);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // Files being read: (input size, bytes of it scanned so far), for the bar.
    let in_flight: std::sync::Mutex<BTreeMap<usize, (u64, std::sync::Arc<AtomicU64>)>> =
        Default::default();
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Handed)>(ROW_BLOCKS_IN_FLIGHT);
    let result = std::thread::scope(|scope| {
        // Dropped when this closure returns, before the workers are joined: a worker
        // waiting to send (the channel is bounded) then gets an error and ends.
        let rx = rx;
        for _ in 0..jobs.min(inputs.len()) {
            let tx = tx.clone();
            let (next, stop, pool, in_flight) = (&next, &stop, &pool, &in_flight);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= inputs.len() || stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let mut later = DeferredDrop::default();
                    let out = match &inputs[i] {
                        Err(e @ Error::LeftOut { .. }) => FileOutcome::LeftOut(FileError::of(e)),
                        Err(e) => FileOutcome::Failed(FileError::of(e)),
                        Ok(inp) => {
                            let counter = std::sync::Arc::new(AtomicU64::new(0));
                            lock(in_flight).insert(i, (input_size(inp), counter.clone()));
                            let mut s = settings.clone();
                            s.progress = Some(counter);
                            if stream_rows {
                                // A closed channel means the run stopped: the rows go
                                // nowhere, as the report would.
                                let tx = tx.clone();
                                s.row_sink = Some(crate::analyze::RowSink(std::sync::Arc::new(
                                    move |rows| {
                                        let _ = tx.send((i, Handed::Rows(rows)));
                                    },
                                )));
                            }
                            let out = pool.install(|| outcome(inp, &s, &mut later));
                            lock(in_flight).remove(&i);
                            out
                        }
                    };
                    if tx.send((i, Handed::Outcome(out))).is_err() {
                        return;
                    }
                    if settings.exit_after_run && next.load(Ordering::Relaxed) >= inputs.len() {
                        // This worker's last input: the process exit reclaims it.
                        std::mem::forget(later);
                    } else {
                        // Freed while the report is written, before the next input is read.
                        pool.install(|| later.drop_in_parallel());
                    }
                }
            });
        }
        drop(tx);
        let mut pending = BTreeMap::new();
        // Rows of files after the one being written, for their turn.
        let mut waiting: BTreeMap<usize, Vec<Vec<ReportRow>>> = BTreeMap::new();
        let mut emit = 0usize;
        let mut done_bytes = 0u64;
        let mut hand = |h: Handed| -> anyhow::Result<()> {
            let r = sink(h);
            if r.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            r
        };
        loop {
            let (i, out) = match rx.recv_timeout(std::time::Duration::from_millis(200)) {
                Ok((i, Handed::Rows(rows))) => {
                    if i == emit {
                        hand(Handed::Rows(rows))?;
                    } else {
                        waiting.entry(i).or_default().push(rows);
                    }
                    continue;
                }
                Ok((i, Handed::Outcome(out))) => (i, out),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    let reading: u64 = lock(&in_flight)
                        .values()
                        .map(|(size, c)| c.load(Ordering::Relaxed).min(*size))
                        .sum();
                    bar.set_position(done_bytes + reading);
                    continue;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            };
            pending.insert(i, out);
            while let Some(out) = pending.remove(&emit) {
                emit += 1;
                if let Some(inp) = inputs.get(emit - 1).and_then(|r| r.as_ref().ok()) {
                    done_bytes += input_size(inp);
                }
                bar.set_position(done_bytes);
                for line in messages(&out, quiet) {
                    if bar.is_hidden() {
                        say!("{line}");
                    } else {
                        bar.println(crate::report::text::printable(&line));
                    }
                }
                hand(Handed::Outcome(out))?;
                for rows in waiting.remove(&emit).into_iter().flatten() {
                    hand(Handed::Rows(rows))?;
                }
            }
        }
        Ok(())
    });
    bar.finish_and_clear();
    result
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn input_size(inp: &InputPath) -> u64 {
    match inp {
        InputPath::File(p) | InputPath::Found(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
        InputPath::Stdin => 0,
    }
}

/// A bar of bytes read over the inputs' total size, with rate and ETA; only when stderr is
/// a terminal and not `--quiet`.
fn progress_bar(
    inputs: &[std::result::Result<InputPath, Error>],
    quiet: bool,
) -> indicatif::ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let total: u64 = inputs.iter().flatten().map(input_size).sum();
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}, {eta}) {msg}",
        )
        .expect("valid template"),
    );
    bar.set_message(plural(inputs.len(), "file", "files"));
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// The stderr lines of one outcome: errors always, warnings unless `quiet`.
fn messages(o: &FileOutcome, quiet: bool) -> Vec<String> {
    let mut lines = Vec::new();
    match o {
        FileOutcome::Failed(e) => lines.push(format!("taskchain: error: {}", e.error)),
        FileOutcome::Skipped(e) if !quiet => lines.push(format!("taskchain: skipped: {}", e.error)),
        FileOutcome::LeftOut(e) if !quiet => lines.push(format!("taskchain: note: {}", e.error)),
        FileOutcome::Done(rep) => {
            if let Some(b) = &rep.broken {
                lines.push(format!("taskchain: error: {}: {b}", rep.file));
            }
            if !quiet {
                for w in crate::report::json::warning_lines(&rep.diagnostics) {
                    lines.push(format!("taskchain: warning: {}: {w}", rep.file));
                }
            }
        }
        _ => {}
    }
    lines
}

impl Config {
    /// Every output of the run with its path (`None`: not asked for; the report's `-` is
    /// standard output).
    fn wanted(&self) -> [(Output, Option<&Path>); 10] {
        let o = &self.outputs;
        [
            (
                Output::Report,
                Some(self.output.as_deref().unwrap_or(Path::new("-"))),
            ),
            (Output::Summary, o.summary.as_deref()),
            (Output::Aggregate, o.aggregate.as_deref()),
            (Output::Folded, o.folded.as_deref()),
            (Output::Flamegraph, o.flamegraph.as_deref()),
            (Output::Markdown, o.markdown.as_deref()),
            (Output::Interactions, o.interactions.as_deref()),
            (Output::Html, o.html.as_deref()),
            (Output::Speedscope, o.speedscope.as_deref()),
            (Output::AnimationFrames, o.animation_frames.as_deref()),
        ]
    }

    /// The outputs' flags and paths, for [`check_outputs`] against files written before the
    /// run (the traces `record` saves).
    #[cfg_attr(not(feature = "record"), allow(dead_code))]
    pub(crate) fn output_paths(&self) -> Vec<(&'static str, Option<&Path>)> {
        self.wanted().map(|(w, p)| (w.flag(), p)).to_vec()
    }
}

/// What a run found, for the exit code.
#[derive(Debug, Default)]
pub struct RunOutcome {
    /// Counts (and the summary line).
    pub summary: BatchSummary,
    /// Budget breaches.
    pub breaches: Vec<Breach>,
}

/// Runs the whole job: opens every output (so a bad path fails before any work), hands
/// each file's rows and outcome to the outputs' sinks (`report::sink`) as files
/// finish, runs the budgets, and puts the outputs in place once every sink is finished.
pub fn run(cfg: &Config) -> anyhow::Result<RunOutcome> {
    let inputs = input::paths::inputs(
        &cfg.paths,
        cfg.files_from.as_deref(),
        cfg.shard,
        cfg.follow_links,
    )?;
    // The list of files and the task entries are inputs too.
    let mut read: Vec<std::result::Result<InputPath, Error>> =
        inputs.iter().flatten().cloned().map(Ok).collect();
    let (side_files, read_from) = cfg.analysis.enrich.read_paths();
    read.extend(
        [cfg.files_from.as_deref(), cfg.tasks_file.as_deref()]
            .into_iter()
            .flatten()
            .chain(side_files.iter().map(PathBuf::as_path))
            .map(|p| Ok(InputPath::File(p.to_path_buf()))),
    );
    for dir in &cfg.output_dirs {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let wanted = cfg.wanted();
    check_outputs(&wanted.map(|(w, p)| (w.flag(), p)), &read, &read_from)?;
    let mut files = Vec::new();
    for (what, path) in wanted {
        if let Some(p) = path {
            files.push((what, OutFile::open(Some(p), cfg.create_dirs)?));
        }
    }
    let mut out = RunOutcome::default();
    {
        // Each output's sink, and what its write errors say; the sinks borrow their files
        // until the end of this block.
        let mut sinks = Vec::new();
        for (what, f) in &mut files {
            let error = match what {
                Output::Report => format!("cannot write the report ({})", f.name()),
                _ => format!("cannot write {}", f.name()),
            };
            sinks.push((what.sink(cfg, f.writer())?, error));
        }
        let handed = |h: Handed| -> anyhow::Result<()> {
            let outcome = match h {
                Handed::Rows(rows) => {
                    out.summary.attributed +=
                        rows.iter().filter(|r| r.status == ChainStatus::Ok).count();
                    for (sink, error) in &mut sinks {
                        sink.rows(&rows).with_context(|| error.clone())?;
                    }
                    return Ok(());
                }
                Handed::Outcome(o) => o,
            };
            let s = &mut out.summary;
            // Skipped files (found by a folder search, not traces) are counted apart.
            s.files += usize::from(!matches!(
                outcome,
                FileOutcome::LeftOut(_) | FileOutcome::Skipped(_)
            ));
            let mut breaches = Vec::new();
            match &outcome {
                FileOutcome::Done(rep) => {
                    s.failed += usize::from(rep.broken.is_some());
                    s.long_tasks += rep.long_tasks;
                    s.warnings += if cfg.quiet {
                        0
                    } else {
                        rep.diagnostics.kinds()
                    };
                    breaches = gate::check(&cfg.budgets, &rep.file, rep.long_tasks, &rep.stats);
                    for b in &breaches {
                        say!("taskchain: budget: {b}");
                    }
                    s.breaches += breaches.len();
                }
                FileOutcome::Failed(e) => {
                    s.failed += 1;
                    s.retryable += e.retryable as usize;
                }
                FileOutcome::Skipped(_) => s.skipped += 1,
                FileOutcome::LeftOut(_) => s.left_out += 1,
            }
            let sentences: Vec<String> = breaches.iter().map(|b| b.to_string()).collect();
            out.breaches.extend(breaches);
            let done = FileDone {
                outcome: &outcome,
                breaches: &sentences,
            };
            for (sink, error) in &mut sinks {
                sink.file_done(&done).with_context(|| error.clone())?;
            }
            Ok(())
        };
        for_each_handed(&inputs, &cfg.analysis, cfg.jobs, cfg.quiet, true, handed)?;

        let s = &out.summary;
        let totals = Totals {
            files: s.files,
            long_tasks: s.long_tasks,
            attributed: s.attributed,
        };
        for (sink, error) in sinks {
            sink.finish(&totals).with_context(|| error.clone())?;
        }
    }
    for (_, f) in files {
        f.commit()?;
    }
    Ok(out)
}

/// The outputs a batch can write, in the order they are put in place.
#[derive(Clone, Copy)]
enum Output {
    Report,
    Summary,
    Aggregate,
    Folded,
    Flamegraph,
    Markdown,
    Interactions,
    Html,
    Speedscope,
    AnimationFrames,
}

impl Output {
    /// The option that names it.
    fn flag(self) -> &'static str {
        match self {
            Output::Report => "-o",
            Output::Summary => "--summary",
            Output::Aggregate => "--aggregate",
            Output::Folded => "--folded",
            Output::Flamegraph => "--flamegraph",
            Output::Markdown => "--markdown",
            Output::Interactions => "--interactions",
            Output::Html => "--html",
            Output::Speedscope => "--speedscope",
            Output::AnimationFrames => "--animation-frames",
        }
    }

    /// Its sink, writing to `out`.
    fn sink<'a>(self, cfg: &Config, out: Out<'a>) -> std::io::Result<Box<dyn Sink + 'a>> {
        let o = &cfg.outputs;
        Ok(match self {
            Output::Report => {
                Box::new(TaskSink::new(cfg.format, out, cfg.report_options.as_ref())?)
            }
            Output::Summary => Box::new(SummarySink::new(out, o.summary_format)?),
            Output::Aggregate => Box::new(AggregateSink::new(
                o.aggregate_by,
                o.chain_key,
                o.aggregate_format,
                out,
            )),
            Output::Folded => Box::new(FoldedSink::new(o.folded_weight, false, out)),
            Output::Flamegraph => Box::new(FoldedSink::new(o.folded_weight, true, out)),
            Output::Markdown => Box::new(MarkdownSink::new(o.chain_key, out)),
            Output::Interactions => Box::new(InteractionSink::new(
                o.interactions.as_deref().unwrap_or(Path::new("-")),
                out,
            )?),
            Output::Html => Box::new(HtmlSink::new(o.html_tasks, o.chain_key, out)),
            Output::Speedscope => Box::new(SpeedscopeSink::new(out)?),
            Output::AnimationFrames => Box::new(FramesSink::new(
                out,
                FramesFormat::for_path(o.animation_frames.as_deref().unwrap_or(Path::new(""))),
            )?),
        })
    }
}

/// Analyses every input and keeps the reports (for `compare` and tests; a batch streams).
pub fn analyze_all(
    paths: &[PathBuf],
    settings: &Settings,
    jobs: usize,
    quiet: bool,
) -> anyhow::Result<BatchResult> {
    let inputs = input::paths::inputs(paths, None, None, false)?;
    let mut res = BatchResult::default();
    for_each_outcome(&inputs, settings, jobs, quiet, |o| {
        res.summary.files += usize::from(!matches!(o, FileOutcome::LeftOut(_)));
        match o {
            FileOutcome::Done(rep) => {
                if let Some(b) = &rep.broken {
                    res.summary.failed += 1;
                    res.errors.push(FileError::new(&rep.file, b.clone()));
                }
                res.summary.long_tasks += rep.long_tasks;
                res.summary.attributed += rep
                    .rows
                    .iter()
                    .filter(|r| r.status == ChainStatus::Ok)
                    .count();
                res.rows.extend(rep.rows.iter().cloned());
                res.reports.push(rep);
            }
            FileOutcome::Failed(e) => {
                res.summary.failed += 1;
                res.summary.retryable += e.retryable as usize;
                res.errors.push(e);
            }
            FileOutcome::Skipped(_) => res.summary.skipped += 1,
            FileOutcome::LeftOut(_) => res.summary.left_out += 1,
        }
        Ok(())
    })?;
    Ok(res)
}

/// Everything a batch found, kept in memory.
#[derive(Debug, Default)]
pub struct BatchResult {
    /// Rows of every file, in docs/METHOD.md §3 order.
    pub rows: Vec<ReportRow>,
    /// The per-file reports.
    pub reports: Vec<FileReport>,
    /// Files that failed, in input order.
    pub errors: Vec<FileError>,
    /// Counts.
    pub summary: BatchSummary,
}

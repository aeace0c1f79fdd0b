//! Analysis of one input: the one place that runs a file through the stages. Its bytes
//! (whole, or a stream of blocks) → the envelope ([`crate::scan::envelope`]) → a reader
//! ([`crate::reader::trace`] after the scan, or [`crate::reader::field`]) → a
//! [`Recording`] → chain resolution ([`crate::chain`]) → a [`FileReport`].

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use rayon::prelude::*;

use crate::chain::{self, ChainConfig, Flags};
use crate::enrich::{Enrichment, FileContext, FileEnricher};
use crate::error::{AnalyzeError, Error};
use crate::input::{self, BlockSource, InputPath};
use crate::reader::field::{self, TaskEntries};
use crate::reader::{self, Recording};
use crate::report::{FileReport, FileStats, ReportRow};
use crate::scan::envelope::{self, Envelope};
use crate::scan::{self, stream::StreamError};
use crate::tasks::Scope;
use crate::time::TimeDelta;
use crate::vocab::{DeferredDrop, ThreadKey};

/// Settings of one file's analysis.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Which threads are reported.
    pub scope: Scope,
    /// A task is long when `dur > threshold` (`--threshold-ms`, default 50 ms).
    pub threshold: TimeDelta,
    /// Chain resolution.
    pub chain: ChainConfig,
    /// `--lookback-ms` was not given: traces use 0, field data one sample interval.
    pub lookback_auto: bool,
    /// `--tasks FILE`: long-task entries for profiles that carry none.
    pub tasks: Option<Arc<TaskEntries>>,
    /// Where the scan adds the bytes of this input it has read (as stored: compressed for
    /// gzip), for a progress bar that moves inside a large file.
    pub progress: Option<Arc<AtomicU64>>,
    /// The enrichment stage's settings.
    pub enrich: Enrichment,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            scope: Scope::MainFrame,
            threshold: TimeDelta::from_micros(50_000),
            chain: ChainConfig::default(),
            lookback_auto: true,
            tasks: None,
            progress: None,
            enrich: Enrichment::default(),
        }
    }
}

/// Analyses the file at `path` — a Chrome trace (`.json`, `.json.gz`), a JS Self-Profiling
/// field bundle or a `.cpuprofile` — and returns its long tasks with their call chains: one
/// [`ReportRow`] per long task (`rows`, sorted by pid, tid and start), the file's counts
/// (`stats`) and its odd input (`diagnostics`). Plain files are memory-mapped, gzip is read
/// as a stream (detected by its magic bytes, not the name); memory stays bounded by the
/// largest event, not the file.
///
/// Errors: [`Error::Io`] (cannot open or read), [`Error::Gzip`], [`Error::NotATrace`],
/// [`Error::OtherJson`] (JSON of another kind), [`Error::Json`] (the event array is broken
/// before its first event; a break after some events is `broken` in the report).
///
/// ```
/// use std::path::Path;
/// use taskchain::{Settings, analyze_path, chain::ChainStatus};
///
/// let report = analyze_path(
///     Path::new("samples/cpu-profiler-m86/trace.json.gz"),
///     &Settings::default(),
/// )?;
/// assert!(!report.rows.is_empty());
/// for row in &report.rows {
///     // Milliseconds, and the chain from the outermost caller to the leaf.
///     let chain = taskchain::report::chain_text(&row.chain);
///     println!("{} ms {:?} {chain}", taskchain::report::millis_text(row.task_dur), row.status);
/// }
/// assert!(report.rows.iter().any(|r| r.status == ChainStatus::Ok));
/// # Ok::<(), taskchain::Error>(())
/// ```
pub fn analyze_path(path: &Path, settings: &Settings) -> Result<FileReport, Error> {
    analyze_input_deferring(
        &InputPath::File(path.to_path_buf()),
        settings,
        &mut DeferredDrop::default(),
    )
}

/// Reads and analyses one input, leaving its bytes and what the analysis no longer needs
/// in `later`, for the caller to drop once the report is handed on.
pub fn analyze_input_deferring(
    inp: &InputPath,
    s: &Settings,
    later: &mut DeferredDrop,
) -> Result<FileReport, Error> {
    let path = inp.path();
    let name = inp.display_name();
    let (result, bytes, trace_id): (_, _, Option<String>) =
        match input::open(inp, s.progress.clone())? {
            input::Source::Whole(bytes) => {
                let n = bytes.len() as u64;
                let id = input::identity::trace_id(&bytes);
                let result = analyze_bytes_deferring(&name, &bytes, s, later);
                later.keep(bytes);
                (result, n, Some(id))
            }
            input::Source::Gzip(blocks) => {
                let n = blocks.compressed_len();
                let id = blocks.trace_id().to_string();
                (
                    analyze_stream_deferring(&name, blocks, s, later),
                    n,
                    Some(id),
                )
            }
            input::Source::Stream(blocks) => {
                let read = blocks.bytes_read();
                let result = analyze_stream_deferring(&name, blocks, s, later);
                (
                    result,
                    read.load(std::sync::atomic::Ordering::Relaxed),
                    None,
                )
            }
        };
    let mut rep = result.map_err(|e| e.at(path))?;
    rep.stats.bytes = bytes;
    let shared: Option<Arc<str>> = trace_id.as_deref().map(Arc::from);
    for r in &mut rep.rows {
        r.trace_id.clone_from(&shared);
    }
    rep.trace_id = trace_id;
    Ok(rep)
}

/// Analyses one trace held in memory: long tasks and their chains.
pub fn analyze_bytes(file: &str, bytes: &[u8], s: &Settings) -> Result<FileReport, AnalyzeError> {
    analyze_bytes_deferring(file, bytes, s, &mut DeferredDrop::default())
}

/// [`analyze_bytes`], leaving what it no longer needs in `later` for the caller to drop.
pub fn analyze_bytes_deferring(
    file: &str,
    bytes: &[u8],
    s: &Settings,
    later: &mut DeferredDrop,
) -> Result<FileReport, AnalyzeError> {
    let start = match envelope::detect(bytes)? {
        Envelope::Events { start, .. } => start,
        Envelope::OtherObject { keys } => {
            return analyze_field_data(file, bytes, &keys, s, later);
        }
    };
    let timer = Timer::start(file);
    let trace = scan::scan_with_progress(bytes, start, true, s.progress.as_deref())
        .map_err(AnalyzeError::from)?;
    timer.lap("scan");
    let mut trace = trace;
    if let Some((from, to)) =
        envelope::metadata_range(bytes, start, trace.closed_at.map(|c| c as usize))
    {
        trace.embedded_maps = envelope::embedded_maps(&bytes[from..to]);
    }
    let rec = reader::trace::read(trace, s.scope, s.threshold, s.tasks.is_some(), later)?;
    timer.lap("profiles");
    let rep = resolve(file, rec, Some(bytes), s, later);
    timer.lap("chains");
    Ok(rep)
}

/// Analyses one trace arriving in blocks (a gzip stream). A stream error after some data
/// is a note in the report's diagnostics (the part before it was used).
pub fn analyze_stream(
    file: &str,
    source: impl BlockSource,
    s: &Settings,
) -> Result<FileReport, AnalyzeError> {
    analyze_stream_deferring(file, source, s, &mut DeferredDrop::default())
}

/// [`analyze_stream`], leaving what it no longer needs in `later` for the caller to drop.
pub fn analyze_stream_deferring(
    file: &str,
    source: impl BlockSource,
    s: &Settings,
    later: &mut DeferredDrop,
) -> Result<FileReport, AnalyzeError> {
    let timer = Timer::start(file);
    let mut source = source;
    let (trace, stream_error) = match scan::stream::scan_blocks(&mut source) {
        Ok(r) => r,
        Err(StreamError::Envelope(e)) => return Err(e.into()),
        Err(StreamError::Scan(e)) => return Err(e.into()),
        Err(StreamError::Broken(e)) => {
            return Err(AnalyzeError::NotATrace(format!(
                "gzip stream broken before any trace data ({e})"
            )));
        }
        Err(StreamError::OtherObject(keys, mut whole)) => {
            // Field data (a .cpuprofile.gz): small enough to read whole.
            while source.append_to(&mut whole).unwrap_or(false) {}
            return analyze_field_data(file, &whole, &keys, s, later);
        }
    };
    timer.lap("scan");
    let rec = reader::trace::read(trace, s.scope, s.threshold, s.tasks.is_some(), later)?;
    timer.lap("profiles");
    let mut rep = resolve(file, rec, None, s, later);
    timer.lap("chains");
    if let Some(e) = stream_error {
        // flate2 reports a CRC or length mismatch at the end of a member as a checksum error.
        rep.diagnostics.note(if e.to_string().contains("checksum") {
            format!("gzip checksum mismatch ({e}): the data is corrupt, its rows may be wrong")
        } else {
            format!(
                "gzip stream broken ({e}) after {} events; the part before it was used",
                rep.events
            )
        });
    }
    Ok(rep)
}

/// A JSON object without `traceEvents`: field data, a look-alike, or other JSON.
fn analyze_field_data(
    file: &str,
    bytes: &[u8],
    keys: &[String],
    s: &Settings,
    later: &mut DeferredDrop,
) -> Result<FileReport, AnalyzeError> {
    match field::format_of(keys) {
        Ok(Some(format)) => {
            let rec = field::read(bytes, format, s.threshold, s.tasks.as_deref())?;
            Ok(resolve(file, rec, None, s, later))
        }
        Err(reason) => Err(AnalyzeError::NotATrace(reason)),
        Ok(None) => {
            let shown: Vec<&str> = keys.iter().take(6).map(String::as_str).collect();
            Err(AnalyzeError::OtherJson(format!(
                "a JSON object with keys [{}] and no \"traceEvents\" array",
                shown.join(", ")
            )))
        }
    }
}

/// Long tasks whose chains are resolved at a time (in parallel), then made rows.
const CHAIN_BLOCK: usize = 1 << 14;

/// Chains of a recording's tasks → the file's report; what the recording no longer holds
/// for the report goes to `later`. `file_bytes`: the whole trace, when its sample arrays
/// were left in it. Field data widens the chain settings to its coarse sampling.
fn resolve(
    file: &str,
    mut rec: Recording,
    file_bytes: Option<&[u8]>,
    s: &Settings,
    later: &mut DeferredDrop,
) -> FileReport {
    let mut chain = s.chain;
    if let Some(interval) = rec.sample_interval {
        if s.lookback_auto {
            chain.lookback = interval;
        }
        chain.gap = chain
            .gap
            .max(TimeDelta::from_nanos(interval.as_nanos() * 5 / 2));
    }
    let diagnostics = std::mem::take(&mut rec.diagnostics);
    let context = FileContext {
        pages: std::mem::take(&mut rec.pages),
        scripts: std::mem::take(&mut rec.scripts),
        embedded_maps: std::mem::take(&mut rec.embedded_maps),
    };
    let mut rep = resolve_chains(
        file,
        &rec,
        file_bytes,
        &chain,
        &s.enrich,
        &context,
        diagnostics,
    );
    rep.events = rec.events;
    rep.broken = rec.broken.take();
    later.keep(rec);
    rep
}

/// Chains of the recording's long tasks → enrichment (with the file's `context`) → the
/// file's report (rows, counts, folded stacks), with `diagnostics` and the chain
/// resolution's own counts of odd input.
pub fn resolve_chains(
    file: &str,
    rec: &Recording,
    file_bytes: Option<&[u8]>,
    chain_config: &ChainConfig,
    enrichment: &Enrichment,
    context: &FileContext,
    mut diagnostics: crate::vocab::Diagnostics,
) -> FileReport {
    let fifty = TimeDelta::from_micros(50_000);
    let top = &rec.top_level;
    let mut stats = FileStats {
        bytes: 0,
        threads: rec.threads,
        top_level_tasks: top.len(),
        long_task_time: rec.tasks.iter().map(|t| t.task.dur).sum(),
        blocking_time: top
            .iter()
            .filter(|t| t.dur > fifty)
            .map(|t| TimeDelta::from_nanos(t.dur.as_nanos() - fifty.as_nanos()))
            .sum(),
        max_task: top.iter().map(|t| t.dur).max().unwrap_or_default(),
        attributed_time: TimeDelta::ZERO,
        profiles: rec.profiles.profiles.len(),
        samples: rec.profiles.profiles.iter().map(|p| p.sample_count).sum(),
        frames: 0,
        frames_symbolicated: 0,
    };
    let chain_config = &enrichment.chain_config(*chain_config);
    // Symbolication runs before the other enrichment stages, and before folded stacks
    // are summed, so that stacks of one original function merge.
    let enricher = FileEnricher::new(enrichment, context);
    let mut symbolication = enricher.symbolication();
    let mut stacks: std::collections::BTreeMap<String, (u64, TimeDelta)> = Default::default();
    let strings_cut = diagnostics.count(crate::scan::args::STRINGS_CUT) > 0;
    let mut rows = Vec::with_capacity(rec.tasks.len());
    // One copy of the file's name and of each thread's, shared by the rows.
    let file_name: Arc<str> = file.into();
    let no_name: Arc<str> = "".into();
    let thread_names: HashMap<ThreadKey, Arc<str>> = rec
        .thread_names
        .iter()
        .map(|(k, v)| (*k, Arc::from(v.as_str())))
        .collect();
    // Tasks in blocks, in order: a block's chains become rows before the next block's
    // are resolved, so memory holds the rows and one block of chains, not every chain.
    for block in rec.tasks.chunks(CHAIN_BLOCK) {
        let mut chains: Vec<(chain::TaskChain, &reader::FoundTask)> = block
            .par_iter()
            .filter_map(|t| {
                let mut c = chain::resolve(&t.task, &rec.profiles, file_bytes, chain_config)?;
                // The target samples' times serve the trigger only: freed here, task by
                // task, so the next task's tables reuse their memory (kept for thousands
                // of tasks, they made every later table come from fresh pages: chains
                // took 3× longer).
                let target_times = std::mem::take(&mut c.target_times);
                if t.source == reader::TaskSource::Trace {
                    let list = rec.entries.by_thread.get(&c.task.thread);
                    let inside = list.map_or(&[][..], |l| {
                        chain::trigger::inside(l, c.task.ts, c.task.dur)
                    });
                    c.trigger = Some(chain::trigger::of_task(
                        inside,
                        &target_times,
                        &rec.entries.timers,
                    ));
                }
                Some((c, t))
            })
            .collect();
        diagnostics.add(
            "samples naming unknown nodes (skipped)",
            chains.iter().map(|(c, _)| c.unknown_samples).sum(),
        );
        diagnostics.add(
            "profile chunks whose samples could not be read, met by task windows (left out)",
            chains.iter().map(|(c, _)| c.unreadable_chunks).sum(),
        );
        stats.attributed_time = stats.attributed_time
            + chains
                .iter()
                .filter(|(c, _)| c.status == chain::ChainStatus::Ok)
                .map(|(c, _)| c.task.dur)
                .sum();
        for (c, _) in &mut chains {
            let counts = symbolication.task(c);
            stats.frames += counts.frames;
            stats.frames_symbolicated += counts.symbolicated;
        }
        for (c, _) in &chains {
            for (path, n, t) in &c.stacks {
                let e = stacks.entry(path.clone()).or_default();
                e.0 += u64::from(*n);
                e.1 = e.1 + *t;
            }
        }
        rows.extend(chains.into_iter().map(|(mut c, t)| {
            let notes = enricher.task(&c);
            c.flags.set(Flags::TRUNCATED_FILE, rec.truncated);
            c.flags.set(Flags::DAMAGED_FILE, rec.damaged);
            c.flags.set(Flags::STRING_CUT, strings_cut);
            // In a cut-off file, a thread without a profile may have had one in the part
            // not written: that is the cut's doing, not the recording's.
            if rec.truncated && c.status == chain::ChainStatus::NoProfile {
                c.status = chain::ChainStatus::ProfileCutOff;
            }
            let name = thread_names.get(&c.task.thread).unwrap_or(&no_name);
            let mut row = ReportRow::new(&file_name, name, rec.first_ts, c);
            row.task_source = t.source;
            row.loaf = t.loaf.clone();
            row.notes = notes;
            row
        }));
    }
    diagnostics.merge(&symbolication.finish());
    FileReport {
        file: file.to_string(),
        trace_id: None,
        rows,
        long_tasks: rec.tasks.len(),
        events: 0,
        truncated: rec.truncated,
        diagnostics,
        broken: None,
        stats,
        stacks: stacks.into_iter().map(|(p, (n, t))| (p, n, t)).collect(),
    }
}

/// Stage timings on stderr when the environment sets `TASKCHAIN_TIMINGS` (benchmarks).
struct Timer<'a> {
    file: &'a str,
    start: Option<std::time::Instant>,
}

impl<'a> Timer<'a> {
    fn start(file: &'a str) -> Self {
        let on = std::env::var_os("TASKCHAIN_TIMINGS").is_some();
        Timer {
            file,
            start: on.then(std::time::Instant::now),
        }
    }
    fn lap(&self, stage: &str) {
        if let Some(t) = self.start {
            eprintln!(
                "taskchain: timing: {}: {stage} done at {:?}",
                self.file,
                t.elapsed()
            );
        }
    }
}

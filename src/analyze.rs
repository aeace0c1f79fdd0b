//! Analysis of one input: the one place that runs a file through the stages. Its bytes
//! (whole, or a stream of blocks) → the envelope ([`crate::scan::envelope`]) → a reader
//! ([`crate::reader::trace`] after the scan, or [`crate::reader::field`]) → a
//! [`Recording`] → chain resolution ([`crate::chain`]) → a [`FileReport`].

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use rayon::prelude::*;

use crate::chain::phases::Phase;
use crate::chain::{self, ChainConfig, Flags};
use crate::enrich::{Enrichment, FileContext, FileEnricher};
use crate::error::{AnalyzeError, Error};
use crate::input::{self, BlockSource, InputPath, gzip::GzipError, pages::Pages};
use crate::reader::field::{self, TaskEntries};
use crate::reader::{self, Recording};
use crate::report::interactions::{InteractionRow, OverlappingTask, PhaseRow};
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
    /// Called as each stage of a file ends (for benchmarks: `TASKCHAIN_TIMINGS` makes the
    /// CLI print them).
    pub stage_done: Option<StageDone>,
    /// Where the file's rows go as they are made, instead of [`FileReport::rows`]: `None`
    /// collects them there (the library's default).
    pub row_sink: Option<RowSink>,
    /// Called where the analysis has just freed much memory that the stages after it do
    /// not take back at once: after a streamed input's scan (gzip read as a stream, a
    /// pipe), which frees its read buffers, tens of MB for a large `.json.gz`. An
    /// allocator that keeps freed memory for reuse can return it to the system there
    /// (the binary asks mimalloc to, `mi_collect`), so that the file's peak is the scan's
    /// and not the scan's plus what the later stages take. `None` (the default): nothing
    /// is called. Called from the thread analysing the file.
    pub release_freed: Option<fn()>,
    /// The process ends as soon as the run does (the binary sets it; `false` by default):
    /// the bytes of each worker's last input and what its analysis no longer needs are
    /// then left for the system to reclaim at exit, not freed one by one. Unmapping a
    /// 1 GB trace and freeing its profiles took ~30 ms of a 0.55 s run.
    pub exit_after_run: bool,
    /// Whether each input gets its `trace_id` ([`FileReport::trace_id`], each row's
    /// `trace_id`): SHA-256 of up to 2 MiB of the stored bytes, a cost felt over many small
    /// `.json.gz` files. On by default; the CLI asks for it only for the outputs that
    /// carry it (Parquet).
    pub trace_ids: bool,
}

/// A callback handed a file's rows as they are made, in blocks of at most 16,384, in
/// report order (by pid, tid and start; each row with its `trace_id`): the report then
/// comes back with `rows` empty, and memory holds one block of rows, not the file's. The
/// batch streams them to the writers this way. Called from the thread analysing the file,
/// before the report is returned; not called for a file that fails before its long tasks
/// are known.
#[derive(Clone)]
pub struct RowSink(pub Arc<RowSinkFn>);

/// The function in a [`RowSink`].
pub type RowSinkFn = dyn Fn(Vec<ReportRow>) + Send + Sync;

impl std::fmt::Debug for RowSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RowSink(..)")
    }
}

/// A callback told `(file, stage, time since the file's analysis started)` as each stage
/// of a file ends: `"scan"`, `"profiles"`, `"chains"`. Called from the thread analysing
/// the file.
#[derive(Clone)]
pub struct StageDone(pub Arc<StageDoneFn>);

/// The function in a [`StageDone`]: `(file, stage, elapsed)`.
pub type StageDoneFn = dyn Fn(&str, &str, std::time::Duration) + Send + Sync;

impl std::fmt::Debug for StageDone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StageDone(..)")
    }
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
            stage_done: None,
            row_sink: None,
            release_freed: None,
            exit_after_run: false,
            trace_ids: true,
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
pub(crate) fn analyze_input_deferring(
    inp: &InputPath,
    s: &Settings,
    later: &mut DeferredDrop,
) -> Result<FileReport, Error> {
    let path = inp.path();
    let name = inp.display_name();
    let reading = input::Reading {
        progress: s.progress.clone(),
        trace_id: s.trace_ids,
    };
    let source = input::open(inp, reading)?;
    let trace_id: Option<Arc<str>> = match &source {
        input::Source::Whole(bytes) if s.trace_ids => Some(input::identity::trace_id(bytes).into()),
        input::Source::Whole(_) | input::Source::Stream(_) => None,
        input::Source::Gzip(blocks) => blocks.trace_id().map(Arc::from),
        input::Source::Inflated(gz) => gz.trace_id.as_deref().map(Arc::from),
    };
    // Streamed rows get the trace id on their way out; collected ones below.
    let streaming;
    let s = match (&s.row_sink, &trace_id) {
        (Some(sink), Some(id)) => {
            let (sink, id) = (sink.clone(), id.clone());
            streaming = Settings {
                row_sink: Some(RowSink(Arc::new(move |mut rows: Vec<ReportRow>| {
                    for r in &mut rows {
                        r.trace_id = Some(id.clone());
                    }
                    (sink.0)(rows)
                }))),
                ..s.clone()
            };
            &streaming
        }
        _ => s,
    };
    let (result, bytes) = match source {
        input::Source::Whole(bytes) => {
            let n = bytes.len() as u64;
            let result = analyze_whole(&name, &bytes, bytes.pages(), s, later);
            later.keep(bytes);
            (result, n)
        }
        input::Source::Gzip(blocks) => {
            let n = blocks.compressed_len();
            (analyze_stream_deferring(&name, blocks, s, later), n)
        }
        input::Source::Inflated(gz) => {
            // The compressed bytes were counted as read when inflated: the scan of the
            // inflated ones adds nothing more.
            let quiet = Settings {
                progress: None,
                ..s.clone()
            };
            let result = analyze_whole(&name, &gz.bytes, Pages::Owned, &quiet, later);
            later.keep(gz.bytes);
            (result, gz.compressed_len)
        }
        input::Source::Stream(blocks) => {
            let read = blocks.bytes_read();
            let result = analyze_stream_deferring(&name, blocks, s, later);
            (result, read.load(std::sync::atomic::Ordering::Relaxed))
        }
    };
    let mut rep = result.map_err(|e| e.at(path))?;
    rep.stats.bytes = bytes;
    for r in &mut rep.rows {
        r.trace_id.clone_from(&trace_id);
    }
    rep.trace_id = trace_id.map(|id| id.to_string());
    Ok(rep)
}

/// Analyses one input held in memory, as [`analyze_path`] does a file (the same formats,
/// detected by content): `file` is the name the report and its errors give it. Errors:
/// [`Error::NotATrace`], [`Error::OtherJson`], [`Error::Json`] (never [`Error::Io`]).
///
/// ```
/// let trace = br#"{"traceEvents": [
///   {"ph": "X", "name": "RunTask", "cat": "disabled-by-default-devtools.timeline",
///    "pid": 1, "tid": 1, "ts": 1000, "dur": 80000},
///   {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1,
///    "args": {"name": "CrRendererMain"}}
/// ]}"#;
/// let report = taskchain::analyze_bytes("t.json", trace, &taskchain::Settings::default())?;
/// // One long task (80 ms), with no profile to name its chain.
/// assert_eq!(report.long_tasks, 1);
/// let err = taskchain::analyze_bytes("x.json", b"[1, 2]", &Default::default()).unwrap_err();
/// assert!(matches!(err, taskchain::Error::OtherJson { .. }), "{err}");
/// # Ok::<(), taskchain::Error>(())
/// ```
pub fn analyze_bytes(file: &str, bytes: &[u8], s: &Settings) -> Result<FileReport, Error> {
    analyze_bytes_deferring(file, bytes, s, &mut DeferredDrop::default())
        .map_err(|e| e.at(file.into()))
}

/// [`analyze_bytes`], leaving what it no longer needs in `later` for the caller to drop.
pub(crate) fn analyze_bytes_deferring(
    file: &str,
    bytes: &[u8],
    s: &Settings,
    later: &mut DeferredDrop,
) -> Result<FileReport, AnalyzeError> {
    analyze_whole(file, bytes, Pages::Owned, s, later)
}

/// [`analyze_bytes_deferring`] over bytes whose pages take `pages` advice: the scan of a
/// trace fills a mapped file's page tables range by range (its pages stay mapped for the
/// windows of the long tasks, which read chunks again); field data's parse lets them go
/// once every byte has been read, as nothing reads them again.
fn analyze_whole(
    file: &str,
    bytes: &[u8],
    pages: Pages,
    s: &Settings,
    later: &mut DeferredDrop,
) -> Result<FileReport, AnalyzeError> {
    let read_once = &|| pages.done_with(bytes);
    // A Perfetto protobuf trace, whatever its name.
    if scan::proto::sniff(bytes, true) == scan::proto::Sniff::Proto {
        let timer = Timer::start(file, s.stage_done.as_ref());
        let trace = scan::proto::scan_bytes(bytes);
        if let Some(p) = &s.progress {
            p.fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
        }
        timer.lap("scan");
        return analyze_scanned(file, trace, timer, s, later);
    }
    // UTF-16 (PowerShell's `>`): read as the same text in UTF-8.
    if let Some(utf8) = input::encoding::transcode(bytes, input::encoding::sniff(bytes)) {
        read_once();
        let mut rep = analyze_bytes_deferring(file, &utf8, s, later)?;
        rep.diagnostics.add(UTF16_READ, 1);
        return Ok(rep);
    }
    let start = match envelope::detect(bytes)? {
        Envelope::Events { start, .. } => start,
        Envelope::OtherObject { keys } => {
            return analyze_field_data(file, bytes, &keys, read_once, s, later);
        }
    };
    let timer = Timer::start(file, s.stage_done.as_ref());
    let trace = scan::scan_with_progress(bytes, start, true, pages, s.progress.as_deref())
        .map_err(AnalyzeError::from)?;
    timer.lap("scan");
    let mut trace = trace;
    if let Some((from, to)) =
        envelope::metadata_range(bytes, start, trace.closed_at.map(|c| c as usize))
    {
        trace.embedded_maps = envelope::embedded_maps(&bytes[from..to], &mut trace.diagnostics);
    }
    let rec = reader::trace::read(
        trace,
        Some(bytes),
        s.scope,
        s.threshold,
        s.tasks.is_some(),
        later,
    )?;
    timer.lap("profiles");
    let rep = resolve(file, rec, Some(bytes), s, later);
    timer.lap("chains");
    Ok(rep)
}

/// The warning of an input read as UTF-16 (transcoded; byte offsets in its other messages
/// are offsets in the UTF-8 text).
pub(crate) const UTF16_READ: &str =
    "UTF-16 text (as PowerShell's `>` writes), read as UTF-8 (byte offsets are of the UTF-8 text)";

/// Analyses one trace arriving in blocks (a gzip stream). A stream error after some data
/// is a note in the report's diagnostics (the part before it was used). Errors as
/// [`analyze_bytes`].
pub fn analyze_stream(
    file: &str,
    source: impl BlockSource,
    s: &Settings,
) -> Result<FileReport, Error> {
    analyze_stream_deferring(file, source, s, &mut DeferredDrop::default())
        .map_err(|e| e.at(file.into()))
}

/// [`analyze_stream`], leaving what it no longer needs in `later` for the caller to drop.
pub(crate) fn analyze_stream_deferring(
    file: &str,
    source: impl BlockSource,
    s: &Settings,
    later: &mut DeferredDrop,
) -> Result<FileReport, AnalyzeError> {
    let timer = Timer::start(file, s.stage_done.as_ref());
    // The first bytes tell a Perfetto protobuf trace (plain or gzip) from JSON.
    let mut source = source;
    let mut head = Vec::new();
    let mut more = true;
    let mut early_error = None;
    while more {
        match source.append_to(&mut head) {
            Ok(m) => more = m,
            Err(e) => {
                early_error = Some(e);
                more = false;
            }
        }
        if scan::proto::sniff(&head, !more) != scan::proto::Sniff::NeedMore {
            break;
        }
    }
    if scan::proto::sniff(&head, !more) == scan::proto::Sniff::Proto {
        let (trace, stream_error) = match early_error {
            Some(e) => {
                let (t, _) = scan::proto::scan_stream(head, false, &mut source);
                (t, Some(e))
            }
            None => scan::proto::scan_stream(head, more, &mut source),
        };
        timer.lap("scan");
        if let Some(release) = s.release_freed {
            release();
        }
        let mut rep = analyze_scanned(file, trace, timer, s, later)?;
        if let Some(e) = stream_error {
            note_stream_error(&mut rep, &e);
        }
        return Ok(rep);
    }
    let source = Prefixed {
        head: Some(head),
        more,
        error: early_error,
        inner: source,
    };
    let mut source = input::encoding::Decoded::new(source);
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
            let mut rep = analyze_field_data(file, &whole, &keys, &|| {}, s, later)?;
            if source.transcoded() {
                rep.diagnostics.add(UTF16_READ, 1);
            }
            return Ok(rep);
        }
    };
    timer.lap("scan");
    if let Some(release) = s.release_freed {
        release();
    }
    let rec = reader::trace::read(trace, None, s.scope, s.threshold, s.tasks.is_some(), later)?;
    timer.lap("profiles");
    let mut rep = resolve(file, rec, None, s, later);
    timer.lap("chains");
    if source.transcoded() {
        rep.diagnostics.add(UTF16_READ, 1);
    }
    if let Some(e) = stream_error {
        note_stream_error(&mut rep, &e);
    }
    Ok(rep)
}

/// The warning of a stream that broke after some data (which was used).
fn note_stream_error(rep: &mut FileReport, e: &std::io::Error) {
    rep.diagnostics
        .note(if matches!(GzipError::of(e), Some(GzipError::Checksum)) {
            format!("gzip checksum mismatch ({e}): the data is corrupt, its rows may be wrong")
        } else {
            format!(
                "gzip stream broken ({e}) after {} events; the part before it was used",
                rep.events
            )
        });
}

/// A scanned trace whose sample arrays were read during the scan (a protobuf trace):
/// profiles, tasks and chains → the file's report.
fn analyze_scanned(
    file: &str,
    trace: scan::ScannedTrace,
    timer: Timer<'_>,
    s: &Settings,
    later: &mut DeferredDrop,
) -> Result<FileReport, AnalyzeError> {
    let rec = reader::trace::read(trace, None, s.scope, s.threshold, s.tasks.is_some(), later)?;
    timer.lap("profiles");
    let rep = resolve(file, rec, None, s, later);
    timer.lap("chains");
    Ok(rep)
}

/// A block source whose first bytes were read already (to tell the format): `head`
/// first, then `inner`'s blocks, then the error met while reading `head`, if any.
struct Prefixed<S> {
    head: Option<Vec<u8>>,
    /// `inner` has more after `head`.
    more: bool,
    error: Option<std::io::Error>,
    inner: S,
}

impl<S: BlockSource> BlockSource for Prefixed<S> {
    fn append_to(&mut self, buf: &mut Vec<u8>) -> std::io::Result<bool> {
        if let Some(head) = self.head.take() {
            if buf.is_empty() {
                *buf = head;
            } else {
                buf.extend_from_slice(&head);
            }
            return Ok(self.more || self.error.is_some());
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if !self.more {
            return Ok(false);
        }
        self.inner.append_to(buf)
    }

    fn next_block(&mut self) -> std::io::Result<Option<(Vec<u8>, usize)>> {
        if let Some(head) = self.head.take()
            && !head.is_empty()
        {
            return Ok(Some((head, 0)));
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if !self.more {
            return Ok(None);
        }
        self.inner.next_block()
    }

    fn recycle(&mut self, buffer: Vec<u8>) {
        self.inner.recycle(buffer);
    }

    fn will_hold(&mut self, blocks: usize) {
        self.inner.will_hold(blocks);
    }
}

/// A JSON object without `traceEvents`: field data, a look-alike, or other JSON.
/// `read_once`: as for [`analyze_whole`].
fn analyze_field_data(
    file: &str,
    bytes: &[u8],
    keys: &[String],
    read_once: &dyn Fn(),
    s: &Settings,
    later: &mut DeferredDrop,
) -> Result<FileReport, AnalyzeError> {
    match field::format_of(keys) {
        Ok(Some(format)) => {
            let rec = field::read(bytes, format, s.threshold, s.tasks.as_deref(), read_once)?;
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

/// Bytes the chains of one block may hold, by the bound [`block_len`] puts on each: a
/// 1 MiB function name on 8,000 long tasks, or a 50,000-frame stack on 3,000, held 6 to
/// 7 GB in one block of 16,384 tasks (each row its own copy of the chain). A batch holds
/// a few blocks at once (`batch::ROW_BLOCKS_IN_FLIGHT`).
const CHAIN_BLOCK_BYTES: usize = 64 << 20;

/// Long tasks of `rec` resolved per block: [`CHAIN_BLOCK`], fewer when the chain of the
/// profiles' longest stack (its frames and their texts) would make a block hold over
/// [`CHAIN_BLOCK_BYTES`]; at least one. Blocks change no output, only what is held at once.
fn block_len(rec: &Recording) -> usize {
    if rec.tasks.len() <= 1 {
        return CHAIN_BLOCK;
    }
    let (frames, text) = rec
        .profiles
        .profiles
        .iter()
        .map(|p| p.longest_stack())
        .fold((0, 0), |a, b| (a.0.max(b.0), a.1.max(b.1)));
    // A row without its chain: its task, flags, notes and breakdown (a generous 2 KiB).
    let row = 2048 + frames * std::mem::size_of::<chain::ChainFrame>() + text;
    (CHAIN_BLOCK_BYTES / row).clamp(1, CHAIN_BLOCK)
}

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
        s.row_sink.as_ref(),
    );
    rep.events = rec.events;
    rep.broken = rec.broken.take();
    later.keep(rec);
    rep
}

/// Chains of the recording's long tasks → enrichment (with the file's `context`) → the
/// file's report (rows, counts, folded stacks), with `diagnostics` and the chain
/// resolution's own counts of odd input. With a `sink`, the rows go there block by block
/// and the report's `rows` stay empty.
#[allow(clippy::too_many_arguments)]
pub(crate) fn resolve_chains(
    file: &str,
    rec: &Recording,
    file_bytes: Option<&[u8]>,
    chain_config: &ChainConfig,
    enrichment: &Enrichment,
    context: &FileContext,
    mut diagnostics: crate::vocab::Diagnostics,
    sink: Option<&RowSink>,
) -> FileReport {
    let top = &rec.top_level;
    let mut stats = FileStats {
        bytes: 0,
        threads: rec.threads,
        top_level_tasks: top.count,
        long_task_time: rec.tasks.iter().map(|t| t.task.dur).sum(),
        blocking_time: top.blocking_time,
        blocking_time_from_fcp: top.blocking_time_from_fcp,
        max_task: top.max,
        attributed_time: TimeDelta::ZERO,
        profiles: rec.profiles.profiles.len(),
        samples: rec.profiles.profiles.iter().map(|p| p.sample_count).sum(),
        frames: 0,
        frames_symbolicated: 0,
        interactions: rec.interactions.len(),
        inp: rec
            .interactions
            .iter()
            .filter(|i| i.is_inp)
            .map(|i| i.duration())
            .max(),
        long_animation_frames: rec.frames.len(),
        long_tasks_outside_scope: rec.outside_scope_long_tasks,
    };
    let chain_config = &enrichment.chain_config(*chain_config);
    // Symbolication runs before the other enrichment stages, and before folded stacks
    // are summed, so that stacks of one original function merge.
    let enricher = FileEnricher::new(enrichment, context);
    let mut symbolication = enricher.symbolication();
    let mut stacks: std::collections::BTreeMap<String, (u64, TimeDelta)> = Default::default();
    let strings_cut = diagnostics.count(crate::scan::args::STRINGS_CUT) > 0;
    let mut rows = Vec::with_capacity(if sink.is_some() { 0 } else { rec.tasks.len() });
    // One copy of the file's name and of each thread's, shared by the rows.
    let file_name: Arc<str> = file.into();
    let no_name: Arc<str> = "".into();
    let thread_names: HashMap<ThreadKey, Arc<str>> = rec
        .thread_names
        .iter()
        .map(|(k, v)| (*k, Arc::from(v.as_str())))
        .collect();
    // Tasks in blocks, in order: a block's chains become rows before the next block's
    // are resolved, so memory holds one block of chains, not every chain (and, with a
    // sink, one block of rows).
    // Rows whose out-of-order samples changed nothing, and the start times of the rows of
    // tasks left open (a `B` without its `E`), for the file's warnings.
    let mut reordered_unflagged = 0u64;
    let mut open_rows: Vec<TimeDelta> = Vec::new();
    for block in rec.tasks.chunks(block_len(rec)) {
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
                    let (list, longest) = rec.entries.of_thread(c.task.thread);
                    c.breakdown = Some(chain::breakdown::of_window(
                        list,
                        longest,
                        None,
                        c.task.ts,
                        c.task.end(),
                        file_bytes,
                        Some(&rec.profiles),
                    ));
                }
                Some((c, t))
            })
            .collect();
        reordered_unflagged += chains.iter().filter(|(c, _)| c.reordered_unflagged).count() as u64;
        open_rows.extend(
            chains
                .iter()
                .filter(|(c, _)| c.task.incomplete)
                .map(|(c, _)| c.task.ts.since(rec.first_ts)),
        );
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
        let made = chains.into_iter().map(|(mut c, t)| {
            let notes = enricher.task(&c);
            file_flags(&mut c, rec, strings_cut);
            let name = thread_names.get(&c.task.thread).unwrap_or(&no_name);
            let mut row = ReportRow::new(&file_name, name, rec.first_ts, c);
            row.task_source = t.source;
            row.loaf = t.loaf.clone();
            row.notes = notes;
            row
        });
        match sink {
            Some(sink) => (sink.0)(made.collect()),
            None => rows.extend(made),
        }
    }
    let (mut interactions, mut frames) = if chain_config.collect_interactions {
        let interactions = interaction_rows(
            &file_name,
            rec,
            file_bytes,
            chain_config,
            &enricher,
            &mut symbolication,
            strings_cut,
        );
        let frames: Vec<_> = rec
            .frames
            .iter()
            .map(|f| {
                let name = thread_names.get(&f.thread).unwrap_or(&no_name);
                frame_row(
                    f,
                    rec,
                    file_bytes,
                    chain_config,
                    &mut symbolication,
                    &file_name,
                    name,
                )
            })
            .collect();
        (interactions, frames)
    } else {
        (Vec::new(), Vec::new())
    };
    link_frames(&mut interactions, &mut frames);
    diagnostics.add(REORDERED_UNFLAGGED, reordered_unflagged);
    let open = diagnostics.take(crate::tasks::OPEN_BEGIN);
    if open > 0 {
        diagnostics.note(open_tasks_note(open, &open_rows));
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
        interactions,
        frames,
    }
}

/// Each interaction's long animation frames and each frame's interactions: those on one
/// thread whose spans overlap (the interaction from its input to its next paint, the frame
/// from its begin to its end), in time order.
fn link_frames(
    interactions: &mut [InteractionRow],
    frames: &mut [crate::report::frames::FrameRow],
) {
    // Frames by (thread, start); none is longer than `longest`, so the frames that
    // overlap a span begin at most `longest` before it: a binary search, not a scan of
    // every frame per interaction.
    let mut order: Vec<(ThreadKey, crate::time::Timestamp, usize)> = frames
        .iter()
        .enumerate()
        .map(|(k, f)| (f.thread, f.ts, k))
        .collect();
    order.sort_unstable();
    let longest = frames.iter().map(|f| f.dur).max().unwrap_or_default();
    for i in interactions.iter_mut() {
        let e = &i.interaction.event;
        let from = order.partition_point(|&(t, ts, _)| (t, ts + longest) <= (e.thread, e.ts));
        for &(thread, ts, k) in &order[from..] {
            if thread != e.thread || ts >= e.end {
                break;
            }
            let f = &mut frames[k];
            if e.ts < f.ts + f.dur {
                i.animation_frames.push(f.ts);
                f.interactions.push(e.interaction_id);
            }
        }
    }
}

/// The warning for long tasks whose windows met out-of-order samples that changed nothing.
pub(crate) const REORDERED_UNFLAGGED: &str = "long tasks whose windows hold out-of-order samples (negative timeDeltas) that change no chain, leaf or status (not flagged samples_reordered)";

/// What `open` tasks begun (`B`) but never ended (no `E`) mean for the report: their end is
/// a guess, and which of the report's rows (by `task_start_ms`, the first five) they are.
fn open_tasks_note(open: u64, rows: &[TimeDelta]) -> String {
    let tasks = if open == 1 {
        "1 task never ends in the trace (a B event without its E)".to_string()
    } else {
        format!("{open} tasks never end in the trace (B events without their E)")
    };
    let touched = match rows.len() {
        0 => "none of them is a long task of this report".to_string(),
        n => {
            let mut at: Vec<String> = rows
                .iter()
                .take(5)
                .map(|&d| crate::report::millis_text(d))
                .collect();
            if n > 5 {
                at.push("…".into());
            }
            let (rows, are, its) = if n == 1 {
                (
                    "1 of the report's rows".to_string(),
                    "is such a task",
                    "its duration_ms is",
                )
            } else {
                (
                    format!("{n} of the report's rows"),
                    "are such tasks",
                    "their duration_ms are",
                )
            };
            format!(
                "{rows} (task_start_ms {}) {are}, flagged incomplete: {its} a lower bound",
                at.join(", ")
            )
        }
    };
    format!(
        "{tasks}: each was taken to end at its thread's last task event or its profile's \
         last busy sample; {touched}"
    )
}

/// The row of one long animation frame: its chain over its span (§1, as for a task, kept
/// whatever `--on-low-confidence` says), symbolicated as the tasks' chains, and its time
/// by category (docs/METHOD.md §2.9, §2.10).
fn frame_row(
    f: &reader::frames::AnimationFrame,
    rec: &Recording,
    file_bytes: Option<&[u8]>,
    chain_config: &ChainConfig,
    symbolication: &mut crate::enrich::symbolicate::FileSymbolication<'_>,
    file: &Arc<str>,
    thread_name: &Arc<str>,
) -> crate::report::frames::FrameRow {
    use crate::report::frames::{FrameRow, FrameScriptRow};
    let span = crate::tasks::TopLevelTask {
        thread: f.thread,
        ts: f.ts,
        dur: f.dur,
        incomplete: false,
    };
    let cfg = ChainConfig {
        policy: chain::LowConfidencePolicy::Flag,
        collect_stacks: false,
        ..*chain_config
    };
    let mut c = chain::resolve(&span, &rec.profiles, file_bytes, &cfg)
        .expect("the flag policy keeps every chain");
    symbolication.task(&mut c);
    c.flags.set(Flags::TRUNCATED_FILE, rec.truncated);
    c.flags.set(Flags::DAMAGED_FILE, rec.damaged);
    let (list, longest) = rec.entries.of_thread(f.thread);
    let spans = rec.task_spans.get(&f.thread).map_or(&[][..], Vec::as_slice);
    let breakdown = chain::breakdown::of_window(
        list,
        longest,
        Some(spans),
        f.ts,
        f.end(),
        file_bytes,
        Some(&rec.profiles),
    );
    FrameRow {
        file: Arc::clone(file),
        thread: f.thread,
        thread_name: Arc::clone(thread_name),
        ts: f.ts,
        start: f.ts.since(rec.first_ts),
        dur: f.dur,
        blocking_ms: f.timing.blocking_duration_ms,
        num_scripts: f.timing.num_scripts,
        render_start: f.render_start.map(|t| t.since(f.ts)),
        style_layout_start: f.style_layout_start.map(|t| t.since(f.ts)),
        scripts: f
            .scripts
            .iter()
            .map(|s| FrameScriptRow {
                start: s.ts.since(f.ts),
                dur: s.dur,
                compile: s.compile,
                info: s.info.clone(),
            })
            .collect(),
        window_samples: c.window_samples,
        target_samples: c.target_samples,
        stack_time: c.stack_time,
        confidence: c.confidence,
        status: c.status,
        flags: c.flags,
        chain: c.chain,
        breakdown,
        interactions: Vec::new(),
    }
}

/// The recording's interactions with each phase's chain resolved, symbolicated, its
/// trigger from the entry points that overlap the phase, and enriched as a task row's;
/// the input delay also lists the long tasks that overlap it (docs/METHOD.md §2.8).
fn interaction_rows(
    file_name: &Arc<str>,
    rec: &Recording,
    file_bytes: Option<&[u8]>,
    chain_config: &ChainConfig,
    enricher: &FileEnricher<'_>,
    symbolication: &mut crate::enrich::symbolicate::FileSymbolication<'_>,
    strings_cut: bool,
) -> Vec<InteractionRow> {
    let no_name: Arc<str> = "".into();
    let resolved: Vec<Vec<(Phase, chain::TaskChain)>> = rec
        .interactions
        .par_iter()
        .map(|i| {
            Phase::ALL
                .iter()
                .map(|&p| {
                    let mut c =
                        chain::phases::resolve_phase(i, p, &rec.profiles, file_bytes, chain_config);
                    let target_times = std::mem::take(&mut c.target_times);
                    let (start, end) = (c.task.ts, c.task.end());
                    let (l, longest) = rec.entries.of_thread(c.task.thread);
                    let overlapping: Vec<_> = l
                        [scan::records::entries_overlapping(l, longest, start, end)]
                    .iter()
                    .filter(|e| e.ts + e.dur > start)
                    .cloned()
                    .collect();
                    c.trigger = Some(chain::trigger::of_task(
                        &overlapping,
                        &target_times,
                        &rec.entries.timers,
                    ));
                    // Trace recordings only: field data has no work events to count.
                    if let Some(spans) = rec.task_spans.get(&c.task.thread) {
                        let (list, longest) = rec.entries.of_thread(c.task.thread);
                        c.breakdown = Some(chain::breakdown::of_window(
                            list,
                            longest,
                            Some(spans),
                            start,
                            end,
                            file_bytes,
                            Some(&rec.profiles),
                        ));
                    }
                    (p, c)
                })
                .collect()
        })
        .collect();
    rec.interactions
        .iter()
        .zip(resolved)
        .map(|(i, phases)| {
            let phases = phases
                .into_iter()
                .map(|(phase, mut c)| {
                    symbolication.task(&mut c);
                    let notes = enricher.task(&c);
                    file_flags(&mut c, rec, strings_cut);
                    let long_tasks = if phase == Phase::InputDelay {
                        overlapping_tasks(rec, c.task.thread, c.task.ts, c.task.end())
                    } else {
                        Vec::new()
                    };
                    let js_samples = c.js_samples;
                    let name = rec
                        .thread_names
                        .get(&c.task.thread)
                        .map(|n| Arc::from(n.as_str()));
                    let mut row = ReportRow::new(
                        file_name,
                        name.as_ref().unwrap_or(&no_name),
                        rec.first_ts,
                        c,
                    );
                    row.notes = notes;
                    PhaseRow {
                        phase,
                        row,
                        js_samples,
                        long_tasks,
                    }
                })
                .collect();
            InteractionRow {
                file: Arc::clone(file_name),
                interaction: i.clone(),
                start: i.event.ts.since(rec.first_ts),
                phases,
                animation_frames: Vec::new(),
            }
        })
        .collect()
}

/// Sets the flags the file gives every row (`truncated_file`, `damaged_file`,
/// `string_cut`); in a cut-off file, a thread without a profile may have had one in the
/// part not written: that is the cut's doing (`profile_cut_off`), not the recording's.
fn file_flags(c: &mut chain::TaskChain, rec: &Recording, strings_cut: bool) {
    c.flags.set(Flags::TRUNCATED_FILE, rec.truncated);
    c.flags.set(Flags::DAMAGED_FILE, rec.damaged);
    c.flags.set(Flags::STRING_CUT, strings_cut);
    if rec.truncated && c.status == chain::ChainStatus::NoProfile {
        c.status = chain::ChainStatus::ProfileCutOff;
    }
}

/// The long tasks of `thread` that overlap `[start, end)`, with the overlap.
fn overlapping_tasks(
    rec: &Recording,
    thread: ThreadKey,
    start: crate::time::Timestamp,
    end: crate::time::Timestamp,
) -> Vec<OverlappingTask> {
    rec.tasks
        .iter()
        .map(|t| &t.task)
        .filter(|t| t.thread == thread && t.ts < end && t.end() > start)
        .map(|t| OverlappingTask {
            ts: t.ts,
            dur: t.dur,
            overlap: t.end().min(end).since(t.ts.max(start)),
        })
        .collect()
}

/// Stage timings for [`Settings::stage_done`].
struct Timer<'a> {
    file: &'a str,
    start: Option<(std::time::Instant, &'a StageDone)>,
}

impl<'a> Timer<'a> {
    fn start(file: &'a str, done: Option<&'a StageDone>) -> Self {
        Timer {
            file,
            start: done.map(|d| (std::time::Instant::now(), d)),
        }
    }
    fn lap(&self, stage: &str) {
        if let Some((t, done)) = self.start {
            (done.0)(self.file, stage, t.elapsed());
        }
    }
}

//! What the scan keeps of the events that matter, as small owned records.
//!
//! Times are [`Timestamp`]/[`TimeDelta`] (ns); `order` is the event's byte offset in the
//! file, which orders events as the file does, also when ranges are scanned in parallel.

use std::ops::Range;

use super::chunk::{DeltaSummary, read_deltas, read_samples};
use super::packed::{self, Unpack};

use crate::time::{TimeDelta, Timestamp};
use crate::vocab::{CallFrame, NodeId, Pid, ProfileId, ThreadKey};

/// A map the trace carries for a script (`metadata.sourceMaps[]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EmbeddedMap {
    /// The script URL.
    pub url: String,
    /// Its map URL as written (may be a `data:` URL).
    pub source_map_url: String,
    /// The map's JSON text, when embedded: shared with the decoded map, which keeps it
    /// for its names (one copy of a large map, not two).
    pub source_map: Option<std::sync::Arc<Vec<u8>>>,
}

/// A script's source map URL as a V8 source-rundown event gives it (`ScriptCatchup` /
/// `ScriptCompiled`, category `disabled-by-default-devtools.v8-source-rundown`,
/// `args.data.{url, sourceMapUrl, scriptId}`). Frames join it by (pid, `scriptId`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptRecord {
    /// The process.
    pub pid: Pid,
    /// `scriptId` as text (as in [`CallFrame::script_id`]).
    pub script_id: String,
    /// `url` (empty when none).
    pub url: String,
    /// `sourceMapUrl`: as written in the script, relative to `url`, or a `data:` URL.
    pub source_map_url: String,
}

/// One entry of `cpuProfile.nodes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// `id`.
    pub id: NodeId,
    /// `parent` (trace chunks), when given.
    pub parent: Option<NodeId>,
    /// `children` (CDP-style nodes), when given.
    pub children: Vec<NodeId>,
    /// `callFrame`.
    pub call_frame: CallFrame,
}

/// What kind of entry point a trace event is (what started a task). From
/// Chrome's `devtools.timeline` events, as DevTools' Performance panel names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EntryKind {
    /// `EventDispatch` (`args.data.type`: click, keydown, input…).
    EventDispatch,
    /// `FunctionCall`: V8 called into a JS function (a listener, callback, message).
    FunctionCall,
    /// `TimerFire`.
    TimerFire,
    /// `FireAnimationFrame`.
    AnimationFrame,
    /// `FireIdleCallback`.
    IdleCallback,
    /// `EvaluateScript`, `v8.evaluateModule`.
    Script,
    /// `ParseHTML`.
    ParseHtml,
    /// `XHRReadyStateChange`, `XHRLoad`.
    Xhr,
    /// `RunMicrotasks`.
    Microtasks,
    /// `MinorGC`, `MajorGC`, `V8.GCScavenger`, `V8.GCFinalizeMC`, `BlinkGC.AtomicPhase`.
    Gc,
    /// `UpdateLayoutTree`, `RecalculateStyles`, `Layout`.
    StyleLayout,
    /// `PrePaint`, `Paint`, `Layerize`, `UpdateLayerTree`, `CompositeLayers`.
    Paint,
    /// Other main-thread work the breakdown counts ([`WorkCategory`]: compiling, hit tests,
    /// commits, …); not an entry point: triggers leave it out.
    Work,
}

/// What the main thread did, in DevTools' categories (its `EventCategory` by event name,
/// front_end/models/trace/Styles.ts), with garbage collection and parsing / compiling
/// taken out of its scripting (docs/METHOD.md §2.10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WorkCategory {
    /// Running JavaScript and the events that call it.
    Scripting,
    /// Style recalculation, layout, pre-paint, layerizing, hit tests (DevTools' rendering).
    StyleLayout,
    /// Paint, commit, compositing, image decodes (DevTools' painting).
    PaintComposite,
    /// V8 and Blink garbage collection.
    Gc,
    /// HTML and style-sheet parsing, script compiling and code caches.
    ParseCompile,
}

/// The entry kind and work category of a complete (`X`) event by its name, `None` for
/// names neither an entry point nor counted work. One match: every `X` event of a trace
/// comes here, and most are neither.
#[inline]
pub(crate) fn classify_name(name: &[u8]) -> Option<(EntryKind, WorkCategory)> {
    use EntryKind as K;
    use WorkCategory as W;
    Some(match name {
        b"EventDispatch" => (K::EventDispatch, W::Scripting),
        b"FunctionCall" => (K::FunctionCall, W::Scripting),
        b"TimerFire" => (K::TimerFire, W::Scripting),
        b"FireAnimationFrame" => (K::AnimationFrame, W::Scripting),
        b"FireIdleCallback" => (K::IdleCallback, W::Scripting),
        b"EvaluateScript" | b"v8.evaluateModule" => (K::Script, W::Scripting),
        b"ParseHTML" => (K::ParseHtml, W::ParseCompile),
        b"XHRReadyStateChange" | b"XHRLoad" => (K::Xhr, W::Scripting),
        b"RunMicrotasks" => (K::Microtasks, W::Scripting),
        b"MinorGC"
        | b"MajorGC"
        | b"V8.GCScavenger"
        | b"V8.GCFinalizeMC"
        | b"BlinkGC.AtomicPhase" => (K::Gc, W::Gc),
        b"UpdateLayoutTree" | b"RecalculateStyles" | b"Layout" => (K::StyleLayout, W::StyleLayout),
        b"Paint" | b"CompositeLayers" => (K::Paint, W::PaintComposite),
        b"PrePaint" | b"Layerize" | b"UpdateLayerTree" => (K::Paint, W::StyleLayout),
        b"v8.compile"
        | b"V8.CompileModule"
        | b"V8.CompileCode"
        | b"V8.OptimizeCode"
        | b"v8.produceCache"
        | b"v8.produceModuleCache"
        | b"v8.parseOnBackgroundParsing"
        | b"v8.deserializeOnBackground"
        | b"ParseAuthorStyleSheet" => (K::Work, W::ParseCompile),
        b"GCEvent" | b"CppGC.IncrementalSweep" => (K::Work, W::Gc),
        b"HitTest" | b"ComputeIntersections" | b"ScrollLayer" => (K::Work, W::StyleLayout),
        b"Commit" | b"UpdateLayer" | b"PaintSetup" | b"PaintImage" | b"Decode Image" => {
            (K::Work, W::PaintComposite)
        }
        b"RunPostTaskCallback"
        | b"HandlePostMessage"
        | b"V8Console::runTask"
        | b"EmbedderCallback" => (K::Work, W::Scripting),
        _ => return None,
    })
}

impl EntryKind {
    /// The kind of a complete (`X`) event by its name, `None` for other names (and for
    /// counted work that is no entry point).
    pub fn of_name(name: &[u8]) -> Option<EntryKind> {
        classify_name(name)
            .map(|(kind, _)| kind)
            .filter(|&k| k != EntryKind::Work)
    }

    /// True for the kinds that run JavaScript (all but GC, style/layout, paint and other
    /// work).
    pub fn runs_js(self) -> bool {
        !matches!(
            self,
            EntryKind::Gc | EntryKind::StyleLayout | EntryKind::Paint | EntryKind::Work
        )
    }
}

/// An entry-point event (an `X` event of an [`EntryKind`]) on some thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryPoint {
    /// The thread.
    pub thread: ThreadKey,
    /// `ts`.
    pub ts: Timestamp,
    /// `dur`.
    pub dur: TimeDelta,
    /// What it is.
    pub kind: EntryKind,
    /// Its category in the breakdown of a window's time.
    pub work: WorkCategory,
    /// Its `args`: unread (where they lie), or what was read from them. Only the entry
    /// points inside long tasks and interactions are ever read
    /// (`collect::read_entry_details`), so the scan keeps their bytes instead of parsing
    /// every one; one field, not three, keeps the hundreds of thousands of entry points of
    /// a large trace at 64 bytes each.
    pub(crate) args: EntryArgs,
}

impl EntryPoint {
    /// From `args`: the event type (`click`), the function (`name url:line:col`, 1-based
    /// as the trace gives them), the script or document URL; empty when none (or not read).
    pub fn detail(&self) -> &str {
        match &self.args {
            EntryArgs::Read(d) => &d.detail,
            _ => "",
        }
    }

    /// `TimerFire`: `args.data.timerId`; `None` when missing (or not read).
    pub fn timer_id(&self) -> Option<i64> {
        match &self.args {
            EntryArgs::Read(d) => d.timer_id,
            _ => None,
        }
    }

    /// The `args` bytes kept unread, if any.
    pub(crate) fn raw_args(&self) -> Option<&RawArgs> {
        match &self.args {
            EntryArgs::Unread(raw) => Some(raw),
            _ => None,
        }
    }
}

/// An entry point's `args`: none kept, kept unread, or read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum EntryArgs {
    /// Nothing kept (kinds whose args say nothing) or nothing found when read.
    #[default]
    None,
    /// The bytes, to be read when the entry point turns out to matter.
    Unread(RawArgs),
    /// What was read (boxed: few entry points are ever read).
    Read(Box<EntryDetail>),
}

impl EntryArgs {
    /// Read args: `detail` and `timer_id` ([`EntryArgs::None`] when both are empty).
    pub(crate) fn read(detail: String, timer_id: Option<i64>) -> EntryArgs {
        if detail.is_empty() && timer_id.is_none() {
            EntryArgs::None
        } else {
            EntryArgs::Read(Box::new(EntryDetail { detail, timer_id }))
        }
    }
}

/// What an entry point's `args` say ([`EntryPoint::detail`], [`EntryPoint::timer_id`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EntryDetail {
    detail: String,
    timer_id: Option<i64>,
}

/// A trace's entry points in file order, kept as the lists the scan's ranges collected:
/// joining two ranges moves lists and never copies entry points (a large trace has
/// hundreds of thousands; each copy filled fresh pages), and only those of the threads in
/// scope are copied once, by thread, into the reader's index.
#[derive(Clone, Debug, Default)]
pub struct EntryPoints {
    lists: Vec<Vec<EntryPoint>>,
}

impl EntryPoints {
    /// Adds `e` after the others.
    pub fn push(&mut self, e: EntryPoint) {
        match self.lists.last_mut() {
            Some(list) => list.push(e),
            None => self.lists.push(vec![e]),
        }
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.lists.iter().map(Vec::len).sum()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.lists.iter().all(Vec::is_empty)
    }

    /// Appends `later`'s (from the part of the file after this one's), moving its lists.
    pub fn append(&mut self, later: EntryPoints) {
        self.lists
            .extend(later.lists.into_iter().filter(|l| !l.is_empty()));
    }

    /// All of them, in file order.
    pub fn iter(&self) -> impl Iterator<Item = &EntryPoint> {
        self.lists.iter().flatten()
    }

    /// All of them, in file order, to be moved.
    pub fn into_entries(self) -> impl Iterator<Item = EntryPoint> {
        self.lists.into_iter().flatten()
    }

    /// The one list a single collector made (tests).
    #[cfg(test)]
    pub(crate) fn only_list(&mut self) -> &mut [EntryPoint] {
        assert!(self.lists.len() <= 1, "{} lists", self.lists.len());
        self.lists.first_mut().map_or(&mut [], |l| l.as_mut_slice())
    }
}

/// Equal when they hold the same entry points in the same order (however split).
impl PartialEq for EntryPoints {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

/// An event's raw `args`, kept to be parsed later.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RawArgs {
    /// Bytes `at..at + len` of the whole file (a mapped file the scan's collector was
    /// made over, which stays available).
    InFile {
        /// 0-based byte offset in the file.
        at: u64,
        /// Length, bytes.
        len: u32,
    },
    /// A copy (a stream, or args over 4 GiB).
    Owned(Box<[u8]>),
}

impl RawArgs {
    /// The bytes, from `file` (the whole file, for [`RawArgs::InFile`]); `None` when
    /// `file` is missing or too short.
    pub(crate) fn bytes<'a>(&'a self, file: Option<&'a [u8]>) -> Option<&'a [u8]> {
        match self {
            RawArgs::InFile { at, len } => {
                let at = usize::try_from(*at).ok()?;
                file?.get(at..at.checked_add(*len as usize)?)
            }
            RawArgs::Owned(b) => Some(b),
        }
    }
}

/// The entry points of `list` (sorted by `ts`) that start inside `[ts, ts + dur)`: those
/// of a task, for its trigger.
pub(crate) fn entries_inside(list: &[EntryPoint], ts: Timestamp, dur: TimeDelta) -> Range<usize> {
    let end = ts + dur;
    list.partition_point(|e| e.ts < ts)..list.partition_point(|e| e.ts < end)
}

/// The entry points of `list` (sorted by `ts`) from the first that is still running at
/// `start` to the last that starts before `end`: those that overlap `[start, end)`, with
/// the ones nested in an earlier overlapping one that ended before `start`. `longest`: no
/// event of `list` lasts longer (none that began more than this before `start` can still
/// run at it, so the search for the first starts there, not at the list's head).
pub(crate) fn entries_overlapping(
    list: &[EntryPoint],
    longest: TimeDelta,
    start: Timestamp,
    end: Timestamp,
) -> Range<usize> {
    let hi = list.partition_point(|e| e.ts < end);
    let from = list[..hi].partition_point(|e| e.ts + longest <= start);
    let lo = list[from..hi]
        .iter()
        .position(|e| e.ts + e.dur > start)
        .map_or(hi, |k| from + k);
    lo..hi
}

/// A `TimerInstall` instant event: where a timer was set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimerInstall {
    /// The process (timer ids are per renderer).
    pub pid: Pid,
    /// `args.data.timerId`.
    pub timer_id: i64,
    /// `setTimeout 50 ms` or `setInterval 50 ms`, then ` at name url:line:col` from
    /// `args.data.stackTrace[0]` when the trace has it.
    pub detail: String,
}

/// An `EventTiming` event: Chrome's Event Timing entry of one input event (category
/// `devtools.timeline`, nestable async `b` at the event's start, `e` at the next paint
/// after it, paired by `id`; Chrome ≥ 103, `WindowPerformance::ReportEvent`). See
/// docs/METHOD.md §2.8.
#[derive(Clone, Debug, PartialEq)]
pub struct EventTiming {
    /// The thread that wrote it (the renderer's main thread).
    pub thread: ThreadKey,
    /// The event's `ts`.
    pub ts: Timestamp,
    /// The pairing id: `id`, else `id2.global`, else `id2.local` (as the DevTools trace
    /// engine's `extractId`); `None` when the event has none.
    pub id: Option<String>,
    /// `args.data` of a `b` (boxed: most events are `e`, or begins of no interaction);
    /// `None` for an `e`.
    pub begin: Option<Box<EventTimingData>>,
    /// Byte offset in the file (file order).
    pub order: u64,
}

/// What an `EventTiming` begin says in `args.data`: the millisecond fields are on the
/// page's clock (`performance.now()`), not the trace's. Each is `None` when missing or
/// not of its type.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventTimingData {
    /// `type`: the DOM event type (`pointerdown`, `click`, `keydown`, ...).
    pub event_type: Option<String>,
    /// `interactionId` (0: not part of an interaction).
    pub interaction_id: Option<i64>,
    /// `duration` (ms, rounded by Chrome to 8 ms before M121 and to 1 µs after).
    pub duration: Option<f64>,
    /// `timeStamp` (ms): when the input happened, page clock; the event's `ts`.
    pub time_stamp: Option<f64>,
    /// `processingStart` (ms, page clock).
    pub processing_start: Option<f64>,
    /// `processingEnd` (ms, page clock).
    pub processing_end: Option<f64>,
    /// `frame` (or the event's `args.frame` in older traces).
    pub frame: Option<String>,
    /// `nodeId`: the DOM node the event targeted.
    pub node_id: Option<i64>,
}

/// A task-like event (`RunTask` and its older names) or a `B`/`E` mark on some thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskMark {
    /// The thread.
    pub thread: ThreadKey,
    /// `ts`.
    pub ts: Timestamp,
    /// What the event is.
    pub kind: MarkKind,
    /// Byte offset in the file.
    pub order: u64,
}

/// The [`TaskMark`]s of a trace in file order, kept as the lists that the scan's ranges
/// collected: joining two ranges moves lists and never copies marks (a copy of a large
/// trace's marks, tens of MB, spent most of its time faulting in fresh pages, on one
/// thread while the other waited).
#[derive(Clone, Debug, Default)]
pub struct TaskMarks {
    lists: Vec<Vec<TaskMark>>,
}

impl TaskMarks {
    /// Marks per list once a list is full: a new list is started instead of the full one
    /// reallocated, so each mark is written once to memory touched once (fresh pages cost
    /// more than the marks' parse on this kind of VM, and a doubling touches twice the
    /// pages).
    pub const LIST_LEN: usize = 8192;

    /// Adds a mark after the others.
    #[inline]
    pub fn push(&mut self, mark: TaskMark) {
        match self.lists.last_mut() {
            Some(list) if list.len() < Self::LIST_LEN => list.push(mark),
            _ => self.start_list(mark),
        }
    }

    /// Starts a list with `mark`: the first one grows as needed (most traces have few
    /// marks), the later ones are made full size at once.
    #[cold]
    fn start_list(&mut self, mark: TaskMark) {
        let mut list = if self.lists.is_empty() {
            Vec::new()
        } else {
            Vec::with_capacity(Self::LIST_LEN)
        };
        list.push(mark);
        self.lists.push(list);
    }

    /// Adds the marks of `later` (from the part of the file after these) after these.
    pub fn append(&mut self, later: TaskMarks) {
        self.lists
            .extend(later.lists.into_iter().filter(|l| !l.is_empty()));
    }

    /// Number of marks.
    pub fn len(&self) -> usize {
        self.lists.iter().map(Vec::len).sum()
    }

    /// True when there is no mark.
    pub fn is_empty(&self) -> bool {
        self.lists.iter().all(Vec::is_empty)
    }

    /// The marks in file order.
    pub fn iter(&self) -> impl Iterator<Item = &TaskMark> {
        self.into_iter()
    }
}

impl<'a> IntoIterator for &'a TaskMarks {
    type Item = &'a TaskMark;
    type IntoIter = std::iter::Flatten<std::slice::Iter<'a, Vec<TaskMark>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.lists.iter().flatten()
    }
}

/// Equal when they hold the same marks in the same order, however split into lists.
impl PartialEq for TaskMarks {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// The phase of a [`TaskMark`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkKind {
    /// `X` task event with its `dur`.
    Complete(TimeDelta),
    /// `B`; `is_task` when its name is task-like.
    Begin {
        /// Task-like name.
        is_task: bool,
    },
    /// `E`.
    End,
    /// `X` task event without a `dur` (or with Chrome's `-1`): still running when tracing
    /// stopped.
    Unfinished,
    /// `X` task event whose `dur` is not a valid duration (negative, `1e400`, `2^64`,
    /// not a number): read as [`MarkKind::Unfinished`], warned in other words.
    InvalidDur,
}

/// A URL the page's main frame showed from `ts` on: from `TracingStartedInBrowser`
/// (`args.data.frames[]` without a `parent`), `FrameCommittedInBrowser` and `CommitLoad`
/// (`args.data.url` of an outermost main frame), `navigationStart`
/// (`args.data.documentLoaderURL`), or a field bundle's `page`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageUrl {
    /// When the frame showed it (the event's `ts`).
    pub ts: Timestamp,
    /// The renderer that showed it, when the event says.
    pub pid: Option<Pid>,
    /// The URL as written.
    pub url: String,
}

/// A `navigationStart` of the main frame with a `navigationId`: where DevTools starts a
/// navigation's insights (its `MetaHandler` keeps the main frame's navigations with a
/// non-empty `documentLoaderURL`, the first of each `navigationId`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Navigation {
    /// The event's `ts`.
    pub ts: Timestamp,
    /// `args.data.navigationId`.
    pub id: String,
}

/// A `Profile` event (`ph` P): opens profile `id` of the thread that emitted it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileEvent {
    /// The profiled thread (the event's own pid/tid).
    pub thread: ThreadKey,
    /// `id`.
    pub id: ProfileId,
    /// The event's `ts`.
    pub ts: Timestamp,
    /// `args.data.startTime` (µs in the file), from which V8 measures `timeDeltas`.
    pub start_time: Option<Timestamp>,
    /// `args.data.source` (`Internal`, `Inspector`, `SelfProfiling`), when given.
    pub source: Option<String>,
    /// Byte offset in the file.
    pub order: u64,
}

/// The samples part of a `ProfileChunk` or `CpuProfile`: the nodes new in it, its
/// `samples` (node ids of the top frame) paired with `timeDeltas` (µs in the file,
/// signed), and `cpuProfile.startTime` when the event carries a whole CDP profile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChunkData {
    /// Nodes defined here (incremental in chunks, all of them in a `CpuProfile`).
    pub nodes: Vec<Node>,
    /// The sample arrays, read or still in the file.
    pub samples: SampleArrays,
    /// `cpuProfile.startTime`.
    pub start_time: Option<Timestamp>,
}

impl ChunkData {
    /// A chunk with its arrays already read (tests, stream inputs). Pairs beyond the
    /// shorter array are dropped.
    pub fn from_arrays(nodes: Vec<Node>, samples: Vec<NodeId>, deltas: Vec<TimeDelta>) -> Self {
        ChunkData {
            nodes,
            samples: SampleArrays::read_now(samples, deltas),
            start_time: None,
        }
    }
}

/// A byte range of the whole file, compact (`start`, `len`: 12 bytes, 4-byte aligned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, packed(4))]
pub struct Span {
    /// First byte.
    pub start: u64,
    /// Length.
    pub len: u32,
}

impl Span {
    /// From a range (lengths over 4 GiB are cut; no JSON array of a chunk is that long).
    pub fn of(r: Range<usize>) -> Span {
        Span {
            start: r.start as u64,
            len: u32::try_from(r.len()).unwrap_or(u32::MAX),
        }
    }
    /// As a range.
    pub fn range(self) -> Range<usize> {
        self.start as usize..self.start as usize + self.len as usize
    }
}

/// Arrays already read, packed ([`super::packed`]: about a byte a sample instead of the 16
/// of two `i64` columns), owned: a `CpuProfile` event's or a field profile's chunk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadArrays {
    packed: Vec<u8>,
    count: u32,
}

impl ReadArrays {
    /// Packs equal-length arrays (pairs beyond the shorter one are dropped).
    pub fn pack(samples: &[NodeId], deltas: &[TimeDelta]) -> ReadArrays {
        let mut packed = Vec::new();
        let n = packed::pack(
            samples.iter().copied().zip(deltas.iter().copied()),
            &mut packed,
        );
        packed.shrink_to_fit();
        ReadArrays {
            packed,
            count: n as u32,
        }
    }

    /// The pairs, unpacked as they are taken.
    pub fn pairs(&self) -> Unpack<'_> {
        Unpack::new(&self.packed, self.count as usize)
    }

    /// Unpacks into (node ids, deltas).
    pub fn unpack(&self) -> (Vec<NodeId>, Vec<TimeDelta>) {
        self.pairs().unzip()
    }
}

/// The packed arrays ([`super::packed`]) of one profile's chunks read from a stream, each
/// chunk's bytes after the one before, in segments that are filled and never grown: the
/// store grows without copying, and two stores join by moving their segments. Chunks name
/// their bytes by [`SampleArrays::Packed`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackedStore {
    segments: Vec<Vec<u8>>,
}

impl PackedStore {
    /// The first segment's size; each next one is twice the one before, up to
    /// [`PackedStore::MAX_SEGMENT`] (or one chunk's bytes when more).
    const FIRST_SEGMENT: usize = 4096;
    /// The largest segment made for many chunks.
    const MAX_SEGMENT: usize = 1 << 20;
    /// The most bytes one chunk may keep here (a [`Span`]'s offset in its segment and its
    /// length are 32-bit); more stay in their own [`ReadArrays`].
    pub const MAX_CHUNK: usize = 1 << 31;

    /// Keeps one chunk's packed bytes (at most [`PackedStore::MAX_CHUNK`]); returns where
    /// they are, for [`PackedStore::bytes`].
    pub fn push(&mut self, bytes: &[u8]) -> Span {
        let room = self
            .segments
            .last()
            .is_some_and(|s| s.capacity() - s.len() >= bytes.len());
        if !room {
            let size = self
                .segments
                .last()
                .map_or(Self::FIRST_SEGMENT, |s| {
                    (s.capacity() * 2).min(Self::MAX_SEGMENT)
                })
                .max(bytes.len());
            self.segments.push(Vec::with_capacity(size));
        }
        let k = self.segments.len() - 1;
        let segment = &mut self.segments[k];
        let at = segment.len();
        segment.extend_from_slice(bytes);
        Span {
            start: (k as u64) << 32 | at as u64,
            len: bytes.len() as u32,
        }
    }

    /// The bytes of a chunk kept at `at` (empty when there are none there).
    pub fn bytes(&self, at: Span) -> &[u8] {
        let (k, from) = ((at.start >> 32) as usize, at.start as u32 as usize);
        self.segments
            .get(k)
            .and_then(|s| s.get(from..from + at.len as usize))
            .unwrap_or_default()
    }

    /// Adds the segments of `later`; returns the shift of their chunks' spans (to add to
    /// their `start`).
    fn append(&mut self, later: PackedStore) -> u64 {
        let shift = (self.segments.len() as u64) << 32;
        if !later.segments.is_empty() {
            // Nothing more is added to this segment: its unused room is given back.
            if let Some(last) = self.segments.last_mut() {
                last.shrink_to_fit();
            }
            self.segments.extend(later.segments);
        }
        shift
    }

    /// Keeps one chunk's packed bytes with their summary: here, or on their own when too
    /// many ([`PackedStore::MAX_CHUNK`]).
    pub fn keep(&mut self, bytes: &[u8], summary: DeltaSummary) -> SampleArrays {
        if bytes.len() > Self::MAX_CHUNK {
            return SampleArrays::packed_alone(bytes, summary);
        }
        SampleArrays::Packed {
            at: self.push(bytes),
            summary,
        }
    }

    /// Gives back the unused room of the last segment (no chunk is added after this).
    pub fn shrink(&mut self) {
        if let Some(last) = self.segments.last_mut() {
            last.shrink_to_fit();
        }
    }
}

/// `samples` and `timeDeltas` of one chunk, equal in length (the longer one is cut).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SampleArrays {
    /// Still in the file: byte ranges of the two JSON arrays in the whole (mapped) file,
    /// read only when the chunk's time span meets a long task.
    InFile {
        /// The `samples` array.
        samples: Span,
        /// The `timeDeltas` array.
        deltas: Span,
        /// Deltas summary (its `count` is the number of pairs).
        summary: DeltaSummary,
    },
    /// Already read, packed in the profile's [`PackedStore`] (a stream's chunks: inputs
    /// that cannot be read twice).
    Packed {
        /// Where the bytes are in the store.
        at: Span,
        /// Deltas summary (its `count` is the number of pairs).
        summary: DeltaSummary,
    },
    /// Already read, packed on their own (a `CpuProfile` event, a field profile, tests).
    Read(Box<ReadArrays>, DeltaSummary),
    /// Read and found not to be number arrays: no samples, but the deltas still place
    /// the chunks after it.
    Unreadable(DeltaSummary),
}

impl Default for SampleArrays {
    fn default() -> Self {
        SampleArrays::Read(Box::default(), DeltaSummary::default())
    }
}

impl SampleArrays {
    /// Arrays already read; pairs beyond the shorter one are dropped.
    pub fn read_now(samples: Vec<NodeId>, deltas: Vec<TimeDelta>) -> Self {
        let n = samples.len().min(deltas.len());
        let mut summary = DeltaSummary::default();
        deltas[..n].iter().for_each(|d| summary.push(*d));
        SampleArrays::Read(
            Box::new(ReadArrays::pack(&samples[..n], &deltas[..n])),
            summary,
        )
    }

    /// Arrays packed by [`super::packed::pack`] (`summary.count` pairs), kept on their own.
    pub fn packed_alone(bytes: &[u8], summary: DeltaSummary) -> Self {
        SampleArrays::Read(
            Box::new(ReadArrays {
                packed: bytes.to_vec(),
                count: summary.count,
            }),
            summary,
        )
    }

    /// The deltas summary.
    pub fn summary(&self) -> DeltaSummary {
        match self {
            SampleArrays::InFile { summary, .. }
            | SampleArrays::Packed { summary, .. }
            | SampleArrays::Read(_, summary)
            | SampleArrays::Unreadable(summary) => *summary,
        }
    }

    /// The same arrays in a buffer that starts `by` bytes earlier.
    pub fn moved_by(self, by: usize) -> Self {
        match self {
            SampleArrays::InFile {
                samples,
                deltas,
                summary,
            } => SampleArrays::InFile {
                samples: Span::of(samples.range().start + by..samples.range().end + by),
                deltas: Span::of(deltas.range().start + by..deltas.range().end + by),
                summary,
            },
            other => other,
        }
    }

    /// The pairs of arrays already read, unpacked as they are taken (`store`: the
    /// profile's); `None` for arrays still in the file or unreadable.
    pub fn unpack<'a>(&'a self, store: &'a PackedStore) -> Option<Unpack<'a>> {
        match self {
            SampleArrays::Packed { at, summary } => {
                Some(Unpack::new(store.bytes(*at), summary.count as usize))
            }
            SampleArrays::Read(a, _) => Some(a.pairs()),
            SampleArrays::InFile { .. } | SampleArrays::Unreadable(_) => None,
        }
    }

    /// Like [`SampleArrays::read`], into reused buffers (cleared first); false when the
    /// arrays cannot be read.
    pub fn read_into(
        &self,
        file: Option<&[u8]>,
        store: &PackedStore,
        ids: &mut Vec<NodeId>,
        deltas: &mut Vec<TimeDelta>,
    ) -> bool {
        ids.clear();
        deltas.clear();
        match self {
            SampleArrays::InFile {
                samples,
                deltas: d,
                summary,
            } => {
                let Some(b) = file else { return false };
                let n = summary.count as usize;
                read_samples(b, &samples.range(), n, ids).is_ok()
                    && read_deltas(b, &d.range(), n, deltas).is_ok()
                    && ids.len() == n
                    && deltas.len() == n
            }
            _ => match self.unpack(store) {
                Some(pairs) => {
                    pairs.for_each(|(i, d)| {
                        ids.push(i);
                        deltas.push(d);
                    });
                    true
                }
                None => false,
            },
        }
    }

    /// The pairs, reading them from `file` (the whole trace) when still there, or from
    /// `store` (the profile's). `None` when they are in a file that is not given or
    /// their bytes are not number arrays.
    pub fn read(
        &self,
        file: Option<&[u8]>,
        store: &PackedStore,
    ) -> Option<(Vec<NodeId>, Vec<TimeDelta>)> {
        let (mut ids, mut ds) = (Vec::new(), Vec::new());
        self.read_into(file, store, &mut ids, &mut ds)
            .then_some((ids, ds))
    }
}

/// One `ProfileChunk` event's samples, kept per profile (see [`ProfileData`]). Its `tid` is
/// usually the profiler thread's and is not kept: the profile belongs to its `Profile`
/// event's thread. Compact (64 bytes): a 1 GB trace holds about a million of these, and
/// on a machine where each new page of memory costs its zeroing, every byte of them counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileChunk {
    /// The event's `ts`; a profile's chunks are taken in `ts` order, ties in file order
    /// (the order of [`ProfileData::chunks`]). Once the profile's chunks are placed in
    /// time, the chunk's base instead (the profile's start plus the deltas before it).
    pub ts: Timestamp,
    /// The sample arrays.
    pub samples: SampleArrays,
}

/// Nodes (and a CDP `startTime`) that a `ProfileChunk` defined; most chunks define none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkNodes {
    /// The chunk's `ts`.
    pub ts: Timestamp,
    /// The chunk's byte offset.
    pub order: u64,
    /// The nodes.
    pub nodes: Vec<Node>,
    /// `cpuProfile.startTime`, when given.
    pub start_time: Option<Timestamp>,
}

/// The chunks of one profile (pid, `id`), in file order as collected.
#[derive(Clone, Debug, Default)]
pub struct ProfileData {
    /// Sample arrays of each chunk.
    pub chunks: Vec<ProfileChunk>,
    /// Nodes of the chunks that define some.
    pub nodes: Vec<ChunkNodes>,
    /// The packed arrays of the chunks read from a stream ([`SampleArrays::Packed`]).
    pub store: PackedStore,
}

/// Equal when they hold the same nodes and chunks, packed chunks by their bytes (however
/// their stores are cut into segments).
impl PartialEq for ProfileData {
    fn eq(&self, other: &Self) -> bool {
        let same = |a: &ProfileChunk, b: &ProfileChunk| {
            a.ts == b.ts
                && match (&a.samples, &b.samples) {
                    (
                        SampleArrays::Packed { at: x, summary: s },
                        SampleArrays::Packed { at: y, summary: t },
                    ) => s == t && self.store.bytes(*x) == other.store.bytes(*y),
                    (x, y) => x == y,
                }
        };
        self.nodes == other.nodes
            && self.chunks.len() == other.chunks.len()
            && self
                .chunks
                .iter()
                .zip(&other.chunks)
                .all(|(a, b)| same(a, b))
    }
}

impl Eq for ProfileData {}

impl ProfileData {
    /// Makes room for `(chunks, nodes)` in all, when known (a parallel scan's merge).
    pub(crate) fn make_room(&mut self, all: Option<(usize, usize)>) {
        if let Some((chunks, nodes)) = all {
            self.chunks
                .reserve(chunks.saturating_sub(self.chunks.len()));
            self.nodes.reserve(nodes.saturating_sub(self.nodes.len()));
        }
    }

    /// Appends what a later part of the file collected for the same profile.
    pub fn append(&mut self, later: ProfileData) {
        let shift = self.store.append(later.store);
        if shift == 0 {
            self.chunks.extend(later.chunks);
        } else {
            self.chunks
                .extend(later.chunks.into_iter().map(|c| ProfileChunk {
                    ts: c.ts,
                    samples: match c.samples {
                        SampleArrays::Packed { at, summary } => SampleArrays::Packed {
                            at: Span {
                                start: at.start + shift,
                                len: at.len,
                            },
                            summary,
                        },
                        s => s,
                    },
                }));
        }
        self.nodes.extend(later.nodes);
    }
}

/// A legacy `CpuProfile` event (M65–M68, and DevTools' synthesised one): a whole profile of
/// the thread that emitted it, `t0` = `cpuProfile.startTime`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuProfileEvent {
    /// The profiled thread.
    pub thread: ThreadKey,
    /// Byte offset in the file.
    pub order: u64,
    /// The event's `ts` (after the profile's end in Chrome's own events).
    pub ts: Timestamp,
    /// The whole profile.
    pub data: ChunkData,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{Pid, Tid};

    /// An `E` mark of thread 1:1 at `i` µs, `i` in file order.
    fn end_mark(i: u64) -> TaskMark {
        TaskMark {
            thread: ThreadKey {
                pid: Pid(1),
                tid: Tid(1),
            },
            ts: Timestamp::from_micros(i as i64),
            kind: MarkKind::End,
            order: i,
        }
    }

    #[test]
    fn task_marks_keep_file_order_across_joins() {
        let mark = end_mark;
        let mut whole = TaskMarks::default();
        (0..1000).for_each(|i| whole.push(mark(i)));
        // Three ranges joined (one of them empty), then one more mark.
        let (mut first, mut later) = (TaskMarks::default(), TaskMarks::default());
        (0..100).for_each(|i| first.push(mark(i)));
        (100..1000).for_each(|i| later.push(mark(i)));
        first.append(TaskMarks::default());
        first.append(later);
        first.push(mark(1000));
        whole.push(mark(1000));
        assert_eq!(first.len(), 1001);
        assert!(first.iter().map(|m| m.order).eq(0..=1000));
        assert_eq!(first, whole);
        assert!(!TaskMarks::default().iter().any(|_| true));
        first.push(mark(0));
        assert_ne!(first, whole);
    }

    #[test]
    fn full_task_mark_lists_are_followed_not_grown() {
        let mark = end_mark;
        let n = 2 * TaskMarks::LIST_LEN as u64 + 3;
        let mut marks = TaskMarks::default();
        (0..n).for_each(|i| marks.push(mark(i)));
        let lens: Vec<usize> = marks.lists.iter().map(Vec::len).collect();
        assert_eq!(lens, [TaskMarks::LIST_LEN, TaskMarks::LIST_LEN, 3]);
        // The later lists were made full size once, never reallocated.
        assert!(
            marks.lists[1..]
                .iter()
                .all(|l| l.capacity() == TaskMarks::LIST_LEN)
        );
        assert!(marks.iter().map(|m| m.order).eq(0..n));
        assert_eq!(marks.len(), n as usize);
    }

    #[test]
    fn packed_stores_keep_every_chunk_across_segments_and_joins() {
        // Chunks of 1..=300 bytes (each byte its chunk's number), then one larger than a
        // segment; split between two stores joined as the pieces of a stream are.
        let chunk = |k: usize| vec![k as u8; k % 300 + 1];
        let (mut first, mut later) = (PackedStore::default(), PackedStore::default());
        let mut at: Vec<Span> = (0..3000).map(|k| first.push(&chunk(k))).collect();
        assert!(first.segments.len() > 3);
        assert!(
            first
                .segments
                .iter()
                .all(|s| s.len() <= PackedStore::MAX_SEGMENT)
        );
        let big = vec![7u8; PackedStore::MAX_SEGMENT + 5];
        let later_at = [
            later.push(&chunk(3000)),
            later.push(&big),
            later.push(&chunk(3001)),
        ];
        let shift = first.append(later);
        at.extend(later_at.iter().map(|a| Span {
            start: a.start + shift,
            len: a.len,
        }));
        for (k, a) in at.iter().enumerate() {
            let want = match k {
                3001 => big.clone(),
                3002 => chunk(3001),
                k => chunk(k),
            };
            assert_eq!(first.bytes(*a), want, "{k}");
        }
        // A span that names nothing gives no bytes.
        let nowhere = Span {
            start: 99 << 32,
            len: 3,
        };
        assert!(first.bytes(nowhere).is_empty());
    }

    #[test]
    fn packed_arrays_round_trip() {
        let ids: Vec<NodeId> = [1, 1, 300, 2, -5, i64::MAX, 0].map(NodeId).to_vec();
        let ds: Vec<TimeDelta> = [170_000, -975_000, 1, 0, 123_456_789, -1, 1 << 50]
            .map(TimeDelta::from_nanos)
            .to_vec();
        let p = ReadArrays::pack(&ids, &ds);
        assert_eq!(p.unpack(), (ids.clone(), ds.clone()));
        // The longer array is cut.
        assert_eq!(
            ReadArrays::pack(&ids, &ds[..3]).unpack(),
            (ids[..3].to_vec(), ds[..3].to_vec())
        );
        // Typical samples: same node, 170 µs apart → 4 bytes, then 1.
        let p = ReadArrays::pack(&[NodeId(7), NodeId(7)], &[TimeDelta::from_micros(170); 2]);
        assert_eq!(p.packed.len(), 5);
    }
}

/// What an animation-frame event is: Chrome's long-animation-frame instrumentation
/// (`AnimationFrameTimingMonitor`), written to `devtools.timeline` as nestable async `b`/`e`
/// pairs on the renderer's main thread (see docs/METHOD.md §2.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameMarkKind {
    /// `AnimationFrame`: the frame, from its first task's start to its rendering's end.
    Frame,
    /// `AnimationFrame::Script::Execute` (`compile` false) or `::Script::Compile`: one
    /// script entry of the frame.
    Script {
        /// `::Script::Compile`.
        compile: bool,
    },
    /// `AnimationFrame::Render`: the frame's rendering update.
    Render,
    /// `AnimationFrame::StyleAndLayout`: style and layout within the rendering update.
    StyleAndLayout,
}

/// `args.animation_frame_timing_info` of an `AnimationFrame` begin event (Chromium's
/// `AnimationFrameTimingInfo`), milliseconds as the trace writes them (whole ms).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameTimingInfo {
    /// `duration_ms`.
    pub duration_ms: Option<f64>,
    /// `blocking_duration_ms`: the frame's long-task time over 50 ms each.
    pub blocking_duration_ms: Option<f64>,
    /// `num_scripts`.
    pub num_scripts: Option<i64>,
}

/// `args.animation_frame_script_timing_info` of a script begin event (Chromium's
/// `ScriptTimingInfo`, the LoAF API's `PerformanceScriptTiming`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScriptTimingInfo {
    /// `invoker_type`: `EVENT_HANDLER`, `USER_CALLBACK`, `CLASSIC_SCRIPT`, `PROMISE_RESOLVE`…
    pub invoker_type: String,
    /// `class_like_name` (`BUTTON#pay`, `Window`…).
    pub class_like_name: String,
    /// `property_like_name` (`click`, `requestAnimationFrame`…).
    pub property_like_name: String,
    /// `source_location_url`.
    pub source_url: String,
    /// `source_location_function_name`.
    pub function: String,
    /// `source_location_char_position` (0-based character offset in the script; -1 or
    /// missing when unknown).
    pub char_position: Option<i64>,
    /// `style_duration_ms`: forced style within the script.
    pub style_duration_ms: Option<f64>,
    /// `layout_duration_ms`: forced layout within the script.
    pub layout_duration_ms: Option<f64>,
    /// `pause_duration_ms`: synchronous pauses (`alert`, sync XHR).
    pub pause_duration_ms: Option<f64>,
}

/// One animation-frame event (begin or end) on some thread.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameMark {
    /// The thread.
    pub thread: ThreadKey,
    /// `ts`.
    pub ts: Timestamp,
    /// `b` (true) or `e`.
    pub begin: bool,
    /// Which event.
    pub kind: FrameMarkKind,
    /// Byte offset in the file.
    pub order: u64,
    /// A frame's timing info (frame begin events).
    pub frame: Option<Box<FrameTimingInfo>>,
    /// A script's timing info (script begin events).
    pub script: Option<Box<ScriptTimingInfo>>,
}

impl FrameMarkKind {
    /// The kind of an event named `name`, `None` for other names (`::Presentation`,
    /// `::FirstUIEvent` and the `s`/`f` flow events of the same name are not read).
    #[inline]
    pub fn of_name(name: &[u8]) -> Option<FrameMarkKind> {
        Some(match name {
            b"AnimationFrame" => FrameMarkKind::Frame,
            b"AnimationFrame::Script::Execute" => FrameMarkKind::Script { compile: false },
            b"AnimationFrame::Script::Compile" => FrameMarkKind::Script { compile: true },
            b"AnimationFrame::Render" => FrameMarkKind::Render,
            b"AnimationFrame::StyleAndLayout" => FrameMarkKind::StyleAndLayout,
            _ => return None,
        })
    }
}

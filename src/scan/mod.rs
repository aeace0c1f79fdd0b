//! Scan: the bytes of a trace's event array → [`ScannedTrace`], the few events that matter.
//!
//! The array is walked event by event ([`event::TraceEvent::parse`] reads only the top
//! level). What matters is decided from `ph` and `name` alone: metadata, task-like events
//! and `B`/`E` marks, `Profile`/`ProfileChunk`/`CpuProfile`, `EventTiming`, and the tracing-start and
//! frame events that say which renderer hosts the main frame. Only those events' `args`
//! are parsed ([`args`]); screenshots and everything else are skipped without building a
//! value. An array cut off without `]` keeps every complete event and is marked truncated.

pub(crate) mod args;
pub(crate) mod chunk;
mod collect;
pub(crate) mod envelope;
pub(crate) mod event;
mod nodes;
pub(crate) mod packed;
pub(crate) mod proto;

pub(crate) mod records;
pub(crate) mod split;
pub(crate) mod stream;

use std::collections::{BTreeSet, HashMap};

use crate::input::pages::Pages;
use crate::json::{LexError, skip_value, skip_ws};
use crate::vocab::{Diagnostics, Pid, ProfileKey, ThreadKey};
pub use collect::{Collector, nodes_both_ways};
pub(crate) use collect::{NO_PHASE, read_entry_details};
use event::TraceEvent;
use records::*;

use crate::error::AnalyzeError;
use crate::time::Timestamp;

/// The task-like event names (docs/METHOD.md §2), outermost first by era: `RunTask` (M71+),
/// `ThreadControllerImpl::RunTask` (M69+, `toplevel` category), `ThreadControllerImpl::DoWork`
/// (M65–68), `TaskQueueManager::ProcessTaskFromWorkQueue` (≤M64), `MessageLoop::RunTask`.
pub(crate) const TASK_NAMES: [&str; 5] = [
    "RunTask",
    "ThreadControllerImpl::RunTask",
    "ThreadControllerImpl::DoWork",
    "TaskQueueManager::ProcessTaskFromWorkQueue",
    "MessageLoop::RunTask",
];

/// True when `name` is task-like.
pub(crate) fn is_task_name(name: &[u8]) -> bool {
    TASK_NAMES.iter().any(|n| n.as_bytes() == name)
}

/// Every event name the scan matches ([`TASK_NAMES`], `thread_name`, the entry points and
/// work of [`records::classify_name`], the animation-frame events, the names [`Collector`] reads the args of). An event
/// `name` written with JSON escapes (`Run\u0054ask`) is decoded and, when it is one of
/// these, read as it ([`matched_name`]); a name the scan matches must be listed here.
pub(crate) const MATCHED_NAMES: &[&str] = &[
    "RunTask",
    "ThreadControllerImpl::RunTask",
    "ThreadControllerImpl::DoWork",
    "TaskQueueManager::ProcessTaskFromWorkQueue",
    "MessageLoop::RunTask",
    "thread_name",
    "EventDispatch",
    "FunctionCall",
    "TimerFire",
    "FireAnimationFrame",
    "FireIdleCallback",
    "EvaluateScript",
    "v8.evaluateModule",
    "ParseHTML",
    "XHRReadyStateChange",
    "XHRLoad",
    "RunMicrotasks",
    "MinorGC",
    "MajorGC",
    "V8.GCScavenger",
    "V8.GCFinalizeMC",
    "BlinkGC.AtomicPhase",
    "UpdateLayoutTree",
    "RecalculateStyles",
    "Layout",
    "PrePaint",
    "Paint",
    "Layerize",
    "UpdateLayerTree",
    "CompositeLayers",
    "TimerInstall",
    "Profile",
    "ProfileChunk",
    "CpuProfile",
    "TracingStartedInBrowser",
    "TracingStartedInPage",
    "FrameCommittedInBrowser",
    "ScriptCatchup",
    "ScriptCompiled",
    "CommitLoad",
    "navigationStart",
    "firstContentfulPaint",
    "ProcessReadyInBrowser",
    "EventTiming",
    "v8.compile",
    "V8.CompileModule",
    "V8.CompileCode",
    "V8.OptimizeCode",
    "v8.produceCache",
    "v8.produceModuleCache",
    "v8.parseOnBackgroundParsing",
    "v8.deserializeOnBackground",
    "ParseAuthorStyleSheet",
    "GCEvent",
    "CppGC.IncrementalSweep",
    "HitTest",
    "ComputeIntersections",
    "ScrollLayer",
    "Commit",
    "UpdateLayer",
    "PaintSetup",
    "PaintImage",
    "Decode Image",
    "RunPostTaskCallback",
    "HandlePostMessage",
    "V8Console::runTask",
    "EmbedderCallback",
    "AnimationFrame",
    "AnimationFrame::Script::Execute",
    "AnimationFrame::Script::Compile",
    "AnimationFrame::Render",
    "AnimationFrame::StyleAndLayout",
];

/// The name in [`MATCHED_NAMES`] that the raw string content `escaped` (holding a
/// backslash) decodes to, if any. Out of line: Chrome writes no escapes in event names.
#[cold]
pub(crate) fn matched_name(escaped: &[u8]) -> Option<&'static [u8]> {
    let name = crate::json::unescape(escaped);
    MATCHED_NAMES
        .iter()
        .find(|n| **n == name)
        .map(|n| n.as_bytes())
}

/// How the event array ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArrayEnd {
    /// A closing `]` (or, for NDJSON, the end of the bytes after a complete event).
    Closed,
    /// The bytes end inside the array: every complete event was kept.
    Truncated {
        /// 0-based offset where the partial last event (if any) starts.
        offset: u64,
    },
    /// Bytes that are not JSON after at least one event: the events before were kept.
    Broken {
        /// 0-based offset of the bad byte.
        offset: u64,
        /// What was expected there.
        expected: &'static str,
    },
}

/// What the scan kept of one trace.
#[derive(Debug, Default)]
pub struct ScannedTrace {
    /// `thread_name` metadata by thread.
    pub thread_names: HashMap<ThreadKey, String>,
    /// Task-like events and `B`/`E` marks, in file order.
    pub task_marks: TaskMarks,
    /// Entry-point events (`EventDispatch`, `FunctionCall`, `TimerFire`, …), in file order.
    pub entry_points: EntryPoints,
    /// `TimerInstall` events, in file order.
    pub timer_installs: Vec<TimerInstall>,
    /// `EventTiming` begin and end events, in file order.
    pub event_timings: Vec<EventTiming>,
    /// Animation-frame events (`AnimationFrame` and its children, `b`/`e`), in file order.
    pub frame_marks: Vec<FrameMark>,
    /// `Profile` events.
    pub profiles: Vec<ProfileEvent>,
    /// `ProfileChunk` events' samples and nodes, by profile (pid, id).
    pub profile_data: crate::vocab::FastMap<ProfileKey, ProfileData>,
    /// Legacy `CpuProfile` events.
    pub cpu_profiles: Vec<CpuProfileEvent>,
    /// Scripts with a source map URL, from V8's source-rundown events, in file order.
    pub scripts: Vec<ScriptRecord>,
    /// Source maps embedded in the trace's `metadata.sourceMaps` (filled by the caller of
    /// a whole-file scan, which holds the envelope; by the stream scan from the keys
    /// before the events).
    pub embedded_maps: Vec<EmbeddedMap>,
    /// Renderer pids that hosted the outermost main frame, per `TracingStartedInBrowser`,
    /// `FrameCommittedInBrowser` and `TracingStartedInPage`; empty when the trace does not say.
    pub main_frame_pids: BTreeSet<Pid>,
    /// The main frame's navigations (`navigationStart`) in `ts` order, one per
    /// `navigationId`; empty when the trace names no main frame.
    pub navigations: Vec<records::Navigation>,
    /// The earliest `firstContentfulPaint` mark of the main frame (its `args.frame` one of
    /// the main frame ids); `None` when the trace has none or names no main frame.
    pub first_contentful_paint: Option<Timestamp>,
    /// The main frame's URLs in `ts` order (see `records::PageUrl`); empty when the
    /// trace does not say.
    pub pages: Vec<records::PageUrl>,
    /// Smallest `ts` of a non-metadata event.
    pub first_ts: Option<Timestamp>,
    /// Largest `ts + dur` (or `ts`) of a non-metadata event: the trace's end.
    pub last_ts: Option<Timestamp>,
    /// Number of events read.
    pub events: u64,
    /// How the array ended.
    pub end: Option<ArrayEnd>,
    /// Damaged stretches of the array that were skipped, in file order.
    pub damage: Vec<Damage>,
    /// File offset of the array's closing `]` (the envelope's keys after the events,
    /// such as `metadata`, follow it).
    pub closed_at: Option<u64>,
    /// Odd input seen while scanning.
    pub diagnostics: Diagnostics,
}

impl ScannedTrace {
    /// Threads that own a profile (`Profile` or `CpuProfile` event), sorted.
    pub fn profile_threads(&self) -> Vec<ThreadKey> {
        let mut t: Vec<ThreadKey> = self
            .profiles
            .iter()
            .map(|p| p.thread)
            .chain(self.cpu_profiles.iter().map(|c| c.thread))
            .collect();
        t.sort();
        t.dedup();
        t
    }

    /// True when part of the event array was skipped as invalid JSON.
    pub fn damaged(&self) -> bool {
        !self.damage.is_empty()
    }

    /// True when the file ends inside the event array (or breaks off in junk).
    pub fn truncated(&self) -> bool {
        matches!(
            self.end,
            Some(ArrayEnd::Truncated { .. } | ArrayEnd::Broken { .. })
        )
    }
}

/// A scan that could not read a single event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScanError {
    /// The array has elements but no object among them (`[1, 2]`): not a trace.
    NoObjects {
        /// 0-based byte offset of the array's first element.
        offset: u64,
    },
    /// The event array breaks off before its first complete event.
    Json {
        /// 0-based byte offset.
        offset: u64,
        /// 0-based index of the event being read.
        event_index: u64,
        /// What was expected.
        reason: String,
    },
}

/// Where a walk over part of the event array stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RangeEnd {
    /// At the first element starting at or after the walk's `until` offset (the offset of
    /// that element's first byte, or of the `]`/end).
    Reached(usize),
    /// At the end of the array (before `until`).
    Ended(ArrayEnd),
}

/// The outcome of [`walk`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Walked {
    /// Where it stopped.
    pub end: RangeEnd,
    /// Event objects read.
    pub events: u64,
    /// Array elements that are not objects.
    pub non_objects: u64,
    /// File offset of the array's closing `]`, when the walk met it.
    pub closed_at: Option<u64>,
    /// Damaged stretches skipped, in file order.
    pub damage: Vec<Damage>,
}

impl Walked {
    /// Nothing walked yet, from `from`.
    pub fn at(from: usize) -> Walked {
        Walked {
            end: RangeEnd::Reached(from),
            events: 0,
            non_objects: 0,
            closed_at: None,
            damage: Vec::new(),
        }
    }
    /// Adds the counts and damage of `w`, a walk of the part after this one (its event
    /// indexes, counted from its own start, are shifted by the events before it).
    pub fn extend(&mut self, w: Walked) {
        let before = self.events + self.non_objects;
        self.damage.extend(w.damage.into_iter().map(|mut d| {
            d.event_index += before;
            d
        }));
        self.events += w.events;
        self.non_objects += w.non_objects;
        self.closed_at = w.closed_at.or(self.closed_at);
    }
}

/// A stretch of invalid JSON inside the event array, skipped up to the next verified event
/// start (as the parallel scan verifies its split points): it costs the events in it, not
/// the rest of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// 0-based offset of the first bad byte (or of the event that never closes).
    pub offset: u64,
    /// 0-based index of the damaged event among the array's elements.
    pub event_index: u64,
    /// What was expected there.
    pub expected: &'static str,
    /// Bytes skipped, from the damaged event's first byte.
    pub skipped: u64,
    /// Events in the skipped bytes (by the event starts found there, at least 1).
    pub skipped_events: u64,
    /// 0-based offset where the walk resumed.
    pub resumed: u64,
}

/// What an unterminated string is taken for: a stray or escaped quote (every later string
/// reads inside out), found at the first control byte inside a string.
pub(crate) const CONTROL_IN_STRING: &str = "a string's closing quote before this control character \
                                     (a line break or tab inside a string is not JSON)";

/// [`Damage::expected`] of an event whose brackets or quotes never close before the next
/// event starts (a stray `[`, a missing `]` or quote).
pub(crate) const UNCLOSED_EVENT: &str =
    "the event to close before the next event starts (a stray or missing bracket or quote)";

/// Walks the event array from `b[from]` (an element's first byte, or whitespace or a
/// comma before one), handing each event object to `f`, until the next element starts at
/// or after `until` or the array ends. `ndjson`: there are no brackets, the end of the
/// bytes closes the stream. Commas between elements are optional and repeated commas are
/// tolerated (a trailing comma before `]` is common).
pub fn walk<'a>(
    b: &'a [u8],
    from: usize,
    until: usize,
    ndjson: bool,
    mut f: impl FnMut(&TraceEvent<'a>),
) -> Walked {
    walk_at(b, 0, from, until, ndjson, true, &mut f)
}

/// [`walk`] over a buffer that starts at byte `base` of the file (events' `offset` and
/// error offsets are file offsets). `at_end`: `b` runs to the end of the input (else more
/// may come, and a walk that cannot yet tell a cut event from a damaged one stops as cut
/// at that event, to be walked again with more bytes). Invalid JSON is skipped to the next
/// verified event start ([`Damage`]); only when there is none does the array end
/// [`ArrayEnd::Broken`].
pub(crate) fn walk_at<'a>(
    b: &'a [u8],
    base: u64,
    from: usize,
    until: usize,
    ndjson: bool,
    at_end: bool,
    f: &mut impl FnMut(&TraceEvent<'a>),
) -> Walked {
    let mut out = Walked::at(from);
    let closes_at_end = ndjson && at_end;
    let mut i = from;
    let mut ev = TraceEvent::empty(0);
    let mut keys = event::KeyGuess::default();
    let mut ahead = PageAhead::default();
    let mut recovery = split::Recovery::for_walk(until.min(b.len()).saturating_sub(from));
    loop {
        ahead.touch(b, i);
        i = skip_ws(b, i);
        while b.get(i) == Some(&b',') {
            i = skip_ws(b, i + 1);
        }
        if i >= until && i < b.len() {
            out.end = RangeEnd::Reached(i);
            return out;
        }
        let Some(&c) = b.get(i) else {
            out.end = RangeEnd::Ended(if closes_at_end {
                ArrayEnd::Closed
            } else {
                ArrayEnd::Truncated {
                    offset: base + i as u64,
                }
            });
            return out;
        };
        if c == b']' {
            out.end = RangeEnd::Ended(ArrayEnd::Closed);
            out.closed_at = Some(base + i as u64);
            return out;
        }
        // Up to the next event start only, once failed parses have read their allowance.
        let limit = recovery.limit(b, i);
        let bounded = &b[..limit];
        let step = match c {
            b'{' => ev.read(bounded, i, base, &mut keys).inspect(|_| {
                f(&ev);
                out.events += 1;
            }),
            _ => skip_value(bounded, i)
                .map_err(|e| match e {
                    LexError::Malformed { offset, .. } => LexError::Malformed {
                        offset,
                        expected: "a trace event object",
                    },
                    e => e,
                })
                .inspect(|_| out.non_objects += 1),
        };
        let (bad, expected, search_from) = match step {
            Ok(end) => {
                i = end;
                continue;
            }
            // More bytes may close it: walk again from here when they come (a stream then
            // reads what a whole file reads).
            Err(LexError::Incomplete) if !at_end && limit == b.len() => {
                out.end = RangeEnd::Ended(ArrayEnd::Truncated {
                    offset: base + i as u64,
                });
                return out;
            }
            // Cut off, or a stray bracket or quote that keeps the event open to the end:
            // the next verified event start tells them apart.
            Err(LexError::Incomplete) => (i, UNCLOSED_EVENT, i + 1),
            Err(LexError::Malformed { offset, expected }) => (offset, expected, offset.max(i + 1)),
        };
        recovery.charge(bounded, i, &step, limit);
        match split::resync(b, search_from, at_end, &mut recovery) {
            split::Resync::At(p) => {
                // An unclosed string shows where it went wrong: its first control byte.
                let (bad, expected) = match (expected == UNCLOSED_EVENT)
                    .then(|| crate::json::control_in_string(&b[..p], i))
                    .flatten()
                {
                    Some(at) => (at, CONTROL_IN_STRING),
                    None => (bad, expected),
                };
                out.damage.push(Damage {
                    offset: base + bad as u64,
                    event_index: out.events + out.non_objects,
                    expected,
                    skipped: (p - i) as u64,
                    skipped_events: 1 + split::event_starts_in(b, i + 1, p),
                    resumed: base + p as u64,
                });
                i = p;
            }
            split::Resync::NeedMore => {
                out.end = RangeEnd::Ended(ArrayEnd::Truncated {
                    offset: base + i as u64,
                });
                return out;
            }
            split::Resync::NotFound => {
                out.end = RangeEnd::Ended(if expected == UNCLOSED_EVENT {
                    ArrayEnd::Truncated {
                        offset: base + i as u64,
                    }
                } else {
                    ArrayEnd::Broken {
                        offset: base + bad as u64,
                        expected,
                    }
                });
                return out;
            }
        }
    }
}

/// Fetches the first lines of each page of the bytes a little before the walk reaches it.
/// The CPU's own prefetchers follow a sequential read only within a page (4 KiB), and the
/// pages of a mapped file or a stream's buffer lie anywhere in memory: without this, the
/// first loads of every page wait for memory.
#[derive(Default)]
struct PageAhead {
    /// Address of the last page fetched.
    page: usize,
}

impl PageAhead {
    /// Bytes ahead of the walk whose page is fetched.
    const DISTANCE: usize = 2048;

    #[inline(always)]
    fn touch(&mut self, b: &[u8], i: usize) {
        #[cfg(target_arch = "x86_64")]
        if let Some(byte) = b.get(i + Self::DISTANCE) {
            let at = byte as *const u8;
            let page = at as usize & !4095;
            if page != self.page {
                self.page = page;
                let line = at.wrapping_sub((at as usize) & 63);
                for k in 0..4 {
                    // SAFETY: a prefetch is a hint: it never faults, whatever the address.
                    unsafe {
                        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                            line.wrapping_add(64 * k).cast(),
                        )
                    };
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (b, i);
    }
}

/// True when the events starting at `b[start]` are NDJSON (no opening bracket before).
pub(crate) fn is_ndjson(b: &[u8], start: usize) -> bool {
    start == 0 || b[start - 1] != b'['
}

/// Scans a whole trace held in memory: events start at `b[start]` (see
/// `scan::envelope::detect`). With `keep_in_file`, sample arrays are left in `b` to be
/// read later (the caller keeps `b`). Large inputs are scanned in parallel ranges on the
/// current rayon pool (`split`); the result is the same as a sequential scan. Errors when
/// not one event could be read.
pub fn scan(b: &[u8], start: usize, keep_in_file: bool) -> Result<ScannedTrace, ScanError> {
    scan_with_progress(b, start, keep_in_file, Pages::Owned, None)
}

/// [`scan`], advising the kernel about each range's `pages` before it is walked, and
/// adding the bytes scanned to `progress` as ranges finish (progress bars).
pub(crate) fn scan_with_progress(
    b: &[u8],
    start: usize,
    keep_in_file: bool,
    pages: Pages,
    progress: Option<&std::sync::atomic::AtomicU64>,
) -> Result<ScannedTrace, ScanError> {
    let new_collector = || {
        if keep_in_file {
            Collector::over_file(b)
        } else {
            Collector::default()
        }
    };
    let (mut c, mut walked) = split::scan_ranges(
        b,
        start,
        is_ndjson(b, start),
        new_collector,
        pages,
        progress,
    );
    let first_close = walked.closed_at;
    let mut in_object = !is_ndjson(b, start) && b[..start].contains(&b'{');
    let mut notes = Vec::new();
    // What follows the closed array: more traces (read on), or bytes said to be ignored.
    // The `]` of the array last walked (none for NDJSON, closed by the end of the bytes).
    let mut last_close = walked.closed_at;
    while let (RangeEnd::Ended(ArrayEnd::Closed), Some(close)) = (&walked.end, last_close) {
        let after = envelope::after_events(b, close as usize, in_object);
        let (at, next) = match after {
            envelope::After::Nothing => break,
            envelope::After::Ignored { offset, nul } => {
                notes.push(ignored_after_note(
                    offset as u64,
                    (b.len() - offset) as u64,
                    nul,
                ));
                break;
            }
            envelope::After::NeedMore { from } => {
                notes.push(ignored_after_note(
                    from as u64,
                    (b.len() - from) as u64,
                    false,
                ));
                break;
            }
            envelope::After::Events {
                at,
                start,
                in_object: inside,
            } => {
                in_object = inside;
                (at, start)
            }
        };
        let (more, w) =
            split::scan_ranges(b, next, is_ndjson(b, next), new_collector, pages, progress);
        if w.events == 0 {
            notes.push(ignored_after_note(at as u64, (b.len() - at) as u64, false));
            break;
        }
        notes.push(second_trace_note(at as u64, w.events));
        last_close = w.closed_at;
        c.merge(more);
        let end = w.end.clone();
        walked.extend(w);
        walked.end = end;
    }
    let mut t = finish_scan(c, walked, b, start)?;
    // `metadata` follows the first trace's array.
    t.closed_at = first_close;
    for n in notes {
        t.diagnostics.note(n);
    }
    Ok(t)
}

/// The warning for bytes after the trace's top-level value that are no trace.
pub(crate) fn ignored_after_note(offset: u64, len: u64, nul: bool) -> String {
    format!(
        "{len} bytes after the end of the trace, from byte {offset}, ignored ({})",
        if nul {
            "NUL padding"
        } else {
            "not trace events"
        }
    )
}

/// The warning for a second top-level trace read as more events.
pub(crate) fn second_trace_note(at: u64, events: u64) -> String {
    format!(
        "a second trace follows the first at byte {at} (files joined, as `cat a.json b.json` \
         or two gzip members make): its {events} events are read as more events of this file"
    )
}

/// Ends a scan: turns the last range's end into the trace's end and counts what was odd.
fn finish_scan(
    c: Collector,
    walked: Walked,
    b: &[u8],
    start: usize,
) -> Result<ScannedTrace, ScanError> {
    finish_walk(c, walked, start as u64, |offset| b.get(offset as usize..))
}

/// Ends a scan (also of a stream). `rest(offset)`: the bytes from `offset` (where the
/// walk stopped) to the end of the input; `None` when they are no longer held.
pub(crate) fn finish_walk<'a>(
    c: Collector,
    walked: Walked,
    start: u64,
    rest: impl Fn(u64) -> Option<&'a [u8]>,
) -> Result<ScannedTrace, ScanError> {
    let mut t = c.finish();
    t.closed_at = walked.closed_at;
    t.damage = walked.damage;
    let RangeEnd::Ended(mut end) = walked.end else {
        unreachable!("the last range runs to the end of the array");
    };
    match end {
        ArrayEnd::Broken { offset, .. }
            if rest(offset).is_some_and(|r| r.iter().all(|&x| x == 0 || crate::json::is_ws(x))) =>
        {
            // A crashed writer's file padded with NUL bytes: cut off, not corrupt.
            end = ArrayEnd::Truncated { offset };
        }
        ArrayEnd::Truncated { offset } => {
            // One stray or escaped quote turns every later string inside out: the rest of
            // the file reads as one unterminated value, as if it were cut off.
            if let Some(at) = rest(offset).and_then(|r| crate::json::control_in_string(r, 0)) {
                end = ArrayEnd::Broken {
                    offset: offset + at as u64,
                    expected: CONTROL_IN_STRING,
                };
            }
        }
        _ => {}
    }
    t.diagnostics.add(
        "array elements that are not event objects",
        walked.non_objects,
    );
    if let ArrayEnd::Truncated { offset } = end
        && offset > start
    {
        t.diagnostics.add(
            "file ends before the event array is closed (a partial last event is dropped)",
            1,
        );
    }
    if t.events == 0 {
        let (offset, reason) = match end {
            ArrayEnd::Broken { offset, expected } => (offset, format!("expected {expected}")),
            ArrayEnd::Truncated { offset } => (
                offset,
                "the file ends before the first trace event is complete".to_string(),
            ),
            _ if walked.non_objects > 0 => {
                return Err(ScanError::NoObjects { offset: start });
            }
            _ => {
                t.end = Some(end);
                return Ok(t);
            }
        };
        return Err(ScanError::Json {
            offset,
            event_index: 0,
            reason,
        });
    }
    t.end = Some(end);
    Ok(t)
}

impl From<ScanError> for AnalyzeError {
    fn from(e: ScanError) -> Self {
        match e {
            ScanError::NoObjects { offset } => AnalyzeError::OtherJson(format!(
                "a JSON array whose elements are not objects (from byte {offset}); trace \
                 events are objects"
            )),
            ScanError::Json {
                offset,
                event_index,
                reason,
            } => AnalyzeError::Json {
                offset,
                event_index,
                reason,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_str(s: &str) -> Result<ScannedTrace, ScanError> {
        let b = s.as_bytes();
        match crate::scan::envelope::detect(b).unwrap() {
            crate::scan::envelope::Envelope::Events { start, .. } => scan(b, start, true),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cut_off_array_keeps_complete_events() {
        let t = scan_str(
            r#"[{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":10,"dur":5},{"ph":"X","name":"RunTa"#,
        )
        .unwrap();
        assert_eq!(t.events, 1);
        assert_eq!(t.task_marks.len(), 1);
        assert!(t.truncated());
        assert_eq!(t.end, Some(ArrayEnd::Truncated { offset: 61 }));
    }

    #[test]
    fn chunks_are_kept_by_profile_whatever_their_order() {
        // Chunks of profiles 0x1 and 0x2 (pid 1) alternate; two chunks without an id are
        // keyed by their threads (tid 3, tid 4); a chunk of id 0x1 in pid 2 is another
        // profile.
        let chunk = |pid: u32, tid: u32, id: &str| {
            format!(
                r#"{{"ph":"P","name":"ProfileChunk","pid":{pid},"tid":{tid},"ts":1{id},"args":{{"data":{{"timeDeltas":[1]}}}}}}"#
            )
        };
        let events = [
            chunk(1, 9, r#","id":"0x1""#),
            chunk(1, 9, r#","id":"0x2""#),
            chunk(1, 9, r#","id":"0x1""#),
            chunk(1, 3, ""),
            chunk(1, 4, ""),
            chunk(1, 4, ""),
            chunk(2, 9, r#","id":"0x1""#),
        ];
        let t = scan_str(&format!("[{}]", events.join(","))).unwrap();
        let mut counts: Vec<(i64, String, usize)> = t
            .profile_data
            .iter()
            .map(|((pid, id), d)| (pid.0, id.0.clone(), d.chunks.len()))
            .collect();
        counts.sort();
        let expected = [
            (1, "0x1", 2),
            (1, "0x2", 1),
            (1, "tid:3", 1),
            (1, "tid:4", 2),
            (2, "0x1", 1),
        ];
        assert_eq!(counts, expected.map(|(p, id, n)| (p, id.to_string(), n)));
    }

    #[test]
    fn trailing_comma_and_closed_array() {
        let t = scan_str(r#"[{"ph":"I","name":"x","ts":3},]"#).unwrap();
        assert_eq!(t.events, 1);
        assert!(!t.truncated());
        assert_eq!(t.first_ts, Some(Timestamp::from_micros(3)));
    }

    #[test]
    fn junk_after_events_is_broken_but_kept() {
        let t = scan_str("[{\"ph\":\"I\",\"ts\":3},\n@{}").unwrap();
        assert_eq!(t.events, 1);
        assert_eq!(
            t.end,
            Some(ArrayEnd::Broken {
                offset: 20,
                expected: "a trace event object"
            })
        );
    }

    #[test]
    fn a_stray_quote_costs_its_event_not_the_rest_of_the_file() {
        // `"a"b"` in the second event's args: every later string reads inside out, so the
        // event never closes; the line break is where it went wrong, and the walk resumes at
        // the next line's event, which is kept.
        let src = "[{\"ph\":\"I\",\"ts\":3},\n{\"ph\":\"I\",\"args\":{\"url\":\"a\"b\"},\"ts\":4},\n{\"ph\":\"I\",\"ts\":5}]\n";
        let line_end = src.match_indices('\n').nth(1).unwrap().0;
        let t = scan_str(src).unwrap();
        assert_eq!(t.events, 2);
        assert_eq!(t.end, Some(ArrayEnd::Closed));
        let second = src.find('\n').unwrap() + 1;
        assert_eq!(
            t.damage,
            [Damage {
                offset: line_end as u64,
                event_index: 1,
                expected: CONTROL_IN_STRING,
                skipped: (line_end + 1 - second) as u64,
                skipped_events: 1,
                resumed: line_end as u64 + 1,
            }]
        );
        // The same event cut inside its string is a cut-off file.
        let cut = "[{\"ph\":\"I\",\"ts\":3},\n{\"ph\":\"I\",\"args\":{\"url\":\"ab";
        let t = scan_str(cut).unwrap();
        assert_eq!(t.end, Some(ArrayEnd::Truncated { offset: 20 }));
    }

    #[test]
    fn control_characters_count_only_inside_strings() {
        // Line breaks between values are whitespace; an escaped quote keeps the string
        // open, an escaped backslash does not.
        assert_eq!(
            crate::json::control_in_string(b"{\n\"a\":\n1}\n{\"b", 0),
            None
        );
        assert_eq!(
            crate::json::control_in_string(b"{\"a\":\"x\\\"\n", 0),
            Some(9)
        );
        assert_eq!(
            crate::json::control_in_string(b"{\"a\":\"x\\\\\"\n", 0),
            None
        );
        assert_eq!(
            crate::json::control_in_string(b"{\"a\":\"x\ty\"}", 0),
            Some(7)
        );
    }

    #[test]
    fn nul_padding_after_events_is_a_cut_off_file() {
        let t = scan_str("[{\"ph\":\"I\",\"ts\":3},\n\0\0\0").unwrap();
        assert_eq!(t.end, Some(ArrayEnd::Truncated { offset: 20 }));
    }

    #[test]
    fn array_of_numbers_is_not_a_trace() {
        let e = scan_str("[1,2,3]").unwrap_err();
        assert_eq!(e, ScanError::NoObjects { offset: 1 });
    }

    #[test]
    fn ndjson_is_closed_at_end() {
        let t = scan_str("{\"ph\":\"I\",\"ts\":3}\n{\"ph\":\"I\",\"ts\":4}\n").unwrap();
        assert_eq!(t.events, 2);
        assert_eq!(t.end, Some(ArrayEnd::Closed));
    }
}

//! The scan's sink: decides from `ph` and `name` whether an event matters and keeps it as
//! a small record (see [`super::records`]).

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

use simd_json::BorrowedValue;
use simd_json::prelude::*;

use super::args::{ArgsParser, field, int, micros_as_nanos, scalar_int, text};
use super::chunk::DeltaSummary;
use super::event::{Phase, TraceEvent};
use super::nodes::{self, ScriptId};
use super::records::*;
use super::{ScannedTrace, chunk, is_task_name, packed};
use crate::json::plain_uints_into;
use crate::time::{TimeDelta, Timestamp};
use crate::vocab::{CallFrame, NodeId, Pid, ProfileId, ProfileKey, ThreadKey, Tid};

/// The diagnostics kind of events without a `ph` (not trace events).
pub(crate) const NO_PHASE: &str = "events without a \"ph\"";

/// The diagnostics kind of kept events whose `pid` or `tid` is beyond i64.
pub(super) const IDS_BEYOND_I64: &str = "events whose pid or tid is a number outside the 64-bit \
     integer range (their threads keyed by a hash of the number's text)";

/// The diagnostics kind of chunks with a `timeDeltas` value outside ±2^53 µs.
pub(super) const DELTA_OUT_OF_RANGE: &str = "chunks with a timeDeltas value outside ±2^53 µs (or \
     beyond any number, 1e400): their samples skipped (the profile's later samples may be shifted)";

/// The diagnostics kind of chunks whose two arrays differ in length.
const LENGTHS_DIFFER: &str =
    "chunks whose samples and timeDeltas differ in length (truncated to the shorter)";

/// Numbers the read buffers of [`Collector::pack_plain`] may keep between chunks (Chrome's
/// chunks hold about a hundred samples).
const BIG_BUFFERS: usize = 1 << 18;

/// A chunk's sample arrays as [`Collector::sample_data`] leaves them.
enum Arrays {
    /// As they are kept.
    Kept(SampleArrays),
    /// Read and packed into [`Collector::packed`], with their summary: the caller keeps
    /// them.
    Packed(DeltaSummary),
}

/// What [`Collector::sample_data`] reads of a chunk.
struct SampleData {
    nodes: Vec<Node>,
    arrays: Arrays,
    start_time: Option<Timestamp>,
}

impl Default for SampleData {
    fn default() -> Self {
        SampleData {
            nodes: Vec::new(),
            arrays: Arrays::Kept(SampleArrays::default()),
            start_time: None,
        }
    }
}

/// The diagnostics kind of events whose `ph` is not one character (`"Xyz"`, `"XX"`): the
/// format has no such phase, so they are skipped, not read as `X` or `M`.
pub(crate) const INVALID_PHASE: &str =
    "events whose \"ph\" is not one character (no phase: skipped)";

/// A `FunctionCall`'s or stack frame's function as `name url:line:col` (the trace's line
/// and column as given: 1-based in `FunctionCall` data); `(anonymous)` for no name.
fn function_text(d: &BorrowedValue<'_>) -> String {
    let name = text(d, "functionName").filter(|n| !n.is_empty());
    let mut s = name.unwrap_or_else(|| "(anonymous)".into());
    let url = text(d, "url").unwrap_or_default();
    let line = field(d, "lineNumber").and_then(int);
    let column = field(d, "columnNumber").and_then(int);
    if !url.is_empty() || line.is_some() {
        s.push(' ');
        s.push_str(&url);
        if let Some(l) = line {
            s.push_str(&format!(":{l}"));
            if let Some(c) = column {
                s.push_str(&format!(":{c}"));
            }
        }
    }
    s
}

/// Combines two optional values with `f` (either alone when the other is missing).
fn combine<T: Copy>(a: Option<T>, b: Option<T>, f: impl Fn(T, T) -> T) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(f(a, b)),
        (a, b) => a.or(b),
    }
}

/// The URL of the last `//# sourceMappingURL=` (or `//@`) comment of a script's text.
fn source_mapping_comment(text: &str) -> Option<String> {
    let at = text
        .rfind("//# sourceMappingURL=")
        .or_else(|| text.rfind("//@ sourceMappingURL="))?;
    let url = text[at + "//# sourceMappingURL=".len()..]
        .split(char::is_whitespace)
        .next()?;
    (!url.is_empty()).then(|| url.to_string())
}

/// The string value of the first `"key"` in `raw` (one event's `args`), read whole: the
/// args parser cuts strings at [`super::args::LONG_STRING`], but a map URL (`data:`, up to
/// the 64 MiB a map may have) or a script's text (whose last line names its map) is read
/// in full. `None` when the key is not there or its value is not a string.
fn whole_string(raw: &[u8], key: &[u8]) -> Option<String> {
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(&raw[from..], key).map(|a| a + from) {
        from = at + key.len();
        // Inside a string the key's quotes would be escaped.
        if at > 0 && raw[at - 1] == b'\\' {
            continue;
        }
        let rest = &raw[from..];
        let colon = rest.iter().position(|b| !b.is_ascii_whitespace())?;
        if rest[colon] != b':' {
            continue;
        }
        let mut values =
            serde_json::Deserializer::from_slice(&rest[colon + 1..]).into_iter::<String>();
        return values.next()?.ok();
    }
    None
}

/// The thread of an event that is kept. (A `pid` or `tid` beyond i64 is counted where
/// the event is kept: [`Collector::count_odd_ids`].)
fn thread_of(ev: &TraceEvent<'_>) -> ThreadKey {
    ThreadKey {
        pid: Pid(ev.pid()),
        tid: Tid(ev.tid()),
    }
}

/// A frame commit without a parent frame (a main frame), resolved to a pid in `finish`.
#[derive(Debug)]
struct MainFrameCommit {
    frame: Option<String>,
    process_id: Option<i64>,
    pseudo_id: Option<String>,
    ts: Option<Timestamp>,
    url: Option<String>,
}

/// What the parts of one parallel scan hold together (chunks and nodes by profile; entry
/// points are moved as lists, never copied: [`EntryPoints`]), counted before they are merged, so that the merged lists are made the size
/// they end at ([`Collector::make_room`]). Only profiles with at least
/// [`MergedSizes::LARGE`] chunks in some part are counted: growing a short list costs
/// little, and a trace of many small profiles then costs no count of each.
#[derive(Debug, Default)]
pub(crate) struct MergedSizes {
    profiles: crate::vocab::FastMap<ProfileKey, (usize, usize)>,
}

impl MergedSizes {
    /// Chunks of one profile in one part from which the profile's lists are counted.
    const LARGE: usize = 1024;

    /// The sums over `parts`.
    pub(crate) fn of<'c>(parts: impl Iterator<Item = &'c Collector> + Clone) -> MergedSizes {
        let mut sizes = MergedSizes::default();
        for c in parts.clone() {
            for (key, data) in &c.t.profile_data {
                if data.chunks.len() >= Self::LARGE {
                    sizes.profiles.entry(key.clone()).or_default();
                }
            }
        }
        if !sizes.profiles.is_empty() {
            for c in parts {
                for (key, data) in &c.t.profile_data {
                    if let Some(n) = sizes.profiles.get_mut(key) {
                        *n = (n.0 + data.chunks.len(), n.1 + data.nodes.len());
                    }
                }
            }
        }
        sizes
    }
}

/// Collects the events that matter from a stream of [`TraceEvent`]s.
#[derive(Default)]
pub struct Collector {
    /// Address of the first byte of the whole file, when the events are slices of it and
    /// it stays available for reading sample arrays later.
    file_base: Option<usize>,
    args: ArgsParser,
    t: ScannedTrace,
    main_frame_ids: BTreeSet<String>,
    main_frame_pids: BTreeSet<Pid>,
    commits: Vec<MainFrameCommit>,
    /// Main-frame URLs whose frame needs no check against `main_frame_ids`.
    pages: Vec<PageUrl>,
    /// `navigationStart` events with a URL and a `navigationId`, with their frame, for the
    /// check against `main_frame_ids` at the end.
    navigation_starts: Vec<(Option<String>, Navigation)>,
    /// `firstContentfulPaint` marks with their `args.frame`, for the same check.
    contentful_paints: Vec<(Option<String>, Timestamp)>,
    pseudo_pids: HashMap<String, i64>,
    /// The last `ProfileChunk`'s thread and raw `id` bytes, and its key in
    /// `profile_data`: consecutive chunks are nearly always of one profile, and matching
    /// the raw bytes spares building the key (an unescaped string) for each.
    last_chunk: Option<(ThreadKey, Option<Vec<u8>>, ProfileKey)>,
    /// The last chunk's arrays read from a stream, packed ([`Collector::sample_data`]).
    packed: Vec<u8>,
    /// Reused buffers of [`Collector::pack_plain`].
    ids_buf: Vec<u32>,
    deltas_buf: Vec<u32>,
    /// Scripts whose rundown event left out the map URL (`sourceMapUrlElided`), by (pid,
    /// `scriptId`), with their URL: the `-sources` event that follows gives it.
    elided_maps: HashMap<(Pid, String), String>,
    /// The call frames' texts read so far, each held once.
    texts: Texts,
}

/// Call-frame texts (URLs, function names, script ids) held once each: a profile's nodes
/// name a few scripts and functions many times over (16,330 nodes, 1.4 MB of URL text,
/// in one 33 MB DevTools recording), and a stream keeps every chunk's nodes until the
/// scan ends.
#[derive(Debug, Default)]
struct Texts(std::collections::HashSet<std::sync::Arc<str>, foldhash::fast::RandomState>);

impl Texts {
    /// `text`, shared with every earlier call frame that has it.
    fn get(&mut self, text: &str) -> std::sync::Arc<str> {
        if let Some(u) = self.0.get(text) {
            return u.clone();
        }
        let u: std::sync::Arc<str> = text.into();
        self.0.insert(u.clone());
        u
    }

    /// A `scriptId` as text: a string as it is, an integer in decimal (written on the
    /// stack: traces give every node's id as an integer), else empty.
    fn script_id(&mut self, text: Option<&str>, int: Option<i64>) -> std::sync::Arc<str> {
        use std::io::Write;
        match (text, int) {
            (Some(t), _) => self.get(t),
            (None, Some(i)) => {
                let mut digits = std::io::Cursor::new([0u8; 20]);
                let _ = write!(digits, "{i}"); // an i64 takes at most 20 bytes
                let n = digits.position() as usize;
                self.get(std::str::from_utf8(&digits.get_ref()[..n]).unwrap_or_default())
            }
            (None, None) => self.get(""),
        }
    }
}

impl Collector {
    /// A collector for events that are slices of `file`, which stays available: sample
    /// arrays are left in it ([`SampleArrays::InFile`]).
    pub fn over_file(file: &[u8]) -> Self {
        Collector {
            file_base: Some(file.as_ptr() as usize),
            ..Collector::default()
        }
    }

    /// Takes one event.
    pub fn event(&mut self, ev: &TraceEvent<'_>) {
        self.t.events += 1;
        if ev.ph == Phase::Invalid {
            // Not a phase at all: neither `X` nor `M`, nor any time in the trace.
            self.t.diagnostics.add(INVALID_PHASE, 1);
            return;
        }
        let (ts, dur) = (ev.ts(), ev.dur());
        if ev.ph != Phase::Metadata
            && let Some(ts) = ts
        {
            let end = ts + dur.unwrap_or_default().max(TimeDelta::ZERO);
            self.t.first_ts = Some(self.t.first_ts.map_or(ts, |f| f.min(ts)));
            self.t.last_ts = Some(self.t.last_ts.map_or(end, |l| l.max(end)));
        }
        match ev.ph {
            Phase::Metadata => {
                if ev.is("thread_name")
                    && let Some(name) = self.arg_text(ev, "name")
                {
                    let thread = self.kept_thread(ev);
                    self.t.thread_names.insert(thread, name);
                }
                return;
            }
            Phase::Missing => {
                self.t.diagnostics.add(NO_PHASE, 1);
                return;
            }
            Phase::Complete | Phase::Begin | Phase::End => {
                let Some(ts) = ts else {
                    if is_task_name(ev.name) {
                        self.t
                            .diagnostics
                            .add("task events without a numeric ts", 1);
                    }
                    return self.other(ev, None, dur);
                };
                let kind = match ev.ph {
                    Phase::Complete if is_task_name(ev.name) => match dur {
                        Some(d) if d >= TimeDelta::ZERO => Some(MarkKind::Complete(d)),
                        // Chrome writes a task still running when tracing stopped without
                        // `dur` (or with -1).
                        Some(d) if d == TimeDelta::from_micros(-1) => Some(MarkKind::Unfinished),
                        None if !ev.has_dur() => Some(MarkKind::Unfinished),
                        _ => Some(MarkKind::InvalidDur),
                    },
                    Phase::Begin => Some(MarkKind::Begin {
                        is_task: is_task_name(ev.name),
                    }),
                    Phase::End => Some(MarkKind::End),
                    _ => None,
                };
                if let Some(kind) = kind {
                    let thread = self.kept_thread(ev);
                    self.t.task_marks.push(TaskMark {
                        thread,
                        ts,
                        kind,
                        order: ev.offset,
                    });
                    return;
                }
            }
            _ => {}
        }
        self.other(ev, ts, dur);
    }

    /// The thread of an event that is kept ([`thread_of`]), counting it when its `pid` or
    /// `tid` is a number no 64-bit integer holds; each is parsed once when both are plain
    /// integers, as nearly always.
    #[inline]
    fn kept_thread(&mut self, ev: &TraceEvent<'_>) -> ThreadKey {
        if let Some(thread) = ev.plain_thread() {
            return thread;
        }
        self.count_odd_ids(ev);
        thread_of(ev)
    }

    /// Counts a kept event whose `pid` or `tid` no 64-bit integer holds.
    #[inline]
    fn count_odd_ids(&mut self, ev: &TraceEvent<'_>) {
        if ev.ids_beyond_i64() {
            self.t.diagnostics.add(IDS_BEYOND_I64, 1);
        }
    }

    /// Any event but a task mark or metadata, with its `ts` and `dur`.
    fn other(&mut self, ev: &TraceEvent<'_>, ts: Option<Timestamp>, dur: Option<TimeDelta>) {
        if ev.ph == Phase::Complete
            && let Some((kind, work)) = classify_name(ev.name)
        {
            return self.entry_point(ev, kind, work, ts, dur);
        }
        if let Phase::Other(ph @ (b'b' | b'e')) = ev.ph
            && let Some(kind) = FrameMarkKind::of_name(ev.name)
        {
            return self.frame_mark(ev, kind, ph == b'b', ts);
        }
        match ev.name {
            b"TimerInstall" => self.timer_install(ev),
            b"EventTiming" => self.event_timing(ev, ts),
            b"Profile" | b"ProfileChunk" | b"CpuProfile" => {
                let thread = self.kept_thread(ev);
                match ev.name {
                    b"Profile" => self.profile(ev, thread, ts),
                    b"ProfileChunk" => self.chunk(ev, thread, ts),
                    _ => self.cpu_profile(ev, thread, ts),
                }
            }
            b"TracingStartedInBrowser" => self.tracing_started_in_browser(ev),
            b"TracingStartedInPage" => {
                self.main_frame_pids.insert(Pid(ev.pid()));
            }
            b"FrameCommittedInBrowser" => self.frame_committed(ev),
            b"ScriptCatchup" | b"ScriptCompiled" => self.script(ev),
            b"CommitLoad" | b"navigationStart" => self.main_frame_load(ev),
            b"firstContentfulPaint" => {
                if let Some(ts) = ev.ts() {
                    let frame = ev
                        .args
                        .and_then(|raw| self.args.with(raw, |args| text(args, "frame")))
                        .flatten();
                    self.contentful_paints.push((frame, ts));
                }
            }
            b"ProcessReadyInBrowser" => {
                if let Some((pseudo, pid)) = self.with_data(ev, |d| {
                    Some((text(d, "processPseudoId")?, int(field(d, "processId")?)?))
                }) {
                    self.pseudo_pids.insert(pseudo, pid);
                }
            }
            _ => {}
        }
    }

    /// Keeps an entry-point event, with the `args` of the kinds whose args say something
    /// (read only for the entry points inside long tasks: [`read_entry_details`]).
    fn entry_point(
        &mut self,
        ev: &TraceEvent<'_>,
        kind: EntryKind,
        work: WorkCategory,
        ts: Option<Timestamp>,
        dur: Option<TimeDelta>,
    ) {
        let (Some(ts), Some(dur)) = (ts, dur) else {
            return;
        };
        // Style and layout keep theirs for the stack of a forced layout.
        let args = match kind {
            EntryKind::EventDispatch
            | EntryKind::FunctionCall
            | EntryKind::TimerFire
            | EntryKind::Script
            | EntryKind::Xhr
            | EntryKind::ParseHtml => ev
                .args
                .map_or(EntryArgs::None, |raw| EntryArgs::Unread(self.raw_args(raw))),
            // Only a stack trace is read from a style or layout event's args: a stream's
            // collector copies none without one (most have none).
            EntryKind::StyleLayout => match ev.args {
                Some(raw)
                    if self.file_base.is_some()
                        || memchr::memmem::find(raw, b"\"stackTrace\"").is_some() =>
                {
                    EntryArgs::Unread(self.raw_args(raw))
                }
                _ => EntryArgs::None,
            },
            _ => EntryArgs::None,
        };
        self.t.entry_points.push(EntryPoint {
            thread: thread_of(ev),
            ts,
            dur: dur.max(TimeDelta::ZERO),
            kind,
            work,
            args,
        });
    }

    /// Keeps an animation-frame event, with the timing info of a frame's or a script's
    /// begin event (a few per frame: parsed at once).
    fn frame_mark(
        &mut self,
        ev: &TraceEvent<'_>,
        kind: FrameMarkKind,
        begin: bool,
        ts: Option<Timestamp>,
    ) {
        let Some(ts) = ts else { return };
        let (mut frame, mut script) = (None, None);
        if begin && let Some(raw) = ev.args {
            let parsed = match kind {
                FrameMarkKind::Frame => self
                    .args
                    .with(raw, |v| {
                        frame = field(v, "animation_frame_timing_info").map(frame_timing_info)
                    })
                    .is_some(),
                FrameMarkKind::Script { .. } => self
                    .args
                    .with(raw, |v| {
                        script =
                            field(v, "animation_frame_script_timing_info").map(script_timing_info)
                    })
                    .is_some(),
                _ => true,
            };
            if !parsed {
                self.t.diagnostics.add(BAD_ARGS, 1);
            }
        }
        let thread = self.kept_thread(ev);
        self.t.frame_marks.push(FrameMark {
            thread,
            ts,
            begin,
            kind,
            order: ev.offset,
            frame,
            script,
        });
    }

    /// `raw` (bytes of an event) kept for later: where it lies in the file when the
    /// collector reads a file that stays available, else a copy.
    fn raw_args(&self, raw: &[u8]) -> RawArgs {
        match (self.file_base, u32::try_from(raw.len())) {
            (Some(base), Ok(len)) => RawArgs::InFile {
                at: (raw.as_ptr() as usize - base) as u64,
                len,
            },
            _ => RawArgs::Owned(raw.into()),
        }
    }

    /// Keeps a `TimerInstall`: its id, kind, timeout and the frame that set it.
    fn timer_install(&mut self, ev: &TraceEvent<'_>) {
        let Some((timer_id, detail)) = self.with_data(ev, |d| {
            let id = int(field(d, "timerId")?)?;
            let once = field(d, "singleShot")
                .and_then(|v| v.as_bool())
                .unwrap_or(true);
            let mut detail = format!(
                "{} {} ms",
                if once { "setTimeout" } else { "setInterval" },
                field(d, "timeout").and_then(int).unwrap_or(0)
            );
            if let Some(top) = field(d, "stackTrace")
                .and_then(|s| s.as_array())
                .and_then(|a| a.first())
            {
                detail.push_str(" at ");
                detail.push_str(&function_text(top));
            }
            Some((id, detail))
        }) else {
            return;
        };
        self.t.timer_installs.push(TimerInstall {
            pid: Pid(ev.pid()),
            timer_id,
            detail,
        });
    }

    /// Keeps an `EventTiming` begin (`b`, with its `args.data`) or end (`e`); other
    /// phases and events without a `ts` are not Event Timing entries.
    fn event_timing(&mut self, ev: &TraceEvent<'_>, ts: Option<Timestamp>) {
        let (Some(ts), Phase::Other(ph @ (b'b' | b'e'))) = (ts, ev.ph) else {
            return;
        };
        let begin = if ph == b'b' {
            let data = ev.args.and_then(|raw| {
                self.args.with(raw, |args| {
                    let d = field(args, "data");
                    let num = |k| d.and_then(|d| field(d, k)).and_then(|v| v.cast_f64());
                    EventTimingData {
                        event_type: d.and_then(|d| text(d, "type")),
                        interaction_id: d.and_then(|d| field(d, "interactionId")).and_then(int),
                        duration: num("duration"),
                        time_stamp: num("timeStamp"),
                        processing_start: num("processingStart"),
                        processing_end: num("processingEnd"),
                        frame: d
                            .and_then(|d| text(d, "frame"))
                            .or_else(|| text(args, "frame")),
                        node_id: d.and_then(|d| field(d, "nodeId")).and_then(int),
                    }
                })
            });
            if data.is_none() && ev.args.is_some() {
                self.t.diagnostics.add(BAD_ARGS, 1);
            }
            Some(Box::new(data.unwrap_or_default()))
        } else {
            None
        };
        let id = ev.id().or_else(|| {
            let raw = ev.raw_id2()?;
            self.args
                .with(raw, |v| text(v, "global").or_else(|| text(v, "local")))
                .flatten()
        });
        let thread = self.kept_thread(ev);
        self.t.event_timings.push(EventTiming {
            thread,
            ts,
            id,
            begin,
            order: ev.offset,
        });
    }

    /// Parses `args` and hands `args.data` to `f`; counts unparsable args.
    fn with_data<R>(
        &mut self,
        ev: &TraceEvent<'_>,
        f: impl FnOnce(&BorrowedValue<'_>) -> Option<R>,
    ) -> Option<R> {
        let raw = ev.args?;
        args_data(&mut self.args, raw, &mut self.t.diagnostics, f)
    }

    /// A source-rundown event naming a script's source map. Only events whose args hold a
    /// `"sourceMapUrl"` key are parsed, and the `-sources` events (whole script texts) only
    /// for scripts whose map URL Chrome left out (`"sourceMapUrlElided": true`, which it
    /// does for `data:` URLs): their `//# sourceMappingURL=` comment is the map URL.
    fn script(&mut self, ev: &TraceEvent<'_>) {
        let Some(raw) = ev.args else { return };
        let has = |key: &[u8]| memchr::memmem::find(raw, key).is_some();
        let pid = Pid(ev.pid());
        let script_id = |d: &BorrowedValue<'_>| {
            let id = field(d, "scriptId")?;
            Some(match id.as_str() {
                Some(s) => s.to_string(),
                None => int(id)?.to_string(),
            })
        };
        let long = raw.len() > super::args::LONG_STRING;
        if has(b"\"sourceMapUrl\"") {
            let whole_url = long
                .then(|| whole_string(raw, b"\"sourceMapUrl\""))
                .flatten();
            if let Some(rec) = self.with_data(ev, |d| {
                Some(ScriptRecord {
                    pid,
                    script_id: script_id(d)?,
                    url: text(d, "url").unwrap_or_default(),
                    source_map_url: whole_url
                        .or_else(|| text(d, "sourceMapUrl"))
                        .filter(|m| !m.is_empty())?,
                })
            }) {
                self.t.scripts.push(rec);
            }
        } else if has(b"\"sourceMapUrlElided\"") {
            if let Some((id, url)) = self.with_data(ev, |d| {
                Some((script_id(d)?, text(d, "url").unwrap_or_default()))
            }) {
                self.elided_maps.insert((pid, id), url);
            }
        } else if !self.elided_maps.is_empty() && has(b"sourceMappingURL=") {
            let whole_text = long.then(|| whole_string(raw, b"\"sourceText\"")).flatten();
            let found = self.with_data(ev, |d| {
                let id = script_id(d)?;
                let text = match &whole_text {
                    Some(t) => t.as_str(),
                    None => field(d, "sourceText")?.as_str()?,
                };
                Some((id, source_mapping_comment(text)?))
            });
            if let Some((id, map)) = found
                && let Some(url) = self.elided_maps.remove(&(pid, id.clone()))
            {
                self.t.scripts.push(ScriptRecord {
                    pid,
                    script_id: id,
                    url,
                    source_map_url: map,
                });
            }
        }
    }

    fn arg_text(&mut self, ev: &TraceEvent<'_>, key: &str) -> Option<String> {
        let raw = ev.args?;
        self.args.with(raw, |v| text(v, key)).flatten()
    }

    fn profile_id(ev: &TraceEvent<'_>, thread: ThreadKey) -> ProfileId {
        // docs/METHOD.md §2: key by (pid, id); by (pid, tid) when `id` is missing.
        ProfileId(ev.id().unwrap_or_else(|| format!("tid:{}", thread.tid)))
    }

    fn profile(&mut self, ev: &TraceEvent<'_>, thread: ThreadKey, ts: Option<Timestamp>) {
        let Some(ts) = ts else {
            self.t
                .diagnostics
                .add("Profile events without ts (ignored)", 1);
            return;
        };
        let (start_time, source) = self
            .with_data(ev, |d| {
                Some((
                    field(d, "startTime")
                        .and_then(micros_as_nanos)
                        .map(Timestamp::from_nanos),
                    text(d, "source"),
                ))
            })
            .unwrap_or((None, None));
        self.t.profiles.push(ProfileEvent {
            thread,
            id: Self::profile_id(ev, thread),
            ts,
            start_time,
            source,
            order: ev.offset,
        });
    }

    fn chunk(&mut self, ev: &TraceEvent<'_>, thread: ThreadKey, ts: Option<Timestamp>) {
        let data = self.sample_data(ev).unwrap_or_default();
        let ts = ts.unwrap_or_default();
        // Keyed by (pid, id), or (pid, tid) without an id: the thread matters only then.
        let raw_id = ev.raw_id();
        let same = self.last_chunk.as_ref().is_some_and(|(t, id, _)| {
            t.pid == thread.pid && id.as_deref() == raw_id && (raw_id.is_some() || *t == thread)
        });
        if !same {
            let key = (thread.pid, Self::profile_id(ev, thread));
            self.t.profile_data.entry(key.clone()).or_default();
            self.last_chunk = Some((thread, raw_id.map(<[u8]>::to_vec), key));
        }
        let Some(entry) = self
            .last_chunk
            .as_ref()
            .and_then(|(_, _, key)| self.t.profile_data.get_mut(key))
        else {
            return; // not reached: the key was entered when it was memoised
        };
        if !data.nodes.is_empty() || data.start_time.is_some() {
            entry.nodes.push(ChunkNodes {
                ts,
                order: ev.offset,
                nodes: data.nodes,
                start_time: data.start_time,
            });
        }
        let samples = match data.arrays {
            Arrays::Kept(s) => s,
            Arrays::Packed(summary) => entry.store.keep(&self.packed, summary),
        };
        entry.chunks.push(ProfileChunk { ts, samples });
    }

    fn cpu_profile(&mut self, ev: &TraceEvent<'_>, thread: ThreadKey, ts: Option<Timestamp>) {
        match self.sample_data(ev) {
            Some(data) if data.start_time.is_some() || !data.nodes.is_empty() => {
                let samples = match data.arrays {
                    Arrays::Kept(s) => s,
                    Arrays::Packed(summary) => SampleArrays::packed_alone(&self.packed, summary),
                };
                self.t.cpu_profiles.push(CpuProfileEvent {
                    thread,
                    order: ev.offset,
                    ts: ts.unwrap_or_default(),
                    data: ChunkData {
                        nodes: data.nodes,
                        samples,
                        start_time: data.start_time,
                    },
                })
            }
            _ => self
                .t
                .diagnostics
                .add("CpuProfile events without a cpuProfile (ignored)", 1),
        }
    }

    /// Reads the nodes, start time and sample arrays of a `ProfileChunk` or `CpuProfile`.
    /// With the whole file at hand (`file_base`), the arrays are summarised and left in
    /// the file; otherwise they are read now and packed into `self.packed`.
    fn sample_data(&mut self, ev: &TraceEvent<'_>) -> Option<SampleData> {
        let args = ev.args?;
        let bad = |c: &mut Self| {
            c.t.diagnostics.add(BAD_ARGS, 1);
            None
        };
        let layout = match &ev.chunk_layout {
            Some(l) => chunk::ChunkLayout::clone(l),
            None => match chunk::layout(args) {
                Ok(l) => l,
                Err(_) => return bad(self),
            },
        };
        // The sample arrays are set last (a default one would be allocated, then dropped).
        let mut nodes = Vec::new();
        if let Some(r) = &layout.nodes {
            let raw = &args[r.clone()];
            match compact_nodes(raw, &mut self.texts).or_else(|| self.parsed_nodes(raw)) {
                Some(read) => nodes = read,
                None => return bad(self),
            }
        }
        let start_time = layout
            .start_time
            .and_then(|r| crate::json::micros_to_nanos(&args[r]))
            .map(Timestamp::from_nanos);
        let (Some(sr), Some(dr)) = (&layout.samples, &layout.deltas) else {
            if layout.samples.is_some() {
                self.t.diagnostics.add(LENGTHS_DIFFER, 1);
            }
            return Some(SampleData {
                nodes,
                arrays: Arrays::Kept(SampleArrays::default()),
                start_time,
            });
        };
        if self.file_base.is_none()
            && let Some((ns, nd, summary)) = self.pack_plain(args, sr, dr)
        {
            if ns != nd {
                self.t.diagnostics.add(LENGTHS_DIFFER, 1);
            }
            return Some(SampleData {
                nodes,
                arrays: Arrays::Packed(summary),
                start_time,
            });
        }
        let Ok(chunk::ChunkSummary {
            samples: ns,
            deltas: nd,
            summary,
            out_of_range,
        }) = chunk::summarize_chunk(args, sr, layout.samples_count, dr)
        else {
            return bad(self);
        };
        if out_of_range {
            // Its samples are skipped; its other deltas still place the chunks after it.
            self.t.diagnostics.add(DELTA_OUT_OF_RANGE, 1);
            return Some(SampleData {
                nodes,
                arrays: Arrays::Kept(SampleArrays::Unreadable(summary)),
                start_time,
            });
        }
        if ns != nd {
            self.t.diagnostics.add(LENGTHS_DIFFER, 1);
        }
        // The arrays as they lie in `args`; read now or later by the same code, so both
        // ways give the same samples (or the same unreadable chunk) for any input.
        let here = SampleArrays::InFile {
            samples: Span::of(sr.clone()),
            deltas: Span::of(dr.clone()),
            summary,
        };
        let arrays = match self.file_base {
            Some(base) => Arrays::Kept(here.moved_by(args.as_ptr() as usize - base)),
            None => match here.read(Some(args), &PackedStore::default()) {
                Some((samples, deltas)) => {
                    let mut summary = DeltaSummary::default();
                    deltas.iter().for_each(|d| summary.push(*d));
                    self.packed.clear();
                    packed::pack(samples.into_iter().zip(deltas), &mut self.packed);
                    Arrays::Packed(summary)
                }
                None => Arrays::Kept(SampleArrays::Unreadable(summary)),
            },
        };
        Some(SampleData {
            nodes,
            arrays,
            start_time,
        })
    }

    /// A `nodes` array not in Chrome's layout, read by the JSON parser: from its tape; an
    /// array with an object of over 32 members (which the tree keeps hash-backed) is read
    /// again as a tree. `None` when it is not JSON.
    fn parsed_nodes(&mut self, raw: &[u8]) -> Option<Vec<Node>> {
        let texts = &mut self.texts;
        match self.args.with_tape(raw, |v| nodes_from_tape(v, texts))? {
            Some(read) => Some(read),
            None => {
                // Strings cut were counted by the first read.
                let cut = self.args.cut;
                let texts = &mut self.texts;
                let read = self.args.with(raw, |v| {
                    // Sized to the array, not grown by doubling: a stream keeps every
                    // chunk's nodes until the scan ends, and the unused half of a doubled
                    // vector was a quarter of the peak heap on an event-heavy 1 GB trace.
                    v.as_array()
                        .map(|a| {
                            let mut nodes = Vec::with_capacity(a.len());
                            nodes.extend(a.iter().filter_map(|n| node(n, texts)));
                            nodes
                        })
                        .unwrap_or_default()
                });
                self.args.cut = cut;
                read
            }
        }
    }

    /// The stream's fast path for a chunk's two arrays as Chrome writes them
    /// ([`plain_uints_into`]): each read once into a reused buffer, then packed into
    /// `self.packed`. Returns (samples, deltas, the summary of the pairs); `None` for
    /// other arrays, which the general path reads (the same values, read more slowly).
    fn pack_plain(
        &mut self,
        args: &[u8],
        sr: &Range<usize>,
        dr: &Range<usize>,
    ) -> Option<(usize, usize, DeltaSummary)> {
        // An array of n numbers has at least 2n + 1 bytes.
        fn room<'b>(buf: &'b mut Vec<u32>, r: &Range<usize>) -> &'b mut [u32] {
            let n = r.len() / 2 + 4;
            if buf.len() < n {
                buf.resize(n, 0);
            }
            &mut buf[..n]
        }
        let nd = plain_uints_into(args, dr, room(&mut self.deltas_buf, dr))?;
        let ns = plain_uints_into(args, sr, room(&mut self.ids_buf, sr))?;
        let n = ns.min(nd);
        let (ids, us) = (&self.ids_buf[..n], &self.deltas_buf[..n]);
        self.packed.clear();
        packed::pack_micros(ids, us, &mut self.packed);
        // Deltas of plain arrays are not negative: the lowest running sum is the first.
        let sum_us: u64 = us.iter().map(|&u| u64::from(u)).sum();
        let ns_of = |us: u64| TimeDelta::from_nanos((us as i64).saturating_mul(1000));
        let summary = DeltaSummary {
            count: n as u32,
            sum: ns_of(sum_us),
            min_prefix: ns_of(us.first().map_or(0, |&u| u.into())),
            max_prefix: ns_of(sum_us),
        };
        // A chunk far larger than Chrome's (a whole profile) does not keep its buffers.
        if self.ids_buf.len() + self.deltas_buf.len() > BIG_BUFFERS {
            (self.ids_buf, self.deltas_buf) = (Vec::new(), Vec::new());
        }
        Some((ns, nd, summary))
    }

    fn tracing_started_in_browser(&mut self, ev: &TraceEvent<'_>) {
        let mains = self
            .with_data(ev, |d| {
                let frames = field(d, "frames")?.as_array()?;
                Some(
                    frames
                        .iter()
                        .filter(|f| field(f, "parent").is_none())
                        .filter(|f| {
                            field(f, "isOutermostMainFrame").and_then(|v| v.as_bool())
                                != Some(false)
                        })
                        .map(|f| {
                            (
                                text(f, "frame"),
                                field(f, "processId").and_then(int),
                                text(f, "url"),
                            )
                        })
                        .collect::<Vec<_>>(),
                )
            })
            .unwrap_or_default();
        for (frame, pid, url) in mains {
            if let Some(frame) = frame {
                self.main_frame_ids.insert(frame);
            }
            if let Some(pid) = pid {
                self.main_frame_pids.insert(Pid(pid));
            }
            if let (Some(url), Some(ts)) = (url, ev.ts()) {
                self.pages.push(PageUrl {
                    ts,
                    pid: pid.map(Pid),
                    url,
                });
            }
        }
    }

    /// `CommitLoad` (renderer, `args.data.url`) and `navigationStart`
    /// (`args.data.documentLoaderURL`) of an outermost main frame: the page's URL where the
    /// browser process's events are missing (a renderer-only trace).
    fn main_frame_load(&mut self, ev: &TraceEvent<'_>) {
        if ev.is("navigationStart")
            && let Some(ts) = ev.ts()
            && let Some((frame, id)) = ev.args.and_then(|raw| {
                self.args
                    .with(raw, |args| {
                        let d = field(args, "data")?;
                        let url = text(d, "documentLoaderURL")?;
                        let id = text(d, "navigationId")?;
                        (!url.is_empty()).then(|| (text(args, "frame"), id))
                    })
                    .flatten()
            })
        {
            self.navigation_starts.push((frame, Navigation { ts, id }));
        }
        let url = self.with_data(ev, |d| {
            let flag = |k| field(d, k).and_then(|v| v.as_bool());
            let main = flag("isOutermostMainFrame")
                .or_else(|| flag("isMainFrame"))
                .or_else(|| flag("isLoadingMainFrame"));
            if main != Some(true) {
                return None;
            }
            text(d, "url").or_else(|| text(d, "documentLoaderURL"))
        });
        if let (Some(url), Some(ts)) = (url, ev.ts()) {
            self.pages.push(PageUrl {
                ts,
                pid: Some(Pid(ev.pid())),
                url,
            });
        }
    }

    fn frame_committed(&mut self, ev: &TraceEvent<'_>) {
        let commit = self.with_data(ev, |d| {
            if field(d, "parent").is_some() {
                return None;
            }
            Some(MainFrameCommit {
                frame: text(d, "frame"),
                process_id: field(d, "processId").and_then(int),
                pseudo_id: text(d, "processPseudoId"),
                ts: ev.ts(),
                url: text(d, "url"),
            })
        });
        self.commits.extend(commit);
    }

    /// Makes this collector's lists (each profile's chunks and nodes) the
    /// size `sizes` says they end at, so that merging the later parts in moves each record
    /// once rather than at every growth of the merged lists (a 1 GB trace's chunk list is
    /// ~56 MB, built from ~60 ranges). For the first part; [`Collector::merge_sized`] does
    /// the same for each profile met later.
    pub(crate) fn make_room(&mut self, sizes: &MergedSizes) {
        for (key, data) in self.t.profile_data.iter_mut() {
            data.make_room(sizes.profiles.get(key).copied());
        }
    }

    /// Adds what `later` collected from the part of the file after this one's.
    pub fn merge(&mut self, later: Collector) {
        self.merge_sized(later, None);
    }

    /// [`Collector::merge`], making each profile's lists the size `sizes` says they end
    /// at when they are merged (see [`Collector::make_room`]).
    pub(crate) fn merge_sized(&mut self, later: Collector, sizes: Option<&MergedSizes>) {
        let t = later.t;
        self.t.thread_names.extend(t.thread_names);
        self.t.task_marks.append(t.task_marks);
        self.t.entry_points.append(t.entry_points);
        self.t.timer_installs.extend(t.timer_installs);
        self.t.event_timings.extend(t.event_timings);
        self.t.frame_marks.extend(t.frame_marks);
        self.t.profiles.extend(t.profiles);
        for (key, data) in t.profile_data {
            let room = sizes.and_then(|s| s.profiles.get(&key).copied());
            match self.t.profile_data.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let merged = e.into_mut();
                    merged.make_room(room);
                    merged.append(data);
                }
                std::collections::hash_map::Entry::Vacant(e) => e.insert(data).make_room(room),
            }
        }
        self.t.cpu_profiles.extend(t.cpu_profiles);
        self.t.scripts.extend(t.scripts);
        self.elided_maps.extend(later.elided_maps);
        self.t.first_ts = combine(self.t.first_ts, t.first_ts, Ord::min);
        self.t.last_ts = combine(self.t.last_ts, t.last_ts, Ord::max);
        self.t.events += t.events;
        self.t.diagnostics.merge(&t.diagnostics);
        self.args.cut += later.args.cut;
        self.main_frame_ids.extend(later.main_frame_ids);
        self.main_frame_pids.extend(later.main_frame_pids);
        self.commits.extend(later.commits);
        self.pages.extend(later.pages);
        self.navigation_starts.extend(later.navigation_starts);
        self.contentful_paints.extend(later.contentful_paints);
        self.pseudo_pids.extend(later.pseudo_pids);
    }

    /// Ends the scan.
    pub fn finish(mut self) -> ScannedTrace {
        self.t
            .diagnostics
            .add(super::args::STRINGS_CUT, std::mem::take(&mut self.args.cut));
        for c in &self.commits {
            let is_main = self.main_frame_ids.is_empty()
                || c.frame
                    .as_ref()
                    .is_some_and(|f| self.main_frame_ids.contains(f));
            if !is_main {
                continue;
            }
            let pid = c.process_id.or_else(|| {
                c.pseudo_id
                    .as_ref()
                    .and_then(|p| self.pseudo_pids.get(p).copied())
            });
            if let Some(pid) = pid {
                self.main_frame_pids.insert(Pid(pid));
            }
            if let (Some(url), Some(ts)) = (&c.url, c.ts) {
                self.pages.push(PageUrl {
                    ts,
                    pid: pid.map(Pid),
                    url: url.clone(),
                });
            }
        }
        self.t.main_frame_pids = self.main_frame_pids;
        self.t.navigations = main_frame_navigations(
            std::mem::take(&mut self.navigation_starts),
            &self.main_frame_ids,
        );
        self.t.first_contentful_paint = self
            .contentful_paints
            .iter()
            .filter(|(f, _)| f.as_ref().is_some_and(|f| self.main_frame_ids.contains(f)))
            .map(|&(_, ts)| ts)
            .min();
        self.t.pages = page_urls(self.pages);
        self.t
    }
}

/// The navigations of the main frame (`frames`), in `ts` order (file order on ties), the
/// first of each `navigationId` (DevTools' `MetaHandler` drops repeats).
fn main_frame_navigations(
    mut starts: Vec<(Option<String>, Navigation)>,
    frames: &BTreeSet<String>,
) -> Vec<Navigation> {
    starts.retain(|(f, _)| f.as_ref().is_some_and(|f| frames.contains(f)));
    starts.sort_by_key(|(_, n)| n.ts);
    let mut seen = std::collections::HashSet::new();
    starts
        .into_iter()
        .filter(|(_, n)| seen.insert(n.id.clone()))
        .map(|(_, n)| n)
        .collect()
}

/// Main-frame URLs in `ts` order, without blanks (`about:blank`, empty) and without an
/// entry that repeats the one before it for the same renderer.
fn page_urls(mut pages: Vec<PageUrl>) -> Vec<PageUrl> {
    pages.retain(|p| !p.url.is_empty() && !p.url.starts_with("about:"));
    pages.sort_by_key(|p| p.ts);
    let mut out: Vec<PageUrl> = Vec::with_capacity(pages.len());
    for p in pages {
        // (`<[_]>::iter`: simd-json's prelude has an `iter` for `Vec` too.)
        let repeat = <[PageUrl]>::iter(&out)
            .rev()
            .find(|q| q.pid == p.pid || q.pid.is_none() || p.pid.is_none())
            .is_some_and(|q| q.url == p.url);
        if !repeat {
            out.push(p);
        }
    }
    out
}

/// The diagnostics kind of kept events whose `args` do not parse.
const BAD_ARGS: &str = "events whose args are not valid JSON (skipped)";

/// Parses `raw` (an event's `args`) and hands `args.data` to `f`; counts unparsable args
/// in `diagnostics`.
fn args_data<R>(
    parser: &mut ArgsParser,
    raw: &[u8],
    diagnostics: &mut crate::vocab::Diagnostics,
    f: impl FnOnce(&BorrowedValue<'_>) -> Option<R>,
) -> Option<R> {
    match parser.with(raw, |v| field(v, "data").and_then(f)) {
        Some(r) => r,
        None => {
            diagnostics.add(BAD_ARGS, 1);
            None
        }
    }
}

/// A number (integer, float or numeric string) as `f64`.
fn number(v: &BorrowedValue<'_>) -> Option<f64> {
    v.cast_f64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        .filter(|f: &f64| f.is_finite())
}

/// `animation_frame_timing_info` of an `AnimationFrame` begin event.
fn frame_timing_info(v: &BorrowedValue<'_>) -> Box<FrameTimingInfo> {
    Box::new(FrameTimingInfo {
        duration_ms: field(v, "duration_ms").and_then(number),
        blocking_duration_ms: field(v, "blocking_duration_ms").and_then(number),
        num_scripts: field(v, "num_scripts").and_then(int),
    })
}

/// `animation_frame_script_timing_info` of a script begin event.
fn script_timing_info(v: &BorrowedValue<'_>) -> Box<ScriptTimingInfo> {
    Box::new(ScriptTimingInfo {
        invoker_type: text(v, "invoker_type").unwrap_or_default(),
        class_like_name: text(v, "class_like_name").unwrap_or_default(),
        property_like_name: text(v, "property_like_name").unwrap_or_default(),
        source_url: text(v, "source_location_url").unwrap_or_default(),
        function: text(v, "source_location_function_name").unwrap_or_default(),
        char_position: field(v, "source_location_char_position")
            .and_then(int)
            .filter(|&c| c >= 0),
        style_duration_ms: field(v, "style_duration_ms").and_then(number),
        layout_duration_ms: field(v, "layout_duration_ms").and_then(number),
        pause_duration_ms: field(v, "pause_duration_ms").and_then(number),
    })
}

/// Reads `detail` and `timer_id` of the entry points of `list` that still hold their
/// `args` (kept by the scan: [`EntryPoint::args`]), from `file` (the whole file, for args
/// kept in it): the event type of an `EventDispatch`, the function of a `FunctionCall`
/// (`name url:line:col`), the timer id of a `TimerFire`, the URL of a script, XHR or
/// `ParseHTML`. Args that do not parse are counted in `diagnostics` (a `ParseHTML`'s
/// are not, as the scan never did); strings over 1 MiB are cut and counted in `parser`.
pub(crate) fn read_entry_details(
    list: &mut [EntryPoint],
    file: Option<&[u8]>,
    parser: &mut ArgsParser,
    diagnostics: &mut crate::vocab::Diagnostics,
) {
    for e in list {
        // Style and layout keep theirs for the breakdown (the stack of a forced layout).
        if e.kind == EntryKind::StyleLayout {
            continue;
        }
        // Only unread args are read (and a second call changes nothing).
        if !matches!(e.args, EntryArgs::Unread(_)) {
            continue;
        }
        let EntryArgs::Unread(args) = std::mem::take(&mut e.args) else {
            continue;
        };
        let Some(raw) = args.bytes(file) else {
            continue;
        };
        let mut timer_id = None;
        let detail = match e.kind {
            EntryKind::EventDispatch => args_data(parser, raw, diagnostics, |d| text(d, "type")),
            EntryKind::FunctionCall => {
                args_data(parser, raw, diagnostics, |d| Some(function_text(d)))
            }
            EntryKind::TimerFire => {
                timer_id = args_data(parser, raw, diagnostics, |d| int(field(d, "timerId")?));
                None
            }
            EntryKind::Script | EntryKind::Xhr => {
                args_data(parser, raw, diagnostics, |d| text(d, "url"))
            }
            EntryKind::ParseHtml => parser
                .with(raw, |v| text(field(v, "beginData")?, "url"))
                .flatten(),
            _ => None,
        };
        e.args = EntryArgs::read(detail.unwrap_or_default(), timer_id);
    }
}

fn node(v: &BorrowedValue<'_>, texts: &mut Texts) -> Option<Node> {
    let o = v.as_object()?;
    if o.len() > 32 {
        return node_by_field(v, texts);
    }
    // One pass over the members, a later repeat of a key replacing the earlier one (as
    // `field` reads small objects), instead of one pass per key.
    let (mut id, mut cf, mut parent, mut children) = (None, None, None, None);
    for (k, x) in o.iter() {
        match k.as_ref() {
            "id" => id = Some(x),
            "callFrame" => cf = Some(x),
            "parent" => parent = Some(x),
            "children" => children = Some(x),
            _ => {}
        }
    }
    let id = NodeId(int(id?)?);
    let call_frame = match cf.and_then(|c| c.as_object()) {
        Some(c) if c.len() <= 32 => {
            let (mut function_name, mut url, mut script_id, mut line, mut column) =
                (None, None, None, None, None);
            for (k, x) in c.iter() {
                match k.as_ref() {
                    "functionName" => function_name = Some(x),
                    "url" => url = Some(x),
                    "scriptId" => script_id = Some(x),
                    "lineNumber" => line = Some(x),
                    "columnNumber" => column = Some(x),
                    _ => {}
                }
            }
            let mut text =
                |x: Option<&BorrowedValue<'_>>| texts.get(x.and_then(|x| x.as_str()).unwrap_or(""));
            CallFrame {
                function_name: text(function_name),
                url: text(url),
                script_id: script_id_text(script_id, texts),
                line_number: position(line),
                column_number: position(column),
            }
        }
        _ => call_frame_by_field(cf, texts),
    };
    Some(Node {
        id,
        parent: parent.and_then(int).map(NodeId),
        children: node_children(children),
        call_frame,
    })
}

/// A `nodes` array read straight from the bytes (Chrome's layout; `None` for any other)
/// and by the tape reader, for the `node_reads` fuzz target, which checks that they agree
/// whenever the first reads it.
pub fn nodes_both_ways(raw: &[u8]) -> (Option<Vec<Node>>, Option<Option<Vec<Node>>>) {
    let mut texts = Texts::default();
    let fast = compact_nodes(raw, &mut texts);
    let tape = ArgsParser::default().with_tape(raw, |v| nodes_from_tape(v, &mut texts));
    (fast, tape)
}

/// A call frame's URL and script id, as held by [`Texts`].
type SharedTexts = (std::sync::Arc<str>, std::sync::Arc<str>);

/// The nodes of a `nodes` array in Chrome's own layout ([`nodes::read`]), as
/// [`nodes_from_tape`] reads them, sized to the array; `None` for any other array.
fn compact_nodes(raw: &[u8], texts: &mut Texts) -> Option<Vec<Node>> {
    // Room for one node per two `{` (a node and its call frame: exactly the nodes in
    // Chrome's layout, unless a name holds a brace).
    let mut out = Vec::with_capacity(memchr::memchr_iter(b'{', raw).count() / 2);
    // A node's script is most often the node before's: its URL and id are then taken
    // from it, not looked up. (URL, integer script id) of the node before, and their texts.
    let mut last: Option<((&str, i64), SharedTexts)> = None;
    nodes::read(raw, |n| {
        let (url, script_id) = match (&last, n.script_id) {
            (Some((same, held)), Some(ScriptId::Int(i))) if *same == (n.url, i) => held.clone(),
            _ => {
                let script_id = match n.script_id {
                    Some(ScriptId::Text(t)) => texts.script_id(Some(t), None),
                    Some(ScriptId::Int(i)) => texts.script_id(None, Some(i)),
                    None => texts.script_id(None, None),
                };
                let url = texts.get(n.url);
                last = match n.script_id {
                    Some(ScriptId::Int(i)) => Some(((n.url, i), (url.clone(), script_id.clone()))),
                    _ => None,
                };
                (url, script_id)
            }
        };
        out.push(Node {
            id: NodeId(n.id),
            parent: n.parent.map(NodeId),
            children: Vec::new(),
            call_frame: CallFrame {
                function_name: texts.get(n.function_name),
                url,
                script_id,
                line_number: n.line,
                column_number: n.column,
            },
        });
    })?;
    out.shrink_to_fit();
    Some(out)
}

/// The nodes of a `nodes` value read from its tape, as [`node`] reads them from a tree
/// (empty when not an array; sized to the array). `None` when a node or its `callFrame`
/// has over 32 members, which the tree reads by hash.
fn nodes_from_tape(v: simd_json::tape::Value<'_, '_>, texts: &mut Texts) -> Option<Vec<Node>> {
    let Some(a) = v.as_array() else {
        return Some(Vec::new());
    };
    let mut nodes = Vec::with_capacity(a.len());
    for n in a.iter() {
        let Some(o) = n.as_object() else { continue };
        if o.len() > 32 {
            return None;
        }
        let (mut id, mut cf, mut parent, mut children) = (None, None, None, None);
        for (k, x) in o.iter() {
            match k {
                "id" => id = Some(x),
                "callFrame" => cf = Some(x),
                "parent" => parent = Some(x),
                "children" => children = Some(x),
                _ => {}
            }
        }
        let (mut function_name, mut url, mut script_id, mut line, mut column) =
            (None, None, None, None, None);
        if let Some(c) = cf.and_then(|c| c.as_object()) {
            if c.len() > 32 {
                return None;
            }
            for (k, x) in c.iter() {
                match k {
                    "functionName" => function_name = Some(x),
                    "url" => url = Some(x),
                    "scriptId" => script_id = Some(x),
                    "lineNumber" => line = Some(x),
                    "columnNumber" => column = Some(x),
                    _ => {}
                }
            }
        }
        let Some(id) = id.and_then(|x| scalar_int(&x)) else {
            continue;
        };
        let mut text = |x: Option<simd_json::tape::Value<'_, '_>>| {
            texts.get(x.as_ref().and_then(|x| x.as_str()).unwrap_or(""))
        };
        let position = |x: Option<simd_json::tape::Value<'_, '_>>| {
            x.and_then(|x| scalar_int(&x))
                .and_then(|n| i32::try_from(n).ok())
                .unwrap_or(-1)
        };
        let (function_name, url) = (text(function_name), text(url));
        let script_id = texts.script_id(
            script_id.as_ref().and_then(|s| s.as_str()),
            script_id.and_then(|s| scalar_int(&s)),
        );
        nodes.push(Node {
            id: NodeId(id),
            parent: parent.and_then(|x| scalar_int(&x)).map(NodeId),
            children: children
                .and_then(|c| c.as_array())
                .map(|c| {
                    c.iter()
                        .filter_map(|x| scalar_int(&x))
                        .map(NodeId)
                        .collect()
                })
                .unwrap_or_default(),
            call_frame: CallFrame {
                function_name,
                url,
                script_id,
                line_number: position(line),
                column_number: position(column),
            },
        });
    }
    Some(nodes)
}

/// [`node`] of an object too large to be read in file order (hash-backed), key by key.
fn node_by_field(v: &BorrowedValue<'_>, texts: &mut Texts) -> Option<Node> {
    let id = NodeId(int(field(v, "id")?)?);
    Some(Node {
        id,
        parent: field(v, "parent").and_then(int).map(NodeId),
        children: node_children(field(v, "children")),
        call_frame: call_frame_by_field(field(v, "callFrame"), texts),
    })
}

/// A node's `callFrame` read key by key (any object, or none: empty texts, positions -1).
fn call_frame_by_field(cf: Option<&BorrowedValue<'_>>, texts: &mut Texts) -> CallFrame {
    let mut get_text = |k| texts.get(&cf.and_then(|c| text(c, k)).unwrap_or_default());
    let get_pos = |k| position(cf.and_then(|c| field(c, k)));
    CallFrame {
        function_name: get_text("functionName"),
        url: get_text("url"),
        script_id: script_id_text(cf.and_then(|c| field(c, "scriptId")), texts),
        line_number: get_pos("lineNumber"),
        column_number: get_pos("columnNumber"),
    }
}

/// A `lineNumber` or `columnNumber`: -1 when missing or not an `i32`.
fn position(x: Option<&BorrowedValue<'_>>) -> i32 {
    x.and_then(int)
        .and_then(|n| i32::try_from(n).ok())
        .unwrap_or(-1)
}

/// A `scriptId` as text ([`Texts::script_id`]).
fn script_id_text(x: Option<&BorrowedValue<'_>>, texts: &mut Texts) -> std::sync::Arc<str> {
    texts.script_id(x.and_then(|s| s.as_str()), x.and_then(int))
}

/// A node's `children` ids (the integers of the array; none when not an array).
fn node_children(c: Option<&BorrowedValue<'_>>) -> Vec<NodeId> {
    c.and_then(|c| c.as_array())
        .map(|c| c.iter().filter_map(int).map(NodeId).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Diagnostics;

    fn collect(events: &[&str]) -> ScannedTrace {
        let mut c = Collector::default();
        for e in events {
            let (ev, _) = TraceEvent::parse(e.as_bytes(), 0, 0).unwrap();
            c.event(&ev);
        }
        c.finish()
    }

    #[test]
    fn entry_points_keep_their_args_unread_until_asked() {
        // A file of four entry points: the scan keeps where their args lie and reads none.
        let file = br#"[{"args":{"data":{"functionName":"onClick","url":"https://a.example/app.js","lineNumber":12,"columnNumber":5}},"dur":900,"name":"FunctionCall","ph":"X","pid":1,"tid":1,"ts":1000},
{"args":{"data":{"type":"click"}},"dur":2000,"name":"EventDispatch","ph":"X","pid":1,"tid":1,"ts":950},
{"args":{"data":{"timerId":7}},"dur":100,"name":"TimerFire","ph":"X","pid":1,"tid":1,"ts":5000},
{"args":{"data":{"type":"keydown",}},"dur":10,"name":"EventDispatch","ph":"X","pid":1,"tid":1,"ts":6000}]"#;
        let mut c = Collector::over_file(file);
        crate::scan::walk(file, 1, usize::MAX, false, |ev| c.event(ev));
        let mut t = c.finish();
        let list = t.entry_points.only_list();
        assert_eq!(list.len(), 4);
        assert!(
            list.iter()
                .all(|e| e.detail().is_empty() && e.timer_id().is_none())
        );
        let Some(&RawArgs::InFile { at, len }) = list[0].raw_args() else {
            panic!("args not kept in the file: {:?}", list[0].args)
        };
        let find = |s: &[u8]| file.windows(s.len()).position(|w| w == s).unwrap();
        let (from, to) = (find(br#"{"data":{"functionName""#), find(br#","dur":900"#));
        assert_eq!((at as usize, len as usize), (from, to - from));
        // Read on request, from the file; the broken args of the last one counted.
        let (mut parser, mut d) = (ArgsParser::default(), Diagnostics::default());
        read_entry_details(list, Some(file), &mut parser, &mut d);
        assert_eq!(list[0].detail(), "onClick https://a.example/app.js:12:5");
        assert_eq!(list[1].detail(), "click");
        assert_eq!((list[2].detail(), list[2].timer_id()), ("", Some(7)));
        assert_eq!(list[3].detail(), "");
        assert_eq!(d.count(BAD_ARGS), 1);
        assert!(list.iter().all(|e| e.raw_args().is_none()));
        // Read twice, nothing changes: the args are gone once read.
        read_entry_details(list, Some(file), &mut parser, &mut d);
        assert_eq!(
            (list[0].detail(), d.count(BAD_ARGS)),
            ("onClick https://a.example/app.js:12:5", 1)
        );
        // A stream's collector keeps copies, read the same way without the file.
        let first = &file[1..find(b"},\n") + 1];
        let mut t = collect(&[std::str::from_utf8(first).unwrap()]);
        let list = t.entry_points.only_list();
        assert!(matches!(list[0].raw_args(), Some(RawArgs::Owned(_))));
        read_entry_details(list, None, &mut parser, &mut d);
        assert_eq!(list[0].detail(), "onClick https://a.example/app.js:12:5");
    }

    #[test]
    fn a_call_frame_text_is_held_once_however_many_nodes_name_it() {
        let mut p = ArgsParser::default();
        let mut texts = Texts::default();
        let chunk = |first: i64| {
            format!(
                r#"[{{"id":{first},"callFrame":{{"functionName":"f","url":"https://a.example/app.js","scriptId":7}}}},
                    {{"id":{},"callFrame":{{"functionName":"g","url":"https://a.example/app.js","scriptId":"7"}}}},
                    {{"id":{},"callFrame":{{"functionName":"h","url":"https://b.example/lib.js","scriptId":9}}}}]"#,
                first + 1,
                first + 2
            )
        };
        // Two chunks' nodes, read by the tape reader and the tree reader.
        let a = p
            .with_tape(chunk(1).as_bytes(), |v| nodes_from_tape(v, &mut texts))
            .unwrap()
            .unwrap();
        let b = p
            .with(chunk(4).as_bytes(), |v| {
                let nodes: Vec<Node> = v
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|n| node(n, &mut texts))
                    .collect();
                nodes
            })
            .unwrap();
        let url = |n: &Node| n.call_frame.url.clone();
        assert_eq!(&*url(&a[0]), "https://a.example/app.js");
        assert_eq!(&*url(&b[2]), "https://b.example/lib.js");
        assert!(std::sync::Arc::ptr_eq(&url(&a[0]), &url(&a[1])));
        assert!(std::sync::Arc::ptr_eq(&url(&a[0]), &url(&b[0])));
        assert!(std::sync::Arc::ptr_eq(&url(&a[2]), &url(&b[2])));
        assert!(!std::sync::Arc::ptr_eq(&url(&a[0]), &url(&a[2])));
        // Function names and script ids (an integer read as its decimal text) alike.
        let (name, script) = (
            |n: &Node| n.call_frame.function_name.clone(),
            |n: &Node| n.call_frame.script_id.clone(),
        );
        assert_eq!(
            (&*name(&b[1]), &*script(&b[1]), &*script(&a[2])),
            ("g", "7", "9")
        );
        assert!(std::sync::Arc::ptr_eq(&name(&a[1]), &name(&b[1])));
        assert!(std::sync::Arc::ptr_eq(&script(&a[0]), &script(&b[1])));
        assert!(!std::sync::Arc::ptr_eq(&name(&a[0]), &name(&a[1])));
        // Two URLs, three names, two script ids.
        assert_eq!(texts.0.len(), 7);
    }

    /// The nodes of `raw` (Chrome's layout) read from the bytes, after checking that the
    /// tape reader reads the same ones, with the texts they hold.
    fn read_both_ways(raw: &str) -> (Vec<Node>, Texts) {
        let mut texts = Texts::default();
        let fast = compact_nodes(raw.as_bytes(), &mut texts).expect("Chrome's layout");
        let tape = ArgsParser::default()
            .with_tape(raw.as_bytes(), |v| nodes_from_tape(v, &mut texts))
            .unwrap()
            .unwrap();
        assert_eq!(fast, tape);
        (fast, texts)
    }

    #[test]
    fn chrome_nodes_read_from_the_bytes_are_the_tape_readers() {
        // Chrome's layout (sorted keys, optional members left out), a node with its keys in
        // another order, a string scriptId and a non-ASCII name, a node with two
        // callFrames: all read without the parser, each node as the tape reader reads it.
        let raw = r#"[{"callFrame":{"codeType":"other","functionName":"(root)","scriptId":0},"id":1},{"callFrame":{"codeType":"JS","columnNumber":31,"functionName":"onVisibilityUpdate","lineNumber":337,"scriptId":5,"url":"https://a.example/app.js"},"id":6,"parent":1},{"id":7,"parent":6,"callFrame":{"url":"https://a.example/app.js","scriptId":"5","functionName":"größe","lineNumber":2,"columnNumber":3000000000}},{"callFrame":{"functionName":"f","url":"u.js"},"id":8,"callFrame":{"lineNumber":4}}]"#;
        let (fast, mut texts) = read_both_ways(raw);
        // Checked by hand: ids, parents, texts, positions (-1 unknown or beyond i32).
        let summary: Vec<_> = fast
            .iter()
            .map(|n| {
                let f = &n.call_frame;
                (
                    n.id.0,
                    n.parent.map(|p| p.0),
                    &*f.function_name,
                    &*f.url,
                    &*f.script_id,
                    f.line_number,
                    f.column_number,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (1, None, "(root)", "", "0", -1, -1),
                (
                    6,
                    Some(1),
                    "onVisibilityUpdate",
                    "https://a.example/app.js",
                    "5",
                    337,
                    31
                ),
                (7, Some(6), "größe", "https://a.example/app.js", "5", 2, -1),
                // Two callFrames: the last one, whole.
                (8, None, "", "", "", 4, -1),
            ]
        );
        assert_eq!(fast.capacity(), 4);
        // Escapes, floats, `children`: left to the parser.
        for odd in [
            r#"[{"callFrame":{"functionName":"a\u0062"},"id":1}]"#,
            r#"[{"callFrame":{},"id":1.5}]"#,
            r#"[{"callFrame":{},"children":[2],"id":1}]"#,
        ] {
            assert_eq!(compact_nodes(odd.as_bytes(), &mut texts), None, "{odd}");
        }
    }

    #[test]
    fn nodes_of_one_script_in_a_row_keep_each_their_own_url_and_script_id() {
        // Runs of one URL and script id, broken by the id alone (an integer, then its
        // text, then another integer), by the URL alone, and resumed: each node as the
        // tape reader reads it, and one held copy of each text.
        let frame = |id: u32, url: &str, script: &str| {
            format!(
                r#"{{"callFrame":{{"functionName":"f{id}","scriptId":{script},"url":"{url}"}},"id":{id}}}"#
            )
        };
        let (a, b) = ("https://a.example/app.js", "https://b.example/app.js");
        let raw = format!(
            "[{}]",
            [
                frame(1, a, "5"),
                frame(2, a, "5"),
                frame(3, a, "6"),
                frame(4, a, r#""6""#),
                frame(5, a, "6"),
                frame(6, b, "6"),
                frame(7, b, "6"),
                frame(8, a, "5"),
            ]
            .join(",")
        );
        let (fast, texts) = read_both_ways(&raw);
        let got: Vec<(&str, &str)> = fast
            .iter()
            .map(|n| (&*n.call_frame.url, &*n.call_frame.script_id))
            .collect();
        assert_eq!(
            got,
            [
                (a, "5"),
                (a, "5"),
                (a, "6"),
                (a, "6"),
                (a, "6"),
                (b, "6"),
                (b, "6"),
                (a, "5")
            ]
        );
        let url = |i: usize| fast[i].call_frame.url.clone();
        assert!(std::sync::Arc::ptr_eq(&url(0), &url(7)));
        assert!(std::sync::Arc::ptr_eq(&url(5), &url(6)));
        // Two URLs, two script ids, eight names.
        assert_eq!(texts.0.len(), 12);
    }

    #[test]
    fn nodes_read_in_one_pass_as_key_by_key() {
        let mut p = ArgsParser::default();
        // Repeated keys (the last counts), positions that are strings, floats or beyond
        // i32, a numeric scriptId, a callFrame that is not an object, and a node of over
        // 32 keys (hash-backed) whose callFrame is read key by key.
        let many: String = (0..40).map(|k| format!(r#""k{k}":{k},"#)).collect();
        let raw = format!(
            r#"[{{"id":1,"callFrame":{{"functionName":"a","functionName":"b","url":"u.js","scriptId":7,"lineNumber":"3","columnNumber":4.0}},"parent":9,"id":2,"children":[3,"4",5.5]}},
            {{"id":3,"callFrame":{{"lineNumber":3000000000,"columnNumber":-2,"scriptId":"s"}}}},
            {{"id":4,"callFrame":"f"}},
            {{"callFrame":{{}}}},
            {{{many}"id":5,"callFrame":{{"functionName":"g","url":"v.js","lineNumber":1}},"parent":4}}]"#
        );
        let got = p
            .with(raw.as_bytes(), |v| {
                let a = v.as_array().unwrap();
                (
                    a.iter()
                        .map(|n| node(n, &mut Texts::default()))
                        .collect::<Vec<_>>(),
                    a.iter()
                        .map(|n| node_by_field(n, &mut Texts::default()))
                        .collect::<Vec<_>>(),
                )
            })
            .unwrap();
        assert_eq!(got.0, got.1);
        // The tape reader: the same nodes without the 41-key one, none with it (the
        // caller reads those arrays as a tree).
        let (head, _) = raw.rsplit_once(",\n").unwrap();
        let from_tape = p
            .with_tape(format!("{head}]").as_bytes(), |v| {
                nodes_from_tape(v, &mut Texts::default())
            })
            .unwrap()
            .unwrap();
        let flat: Vec<Node> = got.0[..4].iter().flatten().cloned().collect();
        assert_eq!(from_tape, flat);
        assert_eq!(
            p.with_tape(raw.as_bytes(), |v| nodes_from_tape(
                v,
                &mut Texts::default()
            )),
            Some(None)
        );
        let n = got.0[0].as_ref().unwrap();
        assert_eq!((n.id, n.parent), (NodeId(2), Some(NodeId(9))));
        assert_eq!(n.children, vec![NodeId(3), NodeId(4)]);
        assert_eq!(&*n.call_frame.function_name, "b");
        assert_eq!(&*n.call_frame.url, "u.js");
        assert_eq!(&*n.call_frame.script_id, "7");
        assert_eq!(
            (n.call_frame.line_number, n.call_frame.column_number),
            (3, 4)
        );
        let n = got.0[1].as_ref().unwrap();
        assert_eq!(
            (n.call_frame.line_number, n.call_frame.column_number),
            (-1, -2)
        );
        assert_eq!(&*n.call_frame.script_id, "s");
        let n = got.0[2].as_ref().unwrap();
        assert_eq!((n.id, n.call_frame.line_number), (NodeId(4), -1));
        assert!(n.call_frame.function_name.is_empty());
        assert!(got.0[3].is_none());
        let n = got.0[4].as_ref().unwrap();
        assert_eq!((n.id, n.parent), (NodeId(5), Some(NodeId(4))));
        assert_eq!(
            (&*n.call_frame.function_name, n.call_frame.line_number),
            ("g", 1)
        );
    }

    #[test]
    fn thread_names_profiles_and_chunks() {
        let t = collect(&[
            r#"{"args":{"name":"CrRendererMain"},"name":"thread_name","ph":"M","pid":5,"tid":6,"ts":0}"#,
            r#"{"args":{"data":{"source":"Internal","startTime":1000}},"id":"0x1","name":"Profile","ph":"P","pid":5,"tid":6,"ts":1004}"#,
            r#"{"args":{"data":{"cpuProfile":{"nodes":[{"callFrame":{"functionName":"(root)","scriptId":0},"id":1},{"callFrame":{"functionName":"f","url":"u.js","lineNumber":3,"columnNumber":9,"scriptId":7},"id":2,"parent":1}],"samples":[2,2,1]},"timeDeltas":[10,-3,5]}},"id":"0x1","name":"ProfileChunk","ph":"P","pid":5,"tid":99,"ts":2000}"#,
        ]);
        let k = ThreadKey {
            pid: Pid(5),
            tid: Tid(6),
        };
        assert_eq!(t.thread_names[&k], "CrRendererMain");
        assert_eq!(t.profiles.len(), 1);
        assert_eq!(t.profiles[0].thread, k);
        assert_eq!(t.profiles[0].start_time, Some(Timestamp::from_micros(1000)));
        assert_eq!(t.profiles[0].source.as_deref(), Some("Internal"));
        let p = &t.profile_data[&(Pid(5), ProfileId("0x1".into()))];
        let (samples, deltas) = p.chunks[0].samples.read(None, &p.store).unwrap();
        assert_eq!(samples, vec![NodeId(2), NodeId(2), NodeId(1)]);
        assert_eq!(
            deltas,
            vec![
                TimeDelta::from_micros(10),
                TimeDelta::from_micros(-3),
                TimeDelta::from_micros(5)
            ]
        );
        let nodes = &p.nodes[0].nodes;
        let f = &nodes[1].call_frame;
        assert_eq!(
            (
                &f.function_name[..],
                &f.url[..],
                f.line_number,
                f.column_number
            ),
            ("f", "u.js", 3, 9)
        );
        assert_eq!(nodes[1].parent, Some(NodeId(1)));
        assert_eq!(nodes[0].call_frame.line_number, -1);
        // Metadata does not count for the trace's first ts.
        assert_eq!(t.first_ts, Some(Timestamp::from_micros(1004)));
    }

    #[test]
    fn merged_sizes_count_the_profiles_large_in_some_part_and_change_no_merge() {
        // Part one: 1,100 chunks of profile 0x1, 3 of 0x2, 2 entry points; part two: 500
        // of 0x1, 2 of 0x2, 1 entry point.
        let part = |big: usize, small: usize, calls: usize| {
            let mut c = Collector::default();
            let mut events = Vec::new();
            for (id, n) in [("0x1", big), ("0x2", small)] {
                for k in 0..n {
                    events.push(format!(
                        r#"{{"args":{{"data":{{"cpuProfile":{{"samples":[7]}},"timeDeltas":[10]}}}},"id":"{id}","name":"ProfileChunk","ph":"P","pid":1,"tid":1,"ts":{k}}}"#
                    ));
                }
            }
            for k in 0..calls {
                events.push(format!(
                    r#"{{"args":{{"data":{{"functionName":"f"}}}},"name":"FunctionCall","ph":"X","pid":1,"tid":1,"ts":{k},"dur":5}}"#
                ));
            }
            for e in &events {
                c.event(&TraceEvent::parse(e.as_bytes(), 0, 0).unwrap().0);
            }
            c
        };
        let (one, two) = (part(1100, 3, 2), part(500, 2, 1));
        let sizes = MergedSizes::of([&one, &two].into_iter());
        let key = |id: &str| (Pid(1), ProfileId(id.into()));
        assert_eq!(sizes.profiles.get(&key("0x1")), Some(&(1600, 0)));
        assert_eq!(sizes.profiles.get(&key("0x2")), None);
        let mut sized = part(1100, 3, 2);
        sized.make_room(&sizes);
        sized.merge_sized(two, Some(&sizes));
        let mut plain = one;
        plain.merge(part(500, 2, 1));
        let (sized, plain) = (sized.finish(), plain.finish());
        assert_eq!(sized.profile_data[&key("0x1")].chunks.len(), 1600);
        assert_eq!(sized.profile_data, plain.profile_data);
        assert_eq!(sized.entry_points.len(), 3);
        assert_eq!(sized.entry_points, plain.entry_points);
    }

    #[test]
    fn over_file_leaves_arrays_in_the_file() {
        let file = br#"{"args":{"data":{"cpuProfile":{"samples":[7,8]},"timeDeltas":[10,-4]}},"id":"0x1","name":"ProfileChunk","ph":"P","pid":1,"tid":1,"ts":1}"#;
        let mut c = Collector::over_file(file);
        c.event(&TraceEvent::parse(file, 0, 0).unwrap().0);
        let t = c.finish();
        let arrays = &t.profile_data[&(Pid(1), ProfileId("0x1".into()))].chunks[0].samples;
        assert!(matches!(arrays, SampleArrays::InFile { .. }));
        // Running sums 10, 6.
        assert_eq!({ arrays.summary().min_prefix }, TimeDelta::from_micros(6));
        let none = PackedStore::default();
        assert_eq!(arrays.read(None, &none), None);
        let (s, d) = arrays.read(Some(file), &none).unwrap();
        assert_eq!(s, vec![NodeId(7), NodeId(8)]);
        assert_eq!(
            d,
            vec![TimeDelta::from_micros(10), TimeDelta::from_micros(-4)]
        );
    }

    #[test]
    fn streams_pack_the_pairs_that_the_file_path_reads() {
        // (samples, timeDeltas) as written: plain, negative, fractional, huge, beyond i64
        // or beyond ±2^53 µs, empty, of other lengths, with spaces, not numbers.
        let arrays = [
            ("[2,7,2,2]", "[4520,195,157,124]"),
            ("[1,-5,3]", "[10,-3.5,0.001]"),
            (
                "[9223372036854775807,1,-9223372036854775808]",
                "[1e3,9007199254740992,-7]",
            ),
            ("[123456789012,1]", "[100,123456789]"),
            ("[9223372036854775808,2]", "[5,6]"),
            ("[1,2]", "[1,9007199254740993]"),
            ("[1,2]", "[1e400,2]"),
            ("[]", "[]"),
            ("[1,2,3]", "[5,6]"),
            ("[1,2]", "[5,6,7]"),
            ("[1, 2]", "[3 ,4]"),
            (r#"[1,"x"]"#, "[3,4]"),
            ("[1,2]", r#"[3,"4"]"#),
        ];
        let event = |(s, d): (&str, &str)| {
            format!(
                r#"{{"args":{{"data":{{"cpuProfile":{{"samples":{s}}},"timeDeltas":{d}}}}},"id":"0x1","name":"ProfileChunk","ph":"P","pid":1,"tid":1,"ts":1}}"#
            )
        };
        let key = (Pid(1), ProfileId("0x1".into()));
        // The stream: one collector per event (as the pieces of a stream), merged.
        let mut stream = Collector::default();
        for a in arrays {
            let e = event(a);
            let mut c = Collector::default();
            c.event(&TraceEvent::parse(e.as_bytes(), 0, 0).unwrap().0);
            stream.merge(c);
        }
        let stream = stream.finish();
        let data = &stream.profile_data[&key];
        let mut diagnostics = Diagnostics::default();
        for (k, a) in arrays.into_iter().enumerate() {
            let e = event(a);
            let file = e.as_bytes();
            let mut c = Collector::over_file(file);
            c.event(&TraceEvent::parse(file, 0, 0).unwrap().0);
            let mapped = c.finish();
            diagnostics.merge(&mapped.diagnostics);
            let in_file = &mapped.profile_data[&key].chunks[0].samples;
            let packed = &data.chunks[k].samples;
            assert_eq!(packed.summary(), in_file.summary(), "{a:?}");
            let none = PackedStore::default();
            let read = in_file.read(Some(file), &none);
            assert_eq!(packed.read(None, &data.store), read, "{a:?}");
            // The first two as written, exactly (in ns where the file has fractions).
            let want: Option<(&[i64], &[i64])> = match k {
                0 => Some((&[2, 7, 2, 2], &[4_520_000, 195_000, 157_000, 124_000])),
                1 => Some((&[1, -5, 3], &[10_000, -3_500, 1])),
                _ => None,
            };
            if let Some((ids, ns)) = want {
                let ids = ids.iter().map(|&i| NodeId(i)).collect();
                let ns = ns.iter().map(|&d| TimeDelta::from_nanos(d)).collect();
                assert_eq!(read, Some((ids, ns)));
            }
        }
        assert_eq!(stream.diagnostics, diagnostics);
        assert!(diagnostics.count(DELTA_OUT_OF_RANGE) == 2);
    }

    #[test]
    fn length_mismatch_truncates_and_counts() {
        let t = collect(&[
            r#"{"args":{"data":{"cpuProfile":{"samples":[1,2,3]},"timeDeltas":[5,6]}},"id":"0x1","name":"ProfileChunk","ph":"P","pid":1,"tid":1,"ts":1}"#,
        ]);
        let p = &t.profile_data[&(Pid(1), ProfileId("0x1".into()))];
        assert_eq!(p.chunks[0].samples.summary().count, 2);
        assert_eq!(t.diagnostics.kinds(), 1);
    }

    #[test]
    fn empty_and_odd_chunk_args_are_tolerated() {
        let t = collect(&[
            r#"{"args":{},"id":"0x1","name":"ProfileChunk","ph":"P","pid":1,"tid":1,"ts":1}"#,
            r#"{"args":{"data":{"endTime":5}},"id":"0x1","name":"ProfileChunk","ph":"P","pid":1,"tid":1,"ts":2}"#,
            r#"{"args":"__stripped__","id":"0x1","name":"ProfileChunk","ph":"P","pid":1,"tid":1,"ts":3}"#,
        ]);
        let p = &t.profile_data[&(Pid(1), ProfileId("0x1".into()))];
        assert_eq!(p.chunks.len(), 3);
        assert!(p.chunks.iter().all(|c| c.samples.summary().count == 0));
    }

    #[test]
    fn main_frame_from_tracing_start_and_commits() {
        let t = collect(&[
            r#"{"args":{"data":{"frames":[{"frame":"A","processId":10},{"frame":"B","parent":"A","processId":11}]}},"name":"TracingStartedInBrowser","ph":"I","pid":1,"tid":1,"ts":5}"#,
            r#"{"args":{"data":{"frame":"A","processPseudoId":"0x9"}},"name":"FrameCommittedInBrowser","ph":"I","pid":1,"tid":1,"ts":6}"#,
            r#"{"args":{"data":{"processPseudoId":"0x9","processId":12}},"name":"ProcessReadyInBrowser","ph":"I","pid":1,"tid":1,"ts":7}"#,
            r#"{"args":{"data":{"frame":"C","processId":13}},"name":"FrameCommittedInBrowser","ph":"I","pid":1,"tid":1,"ts":8}"#,
            r#"{"args":{"data":{"frame":"B","parent":"A","processId":14}},"name":"FrameCommittedInBrowser","ph":"I","pid":1,"tid":1,"ts":9}"#,
        ]);
        // 10 from the frame list, 12 via the pseudo id; 13 is another frame tree (not the
        // traced main frame), 14 a subframe.
        assert_eq!(
            t.main_frame_pids.iter().map(|p| p.0).collect::<Vec<_>>(),
            vec![10, 12]
        );
    }

    #[test]
    fn page_urls_of_the_main_frame_in_ts_order() {
        let t = collect(&[
            // Written late, with an earlier ts: sorted by ts.
            r#"{"args":{"data":{"frame":"A","processId":10,"url":"https://www.shop.test/next"}},"name":"FrameCommittedInBrowser","ph":"I","pid":1,"tid":1,"ts":50}"#,
            r#"{"args":{"data":{"frames":[{"frame":"A","processId":10,"url":"https://www.shop.test/"},{"frame":"B","parent":"A","processId":11,"url":"https://ads.example/"}]}},"name":"TracingStartedInBrowser","ph":"I","pid":1,"tid":1,"ts":5}"#,
            // A subframe, another frame tree, a blank page and a repeat: none is the page.
            r#"{"args":{"data":{"frame":"B","parent":"A","processId":11,"url":"https://ads.example/2"}},"name":"FrameCommittedInBrowser","ph":"I","pid":1,"tid":1,"ts":20}"#,
            r#"{"args":{"data":{"frame":"C","processId":13,"url":"https://other.test/"}},"name":"FrameCommittedInBrowser","ph":"I","pid":1,"tid":1,"ts":21}"#,
            r#"{"args":{"data":{"frame":"A","processId":10,"url":"about:blank"}},"name":"FrameCommittedInBrowser","ph":"I","pid":1,"tid":1,"ts":22}"#,
            r#"{"args":{"data":{"frame":"A","isMainFrame":true,"isOutermostMainFrame":true,"url":"https://www.shop.test/"}},"name":"CommitLoad","ph":"X","dur":3,"pid":10,"tid":2,"ts":23}"#,
            // Renderer-side events: an outermost main frame's load, and a subframe's.
            r#"{"args":{"data":{"documentLoaderURL":"https://www.shop.test/third","isLoadingMainFrame":true,"isOutermostMainFrame":true},"frame":"A"},"name":"navigationStart","ph":"R","pid":10,"tid":2,"ts":60}"#,
            r#"{"args":{"data":{"frame":"B","isMainFrame":false,"isOutermostMainFrame":false,"url":"https://ads.example/3"}},"name":"CommitLoad","ph":"X","dur":3,"pid":11,"tid":2,"ts":61}"#,
        ]);
        let pages: Vec<(i64, Option<i64>, &str)> = t
            .pages
            .iter()
            .map(|p| (p.ts.as_nanos() / 1000, p.pid.map(|p| p.0), p.url.as_str()))
            .collect();
        assert_eq!(
            pages,
            vec![
                (5, Some(10), "https://www.shop.test/"),
                (50, Some(10), "https://www.shop.test/next"),
                (60, Some(10), "https://www.shop.test/third"),
            ]
        );
    }

    #[test]
    fn navigations_of_the_main_frame_one_per_id_in_ts_order() {
        let nav = |frame: &str, id: &str, url: &str, ts: i64| {
            format!(
                r#"{{"args":{{"data":{{"documentLoaderURL":"{url}","isLoadingMainFrame":true,"navigationId":"{id}"}},"frame":"{frame}"}},"name":"navigationStart","ph":"R","pid":10,"tid":2,"ts":{ts}}}"#
            )
        };
        let events = [
            r#"{"args":{"data":{"frames":[{"frame":"A","processId":10,"url":"https://www.shop.test/"},{"frame":"B","parent":"A","processId":11}]}},"name":"TracingStartedInBrowser","ph":"I","pid":1,"tid":1,"ts":5}"#.to_string(),
            nav("A", "N2", "https://www.shop.test/2", 300),
            nav("A", "N1", "https://www.shop.test/", 100),
            // A repeat of N1 (crbug.com/1503982), a subframe's, an empty URL's.
            nav("A", "N1", "https://www.shop.test/", 200),
            nav("B", "N3", "https://ads.example/", 150),
            nav("A", "N4", "", 160),
        ];
        let t = collect(&events.iter().map(String::as_str).collect::<Vec<_>>());
        let navs: Vec<(i64, &str)> = t
            .navigations
            .iter()
            .map(|n| (n.ts.as_nanos() / 1000, n.id.as_str()))
            .collect();
        assert_eq!(navs, [(100, "N1"), (300, "N2")]);
        // No main frame named: no navigation.
        assert!(collect(&[&events[1]]).navigations.is_empty());
    }

    #[test]
    fn task_marks_and_time_bounds() {
        let t = collect(&[
            r#"{"name":"RunTask","ph":"X","pid":1,"tid":2,"ts":100,"dur":60000}"#,
            r#"{"name":"Layout","ph":"X","pid":1,"tid":2,"ts":90,"dur":5}"#,
            r#"{"name":"Foo","ph":"B","pid":1,"tid":2,"ts":200}"#,
            r#"{"ph":"E","pid":1,"tid":2,"ts":300}"#,
        ]);
        let kinds: Vec<MarkKind> = t.task_marks.iter().map(|m| m.kind).collect();
        assert_eq!(
            kinds,
            [
                MarkKind::Complete(TimeDelta::from_micros(60000)),
                MarkKind::Begin { is_task: false },
                MarkKind::End
            ]
        );
        assert_eq!(t.first_ts, Some(Timestamp::from_micros(90)));
        assert_eq!(t.last_ts, Some(Timestamp::from_micros(60100)));
    }
}

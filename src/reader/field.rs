//! Field data: profiles recorded in real users' browsers or in Node, with the
//! long tasks they observed — through the same chain resolution and reports as traces.
//!
//! Formats, told apart by their top-level keys:
//! - **Bundle**: `{"profile": ProfilerTrace, "longTasks": [...], "longAnimationFrames":
//!   [...], "eventTimings"?: [...], "timeOrigin"?, "page"?, "userAgent"?}` — what a page
//!   using the JS Self-Profiling API beside a `PerformanceObserver` sends to its
//!   collector. Event Timing entries (`eventTimings`, or `entryType` `event` in any list)
//!   give the page's interactions (docs/METHOD.md §2.8).
//! - **ProfilerTrace** alone (WICG JS Self-Profiling): `resources`, `frames` (`line` and
//!   `column` 1-based), `stacks` (`frameId`, `parentId`), `samples` (`timestamp` in ms
//!   from the time origin, `stackId` missing when no JS ran). Already the sample / stack /
//!   frame tables of docs/METHOD.md §1.
//! - **`.cpuprofile`** (CDP `Profiler.Profile`, Node `--cpu-prof`): `nodes` with
//!   `children` or `parent` (root anywhere), `startTime`, `endTime`, `samples`,
//!   `timeDeltas` (µs).
//! - **Legacy V8 profile**: a `head` tree with nested `children`, `startTime`/`endTime` in
//!   seconds and absolute `timestamps` (µs).
//!
//! Tasks: the bundle's `longTasks` (`task_source` = `longtask`), else its
//! `longAnimationFrames` (`long-animation-frame`), else `--tasks FILE` (same entry shapes,
//! on the profile's clock in ms), else busy spans: maximal runs of samples that ran
//! something (a `stackId`; a leaf other than `(idle)`), from the first busy sample to the
//! first idle one (`busy_span`). Field sampling is coarse (Chrome's floor is ~10 ms), so
//! without `--lookback-ms` the window reaches back one median sample interval, a task
//! with fewer than 3 samples in its window is low confidence whatever its ratio, and
//! `profile_gap` means a stretch over 2.5 intervals without samples.

use std::collections::HashMap;
use std::sync::Arc;

use simd_json::BorrowedValue;
use simd_json::prelude::*;

use super::lexed::Members;
use super::{FoundTask, LoafScript, Recording, TaskSource};
use crate::error::AnalyzeError;
use crate::json::Token;
use crate::profile::{Origin, ProfileBuilder, ProfileSet};
use crate::scan::args::{ArgsParser, field, int, micros_as_nanos, text};
use crate::scan::records::{ChunkData, Node, PageUrl, SampleArrays};
use crate::tasks::TopLevelCounts;
use crate::tasks::TopLevelTask;
use crate::time::{TimeDelta, Timestamp};
use crate::vocab::Diagnostics;
use crate::vocab::{CallFrame, NO_STACK, NodeId, Pid, ProfileId, ThreadKey, Tid};

/// The field formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FieldFormat {
    /// `{"profile": ProfilerTrace, "longTasks": ...}`.
    Bundle,
    /// A `ProfilerTrace` alone.
    ProfilerTrace,
    /// A CDP `.cpuprofile`.
    CpuProfile,
    /// The legacy `head`-tree profile.
    LegacyProfile,
}

/// Which field format a JSON object with these top-level keys is. `Err`: a look-alike
/// that must not be misread (a heap profile, a heap snapshot).
pub(crate) fn format_of(keys: &[String]) -> Result<Option<FieldFormat>, String> {
    let has = |k: &str| keys.iter().any(|x| x == k);
    if has("profile")
        && (has("longTasks")
            || has("longAnimationFrames")
            || has("timeOrigin")
            || has("eventTimings"))
    {
        return Ok(Some(FieldFormat::Bundle));
    }
    if has("frames") && has("stacks") && has("samples") {
        return Ok(Some(FieldFormat::ProfilerTrace));
    }
    if has("nodes") && has("samples") && has("timeDeltas") {
        return Ok(Some(FieldFormat::CpuProfile));
    }
    if has("head") && has("samples") && (has("timestamps") || (has("startTime") && has("endTime")))
    {
        return Ok(Some(FieldFormat::LegacyProfile));
    }
    if has("head") && has("samples") {
        return Err(
            "a heap-sampling profile (head + samples without timestamps), not a CPU profile".into(),
        );
    }
    if has("snapshot") && has("nodes") {
        return Err("a heap snapshot, not a CPU profile or trace".into());
    }
    if has("nodes") && has("samples") {
        return Err(
            "a CPU profile (nodes + samples) without \"timeDeltas\": its sample times are unknown"
                .into(),
        );
    }
    Ok(None)
}

/// Long-task entries given apart from the profile (`--tasks FILE`): an array of
/// `PerformanceLongTaskTiming` / LoAF entries, or `{"longTasks": [...],
/// "longAnimationFrames": [...]}`. Times in ms on the profile's clock.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskEntries {
    /// `longtask` entries: (startTime, duration) in ns.
    pub long_tasks: Vec<(Timestamp, TimeDelta)>,
    /// `long-animation-frame` entries.
    pub loafs: Vec<Loaf>,
    /// The input had entry lists (even empty ones): the page observed long tasks, so
    /// an empty list means none, not "find them in the samples".
    pub given: bool,
    /// Entries without a numeric `startTime` and a `duration` ≥ 0 (left out).
    pub bad: u64,
    /// Event Timing entries (`entryType` `event` or `first-input`, or with a
    /// `processingStart`), for interactions.
    pub(crate) events: Vec<crate::interactions::EventEntry>,
}

/// A long-animation-frame entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Loaf {
    /// `startTime`.
    pub start: Timestamp,
    /// `duration`.
    pub duration: TimeDelta,
    /// Its `scripts`: (start, duration, entry point).
    pub scripts: Vec<(Timestamp, TimeDelta, LoafScript)>,
}

fn ms(v: &BorrowedValue<'_>) -> Option<i64> {
    let f = v.cast_f64()?;
    let ns = f * 1_000_000.0;
    (ns.is_finite() && ns.abs() < 9.0e18).then(|| ns.round() as i64)
}

fn entry_span(e: &BorrowedValue<'_>) -> Option<(Timestamp, TimeDelta)> {
    let start = field(e, "startTime").and_then(ms)?;
    let dur = field(e, "duration").and_then(ms)?;
    (dur >= 0).then(|| (Timestamp::from_nanos(start), TimeDelta::from_nanos(dur)))
}

/// An Event Timing entry (`PerformanceEventTiming`, as web-vitals' attribution build keeps
/// them): `name`, `interactionId` (0 or missing: no interaction), `startTime`, `duration`,
/// `processingStart`, `processingEnd`, in ms.
fn event_entry(e: &BorrowedValue<'_>) -> Option<crate::interactions::EventEntry> {
    let (start, duration) = entry_span(e)?;
    let at = |k| field(e, k).and_then(ms).map(Timestamp::from_nanos);
    Some(crate::interactions::EventEntry {
        name: text(e, "name").unwrap_or_default(),
        interaction_id: field(e, "interactionId").and_then(int).unwrap_or(0),
        start,
        duration,
        processing_start: at("processingStart")?,
        processing_end: at("processingEnd")?,
    })
}

fn loaf(e: &BorrowedValue<'_>) -> Option<Loaf> {
    let (start, duration) = entry_span(e)?;
    let scripts = field(e, "scripts")
        .and_then(|s| s.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|sc| {
                    let (s, d) = entry_span(sc)?;
                    Some((
                        s,
                        d,
                        LoafScript {
                            invoker: text(sc, "invoker").unwrap_or_default(),
                            source_url: text(sc, "sourceURL").unwrap_or_default(),
                            function: text(sc, "sourceFunctionName").unwrap_or_default(),
                        },
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    Some(Loaf {
        start,
        duration,
        scripts,
    })
}

/// The keys of a bundle's (or `--tasks FILE`'s) entry lists.
const ENTRY_LISTS: [&str; 4] = [
    "longTasks",
    "longAnimationFrames",
    "entries",
    "eventTimings",
];

impl TaskEntries {
    /// Takes one entry: a LoAF entry (by `entryType`, or by having `scripts`), else a
    /// long task; counted as bad when it has no usable times.
    fn take(&mut self, e: &BorrowedValue<'_>) {
        let ok = match text(e, "entryType").as_deref() {
            Some("event" | "first-input") => event_entry(e).map(|x| self.events.push(x)).is_some(),
            _ if field(e, "processingStart").is_some() => {
                event_entry(e).map(|x| self.events.push(x)).is_some()
            }
            Some("long-animation-frame") => loaf(e).map(|l| self.loafs.push(l)).is_some(),
            _ if field(e, "scripts").is_some() => loaf(e).map(|l| self.loafs.push(l)).is_some(),
            _ => entry_span(e).map(|t| self.long_tasks.push(t)).is_some(),
        };
        self.bad += u64::from(!ok);
    }

    /// Reads entries from a parsed JSON value (see the type's doc).
    fn from_value(v: &BorrowedValue<'_>) -> TaskEntries {
        let mut out = TaskEntries::default();
        let (mut given, mut not_lists) = (false, 0u64);
        if let Some(a) = v.as_array() {
            given = true;
            a.iter().for_each(|e| out.take(e));
        } else {
            for key in ENTRY_LISTS {
                if let Some(x) = field(v, key) {
                    given |= key != "eventTimings";
                    match x.as_array() {
                        Some(a) => a.iter().for_each(|e| out.take(e)),
                        None => not_lists += 1,
                    }
                }
            }
        }
        out.given = given;
        out.bad += not_lists;
        out
    }

    /// Reads a bundle's entry lists, one entry parsed at a time.
    fn from_members(m: &Members<'_>, p: &mut ArgsParser) -> Result<TaskEntries, String> {
        let mut out = TaskEntries::default();
        for key in ENTRY_LISTS {
            if !m.has(key) {
                continue;
            }
            // Event Timing entries alone say nothing of long tasks.
            out.given |= key != "eventTimings";
            let mut list = TaskEntries::default();
            if m.elements(p, key, |_, e| list.take(e))?.is_none() {
                out.bad += 1;
            }
            out.long_tasks.append(&mut list.long_tasks);
            out.loafs.append(&mut list.loafs);
            out.events.append(&mut list.events);
            out.bad += list.bad;
        }
        Ok(out)
    }

    /// Reads `--tasks FILE` (at most 1 GiB; a FIFO or a device as every side
    /// input is: `input::side::read`). Errors name the file and what is wrong (not JSON, or no
    /// entry list at all).
    pub fn read(path: &std::path::Path) -> Result<TaskEntries, String> {
        let bytes = crate::input::side::read(path, MAX_TASKS_BYTES)
            .map_err(|e| format!("--tasks {} {}", path.display(), e.why))?;
        let entries = ArgsParser::default()
            .with(&bytes, TaskEntries::from_value)
            .ok_or_else(|| format!("--tasks {}: not JSON", path.display()))?;
        if !entries.given {
            return Err(format!(
                "--tasks {}: want an array of long-task or LoAF entries, or {{\"longTasks\": [...], \"longAnimationFrames\": [...]}}",
                path.display()
            ));
        }
        Ok(entries)
    }
}

/// A `--tasks` file may hold at most this many bytes (a million entries take ~200 MB).
pub(crate) const MAX_TASKS_BYTES: u64 = 1 << 30;

/// A profile as parsed: nodes, samples in time order (packed), its clock start, and
/// which nodes are busy (ran something).
struct Parsed {
    nodes: Vec<Node>,
    samples: Samples,
    t0: Timestamp,
    /// First ts for `task_start_ms`.
    origin: Timestamp,
    entries: TaskEntries,
    /// A bundle's `page`: the URL of the page that was profiled.
    page: Option<String>,
    /// Odd input met while parsing.
    diagnostics: Diagnostics,
}

fn call_frame(name: String, url: Arc<str>, line0: i64, col0: i64) -> CallFrame {
    CallFrame {
        function_name: name.into(),
        url,
        script_id: "".into(),
        line_number: i32::try_from(line0).unwrap_or(-1),
        column_number: i32::try_from(col0).unwrap_or(-1),
    }
}

fn profiler_trace(m: &Members<'_>, p: &mut ArgsParser, spans: bool) -> Result<Parsed, String> {
    // Shared by the frames naming them: 10,000 frames of one 1 MiB URL hold one copy,
    // not 10 GB of copies from a 1 MB bundle.
    let mut resources: Vec<Arc<str>> = Vec::new();
    m.elements(p, "resources", |_, r| {
        resources.push(r.as_str().unwrap_or("").into())
    })?;
    let mut frames: Vec<CallFrame> = Vec::new();
    m.elements(p, "frames", |_, f| {
        let url = field(f, "resourceId")
            .and_then(int)
            .and_then(|i| resources.get(usize::try_from(i).ok()?).cloned())
            .unwrap_or_default();
        // 1-based in the API; 0-based inside taskchain (reports add 1 back).
        let pos = |k| field(f, k).and_then(int).map_or(-1, |x| x - 1);
        frames.push(call_frame(
            text(f, "name").unwrap_or_default(),
            url,
            pos("line"),
            pos("column"),
        ));
    })?
    .ok_or("\"frames\" is not an array")?;
    drop(resources);
    let mut nodes: Vec<Node> = Vec::new();
    let mut no_frame = None;
    m.elements(p, "stacks", |i, st| {
        if no_frame.is_some() {
            return;
        }
        let frame = field(st, "frameId")
            .and_then(int)
            .and_then(|f| frames.get(usize::try_from(f).ok()?))
            .cloned();
        match frame {
            Some(call_frame) => nodes.push(Node {
                id: NodeId(i as i64),
                parent: field(st, "parentId").and_then(int).map(NodeId),
                children: vec![],
                call_frame,
            }),
            None => no_frame = Some(i),
        }
    })?
    .ok_or("\"stacks\" is not an array")?;
    if let Some(i) = no_frame {
        return Err(format!("stack {i} names no frame"));
    }
    drop(frames);
    let no_stack = NodeId(nodes.len() as i64);
    nodes.push(Node {
        id: no_stack,
        parent: None,
        children: vec![],
        call_frame: call_frame(NO_STACK.into(), "".into(), -1, -1),
    });
    let mut diagnostics = Diagnostics::default();
    let mut samples: Vec<(Timestamp, NodeId)> = Vec::new();
    let (mut no_time, mut odd_stack, mut no_such_stack) = (0u64, 0u64, 0u64);
    m.elements(p, "samples", |_, s| {
        let Some(t) = field(s, "timestamp").and_then(ms) else {
            no_time += 1;
            return;
        };
        // No `stackId` (or null): no JS ran. One that is not an integer (`0.5`) or names
        // no stack is not read as "no JS": the sample is skipped and counted.
        let node = match field(s, "stackId").filter(|v| !v.is_null()) {
            None => no_stack,
            Some(v) => match int(v) {
                Some(id) if (0..no_stack.0).contains(&id) => NodeId(id),
                Some(_) => {
                    no_such_stack += 1;
                    return;
                }
                None => {
                    odd_stack += 1;
                    return;
                }
            },
        };
        samples.push((Timestamp::from_nanos(t), node));
    })?
    .ok_or("\"samples\" is not an array")?;
    diagnostics.add("samples without a numeric timestamp (skipped)", no_time);
    diagnostics.add(
        "samples naming a stack that does not exist (skipped)",
        no_such_stack,
    );
    diagnostics.add(
        "samples whose stackId is not an integer (skipped)",
        odd_stack,
    );
    let samples = Samples::sorted(samples, Timestamp::default(), vec![no_stack], spans);
    Ok(Parsed {
        nodes,
        samples,
        t0: Timestamp::default(),
        origin: Timestamp::default(),
        entries: TaskEntries::default(),
        page: None,
        diagnostics,
    })
}

fn cdp_node(n: &BorrowedValue<'_>) -> Option<Node> {
    let mut node = node_without_id(n);
    node.id = NodeId(int(field(n, "id")?)?);
    node.parent = field(n, "parent").and_then(int).map(NodeId);
    node.children = field(n, "children")
        .and_then(|c| c.as_array())
        .map(|c| {
            c.iter()
                .filter_map(|x| int(x).or_else(|| field(x, "id").and_then(int)))
                .map(NodeId)
                .collect()
        })
        .unwrap_or_default();
    Some(node)
}

/// A node's frame: CDP nests it in `callFrame`; the legacy head tree puts its fields on the
/// node itself. Id, parent and children are left for the caller.
fn node_without_id(n: &BorrowedValue<'_>) -> Node {
    let cf = field(n, "callFrame").unwrap_or(n);
    let pos = |k| field(cf, k).and_then(int).unwrap_or(-1);
    Node {
        id: NodeId(-1),
        parent: None,
        children: vec![],
        call_frame: call_frame(
            text(cf, "functionName").unwrap_or_default(),
            text(cf, "url").unwrap_or_default().into(),
            pos("lineNumber"),
            pos("columnNumber"),
        ),
    }
}

impl Parsed {
    /// A CDP-style profile (clock from `startTime`, idle = `(idle)` nodes, no entries).
    fn cdp(
        nodes: Vec<Node>,
        samples: Samples,
        start: Timestamp,
        diagnostics: Diagnostics,
    ) -> Parsed {
        Parsed {
            nodes,
            samples,
            t0: start,
            origin: start,
            entries: TaskEntries::default(),
            page: None,
            diagnostics,
        }
    }
}

fn idle_nodes(nodes: &[Node]) -> Vec<NodeId> {
    nodes
        .iter()
        .filter(|n| &*n.call_frame.function_name == "(idle)")
        .map(|n| n.id)
        .collect()
}

/// A `samples` element: a node id (`-1` when not an integer).
fn sample_id(p: &mut ArgsParser, t: Token<'_>) -> NodeId {
    NodeId(match t {
        Token::Int(v) => v,
        Token::Other(raw) => p.with(raw, int).flatten().unwrap_or(-1),
    })
}

/// A `timeDeltas` element: µs as ns; `None` when not a number or outside ±2^53 µs (285
/// years: junk, not a time), as for traces' `timeDeltas`.
fn delta(p: &mut ArgsParser, t: Token<'_>) -> Option<TimeDelta> {
    const MAX_NS: i64 = (1 << 53) * 1000;
    let ns = match t {
        Token::Int(v) => v.checked_mul(1000),
        Token::Other(raw) => p.with(raw, micros_as_nanos).flatten(),
    }?;
    (-MAX_NS..=MAX_NS)
        .contains(&ns)
        .then(|| TimeDelta::from_nanos(ns))
}

/// The diagnostics kind of `.cpuprofile` `timeDeltas` values [`delta`] refuses.
const JUNK_DELTAS: &str = "timeDeltas values that are not a time (not a number, or outside ±2^53 µs): their samples skipped (the later ones keep their times)";

/// A CDP `.cpuprofile`: nodes one at a time, `samples` and `timeDeltas` read in step and
/// packed as they come (sorted first only when a delta is negative).
fn cpuprofile(m: &Members<'_>, p: &mut ArgsParser, spans: bool) -> Result<Parsed, String> {
    let mut nodes: Vec<Node> = Vec::new();
    m.elements(p, "nodes", |_, n| nodes.extend(cdp_node(n)))?
        .ok_or("\"nodes\" is not an array")?;
    let start = m
        .value(p, "startTime", micros_as_nanos)?
        .flatten()
        .map(Timestamp::from_nanos)
        .ok_or("no numeric \"startTime\"")?;
    let ids = || m.numbers("samples").ok_or("\"samples\" is not an array");
    let deltas = || {
        m.numbers("timeDeltas")
            .ok_or("\"timeDeltas\" is not an array")
    };
    ids()?;
    // Samples come in time order unless a delta is negative (or a sum saturates): a
    // first pass over the deltas says which.
    let (mut d, mut t, mut in_order) = (deltas()?, start, true);
    while let Some(tok) = d.next_token()? {
        let next = t + delta(p, tok).unwrap_or_default();
        in_order &= next >= t;
        t = next;
    }
    let idle = idle_nodes(&nodes);
    let mut sink = Samples::new(start, idle.clone(), spans);
    let mut unsorted: Vec<(Timestamp, NodeId)> = Vec::new();
    let (mut s, mut d, mut t) = (ids()?, deltas()?, start);
    let (mut more_ids, mut more_deltas, mut junk) = (0u64, 0u64, 0u64);
    loop {
        match (s.next_token()?, d.next_token()?) {
            (Some(id), Some(dt)) => {
                let Some(dt) = delta(p, dt) else {
                    junk += 1;
                    continue;
                };
                t = t + dt;
                let id = sample_id(p, id);
                if in_order {
                    sink.push(t, id);
                } else {
                    unsorted.push((t, id));
                }
            }
            (a, b) => {
                more_ids += u64::from(a.is_some());
                more_deltas += u64::from(b.is_some());
                while s.next_token()?.is_some() {
                    more_ids += 1;
                }
                while d.next_token()?.is_some() {
                    more_deltas += 1;
                }
                break;
            }
        }
    }
    let mut diagnostics = Diagnostics::default();
    diagnostics.add(JUNK_DELTAS, junk);
    if more_ids + more_deltas > 0 {
        diagnostics.add(
            "profiles whose samples and timeDeltas differ in length (truncated to the shorter)",
            1,
        );
    }
    let samples = if in_order {
        sink
    } else {
        Samples::sorted(unsorted, start, idle, spans)
    };
    Ok(Parsed::cdp(nodes, samples, start, diagnostics))
}

/// Samples of a profile, taken in time order: packed into chunks of at most
/// [`FIELD_CHUNK`] as they come, with what finding tasks needs (the gaps between
/// samples, for the median interval; the busy spans when asked for).
struct Samples {
    idle: Vec<NodeId>,
    /// The time the next delta counts from (the profile's start at first).
    prev: Timestamp,
    first: Option<Timestamp>,
    last: Option<Timestamp>,
    /// Gaps between consecutive samples in ns, for the median interval: every
    /// `gap_stride`-th gap, at most [`GAPS_KEPT`] (past that, every other one is dropped
    /// and the stride doubles: a systematic sample, so memory does not grow with the
    /// profile; every gap below that many samples).
    gaps: Vec<i64>,
    gap_stride: u64,
    gaps_seen: u64,
    /// Busy spans closed so far, and the start of the one open; `None`: not asked for.
    spans: Option<Vec<(Timestamp, TimeDelta)>>,
    open: Option<Timestamp>,
    ids: Vec<NodeId>,
    deltas: Vec<TimeDelta>,
    chunks: Vec<SampleArrays>,
}

/// Samples per chunk of a field profile: no more than the profile stage reads per window
/// (it keeps larger chunks decoded whole, 12 bytes a sample), so that memory holds the
/// packed samples (about 3 bytes each) and one window's rows.
const FIELD_CHUNK: usize = 4096;

/// Gaps kept for the median sampling interval (512 KiB): a profile of more samples has
/// its median taken from a systematic sample of its gaps.
const GAPS_KEPT: usize = 65_536;

impl Samples {
    /// No samples yet; deltas count from `t0`; `spans`: find busy spans (runs of samples
    /// whose node is not in `idle`).
    fn new(t0: Timestamp, idle: Vec<NodeId>, spans: bool) -> Samples {
        Samples {
            idle,
            prev: t0,
            first: None,
            last: None,
            gaps: Vec::new(),
            gap_stride: 1,
            gaps_seen: 0,
            spans: spans.then(Vec::new),
            open: None,
            ids: Vec::new(),
            deltas: Vec::new(),
            chunks: Vec::new(),
        }
    }

    /// `samples` sorted by time (stably: ties keep their order), then taken.
    fn sorted(
        mut samples: Vec<(Timestamp, NodeId)>,
        t0: Timestamp,
        idle: Vec<NodeId>,
        spans: bool,
    ) -> Samples {
        samples.sort_by_key(|x| x.0);
        let mut out = Samples::new(t0, idle, spans);
        for (t, id) in samples {
            out.push(t, id);
        }
        out
    }

    /// Takes the next sample (`t` not before the last one's).
    fn push(&mut self, t: Timestamp, id: NodeId) {
        match self.last {
            Some(last) => {
                if self.gaps_seen.is_multiple_of(self.gap_stride) {
                    self.gaps.push(t.since(last).as_nanos());
                    if self.gaps.len() == GAPS_KEPT {
                        let mut k = 0;
                        self.gaps.retain(|_| {
                            k += 1;
                            k % 2 == 1
                        });
                        self.gap_stride *= 2;
                    }
                }
                self.gaps_seen += 1;
            }
            None => self.first = Some(t),
        }
        self.last = Some(t);
        if let Some(spans) = &mut self.spans {
            let busy = !self.idle.contains(&id);
            match (busy, self.open) {
                (true, None) => self.open = Some(t),
                (false, Some(s)) => {
                    spans.push((s, t.since(s)));
                    self.open = None;
                }
                _ => {}
            }
        }
        self.ids.push(id);
        self.deltas.push(t.since(self.prev));
        self.prev = t;
        if self.ids.len() == FIELD_CHUNK {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if !self.ids.is_empty() {
            let (ids, deltas) = (
                std::mem::take(&mut self.ids),
                std::mem::take(&mut self.deltas),
            );
            self.chunks.push(SampleArrays::read_now(ids, deltas));
        }
    }

    /// Median gap between consecutive samples (zero with fewer than 2).
    fn interval(&mut self) -> TimeDelta {
        let mid_of = |n: usize| n / 2;
        if self.gaps.is_empty() {
            return TimeDelta::ZERO;
        }
        let mid = mid_of(self.gaps.len());
        TimeDelta::from_nanos(*self.gaps.select_nth_unstable(mid).1)
    }

    /// The busy spans (a run still busy at the last sample ends `interval` after it);
    /// empty when not asked for.
    fn busy_spans(&mut self, interval: TimeDelta) -> Vec<(Timestamp, TimeDelta)> {
        let mut spans = self.spans.take().unwrap_or_default();
        if let (Some(s), Some(last)) = (self.open, self.last) {
            spans.push((s, (last + interval).since(s)));
        }
        spans
    }

    /// The packed chunks, in time order.
    fn into_chunks(mut self) -> Vec<SampleArrays> {
        self.flush();
        self.chunks
    }
}

fn legacy_profile(v: &BorrowedValue<'_>, spans: bool) -> Result<Parsed, String> {
    let head = field(v, "head").ok_or("no \"head\"")?;
    // Flatten the tree (iteratively: deep recursion must not overflow the stack), giving
    // ids to nodes that have none.
    let mut nodes = Vec::new();
    let mut next_id = 1_000_000_000i64;
    let mut todo: Vec<(&BorrowedValue<'_>, Option<NodeId>)> = vec![(head, None)];
    while let Some((n, parent)) = todo.pop() {
        let mut node = match cdp_node(n) {
            Some(node) => node,
            None => {
                next_id += 1;
                let mut with_id = node_without_id(n);
                with_id.id = NodeId(next_id);
                with_id
            }
        };
        node.parent = parent;
        node.children.clear();
        let id = node.id;
        nodes.push(node);
        if let Some(children) = field(n, "children").and_then(|c| c.as_array()) {
            let at = todo.len();
            todo.extend(children.iter().map(|c| (c, Some(id))));
            todo[at..].reverse();
        }
    }
    // The old V8 API numbered lines and columns from 1, with 0 for "unknown".
    for n in &mut nodes {
        let cf = &mut n.call_frame;
        cf.line_number = if cf.line_number > 0 {
            cf.line_number - 1
        } else {
            -1
        };
        cf.column_number = if cf.column_number > 0 {
            cf.column_number - 1
        } else {
            -1
        };
    }
    let seconds = |k| {
        field(v, k)
            .and_then(|x| x.cast_f64())
            .map(|s| (s * 1e9).round() as i64)
    };
    let ids = field(v, "samples")
        .and_then(|s| s.as_array())
        .ok_or("\"samples\" is not an array")?;
    let start = seconds("startTime").map(Timestamp::from_nanos);
    let mut diagnostics = Diagnostics::default();
    let samples: Vec<(Timestamp, NodeId)> = match field(v, "timestamps").and_then(|s| s.as_array())
    {
        Some(stamps) => {
            if stamps.len() != ids.len() {
                diagnostics.add(
                    "profiles whose samples and timestamps differ in length (truncated to the shorter)",
                    1,
                );
            }
            ids.iter()
                .zip(stamps.iter())
                .filter_map(|(id, t)| {
                    Some((
                        Timestamp::from_nanos(micros_as_nanos(t)?),
                        NodeId(int(id).unwrap_or(-1)),
                    ))
                })
                .collect()
        }
        // The oldest profiles have no timestamps: samples spread evenly from start to end.
        None => {
            let (Some(s), Some(e)) = (start, seconds("endTime").map(Timestamp::from_nanos)) else {
                return Err(
                    "no \"timestamps\", and no startTime and endTime to spread the samples over"
                        .into(),
                );
            };
            diagnostics.add(
                "profiles without timestamps (samples spread evenly from startTime to endTime)",
                1,
            );
            let step = e.since(s).as_nanos() / (ids.len().max(1) as i64);
            ids.iter()
                .enumerate()
                .map(|(k, id)| {
                    (
                        s + TimeDelta::from_nanos(step * k as i64),
                        NodeId(int(id).unwrap_or(-1)),
                    )
                })
                .collect()
        }
    };
    let start = start.or(samples.first().map(|s| s.0)).unwrap_or_default();
    let idle = idle_nodes(&nodes);
    let samples = Samples::sorted(samples, start, idle, spans);
    Ok(Parsed::cdp(nodes, samples, start, diagnostics))
}

/// Parses a field-data file. `spans`: the task entries (of the file, else of `--tasks`)
/// leave the tasks to be found as busy spans. Field formats other than the legacy one
/// are read member by member ([`Members`]); the legacy `head` tree, whole.
fn parse(bytes: &[u8], format: FieldFormat, tasks: Option<&TaskEntries>) -> Result<Parsed, String> {
    // Busy spans are found only when no entries say where the tasks are.
    let spans_for = |own: &TaskEntries| {
        let e = if own.given { own } else { tasks.unwrap_or(own) };
        !e.given && e.long_tasks.is_empty() && e.loafs.is_empty()
    };
    let none = TaskEntries::default();
    if format == FieldFormat::LegacyProfile {
        return legacy(bytes, spans_for(&none));
    }
    // Skips a UTF-8 byte-order mark, as for traces (Windows editors write one); error
    // offsets count from the file's first byte, the mark's.
    let doc = Members::document(bytes)?;
    let mut p = ArgsParser::default();
    let mut parsed = match format {
        FieldFormat::Bundle => {
            let profile = doc
                .object("profile")?
                .ok_or("\"profile\" is not a ProfilerTrace object")?;
            let entries = TaskEntries::from_members(&doc, &mut p)?;
            let mut parsed = profiler_trace(&profile, &mut p, spans_for(&entries))?;
            parsed.entries = entries;
            parsed.page = doc.value(&mut p, "page", page_url)?.flatten();
            parsed
        }
        FieldFormat::ProfilerTrace => profiler_trace(&doc, &mut p, spans_for(&none))?,
        _ => cpuprofile(&doc, &mut p, spans_for(&none))?,
    };
    parsed
        .diagnostics
        .add(crate::scan::args::STRINGS_CUT, p.cut);
    Ok(parsed)
}

/// The legacy profile, parsed whole (its `head` tree nests two levels per frame), after a
/// UTF-8 byte-order mark if any (error offsets count from the file's first byte).
fn legacy(bytes: &[u8], spans: bool) -> Result<Parsed, String> {
    let bom = if bytes.starts_with(super::lexed::BOM) {
        3
    } else {
        0
    };
    let bytes = &bytes[bom..];
    let mut p = ArgsParser::default();
    let parsed = p
        .with(bytes, |v| legacy_profile(v, spans))
        .unwrap_or_else(|| Err(super::lexed::parse_failure(bytes, bom)));
    parsed.map(|mut parsed| {
        parsed
            .diagnostics
            .add(crate::scan::args::STRINGS_CUT, p.cut);
        parsed
    })
}

/// A bundle's `page`: a URL string (`location.href`), or an object with `url` or `href`.
fn page_url(page: &BorrowedValue<'_>) -> Option<String> {
    match page.as_str() {
        Some(url) => Some(url.to_owned()),
        None => text(page, "url").or_else(|| text(page, "href")),
    }
    .filter(|u| !u.is_empty())
}

/// The thread field data stands for: the page's (or Node's) main thread.
pub(crate) const THREAD: ThreadKey = ThreadKey {
    pid: Pid(0),
    tid: Tid(0),
};

/// The LoAF script that overlaps `[start, end)` most (ties: the earliest).
fn loaf_for(loafs: &[Loaf], start: Timestamp, end: Timestamp) -> Option<LoafScript> {
    let mut best: Option<(i64, Timestamp, &LoafScript)> = None;
    for l in loafs {
        for (s, d, script) in &l.scripts {
            let overlap = end.min(*s + *d).since(start.max(*s)).as_nanos();
            if overlap > 0 && best.is_none_or(|(o, bs, _)| overlap > o || (overlap == o && *s < bs))
            {
                best = Some((overlap, *s, script));
            }
        }
    }
    best.map(|(_, _, s)| s.clone())
}

/// Reads one field-data file: its tasks longer than `threshold` (from its entries, else
/// from `tasks`, the entries of `--tasks FILE`, else its busy spans) and its profile.
/// `parsed` is called once `bytes` are no longer needed (before the profile is built).
pub(crate) fn read(
    bytes: &[u8],
    format: FieldFormat,
    threshold: TimeDelta,
    tasks: Option<&TaskEntries>,
    parsed: &dyn Fn(),
) -> Result<Recording, AnalyzeError> {
    let parse = parse(bytes, format, tasks);
    parsed();
    let mut p =
        parse.map_err(|e| AnalyzeError::NotATrace(format!("{format:?} unreadable: {e}")))?;
    let mut diagnostics = std::mem::take(&mut p.diagnostics);
    let interval = p.samples.interval();

    // Tasks: entries in the file, else --tasks, else busy spans. Entry lists that are
    // present but empty mean the page observed no long task: then there are none.
    let mut entries = std::mem::take(&mut p.entries);
    if !entries.given
        && let Some(t) = tasks
    {
        entries = t.clone();
    }
    diagnostics.add(
        "long-task entries without a numeric startTime and a duration ≥ 0 (skipped)",
        entries.bad,
    );
    let (spans, source): (Vec<(Timestamp, TimeDelta)>, TaskSource) =
        if !entries.long_tasks.is_empty() {
            (entries.long_tasks.clone(), TaskSource::LongTask)
        } else if !entries.loafs.is_empty() {
            (
                entries
                    .loafs
                    .iter()
                    .map(|l| (l.start, l.duration))
                    .collect(),
                TaskSource::LongAnimationFrame,
            )
        } else if entries.given {
            (Vec::new(), TaskSource::LongTask)
        } else {
            (p.samples.busy_spans(interval), TaskSource::BusySpan)
        };
    if let (Some(first), Some(last)) = (p.samples.first, p.samples.last) {
        let outside = spans
            .iter()
            .filter(|&&(ts, dur)| ts + dur < first || ts > last)
            .count();
        diagnostics.add(
            "long-task entries outside the profile's samples (entry times are ms on the profile's clock)",
            outside as u64,
        );
    }
    let top_level: Vec<TopLevelTask> = spans
        .iter()
        .map(|&(ts, dur)| TopLevelTask {
            thread: THREAD,
            ts,
            dur,
            incomplete: false,
        })
        .collect();
    let tasks: Vec<FoundTask> = top_level
        .iter()
        .filter(|t| t.dur > threshold)
        .map(|t| FoundTask {
            task: *t,
            source,
            loaf: loaf_for(&entries.loafs, t.ts, t.end()).map(Box::new),
        })
        .collect();

    let interactions = crate::interactions::of_entries(&entries.events, THREAD);
    // The profile: the samples on the page's thread, in chunks, deltas from t0.
    let mut b = ProfileBuilder::new(Origin {
        thread: THREAD,
        id: ProfileId("field".into()),
        t0: p.t0,
        start_on_other_clock: false,
        source: None,
    });
    let mut nodes = p.nodes;
    let mut chunks = p.samples.into_chunks();
    if chunks.is_empty() {
        chunks.push(SampleArrays::read_now(Vec::new(), Vec::new()));
    }
    for samples in chunks {
        b.add_chunk(ChunkData {
            nodes: std::mem::take(&mut nodes),
            samples,
            start_time: None,
        });
    }
    let profiles = ProfileSet::from_profiles(vec![b.finish(&mut diagnostics)]);

    let names: HashMap<ThreadKey, String> = [(THREAD, "main".to_string())].into();
    Ok(Recording {
        tasks,
        top_level: TopLevelCounts::of(&top_level),
        threads: 1,
        thread_names: names,
        first_ts: p.origin,
        truncated: false,
        damaged: false,
        profiles,
        pages: p
            .page
            .take()
            .map(|url| PageUrl {
                ts: p.origin,
                pid: None,
                url,
            })
            .into_iter()
            .collect(),
        scripts: Vec::new(),
        embedded_maps: Vec::new(),
        diagnostics,
        events: 0,
        broken: None,
        sample_interval: Some(interval),
        entries: Default::default(),
        interactions,
        frames: Vec::new(),
        task_spans: Default::default(),
        outside_scope_long_tasks: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_interval_of_a_long_profile_comes_from_a_bounded_sample_of_its_gaps() {
        // 100,000 gaps of 1 ms, then 200,000 of 100 µs: the median is 100 µs (the first
        // 65,536 gaps alone would say 1 ms), and at most GAPS_KEPT gaps are held.
        let mut s = Samples::new(Timestamp::from_micros(0), Vec::new(), false);
        let mut t = 0;
        for k in 0..300_000 {
            t += if k < 100_000 { 1000 } else { 100 };
            s.push(Timestamp::from_micros(t), NodeId(2));
        }
        assert!(s.gaps.len() <= GAPS_KEPT, "{}", s.gaps.len());
        assert_eq!(s.interval(), TimeDelta::from_micros(100));
    }

    #[test]
    fn frames_share_their_resource_url() {
        // 1,000 frames naming one 64 KiB resource: 64 MB of URLs if each frame copied it.
        let url = format!("https://x.test/{}", "a".repeat(64 << 10));
        let frames = vec![r#"{"name":"f","resourceId":0,"line":3,"column":5}"#; 1000];
        let stacks: Vec<String> = (0..1000).map(|i| format!(r#"{{"frameId":{i}}}"#)).collect();
        let doc = format!(
            r#"{{"resources":["{url}"],"frames":[{}],"stacks":[{}],"samples":[{{"timestamp":1,"stackId":0}}]}}"#,
            frames.join(","),
            stacks.join(",")
        );
        let parsed = parse(doc.as_bytes(), FieldFormat::ProfilerTrace, None).unwrap();
        // The 1,000 stacks and the node for samples without a stack.
        assert_eq!(parsed.nodes.len(), 1001);
        let first = &parsed.nodes[0].call_frame;
        assert_eq!(&*first.url, url);
        assert_eq!((first.line_number, first.column_number), (2, 4));
        for n in &parsed.nodes[..1000] {
            assert!(Arc::ptr_eq(&n.call_frame.url, &first.url));
        }
    }

    #[test]
    fn formats_by_keys() {
        let k = |ks: &[&str]| ks.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            format_of(&k(&["profile", "longTasks"])),
            Ok(Some(FieldFormat::Bundle))
        );
        assert_eq!(
            format_of(&k(&["resources", "frames", "stacks", "samples"])),
            Ok(Some(FieldFormat::ProfilerTrace))
        );
        assert_eq!(
            format_of(&k(&[
                "nodes",
                "startTime",
                "endTime",
                "samples",
                "timeDeltas"
            ])),
            Ok(Some(FieldFormat::CpuProfile))
        );
        assert_eq!(
            format_of(&k(&[
                "head",
                "startTime",
                "endTime",
                "samples",
                "timestamps"
            ])),
            Ok(Some(FieldFormat::LegacyProfile))
        );
        assert!(
            format_of(&k(&["head", "samples"]))
                .unwrap_err()
                .contains("heap-sampling")
        );
        assert_eq!(format_of(&k(&["name", "version"])), Ok(None));
    }

    #[test]
    fn busy_spans_run_from_first_busy_to_first_idle() {
        let idle = NodeId(9);
        let t = Timestamp::from_micros;
        let s = [
            (t(0), idle),
            (t(10), NodeId(1)),
            (t(20), NodeId(2)),
            (t(30), idle),
            (t(40), NodeId(1)),
        ];
        // [10, 30) and, still busy at the end, [40, 40 + 10).
        let mut taken = Samples::new(Timestamp::default(), vec![idle], true);
        s.iter().for_each(|&(t, n)| taken.push(t, n));
        assert_eq!(
            taken.busy_spans(TimeDelta::from_micros(10)),
            [
                (t(10), TimeDelta::from_micros(20)),
                (t(40), TimeDelta::from_micros(10))
            ]
        );
    }

    #[test]
    fn loaf_script_with_most_overlap() {
        let t = Timestamp::from_micros;
        let d = TimeDelta::from_micros;
        let script = |name: &str| LoafScript {
            invoker: name.into(),
            ..LoafScript::default()
        };
        let l = Loaf {
            start: t(0),
            duration: d(100),
            scripts: vec![
                (t(0), d(30), script("a")),
                (t(20), d(60), script("b")),
                (t(90), d(5), script("c")),
            ],
        };
        // Task [10, 70): a overlaps 20, b overlaps 50.
        assert_eq!(
            loaf_for(std::slice::from_ref(&l), t(10), t(70))
                .unwrap()
                .invoker,
            "b"
        );
        assert_eq!(loaf_for(&[l], t(200), t(300)), None);
    }
}

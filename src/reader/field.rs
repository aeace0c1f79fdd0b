//! Field data (issue 5): profiles recorded in real users' browsers or in Node, with the
//! long tasks they observed — through the same chain resolution and reports as traces.
//!
//! Formats, told apart by their top-level keys:
//! - **Bundle**: `{"profile": ProfilerTrace, "longTasks": [...], "longAnimationFrames":
//!   [...], "timeOrigin"?, "page"?, "userAgent"?}` — what a page using the JS
//!   Self-Profiling API beside a `PerformanceObserver` sends to its collector.
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

use simd_json::BorrowedValue;
use simd_json::prelude::*;

use super::{FoundTask, LoafScript, Recording, TaskSource};
use crate::error::AnalyzeError;
use crate::profile::{Origin, ProfileBuilder, ProfileSet};
use crate::scan::args::{ArgsParser, field, int, micros_as_nanos, text};
use crate::scan::records::{ChunkData, Node, PageUrl};
use crate::tasks::TopLevelTask;
use crate::time::{TimeDelta, Timestamp};
use crate::vocab::Diagnostics;
use crate::vocab::{CallFrame, NO_STACK, NodeId, Pid, ProfileId, ThreadKey, Tid};

/// The field formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldFormat {
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
pub fn format_of(keys: &[String]) -> Result<Option<FieldFormat>, String> {
    let has = |k: &str| keys.iter().any(|x| x == k);
    if has("profile") && (has("longTasks") || has("longAnimationFrames") || has("timeOrigin")) {
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

impl TaskEntries {
    /// Reads entries from a parsed JSON value (see the type's doc).
    fn from_value(v: &BorrowedValue<'_>) -> TaskEntries {
        let mut out = TaskEntries::default();
        let mut take = |e: &BorrowedValue<'_>| {
            let ok = match text(e, "entryType").as_deref() {
                Some("long-animation-frame") => loaf(e).map(|l| out.loafs.push(l)).is_some(),
                _ if field(e, "scripts").is_some() => loaf(e).map(|l| out.loafs.push(l)).is_some(),
                _ => entry_span(e).map(|t| out.long_tasks.push(t)).is_some(),
            };
            out.bad += u64::from(!ok);
        };
        let (mut given, mut not_lists) = (false, 0u64);
        if let Some(a) = v.as_array() {
            given = true;
            a.iter().for_each(&mut take);
        } else {
            for key in ["longTasks", "longAnimationFrames", "entries"] {
                if let Some(x) = field(v, key) {
                    given = true;
                    match x.as_array() {
                        Some(a) => a.iter().for_each(&mut take),
                        None => not_lists += 1,
                    }
                }
            }
        }
        out.given = given;
        out.bad += not_lists;
        out
    }

    /// Reads `--tasks FILE`. Errors name the file and what is wrong (not JSON, or no
    /// entry list at all).
    pub fn read(path: &std::path::Path) -> Result<TaskEntries, String> {
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
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

/// A profile as parsed: nodes, samples (time ns, node id) in file order, its clock start,
/// and which nodes are busy (ran something).
struct Parsed {
    nodes: Vec<Node>,
    samples: Vec<(Timestamp, NodeId)>,
    t0: Timestamp,
    /// First ts for `task_start_ms`.
    origin: Timestamp,
    idle: Vec<NodeId>,
    entries: TaskEntries,
    /// A bundle's `page`: the URL of the page that was profiled.
    page: Option<String>,
    /// Odd input met while parsing.
    diagnostics: Diagnostics,
}

fn call_frame(name: String, url: String, line0: i64, col0: i64) -> CallFrame {
    CallFrame {
        function_name: name,
        url,
        script_id: String::new(),
        line_number: i32::try_from(line0).unwrap_or(-1),
        column_number: i32::try_from(col0).unwrap_or(-1),
    }
}

fn profiler_trace(v: &BorrowedValue<'_>) -> Result<Parsed, String> {
    let list = |k: &str| field(v, k).and_then(|x| x.as_array());
    let resources: Vec<String> = list("resources")
        .map(|a| {
            a.iter()
                .map(|r| r.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    let frames: Vec<CallFrame> = list("frames")
        .ok_or("\"frames\" is not an array")?
        .iter()
        .map(|f| {
            let url = field(f, "resourceId")
                .and_then(int)
                .and_then(|i| resources.get(usize::try_from(i).ok()?).cloned())
                .unwrap_or_default();
            // 1-based in the API; 0-based inside taskchain (reports add 1 back).
            let pos = |k| field(f, k).and_then(int).map_or(-1, |x| x - 1);
            call_frame(
                text(f, "name").unwrap_or_default(),
                url,
                pos("line"),
                pos("column"),
            )
        })
        .collect();
    let stacks = list("stacks").ok_or("\"stacks\" is not an array")?;
    let mut nodes: Vec<Node> = Vec::with_capacity(stacks.len() + 1);
    for (i, st) in stacks.iter().enumerate() {
        let frame = field(st, "frameId")
            .and_then(int)
            .and_then(|f| frames.get(usize::try_from(f).ok()?))
            .cloned()
            .ok_or_else(|| format!("stack {i} names no frame"))?;
        nodes.push(Node {
            id: NodeId(i as i64),
            parent: field(st, "parentId").and_then(int).map(NodeId),
            children: vec![],
            call_frame: frame,
        });
    }
    let no_stack = NodeId(nodes.len() as i64);
    nodes.push(Node {
        id: no_stack,
        parent: None,
        children: vec![],
        call_frame: call_frame(NO_STACK.into(), String::new(), -1, -1),
    });
    let mut diagnostics = Diagnostics::default();
    let all = list("samples").ok_or("\"samples\" is not an array")?;
    let samples: Vec<(Timestamp, NodeId)> = all
        .iter()
        .filter_map(|s| {
            let t = field(s, "timestamp").and_then(ms)?;
            let node = field(s, "stackId").and_then(int).map_or(no_stack, NodeId);
            Some((Timestamp::from_nanos(t), node))
        })
        .collect();
    diagnostics.add(
        "samples without a numeric timestamp (skipped)",
        (all.len() - samples.len()) as u64,
    );
    diagnostics.add(
        "samples naming a stack that does not exist (skipped)",
        samples
            .iter()
            .filter(|(_, n)| n.0 < 0 || n.0 > no_stack.0)
            .count() as u64,
    );
    Ok(Parsed {
        nodes,
        samples,
        t0: Timestamp::default(),
        origin: Timestamp::default(),
        idle: vec![no_stack],
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
            text(cf, "url").unwrap_or_default(),
            pos("lineNumber"),
            pos("columnNumber"),
        ),
    }
}

impl Parsed {
    /// A CDP-style profile (clock from `startTime`, idle = `(idle)` nodes, no entries).
    fn cdp(
        nodes: Vec<Node>,
        samples: Vec<(Timestamp, NodeId)>,
        start: Timestamp,
        diagnostics: Diagnostics,
    ) -> Parsed {
        Parsed {
            idle: idle_nodes(&nodes),
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
        .filter(|n| n.call_frame.function_name == "(idle)")
        .map(|n| n.id)
        .collect()
}

fn cpuprofile(v: &BorrowedValue<'_>) -> Result<Parsed, String> {
    let nodes: Vec<Node> = field(v, "nodes")
        .and_then(|n| n.as_array())
        .ok_or("\"nodes\" is not an array")?
        .iter()
        .filter_map(cdp_node)
        .collect();
    let start = field(v, "startTime")
        .and_then(micros_as_nanos)
        .map(Timestamp::from_nanos)
        .ok_or("no numeric \"startTime\"")?;
    let ids = field(v, "samples")
        .and_then(|s| s.as_array())
        .ok_or("\"samples\" is not an array")?;
    let deltas = field(v, "timeDeltas")
        .and_then(|s| s.as_array())
        .ok_or("\"timeDeltas\" is not an array")?;
    let mut diagnostics = Diagnostics::default();
    if ids.len() != deltas.len() {
        diagnostics.add(
            "profiles whose samples and timeDeltas differ in length (truncated to the shorter)",
            1,
        );
    }
    let mut t = start;
    let samples = ids
        .iter()
        .zip(deltas.iter())
        .map(|(id, d)| {
            t = t + TimeDelta::from_nanos(micros_as_nanos(d).unwrap_or(0));
            (t, NodeId(int(id).unwrap_or(-1)))
        })
        .collect();
    Ok(Parsed::cdp(nodes, samples, start, diagnostics))
}

fn legacy_profile(v: &BorrowedValue<'_>) -> Result<Parsed, String> {
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
    Ok(Parsed::cdp(nodes, samples, start, diagnostics))
}

fn parse(bytes: &[u8], format: FieldFormat) -> Result<Parsed, String> {
    // A UTF-8 byte-order mark, as for traces (Windows editors write one).
    let bom = if bytes.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let bytes = &bytes[bom..];
    ArgsParser::default()
        .with(bytes, |v| match format {
            FieldFormat::Bundle => {
                let profile = field(v, "profile")
                    .filter(|p| p.as_object().is_some())
                    .ok_or("\"profile\" is not a ProfilerTrace object")?;
                let mut p = profiler_trace(profile)?;
                p.entries = TaskEntries::from_value(v);
                p.page = page_url(v);
                Ok(p)
            }
            FieldFormat::ProfilerTrace => profiler_trace(v),
            FieldFormat::CpuProfile => cpuprofile(v),
            FieldFormat::LegacyProfile => legacy_profile(v),
        })
        .unwrap_or_else(|| Err(parse_failure(bytes, bom)))
}

/// Why `bytes` did not parse: where and what was expected (serde_json finds the first
/// bad byte, as its line and column), or that the JSON is valid but nested deeper than
/// the parser takes. `shift`: bytes before `bytes` in the file (a byte-order mark).
fn parse_failure(bytes: &[u8], shift: usize) -> String {
    use serde_json::error::Category;
    let deep = || {
        "nested deeper than the JSON parser's limit of 1024 levels (a `head` tree deeper \
         than about 500 frames); not supported"
            .to_string()
    };
    let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(bytes) else {
        return deep();
    };
    let what = e.to_string();
    let what = what.split(" at line ").next().unwrap_or(&what);
    if what.contains("recursion limit") {
        return deep();
    }
    // serde_json counts lines from 1 and columns (bytes) from 1, at the byte it stopped on.
    let line_start: usize = bytes
        .split(|&c| c == b'\n')
        .take(e.line().saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    let offset = (line_start + e.column().saturating_sub(1)).min(bytes.len()) + shift;
    match e.classify() {
        Category::Eof => format!("the file ends at byte {offset} inside a value (cut off)"),
        _ => format!("invalid JSON at byte {offset}: {what}"),
    }
}

/// A bundle's `page`: a URL string (`location.href`), or an object with `url` or `href`.
fn page_url(v: &BorrowedValue<'_>) -> Option<String> {
    let page = field(v, "page")?;
    match page.as_str() {
        Some(url) => Some(url.to_owned()),
        None => text(page, "url").or_else(|| text(page, "href")),
    }
    .filter(|u| !u.is_empty())
}

/// The thread field data stands for: the page's (or Node's) main thread.
pub const THREAD: ThreadKey = ThreadKey {
    pid: Pid(0),
    tid: Tid(0),
};

/// Median gap between consecutive sample times (zero with fewer than 2).
fn median_gap(sorted: &[Timestamp]) -> TimeDelta {
    let mut gaps: Vec<i64> = sorted
        .windows(2)
        .map(|w| w[1].since(w[0]).as_nanos())
        .collect();
    if gaps.is_empty() {
        return TimeDelta::ZERO;
    }
    let mid = gaps.len() / 2;
    TimeDelta::from_nanos(*gaps.select_nth_unstable(mid).1)
}

/// Busy spans: maximal runs of busy samples, from the first busy sample to the first idle
/// one after it (a run still busy at the last sample ends one median interval after it).
fn busy_spans(
    samples: &[(Timestamp, NodeId)],
    idle: &[NodeId],
    interval: TimeDelta,
) -> Vec<(Timestamp, TimeDelta)> {
    let mut spans = Vec::new();
    let mut start: Option<Timestamp> = None;
    for (t, node) in samples {
        let busy = !idle.contains(node);
        match (busy, start) {
            (true, None) => start = Some(*t),
            (false, Some(s)) => {
                spans.push((s, t.since(s)));
                start = None;
            }
            _ => {}
        }
    }
    if let (Some(s), Some(last)) = (start, samples.last()) {
        spans.push((s, (last.0 + interval).since(s)));
    }
    spans
}

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
pub fn read(
    bytes: &[u8],
    format: FieldFormat,
    threshold: TimeDelta,
    tasks: Option<&TaskEntries>,
) -> Result<Recording, AnalyzeError> {
    let mut p = parse(bytes, format)
        .map_err(|e| AnalyzeError::NotATrace(format!("{format:?} unreadable: {e}")))?;
    let mut diagnostics = std::mem::take(&mut p.diagnostics);
    p.samples.sort_by_key(|x| x.0); // stable
    let times: Vec<Timestamp> = p.samples.iter().map(|x| x.0).collect();
    let interval = median_gap(&times);

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
            (
                busy_spans(&p.samples, &p.idle, interval),
                TaskSource::BusySpan,
            )
        };
    if let (Some(first), Some(last)) = (times.first(), times.last()) {
        let outside = spans
            .iter()
            .filter(|&&(ts, dur)| ts + dur < *first || ts > *last)
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
            loaf: loaf_for(&entries.loafs, t.ts, t.end()),
        })
        .collect();

    // The profile: one chunk of samples on the page's thread, deltas from t0.
    let mut prev = p.t0;
    let deltas: Vec<TimeDelta> = p
        .samples
        .iter()
        .map(|(t, _)| {
            let d = t.since(prev);
            prev = *t;
            d
        })
        .collect();
    let ids: Vec<NodeId> = p.samples.iter().map(|x| x.1).collect();
    let mut b = ProfileBuilder::new(Origin {
        thread: THREAD,
        id: ProfileId("field".into()),
        t0: p.t0,
        start_on_other_clock: false,
        source: None,
    });
    b.add_chunk(ChunkData::from_arrays(p.nodes, ids, deltas));
    let profiles = ProfileSet::from_profiles(vec![b.finish(&mut diagnostics)]);

    let names: HashMap<ThreadKey, String> = [(THREAD, "main".to_string())].into();
    Ok(Recording {
        tasks,
        top_level,
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            busy_spans(&s, &[idle], TimeDelta::from_micros(10)),
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

//! What started a task: its `trigger` and `trigger_detail`, from the entry-point
//! events inside it (`EventDispatch`, `FunctionCall`, `TimerFire`, …, see
//! `EntryKind` in `src/scan/records.rs`).
//!
//! A `FunctionCall` is the JavaScript an entry point ran (a listener, a callback): it takes
//! the kind of the nearest entry point around it (`event:click` for a click listener,
//! `timer` for a timeout's callback) and gives its detail; alone it is a `function-call`
//! (a `MessagePort` message, `scheduler.postTask`). An entry point with no JS entry point
//! inside is one by itself (a script's evaluation, an event no listener took). Of these,
//! the trigger is the one whose span holds the most target samples; ties: the longest,
//! then the earliest. `microtasks` counts only when nothing else ran JS; `gc`,
//! `style-layout` and `paint` only when no JS entry point ran; `unknown` when nothing says.

use std::fmt::Write as _;

use crate::scan::records::{EntryKind, EntryPoint};
use crate::time::{TimeDelta, Timestamp};
use crate::vocab::{FastMap, Pid};

/// A task's trigger: `trigger` and `trigger_detail` as reported.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trigger {
    /// `event:click`, `timer`, `animation-frame`, `idle-callback`, `script`, `parse-html`,
    /// `xhr`, `microtasks`, `function-call`, `gc`, `style-layout`, `paint` or `unknown`.
    pub kind: String,
    /// The listener (`name url:line:col`), the timer (`id 3, setTimeout 50 ms`), the
    /// script or document URL; empty when the trace does not say.
    pub detail: String,
}

/// The label of an entry kind (`EventDispatch` adds its type).
fn label(kind: EntryKind, event_type: &str) -> String {
    match kind {
        EntryKind::EventDispatch if event_type.is_empty() => "event".into(),
        EntryKind::EventDispatch => format!("event:{event_type}"),
        EntryKind::FunctionCall => "function-call".into(),
        EntryKind::TimerFire => "timer".into(),
        EntryKind::AnimationFrame => "animation-frame".into(),
        EntryKind::IdleCallback => "idle-callback".into(),
        EntryKind::Script => "script".into(),
        EntryKind::ParseHtml => "parse-html".into(),
        EntryKind::Xhr => "xhr".into(),
        EntryKind::Microtasks => "microtasks".into(),
        EntryKind::Gc => "gc".into(),
        EntryKind::StyleLayout => "style-layout".into(),
        EntryKind::Paint => "paint".into(),
        EntryKind::Work => "unknown".into(),
    }
}

/// One candidate: the span that competes, the entry point whose kind it reports, and the
/// function it ran (if any).
struct Candidate<'a> {
    span: &'a EntryPoint,
    outer: &'a EntryPoint,
    function: Option<&'a EntryPoint>,
}

/// The trigger of a task from the entry points inside it (`entries`, sorted by `ts`, longer
/// first on ties), the target samples' times (sorted) and the trace's timer installs by
/// (pid, timer id).
pub(crate) fn of_task(
    entries: &[EntryPoint],
    target_times: &[Timestamp],
    timers: &FastMap<(Pid, i64), String>,
) -> Trigger {
    // Other work (compiling, hit tests, commits) is no entry point.
    let entries: Vec<&EntryPoint> = entries
        .iter()
        .filter(|e| e.kind != EntryKind::Work)
        .collect();
    // Nearest enclosing entry point of each, by a stack of open spans.
    let mut parent: Vec<Option<usize>> = Vec::with_capacity(entries.len());
    let mut open: Vec<usize> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        while let Some(&o) = open.last() {
            if e.ts < entries[o].ts + entries[o].dur {
                break;
            }
            open.pop();
        }
        parent.push(open.last().copied());
        open.push(i);
    }
    let js = |i: usize| entries[i].kind.runs_js();
    let mut has_js_inside = vec![false; entries.len()];
    for i in 0..entries.len() {
        if js(i) {
            let mut p = parent[i];
            while let Some(q) = p {
                if has_js_inside[q] {
                    break;
                }
                has_js_inside[q] = true;
                p = parent[q];
            }
        }
    }
    let mut candidates: Vec<Candidate<'_>> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if e.kind == EntryKind::FunctionCall {
            // The nearest entry point around it that is not itself a function call.
            let mut outer = parent[i];
            while let Some(o) = outer {
                if entries[o].kind != EntryKind::FunctionCall {
                    break;
                }
                outer = parent[o];
            }
            // A call inside another call is part of the outer one.
            if parent[i].is_some_and(|p| entries[p].kind == EntryKind::FunctionCall) {
                continue;
            }
            candidates.push(Candidate {
                span: e,
                outer: outer.map_or(e, |o| entries[o]),
                function: Some(e),
            });
        } else if !has_js_inside[i] && (js(i) || parent[i].is_none()) {
            candidates.push(Candidate {
                span: e,
                outer: e,
                function: None,
            });
        }
    }
    let score = |c: &Candidate<'_>| {
        let (from, to) = (c.span.ts, c.span.ts + c.span.dur);
        let n =
            target_times.partition_point(|&t| t < to) - target_times.partition_point(|&t| t < from);
        (n, c.span.dur, std::cmp::Reverse(c.span.ts))
    };
    let tier = |c: &Candidate<'_>| match c.outer.kind {
        k if !k.runs_js() => 0,
        EntryKind::Microtasks => 1,
        _ => 2,
    };
    let Some(best_tier) = candidates.iter().map(tier).max() else {
        return Trigger {
            kind: "unknown".into(),
            detail: String::new(),
        };
    };
    let best = candidates
        .iter()
        .filter(|c| tier(c) == best_tier)
        .max_by_key(|c| score(c))
        .expect("a candidate of the best tier");
    let event_type = if best.outer.kind == EntryKind::EventDispatch {
        best.outer.detail()
    } else {
        ""
    };
    let mut detail = String::new();
    match best.outer.kind {
        EntryKind::TimerFire => {
            if let Some(id) = best.outer.timer_id() {
                let _ = write!(detail, "id {id}");
                if let Some(set) = timers.get(&(best.outer.thread.pid, id)) {
                    let _ = write!(detail, ", {set}");
                }
            }
        }
        EntryKind::Script | EntryKind::ParseHtml | EntryKind::Xhr => {
            detail.push_str(best.outer.detail())
        }
        _ => {}
    }
    if let Some(f) = best.function {
        if !detail.is_empty() {
            detail.push_str(": ");
        }
        detail.push_str(f.detail());
    }
    Trigger {
        kind: label(best.outer.kind, event_type),
        detail,
    }
}

/// The entry points inside `[ts, ts + dur)` of a thread's list (sorted by `ts`).
pub(crate) fn inside(list: &[EntryPoint], ts: Timestamp, dur: TimeDelta) -> &[EntryPoint] {
    &list[crate::scan::records::entries_inside(list, ts, dur)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{ThreadKey, Tid};

    const T: ThreadKey = ThreadKey {
        pid: Pid(1),
        tid: Tid(1),
    };

    fn e(kind: EntryKind, ts: i64, dur: i64, detail: &str) -> EntryPoint {
        EntryPoint {
            thread: T,
            ts: Timestamp::from_micros(ts),
            dur: TimeDelta::from_micros(dur),
            kind,
            work: crate::scan::records::WorkCategory::Scripting,
            args: crate::scan::records::EntryArgs::read(detail.into(), None),
        }
    }

    fn times(v: &[i64]) -> Vec<Timestamp> {
        v.iter().map(|&t| Timestamp::from_micros(t)).collect()
    }

    fn run(entries: &[EntryPoint], targets: &[i64]) -> (String, String) {
        let t = of_task(entries, &times(targets), &FastMap::default());
        (t.kind, t.detail)
    }

    use EntryKind::*;

    #[test]
    fn a_keystroke_goes_to_the_dispatch_whose_listener_ran_the_target_samples() {
        // The recording's keystroke: keydown (listener onKey 0–60) then keypress holding
        // textInput holding input (listener onInput 62–150). Targets 70–140 are in onInput:
        // event:input, though keypress is longer and holds them too.
        let entries = [
            e(EventDispatch, 0, 61, "keydown"),
            e(FunctionCall, 0, 60, "onKey app.js:19:15"),
            e(EventDispatch, 61, 93, "keypress"),
            e(EventDispatch, 61, 92, "textInput"),
            e(EventDispatch, 62, 90, "input"),
            e(FunctionCall, 62, 88, "onInput app.js:20:17"),
            e(Microtasks, 152, 1, ""),
        ];
        let targets: Vec<i64> = (70..140).step_by(10).collect();
        assert_eq!(
            run(&entries, &targets),
            ("event:input".into(), "onInput app.js:20:17".into())
        );
        // Targets in onKey: keydown.
        assert_eq!(run(&entries, &[5, 15, 25]).0, "event:keydown");
        // No target sample anywhere (a non-JS task): the longest JS candidate, onInput.
        assert_eq!(run(&entries, &[]).0, "event:input");
    }

    #[test]
    fn timers_scripts_bare_calls_microtasks_and_native_work() {
        let mut timer = e(TimerFire, 0, 80, "");
        timer.args = crate::scan::records::EntryArgs::read(String::new(), Some(3));
        let entries = [timer, e(FunctionCall, 1, 78, "onTimer app.js:16:17")];
        let mut timers = FastMap::default();
        timers.insert((Pid(1), 3), "setTimeout 50 ms".to_string());
        let t = of_task(&entries, &times(&[10]), &timers);
        assert_eq!(
            (t.kind.as_str(), t.detail.as_str()),
            ("timer", "id 3, setTimeout 50 ms: onTimer app.js:16:17")
        );
        // A script evaluated, with a GC inside it: script, its URL.
        let entries = [e(Script, 0, 70, "https://x/boot.js"), e(Gc, 10, 5, "")];
        assert_eq!(
            run(&entries, &[20]),
            ("script".into(), "https://x/boot.js".into())
        );
        // A MessagePort listener: a bare function call; a microtask checkpoint after it
        // does not compete.
        let entries = [
            e(FunctionCall, 0, 65, "onMessage app.js:18:19"),
            e(Microtasks, 65, 30, ""),
        ];
        assert_eq!(run(&entries, &[70, 80, 90]).0, "function-call");
        // Microtasks alone.
        assert_eq!(run(&[e(Microtasks, 0, 60, "")], &[10]).0, "microtasks");
        // No JS entry point: the native work holding the most target samples; ties the
        // longest.
        let entries = [
            e(StyleLayout, 0, 40, ""),
            e(Paint, 50, 20, ""),
            e(Gc, 75, 5, ""),
        ];
        assert_eq!(run(&entries, &[55, 60]).0, "paint");
        assert_eq!(run(&entries, &[]).0, "style-layout");
        assert_eq!(run(&[], &[1]).0, "unknown");
    }
}

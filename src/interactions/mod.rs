//! Interactions: a trace's `EventTiming` events → the page's interactions, their three
//! phases and INP, as the DevTools trace engine finds them (docs/METHOD.md §2.8).
//!
//! 1. `pair`: begin and end events paired by id in time order, each end taking the last
//!    unmatched begin of its id; begins of no interaction (`interactionId` 0 or missing,
//!    `duration` under 1 ms) are never paired, and a pair whose begin lacks a `type` or one
//!    of the three page-clock times is dropped (DevTools' `UserInteractionsHandler`).
//! 2. `remove_nested`: of the events of one category (pointer, keyboard, other) that end
//!    at the same paint, the earliest is kept, with the earliest processing start and the
//!    latest processing end of those it hides.
//! 3. [`Interaction`]s: per `interactionId`, its longest kept event.
//! 4. `mark_inp`: per navigation, interactions sorted by duration (longest first), INP
//!    the one at `min(9, floor(n / 50))` (DevTools' `INPBreakdown` insight).

use std::collections::HashMap;

use crate::scan::records::{EventTiming, Navigation};
use crate::time::{TimeDelta, Timestamp};
use crate::vocab::ThreadKey;

/// The category an event type belongs to, which decides what nests under what
/// (DevTools' `categoryOfInteraction`, after web.dev's table of interaction types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// `pointerdown`, `pointerup`, `touchstart`, `touchend`, `mousedown`, `mouseup`,
    /// `click`.
    Pointer,
    /// `keydown`, `keypress`, `keyup`.
    Keyboard,
    /// Any other type.
    Other,
}

impl Category {
    /// The category of a DOM event type.
    pub fn of(event_type: &str) -> Category {
        match event_type {
            "pointerdown" | "touchstart" | "pointerup" | "touchend" | "mousedown" | "mouseup"
            | "click" => Category::Pointer,
            "keydown" | "keypress" | "keyup" => Category::Keyboard,
            _ => Category::Other,
        }
    }

    /// The report's spelling: `pointer`, `keyboard`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Pointer => "pointer",
            Category::Keyboard => "keyboard",
            Category::Other => "other",
        }
    }
}

/// One paired Event Timing entry of an interaction, its page-clock times moved onto the
/// trace's clock (DevTools' `SyntheticInteractionPair`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InteractionEvent {
    /// The thread that wrote the begin event (the renderer's main thread).
    pub thread: ThreadKey,
    /// `interactionId` (never 0).
    pub interaction_id: i64,
    /// `type` (`pointerdown`, `keydown`, ...).
    pub event_type: String,
    /// The begin event's `ts`: when the input happened.
    pub ts: Timestamp,
    /// The end event's `ts`: the next paint.
    pub end: Timestamp,
    /// `begin.ts + (processingStart − timeStamp)`, the page-clock difference in ms taken
    /// as µs × 1000: when the first handler started.
    pub processing_start: Timestamp,
    /// `begin.ts + (processingEnd − timeStamp)`: when the last handler ended.
    pub processing_end: Timestamp,
}

impl InteractionEvent {
    /// `end − ts`.
    pub fn dur(&self) -> TimeDelta {
        self.end.since(self.ts)
    }

    fn processing(&self) -> TimeDelta {
        self.processing_end.since(self.processing_start)
    }
}

/// An interaction: the longest kept event of one `interactionId` (docs/METHOD.md §2.8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interaction {
    /// The longest kept event, processing times widened over the events it hides.
    pub event: InteractionEvent,
    /// Its category.
    pub category: Category,
    /// The types of every paired event of this `interactionId`, in time order, each once.
    pub event_types: Vec<String>,
    /// Kept events of this id (after the nesting rule).
    pub kept_events: usize,
    /// The INP interaction of a navigation (or of the part of the trace before the first).
    pub is_inp: bool,
}

impl Interaction {
    /// The interaction's duration: its longest event's, input to next paint.
    pub fn duration(&self) -> TimeDelta {
        self.event.dur()
    }
    /// Input delay: input → processing start.
    pub fn input_delay(&self) -> TimeDelta {
        self.event.processing_start.since(self.event.ts)
    }
    /// Processing: processing start → processing end.
    pub fn processing(&self) -> TimeDelta {
        self.event.processing()
    }
    /// Presentation delay: processing end → next paint.
    pub fn presentation_delay(&self) -> TimeDelta {
        self.event.end.since(self.event.processing_end)
    }
}

/// A page-clock difference in ms as a trace-clock offset (rounded to the ns).
fn ms_offset(to: f64, from: f64) -> Option<TimeDelta> {
    let ns = (to - from) * 1e6;
    (ns.is_finite() && ns.abs() < 9.0e18).then(|| TimeDelta::from_nanos(ns.round() as i64))
}

/// Step 1: the paired events, sorted by `ts` (the longer first on ties), in the order
/// DevTools keeps them. `events` in file order.
pub(crate) fn pair(events: &[EventTiming]) -> Vec<InteractionEvent> {
    // Begins of interactions and every end, in time order (file order on ties; begins
    // before ends at one `ts`, as DevTools' merge of its two lists).
    let mut order: Vec<&EventTiming> = events
        .iter()
        .filter(|e| match e.begin.as_deref() {
            None => true,
            Some(d) => {
                // `duration < 1` with the value missing is false in JavaScript: kept.
                !d.duration.is_some_and(|x| x < 1.0) && d.interaction_id.is_some_and(|i| i != 0)
            }
        })
        .collect();
    order.sort_by_key(|e| (e.ts, e.begin.is_none(), e.order));
    let mut open: HashMap<Option<&str>, Vec<&EventTiming>> = HashMap::new();
    let mut out = Vec::new();
    for e in order {
        let key = e.id.as_deref();
        if e.begin.is_some() {
            open.entry(key).or_default().push(e);
            continue;
        }
        let Some(begin) = open.get_mut(&key).and_then(Vec::pop) else {
            continue;
        };
        let Some(d) = begin.begin.as_deref() else {
            continue;
        };
        // DevTools drops a pair whose begin lacks any of these (or has it 0 or empty).
        let nonzero = |x: Option<f64>| x.filter(|v| *v != 0.0 && !v.is_nan());
        let (Some(event_type), Some(interaction_id), Some(t0), Some(ps), Some(pe)) = (
            d.event_type.as_deref().filter(|t| !t.is_empty()),
            d.interaction_id.filter(|i| *i != 0),
            nonzero(d.time_stamp),
            nonzero(d.processing_start),
            nonzero(d.processing_end),
        ) else {
            continue;
        };
        let (Some(to_start), Some(to_end)) = (ms_offset(ps, t0), ms_offset(pe, t0)) else {
            continue;
        };
        out.push(InteractionEvent {
            thread: begin.thread,
            interaction_id,
            event_type: event_type.to_string(),
            ts: begin.ts,
            end: e.ts,
            processing_start: begin.ts + to_start,
            processing_end: begin.ts + to_end,
        });
    }
    // Stable: pairs of equal times stay in the order their ends came.
    out.sort_by(|a, b| a.ts.cmp(&b.ts).then(b.end.cmp(&a.end)));
    out
}

/// Step 2: DevTools' nesting rule over `events` (sorted as [`pair`] leaves them): per
/// category and end time, the earliest event is kept (of two at the same time with the
/// same `interactionId`, the one with the longer processing), and the event that was kept
/// when another of its category and end time came takes the earlier processing start and
/// the later processing end of the two. Returns the kept events sorted by `ts`.
pub(crate) fn remove_nested(events: &[InteractionEvent]) -> Vec<InteractionEvent> {
    let mut all: Vec<InteractionEvent> = events.to_vec();
    // Per category, end time → index of the kept event, and the end times in the order
    // first seen (DevTools lists a category's kept events in its map's insertion order).
    let mut kept: HashMap<(Category, Timestamp), usize> = HashMap::new();
    let mut first_seen: Vec<(Category, Timestamp)> = Vec::new();
    for i in 0..all.len() {
        let key = (Category::of(&all[i].event_type), all[i].end);
        let Some(&cur) = kept.get(&key) else {
            kept.insert(key, i);
            first_seen.push(key);
            continue;
        };
        let (new, old) = (&all[i], &all[cur]);
        if new.ts < old.ts
            || (new.ts == old.ts
                && new.interaction_id == old.interaction_id
                && new.processing() > old.processing())
        {
            kept.insert(key, i);
        }
        // The event that was kept when this one came is widened, even when this one
        // replaced it (as DevTools does: then the widening is lost with it).
        let (ps, pe) = (all[i].processing_start, all[i].processing_end);
        let old = &mut all[cur];
        old.processing_start = old.processing_start.min(ps);
        old.processing_end = old.processing_end.max(pe);
    }
    first_seen.sort_by_key(|(c, _)| *c);
    let mut out: Vec<InteractionEvent> = first_seen
        .iter()
        .map(|key| all[kept[key]].clone())
        .collect();
    out.sort_by_key(|e| e.ts);
    out
}

/// Steps 1–4 for a trace: its interactions in `ts` order, INP marked per navigation
/// (`navigations` of the main frame, in `ts` order).
pub(crate) fn interactions(events: &[EventTiming], navigations: &[Navigation]) -> Vec<Interaction> {
    of_events(pair(events), navigations)
}

/// An Event Timing entry as the page's `PerformanceObserver` saw it (field data,
/// `PerformanceEventTiming`): times on the profile's clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EventEntry {
    /// `name`: the event type.
    pub name: String,
    /// `interactionId`.
    pub interaction_id: i64,
    /// `startTime`: the input.
    pub start: Timestamp,
    /// `duration` (rounded to 8 ms by the API): the next paint is `start + duration`.
    pub duration: TimeDelta,
    /// `processingStart`.
    pub processing_start: Timestamp,
    /// `processingEnd`.
    pub processing_end: Timestamp,
}

/// Steps 2–4 for field data: `entries` (any order) on `thread`, one span (no navigation).
/// Entries of no interaction (`interactionId` 0) or shorter than 1 ms are left out, as
/// in a trace.
pub(crate) fn of_entries(entries: &[EventEntry], thread: ThreadKey) -> Vec<Interaction> {
    let mut events: Vec<InteractionEvent> = entries
        .iter()
        .filter(|e| e.interaction_id != 0 && e.duration >= TimeDelta::from_micros(1000))
        .map(|e| InteractionEvent {
            thread,
            interaction_id: e.interaction_id,
            event_type: e.name.clone(),
            ts: e.start,
            end: e.start + e.duration,
            processing_start: e.processing_start,
            processing_end: e.processing_end,
        })
        .collect();
    events.sort_by(|a, b| a.ts.cmp(&b.ts).then(b.end.cmp(&a.end)));
    of_events(events, &[])
}

/// Steps 2–4 over paired events sorted as [`pair`] leaves them.
fn of_events(paired: Vec<InteractionEvent>, navigations: &[Navigation]) -> Vec<Interaction> {
    let kept = remove_nested(&paired);
    let mut out: Vec<Interaction> = Vec::new();
    let mut at: HashMap<i64, usize> = HashMap::new();
    for e in &kept {
        match at.get(&e.interaction_id) {
            Some(&i) => {
                out[i].kept_events += 1;
                if e.dur() > out[i].event.dur() {
                    out[i].event = e.clone();
                }
            }
            None => {
                at.insert(e.interaction_id, out.len());
                out.push(Interaction {
                    event: e.clone(),
                    category: Category::Other,
                    event_types: Vec::new(),
                    kept_events: 1,
                    is_inp: false,
                });
            }
        }
    }
    for e in &paired {
        if let Some(&i) = at.get(&e.interaction_id)
            && !out[i].event_types.contains(&e.event_type)
        {
            out[i].event_types.push(e.event_type.clone());
        }
    }
    for it in &mut out {
        it.category = Category::of(&it.event.event_type);
    }
    mark_inp(&kept, navigations, &mut out);
    out.sort_by_key(|i| (i.event.ts, i.event.interaction_id));
    out
}

/// Step 4: marks the INP interaction of each navigation's span (DevTools' insight sets:
/// before the first navigation, then each navigation to the next; an event counts in a
/// span it overlaps, `ts <= max && min < ts + dur`).
fn mark_inp(kept: &[InteractionEvent], navigations: &[Navigation], out: &mut [Interaction]) {
    let mut edges: Vec<(Option<Timestamp>, Option<Timestamp>)> = Vec::new();
    let starts = navigations.iter().map(|n| n.ts);
    let mut from = None;
    for ts in starts {
        edges.push((from, Some(ts)));
        from = Some(ts);
    }
    edges.push((from, None));
    for (min, max) in edges {
        let inside = kept
            .iter()
            .filter(|e| max.is_none_or(|m| e.ts <= m) && min.is_none_or(|m| m < e.end));
        // The longest event per id, ids in the order first met (ties: the first).
        let mut longest: Vec<&InteractionEvent> = Vec::new();
        let mut at: HashMap<i64, usize> = HashMap::new();
        for e in inside {
            match at.get(&e.interaction_id) {
                Some(&i) if e.dur() > longest[i].dur() => longest[i] = e,
                Some(_) => {}
                None => {
                    at.insert(e.interaction_id, longest.len());
                    longest.push(e);
                }
            }
        }
        if longest.is_empty() {
            continue;
        }
        longest.sort_by_key(|e| std::cmp::Reverse(e.dur()));
        let inp = longest[(longest.len() / 50).min(9)].interaction_id;
        for it in out.iter_mut() {
            if it.event.interaction_id == inp {
                it.is_inp = true;
            }
        }
    }
}

#[cfg(test)]
mod tests;

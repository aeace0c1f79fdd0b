//! Readers: one input kind each → a [`Recording`], the intermediate every input becomes
//! before chain resolution: the long tasks found and where they came from, every
//! top-level task, the threads in scope and their names, and the rebuilt profiles.
//!
//! [`trace`] reads a scanned Chrome trace (scan → profiles → tasks); [`field`] reads the
//! field formats (JS Self-Profiling bundles, `.cpuprofile`s). A new input kind gets a
//! module here that makes a [`Recording`]; nothing here calls a later stage.

pub(crate) mod field;
pub(crate) mod frames;
pub(crate) mod lexed;
pub(crate) mod trace;

use std::collections::HashMap;

use crate::profile::ProfileSet;
use crate::scan::records::{EntryPoint, PageUrl, TimerInstall};
use crate::tasks::{LongTask, TopLevelCounts};
use crate::time::{TimeDelta, Timestamp};
use crate::vocab::{Diagnostics, FastMap, Pid, ThreadKey};

/// The script of a long-animation-frame entry that overlaps a task most: its entry point.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoafScript {
    /// `invoker` (such as `BUTTON#save.onclick` or `TimerHandler:setTimeout`).
    pub invoker: String,
    /// `sourceURL`.
    pub source_url: String,
    /// `sourceFunctionName`.
    pub function: String,
}

/// Where a long task came from (the `task_source` column).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TaskSource {
    /// A top-level task event of a Chrome trace.
    #[default]
    Trace,
    /// A `longtask` entry of a field bundle (or of `--tasks FILE`).
    LongTask,
    /// A `long-animation-frame` entry.
    LongAnimationFrame,
    /// A run of busy samples in a profile without task entries.
    BusySpan,
}

impl TaskSource {
    /// The column's text: `trace`, `longtask`, `long-animation-frame`, `busy_span`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSource::Trace => "trace",
            TaskSource::LongTask => "longtask",
            TaskSource::LongAnimationFrame => "long-animation-frame",
            TaskSource::BusySpan => "busy_span",
        }
    }
}

/// A long task with where it came from.
#[derive(Clone, Debug)]
pub(crate) struct FoundTask {
    /// The task.
    pub task: LongTask,
    /// Where it came from.
    pub source: TaskSource,
    /// The LoAF script that overlaps the task most, when LoAF entries were given.
    pub loaf: Option<Box<LoafScript>>,
}

/// What a reader makes of one input, for chain resolution.
#[derive(Default)]
pub(crate) struct Recording {
    /// The long tasks (longer than the threshold), in thread and time order.
    pub tasks: Vec<FoundTask>,
    /// The top-level tasks' counts (for the summary's counts and blocking time).
    pub top_level: TopLevelCounts,
    /// Threads in scope.
    pub threads: usize,
    /// Thread names.
    pub thread_names: HashMap<ThreadKey, String>,
    /// Origin of `task_start_ms`.
    pub first_ts: Timestamp,
    /// The input was cut off.
    pub truncated: bool,
    /// Part of the input was invalid JSON and skipped (see `broken`).
    pub damaged: bool,
    /// The rebuilt profiles.
    pub profiles: ProfileSet,
    /// The main frame's URLs in `ts` order: a trace's navigations, or a field bundle's
    /// `page` at its time origin; empty when the input does not say.
    pub pages: Vec<PageUrl>,
    /// Scripts with a source map URL (V8 source-rundown events), in file order.
    pub scripts: Vec<crate::scan::records::ScriptRecord>,
    /// Maps embedded in the trace (`metadata.sourceMaps`).
    pub embedded_maps: Vec<crate::scan::records::EmbeddedMap>,
    /// Odd input, by kind.
    pub diagnostics: Diagnostics,
    /// Trace events read (0 for field data).
    pub events: u64,
    /// Set when the event array breaks off in bytes that are not JSON (the events before
    /// were used).
    pub broken: Option<String>,
    /// Field data's median sample interval (sampling is coarse in the field): chain
    /// resolution's default lookback, and 2.5 of them the shortest stretch without
    /// samples it calls a `profile_gap`.
    pub sample_interval: Option<TimeDelta>,
    /// A trace's entry-point events by thread, for each task's trigger (empty for field
    /// data, whose LoAF entries say it instead), and the other work events the breakdown
    /// of a window's time counts.
    pub entries: EntryIndex,
    /// The page's interactions (Event Timing), in `ts` order, INP marked.
    pub interactions: Vec<crate::interactions::Interaction>,
    /// The animation frames longer than the threshold on the threads in scope, in thread
    /// and time order (a trace's `AnimationFrame` events; empty for field data).
    pub frames: Vec<frames::AnimationFrame>,
    /// The top-level task spans (start, duration), sorted, of the threads that have long
    /// frames or interactions: the idle time of a window that spans several tasks.
    pub task_spans: FastMap<ThreadKey, Vec<(Timestamp, TimeDelta)>>,
    /// Long tasks on threads outside the scope (not in the report; 0 for field data).
    pub outside_scope_long_tasks: u64,
}

/// Entry-point events of the threads in scope, each list sorted by `ts` (longer first on
/// ties, so an event comes before those it holds), and where each timer was set.
#[derive(Debug, Default)]
pub(crate) struct EntryIndex {
    /// Entry points by thread.
    pub by_thread: FastMap<ThreadKey, Vec<EntryPoint>>,
    /// `TimerInstall` details by (pid, timer id).
    pub timers: FastMap<(Pid, i64), String>,
    /// The longest event of each thread's list: no event that began more than this before
    /// a window can reach into it.
    pub longest: FastMap<ThreadKey, TimeDelta>,
}

impl EntryIndex {
    /// The thread's events (sorted) and the longest of them; empty when it has none.
    pub(crate) fn of_thread(&self, thread: ThreadKey) -> (&[EntryPoint], TimeDelta) {
        (
            self.by_thread.get(&thread).map_or(&[][..], Vec::as_slice),
            self.longest.get(&thread).copied().unwrap_or_default(),
        )
    }
}

impl EntryIndex {
    /// The entry points of `threads` (sorted) from a scan's lists.
    pub(crate) fn new(
        entries: crate::scan::records::EntryPoints,
        installs: Vec<TimerInstall>,
        threads: &[ThreadKey],
    ) -> EntryIndex {
        // Counted first: each thread's list is allocated once, not grown by doubling.
        let mut counts: FastMap<ThreadKey, usize> = FastMap::default();
        for e in entries.iter() {
            if threads.binary_search(&e.thread).is_ok() {
                *counts.entry(e.thread).or_default() += 1;
            }
        }
        let mut by_thread: FastMap<ThreadKey, Vec<EntryPoint>> = counts
            .into_iter()
            .map(|(t, n)| (t, Vec::with_capacity(n)))
            .collect();
        for e in entries.into_entries() {
            if let Some(list) = by_thread.get_mut(&e.thread) {
                list.push(e);
            }
        }
        let mut longest = FastMap::default();
        for (thread, list) in by_thread.iter_mut() {
            list.sort_by_key(|e| (e.ts, std::cmp::Reverse(e.dur)));
            longest.insert(
                *thread,
                list.iter().map(|e| e.dur).max().unwrap_or_default(),
            );
        }
        let timers = installs
            .into_iter()
            .map(|t| ((t.pid, t.timer_id), t.detail))
            .collect();
        EntryIndex {
            by_thread,
            timers,
            longest,
        }
    }
}

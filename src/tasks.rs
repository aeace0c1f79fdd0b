//! Tasks: task-like events of the threads in scope → top-level tasks → long tasks.
//!
//! A top-level task is the outermost task-like event on its thread (`RunTask` and its
//! older names, docs/METHOD.md §2): in M65–M70 traces the scheduler's event nests inside
//! `MessageLoop::RunTask`, and in modern ones `ThreadControllerImpl::RunTask` nests inside
//! `RunTask`, so nested ones are not counted twice. `X` events carry `dur`; `B`/`E` pairs
//! are matched per thread as a stack, and a `B` left open is marked incomplete (`B` left open ends at its thread's last event,
//! or its profile's last busy sample, whichever is later: a renderer left behind by a
//! navigation has no more events, and its stale `B` would otherwise run to the end of the
//! whole trace). A task is long when `dur` is strictly greater than the threshold.

use std::collections::{BTreeMap, HashMap};

use crate::scan::records::{MarkKind, TaskMark};

use crate::scan::ScannedTrace;
use crate::time::{TimeDelta, Timestamp};
use crate::vocab::Diagnostics;
use crate::vocab::ThreadKey;

/// Which threads' tasks are reported (docs/METHOD.md §3 `--scope`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// The `CrRendererMain` thread(s) of the process(es) that hosted the page's main frame
    /// (every `CrRendererMain` when the trace does not say).
    #[default]
    MainFrame,
    /// Every `CrRendererMain` thread.
    Renderers,
    /// Renderer main threads and worker threads.
    All,
}

/// A top-level task on one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[doc(hidden)]
pub struct TopLevelTask {
    /// The thread.
    pub thread: ThreadKey,
    /// Start (`ts`).
    pub ts: Timestamp,
    /// Duration (`dur`, or `E.ts − B.ts`).
    pub dur: TimeDelta,
    /// Its end is not known: an `X` without `dur` (cut at the trace's end), or a `B`
    /// without its `E` (ended at its thread's last task event, or later at the last busy
    /// sample of the thread's profile: [`end_open_tasks_at_last_busy_sample`]).
    pub incomplete: bool,
}

/// A top-level task longer than the threshold (same fields).
pub(crate) type LongTask = TopLevelTask;

impl TopLevelTask {
    /// `ts + dur`.
    pub fn end(&self) -> Timestamp {
        self.ts + self.dur
    }
}

/// What the report says of a file's top-level tasks, kept instead of the tasks (a trace
/// with millions of them held 40 bytes each until the report was written).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TopLevelCounts {
    /// Top-level tasks.
    pub count: usize,
    /// Total blocking time: sum over tasks longer than 50 ms of `dur − 50 ms`
    /// (Lighthouse's definition, whatever the long-task threshold is).
    pub blocking_time: TimeDelta,
    /// The longest task's `dur` (0 without tasks).
    pub max: TimeDelta,
    /// Total blocking time from the main frame's first contentful paint on
    /// ([`blocking_time_from`]); `None` when the trace has no such paint (field data).
    pub blocking_time_from_fcp: Option<TimeDelta>,
}

impl TopLevelCounts {
    /// The counts of `tasks`.
    pub(crate) fn of<'a>(tasks: impl IntoIterator<Item = &'a TopLevelTask>) -> TopLevelCounts {
        let fifty = TimeDelta::from_micros(50_000);
        let mut c = TopLevelCounts::default();
        let mut max = None;
        for t in tasks {
            c.count += 1;
            if t.dur > fifty {
                c.blocking_time =
                    c.blocking_time + TimeDelta::from_nanos(t.dur.as_nanos() - fifty.as_nanos());
            }
            max = max.max(Some(t.dur));
        }
        c.max = max.unwrap_or_default();
        c
    }
}

/// Lighthouse's total blocking time from `from` on (its `calculateSumOfBlockingTime` with
/// the first contentful paint as start and no end): each task of at least 50 ms that ends
/// after `from` is clipped to start no earlier than `from`, and what the clipped task has
/// over 50 ms is summed. A task straddling `from` counts only its part after it.
pub(crate) fn blocking_time_from<'a>(
    tasks: impl IntoIterator<Item = &'a TopLevelTask>,
    from: Timestamp,
) -> TimeDelta {
    let fifty = TimeDelta::from_micros(50_000);
    let mut sum = TimeDelta::ZERO;
    for t in tasks {
        if t.dur < fifty || t.end() < from {
            continue;
        }
        let clipped = t.end().since(t.ts.max(from));
        if clipped > fifty {
            sum = sum + TimeDelta::from_nanos(clipped.as_nanos() - fifty.as_nanos());
        }
    }
    sum
}

/// The diagnostics kind of task `X` events whose `dur` is negative, beyond ±2^63 ns or not
/// a number: read as still running at the trace's end (the most they can say).
pub(crate) const INVALID_DUR: &str = "task X events whose dur is not a valid duration (negative, \
     too large or not a number): read as running to the trace's end";

/// The diagnostics kind of task `B` events without their `E`.
pub(crate) const OPEN_BEGIN: &str = "task B events without an E (ended at their thread's last task event or its profile's last busy sample, not at the trace's end; flagged incomplete)";

/// A nested event may overhang its parent by up to this much and still count as nested
/// (Lighthouse tolerates < 1 ms; Chrome's own timestamps jitter by a few µs).
const NESTING_SLACK: TimeDelta = TimeDelta::from_micros(1000);

/// Top-level tasks of the given threads (those with task events), each list sorted by `ts`.
#[doc(hidden)]
pub fn top_level_tasks<'a>(
    marks: impl IntoIterator<Item = &'a TaskMark>,
    threads: &[ThreadKey],
    trace_end: Timestamp,
    diagnostics: &mut Diagnostics,
) -> HashMap<ThreadKey, Vec<TopLevelTask>> {
    top_level_tasks_beside(marks, threads, &[], trace_end, diagnostics).0
}

/// [`top_level_tasks`] of `threads` (sorted), and of `others` (sorted, none of
/// `threads`) from the same pass over the marks, their problems not counted in
/// `diagnostics`: the tasks a wider scope would add, at the cost of their threads alone.
pub(crate) fn top_level_tasks_beside<'a>(
    marks: impl IntoIterator<Item = &'a TaskMark>,
    threads: &[ThreadKey],
    others: &[ThreadKey],
    trace_end: Timestamp,
    diagnostics: &mut Diagnostics,
) -> (
    HashMap<ThreadKey, Vec<TopLevelTask>>,
    HashMap<ThreadKey, Vec<TopLevelTask>>,
) {
    // Each thread's marks, `true` for `threads`; a thread's place is looked up only when
    // the thread changes (Chrome writes a thread's events in runs, one buffer chunk each).
    let mut lists: Vec<(ThreadKey, bool, Vec<&'a TaskMark>)> = Vec::new();
    let mut place: crate::vocab::FastMap<ThreadKey, Option<usize>> = Default::default();
    let mut last: Option<(ThreadKey, Option<usize>)> = None;
    for m in marks {
        let slot = match last {
            Some((thread, slot)) if thread == m.thread => slot,
            _ => {
                let slot = *place.entry(m.thread).or_insert_with(|| {
                    let mine = threads.binary_search(&m.thread).is_ok();
                    (mine || others.binary_search(&m.thread).is_ok()).then(|| {
                        lists.push((m.thread, mine, Vec::new()));
                        lists.len() - 1
                    })
                });
                last = Some((m.thread, slot));
                slot
            }
        };
        if let Some(k) = slot {
            lists[k].2.push(m);
        }
    }
    let (mine, theirs): (Vec<_>, Vec<_>) = lists.into_iter().partition(|l| l.1);
    let strip =
        |v: Vec<(ThreadKey, bool, Vec<&'a TaskMark>)>| v.into_iter().map(|(t, _, l)| (t, l));
    let mut scratch = Diagnostics::default();
    (
        top_level_of(strip(mine), trace_end, diagnostics),
        top_level_of(strip(theirs), trace_end, &mut scratch),
    )
}

/// The top-level tasks of each thread's marks (each thread once, marks in any order).
fn top_level_of<'a>(
    per_thread: impl IntoIterator<Item = (ThreadKey, Vec<&'a TaskMark>)>,
    trace_end: Timestamp,
    diagnostics: &mut Diagnostics,
) -> HashMap<ThreadKey, Vec<TopLevelTask>> {
    let mut out = HashMap::new();
    for (thread, mut ms) in per_thread {
        // `order` (the byte offset) tells every two marks apart: an unstable sort, in
        // place, gives the stable order (a trace out of `ts` order sorts every mark).
        ms.sort_unstable_by_key(|m| (m.ts, m.order));
        // The thread's last event (a task event's end): where a `B` that never ended ends.
        let thread_end = ms
            .iter()
            .map(|m| match m.kind {
                MarkKind::Complete(d) => m.ts + d,
                _ => m.ts,
            })
            .max()
            .unwrap_or_default();
        // (task, file order); a mark makes one task at most.
        let mut tasks: Vec<(TopLevelTask, u64)> = Vec::with_capacity(ms.len());
        let mut open: Vec<&TaskMark> = Vec::new();
        for m in ms {
            match m.kind {
                MarkKind::Complete(dur) => tasks.push((
                    TopLevelTask {
                        thread,
                        ts: m.ts,
                        dur,
                        incomplete: false,
                    },
                    m.order,
                )),
                MarkKind::Begin { .. } => open.push(m),
                MarkKind::Unfinished | MarkKind::InvalidDur => {
                    diagnostics.add(
                        if m.kind == MarkKind::Unfinished {
                            "task X events without a dur (still running at the trace's end: cut there)"
                        } else {
                            INVALID_DUR
                        },
                        1,
                    );
                    tasks.push((
                        TopLevelTask {
                            thread,
                            ts: m.ts,
                            dur: trace_end.max(m.ts).since(m.ts),
                            incomplete: true,
                        },
                        m.order,
                    ));
                }
                MarkKind::End => match open.pop() {
                    Some(b) if matches!(b.kind, MarkKind::Begin { is_task: true }) => tasks.push((
                        TopLevelTask {
                            thread,
                            ts: b.ts,
                            dur: m.ts.since(b.ts),
                            incomplete: false,
                        },
                        b.order,
                    )),
                    Some(_) => {}
                    None => diagnostics.add("E events without a B (ignored)", 1),
                },
            }
        }
        for b in open {
            if matches!(b.kind, MarkKind::Begin { is_task: true }) {
                diagnostics.add(OPEN_BEGIN, 1);
                let end = thread_end.max(b.ts);
                tasks.push((
                    TopLevelTask {
                        thread,
                        ts: b.ts,
                        dur: end.since(b.ts),
                        incomplete: true,
                    },
                    b.order,
                ));
            }
        }
        tasks.sort_unstable_by_key(|(t, order)| {
            (t.ts, std::cmp::Reverse(t.dur), *order, t.incomplete)
        });
        // At most as many as the tasks: allocated once (grown by doubling, the list of a
        // trace with millions of tasks left its earlier copies resident).
        let mut top: Vec<TopLevelTask> = Vec::with_capacity(tasks.len());
        for (t, _) in tasks {
            if let Some(outer) = top.last_mut() {
                if t.ts < outer.end() && t.end() <= outer.end() + NESTING_SLACK {
                    continue; // nested in `outer`
                }
                if t.ts < outer.end() {
                    // Consecutive tasks overlapping by a few µs (crbug 329678173): end the
                    // earlier one where the next begins, as Lighthouse does, so that no
                    // sample belongs to two tasks. More than 1 ms is not that: say so.
                    if outer.end().since(t.ts) > TimeDelta::from_micros(1000) {
                        diagnostics.add(
                            "top-level tasks overlapping the next by over 1 ms (cut where the next begins)",
                            1,
                        );
                    }
                    outer.dur = t.ts.since(outer.ts);
                }
            }
            top.push(t);
        }
        top.shrink_to_fit();
        out.insert(thread, top);
    }
    out
}

/// Extends each top-level task left open (`incomplete`, ending before `trace_end`) to
/// the last busy sample (any leaf but `(idle)`: native work counts) of its thread's
/// profiles between its start and `trace_end`, when that is later than its end: a thread
/// that went on running the task shows it in its samples after its last event. Profiles
/// are read backwards in 10 s windows from the trace's end until a busy sample is found.
pub(crate) fn end_open_tasks_at_last_busy_sample(
    top: &mut HashMap<ThreadKey, Vec<TopLevelTask>>,
    profiles: &crate::profile::ProfileSet,
    file: Option<&[u8]>,
    trace_end: Timestamp,
) {
    const STEP: TimeDelta = TimeDelta::from_micros(10_000_000);
    for (thread, tasks) in top.iter_mut() {
        for t in tasks
            .iter_mut()
            .filter(|t| t.incomplete && t.end() < trace_end)
        {
            let mut busy: Option<Timestamp> = None;
            for p in profiles.of_thread(*thread) {
                let mut hi = trace_end + TimeDelta::from_nanos(1);
                while hi > t.end() && busy.is_none_or(|b| b < hi) {
                    let lo = (hi - STEP).max(t.end());
                    let w = p.window(lo, hi, file);
                    let rows = w.table.range(lo, hi);
                    let last = rows.rev().find(|&i| {
                        let frame = p.stacks.frame(w.table.stack[i]);
                        p.frames.kind(frame) != crate::profile::tables::FrameKind::Idle
                    });
                    if let Some(i) = last {
                        busy = busy.max(Some(w.table.ts[i]));
                        break;
                    }
                    hi = lo;
                }
            }
            if let Some(b) = busy.filter(|&b| b > t.end()) {
                t.dur = b.since(t.ts);
            }
        }
    }
}

/// True for a worker thread's name (`DedicatedWorker thread`, `ServiceWorker Thread`,
/// `SharedWorker thread`, `unspecified worker thread`), not thread-pool workers.
pub(crate) fn is_worker_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with("worker thread")
}

/// The threads whose tasks are reported under `scope`, sorted.
///
/// Renderer main threads are those named `CrRendererMain`. A trace without any (names
/// stripped, or `--single-process` recordings where page JS runs on `CrBrowserMain`) falls
/// back to the threads that own a profile, which are where JavaScript ran.
#[doc(hidden)]
pub fn threads_in_scope(trace: &ScannedTrace, scope: Scope) -> Vec<ThreadKey> {
    let profiled = trace.profile_threads();
    let name = |k: &ThreadKey| trace.thread_names.get(k).map(String::as_str);
    let mut renderers: Vec<ThreadKey> = trace
        .thread_names
        .iter()
        .filter(|(_, n)| n.as_str() == "CrRendererMain")
        .map(|(k, _)| *k)
        .collect();
    if renderers.is_empty() {
        renderers = profiled
            .iter()
            .copied()
            .filter(|k| !name(k).is_some_and(is_worker_name))
            .collect();
    }
    let mut threads: Vec<ThreadKey> = match scope {
        Scope::MainFrame => {
            let main: Vec<ThreadKey> = renderers
                .iter()
                .copied()
                .filter(|k| trace.main_frame_pids.contains(&k.pid))
                .collect();
            if main.is_empty() { renderers } else { main }
        }
        Scope::Renderers => renderers,
        Scope::All => {
            let mut all = renderers;
            all.extend(
                trace
                    .thread_names
                    .iter()
                    .filter(|(_, n)| is_worker_name(n))
                    .map(|(k, _)| *k),
            );
            all.extend(profiled);
            all
        }
    };
    threads.sort();
    threads.dedup();
    threads
}

/// The long tasks (`dur > threshold`), sorted by (thread, ts).
#[doc(hidden)]
pub fn long_tasks(
    top_level: &HashMap<ThreadKey, Vec<TopLevelTask>>,
    threshold: TimeDelta,
) -> Vec<LongTask> {
    long_tasks_in_order(top_level, threshold).collect()
}

/// [`long_tasks`] one by one, without the list.
pub(crate) fn long_tasks_in_order(
    top_level: &HashMap<ThreadKey, Vec<TopLevelTask>>,
    threshold: TimeDelta,
) -> impl Iterator<Item = LongTask> + '_ {
    let sorted: BTreeMap<&ThreadKey, &Vec<TopLevelTask>> = top_level.iter().collect();
    sorted
        .into_values()
        .flatten()
        .filter(move |t| t.dur > threshold)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{Pid, Tid};

    const T: ThreadKey = ThreadKey {
        pid: Pid(1),
        tid: Tid(1),
    };

    fn x(ts: i64, dur: i64, order: u64) -> TaskMark {
        TaskMark {
            thread: T,
            ts: Timestamp::from_micros(ts),
            kind: MarkKind::Complete(TimeDelta::from_micros(dur)),
            order,
        }
    }
    fn mark(ts: i64, kind: MarkKind, order: u64) -> TaskMark {
        TaskMark {
            thread: T,
            ts: Timestamp::from_micros(ts),
            kind,
            order,
        }
    }
    fn spans(v: &[TopLevelTask]) -> Vec<(i64, i64, bool)> {
        v.iter()
            .map(|t| {
                (
                    t.ts.as_nanos() / 1000,
                    t.dur.as_nanos() / 1000,
                    t.incomplete,
                )
            })
            .collect()
    }

    #[test]
    fn nested_task_events_count_once() {
        // MessageLoop::RunTask 60.6 ms ⊃ ThreadControllerImpl::RunTask 60.1 ms (Chrome 70);
        // the inner one is listed first in the file.
        let marks = [x(1_000_100, 60_100, 0), x(1_000_000, 60_600, 1)];
        let mut d = Diagnostics::default();
        let top = top_level_tasks(&marks, &[T], Timestamp::default(), &mut d);
        assert_eq!(spans(&top[&T]), [(1_000_000, 60_600, false)]);
    }

    #[test]
    fn consecutive_tasks_overlapping_by_microseconds_stay_separate() {
        // The first ends where the second begins (99 995 µs): no sample belongs to both.
        let marks = [x(0, 100_000, 0), x(99_995, 60_000, 1)];
        let mut d = Diagnostics::default();
        let top = top_level_tasks(&marks, &[T], Timestamp::default(), &mut d);
        assert_eq!(
            spans(&top[&T]),
            [(0, 99_995, false), (99_995, 60_000, false)]
        );
        assert_eq!(
            d.kinds(),
            0,
            "a few µs is the known Chrome overlap: no warning"
        );
        // Overlapping by 50 ms (not a nesting: the second ends 50 ms after the first): cut
        // the same way, with a warning.
        let marks = [x(1_000_000, 100_000, 0), x(1_050_000, 100_000, 1)];
        let top = top_level_tasks(&marks, &[T], Timestamp::default(), &mut d);
        assert_eq!(
            spans(&top[&T]),
            [(1_000_000, 50_000, false), (1_050_000, 100_000, false)]
        );
        assert_eq!(
            d.count(
                "top-level tasks overlapping the next by over 1 ms (cut where the next begins)"
            ),
            1
        );
    }

    #[test]
    fn begin_end_pairs_and_open_begin_end_at_the_threads_last_event() {
        let marks = [
            mark(100, MarkKind::Begin { is_task: true }, 0),
            mark(150, MarkKind::Begin { is_task: false }, 1),
            mark(160, MarkKind::End, 2),
            mark(90_100, MarkKind::End, 3),
            mark(200_000, MarkKind::Begin { is_task: true }, 4),
            mark(1, MarkKind::End, 5), // orphan E
            mark(230_000, MarkKind::Begin { is_task: false }, 6),
        ];
        let mut d = Diagnostics::default();
        // The trace ends at 300 ms (another thread's events); this thread's last event is
        // at 230 ms: the open task runs 30 ms, not 100.
        let top = top_level_tasks(&marks, &[T], Timestamp::from_micros(300_000), &mut d);
        assert_eq!(
            spans(&top[&T]),
            [(100, 90_000, false), (200_000, 30_000, true)]
        );
        assert_eq!(d.kinds(), 2);
        assert_eq!(d.count(OPEN_BEGIN), 1);
    }

    #[test]
    fn long_means_strictly_over_threshold() {
        let marks = [x(0, 50_000, 0), x(100_000, 50_001, 1)];
        let top = top_level_tasks(
            &marks,
            &[T],
            Timestamp::default(),
            &mut Diagnostics::default(),
        );
        let long = long_tasks(&top, TimeDelta::from_micros(50_000));
        assert_eq!(spans(&long), [(100_000, 50_001, false)]);
    }

    #[test]
    fn scope_main_frame_picks_renderer_of_main_frame_pid() {
        let mut t = ScannedTrace::default();
        let r1 = ThreadKey {
            pid: Pid(10),
            tid: Tid(1),
        };
        let r2 = ThreadKey {
            pid: Pid(20),
            tid: Tid(1),
        };
        let w = ThreadKey {
            pid: Pid(10),
            tid: Tid(7),
        };
        t.thread_names.insert(r1, "CrRendererMain".into());
        t.thread_names.insert(r2, "CrRendererMain".into());
        t.thread_names.insert(w, "DedicatedWorker thread".into());
        // Trace does not say: every renderer.
        assert_eq!(threads_in_scope(&t, Scope::MainFrame), [r1, r2]);
        t.main_frame_pids.insert(Pid(20));
        assert_eq!(threads_in_scope(&t, Scope::MainFrame), [r2]);
        assert_eq!(threads_in_scope(&t, Scope::Renderers), [r1, r2]);
        assert_eq!(threads_in_scope(&t, Scope::All), [r1, w, r2]);
    }
}

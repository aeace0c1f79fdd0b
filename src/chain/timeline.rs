//! What a task's window looked like beyond its chain: the samples over time
//! ([`Timeline`], for flame charts and speedscope) and the runner-up groups
//! ([`Alternative`]s: the stacks that came after the target's).

use super::window::Weighted;
use super::{ChainFrame, chain_frame};
use crate::profile::{FrameKind, StackIndex};
use crate::time::{TimeDelta, Timestamp};
use crate::vocab::FastMap;

/// A runner-up group of a task's window: the samples of one stack (collapsed as the
/// target's group was) other than the target's.
#[derive(Clone, Debug, PartialEq)]
pub struct Alternative {
    /// Frames root → leaf, without `(root)`, as in a chain.
    pub chain: Vec<ChainFrame>,
    /// Samples in the group.
    pub samples: usize,
    /// Their time, each sample standing until the next, clipped to the window (as the
    /// target's `stack_time`).
    pub time: TimeDelta,
}

/// Runner-ups kept per task.
pub(crate) const ALTERNATIVES: usize = 2;

/// A task window's samples over time ([`super::ChainConfig::collect_timeline`]): runs of
/// consecutive samples on one stack, in time order, over a table of the window's stacks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// The window's start on the trace clock (the task's start − `--lookback-ms`).
    pub start: Timestamp,
    /// The window's length.
    pub length: TimeDelta,
    /// The frames of [`Timeline::stacks`], each once, as chains show them.
    pub frames: Vec<ChainFrame>,
    /// The window's stacks as (parent, frame): `parent` an index into this list (a parent
    /// comes before its children; `None` for an outermost frame), `frame` into
    /// [`Timeline::frames`]. `(root)` is left out.
    pub stacks: Vec<(Option<u32>, u32)>,
    /// The runs, in time order.
    pub runs: Vec<TimelineRun>,
    /// Runs merged into the run before them to keep at most [`TIMELINE_RUNS`] (0: none).
    pub merged_runs: usize,
}

/// Consecutive samples on one stack.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelineRun {
    /// First sample's time − [`Timeline::start`].
    pub start: TimeDelta,
    /// The samples' time (each until the next sample, clipped to the window).
    pub dur: TimeDelta,
    /// Samples.
    pub samples: u32,
    /// Their stack in [`Timeline::stacks`]; `None` when it is `(root)` alone.
    pub stack: Option<u32>,
    /// The samples are among the target's (those the confidence counts).
    pub target: bool,
}

/// Most runs a timeline keeps (a run is ~20 samples; a 1 s task at 0.1 ms is ~500 runs):
/// past it, the shortest gaps between runs are closed by merging runs into the one before.
pub const TIMELINE_RUNS: usize = 5_000;

/// The runner-up groups of `w`: the [`ALTERNATIVES`] largest groups under `group` (`n`
/// groups; ties: earliest first sample) whose stacks are not targets, each with the
/// frames of one of its stacks (`frames_of`).
pub(super) fn alternatives(
    w: &Weighted<'_>,
    n: usize,
    group: impl Fn(StackIndex) -> usize,
    is_target: &dyn Fn(StackIndex) -> bool,
    frames_of: impl Fn(usize, StackIndex) -> Vec<ChainFrame>,
) -> Vec<Alternative> {
    // Per group: (samples, first position, time, a stack of it).
    let mut groups: FastMap<usize, (usize, usize, TimeDelta, StackIndex)> = Default::default();
    for run in w.runs().iter().filter(|r| !is_target(r.stack)) {
        let g = group(run.stack);
        if g >= n {
            continue;
        }
        let e = groups
            .entry(g)
            .or_insert((0, run.start, TimeDelta::ZERO, run.stack));
        e.0 += run.len();
        e.2 = e.2 + w.run_weight(run);
    }
    let mut ranked: Vec<(usize, (usize, usize, TimeDelta, StackIndex))> =
        groups.into_iter().collect();
    ranked.sort_by_key(|&(_, (samples, first, _, _))| (std::cmp::Reverse(samples), first));
    ranked
        .into_iter()
        .take(ALTERNATIVES)
        .map(|(g, (samples, _, time, stack))| Alternative {
            chain: frames_of(g, stack),
            samples,
            time,
        })
        .collect()
}

/// The timeline of `w` over `[start, start + length)`.
pub(super) fn timeline(
    w: &Weighted<'_>,
    start: Timestamp,
    length: TimeDelta,
    is_target: &dyn Fn(StackIndex) -> bool,
) -> Timeline {
    let profile = w.profile;
    let mut t = Timeline {
        start,
        length,
        ..Timeline::default()
    };
    let mut stack_of: FastMap<StackIndex, Option<u32>> = Default::default();
    let mut frame_of: FastMap<crate::profile::FrameIndex, u32> = Default::default();
    let ts = w.ts();
    for run in w.runs() {
        let stack = local_stack(profile, run.stack, &mut stack_of, &mut frame_of, &mut t);
        t.runs.push(TimelineRun {
            start: ts[run.start].since(start),
            dur: w.run_weight(run),
            samples: run.len() as u32,
            stack,
            target: is_target(run.stack),
        });
    }
    t.merged_runs = cap_runs(&mut t.runs, TIMELINE_RUNS);
    t
}

/// The timeline's index of profile stack `s` (added with its parents when new).
fn local_stack(
    profile: &crate::profile::CpuProfile,
    s: StackIndex,
    stack_of: &mut FastMap<StackIndex, Option<u32>>,
    frame_of: &mut FastMap<crate::profile::FrameIndex, u32>,
    t: &mut Timeline,
) -> Option<u32> {
    if let Some(&l) = stack_of.get(&s) {
        return l;
    }
    // The path from `s` up to the first stack already known (or the root).
    let mut path = Vec::new();
    let mut cur = Some(s);
    let mut parent = None;
    while let Some(c) = cur {
        if let Some(&l) = stack_of.get(&c) {
            parent = l;
            break;
        }
        path.push(c);
        cur = profile.stacks.parent(c);
    }
    for &c in path.iter().rev() {
        let f = profile.stacks.frame(c);
        let local = if profile.frames.kind(f) == FrameKind::Root {
            parent
        } else {
            let frame = *frame_of.entry(f).or_insert_with(|| {
                t.frames.push(chain_frame(profile, f));
                (t.frames.len() - 1) as u32
            });
            t.stacks.push((parent, frame));
            Some((t.stacks.len() - 1) as u32)
        };
        stack_of.insert(c, local);
        parent = local;
    }
    parent
}

/// Merges runs into the run before them, shortest first, until at most `max` are left;
/// returns how many were merged. A merged run keeps the earlier run's stack and adds the
/// later one's time and samples.
fn cap_runs(runs: &mut Vec<TimelineRun>, max: usize) -> usize {
    if runs.len() <= max {
        return 0;
    }
    let over = runs.len() - max;
    // The `over` shortest runs after the first (ties: the earlier) are folded away.
    let mut order: Vec<usize> = (1..runs.len()).collect();
    order.sort_by_key(|&i| (runs[i].dur, i));
    let mut gone = vec![false; runs.len()];
    for &i in &order[..over] {
        gone[i] = true;
    }
    let mut out: Vec<TimelineRun> = Vec::with_capacity(max);
    for (i, r) in runs.iter().enumerate() {
        match out.last_mut() {
            Some(last) if gone[i] => {
                last.dur = last.dur + r.dur;
                last.samples += r.samples;
            }
            _ => out.push(*r),
        }
    }
    *runs = out;
    over
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(start_us: i64, dur_us: i64) -> TimelineRun {
        TimelineRun {
            start: TimeDelta::from_micros(start_us),
            dur: TimeDelta::from_micros(dur_us),
            samples: 1,
            stack: Some(0),
            target: false,
        }
    }

    #[test]
    fn capping_runs_folds_the_shortest_into_the_one_before() {
        let mut runs = vec![run(0, 5), run(5, 1), run(6, 3), run(9, 2), run(11, 4)];
        assert_eq!(cap_runs(&mut runs, 3), 2);
        // The 1 µs run went into the first, the 2 µs run into the third.
        let kept: Vec<(i64, i64, u32)> = runs
            .iter()
            .map(|r| {
                (
                    r.start.as_nanos() / 1000,
                    r.dur.as_nanos() / 1000,
                    r.samples,
                )
            })
            .collect();
        assert_eq!(kept, vec![(0, 6, 2), (6, 5, 2), (11, 4, 1)]);
        assert_eq!(cap_runs(&mut runs, 3), 0);
    }
}

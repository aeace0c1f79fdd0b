//! The window of one task and the weight of each sample in it.

use super::Pick;
use crate::profile::{CpuProfile, SampleTable, StackIndex};
use crate::tasks::LongTask;
use crate::time::{TimeDelta, Timestamp};

/// No place, in [`Places`].
const NO_PLACE: u32 = u32::MAX;

/// A map from keys below some `n` (a profile's stacks, a window's collapsed nodes) to
/// places 0, 1, 2… given in the order keys are entered, one per thread and emptied by the
/// entries it holds: a table as long as the profile's stacks, made for each window, cost
/// more than the window's own work.
#[derive(Default)]
pub(super) struct Places {
    /// Key → its place (`NO_PLACE`: not entered).
    place: Vec<u32>,
    /// The keys entered, by place.
    keys: Vec<usize>,
}

thread_local! {
    static PLACES: std::cell::RefCell<Places> = std::cell::RefCell::default();
}

impl Places {
    /// Runs `f` with this thread's map, empty, for keys below `n` (not from inside
    /// another `f` on the same thread: that panics).
    pub(super) fn with<R>(n: usize, f: impl FnOnce(&mut Places) -> R) -> R {
        PLACES.with_borrow_mut(|p| {
            // Emptied here rather than after `f`, so a panic inside it leaves nothing set.
            for k in p.keys.drain(..) {
                p.place[k] = NO_PLACE;
            }
            if p.place.len() < n {
                p.place.resize(n, NO_PLACE);
            }
            f(p)
        })
    }

    /// The place of `key`, given when it is new (then also `true`).
    pub(super) fn enter(&mut self, key: usize) -> (usize, bool) {
        match self.place[key] {
            NO_PLACE => {
                self.place[key] = self.keys.len() as u32;
                self.keys.push(key);
                (self.keys.len() - 1, true)
            }
            p => (p as usize, false),
        }
    }

    /// The place of `key` (entered before).
    pub(super) fn get(&self, key: usize) -> usize {
        self.place[key] as usize
    }

    /// The keys entered, by place.
    pub(super) fn keys(&self) -> &[usize] {
        &self.keys
    }

    /// Sorts the keys and gives them their places in that order.
    pub(super) fn sort(&mut self) {
        self.keys.sort_unstable();
        for (i, &k) in self.keys.iter().enumerate() {
            self.place[k] = i as u32;
        }
    }
}

/// `[ts − lookback, ts + dur)`: half-open, as DevTools counts a sample at exactly
/// `ts + dur` in the next task (docs/METHOD.md §1 step 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    /// Inclusive start.
    pub start: Timestamp,
    /// Exclusive end.
    pub end: Timestamp,
}

impl Window {
    /// The window of `task` with `lookback` before its start.
    pub(crate) fn of(task: &LongTask, lookback: TimeDelta) -> Window {
        Window {
            start: task.ts - lookback,
            end: task.end(),
        }
    }
    /// True when a backward step of the sample times (`(time, time before it)`, from
    /// negative `timeDeltas`) crosses an edge of the window: read in file order, the
    /// samples would enter or leave it more than once, so which samples are in the window
    /// depends on sorting them.
    pub(crate) fn edge_crossed_backwards(&self, steps: &[(Timestamp, Timestamp)]) -> bool {
        let crosses =
            |edge: Timestamp, (t, before): (Timestamp, Timestamp)| t < edge && edge <= before;
        steps
            .iter()
            .any(|&st| crosses(self.start, st) || crosses(self.end, st))
    }

    /// The windows with one edge moved across the span of the backward steps that cross
    /// it: to the earliest time such a step went back to (every sample of the spans on the
    /// inner side of a start, the outer side of an end) and to just past the latest time
    /// one went back from (the other side); at most four, none empty.
    pub(crate) fn with_edges_across(&self, steps: &[(Timestamp, Timestamp)]) -> Vec<Window> {
        let span = |edge: Timestamp| {
            let crossing = steps
                .iter()
                .filter(|&&(t, before)| t < edge && edge <= before);
            let low = crossing.clone().map(|s| s.0).min()?;
            let high = crossing.map(|s| s.1).max()?;
            Some([low, high + TimeDelta::from_nanos(1)])
        };
        let mut out = Vec::new();
        for start in span(self.start).into_iter().flatten() {
            out.push(Window { start, ..*self });
        }
        for end in span(self.end).into_iter().flatten() {
            out.push(Window { end, ..*self });
        }
        out.retain(|w| w.start < w.end);
        out
    }

    /// True when a backward step lies wholly inside the window: the order of samples in it
    /// (and so which of two equal groups came first) depends on sorting them.
    pub(crate) fn holds_backward_step(&self, steps: &[(Timestamp, Timestamp)]) -> bool {
        steps
            .iter()
            .any(|&(t, before)| self.start <= t && before < self.end)
    }
}

/// The candidate samples of one task with their weights: each sample stands for the time
/// from its timestamp to the next sample of the profile, clipped to the window end; the
/// profile's last sample stands for the profile's mean interval (as DevTools weighs it).
/// Weights are not stored: inside the window the rows are sorted, so a weight is the step
/// to the next row, and the weights of a run of rows add up to the step from its first row
/// to the row after it. The candidates are kept as runs of equal stacks (about 95% of real
/// samples repeat their neighbour's stack), and every count over the window goes run by
/// run: a run of n samples is one step of weight [`Weighted::weight_sum`], not n.
pub(super) struct Weighted<'p> {
    /// The profile.
    pub profile: &'p CpuProfile,
    /// The samples read for the window.
    pub table: &'p SampleTable,
    /// First candidate row in `table`.
    pub first: usize,
    /// Number of candidates.
    len: usize,
    /// Weight of the last candidate: to the next known sample, clipped to the window end.
    last_weight: TimeDelta,
    /// The longer of the window's edge gaps (start → first candidate, last → end), or the
    /// whole window when it has no candidate.
    edge_gap: TimeDelta,
    /// The candidates as runs of equal stacks, in time order.
    runs: Vec<Run>,
}

/// Candidates `start..end` of a window, consecutive in time, all on `stack`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Run {
    /// Their stack.
    pub stack: StackIndex,
    /// First candidate.
    pub start: usize,
    /// One past the last candidate.
    pub end: usize,
}

impl Run {
    /// Number of candidates.
    pub(super) fn len(&self) -> usize {
        self.end - self.start
    }
}

/// The length of the run of `v` that `s` starts with. Eight stacks at a time while they
/// all equal `v` (a comparison the compiler does in vector registers: runs are ~20 long),
/// then one by one.
fn run_length(s: &[StackIndex], v: StackIndex) -> usize {
    let mut i = 0;
    while let Some(eight) = s.get(i..i + 8) {
        if !eight.iter().fold(true, |all, &x| all & (x == v)) {
            break;
        }
        i += 8;
    }
    i + s[i..].iter().position(|&x| x != v).unwrap_or(s.len() - i)
}

impl<'p> Weighted<'p> {
    /// Weighs the rows `rows` (all inside `window`) of `table`, read from `profile` (and
    /// `file`, the trace for chunks left in it).
    pub(super) fn new(
        profile: &'p CpuProfile,
        table: &'p SampleTable,
        rows: std::ops::Range<usize>,
        window: &Window,
        file: Option<&[u8]>,
    ) -> Self {
        let rows_ts = &table.ts[rows.clone()];
        let (last_weight, edge_gap) = match (rows_ts.first(), rows_ts.last()) {
            (Some(&first), Some(&last)) => {
                // The table holds every known sample of the chunks meeting the window, so
                // a missing next row means the next known sample is in a chunk wholly after
                // the window end — or there is none (later samples, if any, name no node).
                let next = match table.ts.get(rows.end) {
                    Some(&t) => t,
                    None if profile.last_known_sample(file).is_some_and(|l| last < l) => window.end,
                    None => last + profile.mean_interval,
                };
                (
                    next.min(window.end).since(last).max(TimeDelta::ZERO),
                    first.since(window.start).max(window.end.since(last)),
                )
            }
            _ => (TimeDelta::ZERO, window.end.since(window.start)),
        };
        let stacks = &table.stack[rows.clone()];
        let mut runs = Vec::new();
        let mut k = 0;
        while k < stacks.len() {
            let stack = stacks[k];
            let end = k + run_length(&stacks[k..], stack);
            runs.push(Run {
                stack,
                start: k,
                end,
            });
            k = end;
        }
        Weighted {
            profile,
            table,
            first: rows.start,
            len: rows.len(),
            last_weight,
            edge_gap,
            runs,
        }
    }

    /// Number of candidates.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Times of the candidates, sorted.
    pub(super) fn ts(&self) -> &[Timestamp] {
        &self.table.ts[self.first..self.first + self.len]
    }

    /// The candidates as runs of equal stacks, in time order.
    pub(super) fn runs(&self) -> &[Run] {
        &self.runs
    }

    /// The candidates as runs of equal stacks, in time order: each run's stack and its
    /// candidates `start..end`.
    pub(super) fn stack_runs(
        &self,
    ) -> impl Iterator<Item = (StackIndex, std::ops::Range<usize>)> + '_ {
        self.runs.iter().map(|r| (r.stack, r.start..r.end))
    }

    /// The weights of the candidates of `run` added up ([`Weighted::weight_sum`]).
    pub(super) fn run_weight(&self, run: &Run) -> TimeDelta {
        self.weight_sum(run.start, run.end)
    }

    /// Weight of candidate `k`: the step to the next candidate; for the last one, to the
    /// next known sample, clipped to the window end.
    #[cfg(test)]
    pub(super) fn weight(&self, k: usize) -> TimeDelta {
        self.weight_sum(k, k + 1)
    }

    /// The weights of candidates `from..to` (`from` < `to` ≤ [`Weighted::len`]) added up,
    /// saturating: their steps add up to the step from `from` to `to` (to the last
    /// candidate, plus its own weight, when `to` is the end). Computed wide, so a step
    /// that saturates on its own makes the sum saturate too, as adding them would.
    pub(super) fn weight_sum(&self, from: usize, to: usize) -> TimeDelta {
        let ts = self.ts();
        let wide = |t: Timestamp| t.as_nanos() as i128;
        let sum = match ts.get(to) {
            Some(&end) => wide(end) - wide(ts[from]),
            None => wide(ts[to - 1]) - wide(ts[from]) + self.last_weight.as_nanos() as i128,
        };
        TimeDelta::from_nanos(sum.min(i64::MAX as i128) as i64)
    }

    /// docs/METHOD.md §1 step 3: the largest group of candidates with the same stack; ties go to the
    /// group whose first sample is earliest.
    pub(super) fn largest_stack(&self) -> Option<Pick> {
        let (stack, samples, time, tied) =
            self.largest_group(self.profile.stacks.len(), |s| s.index())?;
        Some(Pick {
            target: super::Target::Stack(StackIndex::new(stack)),
            samples,
            time,
            tied,
            subtree: false,
        })
    }

    /// The largest group of candidates when `group(s)` (< `n`) is the group of the
    /// candidates on stack `s` (the stack itself, or its collapsed stack): (group, samples,
    /// time, tied with another group); ties go to the group whose first sample is
    /// earliest. `None` without candidates.
    pub(super) fn largest_group(
        &self,
        n: usize,
        group: impl Fn(StackIndex) -> usize,
    ) -> Option<(usize, usize, TimeDelta, bool)> {
        Places::with(n, |places| {
            // Per group, in the order met: (count, first position, time). Run by run: a
            // group's time is the sum of its runs' (weights are never negative, so adding
            // the runs' saturating sums saturates where adding every weight would).
            let mut groups: Vec<(usize, usize, TimeDelta)> = Vec::new();
            for run in &self.runs {
                let (l, new) = places.enter(group(run.stack));
                if new {
                    groups.push((0, run.start, TimeDelta::ZERO));
                }
                let e = &mut groups[l];
                e.0 += run.len();
                e.2 = e.2 + self.run_weight(run);
            }
            let (l, &(samples, _, time)) = groups
                .iter()
                .enumerate()
                .max_by_key(|(_, e)| (e.0, std::cmp::Reverse(e.1)))?;
            let tied = groups
                .iter()
                .enumerate()
                .any(|(k, e)| k != l && e.0 == samples);
            Some((places.keys()[l], samples, time, tied))
        })
    }

    /// True when some stretch of the window without a sample is longer than `gap`: from the
    /// window start to the first candidate, between candidates, or from the last one to
    /// the window end.
    pub(super) fn has_gap_over(&self, gap: TimeDelta) -> bool {
        self.edge_gap > gap || has_step_over(self.ts(), gap)
    }
}

/// True when a step between consecutive times of `ts` (sorted) is longer than `gap`. The
/// steps of a stretch add up to its span, so a stretch spanning no more than `gap` holds no
/// longer step: halves are looked into only while they span more, and a window of
/// thousands of samples costs a few hundred spans, not a step per sample.
fn has_step_over(ts: &[Timestamp], gap: TimeDelta) -> bool {
    let (Some(&first), Some(&last)) = (ts.first(), ts.last()) else {
        return false;
    };
    if last.since(first) <= gap {
        return false;
    }
    if ts.len() <= 32 {
        return ts.windows(2).any(|p| p[1].since(p[0]) > gap);
    }
    // The halves share the middle row, so every step is in one of them.
    let mid = ts.len() / 2;
    has_step_over(&ts[..=mid], gap) || has_step_over(&ts[mid..], gap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_over_the_gap_is_found_by_halves_as_by_every_step() {
        // Sorted pseudo-random times with steps of 0–99 ns, some 1 µs, and times near the
        // ends of the clock (steps that saturate): the halving answer is the plain one's.
        let mut x = 7u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let every_step = |ts: &[Timestamp], gap| ts.windows(2).any(|p| p[1].since(p[0]) > gap);
        for case in 0..300 {
            let mut t = if case % 10 == 0 { i64::MIN + 50 } else { 0 };
            let ts: Vec<Timestamp> = (0..next(300))
                .map(|_| {
                    t = t.saturating_add(if next(50) == 0 {
                        1000
                    } else {
                        next(100) as i64
                    });
                    if case % 10 == 0 && next(100) == 0 {
                        t = t.max(i64::MAX - 40);
                    }
                    Timestamp::from_nanos(t)
                })
                .collect();
            for gap in [0, 50, 98, 99, 500, 999, 1000, i64::MAX - 1, i64::MAX] {
                let gap = TimeDelta::from_nanos(gap);
                assert_eq!(
                    has_step_over(&ts, gap),
                    every_step(&ts, gap),
                    "case {case}, gap {gap:?}"
                );
            }
        }
        // A 2 µs step among 1000 steps of 10 ns, at either end or inside.
        for at in [0, 500, 999] {
            let ts: Vec<Timestamp> = (0..=1000)
                .map(|k| Timestamp::from_nanos(k * 10 + if k > at { 2000 } else { 0 }))
                .collect();
            assert!(has_step_over(&ts, TimeDelta::from_nanos(2000)), "{at}");
            assert!(!has_step_over(&ts, TimeDelta::from_nanos(2010)), "{at}");
        }
    }

    #[test]
    fn runs_are_the_longest_stretches_of_one_stack() {
        let s = |v: &[usize]| v.iter().map(|&i| StackIndex::new(i)).collect::<Vec<_>>();
        // Runs over 8 long and short, at the ends.
        let stacks = s(&[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 1]);
        assert_eq!(run_length(&stacks, StackIndex::new(1)), 10);
        assert_eq!(run_length(&stacks[10..], StackIndex::new(2)), 1);
        assert_eq!(run_length(&stacks[11..], StackIndex::new(3)), 8);
        assert_eq!(run_length(&stacks[19..], StackIndex::new(1)), 1);
        assert_eq!(run_length(&stacks[..16], StackIndex::new(1)), 10);
        assert_eq!(run_length(&s(&[4; 16]), StackIndex::new(4)), 16);
        assert_eq!(run_length(&[], StackIndex::new(4)), 0);
    }
}

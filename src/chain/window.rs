//! The window of one task and the weight of each sample in it.

use super::Pick;
use crate::profile::{CpuProfile, SampleTable, StackIndex};
use crate::tasks::LongTask;
use crate::time::{TimeDelta, Timestamp};

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
/// to the row after it.
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
        Weighted {
            profile,
            table,
            first: rows.start,
            len: rows.len(),
            last_weight,
            edge_gap,
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

    /// Stack of candidate `k`.
    pub(super) fn stack(&self, k: usize) -> StackIndex {
        self.table.stack[self.first + k]
    }

    /// The candidates as runs of equal stacks, in time order: each run's stack and its
    /// candidates `start..end` (samples mostly repeat their neighbour's stack, so a window
    /// holds few runs).
    pub(super) fn stack_runs(
        &self,
    ) -> impl Iterator<Item = (StackIndex, std::ops::Range<usize>)> + '_ {
        let mut k = 0;
        std::iter::from_fn(move || {
            if k >= self.len() {
                return None;
            }
            let (stack, first) = (self.stack(k), k);
            while k < self.len() && self.stack(k) == stack {
                k += 1;
            }
            Some((stack, first..k))
        })
    }

    /// Weight of candidate `k`: the step to the next candidate; for the last one, to the
    /// next known sample, clipped to the window end.
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
            self.largest_group(self.profile.stacks.len(), |k| self.stack(k).index())?;
        Some(Pick {
            target: super::Target::Stack(StackIndex::new(stack)),
            samples,
            time,
            tied,
            subtree: false,
        })
    }

    /// The largest group of candidates when `group(k)` (< `n`) is candidate `k`'s group
    /// (its stack, or its collapsed stack): (group, samples, time, tied with another
    /// group); ties go to the group whose first sample is earliest. `None` without
    /// candidates.
    pub(super) fn largest_group(
        &self,
        n: usize,
        group: impl Fn(usize) -> usize,
    ) -> Option<(usize, usize, TimeDelta, bool)> {
        // Per group: (count, first position, time), indexed densely.
        let mut groups: Vec<(usize, usize, TimeDelta)> = vec![(0, usize::MAX, TimeDelta::ZERO); n];
        // Run by run of equal groups (samples mostly repeat their neighbour's stack), so
        // the counters are written once per run, not read back after every sample.
        let mut k = 0;
        while k < self.len() {
            let (g, first) = (group(k), k);
            while k < self.len() && group(k) == g {
                k += 1;
            }
            let time = self.weight_sum(first, k);
            let e = &mut groups[g];
            if e.0 == 0 {
                e.1 = first;
            }
            e.0 += k - first;
            e.2 = e.2 + time;
        }
        let (g, &(samples, _, time)) = groups
            .iter()
            .enumerate()
            .filter(|(_, e)| e.0 > 0)
            .max_by_key(|(_, e)| (e.0, std::cmp::Reverse(e.1)))?;
        let tied = groups
            .iter()
            .enumerate()
            .any(|(s, e)| s != g && e.0 == samples);
        Some((g, samples, time, tied))
    }

    /// True when some stretch of the window without a sample is longer than `gap`: from the
    /// window start to the first candidate, between candidates, or from the last one to
    /// the window end.
    pub(super) fn has_gap_over(&self, gap: TimeDelta) -> bool {
        self.edge_gap > gap || self.ts().windows(2).any(|p| p[1].since(p[0]) > gap)
    }
}

//! A profile's samples, placed in time chunk by chunk and read one window at a time.
//!
//! Each chunk's place comes from its deltas summary alone: its base is `t0` plus the sums
//! of the chunks before it, its span is base + its lowest and highest running sum (samples
//! may be out of order, so first and last are not the bounds). A window's samples are read
//! from the chunks whose span meets it — every sample inside the window is in one of them
//! — so memory holds one window's samples at a time, never the whole profile.

use std::collections::HashMap;

use super::index::StackIndex;
use super::tables::SampleTable;
use crate::scan::records::{NodeId, ProfileChunk};
use crate::time::{TimeDelta, Timestamp};

/// Node id → stack: a dense table when ids are small (Chrome numbers nodes 1, 2, 3, …),
/// a hash map otherwise.
#[derive(Debug)]
pub enum NodeStacks {
    /// `dense[id]`, `None` for ids no node has.
    Dense(Vec<Option<StackIndex>>),
    /// Sparse or large ids.
    Sparse(HashMap<NodeId, StackIndex>),
}

impl NodeStacks {
    /// The map for (id, stack) pairs.
    pub fn new(pairs: impl Iterator<Item = (NodeId, StackIndex)> + Clone) -> NodeStacks {
        let (n, max) = pairs
            .clone()
            .fold((0usize, -1i64), |(n, m), (id, _)| (n + 1, m.max(id.0)));
        let all_small = pairs.clone().all(|(id, _)| id.0 >= 0);
        if all_small && max < (4 * n as i64).max(1 << 16) {
            let mut dense = vec![None; (max + 1) as usize];
            for (id, s) in pairs {
                dense[id.0 as usize] = Some(s);
            }
            NodeStacks::Dense(dense)
        } else {
            NodeStacks::Sparse(pairs.collect())
        }
    }

    /// The stack of node `id`.
    #[inline]
    pub fn get(&self, id: NodeId) -> Option<StackIndex> {
        match self {
            NodeStacks::Dense(d) => usize::try_from(id.0)
                .ok()
                .and_then(|i| d.get(i).copied().flatten()),
            NodeStacks::Sparse(m) => m.get(&id).copied(),
        }
    }
}

/// The samples of the chunks that meet one window, sorted by time (ties in profile order).
#[derive(Debug, Default)]
pub struct WindowSamples {
    /// Times and stacks.
    pub table: SampleTable,
    /// Times of samples that came with a negative delta, sorted.
    pub reordered: Vec<Timestamp>,
    /// Samples naming no node (left out).
    pub unknown: u64,
    /// Chunks whose arrays could not be read.
    pub unreadable: u64,
}

/// All chunks of a profile with samples, placed: `chunks[i]` (moved here, not copied)
/// starts at `base[i]`.
#[derive(Debug, Default)]
pub struct Placement {
    chunks: Vec<ProfileChunk>,
    base: Vec<Timestamp>,
    /// Chunk indices sorted by earliest sample time.
    by_lo: Vec<u32>,
    /// Longest span of a chunk.
    widest: TimeDelta,
    /// Number of samples of all chunks.
    count: u64,
}

impl Placement {
    /// Places `chunks` (in profile order) from `t0`; chunks without samples are dropped.
    pub fn new(t0: Timestamp, mut chunks: Vec<ProfileChunk>) -> Placement {
        let mut base = Vec::with_capacity(chunks.len());
        let (mut t, mut n) = (t0, 0u64);
        chunks.retain(|c| {
            let s = c.samples.summary();
            let keep = s.count > 0;
            if keep {
                base.push(t);
            }
            t = t + s.sum;
            n += s.count as u64;
            keep
        });
        chunks.shrink_to_fit();
        let mut p = Placement {
            chunks,
            base,
            by_lo: Vec::new(),
            widest: TimeDelta::ZERO,
            count: n,
        };
        let mut by_lo: Vec<u32> = (0..p.chunks.len() as u32).collect();
        by_lo.sort_unstable_by_key(|&i| (p.lo(i as usize), i));
        p.widest = (0..p.chunks.len())
            .map(|i| p.hi(i).since(p.lo(i)))
            .max()
            .unwrap_or_default();
        p.by_lo = by_lo;
        p
    }

    /// Earliest sample time of chunk `i`.
    fn lo(&self, i: usize) -> Timestamp {
        self.base[i] + self.chunks[i].samples.summary().min_prefix
    }

    /// Latest sample time of chunk `i`.
    fn hi(&self, i: usize) -> Timestamp {
        self.base[i] + self.chunks[i].samples.summary().max_prefix
    }

    /// Number of samples in all chunks.
    pub fn sample_count(&self) -> u64 {
        self.count
    }

    /// (earliest, latest) sample time.
    pub fn bounds(&self) -> Option<(Timestamp, Timestamp)> {
        let lo = (0..self.chunks.len()).map(|i| self.lo(i)).min()?;
        let hi = (0..self.chunks.len()).map(|i| self.hi(i)).max()?;
        Some((lo, hi))
    }

    /// Indices of the chunks whose span meets `[start, end)`, in profile order.
    pub fn meeting(&self, start: Timestamp, end: Timestamp) -> Vec<usize> {
        let from = self
            .by_lo
            .partition_point(|&i| self.lo(i as usize) < start - self.widest);
        let mut out: Vec<usize> = self.by_lo[from..]
            .iter()
            .map(|&i| i as usize)
            .take_while(|&i| self.lo(i) < end)
            .filter(|&i| self.hi(i) >= start)
            .collect();
        out.sort_unstable();
        out
    }

    /// The samples of the chunks that meet `[start, end)`, read from `file` where needed.
    pub fn window(
        &self,
        start: Timestamp,
        end: Timestamp,
        file: Option<&[u8]>,
        stacks: &NodeStacks,
    ) -> WindowSamples {
        let mut out = WindowSamples::default();
        let (mut ts, mut stack) = (Vec::new(), Vec::new());
        let (mut ids, mut deltas) = (Vec::new(), Vec::new());
        let mut sorted = true;
        // Chunks in profile order: rows are appended in profile order, so a stable sort by
        // time alone gives (time, profile order).
        for i in self.meeting(start, end) {
            if !self.chunks[i]
                .samples
                .read_into(file, &mut ids, &mut deltas)
            {
                out.unreadable += 1;
                continue;
            }
            let mut t = self.base[i];
            for (id, d) in ids.iter().zip(&deltas) {
                t = t + *d;
                if d.is_negative() {
                    out.reordered.push(t);
                }
                match stacks.get(*id) {
                    Some(s) => {
                        sorted &= ts.last().is_none_or(|&last| last <= t);
                        ts.push(t);
                        stack.push(s);
                    }
                    None => out.unknown += 1,
                }
            }
        }
        if !sorted {
            // Pairs sorted in place (no gathers through an index): the sort is stable and
            // finds the long sorted runs that a few negative deltas leave.
            let mut rows: Vec<(Timestamp, StackIndex)> = ts.into_iter().zip(stack).collect();
            rows.sort_by_key(|r| r.0);
            (ts, stack) = rows.into_iter().unzip();
        }
        out.reordered.sort_unstable();
        out.table = SampleTable { ts, stack };
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::records::SampleArrays;

    fn arrays(deltas: &[i64]) -> ProfileChunk {
        ProfileChunk {
            ts: Timestamp::default(),
            order: 0,
            samples: SampleArrays::read_now(
                deltas.iter().map(|_| NodeId(1)).collect(),
                deltas.iter().map(|&d| TimeDelta::from_micros(d)).collect(),
            ),
        }
    }

    #[test]
    fn chunks_are_placed_from_running_sums() {
        // t0 100; chunk A deltas 10, -4, 20 → 110, 106, 126; an empty chunk; chunk B 5 → 131.
        let p = Placement::new(
            Timestamp::from_micros(100),
            vec![arrays(&[10, -4, 20]), arrays(&[]), arrays(&[5])],
        );
        let us = |t: Timestamp| t.as_nanos() / 1000;
        let spans: Vec<_> = (0..p.chunks.len())
            .map(|i| (us(p.base[i]), us(p.lo(i)), us(p.hi(i))))
            .collect();
        assert_eq!(spans, [(100, 106, 126), (126, 131, 131)]);
        assert_eq!(p.sample_count(), 4);
        // [127, 200) meets only B; [100, 106) meets none (A starts at 106); [106, 107) A.
        let t = Timestamp::from_micros;
        assert_eq!(p.meeting(t(127), t(200)), [1]);
        assert_eq!(p.meeting(t(100), t(106)), Vec::<usize>::new());
        assert_eq!(p.meeting(t(106), t(107)), [0]);
        let stacks = NodeStacks::new([(NodeId(1), StackIndex::new(0))].into_iter());
        let w = p.window(t(0), t(1000), None, &stacks);
        assert_eq!(
            w.table.ts.iter().map(|&x| us(x)).collect::<Vec<_>>(),
            [106, 110, 126, 131]
        );
        assert_eq!(w.reordered, [t(106)]);
    }

    #[test]
    fn node_stacks_dense_and_sparse() {
        let s = StackIndex::new(3);
        let dense = NodeStacks::new([(NodeId(1), s), (NodeId(7), s)].into_iter());
        assert!(matches!(dense, NodeStacks::Dense(_)));
        assert_eq!(dense.get(NodeId(7)), Some(s));
        assert_eq!(dense.get(NodeId(2)), None);
        assert_eq!(dense.get(NodeId(-1)), None);
        let sparse = NodeStacks::new([(NodeId(1 << 40), s)].into_iter());
        assert!(matches!(sparse, NodeStacks::Sparse(_)));
        assert_eq!(sparse.get(NodeId(1 << 40)), Some(s));
    }
}

//! The three tables of docs/METHOD.md §1: samples, stacks, frames (as in the JS Self-Profiling API's
//! `ProfilerTrace` and the Firefox Profiler's processed format).
//!
//! Columnar; stacks are interned by (frame, parent) and stored parents-first, so a
//! parent's index is always smaller than its child's; frames are interned by their whole
//! `callFrame`.

use super::index::{FrameIndex, StackIndex};
use crate::time::Timestamp;
use crate::vocab::CallFrame;

/// What a frame is, from its function name: V8's VM-state pseudo frames or real code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// `(root)`: the synthetic root, left out of chains.
    Root,
    /// `(program)`: native work outside JS (style, layout, parsing, browser code).
    Program,
    /// `(idle)`.
    Idle,
    /// `(garbage collector)`.
    GarbageCollector,
    /// `(no stack)`: field samples taken while no JS ran (or only cross-origin JS the
    /// profiler may not show).
    NoStack,
    /// JavaScript (or any other named frame).
    Code,
}

impl FrameKind {
    fn of(name: &str) -> FrameKind {
        match name {
            "(root)" => FrameKind::Root,
            "(program)" => FrameKind::Program,
            "(idle)" => FrameKind::Idle,
            "(garbage collector)" => FrameKind::GarbageCollector,
            crate::vocab::NO_STACK => FrameKind::NoStack,
            _ => FrameKind::Code,
        }
    }
    /// True for a VM state (`(program)`, `(idle)`, `(garbage collector)`): no JS ran.
    pub fn is_vm_state(self) -> bool {
        matches!(
            self,
            FrameKind::Program | FrameKind::Idle | FrameKind::GarbageCollector | FrameKind::NoStack
        )
    }
}

/// Call frames, one row per distinct `callFrame`. Each frame's strings are held once, in
/// its row: the index maps a frame's hash to its row (a profile of 120,000 nodes held
/// every name and URL three times, with the nodes' copy and a key's).
#[derive(Debug, Default)]
pub struct FrameTable {
    frames: Vec<CallFrame>,
    kinds: Vec<FrameKind>,
    hasher: foldhash::fast::RandomState,
    by_hash: crate::vocab::FastMap<u64, FrameIndex>,
    /// Frames whose hash an unequal frame had first (a 64-bit collision: rare), by value.
    collided: crate::vocab::FastMap<CallFrame, FrameIndex>,
}

impl FrameTable {
    /// An empty table whose index has room for `n` frames (a profile has at most one per
    /// node, often far fewer: the rows themselves grow as frames come).
    pub fn with_capacity(n: usize) -> FrameTable {
        FrameTable {
            by_hash: crate::vocab::FastMap::with_capacity_and_hasher(n, Default::default()),
            ..FrameTable::default()
        }
    }

    /// Row of `cf`, added (a copy: its texts are shared) when new.
    pub fn intern(&mut self, cf: &CallFrame) -> FrameIndex {
        use std::hash::BuildHasher;
        let h = self.hasher.hash_one(cf);
        match self.by_hash.get(&h) {
            Some(&i) if self.frames[i.index()] == *cf => i,
            Some(_) => match self.collided.get(cf) {
                Some(&i) => i,
                None => {
                    let i = self.push(cf.clone());
                    self.collided.insert(cf.clone(), i);
                    i
                }
            },
            None => {
                let i = self.push(cf.clone());
                self.by_hash.insert(h, i);
                i
            }
        }
    }

    fn push(&mut self, cf: CallFrame) -> FrameIndex {
        let i = FrameIndex::new(self.frames.len());
        self.kinds.push(FrameKind::of(&cf.function_name));
        self.frames.push(cf);
        i
    }
    /// The call frame of row `i`.
    pub fn get(&self, i: FrameIndex) -> &CallFrame {
        &self.frames[i.index()]
    }
    /// The kind of row `i`.
    pub fn kind(&self, i: FrameIndex) -> FrameKind {
        self.kinds[i.index()]
    }
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.frames.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

/// Stacks: row *i* is frame `frame[i]` called from stack `parent[i]` (`None`: a root).
#[derive(Debug, Default)]
pub struct StackTable {
    frame: Vec<FrameIndex>,
    parent: Vec<Option<StackIndex>>,
    index: crate::vocab::FastMap<(FrameIndex, Option<StackIndex>), StackIndex>,
}

impl StackTable {
    /// An empty table with room for `n` stacks (a profile has at most one per node).
    pub fn with_capacity(n: usize) -> StackTable {
        StackTable {
            frame: Vec::with_capacity(n),
            parent: Vec::with_capacity(n),
            index: crate::vocab::FastMap::with_capacity_and_hasher(n, Default::default()),
        }
    }

    /// Row of (frame, parent), added when new. `parent` must already be a row.
    pub fn intern(&mut self, frame: FrameIndex, parent: Option<StackIndex>) -> StackIndex {
        *self.index.entry((frame, parent)).or_insert_with(|| {
            self.frame.push(frame);
            self.parent.push(parent);
            StackIndex::new(self.frame.len() - 1)
        })
    }
    /// The frame of stack `s` (its leaf).
    pub fn frame(&self, s: StackIndex) -> FrameIndex {
        self.frame[s.index()]
    }
    /// The caller's stack of `s`.
    pub fn parent(&self, s: StackIndex) -> Option<StackIndex> {
        self.parent[s.index()]
    }
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.frame.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.frame.is_empty()
    }
}

/// Samples sorted by time: `ts[i]` (trace clock) and the stack that was executing.
#[derive(Debug, Default)]
pub struct SampleTable {
    /// Sample times, ascending.
    pub ts: Vec<Timestamp>,
    /// Stack of each sample.
    pub stack: Vec<StackIndex>,
}

impl SampleTable {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.ts.len()
    }
    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.ts.is_empty()
    }
    /// The range of sample rows with `start <= ts < end` (binary search).
    pub fn range(&self, start: Timestamp, end: Timestamp) -> std::ops::Range<usize> {
        let a = self.ts.partition_point(|&t| t < start);
        let b = self.ts.partition_point(|&t| t < end);
        a..b.max(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cf(name: &str) -> CallFrame {
        CallFrame {
            function_name: name.into(),
            line_number: -1,
            column_number: -1,
            ..Default::default()
        }
    }

    #[test]
    fn stacks_dedup_by_frame_and_parent() {
        let mut f = FrameTable::default();
        let mut s = StackTable::default();
        let root = s.intern(f.intern(&cf("(root)")), None);
        let a1 = s.intern(f.intern(&cf("a")), Some(root));
        let a2 = s.intern(f.intern(&cf("a")), Some(root));
        let b = s.intern(f.intern(&cf("b")), Some(a1));
        let a_under_b = s.intern(f.intern(&cf("a")), Some(b));
        assert_eq!(a1, a2);
        assert_ne!(a1, a_under_b);
        assert_eq!(s.len(), 4);
        assert_eq!(f.len(), 3);
        assert!(s.parent(b).unwrap() < b);
        assert_eq!(f.kind(s.frame(root)), FrameKind::Root);
    }

    #[test]
    fn sample_range_is_half_open() {
        let t = SampleTable {
            ts: [10, 20, 20, 30].map(Timestamp::from_micros).to_vec(),
            stack: vec![StackIndex::new(0); 4],
        };
        assert_eq!(
            t.range(Timestamp::from_micros(20), Timestamp::from_micros(30)),
            1..3
        );
        assert_eq!(
            t.range(Timestamp::from_micros(31), Timestamp::from_micros(40)),
            4..4
        );
    }
}

//! One profile's nodes and samples, gathered chunk by chunk, → [`CpuProfile`].
//!
//! Nodes arrive incrementally and a parent may be defined in a later chunk, so nodes are
//! linked only in [`ProfileBuilder::finish`]. A node gives its parent by `parent` (trace
//! chunks) or is named in its parent's `children` (CDP style); the first definition of a
//! node id wins. Sample *i*'s time is `t0` plus the sum of `timeDeltas[0..=i]` over the
//! chunks in order, summed exactly in i64 ns (never clamped); samples are then sorted
//! stably by time, since negative deltas mean out-of-order samples.
//! Samples are not read here: chunks are only placed in time ([`Placement`]) and read one
//! window at a time by the chain stage.

use super::index::StackIndex;
use super::samples::{NodeStacks, Placement};
use super::tables::{FrameTable, StackTable};
use super::{CpuProfile, Origin};
use crate::scan::records::{ChunkData, Node, PackedStore, ProfileChunk, ProfileData};
use crate::time::{TimeDelta, Timestamp};
use crate::vocab::Diagnostics;
use crate::vocab::{NodeId, ProfileId, ThreadKey};

/// Gathers one profile's chunks.
pub(crate) struct ProfileBuilder {
    origin: Origin,
    nodes: Vec<Node>,
    node_row: crate::vocab::FastMap<NodeId, usize>,
    chunks: Vec<ProfileChunk>,
    /// The packed arrays of the chunks read from a stream.
    store: PackedStore,
    duplicate_nodes: u64,
}

impl ProfileBuilder {
    /// A profile of `thread` whose deltas count from `t0`.
    pub(crate) fn new(origin: Origin) -> Self {
        ProfileBuilder {
            origin,
            nodes: Vec::new(),
            node_row: Default::default(),
            chunks: Vec::new(),
            store: PackedStore::default(),
            duplicate_nodes: 0,
        }
    }

    /// Adds the next chunk of a whole profile (a `CpuProfile` event, tests): chunks added
    /// this way stay in the order added.
    pub(crate) fn add_chunk(&mut self, data: ChunkData) {
        self.add_nodes(data.nodes);
        self.chunks.push(ProfileChunk {
            ts: Timestamp::default(),
            samples: data.samples,
        });
    }

    /// Adds the `ProfileChunk`s of the profile: taken in (ts, file order) order (file
    /// order equalled ts order in every trace seen; sorting makes it certain).
    pub(crate) fn add_profile_data(&mut self, mut data: ProfileData) {
        data.nodes.sort_unstable_by_key(|c| (c.ts, c.order));
        // Room for every node at once: the id map grew by rehashing ~20 times.
        let n: usize = data.nodes.iter().map(|c| c.nodes.len()).sum();
        self.node_row.reserve(n);
        self.nodes.reserve(n);
        for c in data.nodes {
            self.add_nodes(c.nodes);
        }
        // Stable: ties stay in file order, the order collected.
        if !data.chunks.is_sorted_by_key(|c| c.ts) {
            data.chunks.sort_by_key(|c| c.ts);
        }
        self.chunks = data.chunks;
        self.store = data.store;
        self.store.shrink();
    }

    fn add_nodes(&mut self, nodes: Vec<Node>) {
        for n in nodes {
            if self.node_row.contains_key(&n.id) {
                self.duplicate_nodes += 1;
                continue;
            }
            self.node_row.insert(n.id, self.nodes.len());
            self.nodes.push(n);
        }
    }

    /// Links nodes, interns stacks and frames, and places the chunks in time.
    pub(crate) fn finish(self, diagnostics: &mut Diagnostics) -> CpuProfile {
        diagnostics.add(
            "profile nodes defined twice (first definition kept)",
            self.duplicate_nodes,
        );
        let parent_row = self.parent_rows(diagnostics);
        let mut frames = FrameTable::with_capacity(self.nodes.len());
        let mut stacks = StackTable::with_capacity(self.nodes.len());
        let (node_stack, cycles) =
            intern_stacks(&self.nodes, &parent_row, &mut frames, &mut stacks);
        diagnostics.add(
            "parent cycles among profile nodes (cut where they close: chains may be short)",
            cycles,
        );
        let node_stacks =
            NodeStacks::new(self.nodes.iter().zip(&node_stack).map(|(n, s)| (n.id, *s)));
        let placement = Placement::new(self.origin.t0, self.chunks, self.store);
        let sample_count = placement.sample_count();
        let bounds = placement.bounds();
        if bounds.is_some_and(|(_, last)| last < self.origin.t0) {
            diagnostics.add(
                "profiles whose samples all run before the profile's start (negative \
                 timeDeltas): their times are as the deltas say",
                1,
            );
        }
        let mean_interval = match bounds {
            Some((lo, hi)) if sample_count > 1 => {
                TimeDelta::from_nanos(hi.since(lo).as_nanos() / (sample_count as i64 - 1))
            }
            _ => TimeDelta::ZERO,
        };
        CpuProfile {
            origin: self.origin,
            frames,
            stacks,
            node_stacks,
            placement,
            sample_count,
            first_sample: bounds.map(|b| b.0),
            last_sample: bounds.map(|b| b.1),
            mean_interval,
        }
    }

    /// Row of each node's parent: from `parent`, else from a `children` list naming it.
    fn parent_rows(&self, diagnostics: &mut Diagnostics) -> Vec<Option<usize>> {
        let mut from_children: crate::vocab::FastMap<NodeId, NodeId> = Default::default();
        from_children.reserve(self.nodes.iter().map(|n| n.children.len()).sum());
        for n in &self.nodes {
            for c in &n.children {
                from_children.entry(*c).or_insert(n.id);
            }
        }
        let mut unknown = 0u64;
        let rows = self
            .nodes
            .iter()
            .map(|n| {
                let p = n.parent.or_else(|| from_children.get(&n.id).copied())?;
                let row = self.node_row.get(&p).copied();
                unknown += row.is_none() as u64;
                row
            })
            .collect();
        diagnostics.add(
            "profile nodes whose parent is never defined (kept as roots)",
            unknown,
        );
        rows
    }
}

/// The stack of every node (by row), interning parents first, and the number of parent
/// cycles met. A cycle (corrupt input) is cut where it closes, so the walk always ends.
/// Each node's call frame is interned in `frames` (copied when new: its texts are shared).
fn intern_stacks(
    nodes: &[Node],
    parent_row: &[Option<usize>],
    frames: &mut FrameTable,
    stacks: &mut StackTable,
) -> (Vec<StackIndex>, u64) {
    let mut cycles = 0;
    #[derive(Clone, Copy)]
    enum State {
        New,
        OnPath,
        Done(StackIndex),
    }
    let mut state = vec![State::New; nodes.len()];
    let mut path = Vec::new();
    for start in 0..nodes.len() {
        // Walk up to a node whose stack is known (or a root), then intern downwards.
        let mut cur = Some(start);
        let mut base = None;
        while let Some(r) = cur {
            match state[r] {
                State::Done(s) => {
                    base = Some(s);
                    break;
                }
                State::OnPath => {
                    // A cycle: the repeated node's caller becomes a root.
                    cycles += 1;
                    break;
                }
                State::New => {
                    state[r] = State::OnPath;
                    path.push(r);
                    cur = parent_row[r];
                }
            }
        }
        let mut parent = base;
        while let Some(r) = path.pop() {
            let frame = frames.intern(&nodes[r].call_frame);
            let s = stacks.intern(frame, parent);
            state[r] = State::Done(s);
            parent = Some(s);
        }
    }
    let stacks = state
        .into_iter()
        .map(|s| match s {
            State::Done(s) => s,
            _ => unreachable!("every node is interned"),
        })
        .collect();
    (stacks, cycles)
}

/// Where a profile comes from and how its `t0` was chosen.
impl Origin {
    /// Origin for a `Profile` event: `t0` is `args.data.startTime` when it lies within one
    /// second of the event's own `ts` (V8 measures the deltas from it; `ts` is typically
    /// 1–20 µs later); otherwise `startTime` is on another clock (seen after a machine
    /// suspend) and `t0` is the event's `ts`, as DevTools does (docs/METHOD.md §2).
    pub fn from_profile_event(
        thread: ThreadKey,
        id: ProfileId,
        ts: Timestamp,
        start_time: Option<Timestamp>,
        source: Option<String>,
    ) -> Origin {
        const SAME_CLOCK: i64 = 1_000_000_000; // 1 s in ns
        let (t0, other_clock) = match start_time {
            Some(st) if ts.since(st).as_nanos().unsigned_abs() <= SAME_CLOCK as u64 => (st, false),
            Some(_) => (ts, true),
            None => (ts, false),
        };
        Origin {
            thread,
            id,
            t0,
            start_on_other_clock: other_clock,
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::chunk::DeltaSummary;
    use crate::scan::records::ChunkNodes;
    use crate::vocab::{CallFrame, Pid, Tid};

    fn node(id: i64, parent: Option<i64>, name: &str) -> Node {
        Node {
            id: NodeId(id),
            parent: parent.map(NodeId),
            children: vec![],
            call_frame: CallFrame {
                function_name: name.into(),
                line_number: -1,
                column_number: -1,
                ..Default::default()
            },
        }
    }

    fn origin(t0_us: i64) -> Origin {
        Origin {
            thread: ThreadKey {
                pid: Pid(1),
                tid: Tid(1),
            },
            id: ProfileId("0x1".into()),
            t0: Timestamp::from_micros(t0_us),
            start_on_other_clock: false,
            source: None,
        }
    }

    fn chunk(nodes: Vec<Node>, samples: &[i64], deltas: &[i64]) -> ChunkData {
        ChunkData::from_arrays(
            nodes,
            samples.iter().map(|&s| NodeId(s)).collect(),
            deltas.iter().map(|&d| TimeDelta::from_micros(d)).collect(),
        )
    }

    fn all(p: &CpuProfile) -> crate::profile::WindowSamples {
        p.window(
            Timestamp::from_nanos(i64::MIN),
            Timestamp::from_nanos(i64::MAX),
            None,
        )
    }

    fn names(p: &CpuProfile, s: StackIndex) -> Vec<String> {
        let mut out = vec![];
        let mut cur = Some(s);
        while let Some(c) = cur {
            out.push(p.frames.get(p.stacks.frame(c)).function_name.to_string());
            cur = p.stacks.parent(c);
        }
        out.reverse();
        out
    }

    #[test]
    fn deltas_accumulate_across_chunks_and_parent_defined_later() {
        let mut b = ProfileBuilder::new(origin(1000));
        // Node 3's parent 2 only arrives in the second chunk.
        b.add_chunk(chunk(
            vec![node(1, None, "(root)"), node(3, Some(2), "leaf")],
            &[1, 3],
            &[10, 20],
        ));
        b.add_chunk(chunk(vec![node(2, Some(1), "mid")], &[3, 2], &[30, 40]));
        let mut d = Diagnostics::default();
        let p = b.finish(&mut d);
        // t0 1000 µs; +10, +20, +30, +40 → 1010, 1030, 1060, 1100 µs.
        assert_eq!(
            all(&p).table.ts,
            [1010, 1030, 1060, 1100]
                .map(Timestamp::from_micros)
                .to_vec()
        );
        assert_eq!(names(&p, all(&p).table.stack[1]), ["(root)", "mid", "leaf"]);
        // (1100 − 1010) / 3 gaps = 30 µs.
        assert_eq!(p.mean_interval, TimeDelta::from_micros(30));
        assert_eq!(p.last_sample, Some(Timestamp::from_micros(1100)));
        assert_eq!(d.kinds(), 0);
    }

    #[test]
    fn chunks_are_taken_by_ts_then_in_file_order() {
        // File order: A (ts 20), B (ts 10), C (ts 10): taken B, C, A. Each chunk has one
        // sample (A: node 3 "a", B: node 2 "b", C: node 4 "c"), 100 µs after the one before.
        let mut b = ProfileBuilder::new(origin(0));
        // As a stream keeps them: packed, in the profile's store.
        let mut store = PackedStore::default();
        let mut at = |ts: i64, node: i64| {
            let (mut bytes, mut summary) = (Vec::new(), DeltaSummary::default());
            let delta = TimeDelta::from_micros(100);
            crate::scan::packed::pack([(NodeId(node), delta)], &mut bytes);
            summary.push(delta);
            ProfileChunk {
                ts: Timestamp::from_micros(ts),
                samples: store.keep(&bytes, summary),
            }
        };
        let chunks = vec![at(20, 3), at(10, 2), at(10, 4)];
        b.add_profile_data(ProfileData {
            store,
            chunks,
            nodes: vec![ChunkNodes {
                ts: Timestamp::from_micros(10),
                order: 0,
                nodes: vec![
                    node(1, None, "(root)"),
                    node(2, Some(1), "b"),
                    node(3, Some(1), "a"),
                    node(4, Some(1), "c"),
                ],
                start_time: None,
            }],
        });
        let p = b.finish(&mut Diagnostics::default());
        let t = &all(&p).table;
        assert_eq!(t.ts, [100, 200, 300].map(Timestamp::from_micros).to_vec());
        let leafs: Vec<_> = t
            .stack
            .iter()
            .map(|&s| names(&p, s).pop().unwrap())
            .collect();
        assert_eq!(leafs, ["b", "c", "a"]);
    }

    #[test]
    fn negative_deltas_are_summed_exactly_then_sorted_stably() {
        let mut b = ProfileBuilder::new(origin(0));
        b.add_chunk(chunk(
            vec![
                node(1, None, "(root)"),
                node(2, Some(1), "a"),
                node(3, Some(1), "b"),
            ],
            &[2, 3, 2, 3],
            &[100, 50, -30, 200],
        ));
        let p = b.finish(&mut Diagnostics::default());
        // Times 100, 150, 120, 320: sorted 100(a), 120(a), 150(b), 320(b). A clamping
        // reader would put the third sample at 150 and the last at 350.
        assert_eq!(
            all(&p).table.ts,
            [100, 120, 150, 320].map(Timestamp::from_micros).to_vec()
        );
        let leafs: Vec<_> = all(&p)
            .table
            .stack
            .iter()
            .map(|&s| names(&p, s).pop().unwrap())
            .collect();
        assert_eq!(leafs, ["a", "a", "b", "b"]);
        // The backward step: from 150 µs back to 120 µs.
        assert_eq!(
            all(&p).reordered,
            vec![(Timestamp::from_micros(120), Timestamp::from_micros(150))]
        );
    }

    #[test]
    fn unknown_sample_nodes_are_skipped_but_keep_time() {
        let mut b = ProfileBuilder::new(origin(0));
        b.add_chunk(chunk(
            vec![node(1, None, "(root)"), node(2, Some(1), "a")],
            &[2, 99, 2],
            &[10, 10, 10],
        ));
        let mut d = Diagnostics::default();
        let p = b.finish(&mut d);
        assert_eq!(
            all(&p).table.ts,
            [10, 30].map(Timestamp::from_micros).to_vec()
        );
        assert_eq!(all(&p).unknown, 1);
        assert_eq!(d.kinds(), 0);
    }

    #[test]
    fn children_lists_link_nodes_and_equal_paths_share_a_stack() {
        let mut root = node(1, None, "(root)");
        root.children = vec![5, 7].into_iter().map(NodeId).collect();
        let mut b = ProfileBuilder::new(origin(0));
        // Root listed last, two nodes with the same frame under the same parent.
        b.add_chunk(chunk(
            vec![node(5, None, "f"), node(7, None, "f"), root],
            &[5, 7],
            &[1, 1],
        ));
        let p = b.finish(&mut Diagnostics::default());
        assert_eq!(all(&p).table.stack[0], all(&p).table.stack[1]);
        assert_eq!(names(&p, all(&p).table.stack[0]), ["(root)", "f"]);
    }

    #[test]
    fn parent_cycles_terminate() {
        let mut b = ProfileBuilder::new(origin(0));
        b.add_chunk(chunk(
            vec![node(1, Some(2), "a"), node(2, Some(1), "b")],
            &[1],
            &[1],
        ));
        let mut d = Diagnostics::default();
        let p = b.finish(&mut d);
        assert_eq!(all(&p).table.len(), 1);
        // From a: a → b → a closes the cycle; b (a's caller) becomes a root, a under it.
        assert_eq!(names(&p, all(&p).table.stack[0]), ["b", "a"]);
        assert_eq!(
            d.count(
                "parent cycles among profile nodes (cut where they close: chains may be short)"
            ),
            1
        );
    }

    #[test]
    fn t0_from_start_time_unless_on_another_clock() {
        let k = ThreadKey::default();
        let id = ProfileId::default();
        let near = Origin::from_profile_event(
            k,
            id.clone(),
            Timestamp::from_micros(2_324_321_588),
            Some(Timestamp::from_micros(2_324_321_580)),
            None,
        );
        assert_eq!(near.t0, Timestamp::from_micros(2_324_321_580));
        assert!(!near.start_on_other_clock);
        let far = Origin::from_profile_event(
            k,
            id,
            Timestamp::from_micros(5_000_000_000),
            Some(Timestamp::from_micros(1_000)),
            None,
        );
        assert_eq!(far.t0, Timestamp::from_micros(5_000_000_000));
        assert!(far.start_on_other_clock);
    }
}

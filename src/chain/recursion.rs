//! `--collapse-recursion`: group a window's samples by their stacks with recursion
//! collapsed, as the Firefox Profiler's "collapse direct recursion only" and "collapse
//! recursion" transforms do, so that a function recursing 15 deep is one group (one stack
//! per depth otherwise splits its samples and its confidence).
//!
//! A function is a frame of the profile's [`crate::profile::FrameTable`] (its whole
//! `callFrame`: name, script, and the position where the function starts, so two calls of
//! one function are one frame). The collapsed stacks of a window form a tree (a trie of
//! collapsed paths): the largest group is its node with the most samples of its own, and the
//! heaviest path descends it as it descends the stack table.

use super::Pick;
use super::window::Weighted;
use crate::profile::{CpuProfile, FrameIndex, FrameKind, StackIndex};
use crate::vocab::FastMap;

/// How recursion is collapsed before samples are grouped (`--collapse-recursion`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CollapseRecursion {
    /// A frame whose function is its caller's is merged into the caller (`f > f > f` is
    /// `f ×3`).
    #[default]
    Direct,
    /// A function that appears again deeper in the stack: the frames from its outermost to
    /// its innermost call are merged into one (`f > g > f > h` is `f ×2 > h`).
    All,
    /// No collapsing: the exact stacks of docs/METHOD.md §1.
    None,
}

/// One node of a window's tree of collapsed stacks.
#[derive(Clone, Copy, Debug)]
struct Node {
    parent: Option<u32>,
    frame: FrameIndex,
    /// The most calls merged into this frame by any stack of the window that passes here.
    depth: u32,
}

/// The collapsed stacks of one window's candidates.
pub(super) struct Collapsed {
    nodes: Vec<Node>,
    /// Window stack → its collapsed node (`u32::MAX`: no candidate on that stack).
    of_stack: Vec<u32>,
}

impl Collapsed {
    /// Collapses the stacks of the window's candidates; `None` when no stack of the window
    /// has recursion to collapse under `mode` (then the exact stacks are the groups, and the
    /// caller keeps docs/METHOD.md §1 verbatim), or when `mode` is [`CollapseRecursion::None`].
    pub(super) fn of_window(w: &Weighted<'_>, mode: CollapseRecursion) -> Option<Collapsed> {
        if mode == CollapseRecursion::None {
            return None;
        }
        let stacks = &w.profile.stacks;
        // The window's distinct stacks, one per run of equal ones (samples mostly repeat
        // their neighbour's stack), in stack order: a window holds a few of the profile's
        // stacks, and a pass over all of them for each task cost more than the collapse.
        let mut window_stacks: Vec<StackIndex> = w.stack_runs().map(|(s, _)| s).collect();
        window_stacks.sort_unstable();
        window_stacks.dedup();
        let mut nodes: Vec<Node> = Vec::new();
        // (window stack, its collapsed node), made a dense map only when there is recursion.
        let mut of_window_stack: Vec<(StackIndex, u32)> = Vec::with_capacity(window_stacks.len());
        let mut index: FastMap<(Option<u32>, FrameIndex), u32> = Default::default();
        let (mut raw, mut path) = (Vec::new(), Vec::new());
        let mut any = false;
        // In stack order, so node order (the heaviest path's tie-break) follows the stacks'.
        for &stack in &window_stacks {
            raw.clear();
            let mut cur = Some(stack);
            while let Some(c) = cur {
                raw.push(stacks.frame(c));
                cur = stacks.parent(c);
            }
            raw.reverse();
            collapse(&raw, mode, &mut path);
            any |= path.len() < raw.len();
            let mut parent = None;
            for &(frame, depth) in &path {
                let id = *index.entry((parent, frame)).or_insert_with(|| {
                    nodes.push(Node {
                        parent,
                        frame,
                        depth: 0,
                    });
                    (nodes.len() - 1) as u32
                });
                let n = &mut nodes[id as usize];
                n.depth = n.depth.max(depth);
                parent = Some(id);
            }
            of_window_stack.push((stack, parent.unwrap_or(u32::MAX)));
        }
        if !any {
            return None;
        }
        let mut of_stack = vec![u32::MAX; stacks.len()];
        for (stack, node) in of_window_stack {
            of_stack[stack.index()] = node;
        }
        Some(Collapsed { nodes, of_stack })
    }

    /// Number of collapsed nodes.
    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The collapsed node of the candidates on window stack `s`.
    pub(super) fn node_of(&self, s: StackIndex) -> u32 {
        self.of_stack[s.index()]
    }

    /// True when the collapsed stack of window stack `s` is `node` (or, with `subtree`,
    /// under it).
    pub(super) fn holds(&self, s: StackIndex, node: u32, subtree: bool) -> bool {
        let mut cur = Some(self.node_of(s));
        while let Some(c) = cur {
            if c == node {
                return true;
            }
            if !subtree {
                return false;
            }
            cur = self.nodes.get(c as usize).and_then(|n| n.parent);
        }
        false
    }

    /// Frames of node `n` from the root, with their depths.
    pub(super) fn path(&self, n: u32) -> Vec<(FrameIndex, u32)> {
        let mut out = Vec::new();
        let mut cur = Some(n);
        while let Some(c) = cur {
            let node = self.nodes[c as usize];
            out.push((node.frame, node.depth));
            cur = node.parent;
        }
        out.reverse();
        out
    }

    /// docs/METHOD.md §1 step 3 over collapsed stacks: the node with the most candidates of its own
    /// (ties: the earliest first sample). Its samples and time count every depth merged.
    pub(super) fn largest(&self, w: &Weighted<'_>) -> Option<Pick> {
        let (node, samples, time, tied) =
            w.largest_group(self.nodes.len(), |s| self.node_of(s) as usize)?;
        Some(Pick {
            target: super::Target::Collapsed(self.path(node as u32), node as u32),
            samples,
            time,
            tied,
            subtree: false,
        })
    }

    /// The heaviest path over collapsed stacks (see [`super::heaviest`]): from the root,
    /// into the child with the most time while it holds at least half of its parent's,
    /// always past `(root)`; ties to the node made first.
    pub(super) fn heaviest(&self, w: &Weighted<'_>) -> Option<Pick> {
        let frames = &w.profile.frames;
        let (node, samples, time) = super::heaviest::descend(
            w,
            self.nodes.len(),
            |s| self.node_of(s) as usize,
            |s| self.nodes[s].parent.map(|p| p as usize),
            |s| frames.kind(self.nodes[s].frame) == FrameKind::Root,
        )?;
        Some(Pick {
            target: super::Target::Collapsed(self.path(node as u32), node as u32),
            samples,
            time,
            tied: false,
            subtree: true,
        })
    }
}

/// `raw` (frames root → leaf) collapsed under `mode` into `out` as (frame, calls merged).
fn collapse(raw: &[FrameIndex], mode: CollapseRecursion, out: &mut Vec<(FrameIndex, u32)>) {
    out.clear();
    match mode {
        CollapseRecursion::None => out.extend(raw.iter().map(|&f| (f, 1))),
        CollapseRecursion::Direct => {
            for &f in raw {
                match out.last_mut() {
                    Some((last, n)) if *last == f => *n += 1,
                    _ => out.push((f, 1)),
                }
            }
        }
        CollapseRecursion::All => {
            // The last position of each frame: a frame met again deeper swallows everything
            // up to its innermost call.
            let mut last: FastMap<FrameIndex, usize> = Default::default();
            for (i, &f) in raw.iter().enumerate() {
                last.insert(f, i);
            }
            let mut i = 0;
            while i < raw.len() {
                let f = raw[i];
                let end = last[&f];
                let calls = raw[i..=end].iter().filter(|&&g| g == f).count() as u32;
                out.push((f, calls));
                i = end + 1;
            }
        }
    }
}

/// Chain frames of a collapsed path, without `(root)`; each frame's
/// [`super::ChainFrame::recursion_depth`] is its calls merged.
pub(super) fn collapsed_frames(
    profile: &CpuProfile,
    path: &[(FrameIndex, u32)],
) -> Vec<super::ChainFrame> {
    path.iter()
        .filter(|(f, _)| profile.frames.kind(*f) != FrameKind::Root)
        .map(|&(f, depth)| {
            let mut cf = super::chain_frame(profile, f);
            cf.recursion_depth = depth;
            cf
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_merges_repeats_of_the_caller_and_all_merges_to_the_innermost_call() {
        let f = |v: &[usize]| v.iter().map(|&i| FrameIndex::new(i)).collect::<Vec<_>>();
        let run = |raw: &[usize], mode| {
            let mut out = Vec::new();
            collapse(&f(raw), mode, &mut out);
            out.into_iter()
                .map(|(fr, n)| (fr.index(), n))
                .collect::<Vec<_>>()
        };
        // root 0 > a 1 > f 2 > f > f > g 3
        let direct = [0, 1, 2, 2, 2, 3];
        assert_eq!(
            run(&direct, CollapseRecursion::Direct),
            [(0, 1), (1, 1), (2, 3), (3, 1)]
        );
        assert_eq!(
            run(&direct, CollapseRecursion::All),
            run(&direct, CollapseRecursion::Direct)
        );
        assert_eq!(run(&direct, CollapseRecursion::None).len(), 6);
        // Mutual: a > even 2 > odd 3 > even > odd > even > leaf 4. Direct: nothing repeats
        // its caller. All: even's outermost to innermost call (positions 1–5) is one
        // frame with 3 calls of even; odd inside it is gone.
        let mutual = [1, 2, 3, 2, 3, 2, 4];
        assert_eq!(run(&mutual, CollapseRecursion::Direct).len(), 7);
        assert_eq!(
            run(&mutual, CollapseRecursion::All),
            [(1, 1), (2, 3), (4, 1)]
        );
        // a > f > g > f > h > g: f's span (1–3) merges first; g after it (5) stands alone.
        assert_eq!(
            run(&[1, 2, 3, 2, 4, 3], CollapseRecursion::All),
            [(1, 1), (2, 2), (4, 1), (3, 1)]
        );
    }
}

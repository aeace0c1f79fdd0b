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
    /// Stack of the profile → its collapsed node (`NONE`: no candidate on that stack), at
    /// least as long as the profile's stacks: taken from the thread's [`POOL`] and given
    /// back, reset, when dropped.
    of_stack: Vec<u32>,
    /// The window's stacks (the entries of `of_stack` set).
    window_stacks: Vec<StackIndex>,
}

impl Drop for Collapsed {
    fn drop(&mut self) {
        let mut of_stack = std::mem::take(&mut self.of_stack);
        for s in &self.window_stacks {
            of_stack[s.index()] = NONE;
        }
        // None once the thread is ending: the vector is freed.
        let _ = POOL.try_with(|pool| pool.borrow_mut().push(of_stack));
    }
}

/// No step (or no node yet).
const NONE: u32 = u32::MAX;

/// Buffers of [`Collapsed::of_window`], kept by each thread from one window to the next
/// (sized for a profile's stacks, they cost more to make per window than the collapse).
#[derive(Default)]
struct Scratch {
    /// Stack of the profile → its step (`NONE`: not met by this window).
    step_of: Vec<u32>,
    /// The stacks met by this window.
    steps: Vec<Step>,
    /// Stack of the profile → true while it is being entered into `window_stacks`.
    in_window: Vec<bool>,
    /// The window's distinct stacks, ascending.
    window_stacks: Vec<StackIndex>,
    /// The collapsed node of each of `window_stacks`.
    window_nodes: Vec<u32>,
    /// The collapsed nodes made (copied out when something was merged).
    nodes: Vec<Node>,
    /// A stack and its callers not met yet, leaf first.
    walk: Vec<StackIndex>,
    /// Steps of a path not given a node yet, leaf first.
    todo: Vec<u32>,
    /// (parent node, frame) → node.
    index: FastMap<(Option<u32>, FrameIndex), u32>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
    /// `Collapsed::of_stack` vectors, all `NONE`: a window's is as long as its profile's
    /// stacks, and filling one per window cost more than the collapse. As many as were
    /// alive at once (two: a task's window and a moved one, [`super::answer_in`]).
    static POOL: std::cell::RefCell<Vec<Vec<u32>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A stack met by [`Collapsed::of_window`], as the last element of its collapsed path.
#[derive(Clone, Copy, Debug)]
struct Step {
    /// The stack.
    stack: StackIndex,
    /// The step whose collapsed path is this one's without its last element (`NONE`: the
    /// path has one element).
    pre: u32,
    /// The stack's frame (the last element's: the leaf is never merged away).
    frame: FrameIndex,
    /// Calls merged into the last element.
    calls: u32,
    /// True when a frame of the stack was merged (its path is shorter than the stack).
    merged: bool,
    /// Its collapsed node, once a window stack's path has passed it (`NONE` before).
    node: u32,
}

impl Step {
    /// The step of `stack`, whose frame is `frame` and whose caller is step `caller`
    /// (`NONE`: a root stack), under `mode` (`Direct` or `All`). Appending a frame to a
    /// stack changes its collapsed path only at its end (as `collapse` walks the stack): under
    /// `Direct`, when the path ends in `frame`, that element takes one call more; under
    /// `All`, when `frame` is an element of the path, the path is cut after it and it
    /// takes one call more (its span now reaches the new innermost call, swallowing the
    /// elements after it; a frame swallowed earlier is no element, and its span is left
    /// as it was). Otherwise `frame` is appended with one call.
    fn extend(
        steps: &[Step],
        caller: u32,
        stack: StackIndex,
        frame: FrameIndex,
        mode: CollapseRecursion,
    ) -> Step {
        let mut same = caller;
        while same != NONE && steps[same as usize].frame != frame {
            same = match mode {
                CollapseRecursion::All => steps[same as usize].pre,
                _ => NONE,
            };
        }
        match steps.get(same as usize) {
            Some(s) => Step {
                stack,
                pre: s.pre,
                frame,
                calls: s.calls + 1,
                merged: true,
                node: NONE,
            },
            None => Step {
                stack,
                pre: caller,
                frame,
                calls: 1,
                merged: steps.get(caller as usize).is_some_and(|c| c.merged),
                node: NONE,
            },
        }
    }
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
        SCRATCH.with_borrow_mut(|scratch| {
            let Scratch {
                step_of,
                in_window,
                steps,
                window_stacks,
                window_nodes,
                nodes,
                walk,
                todo,
                index,
            } = scratch;
            // Left by the last window (also one that panicked): every stack it met is reset.
            for step in steps.drain(..) {
                step_of[step.stack.index()] = NONE;
            }
            if step_of.len() < stacks.len() {
                step_of.resize(stacks.len(), NONE);
                in_window.resize(stacks.len(), false);
            }
            // The window's distinct stacks (first met, by their runs), in stack order: a
            // window holds a few of the profile's stacks, and a pass over all of them for
            // each task cost more than the collapse.
            window_stacks.clear();
            for (s, _) in w.stack_runs() {
                if !in_window[s.index()] {
                    in_window[s.index()] = true;
                    window_stacks.push(s);
                }
            }
            for s in window_stacks.iter() {
                in_window[s.index()] = false;
            }
            window_stacks.sort_unstable();
            let mut any = false;
            for &stack in window_stacks.iter() {
                // Each stack met (a window stack or one of its callers) gets its step once:
                // its collapsed path is its caller's extended by one frame (see
                // [`Step::extend`]), so a stack's walk stops at the first caller met.
                walk.clear();
                let mut cur = Some(stack);
                let mut met = NONE;
                while let Some(c) = cur {
                    met = step_of[c.index()];
                    if met != NONE {
                        break;
                    }
                    walk.push(c);
                    cur = stacks.parent(c);
                }
                for &c in walk.iter().rev() {
                    let step = Step::extend(steps, met, c, stacks.frame(c), mode);
                    met = steps.len() as u32;
                    steps.push(step);
                    step_of[c.index()] = met;
                }
                any |= steps[met as usize].merged;
            }
            if !any {
                return None;
            }
            // Cleared in time proportional to its capacity: a map grown by one large window
            // is dropped rather than cleared for every small one after it.
            if index.capacity() > 64 * window_stacks.len().max(64) {
                *index = FastMap::default();
            } else {
                index.clear();
            }
            nodes.clear();
            window_nodes.clear();
            // In stack order, so node order (the heaviest path's tie-break) follows the
            // stacks'.
            for &stack in window_stacks.iter() {
                let top = step_of[stack.index()];
                // The nodes of the stack's collapsed path not made yet, made root first (the
                // order of a walk of the whole path). The steps from the stack's along `pre`
                // are its path's elements leaf first, each the whole path of a caller (with
                // the calls merged into it on this path): each sets its node's depth once.
                todo.clear();
                let mut i = top;
                while i != NONE && steps[i as usize].node == NONE {
                    todo.push(i);
                    i = steps[i as usize].pre;
                }
                let mut parent = (i != NONE).then(|| steps[i as usize].node);
                for &i in todo.iter().rev() {
                    let step = &mut steps[i as usize];
                    let id = *index.entry((parent, step.frame)).or_insert_with(|| {
                        nodes.push(Node {
                            parent,
                            frame: step.frame,
                            depth: 0,
                        });
                        (nodes.len() - 1) as u32
                    });
                    let n = &mut nodes[id as usize];
                    n.depth = n.depth.max(step.calls);
                    step.node = id;
                    parent = Some(id);
                }
                window_nodes.push(steps[top as usize].node);
            }
            let mut of_stack = POOL.with_borrow_mut(Vec::pop).unwrap_or_default();
            if of_stack.len() < stacks.len() {
                of_stack.resize(stacks.len(), NONE);
            }
            for (stack, &node) in window_stacks.iter().zip(window_nodes.iter()) {
                of_stack[stack.index()] = node;
            }
            Some(Collapsed {
                nodes: nodes.clone(),
                of_stack,
                window_stacks: window_stacks.clone(),
            })
        })
    }

    /// The nodes as (parent, frame, depth), in the order they were made.
    #[cfg(test)]
    pub(super) fn nodes(&self) -> Vec<(Option<u32>, FrameIndex, u32)> {
        self.nodes
            .iter()
            .map(|n| (n.parent, n.frame, n.depth))
            .collect()
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

/// `raw` (frames root → leaf) collapsed under `mode` into `out` as (frame, calls merged):
/// the definition that [`Step::extend`] follows one frame at a time (kept for the tests).
#[cfg(test)]
pub(super) fn collapse(
    raw: &[FrameIndex],
    mode: CollapseRecursion,
    out: &mut Vec<(FrameIndex, u32)>,
) {
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

//! `--method heaviest-path` (docs/METHOD.md §1 "Beyond the method"): descend from the root, at each step
//! into the child stack with the most sample time inside the window, while that child
//! holds at least half of its parent's time (and always past `(root)`). Robust when the leaf varies inside one hot
//! function (deep recursion, inlining), where exact-stack groups split the samples.

use super::Pick;
use super::window::{Places, Weighted};
use crate::profile::{FrameKind, StackIndex};
use crate::time::TimeDelta;

/// The heaviest path's last stack, with the samples and time of its subtree.
/// Linear in samples + the window's stacks and their callers: each sample's time goes to
/// its own stack, then flows to the parents (which always have smaller indices), and each
/// stack remembers its heaviest child.
pub(super) fn heaviest_path(w: &Weighted<'_>) -> Option<Pick> {
    let stacks = &w.profile.stacks;
    Places::with(stacks.len(), |places| {
        // The window's stacks and their callers (a stack met has its callers entered),
        // in stack order: parents before children, and the smaller stack first for ties.
        for run in w.runs() {
            let mut cur = Some(run.stack);
            while let Some(s) = cur
                && places.enter(s.index()).1
            {
                cur = stacks.parent(s);
            }
        }
        places.sort();
        let (place, samples, time) = descend(
            w,
            places.keys().len(),
            |s| places.get(s.index()),
            |p| {
                let s = StackIndex::new(places.keys()[p]);
                stacks.parent(s).map(|c| places.get(c.index()))
            },
            |p| {
                let s = StackIndex::new(places.keys()[p]);
                w.profile.frames.kind(stacks.frame(s)) == FrameKind::Root
            },
        )?;
        Some(Pick {
            target: super::Target::Stack(StackIndex::new(places.keys()[place])),
            samples,
            time,
            tied: false,
            subtree: true,
        })
    })
}

/// The heaviest path's descent over a tree of `n` nodes (the profile's stacks, or the
/// collapsed stacks of [`super::recursion`]) whose parents come before their children:
/// `node_of(s)` is the node of the candidates on stack `s`, `parent(s)` node `s`'s parent, `is_root(s)` true
/// for the `(root)` frame's node. Returns the last node with the samples and time of its
/// subtree; ties between children go to the smaller node.
pub(super) fn descend(
    w: &Weighted<'_>,
    n: usize,
    node_of: impl Fn(StackIndex) -> usize,
    parent: impl Fn(usize) -> Option<usize>,
    is_root: impl Fn(usize) -> bool,
) -> Option<(usize, usize, TimeDelta)> {
    // Inclusive time and sample count per node, run by run (weights are never negative,
    // so adding the runs' saturating sums saturates where adding every weight would).
    let mut time = vec![TimeDelta::ZERO; n];
    let mut count = vec![0usize; n];
    let mut all = TimeDelta::ZERO;
    for run in w.runs() {
        let s = node_of(run.stack);
        let weight = w.run_weight(run);
        time[s] = time[s] + weight;
        count[s] += run.len();
        all = all + weight;
    }
    for s in (0..n).rev() {
        if count[s] > 0
            && let Some(p) = parent(s)
        {
            time[p] = time[p] + time[s];
            count[p] += count[s];
        }
    }
    // Heaviest child of each node (roots: of a virtual root); ties go to the smaller
    // (earlier made) node, which comes first in this ascending walk.
    let mut best: Vec<Option<usize>> = vec![None; n];
    let mut best_root: Option<usize> = None;
    for s in 0..n {
        if count[s] == 0 {
            continue;
        }
        let slot = match parent(s) {
            Some(p) => &mut best[p],
            None => &mut best_root,
        };
        if slot.is_none_or(|b| time[s] > time[b]) {
            *slot = Some(s);
        }
    }
    let mut cur: Option<usize> = None;
    let mut cur_time = all;
    loop {
        let next = match cur {
            None => best_root,
            Some(c) => best[c],
        };
        // Descend while the child holds at least half of its parent's time, and always
        // past the `(root)` frame: a path that stops there names no function.
        let at_root = cur.is_none_or(&is_root);
        match next {
            Some(c)
                if time[c] > TimeDelta::ZERO
                    && (at_root
                        || i128::from(time[c].as_nanos()) * 2
                            >= i128::from(cur_time.as_nanos())) =>
            {
                cur = Some(c);
                cur_time = time[c];
            }
            _ => break,
        }
    }
    let node = cur?;
    Some((node, count[node], cur_time))
}

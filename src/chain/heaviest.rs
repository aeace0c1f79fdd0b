//! `--method heaviest-path` (docs/METHOD.md §1 "Beyond the method"): descend from the root, at each step
//! into the child stack with the most sample time inside the window, while that child
//! holds at least half of its parent's time (and always past `(root)`). Robust when the leaf varies inside one hot
//! function (deep recursion, inlining), where exact-stack groups split the samples.

use super::Pick;
use super::window::Weighted;
use crate::profile::{FrameKind, StackIndex};
use crate::time::TimeDelta;

/// The heaviest path's last stack, with the samples and time of its subtree.
/// Linear in samples + stacks: each sample's time goes to its own stack, then flows to
/// the parents (which always have smaller indices), and each stack remembers its heaviest
/// child.
pub fn heaviest_path(w: &Weighted<'_>) -> Option<Pick> {
    let stacks = &w.profile.stacks;
    let n = stacks.len();
    // Inclusive time and sample count per stack.
    let mut time = vec![TimeDelta::ZERO; n];
    let mut count = vec![0usize; n];
    let mut all = TimeDelta::ZERO;
    for k in 0..w.len() {
        let s = w.stack(k).index();
        let weight = w.weight(k);
        time[s] = time[s] + weight;
        count[s] += 1;
        all = all + weight;
    }
    for s in (0..n).rev() {
        if count[s] > 0
            && let Some(p) = stacks.parent(StackIndex::new(s))
        {
            time[p.index()] = time[p.index()] + time[s];
            count[p.index()] += count[s];
        }
    }
    // Heaviest child of each stack (roots: of a virtual root); ties go to the smaller
    // (earlier interned) stack, which comes first in this ascending walk.
    let mut best: Vec<Option<usize>> = vec![None; n];
    let mut best_root: Option<usize> = None;
    for s in 0..n {
        if count[s] == 0 {
            continue;
        }
        let slot = match stacks.parent(StackIndex::new(s)) {
            Some(p) => &mut best[p.index()],
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
        let at_root = cur.is_none_or(|c| {
            w.profile.frames.kind(stacks.frame(StackIndex::new(c))) == FrameKind::Root
        });
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
    let stack = cur?;
    Some(Pick {
        target: super::Target::Stack(StackIndex::new(stack)),
        samples: count[stack],
        time: cur_time,
        tied: false,
        subtree: true,
    })
}

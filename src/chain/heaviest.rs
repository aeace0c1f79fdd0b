//! `--method heaviest-path` (SPEC "Beyond the method"): descend from the root, at each step
//! into the child stack with the most sample time inside the window, while that child
//! holds at least half of its parent's time. Robust when the leaf varies inside one hot
//! function (deep recursion, inlining), where exact-stack groups split the samples.

use std::collections::HashMap;

use super::Pick;
use super::window::Weighted;
use crate::profile::StackIndex;
use crate::time::TimeDelta;

/// The heaviest path's last stack, with the samples and time of its subtree.
pub fn heaviest_path(w: &Weighted<'_>) -> Option<Pick> {
    let stacks = &w.profile.stacks;
    // Inclusive time and sample count of every stack on a candidate's path.
    let mut total: HashMap<StackIndex, (TimeDelta, usize)> = HashMap::new();
    let mut all = TimeDelta::ZERO;
    for k in 0..w.len() {
        all = all + w.weights[k];
        let mut cur = Some(w.stack(k));
        while let Some(s) = cur {
            let e = total.entry(s).or_insert((TimeDelta::ZERO, 0));
            e.0 = e.0 + w.weights[k];
            e.1 += 1;
            cur = stacks.parent(s);
        }
    }
    let mut children: HashMap<Option<StackIndex>, Vec<StackIndex>> = HashMap::new();
    for &s in total.keys() {
        children.entry(stacks.parent(s)).or_default().push(s);
    }
    let mut cur: Option<StackIndex> = None;
    let mut cur_time = all;
    loop {
        // Heaviest child; ties go to the smaller (earlier interned) stack.
        let best = children
            .get(&cur)
            .into_iter()
            .flatten()
            .map(|&c| (total[&c].0, std::cmp::Reverse(c)))
            .max();
        match best {
            Some((t, std::cmp::Reverse(c)))
                if t > TimeDelta::ZERO && t.as_nanos() * 2 >= cur_time.as_nanos() =>
            {
                cur = Some(c);
                cur_time = t;
            }
            _ => break,
        }
    }
    let stack = cur?;
    Some(Pick {
        stack,
        samples: total[&stack].1,
        time: cur_time,
    })
}

//! Chain resolution on hand-made profiles; every expected value is worked out in comments.

use super::*;
use crate::profile::{Origin, ProfileBuilder, ProfileSet, SampleTable};
use crate::scan::records::{ChunkData, Node};
use crate::time::Timestamp;
use crate::vocab::Diagnostics;
use crate::vocab::{CallFrame, NodeId, Pid, ProfileId, ThreadKey, Tid};

const T: ThreadKey = ThreadKey {
    pid: Pid(1),
    tid: Tid(1),
};

fn node(id: i64, parent: Option<i64>, name: &str) -> Node {
    Node {
        id: NodeId(id),
        parent: parent.map(NodeId),
        children: vec![],
        call_frame: CallFrame {
            function_name: name.into(),
            url: if name.starts_with('(') { "" } else { "app.js" }.into(),
            script_id: "1".into(),
            line_number: if name.starts_with('(') { -1 } else { 9 },
            column_number: if name.starts_with('(') { -1 } else { 0 },
        },
    }
}

/// A profile on thread `T` with t0 = 0 and samples `(time µs, node id)` in time order.
fn profile_set(nodes: Vec<Node>, samples: &[(i64, i64)], source: Option<&str>) -> ProfileSet {
    let mut ps = ProfileSet::default();
    add_profile(&mut ps, "0x1", nodes, samples, source);
    ps
}

fn add_profile(
    ps: &mut ProfileSet,
    id: &str,
    nodes: Vec<Node>,
    samples: &[(i64, i64)],
    source: Option<&str>,
) {
    let mut b = ProfileBuilder::new(Origin {
        thread: T,
        id: ProfileId(id.into()),
        t0: Timestamp::from_micros(0),
        start_on_other_clock: false,
        source: source.map(str::to_owned),
    });
    let mut prev = 0;
    let deltas = samples
        .iter()
        .map(|&(t, _)| {
            let d = t - prev;
            prev = t;
            TimeDelta::from_micros(d)
        })
        .collect();
    b.add_chunk(ChunkData::from_arrays(
        nodes,
        samples.iter().map(|&(_, n)| NodeId(n)).collect(),
        deltas,
    ));
    ps.push_for_tests(b.finish(&mut Diagnostics::default()));
}

fn task(ts: i64, dur: i64) -> LongTask {
    LongTask {
        thread: T,
        ts: Timestamp::from_micros(ts),
        dur: TimeDelta::from_micros(dur),
        incomplete: false,
    }
}

fn micros(v: &[i64]) -> Vec<Timestamp> {
    v.iter().map(|&t| Timestamp::from_micros(t)).collect()
}

fn names(c: &TaskChain) -> Vec<&str> {
    c.chain.iter().map(|f| f.function.as_str()).collect()
}

fn abc() -> Vec<Node> {
    vec![
        node(1, None, "(root)"),
        node(2, Some(1), "a"),
        node(3, Some(2), "b"),
        node(4, Some(2), "c"),
        node(5, Some(1), "(program)"),
    ]
}

#[test]
fn tie_goes_to_earliest_group_and_window_is_half_open() {
    // b at 0, 10, 30; c at 20, 40, 50; b again at 60 = ts + dur (belongs to the next task).
    let ps = profile_set(
        abc(),
        &[(0, 3), (10, 3), (20, 4), (30, 3), (40, 4), (50, 4), (60, 3)],
        None,
    );
    let c = resolve(&task(0, 60), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!(c.window_samples, 6);
    assert_eq!(c.target_samples, 3);
    assert_eq!(names(&c), ["a", "b"]);
    assert_eq!(c.target_times, micros(&[0, 10, 30]));
    // b's samples stand 10 µs each: 30 µs of 60 → 0.5, not below the 0.5 minimum.
    assert_eq!(c.stack_time, TimeDelta::from_micros(30));
    assert_eq!(c.confidence, 0.5);
    assert_eq!(c.status, ChainStatus::Ok);
    assert_eq!(
        c.chain[1],
        ChainFrame {
            function: "b".into(),
            url: "app.js".into(),
            line: Some(10),
            column: Some(1),
            script_id: "1".into(),
            original: None,
            recursion_depth: 1,
        }
    );
}

#[test]
fn weights_clip_at_window_end_and_lookback_widens_start() {
    // c at 45 stands until 70 but the window ends at 50: 5 µs.
    let ps = profile_set(abc(), &[(5, 3), (20, 3), (45, 4), (70, 3)], None);
    let c = resolve(&task(10, 40), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!((c.window_samples, c.target_samples), (2, 1));
    // Candidates 20 (b) and 45 (c): tie, b first; b stands 20→45 = 25 µs of 40.
    assert_eq!(names(&c), ["a", "b"]);
    assert_eq!(c.stack_time, TimeDelta::from_micros(25));
    let cfg = ChainConfig {
        lookback: TimeDelta::from_micros(5),
        ..ChainConfig::default()
    };
    let c = resolve(&task(10, 40), &ps, None, &cfg).unwrap();
    // Window [5, 50): b at 5 and 20 (15 + 25 = 40 µs) vs c (5 µs).
    assert_eq!((c.window_samples, c.target_samples), (3, 2));
    assert_eq!(c.stack_time, TimeDelta::from_micros(40));
    assert_eq!(c.confidence, 1.0);
}

#[test]
fn no_profile_no_samples_and_non_js() {
    let empty = ProfileSet::default();
    let c = resolve(&task(0, 60), &empty, None, &ChainConfig::default()).unwrap();
    assert_eq!(
        (c.status, c.confidence, c.chain.len()),
        (ChainStatus::NoProfile, 0.0, 0)
    );

    let ps = profile_set(abc(), &[(100, 3)], None);
    let c = resolve(&task(0, 60), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!(c.status, ChainStatus::NoSamples);

    let ps = profile_set(abc(), &[(0, 5), (10, 5), (20, 3), (30, 5)], None);
    let c = resolve(&task(0, 40), &ps, None, &ChainConfig::default()).unwrap();
    // (program) holds 30 of 40 µs: mostly native work.
    assert_eq!(c.status, ChainStatus::NonJs);
    assert_eq!(names(&c), ["(program)"]);
    assert_eq!(c.chain[0].line, None);
    // (program) is the largest group but holds only 20 of 50 µs: that says little about
    // the task, so it is low confidence, not native work.
    let ps = profile_set(
        abc(),
        &[(0, 5), (10, 5), (20, 3), (30, 4), (40, 2), (50, 3)],
        None,
    );
    let c = resolve(&task(0, 50), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!(
        (c.status, names(&c)),
        (ChainStatus::LowConfidence, vec!["(program)"])
    );
}

#[test]
fn a_vm_state_top_stack_is_non_js_only_when_it_holds_the_minimum_from_3_samples() {
    // `low_confidence` is decided before `non_js` (docs/METHOD.md §1), for each VM state.
    for vm in ["(program)", "(garbage collector)", "(idle)"] {
        let ps = |samples: &[(i64, i64)]| {
            let nodes = vec![
                node(1, None, "(root)"),
                node(2, Some(1), "a"),
                node(3, Some(2), "b"),
                node(4, Some(1), vm),
            ];
            profile_set(nodes, samples, None)
        };
        let cfg = ChainConfig::default();
        // The VM state at 0, 10, 20, b at 30 (to 40, one mean interval): 30 of 40 µs from 3
        // samples, 0.75 ≥ 0.5: native work.
        let c = resolve(
            &task(0, 40),
            &ps(&[(0, 4), (10, 4), (20, 4), (30, 3)]),
            None,
            &cfg,
        );
        let c = c.unwrap();
        assert_eq!(
            (c.status, c.confidence, names(&c)),
            (ChainStatus::NonJs, 0.75, vec![vm])
        );
        // The same task under a minimum of 0.8: low confidence, though its leaf is a VM state.
        let strict = ChainConfig {
            min_confidence: 0.8,
            ..ChainConfig::default()
        };
        let c = resolve(
            &task(0, 40),
            &ps(&[(0, 4), (10, 4), (20, 4), (30, 3)]),
            None,
            &strict,
        );
        assert_eq!(c.unwrap().status, ChainStatus::LowConfidence);
        // The VM state at 0 and 10, b at 20, a at 30 (to 40) in [0, 50): the largest group
        // (2 samples) holds 20 of 50 µs, 0.4: low confidence.
        let c = resolve(
            &task(0, 50),
            &ps(&[(0, 4), (10, 4), (20, 3), (30, 2)]),
            None,
            &cfg,
        );
        let c = c.unwrap();
        assert_eq!((c.status, c.confidence), (ChainStatus::LowConfidence, 0.4));
        // All of [0, 20) from 2 samples: confidence 1, but two samples say little.
        let c = resolve(&task(0, 20), &ps(&[(0, 4), (10, 4)]), None, &cfg).unwrap();
        assert_eq!((c.status, c.confidence), (ChainStatus::LowConfidence, 1.0));
    }
}

fn recursion() -> (ProfileSet, LongTask) {
    // f > f > f recursion under (root), and g beside it.
    let nodes = vec![
        node(1, None, "(root)"),
        node(2, Some(1), "f"),
        node(3, Some(2), "f"),
        node(4, Some(3), "f"),
        node(5, Some(1), "g"),
    ];
    // f 0, f>f 10 and 20, f>f>f 30, g 40 50 60; every sample stands 10 µs.
    let ps = profile_set(
        nodes,
        &[
            (0, 2),
            (10, 3),
            (20, 3),
            (30, 4),
            (40, 5),
            (50, 5),
            (60, 5),
            (70, 1),
        ],
        None,
    );
    (ps, task(0, 70))
}

#[test]
fn largest_stack_low_confidence_is_flagged_or_dropped() {
    let (ps, t) = recursion();
    let exact = ChainConfig {
        collapse: CollapseRecursion::None,
        ..ChainConfig::default()
    };
    let c = resolve(&t, &ps, None, &exact).unwrap();
    // g: 3 samples, 30 of 70 µs = 0.4286 < 0.5.
    assert_eq!(names(&c), ["g"]);
    assert_eq!(c.status, ChainStatus::LowConfidence);
    assert!((c.confidence - 30.0 / 70.0).abs() < 1e-12);
    let drop = ChainConfig {
        policy: LowConfidencePolicy::Drop,
        ..exact
    };
    assert_eq!(resolve(&t, &ps, None, &drop), None);
}

#[test]
fn heaviest_path_descends_while_child_holds_half() {
    let (ps, t) = recursion();
    let cfg = ChainConfig {
        method: Method::HeaviestPath,
        min_confidence: 0.4,
        collapse: CollapseRecursion::None,
        ..ChainConfig::default()
    };
    let c = resolve(&t, &ps, None, &cfg).unwrap();
    // (root) 70 → f subtree 40 (≥ 35) → f>f subtree 30 (≥ 20) → f>f>f 10 (< 15): stop.
    assert_eq!(names(&c), ["f", "f"]);
    assert_eq!(c.target_samples, 3);
    // The subtree's samples: f>f at 10 and 20, f>f>f at 30.
    assert_eq!(c.target_times, micros(&[10, 20, 30]));
    assert_eq!(c.stack_time, TimeDelta::from_micros(30));
    assert_eq!(c.status, ChainStatus::Ok);

    let fallback = ChainConfig {
        policy: LowConfidencePolicy::Fallback,
        collapse: CollapseRecursion::None,
        ..ChainConfig::default()
    };
    let c = resolve(&t, &ps, None, &fallback).unwrap();
    // The heaviest path's 30 / 70 is no better than g's 30 / 70: the first answer stays.
    assert_eq!(names(&c), ["g"]);
    assert!(!c.flags.contains(Flags::FALLBACK));
    assert_eq!(c.status, ChainStatus::LowConfidence);
}

#[test]
fn direct_recursion_is_one_group_with_its_depth() {
    // f, f>f ×2, f>f>f: with direct recursion collapsed, one group f of 4 samples, 40 of
    // 70 µs = 0.571: ok (exact stacks: g's 3 samples win with 0.429, low confidence).
    let (ps, t) = recursion();
    for method in [Method::LargestStack, Method::HeaviestPath] {
        for collapse in [CollapseRecursion::Direct, CollapseRecursion::All] {
            let cfg = ChainConfig {
                method,
                collapse,
                ..ChainConfig::default()
            };
            let c = resolve(&t, &ps, None, &cfg).unwrap();
            assert_eq!(names(&c), ["f"], "{method:?} {collapse:?}");
            assert_eq!((c.target_samples, c.status), (4, ChainStatus::Ok));
            assert_eq!(c.stack_time, TimeDelta::from_micros(40));
            assert_eq!(c.target_times, micros(&[0, 10, 20, 30]));
            // The deepest of the merged stacks: f > f > f.
            assert_eq!(c.chain[0].recursion_depth, 3);
            assert_eq!(c.chain[0].text(), "f (app.js:10:1) ×3");
        }
    }
}

#[test]
fn mutual_recursion_collapses_only_with_all() {
    // a > even > odd > even > odd > leaf, samples on each depth of the even/odd ladder and
    // 3 on leaf, every sample 10 µs of 80.
    let nodes = vec![
        node(1, None, "(root)"),
        node(2, Some(1), "a"),
        node(3, Some(2), "even"),
        node(4, Some(3), "odd"),
        node(5, Some(4), "even"),
        node(6, Some(5), "odd"),
        node(7, Some(6), "leaf"),
        node(8, Some(4), "leaf"),
    ];
    let ps = profile_set(
        nodes,
        &[
            (0, 3),
            (10, 4),
            (20, 5),
            (30, 6),
            (40, 7),
            (50, 7),
            (60, 8),
            (70, 8),
            (80, 1),
        ],
        None,
    );
    // Direct: nothing repeats its caller; the largest exact stack is a>even>odd>even>odd>
    // leaf (2 samples, tied with ...>odd>leaf, earlier): 20 / 80, low confidence.
    let c = resolve(&task(0, 80), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!(names(&c), ["a", "even", "odd", "even", "odd", "leaf"]);
    assert_eq!(
        (c.target_samples, c.status),
        (2, ChainStatus::LowConfidence)
    );
    // All: greedy from the outermost frame, each function swallows the frames up to its
    // innermost call: a>even>odd>even>odd>leaf is a > even ×2 > odd > leaf, which is the
    // same path (depth aside) as a>even>odd>leaf: one group of the 4 leaf samples,
    // 40 / 80 = 0.5, ok; even shown at its deepest, ×2.
    let all = ChainConfig {
        collapse: CollapseRecursion::All,
        ..ChainConfig::default()
    };
    let c = resolve(&task(0, 80), &ps, None, &all).unwrap();
    assert_eq!(names(&c), ["a", "even", "odd", "leaf"]);
    assert_eq!((c.target_samples, c.status), (4, ChainStatus::Ok));
    // Two stacks of the one collapsed group: 40 and 50 on the deep leaf, 60 and 70 on
    // the shallow one.
    assert_eq!(c.target_times, micros(&[40, 50, 60, 70]));
    assert_eq!(c.chain[1].recursion_depth, 2);
}

fn a_bcd() -> Vec<Node> {
    vec![
        node(1, None, "(root)"),
        node(2, Some(1), "a"),
        node(3, Some(2), "b"),
        node(4, Some(2), "c"),
        node(5, Some(2), "d"),
        node(6, Some(1), "e"),
        node(7, Some(1), "(program)"),
    ]
}

#[test]
fn fallback_replaces_only_with_a_more_certain_js_chain() {
    // a > b 2 samples, a > c 2, a > d 1, each 10 µs of a 50 µs task. Largest group: b
    // (tie with c, b first), 20 / 50 = 0.4: low confidence. Heaviest path: (root) 50 →
    // a 50 → b 20 < 25: stops at a, 50 / 50 = 1.0, ok.
    let ps = profile_set(
        a_bcd(),
        &[(0, 3), (10, 4), (20, 3), (30, 4), (40, 5), (50, 1)],
        None,
    );
    let fallback = ChainConfig {
        policy: LowConfidencePolicy::Fallback,
        ..ChainConfig::default()
    };
    let c = resolve(&task(0, 50), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!(
        (names(&c), c.status),
        (vec!["a", "b"], ChainStatus::LowConfidence)
    );
    let c = resolve(&task(0, 50), &ps, None, &fallback).unwrap();
    assert_eq!(names(&c), ["a"]);
    assert_eq!((c.target_samples, c.confidence), (5, 1.0));
    assert_eq!(c.status, ChainStatus::Ok);
    assert_eq!(c.flags.to_text(), "fallback");

    // (program) 3 samples, e 2 (of 60 µs): largest group (program) 30 / 60 = 0.5 is
    // non_js, not low; with a 0.6 minimum it is low, and the heaviest path (root) 60 →
    // (program) 30 ≥ 30 is a VM state: not a JS chain, so it replaces nothing.
    let ps = profile_set(
        a_bcd(),
        &[(0, 7), (10, 6), (20, 7), (30, 6), (40, 7), (50, 3), (60, 1)],
        None,
    );
    let strict = ChainConfig {
        min_confidence: 0.6,
        ..fallback
    };
    let c = resolve(&task(0, 60), &ps, None, &strict).unwrap();
    assert_eq!(
        (names(&c), c.status),
        (vec!["(program)"], ChainStatus::LowConfidence)
    );
    assert!(!c.flags.contains(Flags::FALLBACK));
}

#[test]
fn heaviest_path_never_stops_at_the_root() {
    // (root) 50: a 20, e 20, (program) 10: no child holds half. The path goes past
    // (root) into its heaviest child (a, tied with e, interned first) and stops there:
    // a chain, 20 / 50 = 0.4, low confidence — never an empty chain at 1.0.
    let ps = profile_set(
        a_bcd(),
        &[(0, 2), (10, 6), (20, 2), (30, 6), (40, 7), (50, 1)],
        None,
    );
    for policy in [LowConfidencePolicy::Flag, LowConfidencePolicy::Fallback] {
        for method in [Method::HeaviestPath, Method::LargestStack] {
            let cfg = ChainConfig {
                method,
                policy,
                ..ChainConfig::default()
            };
            let c = resolve(&task(0, 50), &ps, None, &cfg).unwrap();
            assert_eq!(names(&c), ["a"], "{method:?} {policy:?}");
            assert_eq!(c.confidence, 0.4);
            assert_eq!(c.status, ChainStatus::LowConfidence);
        }
    }
    // Samples on (root) itself (an empty stack): the largest group names no function, so
    // the row is low confidence however much time it holds.
    let ps = profile_set(a_bcd(), &[(0, 1), (10, 1), (20, 1), (30, 2), (40, 1)], None);
    let c = resolve(&task(0, 50), &ps, None, &ChainConfig::default()).unwrap();
    assert!(c.chain.is_empty());
    assert_eq!((c.confidence, c.status), (0.8, ChainStatus::LowConfidence));
}

#[test]
fn profile_started_inside_when_its_first_sample_is_in_the_window() {
    let ps = profile_set(abc(), &[(20, 3), (30, 3), (40, 3), (50, 3)], None);
    let c = resolve(&task(0, 60), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!(c.flags.to_text(), "profile_started_inside");
    // A first sample exactly at the task's start saw all of it.
    let c = resolve(&task(20, 40), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!(c.flags.to_text(), "");
    // A later task: the profile was running before it.
    let c = resolve(&task(30, 25), &ps, None, &ChainConfig::default()).unwrap();
    assert!(!c.flags.contains(Flags::PROFILE_STARTED_INSIDE));
}

#[test]
fn overlapping_profiles_prefer_internal_then_more_samples() {
    let mut ps = ProfileSet::default();
    // console.profile() (Inspector) with 3 samples of c; the panel's own with 2 of b.
    add_profile(
        &mut ps,
        "0x2",
        abc(),
        &[(0, 4), (5, 4), (10, 4), (20, 4)],
        Some("Inspector"),
    );
    add_profile(
        &mut ps,
        "0x1",
        abc(),
        &[(0, 3), (10, 3), (20, 3)],
        Some("Internal"),
    );
    let c = resolve(&task(0, 20), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!(names(&c), ["a", "b"]);
    assert_eq!(c.window_samples, 2);

    let mut ps = ProfileSet::default();
    add_profile(
        &mut ps,
        "0x2",
        abc(),
        &[(0, 4), (5, 4), (10, 4), (20, 4)],
        None,
    );
    add_profile(&mut ps, "0x1", abc(), &[(0, 3), (10, 3), (20, 3)], None);
    let c = resolve(&task(0, 20), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!(names(&c), ["a", "c"]);
    assert_eq!(c.window_samples, 3);
}

#[test]
fn flags_for_gaps_and_reordered_samples() {
    // A 15 ms hole between 1 ms and 16 ms; last sample 19 ms in a 20 ms task.
    let ps = profile_set(abc(), &[(0, 3), (1_000, 3), (16_000, 3), (19_000, 3)], None);
    let c = resolve(&task(0, 20_000), &ps, None, &ChainConfig::default()).unwrap();
    assert!(c.flags.contains(Flags::PROFILE_GAP));
    assert!(!c.flags.contains(Flags::SAMPLES_REORDERED));
    // Out of order: 10 then 5 (delta −5), all b. Inside [0, 30) sorting changes nothing:
    // the same samples, one group.
    let ps = profile_set(abc(), &[(0, 3), (10, 3), (5, 3), (20, 3)], None);
    let c = resolve(&task(0, 30), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!(c.flags.to_text(), "");
    // [0, 8): read in file order, 0 and 10 (out) then 5 (back in): the step 10 → 5
    // crosses the end at 8, so which samples are in the window depends on the sort.
    let c = resolve(&task(0, 8), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!(c.flags.to_text(), "samples_reordered");
    // [7, 30): the step crosses the start.
    let c = resolve(&task(7, 23), &ps, None, &ChainConfig::default()).unwrap();
    assert!(c.flags.contains(Flags::SAMPLES_REORDERED));
    let outside = resolve(&task(100, 30), &ps, None, &ChainConfig::default()).unwrap();
    assert!(!outside.flags.contains(Flags::SAMPLES_REORDERED));
    // b 0, c 10, c 5, b 20: two groups of 2; sorted, c's first sample (5) is not the
    // earliest (0 is b's) either way, but the order decides ties, so the step inside
    // the window is flagged.
    let ps = profile_set(abc(), &[(0, 3), (10, 4), (5, 4), (20, 3)], None);
    let c = resolve(&task(0, 30), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!(names(&c), ["a", "b"]);
    assert!(c.flags.contains(Flags::SAMPLES_REORDERED));
}

#[test]
fn samples_reordered_only_when_the_out_of_order_samples_change_the_answer() {
    // All b: 0, 2, 4, 10, then 5 and 6 (delta −5 µs), 20. The task [0, 8): the step
    // 10 → 5 crosses its end. Sorted, b at 0, 2, 4, 5, 6 fill the window: a > b, ok.
    // With the end moved to 5 (b at 0, 2, 4: 3 samples) or past 10 (0, 2, 4, 5, 6, 10)
    // the answer is a > b, ok again: nothing to look at, so no flag, and the row is
    // counted for the file's warning instead.
    let ps = profile_set(
        abc(),
        &[(0, 3), (2, 3), (4, 3), (10, 3), (5, 3), (6, 3), (20, 3)],
        None,
    );
    let c = resolve(&task(0, 8), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!((names(&c), c.status), (vec!["a", "b"], ChainStatus::Ok));
    assert_eq!(c.window_samples, 5);
    assert_eq!(c.flags.to_text(), "");
    assert!(c.reordered_unflagged);
    // b at 0, 1, then c at 20, 3, 4, 5, 6 (20 → 3 goes back), b at 30. The task [0, 10):
    // sorted, c's four samples (3, 4, 5, 6) beat b's two: a > c. Were the samples from 3
    // on outside (the end moved to 3), only b's two would be left (a > b, and
    // low_confidence with 2 samples): the order decides the chain, so the row is flagged.
    let ps = profile_set(
        abc(),
        &[
            (0, 3),
            (1, 3),
            (20, 4),
            (3, 4),
            (4, 4),
            (5, 4),
            (6, 4),
            (30, 3),
        ],
        None,
    );
    let c = resolve(&task(0, 10), &ps, None, &ChainConfig::default()).unwrap();
    assert_eq!((names(&c), c.status), (vec!["a", "c"], ChainStatus::Ok));
    assert_eq!(c.flags.to_text(), "samples_reordered");
    assert!(!c.reordered_unflagged);
    // Without out-of-order samples near it, a row is neither flagged nor counted.
    let c = resolve(&task(40, 10), &ps, None, &ChainConfig::default()).unwrap();
    assert!(!c.flags.contains(Flags::SAMPLES_REORDERED) && !c.reordered_unflagged);
}

#[test]
fn run_weights_from_times_equal_the_added_weights_even_when_steps_saturate() {
    // Weights are not stored: a run's weight is its first row's step to the row after it.
    // That must equal adding the rows' own weights (each step saturating), for every run,
    // also where one step alone passes i64::MAX ns.
    let ps = profile_set(abc(), &[(0, 3), (10, 3)], None);
    let ns = Timestamp::from_nanos;
    let ts = [i64::MIN + 5, 7, 7, 10, 1_000, i64::MAX - 1, i64::MAX - 1]
        .map(ns)
        .to_vec();
    let table = SampleTable {
        stack: vec![StackIndex::new(1); ts.len()],
        ts,
    };
    let window = window::Window {
        start: ns(i64::MIN),
        end: ns(i64::MAX),
    };
    let w = window::Weighted::new(&ps.profiles[0], &table, 0..7, &window, None);
    // 7 − (MIN + 5) = MAX + 3: saturates.
    assert_eq!(w.weight(0), TimeDelta::from_nanos(i64::MAX));
    assert_eq!(w.weight(1), TimeDelta::ZERO);
    assert_eq!(w.weight(3), TimeDelta::from_nanos(990));
    assert_eq!(w.weight(4), TimeDelta::from_nanos(i64::MAX - 1_001));
    for from in 0..7 {
        for to in from + 1..=7 {
            let added = (from..to)
                .map(|k| w.weight(k))
                .fold(TimeDelta::ZERO, |a, b| a + b);
            assert_eq!(w.weight_sum(from, to), added, "{from}..{to}");
        }
    }
}

#[test]
fn a_gap_counts_at_either_edge_or_between_samples() {
    // Samples at 0, 10, 40, 45 µs in [0, 50): steps 10, 30, 5; edges 0 and 5.
    let ps = profile_set(abc(), &[(0, 3), (10, 3), (40, 3), (45, 3)], None);
    let us = Timestamp::from_micros;
    let table = SampleTable {
        ts: [0, 10, 40, 45].map(us).to_vec(),
        stack: vec![StackIndex::new(1); 4],
    };
    let window = |start, end| window::Window {
        start: us(start),
        end: us(end),
    };
    let gap = TimeDelta::from_micros;
    let w = window::Weighted::new(&ps.profiles[0], &table, 0..4, &window(0, 50), None);
    assert!(w.has_gap_over(gap(29)));
    assert!(!w.has_gap_over(gap(30)));
    // Widened to [-40, 90): the edges are 40 and 45 µs.
    let w = window::Weighted::new(&ps.profiles[0], &table, 0..4, &window(-40, 90), None);
    assert!(w.has_gap_over(gap(44)));
    assert!(!w.has_gap_over(gap(45)));
    // No sample: the whole window is one gap.
    let w = window::Weighted::new(&ps.profiles[0], &table, 0..0, &window(0, 50), None);
    assert!(w.has_gap_over(gap(49)));
    assert!(!w.has_gap_over(gap(50)));
}

#[test]
fn leaf_urls_count_the_window_samples_by_their_leaf_frames_url() {
    let with_url = |mut n: Node, url: &str| {
        n.call_frame.url = url.into();
        n
    };
    // a (a.js) calls b (b.js) and c (a.js); b calls c too: the same call frame on another
    // stack, so one frame for two stacks.
    let nodes = vec![
        node(1, None, "(root)"),
        with_url(node(2, Some(1), "a"), "a.js"),
        with_url(node(3, Some(2), "b"), "b.js"),
        with_url(node(4, Some(2), "c"), "a.js"),
        with_url(node(6, Some(3), "c"), "a.js"),
        node(5, Some(1), "(program)"),
    ];
    // In [0, 80): b b c (program) c' b c c → a.js: c ×3 + c' ×1 = 4, b.js: 3, "": 1; the
    // sample at 80 is outside.
    let ps = profile_set(
        nodes,
        &[
            (0, 3),
            (10, 3),
            (20, 4),
            (30, 5),
            (40, 6),
            (50, 3),
            (60, 4),
            (70, 4),
            (80, 3),
        ],
        None,
    );
    let cfg = ChainConfig {
        collect_leaf_urls: true,
        ..ChainConfig::default()
    };
    let c = resolve(&task(0, 80), &ps, None, &cfg).unwrap();
    assert_eq!(c.window_samples, 8);
    let expected = [("a.js", 4), ("b.js", 3), ("", 1)].map(|(u, n)| (u.to_string(), n));
    assert_eq!(c.leaf_urls, expected);
    // Equal counts go in URL order: b (b.js) then a (a.js), one sample each.
    let ps = profile_set(
        vec![
            node(1, None, "(root)"),
            with_url(node(2, Some(1), "a"), "a.js"),
            with_url(node(3, Some(2), "b"), "b.js"),
        ],
        &[(0, 3), (10, 2)],
        None,
    );
    let c = resolve(&task(0, 20), &ps, None, &cfg).unwrap();
    let expected = [("a.js", 1), ("b.js", 1)].map(|(u, n)| (u.to_string(), n));
    assert_eq!(c.leaf_urls, expected);
}

/// Pseudo-random numbers below `n` (xorshift from `seed`), for generated trees.
fn below(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    }
}

/// A tree of 2–60 nodes named from `names` (so functions repeat: recursion, direct and
/// mutual), mostly grown from its newest nodes so it is deep, and 2–40 samples 10 µs
/// apart on random nodes.
fn generated(next: &mut impl FnMut(u64) -> u64, names: [&str; 4]) -> (Vec<Node>, Vec<(i64, i64)>) {
    let len = 2 + next(59) as i64;
    let mut nodes = vec![node(1, None, "(root)")];
    for id in 2..=len {
        let back = next(4).min(id as u64 - 2) as i64;
        let parent = if next(5) == 0 {
            1 + next(id as u64 - 1) as i64
        } else {
            id - 1 - back
        };
        nodes.push(node(id, Some(parent), names[next(4) as usize]));
    }
    let samples = (0..2 + next(39) as i64)
        .map(|i| (i * 10, 1 + next(len as u64) as i64))
        .collect();
    (nodes, samples)
}

/// A window over all of profile 0's samples of `ps` (`end` µs past the last one).
fn whole_window(ps: &ProfileSet, end: i64) -> (SampleTable, window::Window) {
    let window = window::Window {
        start: Timestamp::from_micros(0),
        end: Timestamp::from_micros(end),
    };
    let table = ps.profiles[0].window(window.start, window.end, None).table;
    (table, window)
}

/// Collapsed nodes as (parent, function, depth) and each sampled stack's node, by the
/// definition: every window stack in stack order walked to the root, collapsed whole, and
/// its path entered into a trie of (parent, frame) ([`recursion::collapse`]); `None`
/// without anything merged.
#[allow(clippy::type_complexity)]
fn collapsed_by_definition(
    w: &window::Weighted<'_>,
    mode: CollapseRecursion,
) -> Option<(Vec<(Option<u32>, FrameIndex, u32)>, Vec<(StackIndex, u32)>)> {
    let stacks = &w.profile.stacks;
    let mut window_stacks: Vec<StackIndex> = w.stack_runs().map(|(s, _)| s).collect();
    window_stacks.sort_unstable();
    window_stacks.dedup();
    let mut nodes: Vec<(Option<u32>, FrameIndex, u32)> = Vec::new();
    let mut of_stack = Vec::new();
    let mut any = false;
    for &stack in &window_stacks {
        let mut raw = Vec::new();
        let mut cur = Some(stack);
        while let Some(c) = cur {
            raw.push(stacks.frame(c));
            cur = stacks.parent(c);
        }
        raw.reverse();
        let mut path = Vec::new();
        recursion::collapse(&raw, mode, &mut path);
        any |= path.len() < raw.len();
        let mut parent = None;
        for (frame, depth) in path {
            let id = match nodes.iter().position(|n| (n.0, n.1) == (parent, frame)) {
                Some(i) => i,
                None => {
                    nodes.push((parent, frame, 0));
                    nodes.len() - 1
                }
            };
            nodes[id].2 = nodes[id].2.max(depth);
            parent = Some(id as u32);
        }
        of_stack.push((stack, parent.unwrap()));
    }
    any.then_some((nodes, of_stack))
}

#[test]
fn collapsed_nodes_are_made_only_on_the_window_stacks_paths_with_their_deepest_calls() {
    // (root) > a > f > g > f > h > g, and f > f > k beside: under All, a>f>g>f>h>g is
    // a > f ×2 > h > g (f's span swallows g), a>f>g>f is a > f ×2, a>f>f>k is a > f ×2 > k.
    let nodes = vec![
        node(1, None, "(root)"),
        node(2, Some(1), "a"),
        node(3, Some(2), "f"),
        node(4, Some(3), "g"),
        node(5, Some(4), "f"),
        node(6, Some(5), "h"),
        node(7, Some(6), "g"),
        node(8, Some(3), "f"),
        node(9, Some(8), "k"),
    ];
    let all = |samples: &[(i64, i64)]| {
        let ps = profile_set(nodes.clone(), samples, None);
        let (table, window) = whole_window(&ps, 1_000);
        let w = window::Weighted::new(&ps.profiles[0], &table, 0..table.len(), &window, None);
        let c = recursion::Collapsed::of_window(&w, CollapseRecursion::All).unwrap();
        let p = &ps.profiles[0];
        let name = |f: FrameIndex| p.frames.get(f).function_name.to_string();
        let made: Vec<(Option<u32>, String, u32)> = c
            .nodes()
            .into_iter()
            .map(|(parent, f, depth)| (parent, name(f), depth))
            .collect();
        // Each sample's node, in time order.
        let of: Vec<u32> = table.stack.iter().map(|&s| c.node_of(s)).collect();
        (made, of)
    };
    let n = |parent: Option<u32>, f: &str, depth| (parent, f.to_string(), depth);
    // Only the deepest stack sampled: a>f>g's g (under f) is on no sampled path, so no
    // node; f is ×2.
    let (made, of) = all(&[(0, 7)]);
    assert_eq!(
        made,
        [
            n(None, "(root)", 1),
            n(Some(0), "a", 1),
            n(Some(1), "f", 2),
            n(Some(2), "h", 1),
            n(Some(3), "g", 1)
        ]
    );
    assert_eq!(of, [4]);
    // Sampled deepest first in time, then a>f>g, a>f>g>f, a>f>f>k, a>f: nodes are made in
    // stack order (a>f, a>f>g, a>f>g>f, ...>h>g, a>f>f>k), each path root first; f's depth
    // is 2 from either deep path.
    let (made, of) = all(&[(0, 7), (10, 4), (20, 5), (30, 9), (40, 3)]);
    assert_eq!(
        made,
        [
            n(None, "(root)", 1),
            n(Some(0), "a", 1),
            n(Some(1), "f", 2),
            n(Some(2), "g", 1),
            n(Some(2), "h", 1),
            n(Some(4), "g", 1),
            n(Some(2), "k", 1)
        ]
    );
    assert_eq!(of, [5, 3, 2, 6, 2]);
}

#[test]
fn collapsed_nodes_match_the_definition_on_generated_trees() {
    // Trees of 2–60 nodes over 4 function names (so recursion, direct and mutual, is
    // everywhere), a random subset of nodes sampled in random order; the nodes made and
    // each stack's node must equal the walk of every stack to the root.
    let mut next = below(0x2545_f491_4f6c_dd1d);
    let mut checked = [0usize; 2];
    for _ in 0..400 {
        let (nodes, samples) = generated(&mut next, ["f", "g", "h", "k"]);
        let ps = profile_set(nodes, &samples, None);
        let (table, window) = whole_window(&ps, samples.len() as i64 * 10);
        let w = window::Weighted::new(&ps.profiles[0], &table, 0..table.len(), &window, None);
        for (k, mode) in [CollapseRecursion::Direct, CollapseRecursion::All]
            .into_iter()
            .enumerate()
        {
            let got = recursion::Collapsed::of_window(&w, mode);
            let want = collapsed_by_definition(&w, mode);
            assert_eq!(got.is_some(), want.is_some());
            if let (Some(got), Some((nodes, of_stack))) = (got, want) {
                assert_eq!(got.nodes(), nodes);
                for (s, n) in of_stack {
                    assert_eq!(got.node_of(s), n);
                }
                checked[k] += 1;
            }
        }
    }
    // Both modes met recursion in many windows.
    assert!(checked.iter().all(|&n| n > 100), "{checked:?}");
}

#[test]
fn window_local_picks_match_the_tables_over_all_stacks_on_generated_trees() {
    // Largest stack, heaviest path and the heaviest path's subtree filter work over the
    // window's stacks (and their callers) only; here they must equal the same rules over
    // tables of every stack of the profile (the definition), on generated trees with
    // windows over part of the samples (so some stacks are not in the window).
    let mut next = below(0x9e37_79b9_7f4a_7c15);
    let mut deep = 0;
    for _ in 0..300 {
        let (nodes, samples) = generated(&mut next, ["f", "g", "h", "(program)"]);
        let ps = profile_set(nodes, &samples, None);
        let p = &ps.profiles[0];
        let (table, window) = whole_window(&ps, samples.len() as i64 * 10);
        // The window's rows: the later part of the samples.
        let from = next(table.len() as u64 / 2) as usize;
        let rows = from..table.len();
        let w = window::Weighted::new(p, &table, rows, &window, None);
        let stacks = &p.stacks;
        let all = stacks.len();

        // Largest stack: (count, first position, time) per stack of the profile.
        let mut groups = vec![(0usize, usize::MAX, TimeDelta::ZERO); all];
        for run in w.runs() {
            let e = &mut groups[run.stack.index()];
            if e.0 == 0 {
                e.1 = run.start;
            }
            e.0 += run.len();
            e.2 = e.2 + w.run_weight(run);
        }
        let (g, &(samples_of, _, time)) = groups
            .iter()
            .enumerate()
            .filter(|(_, e)| e.0 > 0)
            .max_by_key(|(_, e)| (e.0, std::cmp::Reverse(e.1)))
            .unwrap();
        let tied = groups
            .iter()
            .enumerate()
            .any(|(s, e)| s != g && e.0 == samples_of);
        assert_eq!(
            w.largest_group(all, |s| s.index()),
            Some((g, samples_of, time, tied))
        );

        // Heaviest path over every stack of the profile.
        let (s, n, t) = heaviest::descend(
            &w,
            all,
            |s| s.index(),
            |s| stacks.parent(StackIndex::new(s)).map(|p| p.index()),
            |s| p.frames.kind(stacks.frame(StackIndex::new(s))) == FrameKind::Root,
        )
        .unwrap();
        let pick = heaviest::heaviest_path(&w).unwrap();
        assert_eq!(
            (pick.target.clone(), pick.samples, pick.time),
            (Target::Stack(StackIndex::new(s)), n, t)
        );
        deep += usize::from(stacks.parent(StackIndex::new(s)).is_some());
        // Its subtree: a stack is under `s` when its parent is (parents come first).
        let mut under = vec![false; all];
        under[s] = true;
        for i in s + 1..all {
            under[i] = stacks
                .parent(StackIndex::new(i))
                .is_some_and(|p| under[p.index()]);
        }
        let is_target = target_filter(&w, None, &pick);
        for (i, &u) in under.iter().enumerate() {
            assert_eq!(is_target(StackIndex::new(i)), u, "stack {i} under {s}");
        }
    }
    // Most paths went past the root.
    assert!(deep > 200, "{deep}");
}

use super::*;
use crate::scan::records::EventTimingData;
use crate::vocab::{Pid, Tid};

const T: ThreadKey = ThreadKey {
    pid: Pid(1658),
    tid: Tid(1658),
};

/// A begin: (id, ts µs, type, interactionId, duration, timeStamp, processingStart,
/// processingEnd), the page-clock fields in ms.
#[allow(clippy::too_many_arguments)]
fn b(id: &str, ts: i64, ty: &str, iid: i64, dur: f64, t0: f64, ps: f64, pe: f64) -> EventTiming {
    EventTiming {
        thread: T,
        ts: Timestamp::from_micros(ts),
        id: Some(id.into()),
        begin: Some(Box::new(EventTimingData {
            event_type: Some(ty.into()),
            interaction_id: Some(iid),
            duration: Some(dur),
            time_stamp: Some(t0),
            processing_start: Some(ps),
            processing_end: Some(pe),
            frame: None,
            node_id: None,
        })),
        order: 0,
    }
}

fn e(id: &str, ts: i64) -> EventTiming {
    EventTiming {
        thread: T,
        ts: Timestamp::from_micros(ts),
        id: Some(id.into()),
        begin: None,
        order: 0,
    }
}

/// In file order: `order` set from the position.
fn file(mut v: Vec<EventTiming>) -> Vec<EventTiming> {
    for (i, x) in v.iter_mut().enumerate() {
        x.order = i as u64;
    }
    v
}

fn us(t: Timestamp) -> i64 {
    t.as_nanos() / 1000
}

fn phases_us(i: &Interaction) -> (i64, i64, i64) {
    (
        i.input_delay().as_nanos() / 1000,
        i.processing().as_nanos() / 1000,
        i.presentation_delay().as_nanos() / 1000,
    )
}

/// The keyboard interaction of the shared recording (inp_all_1, interaction 5414): keydown
/// and keypress start at one input and end at one paint, their ends written keypress
/// first; keyup is its own event. DevTools' oracle: keydown kept with its own processing
/// (1.194 ms input delay, 104.375 ms processing, 15.883 ms presentation delay, 121.452 ms),
/// keyup kept too (another end time).
fn keyboard() -> Vec<EventTiming> {
    file(vec![
        b(
            "0x25", 2798187621, "keydown", 5414, 121.452, 1612.758, 1613.952, 1718.327,
        ),
        b(
            "0x26", 2798187621, "keypress", 5414, 121.452, 1612.758, 1718.371, 1725.727,
        ),
        // Not an interaction (interactionId 0): never paired, its end pops nothing.
        b(
            "0x2b",
            2798297516,
            "beforeinput",
            0,
            11.557,
            1722.653,
            1722.663,
            1722.692,
        ),
        b(
            "0x2d", 2798303808, "keyup", 5414, 5.308, 1728.945, 1731.29, 1731.324,
        ),
        e("0x2b", 2798309073),
        e("0x26", 2798309073),
        e("0x25", 2798309073),
        e("0x2d", 2798309116),
    ])
}

#[test]
fn keydown_with_the_longer_processing_replaces_keypress_at_one_time() {
    let paired = pair(&keyboard());
    let types: Vec<&str> = paired.iter().map(|p| p.event_type.as_str()).collect();
    // Sorted by ts, the longer first; keypress and keydown tie and keep their ends' order.
    assert_eq!(types, ["keypress", "keydown", "keyup"]);
    // processingStart on the trace clock: 2798187621 + (1613.952 − 1612.758) × 1000.
    assert_eq!(us(paired[1].processing_start), 2_798_188_815);
    assert_eq!(us(paired[1].processing_end), 2_798_293_190);
    let kept = remove_nested(&paired);
    let kept_types: Vec<&str> = kept.iter().map(|p| p.event_type.as_str()).collect();
    assert_eq!(kept_types, ["keydown", "keyup"]);
    // keydown replaced keypress: the widening went to keypress and was lost with it.
    assert_eq!(us(kept[0].processing_end), 2_798_293_190);
    let all = interactions(&keyboard(), &[]);
    assert_eq!(all.len(), 1);
    let i = &all[0];
    assert_eq!(i.event.event_type, "keydown");
    assert_eq!(i.category, Category::Keyboard);
    assert_eq!(i.event_types, ["keypress", "keydown", "keyup"]);
    assert_eq!(i.kept_events, 2);
    assert_eq!(i.duration(), TimeDelta::from_micros(121_452));
    assert_eq!(phases_us(i), (1_194, 104_375, 15_883));
    assert!(i.is_inp);
}

/// The first click of the shared recording (5421): pointerdown starts first, pointerup and
/// click end at the same paint; the kept pointerdown's processing ends at the click's end
/// (DevTools' oracle: 3.033 / 153.295 / 16.975 ms).
#[test]
fn the_earliest_pointer_event_is_kept_with_processing_widened_to_the_latest_end() {
    let events = file(vec![
        b(
            "0x2c",
            2799611639,
            "pointerdown",
            5421,
            173.303,
            3036.776,
            3039.809,
            3040.343,
        ),
        b(
            "0x34",
            2799611974,
            "pointerup",
            5421,
            172.968,
            3037.111,
            3041.659,
            3041.805,
        ),
        b(
            "0x36", 2799611974, "click", 5421, 172.968, 3037.111, 3041.832, 3193.104,
        ),
        e("0x36", 2799784942),
        e("0x34", 2799784942),
        e("0x2c", 2799784942),
    ]);
    let all = interactions(&events, &[]);
    assert_eq!(all.len(), 1);
    let i = &all[0];
    assert_eq!(i.event.event_type, "pointerdown");
    assert_eq!(i.category, Category::Pointer);
    assert_eq!(i.kept_events, 1);
    assert_eq!(us(i.event.ts), 2_799_611_639);
    assert_eq!(i.duration(), TimeDelta::from_micros(173_303));
    // 2799611974 + (3193.104 − 3037.111) × 1000 = 2799767967; − 2799614672 = 153295.
    assert_eq!(phases_us(i), (3_033, 153_295, 16_975));
}

#[test]
fn an_end_takes_the_last_unmatched_begin_of_its_id() {
    // Chrome reuses ids: 0x26 opens twice before its first end. The first end pairs the
    // second begin; the second end, the first.
    let events = file(vec![
        b("0x26", 1_000, "click", 1, 40.0, 1.0, 2.0, 3.0),
        b("0x26", 2_000, "keydown", 2, 40.0, 2.0, 3.0, 4.0),
        e("0x26", 3_000),
        e("0x26", 9_000),
    ]);
    let p = pair(&events);
    let got: Vec<(&str, i64, i64)> = p
        .iter()
        .map(|x| (x.event_type.as_str(), us(x.ts), us(x.end)))
        .collect();
    assert_eq!(got, [("click", 1_000, 9_000), ("keydown", 2_000, 3_000)]);
}

#[test]
fn events_devtools_drops_are_dropped() {
    let mut no_type = b("0x5", 100, "click", 5, 40.0, 1.0, 2.0, 3.0);
    no_type.begin.as_mut().unwrap().event_type = None;
    let mut no_processing = b("0x6", 100, "click", 6, 40.0, 1.0, 2.0, 3.0);
    no_processing.begin.as_mut().unwrap().processing_end = Some(0.0);
    let mut no_duration = b("0x7", 100, "click", 7, 40.0, 1.0, 2.0, 3.0);
    no_duration.begin.as_mut().unwrap().duration = None;
    let events = file(vec![
        // Under 1 ms, interaction 0, no type, a processing time of 0: dropped.
        b("0x1", 100, "click", 1, 0.5, 1.0, 2.0, 3.0),
        b("0x2", 100, "click", 0, 40.0, 1.0, 2.0, 3.0),
        no_type,
        no_processing,
        // A missing duration is not under 1 ms in JavaScript: kept.
        no_duration,
        // No end: dropped.
        b("0x8", 100, "click", 8, 40.0, 1.0, 2.0, 3.0),
        e("0x1", 200),
        e("0x2", 200),
        e("0x5", 200),
        e("0x6", 200),
        e("0x7", 200),
    ]);
    let ids: Vec<i64> = pair(&events).iter().map(|p| p.interaction_id).collect();
    assert_eq!(ids, [7]);
}

#[test]
fn nesting_is_per_category() {
    // DevTools' example: A keydown and B keyup end together, C pointerdown and D pointerup
    // end together: B hides under A, D under C, A and C stay (different categories).
    let events = file(vec![
        b("a", 1_000, "keydown", 1, 40.0, 1.0, 2.0, 3.0),
        b("b", 2_000, "keyup", 1, 40.0, 2.0, 3.0, 9.0),
        b("c", 3_000, "pointerdown", 2, 40.0, 3.0, 4.0, 5.0),
        b("d", 4_000, "pointerup", 2, 40.0, 4.0, 5.0, 6.0),
        e("a", 50_000),
        e("b", 50_000),
        e("c", 50_000),
        e("d", 50_000),
    ]);
    let kept = remove_nested(&pair(&events));
    let got: Vec<(&str, i64, i64)> = kept
        .iter()
        .map(|k| {
            (
                k.event_type.as_str(),
                us(k.processing_start),
                us(k.processing_end),
            )
        })
        .collect();
    // A: 1000 + 1 ms = 2000 … widened to B's end 2000 + 7 ms = 9000; C: 4000, to D's 6000.
    assert_eq!(
        got,
        [("keydown", 2_000, 9_000), ("pointerdown", 4_000, 6_000)]
    );
}

#[test]
fn inp_is_per_navigation_at_min_9_n_over_50() {
    // 120 quick clicks, then a navigation at 1 s, then two: the first span's INP is its
    // third longest (120 / 50 = 2), the second span's its longest.
    let mut v = Vec::new();
    for k in 0..120i64 {
        let ts = k * 5_000;
        let dur = 10.0 + k as f64 * 0.01;
        v.push(b(&format!("{k}"), ts, "click", k + 1, dur, 1.0, 1.5, 2.0));
        v.push(e(&format!("{k}"), ts + (dur * 1000.0) as i64));
    }
    v.push(b("x", 2_000_000, "click", 500, 30.0, 1.0, 2.0, 3.0));
    v.push(e("x", 2_030_000));
    v.push(b("y", 2_100_000, "keydown", 501, 60.0, 1.0, 2.0, 3.0));
    v.push(e("y", 2_160_000));
    let v = file(v);
    let navs = [Navigation {
        ts: Timestamp::from_micros(1_000_000),
        id: "N1".into(),
    }];
    let all = interactions(&v, &navs);
    let inp: Vec<i64> = all
        .iter()
        .filter(|i| i.is_inp)
        .map(|i| i.event.interaction_id)
        .collect();
    // Durations grow with k: the third longest of the first 120 is k = 117 (id 118).
    assert_eq!(inp, [118, 501]);
    // Without the navigation: one span of 122, index 2: 501, 500, then id 120.
    let one: Vec<i64> = interactions(&v, &[])
        .iter()
        .filter(|i| i.is_inp)
        .map(|i| i.event.interaction_id)
        .collect();
    assert_eq!(one, [120]);
}

//! Animation frames of a trace: Chrome's `AnimationFrame` begin/end events, with their
//! script entries and rendering phases, paired as DevTools' `AnimationFramesHandler` pairs
//! them (docs/METHOD.md §2.9): per thread, the begin events and the end events each in
//! time order, the i-th begin with the i-th end; a begin left without an end is dropped.

use crate::scan::records::{FrameMark, FrameMarkKind, FrameTimingInfo, ScriptTimingInfo};
use crate::time::{TimeDelta, Timestamp};
use crate::vocab::{FastMap, ThreadKey};

/// One animation frame: from its first task's start to the end of its rendering update.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct AnimationFrame {
    /// The thread (a renderer's main thread).
    pub(crate) thread: ThreadKey,
    /// Start: the begin event's `ts`.
    pub(crate) ts: Timestamp,
    /// The end event's `ts` − `ts`.
    pub(crate) dur: TimeDelta,
    /// `animation_frame_timing_info` of the begin event (defaults when missing).
    pub(crate) timing: FrameTimingInfo,
    /// Its script entries (`::Script::Execute` / `::Script::Compile`), in time order.
    pub(crate) scripts: Vec<FrameScript>,
    /// Start of its rendering update (`::Render`), when the trace has it.
    pub(crate) render_start: Option<Timestamp>,
    /// Start of style and layout in the rendering update (`::StyleAndLayout`).
    pub(crate) style_layout_start: Option<Timestamp>,
}

impl AnimationFrame {
    /// `ts + dur`.
    pub(crate) fn end(&self) -> Timestamp {
        self.ts + self.dur
    }
}

/// One script entry of a frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FrameScript {
    /// Start (`ts` of its begin event).
    pub(crate) ts: Timestamp,
    /// Its end event's `ts` − `ts` (zero when the end is missing).
    pub(crate) dur: TimeDelta,
    /// `::Script::Compile` rather than `::Script::Execute`.
    pub(crate) compile: bool,
    /// `animation_frame_script_timing_info` (defaults when missing).
    pub(crate) info: ScriptTimingInfo,
}

/// The frames of `threads` (sorted) longer than `threshold` (strictly, as tasks), in thread
/// and time order, and the number of frames of those threads of any length.
pub(crate) fn long_frames(
    marks: Vec<FrameMark>,
    threads: &[ThreadKey],
    threshold: TimeDelta,
) -> (Vec<AnimationFrame>, usize) {
    let mut per_thread: FastMap<ThreadKey, Vec<FrameMark>> = FastMap::default();
    for m in marks {
        if threads.binary_search(&m.thread).is_ok() {
            per_thread.entry(m.thread).or_default().push(m);
        }
    }
    let mut keys: Vec<ThreadKey> = per_thread.keys().copied().collect();
    keys.sort();
    let mut out = Vec::new();
    let mut all = 0;
    for thread in keys {
        let mut marks = per_thread.remove(&thread).unwrap_or_default();
        marks.sort_by_key(|m| (m.ts, m.order));
        let frames = pair_frames(thread, &mut marks);
        all += frames.len();
        let mut long: Vec<AnimationFrame> =
            frames.into_iter().filter(|f| f.dur > threshold).collect();
        if !long.is_empty() {
            attach_children(&mut long, &mut marks);
        }
        out.extend(long);
    }
    (out, all)
}

/// The frames of one thread's marks (sorted by time): i-th begin with i-th end.
fn pair_frames(thread: ThreadKey, marks: &mut [FrameMark]) -> Vec<AnimationFrame> {
    let is_frame = |m: &FrameMark| m.kind == FrameMarkKind::Frame;
    let ends: Vec<Timestamp> = marks
        .iter()
        .filter(|m| is_frame(m) && !m.begin)
        .map(|m| m.ts)
        .collect();
    marks
        .iter_mut()
        .filter(|m| is_frame(m) && m.begin)
        .zip(ends)
        .map(|(b, end)| AnimationFrame {
            thread,
            ts: b.ts,
            dur: end.since(b.ts).max(TimeDelta::ZERO),
            timing: b.frame.take().map(|t| *t).unwrap_or_default(),
            scripts: Vec::new(),
            render_start: None,
            style_layout_start: None,
        })
        .collect()
}

/// Gives each frame of `frames` (sorted, not overlapping) the script entries and rendering
/// phases that begin inside it; each child's begin is paired with the next end of its kind.
fn attach_children(frames: &mut [AnimationFrame], marks: &mut [FrameMark]) {
    let frame_at = |frames: &[AnimationFrame], ts: Timestamp| {
        let i = frames.partition_point(|f| f.ts <= ts);
        (i > 0 && ts <= frames[i - 1].end()).then(|| i - 1)
    };
    // Open begins per child kind (scripts may nest, as a stack).
    let mut open: Vec<(FrameMarkKind, usize)> = Vec::new();
    for i in 0..marks.len() {
        let kind = marks[i].kind;
        if kind == FrameMarkKind::Frame {
            continue;
        }
        if marks[i].begin {
            open.push((kind, i));
            continue;
        }
        let same = |k: FrameMarkKind| match (k, kind) {
            (FrameMarkKind::Script { .. }, FrameMarkKind::Script { .. }) => true,
            (a, b) => a == b,
        };
        let Some(at) = open.iter().rposition(|&(k, _)| same(k)) else {
            continue;
        };
        let (_, b) = open.remove(at);
        let (ts, end) = (marks[b].ts, marks[i].ts);
        let Some(f) = frame_at(frames, ts) else {
            continue;
        };
        let frame = &mut frames[f];
        match kind {
            FrameMarkKind::Script { compile } => frame.scripts.push(FrameScript {
                ts,
                dur: end.since(ts).max(TimeDelta::ZERO),
                compile,
                info: marks[b].script.take().map(|s| *s).unwrap_or_default(),
            }),
            FrameMarkKind::Render => frame.render_start = Some(ts),
            FrameMarkKind::StyleAndLayout => frame.style_layout_start = Some(ts),
            FrameMarkKind::Frame => {}
        }
    }
    for f in frames {
        f.scripts.sort_by_key(|s| s.ts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{Pid, Tid};

    fn mark(ts: i64, kind: FrameMarkKind, begin: bool) -> FrameMark {
        FrameMark {
            thread: ThreadKey {
                pid: Pid(1),
                tid: Tid(1),
            },
            ts: Timestamp::from_micros(ts),
            begin,
            kind,
            order: ts as u64,
            frame: begin.then(|| {
                Box::new(FrameTimingInfo {
                    duration_ms: Some((ts / 1000) as f64),
                    ..Default::default()
                })
            }),
            script: None,
        }
    }

    #[test]
    fn frames_pair_in_time_order_and_take_the_children_that_begin_inside() {
        use FrameMarkKind::*;
        let t = |ts| Timestamp::from_micros(ts);
        let marks = vec![
            mark(1_000, Frame, true),
            mark(2_000, Frame, false), // 1 ms: short
            mark(10_000, Frame, true),
            mark(11_000, Script { compile: false }, true),
            mark(70_000, Script { compile: false }, false),
            mark(71_000, Render, true),
            mark(72_000, StyleAndLayout, true),
            mark(75_000, StyleAndLayout, false),
            mark(80_000, Render, false),
            mark(80_000, Frame, false), // 70 ms
            mark(90_000, Frame, true),  // no end: dropped
        ];
        let threads = [marks[0].thread];
        let (long, all) = long_frames(marks, &threads, TimeDelta::from_micros(50_000));
        assert_eq!(all, 2);
        assert_eq!(long.len(), 1);
        let f = &long[0];
        assert_eq!((f.ts, f.dur), (t(10_000), TimeDelta::from_micros(70_000)));
        assert_eq!(f.timing.duration_ms, Some(10.0));
        assert_eq!(f.scripts.len(), 1);
        assert_eq!(
            (f.scripts[0].ts, f.scripts[0].dur),
            (t(11_000), TimeDelta::from_micros(59_000))
        );
        assert_eq!(f.render_start, Some(t(71_000)));
        assert_eq!(f.style_layout_start, Some(t(72_000)));
        // Threads out of scope are left out.
        let other = [ThreadKey {
            pid: Pid(2),
            tid: Tid(2),
        }];
        assert_eq!(
            long_frames(vec![mark(0, Frame, true)], &other, TimeDelta::ZERO),
            (vec![], 0)
        );
    }
}

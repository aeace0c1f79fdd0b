//! A task window's flame chart as SVG, drawn from its [`Timeline`]: time left to right,
//! callers above callees (as DevTools' Performance panel draws the main thread), one box
//! per frame for as long as consecutive samples keep it on the stack. A box of a frame of
//! the chosen stack is orange and outlined when at least half of its time is the chosen
//! stack's samples, and a track above the chart marks when those samples ran; every box
//! has a tooltip with its frame and time.

use std::fmt::Write;

use super::esc;
use crate::chain::{ChainFrame, Timeline};
use crate::time::TimeDelta;

/// Width of the chart in SVG units (it scales to the page's width).
const WIDTH: f64 = 1000.0;
/// Height of one row of boxes.
const ROW: f64 = 15.0;
/// Rows above the boxes: the time axis and the chosen-stack track.
const HEAD: f64 = 34.0;
/// Deepest row drawn; deeper frames are counted as left out.
pub(crate) const MAX_DEPTH: usize = 64;
/// Most boxes drawn; the narrowest beyond it are left out (a chart of this many boxes is
/// about 150 KB).
pub(crate) const MAX_BOXES: usize = 1_200;
/// Boxes narrower than this (in units of [`WIDTH`]) are left out: no one can point at them.
const MIN_BOX: f64 = 0.25;

/// What a chart left out, for its caption.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LeftOut {
    /// Boxes too narrow to draw or past [`MAX_BOXES`].
    pub(crate) boxes: usize,
    /// The narrowest boxes left out to keep the chart within its share of the page's
    /// bytes ([`chart`]'s `max_bytes`).
    pub(crate) for_size: usize,
    /// Rows below [`MAX_DEPTH`].
    pub(crate) deep_rows: usize,
    /// Runs merged by [`crate::chain::TIMELINE_RUNS`].
    pub(crate) merged_runs: usize,
}

/// One frame on the stack over consecutive runs.
struct FrameBox {
    depth: usize,
    /// The timeline stack at this depth.
    node: u32,
    start: TimeDelta,
    end: TimeDelta,
    /// Time of the target runs under it.
    target_time: TimeDelta,
}

impl FrameBox {
    /// At least half of the box is the chosen stack's samples.
    fn chosen(&self) -> bool {
        self.target_time > TimeDelta::ZERO
            && i128::from(self.target_time.as_nanos()) * 2
                >= i128::from((self.end - self.start).as_nanos())
    }
}

/// The stack's path root → leaf in the timeline's stack table.
fn path(t: &Timeline, stack: Option<u32>, out: &mut Vec<u32>) {
    out.clear();
    let mut cur = stack;
    while let Some(s) = cur {
        out.push(s);
        cur = t.stacks.get(s as usize).and_then(|&(p, _)| p);
    }
    out.reverse();
}

/// A frame's fill: the chosen stack orange, VM states grey, scripts a pale colour by their
/// URL (one script, one colour).
fn fill(f: &ChainFrame, target: bool) -> String {
    if target {
        return "#f3a53c".into();
    }
    if f.url.is_empty() {
        return match f.function.as_str() {
            "(garbage collector)" => "#c5d3e0".into(),
            _ => "#d6d6d6".into(),
        };
    }
    let h = f.url.bytes().fold(2166136261u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(16777619)
    });
    // Hues from green to violet: orange stays the chosen stack's.
    format!("hsl({} 45% 80%)", 90 + h % 200)
}

/// A duration as the chart's labels show it.
fn ms(d: TimeDelta) -> String {
    let v = d.as_nanos() as f64 / 1e6;
    if v >= 10.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.1} ms")
    }
}

/// The chart of `t` as an `<svg>` of at most about `max_bytes` (its narrowest boxes left
/// out until it fits; the axis and the track always stay); `task_offset` is where the
/// task starts in the window (the lookback). Returns the SVG and what it left out.
pub(crate) fn chart(
    t: &Timeline,
    task_offset: TimeDelta,
    label: &str,
    max_bytes: usize,
) -> (String, LeftOut) {
    let (mut svg, mut left, mut drawn) = draw(t, task_offset, label, MAX_BOXES);
    let all = drawn;
    // Bytes grow with boxes about linearly: a few tries, each with fewer boxes.
    for _ in 0..4 {
        if svg.len() <= max_bytes || drawn == 0 {
            break;
        }
        let fewer = (drawn as f64 * max_bytes as f64 / svg.len() as f64 * 0.9) as usize;
        (svg, left, drawn) = draw(t, task_offset, label, fewer.min(drawn - 1));
    }
    left.for_size = all - drawn;
    (svg, left)
}

/// [`chart`] with at most `max_boxes` boxes; also returns the number drawn.
fn draw(
    t: &Timeline,
    task_offset: TimeDelta,
    label: &str,
    max_boxes: usize,
) -> (String, LeftOut, usize) {
    let mut left = LeftOut {
        merged_runs: t.merged_runs,
        ..LeftOut::default()
    };
    let len = t.length.as_nanos().max(1) as f64;
    let x = |d: TimeDelta| (d.as_nanos() as f64 / len * WIDTH).clamp(0.0, WIDTH);
    // Boxes row by row: a frame's box goes on while the runs keep it at that depth.
    let mut open: Vec<Option<FrameBox>> = Vec::new();
    let mut boxes: Vec<FrameBox> = Vec::new();
    let mut p = Vec::new();
    let mut deepest = 0;
    let mut track: Vec<(TimeDelta, TimeDelta)> = Vec::new();
    for run in &t.runs {
        let end = run.start + run.dur;
        if run.target {
            match track.last_mut() {
                Some(last) if last.1 >= run.start => last.1 = end,
                _ => track.push((run.start, end)),
            }
        }
        path(t, run.stack, &mut p);
        deepest = deepest.max(p.len());
        if open.len() < p.len() {
            open.resize_with(p.len(), || None);
        }
        for (depth, slot) in open.iter_mut().enumerate() {
            let node = p.get(depth).copied();
            let goes_on = matches!((slot.as_ref(), node),
                (Some(b), Some(n)) if b.node == n && b.end >= run.start);
            match slot.as_mut() {
                Some(b) if goes_on => {
                    b.end = end;
                    if run.target {
                        b.target_time = b.target_time + run.dur;
                    }
                }
                _ => {
                    if let Some(b) = slot.take() {
                        boxes.push(b);
                    }
                    *slot = node.map(|node| FrameBox {
                        depth,
                        node,
                        start: run.start,
                        end,
                        target_time: if run.target { run.dur } else { TimeDelta::ZERO },
                    });
                }
            }
        }
    }
    boxes.extend(open.into_iter().flatten());
    let before = boxes.len();
    boxes.retain(|b| b.depth < MAX_DEPTH);
    left.deep_rows = deepest.saturating_sub(MAX_DEPTH);
    let deep_boxes = before - boxes.len();
    boxes.retain(|b| x(b.end) - x(b.start) >= MIN_BOX);
    let narrow_or_many = before - deep_boxes - boxes.len().min(MAX_BOXES);
    if boxes.len() > max_boxes {
        boxes.sort_by_key(|b| std::cmp::Reverse(b.end - b.start));
        boxes.truncate(max_boxes);
    }
    left.boxes = narrow_or_many;
    boxes.sort_by_key(|b| (b.depth, b.start));

    let rows = deepest.clamp(1, MAX_DEPTH);
    let height = HEAD + rows as f64 * ROW + 2.0;
    let mut s = String::with_capacity(boxes.len() * 160 + 1024);
    let _ = write!(
        s,
        r#"<svg class="flame" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg">"#,
        esc(label)
    );
    // The time axis: about 8 ticks at a round step.
    let step = nice_step(t.length.as_nanos() as f64 / 8.0);
    let mut tick = 0.0;
    while tick <= t.length.as_nanos() as f64 {
        let tx = tick / len * WIDTH;
        let _ = write!(
            s,
            r##"<line x1="{tx:.1}" y1="12" x2="{tx:.1}" y2="{height}" class="tick"/><text x="{:.1}" y="10" class="axis">{}</text>"##,
            (tx + 2.0).min(WIDTH - 40.0),
            ms(TimeDelta::from_nanos(tick as i64))
        );
        tick += step;
    }
    if task_offset > TimeDelta::ZERO {
        let tx = x(task_offset);
        let _ = write!(
            s,
            r#"<line x1="{tx:.1}" y1="0" x2="{tx:.1}" y2="{height}" class="start"/>"#
        );
    }
    // The chosen stack's track, and its label over it.
    for (a, b) in &track {
        let _ = write!(
            s,
            r#"<rect x="{:.2}" y="17" width="{:.2}" height="12" class="track"><title>chosen stack: {} from {}</title></rect>"#,
            x(*a),
            (x(*b) - x(*a)).max(MIN_BOX),
            ms(*b - *a),
            ms(*a)
        );
    }
    s.push_str(r#"<text x="2" y="27" class="label">chosen stack</text>"#);
    for b in &boxes {
        let (_, frame) = t.stacks[b.node as usize];
        let f = &t.frames[frame as usize];
        let (bx, bw) = (x(b.start), x(b.end) - x(b.start));
        let y = HEAD + b.depth as f64 * ROW;
        let text = f.text();
        let _ = write!(
            s,
            r#"<g><title>{} — {} from {}</title><rect x="{bx:.2}" y="{y:.0}" width="{bw:.2}" height="{}" fill="{}"{}/>"#,
            esc(&text),
            ms(b.end - b.start),
            ms(b.start),
            ROW - 1.0,
            fill(f, b.chosen()),
            if b.chosen() { r#" class="chosen""# } else { "" }
        );
        // A label where at least a few characters fit (about 6 units a character).
        let fits = ((bw - 4.0) / 6.0) as usize;
        if fits >= 3 {
            let name = f.shown_function();
            let shown: String = if name.chars().count() > fits {
                name.chars()
                    .take(fits - 1)
                    .chain(std::iter::once('…'))
                    .collect()
            } else {
                name.to_string()
            };
            let _ = write!(
                s,
                r#"<text x="{:.2}" y="{:.0}">{}</text>"#,
                bx + 2.0,
                y + ROW - 4.0,
                esc(&shown)
            );
        }
        s.push_str("</g>");
    }
    s.push_str("</svg>");
    let drawn = boxes.len();
    (s, left, drawn)
}

/// A round step (1, 2 or 5 × 10ⁿ ns) of at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let raw = raw.max(1.0);
    let base = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * base)
        .find(|v| *v >= raw)
        .unwrap_or(10.0 * base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::TimelineRun;

    fn frame(name: &str, url: &str) -> ChainFrame {
        ChainFrame {
            function: name.into(),
            url: url.into(),
            recursion_depth: 1,
            ..ChainFrame::default()
        }
    }

    fn run(start_ms: i64, dur_ms: i64, stack: u32, target: bool) -> TimelineRun {
        TimelineRun {
            start: TimeDelta::from_micros(start_ms * 1000),
            dur: TimeDelta::from_micros(dur_ms * 1000),
            samples: 1,
            stack: Some(stack),
            target,
        }
    }

    /// main > a for 0–40 ms, main > b for 40–100 ms (the chosen stack): main is 60 % the
    /// chosen stack's, so it is marked too.
    fn timeline() -> Timeline {
        Timeline {
            length: TimeDelta::from_micros(100_000),
            frames: vec![
                frame("main", "http://h/app.js"),
                frame("a", "http://h/app.js"),
                frame("b<img onerror=x>", "http://h/app.js"),
            ],
            stacks: vec![(None, 0), (Some(0), 1), (Some(0), 2)],
            runs: vec![
                run(0, 20, 1, false),
                run(20, 20, 1, false),
                run(40, 60, 2, true),
            ],
            ..Timeline::default()
        }
    }

    #[test]
    fn boxes_follow_the_stacks_and_the_chosen_ones_are_marked() {
        let (svg, left) = chart(&timeline(), TimeDelta::ZERO, "task", usize::MAX);
        assert_eq!(left, LeftOut::default());
        // main spans the whole window, a 0–40 %, b 40–100 %.
        assert!(svg.contains(
            r##"<rect x="0.00" y="34" width="1000.00" height="14" fill="#f3a53c" class="chosen"/>"##
        ));
        assert!(svg.contains(r#"<rect x="0.00" y="49" width="400.00" height="14" fill="hsl("#));
        assert!(svg.contains(r##"<rect x="400.00" y="49" width="600.00" height="14" fill="#f3a53c" class="chosen"/>"##));
        assert_eq!(svg.matches("class=\"chosen\"").count(), 2);
        // With `b` shorter than `a`, main is no longer mostly the chosen stack's.
        let mut t = timeline();
        t.runs[2].dur = TimeDelta::from_micros(30_000);
        let (shorter, _) = chart(&t, TimeDelta::ZERO, "task", usize::MAX);
        assert_eq!(shorter.matches("class=\"chosen\"").count(), 1);
        // The track marks 40–100 ms.
        assert!(
            svg.contains(r#"<rect x="400.00" y="17" width="600.00" height="12" class="track">"#)
        );
        // Names are text, never markup.
        assert!(!svg.contains("<img"));
        assert!(svg.contains("b&lt;img onerror=x&gt;"));
    }

    #[test]
    fn too_deep_and_too_narrow_boxes_are_counted() {
        let mut t = timeline();
        // A run of 0.01 ms: 0.1 units wide.
        t.runs.push(TimelineRun {
            start: TimeDelta::from_micros(100_000),
            dur: TimeDelta::from_micros(10),
            samples: 1,
            stack: Some(1),
            target: false,
        });
        t.length = TimeDelta::from_micros(100_010);
        let (_, left) = chart(&t, TimeDelta::ZERO, "task", usize::MAX);
        // `a` again (main goes on, as it is contiguous).
        assert_eq!(left.boxes, 1);
    }

    #[test]
    fn a_chart_over_its_bytes_loses_its_narrowest_boxes() {
        let t = timeline();
        let (full, left) = chart(&t, TimeDelta::ZERO, "task", usize::MAX);
        assert_eq!(left.for_size, 0);
        // Three boxes: main (100 ms), b (60 ms), a (40 ms). A chart of one box fewer than
        // the whole fits under its length less a little.
        let (svg, left) = chart(&t, TimeDelta::ZERO, "task", full.len() - 10);
        assert!(
            svg.len() <= full.len() - 10,
            "{} of {}",
            svg.len(),
            full.len()
        );
        assert!(left.for_size >= 1);
        assert_eq!(svg.matches("<g>").count(), 3 - left.for_size);
        // `a`, the narrowest, goes first: `b` stays while anything does.
        assert!(!svg.contains(r#"width="400.00" height="14""#));
        // With no room at all, no box, but still the axis and the track.
        let (bare, left) = chart(&t, TimeDelta::ZERO, "task", 0);
        assert_eq!((left.for_size, bare.matches("<g>").count()), (3, 0));
        assert!(bare.contains("class=\"track\""));
    }
}

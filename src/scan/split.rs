//! Scanning one large file in parallel ranges, with the same result as one sequential walk.
//!
//! The event array is cut at guessed event starts (a `{` after `},` and a newline, as
//! DevTools and Lighthouse write one event per line; else after `},`), and each range is
//! walked by a rayon worker with its own [`Collector`]. A guess is only trusted when the
//! walk of the range before it, which started at a trusted place, stops exactly there; a
//! wrong guess (a `},{` inside a string or in a nested array) is found that way and its
//! range is walked again from the true position. Collectors are merged in file order.

use memchr::memchr;
use rayon::prelude::*;

use super::event::{Phase, TraceEvent};
use super::json::skip_ws;
use super::{Collector, RangeEnd, Walked, walk};

/// Bytes per range. Tuned on the 1 GB benchmark traces (scripts/bench.sh, 2 cores):
/// 8–64 MB gave the same time within noise; smaller ranges balance better and the
/// per-range cost (a guess, a collector, a merge) is a few microseconds.
const RANGE_BYTES: usize = 16 << 20;

/// Walks the whole array from `b[start]`, in parallel ranges when it is large and the pool
/// has more than one thread. Returns the merged collector and the last range's end.
pub fn scan_ranges<F>(b: &[u8], start: usize, ndjson: bool, new: F) -> (Collector, Walked)
where
    F: Fn() -> Collector + Sync,
{
    let len = b.len().saturating_sub(start);
    let threads = rayon::current_num_threads();
    if threads < 2 || len < 2 * RANGE_BYTES {
        let mut c = new();
        let w = walk(b, start, usize::MAX, ndjson, |ev| c.event(&ev));
        return (c, w);
    }
    let n = len / RANGE_BYTES;
    let size = len / n;
    let mut bounds = vec![start];
    for k in 1..n {
        let from = start + k * size;
        if let Some(p) = guess_event_start(b, from, (from + size).min(b.len()))
            && p > *bounds.last().expect("not empty")
        {
            bounds.push(p);
        }
    }
    let walk_range = |from: usize, k: usize| {
        let until = bounds.get(k + 1).copied().unwrap_or(usize::MAX);
        let mut c = new();
        let w = walk(b, from, until, ndjson, |ev| c.event(&ev));
        (c, w)
    };
    let results: Vec<(Collector, Walked)> = (0..bounds.len())
        .into_par_iter()
        .map(|k| walk_range(bounds[k], k))
        .collect();

    let mut merged: Option<Collector> = None;
    let mut total = Walked {
        end: RangeEnd::Reached(start),
        events: 0,
        odd: 0,
    };
    let mut pos = start;
    for (k, result) in results.into_iter().enumerate() {
        // A guess that the walk before it did not land on: walk the range again.
        let (c, w) = if bounds[k] == pos {
            result
        } else {
            walk_range(pos, k)
        };
        total.events += w.events;
        total.odd += w.odd;
        match &mut merged {
            None => merged = Some(c),
            Some(m) => m.merge(c),
        }
        match w.end {
            RangeEnd::Reached(p) => pos = p,
            end @ RangeEnd::Ended(_) => {
                total.end = end;
                break;
            }
        }
    }
    (merged.expect("at least one range"), total)
}

/// A likely event start in `b[from..to]`: a `{` that follows `}` and `,` (with whitespace
/// between) and parses as an event with a `ph`. Newline-separated events are preferred.
fn guess_event_start(b: &[u8], from: usize, to: usize) -> Option<usize> {
    let after_separator = |j: usize| {
        let mut k = j;
        let mut seen_comma = false;
        while k > 0 {
            k -= 1;
            match b[k] {
                b' ' | b'\t' | b'\r' | b'\n' => {}
                b',' if !seen_comma => seen_comma = true,
                b'}' => return seen_comma,
                _ => return false,
            }
        }
        false
    };
    let is_event =
        |j: usize| TraceEvent::parse(b, j, 0).is_ok_and(|(ev, _)| ev.ph != Phase::Missing);
    let mut i = from;
    while let Some(k) = memchr(b'\n', &b[i..to]) {
        let j = skip_ws(b, i + k + 1);
        if b.get(j) == Some(&b'{') && after_separator(j) && is_event(j) {
            return Some(j);
        }
        i += k + 1;
    }
    let mut i = from;
    while let Some(k) = memchr(b'{', &b[i..to]) {
        let j = i + k;
        if after_separator(j) && is_event(j) {
            return Some(j);
        }
        i = j + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guesses_prefer_line_starts_and_need_a_phase() {
        let b = br#"[{"ph":"X","args":{"a":[{"x":1},{"y":2}]}},
{"ph":"I","ts":1}]"#;
        let line = b.iter().position(|&c| c == b'\n').unwrap() + 1;
        assert_eq!(guess_event_start(b, 1, b.len()), Some(line));
        // Without newlines, `},{"` inside args is tried first but has no `ph`.
        let one_line = br#"[{"ph":"X","args":{"a":[{"x":1},{"y":2}]}},{"ph":"I","ts":1}]"#;
        let at = one_line
            .windows(8)
            .position(|w| w == br#"{"ph":"I"#)
            .unwrap();
        assert_eq!(guess_event_start(one_line, 1, one_line.len()), Some(at));
    }
}

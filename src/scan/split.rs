//! Scanning one large file in parallel ranges, with the same result as one sequential walk.
//!
//! The event array is cut at guessed event starts (a `{` after `},` and a newline, as
//! DevTools and Lighthouse write one event per line; else after `},`), and each range is
//! walked by a rayon worker with its own [`Collector`]. A guess is only trusted when the
//! walk of the range before it, which started at a trusted place, stops exactly there; a
//! wrong guess (a `},{` inside a string or in a nested array) is found that way and its
//! range is walked again from the true position. Collectors are merged in file order.

use std::sync::atomic::{AtomicU64, Ordering};

use memchr::memchr;
use rayon::prelude::*;

use super::collect::MergedSizes;
use super::event::{Phase, TraceEvent};
use super::{Collector, RangeEnd, Walked, walk};
use crate::input::pages::Pages;
use crate::json::skip_ws;

/// Bytes per range. Tuned on the 1 GB benchmark traces (scripts/bench.sh, 2 cores):
/// 8–64 MB gave the same time within noise; smaller ranges balance better and the
/// per-range cost (a guess, a collector, a merge) is a few microseconds.
const RANGE_BYTES: usize = 16 << 20;

thread_local! {
    /// The range size of scans started on this thread, when [`with_range_bytes`] set one.
    static RANGE_BYTES_HERE: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with the scans it starts on this thread cut into ranges of `bytes` (at least
/// 1) instead of 16 MB, so that the parallel scan and its split-point checks run on small
/// inputs: for the fuzz targets and tests that compare it with the sequential scan.
#[doc(hidden)]
pub fn with_range_bytes<R>(bytes: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            RANGE_BYTES_HERE.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(RANGE_BYTES_HERE.with(|c| c.replace(Some(bytes.max(1)))));
    f()
}

/// Walks the whole array from `b[start]`, in parallel ranges when it is large and the pool
/// has more than one thread, each range's `pages` filled before its walk by the thread
/// that walks it. Returns the merged collector and the last range's end.
pub(crate) fn scan_ranges<F>(
    b: &[u8],
    start: usize,
    ndjson: bool,
    new: F,
    pages: Pages,
    progress: Option<&AtomicU64>,
) -> (Collector, Walked)
where
    F: Fn() -> Collector + Sync,
{
    // One range walked after its page advice: `until` as for `walk`. Its pages stay
    // mapped, as the windows of the long tasks read chunks again. A range walked again
    // from where the walk before it ended can start past `until`: no advice then.
    let walk_advised = |c: &mut Collector, from: usize, until: usize| {
        pages.will_read(b.get(from..until.min(b.len())).unwrap_or_default());
        walk(b, from, until, ndjson, |ev| c.event(ev))
    };
    let report = |bytes: usize| {
        if let Some(p) = progress {
            p.fetch_add(bytes as u64, Ordering::Relaxed);
        }
    };
    let len = b.len().saturating_sub(start);
    let threads = rayon::current_num_threads();
    let range_bytes = RANGE_BYTES_HERE.with(|c| c.get()).unwrap_or(RANGE_BYTES);
    if threads < 2 || len < 2 * range_bytes {
        // One walk, in steps of a range so that progress can be reported.
        let mut c = new();
        let mut total = Walked::at(start);
        let mut pos = start;
        loop {
            let mut w = walk_advised(&mut c, pos, pos.saturating_add(range_bytes));
            let end = std::mem::replace(&mut w.end, RangeEnd::Reached(0));
            total.extend(w);
            match end {
                RangeEnd::Reached(p) => {
                    report(p - pos);
                    pos = p;
                }
                end => {
                    report(b.len() - pos);
                    total.end = end;
                    return (c, total);
                }
            }
        }
    }
    let n = len / range_bytes;
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
        let w = walk_advised(&mut c, from, until);
        (c, w)
    };
    let results: Vec<(Collector, Walked)> = (0..bounds.len())
        .into_par_iter()
        .map(|k| {
            let r = walk_range(bounds[k], k);
            report(bounds.get(k + 1).copied().unwrap_or(b.len()) - bounds[k]);
            r
        })
        .collect();

    let sizes = MergedSizes::of(results.iter().map(|(c, _)| c));
    let mut merged: Option<Collector> = None;
    let mut total = Walked::at(start);
    let mut pos = start;
    for (k, result) in results.into_iter().enumerate() {
        // A guess that the walk before it did not land on: walk the range again.
        let (c, mut w) = if bounds[k] == pos {
            result
        } else {
            walk_range(pos, k)
        };
        let end = std::mem::replace(&mut w.end, RangeEnd::Reached(0));
        total.extend(w);
        match &mut merged {
            None => merged.insert(c).make_room(&sizes),
            Some(m) => m.merge_sized(c, Some(&sizes)),
        }
        match end {
            RangeEnd::Reached(p) => pos = p,
            end @ RangeEnd::Ended(_) => {
                total.end = end;
                break;
            }
        }
    }
    (merged.expect("at least one range"), total)
}

/// Where a walk resumes after invalid JSON ([`resync`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Resync {
    /// At this verified event start.
    At(usize),
    /// There is none in the rest of the input.
    NotFound,
    /// Not known before more bytes come (a stream's buffer ends first).
    NeedMore,
}

/// Where a `{` at `b[j]` is placed: 2 after a line break (one event per line, as Chrome,
/// DevTools and Lighthouse write them: a raw line break is never inside a JSON string), 1
/// right after a `,`, else 0.
fn placement(b: &[u8], j: usize) -> u8 {
    let mut k = j;
    while k > 0 {
        k -= 1;
        match b[k] {
            b'\n' => return 2,
            b' ' | b'\t' | b'\r' => {}
            b',' => return 1,
            _ => return 0,
        }
    }
    0
}

/// True when a `{` at `b[j]` is placed like an event (after a line break or a `,`).
fn placed_like_an_event(b: &[u8], j: usize) -> bool {
    placement(b, j) > 0
}

/// The first verified event start at or after `b[from]`, where a walk resumes after
/// invalid JSON: a `{` at a line start (else, in a file without line breaks there, after a
/// `,`) that parses as an event with a `ph`, the check the parallel scan makes of its
/// split points. Line starts come first: a `},{"ph":…}` can be nested inside an event, a
/// line start cannot. `at_end`: `b` holds the rest of the input.
pub(crate) fn resync(b: &[u8], from: usize, at_end: bool) -> Resync {
    let from = from.min(b.len());
    for min_placement in [2, 1] {
        let mut i = from;
        while let Some(k) = memchr(b'{', &b[i..]) {
            let j = i + k;
            if placement(b, j) >= min_placement {
                match TraceEvent::parse(b, j, 0) {
                    Ok((ev, _)) if ev.ph != Phase::Missing => return Resync::At(j),
                    Err(crate::json::LexError::Incomplete) if !at_end => return Resync::NeedMore,
                    _ => {}
                }
            }
            i = j + 1;
        }
        if !at_end {
            return Resync::NeedMore;
        }
    }
    Resync::NotFound
}

/// Event starts (by placement alone) in `b[from..to]`: the events a skipped stretch held.
pub(crate) fn event_starts_in(b: &[u8], from: usize, to: usize) -> u64 {
    memchr::memchr_iter(b'{', &b[from..to])
        .filter(|&k| placed_like_an_event(b, from + k))
        .count() as u64
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

#[cfg(test)]
mod parallel_tests {
    use super::*;

    /// ~40 MB of events whose `args` hold nested objects that look like events (`},` then a
    /// newline then `{"ph":"X",…}`), so that guessed split points land inside events and
    /// must be caught by the verification.
    fn big_trace() -> Vec<u8> {
        trace_with_decoys(40 << 20, 10_000)
    }

    /// `len` bytes of such events, the decoys after `pad` bytes of a string.
    fn trace_with_decoys(len: usize, pad: usize) -> Vec<u8> {
        let mut s = String::from("{\"traceEvents\":[\n");
        // A long first part, so that a split point most likely falls before the decoy.
        let decoy = format!(
            "[{{\"a\":\"{}\"}},\n{{\"ph\":\"X\",\"name\":\"RunTask\",\"pid\":9,\"tid\":9,\"ts\":1,\"dur\":99999999}}]",
            "p".repeat(pad)
        );
        let mut k = 0u64;
        while s.len() < len {
            s += &format!(
                r#"{{"args":{{"inner":{decoy}}},"ph":"X","name":"RunTask","pid":1,"tid":{},"ts":{},"dur":{}}},"#,
                k % 3,
                k * 100,
                (k * 7) % 90_000
            );
            s.push('\n');
            if k.is_multiple_of(97) {
                s += &format!(
                    r#"{{"args":{{"data":{{"cpuProfile":{{"samples":[1,2,3]}},"timeDeltas":[5,6,{k}]}}}},"id":"0x1","name":"ProfileChunk","ph":"P","pid":1,"tid":5,"ts":{}}},"#,
                    k * 100
                );
                s.push('\n');
            }
            k += 1;
        }
        s +=
            r#"{"ph":"M","name":"thread_name","pid":1,"tid":0,"args":{"name":"CrRendererMain"}}]}"#;
        s.into_bytes()
    }

    #[test]
    fn damage_is_skipped_alike_in_one_range_and_in_parallel() {
        // ~40 MB of one-line events with a byte spoiled in seven of them across the ranges
        // (one a stray `[` that keeps its event open to the end of the file).
        let mut s = String::from("{\"traceEvents\":[\n");
        let mut k = 0u64;
        while s.len() < 40 << 20 {
            s += &format!(
                "{{\"args\":{{\"data\":{{\"v\":[{k},2,3]}}}},\"ph\":\"X\",\"name\":\"RunTask\",\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":{}}},\n",
                k % 3,
                k * 100,
                (k * 7) % 90_000
            );
            k += 1;
        }
        s += "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"CrRendererMain\"}}]}";
        let intact = s.into_bytes();
        let mut b = intact.clone();
        let start = b.iter().position(|&c| c == b'[').unwrap() + 1;
        for k in 1..8 {
            let at = b.len() * k / 8;
            let line = at + b[at..].iter().position(|&c| c == b'\n').unwrap() + 1;
            let colon = line + b[line..].iter().position(|&c| c == b':').unwrap();
            b[colon] = if k == 3 { b'[' } else { b'#' };
        }
        let run = |b: &[u8], threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| crate::scan::scan(b, start, true).unwrap())
        };
        let (one, two) = (run(&b, 1), run(&b, 2));
        assert_eq!(one.damage, two.damage);
        assert_eq!(one.damage.len(), 7);
        assert_eq!(one.events, two.events);
        assert_eq!(one.task_marks, two.task_marks);
        assert_eq!(one.end, Some(crate::scan::ArrayEnd::Closed));
        // Each spoiled event cost itself only.
        let whole = run(&intact, 1);
        assert!(one.damage.iter().all(|d| d.skipped_events == 1));
        assert_eq!(one.events + 7, whole.events);
        assert_eq!(one.task_marks.len() + 7, whole.task_marks.len());
    }

    #[test]
    fn small_ranges_split_small_traces_as_large_ones() {
        // 60 KB in ranges of 100 bytes (`with_range_bytes`, as the `split` fuzz target
        // cuts them): ~600 ranges, most guesses inside the decoys' args, walked again.
        let b = trace_with_decoys(60_000, 20);
        let start = b.iter().position(|&c| c == b'[').unwrap() + 1;
        let run = |threads: usize, range: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| with_range_bytes(range, || crate::scan::scan(&b, start, true)))
                .unwrap()
        };
        let (one, two) = (run(1, RANGE_BYTES), run(2, 100));
        assert!(one.events > 200, "{}", one.events);
        assert_eq!(one.events, two.events);
        assert_eq!(one.task_marks, two.task_marks);
        assert_eq!(one.profile_data, two.profile_data);
        assert!(!two.task_marks.iter().any(|m| m.thread.pid.0 == 9));
        // The range size is this thread's only, and only inside the call.
        assert!(
            std::thread::spawn(|| RANGE_BYTES_HERE.with(|c| c.get()))
                .join()
                .unwrap()
                .is_none()
        );
        assert_eq!(
            with_range_bytes(7, || RANGE_BYTES_HERE.with(|c| c.get())),
            Some(7)
        );
        assert_eq!(RANGE_BYTES_HERE.with(|c| c.get()), None);
    }

    #[test]
    fn parallel_ranges_give_the_sequential_result() {
        let b = big_trace();
        let start = b.iter().position(|&c| c == b'[').unwrap() + 1;
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| crate::scan::scan(&b, start, true).unwrap())
        };
        let (one, two) = (run(1), run(2));
        assert_eq!(one.events, two.events);
        assert!(one.events > 3_000);
        // The same marks in the same (file) order, from one range or several.
        assert_eq!(one.task_marks, two.task_marks);
        assert_eq!(one.thread_names, two.thread_names);
        assert_eq!(one.profile_data, two.profile_data);
        assert_eq!(
            (one.first_ts, one.last_ts, &one.end),
            (two.first_ts, two.last_ts, &two.end)
        );
        // The guesses really land on decoys inside events, so the verification had work
        // to do; and no decoy became a task.
        let len = b.len() - start;
        let size = len / (len / RANGE_BYTES);
        let g = guess_event_start(&b, start + size, start + 2 * size).unwrap();
        assert!(b[g..].starts_with(br#"{"ph":"X","name":"RunTask","pid":9"#));
        assert!(!two.task_marks.iter().any(|m| m.thread.pid.0 == 9));
    }
}

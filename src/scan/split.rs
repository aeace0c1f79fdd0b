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
use crate::json::{LexError, Lexed, skip_ws};

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

/// Bytes that the failed parses of one walk may read in full (a damaged event read to
/// where it fails, a rejected resync candidate read to where it fails or closes without a
/// `ph`), beyond four times the bytes the walk covers. Honest damage spends one such read
/// per damaged stretch (a stray `[` reads to the end of the file once); a file made of
/// unclosed brackets, each a candidate that reads to the end, would spend the square of its
/// size. Once spent, every parse of the walk stops at the next event start ([`Recovery`]).
const RECOVERY_SLACK: u64 = 64 << 20;

/// What one walk may still spend on failed parses, and where its parses stop once that is
/// spent: an event, and a resync candidate, must then close before the next event start
/// (a `{` at a line start, else after a `,`), so that every byte is read by a bounded
/// number of parses and the walk stays linear in the file's size whatever its bytes. One
/// event per line (as Chrome, DevTools and Lighthouse write them) reads the same either
/// way; what the bounded parses reject is skipped and reported as [`super::Damage`] like
/// any other damage.
#[derive(Debug)]
pub(crate) struct Recovery {
    /// Bytes failed parses may still read.
    left: u64,
    /// The last [`Recovery::next_start`] answer: `(from, start)` holds for any `from` up to
    /// `start` (nothing qualifies between).
    cached: Option<(usize, usize)>,
    /// Bytes read by failed and by bounded parses (for tests of the bound).
    #[cfg(test)]
    pub(crate) read: u64,
}

impl Recovery {
    /// The allowance of a walk over `bytes` bytes.
    pub(crate) fn for_walk(bytes: usize) -> Recovery {
        Recovery {
            left: (bytes as u64)
                .saturating_mul(4)
                .saturating_add(RECOVERY_SLACK),
            cached: None,
            #[cfg(test)]
            read: 0,
        }
    }

    /// True once failed parses have read the allowance: parses are bounded from then on.
    pub(crate) fn spent(&self) -> bool {
        self.left == 0
    }

    /// Counts the bytes of a parse from `from` that failed (or closed without a `ph`)
    /// after `result`, run on `b` (its end is where an incomplete parse stopped).
    pub(crate) fn charge<T>(&mut self, b: &[u8], from: usize, result: &Lexed<T>, end: usize) {
        let to = match result {
            Ok(_) => end,
            Err(LexError::Malformed { offset, .. }) => offset + 1,
            Err(LexError::Incomplete) => b.len(),
        };
        let n = to.saturating_sub(from) as u64;
        self.left = self.left.saturating_sub(n);
        #[cfg(test)]
        {
            self.read += n;
        }
    }

    /// Where a parse from `b[i]` stops: the end of `b` while the allowance lasts, else the
    /// next event start after `i` ([`next_event_start`]).
    pub(crate) fn limit(&mut self, b: &[u8], i: usize) -> usize {
        if !self.spent() {
            return b.len();
        }
        let from = i + 1;
        match self.cached {
            Some((f, start)) if f <= from && from <= start => start,
            _ => {
                let start = next_event_start(b, from);
                self.cached = Some((from, start));
                start
            }
        }
    }
}

/// The first `{` at or after `b[from]` at a line start, else (none at all in the rest)
/// the first right after a `,`, else the end of `b`.
fn next_event_start(b: &[u8], from: usize) -> usize {
    let from = from.min(b.len());
    let mut first_after_comma = None;
    for j in memchr::memchr_iter(b'{', &b[from..]).map(|k| from + k) {
        match placement(b, j) {
            2 => return j,
            1 if first_after_comma.is_none() => first_after_comma = Some(j),
            _ => {}
        }
    }
    first_after_comma.unwrap_or(b.len())
}

/// The first verified event start at or after `b[from]`, where a walk resumes after
/// invalid JSON: a `{` at a line start (else, in a file without line breaks there, after a
/// `,`) that parses as an event with a `ph`, the check the parallel scan makes of its
/// split points. Line starts come first: a `},{"ph":…}` can be nested inside an event, a
/// line start cannot. `at_end`: `b` holds the rest of the input. The candidates rejected
/// spend `recovery`; once it is spent, a candidate must close before the next one starts.
pub(crate) fn resync(b: &[u8], from: usize, at_end: bool, recovery: &mut Recovery) -> Resync {
    let from = from.min(b.len());
    let is_candidate = |j: usize, min_placement: u8| placement(b, j) >= min_placement;
    for min_placement in [2, 1] {
        let next_after = |i: usize| {
            memchr::memchr_iter(b'{', &b[i..])
                .map(|k| i + k)
                .find(|&j| is_candidate(j, min_placement))
        };
        let mut next = next_after(from);
        while let Some(j) = next {
            let after = next_after(j + 1);
            let limit = if recovery.spent() {
                after.unwrap_or(b.len())
            } else {
                b.len()
            };
            let parsed = TraceEvent::parse(&b[..limit], j, 0);
            match &parsed {
                Ok((ev, _)) if ev.ph != Phase::Missing => return Resync::At(j),
                Err(LexError::Incomplete) if !at_end && limit == b.len() => {
                    return Resync::NeedMore;
                }
                _ => {}
            }
            let end = parsed.as_ref().map_or(limit, |(_, end)| *end);
            recovery.charge(&b[..limit], j, &parsed, end);
            next = after;
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
/// The checks read at most four times the range's bytes in all (candidates of unclosed
/// brackets could each read to the end of the file): past that, no guess (the range is
/// walked with the one before it, as a wrong guess would be).
fn guess_event_start(b: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut left = to.saturating_sub(from).saturating_mul(4).max(1 << 20);
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
    let is_event = |j: usize, left: &mut usize| {
        let bounded = &b[..j.saturating_add(*left).min(b.len())];
        let parsed = TraceEvent::parse(bounded, j, 0);
        let read = match &parsed {
            Ok((_, end)) => *end,
            Err(LexError::Malformed { offset, .. }) => offset + 1,
            Err(LexError::Incomplete) => bounded.len(),
        };
        *left = left.saturating_sub(read - j);
        parsed.is_ok_and(|(ev, _)| ev.ph != Phase::Missing)
    };
    let mut i = from;
    while let Some(k) = memchr(b'\n', &b[i..to]) {
        let j = skip_ws(b, i + k + 1);
        if b.get(j) == Some(&b'{') && after_separator(j) && is_event(j, &mut left) {
            return Some(j);
        }
        if left == 0 {
            return None;
        }
        i += k + 1;
    }
    let mut i = from;
    while let Some(k) = memchr(b'{', &b[i..to]) {
        let j = i + k;
        if after_separator(j) && is_event(j, &mut left) {
            return Some(j);
        }
        if left == 0 {
            return None;
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
pub(super) mod parallel_tests {
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

    /// `lines` after a damaged event, then a long task: each line a candidate event start
    /// (or split guess) whose brackets never close, so that its check reads to the end.
    pub(in crate::scan) fn unclosed_after_damage(
        line: &str,
        lines: usize,
    ) -> (Vec<u8>, usize, usize) {
        let mut s = String::from("{\"traceEvents\":[\n");
        s += "{\"ph\":\"X\",\"name\":\"RunTask\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":60000},\n";
        let damaged = s.len();
        s += "{\"ph\":\"X\",#BAD\n";
        s += &line.repeat(lines);
        let last = s.len();
        s += "{\"ph\":\"X\",\"name\":\"RunTask\",\"pid\":1,\"tid\":1,\"ts\":100000,\"dur\":60000}]}\n";
        (s.into_bytes(), damaged, last)
    }

    /// Runs `f` on another thread; panics when it takes more than 20 s (the unbounded
    /// recovery takes minutes on these inputs, the bounded one well under a second).
    pub(in crate::scan) fn within_20_s<T: Send + 'static>(
        what: &str,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(f()));
        rx.recv_timeout(std::time::Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("{what}: no result in 20 s"))
    }

    #[test]
    fn recovery_after_damage_is_linear_in_one_range_and_in_parallel() {
        // 150,000 lines `{"x":[0,},`: each is a resync candidate and (after `},`) a split
        // guess whose `[` never closes (1.6 MB; the checks read ~10^11 bytes unbounded).
        let (b, damaged, last) = unclosed_after_damage("{\"x\":[0,},\n", 150_000);
        let b = std::sync::Arc::new(b);
        // The allowance (4n and the slack), the candidate that spends it (at most n), then
        // reads that stop at the next line (n in all).
        let alone = b.clone();
        let (found, read) = within_20_s("resync", move || {
            let mut recovery = Recovery::for_walk(alone.len());
            let found = resync(&alone, damaged + 1, true, &mut recovery);
            (found, recovery.read)
        });
        assert_eq!(found, Resync::At(last));
        assert!(
            read <= 6 * b.len() as u64 + RECOVERY_SLACK,
            "{read} bytes read"
        );
        let start = b.iter().position(|&c| c == b'[').unwrap() + 1;
        let check = |t: crate::scan::ScannedTrace, path: &str| {
            assert_eq!(t.events, 2, "{path}");
            assert_eq!(t.task_marks.len(), 2, "{path}");
            assert_eq!(t.damage.len(), 1, "{path}");
            let d = &t.damage[0];
            assert_eq!(
                (d.offset, d.resumed),
                (damaged as u64 + 10, last as u64),
                "{path}"
            );
            assert_eq!(d.skipped_events, 150_001, "{path}");
            assert_eq!(t.end, Some(crate::scan::ArrayEnd::Closed), "{path}");
        };
        let one = b.clone();
        check(
            within_20_s("one range", move || {
                crate::scan::scan(&one, start, true).unwrap()
            }),
            "one range",
        );
        let two = b.clone();
        let parallel = within_20_s("parallel ranges", move || {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap();
            pool.install(|| {
                with_range_bytes(two.len() / 5, || crate::scan::scan(&two, start, true))
            })
            .unwrap()
        });
        check(parallel, "parallel ranges");
        // The stream: `stream::tests::a_damaged_stream_recovers_in_linear_time`.
    }

    #[test]
    fn damaged_events_that_read_to_the_end_are_bounded_too() {
        // 40,000 events whose `[` never closes, each followed by a good one: each damaged
        // event's own read goes to the end of the file (1.5 MB).
        let (b, _, _) = unclosed_after_damage(
            "{\"ph\":\"X\",\"zz\":[0,\n{\"ph\":\"I\",\"pid\":1,\"tid\":1,\"ts\":7}\n",
            40_000,
        );
        let start = b.iter().position(|&c| c == b'[').unwrap() + 1;
        let t = within_20_s("one range", move || {
            crate::scan::scan(&b, start, true).unwrap()
        });
        // The first damaged stretches are found by full reads, the later ones by reads
        // that stop at the next line: every good event is kept either way.
        // (The first damaged event's resync skips the first of them too.)
        assert_eq!(t.events, 2 + 40_000);
        assert_eq!(t.damage.len(), 40_000);
        assert_eq!(t.damage[0].skipped_events, 2);
        assert!(t.damage[1..].iter().all(|d| d.skipped_events == 1));
        assert_eq!(t.end, Some(crate::scan::ArrayEnd::Closed));
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

//! `ProfileChunk` and `CpuProfile` args, read by hand: they are most of a trace's bytes.
//!
//! Shape (V8 `profile-generator.cc`, docs/METHOD.md §2.4): `{"data": {"cpuProfile": {"nodes":
//! [...], "samples": [...], "startTime"?}, "timeDeltas": [...], "lines"?, ...}}`; in a
//! `CpuProfile` event `timeDeltas` sits inside `cpuProfile`. Only the byte ranges of
//! `nodes`, `samples` and `timeDeltas` are found here (skipping `lines`, `columns`,
//! `trace_ids` with memchr); `nodes` is small and parsed by the caller, the two number
//! arrays are read by [`read_samples`] and [`read_deltas`] — during the scan only the
//! deltas' [`DeltaSummary`], the samples themselves later and only for chunks whose time
//! span meets a long task.

use std::ops::Range;

use crate::json::{
    Lexed, PlainSum, Token, digit_array_end, fold_numbers, micros_to_nanos, object, plain_sum,
    plain_uints, skip_value,
};
use crate::time::TimeDelta;
use crate::vocab::NodeId;

/// Where the parts of a chunk's `args` are (byte ranges in the slice given to [`layout`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChunkLayout {
    /// `cpuProfile.nodes`.
    pub nodes: Option<Range<usize>>,
    /// `cpuProfile.samples`.
    pub samples: Option<Range<usize>>,
    /// Number of elements of `samples` when they are digits and commas only (Chrome's
    /// own): counted in the pass that finds the array's end, so it is not read again.
    pub samples_count: Option<usize>,
    /// `timeDeltas` (beside `cpuProfile`, or inside it for `CpuProfile` events).
    pub deltas: Option<Range<usize>>,
    /// `cpuProfile.startTime` (raw number, µs).
    pub start_time: Option<Range<usize>>,
    /// `args.data` is missing or not an object (`args: {}`, `"__stripped__"`).
    pub no_data: bool,
}

/// Finds the parts of `args`. Errors only for bytes that are not JSON.
///
/// One pass: the members of `args`, `data` and `cpuProfile` are read in place (a
/// duplicated key counts by its last occurrence, as in a JSON parser) and each array is
/// skipped with a single search for its `]`.
pub(crate) fn layout(args: &[u8]) -> Lexed<ChunkLayout> {
    if args.first() != Some(&b'{') {
        return Ok(ChunkLayout {
            no_data: true,
            ..ChunkLayout::default()
        });
    }
    layout_at(args, 0).map(|(l, _)| l)
}

/// True when the value at `b[i]` starts as a `ProfileChunk`'s or `CpuProfile`'s `args`
/// do (`{"data":{"cpuProfile":` or `{"data":{"timeDeltas":`, no whitespace), so that
/// reading its [`layout_at`] while walking the event costs nothing extra: the walk would
/// otherwise skip these bytes once, and [`layout`] read them again.
pub(crate) fn looks_like_chunk(b: &[u8], i: usize) -> bool {
    let rest = &b[i.min(b.len())..];
    rest.starts_with(br#"{"data":{"cpuProfile":"#) || rest.starts_with(br#"{"data":{"timeDeltas":"#)
}

/// [`layout`] of the object at `b[i]` (`{`), with ranges relative to `b[i]`, and the
/// offset just past the object.
pub(crate) fn layout_at(b: &[u8], i: usize) -> Lexed<(ChunkLayout, usize)> {
    let mut out = ChunkLayout::default();
    // (`data` seen as an object, `timeDeltas` beside `cpuProfile`, inside it).
    let (mut data, mut outer_deltas, mut inner_deltas) = (false, None, None);
    let end = object(b, i, |k, v| {
        if k != b"data" {
            return None;
        }
        // A later `data` replaces an earlier one.
        (out, outer_deltas, inner_deltas) = (ChunkLayout::default(), None, None);
        data = b.get(v) == Some(&b'{');
        data.then(|| {
            object(b, v, |k, v| match k {
                b"timeDeltas" => Some(array(b, v).inspect(|&e| outer_deltas = Some(v..e))),
                b"cpuProfile" => {
                    (out.nodes, out.samples, out.start_time, inner_deltas) =
                        (None, None, None, None);
                    out.samples_count = None;
                    (b.get(v) == Some(&b'{')).then(|| {
                        object(b, v, |k, v| {
                            let slot = match k {
                                b"nodes" => &mut out.nodes,
                                b"samples" => {
                                    out.samples_count = None;
                                    if let Some((e, n)) = digit_array_end(b, v) {
                                        (out.samples, out.samples_count) = (Some(v..e), Some(n));
                                        return Some(Ok(e));
                                    }
                                    &mut out.samples
                                }
                                b"timeDeltas" => &mut inner_deltas,
                                b"startTime" => {
                                    let e = skip_value(b, v);
                                    return Some(e.inspect(|&e| out.start_time = Some(v..e)));
                                }
                                _ => return Some(array(b, v)),
                            };
                            Some(array(b, v).inspect(|&e| *slot = Some(v..e)))
                        })
                    })
                }
                // `lines`, `columns`, `trace_ids`: number arrays, skipped by one search.
                _ => Some(array(b, v)),
            })
        })
    })?;
    out.no_data = !data;
    out.deltas = outer_deltas.or(inner_deltas);
    let to_args = |r: Option<Range<usize>>| r.map(|r| r.start - i..r.end - i);
    out.nodes = to_args(out.nodes);
    out.samples = to_args(out.samples);
    out.deltas = to_args(out.deltas);
    out.start_time = to_args(out.start_time);
    Ok((out, end))
}

/// Skips the value at `b[v]`, with a fast path for an array with no string or nested
/// array in it (a number array): the first `]` ends it.
fn array(b: &[u8], v: usize) -> Lexed<usize> {
    if b.get(v) == Some(&b'[')
        && let Some(k) = memchr::memchr3(b']', b'[', b'"', &b[v + 1..])
        && b[v + 1 + k] == b']'
    {
        return Ok(v + 2 + k);
    }
    skip_value(b, v)
}

/// What the scan keeps of a chunk's `timeDeltas` (first `count` of them), enough to place
/// the chunk in time without its samples: the sum, and the lowest and highest running sum
/// (samples may be out of order, so the chunk's first and last samples are not its bounds).
///
/// Packed to 4-byte alignment (28 bytes, not 32): a 1 GB trace keeps ~10⁶ of them, one per
/// chunk (see [`crate::scan::records::ProfileChunk`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, packed(4))]
pub struct DeltaSummary {
    /// Number of (sample, delta) pairs.
    pub count: u32,
    /// Sum of the deltas.
    pub sum: TimeDelta,
    /// Lowest running sum after each delta (the earliest sample, relative to the chunk's base).
    pub min_prefix: TimeDelta,
    /// Highest running sum (the latest sample).
    pub max_prefix: TimeDelta,
}

impl DeltaSummary {
    /// Adds the next delta.
    #[inline]
    pub fn push(&mut self, d: TimeDelta) {
        self.sum = self.sum + d;
        if self.count == 0 {
            self.min_prefix = self.sum;
            self.max_prefix = self.sum;
        } else {
            self.min_prefix = self.min_prefix.min(self.sum);
            self.max_prefix = self.max_prefix.max(self.sum);
        }
        self.count += 1;
    }
}

/// A `timeDeltas` element in ns (the file has µs); non-numbers count as 0.
#[inline(always)]
fn delta_ns(t: Token<'_>) -> i64 {
    match t {
        // Beyond ±2^53 µs (285 years) a delta is junk, not a time: 0 (its chunk's samples
        // are skipped, see `summarize_chunk`).
        Token::Int(us) if us.unsigned_abs() <= MAX_DELTA_US => us * 1000,
        Token::Other(tok) => micros_to_nanos(tok)
            .filter(|ns| ns.unsigned_abs() <= MAX_DELTA_US * 1000)
            .unwrap_or(0),
        Token::Int(_) => 0,
    }
}

/// Number of elements of the array at `b[r]` (a number array has no commas inside tokens).
pub fn count_elements(b: &[u8], r: &Range<usize>) -> usize {
    let inner = &b[r.start + 1..r.end - 1];
    if inner.iter().all(|c| crate::json::is_ws(*c)) {
        0
    } else {
        memchr::memchr_iter(b',', inner).count() + 1
    }
}

/// The summary of non-negative deltas (µs) from their count, first and sum: the running
/// sum only grows, so its lowest value is the first delta and its highest the total.
fn plain_summary(count: usize, first: u64, sum: u64) -> DeltaSummary {
    let ns = |us: u64| TimeDelta::from_nanos((us as i64).saturating_mul(1000));
    DeltaSummary {
        count: count as u32,
        sum: ns(sum),
        min_prefix: ns(first),
        max_prefix: ns(sum),
    }
}

/// A chunk's two arrays at `b[samples]` and `b[deltas]`: (number of samples, number of
/// deltas, the summary of the first min of the two deltas). The number of samples is
/// `samples_count` when the layout counted them ([`ChunkLayout::samples_count`]), else
/// counted here. Errors only for deltas that are not a JSON number array.
///
/// The summary's `count` is 0 (the chunk has no samples, its deltas still place the
/// chunks after it) when a delta is a number outside ±2^53 µs or beyond any float
/// (`1e400`): such a chunk's times cannot be trusted; `out_of_range` then says so.
pub(crate) fn summarize_chunk(
    b: &[u8],
    samples: &Range<usize>,
    samples_count: Option<usize>,
    deltas: &Range<usize>,
) -> Lexed<ChunkSummary> {
    let ns = samples_count.unwrap_or_else(|| count_elements(b, samples));
    // Chrome's arrays: the deltas counted and summed in one pass, used for both.
    let plain = plain_sum(b, deltas);
    let nd = match plain {
        Some(s) => s.count,
        None => count_elements(b, deltas),
    };
    let mut summary = summarize_plain(b, deltas, ns.min(nd), plain)?;
    // Plain arrays hold small non-negative integers only.
    let out_of_range = plain.is_none() && has_out_of_range_delta(b, deltas);
    if out_of_range {
        summary.count = 0;
    }
    Ok(ChunkSummary {
        samples: ns,
        deltas: nd,
        summary,
        out_of_range,
    })
}

/// What [`summarize_chunk`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ChunkSummary {
    /// Number of samples.
    pub samples: usize,
    /// Number of deltas.
    pub deltas: usize,
    /// The summary of the first min of the two deltas.
    pub summary: DeltaSummary,
    /// A delta is a number outside ±2^53 µs (`summary.count` is then 0).
    pub out_of_range: bool,
}

/// Deltas beyond this many µs (2^53, ~285 years, the largest integer a double holds
/// exactly) are junk, not times.
const MAX_DELTA_US: u64 = 1 << 53;

/// True when an element of the number array at `b[r]` is a number outside ±2^53 µs, or
/// too large for a float (`1e400`, read as infinity).
pub(crate) fn has_out_of_range_delta(b: &[u8], r: &Range<usize>) -> bool {
    let out = |t: Token<'_>| match t {
        Token::Int(us) => us.unsigned_abs() > MAX_DELTA_US,
        Token::Other(tok) => {
            let s = crate::json::string_content(tok).unwrap_or(tok);
            std::str::from_utf8(s)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .is_some_and(|us| us.is_nan() || us.abs() > MAX_DELTA_US as f64)
        }
    };
    fold_numbers(&b[..r.end], r.start, false, |bad, t| bad || out(t)).is_ok_and(|(bad, _)| bad)
}

/// Summarises the first `limit` deltas of the array at `b[r]`.
pub fn summarize_deltas(b: &[u8], r: &Range<usize>, limit: usize) -> Lexed<DeltaSummary> {
    summarize_plain(b, r, limit, plain_sum(b, r))
}

/// [`summarize_deltas`] given the array's [`plain_sum`].
fn summarize_plain(
    b: &[u8],
    r: &Range<usize>,
    limit: usize,
    plain: Option<PlainSum>,
) -> Lexed<DeltaSummary> {
    // The whole array summed without converting each number (the usual case: as many
    // samples as deltas), else the first `limit` one by one.
    match plain {
        Some(s) if s.count <= limit => return Ok(plain_summary(s.count, s.first, s.sum)),
        Some(_) => {
            let (mut count, mut first, mut sum) = (0usize, 0u64, 0u64);
            let read = plain_uints(b, r, |us| {
                if count < limit {
                    first = if count == 0 { us } else { first };
                    sum += us; // at most 10^8 per element: no overflow before 9·10^10
                    count += 1;
                }
            });
            if read.is_some() {
                return Ok(plain_summary(count, first, sum));
            }
        }
        None => {}
    }
    // (pairs taken, sum, lowest and highest running sum), all in ns.
    let init = (0usize, 0i64, i64::MAX, i64::MIN);
    let ((count, sum, lo, hi), _) =
        fold_numbers(&b[..r.end], r.start, init, |(k, sum, lo, hi), t| {
            if k == limit {
                return (k, sum, lo, hi);
            }
            let d = delta_ns(t);
            let sum = sum.saturating_add(d); // as DeltaSummary::push (TimeDelta adds saturate)
            (k + 1, sum, lo.min(sum), hi.max(sum))
        })?;
    Ok(DeltaSummary {
        count: count as u32,
        sum: TimeDelta::from_nanos(sum),
        min_prefix: TimeDelta::from_nanos(if count > 0 { lo } else { 0 }),
        max_prefix: TimeDelta::from_nanos(if count > 0 { hi } else { 0 }),
    })
}

/// The first `limit` deltas of the array at `b[r]`.
pub(crate) fn read_deltas(
    b: &[u8],
    r: &Range<usize>,
    limit: usize,
    out: &mut Vec<TimeDelta>,
) -> Lexed<()> {
    let (len, end) = (out.len(), out.len() + limit);
    let plain = plain_uints(b, r, |us| {
        if out.len() < end {
            out.push(TimeDelta::from_nanos(us as i64 * 1000));
        }
    });
    if plain.is_some() {
        return Ok(());
    }
    out.truncate(len);
    fold_numbers(&b[..r.end], r.start, (), |(), t| {
        if out.len() < end {
            out.push(TimeDelta::from_nanos(delta_ns(t)));
        }
    })
    .map(drop)
}

/// The first `limit` sample node ids of the array at `b[r]` (non-integers become -1, an
/// id no node has).
pub(crate) fn read_samples(
    b: &[u8],
    r: &Range<usize>,
    limit: usize,
    out: &mut Vec<NodeId>,
) -> Lexed<()> {
    let (len, end) = (out.len(), out.len() + limit);
    let plain = plain_uints(b, r, |id| {
        if out.len() < end {
            out.push(NodeId(id as i64));
        }
    });
    if plain.is_some() {
        return Ok(());
    }
    out.truncate(len);
    fold_numbers(&b[..r.end], r.start, (), |(), t| {
        if out.len() < end {
            out.push(NodeId(match t {
                Token::Int(id) => id,
                Token::Other(_) => -1,
            }));
        }
    })
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_of_chunk_and_legacy_profile() {
        let a = br#"{"data":{"lines":[1,2],"cpuProfile":{"nodes":[{"id":1}],"samples":[1, 1]},"timeDeltas":[5,-2]}}"#;
        let l = layout(a).unwrap();
        assert_eq!(&a[l.nodes.unwrap()], br#"[{"id":1}]"#);
        assert_eq!(&a[l.samples.clone().unwrap()], b"[1, 1]");
        assert_eq!(&a[l.deltas.clone().unwrap()], b"[5,-2]");
        assert_eq!(count_elements(a, &l.samples.unwrap()), 2);
        // With a space, the samples are not counted by the layout.
        assert_eq!(l.samples_count, None);
        let s = summarize_deltas(a, &l.deltas.unwrap(), 2).unwrap();
        // Running sums 5, 3: min 3, max 5.
        assert_eq!(
            s,
            DeltaSummary {
                count: 2,
                sum: TimeDelta::from_micros(3),
                min_prefix: TimeDelta::from_micros(3),
                max_prefix: TimeDelta::from_micros(5),
            }
        );
        let legacy = br#"{"data":{"cpuProfile":{"startTime":10,"samples":[],"timeDeltas":[]}}}"#;
        let l = layout(legacy).unwrap();
        assert_eq!(&legacy[l.start_time.unwrap()], b"10");
        assert_eq!(count_elements(legacy, &l.samples.unwrap()), 0);
        assert_eq!(l.samples_count, Some(0));
        assert!(l.deltas.is_some());
    }

    #[test]
    fn fast_and_general_paths_summarize_alike() {
        // `[5,3,10]` takes the fast path, `[5, 3,10]` (a space) the general one.
        for b in [&b"[5,3,10]"[..], b"[5, 3,10]"] {
            let r = 0..b.len();
            let s = summarize_deltas(b, &r, 2).unwrap();
            let expected = DeltaSummary {
                count: 2,
                sum: TimeDelta::from_micros(8),
                min_prefix: TimeDelta::from_micros(5),
                max_prefix: TimeDelta::from_micros(8),
            };
            assert_eq!(s, expected);
            let (mut ds, mut ids) = (vec![TimeDelta::from_micros(1)], vec![]);
            read_deltas(b, &r, 2, &mut ds).unwrap();
            read_samples(b, &r, 5, &mut ids).unwrap();
            assert_eq!(ds, [1, 5, 3].map(TimeDelta::from_micros));
            assert_eq!(ids, [5, 3, 10].map(NodeId));
        }
    }

    #[test]
    fn chunk_summaries_take_the_shorter_array() {
        // Deltas 5, 3, 10 (plain, or with a space: general); samples 3, 2 or 4 long.
        for deltas in ["[5,3,10]", "[5, 3,10]"] {
            for (samples, n, sum) in [("[1,1,1]", 3, 18), ("[1,1]", 2, 8), ("[1,1,1,1]", 3, 18)] {
                let b = format!("{samples}{deltas}");
                let (sr, dr) = (0..samples.len(), samples.len()..b.len());
                let got = summarize_chunk(b.as_bytes(), &sr, None, &dr).unwrap();
                let (ns, nd, s) = (got.samples, got.deltas, got.summary);
                assert_eq!((ns, nd), (samples.len() / 2, 3), "{b}");
                assert!(!got.out_of_range);
                // The count a layout found is taken as given.
                let counted = summarize_chunk(b.as_bytes(), &sr, Some(ns), &dr).unwrap();
                assert_eq!(counted, got, "{b}");
                assert_eq!(s.count as usize, n, "{b}");
                assert_eq!({ s.sum }, TimeDelta::from_micros(sum), "{b}");
                assert_eq!({ s.min_prefix }, TimeDelta::from_micros(5), "{b}");
            }
        }
        let b = b"[1][x]";
        assert!(summarize_chunk(b, &(0..3), None, &(3..6)).is_err());
    }

    #[test]
    fn layout_takes_the_last_of_a_repeated_key_and_skips_arrays_with_strings() {
        let a = br#"{"data":{"cpuProfile":{"samples":[1]},"timeDeltas":[1]},"data":{"timeDeltas":[2]}}"#;
        let l = layout(a).unwrap();
        assert_eq!((l.samples, l.no_data), (None, false));
        assert_eq!(&a[l.deltas.unwrap()], b"[2]");
        // Nodes hold strings with brackets: the array ends at its own `]`.
        let a = br#"{"data":{"cpuProfile":{"nodes":[{"id":1,"u":"a]["}],"samples":[3, 4]},"timeDeltas":[5,6]}}"#;
        let l = layout(a).unwrap();
        assert_eq!(&a[l.nodes.unwrap()], br#"[{"id":1,"u":"a]["}]"#);
        assert_eq!(&a[l.samples.unwrap()], b"[3, 4]");
        assert_eq!(&a[l.deltas.unwrap()], b"[5,6]");
        // A later `data` that is not an object leaves none.
        assert!(
            layout(br#"{"data":{"timeDeltas":[1]},"data":7}"#)
                .unwrap()
                .no_data
        );
        assert!(layout(br#"{"data":{"timeDeltas":[1}}"#).is_err());
    }

    #[test]
    fn layout_counts_plain_samples_as_count_elements_does() {
        // Arrays across the 64- and 16-byte blocks of the counting pass, ending in a block
        // or in the bytes after the last whole block.
        for n in [1usize, 2, 5, 7, 8, 9, 30, 31, 33, 100] {
            let ids: Vec<String> = (0..n).map(|k| (k * 37 % 1000).to_string()).collect();
            for tail in ["", r#","x":[1,2,3,4,5,6,7,8,9,10,11,12,13,14]"#] {
                let a = format!(
                    r#"{{"data":{{"cpuProfile":{{"samples":[{}]{tail}}},"timeDeltas":[1]}}}}"#,
                    ids.join(",")
                );
                let (a, want) = (a.as_bytes(), format!("[{}]", ids.join(",")));
                let l = layout(a).unwrap();
                let r = l.samples.clone().unwrap();
                assert_eq!(&a[r.clone()], want.as_bytes());
                assert_eq!(l.samples_count, Some(n));
                assert_eq!(count_elements(a, &r), n);
            }
        }
        // A minus sign, a space or a string: not counted here, the array still found.
        for (samples, n) in [("[1,-2]", 2), ("[1 ,2]", 2), (r#"[1,"]",3]"#, 3)] {
            let a = format!(r#"{{"data":{{"cpuProfile":{{"samples":{samples}}}}}}}"#);
            let l = layout(a.as_bytes()).unwrap();
            let r = l.samples.unwrap();
            assert_eq!(&a.as_bytes()[r.clone()], samples.as_bytes());
            assert_eq!(
                (l.samples_count, count_elements(a.as_bytes(), &r)),
                (None, n)
            );
        }
        // Bytes that end inside the array: an error from the general skip.
        assert!(layout(br#"{"data":{"cpuProfile":{"samples":[1,2,3,4,5,6,7,8,9,10"#).is_err());
    }

    #[test]
    fn odd_args_have_no_data() {
        for a in [
            &b"{}"[..],
            b"\"__stripped__\"",
            br#"{"data":{"endTime":5}}"#,
        ] {
            let l = layout(a).unwrap();
            assert_eq!((l.samples, l.deltas), (None, None));
        }
        assert!(layout(b"{}").unwrap().no_data);
    }

    #[test]
    fn reads_respect_the_limit() {
        let b = b"[1,2,3.5]";
        let mut ids = vec![];
        read_samples(b, &(0..b.len()), 2, &mut ids).unwrap();
        assert_eq!(ids, [NodeId(1), NodeId(2)]);
        let mut ds = vec![];
        read_deltas(b, &(0..b.len()), 9, &mut ds).unwrap();
        assert_eq!(ds[2], TimeDelta::from_nanos(3500));
        assert_eq!(summarize_deltas(b, &(0..b.len()), 1).unwrap().count, 1);
    }
}

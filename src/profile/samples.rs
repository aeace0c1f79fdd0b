//! A profile's samples, placed in time chunk by chunk and read one window at a time.
//!
//! Each chunk's place comes from its deltas summary alone: its base is `t0` plus the sums
//! of the chunks before it, its span is base + its lowest and highest running sum (samples
//! may be out of order, so first and last are not the bounds). A window's samples are read
//! from the chunks whose span meets it — every sample inside the window is in one of them
//! — so memory holds one window's samples at a time, never the whole profile.

use std::collections::HashMap;
use std::ops::Range;

use super::index::StackIndex;
use super::tables::SampleTable;
use crate::json::plain_uints_into;
use crate::scan::records::{PackedStore, ProfileChunk, SampleArrays};
use crate::time::{TimeDelta, Timestamp};
use crate::vocab::NodeId;

/// Node id → stack: a dense table when ids are small (Chrome numbers nodes 1, 2, 3, …),
/// a hash map otherwise.
#[derive(Debug)]
pub enum NodeStacks {
    /// `dense[id]`, `None` for ids no node has.
    Dense(Vec<Option<StackIndex>>),
    /// Sparse or large ids.
    Sparse(crate::vocab::FastMap<NodeId, StackIndex>),
}

impl NodeStacks {
    /// The map for (id, stack) pairs.
    pub fn new(pairs: impl Iterator<Item = (NodeId, StackIndex)> + Clone) -> NodeStacks {
        let (n, max) = pairs
            .clone()
            .fold((0usize, -1i64), |(n, m), (id, _)| (n + 1, m.max(id.0)));
        let all_small = pairs.clone().all(|(id, _)| id.0 >= 0);
        if all_small && max < (4 * n as i64).max(1 << 16) {
            let mut dense = vec![None; (max + 1) as usize];
            for (id, s) in pairs {
                dense[id.0 as usize] = Some(s);
            }
            NodeStacks::Dense(dense)
        } else {
            NodeStacks::Sparse(pairs.collect())
        }
    }

    /// The stacks of nodes `ids`, written to `out` (as long as `ids`); false when an id
    /// names no node (`out` is then partly written).
    pub fn get_all(&self, ids: &[u32], out: &mut [StackIndex]) -> bool {
        fn all(
            ids: &[u32],
            out: &mut [StackIndex],
            get: impl Fn(u32) -> Option<StackIndex>,
        ) -> bool {
            // Most samples repeat the node before: its stack is looked up once per run.
            let mut last: Option<(u32, StackIndex)> = None;
            for (slot, &id) in out.iter_mut().zip(ids) {
                *slot = match last {
                    Some((l, s)) if l == id => s,
                    _ => match get(id) {
                        Some(s) => {
                            last = Some((id, s));
                            s
                        }
                        None => return false,
                    },
                };
            }
            true
        }
        match self {
            NodeStacks::Dense(d) => all(ids, out, |id| dense_get(d, id.into())),
            NodeStacks::Sparse(m) => all(ids, out, |id| m.get(&NodeId(id.into())).copied()),
        }
    }

    /// The stack of node `id`.
    #[inline]
    pub fn get(&self, id: NodeId) -> Option<StackIndex> {
        match self {
            NodeStacks::Dense(d) => dense_get(d, id.0),
            NodeStacks::Sparse(m) => m.get(&id).copied(),
        }
    }
}

/// `dense[id]` of a [`NodeStacks::Dense`] table.
#[inline(always)]
fn dense_get(dense: &[Option<StackIndex>], id: i64) -> Option<StackIndex> {
    *dense.get(usize::try_from(id).ok()?)?
}

/// The samples of the chunks that meet one window, sorted by time (ties in profile order).
#[derive(Debug, Default)]
pub struct WindowSamples {
    /// Times and stacks.
    pub table: SampleTable,
    /// Backward steps: for each sample that came with a negative delta, (its time, the
    /// time of the sample read just before it), sorted.
    pub reordered: Vec<(Timestamp, Timestamp)>,
    /// Samples naming no node (left out).
    pub unknown: u64,
    /// Chunks whose arrays could not be read.
    pub unreadable: u64,
}

/// Chunks with more samples than this are decoded once, sorted, and kept for every window
/// that meets them: a `.cpuprofile` is one chunk holding the whole profile, and decoding it
/// again for each of thousands of tasks would cost time quadratic in its size. Chrome's
/// `ProfileChunk`s hold about 100 samples and are read per window, never kept.
const KEEP_DECODED: u32 = 4096;

/// Sorts rows by time, stably (ties keep their order: profile order). A negative delta
/// puts a sample a little before the ones read just ahead of it, so rows are nearly sorted:
/// each row out of place is moved back into place (insertion, in place, no buffers) while
/// the moves stay within a budget linear in the rows; past it, the rest is sorted as
/// pairs. Insertion never passes an equal time, so both ways keep ties in profile order.
/// `in_order` (ascending, disjoint) are stretches of rows known to be in time order (a
/// chunk without negative deltas, or several in a row): once a row of one is in place, so
/// are the rest of it, which the walk passes over (most windows are one such stretch).
fn sort_rows(ts: &mut Vec<Timestamp>, stack: &mut Vec<StackIndex>, in_order: &[Range<usize>]) {
    let mut budget = 4 * ts.len() + 64;
    let mut stretches = in_order.iter().peekable();
    let mut k = 1;
    while k < ts.len() {
        let t = ts[k];
        if t >= ts[k - 1] {
            // Rows before `k` are sorted and those from `k` not yet moved: inside a
            // stretch in order, every row after `k` is no earlier than the one before.
            while stretches.next_if(|r| r.end <= k).is_some() {}
            k = match stretches.peek() {
                Some(r) if r.start <= k => r.end,
                _ => k + 1,
            };
            continue;
        }
        let to = ts[..k].partition_point(|&x| x <= t);
        if k - to > budget {
            let mut rows: Vec<(Timestamp, StackIndex)> = std::mem::take(ts)
                .into_iter()
                .zip(std::mem::take(stack))
                .collect();
            rows.sort_by_key(|r| r.0);
            (*ts, *stack) = rows.into_iter().unzip();
            return;
        }
        budget -= k - to;
        ts[to..=k].rotate_right(1);
        stack[to..=k].rotate_right(1);
        k += 1;
    }
}

/// Adds rows `before..ts.len()`, just appended and in time order, to the stretches in
/// order of [`sort_rows`]: joined to the last stretch when they follow it in order.
fn push_in_order(in_order: &mut Vec<Range<usize>>, ts: &[Timestamp], before: usize) {
    if ts.len() == before {
        return;
    }
    match in_order.last_mut() {
        Some(last) if last.end == before && ts[before] >= ts[before - 1] => last.end = ts.len(),
        _ => in_order.push(before..ts.len()),
    }
}

/// Where [`Placement::append_rows`] puts rows: times, stacks, backward steps.
type Rows<'r> = (
    &'r mut Vec<Timestamp>,
    &'r mut Vec<StackIndex>,
    &'r mut Vec<(Timestamp, Timestamp)>,
);

/// A large chunk decoded once: its known samples sorted by time (ties in profile order),
/// the times of its samples that came with a negative delta (sorted), and the number of
/// samples naming no node.
#[derive(Debug)]
struct Decoded {
    ts: Vec<Timestamp>,
    stack: Vec<StackIndex>,
    reordered: Vec<(Timestamp, Timestamp)>,
    unknown: u64,
}

/// All chunks of a profile with samples, placed: `chunks[i]` (moved here, not copied)
/// starts at its `ts`, which once placed holds the chunk's base: the event's `ts` served
/// only to order the chunks, and a column of bases beside them would be 8 bytes a chunk.
#[derive(Debug, Default)]
pub struct Placement {
    chunks: Vec<ProfileChunk>,
    /// The packed arrays of chunks read from a stream.
    store: PackedStore,
    /// Indices of the chunks no wider than `widest`, sorted by earliest sample time.
    by_lo: Vec<u32>,
    /// Longest span of the chunks in `by_lo`.
    widest: TimeDelta,
    /// Chunks much wider than most (checked one by one for every window), so that one
    /// wide chunk does not make every window look at every chunk.
    wide: Vec<u32>,
    /// Number of samples of all chunks.
    count: u64,
    /// The large chunks (over [`KEEP_DECODED`] samples) by chunk index, once decoded
    /// (`None` inside: unreadable). Only those have an entry: a trace has ~10⁶ small chunks.
    decoded: HashMap<usize, std::sync::OnceLock<Option<Decoded>>>,
    /// [`Placement::last_known`], once asked for.
    last_known: std::sync::OnceLock<Option<Timestamp>>,
}

impl Placement {
    /// Places `chunks` (in profile order, their packed arrays in `store`) from `t0`; chunks
    /// without samples are dropped.
    pub fn new(t0: Timestamp, mut chunks: Vec<ProfileChunk>, store: PackedStore) -> Placement {
        let (mut t, mut n) = (t0, 0u64);
        chunks.retain_mut(|c| {
            let s = c.samples.summary();
            let keep = s.count > 0;
            c.ts = t;
            t = t + s.sum;
            n += s.count as u64;
            keep
        });
        chunks.shrink_to_fit();
        let mut p = Placement {
            decoded: (0..chunks.len())
                .filter(|&i| chunks[i].samples.summary().count > KEEP_DECODED)
                .map(|i| (i, Default::default()))
                .collect(),
            chunks,
            store,
            by_lo: Vec::new(),
            widest: TimeDelta::ZERO,
            wide: Vec::new(),
            count: n,
            last_known: Default::default(),
        };
        let span = |i: u32| p.hi(i as usize).since(p.lo(i as usize));
        // Wide: over 16 times the median span and over 1 ms. The median is the element a
        // sort would put in the middle, found without sorting in a list of the spans in
        // nanoseconds, held in 32 bits (past 4.3 s a span counts as 4.3 s: the split only
        // decides how chunks are looked up, never which ones meet a window). That list's
        // room then holds `by_lo`, so no column beside the chunks is added.
        let n = p.chunks.len() as u32;
        let mut by_lo: Vec<u32> = (0..n)
            .map(|i| u32::try_from(span(i).as_nanos()).unwrap_or(u32::MAX))
            .collect();
        let mid = by_lo.len() / 2;
        let median = if by_lo.is_empty() {
            TimeDelta::ZERO
        } else {
            TimeDelta::from_nanos(i64::from(*by_lo.select_nth_unstable(mid).1))
        };
        let limit = TimeDelta::from_nanos(median.as_nanos().saturating_mul(16))
            .max(TimeDelta::from_micros(1000));
        // Both lists are filled in chunk order: `wide` stays so, and `by_lo` is already
        // sorted when, as in Chrome's traces, the chunks' earliest times grow in profile
        // order (the sort then only checks it).
        by_lo.clear();
        let mut wide = Vec::new();
        by_lo.extend((0..n).filter(|&i| {
            let narrow = span(i) <= limit;
            if !narrow {
                wide.push(i);
            }
            narrow
        }));
        by_lo.sort_unstable_by_key(|&i| (p.lo(i as usize), i));
        p.widest = by_lo.iter().map(|&i| span(i)).max().unwrap_or_default();
        p.by_lo = by_lo;
        p.wide = wide;
        p
    }

    /// Chunk `i`'s base: `t0` plus the deltas of the chunks before it.
    fn base(&self, i: usize) -> Timestamp {
        self.chunks[i].ts
    }

    /// Earliest sample time of chunk `i`.
    fn lo(&self, i: usize) -> Timestamp {
        self.base(i) + self.chunks[i].samples.summary().min_prefix
    }

    /// Latest sample time of chunk `i`.
    fn hi(&self, i: usize) -> Timestamp {
        self.base(i) + self.chunks[i].samples.summary().max_prefix
    }

    /// Number of samples in all chunks.
    pub fn sample_count(&self) -> u64 {
        self.count
    }

    /// (earliest, latest) sample time.
    pub fn bounds(&self) -> Option<(Timestamp, Timestamp)> {
        let lo = (0..self.chunks.len()).map(|i| self.lo(i)).min()?;
        let hi = (0..self.chunks.len()).map(|i| self.hi(i)).max()?;
        Some((lo, hi))
    }

    /// Time of the latest sample that names a known node (`None`: there is none; samples
    /// naming no node are left out everywhere, so they are no one's next sample). The
    /// chunks are read latest-ending first until none left can hold a later sample; read
    /// once, then kept (asked only for a window's last row, rarely).
    pub fn last_known(&self, file: Option<&[u8]>, stacks: &NodeStacks) -> Option<Timestamp> {
        *self.last_known.get_or_init(|| {
            let mut latest: Vec<usize> = (0..self.chunks.len()).collect();
            latest.sort_unstable_by_key(|&i| std::cmp::Reverse(self.hi(i)));
            let mut best = None;
            for i in latest {
                if best.is_some_and(|b| self.hi(i) <= b) {
                    break;
                }
                // Decoded rows are sorted: the chunk's latest known sample is the last.
                let last = self
                    .decode(i, file, stacks)
                    .and_then(|d| d.ts.last().copied());
                best = best.max(last);
            }
            best
        })
    }

    /// Indices of the chunks whose span meets `[start, end)`, in profile order.
    pub fn meeting(&self, start: Timestamp, end: Timestamp) -> Vec<usize> {
        let from = self
            .by_lo
            .partition_point(|&i| self.lo(i as usize) < start - self.widest);
        let mut out: Vec<usize> = self.by_lo[from..]
            .iter()
            .map(|&i| i as usize)
            .take_while(|&i| self.lo(i) < end)
            .filter(|&i| self.hi(i) >= start)
            .collect();
        out.extend(
            self.wide
                .iter()
                .map(|&i| i as usize)
                .filter(|&i| self.lo(i) < end && self.hi(i) >= start),
        );
        out.sort_unstable();
        out
    }

    /// Decodes chunk `i` whole: its known samples sorted by time; `None` when unreadable.
    fn decode(&self, i: usize, file: Option<&[u8]>, stacks: &NodeStacks) -> Option<Decoded> {
        let n = self.chunks[i].samples.summary().count as usize;
        let mut d = Decoded {
            ts: Vec::with_capacity(n),
            stack: Vec::with_capacity(n),
            reordered: Vec::new(),
            unknown: 0,
        };
        let rows = (&mut d.ts, &mut d.stack, &mut d.reordered);
        d.unknown = self.read_rows(i, file, stacks, rows, &mut Default::default())?;
        sort_rows(&mut d.ts, &mut d.stack, &[]);
        d.reordered.sort_unstable();
        Some(d)
    }

    /// Appends the samples of chunk `i` as rows ([`Placement::append_rows`]), unpacked as
    /// they are taken when packed, else read from `file` through `buffers`. Returns the
    /// number naming no node; `None` when the arrays cannot be read.
    fn read_rows(
        &self,
        i: usize,
        file: Option<&[u8]>,
        stacks: &NodeStacks,
        rows: Rows<'_>,
        buffers: &mut (Vec<NodeId>, Vec<TimeDelta>),
    ) -> Option<u64> {
        let samples = &self.chunks[i].samples;
        if let Some(pairs) = samples.unpack(&self.store) {
            return Some(self.append_rows(i, pairs, stacks, rows));
        }
        let (ids, deltas) = buffers;
        if !samples.read_into(file, &self.store, ids, deltas) {
            return None;
        }
        let pairs = ids.iter().copied().zip(deltas.iter().copied());
        Some(self.append_rows(i, pairs, stacks, rows))
    }

    /// Appends the samples of chunk `i` (its (node id, delta) pairs, as read) as rows:
    /// times from the chunk's base, the stacks of known nodes; each sample that came with
    /// a negative delta goes to `reordered` as (its time, the time before it). Returns the
    /// number naming no node.
    fn append_rows(
        &self,
        i: usize,
        pairs: impl Iterator<Item = (NodeId, TimeDelta)>,
        stacks: &NodeStacks,
        (ts, stack, reordered): Rows<'_>,
    ) -> u64 {
        let mut unknown = 0;
        let mut t = self.base(i);
        // Most samples repeat the node before: its stack is looked up once per run.
        let mut last: Option<(NodeId, Option<StackIndex>)> = None;
        for (id, d) in pairs {
            let before = t;
            t = t + d;
            if d.is_negative() {
                reordered.push((t, before));
            }
            let s = match last {
                Some((l, s)) if l == id => s,
                _ => {
                    let s = stacks.get(id);
                    last = Some((id, s));
                    s
                }
            };
            match s {
                Some(s) => {
                    ts.push(t);
                    stack.push(s);
                }
                None => unknown += 1,
            }
        }
        unknown
    }

    /// Chunk `i`'s base in ns when its deltas' sum is exact (not saturated) and the base
    /// plus it fits: then, with no negative delta, no running time passes that end and
    /// plain adds give the times (else the general path saturates them).
    fn base_for_plain_adds(&self, i: usize) -> Option<i64> {
        let (base, sum) = (
            self.base(i).as_nanos(),
            self.chunks[i].samples.summary().sum.as_nanos(),
        );
        (sum != i64::MAX && base.checked_add(sum).is_some()).then_some(base)
    }

    /// [`Placement::append_rows`] for a chunk still in the file whose two arrays are as
    /// Chrome writes them ([`plain_uints_into`]: no negative deltas) and name only known
    /// nodes: each array is read into `scratch`, then turned into rows. Returns false,
    /// having appended nothing, for any other chunk (the caller then takes the general
    /// path).
    fn append_plain(
        &self,
        i: usize,
        file: Option<&[u8]>,
        stacks: &NodeStacks,
        (ts, stack): (&mut Vec<Timestamp>, &mut Vec<StackIndex>),
        scratch: &mut Vec<u32>,
    ) -> bool {
        let (
            Some(b),
            SampleArrays::InFile {
                samples,
                deltas,
                summary,
            },
        ) = (file, &self.chunks[i].samples)
        else {
            return false;
        };
        let Some(base) = self.base_for_plain_adds(i) else {
            return false;
        };
        let (n, len) = (summary.count as usize, ts.len());
        scratch.resize(n, 0);
        if plain_uints_into(b, &deltas.range(), scratch) != Some(n) {
            return false;
        }
        // Extended from an iterator of known length: room is made once and the slots are
        // written without being zeroed first.
        let mut t = base;
        ts.extend(scratch.iter().map(|&us| {
            t += us as i64 * 1000;
            Timestamp::from_nanos(t)
        }));
        stack.resize(len + n, StackIndex::new(0));
        let ids = plain_uints_into(b, &samples.range(), scratch) == Some(n);
        if ids && stacks.get_all(scratch, &mut stack[len..]) {
            return true;
        }
        ts.truncate(len);
        stack.truncate(len);
        false
    }

    /// [`Placement::append_plain`] for a chunk packed from a stream: its pairs are unpacked
    /// into times and node ids ([`Unpack::rows_into`](crate::scan::packed::Unpack)), then
    /// the ids' stacks are looked up. False, having appended nothing, for a chunk not
    /// packed, with a negative delta or naming an unknown node.
    fn append_packed(
        &self,
        i: usize,
        stacks: &NodeStacks,
        (ts, stack): (&mut Vec<Timestamp>, &mut Vec<StackIndex>),
        scratch: &mut Vec<u32>,
    ) -> bool {
        let samples = &self.chunks[i].samples;
        let (SampleArrays::Packed { .. }, Some(base), Some(pairs)) = (
            samples,
            self.base_for_plain_adds(i),
            samples.unpack(&self.store),
        ) else {
            return false;
        };
        let len = ts.len();
        scratch.clear();
        if pairs.rows_into(base, ts, scratch) {
            stack.resize(len + scratch.len(), StackIndex::new(0));
            if stacks.get_all(scratch, &mut stack[len..]) {
                return true;
            }
        }
        ts.truncate(len);
        stack.truncate(len);
        false
    }

    /// Asks the CPU to start loading the arrays of chunk `i` left in `file`, so that they
    /// arrive while the chunk before it is read: a window's chunks lie ~1 KB apart in a
    /// file far larger than the caches, and each started with a wait on memory.
    fn prefetch(&self, i: usize, file: Option<&[u8]>) {
        #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
        if let (
            Some(b),
            SampleArrays::InFile {
                samples, deltas, ..
            },
        ) = (file, &self.chunks[i].samples)
        {
            for r in [samples.range(), deltas.range()] {
                let Some(bytes) = b.get(r) else { continue };
                // The first 2 KB: past that, the hardware's own prefetch has caught up.
                for line in bytes.chunks(64).take(32) {
                    // SAFETY: SSE is part of the x86_64 baseline; a prefetch of an address
                    // inside `file` reads nothing into the program and cannot fault.
                    unsafe {
                        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
                        _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast());
                    }
                }
            }
        }
        #[cfg(not(all(target_arch = "x86_64", not(feature = "no-simd"))))]
        let _ = (i, file);
    }

    /// The samples of the chunks that meet `[start, end)`, read from `file` where needed.
    pub fn window(
        &self,
        start: Timestamp,
        end: Timestamp,
        file: Option<&[u8]>,
        stacks: &NodeStacks,
    ) -> WindowSamples {
        let mut out = WindowSamples::default();
        let meeting = self.meeting(start, end);
        // Room for every sample of the chunks read (those decoded once give fewer), so the
        // rows are written once, never moved by a growing buffer.
        let rows: usize = meeting
            .iter()
            .map(|&i| self.chunks[i].samples.summary().count as usize)
            .sum();
        let (mut ts, mut stack) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
        let (mut buffers, mut scratch) = (Default::default(), Vec::new());
        // Chunks in profile order: rows are appended in profile order, so a stable sort by
        // time alone gives (time, profile order).
        let inside =
            |v: &[Timestamp]| v.partition_point(|&t| t < start)..v.partition_point(|&t| t < end);
        // Stretches of rows in time order: each chunk's rows are when decoded, plain, or
        // read without a negative delta.
        let mut in_order: Vec<Range<usize>> = Vec::new();
        for (j, &i) in meeting.iter().enumerate() {
            let before = ts.len();
            if let Some(&next) = meeting.get(j + 1) {
                self.prefetch(next, file);
            }
            if let Some(cell) = self.decoded.get(&i) {
                // Only its rows inside the window: the rows around them are not needed
                // (a row's weight ends at the next sample or at the window's end).
                match cell.get_or_init(|| self.decode(i, file, stacks)) {
                    None => out.unreadable += 1,
                    Some(d) => {
                        out.unknown += d.unknown;
                        // The backward steps that meet the window (from before its start
                        // or to after its end too: those change which samples are in it).
                        out.reordered.extend(
                            d.reordered
                                .iter()
                                .filter(|&&(t, before)| t < end && before >= start),
                        );
                        let r = inside(&d.ts);
                        ts.extend_from_slice(&d.ts[r.clone()]);
                        stack.extend_from_slice(&d.stack[r]);
                        push_in_order(&mut in_order, &ts, before);
                    }
                }
                continue;
            }
            if self.append_plain(i, file, stacks, (&mut ts, &mut stack), &mut scratch)
                || self.append_packed(i, stacks, (&mut ts, &mut stack), &mut scratch)
            {
                push_in_order(&mut in_order, &ts, before);
                continue;
            }
            let steps_before = out.reordered.len();
            let rows = (&mut ts, &mut stack, &mut out.reordered);
            match self.read_rows(i, file, stacks, rows, &mut buffers) {
                Some(unknown) => out.unknown += unknown,
                None => out.unreadable += 1,
            }
            // Without a negative delta the chunk's times only grow.
            if out.reordered.len() == steps_before {
                push_in_order(&mut in_order, &ts, before);
            }
        }
        sort_rows(&mut ts, &mut stack, &in_order);
        out.reordered.sort_unstable();
        out.table = SampleTable { ts, stack };
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::records::SampleArrays;

    fn arrays(deltas: &[i64]) -> ProfileChunk {
        ProfileChunk {
            ts: Timestamp::default(),
            samples: SampleArrays::read_now(
                deltas.iter().map(|_| NodeId(1)).collect(),
                deltas.iter().map(|&d| TimeDelta::from_micros(d)).collect(),
            ),
        }
    }

    /// `sort_rows` over `times` (stacks are input positions), with `in_order` the stretches
    /// known in order, gives a stable sort by time: by time, then position.
    fn assert_sorts_stably(times: &[i64], in_order: &[Range<usize>]) {
        let mut ts: Vec<Timestamp> = times.iter().map(|&t| Timestamp::from_nanos(t)).collect();
        let mut stack: Vec<StackIndex> = (0..ts.len()).map(StackIndex::new).collect();
        let mut expected: Vec<(i64, usize)> = times.iter().copied().zip(0..).collect();
        expected.sort();
        sort_rows(&mut ts, &mut stack, in_order);
        let got: Vec<(i64, usize)> = ts
            .iter()
            .zip(&stack)
            .map(|(t, s)| (t.as_nanos(), s.index()))
            .collect();
        assert_eq!(got, expected, "{times:?} {in_order:?}");
    }

    #[test]
    fn rows_sort_stably_whether_nearly_sorted_or_not() {
        // Times with ties; the stack is each row's input position, so the expected order
        // (a stable sort by time) is known: by time, then position.
        // Each also from its sorted prefix (up to the first row earlier than the one before).
        let check = |times: &[i64]| {
            let prefix = (1..times.len())
                .find(|&k| times[k] < times[k - 1])
                .unwrap_or(times.len());
            let stretch = 0..prefix;
            for in_order in [&[][..], std::slice::from_ref(&stretch)] {
                assert_sorts_stably(times, in_order);
            }
        };
        check(&[]);
        check(&[5]);
        check(&[1, 2, 2, 3]);
        // A few samples a little early (negative deltas), with ties: moved in place.
        check(&[10, 20, 15, 30, 30, 25, 30, 40, 5]);
        // Reversed, with ties: past the move budget, sorted as pairs.
        let reversed: Vec<i64> = (0..2000).map(|k| (2000 - k) / 3).collect();
        check(&reversed);
        // Pseudo-random, some repeated times.
        let mut x = 12345u64;
        let random: Vec<i64> = (0..500)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 40) as i64 % 97
            })
            .collect();
        check(&random);
    }

    #[test]
    fn rows_sort_stably_past_the_stretches_known_in_order() {
        // Stretches in order, each starting at a pseudo-random time (often before the end
        // of the one before: a chunk met again after others), between rows out of order;
        // the expected order is a stable sort by time (stacks are input positions).
        let mut x = 99u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..200 {
            let (mut times, mut in_order) = (Vec::new(), Vec::new());
            for _ in 0..next(6) {
                let start = times.len();
                let mut t = next(500) as i64;
                for _ in 0..next(40) {
                    t += next(30) as i64;
                    times.push(t);
                }
                if next(3) > 0 {
                    in_order.push(start..times.len());
                } else {
                    // Out of order, not a stretch.
                    times[start..].reverse();
                }
            }
            assert_sorts_stably(&times, &in_order);
        }
    }

    #[test]
    fn chunks_are_placed_from_running_sums() {
        // t0 100; chunk A deltas 10, -4, 20 → 110, 106, 126; an empty chunk; chunk B 5 → 131.
        let p = Placement::new(
            Timestamp::from_micros(100),
            vec![arrays(&[10, -4, 20]), arrays(&[]), arrays(&[5])],
            PackedStore::default(),
        );
        let us = |t: Timestamp| t.as_nanos() / 1000;
        let spans: Vec<_> = (0..p.chunks.len())
            .map(|i| (us(p.base(i)), us(p.lo(i)), us(p.hi(i))))
            .collect();
        assert_eq!(spans, [(100, 106, 126), (126, 131, 131)]);
        assert_eq!(p.sample_count(), 4);
        // [127, 200) meets only B; [100, 106) meets none (A starts at 106); [106, 107) A.
        let t = Timestamp::from_micros;
        assert_eq!(p.meeting(t(127), t(200)), [1]);
        assert_eq!(p.meeting(t(100), t(106)), Vec::<usize>::new());
        assert_eq!(p.meeting(t(106), t(107)), [0]);
        let stacks = NodeStacks::new([(NodeId(1), StackIndex::new(0))].into_iter());
        let w = p.window(t(0), t(1000), None, &stacks);
        assert_eq!(
            w.table.ts.iter().map(|&x| us(x)).collect::<Vec<_>>(),
            [106, 110, 126, 131]
        );
        // 110 back to 106.
        assert_eq!(w.reordered, [(t(106), t(110))]);
    }

    #[test]
    fn the_chunks_meeting_a_window_are_those_whose_span_meets_it_however_wide() {
        // Chunks of ~100 µs, a few far wider (one over 4.3 s, past the 32-bit spans the
        // median is taken from), and negative deltas that put a chunk's earliest sample
        // before the one of the chunk ahead of it.
        let mut deltas: Vec<Vec<i64>> = Vec::new();
        for k in 0..400i64 {
            deltas.push(match k {
                37 => vec![10, 5_000_000, 10],
                120 => vec![50, 2_000, 40],
                121 => vec![-900, 30, 30],
                250 => vec![3, -250, 500, 7],
                300 => vec![20, 200_000, -150_000, 15],
                _ => vec![30 + k % 7, 40, 30 - k % 5],
            });
        }
        let p = Placement::new(
            Timestamp::from_micros(1_000),
            deltas.iter().map(|d| arrays(d)).collect(),
            PackedStore::default(),
        );
        assert!(!p.wide.is_empty(), "some chunks are wide");
        let (lo, hi) = p.bounds().unwrap();
        let (lo, hi) = (lo.as_nanos() / 1000, hi.as_nanos() / 1000);
        let mut checked = 0;
        for start in (lo - 300..hi + 300).step_by(997) {
            for len in [1, 50, 400, 20_000, 6_000_000] {
                let (s, e) = (
                    Timestamp::from_micros(start),
                    Timestamp::from_micros(start + len),
                );
                // By definition: every chunk whose span [lo, hi] meets [s, e), in chunk
                // order.
                let expected: Vec<usize> = (0..p.chunks.len())
                    .filter(|&i| p.lo(i) < e && p.hi(i) >= s)
                    .collect();
                assert_eq!(p.meeting(s, e), expected, "window [{start}, +{len}) µs");
                checked += 1;
            }
        }
        assert!(checked > 1000);
    }

    /// A window's rows as (µs, stack index).
    fn rows_in_micros(w: &WindowSamples) -> Vec<(i64, usize)> {
        (w.table.ts.iter().zip(&w.table.stack))
            .map(|(t, s)| (t.as_nanos() / 1000, s.index()))
            .collect()
    }

    /// The rows of chunks A–D below, worked by hand: A from 0: 10, 30, 35; B from 35: 45,
    /// (65 unknown), 70; C from 70: 73, 77, 82; D from 82: 88, 94.
    const ROWS_OF_A_TO_D: [(i64, usize); 10] = [
        (10, 0),
        (30, 1),
        (35, 0),
        (45, 0),
        (70, 1),
        (73, 1),
        (77, 1),
        (82, 1),
        (88, 0),
        (94, 0),
    ];

    #[test]
    fn chunks_in_the_file_give_the_same_rows_on_the_plain_and_general_paths() {
        // A: plain arrays; B: names node 9 (unknown); C: spaces in its deltas (general
        // path); D: a sample more than deltas (cut to 2 pairs).
        let file = b"[1,2,1] [10,20,5] [1,9,2] [10,20,5] [2,2,2] [3, 4, 5] [1,1,1] [6,6]";
        let at = |k: usize| {
            let starts: Vec<usize> = (0..file.len()).filter(|&i| file[i] == b'[').collect();
            let end = starts[k] + file[starts[k]..].iter().position(|&c| c == b']').unwrap();
            starts[k]..end + 1
        };
        let chunk = |s: usize, d: usize| {
            let n = crate::scan::chunk::count_elements(file, &at(s))
                .min(crate::scan::chunk::count_elements(file, &at(d)));
            ProfileChunk {
                ts: Timestamp::default(),
                samples: SampleArrays::InFile {
                    samples: crate::scan::records::Span::of(at(s)),
                    deltas: crate::scan::records::Span::of(at(d)),
                    summary: crate::scan::chunk::summarize_deltas(file, &at(d), n).unwrap(),
                },
            }
        };
        let p = Placement::new(
            Timestamp::default(),
            vec![chunk(0, 1), chunk(2, 3), chunk(4, 5), chunk(6, 7)],
            PackedStore::default(),
        );
        let pairs = [
            (NodeId(1), StackIndex::new(0)),
            (NodeId(2), StackIndex::new(1)),
        ];
        // Both kinds of node table: the dense one (small ids) and the hash map.
        let dense = NodeStacks::new(pairs.into_iter());
        assert!(matches!(dense, NodeStacks::Dense(_)));
        for stacks in [dense, NodeStacks::Sparse(pairs.into_iter().collect())] {
            let t = Timestamp::from_micros;
            let w = p.window(t(0), t(1000), Some(file), &stacks);
            assert_eq!(rows_in_micros(&w), ROWS_OF_A_TO_D);
            assert_eq!((w.unknown, w.unreadable), (1, 0));
        }
    }

    #[test]
    fn chunks_packed_from_a_stream_give_the_rows_of_the_same_chunks_in_a_file() {
        // The four chunks of the test above, packed as a stream's are (A: nodes 1, 2 only;
        // B names node 9; C; D), and E: a 40-sample run of node 1, 1 µs apart (blocks of
        // sixteen), then one 3 µs back (a negative delta: the general path).
        let mut store = PackedStore::default();
        let mut chunk = |ids: &[i64], us: &[i64]| {
            let mut packed = Vec::new();
            let pairs = ids
                .iter()
                .zip(us)
                .map(|(&i, &d)| (NodeId(i), TimeDelta::from_micros(d)));
            crate::scan::packed::pack(pairs, &mut packed);
            let mut summary = crate::scan::chunk::DeltaSummary::default();
            us.iter()
                .for_each(|&d| summary.push(TimeDelta::from_micros(d)));
            ProfileChunk {
                ts: Timestamp::default(),
                samples: store.keep(&packed, summary),
            }
        };
        let run: Vec<i64> = (0..41).map(|k| if k == 40 { -3 } else { 1 }).collect();
        let chunks = vec![
            chunk(&[1, 2, 1], &[10, 20, 5]),
            chunk(&[1, 9, 2], &[10, 20, 5]),
            chunk(&[2, 2, 2], &[3, 4, 5]),
            chunk(&[1, 1], &[6, 6]),
            chunk(&[1; 41], &run),
        ];
        let p = Placement::new(Timestamp::default(), chunks, store);
        let stacks = NodeStacks::new(
            [
                (NodeId(1), StackIndex::new(0)),
                (NodeId(2), StackIndex::new(1)),
            ]
            .into_iter(),
        );
        let w = p.window(
            Timestamp::default(),
            Timestamp::from_micros(1000),
            None,
            &stacks,
        );
        // As above to 94; E from 94: 95 … 134, then 131 (sorted in among them).
        let mut expected = ROWS_OF_A_TO_D.to_vec();
        expected.extend((95..=131).map(|t| (t, 0)));
        expected.push((131, 0));
        expected.extend((132..=134).map(|t| (t, 0)));
        assert_eq!(rows_in_micros(&w), expected);
        assert_eq!((w.unknown, w.unreadable), (1, 0));
        let t = Timestamp::from_micros;
        assert_eq!(w.reordered, [(t(131), t(134))]);
    }

    #[test]
    fn plain_rows_near_the_end_of_time_saturate_as_the_general_ones_do() {
        // Deltas of 1, 2 and 3 µs from 2.5 µs before the latest representable time: the
        // second and third sum past it and stand at it, on the plain path as elsewhere.
        let file = b"[1,1,1] [1,2,3]";
        let chunk = ProfileChunk {
            ts: Timestamp::default(),
            samples: SampleArrays::InFile {
                samples: crate::scan::records::Span::of(0..7),
                deltas: crate::scan::records::Span::of(8..15),
                summary: crate::scan::chunk::summarize_deltas(file, &(8..15), 3).unwrap(),
            },
        };
        let end = Timestamp::from_nanos(i64::MAX);
        let p = Placement::new(
            Timestamp::from_nanos(i64::MAX - 2500),
            vec![chunk],
            PackedStore::default(),
        );
        let stacks = NodeStacks::new([(NodeId(1), StackIndex::new(0))].into_iter());
        let w = p.window(Timestamp::default(), end, Some(file), &stacks);
        let late = [i64::MAX - 1500, i64::MAX, i64::MAX].map(Timestamp::from_nanos);
        assert_eq!(w.table.ts, late);
    }

    #[test]
    fn large_chunks_are_decoded_once_and_give_the_rows_of_each_window() {
        // 6000 samples 10 µs apart from t0 = 0, every 7th delta −25 µs instead (reordered),
        // every 11th naming node 9 (unknown); nodes 1 and 2 alternate in runs of 3.
        let n = 6000usize;
        let deltas: Vec<i64> = (0..n).map(|k| if k % 7 == 6 { -25 } else { 10 }).collect();
        let ids: Vec<NodeId> = (0..n)
            .map(|k| {
                NodeId(if k % 11 == 10 {
                    9
                } else {
                    1 + (k / 3 % 2) as i64
                })
            })
            .collect();
        let chunk = ProfileChunk {
            ts: Timestamp::default(),
            samples: SampleArrays::read_now(
                ids.clone(),
                deltas.iter().map(|&d| TimeDelta::from_micros(d)).collect(),
            ),
        };
        let p = Placement::new(Timestamp::default(), vec![chunk], PackedStore::default());
        let stacks = NodeStacks::new(
            [
                (NodeId(1), StackIndex::new(0)),
                (NodeId(2), StackIndex::new(1)),
            ]
            .into_iter(),
        );
        // The rows by definition: running sums, known ids, stable sort by time.
        let mut all: Vec<(i64, usize)> = Vec::new();
        let mut t = 0;
        for (id, d) in ids.iter().zip(&deltas) {
            t += d;
            if id.0 != 9 {
                all.push((t, id.0 as usize - 1));
            }
        }
        all.sort_by_key(|r| r.0);
        for (a, b) in [
            (0, 100),
            (1234, 5678),
            (-50, 30),
            (9000, 40_000),
            (40_000, 50_000),
        ] {
            let w = p.window(
                Timestamp::from_micros(a),
                Timestamp::from_micros(b),
                None,
                &stacks,
            );
            let want: Vec<(i64, usize)> = all
                .iter()
                .copied()
                .filter(|&(t, _)| a <= t && t < b)
                .collect();
            let got: Vec<(i64, usize)> = w
                .table
                .ts
                .iter()
                .zip(&w.table.stack)
                .map(|(t, s)| (t.as_nanos() / 1000, s.index()))
                .collect();
            assert_eq!(got, want, "[{a}, {b})");
            assert_eq!(
                w.unknown,
                if want.is_empty() { 0 } else { 545 },
                "[{a}, {b})"
            );
        }
        assert!(p.decoded[&0].get().is_some(), "decoded once and kept");
    }

    #[test]
    fn node_stacks_dense_and_sparse() {
        let s = StackIndex::new(3);
        let dense = NodeStacks::new([(NodeId(1), s), (NodeId(7), s)].into_iter());
        assert!(matches!(dense, NodeStacks::Dense(_)));
        assert_eq!(dense.get(NodeId(7)), Some(s));
        assert_eq!(dense.get(NodeId(2)), None);
        assert_eq!(dense.get(NodeId(-1)), None);
        let sparse = NodeStacks::new([(NodeId(1 << 40), s)].into_iter());
        assert!(matches!(sparse, NodeStacks::Sparse(_)));
        assert_eq!(sparse.get(NodeId(1 << 40)), Some(s));
    }
}

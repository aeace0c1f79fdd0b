//! A chunk's (sample, delta) pairs packed about a byte each, for inputs read only once.
//!
//! On a stream every chunk's arrays must be kept until the long tasks are known. In real
//! traces most samples repeat the node before them and deltas jitter a few µs around the
//! sampling interval, so each pair is written as the differences from the pair before it
//! (the node id's, and the delta's in whole µs when it is whole, else in ns), the common
//! case in one byte:
//!
//! | first byte | node id | delta (difference from the one before) |
//! |---|---|---|
//! | `0x00..=0x7F` | the same | `byte − 64` µs |
//! | `0x80..=0xBF` | a zigzag varint of the difference follows | `(byte & 0x3F) − 32` µs |
//! | `0xC0..=0xC3` | bit 0: a zigzag varint of the difference follows, else the same | a zigzag varint follows: in ns when bit 1 is set, else in µs |
//!
//! The first pair of a chunk counts from node 0 and delta 0. Differences wrap, so every
//! pair of `i64`s comes back exactly.

use crate::time::{TimeDelta, Timestamp};
use crate::vocab::NodeId;

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

#[inline]
fn put_varint(out: &mut Vec<u8>, mut u: u64) {
    while u >= 0x80 {
        out.push((u as u8) | 0x80);
        u >>= 7;
    }
    out.push(u as u8);
}

/// One pair, given the differences from the pair before: `us` is the delta's difference
/// in whole µs when it is whole.
#[inline]
fn put_pair(out: &mut Vec<u8>, id_step: i64, ns_step: i64) {
    let us = (ns_step % 1000 == 0).then_some(ns_step / 1000);
    match us {
        Some(us) if id_step == 0 && (-64..64).contains(&us) => out.push((us + 64) as u8),
        Some(us) if id_step != 0 && (-32..32).contains(&us) => {
            out.push(0x80 | (us + 32) as u8);
            put_varint(out, zigzag(id_step));
        }
        _ => put_general(out, id_step, ns_step, us),
    }
}

#[cold]
fn put_general(out: &mut Vec<u8>, id_step: i64, ns_step: i64, us: Option<i64>) {
    out.push(0xC0 | (id_step != 0) as u8 | (us.is_none() as u8) << 1);
    if id_step != 0 {
        put_varint(out, zigzag(id_step));
    }
    put_varint(out, zigzag(us.unwrap_or(ns_step)));
}

/// Appends the packed `pairs` (node id, delta) to `out`; returns how many there were.
pub(crate) fn pack(
    pairs: impl IntoIterator<Item = (NodeId, TimeDelta)>,
    out: &mut Vec<u8>,
) -> usize {
    let (mut id, mut ns, mut n) = (0i64, 0i64, 0usize);
    for (s, d) in pairs {
        put_pair(out, s.0.wrapping_sub(id), d.as_nanos().wrapping_sub(ns));
        (id, ns, n) = (s.0, d.as_nanos(), n + 1);
    }
    n
}

/// [`pack`] of the pairs of `ids` and `us` (deltas in µs, as Chrome's plain arrays hold
/// them; pairs beyond the shorter one are dropped): the same bytes, without the ns
/// arithmetic of the general case.
pub(crate) fn pack_micros(ids: &[u32], us: &[u32], out: &mut Vec<u8>) {
    let n = ids.len().min(us.len());
    let (ids, us) = (&ids[..n], &us[..n]);
    out.reserve(n);
    let (mut id, mut d) = (0i64, 0i64);
    let mut i = 0;
    while i < n {
        // Sixteen pairs checked at once for the common case (the node before, a delta within
        // 64 µs of the one before). The difference is taken in `u32` and trusted only where
        // both values are below 2³¹ (then it is exact); the rest take the scalar path
        // below, which is exact for all.
        if let (Some(sb), Some(ub)) = (ids.get(i..i + BLOCK), us.get(i..i + BLOCK)) {
            let (id32, mut prev) = (id as u32, [d as u32; BLOCK]);
            prev[1..].copy_from_slice(&ub[..BLOCK - 1]);
            let mut bytes = [0u8; BLOCK];
            let mut common = true;
            for k in 0..BLOCK {
                let x = ub[k].wrapping_sub(prev[k]).wrapping_add(64);
                common &= (sb[k] == id32) & (x < 128) & ((ub[k] | prev[k]) < 1 << 31);
                bytes[k] = x as u8;
            }
            if common {
                out.extend_from_slice(&bytes);
                d = i64::from(ub[BLOCK - 1]);
                i += BLOCK;
                continue;
            }
            // Not all common: the common pairs at the block's head are appended together,
            // so a node change costs one check of sixteen, not one for each pair before it.
            let mut run = 0;
            let mut before = d;
            while run < BLOCK {
                let u = i64::from(ub[run]);
                if i64::from(sb[run]) != id || !(-64..64).contains(&(u - before)) {
                    break;
                }
                before = u;
                run += 1;
            }
            if run > 0 {
                out.extend_from_slice(&bytes[..run]);
                d = before;
                i += run;
            }
        }
        let (s, u) = (i64::from(ids[i]), i64::from(us[i]));
        let step = u - d;
        if s == id && (-64..64).contains(&step) {
            out.push((step + 64) as u8);
        } else {
            put_pair(out, s - id, step * 1000);
        }
        (id, d) = (s, u);
        i += 1;
    }
}

/// Pairs [`pack_micros`] checks and writes at once.
const BLOCK: usize = 16;

/// The pairs of bytes made by [`pack`], in order.
#[derive(Clone, Debug)]
pub struct Unpack<'a> {
    bytes: &'a [u8],
    at: usize,
    left: usize,
    id: i64,
    ns: i64,
}

impl<'a> Unpack<'a> {
    /// The first `count` pairs of `bytes` (fewer when the bytes end first).
    pub fn new(bytes: &'a [u8], count: usize) -> Self {
        Unpack {
            bytes,
            at: 0,
            left: count,
            id: 0,
            ns: 0,
        }
    }

    #[inline]
    fn varint(&mut self) -> u64 {
        let mut u = 0u64;
        let mut shift = 0;
        while let Some(&c) = self.bytes.get(self.at) {
            self.at += 1;
            if shift < 64 {
                u |= ((c & 0x7f) as u64) << shift;
            }
            if c < 0x80 {
                break;
            }
            shift += 7;
        }
        u
    }

    /// The rest of the pairs as rows: each pair's time (`base` plus the running sum of the
    /// deltas, in ns) goes to `ts` and its node id to `ids`. False, with `ts` and `ids`
    /// partly written, when a delta is negative, an id is outside `u32`, or the bytes end
    /// before the count: such chunks take the general path. Runs of the common one-byte
    /// pair (the node before, a delta within 64 µs of the one before) are read up to
    /// sixteen at a time.
    pub(crate) fn rows_into(
        mut self,
        base: i64,
        ts: &mut Vec<Timestamp>,
        ids: &mut Vec<u32>,
    ) -> bool {
        let mut t = base;
        loop {
            // The one-byte pairs at the head of the next sixteen bytes, read together.
            if let Some(block) = self.bytes.get(self.at..self.at + BLOCK) {
                let block: &[u8; BLOCK] = block.try_into().expect("sixteen bytes");
                // Bit k: byte k starts a longer pair; bit 16 caps the run at the block.
                let mut long = 1u32 << BLOCK;
                for (k, &c) in block.iter().enumerate() {
                    long |= u32::from(c >> 7) << k;
                }
                let run = (long.trailing_zeros() as usize).min(self.left);
                if run > 0 {
                    let Ok(id) = u32::try_from(self.id) else {
                        return false;
                    };
                    let (mut ns, mut lowest) = (self.ns, i64::MAX);
                    let mut times = [0i64; BLOCK];
                    for (slot, &c) in times.iter_mut().zip(&block[..run]) {
                        ns = ns.wrapping_add((c as i64 - 64) * 1000);
                        lowest = lowest.min(ns);
                        t = t.wrapping_add(ns);
                        *slot = t;
                    }
                    if lowest < 0 {
                        return false;
                    }
                    // Whole blocks as fixed-size copies, with the tail taken back when
                    // there is room for them (a row list made to measure is not grown).
                    let (len, ids_len) = (ts.len(), ids.len());
                    if run == BLOCK || ts.capacity() - len >= BLOCK {
                        ts.extend(times.map(Timestamp::from_nanos));
                        ts.truncate(len + run);
                    } else {
                        ts.extend(times[..run].iter().map(|&t| Timestamp::from_nanos(t)));
                    }
                    ids.extend_from_slice(&[id; BLOCK]);
                    ids.truncate(ids_len + run);
                    (self.ns, self.at, self.left) = (ns, self.at + run, self.left - run);
                    continue;
                }
            }
            if self.left == 0 {
                return true;
            }
            let Some((id, d)) = self.next() else {
                return false;
            };
            let Ok(id) = u32::try_from(id.0) else {
                return false;
            };
            if d.is_negative() {
                return false;
            }
            t = t.wrapping_add(d.as_nanos());
            ts.push(Timestamp::from_nanos(t));
            ids.push(id);
        }
    }
}

impl Iterator for Unpack<'_> {
    type Item = (NodeId, TimeDelta);

    #[inline]
    fn next(&mut self) -> Option<(NodeId, TimeDelta)> {
        if self.left == 0 {
            return None;
        }
        let tag = *self.bytes.get(self.at)?;
        self.at += 1;
        self.left -= 1;
        let (id_step, ns_step) = if tag < 0x80 {
            (0, (tag as i64 - 64) * 1000)
        } else if tag < 0xC0 {
            let us = (tag & 0x3F) as i64 - 32;
            (unzigzag(self.varint()), us * 1000)
        } else {
            let id_step = if tag & 1 != 0 {
                unzigzag(self.varint())
            } else {
                0
            };
            let v = unzigzag(self.varint());
            (
                id_step,
                if tag & 2 != 0 {
                    v
                } else {
                    v.wrapping_mul(1000)
                },
            )
        };
        self.id = self.id.wrapping_add(id_step);
        self.ns = self.ns.wrapping_add(ns_step);
        Some((NodeId(self.id), TimeDelta::from_nanos(self.ns)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(ids: &[i64], ns: &[i64]) -> Vec<u8> {
        let pairs: Vec<(NodeId, TimeDelta)> = ids
            .iter()
            .zip(ns)
            .map(|(&i, &d)| (NodeId(i), TimeDelta::from_nanos(d)))
            .collect();
        let mut out = Vec::new();
        assert_eq!(pack(pairs.iter().copied(), &mut out), pairs.len());
        let back: Vec<_> = Unpack::new(&out, pairs.len()).collect();
        assert_eq!(back, pairs);
        out
    }

    #[test]
    fn edge_values_come_back_exactly() {
        let (min, max) = (i64::MIN, i64::MAX);
        round_trip(&[], &[]);
        round_trip(&[0], &[0]);
        round_trip(
            &[max, min, max, 0, -1, 1, min, min, 7, 7, 7],
            &[min, max, min, 0, 1, -1, -999, 999, 1500, 170_000, -975_000],
        );
        // Steps just inside and outside each one-byte range, in µs and in ns.
        let ns: Vec<i64> = [0, 63, -1, 31, -33, 32, -32, 64, -64, 65, -65, 1, 500]
            .iter()
            .scan(0i64, |t, &s| {
                *t += s * 1000;
                Some(*t)
            })
            .chain([1, 1001, 2002, max - 1, max])
            .collect();
        let same = vec![5i64; ns.len()];
        let alternating: Vec<i64> = (0..ns.len() as i64).map(|k| k % 2 * 100).collect();
        round_trip(&same, &ns);
        round_trip(&alternating, &ns);
        // Fractional deltas (ns precision) and junk-sized ones.
        round_trip(&[1, 2, 3], &[123_456_789, -1, 1 << 62]);
    }

    #[test]
    fn typical_pairs_take_one_byte_each() {
        // Same node, deltas jittering around 130 µs: a byte each after the first.
        let ns: Vec<i64> = [130, 128, 131, 192, 129].map(|us| us * 1000).to_vec();
        let out = round_trip(&[7; 5], &ns);
        // The first pair: node 7 from 0, 130 µs from 0 (a general pair: 1 + 1 + 2 bytes).
        assert_eq!(out.len(), 4 + 4);
        // A new node with a small delta step: 2 bytes.
        let out = round_trip(&[7, 9], &[130_000, 131_000]);
        assert_eq!(out[4..], [0x80 | 33, 4]);
    }

    #[test]
    fn micros_pack_as_the_general_case_does() {
        let ids = [2u32, 7, 2, 2, 2, 99_999_999, 0, 0, 3];
        let us = [4520u32, 195, 157, 11, 209, 0, 99_999_999, 95, 240];
        for n in 0..=ids.len() {
            let mut fast = Vec::new();
            pack_micros(&ids[..n], &us, &mut fast);
            let mut general = Vec::new();
            let pairs = ids[..n]
                .iter()
                .zip(us)
                .map(|(&i, u)| (NodeId(i.into()), TimeDelta::from_micros(u.into())));
            pack(pairs, &mut general);
            assert_eq!(fast, general, "{n}");
        }
    }

    #[test]
    fn micros_pack_as_the_general_case_does_in_blocks_and_around_them() {
        // Long runs of one node with deltas jittering inside and outside ±64 µs, a node
        // change at every offset of a 16-pair block, and lengths around block ends.
        let mut ids = vec![4u32; 200];
        let mut us: Vec<u32> = (0..200u32).map(|k| 100 + (k * 37) % 60).collect();
        us[40] = 400; // a step of ≥ 64 µs inside a block
        us[41] = 100;
        for k in [17usize, 50, 63, 64, 65, 130] {
            ids[k] = 9;
        }
        ids[131..].fill(9);
        for n in [0, 1, 15, 16, 17, 31, 32, 33, 100, 199, 200] {
            let mut fast = Vec::new();
            pack_micros(&ids[..n], &us[..n], &mut fast);
            let mut general = Vec::new();
            let pairs = ids[..n]
                .iter()
                .zip(&us)
                .map(|(&i, &u)| (NodeId(i.into()), TimeDelta::from_micros(u.into())));
            pack(pairs, &mut general);
            assert_eq!(fast, general, "{n}");
        }
        // Deltas at the top of `u32`, where a difference taken in `u32` wraps: 20 after
        // 2³² − 11 wraps to a step of 31 µs and 2³² − 11 after 20 to one of −31, which
        // are not the true ones; and steps of a few µs between values above 2³¹. Either
        // way the same bytes as the general case.
        let top: Vec<u32> = (0..48u32)
            .map(|k| if k % 2 == 0 { u32::MAX - 10 } else { 20 })
            .chain((0..40).map(|k| u32::MAX - k % 7))
            .collect();
        let same = vec![6u32; top.len()];
        let mut fast = Vec::new();
        pack_micros(&same, &top, &mut fast);
        let mut general = Vec::new();
        let pairs = same
            .iter()
            .zip(&top)
            .map(|(&i, &u)| (NodeId(i.into()), TimeDelta::from_micros(u.into())));
        pack(pairs, &mut general);
        assert_eq!(fast, general);
        let back: Vec<i64> = Unpack::new(&fast, top.len())
            .map(|(_, d)| d.as_nanos() / 1000)
            .collect();
        assert_eq!(back, top.iter().map(|&u| i64::from(u)).collect::<Vec<_>>());
        // A run of one node after the first pair: a byte a pair.
        let mut out = Vec::new();
        pack_micros(&[4; 100], &[130; 100], &mut out);
        assert_eq!(out.len(), 4 + 99);
        assert!(out[4..].iter().all(|&b| b == 64));
    }

    #[test]
    fn unpacking_stops_at_the_count_or_the_bytes_end() {
        let mut out = Vec::new();
        pack([(NodeId(1), TimeDelta::from_micros(100)); 3], &mut out);
        assert_eq!(Unpack::new(&out, 2).count(), 2);
        assert_eq!(Unpack::new(&out, 9).count(), 3);
        assert_eq!(Unpack::new(&out[..0], 3).count(), 0);
        // Cut bytes give what they give, without a panic.
        Unpack::new(&out[..1], 3).for_each(drop);
    }

    /// `rows_into` of `pairs` packed: the times and ids, or None when it refuses them.
    fn rows(pairs: &[(i64, i64)], base: i64) -> Option<(Vec<i64>, Vec<u32>)> {
        let mut out = Vec::new();
        let n = pack(
            pairs
                .iter()
                .map(|&(i, d)| (NodeId(i), TimeDelta::from_nanos(d))),
            &mut out,
        );
        let (mut ts, mut ids) = (Vec::new(), Vec::new());
        Unpack::new(&out, n)
            .rows_into(base, &mut ts, &mut ids)
            .then(|| (ts.iter().map(|t| t.as_nanos()).collect(), ids))
    }

    #[test]
    fn rows_are_running_times_and_ids_or_refused() {
        // Worked by hand: base 1000, deltas 5, 0, 7 µs.
        assert_eq!(
            rows(&[(3, 5000), (3, 0), (4, 7000)], 1000),
            Some((vec![6000, 6000, 13_000], vec![3, 3, 4]))
        );
        // 40 samples of node 9 with deltas 100, 101, 102, ... µs (blocks of sixteen one-byte
        // pairs, then the rest one at a time): times are 1000 + the running sums.
        let pairs: Vec<(i64, i64)> = (0..40).map(|k| (9, (100 + k) * 1000)).collect();
        let times: Vec<i64> = (0..40i64)
            .map(|k| 1000 + (k + 1) * 100_000 + k * (k + 1) / 2 * 1000)
            .collect();
        assert_eq!(rows(&pairs, 1000), Some((times.clone(), vec![9; 40])));
        // A count that ends inside a block of one-byte pairs: only the pairs counted.
        let mut packed = Vec::new();
        pack(
            pairs
                .iter()
                .map(|&(i, d)| (NodeId(i), TimeDelta::from_nanos(d))),
            &mut packed,
        );
        for n in [0, 5, 16, 21, 39] {
            let (mut ts, mut ids) = (Vec::new(), Vec::new());
            assert!(Unpack::new(&packed, n).rows_into(1000, &mut ts, &mut ids));
            let ts: Vec<i64> = ts.iter().map(|t| t.as_nanos()).collect();
            assert_eq!((ts, ids), (times[..n].to_vec(), vec![9; n]), "{n}");
        }
        // Refused: a negative delta inside a block and alone, an id beyond u32.
        let mut back = pairs.clone();
        back[20].1 = -1000;
        assert_eq!(rows(&back, 0), None);
        assert_eq!(rows(&[(1, 5), (1, -5)], 0), None);
        assert_eq!(rows(&[(1 << 32, 5)], 0), None);
        // The same rows as the pairs iterator gives, on mixed pairs around block edges.
        let mixed: Vec<(i64, i64)> = (0..100)
            .map(|k| {
                (
                    if k % 37 == 36 { k } else { 2 },
                    (120 + k % 7) * 1000 + k % 3,
                )
            })
            .collect();
        let mut t = 77;
        let expected: Vec<i64> = mixed
            .iter()
            .map(|&(_, d)| {
                t += d;
                t
            })
            .collect();
        let ids: Vec<u32> = mixed.iter().map(|&(i, _)| i as u32).collect();
        assert_eq!(rows(&mixed, 77), Some((expected, ids)));
    }
}

//! Chrome's fast paths: the `samples` and `timeDeltas` arrays of profile chunks are plain
//! digit-and-comma arrays (no whitespace, no signs), read in 64-byte blocks with the
//! block operations of [`super::simd`], the copy for the CPU chosen at run time, and
//! checked against the general path of [`super::numbers`] by the tests.

use super::numbers::uint_at;
use super::simd::{Baseline, Blocks};
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
use super::simd::{avx512::Avx512, sse2::Sse2};

/// The fast path for number arrays as Chrome writes `samples` and `timeDeltas`: the array
/// at `b[r]` (`r` from its `[` to just past its `]`) holds only non-negative integers of
/// 1–8 digits separated by single commas, with no whitespace. Calls `f` with each value
/// in order and returns the count; returns `None` for any other array (after perhaps some
/// calls: the caller then starts over with `fold_numbers`).
///
/// Commas are found eight bytes at a time and each number is read from its own load, so
/// one number's parse does not wait for the previous one's length (the loop-carried
/// dependency that bounds `fold_numbers`). [`plain_uints_into`] is faster where the
/// values can go to a buffer.
#[inline(always)]
pub fn plain_uints(b: &[u8], r: &std::ops::Range<usize>, mut f: impl FnMut(u64)) -> Option<usize> {
    let content = array_content(b, r)?;
    if content.is_empty() {
        return Some(0);
    }
    let n = content.len();
    let mut count = 0;
    let mut start = 0; // where the current number begins
    let mut i = 0;
    let mut tail;
    while i < n {
        // 64 bytes per step, so the loop over commas exits (a mispredicted branch) once
        // per ~12 numbers rather than once per ~3.
        let block: &[u8] = match content.get(i..i + 64) {
            Some(s) => s,
            None => {
                // The tail, padded with commas (masked off below).
                tail = [b','; 64];
                tail[..n - i].copy_from_slice(&content[i..]);
                &tail
            }
        };
        let (mut commas, others) = Baseline::default().classify64(block);
        if others != 0 {
            return None;
        }
        if n - i < 64 {
            commas &= (1u64 << (n - i)) - 1;
        }
        while commas != 0 {
            let at = i + commas.trailing_zeros() as usize;
            f(uint_at(content, start, at)?);
            count += 1;
            start = at + 1;
            commas &= commas - 1;
        }
        i += 64;
    }
    f(uint_at(content, start, n)?);
    Some(count + 1)
}

/// The inside of the array at `b[r]` (`r` from its `[` to just past its `]`).
#[inline(always)]
pub(in crate::json) fn array_content<'a>(
    b: &'a [u8],
    r: &std::ops::Range<usize>,
) -> Option<&'a [u8]> {
    if r.end < r.start + 2 || b.get(r.start) != Some(&b'[') || b.get(r.end - 1) != Some(&b']') {
        return None;
    }
    Some(&b[r.start + 1..r.end - 1])
}

/// [`plain_uints`] into a buffer: the values of the array at `b[r]` go to `out` in order
/// and the count is returned; `None` for an array that `plain_uints` refuses and for one
/// with more than `out.len()` values (`out` is then partly written).
///
/// On CPUs with SSSE3 (every x86-64 of the last fifteen years), four numbers of 1–4
/// digits are converted at once, and sixteen where 64 bytes hold only three-digit ones
/// (`uints_ssse3`; with AVX-512BW, a copy of it whose 64-byte blocks are single vectors).
pub fn plain_uints_into(b: &[u8], r: &std::ops::Range<usize>, out: &mut [u32]) -> Option<usize> {
    let content = array_content(b, r)?;
    if content.is_empty() {
        return Some(0);
    }
    #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
    if let Some(cpu) = Avx512::detect() {
        // SAFETY: `cpu` proves AVX-512F/BW (they imply SSSE3).
        return unsafe { uints_avx512(content, out, cpu) };
    }
    #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
    if std::arch::is_x86_feature_detected!("ssse3") {
        // SAFETY: the CPU has SSSE3, checked just above.
        return unsafe { uints_ssse3(content, out) };
    }
    let mut k = 0;
    plain_uints(b, r, |v| {
        if let Some(slot) = out.get_mut(k) {
            *slot = v as u32; // at most 8 digits
        }
        k += 1;
    })
    .filter(|&n| n <= out.len())
}

/// Shuffles for [`uints_ssse3`]: four numbers of 1–4 digits, each followed by a comma,
/// from the first byte of a 16-byte block. Entry `(l1−1) | (l2−1)<<2 | (l3−1)<<4 |
/// (l4−1)<<6` (lj: the digits of number j) moves number j's digits to bytes 4j..4j+4,
/// right-aligned, and zeros (index 0x80) before them. Entries whose four numbers and
/// commas pass 16 bytes are never used.
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
static SHUFFLE4: [[u8; 16]; 256] = {
    let mut t = [[0x80u8; 16]; 256];
    let mut idx = 0;
    while idx < 256 {
        let (mut from, mut j) = (0, 0);
        while j < 4 {
            let len = ((idx >> (2 * j)) & 3) + 1;
            let mut d = 0;
            while d < len {
                t[idx][4 * j + 4 - len + d] = ((from + d) & 15) as u8;
                d += 1;
            }
            from += len + 1;
            j += 1;
        }
        idx += 1;
    }
    t
};

/// ⌈2¹⁶ / w⌉ for w in 1..=9 (index 0 unused): `(x * INVERSE_WIDTH[w]) >> 16` is `x / w`
/// for x in 0..=64, since the product errs by under 64 / 2¹⁶ < 1 / w.
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
const INVERSE_WIDTH: [usize; 10] = {
    let mut t = [0; 10];
    let mut w = 1;
    while w < 10 {
        t[w] = (1usize << 16).div_ceil(w);
        w += 1;
    }
    t
};

/// [`plain_uints_into`] for an array's non-empty content with SSSE3. The content is read
/// in windows of 64 bytes, each starting where a number starts: the window's commas are
/// found at once, and where the next four close four numbers of 1–4 digits (ids, and
/// sampling intervals in µs) within 16 bytes, one shuffle lines their digits up in four
/// 32-bit lanes and two multiply-adds convert them; other numbers (5–8 digits) are read
/// one at a time. A window of sixteen three-digit numbers is converted whole, with no
/// lengths to find. Numbers cut by the window's end are read from the next window. A window
/// that starts with a run of one value (most `samples` are the one before) takes the run
/// whole from one compare of the window with itself shifted by the first number's width.
///
/// # Safety
/// The CPU must have SSSE3.
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
#[target_feature(enable = "ssse3")]
pub(crate) unsafe fn uints_ssse3(content: &[u8], out: &mut [u32]) -> Option<usize> {
    // SAFETY: this function's own requirement.
    unsafe { uints_four(content, out, Sse2) }
}

/// [`uints_ssse3`] compiled for AVX-512BW, its blocks taken by [`Avx512`].
///
/// # Safety
/// None beyond `cpu` (a target-feature function is unsafe to call).
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
#[target_feature(enable = "ssse3,avx512f,avx512bw")]
pub(in crate::json) unsafe fn uints_avx512(
    content: &[u8],
    out: &mut [u32],
    cpu: Avx512,
) -> Option<usize> {
    // SAFETY: `cpu` proves AVX-512BW, which implies SSSE3.
    unsafe { uints_four(content, out, cpu) }
}

/// The comma mask of a 64-byte window of sixteen three-digit numbers: a comma at every
/// fourth byte.
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
const THREE_DIGIT_STRIDE: u64 = 0x8888_8888_8888_8888;

/// The body of [`uints_ssse3`], inlined into each instruction set's copy.
///
/// # Safety
/// The CPU must have SSSE3.
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
#[inline(always)]
unsafe fn uints_four(content: &[u8], out: &mut [u32], blocks: impl Blocks) -> Option<usize> {
    use std::arch::x86_64::*;
    let n = content.len();
    let (mut count, mut start) = (0usize, 0usize);
    let mut tail;
    loop {
        // 80 bytes: a group starting in the window's last bytes still has 16 to load.
        let rest = n - start;
        let (w, valid): (&[u8], usize) = match content.get(start..start + 80) {
            Some(s) => (s, 64),
            None => {
                tail = [b','; 80];
                tail[..rest].copy_from_slice(&content[start..]);
                (&tail, rest.min(64))
            }
        };
        let (mut commas, others) = blocks.classify64(w);
        let valid_mask = if valid == 64 { !0 } else { (1u64 << valid) - 1 };
        commas &= valid_mask;
        if others & valid_mask != 0 {
            return None;
        }
        // (A window cut by the array's end has no comma at its last byte: never this.)
        if commas == THREE_DIGIT_STRIDE {
            // Sixteen numbers of three digits each, a comma after each (`timeDeltas` of a
            // ~100–999 µs sampling interval): each 4-byte lane is [a, b, c, ','], read as
            // 100a + 10b + c by two multiply-adds, with no lengths to find.
            let slots = out.get_mut(count..count + 16)?;
            for (k, four) in slots.chunks_exact_mut(4).enumerate() {
                // SAFETY: unaligned loads of 16 bytes of `w` (which has 80) and a store of
                // 16 bytes into the four `four` slots; the CPU has SSSE3 (this function's
                // requirement).
                unsafe {
                    let v = _mm_loadu_si128(w[16 * k..16 * k + 16].as_ptr().cast());
                    let d = _mm_and_si128(v, _mm_set1_epi8(0x0F));
                    // Per lane [a, b, c, 0]: (100a + 10b, c), then their sum.
                    let pairs = _mm_maddubs_epi16(d, _mm_set1_epi32(0x0001_0A64));
                    let values = _mm_madd_epi16(pairs, _mm_set1_epi16(1));
                    _mm_storeu_si128(four.as_mut_ptr().cast(), values);
                }
            }
            count += 16;
            start += 64;
            continue;
        }
        let mut at = 0; // where the current number starts in `w`
        // A run of one value: most samples repeat the one before (a function stays on the
        // stack for many samples), and value j + 1 equals value j exactly when their bytes
        // (digits and comma) do, so one compare of the window with itself shifted by one
        // number's width gives the run's length.
        let width = commas.trailing_zeros() as usize + 1;
        if width <= 9 {
            // `w` has 80 bytes and `width` ≤ 9.
            let same = blocks.shifted_equal64(w, width) & (valid_mask >> width);
            // ones / width by a multiply (a divide was ~2% of a whole run).
            let repeats = (same.trailing_ones() as usize * INVERSE_WIDTH[width]) >> 16;
            if repeats > 0 {
                let v = uint_at(w, 0, width - 1)? as u32;
                out.get_mut(count..count + repeats + 1)?.fill(v);
                count += repeats + 1;
                at = (repeats + 1) * width; // ≤ 64: the run's last comma is a valid byte
                commas &= (!0u64).checked_shl(at as u32).unwrap_or(0);
            }
        }
        while commas != 0 {
            // The next four commas (64: none).
            let c1 = commas.trailing_zeros() as usize;
            let m = commas & (commas - 1);
            let c2 = m.trailing_zeros() as usize;
            let m = m & m.wrapping_sub(1);
            let c3 = m.trailing_zeros() as usize;
            let m = m & m.wrapping_sub(1);
            let c4 = m.trailing_zeros() as usize;
            // Wrapping: a missing comma (64) after another missing one gives a huge length.
            let lens = [
                c1 - at,
                c2.wrapping_sub(c1 + 1),
                c3.wrapping_sub(c2 + 1),
                c4.wrapping_sub(c3 + 1),
            ];
            // Four numbers of 1–4 digits whose fourth comma is in the 16 bytes from `at`.
            // Each length in 1–4: one compare of their OR, each less one (0 wraps).
            let over = lens.iter().fold(0, |acc, l| acc | l.wrapping_sub(1));
            if over < 4 && c4 < 64 && c4 < at + 16 {
                let idx =
                    (lens[0] - 1) | (lens[1] - 1) << 2 | (lens[2] - 1) << 4 | (lens[3] - 1) << 6;
                // SAFETY: unaligned loads of 16 bytes of `w` (`at` < 64, `w` has 80) and
                // of one table entry.
                let (v, s) = unsafe {
                    (
                        _mm_loadu_si128(w[at..at + 16].as_ptr().cast()),
                        _mm_loadu_si128(SHUFFLE4[idx].as_ptr().cast()),
                    )
                };
                // SAFETY: the CPU has SSSE3 (this function's requirement).
                let values = unsafe {
                    let d = _mm_and_si128(_mm_shuffle_epi8(v, s), _mm_set1_epi8(0x0F));
                    // Per lane [a, b, c, d]: (10a + b, 10c + d), then 100 (10a + b) + 10c + d.
                    let pairs = _mm_maddubs_epi16(d, _mm_set1_epi16(0x010A));
                    _mm_madd_epi16(pairs, _mm_set1_epi32(0x0001_0064))
                };
                let slots = out.get_mut(count..count + 4)?;
                // SAFETY: an unaligned store of 16 bytes into the four `slots`.
                unsafe { _mm_storeu_si128(slots.as_mut_ptr().cast(), values) };
                count += 4;
                at = c4 + 1;
                commas = m & m.wrapping_sub(1);
            } else if c2 < 64 || valid < 64 {
                // One number (the last of a window may be cut: left to the next).
                *out.get_mut(count)? = uint_at(w, at, c1)? as u32;
                count += 1;
                at = c1 + 1;
                commas &= commas - 1;
            } else {
                break;
            }
        }
        if valid < 64 {
            // The window held the rest of the array: the last number has no comma.
            *out.get_mut(count)? = uint_at(w, at, valid)? as u32;
            return Some(count + 1);
        }
        if at == 0 {
            return None; // no comma in 64 bytes: a number far past 8 digits
        }
        start += at;
    }
}

/// What [`plain_sum`] gives for an array of plain integers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlainSum {
    /// Number of elements.
    pub count: usize,
    /// The first element (0 for an empty array).
    pub first: u64,
    /// The sum of all elements.
    pub sum: u64,
}

/// The count, first element and sum of the array at `b[r]` when it is one that
/// [`plain_uints`] accepts (integers of 1–8 digits, single commas, nothing else); `None`
/// otherwise, exactly when `plain_uints` would refuse it.
///
/// The numbers are not converted one by one: a digit's weight is 10^k where k is the
/// number of digits after it in its number, so the sum is Σ_k 10^k × (the sum of the
/// digits with k digits after them). The digits of each k are found as bit masks, 64
/// bytes at a time from the array's end backwards (a number crossing into the next block
/// carries its k over), and summed with SIMD sums of absolute differences: 16 bytes at a
/// time (SSE2), or the whole block at once on CPUs with AVX-512BW.
pub fn plain_sum(b: &[u8], r: &std::ops::Range<usize>) -> Option<PlainSum> {
    let content = array_content(b, r)?;
    #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
    if let Some(cpu) = Avx512::detect() {
        // SAFETY: `cpu` proves AVX-512F/BW.
        return unsafe { plain_sum_avx512(content, cpu) };
    }
    plain_sum_of(content, Baseline::default(), DigitLevels::default())
}

/// [`plain_sum`] of an array's content with AVX-512BW: one compiled copy of
/// [`plain_sum_of`] in which the 64-byte blocks take 512-bit operations.
///
/// # Safety
/// None beyond `cpu` (a target-feature function is unsafe to call).
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
#[target_feature(enable = "avx512f,avx512bw")]
pub(in crate::json) unsafe fn plain_sum_avx512(content: &[u8], cpu: Avx512) -> Option<PlainSum> {
    plain_sum_of(content, cpu, DigitLevels512::new(cpu))
}

/// [`plain_sum`] of an array's content (between its brackets), its 64-byte blocks
/// classified by `blocks` and their digits summed by `levels`.
#[inline(always)]
pub(in crate::json) fn plain_sum_of(
    content: &[u8],
    blocks: impl Blocks,
    mut levels: impl DigitSums,
) -> Option<PlainSum> {
    let n = content.len();
    if n == 0 {
        return Some(PlainSum::default());
    }
    if content[0] == b',' || content[n - 1] == b',' {
        return None;
    }
    // `carry` bit k: the next block's first byte is a digit with k digits after it;
    // `next_c0`: it is a comma.
    let (mut carry, mut next_c0, mut commas) = (0u32, false, 0usize);
    let mut first_comma = n;
    for start in (0..n).step_by(64).rev() {
        let mut tail = [b','; 64];
        let block: &[u8; 64] = match content.get(start..start + 64) {
            Some(s) => s.try_into().expect("64 bytes"),
            None => {
                tail[..n - start].copy_from_slice(&content[start..]);
                &tail
            }
        };
        let valid = if n - start >= 64 {
            !0u64
        } else {
            (1u64 << (n - start)) - 1
        };
        let (mut c, others) = blocks.classify64(block);
        c &= valid;
        if others & valid != 0 {
            return None;
        }
        // A comma right after a comma is an empty element (a comma first or last in the
        // array was refused above).
        if c & ((c >> 1) | ((next_c0 as u64) << 63)) != 0 {
            return None;
        }
        let digits = !c & valid;
        commas += c.count_ones() as usize;
        if c != 0 {
            first_comma = start + c.trailing_zeros() as usize;
        }
        // Digits with no digit after them: before a comma, or last in the array.
        let sep_next = next_c0 || start + 64 >= n;
        let ends = ((c | !valid) >> 1) | ((sep_next as u64) << 63);
        let mut at = digits & ends;
        let mut out = 0u32;
        let mut k = 0;
        loop {
            levels.add(k, block, at);
            out |= ((at & 1) as u32) << k;
            let next = digits & ((at >> 1) | (((carry >> k) & 1) as u64) << 63);
            if k == 7 {
                if next != 0 {
                    return None; // a ninth digit
                }
                break;
            }
            k += 1;
            if next == 0 && carry >> k == 0 {
                break;
            }
            at = next;
        }
        carry = out;
        next_c0 = c & 1 == 1;
    }
    let first = uint_at(content, 0, first_comma)?;
    Some(PlainSum {
        count: commas + 1,
        first,
        sum: levels.total(),
    })
}

/// The block operations of [`plain_sum_of`]: digit sums by level (see [`plain_sum`]).
pub(in crate::json) trait DigitSums {
    /// Adds the digits of the bytes of `block` selected by `mask` to level k (0–7).
    fn add(&mut self, k: usize, block: &[u8; 64], mask: u64);
    /// Σ_k 10^k × the digit sum of level k.
    fn total(&self) -> u64;
}

/// [`DigitSums`] with SSE2, 16 bytes at a time (scalar off x86-64).
#[derive(Default)]
pub(in crate::json) struct DigitLevels {
    #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
    sums: [[u64; 2]; 8],
    #[cfg(not(all(target_arch = "x86_64", not(feature = "no-simd"))))]
    sums: [u64; 8],
}

impl DigitSums for DigitLevels {
    #[inline(always)]
    fn add(&mut self, k: usize, block: &[u8; 64], mask: u64) {
        #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
        {
            use std::arch::x86_64::*;
            // SAFETY: SSE2 is part of the x86_64 baseline; the loads read the 64 bytes of
            // `block` and the 16 of `self.sums[k]`, unaligned.
            unsafe {
                // Each mask byte repeated eight times, two mask bytes per 16-byte quarter.
                let m = _mm_cvtsi64_si128(mask as i64);
                let m = _mm_unpacklo_epi8(m, m);
                let (lo, hi) = (_mm_unpacklo_epi16(m, m), _mm_unpackhi_epi16(m, m));
                let quarters = [
                    _mm_unpacklo_epi32(lo, lo),
                    _mm_unpackhi_epi32(lo, lo),
                    _mm_unpacklo_epi32(hi, hi),
                    _mm_unpackhi_epi32(hi, hi),
                ];
                let bit = _mm_set1_epi64x(0x8040_2010_0804_0201u64 as i64);
                let zero = _mm_set1_epi8(b'0' as i8);
                let mut acc = _mm_loadu_si128(self.sums[k].as_ptr().cast());
                for (q, spread) in quarters.into_iter().enumerate() {
                    let selected = _mm_cmpeq_epi8(_mm_and_si128(spread, bit), bit);
                    let v = _mm_loadu_si128(block[16 * q..].as_ptr().cast());
                    // |byte - '0'| summed over the selected bytes (others give 0 - 0).
                    let sad =
                        _mm_sad_epu8(_mm_and_si128(v, selected), _mm_and_si128(zero, selected));
                    acc = _mm_add_epi64(acc, sad);
                }
                _mm_storeu_si128(self.sums[k].as_mut_ptr().cast(), acc);
            }
        }
        #[cfg(not(all(target_arch = "x86_64", not(feature = "no-simd"))))]
        {
            let mut m = mask;
            while m != 0 {
                self.sums[k] += (block[m.trailing_zeros() as usize] - b'0') as u64;
                m &= m - 1;
            }
        }
    }

    fn total(&self) -> u64 {
        #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
        return place_values(self.sums.map(|s| s.iter().sum()));
        #[cfg(not(all(target_arch = "x86_64", not(feature = "no-simd"))))]
        place_values(self.sums)
    }
}

/// Σ_k 10^k × `sums[k]`.
fn place_values(sums: [u64; 8]) -> u64 {
    sums.iter().rev().fold(0, |t, &s| t * 10 + s)
}

/// [`DigitSums`] with AVX-512BW: a block is one 512-bit vector, a level's digits one
/// masked move and one sum of absolute differences.
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
struct DigitLevels512 {
    /// Per level, the eight 64-bit lanes of its running sums.
    sums: [[u64; 8]; 8],
    /// The proof that the CPU has AVX-512BW.
    _cpu: Avx512,
}

#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
impl DigitLevels512 {
    fn new(cpu: Avx512) -> Self {
        DigitLevels512 {
            sums: [[0; 8]; 8],
            _cpu: cpu,
        }
    }
}

#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
impl DigitSums for DigitLevels512 {
    #[inline(always)]
    fn add(&mut self, k: usize, block: &[u8; 64], mask: u64) {
        use std::arch::x86_64::*;
        // SAFETY: the CPU has AVX-512F/BW (`self._cpu`); unaligned loads of the 64 bytes
        // of `block` and of `self.sums[k]`, and a store to the latter.
        unsafe {
            let digits = _mm512_sub_epi8(
                _mm512_loadu_si512(block.as_ptr().cast()),
                _mm512_set1_epi8(b'0' as i8),
            );
            let sad = _mm512_sad_epu8(_mm512_maskz_mov_epi8(mask, digits), _mm512_setzero_si512());
            let acc = _mm512_loadu_si512(self.sums[k].as_ptr().cast());
            _mm512_storeu_si512(self.sums[k].as_mut_ptr().cast(), _mm512_add_epi64(acc, sad));
        }
    }

    fn total(&self) -> u64 {
        place_values(self.sums.map(|s| s.iter().sum()))
    }
}

/// The end of the number array at `b[v]` when it holds only ASCII digits and commas, as
/// Chrome writes `samples`, found in the same pass that counts its elements:
/// `Some((offset just past its `]`, number of elements))` (`[]` has none). `None` at the
/// first other byte, or when `b` ends first: the caller then skips the value the general
/// way, which also reports the errors.
pub fn digit_array_end(b: &[u8], v: usize) -> Option<(usize, usize)> {
    #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
    if let Some(cpu) = Avx512::detect() {
        // SAFETY: `cpu` proves AVX-512F/BW.
        return unsafe { digit_array_end_avx512(b, v, cpu) };
    }
    digit_array_end_of(b, v, Baseline::default())
}

/// [`digit_array_end`] compiled for AVX-512BW.
///
/// # Safety
/// None beyond `cpu` (a target-feature function is unsafe to call).
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
#[target_feature(enable = "avx512f,avx512bw")]
pub(in crate::json) unsafe fn digit_array_end_avx512(
    b: &[u8],
    v: usize,
    cpu: Avx512,
) -> Option<(usize, usize)> {
    digit_array_end_of(b, v, cpu)
}

/// [`digit_array_end`] with `blocks` for its 64-byte steps.
#[inline(always)]
pub(in crate::json) fn digit_array_end_of(
    b: &[u8],
    v: usize,
    blocks: impl Blocks,
) -> Option<(usize, usize)> {
    if b.get(v) != Some(&b'[') {
        return None;
    }
    let (mut i, mut commas) = (v + 1, 0usize);
    // 64 bytes at a time while no other byte is met, then 16 at a time to find it.
    while let Some(block) = b.get(i..i + 64) {
        let (c, others) = blocks.classify64(block);
        if others != 0 {
            break;
        }
        commas += c.count_ones() as usize;
        i += 64;
    }
    let end = loop {
        let Some(block) = b.get(i..i + 16) else {
            let k = b[i..]
                .iter()
                .position(|c| !c.is_ascii_digit() && *c != b',')?;
            commas += memchr::memchr_iter(b',', &b[i..i + k]).count();
            break i + k;
        };
        let (c, others) = blocks.classify16(block.try_into().expect("16 bytes"));
        if others != 0 {
            let k = others.trailing_zeros();
            commas += (c & ((1u32 << k) - 1)).count_ones() as usize;
            break i + k as usize;
        }
        commas += c.count_ones() as usize;
        i += 16;
    };
    let elements = if end == v + 1 { 0 } else { commas + 1 };
    (b[end] == b']').then_some((end + 1, elements))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::numbers::{Token, int_array};
    use crate::json::simd::scalar::Scalar;

    /// The elements of a number array through the general path (`None` for an error).
    fn general(b: &[u8]) -> Option<Vec<i64>> {
        let mut v = vec![];
        int_array(b, 0, |t| {
            v.push(match t {
                Token::Int(x) => x,
                Token::Other(_) => i64::MIN,
            })
        })
        .ok()?;
        Some(v)
    }

    /// [`plain_sum`] of the array `b`, checked to be what the scalar reference gives (the
    /// CPU's own copy may be SSE2 or AVX-512; `json::simd`'s tests check each one).
    fn sum_all_paths(b: &[u8]) -> Option<PlainSum> {
        let scalar = array_content(b, &(0..b.len()))
            .and_then(|c| plain_sum_of(c, Scalar, DigitLevels::default()));
        assert_eq!(
            plain_sum(b, &(0..b.len())),
            scalar,
            "{}",
            String::from_utf8_lossy(b)
        );
        scalar
    }

    #[test]
    fn plain_uints_reads_chrome_arrays_and_refuses_the_rest() {
        let read = |b: &[u8]| {
            let mut v = vec![];
            plain_uints(b, &(0..b.len()), |x| v.push(x as i64)).map(|n| (n, v))
        };
        assert_eq!(read(b"[]"), Some((0, vec![])));
        assert_eq!(read(b"[7]"), Some((1, vec![7])));
        assert_eq!(read(b"[12345678,0,99]"), Some((3, vec![12_345_678, 0, 99])));
        // One to four digits (read as one 32-bit word), longer ones, leading zeros, and
        // short numbers in the last bytes of the array (no four bytes after them).
        assert_eq!(
            read(b"[1,22,333,4444,55555,0007,9]"),
            Some((7, vec![1, 22, 333, 4444, 55555, 7, 9]))
        );
        assert_eq!(read(b"[4321]"), Some((1, vec![4321])));
        assert_eq!(read(b"[5,,6]"), None);
        let sum = |b: &[u8]| sum_all_paths(b).map(|s| (s.count, s.first, s.sum));
        assert_eq!(sum(b"[]"), Some((0, 0, 0)));
        assert_eq!(sum(b"[12345678,0,99]"), Some((3, 12_345_678, 12_345_777)));
        // 64-byte blocks: a number across the boundary, a comma on each side of one.
        let cross = format!("[{}12345678,9]", "1,".repeat(30));
        assert_eq!(sum(cross.as_bytes()), Some((32, 1, 30 + 12_345_687)));
        for k in 28..34 {
            // `,,` at content offsets 57–67, and a nine-digit number across offset 64.
            let empty = format!("[{}1,,2]", "1,".repeat(k));
            let long = format!("[{}123456789]", "1,".repeat(k));
            assert_eq!((sum(empty.as_bytes()), sum(long.as_bytes())), (None, None));
        }
        // A stray byte at every offset of an array of three 64-byte blocks.
        for k in 1..150 {
            for stray in [b'x', b' ', b'-', b'.', 0xff, b'/', b':'] {
                let mut b = format!("[{}1]", "1,".repeat(75)).into_bytes();
                b[k] = stray;
                assert_eq!((read(&b), sum_all_paths(&b)), (None, None), "{k} {stray}");
            }
        }
        // Left to the general path: 9+ digits, signs, decimals, spaces, empty elements.
        for odd in [
            &b"[123456789]"[..],
            b"[1,-2]",
            b"[1.5]",
            b"[1, 2]",
            b"[ 1]",
            b"[1,]",
            b"[,1]",
            b"[1,,2]",
            b"[null]",
            b"[1\xff]",
            b"[1",
        ] {
            assert_eq!(read(odd), None, "{}", String::from_utf8_lossy(odd));
            assert_eq!(sum_all_paths(odd), None);
        }
    }

    #[test]
    fn plain_uints_agrees_with_the_general_path_at_every_length() {
        // Arrays crossing the 16- and 64-byte blocks at every offset, numbers of 1–9 digits.
        let mut x: u64 = 7;
        for len in 0..150 {
            let mut b = String::from("[");
            for k in 0..len {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let digits = 1 + (x >> 60) as u32 % 8 + (x >> 40 & 63 == 0) as u32;
                if k > 0 {
                    b.push(',');
                }
                b.push_str(&((x >> 8) % 10u64.pow(digits)).to_string());
            }
            b.push(']');
            let b = b.as_bytes();
            let mut fast = vec![];
            let sum = sum_all_paths(b);
            match plain_uints(b, &(0..b.len()), |v| fast.push(v as i64)) {
                Some(n) => {
                    let expected = PlainSum {
                        count: n,
                        first: fast.first().map_or(0, |&v| v as u64),
                        sum: fast.iter().sum::<i64>() as u64,
                    };
                    assert_eq!(sum, Some(expected), "{}", String::from_utf8_lossy(b));
                    assert_eq!(n, fast.len());
                    assert_eq!(Some(fast), general(b), "{}", String::from_utf8_lossy(b));
                }
                // Only a number past 8 digits sends a well-formed array elsewhere.
                None => {
                    assert!(general(b).unwrap().iter().any(|&v| v >= 100_000_000));
                    assert_eq!(sum, None);
                }
            }
        }
    }

    #[test]
    fn three_digit_windows_read_like_any_other_numbers() {
        // Arrays of mostly three-digit numbers (so that whole 64-byte windows hold sixteen
        // of them), at every length to 120, with a number of another width now and then,
        // read by every x86 path and checked against Rust's own parse.
        let mut x: u64 = 11;
        for len in 0..120usize {
            for other_every in [0usize, 7, 23] {
                let values: Vec<u32> = (0..len)
                    .map(|k| {
                        x = x
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let v = (x >> 20) as u32;
                        if other_every > 0 && k % other_every == other_every - 1 {
                            v % 10_000 // 1-4 digits
                        } else {
                            100 + v % 900
                        }
                    })
                    .collect();
                let text: Vec<String> = values.iter().map(u32::to_string).collect();
                let b = format!("[{}]", text.join(","));
                let b = b.as_bytes();
                let r = 0..b.len();
                let want: Vec<u32> = text.iter().map(|t| t.parse().unwrap()).collect();
                let mut out = vec![0u32; len + 4];
                assert_eq!(plain_uints_into(b, &r, &mut out), Some(len), "{len}");
                assert_eq!(out[..len], want[..], "{}", String::from_utf8_lossy(b));
                #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
                if len > 0 && std::arch::is_x86_feature_detected!("ssse3") {
                    let mut out = vec![0u32; len + 4];
                    let content = &b[1..b.len() - 1];
                    // SAFETY: the CPU has SSSE3, checked just above.
                    assert_eq!(unsafe { uints_ssse3(content, &mut out) }, Some(len));
                    assert_eq!(out[..len], want[..]);
                }
                // Room for fewer values than the array holds: refused.
                if len > 0 {
                    let mut short = vec![0u32; len - 1];
                    assert_eq!(plain_uints_into(b, &r, &mut short), None, "{len}");
                }
            }
        }
    }

    #[test]
    fn digit_array_end_finds_the_end_on_every_path() {
        // Arrays of digits and commas of every length to 200 bytes (three 64-byte blocks
        // and a tail), closed, or cut by another byte at a random offset, or not closed.
        let mut x: u64 = 3;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as usize
        };
        let (mut found, mut refused) = (0, 0);
        for len in 0..200 {
            for variant in 0..4 {
                let mut b = vec![b'['];
                b.extend((0..len).map(|_| if next() % 3 == 0 { b',' } else { b'7' }));
                match variant {
                    0 => b.push(b']'),
                    1 if len > 0 => b[1 + next() % len] = b"]x \"-"[next() % 5],
                    2 => {}
                    _ => b.extend(b"]]"),
                }
                // By definition: the first byte other than a digit or comma, if a `]`.
                let expected = b[1..]
                    .iter()
                    .position(|c| !c.is_ascii_digit() && *c != b',')
                    .filter(|&k| b[1 + k] == b']')
                    .map(|k| {
                        let commas = b[1..1 + k].iter().filter(|&&c| c == b',').count();
                        (k + 2, if k == 0 { 0 } else { commas + 1 })
                    });
                assert_eq!(
                    digit_array_end(&b, 0),
                    expected,
                    "{}",
                    String::from_utf8_lossy(&b)
                );
                assert_eq!(digit_array_end_of(&b, 0, Scalar), expected);
                found += expected.is_some() as usize;
                refused += expected.is_none() as usize;
            }
        }
        assert!(found > 300 && refused > 300, "{found} {refused}");
    }

    #[test]
    #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
    fn inverse_widths_divide_exactly() {
        for (w, inverse) in INVERSE_WIDTH.iter().enumerate().skip(1) {
            for x in 0..=64 {
                assert_eq!((x * inverse) >> 16, x / w, "{x} / {w}");
            }
        }
    }

    #[test]
    #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
    fn four_at_a_time_and_one_at_a_time_agree() {
        if !std::arch::is_x86_feature_detected!("ssse3") {
            return;
        }
        // Random arrays of numbers of 0–9 digits (0: an empty element), some with a
        // stray byte, at every length up to 90 bytes: the same values and the same verdict.
        let mut x: u64 = 11;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 16
        };
        let (mut accepted, mut fast_steps, mut with_runs) = (0, 0, 0);
        for _ in 0..20_000 {
            let mut c = Vec::new();
            // A third of the arrays repeat the number before most of the time (runs, as
            // in `samples`), long enough to span windows.
            let runs = next() % 3 == 0;
            let numbers = next() % if runs { 70 } else { 24 };
            let long = next() % 4 == 0;
            let mut last = 0..0;
            for k in 0..numbers {
                if k > 0 {
                    c.push(b',');
                }
                if runs && k > 0 && next() % 6 != 0 {
                    let again = c[last.clone()].to_vec();
                    last = c.len()..c.len() + again.len();
                    c.extend(again);
                    continue;
                }
                let from = c.len();
                let digits = if long { next() % 10 } else { 1 + next() % 4 };
                let digits = if next() % 200 == 0 { 0 } else { digits };
                for _ in 0..digits {
                    c.push(b'0' + (next() % 10) as u8);
                }
                last = from..c.len();
            }
            if !c.is_empty() && next() % 8 == 0 {
                let at = (next() as usize) % c.len();
                c[at] = b" -.]x\xff"[(next() % 6) as usize];
            }
            if c.is_empty() {
                continue;
            }
            let c = [b"[", &c[..], b"]"].concat();
            let r = 0..c.len();
            let mut slow = Vec::new();
            let n = plain_uints(&c, &r, |v| slow.push(v as u32));
            let mut fast = vec![0; slow.len() + 3];
            // SAFETY: SSSE3 checked above.
            let got = unsafe { uints_ssse3(&c[1..c.len() - 1], &mut fast) };
            let text = String::from_utf8_lossy(&c);
            assert_eq!(got, n, "{text}");
            if let Some(cpu) = Avx512::detect() {
                let mut wide = vec![0; fast.len()];
                // SAFETY: `cpu` proves AVX-512F/BW.
                let got = unsafe { uints_avx512(&c[1..c.len() - 1], &mut wide, cpu) };
                assert_eq!((got, &wide[..n.unwrap_or(0)]), (n, &fast[..n.unwrap_or(0)]));
            }
            if let Some(n) = n {
                assert_eq!(fast[..n], slow[..], "{text}");
                // Room for one value fewer: refused, whichever path reads it.
                if n > 0 {
                    let short = &mut fast[..n - 1];
                    // SAFETY: SSSE3 checked above.
                    assert_eq!(unsafe { uints_ssse3(&c[1..c.len() - 1], short) }, None);
                }
                accepted += 1;
                fast_steps += (c.len() >= 16 && !long) as usize;
                with_runs += (runs && n > 20) as usize;
            }
        }
        assert!(
            accepted > 10_000 && fast_steps > 3_000 && with_runs > 2_000,
            "{accepted} {fast_steps} {with_runs}"
        );
        // Commas and nothing else, a comma last: refused.
        for odd in [&b"[,]"[..], b"[,,]", b"[1,]", b"[1,2,3,4,]", b"[1,2,3,4,,]"] {
            assert_eq!(plain_uints_into(odd, &(0..odd.len()), &mut [0; 8]), None);
        }
        // Runs: one value repeated, then another that starts alike, then the first again.
        let mut v = [0; 5];
        let b = b"[26,26,26,27,26]";
        assert_eq!(plain_uints_into(b, &(0..b.len()), &mut v), Some(5));
        assert_eq!(v, [26, 26, 26, 27, 26]);
        let b = b"[2,2,22,2]";
        assert_eq!(plain_uints_into(b, &(0..b.len()), &mut v), Some(4));
        assert_eq!(v[..4], [2, 2, 22, 2]);
        // A run of 40 over a window's end: 40 values; with a comma last, or with room for
        // 39 values: refused.
        let b = [&b"["[..], &b"7,".repeat(39), b"7]"].concat();
        let mut v = [0; 40];
        assert_eq!(plain_uints_into(&b, &(0..b.len()), &mut v), Some(40));
        assert_eq!(v, [7; 40]);
        assert_eq!(plain_uints_into(&b, &(0..b.len()), &mut v[..39]), None);
        let b = [&b"["[..], &b"7,".repeat(40), b"]"].concat();
        assert_eq!(plain_uints_into(&b, &(0..b.len()), &mut v), None);
        // A hand-checked case: four short numbers in one block, then the rest one by one.
        let mut v = [0; 7];
        let b = b"[7,4321,05,987,123456,1,22]";
        assert_eq!(plain_uints_into(b, &(0..b.len()), &mut v), Some(7));
        assert_eq!(v, [7, 4321, 5, 987, 123_456, 1, 22]);
    }
}

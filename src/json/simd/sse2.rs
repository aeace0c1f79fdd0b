//! [`Blocks`] with SSE2, the x86-64 baseline: sixteen bytes at a time.

use super::Blocks;

/// [`Blocks`] sixteen bytes at a time with SSE2 (every x86-64 CPU has it).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sse2;

impl Blocks for Sse2 {
    #[inline(always)]
    fn classify64(self, block: &[u8]) -> (u64, u64) {
        let (mut commas, mut others) = (0u64, 0u64);
        for k in 0..4 {
            let (c, o) = classify16(block[16 * k..16 * k + 16].try_into().expect("16 bytes"));
            commas |= (c as u64) << (16 * k);
            others |= (o as u64) << (16 * k);
        }
        (commas, others)
    }

    #[inline(always)]
    fn classify16(self, block: &[u8; 16]) -> (u32, u32) {
        classify16(block)
    }

    #[inline(always)]
    fn shifted_equal64(self, w: &[u8], shift: usize) -> u64 {
        use std::arch::x86_64::*;
        let (a, b) = (&w[..64], &w[shift..shift + 64]);
        let mut eq = 0u64;
        for k in 0..4 {
            // SAFETY: SSE2 is part of the x86_64 baseline; unaligned loads of 16 bytes
            // inside `a` and `b`.
            let m = unsafe {
                _mm_movemask_epi8(_mm_cmpeq_epi8(
                    _mm_loadu_si128(a[16 * k..].as_ptr().cast()),
                    _mm_loadu_si128(b[16 * k..].as_ptr().cast()),
                ))
            };
            eq |= (m as u32 as u64) << (16 * k);
        }
        eq
    }
}

/// Bit masks of the commas and of the bytes that are neither commas nor ASCII digits in a
/// 16-byte block (bit k for byte k).
#[inline(always)]
pub(crate) fn classify16(block: &[u8; 16]) -> (u32, u32) {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; the load is unaligned and reads
    // exactly the 16 bytes of `block`.
    unsafe {
        let v = _mm_loadu_si128(block.as_ptr().cast());
        let comma = _mm_cmpeq_epi8(v, _mm_set1_epi8(b',' as i8));
        // Signed compares: bytes of 0x80 and above are negative, so below '0'.
        let not_digit = _mm_or_si128(
            _mm_cmplt_epi8(v, _mm_set1_epi8(b'0' as i8)),
            _mm_cmpgt_epi8(v, _mm_set1_epi8(b'9' as i8)),
        );
        let commas = _mm_movemask_epi8(comma) as u32;
        (commas, _mm_movemask_epi8(not_digit) as u32 & !commas)
    }
}

//! [`Blocks`] with AVX-512BW: a 64-byte block is one vector.

use super::Blocks;

/// [`Blocks`] with AVX-512BW: a block is one 512-bit load and each mask one compare.
/// Only made by [`Avx512::detect`]: a value is the proof that the CPU has AVX-512F/BW.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx512(());

impl Avx512 {
    /// `Some` when the CPU (and the OS) support AVX-512F and AVX-512BW (BW implies F); the
    /// check is cached by the standard library, one load after the first call.
    #[inline(always)]
    pub(crate) fn detect() -> Option<Self> {
        std::arch::is_x86_feature_detected!("avx512bw").then_some(Avx512(()))
    }
}

impl Blocks for Avx512 {
    #[inline(always)]
    fn classify64(self, block: &[u8]) -> (u64, u64) {
        use std::arch::x86_64::*;
        let block = &block[..64];
        // SAFETY: the CPU has AVX-512F/BW (`detect` made `self`); an unaligned load of the
        // 64 bytes of `block`.
        unsafe {
            let v = _mm512_loadu_si512(block.as_ptr().cast());
            let commas = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b',' as i8));
            // Digits are the bytes whose distance above '0' is below 10 (unsigned).
            let digits = _mm512_cmplt_epu8_mask(
                _mm512_sub_epi8(v, _mm512_set1_epi8(b'0' as i8)),
                _mm512_set1_epi8(10),
            );
            (commas, !(commas | digits))
        }
    }

    /// Sixteen bytes (an array's tail) take the SSE2 compares.
    #[inline(always)]
    fn classify16(self, block: &[u8; 16]) -> (u32, u32) {
        super::sse2::classify16(block)
    }

    #[inline(always)]
    fn shifted_equal64(self, w: &[u8], shift: usize) -> u64 {
        use std::arch::x86_64::*;
        let (a, b) = (&w[..64], &w[shift..shift + 64]);
        // SAFETY: the CPU has AVX-512F/BW (`detect` made `self`); unaligned loads of the
        // 64 bytes of `a` and of `b`.
        unsafe {
            _mm512_cmpeq_epi8_mask(
                _mm512_loadu_si512(a.as_ptr().cast()),
                _mm512_loadu_si512(b.as_ptr().cast()),
            )
        }
    }
}

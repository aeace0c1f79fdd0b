//! Operations on 64-byte blocks, one trait ([`Blocks`]) with one implementation per
//! instruction set: [`scalar`] (byte by byte: the reference, and what CPUs other than
//! x86-64 run), [`sse2`] (the x86-64 baseline, sixteen bytes at a time) and [`avx512`]
//! (AVX-512BW: a block is one vector). The hot loops of [`super::chrome`] are written once
//! over the trait and compiled once per instruction set, the copy chosen at run time.
//! [`Baseline`] is the copy every CPU of the target can run. The `tests` module checks
//! every instruction set against the scalar reference.

#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
pub(crate) mod avx512;
pub(crate) mod scalar;
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
pub(crate) mod sse2;
#[cfg(test)]
mod tests;

/// The block operations every CPU of the target runs: SSE2 on x86-64, scalar elsewhere
/// (and on x86-64 with the `no-simd` feature).
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
pub(crate) type Baseline = sse2::Sse2;
/// The block operations every CPU of the target runs: SSE2 on x86-64, scalar elsewhere
/// (and on x86-64 with the `no-simd` feature).
#[cfg(not(all(target_arch = "x86_64", not(feature = "no-simd"))))]
pub(crate) type Baseline = scalar::Scalar;

/// Operations on 64-byte blocks. Each implementation gives the same bits as
/// [`scalar::Scalar`] (checked by the tests).
pub(crate) trait Blocks: Copy {
    /// Bit masks of the commas and of the bytes that are neither commas nor ASCII digits
    /// in the first 64 bytes of `block` (at least 64 long; panics otherwise): bit k for
    /// byte k.
    fn classify64(self, block: &[u8]) -> (u64, u64);
    /// [`Blocks::classify64`] of a 16-byte block (bit k for byte k).
    fn classify16(self, block: &[u8; 16]) -> (u32, u32);
    /// Bit i set where `w[i] == w[i + shift]`, for i in 0..64 (`w` has at least
    /// 64 + `shift` bytes; panics otherwise).
    #[cfg_attr(
        not(all(target_arch = "x86_64", not(feature = "no-simd"))),
        allow(
            dead_code,
            reason = "only the x86-64 kernels (and the tests) compare shifted blocks"
        )
    )]
    fn shifted_equal64(self, w: &[u8], shift: usize) -> u64;
}

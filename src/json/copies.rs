//! Every instruction set's copy of the array kernels of [`super::chrome`] and of the
//! container skip of [`super::skip`] run on the same bytes, for the `kernels` fuzz target
//! (`fuzz/fuzz_targets/kernels.rs`), which checks that each copy gives what the scalar
//! reference gives. The unit tests of [`super::simd`]
//! check the same on generated arrays.

use super::chrome::{
    DigitLevels, PlainSum, array_content, digit_array_end_of, plain_sum_of, plain_uints,
};
use super::simd::Baseline;
use super::simd::scalar::Scalar;

/// What each copy of a kernel gives for the array at the start of some bytes, by copy
/// name (`"scalar"`, `"baseline"`: SSE2 on x86-64, `"ssse3"`, `"avx512"` on CPUs that have
/// them), the reference first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Copies {
    /// [`super::plain_sum`] of the whole bytes; the reference is the scalar copy.
    pub sums: Vec<(&'static str, Option<PlainSum>)>,
    /// [`super::digit_array_end`] at byte 0 (the offset past the `]`, the count); the
    /// reference is the scalar copy.
    pub ends: Vec<(&'static str, Option<(usize, usize)>)>,
    /// The values [`super::plain_uints_into`] writes for the whole bytes, with room for
    /// every value they could hold; the reference is [`super::plain_uints`] (one number at
    /// a time).
    pub uints: Vec<(&'static str, Option<Vec<u32>>)>,
}

/// Each copy's results for the array at `b[0]` (see [`Copies`]).
pub fn every_copy(b: &[u8]) -> Copies {
    let all = 0..b.len();
    let content = array_content(b, &all);
    let mut values = Vec::new();
    let count = plain_uints(b, &all, |v| values.push(v as u32));
    // Added to on x86-64 only.
    #[allow(unused_mut)]
    let mut c = Copies {
        sums: vec![
            (
                "scalar",
                content.and_then(|c| plain_sum_of(c, Scalar, DigitLevels::default())),
            ),
            (
                "baseline",
                content.and_then(|c| plain_sum_of(c, Baseline::default(), DigitLevels::default())),
            ),
        ],
        ends: vec![
            ("scalar", digit_array_end_of(b, 0, Scalar)),
            ("baseline", digit_array_end_of(b, 0, Baseline::default())),
        ],
        uints: vec![("one at a time", count.map(|_| values))],
    };
    #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
    {
        use super::chrome::{digit_array_end_avx512, plain_sum_avx512, uints_avx512, uints_ssse3};
        // Room for every value: each takes at least one byte and a comma.
        let room = b.len() / 2 + 1;
        let four = |f: fn(&[u8], &mut [u32]) -> Option<usize>| {
            let content = content?;
            if content.is_empty() {
                return Some(Vec::new());
            }
            let mut v = vec![0u32; room];
            f(content, &mut v).map(|n| v[..n].to_vec())
        };
        if std::arch::is_x86_feature_detected!("ssse3") {
            // SAFETY: the CPU has SSSE3, checked just above.
            let got = four(|c, v| unsafe { uints_ssse3(c, v) });
            c.uints.push(("ssse3", got));
        }
        if let Some(cpu) = super::simd::avx512::Avx512::detect() {
            // SAFETY (the three calls): `cpu` proves AVX-512F/BW (they imply SSSE3).
            let sum = content.and_then(|c| unsafe { plain_sum_avx512(c, cpu) });
            c.sums.push(("avx512", sum));
            c.ends
                .push(("avx512", unsafe { digit_array_end_avx512(b, 0, cpu) }));
            let uints = four(|c, v| {
                let cpu = super::simd::avx512::Avx512::detect().expect("detected above");
                // SAFETY: as above.
                unsafe { uints_avx512(c, v, cpu) }
            });
            c.uints.push(("avx512", uints));
        }
    }
    c
}

/// What one copy of the block operations (`simd::Blocks`) gives for a window:
/// `classify64`, `classify16` of its first 16 bytes, and `shifted_equal64` by 1 to 16.
pub type BlockResults = ((u64, u64), (u32, u32), [u64; 16]);

/// Each copy's [`BlockResults`] for the 80-byte window `w`, by copy name, the scalar
/// reference first.
pub fn blocks_on_every_copy(w: &[u8; 80]) -> Vec<(&'static str, BlockResults)> {
    use super::simd::Blocks;
    fn run(isa: impl Blocks, w: &[u8; 80]) -> BlockResults {
        let b16: &[u8; 16] = w[..16].try_into().expect("80 bytes");
        let shifted = std::array::from_fn(|k| isa.shifted_equal64(w, k + 1));
        (isa.classify64(w), isa.classify16(b16), shifted)
    }
    // Added to on x86-64 only.
    #[allow(unused_mut)]
    let mut out = vec![
        ("scalar", run(Scalar, w)),
        ("baseline", run(Baseline::default(), w)),
    ];
    #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
    if let Some(cpu) = super::simd::avx512::Avx512::detect() {
        out.push(("avx512", run(cpu, w)));
    }
    out
}

/// Each copy of the container skip on the object or array at `b[0]` (the offset past its
/// close, or the error), by copy name, the byte-by-byte reference first; empty when `b`
/// does not start with `{` or `[`.
pub fn skips_on_every_copy(b: &[u8]) -> Vec<(&'static str, super::Lexed<usize>)> {
    super::skip::every_skip(b)
}

//! [`Blocks`] byte by byte: the reference the other instruction sets are tested against,
//! and the copy CPUs other than x86-64 run.

use super::Blocks;

/// [`Blocks`] without vector instructions.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Scalar;

impl Blocks for Scalar {
    #[inline(always)]
    fn classify64(self, block: &[u8]) -> (u64, u64) {
        let (mut commas, mut others) = (0u64, 0u64);
        for (k, &c) in block[..64].iter().enumerate() {
            commas |= ((c == b',') as u64) << k;
            others |= ((c != b',' && !c.is_ascii_digit()) as u64) << k;
        }
        (commas, others)
    }

    #[inline(always)]
    fn classify16(self, block: &[u8; 16]) -> (u32, u32) {
        let (mut commas, mut others) = (0u32, 0u32);
        for (k, &c) in block.iter().enumerate() {
            commas |= ((c == b',') as u32) << k;
            others |= ((c != b',' && !c.is_ascii_digit()) as u32) << k;
        }
        (commas, others)
    }

    #[inline(always)]
    fn shifted_equal64(self, w: &[u8], shift: usize) -> u64 {
        let (a, b) = (&w[..64], &w[shift..shift + 64]);
        let mut eq = 0u64;
        for k in 0..64 {
            eq |= ((a[k] == b[k]) as u64) << k;
        }
        eq
    }
}

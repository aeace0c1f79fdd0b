//! Every instruction set against the scalar reference: the block operations on random
//! blocks, and the kernels built on them ([`crate::json::chrome`]) on random arrays. The
//! AVX-512 copies are checked only on CPUs that have AVX-512BW (this machine does).

use super::scalar::Scalar;
use super::*;
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
use crate::json::chrome::plain_uints;
use crate::json::chrome::{DigitLevels, PlainSum, array_content, digit_array_end_of, plain_sum_of};

/// A pseudo-random generator (64-bit LCG), for reproducible inputs.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// Bytes mostly of digits and commas, with the bytes the classifiers must tell apart
/// (`]`, space, `/` and `:` beside the digits, bytes of 0x80 and above).
fn random_bytes(rng: &mut Lcg, n: usize) -> Vec<u8> {
    const BYTES: &[u8] = b"0123456789,,,,]/: \x80\xff";
    (0..n).map(|_| BYTES[rng.below(BYTES.len())]).collect()
}

/// The block operations of `isa` give the scalar reference's bits.
fn blocks_agree(isa: impl Blocks, name: &str) {
    let mut rng = Lcg(7);
    for round in 0..2000 {
        let w = random_bytes(&mut rng, 64 + 16);
        assert_eq!(
            isa.classify64(&w),
            Scalar.classify64(&w),
            "{name} classify64, round {round}: {}",
            w.escape_ascii()
        );
        let b16: &[u8; 16] = w[..16].try_into().unwrap();
        assert_eq!(
            isa.classify16(b16),
            Scalar.classify16(b16),
            "{name} classify16"
        );
        for shift in 1..=16 {
            assert_eq!(
                isa.shifted_equal64(&w, shift),
                Scalar.shifted_equal64(&w, shift),
                "{name} shifted_equal64 by {shift}, round {round}"
            );
        }
    }
}

/// Arrays of numbers (1–8 digits each; now and then 9, or an empty element), some with a
/// stray byte,
/// at every length to ~200 bytes: three 64-byte blocks and a tail.
fn random_arrays() -> Vec<Vec<u8>> {
    let mut rng = Lcg(11);
    let mut out = Vec::new();
    for _ in 0..3000 {
        let mut b = vec![b'['];
        let count = rng.below(40);
        for k in 0..count {
            if k > 0 {
                b.push(b',');
            }
            let digits = match rng.below(60) {
                0 => 0,
                1 => 9,
                _ => 1 + rng.below(8),
            };
            b.extend((0..digits).map(|_| b'0' + rng.below(10) as u8));
        }
        if rng.below(5) == 0 && b.len() > 1 {
            let at = 1 + rng.below(b.len() - 1);
            b[at] = b"] -x"[rng.below(4)];
        }
        b.push(b']');
        out.push(b);
    }
    out
}

#[test]
fn scalar_blocks_are_the_definition() {
    let mut w = [b'1'; 80];
    w[3] = b',';
    w[63] = b'x';
    assert_eq!(Scalar.classify64(&w), (1 << 3, 1 << 63));
    w[5] = b'1';
    assert_eq!(Scalar.shifted_equal64(&w, 1) & 0b1111, 0b0011);
}

#[test]
fn every_instruction_set_classifies_blocks_as_the_scalar_reference() {
    blocks_agree(Scalar, "scalar");
    blocks_agree(Baseline::default(), "baseline");
    #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
    if let Some(cpu) = avx512::Avx512::detect() {
        blocks_agree(cpu, "avx512");
    }
}

#[test]
fn every_instruction_set_reads_arrays_as_the_scalar_reference() {
    let (mut read, mut refused) = (0, 0);
    for b in random_arrays() {
        let all = 0..b.len();
        let text = String::from_utf8_lossy(&b).into_owned();
        let content = array_content(&b, &all);
        fn sum(content: Option<&[u8]>, isa: impl Blocks) -> Option<PlainSum> {
            content.and_then(|c| plain_sum_of(c, isa, DigitLevels::default()))
        }
        let reference = sum(content, Scalar);
        assert_eq!(
            sum(content, Baseline::default()),
            reference,
            "baseline sum {text}"
        );
        let end = digit_array_end_of(&b, 0, Scalar);
        assert_eq!(
            digit_array_end_of(&b, 0, Baseline::default()),
            end,
            "{text}"
        );
        #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
        {
            let mut values = Vec::new();
            let count = plain_uints(&b, &all, |v| values.push(v as u32));
            let mut out = vec![0u32; 64];
            let uints = |out: &[u32], n: Option<usize>| n.map(|n| out[..n.min(64)].to_vec());
            let four = content.filter(|c| !c.is_empty()).and_then(|c| {
                std::arch::is_x86_feature_detected!("ssse3")
                    // SAFETY: the CPU has SSSE3, checked just before.
                    .then(|| unsafe { crate::json::chrome::uints_ssse3(c, &mut out) })
            });
            if let Some(n) = four {
                assert_eq!(
                    uints(&out, n),
                    count.map(|_| values.clone()),
                    "ssse3 {text}"
                );
            }
            if let Some(cpu) = avx512::Avx512::detect() {
                let c = content.unwrap_or_default();
                // SAFETY: `cpu` proves AVX-512F/BW.
                let s = unsafe { crate::json::chrome::plain_sum_avx512(c, cpu) };
                assert_eq!(content.and(s), reference, "avx512 sum {text}");
                // SAFETY: as above.
                let e = unsafe { crate::json::chrome::digit_array_end_avx512(&b, 0, cpu) };
                assert_eq!(e, end, "avx512 end {text}");
                if !c.is_empty() {
                    // SAFETY: as above.
                    let n = unsafe { crate::json::chrome::uints_avx512(c, &mut out, cpu) };
                    assert_eq!(
                        uints(&out, n),
                        count.map(|_| values.clone()),
                        "avx512 {text}"
                    );
                }
            }
        }
        read += reference.is_some() as usize;
        refused += reference.is_none() as usize;
    }
    assert!(
        read > 1000 && refused > 300,
        "{read} read, {refused} refused"
    );
}

/// Arrays as Chrome writes `timeDeltas` and `samples`: mostly numbers of 1–4 digits (the
/// four-at-once conversion), runs of one value (taken whole from a shifted compare), now
/// and then a longer number or a stray byte, up to ~300 numbers (several 64-byte windows).
fn chrome_like_arrays() -> Vec<Vec<u8>> {
    let mut rng = Lcg(23);
    let mut out = Vec::new();
    for _ in 0..3000 {
        let mut b = vec![b'['];
        let count = rng.below(300);
        let mut last = String::from("7");
        for k in 0..count {
            if k > 0 {
                b.push(b',');
            }
            let text: String = match rng.below(40) {
                0 => (0..5 + rng.below(4))
                    .map(|_| (b'1' + rng.below(9) as u8) as char)
                    .collect(),
                1..=12 => last.clone(),
                _ => (0..1 + rng.below(4))
                    .map(|_| (b'0' + rng.below(10) as u8) as char)
                    .collect(),
            };
            b.extend_from_slice(text.as_bytes());
            last = text;
        }
        if rng.below(10) == 0 && b.len() > 1 {
            let at = 1 + rng.below(b.len() - 1);
            b[at] = b"] -x"[rng.below(4)];
        }
        b.push(b']');
        out.push(b);
    }
    out
}

#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
#[test]
fn every_instruction_set_reads_chrome_like_arrays_as_one_at_a_time() {
    let mut read = 0;
    for b in chrome_like_arrays() {
        let all = 0..b.len();
        let text = String::from_utf8_lossy(&b).into_owned();
        let mut values = Vec::new();
        let count = plain_uints(&b, &all, |v| values.push(v as u32));
        let Some(c) = array_content(&b, &all).filter(|c| !c.is_empty()) else {
            continue;
        };
        // Room for every value, and (when there are some) for one fewer: refused.
        for room in [b.len() / 2 + 1, values.len().saturating_sub(1)] {
            let want = count
                .filter(|_| values.len() <= room)
                .map(|_| values.clone());
            let mut out = vec![0u32; room];
            if std::arch::is_x86_feature_detected!("ssse3") {
                // SAFETY: the CPU has SSSE3, checked just before.
                let n = unsafe { crate::json::chrome::uints_ssse3(c, &mut out) };
                assert_eq!(
                    n.map(|n| out[..n].to_vec()),
                    want,
                    "ssse3, room {room}: {text}"
                );
            }
            if let Some(cpu) = avx512::Avx512::detect() {
                // SAFETY: `cpu` proves AVX-512F/BW.
                let n = unsafe { crate::json::chrome::uints_avx512(c, &mut out, cpu) };
                assert_eq!(
                    n.map(|n| out[..n].to_vec()),
                    want,
                    "avx512, room {room}: {text}"
                );
            }
        }
        read += count.is_some() as usize;
    }
    assert!(read > 2000, "{read} arrays read");
}

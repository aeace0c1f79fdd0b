//! Whole values skipped without building them (containers by their brackets, 64 or 16
//! bytes at a time where the CPU allows), and an object's members walked as raw keys and
//! value ranges.

use memchr::memchr3;

#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
use super::simd::avx512::Avx512;
use super::strings::{string_end, string_end_escaped};
use super::{LexError, Lexed, bytes_equal, digit_count, load8, skip_ws};

/// Skips an object or array starting at `b[i]` (`{` or `[`); returns the offset past its close.
///
/// A block of bytes a step while they hold no backslash (64 with AVX-512BW, else 16): the
/// quotes' running XOR marks the bytes inside strings, and only brackets outside them are
/// counted (small `args` objects are dense in strings, each of which would otherwise be a
/// search of its own). From the first block with a backslash (or the last bytes),
/// [`skip_container_from`].
#[inline(never)]
fn skip_container(b: &[u8], i: usize, open: u8, close: u8) -> Lexed<usize> {
    #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
    {
        if let Some(cpu) = Avx512::detect() {
            // SAFETY: `cpu` proves AVX-512F/BW.
            return unsafe { skip_blocks64(b, i, open, close, cpu) };
        }
        skip_blocks16(b, (i, 0, false), open, close)
    }
    #[cfg(not(all(target_arch = "x86_64", not(feature = "no-simd"))))]
    skip_container_from(b, i, 0, open, close)
}

/// [`skip_container`] 64 bytes a step, then [`skip_blocks16`] from the first block with a
/// backslash (or the last 63 bytes).
///
/// # Safety
/// None beyond `cpu` (a target-feature function is unsafe to call).
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn skip_blocks64(b: &[u8], i: usize, open: u8, close: u8, cpu: Avx512) -> Lexed<usize> {
    use std::arch::x86_64::*;
    let _ = cpu;
    let (mut depth, mut in_string, mut j) = (0usize, 0u64, i);
    while let Some(block) = b.get(j..j + 64) {
        // SAFETY: the CPU has AVX-512F/BW (`cpu`); an unaligned load of the 64 bytes of
        // `block`.
        let v = unsafe { _mm512_loadu_si512(block.as_ptr().cast()) };
        let mask = |c: u8| _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(c as i8));
        if mask(b'\\') != 0 {
            break;
        }
        let (quotes, opens, closes) = (mask(b'"'), mask(open), mask(close));
        // Bit k: byte k is in a string (its opening quote too, not its closing one).
        let mut inside = quotes;
        for shift in [1, 2, 4, 8, 16, 32] {
            inside ^= inside << shift;
        }
        inside ^= in_string;
        if let Some(k) = close_in((opens | closes) & !inside, opens, &mut depth) {
            return Ok(j + k + 1);
        }
        in_string = if inside >> 63 == 1 { !0 } else { 0 };
        j += 64;
    }
    skip_blocks16(b, (j, depth, in_string != 0), open, close)
}

/// [`skip_container`] 16 bytes a step from `b[j]`, `depth` brackets being open and inside
/// a string or not (`at`), then [`skip_container_from`] from the first block with a
/// backslash (or the last 15 bytes).
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
#[inline(always)]
fn skip_blocks16(b: &[u8], at: (usize, usize, bool), open: u8, close: u8) -> Lexed<usize> {
    let (mut j, mut depth, in_string) = at;
    let mut in_string = if in_string { 0xFFFF } else { 0u32 };
    while let Some(block) = b.get(j..j + 16) {
        let [quotes, backslashes, opens, closes] = masks16(
            block.try_into().expect("16 bytes"),
            [b'"', b'\\', open, close],
        );
        if backslashes != 0 {
            break;
        }
        // Bit k: byte k is in a string (its opening quote too, not its closing one).
        let mut inside = quotes;
        inside ^= inside << 1;
        inside ^= inside << 2;
        inside ^= inside << 4;
        inside ^= inside << 8;
        inside = (inside ^ in_string) & 0xFFFF;
        let brackets = (opens | closes) & !inside;
        if let Some(k) = close_in(brackets.into(), opens.into(), &mut depth) {
            return Ok(j + k + 1);
        }
        in_string = if inside >> 15 == 1 { 0xFFFF } else { 0 };
        j += 16;
    }
    if in_string != 0 {
        j = string_end(b, j)? + 1;
    }
    skip_container_from(b, j, depth, open, close)
}

/// The brackets of one block outside strings (bit k for byte k; `opens` tells opening
/// ones from closing ones) counted into `depth`: the index of the one that closes the
/// container, if it is in the block.
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
#[inline(always)]
fn close_in(mut brackets: u64, opens: u64, depth: &mut usize) -> Option<usize> {
    while brackets != 0 {
        let k = brackets.trailing_zeros();
        if opens >> k & 1 == 1 {
            *depth += 1;
        } else {
            *depth -= 1;
            if *depth == 0 {
                return Some(k as usize);
            }
        }
        brackets &= brackets - 1;
    }
    None
}

/// [`super::copies::skips_on_every_copy`].
pub(super) fn every_skip(b: &[u8]) -> Vec<(&'static str, Lexed<usize>)> {
    let (open, close) = match b.first() {
        Some(b'{') => (b'{', b'}'),
        Some(b'[') => (b'[', b']'),
        _ => return Vec::new(),
    };
    // Added to on x86-64 only.
    #[allow(unused_mut)]
    let mut out = vec![("bytes", skip_container_from(b, 0, 0, open, close))];
    #[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
    {
        out.push(("16 bytes", skip_blocks16(b, (0, 0, false), open, close)));
        if let Some(cpu) = Avx512::detect() {
            // SAFETY: `cpu` proves AVX-512F/BW.
            out.push(("64 bytes", unsafe { skip_blocks64(b, 0, open, close, cpu) }));
        }
    }
    out
}

/// Bit masks (bit k for byte k) of the bytes of a 16-byte block equal to each of `chars`.
#[cfg(all(target_arch = "x86_64", not(feature = "no-simd")))]
#[inline(always)]
fn masks16<const N: usize>(block: &[u8; 16], chars: [u8; N]) -> [u32; N] {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; the load is unaligned and reads
    // exactly the 16 bytes of `block`.
    unsafe {
        let v = _mm_loadu_si128(block.as_ptr().cast());
        chars.map(|c| _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8))) as u32)
    }
}

/// [`skip_container`] from `b[j]` (outside any string), `depth` brackets being open: looks
/// for the next quote or bracket eight bytes at a time while structure is dense, and with
/// memchr3 once [`SPARSE_RUN`] bytes pass without one (number arrays, long text).
fn skip_container_from(b: &[u8], j: usize, mut depth: usize, open: u8, close: u8) -> Lexed<usize> {
    let mut j = j;
    let mut run = 0usize;
    loop {
        // Find the next quote or bracket at or after j.
        match load8(b, j) {
            Some(w) => {
                let hit = bytes_equal(w, b'"') | bytes_equal(w, open) | bytes_equal(w, close);
                if hit == 0 {
                    j += 8;
                    run += 8;
                    if run >= SPARSE_RUN {
                        match memchr3(open, close, b'"', &b[j..]) {
                            None => return Err(LexError::Incomplete),
                            Some(k) => j += k,
                        }
                    } else {
                        continue;
                    }
                } else {
                    j += (hit.trailing_zeros() / 8) as usize;
                }
            }
            None => match memchr3(open, close, b'"', b.get(j..).unwrap_or(&[])) {
                None => return Err(LexError::Incomplete),
                Some(k) => j += k,
            },
        }
        run = 0;
        let c = b[j];
        if c == b'"' {
            j = string_end(b, j + 1)? + 1;
        } else if c == open {
            depth += 1;
            j += 1;
        } else {
            depth -= 1;
            j += 1;
            if depth == 0 {
                return Ok(j);
            }
        }
    }
}

/// Bytes without structure after which [`skip_container`] switches to a SIMD search.
/// Tuned on the benchmark traces: 16–64 gave the same time within noise.
const SPARSE_RUN: usize = 32;

/// Skips one JSON value starting exactly at `b[i]`; returns the offset just past it.
#[inline]
pub(crate) fn skip_value(b: &[u8], i: usize) -> Lexed<usize> {
    let Some(&c) = b.get(i) else {
        return Err(LexError::Incomplete);
    };
    match c {
        b'"' => Ok(string_end(b, i + 1)? + 1),
        b'{' => skip_container(b, i, b'{', b'}'),
        b'[' => skip_container(b, i, b'[', b']'),
        b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
            let mut j = i + 1;
            // Digits eight at a time (timestamps have 10–13).
            while let Some(w) = load8(b, j) {
                let n = digit_count(w) as usize;
                j += n;
                if n < 8 {
                    break;
                }
            }
            while j < b.len() {
                match b[j] {
                    b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-' | b'a'..=b'z' => j += 1,
                    _ => return Ok(j),
                }
            }
            Err(LexError::Incomplete)
        }
        _ => Err(LexError::Malformed {
            offset: i,
            expected: "a JSON value",
        }),
    }
}

/// Walks the members of the object starting at `b[i]` (`{`): `value(key, v)` gets each
/// member's key (its text: a key written with escapes is decoded first) and the offset of
/// its value, reads or skips the value and returns the offset
/// past it. Returns the offset past the `}`.
#[inline(always)]
pub(crate) fn members_with(
    b: &[u8],
    i: usize,
    mut value: impl FnMut(&[u8], usize) -> Lexed<usize>,
) -> Lexed<usize> {
    if b.get(i) != Some(&b'{') {
        return Err(LexError::Malformed {
            offset: i,
            expected: "an object",
        });
    }
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Ok(j + 1);
    }
    loop {
        match b.get(j) {
            None => return Err(LexError::Incomplete),
            Some(b'"') => {}
            Some(_) => {
                return Err(LexError::Malformed {
                    offset: j,
                    expected: "a key string",
                });
            }
        }
        let key_start = j + 1;
        let (key_end, escaped) = string_end_escaped(b, key_start)?;
        j = skip_ws(b, key_end + 1);
        match b.get(j) {
            None => return Err(LexError::Incomplete),
            Some(b':') => {}
            Some(_) => {
                return Err(LexError::Malformed {
                    offset: j,
                    expected: "':' after a key",
                });
            }
        }
        let v = skip_ws(b, j + 1);
        let key = &b[key_start..key_end];
        let end = if escaped {
            // `"p\u0068"` is the key `ph`: matched by its text.
            value(super::unescape(key).as_bytes(), v)?
        } else {
            value(key, v)?
        };
        j = skip_ws(b, end);
        match b.get(j) {
            None => return Err(LexError::Incomplete),
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b'}') => return Ok(j + 1),
            Some(_) => {
                return Err(LexError::Malformed {
                    offset: j,
                    expected: "',' or '}'",
                });
            }
        }
    }
}

/// [`members_with`] for callers that read some values themselves: `visit(key, v)` gets each
/// member's key and the offset of its value, and returns the offset past the value when it
/// read it, or `None` to have it skipped. Returns the offset past the `}`.
#[inline]
pub(crate) fn object(
    b: &[u8],
    i: usize,
    mut visit: impl FnMut(&[u8], usize) -> Option<Lexed<usize>>,
) -> Lexed<usize> {
    members_with(b, i, |k, v| match visit(k, v) {
        Some(end) => end,
        None => skip_value(b, v),
    })
}

/// Walks the elements of the array starting at `b[i]` (`[`): `element(k, v)` gets each
/// element's 0-based index and the offset of its first byte, reads or skips it and returns
/// the offset past it. Returns the offset past the `]`.
pub(crate) fn array(
    b: &[u8],
    i: usize,
    mut element: impl FnMut(usize, usize) -> Lexed<usize>,
) -> Lexed<usize> {
    if b.get(i) != Some(&b'[') {
        return Err(LexError::Malformed {
            offset: i,
            expected: "an array",
        });
    }
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b']') {
        return Ok(j + 1);
    }
    for k in 0.. {
        j = skip_ws(b, element(k, j)?);
        match b.get(j) {
            None => return Err(LexError::Incomplete),
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b']') => return Ok(j + 1),
            Some(_) => {
                return Err(LexError::Malformed {
                    offset: j,
                    expected: "',' or ']'",
                });
            }
        }
    }
    unreachable!("an array has fewer than usize::MAX elements")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_skip_the_same_in_blocks_and_byte_by_byte() {
        // Pseudo-random bytes rich in structure (brackets of both kinds, quotes, escapes),
        // starting with a bracket, and every prefix of them: the block skip and the
        // byte-by-byte one end at the same byte or both say incomplete.
        // (Without backslashes, the whole of most inputs is read in blocks.)
        let alphabets: [&[u8]; 2] = [b"{}[]\"\\a,:0", b"{}[]\"\"a,:0"];
        let mut x = 99u64;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let mut ended = 0;
        for _ in 0..1500 {
            // Up to 300 bytes: several 64-byte blocks, strings across their edges.
            let len = 1 + next(300) as usize;
            let (open, close) = if next(2) == 0 {
                (b'{', b'}')
            } else {
                (b'[', b']')
            };
            let alphabet = alphabets[next(2) as usize];
            let mut v = vec![open];
            v.extend((0..len).map(|_| alphabet[next(alphabet.len() as u64) as usize]));
            for cut in 1..=v.len() {
                let b = &v[..cut];
                let block = skip_container(b, 0, open, close);
                let every = every_skip(b);
                for (name, got) in &every {
                    assert_eq!(*got, every[0].1, "{name}: {}", b.escape_ascii());
                }
                assert_eq!(block, every[0].1, "{}", b.escape_ascii());
                ended += block.is_ok() as usize;
            }
        }
        // A long object with strings across blocks, then an escape, then its close.
        let long = br#"{"a":"0123456789abcdef0123","b":{"c":[1,2,"]}"]},"d":"x\"}"}"#;
        assert_eq!(skip_container(long, 0, b'{', b'}'), Ok(long.len()));
        assert_eq!(
            skip_container(&long[..long.len() - 1], 0, b'{', b'}'),
            Err(LexError::Incomplete)
        );
        assert!(ended > 1000, "{ended} inputs ended inside the bytes");
        // Every copy ran: bytes, and on x86-64 16-byte blocks (64-byte ones too where
        // the CPU has AVX-512BW).
        let copies = every_skip(b"{}").len();
        if cfg!(all(target_arch = "x86_64", not(feature = "no-simd"))) {
            assert!((2..=3).contains(&copies), "{copies}");
        } else {
            assert_eq!(copies, 1);
        }
    }

    #[test]
    fn skips_strings_with_escaped_quotes_and_braces() {
        let b = br#"{"a":"x\"}{","b":[1,{"c":"]"}]} tail"#;
        assert_eq!(skip_value(b, 0), Ok(b.len() - 5));
    }

    #[test]
    fn cut_off_values_are_incomplete() {
        assert_eq!(skip_value(br#"{"a":[1,2"#, 0), Err(LexError::Incomplete));
        assert_eq!(skip_value(br#""abc\"#, 0), Err(LexError::Incomplete));
        assert_eq!(skip_value(b"123", 0), Err(LexError::Incomplete));
    }

    #[test]
    fn junk_is_malformed_with_offset() {
        assert_eq!(
            skip_value(b"  @", 2),
            Err(LexError::Malformed {
                offset: 2,
                expected: "a JSON value"
            })
        );
    }

    #[test]
    fn members_give_raw_keys_and_value_ranges() {
        // Each member's raw key and value bytes, the values skipped.
        let members = |b: &[u8]| {
            let mut got = vec![];
            let end = members_with(b, 0, |k, v| {
                let end = skip_value(b, v)?;
                got.push((k.to_vec(), b[v..end].to_vec()));
                Ok(end)
            });
            (end, got)
        };
        let b = br#"{ "a" : [1,{"x":"}"}] , "b":"s","c":{} }"#;
        let (end, got) = members(b);
        assert_eq!(end, Ok(b.len()));
        assert_eq!(
            got,
            [
                (b"a".to_vec(), br#"[1,{"x":"}"}]"#.to_vec()),
                (b"b".to_vec(), br#""s""#.to_vec()),
                (b"c".to_vec(), b"{}".to_vec()),
            ]
        );
        assert_eq!(members(b"{}").0, Ok(2));
        assert_eq!(members(br#"{"a":1"#).0, Err(LexError::Incomplete));
    }

    #[test]
    fn array_elements_with_offsets() {
        let b = br#"[ 1 , {"a":[2]},"x" ]"#;
        let mut got = vec![];
        let end = array(b, 0, |k, v| {
            let end = skip_value(b, v)?;
            got.push((k, b[v..end].to_vec()));
            Ok(end)
        });
        assert_eq!(end, Ok(b.len()));
        assert_eq!(
            got,
            [
                (0, b"1".to_vec()),
                (1, br#"{"a":[2]}"#.to_vec()),
                (2, br#""x""#.to_vec())
            ]
        );
        assert_eq!(array(b"[]", 0, |_, v| skip_value(b"[]", v)), Ok(2));
        let cut = b"[1,2";
        assert_eq!(
            array(cut, 0, |_, v| skip_value(cut, v)),
            Err(LexError::Incomplete)
        );
        let bad = b"[1 2]";
        assert_eq!(
            array(bad, 0, |_, v| skip_value(bad, v)),
            Err(LexError::Malformed {
                offset: 3,
                expected: "',' or ']'"
            })
        );
    }
}

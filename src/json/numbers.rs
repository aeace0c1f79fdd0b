//! Numbers: integer arrays token by token, plain integers read eight digits at a time
//! (SWAR), `ts`/`dur` microseconds read exactly as nanoseconds, and integers of any
//! spelling (numbers, numeric strings, names hashed).

use super::skip::skip_value;
use super::strings::string_content;
use super::{LexError, Lexed, digit_count, is_ws, load8, skip_ws};

/// One element of a number array: a plain integer, or the raw token of anything else
/// (decimals, exponents, text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token<'a> {
    /// An integer of at most 18 digits.
    Int(i64),
    /// Anything else.
    Other(&'a [u8]),
}

/// Reads a JSON array of numbers starting at `b[i]` (`[`), calling `f` for each element;
/// returns the count. See `fold_numbers`.
#[inline(always)]
pub fn int_array<'a>(b: &'a [u8], i: usize, mut f: impl FnMut(Token<'a>)) -> Lexed<usize> {
    fold_numbers(b, i, (), |(), t| f(t)).map(|((), n)| n)
}

/// Folds the elements of the JSON number array at `b[i]` (`[`) into an accumulator that
/// travels by value (so it stays in registers); returns it with the element count. The
/// integer path parses while it scans, eight bytes at a time: the hot loop of a trace's
/// `samples` and `timeDeltas`.
#[inline(always)]
pub(crate) fn fold_numbers<'a, A>(
    b: &'a [u8],
    i: usize,
    init: A,
    mut f: impl FnMut(A, Token<'a>) -> A,
) -> Lexed<(A, usize)> {
    if b.get(i) != Some(&b'[') {
        return Err(LexError::Malformed {
            offset: i,
            expected: "an array",
        });
    }
    let mut acc = init;
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b']') {
        return Ok((acc, 0));
    }
    let mut n = 0;
    loop {
        // Fast path: a non-negative integer of 1–7 digits and its separator in one 8-byte
        // word (Chrome writes `samples` and `timeDeltas` without spaces).
        if let Some(w) = load8(b, j) {
            let len = digit_count(w);
            if (1..=7).contains(&len) {
                let sep = (w >> (8 * len)) as u8;
                if sep == b',' || sep == b']' {
                    acc = f(acc, Token::Int(swar_value(w, len)));
                    n += 1;
                    j += len as usize + 1;
                    if sep == b']' {
                        return Ok((acc, n));
                    }
                    // Some writers put a space after each comma (Python's json.dumps).
                    if b.get(j).is_some_and(|&c| is_ws(c)) {
                        j = skip_ws(b, j);
                    }
                    continue;
                }
            }
        }
        let start = j;
        let neg = b.get(j) == Some(&b'-');
        j += neg as usize;
        let (v, digits) = match load8(b, j) {
            Some(chunk) => match digit_count(chunk) {
                len @ 1..=7 => (swar_value(chunk, len), len as usize),
                _ => slow_digits(b, j),
            },
            None => slow_digits(b, j),
        };
        j += digits;
        let plain = digits > 0 && digits <= 18 && !matches!(b.get(j), Some(b'.' | b'e' | b'E'));
        let token = if plain {
            Token::Int(if neg { -v } else { v })
        } else {
            j = skip_value(b, start)?;
            Token::Other(&b[start..j])
        };
        // The separator first: a token followed by junk is not handed out.
        let sep = match b.get(j) {
            Some(&c @ (b',' | b']')) => c,
            _ => {
                j = skip_ws(b, j);
                match b.get(j) {
                    None => return Err(LexError::Incomplete),
                    Some(&c @ (b',' | b']')) => c,
                    Some(_) => {
                        return Err(LexError::Malformed {
                            offset: j,
                            expected: "',' or ']' in a number array",
                        });
                    }
                }
            }
        };
        acc = f(acc, token);
        n += 1;
        if sep == b']' {
            return Ok((acc, n));
        }
        j += 1;
        if b.get(j).is_some_and(|&c| is_ws(c)) {
            j = skip_ws(b, j);
        }
    }
}

/// The integer `b[start..end]` (1–8 ASCII digits, already checked to be digits).
#[inline(always)]
pub(super) fn uint_at(b: &[u8], start: usize, end: usize) -> Option<u64> {
    let len = end.wrapping_sub(start);
    if (1..=4).contains(&len)
        && let Some(w) = b.get(start..start + 4)
    {
        // Up to four digits (node ids, deltas of sampling intervals): two multiplies.
        return Some(swar_value4(
            u32::from_le_bytes(w.try_into().expect("4 bytes")),
            len as u32,
        ));
    }
    if !(1..=8).contains(&len) {
        return None;
    }
    let w = match load8(b, start) {
        Some(w) => w,
        None => {
            let mut tail = [0u8; 8];
            tail[..b.len() - start].copy_from_slice(&b[start..]);
            u64::from_le_bytes(tail)
        }
    };
    Some(swar_value(w, len as u32) as u64)
}

/// The value of the first `len` (1–8) digits of a little-endian word: the digits are
/// moved to the top bytes (zeros below act as leading zeros) and combined pairwise.
#[inline(always)]
fn swar_value(chunk: u64, len: u32) -> i64 {
    let v = (chunk & 0x0F0F_0F0F_0F0F_0F0F) << (8 * (8 - len));
    let v = (v.wrapping_mul((10 << 8) + 1) >> 8) & 0x00FF_00FF_00FF_00FF;
    let v = (v.wrapping_mul((100 << 16) + 1) >> 16) & 0x0000_FFFF_0000_FFFF;
    (v.wrapping_mul((10000 << 32) + 1) >> 32) as i64
}

/// The value of the first `len` (1–8) bytes of a little-endian word when they are all
/// digits.
#[inline(always)]
fn word_value(w: u64, len: usize) -> Option<i64> {
    ((digit_count(w) as usize) >= len).then(|| swar_value(w, len as u32))
}

/// The 4–8 bytes of `b` as the low bytes of a little-endian word (zeros above): its first
/// four bytes and its last four, which overlap where `b` is shorter than eight.
#[inline(always)]
fn four_and_four(b: &[u8]) -> u64 {
    let n = b.len();
    let lo = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
    let hi = u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]) as u64;
    lo | hi << (8 * (n - 4))
}

/// [`swar_value`] of the first `len` (1–4) digits of a little-endian 32-bit word.
#[inline(always)]
fn swar_value4(chunk: u32, len: u32) -> u64 {
    let v = (chunk & 0x0F0F_0F0F) << (8 * (4 - len));
    let v = (v.wrapping_mul((10 << 8) + 1) >> 8) & 0x00FF_00FF;
    (v.wrapping_mul((100 << 16) + 1) >> 16) as u64
}

/// Digits at `b[j..]` one by one: (value, count). The value wraps past 18 digits; callers
/// treat more than 18 digits as not a plain integer.
#[inline]
fn slow_digits(b: &[u8], mut j: usize) -> (i64, usize) {
    let start = j;
    let mut v: i64 = 0;
    while let Some(&c) = b.get(j) {
        if !c.is_ascii_digit() {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add((c - b'0') as i64);
        j += 1;
    }
    (v, j - start)
}

/// A raw integer token (`123`, `-5`); `None` for anything else (floats, text).
#[inline]
pub(crate) fn plain_int(tok: &[u8]) -> Option<i64> {
    let (neg, digits) = match tok.first()? {
        b'-' => (true, &tok[1..]),
        _ => (false, tok),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let v = match digits.len() {
        // 4–8 digits (a pid, tid or dur) as one word, from two overlapping 4-byte loads.
        n @ 4..=8 => word_value(four_and_four(digits), n)?,
        // A timestamp's 9–16: those before the last eight from the word of the first eight.
        n @ 9..=16 => {
            let (head, tail) = digits.split_at(n - 8);
            let first = load8(digits, 0)?;
            let last = u64::from_le_bytes(tail.try_into().ok()?);
            word_value(first, head.len())? * 100_000_000 + word_value(last, 8)?
        }
        // 1–3 and 17–18 one by one (18 digits do not wrap).
        n => match slow_digits(digits, 0) {
            (v, count) if count == n => v,
            _ => return None,
        },
    };
    Some(if neg { -v } else { v })
}

/// Parses a raw JSON number (or a number inside a string, as some producers write it)
/// given in microseconds and returns nanoseconds, exactly for integers and decimals
/// (`141171.917` → `141171917`), through `f64` only for exponent notation.
/// Returns `None` for anything else (`null`, text, overflow).
#[inline]
pub(crate) fn micros_to_nanos(raw: &[u8]) -> Option<i64> {
    // The plain integer of almost every event inline, the rest out of line.
    match plain_int(raw) {
        Some(us) => us.checked_mul(1000),
        None => other_micros_to_nanos(raw),
    }
}

/// [`micros_to_nanos`] of anything but a plain integer.
#[inline(never)]
fn other_micros_to_nanos(raw: &[u8]) -> Option<i64> {
    let s = string_content(raw).unwrap_or(raw);
    let (neg, digits) = match s.first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let mut int: i64 = 0;
    let mut i = 0;
    while i < digits.len() && digits[i].is_ascii_digit() {
        int = int
            .checked_mul(10)?
            .checked_add((digits[i] - b'0') as i64)?;
        i += 1;
    }
    let int_digits = i;
    let mut frac_ns: i64 = 0;
    let mut frac_digits = 0;
    let mut round_up = false;
    let mut any_frac = false;
    if i < digits.len() && digits[i] == b'.' {
        i += 1;
        while i < digits.len() && digits[i].is_ascii_digit() {
            any_frac = true;
            if frac_digits < 3 {
                frac_ns = frac_ns * 10 + (digits[i] - b'0') as i64;
            } else if frac_digits == 3 {
                round_up = digits[i] >= b'5';
            }
            frac_digits += 1;
            i += 1;
        }
        while frac_digits < 3 {
            frac_ns *= 10;
            frac_digits += 1;
        }
    }
    if int_digits == 0 && !any_frac {
        return None;
    }
    if i < digits.len() {
        if matches!(digits[i], b'e' | b'E') {
            let v: f64 = std::str::from_utf8(s).ok()?.parse().ok()?;
            let ns = v * 1000.0;
            return (ns.is_finite() && ns.abs() < 9.0e18).then(|| ns.round() as i64);
        }
        return None;
    }
    let ns = int
        .checked_mul(1000)?
        .checked_add(frac_ns + round_up as i64)?;
    Some(if neg { -ns } else { ns })
}

/// True when raw `pid`/`tid` bytes are a number (or a number in a string) that no 64-bit
/// integer holds (`18446744073709551616`, `1e30`): [`integer`] then keys it by a hash.
#[inline]
pub(crate) fn beyond_i64(raw: &[u8]) -> bool {
    plain_int(raw).is_none() && other_beyond_i64(raw)
}

/// [`beyond_i64`] of anything but a plain integer.
#[inline(never)]
fn other_beyond_i64(raw: &[u8]) -> bool {
    let s = string_content(raw).unwrap_or(raw);
    if plain_int(s).is_some() {
        return false;
    }
    let Ok(t) = std::str::from_utf8(s) else {
        return false;
    };
    t.parse::<i64>().is_err()
        && t.parse::<f64>()
            .is_ok_and(|f| f.abs() >= 9.223_372_036_854_775e18)
}

/// Parses a raw `pid`/`tid`/node id: an integer, an integer in a string (`"1234"`), or a
/// float with no fraction (`12.0`). Other strings (hand-made traces name threads `"main"`)
/// are hashed to a stable non-negative number so that they still key threads apart.
#[inline]
pub(crate) fn integer(raw: &[u8]) -> Option<i64> {
    // The common case inline, without UTF-8 checks; the rest out of line.
    plain_int(raw).or_else(|| other_integer(raw))
}

/// [`integer`] of anything but a plain integer.
#[inline(never)]
fn other_integer(raw: &[u8]) -> Option<i64> {
    let s = string_content(raw).unwrap_or(raw);
    if let Some(v) = plain_int(s) {
        return Some(v);
    }
    if let Some(v) = std::str::from_utf8(s)
        .ok()
        .and_then(|t| t.parse::<i64>().ok())
    {
        return Some(v);
    }
    if let Some(ns) = micros_to_nanos(raw)
        && ns % 1000 == 0
    {
        return Some(ns / 1000);
    }
    if !s.is_empty() && !matches!(s, b"null" | b"true" | b"false") {
        // Text, fractions, huge numbers: a stable FNV-1a hash (62 bits) keeps distinct
        // threads apart instead of merging them all into 0.
        let mut h: u64 = 0xcbf29ce484222325;
        for &c in s {
            h = (h ^ c as u64).wrapping_mul(0x100000001b3);
        }
        return Some((h >> 2) as i64);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_ints_and_what_is_not_one() {
        assert_eq!(plain_int(b"-975"), Some(-975));
        assert_eq!(plain_int(b"3.5"), None);
        assert_eq!(plain_int(b"1234567890123456789"), None);
        // Nine digits and more: the last eight read as one word.
        assert_eq!(plain_int(b"465455268107"), Some(465_455_268_107));
        assert_eq!(plain_int(b"-123456789"), Some(-123_456_789));
        assert_eq!(plain_int(b"000000001"), Some(1));
        assert_eq!(
            plain_int(b"999999999999999999"),
            Some(999_999_999_999_999_999)
        );
        assert_eq!(plain_int(b"12345678"), Some(12_345_678));
        // Every length, checked against the standard parser.
        let digits = b"9081726354453627189";
        for len in 1..=18 {
            let tok = &digits[..len];
            let want: i64 = std::str::from_utf8(tok).unwrap().parse().unwrap();
            assert_eq!(plain_int(tok), Some(want), "{}", tok.escape_ascii());
            assert_eq!(plain_int(&[b"-", tok].concat()), Some(-want));
            // A non-digit at each position is refused.
            for k in 0..len {
                let mut bad = tok.to_vec();
                bad[k] = b'/';
                assert_eq!(plain_int(&bad), None, "{}", bad.escape_ascii());
                bad[k] = b':';
                assert_eq!(plain_int(&bad), None, "{}", bad.escape_ascii());
            }
        }
        for bad in [
            &b"12345678a"[..],
            b"1234a6789",
            b"a23456789",
            b"12345678901.5",
        ] {
            assert_eq!(plain_int(bad), None, "{}", bad.escape_ascii());
        }
    }

    #[test]
    fn int_arrays_split_plain_integers_from_other_tokens() {
        let (mut ints, mut others) = (vec![], vec![]);
        let n = int_array(
            b"[ 12,-3 ,1.5, 2e3,\"x\",1234567890123456789]",
            0,
            |t| match t {
                Token::Int(v) => ints.push(v),
                Token::Other(t) => others.push(t.to_vec()),
            },
        )
        .unwrap();
        assert_eq!(n, 6);
        assert_eq!(ints, [12, -3]);
        assert_eq!(
            others,
            [
                b"1.5".to_vec(),
                b"2e3".to_vec(),
                b"\"x\"".to_vec(),
                b"1234567890123456789".to_vec()
            ]
        );
        assert_eq!(int_array(b"[]", 0, |_| ()), Ok(0));
        // Spaces after commas (Python's json.dumps), on the fast path too.
        let mut got = vec![];
        int_array(b"[8962, 197, -110, 1]", 0, |t| got.push(t)).unwrap();
        assert_eq!(
            got,
            [
                Token::Int(8962),
                Token::Int(197),
                Token::Int(-110),
                Token::Int(1)
            ]
        );
        assert_eq!(int_array(b"[1,", 0, |_| ()), Err(LexError::Incomplete));
        assert!(int_array(b"[1;2]", 0, |_| ()).is_err());
    }

    #[test]
    fn swar_digits_match_a_plain_parse() {
        for text in [
            "0", "7", "42", "170", "9999", "12345", "987654", "1234567", "12345678",
        ] {
            let mut bytes = text.as_bytes().to_vec();
            bytes.extend_from_slice(b",1]     ");
            let chunk = load8(&bytes, 0).unwrap();
            let len = digit_count(chunk);
            assert_eq!(len as usize, text.len().min(8), "{text}");
            if (1..=7).contains(&len) {
                assert_eq!(
                    swar_value(chunk, len),
                    text.parse::<i64>().unwrap(),
                    "{text}"
                );
            }
        }
        assert_eq!(digit_count(u64::from_le_bytes(*b"/:abc,12")), 0);
        // A long array of mixed lengths through the fast and slow paths.
        let values: Vec<i64> = (0..2000).map(|i| (i * 7919) % 10_000_019 - 5000).collect();
        let text = format!(
            "[{}]",
            values
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
        let mut got = vec![];
        int_array(text.as_bytes(), 0, |t| match t {
            Token::Int(v) => got.push(v),
            Token::Other(_) => panic!(),
        })
        .unwrap();
        assert_eq!(got, values);
    }

    #[test]
    fn micros_parse_exactly_to_nanos() {
        assert_eq!(micros_to_nanos(b"2323801329"), Some(2_323_801_329_000));
        assert_eq!(micros_to_nanos(b"141171.917"), Some(141_171_917));
        assert_eq!(micros_to_nanos(b"0.0005"), Some(1)); // rounds half up at the 4th decimal
        assert_eq!(micros_to_nanos(b"-975"), Some(-975_000));
        assert_eq!(micros_to_nanos(b"1.5e3"), Some(1_500_000));
        assert_eq!(micros_to_nanos(b"\"123\""), Some(123_000));
        assert_eq!(micros_to_nanos(b"null"), None);
        assert_eq!(micros_to_nanos(b"\".\""), None);
        assert_eq!(micros_to_nanos(b"-"), None);
        assert_eq!(micros_to_nanos(b".5"), Some(500));
        assert_eq!(micros_to_nanos(b"99999999999999999999"), None);
    }

    #[test]
    fn integers_from_numbers_strings_and_names() {
        assert_eq!(integer(b"21989"), Some(21989));
        assert_eq!(integer(b"\"21989\""), Some(21989));
        assert_eq!(integer(b"12.0"), Some(12));
        let h = integer(b"\"main\"").unwrap();
        assert!(h >= 0);
        assert_eq!(integer(b"\"main\""), Some(h));
        assert_ne!(integer(b"\"worker\""), Some(h));
        assert_eq!(integer(b"true"), None);
        // 1.5 and a 20-digit number are not merged into one thread.
        assert!(integer(b"1.5").is_some());
        assert_ne!(integer(b"1.5"), integer(b"99999999999999999999"));
    }
}

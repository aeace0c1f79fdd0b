//! A small JSON lexer over raw bytes: skip whitespace, strings and whole values without
//! building them, and read the few scalars a trace event's top level holds.
//!
//! Every function takes a byte slice and a 0-based offset and returns the offset just past
//! what it read. Running out of bytes is [`LexError::Incomplete`] (a file cut off, or a
//! block boundary in a stream); bytes that cannot be JSON are [`LexError::Malformed`] with
//! their offset. Skipping is fast because it only looks at quotes, backslashes and the
//! brackets of the value being skipped (memchr), and does not validate the inside of
//! nested values: the parts taskchain keeps are validated later by simd-json.

use memchr::{memchr2, memchr3};

/// Why the lexer stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LexError {
    /// The bytes end inside a value.
    Incomplete,
    /// The byte at `offset` cannot start or continue the expected JSON.
    Malformed {
        /// 0-based byte offset in the slice given.
        offset: usize,
        /// What was expected there.
        expected: &'static str,
    },
}

/// Result of a lexer step: the offset just past what was read.
pub type Lexed<T> = Result<T, LexError>;

#[inline]
pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// Offset of the first non-whitespace byte at or after `i` (may be `b.len()`).
#[inline]
pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_ws(b[i]) {
        i += 1;
    }
    i
}

/// High bit set in each byte of `w` equal to `c` (exact for the lowest such byte, which
/// is all callers use).
#[inline(always)]
pub(crate) fn bytes_equal(w: u64, c: u8) -> u64 {
    let x = w ^ (0x0101_0101_0101_0101u64 * c as u64);
    x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080
}

/// `i` is just past an opening quote; returns the offset of the closing quote.
/// Eight bytes at a time (most strings in a trace are short keys and names), then a SIMD
/// search once the string proves long (URLs, base64 screenshots).
#[inline]
pub fn string_end(b: &[u8], mut i: usize) -> Lexed<usize> {
    let start = i;
    while let Some(w) = load8(b, i) {
        let hit = bytes_equal(w, b'"') | bytes_equal(w, b'\\');
        if hit != 0 {
            let j = i + (hit.trailing_zeros() / 8) as usize;
            if b[j] == b'"' {
                return Ok(j);
            }
            // A backslash escapes the next byte (for `\u` the 4 hex digits are not quotes).
            i = j + 2;
            continue;
        }
        i += 8;
        if i - start >= 64 {
            break;
        }
    }
    loop {
        match memchr2(b'"', b'\\', b.get(i..).unwrap_or(&[])) {
            None => return Err(LexError::Incomplete),
            Some(k) => {
                let j = i + k;
                if b[j] == b'"' {
                    return Ok(j);
                }
                i = j + 2;
                if i > b.len() {
                    return Err(LexError::Incomplete);
                }
            }
        }
    }
}

/// The offset of the first control character (below 0x20: a line break, a tab, NUL)
/// inside a string of the JSON that starts at `b[i]` (outside any string), read to the
/// end of `b`; `None` when there is none.
///
/// JSON forbids these raw in strings (RFC 8259 §7) and Chrome escapes them, so when a
/// value runs to the end of the bytes (a cut-off file, or a stream's partial event) this
/// tells a cut from a break that more bytes cannot mend: after one stray or escaped
/// quote, the line break that ends the event's line reads as inside a string. Used only
/// then, not on the hot path: a string that closes is not checked.
pub fn control_in_string(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    let mut in_string = false;
    while j < b.len() {
        match b[j] {
            b'"' => in_string = !in_string,
            b'\\' if in_string => j += 1,
            c if c < 0x20 && in_string => return Some(j),
            _ => {}
        }
        j += 1;
    }
    None
}

/// Skips an object or array starting at `b[i]` (`{` or `[`); returns the offset past its close.
///
/// Sixteen bytes a step while they hold no backslash: the quotes' running XOR marks the
/// bytes inside strings, and only brackets outside them are counted (small `args`
/// objects are dense in strings, each of which would otherwise be a search of its own).
/// From the first block with a backslash (or the last 15 bytes), [`skip_container_from`].
#[inline(never)]
fn skip_container(b: &[u8], i: usize, open: u8, close: u8) -> Lexed<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        let (mut depth, mut in_string, mut j) = (0usize, 0u32, i);
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
            let mut brackets = (opens | closes) & !inside;
            while brackets != 0 {
                let k = brackets.trailing_zeros();
                if opens >> k & 1 == 1 {
                    depth += 1;
                } else {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(j + k as usize + 1);
                    }
                }
                brackets &= brackets - 1;
            }
            in_string = if inside >> 15 == 1 { 0xFFFF } else { 0 };
            j += 16;
        }
        if in_string != 0 {
            j = string_end(b, j)? + 1;
        }
        skip_container_from(b, j, depth, open, close)
    }
    #[cfg(not(target_arch = "x86_64"))]
    skip_container_from(b, i, 0, open, close)
}

/// Bit masks (bit k for byte k) of the bytes of a 16-byte block equal to each of `chars`.
#[cfg(target_arch = "x86_64")]
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
pub fn skip_value(b: &[u8], i: usize) -> Lexed<usize> {
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
/// member's raw key content (compared raw: the keys taskchain looks for never contain
/// escapes) and the offset of its value, reads or skips the value and returns the offset
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
        let key_end = string_end(b, key_start)?;
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
        let end = value(&b[key_start..key_end], v)?;
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
pub fn object(
    b: &[u8],
    i: usize,
    mut visit: impl FnMut(&[u8], usize) -> Option<Lexed<usize>>,
) -> Lexed<usize> {
    members_with(b, i, |k, v| match visit(k, v) {
        Some(end) => end,
        None => skip_value(b, v),
    })
}

/// Reads a JSON array of numbers starting at `b[i]` (`[`), calling `f` with each raw
/// number token; returns the count. Whitespace is allowed anywhere between tokens.
#[inline]
pub fn number_array(b: &[u8], i: usize, mut f: impl FnMut(&[u8])) -> Lexed<usize> {
    if b.get(i) != Some(&b'[') {
        return Err(LexError::Malformed {
            offset: i,
            expected: "an array",
        });
    }
    let mut j = skip_ws(b, i + 1);
    let mut n = 0;
    if b.get(j) == Some(&b']') {
        return Ok(0);
    }
    loop {
        let start = j;
        while j < b.len() && matches!(b[j], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
            j += 1;
        }
        if j == start {
            // Not a number (null, a string, ...): skip it and pass it on as it is.
            j = skip_value(b, start)?;
        }
        f(&b[start..j]);
        n += 1;
        j = skip_ws(b, j);
        match b.get(j) {
            None => return Err(LexError::Incomplete),
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b']') => return Ok(n),
            Some(_) => {
                return Err(LexError::Malformed {
                    offset: j,
                    expected: "',' or ']' in a number array",
                });
            }
        }
    }
}

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
/// returns the count. See [`fold_numbers`].
#[inline(always)]
pub fn int_array<'a>(b: &'a [u8], i: usize, mut f: impl FnMut(Token<'a>)) -> Lexed<usize> {
    fold_numbers(b, i, (), |(), t| f(t)).map(|((), n)| n)
}

/// Folds the elements of the JSON number array at `b[i]` (`[`) into an accumulator that
/// travels by value (so it stays in registers); returns it with the element count. The
/// integer path parses while it scans, eight bytes at a time: the hot loop of a trace's
/// `samples` and `timeDeltas`.
#[inline(always)]
pub fn fold_numbers<'a, A>(
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

/// The fast path for number arrays as Chrome writes `samples` and `timeDeltas`: the array
/// at `b[r]` (`r` from its `[` to just past its `]`) holds only non-negative integers of
/// 1–8 digits separated by single commas, with no whitespace. Calls `f` with each value
/// in order and returns the count; returns `None` for any other array (after perhaps some
/// calls: the caller then starts over with [`fold_numbers`]).
///
/// Commas are found eight bytes at a time and each number is read from its own load, so
/// one number's parse does not wait for the previous one's length (the loop-carried
/// dependency that bounds [`fold_numbers`]). [`plain_uints_into`] is faster where the
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
        let (mut commas, others) = Sse2.classify64(block);
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
fn array_content<'a>(b: &'a [u8], r: &std::ops::Range<usize>) -> Option<&'a [u8]> {
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
/// digits are converted at once ([`uints_ssse3`]; with AVX-512BW, a copy of it whose
/// 64-byte blocks are single vectors).
pub fn plain_uints_into(b: &[u8], r: &std::ops::Range<usize>, out: &mut [u32]) -> Option<usize> {
    let content = array_content(b, r)?;
    if content.is_empty() {
        return Some(0);
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(cpu) = Avx512::detect() {
        // SAFETY: `cpu` proves AVX-512F/BW (they imply SSSE3).
        return unsafe { uints_avx512(content, out, cpu) };
    }
    #[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
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
/// one at a time. Numbers cut by the window's end are read from the next window. A window
/// that starts with a run of one value (most `samples` are the one before) takes the run
/// whole from one compare of the window with itself shifted by the first number's width.
///
/// # Safety
/// The CPU must have SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
pub unsafe fn uints_ssse3(content: &[u8], out: &mut [u32]) -> Option<usize> {
    // SAFETY: this function's own requirement.
    unsafe { uints_four(content, out, Sse2) }
}

/// [`uints_ssse3`] compiled for AVX-512BW, its blocks taken by [`Avx512`].
///
/// # Safety
/// None beyond `cpu` (a target-feature function is unsafe to call).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3,avx512f,avx512bw")]
unsafe fn uints_avx512(content: &[u8], out: &mut [u32], cpu: Avx512) -> Option<usize> {
    // SAFETY: `cpu` proves AVX-512BW, which implies SSSE3.
    unsafe { uints_four(content, out, cpu) }
}

/// The body of [`uints_ssse3`], inlined into each instruction set's copy.
///
/// # Safety
/// The CPU must have SSSE3.
#[cfg(target_arch = "x86_64")]
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
    #[cfg(target_arch = "x86_64")]
    if let Some(cpu) = Avx512::detect() {
        // SAFETY: `cpu` proves AVX-512F/BW.
        return unsafe { plain_sum_avx512(content, cpu) };
    }
    plain_sum_of(content, Sse2, DigitLevels::default())
}

/// [`plain_sum`] of an array's content with AVX-512BW: one compiled copy of
/// [`plain_sum_of`] in which the 64-byte blocks take 512-bit operations.
///
/// # Safety
/// None beyond `cpu` (a target-feature function is unsafe to call).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn plain_sum_avx512(content: &[u8], cpu: Avx512) -> Option<PlainSum> {
    plain_sum_of(content, cpu, DigitLevels512::new(cpu))
}

/// [`plain_sum`] of an array's content (between its brackets), its 64-byte blocks
/// classified by `blocks` and their digits summed by `levels`.
#[inline(always)]
fn plain_sum_of(
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
trait DigitSums {
    /// Adds the digits of the bytes of `block` selected by `mask` to level k (0–7).
    fn add(&mut self, k: usize, block: &[u8; 64], mask: u64);
    /// Σ_k 10^k × the digit sum of level k.
    fn total(&self) -> u64;
}

/// [`DigitSums`] with SSE2, 16 bytes at a time (scalar off x86-64).
#[derive(Default)]
struct DigitLevels {
    #[cfg(target_arch = "x86_64")]
    sums: [[u64; 2]; 8],
    #[cfg(not(target_arch = "x86_64"))]
    sums: [u64; 8],
}

impl DigitSums for DigitLevels {
    #[inline(always)]
    fn add(&mut self, k: usize, block: &[u8; 64], mask: u64) {
        #[cfg(target_arch = "x86_64")]
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
        #[cfg(not(target_arch = "x86_64"))]
        {
            let mut m = mask;
            while m != 0 {
                self.sums[k] += (block[m.trailing_zeros() as usize] - b'0') as u64;
                m &= m - 1;
            }
        }
    }

    fn total(&self) -> u64 {
        #[cfg(target_arch = "x86_64")]
        return place_values(self.sums.map(|s| s.iter().sum()));
        #[cfg(not(target_arch = "x86_64"))]
        place_values(self.sums)
    }
}

/// Σ_k 10^k × `sums[k]`.
fn place_values(sums: [u64; 8]) -> u64 {
    sums.iter().rev().fold(0, |t, &s| t * 10 + s)
}

/// [`DigitSums`] with AVX-512BW: a block is one 512-bit vector, a level's digits one
/// masked move and one sum of absolute differences.
#[cfg(target_arch = "x86_64")]
struct DigitLevels512 {
    /// Per level, the eight 64-bit lanes of its running sums.
    sums: [[u64; 8]; 8],
    /// The proof that the CPU has AVX-512BW.
    _cpu: Avx512,
}

#[cfg(target_arch = "x86_64")]
impl DigitLevels512 {
    fn new(cpu: Avx512) -> Self {
        DigitLevels512 {
            sums: [[0; 8]; 8],
            _cpu: cpu,
        }
    }
}

#[cfg(target_arch = "x86_64")]
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
    #[cfg(target_arch = "x86_64")]
    if let Some(cpu) = Avx512::detect() {
        // SAFETY: `cpu` proves AVX-512F/BW.
        return unsafe { digit_array_end_avx512(b, v, cpu) };
    }
    digit_array_end_of(b, v, Sse2)
}

/// [`digit_array_end`] compiled for AVX-512BW.
///
/// # Safety
/// None beyond `cpu` (a target-feature function is unsafe to call).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn digit_array_end_avx512(b: &[u8], v: usize, cpu: Avx512) -> Option<(usize, usize)> {
    digit_array_end_of(b, v, cpu)
}

/// [`digit_array_end`] with `blocks` for its 64-byte steps.
#[inline(always)]
fn digit_array_end_of(b: &[u8], v: usize, blocks: impl Blocks) -> Option<(usize, usize)> {
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
        let (c, others) = classify16(block.try_into().expect("16 bytes"));
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

/// Operations on 64-byte blocks, by instruction set: [`Sse2`] (the x86-64 baseline; scalar
/// elsewhere) or [`Avx512`] (a block is one vector). The hot loops are written once over
/// this trait and compiled once per instruction set, each copy chosen at run time.
trait Blocks: Copy {
    /// [`classify16`] of the first 64 bytes of `block` (at least 64 long; panics
    /// otherwise): bit k for byte k.
    fn classify64(self, block: &[u8]) -> (u64, u64);
    /// Bit i set where `w[i] == w[i + shift]`, for i in 0..64 (`w` has at least
    /// 64 + `shift` bytes; panics otherwise).
    #[cfg(target_arch = "x86_64")]
    fn shifted_equal64(self, w: &[u8], shift: usize) -> u64;
}

/// [`Blocks`] sixteen bytes at a time with SSE2.
#[derive(Clone, Copy)]
struct Sse2;

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

    #[cfg(target_arch = "x86_64")]
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

/// [`Blocks`] with AVX-512BW: a block is one 512-bit load and each mask one compare.
/// Only made by [`Avx512::detect`]: a value is the proof that the CPU has AVX-512F/BW.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Avx512(());

#[cfg(target_arch = "x86_64")]
impl Avx512 {
    /// `Some` when the CPU (and the OS) support AVX-512F and AVX-512BW (BW implies F); the
    /// check is cached by the standard library, one load after the first call.
    #[inline(always)]
    fn detect() -> Option<Self> {
        std::arch::is_x86_feature_detected!("avx512bw").then_some(Avx512(()))
    }
}

#[cfg(target_arch = "x86_64")]
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

/// Bit masks of the commas and of the bytes that are neither commas nor ASCII digits in a
/// 16-byte block (bit k for byte k).
#[inline(always)]
fn classify16(block: &[u8; 16]) -> (u32, u32) {
    #[cfg(target_arch = "x86_64")]
    {
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
    #[cfg(not(target_arch = "x86_64"))]
    {
        let (mut commas, mut others) = (0u32, 0u32);
        for (k, &c) in block.iter().enumerate() {
            commas |= ((c == b',') as u32) << k;
            others |= ((c != b',' && !c.is_ascii_digit()) as u32) << k;
        }
        (commas, others)
    }
}

/// The integer `b[start..end]` (1–8 ASCII digits, already checked to be digits).
#[inline(always)]
fn uint_at(b: &[u8], start: usize, end: usize) -> Option<u64> {
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

/// Eight bytes at `b[i..]` as a little-endian word, when there are eight.
#[inline(always)]
pub(crate) fn load8(b: &[u8], i: usize) -> Option<u64> {
    b.get(i..i + 8)
        .map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")))
}

/// Number of leading ASCII digits in a little-endian word (0–8).
#[inline(always)]
pub(crate) fn digit_count(chunk: u64) -> u32 {
    let x = chunk.wrapping_sub(0x3030_3030_3030_3030);
    // High bit set in a byte that is below '0' (wrapped) or above '9' (x + 0x76 ≥ 0x80).
    let non_digit = (x | x.wrapping_add(0x7676_7676_7676_7676)) & 0x8080_8080_8080_8080;
    non_digit.trailing_zeros() / 8
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
pub fn plain_int(tok: &[u8]) -> Option<i64> {
    let (neg, digits) = match tok.first()? {
        b'-' => (true, &tok[1..]),
        _ => (false, tok),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    // Digits before the last eight one by one; the last eight (of the 10–13 of a
    // timestamp) as one word, or one by one when there are fewer.
    let split = digits.len().saturating_sub(8);
    let (head, tail) = digits.split_at(if split > 0 { split } else { digits.len() });
    let mut v: i64 = 0;
    for &c in head {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as i64;
    }
    if let Ok(word) = <[u8; 8]>::try_from(tail) {
        let word = u64::from_le_bytes(word);
        if digit_count(word) != 8 {
            return None;
        }
        v = v * 100_000_000 + swar_value(word, 8);
    }
    Some(if neg { -v } else { v })
}

/// The content of a raw string value (`"abc"` → `abc`), or `None` when `raw` is not a string.
#[inline]
pub fn string_content(raw: &[u8]) -> Option<&[u8]> {
    if raw.len() >= 2 && raw[0] == b'"' && raw[raw.len() - 1] == b'"' {
        Some(&raw[1..raw.len() - 1])
    } else {
        None
    }
}

/// Decodes the content of a JSON string (without quotes). Escapes are resolved; a lone
/// surrogate (`\ud800` without its pair, seen in real function names) and invalid UTF-8
/// become U+FFFD instead of rejecting the file.
pub fn unescape(content: &[u8]) -> String {
    if memchr::memchr(b'\\', content).is_none() {
        return String::from_utf8_lossy(content).into_owned();
    }
    let mut out: Vec<u8> = Vec::with_capacity(content.len());
    let mut i = 0;
    while i < content.len() {
        let c = content[i];
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let Some(&e) = content.get(i + 1) else { break };
        i += 2;
        let simple = match e {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            b'/' => Some(b'/'),
            b'b' => Some(8),
            b'f' => Some(12),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        if e != b'u' {
            out.extend_from_slice("\u{FFFD}".as_bytes());
            continue;
        }
        let Some(hi) = hex4(content, i) else {
            out.extend_from_slice("\u{FFFD}".as_bytes());
            continue;
        };
        i += 4;
        let ch = if (0xD800..0xDC00).contains(&hi) {
            match (content.get(i..i + 2), hex4(content, i + 2)) {
                (Some(b"\\u"), Some(lo)) if (0xDC00..0xE000).contains(&lo) => {
                    i += 6;
                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                }
                _ => None,
            }
        } else {
            char::from_u32(hi)
        };
        let mut tmp = [0u8; 4];
        out.extend_from_slice(ch.unwrap_or('\u{FFFD}').encode_utf8(&mut tmp).as_bytes());
    }
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let s = b.get(i..i + 4)?;
    let mut v = 0u32;
    for &c in s {
        v = v * 16 + (c as char).to_digit(16)?;
    }
    Some(v)
}

/// Parses a raw JSON number (or a number inside a string, as some producers write it)
/// given in microseconds and returns nanoseconds, exactly for integers and decimals
/// (`141171.917` → `141171917`), through `f64` only for exponent notation.
/// Returns `None` for anything else (`null`, text, overflow).
pub fn micros_to_nanos(raw: &[u8]) -> Option<i64> {
    if let Some(us) = plain_int(raw) {
        return us.checked_mul(1000);
    }
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

/// Parses a raw `pid`/`tid`/node id: an integer, an integer in a string (`"1234"`), or a
/// float with no fraction (`12.0`). Other strings (hand-made traces name threads `"main"`)
/// are hashed to a stable non-negative number so that they still key threads apart.
pub fn integer(raw: &[u8]) -> Option<i64> {
    let s = string_content(raw).unwrap_or(raw);
    if let Some(v) = plain_int(s) {
        return Some(v); // the common case, without UTF-8 checks
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
        for _ in 0..3000 {
            let len = 1 + next(80) as usize;
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
                assert_eq!(
                    block,
                    skip_container_from(b, 0, 0, open, close),
                    "{}",
                    b.escape_ascii()
                );
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
    }

    /// [`plain_sum`] of the array `b`, checked to be what the SSE2 path gives (on a CPU
    /// with AVX-512BW, `plain_sum` takes the AVX-512 path).
    fn sum_all_paths(b: &[u8]) -> Option<PlainSum> {
        let sse2 = array_content(b, &(0..b.len()))
            .and_then(|c| plain_sum_of(c, Sse2, DigitLevels::default()));
        assert_eq!(
            plain_sum(b, &(0..b.len())),
            sse2,
            "{}",
            String::from_utf8_lossy(b)
        );
        sse2
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
                assert_eq!(digit_array_end_of(&b, 0, Sse2), expected);
                found += expected.is_some() as usize;
                refused += expected.is_none() as usize;
            }
        }
        assert!(found > 300 && refused > 300, "{found} {refused}");
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn inverse_widths_divide_exactly() {
        for (w, inverse) in INVERSE_WIDTH.iter().enumerate().skip(1) {
            for x in 0..=64 {
                assert_eq!((x * inverse) >> 16, x / w, "{x} / {w}");
            }
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
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

    #[test]
    fn skips_strings_with_escaped_quotes_and_braces() {
        let b = br#"{"a":"x\"}{","b":[1,{"c":"]"}]} tail"#;
        assert_eq!(skip_value(b, 0), Ok(b.len() - 5));
    }

    #[test]
    fn strings_end_at_the_first_unescaped_quote_in_every_position() {
        for len in 0..80 {
            let body: String = (0..len).map(|k| (b'a' + (k % 26) as u8) as char).collect();
            let s = format!("{body}\\\"x\"tail-padding-bytes");
            // body, an escaped quote, x, then the closing quote.
            assert_eq!(string_end(s.as_bytes(), 0), Ok(len + 3), "{len}");
            let t = format!("{body}\"");
            assert_eq!(string_end(t.as_bytes(), 0), Ok(len), "{len}");
            assert_eq!(
                string_end(body.as_bytes(), 0),
                Err(LexError::Incomplete),
                "{len}"
            );
        }
    }

    #[test]
    fn escaped_backslash_before_quote_ends_string() {
        let b = br#""abc\\" rest"#;
        assert_eq!(skip_value(b, 0), Ok(7));
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
    fn number_arrays_with_whitespace_floats_and_junk() {
        let mut toks = vec![];
        let n = number_array(b"[ 1, -20 ,3.5e1,null ]", 0, |t| toks.push(t.to_vec())).unwrap();
        assert_eq!(n, 4);
        assert_eq!(
            toks,
            [
                b"1".to_vec(),
                b"-20".to_vec(),
                b"3.5e1".to_vec(),
                b"null".to_vec()
            ]
        );
        assert_eq!(number_array(b"[]", 0, |_| ()), Ok(0));
        assert_eq!(number_array(b"[1,2", 0, |_| ()), Err(LexError::Incomplete));
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

    #[test]
    fn unescape_handles_pairs_and_lone_surrogates() {
        assert_eq!(unescape(br"a\u00e9b"), "a\u{e9}b");
        assert_eq!(unescape(br"\ud83d\ude00"), "\u{1F600}");
        assert_eq!(unescape(br"x\ud800y"), "x\u{FFFD}y");
        assert_eq!(unescape(br"\udc00"), "\u{FFFD}");
        assert_eq!(unescape(br#"q\"\\\/\n"#), "q\"\\/\n");
        assert_eq!(unescape("caf\u{e9}".as_bytes()), "caf\u{e9}");
    }
}

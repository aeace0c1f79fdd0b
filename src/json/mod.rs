//! A small JSON lexer over raw bytes: skip whitespace, strings and whole values without
//! building them, and read the few scalars a trace event's top level holds.
//!
//! Every function takes a byte slice and a 0-based offset and returns the offset just past
//! what it read. Running out of bytes is [`LexError::Incomplete`] (a file cut off, or a
//! block boundary in a stream); bytes that cannot be JSON are [`LexError::Malformed`] with
//! their offset. Skipping is fast because it only looks at quotes, backslashes and the
//! brackets of the value being skipped (memchr), and does not validate the inside of
//! nested values: the parts taskchain keeps are validated later by simd-json.
//!
//! By concern: [`strings`] (string ends, escapes), [`skip`] (whole values, object
//! members), [`numbers`] (number tokens and integers), [`chrome`] (the fast paths for
//! Chrome's sample arrays: plain digit-and-comma arrays read in 64-byte blocks). The block
//! operations are written once over [`simd::Blocks`] and compiled per instruction set
//! ([`simd`]: scalar, SSE2, AVX-512BW), one copy chosen at run time; the `no-simd` cargo
//! feature forces the scalar copies (the ones other CPUs take), for testing them on x86.

pub(crate) mod chrome;
pub(crate) mod copies;
pub(crate) mod numbers;
pub(crate) mod simd;
pub(crate) mod skip;
pub(crate) mod strings;

pub use chrome::{PlainSum, digit_array_end, plain_sum, plain_uints, plain_uints_into};
pub use numbers::{Token, int_array};
pub(crate) use numbers::{beyond_i64, fold_numbers, integer, micros_to_nanos, plain_int};
pub(crate) use skip::members_with;
pub(crate) use skip::{array, object, skip_value};
pub(crate) use strings::{
    control_in_string, string_content, string_end, string_end_escaped, unescape,
};

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
pub(crate) type Lexed<T> = Result<T, LexError>;

#[inline]
pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// Offset of the first non-whitespace byte at or after `i` (may be `b.len()`).
#[inline]
pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_ws(b[i]) {
        i += 1;
    }
    i
}

// Word-at-a-time (SWAR) helpers of the string, skip and number readers.

/// High bit set in each byte of `w` equal to `c` (exact for the lowest such byte, which
/// is all callers use).
#[inline(always)]
pub(crate) fn bytes_equal(w: u64, c: u8) -> u64 {
    let x = w ^ (0x0101_0101_0101_0101u64 * c as u64);
    x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080
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

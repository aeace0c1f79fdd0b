//! `args` of the events taskchain keeps, parsed with simd-json one event at a time.
//!
//! simd-json parses in place, so the raw bytes are copied into a small buffer reused for
//! every event (never the whole file). Real traces hold text simd-json rejects — lone
//! UTF-16 surrogates in `\u` escapes (function names) and invalid UTF-8 — so a failed
//! parse is retried once on a copy where those become U+FFFD.

use simd_json::BorrowedValue;
use simd_json::prelude::*;

/// Reusable parser for `args` objects. One per scanning thread.
pub struct ArgsParser {
    buf: Vec<u8>,
    buffers: simd_json::Buffers,
}

impl Default for ArgsParser {
    /// Empty buffers, grown to the largest value parsed: a 1 GB trace is scanned in ~60
    /// ranges, each with its own parser, and most values parsed are a few hundred bytes.
    fn default() -> Self {
        ArgsParser {
            buf: Vec::new(),
            buffers: simd_json::Buffers::new(0),
        }
    }
}

impl ArgsParser {
    /// Parses `raw` (one JSON value) and hands the value to `f`. `None` when the bytes are
    /// not JSON even after repairing surrogates and UTF-8.
    pub fn with<R>(&mut self, raw: &[u8], f: impl FnOnce(&BorrowedValue<'_>) -> R) -> Option<R> {
        self.buf.clear();
        self.buf.extend_from_slice(raw);
        if let Ok(v) = simd_json::to_borrowed_value_with_buffers(&mut self.buf, &mut self.buffers) {
            return Some(f(&v));
        }
        self.buf.clear();
        repair(raw, &mut self.buf);
        simd_json::to_borrowed_value_with_buffers(&mut self.buf, &mut self.buffers)
            .ok()
            .map(|v| f(&v))
    }
}

/// Copies `raw` into `out`, replacing invalid UTF-8 and `\u` escapes of lone surrogates
/// with U+FFFD (as an escape), so that a strict parser accepts it.
fn repair(raw: &[u8], out: &mut Vec<u8>) {
    let text = String::from_utf8_lossy(raw);
    let b = text.as_bytes();
    let hex = |i: usize| -> Option<u32> {
        let s = std::str::from_utf8(b.get(i..i + 4)?).ok()?;
        u32::from_str_radix(s, 16).ok()
    };
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        if b.get(i + 1) != Some(&b'u') {
            out.extend_from_slice(&b[i..(i + 2).min(b.len())]);
            i += 2;
            continue;
        }
        match hex(i + 2) {
            Some(hi @ 0xD800..=0xDBFF) => {
                let paired = b.get(i + 6..i + 8) == Some(b"\\u")
                    && matches!(hex(i + 8), Some(0xDC00..=0xDFFF));
                if paired {
                    out.extend_from_slice(&b[i..i + 12]);
                    i += 12;
                } else {
                    let _ = hi;
                    out.extend_from_slice(b"\\uFFFD");
                    i += 6;
                }
            }
            Some(0xDC00..=0xDFFF) => {
                out.extend_from_slice(b"\\uFFFD");
                i += 6;
            }
            _ => {
                out.extend_from_slice(&b[i..i + 2]);
                i += 2;
            }
        }
    }
}

/// A number as `i64`: integers, floats without fraction, and integers written as strings.
pub fn int(v: &BorrowedValue<'_>) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    if let Some(f) = v.cast_f64() {
        return (f.fract() == 0.0 && f.abs() < 9.0e18).then_some(f as i64);
    }
    v.as_str().and_then(|s| s.trim().parse().ok())
}

/// A time in µs (integer, float or numeric string) as nanoseconds.
pub fn micros_as_nanos(v: &BorrowedValue<'_>) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return i.checked_mul(1000);
    }
    if let Some(f) = v.cast_f64() {
        let ns = f * 1000.0;
        return (ns.is_finite() && ns.abs() < 9.0e18).then(|| ns.round() as i64);
    }
    v.as_str()
        .and_then(|s| crate::json::micros_to_nanos(s.trim().as_bytes()))
}

/// `v[key]` when `v` is an object.
pub fn field<'v, 'a>(v: &'v BorrowedValue<'a>, key: &str) -> Option<&'v BorrowedValue<'a>> {
    let o = v.as_object()?;
    if o.len() > 32 {
        // Hash-backed: the parser kept the last of a repeated key.
        return o.get(key);
    }
    // Small objects keep every member in file order, a repeated key too: the last one
    // counts, as in other JSON readers.
    o.iter().filter(|(k, _)| *k == key).last().map(|(_, x)| x)
}

/// `v[key]` as text (owned), when it is a string.
pub fn text(v: &BorrowedValue<'_>, key: &str) -> Option<String> {
    field(v, key).and_then(|x| x.as_str()).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_and_bad_utf8_are_repaired() {
        let mut p = ArgsParser::default();
        let raw = b"{\"name\":\"a\\ud800b\",\"x\":\"\xff\",\"ok\":\"\\ud83d\\ude00\"}";
        let got = p
            .with(raw, |v| {
                (
                    text(v, "name").unwrap(),
                    text(v, "x").unwrap(),
                    text(v, "ok").unwrap(),
                )
            })
            .unwrap();
        assert_eq!(got.0, "a\u{FFFD}b");
        assert_eq!(got.1, "\u{FFFD}");
        assert_eq!(got.2, "\u{1F600}");
    }

    #[test]
    fn numbers_in_all_spellings() {
        let mut p = ArgsParser::default();
        let got = p
            .with(
                br#"{"a":5,"b":5.0,"c":"7","d":1e3,"e":123456789012345678901234567890}"#,
                |v| {
                    (
                        int(field(v, "a").unwrap()),
                        int(field(v, "b").unwrap()),
                        int(field(v, "c").unwrap()),
                        micros_as_nanos(field(v, "d").unwrap()),
                        int(field(v, "e").unwrap()),
                    )
                },
            )
            .unwrap();
        assert_eq!(got, (Some(5), Some(5), Some(7), Some(1_000_000), None));
    }

    #[test]
    fn not_json_gives_none() {
        assert_eq!(ArgsParser::default().with(b"{\"a\":", |_| ()), None);
    }
}

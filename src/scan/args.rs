//! `args` of the events taskchain keeps, parsed with simd-json one event at a time.
//!
//! simd-json parses in place, so the raw bytes are copied into a small buffer reused for
//! every event (never the whole file). Real traces hold text simd-json rejects — lone
//! UTF-16 surrogates in `\u` escapes (function names) and invalid UTF-8 — so a failed
//! parse is retried once on a copy where those become U+FFFD. A value over
//! [`LONG_STRING`] bytes is copied with each string longer than that cut to it, so that a
//! 2 GiB function or thread name costs 1 MiB, not several copies of itself.

use simd_json::BorrowedValue;
use simd_json::prelude::*;

/// Longest string kept, in bytes of its JSON text (escapes count as written): longer
/// ones (function names, URLs, thread names) are cut to it at a character boundary, and
/// the rows of the file are flagged `string_cut`.
pub(crate) const LONG_STRING: usize = 1 << 20;

/// The [`crate::vocab::Diagnostics`] kind counting strings cut to [`LONG_STRING`].
pub(crate) const STRINGS_CUT: &str = "strings longer than 1 MiB (names, URLs) cut to 1 MiB";

/// Reusable parser for `args` objects. One per scanning thread.
pub struct ArgsParser {
    buf: Vec<u8>,
    buffers: simd_json::Buffers,
    /// A long value with its long strings cut.
    shortened: Vec<u8>,
    /// Strings cut to `LONG_STRING` so far.
    pub cut: u64,
}

impl Default for ArgsParser {
    /// Empty buffers, grown to the largest value parsed: a 1 GB trace is scanned in ~60
    /// ranges, each with its own parser, and most values parsed are a few hundred bytes.
    fn default() -> Self {
        ArgsParser {
            buf: Vec::new(),
            buffers: simd_json::Buffers::new(0),
            shortened: Vec::new(),
            cut: 0,
        }
    }
}

impl ArgsParser {
    /// Parses `raw` (one JSON value) and hands the value to `f`. `None` when the bytes are
    /// not JSON even after repairing surrogates and UTF-8.
    pub(crate) fn with<R>(
        &mut self,
        raw: &[u8],
        f: impl FnOnce(&BorrowedValue<'_>) -> R,
    ) -> Option<R> {
        let raw = if raw.len() > LONG_STRING {
            self.shortened.clear();
            self.cut += cut_long_strings(raw, &mut self.shortened);
            &self.shortened[..]
        } else {
            raw
        };
        self.buf.clear();
        self.buf.extend_from_slice(raw);
        if let Ok(v) = simd_json::to_borrowed_value_with_buffers(&mut self.buf, &mut self.buffers) {
            return Some(f(&v));
        }
        self.buf.clear();
        repair(raw, &mut self.buf);
        if let Ok(v) = simd_json::to_borrowed_value_with_buffers(&mut self.buf, &mut self.buffers) {
            return Some(f(&v));
        }
        // A number no 64-bit float holds (`1e400`) fails the whole value: read as `null`,
        // it costs only the field that holds it.
        let mut repaired = Vec::new();
        repair(raw, &mut repaired);
        self.buf.clear();
        if !nulls_for_infinite_numbers(&repaired, &mut self.buf) {
            return None;
        }
        simd_json::to_borrowed_value_with_buffers(&mut self.buf, &mut self.buffers)
            .ok()
            .map(|v| f(&v))
    }
}

/// Copies `raw` into `out` with each number outside strings that no `f64` holds (`1e400`,
/// `-1e999`) written as `null`; `false` when there is none (nothing to retry).
fn nulls_for_infinite_numbers(raw: &[u8], out: &mut Vec<u8>) -> bool {
    let mut changed = false;
    let mut in_string = false;
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if in_string {
            out.push(b);
            match b {
                b'\\' => {
                    if let Some(&n) = raw.get(i + 1) {
                        out.push(n);
                    }
                    i += 2;
                    continue;
                }
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
        } else if b == b'-' || b.is_ascii_digit() {
            let end = raw[i..]
                .iter()
                .position(|c| !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                .map_or(raw.len(), |p| i + p);
            let number = std::str::from_utf8(&raw[i..end]).ok();
            if number
                .and_then(|t| t.parse::<f64>().ok())
                .is_some_and(|f| f.is_infinite())
            {
                out.extend_from_slice(b"null");
                changed = true;
            } else {
                out.extend_from_slice(&raw[i..end]);
            }
            i = end;
            continue;
        }
        out.push(b);
        i += 1;
    }
    changed
}

impl ArgsParser {
    /// [`ArgsParser::with`], handing `f` the parser's tape (the values in file order,
    /// every member of an object kept, a repeated key too) rather than a tree of maps:
    /// the same bytes are accepted and the same repairs and cuts made.
    pub(crate) fn with_tape<R>(
        &mut self,
        raw: &[u8],
        f: impl FnOnce(simd_json::tape::Value<'_, '_>) -> R,
    ) -> Option<R> {
        let raw = if raw.len() > LONG_STRING {
            self.shortened.clear();
            self.cut += cut_long_strings(raw, &mut self.shortened);
            &self.shortened[..]
        } else {
            raw
        };
        self.buf.clear();
        self.buf.extend_from_slice(raw);
        if let Ok(t) = simd_json::to_tape_with_buffers(&mut self.buf, &mut self.buffers) {
            return Some(f(t.as_value()));
        }
        self.buf.clear();
        repair(raw, &mut self.buf);
        simd_json::to_tape_with_buffers(&mut self.buf, &mut self.buffers)
            .ok()
            .map(|t| f(t.as_value()))
    }
}

/// Copies `raw` to `out` with each string whose content is longer than [`LONG_STRING`]
/// bytes cut to at most that many, at a character and escape boundary; returns how many
/// were cut. Bytes that are not JSON are copied as they are (the parser then says so).
fn cut_long_strings(raw: &[u8], out: &mut Vec<u8>) -> u64 {
    let (mut cut, mut i) = (0, 0);
    while let Some(k) = memchr::memchr(b'"', &raw[i..]) {
        let open = i + k;
        out.extend_from_slice(&raw[i..=open]);
        let Ok(close) = crate::json::string_end(raw, open + 1) else {
            i = open + 1;
            break;
        };
        let content = &raw[open + 1..close];
        if content.len() > LONG_STRING {
            out.extend_from_slice(&content[..cut_point(content, LONG_STRING)]);
            cut += 1;
        } else {
            out.extend_from_slice(content);
        }
        out.push(b'"');
        i = close + 1;
    }
    out.extend_from_slice(&raw[i..]);
    cut
}

/// The longest prefix of a string's raw content of at most `limit` bytes that ends
/// neither inside an escape (a `\u` surrogate pair counts as one) nor inside a UTF-8
/// character.
fn cut_point(content: &[u8], limit: usize) -> usize {
    let mut j = 0;
    while j < content.len() {
        let step = match (content[j], content.get(j + 1)) {
            (b'\\', Some(b'u')) => {
                let high = content.get(j + 2..j + 4).is_some_and(|h| {
                    h[0].eq_ignore_ascii_case(&b'd')
                        && matches!(h[1], b'8'..=b'9' | b'a'..=b'b' | b'A'..=b'B')
                });
                if high { 12 } else { 6 }
            }
            (b'\\', _) => 2,
            _ => 1,
        };
        if j + step > limit {
            break;
        }
        j += step;
    }
    // `content[j]` is the first byte left out: step back off a character it continues.
    while j > 0 && j < content.len() && content[j] & 0xC0 == 0x80 {
        j -= 1;
    }
    j
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
pub(crate) fn int(v: &BorrowedValue<'_>) -> Option<i64> {
    scalar_int(v)
}

/// [`int`] of any parsed scalar (a tree's value or a tape's).
pub(crate) fn scalar_int<V: ValueAsScalar + ?Sized>(v: &V) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    if let Some(f) = v.cast_f64() {
        return (f.fract() == 0.0 && f.abs() < 9.0e18).then_some(f as i64);
    }
    v.as_str().and_then(|s| s.trim().parse().ok())
}

/// A time in µs (integer, float or numeric string) as nanoseconds.
pub(crate) fn micros_as_nanos(v: &BorrowedValue<'_>) -> Option<i64> {
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
pub(crate) fn field<'v, 'a>(v: &'v BorrowedValue<'a>, key: &str) -> Option<&'v BorrowedValue<'a>> {
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
pub(crate) fn text(v: &BorrowedValue<'_>, key: &str) -> Option<String> {
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
    fn strings_over_a_mib_are_cut_at_a_character_boundary() {
        let mut p = ArgsParser::default();
        // A name of 1 MiB + 10 bytes whose 1 MiB-th byte is inside "é" (2 bytes), and a
        // short URL: the name is cut before the "é", the URL kept whole.
        let mut name = "a".repeat(LONG_STRING - 1);
        name.push('é');
        name.push_str("bcdefghi");
        let raw = format!(r#"{{"name":"{name}","url":"u.js"}}"#);
        let got = p
            .with(raw.as_bytes(), |v| {
                (text(v, "name").unwrap(), text(v, "url").unwrap())
            })
            .unwrap();
        assert_eq!(got.0.len(), LONG_STRING - 1);
        assert!(got.0.bytes().all(|b| b == b'a'));
        assert_eq!(got.1, "u.js");
        assert_eq!(p.cut, 1);
        // An escape is not split: `\n` across the limit is left out whole.
        let name = format!("{}\\n{}", "b".repeat(LONG_STRING - 1), "c".repeat(20));
        let raw = format!(r#"{{"name":"{name}"}}"#);
        let got = p
            .with(raw.as_bytes(), |v| text(v, "name").unwrap())
            .unwrap();
        assert_eq!(got, "b".repeat(LONG_STRING - 1));
        assert_eq!(p.cut, 2);
        // Up to the limit nothing is cut.
        let raw = format!(r#"{{"name":"{}"}}"#, "d".repeat(LONG_STRING));
        let got = p
            .with(raw.as_bytes(), |v| text(v, "name").unwrap())
            .unwrap();
        assert_eq!(got.len(), LONG_STRING);
        assert_eq!(p.cut, 2);
    }

    #[test]
    fn not_json_gives_none() {
        assert_eq!(ArgsParser::default().with(b"{\"a\":", |_| ()), None);
    }
}

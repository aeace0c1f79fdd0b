//! Strings: where a string ends (quotes, escapes, eight bytes at a time), a raw string's
//! content, and unescaping.

use memchr::memchr2;

use super::{LexError, Lexed, bytes_equal, load8};

/// `i` is just past an opening quote; returns the offset of the closing quote.
/// Eight bytes at a time (most strings in a trace are short keys and names), then a SIMD
/// search once the string proves long (URLs, base64 screenshots).
#[inline]
pub(crate) fn string_end(b: &[u8], i: usize) -> Lexed<usize> {
    string_end_escaped(b, i).map(|(end, _)| end)
}

/// [`string_end`], and whether the string holds an escape (a backslash): its content is
/// then not its text ([`unescape`]).
#[inline(always)]
pub(crate) fn string_end_escaped(b: &[u8], mut i: usize) -> Lexed<(usize, bool)> {
    let start = i;
    let mut escaped = false;
    while let Some(w) = load8(b, i) {
        let hit = bytes_equal(w, b'"') | bytes_equal(w, b'\\');
        if hit != 0 {
            let j = i + (hit.trailing_zeros() / 8) as usize;
            if b[j] == b'"' {
                return Ok((j, escaped));
            }
            // A backslash escapes the next byte (for `\u` the 4 hex digits are not quotes).
            escaped = true;
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
                    return Ok((j, escaped));
                }
                escaped = true;
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
pub(crate) fn control_in_string(b: &[u8], i: usize) -> Option<usize> {
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

/// The content of a raw string value (`"abc"` → `abc`), or `None` when `raw` is not a string.
#[inline]
pub(crate) fn string_content(raw: &[u8]) -> Option<&[u8]> {
    if raw.len() >= 2 && raw[0] == b'"' && raw[raw.len() - 1] == b'"' {
        Some(&raw[1..raw.len() - 1])
    } else {
        None
    }
}

/// Decodes the content of a JSON string (without quotes). Escapes are resolved; a lone
/// surrogate (`\ud800` without its pair, seen in real function names) and invalid UTF-8
/// become U+FFFD instead of rejecting the file.
pub(crate) fn unescape(content: &[u8]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::skip_value;

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
    fn unescape_handles_pairs_and_lone_surrogates() {
        assert_eq!(unescape(br"a\u00e9b"), "a\u{e9}b");
        assert_eq!(unescape(br"\ud83d\ude00"), "\u{1F600}");
        assert_eq!(unescape(br"x\ud800y"), "x\u{FFFD}y");
        assert_eq!(unescape(br"\udc00"), "\u{FFFD}");
        assert_eq!(unescape(br#"q\"\\\/\n"#), "q\"\\/\n");
        assert_eq!(unescape("caf\u{e9}".as_bytes()), "caf\u{e9}");
    }
}

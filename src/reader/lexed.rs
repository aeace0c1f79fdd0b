//! A JSON object read member by member over its raw bytes with the trace scanner's lexer
//! ([`crate::json`]), for the field formats: no whole-document parse. Each member is a
//! byte range; arrays are walked element by element (each element parsed alone, with the
//! scanner's [`ArgsParser`], and dropped), and number arrays are read token by token in
//! step with each other ([`Numbers`]). Memory is bounded by the answer (the nodes, the
//! packed samples), not by the size of the document.
//!
//! Errors name the byte offset (0-based, in the whole file) and what was expected there.

use std::ops::Range;

use simd_json::BorrowedValue;

use crate::json::{LexError, Token, array, object, skip_value, skip_ws, unescape};
use crate::scan::args::ArgsParser;

/// A UTF-8 byte order mark, skipped before the top-level value.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The message of a lexer error met while reading `what`.
pub(crate) fn lex_error(e: LexError, len: usize, what: &str) -> String {
    match e {
        LexError::Incomplete => {
            format!("cut off: the file ends at byte {len} inside {what}")
        }
        LexError::Malformed { offset, expected } => {
            format!("invalid JSON at byte {offset} in {what}: expected {expected}")
        }
    }
}

/// The members of one JSON object: key (unescaped) → value range. When a key repeats,
/// the last one wins (as in JavaScript's `JSON.parse`).
pub struct Members<'a> {
    bytes: &'a [u8],
    members: Vec<(String, Range<usize>)>,
}

impl<'a> Members<'a> {
    /// The top-level object of a whole file (after an optional BOM and whitespace); only
    /// whitespace may follow it.
    pub fn document(bytes: &'a [u8]) -> Result<Members<'a>, String> {
        let start = skip_ws(bytes, if bytes.starts_with(BOM) { 3 } else { 0 });
        let m = Members::at(bytes, start, "the top-level object")?;
        let end = m.end;
        let rest = skip_ws(bytes, end);
        if rest < bytes.len() {
            return Err(format!(
                "invalid JSON at byte {rest}: expected the end of the file after the \
                 top-level object (it ends at byte {end}; {} bytes follow)",
                bytes.len() - rest
            ));
        }
        Ok(m.members)
    }

    /// The object at `bytes[i]`, with the offset just past it.
    fn at(bytes: &'a [u8], i: usize, what: &str) -> Result<WithEnd<'a>, String> {
        let mut members: Vec<(String, Range<usize>)> = Vec::new();
        let end = object(bytes, i, |k, v| {
            Some(skip_value(bytes, v).inspect(|&end| members.push((unescape(k), v..end))))
        })
        .map_err(|e| lex_error(e, bytes.len(), what))?;
        Ok(WithEnd {
            members: Members { bytes, members },
            end,
        })
    }

    /// The raw value of `key`, when present.
    pub fn raw(&self, key: &str) -> Option<&'a [u8]> {
        self.range(key).map(|r| &self.bytes[r])
    }

    fn range(&self, key: &str) -> Option<Range<usize>> {
        self.members
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, r)| r.clone())
    }

    /// True when `key` is present.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.range(key).is_some()
    }

    /// `key`'s value parsed alone and handed to `f`; `Ok(None)` when absent.
    pub(crate) fn value<R>(
        &self,
        p: &mut ArgsParser,
        key: &str,
        f: impl FnOnce(&BorrowedValue<'_>) -> R,
    ) -> Result<Option<R>, String> {
        let Some(r) = self.range(key) else {
            return Ok(None);
        };
        p.with(&self.bytes[r.clone()], f).map(Some).ok_or_else(|| {
            format!(
                "in \"{key}\": {}",
                parse_failure(&self.bytes[r.clone()], r.start)
            )
        })
    }

    /// `key`'s value when it is an object.
    pub fn object(&self, key: &str) -> Result<Option<Members<'a>>, String> {
        match self.range(key) {
            Some(r) if self.bytes[r.start] == b'{' => {
                Ok(Some(Members::at(self.bytes, r.start, key)?.members))
            }
            _ => Ok(None),
        }
    }

    /// Hands each element of `key`'s array, parsed alone, to `f` with its index; returns
    /// the element count, `None` when `key` is absent or not an array.
    pub fn elements(
        &self,
        p: &mut ArgsParser,
        key: &str,
        mut f: impl FnMut(usize, &BorrowedValue<'_>),
    ) -> Result<Option<usize>, String> {
        let Some(r) = self.range(key).filter(|r| self.bytes[r.start] == b'[') else {
            return Ok(None);
        };
        let b = self.bytes;
        let mut bad = None;
        let mut n = 0;
        array(b, r.start, |k, v| {
            let end = skip_value(b, v)?;
            n = k + 1;
            if bad.is_none() && p.with(&b[v..end], |e| f(k, e)).is_none() {
                bad = Some(format!(
                    "in \"{key}\" element {k}: {}",
                    parse_failure(&b[v..end], v)
                ));
            }
            Ok(end)
        })
        .map_err(|e| lex_error(e, b.len(), &format!("\"{key}\"")))?;
        match bad {
            Some(e) => Err(e),
            None => Ok(Some(n)),
        }
    }

    /// A reader of `key`'s number array, `None` when `key` is absent or not an array.
    pub fn numbers(&self, key: &'static str) -> Option<Numbers<'a>> {
        let r = self.range(key).filter(|r| self.bytes[r.start] == b'[')?;
        Some(Numbers {
            b: self.bytes,
            j: skip_ws(self.bytes, r.start + 1),
            first: true,
            done: false,
            key,
        })
    }
}

struct WithEnd<'a> {
    members: Members<'a>,
    end: usize,
}

/// A JSON number array read one element at a time (so that two arrays can be read in
/// step): plain integers as [`Token::Int`], any other element as its raw bytes.
pub struct Numbers<'a> {
    b: &'a [u8],
    j: usize,
    first: bool,
    done: bool,
    key: &'static str,
}

impl<'a> Numbers<'a> {
    /// The next element; `Ok(None)` after the last. Errors name the byte offset.
    pub fn next_token(&mut self) -> Result<Option<Token<'a>>, String> {
        if self.done {
            return Ok(None);
        }
        let b = self.b;
        let mut j = self.j;
        if self.first {
            self.first = false;
            if b.get(j) == Some(&b']') {
                self.done = true;
                return Ok(None);
            }
        }
        let start = j;
        while j < b.len() && matches!(b[j], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
            j += 1;
        }
        if j == start {
            j = skip_value(b, start).map_err(|e| self.error(e))?;
        }
        let raw = &b[start..j];
        let token = match crate::json::plain_int(raw) {
            // `-` alone, `--1` and the like are not integers: the parser says what they are.
            Some(v) if raw[0] != b'-' || raw.len() > 1 => Token::Int(v),
            _ => Token::Other(raw),
        };
        j = skip_ws(b, j);
        match b.get(j) {
            Some(b',') => self.j = skip_ws(b, j + 1),
            Some(b']') => self.done = true,
            None => return Err(self.error(LexError::Incomplete)),
            Some(_) => {
                return Err(self.error(LexError::Malformed {
                    offset: j,
                    expected: "',' or ']'",
                }));
            }
        }
        Ok(Some(token))
    }

    fn error(&self, e: LexError) -> String {
        lex_error(e, self.b.len(), &format!("\"{}\"", self.key))
    }
}

/// How deep `bytes` (valid JSON) nests: its most arrays and objects open at once.
fn depth(bytes: &[u8]) -> usize {
    let (mut d, mut most, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                d += 1;
                most = most.max(d);
            }
            b']' | b'}' => d = d.saturating_sub(1),
            _ => {}
        }
    }
    most
}

/// Why `bytes` (starting at byte `shift` of the file) did not parse: where and what was
/// expected (serde_json finds the first bad byte, as its line and column), or that the
/// JSON is valid but nested deeper than the parser takes.
pub(crate) fn parse_failure(bytes: &[u8], shift: usize) -> String {
    use serde_json::error::Category;
    let deep = || {
        "nested deeper than the JSON parser's limit of 1024 levels (a `head` tree deeper \
         than about 500 frames); not supported"
            .to_string()
    };
    let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(bytes) else {
        // Valid JSON the lexer's parser refused: too deep, or a value it cannot hold.
        return if depth(bytes) > 1000 {
            deep()
        } else {
            "a value the JSON parser cannot read (valid JSON, not nested deep)".to_string()
        };
    };
    let what = e.to_string();
    let what = what.split(" at line ").next().unwrap_or(&what);
    if what.contains("recursion limit") {
        return deep();
    }
    // serde_json counts lines from 1 and columns (bytes) from 1, at the byte it stopped on.
    let line_start: usize = bytes
        .split(|&c| c == b'\n')
        .take(e.line().saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    let offset = (line_start + e.column().saturating_sub(1)).min(bytes.len()) + shift;
    match e.classify() {
        Category::Eof => format!("the file ends at byte {offset} inside a value (cut off)"),
        _ => format!("invalid JSON at byte {offset}: {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::args::int;

    #[test]
    fn members_last_key_wins_and_values_parse_alone() {
        let b = "\u{FEFF} {\"a\":1,\"b\":{\"c\":[1,2]},\"a\":[3, 4.5,\"6\"]} \n";
        let m = Members::document(b.as_bytes()).unwrap();
        let mut p = ArgsParser::default();
        assert_eq!(m.raw("a"), Some(&b"[3, 4.5,\"6\"]"[..]));
        let mut got = vec![];
        assert_eq!(
            m.elements(&mut p, "a", |k, v| got.push((k, int(v)))),
            Ok(Some(3))
        );
        assert_eq!(got, [(0, Some(3)), (1, None), (2, Some(6))]);
        let inner = m.object("b").unwrap().unwrap();
        assert_eq!(inner.raw("c"), Some(&b"[1,2]"[..]));
        assert!(m.object("a").unwrap().is_none());
        let mut n = m.numbers("a").unwrap();
        assert_eq!(n.next_token(), Ok(Some(Token::Int(3))));
        assert_eq!(n.next_token(), Ok(Some(Token::Other(b"4.5"))));
        assert_eq!(n.next_token(), Ok(Some(Token::Other(b"\"6\""))));
        assert_eq!(n.next_token(), Ok(None));
    }

    #[test]
    fn errors_name_the_byte() {
        let e = |b: &str| Members::document(b.as_bytes()).err().unwrap();
        assert_eq!(
            e(r#"{"a":1 "b":2}"#),
            "invalid JSON at byte 7 in the top-level object: expected ',' or '}'"
        );
        assert_eq!(
            e(r#"{"a":[1,2"#),
            "cut off: the file ends at byte 9 inside the top-level object"
        );
        assert!(e(r#"{"a":1} {"b":2}"#).starts_with("invalid JSON at byte 8: expected the end"));
        let m = Members::document(br#"{"s":[1,NaN]}"#).unwrap();
        let mut n = m.numbers("s").unwrap();
        assert_eq!(n.next_token(), Ok(Some(Token::Int(1))));
        assert_eq!(
            n.next_token(),
            Err("invalid JSON at byte 8 in \"s\": expected a JSON value".into())
        );
        let m = Members::document(br#"{"n":[{"id":1},{"id":}]}"#).unwrap();
        assert_eq!(
            m.elements(&mut ArgsParser::default(), "n", |_, _| ()),
            // The element starts at byte 15; its bad byte, the `}` after `"id":`, is 21.
            Err("in \"n\" element 1: invalid JSON at byte 21: expected value".into())
        );
    }
}

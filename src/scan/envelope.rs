//! Which JSON shape a file has, and where its trace events start.
//!
//! Shapes (FORMAT-NOTES §1.2): a bare array `[event, ...]` (DevTools up to ~M113, Chrome
//! 65–85); an object whose `traceEvents` key holds the array, with other keys (`metadata`)
//! before or after it (DevTools since ~M114, Lighthouse, chrome://tracing); event objects
//! one after another without brackets (NDJSON, cheap to accept); and other objects, such as
//! a `.cpuprofile`, which are returned with their top-level keys for the caller to judge.

use crate::json::{LexError, skip_value, skip_ws, string_end};

/// Where a file's content starts and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Envelope {
    /// Trace events start at byte `start` (just past the `[`, or at the first `{` of
    /// NDJSON). `in_object`: the array is the value of `traceEvents`.
    Events {
        /// 0-based byte offset of the first event (or whitespace before it).
        start: usize,
        /// True for the `{"traceEvents": [...]}` form.
        in_object: bool,
    },
    /// A JSON object without `traceEvents`: its top-level keys, in file order.
    OtherObject {
        /// Top-level keys (unescaped).
        keys: Vec<String>,
    },
}

/// Why a file is not a trace at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    /// Empty or whitespace only.
    #[error("the file is empty")]
    Empty,
    /// UTF-16 byte-order mark.
    #[error("the file is UTF-16 text; taskchain reads UTF-8 JSON (convert it with iconv)")]
    Utf16,
    /// First byte is neither `[` nor `{`.
    #[error(
        "not JSON trace data: starts with byte 0x{byte:02x} at offset {offset} (want a JSON array or {{\"traceEvents\": ...}})"
    )]
    NotJson {
        /// The offending byte.
        byte: u8,
        /// Its 0-based offset.
        offset: usize,
    },
    /// The top-level object ends (or the file ends) before any `traceEvents`.
    #[error("the top-level object is cut off at byte {offset} before any traceEvents array")]
    CutOff {
        /// Where the bytes ended or went wrong.
        offset: usize,
    },
    /// `traceEvents` is present but not an array.
    #[error("\"traceEvents\" at byte {offset} is not an array")]
    EventsNotArray {
        /// Offset of the value.
        offset: usize,
    },
}

impl EnvelopeError {
    /// The same error with its offset moved `by` bytes later (for bytes that were
    /// looked at after `by` bytes of leading whitespace were dropped).
    pub fn shifted(self, by: usize) -> Self {
        match self {
            EnvelopeError::NotJson { byte, offset } => EnvelopeError::NotJson {
                byte,
                offset: offset + by,
            },
            EnvelopeError::CutOff { offset } => EnvelopeError::CutOff {
                offset: offset + by,
            },
            EnvelopeError::EventsNotArray { offset } => EnvelopeError::EventsNotArray {
                offset: offset + by,
            },
            e => e,
        }
    }
}

/// Detects the envelope of a whole file held in `b`.
pub fn detect(b: &[u8]) -> Result<Envelope, EnvelopeError> {
    if b.starts_with(&[0xFF, 0xFE]) || b.starts_with(&[0xFE, 0xFF]) {
        return Err(EnvelopeError::Utf16);
    }
    let mut i = if b.starts_with(&[0xEF, 0xBB, 0xBF]) {
        3
    } else {
        0
    };
    i = skip_ws(b, i);
    match b.get(i) {
        None => Err(EnvelopeError::Empty),
        Some(b'[') => Ok(Envelope::Events {
            start: i + 1,
            in_object: false,
        }),
        Some(b'{') => object(b, i),
        Some(&byte) => Err(EnvelopeError::NotJson { byte, offset: i }),
    }
}

fn object(b: &[u8], open: usize) -> Result<Envelope, EnvelopeError> {
    let cut = |offset: usize| EnvelopeError::CutOff { offset };
    let mut keys = Vec::new();
    let mut j = skip_ws(b, open + 1);
    loop {
        match b.get(j) {
            Some(b'"') => {}
            Some(b'}') => return Ok(Envelope::OtherObject { keys }),
            _ => return Err(cut(j)),
        }
        let key_end = string_end(b, j + 1).map_err(|_| cut(j))?;
        let key = &b[j + 1..key_end];
        j = skip_ws(b, key_end + 1);
        if b.get(j) != Some(&b':') {
            return Err(cut(j));
        }
        let v = skip_ws(b, j + 1);
        if key == b"traceEvents" {
            return match b.get(v) {
                Some(b'[') => Ok(Envelope::Events {
                    start: v + 1,
                    in_object: true,
                }),
                None => Err(cut(v)),
                _ => Err(EnvelopeError::EventsNotArray { offset: v }),
            };
        }
        // A trace event itself at top level: NDJSON (one event object after another).
        if keys.is_empty()
            && looks_like_event_key(key)
            && let Ok(end) = skip_value(b, open)
            && matches!(b.get(skip_ws(b, end)), Some(b'{') | None)
            && event_has_phase(&b[open..end])
        {
            return Ok(Envelope::Events {
                start: open,
                in_object: false,
            });
        }
        keys.push(crate::json::unescape(key));
        let end = match skip_value(b, v) {
            Ok(end) => end,
            Err(LexError::Incomplete) => return Err(cut(b.len())),
            Err(LexError::Malformed { offset, .. }) => return Err(cut(offset)),
        };
        j = skip_ws(b, end);
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b'}') => return Ok(Envelope::OtherObject { keys }),
            _ => return Err(cut(j)),
        }
    }
}

fn looks_like_event_key(key: &[u8]) -> bool {
    matches!(
        key,
        b"ph" | b"name" | b"cat" | b"pid" | b"tid" | b"ts" | b"args"
    )
}

fn event_has_phase(obj: &[u8]) -> bool {
    crate::scan::event::TraceEvent::parse(obj, 0, 0)
        .map(|(ev, _)| ev.ph != crate::scan::event::Phase::Missing)
        .unwrap_or(false)
}

impl From<EnvelopeError> for crate::error::AnalyzeError {
    fn from(e: EnvelopeError) -> Self {
        crate::error::AnalyzeError::NotATrace(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_array_and_bom() {
        assert_eq!(
            detect(b"\xEF\xBB\xBF  [{}]"),
            Ok(Envelope::Events {
                start: 6,
                in_object: false
            })
        );
    }

    #[test]
    fn trace_events_after_other_keys() {
        let b = br#"{"metadata":{"source":"DevTools","x":[1,"]"]},"traceEvents":[{"ph":"M"}]}"#;
        let start = b.iter().position(|&c| c == b'[').unwrap();
        let start = start + b[start + 1..].iter().position(|&c| c == b'[').unwrap() + 2;
        assert_eq!(
            detect(b),
            Ok(Envelope::Events {
                start,
                in_object: true
            })
        );
    }

    #[test]
    fn cpuprofile_is_other_object_with_keys() {
        let b = br#"{"nodes":[],"startTime":1,"endTime":2,"samples":[],"timeDeltas":[]}"#;
        assert_eq!(
            detect(b),
            Ok(Envelope::OtherObject {
                keys: vec![
                    "nodes".into(),
                    "startTime".into(),
                    "endTime".into(),
                    "samples".into(),
                    "timeDeltas".into()
                ]
            })
        );
    }

    #[test]
    fn ndjson_events() {
        let b = b"{\"ph\":\"X\",\"ts\":1}\n{\"ph\":\"X\",\"ts\":2}\n";
        assert_eq!(
            detect(b),
            Ok(Envelope::Events {
                start: 0,
                in_object: false
            })
        );
    }

    #[test]
    fn junk_and_empty_and_cut() {
        assert_eq!(detect(b"  "), Err(EnvelopeError::Empty));
        assert_eq!(
            detect(b"\x00\x01"),
            Err(EnvelopeError::NotJson { byte: 0, offset: 0 })
        );
        assert_eq!(
            detect(br#"{"metadata":{"a":1"#),
            Err(EnvelopeError::CutOff { offset: 18 })
        );
        assert_eq!(detect(b"\xFF\xFE{"), Err(EnvelopeError::Utf16));
        assert_eq!(
            detect(br#"{"traceEvents":{}}"#),
            Err(EnvelopeError::EventsNotArray { offset: 15 })
        );
    }
}

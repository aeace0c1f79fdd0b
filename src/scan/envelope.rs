//! Which JSON shape a file has, and where its trace events start.
//!
//! Shapes (docs/METHOD.md §2.1): a bare array `[event, ...]` (DevTools up to ~M113, Chrome
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

/// A byte as a reader can tell it: `'h' (0x68)` for printable ASCII, `'é' (U+00E9, byte
/// 0xc3)` for the first byte of another printable UTF-8 character, else `byte 0x00`.
fn shown_byte(byte: u8, character: Option<char>) -> String {
    match character {
        _ if byte.is_ascii_graphic() => format!("'{}' (0x{byte:02x})", byte as char),
        Some(c) if !c.is_control() && !c.is_ascii() => {
            format!("'{c}' (U+{:04X}, byte 0x{byte:02x})", u32::from(c))
        }
        _ => format!("byte 0x{byte:02x}"),
    }
}

/// The UTF-8 character `b` starts with, if it starts with one.
fn first_char(b: &[u8]) -> Option<char> {
    let head = &b[..b.len().min(4)];
    let valid = match std::str::from_utf8(head) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).ok()?,
    };
    valid.chars().next()
}

/// Why a file is not a trace at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    /// Empty or whitespace only.
    #[error("the file is empty")]
    Empty,
    /// UTF-16 text (by its byte-order mark or NUL bytes), not transcoded before.
    #[error("the file is UTF-16 text; taskchain reads UTF-8 JSON (convert it with iconv)")]
    Utf16,
    /// UTF-32 text (by its byte-order mark or NUL bytes): not read.
    #[error(
        "the file is UTF-32 text; taskchain reads UTF-8 or UTF-16 JSON (convert it with \
         `iconv -f UTF-32 -t UTF-8`)"
    )]
    Utf32,
    /// First byte is neither `[` nor `{`.
    #[error(
        "not JSON trace data: starts with {} at offset {offset} (want a JSON array or {{\"traceEvents\": ...}})",
        shown_byte(*byte, *character)
    )]
    NotJson {
        /// The offending byte.
        byte: u8,
        /// The UTF-8 character it starts, when it starts one.
        character: Option<char>,
        /// Its 0-based offset.
        offset: usize,
    },
    /// The file ends inside the top-level object, before any `traceEvents`.
    #[error("{}", cut_off_text(*offset, inside.as_deref()))]
    CutOff {
        /// Where the bytes ended.
        offset: usize,
        /// The top-level key whose value the bytes end in (`nodes` of a `.cpuprofile`),
        /// when they end in a value.
        inside: Option<String>,
    },
    /// Bytes that are not JSON at the top level of the object (a missing comma, `NaN`),
    /// before any `traceEvents`.
    #[error("invalid JSON at byte {offset} in the top-level object: expected {expected}")]
    Malformed {
        /// 0-based offset of the bad byte.
        offset: usize,
        /// What was expected there.
        expected: &'static str,
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
            EnvelopeError::NotJson {
                byte,
                character,
                offset,
            } => EnvelopeError::NotJson {
                byte,
                character,
                offset: offset + by,
            },
            EnvelopeError::CutOff { offset, inside } => EnvelopeError::CutOff {
                offset: offset + by,
                inside,
            },
            EnvelopeError::Malformed { offset, expected } => EnvelopeError::Malformed {
                offset: offset + by,
                expected,
            },
            EnvelopeError::EventsNotArray { offset } => EnvelopeError::EventsNotArray {
                offset: offset + by,
            },
            e => e,
        }
    }
}

fn cut_off_text(offset: usize, inside: Option<&str>) -> String {
    match inside {
        // A cut `.cpuprofile` or field bundle: no trace was expected.
        Some(key) => format!(
            "the file ends at byte {offset} inside the top-level object's \"{key}\" value (cut off)"
        ),
        None => {
            format!("the top-level object is cut off at byte {offset} before any traceEvents array")
        }
    }
}

/// Detects the envelope of a whole file held in `b`.
pub fn detect(b: &[u8]) -> Result<Envelope, EnvelopeError> {
    match crate::input::encoding::sniff(b) {
        crate::input::encoding::Encoding::Utf32 => return Err(EnvelopeError::Utf32),
        crate::input::encoding::Encoding::Utf8 => {}
        _ => return Err(EnvelopeError::Utf16),
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
        Some(&byte) => Err(EnvelopeError::NotJson {
            byte,
            character: first_char(&b[i..]),
            offset: i,
        }),
    }
}

fn object(b: &[u8], open: usize) -> Result<Envelope, EnvelopeError> {
    let cut = |offset: usize| EnvelopeError::CutOff {
        offset,
        inside: None,
    };
    // Bytes that end here are cut off; any other byte is invalid JSON.
    let bad = |offset: usize, expected: &'static str| match b.get(offset) {
        None => cut(offset),
        Some(_) => EnvelopeError::Malformed { offset, expected },
    };
    let mut keys = Vec::new();
    let mut j = skip_ws(b, open + 1);
    loop {
        match b.get(j) {
            Some(b'"') => {}
            Some(b'}') => return Ok(Envelope::OtherObject { keys }),
            _ => return Err(bad(j, "a key string or '}'")),
        }
        let key_end = string_end(b, j + 1).map_err(|_| cut(b.len()))?;
        let key = &b[j + 1..key_end];
        j = skip_ws(b, key_end + 1);
        if b.get(j) != Some(&b':') {
            return Err(bad(j, "':' after a key"));
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
            Err(LexError::Incomplete) => {
                return Err(EnvelopeError::CutOff {
                    offset: b.len(),
                    inside: keys.pop(),
                });
            }
            Err(LexError::Malformed { offset, expected }) => return Err(bad(offset, expected)),
        };
        j = skip_ws(b, end);
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b'}') => return Ok(Envelope::OtherObject { keys }),
            _ => return Err(bad(j, "',' or '}' after a value")),
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
            Err(EnvelopeError::NotJson {
                byte: 0,
                character: Some('\0'),
                offset: 0
            })
        );
        let e = detect("  été".as_bytes()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "not JSON trace data: starts with 'é' (U+00E9, byte 0xc3) at offset 2 (want a JSON array or {\"traceEvents\": ...})"
        );
        let e = detect(b"hello").unwrap_err();
        assert!(
            e.to_string().contains("starts with 'h' (0x68) at offset 0"),
            "{e}"
        );
        // A byte that starts no character is shown as a byte.
        let e = detect(b"\x80abc").unwrap_err();
        assert!(
            e.to_string().contains("starts with byte 0x80 at offset 0"),
            "{e}"
        );
        assert_eq!(
            detect(br#"{"metadata":{"a":1"#),
            Err(EnvelopeError::CutOff {
                offset: 18,
                inside: Some("metadata".into())
            })
        );
        // A missing comma at the top level is invalid JSON there, not a cut.
        assert_eq!(
            detect(br#"{"nodes":[] "samples":[]}"#),
            Err(EnvelopeError::Malformed {
                offset: 12,
                expected: "',' or '}' after a value"
            })
        );
        assert_eq!(detect(b"\xFF\xFE{"), Err(EnvelopeError::Utf16));
        assert_eq!(
            detect(br#"{"traceEvents":{}}"#),
            Err(EnvelopeError::EventsNotArray { offset: 15 })
        );
    }
}

/// What follows a trace's event array, once it is closed (docs/METHOD.md §2.1: one JSON
/// value per file; `cat a.json b.json`, two gzip members or a crashed writer's padding put
/// more after it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum After {
    /// Whitespace only (the rest of the envelope object's members, such as `metadata`,
    /// passed over).
    Nothing,
    /// More trace events: a second top-level trace from byte `at` (or a second
    /// `traceEvents` array of the same object), its events from byte `start`.
    Events {
        /// 0-based offset of the second value (or key).
        at: usize,
        /// 0-based offset of its first event (as [`Envelope::Events`]'s `start`).
        start: usize,
        /// The array is the `traceEvents` value of an object.
        in_object: bool,
    },
    /// Bytes from `offset` to the end that are no trace: ignored, and said so.
    Ignored {
        /// 0-based offset of the first such byte.
        offset: usize,
        /// True when they are all NUL bytes (and whitespace): a crashed writer's padding.
        nul: bool,
    },
    /// The bytes end in what starts at `from` before it is known what it is (a stream
    /// reads on; at the end of the input those bytes are ignored).
    NeedMore {
        /// 0-based offset of the member or value the bytes end in.
        from: usize,
    },
}

/// True when `b` is all NUL bytes and whitespace: a crashed writer's padding.
pub(crate) fn is_padding(b: &[u8]) -> bool {
    b.iter().all(|&c| c == 0 || crate::json::is_ws(c))
}

/// What follows the event array closed by the `]` at `b[close]`; `in_object`: the array
/// is the `traceEvents` value of an object, whose other members may follow it.
pub(crate) fn after_events(b: &[u8], close: usize, in_object: bool) -> After {
    let ignored = |offset: usize| After::Ignored {
        offset,
        nul: is_padding(&b[offset..]),
    };
    let mut j = close + 1;
    if in_object {
        loop {
            j = skip_ws(b, j);
            match b.get(j) {
                None => return After::NeedMore { from: j },
                Some(b'}') => {
                    j += 1;
                    break;
                }
                Some(b',') => {}
                Some(_) => return ignored(j),
            }
            let k = skip_ws(b, j + 1);
            match b.get(k) {
                None => return After::NeedMore { from: j },
                Some(b'"') => {}
                Some(_) => return ignored(j),
            }
            let Ok(key_end) = string_end(b, k + 1) else {
                return After::NeedMore { from: j };
            };
            let colon = skip_ws(b, key_end + 1);
            match b.get(colon) {
                None => return After::NeedMore { from: j },
                Some(b':') => {}
                Some(_) => return ignored(j),
            }
            let v = skip_ws(b, colon + 1);
            let key = &b[k + 1..key_end];
            if (key == b"traceEvents" || crate::json::unescape(key) == "traceEvents")
                && b.get(v) == Some(&b'[')
            {
                return After::Events {
                    at: k,
                    start: v + 1,
                    in_object: true,
                };
            }
            match skip_value(b, v) {
                Ok(end) => j = end,
                Err(LexError::Incomplete) => return After::NeedMore { from: j },
                Err(LexError::Malformed { .. }) => return ignored(j),
            }
        }
    }
    let mut rest = skip_ws(b, j);
    if b.get(rest) == Some(&b',') {
        // `]},{…}`: an event written after the end, with the comma of one more.
        rest = skip_ws(b, rest + 1);
    }
    if rest >= b.len() {
        return After::Nothing;
    }
    match detect(&b[rest..]) {
        Ok(Envelope::Events { start, in_object }) => After::Events {
            at: rest,
            start: rest + start,
            in_object,
        },
        Err(EnvelopeError::CutOff { .. }) => After::NeedMore { from: rest },
        _ => ignored(rest),
    }
}

/// The byte range of the top-level `metadata` value of a `{"traceEvents": [...]}` trace:
/// among the keys before the event array (`b[..start]`, where DevTools writes it), or
/// after its closing `]` at `closed_at` (where Chrome writes it). `None` when absent or
/// when the envelope around it is not well-formed JSON.
pub(crate) fn metadata_range(
    b: &[u8],
    start: usize,
    closed_at: Option<usize>,
) -> Option<(usize, usize)> {
    // Keys of the object from `i` (just past `{` or past a value), up to `stop`.
    let find = |mut i: usize, stop: usize| -> Option<(usize, usize)> {
        loop {
            i = skip_ws(b, i);
            match *b.get(i)? {
                b',' => i += 1,
                b'"' => {
                    let quote = string_end(b, i + 1).ok()?;
                    let key = &b[i + 1..quote];
                    i = skip_ws(b, quote + 1);
                    if b.get(i) != Some(&b':') {
                        return None;
                    }
                    i = skip_ws(b, i + 1);
                    if i >= stop || key == b"traceEvents" {
                        return None;
                    }
                    let end = skip_value(b, i).ok()?;
                    if key == b"metadata" {
                        return Some((i, end));
                    }
                    i = end;
                }
                _ => return None,
            }
        }
    };
    let open = skip_ws(b, 0);
    if b.get(open) != Some(&b'{') {
        return None;
    }
    find(open + 1, start).or_else(|| find(closed_at? + 1, b.len()))
}

/// `metadata.sourceMaps` of a trace: `[{url, sourceMapUrl, sourceMap}]`, where `sourceMap`
/// is the map object (or its JSON text). `metadata` is the JSON text of the metadata value.
/// Each entry is read on its own: one that is not such an object (`null`, a number, a
/// `sourceMap` that is neither an object nor a string) is skipped and counted in
/// `diagnostics`, the others kept; metadata that is not JSON is noted there.
pub(crate) fn embedded_maps(
    metadata: &[u8],
    diagnostics: &mut crate::vocab::Diagnostics,
) -> Vec<super::records::EmbeddedMap> {
    use super::records::EmbeddedMap;
    use serde_json::value::RawValue;
    #[derive(serde::Deserialize)]
    struct Meta<'a> {
        #[serde(rename = "sourceMaps", default, borrow)]
        source_maps: Option<Vec<&'a RawValue>>,
    }
    #[derive(serde::Deserialize)]
    struct Entry<'a> {
        #[serde(default)]
        url: String,
        #[serde(rename = "sourceMapUrl", default)]
        source_map_url: String,
        /// Borrowed: the map is copied once, below, not twice.
        #[serde(rename = "sourceMap", borrow)]
        source_map: Option<&'a RawValue>,
    }
    let meta = match serde_json::from_slice::<Meta>(metadata) {
        Ok(m) => m,
        Err(e) => {
            if memchr::memmem::find(metadata, b"\"sourceMaps\"").is_some() {
                diagnostics.note(format!(
                    "the trace's metadata holds \"sourceMaps\" but cannot be read ({e}): no embedded source map was read"
                ));
            }
            return Vec::new();
        }
    };
    let mut bad = 0u64;
    let maps = meta
        .source_maps
        .unwrap_or_default()
        .into_iter()
        .filter_map(|raw| {
            let e = serde_json::from_str::<Entry>(raw.get()).ok();
            let map = e.map(|e| {
                let text = e.source_map.map(RawValue::get);
                let source_map = match text {
                    Some(t) if t.starts_with('"') => serde_json::from_str::<String>(t)
                        .ok()
                        .map(String::into_bytes),
                    Some(t) if t.starts_with('{') => Some(t.as_bytes().to_vec()),
                    _ => None,
                };
                let source_map = source_map.map(std::sync::Arc::new);
                let usable = source_map.is_some() || text.is_none_or(|t| t == "null");
                (
                    EmbeddedMap {
                        url: e.url,
                        source_map_url: e.source_map_url,
                        source_map,
                    },
                    usable,
                )
            });
            match map {
                Some((m, true)) => Some(m),
                Some((m, false)) => {
                    bad += 1;
                    Some(m)
                }
                None => {
                    bad += 1;
                    None
                }
            }
        })
        .collect();
    diagnostics.add(BAD_EMBEDDED_MAPS, bad);
    maps
}

/// The diagnostics kind of `metadata.sourceMaps` entries that cannot be read.
pub(crate) const BAD_EMBEDDED_MAPS: &str = "metadata.sourceMaps entries that are not {url, sourceMapUrl, sourceMap} objects with a map object or text (skipped; the other entries are read)";

#[cfg(test)]
mod metadata_tests {
    use super::*;

    #[test]
    fn metadata_is_found_before_or_after_the_events() {
        let before = br#"{"metadata": {"a": [1, "]"]}, "traceEvents": [{"ph":"X"}]}"#;
        let Envelope::Events { start, .. } = detect(before).unwrap() else {
            panic!()
        };
        let (s, e) = metadata_range(before, start, None).unwrap();
        assert_eq!(&before[s..e], br#"{"a": [1, "]"]}"#);
        let after = br#"{"traceEvents": [{"ph":"X"}], "other": 1, "metadata": {"b": 2}}"#;
        let close = after.iter().position(|&c| c == b']').unwrap();
        let Envelope::Events { start, .. } = detect(after).unwrap() else {
            panic!()
        };
        let (s, e) = metadata_range(after, start, Some(close)).unwrap();
        assert_eq!(&after[s..e], br#"{"b": 2}"#);
        assert_eq!(metadata_range(after, start, None), None);
        assert_eq!(metadata_range(b"[{}]", 1, Some(3)), None);
    }

    #[test]
    fn embedded_maps_as_objects_or_text() {
        let meta = br#"{"source":"DevTools","sourceMaps":[{"url":"http://a/x.js","sourceMapUrl":"x.js.map","sourceMap":{"version":3,"sources":[],"names":[],"mappings":""}},{"url":"http://a/y.js","sourceMapUrl":"y.map","sourceMap":"{\"version\":3}"}]}"#;
        let e = embedded_maps(meta, &mut Default::default());
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].url, "http://a/x.js");
        assert_eq!(
            e[0].source_map.as_deref().map(Vec::as_slice),
            Some(&br#"{"version":3,"sources":[],"names":[],"mappings":""}"#[..])
        );
        assert_eq!(
            e[1].source_map.as_deref().map(Vec::as_slice),
            Some(&br#"{"version":3}"#[..])
        );
        assert!(embedded_maps(b"{}", &mut Default::default()).is_empty());
    }
}

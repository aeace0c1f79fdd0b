//! A source map read for lookups, in memory bounded by its size: the map's JSON text is
//! kept as it is, with an index into it, and a position's mapping is decoded when it is
//! asked for (a trace's frames ask a few hundred at most).
//!
//! - `mappings` (ECMA-426 §"Mappings"): lines split by `;`, segments by `,`, each segment
//!   1, 4 or 5 Base64 VLQ numbers; the generated column restarts at each line, the source,
//!   original line and original column run on across lines. The whole string is read
//!   once, checked (every value inside 0..2^32, each source index naming a source, columns
//!   in order within a line) and a checkpoint (the values so far) kept every
//!   [`CHECKPOINT_SEGMENTS`] segments or [`CHECKPOINT_BYTES`] bytes: a lookup decodes from
//!   the checkpoint before its position, a few dozen segments.
//! - `sources` (with `sourceRoot` put in front as the `sourcemap` crate does, when asked),
//!   `sourcesContent` (each text's place in the JSON, decoded when a source is parsed) and
//!   `ignoreList` / `x_google_ignoreList` (a bit per source).
//! - An index map's `sections` (offsets in order, each with its `map`; a `url` section or
//!   a nested index map is refused): a section's mappings must end before the next
//!   section starts, else the map is refused (which section would win is not said).
//!
//! Memory: the text (1×), 4 bytes per source for its name's end and 4 for its content's
//! place (each at least 3 bytes of JSON), the names, one bit per source, and 24 bytes per
//! checkpoint: under [`MEMORY_FACTOR`] × the map's size, which [`MapIndex::read`]
//! checks before it keeps anything large.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{IgnoredAny, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// A checkpoint is kept after this many segments at most.
const CHECKPOINT_SEGMENTS: u32 = 64;
/// ... or this many bytes of `mappings` (lines without segments, `;;;;`).
const CHECKPOINT_BYTES: usize = 1024;

/// A read map takes at most this many times its size in bytes (text included).
pub(crate) const MEMORY_FACTOR: usize = 3;

/// The values after one segment: where a lookup resumes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct State {
    /// Byte offset in the section's `mappings` after the segment.
    at: u32,
    /// Generated line and column of the segment (0-based, in the section).
    line: u32,
    col: u32,
    /// Running source index, original line and column.
    src: u32,
    src_line: u32,
    src_col: u32,
}

/// A place lookups resume from: after a segment (`segment`; `has_source`: it had one),
/// or at the start of a line (`state.col` 0), the running values there.
#[derive(Clone, Copy, Debug, Default)]
struct Checkpoint {
    state: State,
    segment: bool,
    has_source: bool,
}

/// One section (the whole map for a regular map).
#[derive(Debug)]
struct Section {
    /// Generated offset of the section (0, 0 for a regular map).
    line: u32,
    col: u32,
    /// Where its `mappings` string's content is in the text.
    mappings: std::ops::Range<usize>,
    /// `mappings` decoded, when the JSON string has escapes (rare).
    unescaped: Option<Box<[u8]>>,
    /// The map-wide index of its first source.
    first_source: u32,
    /// Where in the text every [`SOURCE_MARK`]-th entry of its `sources` array starts: a
    /// name is read from the JSON when asked for, so a map of millions of sources holds a
    /// few bytes per 64 of them, not a string each.
    source_marks: Vec<u32>,
    /// Its `sourceRoot` (empty when none).
    root: Box<str>,
    /// Where lookups resume; the first is the state before any segment.
    checkpoints: Vec<Checkpoint>,
}

/// A position's mapping: the source and the 0-based original line and UTF-16 column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mapping {
    /// Map-wide source index.
    pub source: u32,
    /// 0-based original line.
    pub line: u32,
    /// 0-based original column (UTF-16 units).
    pub column: u32,
}

/// A source map (or index map) ready for lookups.
#[derive(Debug)]
pub(crate) struct MapIndex {
    text: Arc<Vec<u8>>,
    sections: Vec<Section>,
    /// Number of sources, over all sections.
    sources: u32,
    /// (source, offset in `text` of its `sourcesContent` string), by source, only for the
    /// sources that have one: a map of many sources and few texts holds few entries.
    contents: Vec<(u32, u32)>,
    /// Per source, a bit: listed in an ignore list.
    ignored: Vec<u64>,
}

/// The top-level keys read.
#[derive(Deserialize)]
struct RawMap<'a> {
    #[serde(borrow, default)]
    sources: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "sourcesContent")]
    contents: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "sourceRoot")]
    root: Option<&'a RawValue>,
    #[serde(borrow, default)]
    mappings: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "ignoreList")]
    ignore_list: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "x_google_ignoreList")]
    google: Option<&'a RawValue>,
    #[serde(borrow, default)]
    sections: Option<Vec<RawSection<'a>>>,
}

#[derive(Deserialize)]
struct RawSection<'a> {
    offset: Offset,
    #[serde(borrow, default)]
    map: Option<&'a RawValue>,
    #[serde(default)]
    url: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Offset {
    line: u32,
    column: u32,
}

/// Where `inner` (a slice of `outer`) starts in `outer`.
fn offset_in(outer: &[u8], inner: &str) -> usize {
    inner.as_ptr() as usize - outer.as_ptr() as usize
}

/// One mark per this many sources ([`Section::source_marks`]).
const SOURCE_MARK: usize = 64;

/// The number of entries of a `sources` array (strings or `null`), and where every
/// [`SOURCE_MARK`]-th starts in `text` (`list` is a slice of it).
fn read_sources(text: &[u8], list: &RawValue) -> Result<(u32, Vec<u32>), String> {
    let (mut n, mut marks) = (0u32, Vec::new());
    // RawValues borrowed from `list` are slices of `text`.
    each_element(list, "an array of source names", |v: &RawValue| {
        let t = v.get();
        if !(t == "null" || t.starts_with('"')) {
            return Err(format!("source {n} is neither a string nor null"));
        }
        if (n as usize).is_multiple_of(SOURCE_MARK) {
            marks.push(u32::try_from(offset_in(text, t)).map_err(|_| "a map over 4 GiB")?);
        }
        n = n.checked_add(1).ok_or("over 4 billion sources")?;
        Ok(())
    })
    .map_err(|e| format!("has sources that cannot be read ({e})"))?;
    Ok((n, marks))
}

/// Calls `f` on each element of the JSON array `list`, read as `T` (borrowing from it);
/// `expected` says what the array is, in the error when it is not one. Stops at the first
/// element that cannot be read or that `f` refuses (its reason is the error).
fn each_element<'de, T, F>(
    list: &'de RawValue,
    expected: &str,
    f: F,
) -> Result<(), serde_json::Error>
where
    T: Deserialize<'de>,
    F: FnMut(T) -> Result<(), String>,
{
    struct Each<'e, T, F>(&'e str, F, std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>, F: FnMut(T) -> Result<(), String>> Visitor<'de> for Each<'_, T, F> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
        fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
            while let Some(v) = seq.next_element::<T>()? {
                (self.1)(v).map_err(serde::de::Error::custom)?;
            }
            Ok(())
        }
    }
    let mut de = serde_json::Deserializer::from_str(list.get());
    serde::Deserializer::deserialize_seq(&mut de, Each(expected, f, std::marker::PhantomData))
}

/// The end of the JSON string or `null` starting at `at` (`text` was checked as JSON).
fn element_end(text: &[u8], at: usize) -> Option<usize> {
    match text.get(at)? {
        b'n' => Some(at + 4),
        b'"' => string_end(text, at),
        _ => None,
    }
}

/// The end (after the closing quote) of the JSON string starting at `at` (`text` was
/// checked as JSON): the next quote that an even run of backslashes precedes, quotes found
/// with memchr (source texts have a `\n` escape on every line, a quote more rarely).
fn string_end(text: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    loop {
        let quote = i + memchr::memchr(b'"', text.get(i..)?)?;
        // The run before the quote lies after the last quote found: linear in all.
        let backslashes = text[i..quote]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if backslashes.is_multiple_of(2) {
            return Some(quote + 1);
        }
        i = quote + 1;
    }
}

/// The end of the JSON value starting at `at` (`text` was checked as JSON): a string by
/// [`string_end`], an array or object by its depth, a number or literal at the byte that
/// ends it.
fn value_end(text: &[u8], at: usize) -> Option<usize> {
    match *text.get(at)? {
        b'"' => string_end(text, at),
        b'[' | b'{' => {
            let (mut depth, mut i) = (0usize, at);
            loop {
                match *text.get(i)? {
                    b'"' => {
                        i = string_end(text, i)?;
                        continue;
                    }
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = at;
            while text
                .get(i)
                .is_some_and(|&b| !matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r'))
            {
                i += 1;
            }
            Some(i)
        }
    }
}

/// Calls `f` with the offset and the first byte of each element of the JSON array
/// `list`, which the map's parse already checked as JSON: its bytes are scanned (strings
/// skipped with memchr), not parsed a second time. `false` when `list` is not an array
/// or the scan finds what checked JSON does not have: the caller then reads it with serde
/// (and says what is wrong).
fn scan_array(list: &[u8], mut f: impl FnMut(usize, u8)) -> bool {
    let skip_space = |mut i: usize| {
        while list
            .get(i)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            i += 1;
        }
        i
    };
    if list.first() != Some(&b'[') {
        return false;
    }
    let mut i = skip_space(1);
    if list.get(i) == Some(&b']') {
        return true;
    }
    loop {
        let Some(&first) = list.get(i) else {
            return false;
        };
        f(i, first);
        let Some(end) = value_end(list, i) else {
            return false;
        };
        i = skip_space(end);
        match list.get(i) {
            Some(b',') => i = skip_space(i + 1),
            Some(b']') => return true,
            _ => return false,
        }
    }
}

/// The start of the array element after the one at `at`.
fn next_element(text: &[u8], at: usize) -> Option<usize> {
    let mut j = element_end(text, at)?;
    let mut comma = false;
    while let Some(&c) = text.get(j) {
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => j += 1,
            b',' if !comma => {
                comma = true;
                j += 1;
            }
            _ if comma => return Some(j),
            _ => return None,
        }
    }
    None
}

impl MapIndex {
    /// Reads `text` (a source map or an index map with `sections`). `Err`: why the map
    /// cannot be used (not JSON, no `mappings` nor `sections`, a value out of range, …),
    /// as a phrase after "source map X".
    pub(crate) fn read(text: Arc<Vec<u8>>) -> Result<MapIndex, String> {
        let mut raw: RawMap<'_> = serde_json::from_slice(&text)
            .map_err(|e| format!("is not a source map (not JSON: {e})"))?;
        let mut parts: Vec<(u32, u32, RawMap<'_>)> = Vec::new();
        match raw.sections.take() {
            Some(sections) => {
                let mut last = None;
                for (i, s) in sections.into_iter().enumerate() {
                    if s.url.is_some() || s.map.is_none() {
                        return Err(format!(
                            "is an index map whose section {i} has a `url`, not a `map`: not read (nothing is fetched)"
                        ));
                    }
                    let key = (s.offset.line, s.offset.column);
                    if last.is_some_and(|l| key < l) {
                        return Err(format!(
                            "is an index map whose section {i} starts before the section before it: not read"
                        ));
                    }
                    last = Some(key);
                    let map_text = s.map.map_or("null", RawValue::get);
                    let m: RawMap<'_> = serde_json::from_str(map_text).map_err(|e| {
                        format!("is an index map whose section {i} is not a map ({e})")
                    })?;
                    if m.sections.is_some() {
                        return Err(format!(
                            "is an index map whose section {i} is an index map too: not read"
                        ));
                    }
                    parts.push((key.0, key.1, m));
                }
            }
            None if raw.mappings.is_none() => {
                return Err("is not a source map (no \"mappings\" nor \"sections\")".into());
            }
            None => parts.push((0, 0, raw)),
        }
        // Offsets in `text` of what the parts borrow, so the parts can be dropped.
        let mut index = MapIndex {
            text: Arc::default(),
            sections: Vec::with_capacity(parts.len()),
            sources: 0,
            contents: Vec::new(),
            ignored: Vec::new(),
        };
        for (i, (line, col, m)) in parts.iter().enumerate() {
            let first_source = index.sources;
            let (count, source_marks) = match m.sources {
                Some(s) => read_sources(&text, s)?,
                None => (0, Vec::new()),
            };
            index.sources = first_source
                .checked_add(count)
                .ok_or("has over 4 billion sources")?;
            index.read_contents(&text, m.contents, first_source, count)?;
            for list in [m.ignore_list, m.google].into_iter().flatten().take(1) {
                index.read_ignore_list(list, first_source, count)?;
            }
            let root = match m.root.map(RawValue::get) {
                Some(r) if r.starts_with('"') => serde_json::from_str::<String>(r)
                    .map_err(|e| format!("has a sourceRoot that cannot be read ({e})"))?,
                _ => String::new(),
            };
            let (mappings, unescaped) = match m.mappings.map(RawValue::get) {
                Some(t) if t.starts_with('"') && !t.contains('\\') => {
                    let start = offset_in(&text, t) + 1;
                    (start..start + t.len() - 2, None)
                }
                Some(t) if t.starts_with('"') => {
                    let s = serde_json::from_str::<String>(t)
                        .map_err(|e| format!("has mappings that cannot be read ({e})"))?;
                    (0..s.len(), Some(s.into_bytes().into_boxed_slice()))
                }
                Some("null") | None => (0..0, None),
                Some(_) => return Err("has mappings that are not a string".into()),
            };
            let mut section = Section {
                line: *line,
                col: *col,
                mappings,
                unescaped,
                first_source,
                source_marks,
                root: root.into(),
                checkpoints: Vec::new(),
            };
            let end = section.index(&text, count).map_err(|e| match parts.len() {
                1 => format!("has {e}"),
                _ => format!("has in section {i} {e}"),
            })?;
            // A section's mappings end before the next one starts.
            if let (Some(end), Some(next)) = (end, parts.get(i + 1)) {
                let at = (end.0 + line, if end.0 == 0 { end.1 + col } else { end.1 });
                if at >= (next.0, next.1) {
                    return Err(format!(
                        "is an index map whose sections overlap: section {} maps generated {}:{} and section {} starts at {}:{} (which one holds a position is not said): not read",
                        i,
                        at.0 + 1,
                        at.1 + 1,
                        i + 1,
                        next.0 + 1,
                        next.1 + 1
                    ));
                }
            }
            index.sections.push(section);
        }
        drop(parts);
        index.text = text;
        let held = index.held_bytes();
        if held > MEMORY_FACTOR * index.text.len().max(1 << 16) {
            return Err(format!(
                "would take {} MB read, over {MEMORY_FACTOR}× its size",
                held >> 20
            ));
        }
        Ok(index)
    }

    /// Bytes held (the text and every index), for the cache's bound.
    pub(crate) fn held_bytes(&self) -> usize {
        self.text.len()
            + 8 * self.contents.capacity()
            + 8 * self.ignored.capacity()
            + self
                .sections
                .iter()
                .map(|s| {
                    std::mem::size_of::<Section>()
                        + 4 * s.source_marks.capacity()
                        + s.root.len()
                        + s.unescaped.as_ref().map_or(0, |u| u.len())
                        + s.checkpoints.capacity() * std::mem::size_of::<Checkpoint>()
                })
                .sum::<usize>()
    }

    /// The places of `sourcesContent`'s texts for the sources `first..first + count`
    /// (`null` and missing ones have none; entries past the sources are left out).
    fn read_contents(
        &mut self,
        text: &[u8],
        list: Option<&RawValue>,
        first: u32,
        count: u32,
    ) -> Result<(), String> {
        if let Some(list) = list.filter(|l| l.get() != "null") {
            let end = first + count;
            let before = self.contents.len();
            let base = offset_in(text, list.get());
            let mut source = first;
            let contents = &mut self.contents;
            let scanned = scan_array(list.get().as_bytes(), |at, byte| {
                if source < end
                    && byte == b'"'
                    && let Ok(at) = u32::try_from(base + at)
                {
                    contents.push((source, at));
                }
                source = source.saturating_add(1);
            });
            if scanned {
                return Ok(());
            }
            self.contents.truncate(before);
            let mut source = first;
            // RawValues borrowed from `list` are slices of `text`.
            each_element(list, "an array of source texts", |v: &RawValue| {
                let t = v.get();
                if source < end
                    && t.starts_with('"')
                    && let Ok(at) = u32::try_from(offset_in(text, t))
                {
                    self.contents.push((source, at));
                }
                source = source.saturating_add(1);
                Ok(())
            })
            .map_err(|e| format!("has sourcesContent that cannot be read ({e})"))?;
        }
        Ok(())
    }

    /// Sets the ignored bits of an ignore list of the sources `first..first + count`.
    fn read_ignore_list(&mut self, list: &RawValue, first: u32, count: u32) -> Result<(), String> {
        if list.get() == "null" {
            return Ok(());
        }
        let words = (first + count).div_ceil(64) as usize;
        if self.ignored.len() < words {
            self.ignored.resize(words, 0);
        }
        let ignored = &mut self.ignored;
        each_element(list, "an array of source indices", |i: u64| {
            // An index naming no source names nothing.
            if i < u64::from(count) {
                let at = first as usize + i as usize;
                ignored[at / 64] |= 1 << (at % 64);
            }
            Ok(())
        })
        .map_err(|e| format!("has an ignore list that cannot be read ({e})"))
    }

    /// Number of sources.
    pub(crate) fn source_count(&self) -> u32 {
        self.sources
    }

    /// Source `i`'s name as written (`null` an empty one), and the `sourceRoot` of its
    /// section: read from the JSON from the nearest mark on.
    fn raw_source(&self, i: u32) -> Option<(Cow<'_, str>, &str)> {
        if i >= self.sources {
            return None;
        }
        let s = self.sections.iter().rev().find(|s| s.first_source <= i)?;
        let local = (i - s.first_source) as usize;
        let mut at = *s.source_marks.get(local / SOURCE_MARK)? as usize;
        for _ in 0..local % SOURCE_MARK {
            at = next_element(&self.text, at)?;
        }
        let end = element_end(&self.text, at)?;
        let name = match &self.text[at..end] {
            b"null" => Cow::Borrowed(""),
            json => serde_json::from_slice::<Cow<'_, str>>(json).ok()?,
        };
        Some((name, &s.root))
    }

    /// Source `i`'s name with its `sourceRoot` in front (unless the name is absolute: `/…`,
    /// `http:`, `https:`), as the `sourcemap` crate gives it.
    pub(crate) fn source(&self, i: u32) -> Option<Cow<'_, str>> {
        let (name, root) = self.raw_source(i)?;
        if root.is_empty()
            || (!name.is_empty()
                && (name.starts_with('/')
                    || name.starts_with("http:")
                    || name.starts_with("https:")))
        {
            return Some(name);
        }
        let root = root.strip_suffix('/').unwrap_or(root);
        Some(Cow::Owned(format!("{root}/{name}")))
    }

    /// Where source `i`'s `sourcesContent` string starts in the map's text.
    fn content_at(&self, i: u32) -> Option<u32> {
        let k = self.contents.binary_search_by_key(&i, |&(s, _)| s).ok()?;
        Some(self.contents[k].1)
    }

    /// The length in bytes of source `i`'s `sourcesContent` JSON string, unread.
    pub(crate) fn content_json_len(&self, i: u32) -> Option<usize> {
        let at = self.content_at(i)? as usize;
        Some(string_end(&self.text, at)? - at)
    }

    /// Source `i`'s `sourcesContent` text, decoded (`None`: the map has none for it;
    /// `Err`: it cannot be decoded, or memory for it cannot be had).
    pub(crate) fn content(&self, i: u32) -> Option<Result<String, String>> {
        let len = self.content_json_len(i)?;
        let at = self.content_at(i)? as usize;
        let json = &self.text[at..at + len];
        // Memory for the text is asked for first: when there is none, that source
        // names nothing (rather than the run ending).
        if Vec::<u8>::new().try_reserve_exact(len).is_err() {
            return Some(Err(format!("memory for its {len} bytes cannot be had")));
        }
        Some(
            serde_json::from_slice::<String>(json)
                .map_err(|e| format!("its sourcesContent cannot be read ({e})")),
        )
    }

    /// Source `i` is in an ignore list.
    pub(crate) fn is_ignored(&self, i: u32) -> bool {
        self.ignored
            .get(i as usize / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    /// The mapping of generated 0-based `line` and UTF-16 `column`: the segment with the
    /// greatest column at or before it on that line (the last of equal ones), as the
    /// source-map libraries look up; `None` when there is none on the line, or it has no
    /// source.
    pub(crate) fn lookup(&self, line: u32, column: u32) -> Option<Mapping> {
        let at = self
            .sections
            .partition_point(|s| (s.line, s.col) <= (line, column));
        // Sections starting on this line before the position may hold its segment.
        for s in self.sections[..at].iter().rev() {
            let local_line = line - s.line;
            let local_col = if local_line == 0 {
                column - s.col
            } else {
                column
            };
            if let Some(found) = s.lookup(self.mappings(s), local_line, local_col) {
                return found.map(|(src, l, c)| Mapping {
                    source: s.first_source + src,
                    line: l,
                    column: c,
                });
            }
            if s.line != line {
                break;
            }
        }
        None
    }

    fn mappings<'a>(&'a self, s: &'a Section) -> &'a [u8] {
        match &s.unescaped {
            Some(u) => u,
            None => &self.text[s.mappings.clone()],
        }
    }
}

/// Base64 digit values by byte (`A`–`Z`, `a`–`z`, `0`–`9`, `+`, `/`); [`NOT_BASE64`] for
/// the other bytes.
const BASE64: [u8; 256] = {
    let mut t = [NOT_BASE64; 256];
    let mut i = 0;
    while i < 26 {
        t[b'A' as usize + i] = i as u8;
        t[b'a' as usize + i] = 26 + i as u8;
        i += 1;
    }
    let mut d = 0;
    while d < 10 {
        t[b'0' as usize + d] = 52 + d as u8;
        d += 1;
    }
    t[b'+' as usize] = 62;
    t[b'/' as usize] = 63;
    t
};
const NOT_BASE64: u8 = 0xFF;

/// One Base64 VLQ value from `m[*i..]`: `Err` for a character that is not Base64 or a
/// value past ±2^32 (no position has one). Inlined: it runs once per number of the
/// mappings (most are one digit), and a digit is a table read.
#[inline(always)]
fn vlq(m: &[u8], i: &mut usize) -> Result<i64, &'static str> {
    let mut value: u64 = 0;
    let mut shift = 0;
    loop {
        let c = *m.get(*i).ok_or("a segment cut off inside a number")?;
        *i += 1;
        let digit = BASE64[usize::from(c)];
        if digit == NOT_BASE64 {
            return Err("a character that is not Base64");
        }
        let digit = u64::from(digit);
        value |= (digit & 31) << shift;
        if digit & 32 == 0 {
            break;
        }
        shift += 5;
        if shift > 35 {
            return Err("a number past 2^32");
        }
    }
    let magnitude = (value >> 1) as i64;
    Ok(if value & 1 == 1 {
        -magnitude
    } else {
        magnitude
    })
}

/// `running + delta` when it is a value a position can have (0..2^32).
fn step(running: u32, delta: i64, what: &'static str) -> Result<u32, &'static str> {
    u32::try_from(i64::from(running) + delta).map_err(|_| what)
}

impl Section {
    /// Reads the whole of `mappings` once: checks every segment and keeps checkpoints.
    /// `Ok`: the generated position of the last segment (in the section), if any.
    fn index(&mut self, text: &[u8], sources: u32) -> Result<Option<(u32, u32)>, String> {
        let m: &[u8] = match &self.unescaped {
            Some(u) => u,
            None => &text[self.mappings.clone()],
        };
        let mut st = State::default();
        let mut since = (0u32, 0usize);
        let mut last = None;
        let mut checkpoints = vec![Checkpoint::default()];
        let mut i = 0;
        let mut line = 0u32;
        let mut col = 0u32;
        let mut line_start = true;
        let fail =
            |what: &str, line: u32| format!("mappings with {what} at generated line {}", line + 1);
        while i < m.len() {
            match m[i] {
                b';' => {
                    line = line
                        .checked_add(1)
                        .ok_or_else(|| fail("too many lines", line))?;
                    col = 0;
                    line_start = true;
                    i += 1;
                    if i - since.1 >= CHECKPOINT_BYTES {
                        let mut at_line = st;
                        (at_line.at, at_line.line, at_line.col) = (i as u32, line, 0);
                        checkpoints.push(Checkpoint {
                            state: at_line,
                            segment: false,
                            has_source: false,
                        });
                        since = (0, i);
                    }
                    continue;
                }
                b',' => {
                    i += 1;
                    continue;
                }
                _ => {}
            }
            let mut fields = [0i64; 5];
            let mut n = 0;
            while i < m.len() && m[i] != b',' && m[i] != b';' {
                if n == 5 {
                    return Err(fail("a segment of more than 5 numbers", line));
                }
                fields[n] = vlq(m, &mut i).map_err(|e| fail(e, line))?;
                n += 1;
            }
            if !matches!(n, 1 | 4 | 5) {
                return Err(fail("a segment of 2 or 3 numbers", line));
            }
            let new_col = step(col, fields[0], "a generated column out of range")
                .map_err(|e| fail(e, line))?;
            if !line_start && new_col < col {
                return Err(fail(
                    "generated columns going backwards within the line",
                    line,
                ));
            }
            col = new_col;
            line_start = false;
            st.line = line;
            st.col = col;
            let has_source = n > 1;
            if has_source {
                st.src = step(st.src, fields[1], "a source index out of range")
                    .map_err(|e| fail(e, line))?;
                if st.src >= sources {
                    return Err(fail("a source index naming no source", line));
                }
                st.src_line = step(st.src_line, fields[2], "an original line out of range")
                    .map_err(|e| fail(e, line))?;
                st.src_col = step(st.src_col, fields[3], "an original column out of range")
                    .map_err(|e| fail(e, line))?;
            }
            last = Some((line, col));
            since.0 += 1;
            st.at = i as u32;
            if since.0 >= CHECKPOINT_SEGMENTS || i - since.1 >= CHECKPOINT_BYTES {
                checkpoints.push(Checkpoint {
                    state: st,
                    segment: true,
                    has_source,
                });
                since = (0, i);
            }
        }
        if m.len() > u32::MAX as usize {
            return Err("mappings over 4 GiB".into());
        }
        checkpoints.shrink_to_fit();
        self.checkpoints = checkpoints;
        Ok(last)
    }

    /// The lookup in this section (positions relative to it): `Some(None)` when the
    /// greatest segment at or before the position on its line has no source, `None`
    /// when the line has none at or before it.
    #[allow(clippy::option_option)]
    fn lookup(&self, m: &[u8], line: u32, col: u32) -> Option<Option<(u32, u32, u32)>> {
        // The last checkpoint whose segment is before the position (the first is before
        // every segment).
        let k =
            self.checkpoints[1..].partition_point(|c| (c.state.line, c.state.col) < (line, col));
        let c = self.checkpoints[k];
        let mut st = c.state;
        let mut best: Option<(State, bool)> =
            (c.segment && st.line == line).then_some((st, c.has_source));
        let mut i = st.at as usize;
        let (mut cur_line, mut cur_col) = (st.line, st.col);
        while i < m.len() {
            match m[i] {
                b';' => {
                    cur_line += 1;
                    cur_col = 0;
                    i += 1;
                    if cur_line > line {
                        break;
                    }
                    continue;
                }
                b',' => {
                    i += 1;
                    continue;
                }
                _ => {}
            }
            let mut fields = [0i64; 5];
            let mut n = 0;
            while i < m.len() && m[i] != b',' && m[i] != b';' && n < 5 {
                fields[n] = vlq(m, &mut i).ok()?;
                n += 1;
            }
            // Checked when indexed: these steps stay in range.
            cur_col = (i64::from(cur_col) + fields[0]) as u32;
            let has_source = n > 1;
            if has_source {
                st.src = (i64::from(st.src) + fields[1]) as u32;
                st.src_line = (i64::from(st.src_line) + fields[2]) as u32;
                st.src_col = (i64::from(st.src_col) + fields[3]) as u32;
            }
            if cur_line == line {
                if cur_col > col {
                    break;
                }
                if best.is_none_or(|(b, _)| cur_col >= b.col) {
                    st.line = cur_line;
                    st.col = cur_col;
                    best = Some((st, has_source));
                }
            }
        }
        let (b, has) = best?;
        Some(has.then_some((b.src, b.src_line, b.src_col)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<MapIndex, String> {
        MapIndex::read(Arc::new(json.as_bytes().to_vec()))
    }

    /// Every position of lines 0..4, columns 0..40, looked up here and by the
    /// `sourcemap` crate, give the same source, line and column.
    fn same_as_the_crate(json: &str) {
        let ours = read(json).unwrap();
        let theirs = match sourcemap::decode_slice(json.as_bytes()).unwrap() {
            sourcemap::DecodedMap::Regular(m) => m,
            sourcemap::DecodedMap::Index(i) => i.flatten().unwrap(),
            _ => unreachable!(),
        };
        for line in 0..4 {
            for col in 0..40 {
                let want = theirs
                    .lookup_token(line, col)
                    .filter(|t| t.get_dst_line() == line && t.has_source())
                    .map(|t| {
                        (
                            t.get_source().unwrap().to_string(),
                            t.get_src_line(),
                            t.get_src_col(),
                        )
                    });
                let got = ours.lookup(line, col).map(|m| {
                    (
                        ours.source(m.source).unwrap().into_owned(),
                        m.line,
                        m.column,
                    )
                });
                assert_eq!(got, want, "{line}:{col} of {json}");
            }
        }
    }

    #[test]
    fn lookups_agree_with_the_sourcemap_crate() {
        same_as_the_crate(
            r#"{"version":3,"sources":["a.js","b.js"],"names":[],"mappings":"AAAA,IAAI,CCAC;;AACA,KDAM,E;A","sourceRoot":"src/"}"#,
        );
        same_as_the_crate(
            r#"{"version":3,"sections":[{"offset":{"line":0,"column":0},"map":{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA,EAAE"}},{"offset":{"line":0,"column":10},"map":{"version":3,"sources":["b.js"],"names":[],"mappings":"AAAA;AACA"}},{"offset":{"line":3,"column":0},"map":{"version":3,"sources":["c.js"],"names":[],"mappings":"E,CACA"}}]}"#,
        );
        // Many segments: lookups from checkpoints.
        let segs: Vec<&str> = std::iter::repeat_n("CAAC", 200).collect();
        same_as_the_crate(&format!(
            r#"{{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA,{}"}}"#,
            segs.join(",")
        ));
    }

    #[test]
    fn values_out_of_range_refuse_the_map_and_say_where() {
        // `D` is -1: a column going below 0 (the crate gave 4294967295).
        let e = read(r#"{"sources":["a.js"],"mappings":"AAAD"}"#).unwrap_err();
        assert_eq!(
            e,
            "has mappings with an original column out of range at generated line 1"
        );
        // +2^32 (`ggggggI`) wraps to 0 in the crate.
        let e = read(r#"{"sources":["a.js"],"mappings":"AAAggggggI"}"#).unwrap_err();
        assert_eq!(
            e,
            "has mappings with an original column out of range at generated line 1"
        );
        let e = read(r#"{"sources":["a.js"],"mappings":"AAAgggggggggggE"}"#).unwrap_err();
        assert!(e.contains("a number past 2^32"), "{e}");
        let e = read(r#"{"sources":["a.js"],"mappings":"ACAA"}"#).unwrap_err();
        assert!(e.contains("a source index naming no source"), "{e}");
        let e = read(r#"{"sources":["a.js"],"mappings":"AA"}"#).unwrap_err();
        assert!(e.contains("a segment of 2 or 3 numbers"), "{e}");
    }

    #[test]
    fn overlapping_sections_are_refused_not_taken_from_the_later_one() {
        // Section 0 maps line 0 column 20; section 1 starts at column 10 of line 0.
        let e = read(r#"{"sections":[{"offset":{"line":0,"column":0},"map":{"sources":["a.js"],"mappings":"AAAA,oBAAE"}},{"offset":{"line":0,"column":10},"map":{"sources":["b.js"],"mappings":"AAAA"}}]}"#).unwrap_err();
        assert!(
            e.contains(
                "sections overlap: section 0 maps generated 1:21 and section 1 starts at 1:11"
            ),
            "{e}"
        );
        let e =
            read(r#"{"sections":[{"offset":{"line":0,"column":0},"url":"x.map"}]}"#).unwrap_err();
        assert!(e.contains("has a `url`"), "{e}");
    }

    #[test]
    fn sources_contents_and_ignore_lists_are_read_as_indices() {
        let m = read(r#"{"sources":[null,"b.js","c.js"],"sourcesContent":["x",null],"mappings":"","x_google_ignoreList":[2,7]}"#).unwrap();
        assert_eq!(m.source_count(), 3);
        assert_eq!(m.source(0).as_deref(), Some(""));
        assert_eq!(m.content(0).unwrap().unwrap(), "x");
        assert!(m.content(1).is_none() && m.content(2).is_none());
        assert_eq!(
            (0..3).map(|i| m.is_ignored(i)).collect::<Vec<_>>(),
            [false, false, true]
        );
        // 300,000 sources all in the ignore list: read in linear time (the list was scanned
        // per source: two minutes).
        let n = 300_000;
        let json = format!(
            r#"{{"sources":[{}],"mappings":"","ignoreList":[{}]}}"#,
            (0..n)
                .map(|i| format!("\"s{i}.js\""))
                .collect::<Vec<_>>()
                .join(","),
            (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
        );
        let t = std::time::Instant::now();
        let m = read(&json).unwrap();
        assert!(m.is_ignored(n - 1) && m.source(n - 1).as_deref() == Some("s299999.js"));
        assert!(
            t.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn source_texts_are_found_by_a_scan_as_serde_finds_them() {
        // Strings with escaped quotes and backslashes, null, a number, nested containers
        // holding brackets in strings, spaces and new lines between elements.
        let contents = r#"[ "a\"]b" ,null,3.5e2, {"k":["]",{"x":"}"}]} ,
 "\\", [1,[2]], "", true ]"#;
        let json = format!(
            r#"{{"sources":[{}],"sourcesContent":{contents},"mappings":""}}"#,
            ["\"s.js\""; 8].join(",")
        );
        let m = read(&json).unwrap();
        let by_serde: Vec<(u32, u32)> = {
            let list: &RawValue = serde_json::from_str(contents).unwrap();
            let mut v = Vec::new();
            let mut i = 0u32;
            each_element(list, "", |e: &RawValue| {
                if e.get().starts_with('"') {
                    let at = json.find(contents).unwrap() + offset_in(contents.as_bytes(), e.get());
                    v.push((i, at as u32));
                }
                i += 1;
                Ok(())
            })
            .unwrap();
            v
        };
        assert_eq!(m.contents, by_serde);
        // Found by the scan itself (serde reads the array only when the scan gives up).
        let mut scanned = Vec::new();
        assert!(scan_array(contents.as_bytes(), |at, b| scanned.push((at, b))));
        assert_eq!(scanned.len(), 8);
        let strings: Vec<u32> = scanned
            .iter()
            .filter(|s| s.1 == b'"')
            .map(|s| (json.find(contents).unwrap() + s.0) as u32)
            .collect();
        assert_eq!(strings, by_serde.iter().map(|c| c.1).collect::<Vec<_>>());
        assert_eq!(by_serde.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 4, 6]);
        assert_eq!(m.content(0).unwrap().unwrap(), "a\"]b");
        assert_eq!(m.content(4).unwrap().unwrap(), "\\");
        assert_eq!(m.content(6).unwrap().unwrap(), "");
        // Not an array: read by serde, which says why.
        let e = read(r#"{"sources":["a.js"],"sourcesContent":{"a":1},"mappings":""}"#).unwrap_err();
        assert!(
            e.starts_with("has sourcesContent that cannot be read (invalid type: map"),
            "{e}"
        );
    }

    #[test]
    fn source_names_are_read_from_the_json_past_the_marks() {
        // 200 sources (marks at 0, 64, 128, 192), a null, escapes, spaces and new lines
        // between entries.
        let mut names: Vec<String> = (0..200).map(|i| format!("\"s{i}.js\"")).collect();
        names[70] = "null".into();
        names[130] = r#""a\"b\u00e9,.js""#.into();
        let json = format!(
            r#"{{"sources":[ {} ],"mappings":"AAAA"}}"#,
            names.join(" ,\n ")
        );
        let m = read(&json).unwrap();
        assert_eq!(m.source_count(), 200);
        let name = |i| m.source(i).map(|s| s.into_owned());
        assert_eq!(name(0).as_deref(), Some("s0.js"));
        assert_eq!(name(63).as_deref(), Some("s63.js"));
        assert_eq!(name(64).as_deref(), Some("s64.js"));
        assert_eq!(name(70).as_deref(), Some(""));
        assert_eq!(name(130).as_deref(), Some("a\"bé,.js"));
        assert_eq!(name(131).as_deref(), Some("s131.js"));
        assert_eq!(name(199).as_deref(), Some("s199.js"));
        assert_eq!(name(200), None);
        // A source that is neither a string nor null: the map is refused.
        let e = read(r#"{"sources":["a.js",3],"mappings":""}"#).unwrap_err();
        assert!(e.contains("source 1 is neither a string nor null"), "{e}");
    }

    #[test]
    fn a_read_map_holds_at_most_three_times_its_size() {
        // 2 M empty sources (the shape that took 2.8 GB for a 60 MB map).
        let n = 2_000_000;
        let json = format!(
            r#"{{"sources":[{}],"sourcesContent":[{}],"mappings":"AAAA"}}"#,
            vec!["\"\""; n].join(","),
            vec!["\"\""; n].join(",")
        );
        let m = read(&json).unwrap();
        assert!(
            m.held_bytes() <= 3 * json.len(),
            "{} for {}",
            m.held_bytes(),
            json.len()
        );
        // Dense mappings: one checkpoint per 64 segments.
        let segs = vec!["CAAC"; 500_000].join(",");
        let json = format!(r#"{{"sources":["a.js"],"mappings":"AAAA,{segs}"}}"#);
        let m = read(&json).unwrap();
        assert!(
            m.held_bytes() <= 2 * json.len(),
            "{} for {}",
            m.held_bytes(),
            json.len()
        );
        assert_eq!(m.lookup(0, 500_000).map(|x| x.column), Some(500_000));
    }
}

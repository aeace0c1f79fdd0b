//! One trace event's top level, read without building `args`.
//!
//! A trace event is a JSON object whose top-level keys (in any order) include `ph`, `name`,
//! `cat`, `pid`, `tid`, `ts`, `dur`, `id`, `s` and `args` (Trace Event Format, Chrome
//! `TraceEvent::AppendAsJSON`). [`TraceEvent::parse`] records where each of those values
//! lies in the bytes and skips everything else; `args` stays raw until a later stage
//! decides the event matters.

use super::chunk::{self, ChunkLayout};
use crate::json::{self, Lexed, skip_value, string_content};
use crate::time::{TimeDelta, Timestamp};
use crate::vocab::{Pid, ThreadKey, Tid};

/// The `ph` (phase) of a trace event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// `X`: a complete event with `dur`.
    Complete,
    /// `B`: begins a duration on its thread.
    Begin,
    /// `E`: ends the latest open `B` on its thread.
    End,
    /// `I` or `i`: an instant.
    Instant,
    /// `M`: metadata (`thread_name`, `process_name`, ...).
    Metadata,
    /// `P`: a sample event (`Profile`, `ProfileChunk`).
    Sample,
    /// Any other phase letter.
    Other(u8),
    /// `ph` is a string of other than one character (`"Xyz"`, `"XX"`, `""`): the format
    /// knows no such phase, so the event is not read as any.
    Invalid,
    /// `ph` missing or not a string.
    Missing,
}

impl Phase {
    #[inline]
    fn from_raw(raw: Option<&[u8]>) -> Phase {
        let Some(s) = raw.and_then(string_content) else {
            return Phase::Missing;
        };
        if s.len() != 1 {
            return Phase::from_escaped(s);
        }
        match s[0] {
            b'X' => Phase::Complete,
            b'B' => Phase::Begin,
            b'E' => Phase::End,
            b'I' | b'i' => Phase::Instant,
            b'M' => Phase::Metadata,
            b'P' => Phase::Sample,
            c => Phase::Other(c),
        }
    }

    /// The phase of `ph` content other than one byte: an escaped letter (`\u0058` is
    /// `X`), else [`Phase::Invalid`].
    #[cold]
    fn from_escaped(s: &[u8]) -> Phase {
        if s.contains(&b'\\') {
            let t = json::unescape(s);
            if t.len() == 1 {
                let quoted = [b'"', t.as_bytes()[0], b'"'];
                return Phase::from_raw(Some(&quoted));
            }
        }
        Phase::Invalid
    }
}

/// The top level of one trace event, borrowing the file's bytes. String fields hold the
/// raw content between the quotes, except a `name` written with escapes that decodes to
/// one the scan matches (`Run\u0054ask`), which holds that name.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvent<'a> {
    /// 0-based byte offset of the event's `{` in the whole file: a unique, deterministic
    /// "file order" key, also when the file is scanned in parallel ranges.
    pub offset: u64,
    /// `ph`.
    pub ph: Phase,
    /// `name` (raw string content; empty when missing).
    pub name: &'a [u8],
    /// `cat` (raw string content; a comma-separated list).
    pub cat: &'a [u8],
    raw_pid: Option<&'a [u8]>,
    raw_tid: Option<&'a [u8]>,
    raw_ts: Option<&'a [u8]>,
    raw_dur: Option<&'a [u8]>,
    raw_id: Option<&'a [u8]>,
    raw_id2: Option<&'a [u8]>,
    /// `args` as raw JSON bytes (object, string such as `"__stripped__"`, ...), if present.
    pub args: Option<&'a [u8]>,
    /// The `chunk::layout` of `args`, read during the parse when `args` starts as a
    /// `ProfileChunk`'s does (`chunk::looks_like_chunk`); `None` otherwise.
    pub chunk_layout: Option<ChunkLayout>,
}

impl<'a> TraceEvent<'a> {
    /// Parses the object starting at `b[i]` (which must be `{`). `base` is the offset of
    /// `b[0]` in the file. Returns the event and the offset just past its `}`.
    ///
    /// Events in Chrome's own layout, or pretty-printed, are read by
    /// [`TraceEvent::parse_compact`]; any other event (escaped keys, whitespace before a
    /// colon, cut or malformed bytes) by [`TraceEvent::parse_general`], which gives the
    /// same result where both apply.
    #[inline]
    pub fn parse(b: &'a [u8], i: usize, base: u64) -> Lexed<(TraceEvent<'a>, usize)> {
        TraceEvent::parse_guessing(b, i, base, &mut KeyGuess::default())
    }

    /// [`TraceEvent::parse`] with the key guesses of the events parsed before with `keys`
    /// (and teaching them this event's keys): the same result, whatever the guesses.
    pub fn parse_guessing(
        b: &'a [u8],
        i: usize,
        base: u64,
        keys: &mut KeyGuess,
    ) -> Lexed<(TraceEvent<'a>, usize)> {
        let mut ev = TraceEvent::empty(0);
        ev.read(b, i, base, keys).map(|end| (ev, end))
    }

    /// [`TraceEvent::parse`] into `self` (all of it replaced), returning the offset just
    /// past the event: the event walk reuses one value rather than moving each event, and
    /// one [`KeyGuess`], which the events before it taught.
    #[inline(always)]
    pub(crate) fn read(
        &mut self,
        b: &'a [u8],
        i: usize,
        base: u64,
        keys: &mut KeyGuess,
    ) -> Lexed<usize> {
        self.clear(base + i as u64);
        if let Some(end) = self.read_compact(b, i, keys) {
            return Ok(end);
        }
        let (ev, end) = TraceEvent::parse_general(b, i, base)?;
        *self = ev;
        Ok(end)
    }

    /// [`TraceEvent::parse`] for any JSON object, with every check: whitespace anywhere,
    /// keys compared after their closing quote is found, errors with their offsets.
    pub fn parse_general(b: &'a [u8], i: usize, base: u64) -> Lexed<(TraceEvent<'a>, usize)> {
        let mut ev = TraceEvent::empty(base + i as u64);
        let mut raw_ph = None;
        let end = json::members_with(b, i, |key, v| {
            if key == b"args" {
                return ev.read_args(b, v);
            }
            let end = skip_value(b, v)?;
            let raw = &b[v..end];
            match key {
                b"ph" => raw_ph = Some(raw),
                b"name" => {
                    let content = string_content(raw).unwrap_or(b"");
                    ev.name = name_text(content, content.contains(&b'\\'));
                }
                b"cat" => ev.cat = string_content(raw).unwrap_or(b""),
                b"pid" => ev.raw_pid = Some(raw),
                b"tid" => ev.raw_tid = Some(raw),
                b"ts" => ev.raw_ts = Some(raw),
                b"dur" => ev.raw_dur = Some(raw),
                b"id" => ev.raw_id = Some(raw),
                b"id2" => ev.raw_id2 = Some(raw),
                _ => {}
            }
            Ok(end)
        })?;
        ev.ph = Phase::from_raw(raw_ph);
        Ok((ev, end))
    }

    /// Resets every field, for the event at `offset`.
    #[inline(always)]
    fn clear(&mut self, offset: u64) {
        *self = TraceEvent::empty(offset);
    }

    /// An event with no field read, at `offset`.
    pub(crate) fn empty(offset: u64) -> Self {
        TraceEvent {
            offset,
            ph: Phase::Missing,
            name: b"",
            cat: b"",
            raw_pid: None,
            raw_tid: None,
            raw_ts: None,
            raw_dur: None,
            raw_id: None,
            raw_id2: None,
            args: None,
            chunk_layout: None,
        }
    }

    /// [`TraceEvent::parse`] of an event in Chrome's own layout (`TraceEvent::AppendAsJSON`
    /// and DevTools write no whitespace inside an event and keys of at most 7 bytes without
    /// escapes): each key is matched as one 8-byte word with its closing quote, and an
    /// integer value ended by `,` or `}` is read eight digits at a time. Whitespace after
    /// `{`, `:` and `,` and before `,` and `}` (pretty-printed traces) is skipped. `None`
    /// at the first byte that does not fit, or when the bytes end inside the event; the
    /// event is then for [`TraceEvent::parse_general`].
    /// Whenever this returns an event, `parse_general` returns the same one.
    pub fn parse_compact(b: &'a [u8], i: usize, base: u64) -> Option<(TraceEvent<'a>, usize)> {
        let mut ev = TraceEvent::empty(base + i as u64);
        ev.read_compact(b, i, &mut KeyGuess::default())
            .map(|end| (ev, end))
    }

    /// [`TraceEvent::parse_compact`] into `self`, which must be cleared (`offset` set).
    #[inline(always)]
    fn read_compact(&mut self, b: &'a [u8], i: usize, keys: &mut KeyGuess) -> Option<usize> {
        const fn word(s: &[u8]) -> u64 {
            let mut w = 0u64;
            let mut k = 0;
            while k < s.len() {
                w |= (s[k] as u64) << (8 * k);
                k += 1;
            }
            w
        }
        const ARGS: u64 = word(b"args\"");
        const NAME: u64 = word(b"name\"");
        const CAT: u64 = word(b"cat\"");
        const PH: u64 = word(b"ph\"");
        const PID: u64 = word(b"pid\"");
        const TID: u64 = word(b"tid\"");
        const TS: u64 = word(b"ts\"");
        const DUR: u64 = word(b"dur\"");
        const ID: u64 = word(b"id\"");
        const ID2: u64 = word(b"id2\"");
        if b.get(i) != Some(&b'{') {
            return None;
        }
        let ev = self;
        let mut raw_ph = None;
        let mut j = ws(b, i + 1);
        if b.get(j) == Some(&b'}') {
            return Some(j + 1);
        }
        let mut at = 0;
        loop {
            let guess = keys.slots.get(at).copied().unwrap_or(Guess::NONE);
            at += 1;
            let (key, v) = match json::load8(b, j) {
                // The key the event before had here, with its quotes and colon: the
                // bytes confirm it, so the key's end need not be found.
                Some(w) if w & guess.mask == guess.quoted => (guess.key, ws(b, j + guess.len)),
                _ => {
                    let (key, v, learnt) = key_at(b, j)?;
                    if let Some(slot) = keys.slots.get_mut(at - 1) {
                        *slot = learnt;
                    }
                    (key, v)
                }
            };
            // The value's end, and the byte after it when already known (a number's, from
            // the word its digits were counted in: no second load waits on the count).
            let (end, after) = match key {
                ARGS => (ev.read_args(b, v).ok()?, None),
                NAME | CAT | PH => {
                    if *b.get(v)? != b'"' {
                        return None;
                    }
                    let (e, escaped) = json::string_end_escaped(b, v + 1).ok()?;
                    let content = &b[v + 1..e];
                    match key {
                        NAME => ev.name = name_text(content, escaped),
                        CAT => ev.cat = content,
                        _ => raw_ph = Some(&b[v..e + 1]),
                    }
                    (e + 1, None)
                }
                _ => {
                    let (e, after) = match number_end(b, v) {
                        Some((e, after)) => (e, Some(after)),
                        None => (skip_value(b, v).ok()?, None),
                    };
                    let raw = Some(&b[v..e]);
                    match key {
                        PID => ev.raw_pid = raw,
                        TID => ev.raw_tid = raw,
                        TS => ev.raw_ts = raw,
                        DUR => ev.raw_dur = raw,
                        ID => ev.raw_id = raw,
                        ID2 => ev.raw_id2 = raw,
                        _ => {}
                    }
                    (e, after)
                }
            };
            let (end, after) = match after {
                Some(c) => (end, c),
                None => {
                    let end = ws(b, end);
                    (end, *b.get(end)?)
                }
            };
            match after {
                b',' => j = ws(b, end + 1),
                b'}' => {
                    ev.ph = Phase::from_raw(raw_ph);
                    return Some(end + 1);
                }
                _ => return None,
            }
        }
    }

    /// Reads the `args` value at `b[v]` (a later `args` replaces an earlier one) and
    /// returns the offset past it. A chunk's args (`chunk::looks_like_chunk`) are laid
    /// out in place of skipping them; bytes that end inside them are incomplete, never
    /// skipped (a stream must wait for the rest and then read them as a whole file would);
    /// not JSON inside: skipped, as any value.
    #[inline(always)]
    fn read_args(&mut self, b: &'a [u8], v: usize) -> Lexed<usize> {
        self.chunk_layout = None;
        if b.get(v..v + 2) == Some(b"{}") {
            // The args of most events (`RunTask`, V8 compile events), without a call.
            self.args = Some(&b[v..v + 2]);
            return Ok(v + 2);
        }
        if chunk::looks_like_chunk(b, v)
            && let Some(read) = self.read_chunk_args(b, v)
        {
            return read;
        }
        let end = skip_value(b, v)?;
        self.args = Some(&b[v..end]);
        Ok(end)
    }

    /// The chunk part of [`TraceEvent::read_args`], out of line (most events are not
    /// chunks): `None` when the args are not JSON inside.
    #[inline(never)]
    fn read_chunk_args(&mut self, b: &'a [u8], v: usize) -> Option<Lexed<usize>> {
        match chunk::layout_at(b, v) {
            Ok((layout, end)) => {
                self.args = Some(&b[v..end]);
                self.chunk_layout = Some(layout);
                Some(Ok(end))
            }
            Err(json::LexError::Incomplete) => Some(Err(json::LexError::Incomplete)),
            Err(json::LexError::Malformed { .. }) => None,
        }
    }

    /// `pid` as an integer (strings hashed, see [`json::integer`]); 0 when missing.
    pub fn pid(&self) -> i64 {
        self.raw_pid.and_then(json::integer).unwrap_or(0)
    }
    /// `tid` as an integer; 0 when missing.
    pub fn tid(&self) -> i64 {
        self.raw_tid.and_then(json::integer).unwrap_or(0)
    }
    /// (`pid`, `tid`) when both are plain integers (as [`TraceEvent::pid`] and
    /// [`TraceEvent::tid`] read them); `None` else, missing or not.
    #[inline]
    pub(crate) fn plain_thread(&self) -> Option<ThreadKey> {
        Some(ThreadKey {
            pid: Pid(json::plain_int(self.raw_pid?)?),
            tid: Tid(json::plain_int(self.raw_tid?)?),
        })
    }
    /// `ts` (µs in the file), `None` when missing or not a number.
    pub fn ts(&self) -> Option<Timestamp> {
        self.raw_ts
            .and_then(json::micros_to_nanos)
            .map(Timestamp::from_nanos)
    }
    /// `dur` (µs in the file), `None` when missing or not a number.
    pub fn dur(&self) -> Option<TimeDelta> {
        self.raw_dur
            .and_then(json::micros_to_nanos)
            .map(TimeDelta::from_nanos)
    }
    /// True when `pid` or `tid` is a number outside the 64-bit integer range (then keyed
    /// by a hash of its text, as names are).
    pub fn ids_beyond_i64(&self) -> bool {
        [self.raw_pid, self.raw_tid]
            .into_iter()
            .flatten()
            .any(json::beyond_i64)
    }
    /// True when the event has a `dur` key (whatever its value).
    pub fn has_dur(&self) -> bool {
        self.raw_dur.is_some()
    }
    /// `id` as raw JSON bytes (`"0x1"` with its quotes, `7`), if present.
    pub fn raw_id(&self) -> Option<&'a [u8]> {
        self.raw_id
    }
    /// `id2` as raw JSON bytes (an object `{"local":"0x1"}` or `{"global":"0x1"}`), if
    /// present: the id of async events that Chrome scopes to a process or not.
    pub fn raw_id2(&self) -> Option<&'a [u8]> {
        self.raw_id2
    }
    /// `id` normalised to text: `"0x1"` → `0x1`, `7` → `7`; `None` when missing.
    pub fn id(&self) -> Option<String> {
        let raw = self.raw_id?;
        Some(match string_content(raw) {
            Some(s) => json::unescape(s),
            None => String::from_utf8_lossy(raw).into_owned(),
        })
    }
    /// True when `name` equals `n`.
    pub fn is(&self, n: &str) -> bool {
        self.name == n.as_bytes()
    }
}

/// An event name's content as the scan matches it: the content itself, or for one written
/// with escapes, the name of [`super::MATCHED_NAMES`] it decodes to (else the raw content,
/// which matches none).
#[inline(always)]
fn name_text(content: &[u8], escaped: bool) -> &[u8] {
    if escaped {
        super::matched_name(content).unwrap_or(content)
    } else {
        content
    }
}

/// The first byte at or after `i` that is not JSON whitespace: one predictable compare
/// where there is none (Chrome writes none inside an event; pretty-printed traces, as
/// DevTools' older exports and `json.dump(indent=...)` write them, have it between
/// members).
#[inline(always)]
fn ws(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(&c) if c <= b' ' => json::skip_ws(b, i),
        _ => i,
    }
}

/// The end of the plain non-negative integer at `b[v]` and the byte after it, when that
/// is `,` or `}`. The byte is taken from the word the digits were counted in.
#[inline(always)]
fn number_end(b: &[u8], v: usize) -> Option<(usize, u8)> {
    let mut j = v;
    loop {
        let w = json::load8(b, j)?;
        let n = json::digit_count(w) as usize;
        j += n;
        if n < 8 {
            let after = (w >> (8 * n)) as u8;
            return (j > v && matches!(after, b',' | b'}')).then_some((j, after));
        }
    }
}

/// The keys of the event read before, by position. Chrome and DevTools write the events
/// of one kind with the same keys in the same order, so the key at a position is most
/// often the one the event before had there; when the bytes confirm it (its quotes and
/// colon included, eight bytes at most), the compact parse
/// ([`TraceEvent::parse_compact`]) skips finding where the key ends, a chain of dependent
/// loads.
#[derive(Clone, Debug)]
pub struct KeyGuess {
    slots: [Guess; 16],
}

impl Default for KeyGuess {
    fn default() -> Self {
        KeyGuess {
            slots: [Guess::NONE; 16],
        }
    }
}

/// One position's guess: the bytes `"key":` (little-endian, `len` of them, under `mask`)
/// and the key as `read_compact` matches it (its bytes and closing quote).
#[derive(Clone, Copy, Debug)]
struct Guess {
    quoted: u64,
    mask: u64,
    key: u64,
    len: usize,
}

impl Guess {
    /// Matches no bytes (`quoted` has a bit outside `mask`).
    const NONE: Guess = Guess {
        quoted: 1,
        mask: 0,
        key: 0,
        len: 0,
    };
}

/// The key whose opening quote is `b[j]`, read without a guess: the key as
/// `read_compact` matches it (its bytes and closing quote as one word when it has at
/// most 7 bytes, else `u64::MAX`), the offset of its value, and the guess it teaches.
/// `None` where `read_compact` leaves the event to the general parse.
#[inline(always)]
fn key_at(b: &[u8], j: usize) -> Option<(u64, usize, Guess)> {
    if *b.get(j)? != b'"' {
        return None;
    }
    let ks = j + 1;
    let w = json::load8(b, ks)?;
    let q = json::bytes_equal(w, b'"');
    let bs = json::bytes_equal(w, b'\\');
    if q != 0 && (bs == 0 || bs.trailing_zeros() > q.trailing_zeros()) {
        // The key and its closing quote, as one word.
        let n = q.trailing_zeros() / 8 + 1;
        let colon = ks + n as usize;
        if *b.get(colon)? != b':' {
            return None;
        }
        let key = w & (u64::MAX >> (64 - 8 * n));
        let guess = if n <= 6 {
            let len = n + 2;
            Guess {
                quoted: (key << 8) | u64::from(b'"') | u64::from(b':') << (8 * (n + 1)),
                mask: u64::MAX >> (64 - 8 * len),
                key,
                len: len as usize,
            }
        } else {
            Guess::NONE
        };
        Some((key, ws(b, colon + 1), guess))
    } else {
        if bs != 0 {
            // An escape in a short key (`p\u0068`): for the general parse, which decodes
            // keys.
            return None;
        }
        let ke = json::string_end(b, ks).ok()?;
        if *b.get(ke + 1)? != b':' {
            return None;
        }
        Some((u64::MAX, ws(b, ke + 2), Guess::NONE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_top_level_in_any_key_order_and_skips_args() {
        let b = br#"{"args":{"data":{"name":"x","ph":"B"}},"cat":"a,b","name":"RunTask","ph":"X","pid":"7","tid":8,"ts":1.5,"dur":2e3,"id":"0x1"}"#;
        let (ev, end) = TraceEvent::parse(b, 0, 100).unwrap();
        assert_eq!(end, b.len());
        assert_eq!(ev.offset, 100);
        assert_eq!(ev.ph, Phase::Complete);
        assert!(ev.is("RunTask"));
        assert_eq!(ev.cat, b"a,b");
        assert_eq!((ev.pid(), ev.tid()), (7, 8));
        assert_eq!(ev.ts(), Some(Timestamp::from_nanos(1500)));
        assert_eq!(ev.dur(), Some(TimeDelta::from_micros(2000)));
        assert_eq!(ev.id().as_deref(), Some("0x1"));
        assert_eq!(ev.args, Some(&br#"{"data":{"name":"x","ph":"B"}}"#[..]));
    }

    #[test]
    fn chunk_args_are_laid_out_while_walking() {
        let b = br#"{"args":{"data":{"cpuProfile":{"nodes":[{"id":1}],"samples":[1,1]},"timeDeltas":[5,7]}},"name":"ProfileChunk","ph":"P"}"#;
        let (ev, end) = TraceEvent::parse(b, 0, 0).unwrap();
        assert_eq!(end, b.len());
        let args = ev.args.unwrap();
        assert_eq!(
            args,
            br#"{"data":{"cpuProfile":{"nodes":[{"id":1}],"samples":[1,1]},"timeDeltas":[5,7]}}"#
        );
        let layout = ev.chunk_layout.unwrap();
        assert_eq!(&args[layout.samples.clone().unwrap()], b"[1,1]");
        assert_eq!(&args[layout.deltas.clone().unwrap()], b"[5,7]");
        assert_eq!(&args[layout.nodes.clone().unwrap()], br#"[{"id":1}]"#);
        assert_eq!(layout, chunk::layout(args).unwrap());
        // Other args, and chunk args that are not JSON inside, are skipped as before.
        let b = br#"{"args":{"data":{"url":"x"}},"ph":"X"}"#;
        let (ev, _) = TraceEvent::parse(b, 0, 0).unwrap();
        assert_eq!(
            (ev.args, ev.chunk_layout),
            (Some(&br#"{"data":{"url":"x"}}"#[..]), None)
        );
        // An array left open in chunk args: incomplete (a stream waits for more bytes),
        // though skipping the args by their braces alone would end them early.
        let b = br#"{"args":{"data":{"timeDeltas":[5,}}},"ph":"X"}"#;
        assert_eq!(
            TraceEvent::parse(b, 0, 0).unwrap_err(),
            json::LexError::Incomplete
        );
        let b = br#"{"args":{"data":{"timeDeltas":[1,2] 3}},"ph":"P"}"#;
        let (ev, _) = TraceEvent::parse(b, 0, 0).unwrap();
        assert_eq!(ev.args, Some(&br#"{"data":{"timeDeltas":[1,2] 3}}"#[..]));
        assert_eq!(ev.chunk_layout, None);
    }

    /// `parse` (compact first) and `parse_general` agree, errors included; `compact`:
    /// whether the compact parse must read it.
    fn same_both_ways(b: &[u8], compact: bool) -> TraceEvent<'_> {
        let general = TraceEvent::parse_general(b, 0, 0);
        assert_eq!(TraceEvent::parse(b, 0, 0), general, "{}", b.escape_ascii());
        let fast = TraceEvent::parse_compact(b, 0, 0);
        assert_eq!(fast.is_some(), compact, "{}", b.escape_ascii());
        if let Some(fast) = fast {
            assert_eq!(Ok(fast), general.clone());
        }
        general.map(|(ev, _)| ev).unwrap_or(TraceEvent::empty(0))
    }

    #[test]
    fn key_guesses_right_or_wrong_read_what_the_general_parse_reads() {
        // One reader for all, as in a walk: each event's guesses are the keys of the one
        // before, at the same positions.
        let events: [&[u8]; 12] = [
            br#"{"args":{},"cat":"toplevel","dur":272,"name":"RunTask","ph":"X","pid":7,"tdur":271,"tid":259,"ts":465455268107,"tts":9035705}"#,
            br#"{"args":{},"cat":"toplevel","dur":9,"name":"RunTask","ph":"X","pid":7,"tdur":8,"tid":259,"ts":465455268400,"tts":9035999}"#,
            // Keys that begin as the guessed ones do but are longer, or shorter.
            br#"{"argsx":{},"ca":"c","durat":5,"name2":"n","p":"X","pidd":1,"tdur":1,"tid":2,"tsx":3,"tts":4}"#,
            // A guessed key written with an escape, and with whitespace before its colon.
            br#"{"args":{},"cat":"escaped","dur":5,"name":"x","ph" :"X"}"#,
            br#"{"args":{},"cat":"a","dur":6,"name":"RunTask","ph":"B","pid":8,"tdur":1,"tid":3,"ts":100}"#,
            // The same keys in another order: no guess holds.
            br#"{"ts":101,"tid":3,"pid":8,"ph":"E","name":"RunTask","cat":"a","args":{}}"#,
            // Keys of 6 and 7 bytes (guessed, and too long to be), then more than 16 keys.
            br#"{"scopes":"s","bind_id":"0x1","ph":"i","s":"t","ts":5,"name":"Mark"}"#,
            br#"{"scopes":"t","bind_id":"0x2","ph":"i","s":"g","ts":6,"name":"Mark"}"#,
            br#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"ts":17,"ph":"X","dur":18}"#,
            br#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"ts":19,"ph":"X","dur":20}"#,
            // Cut inside a guessed key, and a key cut before its colon.
            br#"{"args":{},"ca"#,
            br#"{"args":{},"cat""#,
        ];
        let mut keys = KeyGuess::default();
        let mut read = Vec::new();
        for b in events {
            let general = TraceEvent::parse_general(b, 0, 0);
            let guessed = TraceEvent::parse_guessing(b, 0, 0, &mut keys);
            assert_eq!(guessed, general, "{}", b.escape_ascii());
            read.push(
                guessed
                    .ok()
                    .map(|(ev, _)| (ev.ts(), ev.dur(), ev.cat, ev.ph)),
            );
        }
        let micros = |us| Some(Timestamp::from_micros(us));
        let dur = |us| Some(TimeDelta::from_micros(us));
        assert_eq!(
            read[1],
            Some((
                micros(465_455_268_400),
                dur(9),
                &b"toplevel"[..],
                Phase::Complete
            ))
        );
        assert_eq!(read[2], Some((None, None, &b""[..], Phase::Missing)));
        assert_eq!(
            read[3],
            Some((None, dur(5), &b"escaped"[..], Phase::Complete))
        );
        assert_eq!(read[5], Some((micros(101), None, &b"a"[..], Phase::End)));
        assert_eq!(read[7], Some((micros(6), None, &b""[..], Phase::Instant)));
        assert_eq!(
            read[9],
            Some((micros(19), dur(20), &b""[..], Phase::Complete))
        );
        assert_eq!(read[10..], [None, None]);
    }

    #[test]
    fn compact_parse_reads_chrome_layout_and_leaves_the_rest_to_the_general_one() {
        let ev = same_both_ways(
            br#"{"args":{},"cat":"toplevel","dur":272,"name":"RunTask","ph":"X","pid":73132,"tdur":271,"tid":259,"ts":465455268107,"tts":9035705}"#,
            true,
        );
        assert_eq!(
            (ev.ph, ev.name, ev.cat),
            (Phase::Complete, &b"RunTask"[..], &b"toplevel"[..])
        );
        assert_eq!(
            (ev.pid(), ev.tid(), ev.args),
            (73132, 259, Some(&b"{}"[..]))
        );
        assert_eq!(ev.ts(), Some(Timestamp::from_micros(465_455_268_107)));
        assert_eq!(ev.dur(), Some(TimeDelta::from_micros(272)));
        // Values that are not plain integers, long keys, a later key replacing an earlier
        // one, an id string, a key with a NUL byte (not `ts`), an empty key and object.
        // (The escaped key `ts\u0000` is decoded by the general parse, and is not `ts`.)
        let ev = same_both_ways(
            br#"{"":0,"ts":1.5,"pid":"7","tid":-3,"dur":2e3,"a_long_key":[1,{"ts":9}],"id":"0x1","ph":"B","ph":"E","ts\u0000":4}"#,
            false,
        );
        assert_eq!((ev.ph, ev.pid(), ev.tid()), (Phase::End, 7, -3));
        assert_eq!(ev.ts(), Some(Timestamp::from_nanos(1500)));
        assert_eq!(ev.dur(), Some(TimeDelta::from_micros(2000)));
        assert_eq!(ev.id().as_deref(), Some("0x1"));
        let raw_nul = b"{\"ts\":5,\"ts\x00\":4,\"cat\":\"x\"}";
        assert_eq!(
            same_both_ways(raw_nul, true).ts(),
            Some(Timestamp::from_micros(5))
        );
        same_both_ways(b"{}", true);
        // Pretty-printed, as `json.dump(indent=2)` and older DevTools exports write it:
        // whitespace after `{`, `:` and `,` and before `,` and `}` is the compact parse's.
        let pretty = b"{\n  \"args\": {},\n  \"cat\": \"toplevel\" ,\n  \"dur\": 272,\n  \
                       \"name\":\t\"RunTask\",\r\n  \"ph\": \"X\",\n  \"pid\": 73132,\n  \
                       \"ts\": 465455268107\n  } ";
        let ev = same_both_ways(pretty, true);
        assert_eq!(
            (ev.ph, ev.name, ev.cat, ev.args),
            (
                Phase::Complete,
                &b"RunTask"[..],
                &b"toplevel"[..],
                Some(&b"{}"[..])
            )
        );
        assert_eq!((ev.pid(), ev.tid()), (73132, 0));
        assert_eq!(ev.ts(), Some(Timestamp::from_micros(465_455_268_107)));
        assert_eq!(ev.dur(), Some(TimeDelta::from_micros(272)));
        assert_eq!(
            TraceEvent::parse_compact(pretty, 0, 0).map(|(_, end)| end),
            Some(pretty.len() - 1)
        );
        // Whitespace before a colon, escaped keys, a name that is not a string, cut or broken bytes, a
        // key fewer than 8 bytes before the end of the buffer: the general parse's (with
        // its errors).
        for b in [
            &br#"{ "ph":"X","ts":1}"#[..],
            br#"{"ph" : "X"}"#,
            br#"{"ph":"X" ,"ts":1}"#,
            br#"{"p\u0068":"X","ts":1}"#,
            br#"{"name":7,"ph":"X"}"#,
            br#"{"ph":"X","ts":12"#,
            br#"{"ph":"X","ts":}"#,
            br#"{"ph":"X";"ts":1}"#,
            br#"{"ph":"X","ts":1"#,
            br#"{"args":{"data":{"timeDeltas":[5,}}},"ph":"X"}"#,
            br#"{"ts":1}"#,
        ] {
            same_both_ways(b, false);
        }
    }

    #[test]
    fn escaped_keys_and_names_are_decoded_before_matching() {
        // `Run\u0054ask` is `RunTask`, `p\u0068` is `ph`, `\u0058` is `X`: on the compact
        // path (escaped names) and the general one (escaped keys) alike.
        let ev = same_both_ways(
            br#"{"args":{},"dur":5,"name":"Run\u0054ask","ph":"X","pid":1,"tid":2,"ts":10,"tts":123456}"#,
            true,
        );
        assert!(ev.is("RunTask"));
        let ev = same_both_ways(
            br#"{"name":"Profile\u0043hunk","p\u0068":"\u0050","t\u0073":10}"#,
            false,
        );
        assert_eq!((ev.name, ev.ph), (&b"ProfileChunk"[..], Phase::Sample));
        assert_eq!(ev.ts(), Some(Timestamp::from_micros(10)));
        let ev = same_both_ways(br#"{"name":"thread\u005fname","ph":"M","pid":12345}"#, true);
        assert!(ev.is("thread_name"));
        // A name that decodes to none the scan matches keeps its raw content.
        let ev = same_both_ways(br#"{"name":"caf\u00e9","ph":"X","pid":12345}"#, true);
        assert_eq!(ev.name, br"caf\u00e9");
    }

    #[test]
    fn ph_longer_than_one_char_is_no_phase() {
        for b in [
            &br#"{"ph":"Xyz","name":"RunTask","pid":12345}"#[..],
            br#"{"ph":"XX","pid":12345}"#,
            br#"{"ph":"Mx","pid":12345}"#,
            br#"{"ph":"","pid":12345}"#,
        ] {
            assert_eq!(
                same_both_ways(b, true).ph,
                Phase::Invalid,
                "{}",
                b.escape_ascii()
            );
        }
        assert_eq!(
            same_both_ways(br#"{"ph":"M","pid":12345}"#, true).ph,
            Phase::Metadata
        );
    }

    #[test]
    fn missing_fields_and_string_args() {
        let b = br#"{ "ph" : "M" , "args" : "__stripped__" }"#;
        let (ev, _) = TraceEvent::parse(b, 0, 0).unwrap();
        assert_eq!(ev.ph, Phase::Metadata);
        assert_eq!(ev.name, b"");
        assert_eq!(ev.pid(), 0);
        assert_eq!(ev.ts(), None);
        assert_eq!(ev.args, Some(&br#""__stripped__""#[..]));
    }

    #[test]
    fn cut_event_is_incomplete_and_junk_is_malformed() {
        assert_eq!(
            TraceEvent::parse(br#"{"ph":"X","ts":1"#, 0, 0).unwrap_err(),
            json::LexError::Incomplete
        );
        assert!(matches!(
            TraceEvent::parse(br#"{"ph" "X"}"#, 0, 0).unwrap_err(),
            json::LexError::Malformed { offset: 6, .. }
        ));
    }
}

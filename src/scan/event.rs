//! One trace event's top level, read without building `args`.
//!
//! A trace event is a JSON object whose top-level keys (in any order) include `ph`, `name`,
//! `cat`, `pid`, `tid`, `ts`, `dur`, `id`, `s` and `args` (Trace Event Format, Chrome
//! `TraceEvent::AppendAsJSON`). [`TraceEvent::parse`] records where each of those values
//! lies in the bytes and skips everything else; `args` stays raw until a later stage
//! decides the event matters.

use super::chunk::{self, ChunkLayout};
use super::json::{self, Lexed, skip_value, string_content};
use crate::time::{TimeDelta, Timestamp};

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
    /// `ph` missing or not a string.
    Missing,
}

impl Phase {
    fn from_raw(raw: Option<&[u8]>) -> Phase {
        match raw.and_then(string_content).and_then(|s| s.first()) {
            Some(b'X') => Phase::Complete,
            Some(b'B') => Phase::Begin,
            Some(b'E') => Phase::End,
            Some(b'I' | b'i') => Phase::Instant,
            Some(b'M') => Phase::Metadata,
            Some(b'P') => Phase::Sample,
            Some(&c) => Phase::Other(c),
            None => Phase::Missing,
        }
    }
}

/// The top level of one trace event, borrowing the file's bytes. String fields hold the
/// raw content between the quotes (escapes not resolved; the names taskchain matches
/// never contain any).
#[derive(Clone, Debug)]
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
    /// `args` as raw JSON bytes (object, string such as `"__stripped__"`, ...), if present.
    pub args: Option<&'a [u8]>,
    /// The [`chunk::layout`] of `args`, read during the parse when `args` starts as a
    /// `ProfileChunk`'s does ([`chunk::looks_like_chunk`]); `None` otherwise.
    pub chunk_layout: Option<Box<ChunkLayout>>,
}

impl<'a> TraceEvent<'a> {
    /// Parses the object starting at `b[i]` (which must be `{`). `base` is the offset of
    /// `b[0]` in the file. Returns the event and the offset just past its `}`.
    pub fn parse(b: &'a [u8], i: usize, base: u64) -> Lexed<(TraceEvent<'a>, usize)> {
        debug_assert_eq!(b.get(i), Some(&b'{'));
        let mut ev = TraceEvent {
            offset: base + i as u64,
            ph: Phase::Missing,
            name: b"",
            cat: b"",
            raw_pid: None,
            raw_tid: None,
            raw_ts: None,
            raw_dur: None,
            raw_id: None,
            args: None,
            chunk_layout: None,
        };
        let mut raw_ph = None;
        let end = json::members_with(b, i, |key, v| {
            if key == b"args" {
                return ev.read_args(b, v);
            }
            let end = skip_value(b, v)?;
            let raw = &b[v..end];
            match key {
                b"ph" => raw_ph = Some(raw),
                b"name" => ev.name = string_content(raw).unwrap_or(b""),
                b"cat" => ev.cat = string_content(raw).unwrap_or(b""),
                b"pid" => ev.raw_pid = Some(raw),
                b"tid" => ev.raw_tid = Some(raw),
                b"ts" => ev.raw_ts = Some(raw),
                b"dur" => ev.raw_dur = Some(raw),
                b"id" => ev.raw_id = Some(raw),
                _ => {}
            }
            Ok(end)
        })?;
        ev.ph = Phase::from_raw(raw_ph);
        Ok((ev, end))
    }

    /// Reads the `args` value at `b[v]` (a later `args` replaces an earlier one) and
    /// returns the offset past it. A chunk's args ([`chunk::looks_like_chunk`]) are laid
    /// out in place of skipping them; bytes that end inside them are incomplete, never
    /// skipped (a stream must wait for the rest and then read them as a whole file would);
    /// not JSON inside: skipped, as any value.
    #[inline(always)]
    fn read_args(&mut self, b: &'a [u8], v: usize) -> Lexed<usize> {
        self.chunk_layout = None;
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
                self.chunk_layout = Some(Box::new(layout));
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
    /// `id` as raw JSON bytes (`"0x1"` with its quotes, `7`), if present.
    pub fn raw_id(&self) -> Option<&'a [u8]> {
        self.raw_id
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
        assert_eq!(*layout, chunk::layout(args).unwrap());
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

//! Scanning a trace that arrives in blocks (a gzip stream), never held whole in memory.
//!
//! Blocks are appended to a buffer; events are walked as in [`super::walk`]; the partial
//! event at a block's end is kept and completed by the next block. Event offsets are
//! offsets in the whole decompressed stream. Sample arrays are read at once (packed,
//! [`super::records::PackedStore`]), as the stream cannot be read twice.

use super::{ArrayEnd, Collector, RangeEnd, ScanError, ScannedTrace, Walked, finish_walk, walk_at};
use crate::input::BlockSource;
use crate::scan::envelope::{self, Envelope, EnvelopeError};

/// What went wrong before any event: not a trace at all.
#[derive(Debug)]
pub(crate) enum StreamError {
    /// The envelope is not a trace's.
    Envelope(EnvelopeError),
    /// A JSON object of another kind, with its top-level keys and the bytes read so far.
    OtherObject(Vec<String>, Vec<u8>),
    /// The events could not be read.
    Scan(ScanError),
    /// The stream broke (a gzip error) before the envelope was known.
    Broken(std::io::Error),
}

/// Scans a trace from `source` (an error ends the stream: it is returned for the caller
/// to report, with what was read before it). Returns the scan and that error.
pub(crate) fn scan_blocks(
    source: &mut impl BlockSource,
) -> Result<(ScannedTrace, Option<std::io::Error>), StreamError> {
    let mut stream_error = None;
    fn next(
        source: &mut impl BlockSource,
        buf: &mut Vec<u8>,
        err: &mut Option<std::io::Error>,
    ) -> bool {
        match source.append_to(buf) {
            Ok(more) => more,
            Err(e) => {
                *err = Some(e);
                false
            }
        }
    }
    // The envelope: read until it is known. Whitespace before it is not kept (a stream
    // of a gigabyte of spaces would otherwise be held whole); `skipped` bytes of it.
    let mut buf: Vec<u8> = Vec::new();
    let mut skipped = 0usize;
    let mut more = true;
    let (start, ndjson) = loop {
        match envelope::detect(&buf) {
            Ok(Envelope::Events { start, .. }) => break (start, super::is_ndjson(&buf, start)),
            Ok(Envelope::OtherObject { keys }) => return Err(StreamError::OtherObject(keys, buf)),
            Err(EnvelopeError::Empty) if more => {
                skipped += buf.len();
                buf.clear();
                more = next(source, &mut buf, &mut stream_error);
            }
            Err(EnvelopeError::CutOff { .. }) if more => {
                // Read until the buffer doubles before looking again: a large leading
                // object (DevTools writes `metadata` first) costs O(n), not O(n²).
                let target = (buf.len() * 2).max(1);
                while more && buf.len() < target {
                    more = next(source, &mut buf, &mut stream_error);
                }
            }
            Err(e) => {
                return Err(match stream_error {
                    Some(io) => StreamError::Broken(io),
                    None => StreamError::Envelope(e.shifted(skipped)),
                });
            }
        }
    };
    // DevTools writes `metadata` (with any embedded source maps) before the events.
    let mut map_diagnostics = crate::vocab::Diagnostics::default();
    let embedded_maps = envelope::metadata_range(&buf, start, None)
        .map(|(a, b)| envelope::embedded_maps(&buf[a..b], &mut map_diagnostics))
        .unwrap_or_default();
    let mut pieces = Pieces {
        source,
        stream_error: &mut stream_error,
        more,
        ndjson,
        read_end: (skipped + buf.len()) as u64,
        mat: buf,
        mat_base: skipped as u64,
        mat_from: start,
        want: 0,
        sequential: rayon::current_num_threads() < 2,
        squeeze: None,
        unsqueezable: None,
        tail: (Vec::new(), 0),
    };
    let mut c = Collector::default();
    let mut total = Walked::at(start);
    let mut in_object = !ndjson && pieces.mat[..start].contains(&b'{');
    let mut first_close = None;
    // Notes on what followed the first trace: (a second trace at, events before it) and
    // bytes ignored from an offset (their count is known at the stream's end).
    let mut second: Vec<(u64, u64)> = Vec::new();
    let mut ignored: Option<(u64, bool)> = None;
    'traces: loop {
        let (pc, mut walked) = pieces.scan();
        c.merge(pc);
        let end = std::mem::replace(&mut walked.end, RangeEnd::Reached(0));
        // The `]` of this trace's array (none for NDJSON, closed by the end of the bytes).
        let close = walked.closed_at;
        total.extend(walked);
        total.end = end;
        if let Some(&(at, before)) = second.last()
            && total.events == before
        {
            // No event in what looked like a second trace: it is ignored.
            second.pop();
            ignored = Some((at, false));
            break;
        }
        first_close = first_close.or(total.closed_at);
        // What follows the closed array: read until that is known (the rest of the
        // envelope object, such as `metadata`, is held only until then). The material
        // starts at the `]`.
        let (RangeEnd::Ended(ArrayEnd::Closed), Some(_)) = (&total.end, close) else {
            break;
        };
        loop {
            let base = pieces.mat_base + pieces.mat_from as u64;
            match envelope::after_events(&pieces.mat[pieces.mat_from..], 0, in_object) {
                // Only whitespace so far is no end while the stream reads on: the bytes
                // that follow decide (a block may end right after the `]`).
                envelope::After::NeedMore { .. } | envelope::After::Nothing if pieces.more => {
                    let target = ((pieces.mat.len() - pieces.mat_from) * 2).max(1);
                    while pieces.mat.len() - pieces.mat_from < target && pieces.gather() {}
                }
                envelope::After::Nothing => break 'traces,
                envelope::After::NeedMore { from: offset }
                | envelope::After::Ignored { offset, nul: false } => {
                    ignored = Some((base + offset as u64, false));
                    break 'traces;
                }
                envelope::After::Ignored { offset, nul: true } => {
                    // NUL padding so far: the bytes still to come decide it
                    // (`Pieces::read_to_end`), as the whole file's would.
                    ignored = Some((base + offset as u64, true));
                    break 'traces;
                }
                envelope::After::Events {
                    at,
                    start,
                    in_object: inside,
                } => {
                    second.push((base + at as u64, total.events));
                    in_object = inside;
                    pieces.ndjson = super::is_ndjson(&pieces.mat[pieces.mat_from..], start);
                    pieces.mat_from += start;
                    continue 'traces;
                }
            }
        }
    }
    let (tail, tail_base) = std::mem::take(&mut pieces.tail);
    let mut t = finish_walk(c, total, (skipped + start) as u64, |offset| {
        let at = offset.checked_sub(tail_base)?;
        tail.get(at as usize..)
    })
    .map_err(StreamError::Scan)?;
    pieces.source.recycle(tail);
    t.embedded_maps = embedded_maps;
    t.diagnostics.merge(&map_diagnostics);
    t.closed_at = first_close;
    // Read the stream to its end even after the events: gzip's integrity checks (CRC and
    // length) come last, and a corrupt file must not pass as a good one.
    let mut nul = matches!(ignored, Some((_, true)));
    let len = pieces.read_to_end(&mut nul);
    if let Some((_, n)) = &mut ignored {
        *n &= nul;
    }
    let mat = std::mem::take(&mut pieces.mat);
    pieces.source.recycle(mat);
    for (k, &(at, before)) in second.iter().enumerate() {
        let after = second.get(k + 1).map_or(t.events, |s| s.1);
        t.diagnostics
            .note(super::second_trace_note(at, after - before));
    }
    if let Some((offset, nul)) = ignored {
        t.diagnostics
            .note(super::ignored_after_note(offset, len - offset, nul));
    }
    Ok((t, stream_error))
}

/// Bytes gathered without a line start before the stream is walked in place (one thread):
/// a huge event, or a trace written on one line.
const IN_PLACE_AFTER: usize = 8 << 20;

/// Pieces made beyond one per thread: merges go in stream order, so a thread that finishes
/// its piece while the one before it is still walked finds the next one made instead of
/// waiting (each holds a decoder buffer until merged). Too few, and the thread making
/// pieces waits for the oldest one to merge while the decoder, its buffers all full of
/// blocks no thread can walk yet, waits too: a core idles.
const PIECES_AHEAD: usize = 6;

/// A part of the stream to walk: `bytes[from..cut]`, at stream offset `base` + index.
struct Piece {
    k: usize,
    bytes: Vec<u8>,
    base: u64,
    from: usize,
    cut: usize,
    at_end: bool,
}

impl Piece {
    fn start(&self) -> u64 {
        self.base + self.from as u64
    }
}

/// What [`Pieces::next_piece`] makes.
enum Next {
    /// A piece to walk.
    Walk(Piece),
    /// A piece walked in place.
    Walked(Box<Done>),
}

/// A walked piece.
struct Done {
    piece: Piece,
    c: Collector,
    w: Walked,
}

fn walk_piece(piece: Piece, ndjson: bool) -> Done {
    let mut c = Collector::default();
    let w = walk_at(
        &piece.bytes[..piece.cut],
        piece.base,
        piece.from,
        usize::MAX,
        ndjson,
        piece.at_end,
        &mut |ev| c.event(ev),
    );
    Done { piece, c, w }
}

/// The events of a stream, walked in pieces on the current rayon pool: each piece is the
/// partial event carried over from the piece before and the blocks after it, cut at the
/// last line start (Chrome writes one event per line). A cut is trusted only when the
/// walk of the piece before it, which started at a trusted place, stops exactly there (as
/// the parallel scan of a whole file checks its split points); a wrong cut is walked again
/// from the true place, and the rest of the stream in place, on this thread. Each piece
/// has its own [`Collector`]; they are merged in stream order, so the result is that of
/// one walk.
struct Pieces<'s, S: BlockSource> {
    source: &'s mut S,
    stream_error: &'s mut Option<std::io::Error>,
    /// More blocks may come.
    more: bool,
    ndjson: bool,
    /// What the next piece is made of: `mat[mat_from..]`, at stream offset `mat_base` +
    /// index.
    mat: Vec<u8>,
    mat_base: u64,
    mat_from: usize,
    /// Bytes to gather before walking in place again (a huge event: twice what is held).
    want: usize,
    /// Walk in place, one piece after another (one thread, or after a wrong cut).
    sequential: bool,
    /// Cutting the long strings of a huge unfinished event at `mat[mat_from..]`.
    squeeze: Option<Squeeze>,
    /// Stream offset of an event the squeeze gave up on (not squeezed again).
    unsqueezable: Option<u64>,
    /// Stream offset of the end of the bytes read so far.
    read_end: u64,
    /// The bytes of the last piece walked, with the stream offset of its first byte
    /// (for [`finish_walk`]).
    tail: (Vec<u8>, u64),
}

impl<S: BlockSource> Pieces<'_, S> {
    /// Adds the next block to the material; false at the end of the stream.
    fn gather(&mut self) -> bool {
        if !self.more {
            return false;
        }
        match self.source.next_block() {
            Ok(Some((mut block, room))) => {
                self.read_end += (block.len() - room) as u64;
                let carry = self.mat.len() - self.mat_from;
                if carry <= room {
                    // The carried-over bytes go in the room before the block.
                    block[room - carry..room].copy_from_slice(&self.mat[self.mat_from..]);
                    let at = self.mat_base + self.mat_from as u64;
                    let old = std::mem::replace(&mut self.mat, block);
                    self.source.recycle(old);
                    if let Some(sq) = &mut self.squeeze {
                        sq.moved(self.mat_from, room - carry);
                    }
                    self.mat_from = room - carry;
                    self.mat_base = at - self.mat_from as u64;
                } else {
                    self.mat.extend_from_slice(&block[room..]);
                    self.source.recycle(block);
                }
                #[cfg(test)]
                PEAK_HELD.with(|p| p.set(p.get().max(self.mat.len() - self.mat_from)));
                true
            }
            Ok(None) => {
                self.more = false;
                false
            }
            Err(e) => {
                *self.stream_error = Some(e);
                self.more = false;
                false
            }
        }
    }

    /// Reads the rest of the stream, dropping it; returns the stream's length. `nul`, when
    /// true, stays true only while every byte read is padding ([`envelope::is_padding`]).
    fn read_to_end(&mut self, nul: &mut bool) -> u64 {
        while self.more {
            let (mat, from) = (std::mem::take(&mut self.mat), self.mat_from);
            self.mat_from = 0;
            self.source.recycle(mat);
            self.mat_base += from as u64;
            self.gather();
            if *nul {
                *nul = envelope::is_padding(&self.mat[self.mat_from..]);
            }
        }
        self.read_end
    }

    /// Makes a piece of the material that ends at `cut`, keeping `mat[cut..]` as the
    /// start of the next.
    fn take(&mut self, k: usize, cut: usize) -> Piece {
        let carry = self.mat[cut..].to_vec();
        let bytes = std::mem::replace(&mut self.mat, carry);
        let piece = Piece {
            k,
            base: self.mat_base,
            from: self.mat_from,
            cut,
            at_end: !self.more,
            bytes,
        };
        self.mat_base += cut as u64;
        self.mat_from = 0;
        piece
    }

    /// The next piece to walk (or one walked in place), `None` when the stream is done.
    fn next_piece(&mut self, k: usize) -> Option<Next> {
        loop {
            let len = self.mat.len();
            if !self.more {
                if len == self.mat_from && self.want == usize::MAX {
                    return None; // the last piece was made
                }
                self.want = usize::MAX;
                return Some(Next::Walk(self.take(k, len)));
            }
            let held = len - self.mat_from;
            if let Some(sq) = &mut self.squeeze {
                match sq.step(&mut self.mat, self.mat_from) {
                    Squeezed::Open => {
                        self.gather();
                        continue;
                    }
                    Squeezed::Gave => {
                        self.unsqueezable = Some(self.mat_base + self.mat_from as u64);
                        self.squeeze = None;
                        self.want = 0;
                    }
                    Squeezed::Complete(end) => {
                        // The event alone, walked in place; the bytes after it are at
                        // their stream offsets again.
                        let removed = sq.removed;
                        self.squeeze = None;
                        self.want = 0;
                        let more = std::mem::replace(&mut self.more, true);
                        let piece = self.take(k, end);
                        self.more = more;
                        self.mat_base += removed;
                        let mut done = walk_piece(piece, self.ndjson);
                        if let RangeEnd::Ended(ArrayEnd::Truncated { offset }) = &mut done.w.end
                            && *offset == done.piece.base + end as u64
                        {
                            *offset += removed;
                        }
                        return Some(Next::Walked(Box::new(done)));
                    }
                }
            }
            if !self.sequential
                && let Some(cut) = last_line_start(&self.mat, self.mat_from + 1)
            {
                self.want = 0;
                return Some(Next::Walk(self.take(k, cut)));
            }
            if (self.sequential || held >= IN_PLACE_AFTER) && held > self.want {
                let at = self.mat_base + self.mat_from as u64;
                let mut piece = Piece {
                    k,
                    base: self.mat_base,
                    from: self.mat_from,
                    cut: len,
                    at_end: false,
                    bytes: std::mem::take(&mut self.mat),
                };
                let done = walk_piece(piece, self.ndjson);
                let stop = match done.w.end {
                    RangeEnd::Ended(ArrayEnd::Truncated { offset }) => Some(offset),
                    _ => None,
                };
                if stop == Some(at) && done.w.events + done.w.non_objects == 0 {
                    // No event finished: a huge one; gather twice what is held first
                    // (but walk again once it reaches the squeeze's size), and past that
                    // size, cut its long strings as they come.
                    piece = done.piece;
                    self.mat = piece.bytes;
                    self.want = if held < SQUEEZE_AFTER {
                        (held * 2).min(SQUEEZE_AFTER)
                    } else {
                        held * 2
                    };
                    if held >= SQUEEZE_AFTER && self.unsqueezable != Some(at) {
                        self.squeeze = Some(Squeeze::default());
                    }
                } else {
                    self.want = 0;
                    let cut = stop.map_or(len, |s| (s - done.piece.base) as usize);
                    self.mat = done.piece.bytes[cut..].to_vec();
                    self.mat_base = done.piece.base + cut as u64;
                    self.mat_from = 0;
                    return Some(Next::Walked(Box::new(done)));
                }
            }
            self.gather(); // at the end, the loop makes the last piece
        }
    }

    /// Walks one event array from `mat[mat_from..]` to its end. Returns the merged
    /// collector and the walk; the last piece walked is left in `tail`. When the array
    /// closed, the material is left starting at its `]`, with every byte read after it
    /// (to tell what follows: nothing, more traces, or bytes to ignore).
    fn scan(&mut self) -> (Collector, Walked) {
        let limit = rayon::current_num_threads().max(1) + PIECES_AHEAD;
        let ndjson = self.ndjson;
        self.want = 0;
        // Held at once: the pieces made and not merged (at most `limit`), the last one
        // merged, and the material.
        self.source.will_hold(limit + 2);
        let mut after: Vec<Piece> = Vec::new();
        let (tx, rx) = std::sync::mpsc::channel::<Done>();
        let mut c = Collector::default();
        let mut total = Walked::at(self.mat_from);
        let mut expect = self.mat_base + self.mat_from as u64;
        let mut last: Option<Piece> = None;
        let mut ended = false;
        rayon::in_place_scope(|scope| {
            let mut results: std::collections::BTreeMap<usize, Done> = Default::default();
            let (mut made, mut merged, mut in_flight) = (0usize, 0usize, 0usize);
            let mut done_making = false;
            loop {
                // Make pieces until `limit` are being walked or wait to be merged.
                while !done_making && !ended && made - merged < limit {
                    match self.next_piece(made) {
                        None => done_making = true,
                        Some(Next::Walked(walked)) => {
                            results.insert(made, *walked);
                            made += 1;
                            break;
                        }
                        Some(Next::Walk(piece)) => {
                            made += 1;
                            in_flight += 1;
                            if self.sequential {
                                results.insert(piece.k, walk_piece(piece, ndjson));
                                in_flight -= 1;
                                break;
                            }
                            let tx = tx.clone();
                            scope.spawn(move |_| {
                                let _ = tx.send(walk_piece(piece, ndjson));
                            });
                        }
                    }
                }
                // Merge what is done, in order.
                while let Some(done) = results.remove(&merged) {
                    merged += 1;
                    let Done { piece, c: pc, w } = done;
                    if ended {
                        after.push(piece);
                        continue;
                    }
                    if piece.start() != expect {
                        // A wrong cut: the piece before stopped earlier. Walk again from
                        // there, in place, with every byte after it.
                        let prev = last.take().expect("the first piece starts where expected");
                        let mut bytes =
                            prev.bytes[(expect - prev.base) as usize..prev.cut].to_vec();
                        self.source.recycle(prev.bytes);
                        let mut later = vec![piece];
                        while in_flight > 0 {
                            let d = wait_one(&rx);
                            in_flight -= 1;
                            results.insert(d.piece.k, d);
                        }
                        later.extend(std::mem::take(&mut results).into_values().map(|d| d.piece));
                        merged = made;
                        for p in later {
                            bytes.extend_from_slice(&p.bytes[p.from..p.cut]);
                            self.source.recycle(p.bytes);
                        }
                        bytes.extend_from_slice(&self.mat[self.mat_from..]);
                        let old = std::mem::replace(&mut self.mat, bytes);
                        self.source.recycle(old);
                        self.mat_base = expect;
                        self.mat_from = 0;
                        self.want = 0;
                        self.sequential = true;
                        done_making = false;
                        break;
                    }
                    c.merge(pc);
                    let mut w = w;
                    let end = std::mem::replace(&mut w.end, RangeEnd::Reached(0));
                    total.extend(w);
                    match end {
                        RangeEnd::Ended(ArrayEnd::Truncated { offset }) if !piece.at_end => {
                            expect = offset;
                        }
                        end => {
                            total.end = end;
                            ended = true;
                        }
                    }
                    if let Some(prev) = last.replace(piece) {
                        self.source.recycle(prev.bytes);
                    }
                }
                if in_flight == 0 && (done_making || ended) && results.is_empty() {
                    break;
                }
                // Wait for a walk, helping with the pool's work meanwhile.
                if in_flight > 0 && (made - merged >= limit || done_making || ended) {
                    let d = wait_one(&rx);
                    in_flight -= 1;
                    results.insert(d.piece.k, d);
                }
            }
        });
        let last = last.expect("at least one piece");
        if let (RangeEnd::Ended(ArrayEnd::Closed), Some(close)) = (&total.end, total.closed_at) {
            // What was read after the `]` becomes the material again. (Should a huge event
            // after it have been squeezed, offsets past it are short by the bytes cut.)
            let mut rest = last.bytes[(close - last.base) as usize..last.cut].to_vec();
            for p in &after {
                rest.extend_from_slice(&p.bytes[p.from..p.cut]);
            }
            rest.extend_from_slice(&self.mat[self.mat_from..]);
            let old = std::mem::replace(&mut self.mat, rest);
            self.source.recycle(old);
            self.mat_base = close;
            self.mat_from = 0;
            self.tail = (Vec::new(), close);
            self.source.recycle(last.bytes);
        } else {
            self.tail = (last.bytes, last.base);
        }
        for p in after {
            self.source.recycle(p.bytes);
        }
        (c, total)
    }
}

/// Raw bytes kept of a string in an event too large to hold whole in a stream (with any
/// escape and UTF-8 character whole): more than any reader keeps of one string.
const SQUEEZE_KEEP: usize = 8 << 20;
/// Size of an unfinished event from which its long strings are cut as they arrive.
const SQUEEZE_AFTER: usize = 32 << 20;

/// The walk through an unfinished event that cuts its long strings as they arrive, so that
/// a stream holds of a huge event only its structure and the first [`SQUEEZE_KEEP`] bytes
/// of each string (a 2 GiB screenshot string costs 8 MiB, not 2 GiB).
#[derive(Debug, Default)]
struct Squeeze {
    /// Next byte to read, as an index in the material.
    at: usize,
    /// Nesting depth of objects and arrays.
    depth: usize,
    /// Index of the current string's first content byte, when inside one.
    string: Option<usize>,
    /// Bytes cut out so far.
    removed: u64,
}

enum Squeezed {
    /// The event ends before this index (exclusive).
    Complete(usize),
    /// More bytes are needed.
    Open,
    /// Not what a valid event looks like here (a line break inside a string): let the
    /// walk judge it.
    Gave,
}

#[cfg(test)]
thread_local! {
    /// The most bytes of material held at once by the last stream scans on this thread.
    static PEAK_HELD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Squeeze {
    /// The material's bytes moved from index `from` to `to`.
    fn moved(&mut self, from: usize, to: usize) {
        self.at = self.at.max(from) - from + to;
        self.string = self.string.map(|i| i - from + to);
    }

    /// Reads on through `mat` (the event starts at `from`), cutting every string longer
    /// than [`SQUEEZE_KEEP`] to its first bytes.
    fn step(&mut self, mat: &mut Vec<u8>, from: usize) -> Squeezed {
        if self.at < from {
            self.at = from;
        }
        loop {
            if let Some(s) = self.string {
                // The string's end (an unescaped quote) from `at`, or where the bytes stop.
                let mut i = self.at;
                let (mut stop, closed) = loop {
                    let Some(k) = memchr::memchr3(b'"', b'\\', b'\n', &mat[i..]) else {
                        break (mat.len(), false);
                    };
                    let h = i + k;
                    match mat[h] {
                        b'"' => break (h, true),
                        b'\\' if h + 1 >= mat.len() => break (h, false),
                        b'\\' => i = h + 2,
                        _ => return Squeezed::Gave,
                    }
                };
                if stop - s > SQUEEZE_KEEP {
                    let cut = safe_cut(mat, s, s + SQUEEZE_KEEP);
                    mat.drain(cut..stop);
                    self.removed += (stop - cut) as u64;
                    stop = cut;
                }
                if !closed {
                    self.at = stop;
                    return Squeezed::Open;
                }
                self.string = None;
                self.at = stop + 1;
                continue;
            }
            let Some(&c) = mat.get(self.at) else {
                return Squeezed::Open;
            };
            self.at += 1;
            match c {
                b'"' => self.string = Some(self.at),
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Squeezed::Complete(self.at);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Where a string whose content starts at `s` may be cut at or before `at`: not inside an
/// escape or a UTF-8 character.
fn safe_cut(b: &[u8], s: usize, mut at: usize) -> usize {
    // An escape starting in the 6 bytes before `at` that runs past it: cut before it.
    for back in 1..=6.min(at - s) {
        let j = at - back;
        if b[j] == b'\\' {
            let run = b[s..=j].iter().rev().take_while(|&&x| x == b'\\').count();
            if run % 2 == 1 {
                let len = if b.get(j + 1) == Some(&b'u') { 6 } else { 2 };
                if j + len > at {
                    at = j;
                }
                break;
            }
        }
    }
    while at > s && (b[at] & 0xC0) == 0x80 {
        at -= 1;
    }
    at
}

/// The next walk to finish, running the pool's other work meanwhile (the walks may wait
/// in this thread's own queue).
fn wait_one(rx: &std::sync::mpsc::Receiver<Done>) -> Done {
    loop {
        if let Ok(d) = rx.try_recv() {
            return d;
        }
        if rayon::yield_now() != Some(rayon::Yield::Executed)
            && let Ok(d) = rx.recv_timeout(std::time::Duration::from_millis(1))
        {
            return d;
        }
    }
}

/// The last line start in `b[from..]` that may start an event: a `{` first on its line,
/// after a `,` or `}` ending the line before.
fn last_line_start(b: &[u8], from: usize) -> Option<usize> {
    let from = from.min(b.len());
    for nl in memchr::memrchr_iter(b'\n', &b[from..]) {
        let j = crate::json::skip_ws(b, from + nl + 1);
        if b.get(j) != Some(&b'{') {
            continue;
        }
        let before = b[..from + nl]
            .iter()
            .rev()
            .find(|&&x| !crate::json::is_ws(x));
        if matches!(before, Some(b',' | b'}')) {
            return Some(j);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(text: &[u8], size: usize) -> Vec<std::io::Result<Vec<u8>>> {
        text.chunks(size).map(|c| Ok(c.to_vec())).collect()
    }

    #[test]
    fn same_result_for_any_block_size() {
        let text = br#"{"metadata":{"a":[1,2,3]},"traceEvents":[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}},{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":10,"dur":60000},{"ph":"P","name":"ProfileChunk","id":"0x1","pid":1,"tid":2,"ts":20,"args":{"data":{"cpuProfile":{"samples":[1,2]},"timeDeltas":[5,6]}}}]}"#;
        let Envelope::Events { start, .. } = envelope::detect(text).unwrap() else {
            unreachable!()
        };
        let whole = super::super::scan(text, start, false).unwrap();
        for size in [1, 2, 3, 7, 16, 64, 1000] {
            let (t, err) = scan_blocks(&mut blocks(text, size).into_iter()).unwrap();
            assert!(err.is_none());
            assert_eq!(t.events, whole.events, "block size {size}");
            assert_eq!(t.task_marks, whole.task_marks, "block size {size}");
            assert_eq!(t.thread_names, whole.thread_names);
            assert_eq!(t.profile_data, whole.profile_data, "block size {size}");
            assert_eq!(t.end, Some(ArrayEnd::Closed));
        }
    }

    #[test]
    fn event_timing_begins_and_ends_are_kept_on_every_scan_path() {
        // Chrome 156's layout (the keydown of the shared recording), an end, a begin paired
        // by `id2.local` in a pretty-printed event, one with `args.frame` (older traces),
        // an instant of the same name (no Event Timing phase) and one without `ts`.
        let text = br#"{"traceEvents":[
{"args":{"data":{"cancelable":true,"duration":121.452,"frame":"8C31","interactionId":5414,"nodeId":3,"processingEnd":1718.327,"processingStart":1613.952,"timeStamp":1612.758,"type":"keydown"}},"cat":"devtools.timeline","id":"0x25","name":"EventTiming","ph":"b","pid":1658,"tid":1658,"ts":2798187621},
{"args":{},"cat":"devtools.timeline","id":"0x25","name":"EventTiming","ph":"e","pid":1658,"tid":1658,"ts":2798309073},
{ "args": {"data": {"duration": 40, "interactionId": 7, "processingEnd": 2610, "processingStart": 2610, "timeStamp": 2606, "type": "click"}, "frame": "F1"}, "cat": "devtools.timeline", "id2": {"local": "0x7"}, "name": "EventTiming", "ph": "b", "pid": 2, "tid": 3, "ts": 100 },
{"args":{},"cat":"devtools.timeline","id2":{"global":"0x8"},"name":"EventTiming","ph":"e","pid":2,"tid":3,"ts":140},
{"args":{},"name":"EventTiming","ph":"I","pid":2,"tid":3,"ts":150},
{"args":{},"id":"0x9","name":"EventTiming","ph":"e","pid":2,"tid":3}
]}"#;
        let Envelope::Events { start, .. } = envelope::detect(text).unwrap() else {
            unreachable!()
        };
        let whole = super::super::scan(text, start, true).unwrap();
        let t = &whole.event_timings;
        assert_eq!(t.len(), 4);
        let keydown = t[0].begin.as_deref().unwrap();
        assert_eq!(t[0].ts, crate::time::Timestamp::from_micros(2_798_187_621));
        assert_eq!(t[0].id.as_deref(), Some("0x25"));
        assert_eq!(keydown.event_type.as_deref(), Some("keydown"));
        assert_eq!(keydown.interaction_id, Some(5414));
        assert_eq!(keydown.duration, Some(121.452));
        assert_eq!(keydown.time_stamp, Some(1612.758));
        assert_eq!(keydown.processing_start, Some(1613.952));
        assert_eq!(keydown.processing_end, Some(1718.327));
        assert_eq!(keydown.frame.as_deref(), Some("8C31"));
        assert_eq!(keydown.node_id, Some(3));
        assert_eq!(
            (t[1].id.as_deref(), t[1].begin.is_none()),
            (Some("0x25"), true)
        );
        assert_eq!(t[1].ts, crate::time::Timestamp::from_micros(2_798_309_073));
        let click = t[2].begin.as_deref().unwrap();
        assert_eq!(t[2].id.as_deref(), Some("0x7"));
        assert_eq!(
            (click.duration, click.frame.as_deref()),
            (Some(40.0), Some("F1"))
        );
        assert_eq!(t[2].thread.pid, crate::vocab::Pid(2));
        assert_eq!(t[3].id.as_deref(), Some("0x8"));
        // The parallel ranges and a stream in blocks of any size keep the same.
        let split = crate::scan::split::with_range_bytes(64, || {
            super::super::scan(text, start, true).unwrap()
        });
        assert_eq!(&split.event_timings, t);
        for size in [1, 7, 64, 1000] {
            let (s, err) = scan_blocks(&mut blocks(text, size).into_iter()).unwrap();
            assert!(err.is_none());
            assert_eq!(&s.event_timings, t, "block size {size}");
        }
    }

    #[test]
    fn cut_stream_is_truncated_and_error_is_returned() {
        let text =
            br#"[{"ph":"X","name":"RunTask","pid":1,"tid":1,"ts":10,"dur":60000},{"ph":"X","na"#;
        let mut b = blocks(text, 10);
        b.push(Err(std::io::Error::other("corrupt deflate stream")));
        let (t, err) = scan_blocks(&mut b.into_iter()).unwrap();
        assert_eq!(t.events, 1);
        assert!(matches!(t.end, Some(ArrayEnd::Truncated { offset: 65 })));
        assert!(err.is_some());
    }

    #[test]
    fn a_stray_quote_costs_a_stream_what_it_costs_a_whole_file() {
        // The event with the stray quote is skipped, the next one kept, for any block size.
        let text = b"[{\"ph\":\"I\",\"ts\":3},\n{\"ph\":\"I\",\"args\":{\"url\":\"a\"b\"},\"ts\":4},\n{\"ph\":\"I\",\"ts\":5}]\n";
        let whole = crate::scan::scan(text, 1, true).unwrap();
        assert_eq!(whole.damage.len(), 1);
        for size in [1, 7, 16, 1000] {
            let (t, err) = scan_blocks(&mut blocks(text, size).into_iter()).unwrap();
            assert!(err.is_none());
            assert_eq!(t.events, 2, "block size {size}");
            assert_eq!(t.damage, whole.damage, "block size {size}");
            assert_eq!(t.end, Some(ArrayEnd::Closed));
        }
    }

    #[test]
    fn a_damaged_stream_recovers_in_linear_time() {
        // As `recovery_after_damage_is_linear_in_one_range_and_in_parallel`, in blocks of
        // 64 KiB: the walk waits for the bytes that decide, then resyncs within its bound.
        use crate::scan::split::parallel_tests::{unclosed_after_damage, within_20_s};
        let (b, damaged, last) = unclosed_after_damage("{\"x\":[0,},\n", 150_000);
        let (t, err) = within_20_s("stream", move || {
            scan_blocks(&mut b.chunks(64 << 10).map(|c| Ok(c.to_vec()))).unwrap()
        });
        assert!(err.is_none());
        assert_eq!((t.events, t.task_marks.len(), t.damage.len()), (2, 2, 1));
        let d = &t.damage[0];
        assert_eq!((d.offset, d.resumed), (damaged as u64 + 10, last as u64));
        assert_eq!(d.skipped_events, 150_001);
        assert_eq!(t.end, Some(ArrayEnd::Closed));
    }

    #[test]
    fn whitespace_before_the_envelope_is_dropped_with_offsets_kept() {
        let pad = " \n".repeat(500);
        let text = format!(
            "{pad}[{{\"ph\":\"X\",\"name\":\"RunTask\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":60000}},{{\"ph\":\"X\",\"na"
        );
        let (t, _) = scan_blocks(&mut blocks(text.as_bytes(), 7).into_iter()).unwrap();
        assert_eq!(t.events, 1);
        // The cut event starts 1,000 bytes of whitespace + 65 bytes in, as read whole.
        assert!(
            matches!(t.end, Some(ArrayEnd::Truncated { offset: 1065 })),
            "{:?}",
            t.end
        );
        let bad = format!("{pad}x");
        assert!(matches!(
            scan_blocks(&mut blocks(bad.as_bytes(), 7).into_iter()),
            Err(StreamError::Envelope(EnvelopeError::NotJson {
                byte: b'x',
                offset: 1000,
                ..
            }))
        ));
        assert!(matches!(
            scan_blocks(&mut blocks(pad.as_bytes(), 7).into_iter()),
            Err(StreamError::Envelope(EnvelopeError::Empty))
        ));
    }

    /// Appends the next of `blocks` to `buf`; false when there is none (the test sources'
    /// [`BlockSource::append_to`]).
    fn append_next(blocks: &mut std::vec::IntoIter<Vec<u8>>, buf: &mut Vec<u8>) -> bool {
        blocks.next().map(|b| buf.extend_from_slice(&b)).is_some()
    }

    /// Blocks with free room before them, as the gzip decoder gives them.
    struct RoomBlocks {
        blocks: std::vec::IntoIter<Vec<u8>>,
        room: usize,
    }

    impl BlockSource for RoomBlocks {
        fn append_to(&mut self, buf: &mut Vec<u8>) -> std::io::Result<bool> {
            Ok(append_next(&mut self.blocks, buf))
        }
        fn next_block(&mut self) -> std::io::Result<Option<(Vec<u8>, usize)>> {
            Ok(self.blocks.next().map(|b| {
                let mut v = vec![0u8; self.room];
                v.extend_from_slice(&b);
                (v, self.room)
            }))
        }
    }

    /// Blocks in buffers of a fixed size, lent as the gzip decoder lends them: a buffer
    /// counts as handed back when one at least that large is recycled. Each block taken
    /// asserts that the scanner holds no more than it said it would ([`BlockSource::will_hold`]):
    /// a decoder with that many buffers and two more never waits on the scanner.
    struct LentBlocks {
        blocks: std::vec::IntoIter<Vec<u8>>,
        room: usize,
        size: usize,
        lent: usize,
        hold: usize,
        peak: usize,
    }

    impl BlockSource for LentBlocks {
        fn append_to(&mut self, buf: &mut Vec<u8>) -> std::io::Result<bool> {
            Ok(append_next(&mut self.blocks, buf))
        }
        fn next_block(&mut self) -> std::io::Result<Option<(Vec<u8>, usize)>> {
            let Some(b) = self.blocks.next() else {
                return Ok(None);
            };
            self.lent += 1;
            self.peak = self.peak.max(self.lent);
            assert!(
                self.lent <= self.hold,
                "{} buffers held, {} said",
                self.lent,
                self.hold
            );
            let mut v = Vec::with_capacity(self.size);
            v.resize(self.room, 0);
            v.extend_from_slice(&b);
            Ok(Some((v, self.room)))
        }
        fn recycle(&mut self, buffer: Vec<u8>) {
            if buffer.capacity() >= self.size {
                self.lent = self.lent.saturating_sub(1);
            }
        }
        fn will_hold(&mut self, blocks: usize) {
            self.hold = blocks;
        }
    }

    #[test]
    fn the_scanner_holds_no_more_buffers_than_it_says() {
        // With wrong cuts (decoys) and a second trace, on 1–3 threads: a decoder with a
        // fixed set of buffers would otherwise wait forever for one the scanner keeps.
        let mut text = many_events(true);
        text.extend_from_slice(b"\n");
        text.extend_from_slice(&many_events(false));
        for threads in [1, 2, 3] {
            for (block, room) in [(1 << 20, 1 << 16), (256 << 10, 64 << 10)] {
                let pool = pool(threads);
                let mut src = LentBlocks {
                    blocks: room_blocks(&text, block, 0).blocks,
                    room,
                    size: room + block,
                    lent: 0,
                    hold: 0,
                    peak: 0,
                };
                let (t, err) = pool.install(|| scan_blocks(&mut src).unwrap());
                assert!(err.is_none());
                assert!(src.peak >= 2, "{}", src.peak);
                same_as_whole(&text, &t);
            }
        }
    }

    /// ~12 MB of one-line events (tasks, chunks, thread names), and, with `decoys`,
    /// events whose args hold `},` + newline + `{"ph":…}` so that cuts at line starts land
    /// inside events and must be caught.
    fn many_events(decoys: bool) -> Vec<u8> {
        let mut s = String::from("{\"traceEvents\":[\n");
        let mut k = 0u64;
        while s.len() < 12 << 20 {
            if decoys && k % 50 == 7 {
                s += "{\"args\":{\"inner\":[{\"a\":1},\n{\"ph\":\"X\",\"name\":\"RunTask\",\"pid\":9,\"tid\":9,\"ts\":1,\"dur\":99999999}]},\"ph\":\"I\",\"ts\":5},\n";
            }
            s += &format!(
                "{{\"ph\":\"X\",\"name\":\"RunTask\",\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{\"pad\":\"{}\"}}}},\n",
                k % 3,
                k * 100,
                (k * 7) % 90_000,
                "x".repeat((k % 200) as usize)
            );
            if k.is_multiple_of(31) {
                s += &format!(
                    "{{\"args\":{{\"data\":{{\"cpuProfile\":{{\"samples\":[1,2,{k}]}},\"timeDeltas\":[5,6,{k}]}}}},\"id\":\"0x1\",\"name\":\"ProfileChunk\",\"ph\":\"P\",\"pid\":1,\"tid\":5,\"ts\":{}}},\n",
                    k * 100
                );
            }
            k += 1;
        }
        s += "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"CrRendererMain\"}}]}";
        s.into_bytes()
    }

    fn same_as_whole(text: &[u8], t: &ScannedTrace) {
        let Envelope::Events { start, .. } = envelope::detect(text).unwrap() else {
            unreachable!()
        };
        let pool = pool(1);
        let whole = pool.install(|| super::super::scan(text, start, false).unwrap());
        assert_eq!(t.events, whole.events);
        assert_eq!(t.task_marks, whole.task_marks);
        assert_eq!(t.thread_names, whole.thread_names);
        assert_eq!(t.profile_data, whole.profile_data);
        assert_eq!(t.damage, whole.damage);
        assert_eq!((t.first_ts, t.last_ts), (whole.first_ts, whole.last_ts));
        assert_eq!(t.end, whole.end);
        assert_eq!(t.closed_at, whole.closed_at);
        assert_eq!(t.diagnostics, whole.diagnostics);
    }

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    fn room_blocks(text: &[u8], size: usize, room: usize) -> RoomBlocks {
        RoomBlocks {
            blocks: text
                .chunks(size)
                .map(<[u8]>::to_vec)
                .collect::<Vec<_>>()
                .into_iter(),
            room,
        }
    }

    #[test]
    fn a_second_trace_and_trailing_bytes_after_pieces() {
        // Two ~12 MB traces joined (`cat`), then bytes that are no trace: the pieces of
        // both are walked on 2 threads, and the notes are those of the whole file.
        let first = many_events(true);
        let second = String::from_utf8(many_events(false))
            .unwrap()
            .replace("\"pid\":1,", "\"pid\":2,");
        for tail in ["", "\n", "\ngarbage\n", "\n\0\0\0\0"] {
            let mut text = first.clone();
            text.extend_from_slice(b"\n");
            text.extend_from_slice(second.as_bytes());
            text.extend_from_slice(tail.as_bytes());
            for (size, room) in [(1 << 20, 1 << 20), (4 << 20, 0), (333_333, 1 << 16)] {
                let pool = pool(2);
                let (t, err) =
                    pool.install(|| scan_blocks(&mut room_blocks(&text, size, room)).unwrap());
                assert!(err.is_none());
                same_as_whole(&text, &t);
                let notes = t.diagnostics.notes();
                let at = first.len() + 1;
                assert!(
                    notes[0].starts_with(&format!("a second trace follows the first at byte {at}")),
                    "{notes:?}"
                );
                assert_eq!(notes.len(), 1 + usize::from(tail.trim() != ""), "{notes:?}");
                // The first trace's `]` (its `metadata` would follow it).
                assert_eq!(t.closed_at, Some(first.len() as u64 - 2));
            }
        }
    }

    #[test]
    fn a_huge_unused_string_in_a_gzip_stream_is_not_held() {
        // A .json.gz with a 64 MiB screenshot string between two tasks, read as the
        // program reads it (decoder thread, UTF-8 pass-through): the task after it is
        // found, and the stream never holds the string whole.
        use std::io::Write;
        let head = b"{\"traceEvents\":[\n{\"ph\":\"X\",\"name\":\"RunTask\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":60000},\n{\"ph\":\"O\",\"name\":\"Screenshot\",\"args\":{\"snapshot\":\"";
        let tail = b"\"},\"ts\":20},\n{\"ph\":\"X\",\"name\":\"RunTask\",\"pid\":1,\"tid\":1,\"ts\":90000,\"dur\":70000}]}\n";
        let len = 64 << 20;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(head).unwrap();
        let run = vec![b'A'; 1 << 20];
        for _ in 0..len >> 20 {
            gz.write_all(&run).unwrap();
        }
        gz.write_all(tail).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json.gz");
        std::fs::write(&path, gz.finish().unwrap()).unwrap();
        let crate::input::Source::Gzip(gz) = crate::input::open(
            &crate::input::InputPath::File(path),
            crate::input::Reading::default(),
        )
        .unwrap() else {
            panic!("not read as gzip");
        };
        let mut source = crate::input::encoding::Decoded::new(gz);
        let pool = pool(2);
        let ((t, err), peak) = pool.install(|| {
            PEAK_HELD.with(|p| p.set(0));
            let r = scan_blocks(&mut source).unwrap();
            (r, PEAK_HELD.with(|p| p.get()))
        });
        assert!(err.is_none(), "{err:?}");
        assert_eq!(t.events, 3);
        let ts: Vec<_> = t.task_marks.iter().map(|m| m.ts).collect();
        assert_eq!(ts, [10, 90000].map(crate::time::Timestamp::from_micros));
        let whole_len = (head.len() + len + tail.len()) as u64;
        assert_eq!(t.closed_at, Some(whole_len - 3));
        assert!(peak < len / 2 + (8 << 20), "held {peak} bytes of {len}");
        assert_eq!(t.end, Some(ArrayEnd::Closed));
    }

    #[test]
    fn pieces_walked_in_parallel_give_the_whole_file_result() {
        for decoys in [false, true] {
            let text = many_events(decoys);
            for (size, room) in [
                (1 << 20, 1 << 16),
                (4 << 20, 1 << 20),
                (333_333, 0),
                (3 << 20, 10),
            ] {
                for threads in [1, 2, 3] {
                    let pool = pool(threads);
                    let mut src = room_blocks(&text, size, room);
                    let (t, err) = pool.install(|| scan_blocks(&mut src).unwrap());
                    assert!(err.is_none());
                    assert!(t.events > 50_000, "{}", t.events);
                    same_as_whole(&text, &t);
                }
            }
        }
    }

    #[test]
    fn damage_and_a_cut_end_in_pieces() {
        let mut text = many_events(false);
        // Spoil a byte in a few events across the pieces, and cut the file mid-event.
        for k in 1..6 {
            let at = text.len() * k / 6;
            let line = at + text[at..].iter().position(|&c| c == b'\n').unwrap() + 1;
            let colon = line + text[line..].iter().position(|&c| c == b':').unwrap();
            text[colon] = if k == 3 { b'[' } else { b'#' };
        }
        text.truncate(text.len() - 5000);
        for size in [1 << 20, 4 << 20] {
            let pool = pool(2);
            let mut src = room_blocks(&text, size, 1 << 20);
            let (t, _) = pool.install(|| scan_blocks(&mut src).unwrap());
            assert_eq!(t.damage.len(), 5);
            assert!(t.truncated());
            same_as_whole(&text, &t);
        }
    }

    #[test]
    fn a_huge_string_nothing_needs_is_not_held() {
        // A 100 MiB screenshot between two tasks, in 1 MiB blocks: the stream holds a
        // fraction of it, and reads what the whole file reads (offsets after it too).
        let mut text = b"{\"traceEvents\":[\n{\"ph\":\"X\",\"name\":\"RunTask\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":60000},\n{\"ph\":\"O\",\"name\":\"Screenshot\",\"args\":{\"snapshot\":\"".to_vec();
        text.extend(std::iter::repeat_n(b'A', 100 << 20));
        text.extend_from_slice(b"\\n\\u00e9\"},\"ts\":20},\n{\"ph\":\"X\",\"name\":\"RunTask\",\"pid\":1,\"tid\":1,\"ts\":90000,\"dur\":70000}]}");
        let pool = pool(2);
        let mut src = room_blocks(&text, 1 << 20, 1 << 20);
        let ((t, err), peak) = pool.install(|| {
            PEAK_HELD.with(|p| p.set(0));
            let r = scan_blocks(&mut src).unwrap();
            (r, PEAK_HELD.with(|p| p.get()))
        });
        assert!(err.is_none());
        assert!(peak < 48 << 20, "held {peak} bytes");
        assert_eq!(t.events, 3);
        assert_eq!(t.task_marks.len(), 2);
        assert_eq!(t.closed_at, Some(text.len() as u64 - 2));
        same_as_whole(&text, &t);
    }

    #[test]
    fn not_a_trace_in_a_stream() {
        assert!(matches!(
            scan_blocks(&mut blocks(br#"{"nodes":[],"samples":[]}"#, 4).into_iter()),
            Err(StreamError::OtherObject(..))
        ));
        assert!(matches!(
            scan_blocks(&mut blocks(b"", 4).into_iter()),
            Err(StreamError::Envelope(EnvelopeError::Empty))
        ));
    }
}

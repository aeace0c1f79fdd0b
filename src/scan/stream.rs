//! Scanning a trace that arrives in blocks (a gzip stream), never held whole in memory.
//!
//! Blocks are appended to a buffer; events are walked as in [`super::walk`]; the partial
//! event at a block's end is kept and completed by the next block. Event offsets are
//! offsets in the whole decompressed stream. Sample arrays are read at once (packed,
//! [`super::records::ReadArrays`]), as the stream cannot be read twice.

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
    let mut next = |buf: &mut Vec<u8>, err: &mut Option<std::io::Error>| match source.append_to(buf)
    {
        Ok(more) => more,
        Err(e) => {
            *err = Some(e);
            false
        }
    };
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
                more = next(&mut buf, &mut stream_error);
            }
            Err(EnvelopeError::CutOff { .. }) if more => {
                // Read until the buffer doubles before looking again: a large leading
                // object (DevTools writes `metadata` first) costs O(n), not O(n²).
                let target = (buf.len() * 2).max(1);
                while more && buf.len() < target {
                    more = next(&mut buf, &mut stream_error);
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
    let embedded_maps = envelope::metadata_range(&buf, start, None)
        .map(|(a, b)| envelope::embedded_maps(&buf[a..b]))
        .unwrap_or_default();
    let mut c = Collector::default();
    let mut total = Walked::at(start);
    let mut base = skipped as u64; // offset of buf[0] in the stream
    let mut pos = start;
    let mut ndjson = ndjson;
    let mut in_object = !ndjson && buf[..start].contains(&b'{');
    let mut first_close = None;
    // Notes on what followed the first trace: (a second trace at, events before it) and
    // bytes ignored from an offset (their count is known at the stream's end).
    let mut second: Vec<(u64, u64)> = Vec::new();
    let mut ignored: Option<(u64, bool)> = None;
    'traces: loop {
        // The `]` of this trace's array (none for NDJSON, closed by the end of the bytes).
        let mut close = None;
        loop {
            let mut walked = walk_at(&buf, base, pos, usize::MAX, ndjson, !more, &mut |ev| {
                c.event(ev)
            });
            let end = std::mem::replace(&mut walked.end, RangeEnd::Reached(0));
            let events = walked.events;
            close = walked.closed_at.or(close);
            total.extend(walked);
            match end {
                RangeEnd::Ended(ArrayEnd::Truncated { offset }) if more => {
                    // Keep the partial event; read on.
                    let cut = (offset - base) as usize;
                    // Bytes to gather before walking again: after a walk that did not
                    // finish one event, twice what is held, so a huge event costs O(n).
                    let want = if events == 0 && cut == pos {
                        (buf.len() - cut) * 2 // no progress: a huge event, gather more first
                    } else {
                        0
                    };
                    buf.drain(..cut);
                    base = offset;
                    pos = 0;
                    while more {
                        more = next(&mut buf, &mut stream_error);
                        if buf.len() > want {
                            break;
                        }
                    }
                }
                end => {
                    total.end = end;
                    break;
                }
            }
        }
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
        // envelope object, such as `metadata`, is held only until then).
        let (RangeEnd::Ended(ArrayEnd::Closed), Some(close)) = (&total.end, close) else {
            break;
        };
        let close = (close - base) as usize;
        buf.drain(..close);
        base += close as u64;
        loop {
            match envelope::after_events(&buf, 0, in_object) {
                envelope::After::NeedMore { .. } if more => {
                    let target = (buf.len() * 2).max(1);
                    while more && buf.len() < target {
                        more = next(&mut buf, &mut stream_error);
                    }
                }
                envelope::After::Nothing => break 'traces,
                envelope::After::NeedMore { from: offset }
                | envelope::After::Ignored { offset, nul: false } => {
                    ignored = Some((base + offset as u64, false));
                    break 'traces;
                }
                envelope::After::Ignored { offset, nul: true } => {
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
                    ndjson = super::is_ndjson(&buf, start);
                    total.end = RangeEnd::Reached(start);
                    pos = start;
                    continue 'traces;
                }
            }
        }
    }
    let tail = buf;
    let tail_base = base;
    let mut t = finish_walk(c, total, (skipped + start) as u64, |offset| {
        let at = offset.checked_sub(tail_base)?;
        tail.get(at as usize..)
    })
    .map_err(StreamError::Scan)?;
    t.embedded_maps = embedded_maps;
    t.closed_at = first_close;
    // Read the stream to its end even after the events: gzip's integrity checks (CRC and
    // length) come last, and a corrupt file must not pass as a good one.
    let mut len = tail_base + tail.len() as u64;
    let mut rest = Vec::new();
    while more {
        rest.clear();
        more = next(&mut rest, &mut stream_error);
        len += rest.len() as u64;
    }
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
                offset: 1000
            }))
        ));
        assert!(matches!(
            scan_blocks(&mut blocks(pad.as_bytes(), 7).into_iter()),
            Err(StreamError::Envelope(EnvelopeError::Empty))
        ));
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

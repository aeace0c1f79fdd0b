//! Hand-built protobuf traces, each value worked out from the bytes written here.

use super::*;
use crate::scan::records::MarkKind;
use crate::time::TimeDelta;
use crate::vocab::{Pid, ThreadKey, Tid};

/// A protobuf message under construction.
#[derive(Clone, Default)]
struct Msg(Vec<u8>);

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

impl Msg {
    fn int(mut self, field: u32, v: u64) -> Self {
        put_varint(&mut self.0, (field as u64) << 3);
        put_varint(&mut self.0, v);
        self
    }
    fn bytes(mut self, field: u32, b: &[u8]) -> Self {
        put_varint(&mut self.0, (field as u64) << 3 | 2);
        put_varint(&mut self.0, b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }
    fn msg(self, field: u32, m: Msg) -> Self {
        self.bytes(field, &m.0)
    }
}

/// `Trace`: the packets as `packet = 1` fields.
fn trace(packets: &[Msg]) -> Vec<u8> {
    packets
        .iter()
        .fold(Msg::default(), |t, p| t.msg(1, p.clone()))
        .0
}

fn interned_entry(iid: u64, name: &str) -> Msg {
    Msg::default().int(1, iid).bytes(2, name.as_bytes())
}

/// The packets of one renderer as Chrome writes them (Chromium 156): on sequence 1 a
/// clock snapshot defining clock 64 (incremental, µs) against MONOTONIC with the defaults
/// (clock 64, track 100), the main thread's descriptor (pid 7, tid 7, `CrRendererMain`)
/// and its process; a `RunTask` slice begun at +10 µs and ended 60 ms later, carrying
/// its name by interning; a legacy `Profile` (`P`, id 1, `track_uuid: 0`) at +5 µs. On
/// sequence 2 (the profiler thread, tid 9) a `ProfileChunk` with its data as
/// `legacy_json_value`.
fn renderer() -> Vec<Msg> {
    let snapshot = |seq: u64, mono_ns: u64, us: u64| {
        Msg::default()
            .msg(
                6,
                Msg::default()
                    .msg(1, Msg::default().int(1, 3).int(2, mono_ns))
                    .msg(
                        1,
                        Msg::default().int(1, 64).int(2, us).int(3, 1).int(4, 1000),
                    ),
            )
            .int(10, seq)
            .int(13, 1)
            .int(42, 1)
            .msg(
                59,
                Msg::default()
                    .int(58, 64)
                    .msg(11, Msg::default().int(11, 100 + seq)),
            )
    };
    let thread = |seq: u64, tid: u64, name: &str| {
        Msg::default().int(10, seq).int(13, 2).int(8, 0).msg(
            60,
            Msg::default().int(1, 100 + seq).int(5, 50).msg(
                4,
                Msg::default()
                    .int(1, 7)
                    .int(2, tid)
                    .bytes(5, name.as_bytes()),
            ),
        )
    };
    let process = Msg::default().int(10, 1).int(13, 2).msg(
        60,
        Msg::default().int(1, 50).msg(3, Msg::default().int(1, 7)),
    );
    let names = Msg::default()
        .msg(2, interned_entry(1, "RunTask"))
        .msg(2, interned_entry(2, "Profile"))
        .msg(2, interned_entry(3, "SomethingElse"))
        .msg(3, interned_entry(1, "data"));
    let profile_data = br#"{"startTime":1000000,"source":"Internal"}"#;
    let chunk_data = br#"{"cpuProfile":{"nodes":[{"callFrame":{"functionName":"(root)","scriptId":0},"id":1},{"callFrame":{"functionName":"work","scriptId":3,"url":"a.js","lineNumber":1,"columnNumber":2},"id":2,"parent":1}],"samples":[2,2]},"timeDeltas":[20,100]}"#;
    vec![
        // MONOTONIC 1,000,000,400 ns is clock 64's 1,000,000 µs.
        snapshot(1, 1_000_000_400, 1_000_000),
        process.clone(),
        thread(1, 7, "CrRendererMain"),
        // +5 µs: Profile, legacy phase P, on no track (the sequence's thread).
        Msg::default()
            .int(10, 1)
            .int(13, 2)
            .int(8, 5)
            .msg(
                11,
                Msg::default()
                    .int(10, 2)
                    .int(11, 0)
                    .msg(4, Msg::default().int(1, 1).bytes(9, profile_data))
                    .msg(6, Msg::default().int(2, b'P' as u64).int(6, 1)),
            )
            .msg(12, names),
        // +5 µs more (1,000,010 µs): RunTask begins; an unmatched slice nests in it.
        Msg::default()
            .int(10, 1)
            .int(13, 2)
            .int(8, 5)
            .msg(11, Msg::default().int(9, 1).int(10, 1)),
        Msg::default()
            .int(10, 1)
            .int(13, 2)
            .int(8, 100)
            .msg(11, Msg::default().int(9, 1).int(10, 3)),
        Msg::default()
            .int(10, 1)
            .int(13, 2)
            .int(8, 100)
            .msg(11, Msg::default().int(9, 2)),
        // 60,000 µs after its begin, RunTask ends.
        Msg::default()
            .int(10, 1)
            .int(13, 2)
            .int(8, 59_800)
            .msg(11, Msg::default().int(9, 2)),
        snapshot(2, 1_000_000_400, 1_000_000),
        thread(2, 9, "v8:ProfEvntProc"),
        Msg::default()
            .int(10, 2)
            .int(13, 2)
            .int(8, 70_000)
            .msg(
                11,
                Msg::default()
                    .int(10, 1)
                    .int(11, 0)
                    .msg(4, Msg::default().int(1, 1).bytes(9, chunk_data))
                    .msg(6, Msg::default().int(2, b'P' as u64).int(6, 1)),
            )
            .msg(
                12,
                Msg::default()
                    .msg(2, interned_entry(1, "ProfileChunk"))
                    .msg(3, interned_entry(1, "data")),
            ),
    ]
}

fn main_thread() -> ThreadKey {
    ThreadKey {
        pid: Pid(7),
        tid: Tid(7),
    }
}

#[test]
fn sniffs_proto_by_content_and_never_json() {
    let b = trace(&renderer());
    assert_eq!(sniff(&b, true), Sniff::Proto);
    assert_eq!(sniff(&b[..3], false), Sniff::NeedMore);
    // JSON that starts with a line break (0a), as an indented file does: `[` and `{` are
    // tags of wire type 3, which protobuf no longer has.
    assert_eq!(sniff(b"\n[{\"ph\":\"X\"}]", true), Sniff::Other);
    assert_eq!(sniff(b"\n\n{\"traceEvents\":[]}", true), Sniff::Other);
    assert_eq!(
        sniff(b"\n  [{\"ph\":\"X\",\"name\":\"a\"}]", true),
        Sniff::Other
    );
    assert_eq!(sniff(b"[{\"ph\":\"X\"}]", false), Sniff::Other);
    assert_eq!(sniff(b"", true), Sniff::Other);
}

#[test]
fn a_renderer_reads_as_its_json_trace_would() {
    let t = scan_bytes(&trace(&renderer()));
    assert_eq!(t.end, Some(ArrayEnd::Closed));
    assert_eq!(t.thread_names[&main_thread()], "CrRendererMain");
    assert_eq!(
        t.thread_names[&ThreadKey {
            pid: Pid(7),
            tid: Tid(9)
        }],
        "v8:ProfEvntProc"
    );
    // RunTask: begun at clock 64's 1,000,010 µs, MONOTONIC 1,000,010.400 µs, to the µs
    // 1,000,010 µs (the snapshot's 400 ns is within its µs); 60,000 µs long.
    let marks: Vec<_> = t.task_marks.iter().collect();
    assert_eq!(marks.len(), 1);
    assert_eq!(marks[0].thread, main_thread());
    assert_eq!(marks[0].ts, Timestamp::from_micros(1_000_010));
    assert_eq!(
        marks[0].kind,
        MarkKind::Complete(TimeDelta::from_micros(60_000))
    );
    // The Profile is on the main thread (the sequence's), keyed (7, "0x1"); its chunk,
    // from the profiler thread, joins it by (pid, id).
    assert_eq!(t.profiles.len(), 1);
    assert_eq!(t.profiles[0].thread, main_thread());
    assert_eq!(t.profiles[0].id.0, "0x1");
    assert_eq!(
        t.profiles[0].start_time,
        Some(Timestamp::from_micros(1_000_000))
    );
    let data = &t.profile_data[&(Pid(7), crate::vocab::ProfileId("0x1".into()))];
    assert_eq!(data.chunks.len(), 1);
    assert_eq!(data.nodes[0].nodes.len(), 2);
    // Every track event counts, the span runs from the Profile (+5 µs) to the chunk.
    assert_eq!(t.events, 6);
    assert_eq!(t.first_ts, Some(Timestamp::from_micros(1_000_005)));
    assert_eq!(t.last_ts, Some(Timestamp::from_micros(1_070_000)));
}

#[test]
fn a_stream_in_small_blocks_reads_as_the_whole() {
    let b = trace(&renderer());
    let whole = scan_bytes(&b);
    for size in [1, 7, 64] {
        let mut blocks = b.chunks(size).map(|c| Ok(c.to_vec()));
        let (t, err) = scan_stream(Vec::new(), true, &mut blocks);
        assert!(err.is_none());
        assert_eq!(t.end, whole.end, "{size}");
        assert_eq!(t.events, whole.events, "{size}");
        assert_eq!(t.task_marks.len(), 1, "{size}");
        assert_eq!(t.profiles.len(), 1, "{size}");
        assert_eq!(t.profile_data.len(), 1, "{size}");
        assert_eq!(t.thread_names, whole.thread_names, "{size}");
    }
}

#[test]
fn a_cut_file_keeps_the_packets_before_the_cut() {
    let packets = renderer();
    let full = trace(&packets);
    let before = trace(&packets[..7]).len();
    // Cut 3 bytes into the packet after RunTask's end.
    let t = scan_bytes(&full[..before + 3]);
    assert_eq!(
        t.end,
        Some(ArrayEnd::Truncated {
            offset: before as u64
        })
    );
    assert_eq!(t.task_marks.len(), 1);
    assert!(
        t.diagnostics
            .notes()
            .iter()
            .any(|n| n.contains(&format!("ends inside the trace packet at byte {before}")))
    );
}

#[test]
fn a_corrupt_packet_costs_that_packet() {
    let mut packets = renderer();
    // The RunTask end's track event made a field whose length runs past it.
    packets[6] = Msg::default()
        .int(10, 1)
        .int(13, 2)
        .bytes(11, &[0x12, 0x40]);
    let b = trace(&packets);
    let t = scan_bytes(&b);
    let at = trace(&packets[..6]).len();
    assert!(
        t.diagnostics.notes().iter().any(|n| n
            .starts_with("1 trace packets whose fields do not parse")
            || n.contains(&format!("the first at byte {at}"))),
        "{:?}",
        t.diagnostics.notes()
    );
    // The RunTask never ends (its end was the corrupt packet): a B cut at the end.
    assert_eq!(t.task_marks.len(), 1);
    assert!(matches!(
        t.task_marks.iter().next().unwrap().kind,
        MarkKind::Begin { is_task: true }
    ));
    assert_eq!(t.profile_data.len(), 1, "the packets after it are read");
}

#[test]
fn broken_framing_is_skipped_to_the_next_packet() {
    let packets = renderer();
    let head = trace(&packets[..3]);
    let tail = trace(&packets[3..]);
    let mut b = head.clone();
    b.extend_from_slice(&[0xff, 0x07, 0x00]); // a tag of wire type 7
    b.extend_from_slice(&tail);
    let t = scan_bytes(&b);
    assert_eq!(t.task_marks.len(), 1);
    assert_eq!(t.profiles.len(), 1);
    let note = format!(
        "protobuf framing broken at byte {}: 3 bytes skipped to the next trace packet, at byte {}",
        head.len(),
        head.len() + 3
    );
    assert!(
        t.diagnostics.notes().contains(&note),
        "{:?}",
        t.diagnostics.notes()
    );
}

#[test]
fn packets_needing_lost_state_are_skipped_until_it_is_cleared() {
    let mut packets = renderer();
    // After a loss on sequence 1 (previous_packet_dropped) without a clear, the RunTask's
    // begin and end need interned data that may be gone: skipped.
    packets[4] = packets[4].clone().int(42, 1);
    let t = scan_bytes(&trace(&packets));
    assert_eq!(t.task_marks.len(), 0);
    assert!(
        t.diagnostics.notes()[0]
            .starts_with("4 trace packets that need interned data lost with packets before them")
    );
}

#[test]
fn incremental_state_clears_drop_interned_names() {
    let mut packets = renderer();
    // A clear on sequence 1 before RunTask's begin: iid 1 means nothing any more.
    packets[4] = packets[4].clone().int(13, 1);
    let t = scan_bytes(&trace(&packets));
    assert_eq!(t.task_marks.len(), 0);
}

/// The RunTask's begin carrying `n` annotations `data: <interned string value iid 5>`,
/// with the string value of `len` bytes interned in the same packet.
fn run_task_with_interned_annotations(n: usize, len: usize) -> Vec<u8> {
    let mut packets = renderer();
    let mut event = Msg::default().int(9, 1).int(10, 1);
    for _ in 0..n {
        event = event.msg(4, Msg::default().int(1, 1).int(17, 5));
    }
    let big = "A".repeat(len);
    packets[4] = Msg::default()
        .int(10, 1)
        .int(13, 2)
        .int(8, 5)
        .msg(11, event)
        .msg(12, Msg::default().msg(29, interned_entry(5, &big)));
    trace(&packets)
}

#[test]
fn interned_strings_copied_into_args_are_bounded_per_event() {
    // 2,000 annotations on one 64 KiB interned string: 131 MB of args unbounded, from a
    // 90 KB file.
    let b = run_task_with_interned_annotations(2000, 64 << 10);
    assert!(b.len() < 90_000);
    let mut s = ProtoScan::default();
    s.walk(&b, 0, true);
    assert_eq!(s.held, 0);
    let t = s.finish();
    // Names (4 bytes each) and values share the 1,048,576 bytes: 15 members whole
    // (983,100 bytes), the 16th name, its value cut to the 65,472 bytes left; the names
    // and values of the other 1,984 left empty: 1 + 2 × 1,984 cuts.
    assert_eq!(t.diagnostics.count(INTERNED_CUT), 1 + 2 * 1984);
    // The RunTask is still read as a 60 ms task.
    let marks: Vec<_> = t.task_marks.iter().collect();
    assert_eq!(marks.len(), 1);
    assert_eq!(
        marks[0].kind,
        MarkKind::Complete(TimeDelta::from_micros(60_000))
    );
}

#[test]
fn interned_text_held_by_open_slices_is_bounded() {
    // 69 slices nested in the RunTask, each copying 1 MiB of interned text (the name
    // `data` and a string value): 69 MiB held until their ends, unbounded; 64 MiB with
    // the bound, the names and values of the last 5 left empty (10 cuts).
    let mut packets = renderer();
    let big = "A".repeat(INTERNED_PER_EVENT - 4);
    packets.truncate(5);
    packets[4] = packets[4]
        .clone()
        .msg(12, Msg::default().msg(29, interned_entry(5, &big)));
    let begin = Msg::default().int(10, 1).int(13, 2).int(8, 1).msg(
        11,
        Msg::default()
            .int(9, 1)
            .int(10, 1)
            .msg(4, Msg::default().int(1, 1).int(17, 5)),
    );
    packets.extend(std::iter::repeat_n(begin, 69));
    let mut s = ProtoScan::default();
    s.walk(&trace(&packets), 0, true);
    let open: Vec<usize> = s.open.values().flatten().map(|o| o.interned).collect();
    assert_eq!(open.len(), 70);
    assert_eq!(
        open.iter().filter(|&&n| n == INTERNED_PER_EVENT).count(),
        64
    );
    assert_eq!(s.held, HELD_INTERNED);
    let t = s.finish();
    assert_eq!(t.diagnostics.count(INTERNED_CUT), 10);
}

#[test]
fn a_packet_length_past_the_end_is_skipped_to_the_next_packet() {
    // A packet of no interest before the ProfileChunk, its length raised by 1,000,000: it
    // runs past the end of the file. The packets after it are read as without it, on the
    // whole file and a stream.
    let mut packets = renderer();
    let expected = scan_bytes(&trace(&packets));
    assert_eq!(expected.task_marks.len(), 1);
    assert_eq!(expected.profile_data.len(), 1);
    let head = trace(&packets[..9]);
    packets.insert(
        9,
        Msg::default()
            .int(10, 2)
            .int(8, 1)
            .bytes(30, b"no interest"),
    );
    let body = &packets[9].0;
    let mut b = head.clone();
    b.push(0x0a);
    put_varint(&mut b, body.len() as u64 + 1_000_000);
    b.extend_from_slice(body);
    let next = b.len();
    b.extend_from_slice(&trace(&packets[10..]));
    let note = format!(
        "protobuf framing broken at byte {}: {} bytes skipped to the next trace packet, at byte {next}",
        head.len(),
        next - head.len()
    );
    let whole = scan_bytes(&b);
    let mut blocks = b.chunks(16).map(|c| Ok(c.to_vec()));
    let (stream, err) = scan_stream(Vec::new(), true, &mut blocks);
    assert!(err.is_none());
    for (t, path) in [(whole, "whole"), (stream, "stream")] {
        assert_eq!(t.end, Some(ArrayEnd::Closed), "{path}");
        assert_eq!(t.task_marks, expected.task_marks, "{path}");
        assert_eq!(t.profiles.len(), 1, "{path}");
        assert_eq!(t.profile_data.len(), expected.profile_data.len(), "{path}");
        assert_eq!(t.thread_names, expected.thread_names, "{path}");
        assert_eq!(t.events, expected.events, "{path}");
        assert!(
            t.diagnostics.notes().contains(&note),
            "{path}: {:?}",
            t.diagnostics.notes()
        );
    }
}

#[test]
fn framing_candidates_are_checked_in_linear_time() {
    // After a bad field, 40,000 fixed64 fields each holding a `0a` that declares a
    // 2,097,157-byte packet: each such packet's end is another `0a` and its body reads as
    // fields up to the field that crosses that end (2.4 MB; ~10^10 fields read unbounded,
    // minutes). The renderer's packets follow and are found.
    let mut b = trace(&[Msg::default().int(1, 1)]);
    let bad = b.len();
    b.extend_from_slice(&[0x0a, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    let period = [0x09, 0x0a, 0x85, 0x80, 0x80, 0x01, 0x10, 0x80, 0x00];
    let declared = varint(&period, &mut 2).unwrap();
    assert_eq!((declared, declared % 9), (2_097_157, 4));
    for _ in 0..40_000 + declared as usize / 9 {
        b.extend_from_slice(&period);
    }
    let renderer_at = b.len();
    b.extend_from_slice(&trace(&renderer()));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(scan_bytes(&b));
    });
    let t = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("scanned within 20 s");
    assert_eq!(t.task_marks.len(), 1);
    assert_eq!(t.profiles.len(), 1);
    let note = format!(
        "protobuf framing broken at byte {bad}: {} bytes skipped to the next trace packet, at byte {renderer_at}",
        renderer_at - bad
    );
    assert!(
        t.diagnostics.notes().contains(&note),
        "{:?}",
        t.diagnostics.notes()
    );
}

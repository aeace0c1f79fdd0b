//! Perfetto protobuf traces (Chrome's `--trace-startup-format=proto`, CDP `Tracing.start`
//! with `streamFormat: "proto"`, ui.perfetto.dev), read into the same [`ScannedTrace`] as
//! a JSON trace.
//!
//! A trace is a `Trace` message: `repeated TracePacket packet = 1`, so the file is a run
//! of `0a <varint length> <packet>` (Perfetto's `trace.proto`, `trace_packet.proto`;
//! docs/METHOD.md §2.7). The packets are walked by hand ([`wire`]); of each, only the
//! few fields taskchain needs are read — timestamps and clocks, per-sequence defaults and
//! interned names, track descriptors (pid, tid, thread names) and track events — and every
//! other field is skipped by its length. A track event whose name the scan matches
//! ([`super::MATCHED_NAMES`]) is written as the JSON trace event Chrome's JSON export has
//! for it (`ph`, `name`, `pid`, `tid`, `ts` and `dur` in µs, `id`, `args` from the debug
//! annotations) and handed to the JSON scan's [`Collector`]: the two formats meet there,
//! and everything after it (profiles, tasks, chains) is shared. Slices (`TYPE_SLICE_BEGIN`
//! / `TYPE_SLICE_END` on one track) are paired here and become `X` events.
//!
//! Bad input: a packet whose fields do not parse costs that packet (counted, the first
//! one's offset in a warning); framing that does not parse is skipped to the next
//! packet that does; a file cut inside a packet keeps every packet before it. Lengths
//! are checked against the bytes; nothing is allocated from a length the file declares.

pub(crate) mod annotations;
pub(crate) mod wire;

use std::collections::HashMap;

use annotations::{Budget, INTERNED_CUT, INTERNED_PER_EVENT, Interned, push_members, push_string};
use wire::{Fields, Value, WireError, varint, well_formed, well_formed_within};

use super::event::TraceEvent;
use super::{ArrayEnd, Collector, MATCHED_NAMES, ScannedTrace};
use crate::input::BlockSource;
use crate::time::Timestamp;
use crate::vocab::FastMap;

/// A packet longer than this is taken for corrupt framing (Perfetto's own writers keep
/// packets far smaller; Chrome's largest, a `ProfileChunk`, are tens of KB).
pub(crate) const MAX_PACKET: u64 = 256 << 20;

/// Fields the checks of framing candidates may read beyond two per byte of input before
/// them ([`ProtoScan::resync_check`]): 16 million, some 50 ms, more than the packets
/// after a few honest breaks hold.
const RESYNC_SLACK: u64 = 16 << 20;

/// Entries past which a sequence's interned tables, or the tracks, take no more (a
/// hostile file cannot grow them without end; Chrome interns a few thousand).
const MAX_TABLE: usize = 1 << 20;

/// Open slices per track past which a `TYPE_SLICE_BEGIN` is not kept (Chrome nests a few
/// dozen deep).
const MAX_DEPTH: usize = 4096;

/// Bytes of interned text the `args` of all open slices may hold together: a slice's
/// args wait for its end, and 4,096-deep slices on many tracks each copying 1 MiB of
/// interned text would otherwise hold terabytes from a small file.
const HELD_INTERNED: usize = 64 * INTERNED_PER_EVENT;

/// Perfetto's `BUILTIN_CLOCK_MONOTONIC`: Chrome's `TimeTicks` on Linux, the clock of a
/// JSON trace's `ts` and of the profiles' `startTime`.
const MONOTONIC: u32 = 3;
/// `BUILTIN_CLOCK_BOOTTIME`: the clock of a packet that names none.
const BOOTTIME: u32 = 6;

/// What the first bytes of an input say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sniff {
    /// A protobuf trace: a `Trace.packet` field (tag `0a`) with a plausible length whose
    /// bytes read as a message, followed by another packet or the end.
    Proto,
    /// Anything else (JSON, field data, junk).
    Other,
    /// More bytes are needed to tell.
    NeedMore,
}

/// Bytes past which [`sniff`] stops waiting for the first packet to end.
const SNIFF_LIMIT: usize = 1 << 20;

/// Whether `head` (the first bytes of an input; `whole`: all of them) starts a protobuf
/// trace. JSON never passes: its text read as protobuf has tags of wire type 3 (`[`, `{`)
/// or lengths that do not fit within a few bytes.
pub fn sniff(head: &[u8], whole: bool) -> Sniff {
    let more = if whole { Sniff::Other } else { Sniff::NeedMore };
    if head.first() != Some(&0x0a) {
        return if head.is_empty() { more } else { Sniff::Other };
    }
    let mut i = 1;
    let len = match varint(head, &mut i) {
        Ok(l) => l,
        Err(WireError::Cut) => return more,
        Err(WireError::Malformed) => return Sniff::Other,
    };
    if len == 0 || len > MAX_PACKET {
        return Sniff::Other;
    }
    let end = i as u64 + len;
    if end > head.len() as u64 {
        return if head.len() < SNIFF_LIMIT {
            more
        } else {
            Sniff::Other
        };
    }
    let end = end as usize;
    if !well_formed(&head[i..end]) {
        return Sniff::Other;
    }
    match head.get(end) {
        Some(0x0a) => Sniff::Proto,
        None if whole => Sniff::Proto,
        None => Sniff::NeedMore,
        Some(_) => Sniff::Other,
    }
}

/// A sequence-scoped clock (ids 64–127) as a `ClockSnapshot` on its sequence defines it:
/// its value `base` (in `unit` ns) was `reference_ns` on the builtin clock `reference`.
#[derive(Clone, Copy, Debug)]
struct SequenceClock {
    unit: i64,
    incremental: bool,
    base: u64,
    /// The running value of an incremental clock (deltas add up from `base`).
    current: u64,
    reference: u32,
    reference_ns: i64,
}

/// An interned event name: its index in [`MATCHED_NAMES`], or none for a name the scan
/// does not match (whose text is not kept).
type NameId = Option<u16>;

/// The index in [`MATCHED_NAMES`] of `name`.
fn name_id(name: &[u8]) -> NameId {
    MATCHED_NAMES
        .iter()
        .position(|n| n.as_bytes() == name)
        .map(|k| k as u16)
}

/// What one packet sequence (`trusted_packet_sequence_id`) carries from packet to packet.
#[derive(Debug, Default)]
struct Sequence {
    /// A `SEQ_INCREMENTAL_STATE_CLEARED` packet came since the start or the last loss:
    /// the interned data and defaults below can be trusted.
    valid: bool,
    /// `TracePacketDefaults.timestamp_clock_id`.
    clock: Option<u32>,
    /// `TrackEventDefaults.track_uuid`.
    track: Option<u64>,
    clocks: HashMap<u32, SequenceClock>,
    names: FastMap<u64, NameId>,
    annotation_names: FastMap<u64, Box<[u8]>>,
    strings: FastMap<u64, Box<[u8]>>,
    /// The thread of the last `ThreadDescriptor` on the sequence: where legacy events
    /// without a track go (Perfetto's trace processor, `track_event_tokenizer.cc`).
    thread: Option<(i64, i64)>,
}

impl Sequence {
    /// Incremental state cleared: interned data, defaults and sequence clocks dropped.
    fn clear(&mut self) {
        self.clock = None;
        self.track = None;
        self.clocks.clear();
        self.names.clear();
        self.annotation_names.clear();
        self.strings.clear();
        self.valid = true;
    }
}

impl Interned for Sequence {
    fn annotation_name(&self, iid: u64) -> Option<&[u8]> {
        self.annotation_names.get(&iid).map(|b| &b[..])
    }
    fn string_value(&self, iid: u64) -> Option<&[u8]> {
        self.strings.get(&iid).map(|b| &b[..])
    }
}

/// A track from its `TrackDescriptor`.
#[derive(Clone, Copy, Debug, Default)]
struct Track {
    pid: Option<i64>,
    tid: Option<i64>,
    parent: u64,
}

/// A slice begun and not yet ended on its track.
#[derive(Debug)]
struct OpenSlice {
    name: NameId,
    ts: Option<i64>,
    offset: u64,
    thread: (i64, i64),
    /// The `args` object of a matched slice (`{...}`); empty for the others.
    args: Vec<u8>,
    /// Bytes of interned text copied into `args` (counted in [`ProtoScan::held`]).
    interned: usize,
}

/// The event written for the collector: phase, name, thread, times (ns), `id`, `args`.
struct Synth<'s> {
    ph: u8,
    name: u16,
    thread: (i64, i64),
    ts: Option<i64>,
    dur: Option<i64>,
    id: Option<u64>,
    args: &'s [u8],
}

/// Odd input met, with the offset of the first of each kind.
#[derive(Debug, Default)]
struct Odd {
    bad_packets: (u64, Option<u64>),
    lost_state: (u64, Option<u64>),
    unknown_clock: (u64, Option<u64>),
    deep: u64,
    bad_events: u64,
    /// Interned strings cut by an event's budget ([`INTERNED_PER_EVENT`], [`HELD_INTERNED`]).
    interned_cut: u64,
    full_tables: u64,
}

fn count(slot: &mut (u64, Option<u64>), offset: u64) {
    slot.0 += 1;
    slot.1.get_or_insert(offset);
}

/// The walk over a protobuf trace's packets: the state carried between packets and the
/// [`Collector`] the matched events go to.
pub(crate) struct ProtoScan {
    c: Collector,
    seqs: FastMap<u32, Sequence>,
    tracks: FastMap<u64, Track>,
    /// Open slices by track (uuid; a sequence's own legacy track by `1 << 63 | id`).
    open: FastMap<u64, Vec<OpenSlice>>,
    /// The latest values of the builtin clocks from a snapshot naming several (ns).
    snapshot: Vec<(u32, i64)>,
    thread_names: FastMap<(i64, i64), Box<str>>,
    /// The JSON of the event being handed to the collector.
    event: Vec<u8>,
    /// Scratch: the debug annotations of the track event being read.
    annotations: Vec<(usize, usize)>,
    /// Bytes of interned text held in the `args` of the open slices (at most
    /// [`HELD_INTERNED`]).
    held: usize,
    track_events: u64,
    packets: u64,
    first_ts: Option<i64>,
    last_ts: Option<i64>,
    odd: Odd,
    /// Where skipped framing started, while looking for the next packet, and whether it
    /// was a packet the end of the input cut (a truncated file, when no packet follows).
    resync_from: Option<(u64, bool)>,
    /// Fields read by the checks of framing candidates ([`RESYNC_SLACK`]).
    resync_fields: u64,
    damage: Vec<(u64, u64)>,
    truncated_at: Option<u64>,
}

impl Default for ProtoScan {
    fn default() -> Self {
        ProtoScan {
            c: Collector::default(),
            seqs: FastMap::default(),
            tracks: FastMap::default(),
            open: FastMap::default(),
            snapshot: Vec::new(),
            thread_names: FastMap::default(),
            event: Vec::with_capacity(256),
            annotations: Vec::new(),
            held: 0,
            track_events: 0,
            packets: 0,
            first_ts: None,
            last_ts: None,
            odd: Odd::default(),
            resync_from: None,
            resync_fields: 0,
            damage: Vec::new(),
            truncated_at: None,
        }
    }
}

/// How a framing candidate at some offset reads.
enum Candidate {
    /// A packet: its contents' range, and where the next field starts.
    Packet(usize, usize),
    /// Another top-level field (skipped): where the next starts.
    Other(usize),
    /// More bytes are needed.
    Cut,
    /// Not a field.
    Bad,
}

/// Which offsets of the bytes walked start packets that follow one another to the end
/// exactly. After a length that runs past the end, a packet is trusted only when the
/// packets from it reach the end: inside a packet the file cut, a nested message (field
/// 1, like a packet) followed by another reads as a packet too, but the other fields
/// around it, or the field the cut ends inside, do not. Each offset is looked at once,
/// whatever the candidates.
#[derive(Default)]
struct PacketsToEnd {
    known: FastMap<usize, bool>,
}

impl PacketsToEnd {
    /// True when the packets from `b[i]` follow one another to the end of `b`.
    fn from(&mut self, b: &[u8], i: usize) -> bool {
        let mut path = Vec::new();
        let mut j = i;
        let ok = loop {
            if j == b.len() {
                break true;
            }
            if let Some(&known) = self.known.get(&j) {
                break known;
            }
            path.push(j);
            match top_field(b, j) {
                Candidate::Packet(_, e) => j = e,
                _ => break false,
            }
        };
        self.known.extend(path.into_iter().map(|j| (j, ok)));
        ok
    }
}

/// Reads the top-level field at `b[i]`.
fn top_field(b: &[u8], i: usize) -> Candidate {
    let mut j = i;
    let tag = match varint(b, &mut j) {
        Ok(t) => t,
        Err(WireError::Cut) => return Candidate::Cut,
        Err(WireError::Malformed) => return Candidate::Bad,
    };
    if tag >> 3 == 0 {
        return Candidate::Bad;
    }
    let skip = |n: usize| {
        if j + n <= b.len() {
            Candidate::Other(j + n)
        } else {
            Candidate::Cut
        }
    };
    match tag & 7 {
        0 => match varint(b, &mut j) {
            Ok(_) => Candidate::Other(j),
            Err(WireError::Cut) => Candidate::Cut,
            Err(WireError::Malformed) => Candidate::Bad,
        },
        1 => skip(8),
        5 => skip(4),
        2 => {
            let len = match varint(b, &mut j) {
                Ok(l) => l,
                Err(WireError::Cut) => return Candidate::Cut,
                Err(WireError::Malformed) => return Candidate::Bad,
            };
            if len > MAX_PACKET {
                return Candidate::Bad;
            }
            let end = j + len as usize;
            if end > b.len() {
                Candidate::Cut
            } else if tag == 0x0a {
                Candidate::Packet(j, end)
            } else {
                Candidate::Other(end)
            }
        }
        _ => Candidate::Bad,
    }
}

impl ProtoScan {
    /// Walks the packets of `b` (at byte `base` of the input); `at_end`: nothing follows
    /// `b`. Returns how many bytes were used: the rest (a packet not yet complete) is to
    /// be handed again with the bytes that follow. Broken framing (a bad field, or at the
    /// end a packet longer than the bytes left) is skipped to the next packet that reads
    /// as a message followed by another packet or the end ([`ProtoScan::resync_check`]);
    /// after a packet the end cut, from which packets follow to the end ([`PacketsToEnd`]),
    /// and when there is none the file is truncated there.
    pub(crate) fn walk(&mut self, b: &[u8], base: u64, at_end: bool) -> usize {
        let mut i = 0;
        let mut to_end = PacketsToEnd::default();
        while i < b.len() {
            if let Some((from, cut)) = self.resync_from {
                // Looking for the next packet: a `0a` whose packet reads as a message and
                // is followed by another packet or the end.
                match (b[i], top_field(b, i)) {
                    // What follows decides: wait for it (a stream reads what a whole
                    // file reads).
                    (0x0a, Candidate::Packet(_, e)) if e == b.len() && !at_end => return i,
                    (0x0a, Candidate::Packet(s, e))
                        if (e == b.len() || b[e] == 0x0a)
                            && (!cut || to_end.from(b, e))
                            && self.resync_check(&b[s..e], base + i as u64) =>
                    {
                        self.damage.push((from, base + i as u64));
                        self.resync_from = None;
                        continue;
                    }
                    (0x0a, Candidate::Cut) if !at_end => return i,
                    _ => {
                        i += 1;
                        continue;
                    }
                }
            }
            match top_field(b, i) {
                Candidate::Packet(s, e) => {
                    self.packet(&b[s..e], base + i as u64);
                    i = e;
                }
                Candidate::Other(e) => i = e,
                Candidate::Cut if !at_end => return i,
                // A length past the end: the file is cut inside this packet, or the
                // length is broken and packets follow (docs/INPUTS.md).
                Candidate::Cut => {
                    self.resync_from = Some((base + i as u64, true));
                    i += 1;
                }
                Candidate::Bad => {
                    self.resync_from = Some((base + i as u64, false));
                    i += 1;
                }
            }
        }
        if at_end && let Some((from, cut)) = self.resync_from.take() {
            if cut {
                self.truncated_at = Some(from);
            } else {
                self.damage.push((from, base + b.len() as u64));
            }
        }
        b.len()
    }

    /// Whether the body of a framing candidate at input byte `offset` reads as a message.
    /// Each candidate could declare a packet of up to [`MAX_PACKET`] bytes and read as
    /// fields (a `0a` byte inside every `fixed64`): the checks read at most two fields per
    /// byte of input up to `offset` and [`RESYNC_SLACK`] fields in all, so that the search
    /// stays linear in the input's size; a candidate that needs more is rejected (its
    /// bytes are searched on, and reported skipped).
    fn resync_check(&mut self, body: &[u8], offset: u64) -> bool {
        let (ok, read) = well_formed_within(body, self.resync_allowance(offset));
        self.resync_fields += read;
        ok == Some(true)
    }

    /// Fields the checks of framing candidates may still read at input byte `offset`.
    fn resync_allowance(&self, offset: u64) -> u64 {
        offset
            .saturating_mul(2)
            .saturating_add(RESYNC_SLACK)
            .saturating_sub(self.resync_fields)
    }

    /// Reads one packet at input byte `offset`.
    fn packet(&mut self, p: &[u8], offset: u64) {
        self.packets += 1;
        let mut ts = None;
        let mut clock = None;
        let mut seq_id = 0u32;
        let mut flags = 0u64;
        let mut dropped = false;
        let (mut event, mut interned, mut defaults, mut descriptor, mut snapshot) =
            (None, None, None, None, None);
        let mut fields = Fields::of(p);
        for (n, v) in fields.by_ref() {
            match (n, v) {
                (8, Value::Varint(x)) => ts = Some(x),
                (58, Value::Varint(x)) => clock = Some(x as u32),
                (10, Value::Varint(x)) => seq_id = x as u32,
                (13, Value::Varint(x)) => flags |= x,
                (41, Value::Varint(x)) if x != 0 => flags |= 1,
                (42, Value::Varint(x)) => dropped = x != 0,
                (11, Value::Bytes(b)) => event = Some(b),
                (12, Value::Bytes(b)) => interned = Some(b),
                (59, Value::Bytes(b)) => defaults = Some(b),
                (60, Value::Bytes(b)) => descriptor = Some(b),
                (6, Value::Bytes(b)) => snapshot = Some(b),
                _ => {}
            }
        }
        if fields.error.is_some() {
            count(&mut self.odd.bad_packets, offset);
            return;
        }
        let seq = self.seqs.entry(seq_id).or_default();
        if dropped {
            seq.valid = false;
        }
        if flags & 1 != 0 {
            seq.clear();
        }
        if flags & 2 != 0 && !seq.valid {
            // Needs interned data or defaults lost with the packets before it.
            count(&mut self.odd.lost_state, offset);
            return;
        }
        if let Some(d) = defaults {
            read_defaults(seq, d);
        }
        if let Some(d) = interned {
            read_interned(seq, d, &mut self.odd.full_tables);
        }
        if let Some(s) = snapshot {
            read_snapshot(seq, s, &mut self.snapshot);
        }
        let ts = ts.and_then(|t| {
            let r = resolve_ts(seq, &self.snapshot, t, clock);
            if r.is_none() {
                count(&mut self.odd.unknown_clock, offset);
            }
            r
        });
        if let Some(d) = descriptor {
            self.descriptor(seq_id, d);
        }
        if let Some(e) = event {
            self.track_events += 1;
            if !self.track_event(seq_id, e, ts, offset) {
                count(&mut self.odd.bad_packets, offset);
            }
        }
    }

    /// A `TrackDescriptor`: the track's process and thread; a thread's name becomes the
    /// `thread_name` metadata event a JSON trace has.
    fn descriptor(&mut self, seq_id: u32, d: &[u8]) {
        let mut uuid = 0;
        let mut t = Track::default();
        let mut thread_name = None;
        for (n, v) in Fields::of(d) {
            match (n, v) {
                (1, Value::Varint(x)) => uuid = x,
                (5, Value::Varint(x)) => t.parent = x,
                (3, Value::Bytes(p)) => {
                    for (n, v) in Fields::of(p) {
                        if let (1, Value::Varint(x)) = (n, v) {
                            t.pid = Some(x as i32 as i64);
                        }
                    }
                }
                (4, Value::Bytes(th)) => {
                    for (n, v) in Fields::of(th) {
                        match (n, v) {
                            (1, Value::Varint(x)) => t.pid = Some(x as i32 as i64),
                            (2, Value::Varint(x)) => t.tid = Some(x as i64),
                            (5, Value::Bytes(s)) => thread_name = Some(s),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        if uuid == 0 {
            return;
        }
        if self.tracks.len() < MAX_TABLE || self.tracks.contains_key(&uuid) {
            self.tracks.insert(uuid, t);
        } else {
            self.odd.full_tables += 1;
        }
        let (Some(pid), Some(tid)) = (t.pid, t.tid) else {
            return;
        };
        if let Some(seq) = self.seqs.get_mut(&seq_id) {
            seq.thread = Some((pid, tid));
        }
        if let Some(name) = thread_name {
            let name = String::from_utf8_lossy(name);
            if self.thread_names.get(&(pid, tid)).map(|n| &**n) != Some(&*name)
                && self.thread_names.len() < MAX_TABLE
            {
                self.thread_names.insert((pid, tid), name.as_ref().into());
                self.event.clear();
                self.event.extend_from_slice(
                    format!(r#"{{"ph":"M","name":"thread_name","pid":{pid},"tid":{tid},"args":{{"name":"#)
                        .as_bytes(),
                );
                push_string(&mut self.event, name.as_bytes());
                self.event.extend_from_slice(b"}}");
                self.hand_over(0);
            }
        }
    }

    /// The (pid, tid) of an event on track `uuid` (0: none given), on sequence `seq`.
    fn thread_of(&self, uuid: u64, seq: &Sequence) -> (i64, i64) {
        let mut at = uuid;
        let mut pid = None;
        for _ in 0..8 {
            let Some(t) = self.tracks.get(&at) else { break };
            if let (Some(p), Some(tid)) = (t.pid, t.tid) {
                return (p, tid);
            }
            if t.pid.is_some() {
                pid = t.pid;
                break;
            }
            at = t.parent;
        }
        match (pid, seq.thread) {
            // A process-scoped event: on the sequence's thread when that is in the process
            // (the trace processor's legacy passthrough), else on no thread.
            (Some(p), Some((sp, st))) if sp == p => (p, st),
            (Some(p), _) => (p, 0),
            (None, Some(t)) => t,
            (None, None) => (0, 0),
        }
    }

    /// A `TrackEvent` at input byte `offset`, with its packet's time (ns, MONOTONIC).
    /// False when its fields do not parse (then it is skipped).
    fn track_event(&mut self, seq_id: u32, e: &[u8], ts: Option<i64>, offset: u64) -> bool {
        let Some(seq) = self.seqs.get(&seq_id) else {
            return true;
        };
        let mut name: NameId = None;
        let mut kind = 0u64;
        let mut track = None;
        let mut legacy = None;
        self.annotations.clear();
        let base = e.as_ptr() as usize;
        let mut fields = Fields::of(e);
        for (n, v) in fields.by_ref() {
            match (n, v) {
                (10, Value::Varint(iid)) => name = seq.names.get(&iid).copied().flatten(),
                (23, Value::Bytes(s)) => name = name_id(s),
                (9, Value::Varint(x)) => kind = x,
                (11, Value::Varint(x)) => track = Some(x),
                (6, Value::Bytes(b)) => legacy = Some(b),
                (4, Value::Bytes(b)) => {
                    let at = b.as_ptr() as usize - base;
                    self.annotations.push((at, at + b.len()));
                }
                _ => {}
            }
        }
        if fields.error.is_some() {
            return false;
        }
        let mut phase = None;
        let mut dur_us = None;
        let mut id = None;
        let (mut pid_override, mut tid_override) = (None, None);
        if let Some(l) = legacy {
            let mut fields = Fields::of(l);
            for (n, v) in fields.by_ref() {
                match (n, v) {
                    (1, Value::Varint(iid)) if name.is_none() => {
                        name = seq.names.get(&iid).copied().flatten()
                    }
                    (2, Value::Varint(x)) => phase = Some(x as u8),
                    (3, Value::Varint(x)) => dur_us = Some(x as i64),
                    (6 | 10 | 11, Value::Varint(x)) => id = Some(x),
                    (18, Value::Varint(x)) => pid_override = Some(x as i32 as i64),
                    (19, Value::Varint(x)) => tid_override = Some(x as i32 as i64),
                    _ => {}
                }
            }
            if fields.error.is_some() {
                return false;
            }
        }
        // The track: the event's, else the sequence's default; 0 (or none) with a legacy
        // phase is the sequence's thread, with the legacy pid/tid overrides.
        let uuid = track.or(seq.track).unwrap_or(0);
        let mut thread = self.thread_of(uuid, seq);
        if uuid == 0 {
            if let Some(p) = pid_override {
                thread.0 = p;
            }
            if let Some(t) = tid_override {
                thread.1 = t;
            }
        }
        let key = if uuid != 0 {
            uuid
        } else {
            1 << 63 | seq_id as u64
        };
        let ph = match (kind, phase) {
            (1, _) | (0, Some(b'B')) => b'B',
            (2, _) | (0, Some(b'E')) => b'E',
            (3, _) => b'I',
            (0, Some(p)) => p,
            _ => return true, // counters, or no phase at all
        };
        let dur = match (ph, dur_us) {
            (b'X', Some(d)) => d.checked_mul(1000),
            _ => None,
        };
        // The trace's span, over the events a JSON export has: not the ends of slices
        // begun before tracing started.
        if let Some(t) = ts
            && ph != b'M'
            && (ph != b'E' || self.open.get(&key).is_some_and(|s| !s.is_empty()))
        {
            let end = t.saturating_add(dur.unwrap_or(0).max(0));
            self.first_ts = Some(self.first_ts.map_or(t, |f| f.min(t)));
            self.last_ts = Some(self.last_ts.map_or(end, |l| l.max(end)));
        }
        match ph {
            b'B' => {
                if self.open.get(&key).is_some_and(|s| s.len() >= MAX_DEPTH) {
                    self.odd.deep += 1;
                    return true;
                }
                // Held until the slice ends: its interned text also counts against what
                // all open slices may hold.
                let allowed = INTERNED_PER_EVENT.min(HELD_INTERNED - self.held);
                let (args, interned) = match name {
                    Some(_) => self.args_of(seq_id, e, allowed),
                    None => (Vec::new(), 0),
                };
                self.held += interned;
                self.open.entry(key).or_default().push(OpenSlice {
                    name,
                    ts,
                    offset,
                    thread,
                    args,
                    interned,
                });
            }
            b'E' => {
                // An end without a begin is a slice begun before tracing started (Chrome
                // writes hundreds): not odd, and it has no name to match.
                let Some(begun) = self.open.get_mut(&key).and_then(Vec::pop) else {
                    return true;
                };
                self.held -= begun.interned;
                let Some(name) = begun.name else { return true };
                let mut args = begun.args;
                if !self.annotations.is_empty() {
                    // The end's annotations join the begin's, as in the JSON export.
                    let Some(seq) = self.seqs.get(&seq_id) else {
                        return true;
                    };
                    let list: Vec<&[u8]> =
                        self.annotations.iter().map(|&(a, b)| &e[a..b]).collect();
                    let had = args.len() > 2;
                    args.pop();
                    let mut budget = Budget::new(INTERNED_PER_EVENT - begun.interned);
                    push_members(&mut args, &list, seq, &mut budget, usize::from(had));
                    self.odd.interned_cut += budget.cut;
                    args.push(b'}');
                }
                let dur = match (begun.ts, ts) {
                    (Some(a), Some(b)) => Some(b - a),
                    _ => None,
                };
                self.emit(
                    Synth {
                        ph: b'X',
                        name,
                        thread: begun.thread,
                        ts: begun.ts,
                        dur,
                        id: None,
                        args: &args,
                    },
                    begun.offset,
                );
            }
            _ => {
                let Some(name) = name else { return true };
                let (args, _) = self.args_of(seq_id, e, INTERNED_PER_EVENT);
                self.emit(
                    Synth {
                        ph,
                        name,
                        thread,
                        ts,
                        dur,
                        id,
                        args: &args,
                    },
                    offset,
                );
            }
        }
        true
    }

    /// The `args` object of the current track event `e` (its debug annotations), copying
    /// at most `allowed` bytes of interned text, and how many it copied.
    fn args_of(&mut self, seq_id: u32, e: &[u8], allowed: usize) -> (Vec<u8>, usize) {
        let mut out = Vec::with_capacity(64);
        out.push(b'{');
        let mut budget = Budget::new(allowed);
        if let Some(seq) = self.seqs.get(&seq_id) {
            let list: Vec<&[u8]> = self.annotations.iter().map(|&(a, b)| &e[a..b]).collect();
            push_members(&mut out, &list, seq, &mut budget, 0);
        }
        out.push(b'}');
        self.odd.interned_cut += budget.cut;
        (out, allowed - budget.left)
    }

    /// Writes `s` as a JSON trace event and hands it to the collector.
    fn emit(&mut self, s: Synth<'_>, offset: u64) {
        let out = &mut self.event;
        out.clear();
        out.extend_from_slice(b"{\"ph\":\"");
        if s.ph.is_ascii_graphic() && s.ph != b'"' && s.ph != b'\\' {
            out.push(s.ph);
        } else {
            out.push(b'?');
        }
        out.extend_from_slice(b"\",\"name\":");
        push_string(out, MATCHED_NAMES[s.name as usize].as_bytes());
        out.extend_from_slice(format!(",\"pid\":{},\"tid\":{}", s.thread.0, s.thread.1).as_bytes());
        if let Some(ts) = s.ts {
            out.extend_from_slice(b",\"ts\":");
            push_micros(out, ts);
        }
        if let Some(d) = s.dur {
            out.extend_from_slice(b",\"dur\":");
            push_micros(out, d);
        }
        if let Some(id) = s.id {
            out.extend_from_slice(format!(",\"id\":\"0x{id:x}\"").as_bytes());
        }
        if s.args.len() > 2 {
            out.extend_from_slice(b",\"args\":");
            out.extend_from_slice(s.args);
        }
        out.push(b'}');
        self.hand_over(offset);
    }

    /// Parses the event in `self.event` and hands it to the collector, as from input
    /// byte `offset` (its file order).
    fn hand_over(&mut self, offset: u64) {
        match TraceEvent::parse(&self.event, 0, offset) {
            Ok((ev, _)) => self.c.event(&ev),
            Err(_) => self.odd.bad_events += 1,
        }
    }

    /// Ends the walk: slices still open become `B` events (a task still running when
    /// tracing stopped, as a JSON trace has it), and the counts become diagnostics.
    pub(crate) fn finish(mut self) -> ScannedTrace {
        let mut open: Vec<OpenSlice> = std::mem::take(&mut self.open)
            .into_values()
            .flatten()
            .filter(|s| s.name.is_some())
            .collect();
        open.sort_by_key(|s| s.offset);
        for s in open {
            let Some(name) = s.name else { continue };
            self.emit(
                Synth {
                    ph: b'B',
                    name,
                    thread: s.thread,
                    ts: s.ts,
                    dur: None,
                    id: None,
                    args: &s.args,
                },
                s.offset,
            );
        }
        let mut t = self.c.finish();
        t.events = self.track_events;
        t.first_ts = self.first_ts.map(Timestamp::from_nanos);
        t.last_ts = self.last_ts.map(Timestamp::from_nanos);
        let d = &mut t.diagnostics;
        let odd = &self.odd;
        for (kind, (n, first)) in [
            (
                "trace packets whose fields do not parse (each skipped)",
                odd.bad_packets,
            ),
            (
                "trace packets that need interned data lost with packets before them (skipped)",
                odd.lost_state,
            ),
            (
                "trace packets on a clock no clock snapshot defines (their times dropped)",
                odd.unknown_clock,
            ),
        ] {
            if let Some(at) = first {
                d.note(format!("{n} {kind}; the first at byte {at}"));
            }
        }
        d.add(
            "track events beginning a slice nested over 4,096 deep (ignored)",
            odd.deep,
        );
        d.add(
            "interned names, tracks or thread names past a million (ignored)",
            odd.full_tables,
        );
        d.add(
            "track events whose args could not be written as JSON (ignored)",
            odd.bad_events,
        );
        d.add(INTERNED_CUT, odd.interned_cut);
        for &(from, to) in &self.damage {
            d.note(format!(
                "protobuf framing broken at byte {from}: {} bytes skipped to the next trace packet, at byte {to}",
                to - from
            ));
        }
        t.end = Some(match self.truncated_at {
            Some(offset) => {
                d.note(format!(
                    "the file ends inside the trace packet at byte {offset} (the partial packet is dropped)"
                ));
                ArrayEnd::Truncated { offset }
            }
            None => ArrayEnd::Closed,
        });
        t
    }
}

/// Appends `ns` as µs, with the fraction when there is one (`1.5`, `-0.001`).
fn push_micros(out: &mut Vec<u8>, ns: i64) {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    let (us, frac) = (a / 1000, a % 1000);
    let text = if frac == 0 {
        format!("{sign}{us}")
    } else {
        format!("{sign}{us}.{frac:03}")
    };
    out.extend_from_slice(text.as_bytes());
}

/// `TracePacketDefaults`: the sequence's clock and track.
fn read_defaults(seq: &mut Sequence, d: &[u8]) {
    for (n, v) in Fields::of(d) {
        match (n, v) {
            (58, Value::Varint(x)) => seq.clock = Some(x as u32),
            (11, Value::Bytes(t)) => {
                for (n, v) in Fields::of(t) {
                    if let (11, Value::Varint(x)) = (n, v) {
                        seq.track = Some(x);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `InternedData`: event names (kept as an index into the matched names), debug
/// annotation names and interned string values.
fn read_interned(seq: &mut Sequence, d: &[u8], full: &mut u64) {
    for (n, v) in Fields::of(d) {
        let (table, Value::Bytes(entry)) = (n, v) else {
            continue;
        };
        if !matches!(table, 2 | 3 | 29) {
            continue;
        }
        let (mut iid, mut text) = (0, &b""[..]);
        for (n, v) in Fields::of(entry) {
            match (n, v) {
                (1, Value::Varint(x)) => iid = x,
                (2, Value::Bytes(s)) => text = s,
                _ => {}
            }
        }
        let room = |len: usize, full: &mut u64| {
            let ok = len < MAX_TABLE;
            if !ok {
                *full += 1;
            }
            ok
        };
        match table {
            2 if room(seq.names.len(), full) => {
                seq.names.insert(iid, name_id(text));
            }
            3 if room(seq.annotation_names.len(), full) => {
                seq.annotation_names.insert(iid, text.into());
            }
            29 if room(seq.strings.len(), full) => {
                seq.strings.insert(iid, text.into());
            }
            _ => {}
        }
    }
}

/// A `ClockSnapshot`: builtin clocks (ids below 64) relate the trace's clocks to each
/// other (kept in `global`); a sequence-scoped clock (64–127) is defined against a
/// builtin clock of the same snapshot, MONOTONIC when it has it.
fn read_snapshot(seq: &mut Sequence, s: &[u8], global: &mut Vec<(u32, i64)>) {
    let mut builtin: Vec<(u32, i64)> = Vec::new();
    let mut scoped: Vec<(u32, u64, bool, i64)> = Vec::new();
    for (n, v) in Fields::of(s) {
        let (1, Value::Bytes(c)) = (n, v) else {
            continue;
        };
        let (mut id, mut ts, mut inc, mut unit) = (0u32, 0u64, false, 1i64);
        for (n, v) in Fields::of(c) {
            match (n, v) {
                (1, Value::Varint(x)) => id = x as u32,
                (2, Value::Varint(x)) => ts = x,
                (3, Value::Varint(x)) => inc = x != 0,
                (4, Value::Varint(x)) => unit = (x as i64).max(1),
                _ => {}
            }
        }
        match id {
            1..64 => builtin.push((id, ts as i64)),
            64..128 => scoped.push((id, ts, inc, unit)),
            _ => {}
        }
    }
    let reference = builtin
        .iter()
        .find(|c| c.0 == MONOTONIC)
        .or(builtin.first())
        .copied();
    if let Some((rid, rns)) = reference {
        for (id, ts, incremental, unit) in scoped {
            if seq.clocks.len() < 64 || seq.clocks.contains_key(&id) {
                seq.clocks.insert(
                    id,
                    SequenceClock {
                        unit,
                        incremental,
                        base: ts,
                        current: ts,
                        reference: rid,
                        reference_ns: rns,
                    },
                );
            }
        }
    }
    if builtin.len() > 1 {
        *global = builtin;
    }
}

/// A packet's timestamp `t` on `clock` (or the sequence's default clock, else BOOTTIME)
/// as ns on MONOTONIC (on the clock's own builtin clock when no snapshot relates it to
/// MONOTONIC). `None` for a clock no snapshot defined, or a time beyond i64.
fn resolve_ts(
    seq: &mut Sequence,
    global: &[(u32, i64)],
    t: u64,
    clock: Option<u32>,
) -> Option<i64> {
    let id = clock.or(seq.clock).unwrap_or(BOOTTIME);
    let (builtin, ns) = match id {
        1..64 => (id, i64::try_from(t).ok()?),
        64..128 => {
            let c = seq.clocks.get_mut(&id)?;
            let v = if c.incremental {
                c.current = c.current.wrapping_add(t);
                c.current
            } else {
                t
            };
            let units = v as i128 - c.base as i128;
            let mut ns = c.reference_ns as i128 + units * c.unit as i128;
            if c.unit % 1000 == 0 {
                // A clock counting whole µs (Chrome's: `TimeTicks` in µs) gives times to
                // the µs, as Chrome's JSON export and the profiles' `startTime` have them:
                // the snapshot's sub-µs part is when in that µs it was taken.
                ns -= ns.rem_euclid(1000);
            }
            (c.reference, i64::try_from(ns).ok()?)
        }
        _ => return None,
    };
    if builtin == MONOTONIC {
        return Some(ns);
    }
    let at = |id: u32| global.iter().find(|c| c.0 == id).map(|c| c.1);
    match (at(builtin), at(MONOTONIC)) {
        (Some(from), Some(to)) => ns.checked_add(to - from),
        _ => Some(ns),
    }
}

/// Scans a whole protobuf trace held in memory.
pub fn scan_bytes(b: &[u8]) -> ScannedTrace {
    let mut s = ProtoScan::default();
    s.walk(b, 0, true);
    s.finish()
}

/// Scans a protobuf trace arriving in blocks, starting with `head` (the bytes already
/// read; `more`: the source has more). Holds at most one block and the packet it ends
/// inside. A read error ends the stream: it is returned with the scan of the bytes before.
pub fn scan_stream(
    head: Vec<u8>,
    mut more: bool,
    source: &mut impl BlockSource,
) -> (ScannedTrace, Option<std::io::Error>) {
    let mut s = ProtoScan::default();
    let mut buf = head;
    let mut base = 0u64;
    let mut error = None;
    loop {
        let used = s.walk(&buf, base, !more);
        buf.drain(..used);
        base += used as u64;
        if !more {
            break;
        }
        match source.append_to(&mut buf) {
            Ok(m) => more = m,
            Err(e) => {
                error = Some(e);
                more = false;
            }
        }
    }
    (s.finish(), error)
}

#[cfg(test)]
mod tests;

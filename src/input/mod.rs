//! Input: a path (or `-` for standard input) → the bytes of one trace file.
//!
//! Plain files are memory-mapped read-only and never copied; standard input, pipes and
//! FIFOs are read in blocks as a stream (never held whole: `zstd -dc x.zst | taskchain -`
//! holds what a `.gz` would). Gzip is detected by its magic bytes `1f 8b` (not by the file
//! name) and streamed through a multi-member decoder on its own thread (concatenated
//! members are one legal stream), or inflated whole when it is small (at most 48 MB
//! inflated; most `.json.gz` traces are). [`crate::scan::envelope`] then says where the trace events start.

pub(crate) mod encoding;
pub(crate) mod gzip;
pub(crate) mod identity;
pub(crate) mod pages;
#[cfg(feature = "cli")]
pub(crate) mod paths;
pub(crate) mod side;

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::PathBuf;

use crate::error::{Error, Result};

/// Where a stream's bytes come from.
pub trait BlockSource {
    /// Appends the next block to `buf`; `Ok(false)` at the end of the stream.
    fn append_to(&mut self, buf: &mut Vec<u8>) -> std::io::Result<bool>;

    /// The next block in a buffer of its own, as `(buffer, room)`: the block's bytes are
    /// `buffer[room..]`, and the `room` bytes before them are free for the caller to
    /// fill (with the partial event carried over from the block before, which then needs
    /// no copy of the block). `Ok(None)` at the end of the stream. The default gives no
    /// room.
    fn next_block(&mut self) -> std::io::Result<Option<(Vec<u8>, usize)>> {
        let mut v = Vec::new();
        // A source may append its last bytes with `Ok(false)`: they are a block too.
        let more = self.append_to(&mut v)?;
        Ok((more || !v.is_empty()).then_some((v, 0)))
    }

    /// Hands back a buffer of [`BlockSource::next_block`] for reuse (the default drops it).
    /// Every buffer taken must be handed back (or replaced by one at least as large): a
    /// source with a fixed set of buffers waits for one before it decodes more.
    fn recycle(&mut self, _buffer: Vec<u8>) {}

    /// Says that the caller may hold up to `blocks` buffers of [`BlockSource::next_block`]
    /// at once before it hands one back: a source with a fixed set of buffers makes sure
    /// it has more than that, so that it never waits for a buffer the caller waits on.
    fn will_hold(&mut self, _blocks: usize) {}
}

impl<I: Iterator<Item = std::io::Result<Vec<u8>>>> BlockSource for I {
    fn append_to(&mut self, buf: &mut Vec<u8>) -> std::io::Result<bool> {
        match self.next() {
            Some(Ok(b)) => {
                buf.extend_from_slice(&b);
                Ok(true)
            }
            Some(Err(e)) => Err(e),
            None => Ok(false),
        }
    }
}

/// One input as given on the command line or found in a folder.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum InputPath {
    /// A file named on the command line.
    File(PathBuf),
    /// A file found by searching a folder.
    #[cfg_attr(
        not(feature = "cli"),
        allow(dead_code, reason = "folder searches are the CLI's")
    )]
    Found(PathBuf),
    /// Standard input (`-`).
    #[cfg_attr(
        not(feature = "cli"),
        allow(dead_code, reason = "standard input is the CLI's")
    )]
    Stdin,
}

impl InputPath {
    /// The path as reports show it (`-` for standard input).
    pub(crate) fn display_name(&self) -> String {
        match self {
            InputPath::File(p) | InputPath::Found(p) => crate::error::path_text(p),
            InputPath::Stdin => "-".to_string(),
        }
    }
    /// The path used in error messages.
    pub(crate) fn path(&self) -> PathBuf {
        match self {
            InputPath::File(p) | InputPath::Found(p) => p.clone(),
            InputPath::Stdin => PathBuf::from("-"),
        }
    }
}

/// The whole (decompressed) content of one input.
pub(crate) enum TraceBytes {
    /// A read-only map of a plain file.
    Mapped(memmap2::Mmap),
    /// Gzip read from a pipe (compressed), or an empty file.
    Owned(Vec<u8>),
}

impl Deref for TraceBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            TraceBytes::Mapped(m) => m,
            TraceBytes::Owned(v) => v,
        }
    }
}

impl TraceBytes {
    /// What advice the bytes take about their pages ([`pages::Pages`]): a map of a file
    /// takes it, bytes of our own none.
    pub(crate) fn pages(&self) -> pages::Pages {
        match self {
            TraceBytes::Mapped(_) => pages::Pages::FileMap,
            TraceBytes::Owned(_) => pages::Pages::Owned,
        }
    }
}

/// True when `b` starts with the gzip magic bytes.
pub(crate) fn is_gzip(b: &[u8]) -> bool {
    b.starts_with(&[0x1f, 0x8b])
}

/// An input ready to scan: whole bytes, or a stream read block by block.
pub(crate) enum Source {
    /// The whole content of a plain file, mapped.
    Whole(TraceBytes),
    /// A gzip stream, decoded on its own thread.
    Gzip(GzBlocks),
    /// A small gzip stream, inflated whole on the calling thread ([`GZ_INLINE_MAX`]).
    Inflated(Inflated),
    /// Plain JSON from standard input or a pipe.
    Stream(ReadBlocks),
}

/// How [`open`] reads an input.
#[derive(Clone, Debug, Default)]
pub(crate) struct Reading {
    /// Where the bytes read are counted as they are (compressed bytes for gzip), for a
    /// progress bar that moves inside a large file.
    pub(crate) progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Whether a gzip input's [`identity::trace_id`] is computed (SHA-256 of up to 2 MiB
    /// of it): only outputs that carry the id ask for it.
    pub(crate) trace_id: bool,
}

/// Opens one input: plain files are mapped, gzip (by its magic bytes) is streamed through
/// a decoder thread, so a 1 GB `.json.gz` never sits inflated in memory, and plain JSON
/// from standard input or a pipe is read in blocks. `reading.progress` counts the
/// compressed bytes the gzip decoder has consumed, or the bytes read from a pipe.
pub(crate) fn open(input: &InputPath, reading: Reading) -> Result<Source> {
    let path = match input {
        InputPath::Stdin if std_fd_was_closed(0) => {
            return Err(Error::Io {
                path: input.path(),
                source: std::io::Error::other("standard input is closed"),
            });
        }
        InputPath::Stdin => return stream(Box::new(std::io::stdin()), input, reading),
        InputPath::File(path) | InputPath::Found(path) => path,
    };
    let io = |source| Error::Io {
        path: path.clone(),
        source,
    };
    // Looked at before opening: opening a FIFO waits for a writer, a terminal for a line.
    let kind = std::fs::metadata(path).map_err(io)?.file_type();
    if !kind.is_file() {
        return open_special(path, kind, input, reading);
    }
    let file = File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return stream(Box::new(file), input, reading);
    }
    if meta.len() == 0 {
        return Ok(Source::Whole(TraceBytes::Owned(Vec::new())));
    }
    // SAFETY: the map is read-only; a file truncated by another process while we read it
    // can still fault (SIGBUS), as for every mmap-based reader.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Sequential);
    if is_gzip(&map) {
        Ok(gzip_source(TraceBytes::Mapped(map), reading))
    } else {
        // The scan fills its page tables range by range (`pages::Pages`).
        Ok(Source::Whole(TraceBytes::Mapped(map)))
    }
}

/// Bit `fd` set: standard descriptor `fd` was closed when the process started, as
/// [`record_std_fds_at_start`] found before Rust's runtime began.
static CLOSED_AT_START: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);
/// [`record_std_fds_at_start`] ran.
static RECORDED_AT_START: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Records which of descriptors 0–2 are closed. For the program to call before `main`
/// (from an `.init_array` constructor), that is before Rust's runtime opens `/dev/null`
/// read-write in place of each closed one: after that, a closed descriptor cannot be told
/// from a `/dev/null` opened read-write on purpose (`1<>/dev/null`, Python's
/// `subprocess.DEVNULL`). Uses nothing of the runtime: one `fcntl` per descriptor.
pub fn record_std_fds_at_start() {
    #[cfg(unix)]
    {
        let mut closed = 0u8;
        for fd in 0..3 {
            // SAFETY: F_GETFD only reads the descriptor's flags; -1 (EBADF): not open.
            if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
                closed |= 1 << fd;
            }
        }
        CLOSED_AT_START.store(closed, std::sync::atomic::Ordering::Relaxed);
        RECORDED_AT_START.store(true, std::sync::atomic::Ordering::Release);
    }
}

/// True when standard descriptor `fd` (0, 1 or 2) was closed when taskchain started
/// (`>&-`, `<&-`): as [`record_std_fds_at_start`] recorded it. Where it did not run (a
/// library user's program), Rust's runtime has put `/dev/null`, opened read-write, in
/// its place, so that is taken for a closed one (a shell's `> /dev/null` opens it
/// write-only, `< /dev/null` read-only).
pub(crate) fn std_fd_was_closed(fd: i32) -> bool {
    if RECORDED_AT_START.load(std::sync::atomic::Ordering::Acquire) {
        return (0..3).contains(&fd)
            && CLOSED_AT_START.load(std::sync::atomic::Ordering::Relaxed) & (1 << fd) != 0;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let (Ok(null), Ok(ours)) = (
            std::fs::metadata("/dev/null"),
            std::fs::metadata(format!("/proc/self/fd/{fd}")),
        ) else {
            return false;
        };
        // SAFETY: F_GETFL only reads the descriptor's flags.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        flags >= 0 && flags & libc::O_ACCMODE == libc::O_RDWR && ours.rdev() == null.rdev()
    }
    #[cfg(not(unix))]
    {
        let _ = fd;
        false
    }
}

/// How long a FIFO named as an input is waited for to be written to, ms.
pub(crate) static FIFO_WAIT_MS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(10_000);

/// Opens a path that is not a regular file: a FIFO or pipe (`<(zcat x.gz)`) is opened
/// without blocking and read as a stream once written to (a FIFO nothing writes to within
/// [`FIFO_WAIT_MS`] is refused, so it cannot hold up a batch);
/// devices, sockets and folders are refused, naming what they are.
fn open_special(
    path: &std::path::Path,
    kind: std::fs::FileType,
    input: &InputPath,
    reading: Reading,
) -> Result<Source> {
    let refuse = |what: &str| Error::NotATrace {
        path: path.to_path_buf(),
        reason: what.to_string(),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return match open_fifo(path) {
                Ok(file) => stream(Box::new(file), input, reading),
                Err(FifoError::Io(source)) => Err(Error::Io {
                    path: path.to_path_buf(),
                    source,
                }),
                Err(FifoError::Silent(why)) => Err(refuse(&why)),
            };
        }
    }
    let _ = reading;
    Err(refuse(special_kind(&kind)))
}

/// What a path that is neither a regular file nor a FIFO is, as a reason to refuse it.
pub(crate) fn special_kind(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_char_device() {
            return "a character device, not a regular file or a pipe";
        }
        if kind.is_block_device() {
            return "a block device, not a regular file or a pipe";
        }
        if kind.is_socket() {
            return "a socket, not a regular file or a pipe";
        }
    }
    if kind.is_dir() {
        return "a folder, not a regular file or a pipe";
    }
    "a special file, not a regular file or a pipe"
}

/// Why a FIFO could not be opened for reading.
pub(crate) enum FifoError {
    /// Opening it failed.
    Io(std::io::Error),
    /// Nothing wrote to it within [`FIFO_WAIT_MS`] (the reason, as a phrase).
    Silent(String),
}

/// Opens the FIFO at `path` without blocking and waits a bounded time ([`FIFO_WAIT_MS`])
/// for a writer to write (or to come and go); reads block again on the file returned.
#[cfg(unix)]
pub(crate) fn open_fifo(path: &std::path::Path) -> std::result::Result<File, FifoError> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(FifoError::Io)?;
    let fd = file.as_raw_fd();
    // Linux reports neither while no writer has opened the FIFO since we did.
    let wait = FIFO_WAIT_MS.load(std::sync::atomic::Ordering::Relaxed);
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll on one pollfd that lives across the call.
    let ready = unsafe { libc::poll(&mut poll, 1, wait.min(i32::MAX as u64) as i32) };
    if ready == 0 {
        return Err(FifoError::Silent(format!(
            "a FIFO (named pipe) that nothing wrote to within {} s",
            wait as f64 / 1000.0
        )));
    }
    // Reads block again from here on.
    // SAFETY: fcntl on a descriptor this function owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
    }
    Ok(file)
}

/// A stream that cannot be mapped: its first block tells gzip (read whole, compressed,
/// then decoded as a stream) from plain JSON (read on in blocks).
fn stream(mut reader: Box<dyn Read + Send>, input: &InputPath, reading: Reading) -> Result<Source> {
    let io = |source| Error::Io {
        path: input.path(),
        source,
    };
    let mut first = Vec::new();
    (&mut reader)
        .take(GZ_BLOCK as u64)
        .read_to_end(&mut first)
        .map_err(io)?;
    if is_gzip(&first) {
        reader.read_to_end(&mut first).map_err(io)?;
        return Ok(gzip_source(TraceBytes::Owned(first), reading));
    }
    Ok(Source::Stream(ReadBlocks {
        reader,
        first: Some(first),
        read: Default::default(),
        progress: reading.progress,
    }))
}

/// A gzip input whole: inflated on this thread when it is small ([`inflate_small`]), else
/// a stream from a decoder thread.
fn gzip_source(compressed: TraceBytes, reading: Reading) -> Source {
    match inflate_small(&compressed, GZ_INLINE_MAX) {
        Some(bytes) => {
            if let Some(p) = &reading.progress {
                p.fetch_add(
                    compressed.len() as u64,
                    std::sync::atomic::Ordering::Relaxed,
                );
            }
            Source::Inflated(Inflated {
                bytes,
                compressed_len: compressed.len() as u64,
                trace_id: reading.trace_id.then(|| identity::trace_id(&compressed)),
            })
        }
        None => Source::Gzip(GzBlocks::spawn(compressed, reading)),
    }
}

/// Most inflated bytes of a gzip input read whole ([`inflate_small`]); larger ones are
/// streamed. Most `.json.gz` traces are a few MB inflated: for them a decoder thread, its
/// hand-offs and the stream scan's carried-over events cost more than reading the bytes
/// whole (the 400-file batch, at most 32 MB a file, took 7 % less CPU), while a buffer of
/// this size is about what a stream's decoder buffers take (six of 5 MB).
const GZ_INLINE_MAX: usize = 48 << 20;

/// The inflated size the gzip stream `compressed` says it has, when it is inflated whole
/// (not streamed): its last member's ISIZE (RFC 1952 §2.3.1: the length mod 2^32,
/// only a first guess when there are several members), when both it and the compressed
/// size are at most 48 MiB. For the yardstick (`tools/bytescan.rs`), which reads the files
/// taskchain inflates whole as it does.
pub fn inflated_whole_size(compressed: &[u8]) -> Option<usize> {
    size_within(compressed, GZ_INLINE_MAX)
}

/// The inflated bytes of `compressed` when taskchain reads it whole (at most 48 MiB, read
/// without error), as it reads a `.json.gz` file: `None` when it is streamed instead.
/// For the `gzip_stream` fuzz target, which checks that the reused buffers give each
/// input's bytes and nothing of an earlier one.
pub fn inflated_whole(compressed: &[u8]) -> Option<InflatedBytes> {
    inflate_small(compressed, GZ_INLINE_MAX)
}

/// [`inflated_whole_size`] with another limit than 48 MiB.
fn size_within(compressed: &[u8], limit: usize) -> Option<usize> {
    let n = compressed.len();
    let size = u32::from_le_bytes(compressed.get(n.checked_sub(4)?..)?.try_into().ok()?);
    let size = usize::try_from(size).ok()?;
    (size <= limit && n <= limit).then_some(size)
}

/// The inflated bytes of the gzip stream `compressed` if its last member's trailer says
/// they are at most `limit` bytes and inflating them all gives at most that, without
/// error: `None` else, for the stream decoder to read it (and tell its errors, after the
/// events before them) as it reads every other gzip input.
fn inflate_small(compressed: &[u8], limit: usize) -> Option<InflatedBytes> {
    let size = size_within(compressed, limit)?;
    // One gzip member, as nearly every `.json.gz` is: libdeflate, which reads a whole
    // member into a buffer of its known size (CRC-32 and length checked) faster than
    // zlib-rs streams it. Anything it refuses (several members, bytes after the member,
    // damage) is read by the streaming decoder below, as before.
    let mut whole = InflatedBytes(SPARES.take());
    if gzip::one_member_into(compressed, size, &mut whole.0) {
        return Some(whole);
    }
    drop(whole); // back to the spares before the stream decoder makes its own buffer
    // One byte more than the guess: a stream that ends there leaves room unused, which
    // tells its end from a full buffer with more to come.
    let mut out = Vec::with_capacity(size + 1);
    let mut dec = gzip::GzipReader::new(compressed);
    loop {
        match dec.read_spare(&mut out) {
            Ok(0) if out.len() < out.capacity() => return Some(InflatedBytes(out)),
            // Full at one byte over the limit: more than it.
            Ok(0) if out.len() > limit => return None,
            Ok(0) => out.reserve_exact(out.len().min(limit + 1 - out.len()).max(1)),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
}

/// A gzip input inflated whole ([`Source::Inflated`]).
pub(crate) struct Inflated {
    /// The inflated bytes.
    pub(crate) bytes: InflatedBytes,
    /// Size of the compressed input, bytes.
    pub(crate) compressed_len: u64,
    /// The [`identity::trace_id`] of the compressed bytes, when [`Reading::trace_id`].
    pub(crate) trace_id: Option<String>,
}

/// The bytes of a gzip input inflated whole (derefs to them). Its buffer is kept for the
/// next input when dropped (two at most): in a batch of `.json.gz` files, a buffer taken
/// fresh for each file was a page fault and a zeroed page for much of every file's bytes.
pub struct InflatedBytes(Vec<u8>);

/// Buffers of [`InflatedBytes`] kept for reuse: one per worker of a batch on two cores.
/// Each has room for [`GZ_INLINE_MAX`] bytes, but only the pages the largest input wrote
/// to are memory.
static SPARES: Spares = Spares::new(2);

/// Buffers of [`GZ_INLINE_MAX`] bytes' room kept for reuse, at most `most` of them.
struct Spares {
    buffers: std::sync::Mutex<Vec<Vec<u8>>>,
    most: usize,
}

impl Spares {
    const fn new(most: usize) -> Spares {
        Spares {
            buffers: std::sync::Mutex::new(Vec::new()),
            most,
        }
    }

    /// An empty buffer with room for [`GZ_INLINE_MAX`] bytes: a kept one, else a new one
    /// (address space only, until written).
    fn take(&self) -> Vec<u8> {
        let kept = self.buffers.lock().ok().and_then(|mut b| b.pop());
        kept.unwrap_or_else(|| Vec::with_capacity(GZ_INLINE_MAX))
    }

    /// Keeps `buffer` (emptied) when it has that room and fewer than `most` are kept.
    fn give(&self, mut buffer: Vec<u8>) {
        if buffer.capacity() < GZ_INLINE_MAX {
            return; // not one of ours (grown by the stream decoder)
        }
        buffer.clear();
        if let Ok(mut kept) = self.buffers.lock()
            && kept.len() < self.most
        {
            kept.push(buffer);
        }
    }
}

impl std::ops::Deref for InflatedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for InflatedBytes {
    fn drop(&mut self) {
        SPARES.give(std::mem::take(&mut self.0));
    }
}

/// Plain JSON read from a pipe in blocks of 4 MB (the first one already read, to tell it
/// from gzip).
pub(crate) struct ReadBlocks {
    reader: Box<dyn Read + Send>,
    first: Option<Vec<u8>>,
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
    progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

impl ReadBlocks {
    /// The count of bytes read so far, shared: it goes on counting after the blocks are
    /// handed to the scan.
    pub(crate) fn bytes_read(&self) -> std::sync::Arc<std::sync::atomic::AtomicU64> {
        self.read.clone()
    }
}

impl crate::input::BlockSource for ReadBlocks {
    fn append_to(&mut self, buf: &mut Vec<u8>) -> std::io::Result<bool> {
        let n = match self.first.take() {
            Some(first) => {
                buf.extend_from_slice(&first);
                first.len()
            }
            None => (&mut self.reader).take(GZ_BLOCK as u64).read_to_end(buf)?,
        };
        for counter in std::iter::once(&self.read).chain(&self.progress) {
            counter.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(n > 0)
    }
}

/// Decompressed blocks of a gzip stream, from a decoder thread: the decoder works on the
/// next blocks while the scanner reads this one (a pipeline over two cores). Blocks go
/// back to the decoder to be refilled, so no fresh memory is touched per block.
pub(crate) struct GzBlocks {
    full: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    empty: std::sync::mpsc::SyncSender<Vec<u8>>,
    /// Buffers made for the decoder (at most [`GZ_MAX_BLOCKS`]).
    buffers: usize,
    /// Buffers of [`BlockSource::next_block`] not handed back yet.
    lent: usize,
    compressed_len: u64,
    trace_id: Option<String>,
}

/// Size of one decompressed block. Tuned on the 1 GB benchmark .gz files: 1–8 MB gave
/// the same time within noise; 2 MB (with [`CARRY_ROOM`] 512 KB) keeps ~25 MB less
/// resident than 4 MB over the ten or so buffers in flight of a two-thread scan.
const GZ_BLOCK: usize = 2 << 20;
/// Free bytes before each decompressed block ([`BlockSource::next_block`]): the scanner
/// copies the partial event at the end of one block there, before the next one, instead
/// of copying the block after the partial event. Events are mostly far smaller.
const CARRY_ROOM: usize = 512 << 10;
/// Blocks in flight: the one being decompressed, one waiting, and those the scanner
/// holds (one walked on each of two threads, the last one walked until the next is
/// known to start where it ended, and the next one being joined to its carried-over
/// partial event).
const GZ_BLOCKS: usize = 6;
/// Most buffers a decoder gets ([`BlockSource::will_hold`]).
const GZ_MAX_BLOCKS: usize = 64;
/// A decoder buffer's capacity.
const GZ_BUFFER: usize = CARRY_ROOM + GZ_BLOCK;

impl GzBlocks {
    /// Size of the compressed input, bytes.
    pub(crate) fn compressed_len(&self) -> u64 {
        self.compressed_len
    }

    /// The [`identity::trace_id`] of the compressed bytes, when [`Reading::trace_id`].
    pub(crate) fn trace_id(&self) -> Option<&str> {
        self.trace_id.as_deref()
    }

    fn spawn(compressed: TraceBytes, reading: Reading) -> GzBlocks {
        let progress = reading.progress;
        let compressed_len = compressed.len() as u64;
        let trace_id = reading.trace_id.then(|| identity::trace_id(&compressed));
        let (full_tx, full) = std::sync::mpsc::sync_channel(GZ_BLOCKS);
        let (empty, empty_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(GZ_MAX_BLOCKS);
        for _ in 0..GZ_BLOCKS {
            let _ = empty.send(Vec::with_capacity(GZ_BUFFER));
        }
        std::thread::spawn(move || {
            let mut dec = gzip::GzipReader::new(&compressed);
            let mut reported = 0u64;
            while let Ok(mut block) = empty_rx.recv() {
                // The room is zeroed once per buffer; the block after it is decoded into
                // spare capacity, never zeroed (a small file's block is mostly unused).
                block.truncate(CARRY_ROOM);
                block.resize(CARRY_ROOM, 0);
                // A buffer the scanner grew goes back to a block's size.
                block.shrink_to(GZ_BUFFER);
                block.reserve_exact(GZ_BUFFER - CARRY_ROOM);
                let mut ended = false;
                let result = loop {
                    match dec.read_spare(&mut block) {
                        Ok(0) => {
                            ended = block.len() < block.capacity();
                            break Ok(());
                        }
                        Ok(_) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(e),
                    }
                };
                let n = block.len();
                if let Some(p) = &progress {
                    let consumed = compressed_len - dec.remaining() as u64;
                    p.fetch_add(consumed - reported, std::sync::atomic::Ordering::Relaxed);
                    reported = consumed;
                }
                // The end of the stream, or an error, ends the decoder: no other buffer is
                // taken only to find nothing more in it.
                let last = ended || result.is_err();
                if n > CARRY_ROOM && full_tx.send(Ok(block)).is_err() {
                    return;
                }
                if let Err(e) = result {
                    let _ = full_tx.send(Err(e));
                }
                if last {
                    return;
                }
            }
        });
        GzBlocks {
            full,
            empty,
            buffers: GZ_BLOCKS,
            lent: 0,
            compressed_len,
            trace_id,
        }
    }
}

impl crate::input::BlockSource for GzBlocks {
    fn append_to(&mut self, buf: &mut Vec<u8>) -> std::io::Result<bool> {
        match self.full.recv() {
            Ok(Ok(block)) => {
                buf.extend_from_slice(&block[CARRY_ROOM..]);
                let _ = self.empty.send(block);
                Ok(true)
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Ok(false), // the decoder is done
        }
    }

    fn next_block(&mut self) -> std::io::Result<Option<(Vec<u8>, usize)>> {
        match self.full.recv() {
            Ok(Ok(block)) => {
                self.lent += 1;
                Ok(Some((block, CARRY_ROOM)))
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Ok(None),
        }
    }

    fn will_hold(&mut self, blocks: usize) {
        // One more than those held, for the block being decoded. Blocks decoded further
        // ahead wait in the channel where no thread can walk them: the scanner makes its
        // pieces ahead instead (`PIECES_AHEAD` in `scan::stream`).
        while self.buffers < (blocks + 1).min(GZ_MAX_BLOCKS) {
            self.buffers += 1;
            let _ = self.empty.send(Vec::with_capacity(GZ_BUFFER));
        }
    }

    fn recycle(&mut self, buffer: Vec<u8>) {
        // A buffer smaller than the decoder's is not one of its own (the scanner's copy
        // of a partial event): dropped. One of them grown for a huge event is freed and
        // a new one of the decoder's size goes back in its place, so the decoder never
        // runs short of buffers.
        if self.lent == 0 || buffer.capacity() < GZ_BUFFER {
            return;
        }
        self.lent -= 1;
        let buffer = if buffer.capacity() <= 2 * GZ_BUFFER {
            buffer
        } else {
            drop(buffer);
            Vec::with_capacity(GZ_BUFFER)
        };
        let _ = self.empty.try_send(buffer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn decoded(p: &std::path::Path) -> (Vec<u8>, bool) {
        use crate::input::BlockSource;
        // The decoder thread's blocks, whatever the size (small inputs are inflated whole
        // by `open`).
        let mut blocks = GzBlocks::spawn(
            TraceBytes::Owned(std::fs::read(p).unwrap()),
            Reading::default(),
        );
        let mut out = Vec::new();
        loop {
            match blocks.append_to(&mut out) {
                Ok(true) => {}
                Ok(false) => return (out, false),
                Err(_) => return (out, true),
            }
        }
    }

    #[test]
    fn a_pipe_is_read_in_blocks_and_counted() {
        use crate::input::BlockSource;
        // Three blocks' worth and a bit: the first (read to tell it from gzip), two more,
        // the rest, then the end.
        let data: Vec<u8> = (0..3 * GZ_BLOCK + 10).map(|i| (i % 251) as u8).collect();
        let Source::Stream(mut blocks) = stream(
            Box::new(std::io::Cursor::new(data.clone())),
            &InputPath::Stdin,
            Reading::default(),
        )
        .unwrap() else {
            panic!("not a plain stream")
        };
        let read = blocks.bytes_read();
        let (mut out, mut appends) = (Vec::new(), 0);
        while blocks.append_to(&mut out).unwrap() {
            appends += 1;
            assert_eq!(out.len(), (appends * GZ_BLOCK).min(data.len()));
        }
        assert_eq!(appends, 4);
        assert_eq!(out, data);
        assert_eq!(
            read.load(std::sync::atomic::Ordering::Relaxed),
            data.len() as u64
        );
        // Gzip on a pipe is told by its first bytes.
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(b"[]").unwrap();
        let gz = e.finish().unwrap();
        let Source::Inflated(gz) = stream(
            Box::new(std::io::Cursor::new(gz)),
            &InputPath::Stdin,
            Reading::default(),
        )
        .unwrap() else {
            panic!("not read as gzip")
        };
        assert_eq!(&*gz.bytes, b"[]");
    }

    fn gzip(part: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(part).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn a_small_gzip_file_is_inflated_whole_and_counted_as_read() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let gz = gzip(&data);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json.gz");
        std::fs::write(&p, &gz).unwrap();
        let read = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let reading = Reading {
            progress: Some(read.clone()),
            trace_id: true,
        };
        let Source::Inflated(whole) = open(&InputPath::File(p.clone()), reading).unwrap() else {
            panic!("not inflated whole")
        };
        assert!(*whole.bytes == data, "{} bytes", whole.bytes.len());
        assert_eq!(whole.compressed_len, gz.len() as u64);
        assert_eq!(whole.trace_id, Some(identity::trace_id(&gz)));
        // Not asked for, the id is not computed.
        let Source::Inflated(whole) = open(&InputPath::File(p), Reading::default()).unwrap() else {
            panic!("not inflated whole")
        };
        assert_eq!(whole.trace_id, None);
        assert_eq!(
            read.load(std::sync::atomic::Ordering::Relaxed),
            gz.len() as u64
        );
    }

    #[test]
    fn only_a_whole_stream_within_the_limit_is_inflated_inline() {
        let a: Vec<u8> = (0..5000u32).map(|i| (i % 7) as u8).collect();
        let b = b"tail of the second member";
        let (ga, gb) = (gzip(&a), gzip(b));
        let two = [&ga[..], &gb[..]].concat();
        // Two members: the trailer's length (25 bytes, the second's) is only a first
        // guess, and the buffer grows to the 5025 bytes.
        let whole = [&a[..], &b[..]].concat();
        assert_eq!(inflate_small(&two, 10_000).as_deref(), Some(&whole[..]));
        assert_eq!(
            inflate_small(&two, whole.len()).as_deref(),
            Some(&whole[..])
        );
        // One byte over the limit, a length over it in the trailer, a compressed size
        // over it: streamed.
        assert!(inflate_small(&two, whole.len() - 1).is_none());
        assert!(inflate_small(&ga, a.len() - 1).is_none());
        assert!(inflate_small(&gb, gb.len() - 1).is_none());
        // Errors are the stream decoder's to tell (each with the trailer's length left
        // small): corrupt deflate data, a checksum, bytes after the end, a cut.
        let mut bad = two.clone();
        bad[10] |= 0b110;
        assert!(inflate_small(&bad, 10_000).is_none());
        let mut bad = two.clone();
        bad[two.len() - 8] ^= 1;
        assert!(inflate_small(&bad, 10_000).is_none());
        let garbage = [&two[..], b"x\x05\0\0\0"].concat();
        assert!(inflate_small(&garbage, 10_000).is_none());
        let cut = [&ga[..], &gb[..10], &gb[gb.len() - 4..]].concat();
        assert!(inflate_small(&cut, 10_000).is_none());
        assert!(inflate_small(b"\x1f\x8b", 10_000).is_none());
    }

    #[test]
    fn inflate_buffers_are_kept_emptied_up_to_their_number() {
        let spares = Spares::new(2);
        let mut used = spares.take();
        assert!(used.is_empty() && used.capacity() >= GZ_INLINE_MAX);
        used.extend_from_slice(b"bytes of the last input");
        let at = used.as_ptr();
        spares.give(used);
        // The same buffer back, with nothing of the input before.
        let again = spares.take();
        assert_eq!((again.as_ptr(), again.len()), (at, 0));
        // Two kept at most; a small buffer (not one of ours) is not kept.
        for b in [
            again,
            spares.take(),
            spares.take(),
            Vec::with_capacity(1000),
        ] {
            spares.give(b);
        }
        assert_eq!(spares.buffers.lock().unwrap().len(), 2);
        // A buffer that held a larger input gives a smaller one's bytes alone.
        let big: Vec<u8> = (0..200_000u32).map(|i| (i % 13) as u8).collect();
        let first = inflate_small(&gzip(&big), GZ_INLINE_MAX).unwrap();
        assert!(*first == big);
        drop(first);
        assert_eq!(&*inflate_small(&gzip(b"[]"), GZ_INLINE_MAX).unwrap(), b"[]");
    }

    #[test]
    fn a_stream_ending_at_a_block_boundary_or_just_after_it_is_whole() {
        // The decoder fills a block, then learns from the next one whether more follows.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.gz");
        for len in [GZ_BLOCK - 1, GZ_BLOCK, GZ_BLOCK + 1, 2 * GZ_BLOCK] {
            let data: Vec<u8> = (0..len).map(|i| (i % 253) as u8).collect();
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(&data).unwrap();
            std::fs::write(&p, e.finish().unwrap()).unwrap();
            let (bytes, broken) = decoded(&p);
            assert!(bytes == data && !broken, "{len}: {} bytes", bytes.len());
        }
    }

    #[test]
    fn multi_member_gzip_is_read_whole() {
        let mut all = Vec::new();
        for part in [&b"[{\"a\":1},"[..], &b"{\"b\":2}]"[..]] {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(part).unwrap();
            all.extend(e.finish().unwrap());
        }
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json"); // no .gz suffix: detected by magic bytes
        std::fs::write(&p, &all).unwrap();
        assert_eq!(decoded(&p), (b"[{\"a\":1},{\"b\":2}]".to_vec(), false));
        // Cut off in the second member: the first member's bytes come, then an error.
        std::fs::write(&p, &all[..all.len() - 10]).unwrap();
        let (bytes, broken) = decoded(&p);
        assert!(bytes.starts_with(b"[{\"a\":1},"));
        assert!(broken);
    }

    #[cfg(unix)]
    #[test]
    fn fifo_named_on_the_command_line_does_not_block() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        // No writer: refused after the wait (the test would hang else).
        FIFO_WAIT_MS.store(200, std::sync::atomic::Ordering::Relaxed);
        let e = open(&InputPath::File(fifo.clone()), Reading::default())
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .ends_with("not a trace: a FIFO (named pipe) that nothing wrote to within 0.2 s"),
            "{e}"
        );
        // A writer is read: whichever of the two opens first (the writer's open blocks
        // until a reader has the FIFO open), within a wait long enough for a loaded machine.
        FIFO_WAIT_MS.store(20_000, std::sync::atomic::Ordering::Relaxed);
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, b"[]").unwrap())
        };
        let Source::Stream(mut blocks) =
            open(&InputPath::File(fifo.clone()), Reading::default()).unwrap()
        else {
            panic!("a FIFO is read as a stream")
        };
        use crate::input::BlockSource;
        let mut buf = Vec::new();
        while blocks.append_to(&mut buf).unwrap() {}
        writer.join().unwrap();
        assert_eq!(buf, b"[]");
        // Devices are refused by name, not read.
        let e = open(&InputPath::File("/dev/zero".into()), Reading::default())
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "/dev/zero: not a trace: a character device, not a regular file or a pipe"
        );
    }

    #[test]
    fn missing_file_is_io_error_naming_it() {
        let e = open(
            &InputPath::File("/nonexistent/x.json".into()),
            Reading::default(),
        )
        .err()
        .unwrap();
        assert!(
            e.to_string()
                .starts_with("cannot read /nonexistent/x.json:")
        );
    }
}

//! A gzip stream (RFC 1952) held in memory, decoded member after member (concatenated
//! members are one legal stream, as `gzip -d` reads them). The members' headers and
//! trailers are read here and the deflate data by flate2's [`flate2::Decompress`], so
//! that each way a stream can be bad is its own [`GzipError`] variant: a CRC-32 or length
//! that does not match the member's data (its events are all there, but may be wrong)
//! apart from a stream cut off or corrupt in the middle (the events after it are lost).

use std::io::Read;

/// Why a gzip stream could not be decoded to its end.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GzipError {
    /// A member does not start with a gzip header (`1f 8b 08`, no reserved flags): the
    /// first member, or bytes after the last one.
    #[error("invalid gzip header")]
    Header,
    /// The stream ends inside a member.
    #[error("incomplete gzip stream (cut off in a member's {0})")]
    CutOff(&'static str),
    /// The deflate data is corrupt.
    #[error("corrupt deflate stream")]
    Deflate(#[source] flate2::DecompressError),
    /// A member decoded to its end, but its CRC-32 or length (the trailer's two 32-bit
    /// words) does not match the data.
    #[error("corrupt gzip stream does not have a matching checksum")]
    Checksum,
}

impl GzipError {
    /// The gzip error an I/O error from [`GzipReader`] carries, if it is one.
    pub fn of(e: &std::io::Error) -> Option<&GzipError> {
        e.get_ref().and_then(|inner| inner.downcast_ref())
    }
}

impl From<GzipError> for std::io::Error {
    fn from(e: GzipError) -> std::io::Error {
        let kind = match e {
            GzipError::CutOff(_) => std::io::ErrorKind::UnexpectedEof,
            _ => std::io::ErrorKind::InvalidData,
        };
        std::io::Error::new(kind, e)
    }
}

/// Where the decoder is in the stream.
enum State {
    /// Before a member's header.
    Header,
    /// In a member's deflate data.
    Body,
    /// After a member's deflate data (checked once the data is handed out).
    Trailer,
    /// After the last member, or after an error (which ends the stream).
    Done,
}

/// A [`Read`] of the decoded bytes of the gzip stream `input`; its errors are
/// `GzipError`s (see `GzipError::of`), and the first one ends the stream.
pub struct GzipReader<'a> {
    input: &'a [u8],
    state: State,
    inflate: flate2::Decompress,
    crc: MemberCheck,
}

/// The CRC-32 (RFC 1952 §8) and the length mod 2³² of the bytes a member inflated to so
/// far, to check against its trailer. By libdeflate's `libdeflate_crc32`, which picks its
/// 512-bit carry-less multiply path at run time where the CPU has it; zlib-rs's CRC
/// (`flate2::Crc` on that backend) has one only in a build for such a CPU, so a portable
/// build would run its 128-bit path.
#[derive(Clone, Copy, Debug, Default)]
struct MemberCheck {
    crc: u32,
    len: u32,
}

impl MemberCheck {
    /// Adds the next inflated bytes.
    fn update(&mut self, bytes: &[u8]) {
        // SAFETY: libdeflate reads the `bytes.len()` bytes at `bytes.as_ptr()` (a valid
        // pointer also for an empty slice) and nothing else.
        self.crc = unsafe {
            libdeflate_sys::libdeflate_crc32(self.crc, bytes.as_ptr().cast(), bytes.len())
        };
        self.len = self.len.wrapping_add(bytes.len() as u32);
    }
}

/// Header flag bits (RFC 1952 §2.3.1).
const FHCRC: u8 = 2;
const FEXTRA: u8 = 4;
const FNAME: u8 = 8;
const FCOMMENT: u8 = 16;
const RESERVED: u8 = 0xe0;

impl<'a> GzipReader<'a> {
    /// A reader of the stream `input`.
    pub fn new(input: &'a [u8]) -> GzipReader<'a> {
        GzipReader {
            input,
            state: State::Header,
            inflate: flate2::Decompress::new(false),
            crc: MemberCheck::default(),
        }
    }

    /// The compressed bytes not yet consumed.
    pub(crate) fn remaining(&self) -> usize {
        self.input.len()
    }

    /// Skips one member header; `input` is left after it.
    fn header(&mut self) -> Result<(), GzipError> {
        let b = self.input;
        if b.len() >= 3
            && (b[..3] != [0x1f, 0x8b, 8] || b.get(3).is_some_and(|f| f & RESERVED != 0))
        {
            return Err(GzipError::Header);
        }
        let cut = GzipError::CutOff("header");
        let flags = *b.get(3).ok_or(cut)?;
        let mut at = 10;
        if flags & FEXTRA != 0 {
            let len = b.get(at..at + 2).ok_or(GzipError::CutOff("header"))?;
            at += 2 + usize::from(u16::from_le_bytes([len[0], len[1]]));
        }
        for flag in [FNAME, FCOMMENT] {
            if flags & flag != 0 {
                let text = b.get(at..).ok_or(GzipError::CutOff("header"))?;
                let nul = memchr::memchr(0, text).ok_or(GzipError::CutOff("header"))?;
                at += nul + 1;
            }
        }
        if flags & FHCRC != 0 {
            at += 2;
        }
        if at > b.len() {
            return Err(GzipError::CutOff("header"));
        }
        self.input = &b[at..];
        self.inflate.reset(false);
        self.crc = MemberCheck::default();
        Ok(())
    }

    /// Checks one member's trailer against its data; `input` is left after it.
    fn trailer(&mut self) -> Result<(), GzipError> {
        let t = self.input.get(..8).ok_or(GzipError::CutOff("trailer"))?;
        let crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
        let len = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
        self.input = &self.input[8..];
        if crc != self.crc.crc || len != self.crc.len {
            return Err(GzipError::Checksum);
        }
        Ok(())
    }

    /// Decodes the next bytes into the free space of `out` ([`Out`]); 0 at the end of the
    /// stream.
    fn read_some<O: Out + ?Sized>(&mut self, out: &mut O) -> Result<usize, GzipError> {
        loop {
            match self.state {
                State::Done => return Ok(0),
                State::Header => {
                    self.header()?;
                    self.state = State::Body;
                }
                State::Trailer => {
                    self.trailer()?;
                    self.state = if self.input.is_empty() {
                        State::Done
                    } else {
                        State::Header
                    };
                }
                State::Body => {
                    let (before_in, before_out) =
                        (self.inflate.total_in(), self.inflate.total_out());
                    let status = out
                        .inflate(&mut self.inflate, self.input, &mut self.crc)
                        .map_err(GzipError::Deflate)?;
                    let consumed = (self.inflate.total_in() - before_in) as usize;
                    let produced = (self.inflate.total_out() - before_out) as usize;
                    self.input = &self.input[consumed..];
                    if status == flate2::Status::StreamEnd {
                        self.state = State::Trailer;
                    } else if produced == 0 && consumed == 0 {
                        return Err(GzipError::CutOff("deflate data"));
                    }
                    if produced > 0 {
                        return Ok(produced);
                    }
                }
            }
        }
    }

    /// Decodes the next bytes onto the end of `out`, into its spare capacity (which is
    /// not zeroed first); `Ok(0)` at the end of the stream. Errors as [`Read::read`].
    pub(crate) fn read_spare(&mut self, out: &mut Vec<u8>) -> std::io::Result<usize> {
        if out.len() == out.capacity() {
            return Ok(0);
        }
        self.read_io(out)
    }

    /// [`Self::read_some`] as an I/O read: an error ends the stream, so it is told once.
    fn read_io<O: Out + ?Sized>(&mut self, out: &mut O) -> std::io::Result<usize> {
        self.read_some(out).map_err(|e| {
            self.state = State::Done;
            e.into()
        })
    }
}

/// Where [`GzipReader`] puts decoded bytes: a slice ([`Read`]), or the spare capacity of
/// a vector, whose length grows by the bytes written.
trait Out {
    /// Inflates from `input` into the free space, adding the bytes written to `crc`.
    fn inflate(
        &mut self,
        d: &mut flate2::Decompress,
        input: &[u8],
        crc: &mut MemberCheck,
    ) -> Result<flate2::Status, flate2::DecompressError>;
}

impl Out for [u8] {
    fn inflate(
        &mut self,
        d: &mut flate2::Decompress,
        input: &[u8],
        crc: &mut MemberCheck,
    ) -> Result<flate2::Status, flate2::DecompressError> {
        let before = d.total_out();
        let status = d.decompress(input, self, flate2::FlushDecompress::None)?;
        crc.update(&self[..(d.total_out() - before) as usize]);
        Ok(status)
    }
}

impl Out for Vec<u8> {
    fn inflate(
        &mut self,
        d: &mut flate2::Decompress,
        input: &[u8],
        crc: &mut MemberCheck,
    ) -> Result<flate2::Status, flate2::DecompressError> {
        let before = self.len();
        let status = d.decompress_vec(input, self, flate2::FlushDecompress::None)?;
        crc.update(&self[before..]);
        Ok(status)
    }
}

impl Read for GzipReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        self.read_io(out)
    }
}

/// The inflated bytes of `compressed` when it is exactly one gzip member of `size`
/// inflated bytes whose CRC-32 and length match (libdeflate, which inflates a whole
/// member at once faster than a stream decoder); `None` for anything else
/// (several members, bytes after the member, another size, damage), which is for
/// [`GzipReader`] to read and name.
#[cfg(test)]
fn one_member_whole(compressed: &[u8], size: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    one_member_into(compressed, size, &mut out).then_some(out)
}

/// Inflates `compressed` into `out` (cleared first; its capacity reused) when it is
/// exactly one gzip member of `size` inflated bytes whose CRC-32 and length match
/// (libdeflate): true when `out` then holds the inflated bytes, false (with `out` empty)
/// for anything else (several members, bytes after the member, another size, damage).
pub fn one_member_into(compressed: &[u8], size: usize, out: &mut Vec<u8>) -> bool {
    use libdeflate_sys::*;
    out.clear();
    out.reserve(size);
    let (mut read, mut written) = (0usize, 0usize);
    // SAFETY: the decompressor is checked not null, used once and freed; libdeflate reads
    // at most `compressed.len()` bytes of `compressed` and writes at most `size` bytes to
    // `out`'s spare capacity (which has `size`), and on success it has written exactly
    // `written` of them, which then become the vector's length.
    unsafe {
        let d = libdeflate_alloc_decompressor();
        if d.is_null() {
            return false;
        }
        let result = libdeflate_gzip_decompress_ex(
            d,
            compressed.as_ptr().cast(),
            compressed.len(),
            out.as_mut_ptr().cast(),
            size,
            &mut read,
            &mut written,
        );
        libdeflate_free_decompressor(d);
        // The whole input is the member: bytes after it (another member, padding) are
        // the reader's to read or warn about.
        if result != libdeflate_result_LIBDEFLATE_SUCCESS
            || read != compressed.len()
            || written != size
        {
            return false;
        }
        out.set_len(written);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn decode(gz: &[u8]) -> (Vec<u8>, Option<std::io::Error>) {
        let mut r = GzipReader::new(gz);
        let mut out = Vec::new();
        let mut block = [0u8; 7];
        loop {
            match r.read(&mut block) {
                Ok(0) => return (out, None),
                Ok(n) => out.extend_from_slice(&block[..n]),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    fn kind(e: &Option<std::io::Error>) -> Option<&GzipError> {
        e.as_ref().and_then(GzipError::of)
    }

    #[test]
    fn member_check_is_the_crc_32_of_rfc_1952_in_any_pieces() {
        // The CRC-32 check value of "123456789" (the catalogue value of CRC-32/ISO-HDLC,
        // the CRC of RFC 1952 §8).
        let mut c = MemberCheck::default();
        c.update(b"123456789");
        assert_eq!((c.crc, c.len), (0xCBF4_3926, 9));
        // Bytes given in pieces of any sizes give the CRC of them all, as flate2's does.
        let data: Vec<u8> = (0..100_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let mut whole = flate2::Crc::new();
        whole.update(&data);
        for piece in [1, 7, 64, 1000, 65_537] {
            let mut c = MemberCheck::default();
            data.chunks(piece).for_each(|p| c.update(p));
            c.update(&[]);
            assert_eq!(
                (c.crc, c.len),
                (whole.sum(), whole.amount()),
                "pieces of {piece}"
            );
        }
    }

    #[test]
    fn one_member_is_inflated_whole_and_anything_else_left_to_the_reader() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let gz = gzip(&data);
        assert!(one_member_whole(&gz, data.len()) == Some(data.clone()));
        assert_eq!(one_member_whole(&gzip(b""), 0), Some(Vec::new()));
        // Another size than the member's: too small, or larger than it inflates to.
        assert!(one_member_whole(&gz, data.len() - 1).is_none());
        assert!(one_member_whole(&gz, data.len() + 1).is_none());
        // Two members (`cat a.gz b.gz`), bytes after the member, a cut member, a wrong
        // CRC-32: the streaming reader's to read and name.
        let mut two = gzip(b"hello, ");
        two.extend(gzip(b"world"));
        assert_eq!(one_member_whole(&two, 12), None);
        assert_eq!(decode(&two).0, b"hello, world");
        let mut padded = gz.clone();
        padded.extend([0u8; 4]);
        assert!(one_member_whole(&padded, data.len()).is_none());
        assert!(one_member_whole(&gz[..gz.len() - 9], data.len()).is_none());
        let mut bad_crc = gz.clone();
        let at = bad_crc.len() - 8;
        bad_crc[at] ^= 1;
        assert!(one_member_whole(&bad_crc, data.len()).is_none());
        assert!(matches!(
            kind(&decode(&bad_crc).1),
            Some(GzipError::Checksum)
        ));
    }

    #[test]
    fn members_decode_in_turn_with_names_and_extra_fields() {
        let mut two = gzip(b"hello, ");
        two.extend(gzip(b"world"));
        assert_eq!(decode(&two).0, b"hello, world");
        assert!(decode(&two).1.is_none());
        // FEXTRA (2-byte length, then the field), FNAME and FCOMMENT (NUL-terminated),
        // FHCRC (2 bytes), hand-built around one member's deflate data and trailer.
        let plain = gzip(b"abc");
        let mut h = vec![
            0x1f,
            0x8b,
            8,
            FEXTRA | FNAME | FCOMMENT | FHCRC,
            0,
            0,
            0,
            0,
            0,
            3,
        ];
        h.extend([3, 0, b'x', b'y', b'z']);
        h.extend(b"name\0comment\0");
        h.extend([0xaa, 0xbb]);
        h.extend(&plain[10..]);
        let (out, e) = decode(&h);
        assert_eq!(out, b"abc");
        assert!(e.is_none(), "{e:?}");
    }

    #[test]
    fn spare_capacity_is_filled_and_nothing_before_it_is_touched() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut two = gzip(&data[..100_000]);
        two.extend(gzip(&data[100_000..]));
        let mut r = GzipReader::new(&two);
        let (mut out, mut calls) = (Vec::new(), 0);
        loop {
            let mut v = Vec::with_capacity(4 + 65_536);
            v.extend_from_slice(b"room");
            while r.read_spare(&mut v).unwrap() > 0 {
                calls += 1;
            }
            assert_eq!(&v[..4], b"room");
            if v.len() == 4 {
                break;
            }
            out.extend_from_slice(&v[4..]);
        }
        assert_eq!(out, data);
        assert!(calls >= 5, "{calls}");
        // A full vector takes nothing; a corrupt stream errs once, then ends.
        let mut full = Vec::with_capacity(1);
        full.push(0);
        assert_eq!(GzipReader::new(&two).read_spare(&mut full).unwrap(), 0);
        let mut bad = two.clone();
        bad[10] |= 0b110;
        let mut r = GzipReader::new(&bad);
        let mut v = Vec::with_capacity(1000);
        let e = r.read_spare(&mut v).unwrap_err();
        assert!(
            matches!(GzipError::of(&e), Some(GzipError::Deflate(_))),
            "{e:?}"
        );
        assert_eq!(r.read_spare(&mut v).unwrap(), 0);
    }

    #[test]
    fn a_bad_checksum_is_told_from_a_cut_and_from_corrupt_data() {
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let gz = gzip(&data);
        // The CRC's first byte, then the length's: all data decoded, then the mismatch.
        for at in [gz.len() - 8, gz.len() - 4] {
            let mut bad = gz.clone();
            bad[at] ^= 0xff;
            let (out, e) = decode(&bad);
            assert!(out == data, "{} of {} bytes", out.len(), data.len());
            assert!(matches!(kind(&e), Some(GzipError::Checksum)), "{e:?}");
        }
        let (out, e) = decode(&gz[..gz.len() / 2]);
        assert!(!out.is_empty() && out.len() < data.len());
        assert!(
            matches!(kind(&e), Some(GzipError::CutOff("deflate data"))),
            "{e:?}"
        );
        assert_eq!(e.unwrap().kind(), std::io::ErrorKind::UnexpectedEof);
        let (out, e) = decode(&gz[..gz.len() - 3]);
        assert!(out == data, "{} of {} bytes", out.len(), data.len());
        assert!(
            matches!(kind(&e), Some(GzipError::CutOff("trailer"))),
            "{e:?}"
        );
        assert!(matches!(
            kind(&decode(&gz[..5]).1),
            Some(GzipError::CutOff("header"))
        ));
        // Bytes after the last member that are not a member.
        let mut tail = gz.clone();
        tail.extend(b"garbage");
        let (out, e) = decode(&tail);
        assert!(out == data, "{} of {} bytes", out.len(), data.len());
        assert!(matches!(kind(&e), Some(GzipError::Header)), "{e:?}");
        // A block type of 3 (reserved) at the start of the deflate data.
        let mut bad = gz.clone();
        bad[10] |= 0b110;
        assert!(matches!(kind(&decode(&bad).1), Some(GzipError::Deflate(_))));
        assert!(matches!(
            kind(&decode(b"\x1f\x8b\x07\x00").1),
            Some(GzipError::Header)
        ));
    }
}

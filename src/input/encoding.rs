//! Text encodings of an input: UTF-8 (JSON's, RFC 8259 §8.1), or UTF-16, which Windows
//! PowerShell's `>` and `Out-File` write (little-endian with a byte-order mark by default),
//! transcoded to UTF-8 here so that every later stage reads UTF-8. UTF-32 is only named.
//!
//! Detection (RFC 4627 §3): a byte-order mark, else the pattern of NUL bytes in the first
//! bytes, as JSON text starts with ASCII (`[`, `{`, whitespace): `x 0 x 0` is UTF-16 LE,
//! `0 x 0 x` UTF-16 BE, `x 0 0 0` UTF-32 LE, `0 0 0 x` UTF-32 BE.

use super::BlockSource;

/// An input's text encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// UTF-8 (or anything that is not recognisably another encoding).
    Utf8,
    /// UTF-16 little-endian; `bom`: the first two bytes are its byte-order mark.
    Utf16Le {
        /// Starts with `FF FE`.
        bom: bool,
    },
    /// UTF-16 big-endian; `bom`: starts with `FE FF`.
    Utf16Be {
        /// Starts with `FE FF`.
        bom: bool,
    },
    /// UTF-32 (either order): not read, named in the error.
    Utf32,
}

/// Bytes [`sniff`] looks at: enough to tell the encodings apart.
const SNIFF: usize = 64;

/// The encoding of text starting with `b` (at least the first [`SNIFF`] bytes of the
/// input, or all of it when shorter).
pub(crate) fn sniff(b: &[u8]) -> Encoding {
    if b.starts_with(&[0xFF, 0xFE, 0, 0]) || b.starts_with(&[0, 0, 0xFE, 0xFF]) {
        return Encoding::Utf32;
    }
    if b.starts_with(&[0xFF, 0xFE]) {
        return Encoding::Utf16Le { bom: true };
    }
    if b.starts_with(&[0xFE, 0xFF]) {
        return Encoding::Utf16Be { bom: true };
    }
    let head = &b[..b.len().min(SNIFF) & !3];
    if head.len() < 4 {
        return Encoding::Utf8;
    }
    // The first character is ASCII (JSON's first byte), and so are most of the others
    // (3 in 4: keys, digits and punctuation), whatever text the strings hold.
    let mostly = |size: usize, ascii: &dyn Fn(&[u8]) -> bool| {
        let units = head.chunks_exact(size);
        let n = units.len();
        ascii(&head[..size]) && units.filter(|u| ascii(u)).count() * 4 >= n * 3
    };
    if mostly(4, &|q| q[0] != 0 && q[1] == 0 && q[2] == 0 && q[3] == 0)
        || mostly(4, &|q| q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] != 0)
    {
        return Encoding::Utf32;
    }
    if mostly(2, &|p| p[0] != 0 && p[1] == 0) {
        return Encoding::Utf16Le { bom: false };
    }
    if mostly(2, &|p| p[0] == 0 && p[1] != 0) {
        return Encoding::Utf16Be { bom: false };
    }
    Encoding::Utf8
}

/// Transcodes UTF-16 to UTF-8, a block at a time: an odd byte or the first half of a
/// surrogate pair at a block's end waits for the next. Unpaired surrogates become U+FFFD.
#[derive(Debug)]
pub(crate) struct Utf16Decoder {
    little_endian: bool,
    /// Bytes of the previous block not yet decoded (at most 3).
    held: Vec<u8>,
    /// The byte-order mark is still to be dropped.
    bom: bool,
}

impl Utf16Decoder {
    /// A decoder for `encoding` (UTF-16 LE or BE); `None` for the others.
    pub(crate) fn new(encoding: Encoding) -> Option<Utf16Decoder> {
        let (little_endian, bom) = match encoding {
            Encoding::Utf16Le { bom } => (true, bom),
            Encoding::Utf16Be { bom } => (false, bom),
            _ => return None,
        };
        Some(Utf16Decoder {
            little_endian,
            held: Vec::new(),
            bom,
        })
    }

    /// Decodes `block` (the next bytes of the input) onto `out`; `last`: no more follow
    /// (held bytes are then decoded as they are).
    pub(crate) fn decode(&mut self, block: &[u8], last: bool, out: &mut Vec<u8>) {
        let mut bytes = std::mem::take(&mut self.held);
        bytes.extend_from_slice(block);
        let mut from = 0;
        if self.bom && bytes.len() >= 2 {
            from = 2;
            self.bom = false;
        }
        let unit = |k: usize| {
            let p = [bytes[k], bytes[k + 1]];
            if self.little_endian {
                u16::from_le_bytes(p)
            } else {
                u16::from_be_bytes(p)
            }
        };
        let mut end = from + (bytes.len() - from) / 2 * 2;
        if !last && end >= from + 2 && (0xD800..0xDC00).contains(&unit(end - 2)) {
            end -= 2; // the first half of a pair: wait for the second
        }
        out.reserve(end - from);
        let units = (from..end).step_by(2).map(unit);
        for c in char::decode_utf16(units) {
            let mut tmp = [0u8; 4];
            out.extend_from_slice(
                c.unwrap_or(char::REPLACEMENT_CHARACTER)
                    .encode_utf8(&mut tmp)
                    .as_bytes(),
            );
        }
        if last {
            if end < bytes.len() {
                out.extend_from_slice("\u{FFFD}".as_bytes());
            }
        } else {
            self.held = bytes[end..].to_vec();
        }
    }
}

/// The whole of UTF-16 `b` as UTF-8.
pub(crate) fn transcode(b: &[u8], encoding: Encoding) -> Option<Vec<u8>> {
    let mut d = Utf16Decoder::new(encoding)?;
    let mut out = Vec::with_capacity(b.len() / 2);
    d.decode(b, true, &mut out);
    Some(out)
}

/// A [`BlockSource`] that hands on UTF-8: UTF-16 input (told by its first bytes) is
/// transcoded block by block, anything else passed through as it is.
pub(crate) struct Decoded<S> {
    inner: S,
    /// Decided once the first [`SNIFF`] bytes (or the whole input) are seen.
    decoder: Option<Option<Utf16Decoder>>,
    /// The first bytes, held until the encoding is decided.
    head: Vec<u8>,
}

impl<S: BlockSource> Decoded<S> {
    /// Wraps `inner`.
    pub(crate) fn new(inner: S) -> Self {
        Decoded {
            inner,
            decoder: None,
            head: Vec::new(),
        }
    }
}

impl<S> Decoded<S> {
    /// True when the input is UTF-16 (and was transcoded).
    pub(crate) fn transcoded(&self) -> bool {
        matches!(self.decoder, Some(Some(_)))
    }
}

impl<S: BlockSource> BlockSource for Decoded<S> {
    fn append_to(&mut self, buf: &mut Vec<u8>) -> std::io::Result<bool> {
        loop {
            match &mut self.decoder {
                None => {
                    let more = self.inner.append_to(&mut self.head)?;
                    if more && self.head.len() < SNIFF {
                        continue;
                    }
                    let mut d = Utf16Decoder::new(sniff(&self.head));
                    let head = std::mem::take(&mut self.head);
                    match &mut d {
                        Some(d) => d.decode(&head, !more, buf),
                        // The first block, most often: handed on, not copied.
                        None if buf.is_empty() => *buf = head,
                        None => buf.extend_from_slice(&head),
                    }
                    self.decoder = Some(d);
                    return Ok(more);
                }
                Some(None) => return self.inner.append_to(buf),
                Some(Some(d)) => {
                    let mut block = Vec::new();
                    let more = self.inner.append_to(&mut block)?;
                    d.decode(&block, !more, buf);
                    return Ok(more);
                }
            }
        }
    }

    /// UTF-8 input passes the inner source's blocks on as they are (with their room);
    /// until the encoding is known, and for UTF-16, blocks are appended as above.
    fn next_block(&mut self) -> std::io::Result<Option<(Vec<u8>, usize)>> {
        if matches!(self.decoder, Some(None)) {
            return self.inner.next_block();
        }
        let mut v = Vec::new();
        let more = self.append_to(&mut v)?;
        Ok((more || !v.is_empty()).then_some((v, 0)))
    }

    fn recycle(&mut self, buffer: Vec<u8>) {
        self.inner.recycle(buffer);
    }

    fn will_hold(&mut self, blocks: usize) {
        self.inner.will_hold(blocks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(s: &str, le: bool, bom: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let units = bom.then_some(0xFEFF).into_iter().chain(s.encode_utf16());
        for u in units {
            out.extend_from_slice(&if le { u.to_le_bytes() } else { u.to_be_bytes() });
        }
        out
    }

    #[test]
    fn sniffs_boms_and_nul_patterns() {
        let text = r#"{"traceEvents":[{"ph":"X","name":"caf\u00e9"}]}"#;
        assert_eq!(sniff(text.as_bytes()), Encoding::Utf8);
        assert_eq!(
            sniff(&utf16(text, true, true)),
            Encoding::Utf16Le { bom: true }
        );
        assert_eq!(
            sniff(&utf16(text, true, false)),
            Encoding::Utf16Le { bom: false }
        );
        assert_eq!(
            sniff(&utf16(text, false, false)),
            Encoding::Utf16Be { bom: false }
        );
        assert_eq!(
            sniff(&utf16(text, false, true)),
            Encoding::Utf16Be { bom: true }
        );
        assert_eq!(sniff(b"[\0\0\0{\0\0\0"), Encoding::Utf32);
        assert_eq!(sniff(b"\0\0\0[\0\0\0{"), Encoding::Utf32);
        assert_eq!(sniff(b"\xFF\xFE\0\0[\0\0\0"), Encoding::Utf32);
        assert_eq!(sniff(b"[]"), Encoding::Utf8);
    }

    #[test]
    fn transcodes_whole_and_in_blocks_of_every_size() {
        // A surrogate pair (U+1F600) and an accented letter, split at every byte.
        let text = "[{\"name\":\"caf\u{e9} \u{1F600}\",\"ph\":\"X\"}]";
        for le in [true, false] {
            for bom in [true, false] {
                let b = utf16(text, le, bom);
                let enc = sniff(&b);
                assert_eq!(transcode(&b, enc).unwrap(), text.as_bytes());
                for size in 1..8 {
                    let blocks: Vec<std::io::Result<Vec<u8>>> =
                        b.chunks(size).map(|c| Ok(c.to_vec())).collect();
                    let mut src = Decoded::new(blocks.into_iter());
                    let mut out = Vec::new();
                    while src.append_to(&mut out).unwrap() {}
                    assert_eq!(String::from_utf8(out).unwrap(), text, "{size} {le} {bom}");
                }
            }
        }
        // UTF-8 passes through.
        let blocks = vec![Ok(b"[{}".to_vec()), Ok(b"]".to_vec())];
        let mut src = Decoded::new(blocks.into_iter());
        let mut out = Vec::new();
        while src.append_to(&mut out).unwrap() {}
        assert_eq!(out, b"[{}]");
        // A lone surrogate is U+FFFD.
        let b = [0xFF, 0xFE, b'[', 0, 0x00, 0xD8, b']', 0];
        assert_eq!(transcode(&b, sniff(&b)).unwrap(), "[\u{FFFD}]".as_bytes());
    }
}

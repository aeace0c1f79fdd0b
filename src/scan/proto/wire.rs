//! The protobuf wire format, read by hand: varints and the fields of one message, every
//! length checked against the bytes at hand (protobuf's encoding guide; docs/METHOD.md
//! §2.7). Nothing here allocates.

/// A field's value as the wire gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1 (little-endian 64 bits: `fixed64`, `double`).
    Fixed64(u64),
    /// Wire type 2: a string, bytes, a message or a packed list.
    Bytes(&'a [u8]),
    /// Wire type 5 (`fixed32`, `float`).
    Fixed32(u32),
}

impl<'a> Value<'a> {
    /// The bytes of a length-delimited field, else `None`.
    #[inline]
    pub(crate) fn bytes(self) -> Option<&'a [u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

/// Why a message could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WireError {
    /// The bytes end inside a field.
    Cut,
    /// A tag with field number 0, a wire type protobuf does not use any more (groups: 3,
    /// 4) or does not have (6, 7), or a varint of over 10 bytes.
    Malformed,
}

/// Reads the varint at `b[*i]`, moving `*i` past it.
#[inline(always)]
pub(crate) fn varint(b: &[u8], i: &mut usize) -> Result<u64, WireError> {
    // One byte: most tags and small values.
    match b.get(*i) {
        Some(&x) if x < 0x80 => {
            *i += 1;
            return Ok(x as u64);
        }
        Some(_) => {}
        None => return Err(WireError::Cut),
    }
    let mut v = 0u64;
    for k in 0..10 {
        let Some(&x) = b.get(*i + k) else {
            return Err(WireError::Cut);
        };
        // The tenth byte holds only the top bit of 64.
        if k == 9 && x > 1 {
            return Err(WireError::Malformed);
        }
        v |= ((x & 0x7f) as u64) << (7 * k);
        if x < 0x80 {
            *i += k + 1;
            return Ok(v);
        }
    }
    Err(WireError::Malformed)
}

/// The fields of one message, in the order they are written. Stops (with
/// [`Fields::error`] set) at the first malformed or cut field.
pub(crate) struct Fields<'a> {
    b: &'a [u8],
    i: usize,
    /// Why the walk stopped early, if it did.
    pub(crate) error: Option<WireError>,
}

impl<'a> Fields<'a> {
    /// The fields of the message `b`.
    #[inline]
    pub(crate) fn of(b: &'a [u8]) -> Self {
        Fields {
            b,
            i: 0,
            error: None,
        }
    }

    /// Reads one field: `(field number, value)`.
    #[inline(always)]
    fn read(&mut self) -> Result<(u32, Value<'a>), WireError> {
        let tag = varint(self.b, &mut self.i)?;
        let number = tag >> 3;
        if number == 0 || number > u32::MAX as u64 {
            return Err(WireError::Malformed);
        }
        let value = match tag & 7 {
            0 => Value::Varint(varint(self.b, &mut self.i)?),
            1 => {
                let raw = self.b.get(self.i..self.i + 8).ok_or(WireError::Cut)?;
                self.i += 8;
                Value::Fixed64(u64::from_le_bytes(raw.try_into().unwrap_or_default()))
            }
            2 => {
                let len = varint(self.b, &mut self.i)?;
                let left = (self.b.len() - self.i) as u64;
                if len > left {
                    return Err(WireError::Cut);
                }
                let v = &self.b[self.i..self.i + len as usize];
                self.i += len as usize;
                Value::Bytes(v)
            }
            5 => {
                let raw = self.b.get(self.i..self.i + 4).ok_or(WireError::Cut)?;
                self.i += 4;
                Value::Fixed32(u32::from_le_bytes(raw.try_into().unwrap_or_default()))
            }
            _ => return Err(WireError::Malformed),
        };
        Ok((number as u32, value))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = (u32, Value<'a>);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.i >= self.b.len() || self.error.is_some() {
            return None;
        }
        match self.read() {
            Ok(f) => Some(f),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }
}

/// True when `b` reads as one well-formed message: every field's tag, wire type and
/// length fit (the contents of length-delimited fields are not looked into).
pub(crate) fn well_formed(b: &[u8]) -> bool {
    let mut f = Fields::of(b);
    f.by_ref().for_each(drop);
    f.error.is_none()
}

/// [`well_formed`], reading at most `fields` fields: `None` when that is not enough to
/// tell. Also returns the fields read (the work done: a field is read in constant time,
/// the contents of length-delimited ones skipped).
pub(crate) fn well_formed_within(b: &[u8], fields: u64) -> (Option<bool>, u64) {
    let mut f = Fields::of(b);
    let mut read = 0;
    loop {
        if f.i >= b.len() {
            return (Some(true), read);
        }
        if read == fields {
            return (None, read);
        }
        if f.next().is_none() {
            return (Some(false), read);
        }
        read += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_as_the_encoding_guide_gives_them() {
        // 150 is `96 01`; 1 is `01`; u64::MAX takes ten bytes, the last `01`.
        let mut i = 0;
        assert_eq!(varint(&[0x96, 0x01], &mut i), Ok(150));
        assert_eq!(i, 2);
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        let mut i = 0;
        assert_eq!(varint(&max, &mut i), Ok(u64::MAX));
        // An eleventh byte, or a tenth beyond 64 bits, is no varint.
        let mut long = max;
        long[9] = 0x02;
        assert_eq!(varint(&long, &mut 0), Err(WireError::Malformed));
        assert_eq!(varint(&[0x96], &mut 0), Err(WireError::Cut));
    }

    #[test]
    fn fields_with_every_wire_type_and_lengths_checked() {
        // 1: varint 150; 2: "testing"; 3: fixed64 1; 4: fixed32 2.
        let mut msg = vec![0x08, 0x96, 0x01, 0x12, 0x07];
        msg.extend_from_slice(b"testing");
        msg.extend_from_slice(&[0x19, 1, 0, 0, 0, 0, 0, 0, 0, 0x25, 2, 0, 0, 0]);
        let got: Vec<_> = Fields::of(&msg).collect();
        assert_eq!(
            got,
            [
                (1, Value::Varint(150)),
                (2, Value::Bytes(b"testing")),
                (3, Value::Fixed64(1)),
                (4, Value::Fixed32(2)),
            ]
        );
        assert!(well_formed(&msg));
        // A length past the end is cut; a group (wire type 3) is malformed.
        let mut f = Fields::of(&[0x12, 0x08, b'a']);
        assert_eq!(f.next(), None);
        assert_eq!(f.error, Some(WireError::Cut));
        assert!(!well_formed(&[0x0b]));
        // Field number 0 is no field.
        assert!(!well_formed(&[0x00, 0x01]));
    }
}

//! `trace_id`: a name for an input's content that is the same on every machine and in
//! every run, so that the reports of shards written by many workers combine without
//! renumbering, and two copies of one trace in different folders are known as one.
//!
//! Reading a whole multi-GB trace only to name it would double the cost of a run, so the
//! id covers the size and the first and last MiB of the bytes as stored (compressed for
//! `.gz`): SHA-256 of `size` (8 bytes, little-endian) ‖ bytes `[0, min(size, 1 MiB))` ‖
//! bytes `[max(1 MiB, size − 1 MiB), size)`, its first 16 bytes as 32 lowercase hex
//! digits. Any tool can compute the same (`docs/SCALE-OUT.md` has it in 8 lines of
//! Python). Two traces of one size that differ only in the middle would share an id;
//! Chrome traces carry timestamps and ids throughout, their ends included.

use sha2::{Digest, Sha256};

/// The span hashed at each end of the input, bytes.
pub(crate) const EDGE: usize = 1 << 20;

/// The `trace_id` of an input whose stored bytes are `bytes` (a read-only map: only the
/// first and last [`EDGE`] bytes are touched).
pub(crate) fn trace_id(bytes: &[u8]) -> String {
    let size = bytes.len();
    let head = &bytes[..size.min(EDGE)];
    let tail = &bytes[size.saturating_sub(EDGE).max(head.len())..];
    let mut h = Sha256::new();
    h.update((size as u64).to_le_bytes());
    h.update(head);
    h.update(tail);
    let digest = h.finalize();
    let mut s = String::with_capacity(32);
    for b in &digest[..16] {
        use std::fmt::Write;
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_inputs_hash_size_then_all_bytes() {
        // SHA-256 of 8 zero bytes (size 0), as `python3 -c 'import hashlib;
        // print(hashlib.sha256(bytes(8)).hexdigest()[:32])'` prints it.
        assert_eq!(trace_id(b""), "af5570f5a1810b7af78caf4bc70a660f");
        // Size 3 (little-endian) then "abc": printed by
        // `hashlib.sha256((3).to_bytes(8, "little") + b"abc").hexdigest()[:32]`.
        assert_eq!(trace_id(b"abc"), "ce91dc5eec0139adf091900d225971d6");
    }

    #[test]
    fn the_middle_of_a_large_input_is_not_read_but_its_ends_are() {
        let mut a = vec![7u8; 3 * EDGE];
        let id = trace_id(&a);
        a[EDGE + 10] = 0; // inside the unhashed middle
        assert_eq!(trace_id(&a), id);
        a[3 * EDGE - 1] = 0; // the last byte
        assert_ne!(trace_id(&a), id);
        // Between 1 and 2 MiB the two spans meet without overlapping: every byte counts once.
        let b = vec![1u8; EDGE + 5];
        let mut c = b.clone();
        c[EDGE + 4] = 2;
        assert_ne!(trace_id(&b), trace_id(&c));
    }
}

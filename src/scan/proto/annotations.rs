//! A track event's debug annotations as the JSON `args` object a JSON trace has for the
//! same event (`DebugAnnotation` in Perfetto's `track_event/debug_annotation.proto`; the
//! JSON form as Perfetto's JSON exporter writes it, docs/METHOD.md §2.7): typed values,
//! dictionaries (`dict_entries`, or the older `nested_value`), arrays, and
//! `legacy_json_value`, which is already JSON (Chrome's `TracedValue`s, such as a
//! `ProfileChunk`'s `data`) and is copied when it is one well-formed JSON value.

use super::wire::{Fields, Value};
use crate::json::{skip_value, skip_ws};

/// Nesting past which an annotation is written as `null` (a hostile file cannot make
/// the writer recurse without end).
const MAX_DEPTH: usize = 64;

/// Bytes of interned text (names and string values) one track event's args may copy.
/// An annotation names an interned string by a varint of a byte or two, so without a
/// bound 20,000 annotations on a 1 MiB string would write 20 GB of args from a 1 MB
/// file; with it an event's args stay within six times its own bytes (escapes) plus this.
/// The same 1 MiB as the JSON path's longest string ([`crate::scan::args::LONG_STRING`]).
pub(crate) const INTERNED_PER_EVENT: usize = crate::scan::args::LONG_STRING;

/// The [`crate::vocab::Diagnostics`] kind counting interned strings cut by the budget.
pub(crate) const INTERNED_CUT: &str = "interned strings in track event args cut (an event's args copy at most 1 MiB of interned text)";

/// What is left of an event's budget of interned text, and the strings it cut.
#[derive(Debug)]
pub(crate) struct Budget {
    /// Bytes of interned text the event's args may still copy.
    pub left: usize,
    /// Interned strings cut (or left empty) so far.
    pub cut: u64,
}

impl Budget {
    /// A budget of `left` bytes.
    pub(crate) fn new(left: usize) -> Self {
        Budget { left, cut: 0 }
    }

    /// `s` as far as the budget allows (at a UTF-8 character boundary), the budget spent.
    fn take<'s>(&mut self, s: &'s [u8]) -> &'s [u8] {
        if s.len() <= self.left {
            self.left -= s.len();
            return s;
        }
        let mut end = self.left;
        // Back off over continuation bytes so that no character is split.
        while end > 0 && end < s.len() && s[end] & 0xc0 == 0x80 {
            end -= 1;
        }
        self.left -= end;
        self.cut += 1;
        &s[..end]
    }
}

/// What the annotations need from their sequence's interned data.
pub(crate) trait Interned {
    /// The interned debug annotation name `iid`.
    fn annotation_name(&self, iid: u64) -> Option<&[u8]>;
    /// The interned string value `iid` (`debug_annotation_string_values`).
    fn string_value(&self, iid: u64) -> Option<&[u8]>;
}

/// Appends `s` to `out` as a JSON string (quotes, escapes; bytes that are not UTF-8
/// become U+FFFD).
pub(crate) fn push_string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    let text = String::from_utf8_lossy(s);
    for &c in text.as_bytes() {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            c if c < 0x20 => {
                out.extend_from_slice(format!("\\u{c:04x}").as_bytes());
            }
            c => out.push(c),
        }
    }
    out.push(b'"');
}

/// Appends `d` as a JSON number (`null` for NaN and infinities, which JSON has not).
fn push_double(out: &mut Vec<u8>, d: f64) {
    if d.is_finite() {
        out.extend_from_slice(format!("{d}").as_bytes());
    } else {
        out.extend_from_slice(b"null");
    }
}

/// True when `raw` is one JSON value and nothing else but whitespace.
fn one_json_value(raw: &[u8]) -> bool {
    let start = skip_ws(raw, 0);
    match skip_value(raw, start) {
        Ok(end) => skip_ws(raw, end) == raw.len(),
        Err(_) => false,
    }
}

/// Appends the members `"name":value` of the annotations `list` (each a `DebugAnnotation`
/// message), comma-separated, to `out`; returns how many were written. An annotation
/// without a name is left out. Interned text is copied as far as `budget` allows.
pub(crate) fn push_members(
    out: &mut Vec<u8>,
    list: &[&[u8]],
    interned: &impl Interned,
    budget: &mut Budget,
    mut written: usize,
) -> usize {
    for a in list {
        if push_member(out, a, interned, budget, written > 0, 0) {
            written += 1;
        }
    }
    written
}

/// Appends one annotation as `"name":value` (after a comma when `comma`); false (and
/// nothing written) when it has no name.
fn push_member(
    out: &mut Vec<u8>,
    a: &[u8],
    interned: &impl Interned,
    budget: &mut Budget,
    comma: bool,
    depth: usize,
) -> bool {
    let mut name: Option<&[u8]> = None;
    for (n, v) in Fields::of(a) {
        match (n, v) {
            (1, Value::Varint(iid)) => name = interned.annotation_name(iid).map(|s| budget.take(s)),
            (10, Value::Bytes(s)) => name = Some(s),
            _ => {}
        }
    }
    let Some(name) = name else { return false };
    if comma {
        out.push(b',');
    }
    push_string(out, name);
    out.push(b':');
    push_value(out, a, interned, budget, depth);
    true
}

/// Appends the value of the annotation `a` (its name, if any, is not written).
fn push_value(
    out: &mut Vec<u8>,
    a: &[u8],
    interned: &impl Interned,
    budget: &mut Budget,
    depth: usize,
) {
    if depth >= MAX_DEPTH {
        out.extend_from_slice(b"null");
        return;
    }
    let mut dict = false;
    let mut array = false;
    let mut done = false;
    for (n, v) in Fields::of(a) {
        match (n, v) {
            (11, Value::Bytes(_)) => dict = true,
            (12, Value::Bytes(_)) => array = true,
            _ if done => {}
            (2, Value::Varint(x)) => {
                out.extend_from_slice(if x != 0 { b"true" } else { b"false" });
                done = true;
            }
            (3, Value::Varint(x)) => {
                out.extend_from_slice(x.to_string().as_bytes());
                done = true;
            }
            (4, Value::Varint(x)) => {
                out.extend_from_slice((x as i64).to_string().as_bytes());
                done = true;
            }
            (5, Value::Fixed64(x)) => {
                push_double(out, f64::from_bits(x));
                done = true;
            }
            (6, Value::Bytes(s)) => {
                push_string(out, s);
                done = true;
            }
            (7, Value::Varint(x)) => {
                push_string(out, format!("0x{x:x}").as_bytes());
                done = true;
            }
            (8, Value::Bytes(nested)) => {
                push_nested(out, nested, depth + 1);
                done = true;
            }
            (9, Value::Bytes(json)) if one_json_value(json) => {
                out.extend_from_slice(json);
                done = true;
            }
            (17, Value::Varint(iid)) => {
                push_string(
                    out,
                    budget.take(interned.string_value(iid).unwrap_or_default()),
                );
                done = true;
            }
            _ => {}
        }
    }
    if done {
        return;
    }
    if dict {
        out.push(b'{');
        let mut k = 0;
        for (n, v) in Fields::of(a) {
            if let (11, Value::Bytes(e)) = (n, v)
                && push_member(out, e, interned, budget, k > 0, depth + 1)
            {
                k += 1;
            }
        }
        out.push(b'}');
    } else if array {
        out.push(b'[');
        let mut k = 0;
        for (n, v) in Fields::of(a) {
            if let (12, Value::Bytes(e)) = (n, v) {
                if k > 0 {
                    out.push(b',');
                }
                push_value(out, e, interned, budget, depth + 1);
                k += 1;
            }
        }
        out.push(b']');
    } else {
        out.extend_from_slice(b"null");
    }
}

/// Appends a `DebugAnnotation.NestedValue` (the older form of dictionaries and arrays:
/// `nested_type` 1 a dictionary of `dict_keys`/`dict_values`, 2 an array, else a scalar).
fn push_nested(out: &mut Vec<u8>, v: &[u8], depth: usize) {
    if depth >= MAX_DEPTH {
        out.extend_from_slice(b"null");
        return;
    }
    let mut kind = 0;
    for (n, x) in Fields::of(v) {
        if let (1, Value::Varint(k)) = (n, x) {
            kind = k;
        }
    }
    match kind {
        1 => {
            let keys = Fields::of(v).filter_map(|(n, x)| (n == 2).then(|| x.bytes()).flatten());
            let values = Fields::of(v).filter_map(|(n, x)| (n == 3).then(|| x.bytes()).flatten());
            out.push(b'{');
            for (k, (key, value)) in keys.zip(values).enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                push_string(out, key);
                out.push(b':');
                push_nested(out, value, depth + 1);
            }
            out.push(b'}');
        }
        2 => {
            out.push(b'[');
            let items = Fields::of(v).filter_map(|(n, x)| (n == 4).then(|| x.bytes()).flatten());
            for (k, item) in items.enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                push_nested(out, item, depth + 1);
            }
            out.push(b']');
        }
        _ => {
            let mut written = false;
            for (n, x) in Fields::of(v) {
                written = true;
                match (n, x) {
                    (5, Value::Varint(i)) => {
                        out.extend_from_slice((i as i64).to_string().as_bytes())
                    }
                    (6, Value::Fixed64(d)) => push_double(out, f64::from_bits(d)),
                    (7, Value::Varint(b)) => {
                        out.extend_from_slice(if b != 0 { b"true" } else { b"false" })
                    }
                    (8, Value::Bytes(s)) => push_string(out, s),
                    _ => {
                        written = false;
                        continue;
                    }
                }
                break;
            }
            if !written {
                out.extend_from_slice(b"null");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Names;
    impl Interned for Names {
        fn annotation_name(&self, iid: u64) -> Option<&[u8]> {
            (iid == 1).then_some(b"data".as_slice())
        }
        fn string_value(&self, iid: u64) -> Option<&[u8]> {
            (iid == 2).then_some(b"click".as_slice())
        }
    }

    /// A length-delimited field.
    fn ld(field: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![field << 3 | 2, body.len() as u8];
        v.extend_from_slice(body);
        v
    }

    fn args(list: &[&[u8]]) -> String {
        let mut out = b"{".to_vec();
        push_members(
            &mut out,
            list,
            &Names,
            &mut Budget::new(INTERNED_PER_EVENT),
            0,
        );
        out.push(b'}');
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn dictionaries_typed_values_and_interned_names() {
        // data: {type: <interned "click">, n: -2, ok: true, s: "a\"b"}
        let mut ty = ld(10, b"type");
        ty.extend_from_slice(&[0x88, 0x01, 2]); // field 17 (two-byte tag): iid 2
        let mut n = ld(10, b"n");
        n.extend_from_slice(&[
            4 << 3,
            0xfe,
            0xff,
            0xff,
            0xff,
            0xff,
            0xff,
            0xff,
            0xff,
            0xff,
            0x01,
        ]);
        let mut ok = ld(10, b"ok");
        ok.extend_from_slice(&[2 << 3, 1]);
        let mut s = ld(10, b"s");
        s.extend_from_slice(&ld(6, b"a\"b"));
        let mut data = vec![1 << 3, 1];
        for e in [&ty, &n, &ok, &s] {
            data.extend_from_slice(&ld(11, e));
        }
        assert_eq!(
            args(&[&data]),
            r#"{"data":{"type":"click","n":-2,"ok":true,"s":"a\"b"}}"#
        );
    }

    #[test]
    fn legacy_json_is_copied_only_when_it_is_one_value() {
        let mut good = vec![1 << 3, 1];
        good.extend_from_slice(&ld(9, br#"{"startTime":5}"#));
        assert_eq!(args(&[&good]), r#"{"data":{"startTime":5}}"#);
        // A value that would close the args object and add keys is not copied.
        let mut bad = vec![1 << 3, 1];
        bad.extend_from_slice(&ld(9, br#"1},"ph":"X"#));
        assert_eq!(args(&[&bad]), r#"{"data":null}"#);
    }

    /// Interned text is copied as far as the event's budget allows: the next strings are
    /// cut, then left empty, and each cut counted.
    #[test]
    fn interned_text_is_copied_within_the_budget() {
        struct Big;
        impl Interned for Big {
            fn annotation_name(&self, _: u64) -> Option<&[u8]> {
                Some(b"k")
            }
            fn string_value(&self, _: u64) -> Option<&[u8]> {
                Some(&[b'A'; 100_000])
            }
        }
        // 30 annotations `k: <interned 100,000 bytes>`, 3,000,000 bytes of text unbounded.
        let one = [1 << 3, 1, 0x88, 0x01, 1];
        let list = vec![&one[..]; 30];
        let mut out = Vec::new();
        let mut budget = Budget::new(1_000_000);
        assert_eq!(push_members(&mut out, &list, &Big, &mut budget, 0), 30);
        // The budget counts names and values in file order: 9 members whole (900,009
        // bytes), the 10th's name, its value cut to the 99,990 bytes left; the names and
        // values of the last 20 are left empty: 41 cuts, 1,000,000 bytes of text. Each
        // member adds 5 bytes (`"":""`) and a comma between members.
        assert_eq!(out.len(), 30 * 5 + 29 + 1_000_000);
        assert!(out.ends_with(br#","":"""#));
        assert_eq!(budget.left, 0);
        assert_eq!(budget.cut, 41);
    }

    #[test]
    fn nested_values_and_arrays() {
        // nested_value: {frames: [7]} in the older form.
        let item = [5 << 3, 7];
        let mut arr = vec![1 << 3, 2];
        arr.extend_from_slice(&ld(4, &item));
        let mut dict = vec![1 << 3, 1];
        dict.extend_from_slice(&ld(2, b"frames"));
        dict.extend_from_slice(&ld(3, &arr));
        let mut a = ld(10, b"d");
        a.extend_from_slice(&ld(8, &dict));
        // array_values: [1.5, "x"]
        let mut b = ld(10, b"l");
        b.extend_from_slice(&ld(12, &[5 << 3 | 1, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f]));
        b.extend_from_slice(&ld(12, &ld(6, b"x")));
        assert_eq!(args(&[&a, &b]), r#"{"d":{"frames":[7]},"l":[1.5,"x"]}"#);
    }
}

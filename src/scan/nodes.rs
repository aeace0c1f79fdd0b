//! A profile's `cpuProfile.nodes` array in Chrome's own layout, read straight from the
//! bytes rather than through a JSON parser.
//!
//! Chrome writes each node as `{"callFrame":{"codeType":"JS","columnNumber":9,
//! "functionName":"f","lineNumber":3,"scriptId":5,"url":"https://…"},"id":7,"parent":6}`
//! (V8 `profile-generator.cc` through the tracing writer: keys sorted, no whitespace,
//! `columnNumber`/`lineNumber`/`url` left out when unknown; docs/METHOD.md §2). Such an
//! array is read here in one pass. Anything else (whitespace, an escape in a string, a
//! float, `null`, a key not listed above, `children`) makes [`read`] give up, and the
//! caller reads the array with the JSON parser, which gives the same nodes wherever both
//! read them (checked by the tests and the `node_reads` fuzz target).

use super::args::LONG_STRING;
use crate::json;

/// One node as Chrome writes it, its texts borrowed from the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CompactNode<'a> {
    /// `id`.
    pub(crate) id: i64,
    /// `parent`, when given.
    pub(crate) parent: Option<i64>,
    /// `callFrame.functionName` ("" when not given).
    pub(crate) function_name: &'a str,
    /// `callFrame.url` ("" when not given).
    pub(crate) url: &'a str,
    /// `callFrame.scriptId`: a string's text, or an integer (None when not given).
    pub(crate) script_id: Option<ScriptId<'a>>,
    /// `callFrame.lineNumber`, 0-based; -1 when not given or beyond `i32`.
    pub(crate) line: i32,
    /// `callFrame.columnNumber`, 0-based; -1 when not given or beyond `i32`.
    pub(crate) column: i32,
}

impl CompactNode<'_> {
    /// A node with nothing read: texts empty, positions unknown.
    fn new() -> Self {
        CompactNode {
            id: 0,
            parent: None,
            function_name: "",
            url: "",
            script_id: None,
            line: -1,
            column: -1,
        }
    }
}

/// A `scriptId` as written: traces give an integer, DevTools' `.cpuprofile` a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScriptId<'a> {
    /// A string's content.
    Text(&'a str),
    /// An integer.
    Int(i64),
}

/// Objects of more members than this are read by the parser's hash-backed tree, whose
/// result the caller's other path gives: given up here.
const MOST_MEMBERS: usize = 32;

/// Reads the `nodes` array `b` (the value's bytes, `[` to `]`), handing each node to
/// `each` in array order. `None` (some nodes perhaps handed on already) when `b` is not
/// an array in Chrome's layout as the module describes it.
pub(crate) fn read<'a>(b: &'a [u8], mut each: impl FnMut(CompactNode<'a>)) -> Option<()> {
    let mut i = expect(b, 0, b'[')?;
    if b.get(i) == Some(&b']') {
        return (i + 1 == b.len()).then_some(());
    }
    loop {
        let (node, end) = sorted_node(b, i).or_else(|| node(b, i))?;
        each(node);
        match *b.get(end)? {
            b',' => i = end + 1,
            b']' => return (end + 1 == b.len()).then_some(()),
            _ => return None,
        }
    }
}

/// [`node`] of a node whose keys come in Chrome's order, each at most once (nearly
/// all): matched as whole literals in that order, not key by key. `None` for any other
/// node.
fn sorted_node(b: &[u8], i: usize) -> Option<(CompactNode<'_>, usize)> {
    let mut n = CompactNode::new();
    let mut j = literal(b, i, b"{\"callFrame\":{")?;
    let mut first = true;
    // The next member when it is `name` (its `"key":`), after a comma unless first.
    let next = |j: usize, first: bool, name: &[u8]| {
        literal(b, if first { j } else { expect(b, j, b',')? }, name)
    };
    if let Some(v) = next(j, first, b"\"codeType\":") {
        (j, first) = (string(b, v)?.1, false);
    }
    if let Some(v) = next(j, first, b"\"columnNumber\":") {
        let (x, e) = int(b, v)?;
        (n.column, j, first) = (position(x), e, false);
    }
    if let Some(v) = next(j, first, b"\"functionName\":") {
        (n.function_name, j) = string(b, v)?;
        first = false;
    }
    if let Some(v) = next(j, first, b"\"lineNumber\":") {
        let (x, e) = int(b, v)?;
        (n.line, j, first) = (position(x), e, false);
    }
    if let Some(v) = next(j, first, b"\"scriptId\":") {
        let (id, e) = script_id(b, v)?;
        (n.script_id, j, first) = (Some(id), e, false);
    }
    if let Some(v) = next(j, first, b"\"url\":") {
        (n.url, j) = string(b, v)?;
    }
    j = literal(b, j, b"},\"id\":")?;
    (n.id, j) = int(b, j)?;
    if let Some(v) = literal(b, j, b",\"parent\":") {
        let (x, e) = int(b, v)?;
        (n.parent, j) = (Some(x), e);
    }
    Some((n, expect(b, j, b'}')?))
}

/// The node object at `b[i]` and the offset past its `}`.
fn node(b: &[u8], i: usize) -> Option<(CompactNode<'_>, usize)> {
    let mut n = CompactNode::new();
    let mut id = None;
    let end = members(b, i, |key, v| match key {
        b"callFrame" => {
            // A repeated `callFrame` replaces the one before (a parser keeps the last),
            // fields it leaves out included.
            let CompactNode { id, parent, .. } = n;
            n = CompactNode {
                id,
                parent,
                ..CompactNode::new()
            };
            call_frame(b, v, &mut n)
        }
        b"id" => int(b, v).map(|(x, e)| {
            id = Some(x);
            e
        }),
        b"parent" => int(b, v).map(|(x, e)| {
            n.parent = Some(x);
            e
        }),
        _ => None,
    })?;
    n.id = id?;
    Some((n, end))
}

/// Reads the `callFrame` object at `b[i]` into `n`; returns the offset past it.
fn call_frame<'a>(b: &'a [u8], i: usize, n: &mut CompactNode<'a>) -> Option<usize> {
    members(b, i, |key, v| match key {
        b"codeType" => string(b, v).map(|(_, e)| e),
        b"functionName" => string(b, v).map(|(s, e)| {
            n.function_name = s;
            e
        }),
        b"url" => string(b, v).map(|(s, e)| {
            n.url = s;
            e
        }),
        b"lineNumber" => int(b, v).map(|(x, e)| {
            n.line = position(x);
            e
        }),
        b"columnNumber" => int(b, v).map(|(x, e)| {
            n.column = position(x);
            e
        }),
        b"scriptId" => script_id(b, v).map(|(id, e)| {
            n.script_id = Some(id);
            e
        }),
        _ => None,
    })
}

/// A position (`lineNumber`, `columnNumber`) as the node keeps it: -1 beyond `i32`.
fn position(x: i64) -> i32 {
    i32::try_from(x).unwrap_or(-1)
}

/// The `scriptId` at `b[i]` (a string or an integer) and the offset past it.
fn script_id(b: &[u8], i: usize) -> Option<(ScriptId<'_>, usize)> {
    match b.get(i)? {
        b'"' => string(b, i).map(|(s, e)| (ScriptId::Text(s), e)),
        _ => int(b, i).map(|(x, e)| (ScriptId::Int(x), e)),
    }
}

/// The members of the object at `b[i]`: `value(key, v)` reads the value at `b[v]` and
/// returns the offset past it. Returns the offset past the `}`.
fn members<'a>(
    b: &'a [u8],
    i: usize,
    mut value: impl FnMut(&'a [u8], usize) -> Option<usize>,
) -> Option<usize> {
    let mut j = expect(b, i, b'{')?;
    if b.get(j) == Some(&b'}') {
        return Some(j + 1);
    }
    for _ in 0..MOST_MEMBERS {
        let (key, after) = string(b, j)?;
        let end = value(key.as_bytes(), expect(b, after, b':')?)?;
        match *b.get(end)? {
            b',' => j = end + 1,
            b'}' => return Some(end + 1),
            _ => return None,
        }
    }
    None
}

/// The offset past `s` when `b[i..]` starts with it.
#[inline]
fn literal(b: &[u8], i: usize, s: &[u8]) -> Option<usize> {
    (b.get(i..i + s.len())? == s).then_some(i + s.len())
}

/// The offset past `b[i]` when it is `c`.
#[inline]
fn expect(b: &[u8], i: usize, c: u8) -> Option<usize> {
    (*b.get(i)? == c).then_some(i + 1)
}

/// The string at `b[i]` (its content: no escape, no control byte, valid UTF-8, at most
/// [`LONG_STRING`] bytes, which the parser's path would cut) and the offset past it.
fn string(b: &[u8], i: usize) -> Option<(&str, usize)> {
    let from = expect(b, i, b'"')?;
    // Eight bytes at a time while they are ASCII (names and URLs nearly always are).
    let mut j = from;
    while let Some(w) = json::load8(b, j) {
        let below_space = w.wrapping_sub(0x2020_2020_2020_2020) & !w & 0x8080_8080_8080_8080;
        let hit = json::bytes_equal(w, b'"')
            | json::bytes_equal(w, b'\\')
            | below_space
            | (w & 0x8080_8080_8080_8080);
        if hit == 0 {
            j += 8;
            continue;
        }
        let k = j + (hit.trailing_zeros() / 8) as usize;
        match b[k] {
            b'"' if k - from <= LONG_STRING => {
                return Some((std::str::from_utf8(&b[from..k]).ok()?, k + 1));
            }
            0x80.. => break, // not ASCII: checked whole below
            _ => return None,
        }
    }
    let len = memchr::memchr2(b'"', b'\\', &b[from..])?;
    let content = &b[from..from + len];
    if b[from + len] != b'"' || len > LONG_STRING || content.iter().any(|&c| c < 0x20) {
        return None;
    }
    Some((std::str::from_utf8(content).ok()?, from + len + 1))
}

/// The integer at `b[i]` (JSON's form: no leading zero, no fraction or exponent; `-0`
/// and more than 18 digits are left to the parser) and the offset past it.
fn int(b: &[u8], i: usize) -> Option<(i64, usize)> {
    let negative = b.get(i) == Some(&b'-');
    let from = i + negative as usize;
    let digits = b[from.min(b.len())..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits == 0 || digits > 18 || (b[from] == b'0' && (digits > 1 || negative)) {
        return None;
    }
    let end = from + digits;
    if matches!(b.get(end), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    let v = b[from..end]
        .iter()
        .fold(0i64, |v, &c| v * 10 + i64::from(c - b'0'));
    Some((if negative { -v } else { v }, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(b: &[u8]) -> Option<Vec<CompactNode<'_>>> {
        let mut v = Vec::new();
        read(b, |n| v.push(n)).map(|()| v)
    }

    #[test]
    fn chrome_nodes_are_read_with_their_texts_and_positions() {
        // From a DevTools recording (events-1g's source), values checked by eye.
        let b = br#"[{"callFrame":{"codeType":"other","functionName":"(root)","scriptId":0},"id":1},{"callFrame":{"codeType":"JS","columnNumber":31,"functionName":"onVisibilityUpdate","lineNumber":337,"scriptId":5,"url":"https://a.example/x.js"},"id":6,"parent":1}]"#;
        let got = all(b).expect("Chrome's layout");
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[0],
            CompactNode {
                id: 1,
                parent: None,
                function_name: "(root)",
                url: "",
                script_id: Some(ScriptId::Int(0)),
                line: -1,
                column: -1,
            }
        );
        assert_eq!(
            got[1],
            CompactNode {
                id: 6,
                parent: Some(1),
                function_name: "onVisibilityUpdate",
                url: "https://a.example/x.js",
                script_id: Some(ScriptId::Int(5)),
                line: 337,
                column: 31,
            }
        );
        assert_eq!(all(b"[]"), Some(vec![]));
    }

    #[test]
    fn a_repeated_key_counts_its_last_value_and_positions_beyond_i32_are_unknown() {
        let b = br#"[{"id":1,"id":2,"callFrame":{"scriptId":"7a","lineNumber":3000000000,"columnNumber":-4}}]"#;
        let got = all(b).unwrap();
        assert_eq!(got[0].id, 2);
        assert_eq!(got[0].script_id, Some(ScriptId::Text("7a")));
        assert_eq!((got[0].line, got[0].column), (-1, -4));
        // A repeated callFrame replaces the first whole: nothing of the first is kept.
        let b = br#"[{"callFrame":{"functionName":"f","lineNumber":1,"scriptId":4,"url":"u.js"},"id":3,"parent":1,"callFrame":{"columnNumber":2}}]"#;
        let got = all(b).unwrap();
        assert_eq!(
            got[0],
            CompactNode {
                id: 3,
                parent: Some(1),
                function_name: "",
                url: "",
                script_id: None,
                line: -1,
                column: 2,
            }
        );
    }

    #[test]
    fn anything_outside_chromes_layout_is_left_to_the_parser() {
        for b in [
            &br#"[{"id":1} ]"#[..],                             // whitespace
            br#"[{"id":1,"callFrame":{"url":"a\"b"}}]"#,        // an escape
            br#"[{"id":1.0}]"#,                                 // a float
            br#"[{"id":1e3}]"#,                                 // an exponent
            br#"[{"id":01}]"#,                                  // a leading zero
            br#"[{"id":-0}]"#,                                  // minus zero
            br#"[{"id":1234567890123456789}]"#,                 // 19 digits
            br#"[{"id":1,"parent":null}]"#,                     // null
            br#"[{"id":1,"children":[2]}]"#,                    // children
            br#"[{"id":1,"hitCount":3}]"#,                      // another key
            br#"[{"callFrame":{}}]"#,                           // no id
            br#"[{"id":1},7]"#,                                 // not an object
            br#"[{"id":1}]x"#,                                  // bytes after
            br#"[{"id":1}"#,                                    // cut
            b"[{\"id\":1,\"callFrame\":{\"url\":\"a\xffb\"}}]", // not UTF-8
            b"[{\"id\":1,\"callFrame\":{\"url\":\"a\tb\"}}]",   // a control byte
            br#"{"id":1}"#,                                     // not an array
        ] {
            assert_eq!(all(b), None, "{}", String::from_utf8_lossy(b));
        }
        // 33 members: the parser reads such an object by hash.
        let many = format!("[{{{}\"id\":1}}]", "\"id\":1,".repeat(32));
        assert_eq!(all(many.as_bytes()), None);
        let most = format!("[{{{}\"id\":1}}]", "\"id\":1,".repeat(31));
        assert!(all(most.as_bytes()).is_some());
    }
}

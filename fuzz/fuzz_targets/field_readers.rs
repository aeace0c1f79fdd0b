//! The field-data readers (JS Self-Profiling bundles, `.cpuprofile`s: `reader::lexed`,
//! `reader::field`). Whenever serde_json reads the input as a JSON object, the lexed
//! member reader must read it too and agree with it: every key (escapes decoded, the last
//! of repeated keys) has the same value, number arrays give the same numbers token by
//! token, arrays the same element count, nested objects the same members. And the whole
//! input through the pipeline never panics and gives the same report whole and streamed.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use taskchain::internals::analyze_stream;
use taskchain::internals::json::Token;
use taskchain::internals::reader::Members;
use taskchain::internals::scan::ArgsParser;
use taskchain::{Settings, analyze_bytes};

/// Every member of `map` read from `m` as serde_json reads it; `depth` bounds the descent.
fn agree(m: &Members<'_>, map: &serde_json::Map<String, Value>, p: &mut ArgsParser, depth: usize) {
    for (key, value) in map {
        let raw = m.raw(key).unwrap_or_else(|| panic!("key {key:?} missing"));
        let alone: Value = serde_json::from_slice(raw).expect("a member's value parses alone");
        assert_eq!(&alone, value, "{key:?}");
        if let Value::Array(items) = value {
            // The number reader is read for the arrays the field readers read with it.
            if let Some(mut n) = NUMBER_ARRAYS
                .iter()
                .find(|k| **k == key)
                .and_then(|k| m.numbers(k))
            {
                for item in items {
                    match n.next_token() {
                        Ok(Some(Token::Int(v))) => assert!(
                            item.as_i64() == Some(v) || item.as_f64() == Some(v as f64),
                            "{key:?}: {v} vs {item}"
                        ),
                        Ok(Some(Token::Other(raw))) => {
                            // Not a plain integer: what serde_json reads it as, if anything.
                            if let Ok(v) = serde_json::from_slice::<Value>(raw) {
                                assert_eq!(&v, item, "{key:?}");
                            }
                        }
                        other => panic!("{key:?}: {other:?} for {item}"),
                    }
                }
                assert_eq!(
                    n.next_token(),
                    Ok(None),
                    "{key:?}: more elements than serde_json's"
                );
            }
            let count = m.elements(p, key, |_, _| ());
            assert_eq!(count, Ok(Some(items.len())), "{key:?}: elements");
        }
        if let (Value::Object(inner), true) = (value, depth > 0) {
            let o = m.object(key).expect("an object").expect("an object");
            agree(&o, inner, p, depth - 1);
        }
    }
}

/// The arrays the field readers read with `Members::numbers`.
const NUMBER_ARRAYS: &[&str] = &["samples", "timeDeltas"];

fuzz_target!(|data: &[u8]| {
    let members = Members::document(data);
    let text = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    if let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(text) {
        let m = members.unwrap_or_else(|e| panic!("serde_json reads it; the lexed reader: {e}"));
        agree(&m, &map, &mut ArgsParser::default(), 4);
    }
    let s = Settings::default();
    let whole = analyze_bytes("f", data, &s);
    let blocks = data.chunks(7).map(|c| Ok(c.to_vec())).collect::<Vec<_>>();
    let streamed = analyze_stream("f", blocks.into_iter(), &s);
    common::assert_same("whole vs streamed", &whole, &streamed);
});

//! The two event parses agree: whenever the compact parse (Chrome's own layout) reads an
//! event, the general parse reads the same event ending at the same byte; and `parse`,
//! which tries the compact one first, always gives what the general one gives, errors
//! included.
#![no_main]

use libfuzzer_sys::fuzz_target;
use taskchain::internals::scan::TraceEvent;

fuzz_target!(|data: &[u8]| {
    // Every event starts at `{`; a leading byte is added when the input lacks one.
    let owned;
    let b = if data.first() == Some(&b'{') {
        data
    } else {
        owned = [b"{".as_slice(), data].concat();
        &owned
    };
    let general = TraceEvent::parse_general(b, 0, 0);
    if let Some(fast) = TraceEvent::parse_compact(b, 0, 0) {
        assert_eq!(Ok(fast), general.clone());
    }
    assert_eq!(TraceEvent::parse(b, 0, 0), general);
});

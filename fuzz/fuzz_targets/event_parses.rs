//! The two event parses agree: whenever the compact parse (Chrome's own layout) reads an
//! event, the general parse reads the same event ending at the same byte; and `parse`,
//! which tries the compact one first, always gives what the general one gives, errors
//! included. The lines of the input, read in turn as a walk reads events (each event's
//! key guesses taught by the ones before), each give what the general parse gives alone.
#![no_main]

use libfuzzer_sys::fuzz_target;
use taskchain::internals::scan::{KeyGuess, TraceEvent};

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
    let mut keys = KeyGuess::default();
    for line in data.split(|&c| c == b'\n').take(32) {
        let alone = TraceEvent::parse_general(line, 0, 0);
        assert_eq!(TraceEvent::parse_guessing(line, 0, 0, &mut keys), alone);
    }
});

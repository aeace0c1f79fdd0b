//! The two readers of a profile's `nodes` array agree: whenever the one for Chrome's own
//! layout (straight from the bytes) reads an array, the JSON parser's tape reader reads
//! the same nodes from it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use taskchain::internals::scan::nodes_both_ways;

fuzz_target!(|data: &[u8]| {
    let (fast, tape) = nodes_both_ways(data);
    if let Some(fast) = fast {
        assert_eq!(Some(Some(fast)), tape);
    }
});

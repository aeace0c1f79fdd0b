//! The fast path for number arrays agrees with the general one: whenever
//! `plain_uints` accepts bytes, `int_array` reads the same integers from them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use taskchain::scan::json::{Token, int_array, plain_uints};

fuzz_target!(|data: &[u8]| {
    let mut fast = Vec::new();
    if plain_uints(data, &(0..data.len()), |v| fast.push(v as i64)).is_some() {
        let mut general = Vec::new();
        let n = int_array(data, 0, |t| {
            general.push(match t {
                Token::Int(v) => v,
                Token::Other(_) => i64::MIN,
            })
        });
        assert_eq!(n, Ok(fast.len()));
        assert_eq!(fast, general);
    }
});

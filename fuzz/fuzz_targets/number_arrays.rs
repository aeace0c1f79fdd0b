//! The fast paths for number arrays agree with the general one: whenever `plain_uints`
//! accepts bytes, `int_array` reads the same integers from them; `plain_sum` accepts
//! exactly the same bytes and gives their count, first element and sum; `plain_uints_into`
//! accepts the same bytes as `plain_uints` and writes the same values; `digit_array_end`
//! accepts an array exactly when it holds only digits and commas, and then finds its end
//! and the count `count_elements` gives.
#![no_main]

use libfuzzer_sys::fuzz_target;
use taskchain::internals::json::{
    PlainSum, Token, digit_array_end, int_array, plain_sum, plain_uints, plain_uints_into,
};
use taskchain::internals::scan::count_elements;

fuzz_target!(|data: &[u8]| {
    let close = data
        .iter()
        .skip(1)
        .position(|c| !c.is_ascii_digit() && *c != b',');
    let plain_end = match close {
        Some(k) if data[0] == b'[' && data[k + 1] == b']' => Some(k + 2),
        _ => None,
    };
    match digit_array_end(data, 0) {
        Some((end, n)) => {
            assert_eq!(Some(end), plain_end);
            assert_eq!(n, count_elements(data, &(0..end)));
        }
        None => assert_eq!(plain_end, None),
    }
    let mut fast = Vec::new();
    let whole = 0..data.len();
    let sum = plain_sum(data, &whole);
    let mut into = vec![0u32; data.len() / 2 + 1];
    let n_into = plain_uints_into(data, &whole, &mut into);
    if plain_uints(data, &whole, |v| fast.push(v as i64)).is_some() {
        assert_eq!(n_into, Some(fast.len()));
        assert!(fast.iter().zip(&into).all(|(&a, &b)| a == b as i64));
        let mut general = Vec::new();
        let n = int_array(data, 0, |t| {
            general.push(match t {
                Token::Int(v) => v,
                Token::Other(_) => i64::MIN,
            })
        });
        assert_eq!(n, Ok(fast.len()));
        assert_eq!(fast, general);
        let expected = PlainSum {
            count: fast.len(),
            first: fast.first().map_or(0, |&v| v as u64),
            sum: fast.iter().sum::<i64>() as u64,
        };
        assert_eq!(sum, Some(expected));
    } else {
        assert_eq!(n_into, None);
        assert_eq!(sum, None);
    }
});

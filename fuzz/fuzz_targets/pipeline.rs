//! Arbitrary bytes through the whole pipeline, both ways a trace can arrive: as one buffer
//! (scan in ranges, sample arrays left in the file) and as a stream of small blocks
//! (arrays read at once). Never a panic, never an out-of-bounds read; and both ways must
//! find the same long tasks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use taskchain::chain::{ChainConfig, LowConfidencePolicy, Method};
use taskchain::internals::analyze_stream;
use taskchain::{Settings, analyze_bytes};

fuzz_target!(|data: &[u8]| {
    let (control, trace) = data.split_at(data.len().min(1));
    let knobs = control.first().copied().unwrap_or(0);
    let settings = Settings {
        threshold: taskchain::time::TimeDelta::from_micros(if knobs & 1 == 0 { 50_000 } else { 0 }),
        chain: ChainConfig {
            method: if knobs & 2 == 0 { Method::LargestStack } else { Method::HeaviestPath },
            policy: if knobs & 4 == 0 { LowConfidencePolicy::Flag } else { LowConfidencePolicy::Fallback },
            lookback: taskchain::time::TimeDelta::from_micros((knobs >> 4) as i64 * 1000),
            ..ChainConfig::default()
        },
        ..Settings::default()
    };
    let whole = analyze_bytes("f", trace, &settings);
    let block = 1 + (knobs as usize >> 3);
    let blocks = trace.chunks(block).map(|c| Ok(c.to_vec())).collect::<Vec<_>>();
    let streamed = analyze_stream("f", blocks.into_iter(), &settings);
    match (&whole, &streamed) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.long_tasks, b.long_tasks);
            assert_eq!(a.rows.len(), b.rows.len());
            for (x, y) in a.rows.iter().zip(&b.rows) {
                assert_eq!((x.task_ts, x.task_dur, x.status, &x.chain), (y.task_ts, y.task_dur, y.status, &y.chain));
            }
        }
        (Err(_), Err(_)) => {}
        (a, b) => panic!("whole {:?} vs streamed {:?}", a.as_ref().err(), b.as_ref().err()),
    }
});

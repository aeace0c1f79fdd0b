//! What the trace targets share: the settings a control byte picks, and the comparison of
//! two reports of the same bytes.

#![allow(dead_code)] // each target uses some of these

use taskchain::chain::{ChainConfig, LowConfidencePolicy, Method};
use taskchain::time::TimeDelta;
use taskchain::{Error, FileReport, Settings};

/// Splits off the control byte: its bits pick the settings (bit 0: a 0 ms threshold, so
/// that every task is long; bit 1: heaviest path; bit 2: the fallback policy; bits 4–7:
/// the lookback in ms) and bits 3–7 a block or range size for the target.
pub fn control(data: &[u8]) -> (u8, &[u8]) {
    let (control, trace) = data.split_at(data.len().min(1));
    (control.first().copied().unwrap_or(0), trace)
}

/// The settings the control byte `knobs` picks (see [`control`]).
pub fn settings(knobs: u8) -> Settings {
    Settings {
        threshold: TimeDelta::from_micros(if knobs & 1 == 0 { 50_000 } else { 0 }),
        chain: ChainConfig {
            method: if knobs & 2 == 0 {
                Method::LargestStack
            } else {
                Method::HeaviestPath
            },
            policy: if knobs & 4 == 0 {
                LowConfidencePolicy::Flag
            } else {
                LowConfidencePolicy::Fallback
            },
            lookback: TimeDelta::from_micros((knobs >> 4) as i64 * 1000),
            ..ChainConfig::default()
        },
        ..Settings::default()
    }
}

/// Panics unless the two reports of the same bytes agree: the same rows, counts, folded
/// stacks, warnings and notes, or the same error.
pub fn assert_same(what: &str, a: &Result<FileReport, Error>, b: &Result<FileReport, Error>) {
    match (a, b) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.long_tasks, b.long_tasks, "{what}: long tasks");
            assert_eq!(a.rows, b.rows, "{what}: rows");
            assert_eq!(a.events, b.events, "{what}: events");
            assert_eq!(a.truncated, b.truncated, "{what}: truncated");
            assert_eq!(a.broken, b.broken, "{what}: broken");
            assert_eq!(a.stats, b.stats, "{what}: stats");
            assert_eq!(a.stacks, b.stacks, "{what}: stacks");
            assert_eq!(a.diagnostics, b.diagnostics, "{what}: diagnostics");
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}: errors"),
        (a, b) => panic!("{what}: {:?} vs {:?}", a.as_ref().err(), b.as_ref().err()),
    }
}

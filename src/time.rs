//! Time on the trace clock.
//!
//! Chrome trace events give `ts` and `dur` in microseconds, as integers or as decimals
//! (non-Chrome producers write fractional µs). Inside taskchain every time is an integer
//! count of **nanoseconds** so that sums of many `timeDeltas` stay exact; microseconds and
//! milliseconds appear only in constructor names and at the report edge.

use std::fmt;
use std::ops::{Add, Sub};

/// A point on the trace clock, in integer nanoseconds (`ts` × 1000).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

/// A signed span of trace time, in integer nanoseconds. `timeDeltas` may be negative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeDelta(i64);

impl Timestamp {
    /// From a whole number of microseconds (the unit of `ts`).
    pub const fn from_micros(us: i64) -> Self {
        Timestamp(us.saturating_mul(1000))
    }
    /// From nanoseconds.
    pub const fn from_nanos(ns: i64) -> Self {
        Timestamp(ns)
    }
    /// Nanoseconds since the trace clock's origin.
    pub const fn as_nanos(self) -> i64 {
        self.0
    }
    /// Microseconds, with the fraction (for reports).
    pub fn as_micros_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }
    /// Time from `earlier` to `self`.
    pub fn since(self, earlier: Timestamp) -> TimeDelta {
        TimeDelta(self.0.saturating_sub(earlier.0))
    }
}

impl TimeDelta {
    /// Zero length.
    pub const ZERO: TimeDelta = TimeDelta(0);
    /// From whole microseconds (the unit of `dur` and `timeDeltas`).
    pub const fn from_micros(us: i64) -> Self {
        TimeDelta(us.saturating_mul(1000))
    }
    /// From nanoseconds.
    pub const fn from_nanos(ns: i64) -> Self {
        TimeDelta(ns)
    }
    /// From milliseconds given as a float (command-line options such as `--threshold-ms`).
    pub fn from_millis_f64(ms: f64) -> Self {
        TimeDelta((ms * 1_000_000.0).round() as i64)
    }
    /// Nanoseconds.
    pub const fn as_nanos(self) -> i64 {
        self.0
    }
    /// Milliseconds as a float (reports).
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1_000_000.0
    }
    /// True when negative (a sample recorded out of order).
    pub const fn is_negative(self) -> bool {
        self.0 < 0
    }
}

impl Add<TimeDelta> for Timestamp {
    type Output = Timestamp;
    fn add(self, rhs: TimeDelta) -> Timestamp {
        Timestamp(self.0.saturating_add(rhs.0))
    }
}

impl Sub<TimeDelta> for Timestamp {
    type Output = Timestamp;
    fn sub(self, rhs: TimeDelta) -> Timestamp {
        Timestamp(self.0.saturating_sub(rhs.0))
    }
}

impl Add for TimeDelta {
    type Output = TimeDelta;
    fn add(self, rhs: TimeDelta) -> TimeDelta {
        TimeDelta(self.0.saturating_add(rhs.0))
    }
}

impl std::ops::Sub for TimeDelta {
    type Output = TimeDelta;
    fn sub(self, rhs: TimeDelta) -> TimeDelta {
        TimeDelta(self.0.saturating_sub(rhs.0))
    }
}

impl std::iter::Sum for TimeDelta {
    fn sum<I: Iterator<Item = TimeDelta>>(iter: I) -> TimeDelta {
        iter.fold(TimeDelta::ZERO, |a, b| a + b)
    }
}

/// Writes a nanosecond count as microseconds: `1234000` → `1234`, `1234567` → `1234.567`.
pub(crate) fn fmt_micros(ns: i64, f: &mut impl fmt::Write) -> fmt::Result {
    if ns % 1000 == 0 {
        write!(f, "{}", ns / 1000)
    } else {
        let sign = if ns < 0 { "-" } else { "" };
        let a = ns.unsigned_abs();
        write!(f, "{sign}{}.{:03}", a / 1000, a % 1000)
    }
}

/// Writes a nanosecond count as milliseconds with exactly 3 decimals (rounded half away from zero).
pub(crate) fn fmt_millis3(ns: i64, f: &mut impl fmt::Write) -> fmt::Result {
    let sign = if ns < 0 { "-" } else { "" };
    let us = (ns.unsigned_abs() + 500) / 1000;
    write!(f, "{sign}{}.{:03}", us / 1000, us % 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn micros(ns: i64) -> String {
        let mut s = String::new();
        fmt_micros(ns, &mut s).unwrap();
        s
    }
    fn millis(ns: i64) -> String {
        let mut s = String::new();
        fmt_millis3(ns, &mut s).unwrap();
        s
    }

    #[test]
    fn micros_print_whole_or_with_three_decimals() {
        assert_eq!(micros(2_323_801_329_000), "2323801329");
        assert_eq!(micros(141_171_917), "141171.917");
        assert_eq!(micros(-1_500), "-1.500");
    }

    #[test]
    fn millis_round_to_microseconds() {
        assert_eq!(millis(120_345_678), "120.346");
        assert_eq!(millis(50_000_000), "50.000");
        assert_eq!(millis(499), "0.000");
        assert_eq!(millis(500), "0.001");
    }

    #[test]
    fn threshold_from_float_millis() {
        assert_eq!(TimeDelta::from_millis_f64(50.0).as_nanos(), 50_000_000);
        assert_eq!(TimeDelta::from_millis_f64(0.5).as_nanos(), 500_000);
    }
}

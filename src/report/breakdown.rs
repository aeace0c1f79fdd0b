//! A window's time by category and its forced layout (docs/METHOD.md §2.10) as every report
//! writes it: the keys `scripting_ms` … `forced_layout_function` of task rows, interaction
//! phases and long animation frames come from here.

use serde::Serialize;

use super::{breakdown_times, millis_number};
use crate::chain::breakdown::Breakdown;
use crate::time::fmt_millis3;

/// The breakdown's keys in a JSON object (flattened into the row's): times in ms (µs
/// precision), `idle_ms` only where the window may hold idle time (phases, frames; a long
/// task's window is all task), every value null for a row without a breakdown (field data).
#[derive(Serialize)]
pub(crate) struct BreakdownJson<'a> {
    scripting_ms: Option<f64>,
    style_layout_ms: Option<f64>,
    paint_composite_ms: Option<f64>,
    gc_ms: Option<f64>,
    parse_compile_ms: Option<f64>,
    other_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    idle_ms: Option<Option<f64>>,
    forced_layout_ms: Option<f64>,
    forced_layout_function: Option<&'a str>,
}

impl<'a> BreakdownJson<'a> {
    /// The keys of `b` (nulls for `None`); `idle`: whether the row has `idle_ms`.
    pub(crate) fn new(b: Option<&'a Breakdown>, idle: bool) -> Self {
        let ms = b
            .map(|b| breakdown_times(b).map(|t| Some(millis_number(t))))
            .unwrap_or([None; 7]);
        BreakdownJson {
            scripting_ms: ms[0],
            style_layout_ms: ms[1],
            paint_composite_ms: ms[2],
            gc_ms: ms[3],
            parse_compile_ms: ms[4],
            other_ms: ms[5],
            idle_ms: idle.then(|| b.map(|b| millis_number(b.idle))),
            forced_layout_ms: ms[6],
            forced_layout_function: b.map(|b| b.forced_by.as_str()).filter(|f| !f.is_empty()),
        }
    }
}

/// The breakdown's CSV columns, with `idle_ms` or without (in [`csv_fields`]' order).
pub(crate) fn csv_columns(idle: bool) -> impl Iterator<Item = &'static str> {
    [
        "scripting_ms",
        "style_layout_ms",
        "paint_composite_ms",
        "gc_ms",
        "parse_compile_ms",
        "other_ms",
        "idle_ms",
        "forced_layout_ms",
        "forced_layout_function",
    ]
    .into_iter()
    .filter(move |c| idle || *c != "idle_ms")
}

/// Appends the breakdown's CSV fields (ms with 3 decimals; empty for `None`) in
/// [`csv_columns`]' order.
pub(crate) fn csv_fields(b: Option<&Breakdown>, idle: bool, out: &mut Vec<String>) {
    let text = |t: crate::time::TimeDelta| {
        let mut s = String::new();
        let _ = fmt_millis3(t.as_nanos(), &mut s);
        s
    };
    let Some(b) = b else {
        out.extend(std::iter::repeat_n(
            String::new(),
            csv_columns(idle).count(),
        ));
        return;
    };
    let t = breakdown_times(b);
    out.extend(t[..6].iter().map(|&t| text(t)));
    if idle {
        out.push(text(b.idle));
    }
    out.push(text(t[6]));
    out.push(b.forced_by.clone());
}

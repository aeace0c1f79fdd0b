//! Chains of an interaction's three phases (docs/METHOD.md §2.8): each phase is a window
//! on the interaction's thread, resolved as a long task is (largest group of same-stack
//! samples, parent walk, confidence = that stack's time ÷ the phase's duration), without
//! lookback (the phases are adjacent: a lookback would reach into the phase before), and
//! never dropped by `--on-low-confidence drop` (an interaction keeps all three phases).

use super::{ChainConfig, ChainStatus, LowConfidencePolicy, TaskChain};
use crate::interactions::Interaction;
use crate::profile::ProfileSet;
use crate::tasks::LongTask;
use crate::time::{TimeDelta, Timestamp};

/// One of an interaction's three phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// Input → the first handler's start (`processingStart`).
    InputDelay,
    /// The first handler's start → the last handler's end (`processingEnd`).
    Processing,
    /// The last handler's end → the next paint.
    PresentationDelay,
}

impl Phase {
    /// The three phases in time order.
    pub const ALL: [Phase; 3] = [
        Phase::InputDelay,
        Phase::Processing,
        Phase::PresentationDelay,
    ];

    /// The report's key: `input_delay`, `processing`, `presentation_delay`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::InputDelay => "input_delay",
            Phase::Processing => "processing",
            Phase::PresentationDelay => "presentation_delay",
        }
    }

    /// The phase's span `[start, end)` on the trace clock; an end before its start (page
    /// times rounded by Chrome) gives an empty span at the start.
    pub fn span(self, i: &Interaction) -> (Timestamp, Timestamp) {
        let e = &i.event;
        let (start, end) = match self {
            Phase::InputDelay => (e.ts, e.processing_start),
            Phase::Processing => (e.processing_start, e.processing_end),
            Phase::PresentationDelay => (e.processing_end, e.end),
        };
        (start, end.max(start))
    }

    /// The phase as a window on the interaction's thread, in the shape of a long task.
    pub(crate) fn window(self, i: &Interaction) -> LongTask {
        let (start, end) = self.span(i);
        LongTask {
            thread: i.event.thread,
            ts: start,
            dur: end.since(start).max(TimeDelta::ZERO),
            incomplete: false,
        }
    }
}

/// The chain of one phase. A phase whose window holds samples but none of JavaScript is
/// `non_js` whatever its largest group's share (no JavaScript ran in it); one without any
/// sample is `no_samples`, as a task's.
pub(crate) fn resolve_phase(
    i: &Interaction,
    phase: Phase,
    profiles: &ProfileSet,
    file: Option<&[u8]>,
    cfg: &ChainConfig,
) -> TaskChain {
    let cfg = ChainConfig {
        lookback: TimeDelta::ZERO,
        policy: match cfg.policy {
            LowConfidencePolicy::Drop => LowConfidencePolicy::Flag,
            p => p,
        },
        ..*cfg
    };
    let mut c = super::resolve(&phase.window(i), profiles, file, &cfg)
        .expect("a phase is never dropped: the policy is not Drop");
    if c.window_samples > 0 && c.js_samples == 0 {
        c.status = ChainStatus::NonJs;
    }
    c
}

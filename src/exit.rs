//! Exit codes, for people and for schedulers (a Kubernetes `podFailurePolicy`, a CI step,
//! a retry loop): each says what a rerun of the same command can change.
//!
//! | code | meaning | rerun? |
//! | --- | --- | --- |
//! | 0 | every input was read (and every gate passed) | — |
//! | 1 | a `--budget` or `compare --fail-on-regression` gate failed | no: the traces say so |
//! | 2 | bad usage, or an input could not be read (missing, not a trace, bad JSON or gzip) | no |
//! | 75 | an I/O failure a retry may fix: reading an input or writing an output failed with `EIO`, no space, a quota, a stale NFS handle, too many open files, … | yes |
//! | 130 | interrupted (SIGINT, SIGTERM): no output was put in place | yes |
//!
//! 75 is `EX_TEMPFAIL` of BSD's `sysexits.h` ("try again later"). When a run has both a
//! bad input and a retryable failure it exits 75: the retry reads the rest, then reports
//! the bad input with 2. Outputs are complete for every input that was read, whatever the
//! code.

/// Every input was read, every gate passed.
pub const OK: u8 = 0;
/// A budget or regression gate failed.
pub const GATE: u8 = 1;
/// Bad usage or an input that stays bad: never worth a retry.
pub const BAD_INPUT: u8 = 2;
/// An I/O failure a retry may fix (`EX_TEMPFAIL`).
pub const RETRYABLE: u8 = 75;
/// Interrupted by SIGINT or SIGTERM.
pub const INTERRUPTED: u8 = 130;

/// The code of a run that finished: `retryable` inputs failed for a reason a retry may
/// fix, `bad` inputs could not be read, a gate failed.
pub fn of_run(retryable: usize, bad: usize, gate_failed: bool) -> u8 {
    if retryable > 0 {
        RETRYABLE
    } else if bad > 0 {
        BAD_INPUT
    } else if gate_failed {
        GATE
    } else {
        OK
    }
}

#[cfg(feature = "cli")]
/// The code of a run stopped by `err` (an output that could not be written, a list of
/// files that could not be read): [`RETRYABLE`] when an I/O error in its chain is one a
/// retry may fix, else [`BAD_INPUT`].
pub fn of_error(err: &anyhow::Error) -> u8 {
    let retryable = err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(crate::error::io_retryable)
            || e.downcast_ref::<crate::error::Error>()
                .is_some_and(crate::error::Error::is_retryable)
    });
    if retryable { RETRYABLE } else { BAD_INPUT }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_comes_before_bad_input_before_a_gate() {
        assert_eq!(of_run(1, 1, true), RETRYABLE);
        assert_eq!(of_run(0, 1, true), BAD_INPUT);
        assert_eq!(of_run(0, 0, true), GATE);
        assert_eq!(of_run(0, 0, false), OK);
    }

    #[cfg(feature = "cli")]
    #[test]
    fn a_full_disk_is_retryable_a_missing_folder_is_not() {
        use anyhow::Context;
        let full: anyhow::Result<()> = Err(std::io::Error::from_raw_os_error(28).into());
        assert_eq!(
            of_error(&full.context("cannot write out.csv").unwrap_err()),
            RETRYABLE
        );
        let missing: anyhow::Result<()> = Err(std::io::Error::from_raw_os_error(2).into());
        assert_eq!(
            of_error(&missing.context("cannot write x/out.csv").unwrap_err()),
            BAD_INPUT
        );
    }
}

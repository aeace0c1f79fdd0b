//! The `taskchain` command: parse the flags, run the job, print the summary, exit 0 (all
//! files read), 1 (a budget or regression gate failed), 2 (bad usage, or a file could not
//! be read).

use std::process::ExitCode;

use clap::Parser;
use taskchain::cli::{Cli, Job};

/// mimalloc: a trace's analysis makes ~10⁶ small allocations (call frames, per-event
/// values) across threads; glibc's allocator spent ~5% of the run in them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let job = match Cli::parse().into_job() {
        Ok(j) => j,
        Err(msg) => {
            eprintln!("taskchain: error: {msg}");
            return ExitCode::from(2);
        }
    };
    taskchain::batch::remove_on_interrupt();
    let result = match &job {
        Job::Report(cfg) => taskchain::run(cfg).map(|o| {
            if !cfg.quiet {
                eprintln!("{}", o.summary.line());
            }
            exit_code(o.summary.failed > 0, !o.breaches.is_empty())
        }),
        Job::Compare(cfg) => taskchain::compare::run(cfg).map(|o| {
            exit_code(
                o.failed > 0,
                o.regressions > 0 && cfg.fail_on_regression.is_some(),
            )
        }),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("taskchain: error: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// 2 when a file could not be read (the gate's data is incomplete), else 1 when a gate
/// failed, else 0.
fn exit_code(failed_files: bool, gate_failed: bool) -> ExitCode {
    if failed_files {
        ExitCode::from(2)
    } else if gate_failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

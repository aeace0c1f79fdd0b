//! The `taskchain` command: parse the flags, run the batch, print the summary, exit
//! 0 (all files read), 2 (bad usage, or a file could not be read).

use std::process::ExitCode;

use clap::Parser;
use taskchain::cli::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match cli.into_config() {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("taskchain: error: {msg}");
            return ExitCode::from(2);
        }
    };
    match taskchain::run(&config) {
        Ok(summary) => {
            if !config.quiet {
                eprintln!("{}", summary.line());
            }
            if summary.failed > 0 {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("taskchain: error: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

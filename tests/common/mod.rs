//! Helpers shared by the integration tests.

#![allow(dead_code)] // each test crate uses part of these

use std::path::{Path, PathBuf};

use clap::Parser;
use taskchain::batch::{analyze_all, write_to};
use taskchain::cli::{Cli, Job};
use taskchain::report::Format;

/// The folder of a sample case.
pub fn case_dir(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(case)
}

/// The trace file of a case (relative to the package root, as reports show it).
pub fn trace_path(case: &str) -> PathBuf {
    let dir = case_dir(case);
    let name = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("trace."))
        .unwrap_or_else(|| panic!("no trace.* in {}", dir.display()));
    Path::new("samples").join(case).join(name)
}

/// The extra command-line arguments of a case (`samples/<case>/args`).
pub fn case_args(case: &str) -> Vec<String> {
    std::fs::read_to_string(case_dir(case).join("args"))
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Runs the library as the command line would and returns the report bytes.
pub fn report(args: &[String], paths: &[PathBuf], format: Format, jobs: usize) -> Vec<u8> {
    let mut argv: Vec<String> = vec!["taskchain".into(), "-q".into()];
    argv.extend(args.iter().cloned());
    argv.extend(paths.iter().map(|p| p.display().to_string()));
    let Job::Report(cfg) = Cli::try_parse_from(argv).unwrap().into_job().unwrap() else {
        panic!("not a report job")
    };
    let res = analyze_all(&cfg.paths, &cfg.analysis, jobs, true).unwrap();
    let mut out = Vec::new();
    write_to(&mut out, format, &res.rows, &res.errors).unwrap();
    out
}

/// Makes a FIFO at `path` (Unix).
pub fn mkfifo(path: &Path) {
    assert!(
        std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap()
            .success()
    );
}

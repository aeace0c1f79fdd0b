//! Command line: clap's `Cli` (flags only) → the validated [`Config`].

use std::path::PathBuf;

use clap::Parser;

use crate::chain::{ChainConfig, LowConfidencePolicy, Method};
use crate::report::Format;
use crate::tasks::Scope;
use crate::time::TimeDelta;
use crate::{Config, Settings};

const EXAMPLES: &str = "Examples:
  taskchain recording.json.gz                        CSV of long tasks and their chains
  taskchain traces/ --format json -o report.json     every trace under traces/, as JSON
  zcat trace.json.gz | taskchain - --scope renderers  a trace from standard input

Exit codes: 0 every file was read; 2 bad usage, or a file could not be read (the other
files' rows are still written).";

/// More threads than this only add overhead (each is a rayon worker with its own stack).
const MAX_JOBS: usize = 256;

/// Finds long tasks in Chrome trace files and names the JavaScript call chain that caused
/// each one, with a confidence figure.
#[derive(Debug, Parser)]
#[command(name = "taskchain", version, about, after_help = EXAMPLES, allow_negative_numbers = true)]
pub struct Cli {
    /// Trace files (.json, .json.gz) or folders searched for them; `-` reads standard input.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Write the report here instead of standard output (`-` = standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    pub format: Format,
    /// Worker threads (default: available cores; at most 256).
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Which threads' long tasks are reported.
    #[arg(long, value_enum, default_value_t = Scope::MainFrame)]
    pub scope: Scope,
    /// A task is long when its duration is over this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 50.0)]
    pub threshold_ms: f64,
    /// Also count samples this many milliseconds before a task's start.
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    pub lookback_ms: f64,
    /// Below this confidence (0–1) a task is low confidence.
    #[arg(long, value_name = "X", default_value_t = 0.5)]
    pub min_confidence: f64,
    /// What to do with low-confidence tasks.
    #[arg(long, value_enum, value_name = "POLICY", default_value_t = LowConfidencePolicy::Flag)]
    pub on_low_confidence: LowConfidencePolicy,
    /// How the target stack is chosen.
    #[arg(long, value_enum, default_value_t = Method::LargestStack)]
    pub method: Method,
    /// No progress bar, warnings or summary on stderr (errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,
}

impl Cli {
    /// Validates the flags. Errors name the flag and the allowed range.
    pub fn into_config(self) -> Result<Config, String> {
        let ms = |name: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(TimeDelta::from_millis_f64(v))
            } else {
                Err(format!("{name} must be a number ≥ 0, got {v}"))
            }
        };
        let threshold = ms("--threshold-ms", self.threshold_ms)?;
        let lookback = ms("--lookback-ms", self.lookback_ms)?;
        if !(0.0..=1.0).contains(&self.min_confidence) {
            return Err(format!(
                "--min-confidence must be between 0 and 1, got {}",
                self.min_confidence
            ));
        }
        let jobs = match self.jobs {
            Some(0) => return Err("--jobs must be at least 1".into()),
            Some(n) => n.min(MAX_JOBS),
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        Ok(Config {
            paths: self.paths,
            output: self.output,
            format: self.format,
            jobs,
            quiet: self.quiet,
            analysis: Settings {
                scope: self.scope,
                threshold,
                chain: ChainConfig {
                    lookback,
                    min_confidence: self.min_confidence,
                    policy: self.on_low_confidence,
                    method: self.method,
                },
            },
        })
    }
}

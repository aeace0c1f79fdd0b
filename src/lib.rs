//! taskchain finds every long task in Chrome trace files and names the JavaScript call
//! chain that caused it, with a confidence figure, from the V8 CPU profiler samples
//! already in the trace.
//!
//! # The front door
//!
//! [`analyze_path`] analyses one file (a trace, `.json` or `.json.gz`; a JS
//! Self-Profiling field bundle; a `.cpuprofile`) with [`Settings`] and returns its
//! [`FileReport`]: one [`report::ReportRow`] per long task, or an [`Error`] that names the
//! file and says what is wrong. [`analyze_bytes`] does the same for bytes in memory.
//!
//! ```
//! let report = taskchain::analyze_path(
//!     std::path::Path::new("samples/cpu-profiler-m86/trace.json.gz"),
//!     &taskchain::Settings::default(),
//! )?;
//! for row in &report.rows {
//!     println!("{:?} {}", row.status, taskchain::report::chain_text(&row.chain));
//! }
//! # Ok::<(), taskchain::Error>(())
//! ```
//!
//! # The pipeline
//!
//! One module per stage, each importing only the ones before it (docs/ARCHITECTURE.md):
//! the input is read into bytes (mmap, or a gzip decoder), the event array found and its
//! events walked with a JSON lexer of our own, keeping the few that matter; each V8 profile
//! is rebuilt as sample / stack / frame tables; [`tasks`] finds the top-level tasks of the
//! renderer main threads and keeps the long ones; [`chain`] resolves each long task's call
//! chain and confidence; [`enrich`] adds what the frames mean (source maps, the page,
//! parties); [`report`] holds the rows and writes CSV, JSON, NDJSON, Markdown or Parquet;
//! [`gate`] checks a file's figures against budgets. [`vocab`] and [`time`] hold the ids,
//! counts and times every stage shares; [`exit`] the exit codes of the `taskchain` command.
//! The stages themselves are private: [`analyze_path`] runs a file through them.
#![warn(missing_docs, unreachable_pub)]

/// `eprintln!` that cannot panic: a line standard error cannot take (a closed pipe, a full
/// disk) is dropped, so that the report is still written and the exit code still says how
/// the run went (`eprintln!` panics there, ending the run with exit code 101). Control
/// characters from the input (names, file names) are escaped ([`report::text::printable`]),
/// so that a message stays one line and cannot forge another or drive the terminal.
#[allow(unused_macros)]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($arg)*);
        let _ = writeln!(std::io::stderr(), "{}", $crate::report::text::printable(&line));
    }};
}

mod analyze;
#[cfg(feature = "cli")]
mod batch;
pub mod chain;
#[cfg(feature = "cli")]
mod cli;
#[cfg(feature = "cli")]
mod compare;
pub mod enrich;
pub mod error;
pub mod exit;
pub mod gate;
mod input;
pub mod interactions;
mod json;
#[cfg(feature = "cli")]
mod output;
mod profile;
mod reader;
#[cfg(feature = "record")]
mod record;
pub mod report;
mod scan;
pub mod tasks;
pub mod time;
pub mod vocab;

pub use analyze::{
    RowSink, RowSinkFn, Settings, StageDone, StageDoneFn, analyze_bytes, analyze_path,
};
pub use error::Error;
pub use reader::field::{Loaf, TaskEntries};
pub use report::{FileReport, FileStats};

/// The stages' own entry points, for the `taskchain` binary, `benches/`, `tools/`, the
/// fuzz targets and the integration tests: not the library's API, and free to change in
/// any release. Each module here names the private stage module it re-exports from.
#[doc(hidden)]
pub mod internals {
    pub use crate::analyze::analyze_stream;
    pub use crate::input::BlockSource;

    /// Inputs: the gzip decoder, the record of closed standard descriptors (`src/input`).
    pub mod input {
        pub use crate::input::gzip::{GzipReader, one_member_into};
        pub use crate::input::record_std_fds_at_start;
        pub use crate::input::{InflatedBytes, inflated_whole, inflated_whole_size};
    }

    /// The JSON lexer's number readers (`src/json`).
    pub mod json {
        pub use crate::json::{
            PlainSum, Token, digit_array_end, int_array, plain_sum, plain_uints, plain_uints_into,
        };
        /// Every instruction set's copy of the array kernels, for the `kernels` fuzz target.
        pub mod copies {
            pub use crate::json::LexError;
            pub use crate::json::copies::{
                BlockResults, Copies, blocks_on_every_copy, every_copy, skips_on_every_copy,
            };
        }
    }

    /// The envelope, the event walk and the scan (`src/scan`).
    pub mod scan {
        pub use crate::scan::args::ArgsParser;
        pub use crate::scan::chunk::{count_elements, summarize_deltas};
        pub use crate::scan::envelope::{Envelope, detect};
        pub use crate::scan::event::{KeyGuess, TraceEvent};
        pub use crate::scan::proto::{
            Sniff, scan_bytes as scan_proto, scan_stream as scan_proto_stream, sniff as sniff_proto,
        };
        pub use crate::scan::split::with_range_bytes;
        pub use crate::scan::{Collector, ScannedTrace, nodes_both_ways, scan, walk};
    }

    /// The field-data readers' JSON objects (`src/reader`).
    pub mod reader {
        pub use crate::reader::lexed::{Members, Numbers};
    }

    /// V8 profiles rebuilt as tables (`src/profile`).
    pub mod profile {
        pub use crate::profile::{ProfileSet, build};
    }

    /// Top-level and long tasks (`src/tasks.rs`).
    pub mod tasks {
        pub use crate::tasks::{Scope, long_tasks, threads_in_scope, top_level_tasks};
    }

    /// Source maps and original sources read for names (`src/enrich/symbolicate`).
    pub mod symbolicate {
        pub use crate::enrich::symbolicate::{Probe, probe_map};
    }

    /// Chain resolution (`src/chain`).
    pub mod chain {
        pub use crate::chain::{ChainConfig, Method, resolve};
    }

    /// The command line, runs over many files, comparisons and output files (the `cli`
    /// feature).
    #[cfg(feature = "cli")]
    pub mod cli {
        pub use crate::batch::{analyze_all, run};
        pub use crate::cli::{Cli, Job, completions, mistyped_in_args};
        pub use crate::compare::run as compare;
        pub use crate::output::interrupted;
        pub use crate::output::remove_on_interrupt;
        #[cfg(feature = "record")]
        pub use crate::record::run as record;
        pub use crate::report::text::printable;
    }
}

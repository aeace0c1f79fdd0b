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
//! [`input`] reads a path into bytes (mmap, or a gzip decoder); [`scan`] finds the event
//! array ([`scan::envelope`]), walks the events and keeps the few that matter, with the
//! JSON lexer of [`json`]; [`profile`] rebuilds each V8 profile as sample / stack / frame
//! tables; [`tasks`] finds the top-level tasks of the renderer main threads and keeps the
//! long ones; [`reader`] makes each input kind (a trace, field data) one [`reader::Recording`];
//! [`chain`] resolves each long task's call chain and confidence; [`enrich`] adds what the
//! frames mean (the page, parties); [`report`] writes CSV, JSON or NDJSON. [`analyze`] runs one file through those stages; [`batch`] runs many
//! files in parallel, writing through [`output`]; [`compare`] and [`gate`] judge the
//! results. [`vocab`] holds the ids and counts every stage shares.

pub mod analyze;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod batch;
pub mod chain;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod compare;
pub mod enrich;
pub mod error;
pub mod exit;
pub mod gate;
#[doc(hidden)]
pub mod input;
#[doc(hidden)]
pub mod json;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod output;
#[doc(hidden)]
pub mod profile;
pub mod reader;
pub mod report;
#[doc(hidden)]
pub mod scan;
pub mod tasks;
pub mod time;
pub mod vocab;

pub use analyze::{Settings, analyze_bytes, analyze_path, analyze_stream};
#[cfg(feature = "cli")]
pub use batch::{BatchSummary, Config, Outputs, run};
pub use error::Error;
pub use report::{FileReport, FileStats};

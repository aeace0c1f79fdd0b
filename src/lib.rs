//! taskchain finds every long task in Chrome trace files and names the JavaScript call
//! chain that caused it, with a confidence figure, from the V8 CPU profiler samples
//! already in the trace.
//!
//! The pipeline, one module per stage, each importing only the ones before it:
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
pub mod batch;
pub mod chain;
pub mod cli;
pub mod compare;
pub mod enrich;
pub mod error;
pub mod gate;
pub mod input;
pub mod json;
pub mod output;
pub mod profile;
pub mod reader;
pub mod report;
pub mod scan;
pub mod tasks;
pub mod time;
pub mod vocab;

pub use analyze::{Settings, analyze_bytes, analyze_stream};
pub use batch::{BatchSummary, Config, Outputs, run};
pub use report::{FileReport, FileStats};

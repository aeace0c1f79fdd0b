//! The integration tests, one binary (`autotests = false` in Cargo.toml): a module per
//! subject, with the shared helpers of [`common`] (`taskchain()`, `golden()`, …).
//! `BLESS=1 cargo test` rewrites the golden files that differ and names each one on
//! stderr.

mod batch;
mod cli;
mod cli_conventions;
mod common;
mod compare_builds;
mod edge_cases;
mod field;
mod frames;
mod fuzz_regressions;
mod ground_truth;
mod hostile;
mod html_report;
mod interactions;
mod layers;
pub mod lossless;
mod memory;
mod packaging;
#[path = "parquet.rs"]
mod parquet_outputs;
mod parties;
mod proto;
#[cfg(feature = "record")]
mod record;
mod samples;
mod scale_out;
mod sourcemaps;
mod strict;

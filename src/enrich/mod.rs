//! Enrichment: after chain resolution, before the reports. [`symbolicate`] gives frames
//! their original names and positions from source maps.

pub mod symbolicate;

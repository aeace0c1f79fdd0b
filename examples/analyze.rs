//! The library's front door: analyse one trace and print its long tasks.
//!
//! Usage: cargo run --release --example analyze -- TRACE [THRESHOLD_MS]

use std::path::Path;

use taskchain::report::{chain_text, millis_text};
use taskchain::time::TimeDelta;
use taskchain::{Settings, analyze_path};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: analyze TRACE [THRESHOLD_MS]")?;
    let mut settings = Settings::default();
    if let Some(ms) = args.next() {
        settings.threshold = TimeDelta::from_millis_f64(ms.parse()?);
    }
    let report = analyze_path(Path::new(&path), &settings)?;
    println!(
        "{}: {} long tasks of {} top-level tasks, {} ms blocking",
        report.file,
        report.rows.len(),
        report.stats.top_level_tasks,
        millis_text(report.stats.blocking_time)
    );
    for row in &report.rows {
        println!(
            "{:>9} ms  {:<12} {:.2}  {}",
            millis_text(row.task_dur),
            format!("{:?}", row.status),
            row.confidence,
            chain_text(&row.chain)
        );
    }
    Ok(())
}

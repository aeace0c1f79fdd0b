//! Single-thread speed of the pipeline's stages on one plain trace file, for finding where
//! time goes (`perf record` it). Usage:
//!
//! `cargo run --release --example stagespeed -- walk|collect|chains FILE`
//!
//! - `walk`: the event walk alone (top level of every event, nothing kept);
//! - `collect`: the walk with the scan's collector (what matters is kept);
//! - `chains`: everything up to the long tasks, then times chain resolution alone.

use taskchain::internals::scan::{self, Collector, Envelope};
use taskchain::internals::{chain, profile, tasks};
use taskchain::vocab::Diagnostics;

fn main() {
    let mut args = std::env::args().skip(1);
    let (stage, path) = (args.next().expect("stage"), args.next().expect("FILE"));
    let file = std::fs::File::open(&path).expect("open");
    // SAFETY: read-only map of a benchmark file nobody truncates meanwhile.
    let b = unsafe { memmap2::Mmap::map(&file).expect("map") };
    let Envelope::Events { start, .. } = scan::detect(&b).expect("a trace") else {
        panic!("not a trace")
    };
    let t = std::time::Instant::now();
    let what = match stage.as_str() {
        "walk" => {
            let w = scan::walk(&b, start, usize::MAX, false, |ev| {
                std::hint::black_box(ev.ts());
            });
            format!("{} events", w.events)
        }
        "collect" => {
            let mut c = Collector::over_file(&b);
            let w = scan::walk(&b, start, usize::MAX, false, |ev| c.event(ev));
            format!("{} events", w.events)
        }
        "chains" => {
            let mut tr = scan::scan(&b, start, true).expect("scan");
            let mut d = Diagnostics::default();
            let threads = tasks::threads_in_scope(&tr, tasks::Scope::Renderers);
            let end = tr.last_ts.unwrap_or_default();
            let top = tasks::top_level_tasks(&tr.task_marks, &threads, end, &mut d);
            let long = tasks::long_tasks(&top, taskchain::time::TimeDelta::from_micros(50_000));
            let profiles = profile::build(&mut tr, &mut d);
            let cfg = chain::ChainConfig::default();
            let t = std::time::Instant::now();
            let n = long
                .iter()
                .filter_map(|task| chain::resolve(task, &profiles, Some(&b), &cfg))
                .count();
            println!("chains alone: {n} tasks in {:?}", t.elapsed());
            // The windows' samples alone (read, placed, sorted), without resolving.
            let t = std::time::Instant::now();
            let file: &[u8] = &b;
            let rows: usize = long
                .iter()
                .flat_map(|task| {
                    let start = task.ts - cfg.lookback;
                    profiles
                        .of_thread(task.thread)
                        .map(move |p| p.window(start, task.end(), Some(file)).table.ts.len())
                })
                .sum();
            println!("windows alone: {rows} rows in {:?}", t.elapsed());
            format!("{n} tasks")
        }
        other => panic!("unknown stage {other}"),
    };
    let e = t.elapsed();
    println!(
        "{stage}: {what} in {e:?}, {:.0} MB/s",
        b.len() as f64 / e.as_secs_f64() / 1e6
    );
}

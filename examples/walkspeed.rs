fn main() {
    let path = std::env::args().nth(1).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let b = unsafe { memmap2::Mmap::map(&f).unwrap() };
    let start = match taskchain::input::envelope::detect(&b).unwrap() {
        taskchain::input::envelope::Envelope::Events { start, .. } => start,
        _ => panic!(),
    };
    for mode in 0..3 {
        let t = std::time::Instant::now();
        let mut n = 0u64;
        let mut x = 0i64;
        let w = taskchain::scan::walk(&b, start, usize::MAX, false, |ev| {
            n += 1;
            if mode >= 1 {
                x += ev.ts().map_or(0, |t| t.as_nanos());
            }
            if mode >= 2 {
                x += ev.pid() + ev.tid();
            }
        });
        let e = t.elapsed();
        println!(
            "mode {mode}: {n} events {:?} {:.0} MB/s {:.0} ns/event {x} {:?}",
            e,
            b.len() as f64 / e.as_secs_f64() / 1e6,
            e.as_nanos() as f64 / n as f64,
            w.end
        );
    }
    let t = std::time::Instant::now();
    let mut c = taskchain::scan::Collector::over_file(&b);
    taskchain::scan::walk(&b, start, usize::MAX, false, |ev| c.event(&ev));
    let e = t.elapsed();
    println!(
        "collector: {:?} {:.0} MB/s",
        e,
        b.len() as f64 / e.as_secs_f64() / 1e6
    );
}

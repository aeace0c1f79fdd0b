fn main() {
    let path = std::env::args().nth(1).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let b = unsafe { memmap2::Mmap::map(&f).unwrap() };
    let taskchain::input::envelope::Envelope::Events { start, .. } =
        taskchain::input::envelope::detect(&b).unwrap()
    else {
        panic!()
    };
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

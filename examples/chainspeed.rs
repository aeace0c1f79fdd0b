use taskchain::scan::{self, Diagnostics};
use taskchain::{chain, profile, tasks};
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let b = unsafe { memmap2::Mmap::map(&f).unwrap() };
    let taskchain::input::envelope::Envelope::Events { start, .. } =
        taskchain::input::envelope::detect(&b).unwrap()
    else {
        panic!()
    };
    let mut t = scan::scan(&b, start, true).unwrap();
    let mut d = Diagnostics::default();
    let threads = tasks::threads_in_scope(&t, tasks::Scope::Renderers);
    let top = tasks::top_level_tasks(&t.task_marks, &threads, t.last_ts.unwrap(), &mut d);
    let long = tasks::long_tasks(&top, taskchain::time::TimeDelta::from_micros(50_000));
    let profiles = profile::build(&mut t, &mut d);
    let cfg = chain::ChainConfig::default();
    let t0 = std::time::Instant::now();
    let n = long
        .iter()
        .filter_map(|task| chain::resolve(task, &profiles, Some(&b), &cfg))
        .count();
    println!("{n} tasks resolved in {:?}", t0.elapsed());
}

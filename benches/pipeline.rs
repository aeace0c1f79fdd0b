//! Criterion benchmarks, one group per pipeline stage, on real sample traces (decompressed
//! outside the timed loop). Throughput is in bytes of trace JSON. Variants that should be
//! compared run side by side in one group (the machine is noisy): 1 thread vs all threads.
//!
//! `cargo bench --bench pipeline` (CI only builds them: `cargo bench --no-run`).

use std::hint::black_box;
use std::io::Read;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use taskchain::Settings;
use taskchain::internals::scan::{self, Envelope};
use taskchain::internals::{chain, profile, tasks};
use taskchain::vocab::Diagnostics;

/// (name, decompressed bytes, offset of the first event).
fn samples() -> Vec<(&'static str, Vec<u8>, usize)> {
    [
        (
            "m86-profilechunks",
            "samples/cpu-profiler-m86/trace.json.gz",
        ),
        (
            "session-15s-events",
            "samples/chromium-session-15s/trace.json.gz",
        ),
    ]
    .into_iter()
    .map(|(name, path)| {
        let mut raw = Vec::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
            .read_to_end(&mut raw)
            .unwrap();
        let Envelope::Events { start, .. } = scan::detect(&raw).unwrap() else {
            panic!("{path}: not a trace")
        };
        (name, raw, start)
    })
    .collect()
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

fn stages(c: &mut Criterion) {
    let settings = Settings::default();
    for (name, bytes, start) in samples() {
        let mut g = c.benchmark_group(format!("scan/{name}"));
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function("events walked, nothing kept", |b| {
            b.iter(|| {
                scan::walk(black_box(&bytes), start, usize::MAX, false, |ev| {
                    black_box(ev.ph);
                })
            })
        });
        g.bench_function("collect, arrays left in file", |b| {
            b.iter(|| scan::scan(black_box(&bytes), start, true).unwrap())
        });
        g.bench_function("collect, arrays read (stream mode)", |b| {
            b.iter(|| scan::scan(black_box(&bytes), start, false).unwrap())
        });
        g.finish();

        let mut g = c.benchmark_group(format!("profile/{name}"));
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function("build", |b| {
            b.iter_batched(
                || scan::scan(&bytes, start, true).unwrap(),
                |mut t| profile::build(&mut t, &mut Diagnostics::default()),
                BatchSize::LargeInput,
            )
        });
        g.finish();

        let mut t = scan::scan(&bytes, start, true).unwrap();
        let mut d = Diagnostics::default();
        let threads = tasks::threads_in_scope(&t, tasks::Scope::Renderers);
        let top = tasks::top_level_tasks(&t.task_marks, &threads, t.last_ts.unwrap(), &mut d);
        let long = tasks::long_tasks(&top, settings.threshold);
        let profiles = profile::build(&mut t, &mut d);
        let mut g = c.benchmark_group(format!("chain/{name}"));
        g.throughput(Throughput::Elements(long.len() as u64));
        for method in [chain::Method::LargestStack, chain::Method::HeaviestPath] {
            let cfg = chain::ChainConfig {
                method,
                ..settings.chain
            };
            g.bench_function(format!("{method:?}"), |b| {
                b.iter(|| {
                    long.iter()
                        .filter_map(|task| chain::resolve(task, &profiles, Some(&bytes), &cfg))
                        .count()
                })
            });
        }
        g.finish();

        let mut g = c.benchmark_group(format!("end_to_end/{name}"));
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        for threads in [1, 2] {
            let p = pool(threads);
            g.bench_function(format!("{threads} threads"), |b| {
                b.iter(|| p.install(|| taskchain::analyze_bytes("t", &bytes, &settings).unwrap()))
            });
        }
        g.finish();
    }
}

/// The hot loop of a profile: a chunk's `timeDeltas` (100 deltas of 2–4 digits, as
/// Chrome writes them) summed on the fast path and, with a space after each comma, on the
/// general path; and read into a buffer value by value (as a long task's window reads
/// them) one number at a time and four at a time; side by side.
fn number_arrays(c: &mut Criterion) {
    let mut x: u64 = 1;
    let deltas: Vec<String> = (0..100)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (50 + (x >> 33) % 1200).to_string()
        })
        .collect();
    let mut g = c.benchmark_group("timeDeltas");
    g.throughput(Throughput::Elements(100));
    for (name, sep) in [("fast path", ","), ("general path", ", ")] {
        let b = format!("[{}]", deltas.join(sep)).into_bytes();
        g.bench_function(name, |bench| {
            bench.iter(|| scan::summarize_deltas(black_box(&b), &(0..b.len()), 100))
        });
    }
    let b = format!("[{}]", deltas.join(",")).into_bytes();
    let mut out = vec![0u32; 100];
    g.bench_function("values, one at a time", |bench| {
        bench.iter(|| {
            let mut k = 0;
            taskchain::internals::json::plain_uints(black_box(&b), &(0..b.len()), |v| {
                out[k % 100] = v as u32;
                k += 1;
            })
        })
    });
    g.bench_function("values, four at a time", |bench| {
        bench.iter(|| {
            taskchain::internals::json::plain_uints_into(black_box(&b), &(0..b.len()), &mut out)
        })
    });
    g.finish();
}

/// Parties: a registrable-domain lookup (the Public Suffix List compiled in), a host's whole
/// classification (overrides, then the bundled entities), and one file end to end with
/// parties on and off, side by side.
fn parties(c: &mut Criterion) {
    use taskchain::enrich::party::{Parties, registrable_domain};
    let hosts = [
        "www.shop.test",
        "img.shop-cdn.co.uk",
        "www.googletagmanager.com",
        "cdn.me.github.io",
        "d1234.cloudfront.net",
        "a.b.c.kawasaki.jp",
        "127.0.0.1",
        "chat.unknownwidget.example",
    ];
    let mut g = c.benchmark_group("parties");
    g.throughput(Throughput::Elements(hosts.len() as u64));
    g.bench_function("registrable_domain", |b| {
        b.iter(|| {
            for h in hosts {
                black_box(registrable_domain(black_box(h)));
            }
        })
    });
    let p = Parties::new();
    g.bench_function("of_host", |b| {
        b.iter(|| {
            for h in hosts {
                black_box(p.of_host(black_box(h), Some("shop.test")));
            }
        })
    });
    g.finish();

    let mut raw = Vec::new();
    flate2::read::MultiGzDecoder::new(
        std::fs::File::open("samples/chromium-session-15s/trace.json.gz").unwrap(),
    )
    .read_to_end(&mut raw)
    .unwrap();
    let mut g = c.benchmark_group("end_to_end/session-15s-parties");
    g.throughput(Throughput::Bytes(raw.len() as u64));
    let on = Settings::default();
    let mut off = Settings::default();
    off.enrich.parties = None;
    for (name, s) in [("parties off", &off), ("parties on", &on)] {
        g.bench_function(name, |b| {
            b.iter(|| taskchain::analyze_bytes("t", &raw, s).unwrap())
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(std::time::Duration::from_secs(1));
    targets = stages, number_arrays, parties
}
criterion_main!(benches);

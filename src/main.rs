//! The `taskchain` command: parse the flags, run the job, print the summary, exit with
//! the code of [`taskchain::exit`]: 0 all files read, 1 a gate failed, 2 bad usage or an
//! input that could not be read, 75 an I/O failure a retry may fix.

use std::process::ExitCode;

/// `eprintln!` that cannot panic: a line standard error cannot take (a closed pipe, a full
/// disk) is dropped, and the exit code still says how the run went. Control characters
/// from the input are escaped (`printable`), so that a message stays one line.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($arg)*);
        let _ = writeln!(std::io::stderr(), "{}", cli::printable(&line));
    }};
}

use clap::{CommandFactory, FromArgMatches};
use taskchain::exit;
use taskchain::internals::cli::{self, Cli, Job};

/// `taskchain --version`: the package version and the commit it was built from, when the
/// build knew it (`build.rs`).
const LONG_VERSION: &str = env!("TASKCHAIN_LONG_VERSION");

/// mimalloc: a trace's analysis makes ~10⁶ small allocations (call frames, per-event
/// values) across threads; glibc's allocator spent ~5% of the run in them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in the `mi_option_e` of the mimalloc 3 that libmimalloc-sys 0.1.49
/// builds (`c_src/mimalloc/v3/include/mimalloc.h`; the version is pinned for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// `mi_option_arena_max_object_size` there (a size in KiB).
const MI_OPTION_ARENA_MAX_OBJECT_SIZE: libmimalloc_sys::mi_option_t = 45;

/// Which standard descriptors were closed at start, looked at before Rust's runtime puts
/// `/dev/null` in their place ([`taskchain::internals::input::record_std_fds_at_start`]): so that
/// `>&-` is refused ("standard output is closed") and a `/dev/null` opened read-write on
/// purpose is written to. ELF systems run `.init_array` entries before `main`, macOS its
/// `__mod_init_func` ones; elsewhere the library's guess stands.
#[cfg(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly",
    target_os = "illumos"
))]
#[used]
#[unsafe(link_section = ".init_array")]
static RECORD_STD_FDS: extern "C" fn() = record_std_fds;

#[cfg(target_vendor = "apple")]
#[used]
#[unsafe(link_section = "__DATA,__mod_init_func")]
static RECORD_STD_FDS: extern "C" fn() = record_std_fds;

#[allow(dead_code)] // on systems without a constructor section
extern "C" fn record_std_fds() {
    taskchain::internals::input::record_std_fds_at_start();
}

/// No transparent huge pages for this process (what `MIMALLOC_ALLOW_THP=0` does; mimalloc
/// has already asked for them on its first arena when `main` starts, and the kernel checks
/// this flag at each fault). A fresh huge page is 2 MiB zeroed at its first touch, much of
/// it never used where a thread's heap needs a few KiB, and fresh memory is the dearest
/// thing a run touches on a VM (~3 ms per MiB on the benchmark machine): the 1 GB traces
/// spent 0.3–0.9 s of system time zeroing huge pages, 0.25–0.45 s without them.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes an integer flag and no pointers; failure (an old
    // kernel) leaves huge pages on, which is only slower.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// [`taskchain::Settings::release_freed`]: mimalloc returns the memory freed and kept for
/// reuse to the system now (what the purge delay set in `main` would do 10 s later). On
/// `profile-1g.json.gz` of `scripts/bench.sh` the stream's buffers freed after the scan
/// were otherwise kept while the profiles and chains took fresh memory, and the peak
/// was the scan's plus what those took.
fn release_freed() {
    // SAFETY: takes no pointers; mimalloc allows it from any thread at any time.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

fn main() -> ExitCode {
    end_now(run())
}

/// The program: its exit code (see [`exit`]).
fn run() -> u8 {
    // Freed memory stays with the process for reuse for 10 s, not 10 ms: on this workload
    // (memory freed and taken again all through a file, file after file) every purged
    // page came back as a fresh page the kernel had to zero (sys time 0.18 → 0.12 s on a
    // 1 GB trace). Where much is freed at once and not taken back (a stream's read
    // buffers after its scan) the library calls `release_freed`, which returns it at
    // once; with no purging at all (−1) nothing could be returned.
    // SAFETY: called before any other thread exists (mimalloc's options are not
    // thread-safe to set); the value is in ms.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 10_000) };
    // Blocks over 64 MiB come from the OS and go back to it when freed (mimalloc's default
    // is 2 GiB): without purging, each doubling of a huge buffer stayed resident. A gzip
    // stream with one 1 GiB event peaked at 4.24 GB, now 3.24 GB (5.8–17.6 s before, 3.7–16.4
    // s after: this VM's cost of fresh pages swings); the 1 and 4 GB benchmark traces showed
    // no difference in time or peak memory, interleaved.
    // SAFETY: as above, before any other thread; the value is in KiB.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_MAX_OBJECT_SIZE, 64 << 10) };
    no_huge_pages();
    // The commit is the binary's to say (the library's `Cli` has the package version).
    let parsed = Cli::command()
        .version(LONG_VERSION)
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(err) => {
            // `taskchain comapre --fail-on-regression 5 …`: say which command was meant
            // rather than which flag the main command does not know.
            if err.use_stderr()
                && let Some(msg) = cli::mistyped_in_args(std::env::args_os())
            {
                say!("taskchain: error: {msg}");
                return exit::BAD_INPUT;
            }
            err.exit()
        }
    };
    let mut job = match cli.into_job() {
        Ok(j) => j,
        Err(msg) => {
            say!("taskchain: error: {msg}");
            return exit::BAD_INPUT;
        }
    };
    let analysis = match &mut job {
        Job::Report(cfg) => Some(&mut cfg.analysis),
        Job::Compare(cfg) => Some(&mut cfg.analysis),
        #[cfg(feature = "record")]
        Job::Record(job) => Some(&mut job.report.analysis),
        Job::Completions(_) => None,
    };
    if let Some(analysis) = analysis {
        analysis.release_freed = Some(release_freed);
        analysis.exit_after_run = true;
    }
    cli::remove_on_interrupt();
    let result = match &job {
        Job::Report(cfg) => cli::run(cfg).map(|o| {
            if !cfg.quiet {
                say!("{}", o.summary.line());
            }
            exit_code(
                o.summary.retryable,
                o.summary.failed - o.summary.retryable,
                !o.breaches.is_empty(),
            )
        }),
        #[cfg(feature = "record")]
        Job::Record(job) => cli::record(job).map(|o| {
            if !job.report.quiet {
                say!("{}", o.summary.line());
            }
            exit_code(
                o.summary.retryable,
                o.summary.failed - o.summary.retryable,
                !o.breaches.is_empty(),
            )
        }),
        Job::Compare(cfg) => cli::compare(cfg).map(|o| {
            exit_code(
                0,
                o.failed,
                o.regressions > 0 && cfg.fail_on_regression.is_some(),
            )
        }),
        Job::Completions(shell) => {
            use std::io::Write;
            let script = cli::completions(*shell);
            std::io::stdout()
                .write_all(&script)
                .map_err(anyhow::Error::from)
                .map(|()| exit::OK)
        }
    };
    // Interrupted: the signal handler ends the process with 130 once it has stopped the
    // browser and removed the temporary files; an error that stopping caused is not said.
    while cli::interrupted() {
        std::thread::park();
    }
    match result {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return exit::OK;
            }
            say!("taskchain: error: {err:#}");
            exit::of_error(&err)
        }
    }
}

/// Ends the process with `code` once standard output is flushed, without the teardown
/// of a normal exit: the memory still held (the last input's map and analysis, which
/// `Settings::exit_after_run` leaves) is the kernel's to reclaim, and mimalloc's own
/// teardown at exit, which returns every page it keeps one `madvise` at a time (~1,400
/// calls after a 1 GB trace), is skipped. Every output file was written and closed
/// before `run` returned; standard error is not buffered.
fn end_now(code: u8) -> ExitCode {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    #[cfg(unix)]
    // SAFETY: `_exit` takes an integer and ends the process; nothing of this process is
    // left unwritten (see above).
    unsafe {
        libc::_exit(i32::from(code))
    }
    #[cfg(not(unix))]
    ExitCode::from(code)
}

/// [`exit::of_run`]: 75 when a retry may read more, else 2 when a file could not be read
/// (the gate's data is incomplete), else 1 when a gate failed, else 0.
fn exit_code(retryable: usize, bad: usize, gate_failed: bool) -> u8 {
    exit::of_run(retryable, bad, gate_failed)
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

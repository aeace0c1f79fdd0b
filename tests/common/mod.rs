//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use taskchain::report::Format;

/// The folder of a sample case.
pub fn case_dir(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(case)
}

/// The shared recording of an esbuild bundle, copied into the repository
/// (`tests/data/sm-esbuild-rundown`: trace, ground truth, `check.py`, the server's mirror
/// `site/`), so that the tests need nothing outside it.
pub fn sm_recording_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sm-esbuild-rundown")
}

/// The trace file of a case (relative to the package root, as reports show it).
pub fn trace_path(case: &str) -> PathBuf {
    let dir = case_dir(case);
    let name = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("trace."))
        .unwrap_or_else(|| panic!("no trace.* in {}", dir.display()));
    Path::new("samples").join(case).join(name)
}

/// The extra command-line arguments of a case (`samples/<case>/args`).
pub fn case_args(case: &str) -> Vec<String> {
    std::fs::read_to_string(case_dir(case).join("args"))
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Runs the `taskchain` binary — the command line's own streaming path: rows written as
/// each file finishes — as `taskchain -q -j JOBS --format FORMAT ARGS... PATHS...` and
/// returns the report it writes to standard output. Panics, with its stderr, when it exits
/// with a code other than 0 or 2 (2: a file could not be read in full, rows still written).
pub fn report(args: &[String], paths: &[PathBuf], format: Format, jobs: usize) -> Vec<u8> {
    let format = match format {
        Format::Csv => "csv",
        Format::Json => "json",
        Format::Ndjson => "ndjson",
        Format::Parquet => "parquet",
    };
    let out = taskchain()
        .args(["-q", "-j", &jobs.to_string(), "--format", format])
        .args(args)
        .args(paths)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 2)),
        "{paths:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Makes a FIFO at `path` (Unix).
pub fn mkfifo(path: &Path) {
    assert!(
        std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap()
            .success()
    );
}

/// The `taskchain` binary of this build, as a command to run.
pub fn taskchain() -> Command {
    Command::cargo_bin("taskchain").unwrap()
}

/// Checks `actual` against the golden file `path` (relative to the package root). With
/// `BLESS=1` in the environment, rewrites the file instead when it differs and says so on
/// stderr; a blessed file is a claim, so check its diff by hand or against the ground
/// truth before committing. A difference writes `actual` under the target's temporary
/// folder (same relative path) and fails with the first differing line. The package's
/// absolute path in `actual` (a warning naming a map file in full) is written `<package>`,
/// so goldens hold the same text in every checkout.
pub fn golden(path: &Path, actual: &str) {
    let actual = actual.replace(env!("CARGO_MANIFEST_DIR"), "<package>");
    let actual = actual.as_str();
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let expected = std::fs::read_to_string(&full);
    if std::env::var_os("BLESS").is_some() {
        if expected.as_deref().ok() != Some(actual) {
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, actual).unwrap();
            // Straight to the process's stderr: the test harness captures `eprintln!` of
            // passing tests, and this line is for the person who blessed.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "BLESS: rewrote {}", path.display());
        }
        return;
    }
    let expected = expected.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if expected != actual {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("golden-actual")
            .join(path);
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        std::fs::write(&out, actual).unwrap();
        panic!(
            "{} differs from the output ({} written); {}",
            path.display(),
            out.display(),
            first_difference(&expected, actual)
        );
    }
}

/// Where two texts first differ, for a failure message.
pub fn first_difference(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            // A JSON report is one long line: show where in it, not all of it.
            let at = x.bytes().zip(y.bytes()).take_while(|(p, q)| p == q).count();
            let near = |s: &str| {
                let (mut from, mut to) = (at.saturating_sub(60), (at + 60).min(s.len()));
                while !s.is_char_boundary(from) {
                    from -= 1;
                }
                while !s.is_char_boundary(to) {
                    to += 1;
                }
                s[from..to].to_string()
            };
            return format!(
                "line {}, byte {at}:\n  expected: …{}…\n  actual:   …{}…",
                i + 1,
                near(x),
                near(y)
            );
        }
    }
    format!(
        "line counts differ: expected {}, actual {}",
        a.lines().count(),
        b.lines().count()
    )
}

/// Waits until `done()` holds, checking every 10 ms for at most 20 s (a bound, not a
/// guess of how long the other process takes); panics with `what` when it never does.
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "timed out waiting until {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Every sample case with a trace (case folders hold one `trace.*`; compare-builds holds
/// sets of runs), sorted by name.
pub fn sample_cases() -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("samples"))
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                std::fs::read_dir(e.path()).is_ok_and(|d| {
                    d.flatten()
                        .any(|f| f.file_name().to_string_lossy().starts_with("trace."))
                })
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
    v.sort();
    v
}

/// A CSV's header and records, as text.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let head = r.headers().unwrap().iter().map(str::to_owned).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(str::to_owned).collect())
        .collect();
    (head, rows)
}

/// The rows of a Parquet file, in one batch (read with the `parquet` crate), and its
/// key-value metadata.
pub fn read_parquet(path: &Path) -> (arrow_array::RecordBatch, Vec<(String, String)>) {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let b = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    let kv = b
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .into_iter()
        .flatten()
        .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
        .collect();
    let schema = b.schema().clone();
    let batches: Vec<_> = b.build().unwrap().map(|r| r.unwrap()).collect();
    (
        arrow_select::concat::concat_batches(&schema, &batches).unwrap(),
        kv,
    )
}

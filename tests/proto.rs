//! Perfetto protobuf traces recorded from Chromium 156 (`scripts/record-proto-traces`):
//! every long task of their ground truth — made without taskchain, by Google's protobuf
//! runtime and `scripts/reference.py` (`scripts/proto-groundtruth.py`) — is found with its
//! leaf and chain and no other is reported on those threads (the rules of
//! `../shared/scripts/check-ground-truth`, which passes on `tests/data/proto-chromium` too);
//! and a protobuf trace gives the same rows whatever its name and whether gzipped.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::common::*;
use serde_json::Value;
use taskchain::report::Format;

const META: [&str; 6] = [
    "(root)",
    "(program)",
    "(idle)",
    "(garbage collector)",
    "",
    "(anonymous)",
];

fn names(chain: &Value) -> Vec<String> {
    chain
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| match f {
                    Value::Object(o) => o["function"].as_str().unwrap_or("").to_string(),
                    v => v.as_str().unwrap_or("").to_string(),
                })
                .filter(|n| !META.contains(&n.as_str()))
                .collect()
        })
        .unwrap_or_default()
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/proto-chromium")
}

#[test]
fn proto_recordings_match_their_ground_truth() {
    let mut checked = 0;
    let mut files: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".groundtruth.json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 7, "one per scenario");
    for gt_path in files {
        let gt: Value = serde_json::from_slice(&std::fs::read(&gt_path).unwrap()).unwrap();
        let trace = data_dir().join(gt["trace_file"].as_str().unwrap());
        let out = report(
            &["--scope".into(), "renderers".into()],
            &[trace],
            Format::Json,
            2,
        );
        let doc: Value = serde_json::from_slice(&out).unwrap();
        let rows = doc["tasks"].as_array().unwrap();
        let mut matched = Vec::new();
        let mut threads = std::collections::BTreeSet::new();
        for t in gt["long_tasks"].as_array().unwrap() {
            let o = &t["observed"];
            threads.insert((o["pid"].as_i64().unwrap(), o["tid"].as_i64().unwrap()));
            let at = format!("{}: task at {}", gt["trace_file"], o["ts"]);
            let k = rows
                .iter()
                .position(|r| {
                    r["pid"].as_i64() == o["pid"].as_i64()
                        && r["tid"].as_i64() == o["tid"].as_i64()
                        && (r["task_ts_us"].as_f64().unwrap() - o["ts"].as_f64().unwrap()).abs()
                            <= 2.0
                })
                .unwrap_or_else(|| panic!("{at}: not reported"));
            matched.push(k);
            let r = &rows[k];
            let leaf = r["leaf_function"].as_str().unwrap_or("");
            let want = t["expected_leaf"].as_str().unwrap();
            assert!(
                leaf == want || (META[4..].contains(&leaf) && META[4..].contains(&want)),
                "{at}: leaf {leaf:?}, expected {want:?}"
            );
            assert_eq!(names(&r["chain"]), names(&t["expected_chain"]), "{at}");
            checked += 1;
        }
        for m in gt["renderer_main_threads"].as_array().unwrap() {
            threads.insert((m["pid"].as_i64().unwrap(), m["tid"].as_i64().unwrap()));
        }
        let extra = rows
            .iter()
            .enumerate()
            .filter(|(k, r)| {
                !matched.contains(k)
                    && threads.contains(&(r["pid"].as_i64().unwrap(), r["tid"].as_i64().unwrap()))
            })
            .count();
        assert_eq!(
            extra, 0,
            "{}: long tasks not in the ground truth",
            gt["trace_file"]
        );
    }
    // Every scenario's page chains and the unintended tasks with them.
    assert!(checked >= 30, "{checked} tasks");
}

/// The CSV rows of `path` without the file column.
fn rows_of(path: &Path) -> Vec<String> {
    let out = report(&[], &[path.to_path_buf()], Format::Csv, 1);
    String::from_utf8(out)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split_once(',').unwrap().1.to_string())
        .collect()
}

#[test]
fn a_proto_trace_gives_the_same_rows_named_json_or_gzipped() {
    let gz = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/proto-iframes/trace.pftrace.gz");
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap())
        .read_to_end(&mut plain)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&plain).unwrap();
    let regz = e.finish().unwrap();
    let own = rows_of(&write("trace.pftrace", &plain));
    // The page's three chains are there (checked against the ground truth above).
    assert!(own.len() >= 3, "{own:?}");
    for p in [
        write("trace.json", &plain),
        write("trace.proto", &plain),
        write("trace.json.gz", &regz),
        gz.clone(),
    ] {
        assert_eq!(rows_of(&p), own, "{}", p.display());
    }
    // Read from standard input (a stream, as a pipe gives it).
    let out = taskchain()
        .args(["-q", "-"])
        .write_stdin(plain.clone())
        .output()
        .unwrap();
    let piped: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split_once(',').unwrap().1.to_string())
        .collect();
    assert_eq!(piped, own);
}

#[test]
fn a_cut_proto_trace_keeps_the_packets_before_the_cut() {
    let gz =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/proto-click-chain/trace.pftrace.gz");
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap())
        .read_to_end(&mut plain)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Cut 10 bytes before the end: inside the last packet.
    let cut = dir.path().join("cut.pftrace");
    std::fs::write(&cut, &plain[..plain.len() - 10]).unwrap();
    let out = taskchain().arg(&cut).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the file ends inside the trace packet at byte"),
        "{stderr}"
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    // Its one long task on the page, flagged as read from a cut file.
    assert!(
        csv.lines().skip(1).any(|l| l.contains("truncated_file")),
        "{csv}"
    );
}

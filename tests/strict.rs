//! Data after the top-level value, and values the format forbids (reported, not
//! guessed): a test named after each rule, on inputs built here.

use crate::lossless::{everywhere, sh, small_trace, stderr};

/// The CSV rows (without the header) of `bytes` as a whole file, a `.gz` stream and
/// standard input at -j1 and -j2 (all six the same), with the exit code and stderr.
fn rows_everywhere(bytes: &[u8]) -> (i32, String, Vec<String>) {
    let (code, err, out) = everywhere(bytes);
    (code, err, out.lines().skip(1).map(str::to_owned).collect())
}

/// The chain column of each row: the field naming a function of `a.js`.
fn chains(rows: &[String]) -> Vec<String> {
    rows.iter()
        .filter_map(|l| {
            l.split(',')
                .find(|f| f.starts_with('f') && f.contains("(a.js"))
        })
        .map(str::to_owned)
        .collect()
}

/// Runs taskchain on `bytes` written to `name` in a fresh folder: (exit code, stderr,
/// stdout).
fn run_file(name: &str, bytes: &[u8]) -> (i32, String, String) {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join(name), bytes).unwrap();
    let o = sh(d.path(), &format!("$T {name}"));
    (
        o.status.code().unwrap(),
        stderr(&o).replace(name, "F"),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn ph_longer_than_one_char_is_no_phase() {
    // Task 0's RunTask as "Xyz", task 1's as "XX", task 2's metadata-looking "Mx": no
    // phase, counted; task 3 is read.
    let t = small_trace(4);
    let mut bad = t.clone();
    for (k, ph) in [(0, "Xyz"), (1, "XX"), (2, "Mx")] {
        let ts = 100_000 * (k + 1);
        bad = bad.replace(
            &format!(r#"{{"ph":"X","name":"RunTask","cat":"toplevel","pid":1,"tid":1,"ts":{ts},"#),
            &format!(
                r#"{{"ph":"{ph}","name":"RunTask","cat":"toplevel","pid":1,"tid":1,"ts":{ts},"#
            ),
        );
    }
    assert_ne!(bad, t);
    let (code, err, rows) = rows_everywhere(bad.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].contains("f3 (a.js:4:1)"), "{rows:?}");
    assert!(
        err.contains("events whose \"ph\" is not one character (no phase: skipped): 3"),
        "{err}"
    );
}

#[test]
fn escaped_keys_and_names_are_decoded_before_matching() {
    // `Run\u0054ask`, `Profile\u0043hunk`, `thread\u005fname` and an escaped key `p\u0068`:
    // the same rows as the plain trace, on every path.
    let t = small_trace(3);
    let escaped = t
        .replace(r#""RunTask""#, r#""Run\u0054ask""#)
        .replace(r#""ProfileChunk""#, r#""Profile\u0043hunk""#)
        .replace(r#""thread_name""#, r#""thread\u005fname""#)
        .replacen(r#"{"ph":"X""#, r#"{"p\u0068":"X""#, 1)
        .replacen(r#""timeDeltas""#, r#""time\u0044eltas""#, 1);
    assert_ne!(escaped, t);
    let (code, err, rows) = rows_everywhere(escaped.as_bytes());
    let (_, _, plain) = rows_everywhere(t.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert_eq!(rows.len(), 3);
    assert_eq!(rows, plain);
    assert_eq!(
        chains(&rows),
        ["f0 (a.js:1:1)", "f1 (a.js:2:1)", "f2 (a.js:3:1)"]
    );
}

#[test]
fn dur_that_is_not_a_valid_duration_is_named_so() {
    let t = small_trace(4);
    let mut bad = t.clone();
    for (k, dur) in [(0, "1e400"), (1, "18446744073709551616"), (2, "-5")] {
        let ts = 100_000 * (k + 1);
        bad = bad.replace(
            &format!(r#""ts":{ts},"dur":60000}}"#),
            &format!(r#""ts":{ts},"dur":{dur}}}"#),
        );
    }
    assert_ne!(bad, t);
    let (code, err, _) = rows_everywhere(bad.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("dur is not a valid duration"), "{err}");
    assert!(
        err.contains("read as running to the trace's end: 3"),
        "{err}"
    );
    assert!(!err.contains("without a dur"), "{err}");
}

const CPUPROFILE: &str = "samples/field-cpuprofile/trace.cpuprofile";
const BUNDLE: &str = "samples/field-bundle/trace.json";

fn sample(path: &str) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn cpuprofile_parse_errors_give_the_byte_offset_and_what_was_expected() {
    let p = sample(CPUPROFILE);
    // A missing comma between two members of a node.
    let at = p.find(r#", "parent": 1}"#).unwrap();
    let bad = format!("{}{}", &p[..at], &p[at + 1..]);
    let (code, err, _) = run_file("p.cpuprofile", bad.as_bytes());
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!(
            "invalid JSON at byte {}: expected `,` or `}}`",
            at + 1
        )),
        "{err}"
    );
    assert!(!err.contains("nested deeper"), "{err}");
    // `NaN` for a number.
    let at = p.find("1000, 1000").unwrap();
    let bad = format!("{}NaN{}", &p[..at], &p[at + 4..]);
    let (code, err, _) = run_file("p.cpuprofile", bad.as_bytes());
    assert_eq!(code, 2);
    assert!(err.contains(&format!("invalid JSON at byte {at}")), "{err}");
    assert!(err.contains("expected"), "{err}");
    // Data after the object.
    let bad = format!("{p} {{}}");
    let (code, err, _) = run_file("p.cpuprofile", bad.as_bytes());
    assert_eq!(code, 2);
    assert!(err.contains(&format!("byte {}", p.len() + 1)), "{err}");
    assert!(!err.contains("nested deeper"), "{err}");
    // Cut inside `timeDeltas`: a cut, not a missing traceEvents array.
    let cut = &p[..p.len() - 20];
    let (code, err, _) = run_file("p.cpuprofile", cut.as_bytes());
    assert_eq!(code, 2);
    assert!(err.contains("cut off"), "{err}");
    assert!(!err.contains("traceEvents"), "{err}");
    // A missing comma between top-level members.
    let at = p.find(r#", "startTime""#).unwrap();
    let bad = format!("{}{}", &p[..at], &p[at + 1..]);
    let (code, err, _) = run_file("p.cpuprofile", bad.as_bytes());
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!(
            "invalid JSON at byte {} in the top-level object: expected ',' or '}}' after a value",
            at + 1
        )),
        "{err}"
    );
}

#[test]
fn utf8_bom_is_skipped_for_cpuprofiles_and_bundles() {
    for (path, name) in [(CPUPROFILE, "p.cpuprofile"), (BUNDLE, "b.json")] {
        let plain = run_file(name, sample(path).as_bytes());
        let with_bom = run_file(name, format!("\u{feff}{}", sample(path)).as_bytes());
        assert_eq!(plain.0, 0, "{}", plain.1);
        assert!(plain.2.lines().count() > 1);
        assert_eq!(with_bom, plain, "{path}");
    }
}

#[test]
fn utf8_bom_error_offsets_count_from_the_files_first_byte() {
    // The same damage with and without a BOM: every offset 3 bytes further with it, in a
    // trace (an event missing a comma), a .cpuprofile and a bundle (a node missing one),
    // as a whole file, a .gz stream and standard input, at -j1 and -j2.
    let t = small_trace(3);
    let bad = t.replacen(
        r#""ph":"X","name":"RunTask""#,
        r#""ph":"X" "name":"RunTask""#,
        1,
    );
    assert_ne!(bad, t);
    // The byte after `"X"`, where a ',' or '}' was expected.
    let at = bad.find(r#""X" "name""#).unwrap() + 4;
    let (_, plain, _) = everywhere(bad.as_bytes());
    let (_, bom, _) = everywhere(format!("\u{feff}{bad}").as_bytes());
    assert!(
        plain.contains(&format!("invalid JSON at byte {at} (event ")),
        "{plain}"
    );
    assert!(
        bom.contains(&format!("invalid JSON at byte {} (event ", at + 3)),
        "{bom}"
    );
    for (path, name, key) in [
        (CPUPROFILE, "p.cpuprofile", "\"callFrame\""),
        (BUNDLE, "b.json", "\"resourceId\""),
    ] {
        let good = sample(path);
        let k = good.find(key).unwrap_or_else(|| panic!("{key} in {path}"));
        // Drop the comma before the key: the key's first byte is the bad one.
        let comma = good[..k].rfind(',').unwrap();
        let broken = format!("{}{}", &good[..comma], &good[comma + 1..]);
        let bad_at = k - 1;
        let d = tempfile::tempdir().unwrap();
        for (bom, prefix) in [(0, ""), (3, "\u{feff}")] {
            let bytes = format!("{prefix}{broken}");
            let gz_name = format!("{name}.gz");
            std::fs::write(d.path().join(name), &bytes).unwrap();
            std::fs::write(
                d.path().join(&gz_name),
                crate::lossless::gzip(bytes.as_bytes()),
            )
            .unwrap();
            for input in [name.to_string(), gz_name, format!("- < {name}")] {
                let o = sh(d.path(), &format!("$T {input}"));
                let err = stderr(&o);
                assert_eq!(o.status.code(), Some(2), "{err}");
                assert!(
                    [":", " in"].iter().any(|after| err
                        .contains(&format!("invalid JSON at byte {}{after}", bad_at + bom))),
                    "{path} {input} bom {bom}: {err}"
                );
            }
        }
    }
}

#[test]
fn duplicate_keys_last_wins_in_bundles_and_args() {
    // An empty `longTasks` list before the real one: the real one counts (the last).
    let b = sample(BUNDLE);
    let bad = b.replacen(r#""longTasks""#, r#""longTasks": [], "longTasks""#, 1);
    assert_ne!(bad, b);
    let (code, err, out) = run_file("b.json", bad.as_bytes());
    let (_, _, plain) = run_file("b.json", b.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, plain);
    assert_eq!(out.lines().count(), 3);
    // A thread named twice in one metadata event: the last name counts.
    let t = small_trace(2);
    let bad = t.replace(
        r#""args":{"name":"CrRendererMain"}"#,
        r#""args":{"name":"CrBrowserMain","name":"CrRendererMain"}"#,
    );
    assert_ne!(bad, t);
    let (code, err, out) = run_file("t.json", bad.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 3, "{out}");
}

/// `small_trace(n)` on pid 2 with functions `g<k>` (its chains `g<k> (b.js:<k+1>:1)`).
fn other_trace(n: usize) -> String {
    small_trace(n)
        .replace(r#""pid":1"#, r#""pid":2"#)
        .replace(r#""functionName":"f"#, r#""functionName":"g"#)
        .replace(r#""url":"a.js""#, r#""url":"b.js""#)
}

#[test]
fn a_second_trace_after_the_first_is_read_as_more_events() {
    // `cat a.json b.json`: both traces' rows, and a warning where the second starts.
    let (a, b) = (small_trace(2), other_trace(3));
    let joined = format!("{a}{b}");
    let (code, err, rows) = rows_everywhere(joined.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert_eq!(rows.len(), 5, "{rows:?}");
    for k in 0..3 {
        assert!(
            rows.iter()
                .any(|r| r.contains(&format!("g{k} (b.js:{}:1)", k + 1)))
        );
    }
    assert!(
        err.contains(&format!(
            "a second trace follows the first at byte {}",
            a.len()
        )),
        "{err}"
    );
    assert!(
        err.contains("its 8 events are read as more events"),
        "{err}"
    );
    // Bare arrays, one after the other.
    let bare = |t: &str| {
        let s = t.find('[').unwrap();
        let e = t.rfind(']').unwrap();
        t[s..=e].to_string()
    };
    let joined = format!("{}\n{}\n", bare(&a), bare(&b));
    let (code, err, rows) = rows_everywhere(joined.as_bytes());
    assert_eq!((code, rows.len()), (0, 5), "{err}");
}

#[test]
fn two_gzip_members_holding_two_traces_are_both_read() {
    let (a, b) = (small_trace(2), other_trace(3));
    let d = tempfile::tempdir().unwrap();
    let mut gz = crate::lossless::gzip(a.as_bytes());
    gz.extend(crate::lossless::gzip(b.as_bytes()));
    std::fs::write(d.path().join("t.json.gz"), gz).unwrap();
    for j in ["1", "2"] {
        let o = sh(d.path(), &format!("$T -j{j} t.json.gz"));
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 6);
        assert!(stderr(&o).contains(&format!(
            "a second trace follows the first at byte {}",
            a.len()
        )));
    }
}

#[test]
fn an_event_after_the_end_is_read_and_said() {
    // One more task event after `]}`, with and without a comma before it.
    let a = small_trace(2);
    let task =
        r#"{"ph":"X","name":"RunTask","cat":"toplevel","pid":1,"tid":1,"ts":900000,"dur":70000}"#;
    for sep in ["", ",", "\n"] {
        let joined = format!("{}{sep}{task}\n", a.trim_end());
        let (code, err, rows) = rows_everywhere(joined.as_bytes());
        assert_eq!(code, 0, "{err}");
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert!(rows.iter().any(|r| r.contains(",900000,")), "{rows:?}");
        assert!(
            err.contains("its 1 events are read as more events"),
            "{err}"
        );
    }
}

#[test]
fn bytes_after_the_end_are_said_with_offset_and_count() {
    let a = small_trace(2);
    let (_, _, plain) = rows_everywhere(a.as_bytes());
    for (tail, what) in [
        ("\0".repeat(100), "NUL padding"),
        ("garbage\n".to_string(), "not trace events"),
        (r#"{"nodes":[]}"#.to_string(), "not trace events"),
    ] {
        let joined = format!("{a}{tail}");
        let (code, err, rows) = rows_everywhere(joined.as_bytes());
        assert_eq!(code, 0, "{err}");
        assert_eq!(rows, plain);
        let expected = format!(
            "{} bytes after the end of the trace, from byte {}, ignored ({what})",
            tail.len(),
            a.len()
        );
        assert!(err.contains(&expected), "{err}\nwanted {expected}");
    }
}

fn utf16(s: &str, little_endian: bool, bom: bool) -> Vec<u8> {
    let units = bom.then_some(0xFEFF).into_iter().chain(s.encode_utf16());
    units
        .flat_map(|u| {
            if little_endian {
                u.to_le_bytes()
            } else {
                u.to_be_bytes()
            }
        })
        .collect()
}

#[test]
fn utf16_traces_are_transcoded_and_read() {
    // PowerShell's `>` writes UTF-16 LE with a byte-order mark; also without one, and BE.
    let t = small_trace(2).replace("f1", "f\u{e9}1");
    let (_, _, plain) = rows_everywhere(t.as_bytes());
    assert_eq!(plain.len(), 2);
    for (le, bom) in [(true, true), (true, false), (false, true), (false, false)] {
        let (code, err, rows) = rows_everywhere(&utf16(&t, le, bom));
        assert_eq!(code, 0, "{err}");
        assert_eq!(rows, plain, "le {le} bom {bom}");
        assert!(err.contains("UTF-16 text"), "{err}");
    }
    // A UTF-16 .cpuprofile too.
    let p = sample(CPUPROFILE);
    let (code, err, out) = run_file("p.cpuprofile", &utf16(&p, true, true));
    assert_eq!(
        (code, out),
        (0, run_file("p.cpuprofile", p.as_bytes()).2),
        "{err}"
    );
}

#[test]
fn utf32_is_named_in_the_error() {
    let t = small_trace(1);
    let utf32: Vec<u8> = t.chars().flat_map(|c| (c as u32).to_le_bytes()).collect();
    let (code, err, _) = rows_everywhere(&utf32);
    assert_eq!(code, 2);
    assert!(err.contains("the file is UTF-32 text"), "{err}");
}

#[test]
fn out_of_range_time_deltas_skip_that_chunks_samples() {
    // Task 1's chunk ends its timeDeltas with ±2^53+1 µs or 1e400 (read as 0 before):
    // that chunk's samples are skipped with a warning; the other tasks keep their chains.
    let t = small_trace(3);
    let chunk1 = t.find(r#""functionName":"f1""#).unwrap();
    let deltas = chunk1 + t[chunk1..].find("10000]").unwrap();
    for bad in ["9007199254740993", "-9007199254740993", "1e400"] {
        let b = format!("{}{bad}{}", &t[..deltas], &t[deltas + 5..]);
        let (code, err, rows) = rows_everywhere(b.as_bytes());
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains("chunks with a timeDeltas value outside ±2^53 µs (or beyond any number, 1e400): their samples skipped"),
            "{err}"
        );
        assert_eq!(rows.len(), 3);
        assert_eq!(chains(&rows), ["f0 (a.js:1:1)", "f2 (a.js:3:1)"], "{bad}");
        assert!(rows[1].contains("no_samples"), "{}", rows[1]);
    }
    // 2^53 itself is a (huge) time, not junk: no warning.
    let b = format!("{}9007199254740992{}", &t[..deltas], &t[deltas + 5..]);
    let (_, err, _) = rows_everywhere(b.as_bytes());
    assert!(!err.contains("timeDeltas value outside"), "{err}");
}

#[test]
fn tid_or_pid_outside_i64_is_counted() {
    let t = small_trace(2).replace(r#""tid":1"#, r#""tid":18446744073709551616"#);
    let (code, err, rows) = rows_everywhere(t.as_bytes());
    assert_eq!(code, 0, "{err}");
    // Still one thread (keyed apart by a hash), with both tasks.
    assert_eq!(chains(&rows), ["f0 (a.js:1:1)", "f1 (a.js:2:1)"]);
    // thread_name, Profile, 2 tasks and 2 chunks.
    assert!(
        err.contains("events whose pid or tid is a number outside the 64-bit integer range (their threads keyed by a hash of the number's text): 6"),
        "{err}"
    );
}

#[test]
fn samples_before_the_profile_start_are_warned() {
    // Every delta negative: all samples run before the profile's start.
    let plain = small_trace(1);
    let t = plain.replace(
        "[105000,10000,10000,10000,10000,10000]",
        "[-105000,-10000,-10000,-10000,-10000,-10000]",
    );
    assert_ne!(t, plain);
    let (code, err, _) = rows_everywhere(t.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("profiles whose samples all run before the profile's start"),
        "{err}"
    );
    let (_, err, _) = rows_everywhere(small_trace(1).as_bytes());
    assert!(!err.contains("before the profile's start"), "{err}");
}

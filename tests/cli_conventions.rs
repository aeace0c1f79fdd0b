//! The command line's conventions: `--version` with the commit, shell completions, and a
//! mistyped subcommand named as such rather than read as a file.

use crate::common::taskchain;
use predicates::prelude::*;

/// The commit `git` says the package is at, as build.rs writes it (12 digits), when this
/// is a checkout with git installed.
fn head_commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8(out.stdout).unwrap().trim().to_string())
}

#[test]
fn version_names_the_commit() {
    let out = taskchain().arg("--version").assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let want = match head_commit() {
        Some(c) => format!("taskchain {} (commit {c})\n", env!("CARGO_PKG_VERSION")),
        None => format!("taskchain {}\n", env!("CARGO_PKG_VERSION")),
    };
    assert_eq!(text, want);
}

#[test]
fn bash_completion_completes_flags_and_subcommands() {
    let script = taskchain()
        .args(["completions", "bash"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("taskchain.bash");
    std::fs::write(&path, script).unwrap();
    // What bash offers after `taskchain --thr<TAB>` and after `taskchain com<TAB>`: bash
    // calls the function with the command, the word being completed and the one before.
    let complete = |words: &str, cword: usize| {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source {}; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{words}'; \
                 COMP_POINT=${{#COMP_LINE}}; \
                 _taskchain taskchain \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                path.display()
            ))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(complete("taskchain --thr", 1), "--threshold-ms\n");
    let subcommands = complete("taskchain com", 1);
    assert!(subcommands.lines().any(|l| l == "compare"), "{subcommands}");
    assert!(
        subcommands.lines().any(|l| l == "completions"),
        "{subcommands}"
    );
    assert_eq!(
        complete("taskchain compare --fail-on", 2),
        "--fail-on-regression\n"
    );
}

#[test]
fn zsh_and_fish_completions_name_the_command() {
    for (shell, start) in [
        ("zsh", "#compdef taskchain\n"),
        ("fish", "# Print an optspec for argparse"),
    ] {
        let out = taskchain().args(["completions", shell]).assert().success();
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        assert!(text.starts_with(start), "{shell}: {}", &text[..80]);
        assert!(text.contains("threshold-ms"), "{shell}");
        assert!(text.contains("fail-on-regression"), "{shell}");
    }
    taskchain()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("invalid value 'tcsh'"));
}

#[test]
fn mistyped_subcommand_is_named_not_read_as_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let said = "taskchain: error: comapre: no such file or folder, and no such command: did you mean `taskchain compare`?\n";
    taskchain()
        .current_dir(dir.path())
        .args(["comapre", "a.json", "--", "b.json"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(said);
    // A flag only `compare` has: clap refuses the line, the suggestion still comes.
    taskchain()
        .current_dir(dir.path())
        .args([
            "comapre",
            "--fail-on-regression",
            "5",
            "a.json",
            "--",
            "b.json",
        ])
        .assert()
        .code(2)
        .stderr(said);
    // Words far from every command, and paths, are files as before.
    taskchain()
        .current_dir(dir.path())
        .arg("traces")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("did you mean").not());
    // A file of that name is read, not second-guessed.
    std::fs::write(dir.path().join("comapre"), b"[]").unwrap();
    taskchain()
        .current_dir(dir.path())
        .args(["-q", "comapre"])
        .assert()
        .stderr(predicates::str::contains("did you mean").not());
}

/// The help text of `args` (`--help`, long form).
fn help(args: &[&str]) -> String {
    let out = taskchain().args(args).arg("--help").assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn help_is_plain_words_with_no_markup_or_repository_files() {
    for args in [&[][..], &["compare"], &["completions"], &["record"]] {
        let text = help(args);
        // rustdoc's intra-doc links (`[`parquet`]`, `crate::…`) and the section signs of
        // the repository's docs mean nothing to someone who installed a binary.
        for bad in [
            "[`",
            "`]",
            "crate::",
            "§",
            "METHOD.md",
            "SOURCE-MAPS.md",
            "docs/",
        ] {
            let at = text.find(bad);
            // The one place the docs are named says where they are, in words.
            let allowed = bad == "docs/"
                && at.is_some_and(|i| text[..i].ends_with("README and "))
                && text.matches(bad).count() == 1;
            assert!(
                at.is_none() || allowed,
                "taskchain {args:?} --help shows {bad:?}:\n{text}"
            );
        }
    }
}

#[test]
fn completions_help_lists_only_its_own_argument() {
    let text = help(&["completions"]);
    for analysis in [
        "--scope",
        "--threshold-ms",
        "--chain-key",
        "--source-maps",
        "--jobs",
    ] {
        assert!(!text.contains(analysis), "{analysis} in:\n{text}");
    }
    // compare still takes them, after the subcommand.
    let compare = help(&["compare"]);
    assert!(
        compare.contains("--scope") && compare.contains("--chain-key"),
        "{compare}"
    );
}

#[test]
fn help_tells_the_budget_keys_and_exit_codes_apart() {
    let text = help(&[]);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for said in [
        "`long-tasks` (how many long tasks)",
        "`max-task-ms` (the longest task's duration)",
        "`long-task-ms` (the sum of the long tasks' whole durations)",
        "`tbt-ms` (the whole trace's blocking time: the sum of each task's time over 50 ms \
         from the trace's start to its end, not Lighthouse's FCP-to-TTI span)",
        "`tbt-from-fcp-ms` (Lighthouse's total blocking time from the first contentful paint",
        "130 interrupted",
        "samples taken up to MS before a task starts",
        "Where the long tasks are, for field profiles that do not say",
    ] {
        assert!(flat.contains(said), "{said:?} not in --help:\n{text}");
    }
}

#[test]
fn readme_examples_use_flags_the_help_lists_and_the_readme_stays_short() {
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    assert!(readme.lines().count() <= 200, "{}", readme.lines().count());
    let helps = [help(&[]), help(&["compare"]), help(&["record"])].concat();
    let mut checked = 0;
    // Every `--flag` of a taskchain command in the README's shell blocks (not npm's or
    // cargo's) is one the help shows.
    for block in readme.split("```sh\n").skip(1) {
        let block = block.split("```").next().unwrap();
        for line in block.lines() {
            let command = line.split(" #").next().unwrap();
            let Some(at) = command.find("taskchain ") else {
                continue;
            };
            if command.trim_start().starts_with("npm") || command.trim_start().starts_with("cargo")
            {
                continue;
            }
            for word in command[at..].split_whitespace() {
                let flag = word.split('=').next().unwrap();
                if flag.starts_with("--") && flag.len() > 2 {
                    assert!(
                        helps.contains(flag),
                        "README: {flag} is in no --help: {line}"
                    );
                    checked += 1;
                }
            }
        }
    }
    // The examples name a dozen flags or more.
    assert!(checked >= 12, "{checked}");
}

//! `taskchain compare BASE... -- CANDIDATE...`: two sets of traces of one scenario, per
//! chain and overall, with a Mann-Whitney U test over the per-trace values so that run-to-run
//! noise is not reported as a regression.
//!
//! Per trace, the values compared are the long-task time (ms, sum of `dur`) and count —
//! overall, and per call chain (0 in a trace where the chain has no long task). The test is
//! two-sided; exact for small sets without ties, else the normal approximation with a tie
//! and continuity correction. A change is a regression when the candidate's mean is higher,
//! p < 0.05, and the increase is over `--fail-on-regression` percent (0 when not given).
//! With very small sets no change can be significant: 3 traces per side give p ≥ 0.1.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::analyze::Settings;
use crate::report::FileReport;
use crate::report::{chain_text, millis_text};
use crate::time::TimeDelta;

/// The resolved `compare` command.
#[derive(Clone, Debug)]
pub struct CompareConfig {
    /// Baseline paths.
    pub base: Vec<PathBuf>,
    /// Candidate paths.
    pub candidate: Vec<PathBuf>,
    /// `--fail-on-regression` in percent.
    pub fail_on_regression: Option<f64>,
    /// CSV output (`None`: standard output).
    pub output: Option<PathBuf>,
    /// Markdown output.
    pub markdown: Option<PathBuf>,
    /// Analysis settings.
    pub analysis: Settings,
    /// Threads.
    pub jobs: usize,
    /// Quiet.
    pub quiet: bool,
}

/// p-value below which a change is not put down to noise.
pub const ALPHA: f64 = 0.05;

/// Per-trace totals of one set.
#[derive(Debug, Default)]
struct Trace {
    long_task_time: f64,
    long_tasks: f64,
    /// chain text → (ms, count); plus the chain's leaf function.
    chains: BTreeMap<String, (f64, f64)>,
}

fn totals(reports: &[FileReport], leaf: &mut BTreeMap<String, String>) -> Vec<Trace> {
    reports
        .iter()
        .map(|r| {
            let mut t = Trace {
                long_task_time: r.stats.long_task_time.as_millis_f64(),
                long_tasks: r.long_tasks as f64,
                ..Trace::default()
            };
            for row in &r.rows {
                let key = chain_text(&row.chain);
                if let Some(l) = row.leaf() {
                    leaf.entry(key.clone())
                        .or_insert_with(|| l.shown_function().to_string());
                }
                let e = t.chains.entry(key).or_default();
                e.0 += row.task_dur.as_millis_f64();
                e.1 += 1.0;
            }
            t
        })
        .collect()
}

/// One line of the comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// `overall`, or the chain (`chain` column text; empty chain: tasks without one).
    pub chain: Option<String>,
    /// The chain's leaf function.
    pub leaf: String,
    /// Traces in each set.
    pub base_traces: usize,
    /// Traces in the candidate set.
    pub candidate_traces: usize,
    /// Mean long-task time per trace, ms.
    pub base_ms: f64,
    /// Same for the candidate.
    pub candidate_ms: f64,
    /// Mean long-task count per trace.
    pub base_tasks: f64,
    /// Same for the candidate.
    pub candidate_tasks: f64,
    /// (candidate − base) / base × 100; infinite when the base is 0 and the candidate not.
    pub change_pct: f64,
    /// Two-sided Mann-Whitney U p-value of the long-task times.
    pub p_value: f64,
    /// The verdict for `threshold_pct`.
    pub verdict: Verdict,
}

/// What a change means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Higher, significant, over the threshold.
    Regression,
    /// Higher and significant, but not over the threshold.
    IncreaseUnderThreshold,
    /// Lower and significant.
    Improvement,
    /// Not significant.
    NoChange,
}

impl Verdict {
    /// As written in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::IncreaseUnderThreshold => "increase under threshold",
            Verdict::Improvement => "improvement",
            Verdict::NoChange => "no significant change",
        }
    }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn change(
    chain: Option<String>,
    leaf: String,
    a: &[f64],
    b: &[f64],
    counts: (&[f64], &[f64]),
    threshold_pct: f64,
) -> Change {
    let (ma, mb) = (mean(a), mean(b));
    let change_pct = if ma > 0.0 {
        (mb - ma) / ma * 100.0
    } else if mb > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    let p = mann_whitney_p(a, b);
    let verdict = if p < ALPHA && mb > ma && change_pct > threshold_pct {
        Verdict::Regression
    } else if p < ALPHA && mb > ma {
        Verdict::IncreaseUnderThreshold
    } else if p < ALPHA && mb < ma {
        Verdict::Improvement
    } else {
        Verdict::NoChange
    };
    Change {
        chain,
        leaf,
        base_traces: a.len(),
        candidate_traces: b.len(),
        base_ms: ma,
        candidate_ms: mb,
        base_tasks: mean(counts.0),
        candidate_tasks: mean(counts.1),
        change_pct,
        p_value: p,
        verdict,
    }
}

/// Compares two sets: the overall line first, then one line per chain seen in either
/// set, largest absolute change in mean long-task time first.
pub fn compare(base: &[FileReport], candidate: &[FileReport], threshold_pct: f64) -> Vec<Change> {
    let mut leaf = BTreeMap::new();
    let (a, b) = (totals(base, &mut leaf), totals(candidate, &mut leaf));
    let col = |s: &[Trace], f: &dyn Fn(&Trace) -> f64| s.iter().map(f).collect::<Vec<f64>>();
    let mut out = vec![change(
        None,
        String::new(),
        &col(&a, &|t| t.long_task_time),
        &col(&b, &|t| t.long_task_time),
        (&col(&a, &|t| t.long_tasks), &col(&b, &|t| t.long_tasks)),
        threshold_pct,
    )];
    let chains: BTreeSet<&String> = a.iter().chain(&b).flat_map(|t| t.chains.keys()).collect();
    let mut per_chain: Vec<Change> = chains
        .into_iter()
        .map(|c| {
            let ms = |s: &[Trace]| col(s, &|t| t.chains.get(c).map_or(0.0, |v| v.0));
            let n = |s: &[Trace]| col(s, &|t| t.chains.get(c).map_or(0.0, |v| v.1));
            change(
                Some(c.clone()),
                leaf.get(c).cloned().unwrap_or_default(),
                &ms(&a),
                &ms(&b),
                (&n(&a), &n(&b)),
                threshold_pct,
            )
        })
        .collect();
    per_chain.sort_by(|x, y| {
        let dx = (x.candidate_ms - x.base_ms).abs();
        let dy = (y.candidate_ms - y.base_ms).abs();
        dy.total_cmp(&dx).then_with(|| x.chain.cmp(&y.chain))
    });
    out.extend(per_chain);
    out
}

/// Two-sided Mann-Whitney U test of `a` against `b`. 1 when either is empty.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    // Average ranks over both samples.
    let mut all: Vec<(f64, usize)> = a
        .iter()
        .map(|&x| (x, 0))
        .chain(b.iter().map(|&x| (x, 1)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let mut r1 = 0.0;
    let mut ties = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        r1 += all[i..=j].iter().filter(|x| x.1 == 0).count() as f64 * rank;
        i = j + 1;
    }
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let u = u1.min(n1f * n2f - u1);
    if ties == 0.0 && n1 <= 20 && n2 <= 20 {
        return (2.0 * exact_cdf(u as usize, n1, n2)).min(1.0);
    }
    let nf = n as f64;
    let var = n1f * n2f / 12.0 * ((nf + 1.0) - ties / (nf * (nf - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u1 - n1f * n2f / 2.0).abs() - 0.5).max(0.0) / var.sqrt();
    if z == 0.0 {
        return 1.0;
    }
    (2.0 * (1.0 - normal_cdf(z))).clamp(0.0, 1.0)
}

/// P(U ≤ u) for sample sizes n1, n2 without ties: the number of arrangements with each U,
/// counted by the recurrence f(n1, n2, u) = f(n1 − 1, n2, u − n2) + f(n1, n2 − 1, u).
fn exact_cdf(u: usize, n1: usize, n2: usize) -> f64 {
    let max = n1 * n2;
    // f[i][j] = counts of U for sizes (i, j), as a vector over u.
    let mut f: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); n2 + 1]; n1 + 1];
    for i in 0..=n1 {
        for j in 0..=n2 {
            let mut v = vec![0.0; i * j + 1];
            if i == 0 || j == 0 {
                v[0] = 1.0;
            } else {
                for (k, slot) in v.iter_mut().enumerate() {
                    let from_i = if k >= j {
                        f[i - 1][j].get(k - j).copied().unwrap_or(0.0)
                    } else {
                        0.0
                    };
                    let from_j = f[i][j - 1].get(k).copied().unwrap_or(0.0);
                    *slot = from_i + from_j;
                }
            }
            f[i][j] = v;
        }
    }
    let dist = &f[n1][n2];
    let total: f64 = dist.iter().sum();
    dist[..=u.min(max)].iter().sum::<f64>() / total
}

/// Standard normal CDF (Abramowitz and Stegun 7.1.26, error < 1.5e-7).
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// What a comparison run found.
#[derive(Debug, Default)]
pub struct CompareOutcome {
    /// Files that could not be read.
    pub failed: usize,
    /// Lines with verdict `regression` (over the threshold).
    pub regressions: usize,
}

/// Runs `taskchain compare`: analyses both sets, writes the CSV (and Markdown), prints the
/// regressions on stderr.
pub fn run(cfg: &CompareConfig) -> anyhow::Result<CompareOutcome> {
    use crate::output::{OutFile, check_outputs};
    use crate::report::text::plural;
    let stdin = |set: &[std::path::PathBuf]| set.iter().any(|p| p.as_os_str() == "-");
    if stdin(&cfg.base) && stdin(&cfg.candidate) {
        anyhow::bail!("standard input (-) can be read once: give it to one set only");
    }
    let mut inputs = crate::input::paths::inputs(&cfg.base, None, None, false)?;
    inputs.extend(crate::input::paths::inputs(
        &cfg.candidate,
        None,
        None,
        false,
    )?);
    check_outputs(
        &[
            ("-o", Some(cfg.output.as_deref().unwrap_or(Path::new("-")))),
            ("--markdown", cfg.markdown.as_deref()),
        ],
        &inputs,
    )?;
    let (csv_file, md_file) = (
        OutFile::open(cfg.output.as_deref(), false)?,
        cfg.markdown
            .as_deref()
            .map(|p| OutFile::open(Some(p), false))
            .transpose()?,
    );
    let base = crate::batch::analyze_all(&cfg.base, &cfg.analysis, cfg.jobs, cfg.quiet)?;
    let cand = crate::batch::analyze_all(&cfg.candidate, &cfg.analysis, cfg.jobs, cfg.quiet)?;
    let changes = compare(
        &base.reports,
        &cand.reports,
        cfg.fail_on_regression.unwrap_or(0.0),
    );
    let failed: Vec<String> = base
        .errors
        .iter()
        .chain(&cand.errors)
        .map(|e| e.error.clone())
        .collect();
    let out = CompareOutcome {
        failed: failed.len(),
        regressions: changes
            .iter()
            .filter(|c| c.verdict == Verdict::Regression)
            .count(),
    };
    csv_file.fill(|w| write_csv(&changes, w))?;
    if let Some(f) = md_file {
        f.fill(|mut w| write_markdown(&changes, &failed, &mut w))?;
    }
    if !cfg.quiet {
        for c in changes.iter().filter(|c| c.verdict == Verdict::Regression) {
            eprintln!(
                "taskchain: regression: {}: {} ms → {} ms ({}, p = {:.4})",
                c.chain
                    .as_deref()
                    .map_or("overall long-task time", |ch| if ch.is_empty() {
                        "(no chain)"
                    } else {
                        ch
                    }),
                ms3(c.base_ms),
                ms3(c.candidate_ms),
                pct_text(c.change_pct),
                c.p_value
            );
        }
        eprintln!(
            "taskchain: compared {} and {}: {}, {} failed",
            plural(base.reports.len(), "baseline trace", "baseline traces"),
            plural(cand.reports.len(), "candidate trace", "candidate traces"),
            plural(out.regressions, "regression", "regressions"),
            out.failed
        );
    }
    Ok(out)
}

/// The CSV columns of the comparison.
pub const COLUMNS: [&str; 12] = [
    "scope",
    "chain",
    "leaf_function",
    "base_traces",
    "candidate_traces",
    "base_mean_ms",
    "candidate_mean_ms",
    "change_pct",
    "base_mean_tasks",
    "candidate_mean_tasks",
    "p_value",
    "verdict",
];

fn ms3(x: f64) -> String {
    millis_text(TimeDelta::from_millis_f64(x))
}

fn pct(x: f64) -> String {
    if x.is_infinite() {
        "new".into()
    } else {
        format!("{x:.1}")
    }
}

/// [`pct`] with its unit, for text: `12.5%`, or `new`.
fn pct_text(x: f64) -> String {
    if x.is_infinite() {
        "new".into()
    } else {
        format!("{x:.1}%")
    }
}

/// Writes the comparison as CSV.
pub fn write_csv(changes: &[Change], out: impl Write) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(COLUMNS).map_err(std::io::Error::other)?;
    for c in changes {
        w.write_record([
            if c.chain.is_some() {
                "chain"
            } else {
                "overall"
            },
            c.chain.as_deref().unwrap_or(""),
            &c.leaf,
            &c.base_traces.to_string(),
            &c.candidate_traces.to_string(),
            &ms3(c.base_ms),
            &ms3(c.candidate_ms),
            &pct(c.change_pct),
            &format!("{:.2}", c.base_tasks),
            &format!("{:.2}", c.candidate_tasks),
            &format!("{:.4}", c.p_value),
            c.verdict.as_str(),
        ])
        .map_err(std::io::Error::other)?;
    }
    w.flush()
}

/// Writes the comparison as Markdown (overall, then up to 15 chains).
pub fn write_markdown(
    changes: &[Change],
    failed: &[String],
    out: &mut impl Write,
) -> std::io::Result<()> {
    writeln!(out, "## taskchain: candidate vs baseline\n")?;
    use crate::report::text::{cell, shorten};
    writeln!(
        out,
        "| scope | leaf | base ms | candidate ms | change | base tasks | candidate tasks | p | verdict |"
    )?;
    writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|---|")?;
    for c in changes.iter().take(16) {
        let scope = match &c.chain {
            None => "**overall**".to_string(),
            Some(ch) if ch.is_empty() => "(no chain)".into(),
            Some(ch) => format!("`{}`", cell(&shorten(ch, 80))),
        };
        writeln!(
            out,
            "| {scope} | {} | {} | {} | {} | {:.2} | {:.2} | {:.4} | {} |",
            cell(&c.leaf),
            ms3(c.base_ms),
            ms3(c.candidate_ms),
            pct_text(c.change_pct),
            c.base_tasks,
            c.candidate_tasks,
            c.p_value,
            c.verdict.as_str()
        )?;
    }
    if changes.len() > 16 {
        writeln!(out, "\n{} more chains in the CSV.", changes.len() - 16)?;
    }
    if !failed.is_empty() {
        writeln!(out, "\n**Files that could not be read:**\n")?;
        for f in failed {
            writeln!(out, "- {}", cell(f))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_p_values_match_tables() {
        // 5 vs 5, complete separation: 2 / C(10, 5) = 2 / 252.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        assert!((mann_whitney_p(&a, &b) - 2.0 / 252.0).abs() < 1e-12);
        // 3 vs 3 separated: 2 / 20 = 0.1, never significant.
        assert!((mann_whitney_p(&a[..3], &b[..3]) - 0.1).abs() < 1e-12);
        // Identical samples: nothing to see.
        assert_eq!(mann_whitney_p(&a, &a), 1.0);
    }

    #[test]
    fn normal_approximation_with_ties() {
        // 10 zeros vs 10 ones: every comparison favours b; U = 0, all tied within groups.
        let a = [0.0; 10];
        let b = [1.0; 10];
        let p = mann_whitney_p(&a, &b);
        // z = (50 − 0.5) / sqrt(100/12 · (21 − 1980/380)) = 49.5 / 11.47 = 4.32 → p ≈ 1.6e-5.
        assert!(p < 1e-4 && p > 1e-6, "{p}");
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
    }
}

//! `taskchain compare BASE... -- CANDIDATE...`: two sets of traces of one scenario, per
//! chain and overall, with a Mann-Whitney U test over the per-trace values so that run-to-run
//! noise is not reported as a regression.
//!
//! Per trace, the values compared are the long-task time (ms, sum of `dur`) and count —
//! overall, and per call chain (0 in a trace where the chain has no long task). The test is
//! two-sided; exact for small sets without ties, else the normal approximation with a tie
//! and continuity correction. A change is a regression when the candidate's mean is higher,
//! p < 0.05, and the increase is at least the minimum effect (`--min-effect`, 5% by
//! default; `--fail-on-regression PCT` when only it is given); an improvement the same way
//! down. With very small sets no change can be significant: 3 traces per side give p ≥ 0.1.
//!
//! With interactions in either set, a line compares INP (ms, per trace with interactions;
//! its counts are interactions per trace) by the same test (docs/METHOD.md §2.8).
//!
//! Chains are matched across the two sets by [`ChainKey`] (`--chain-key`): by default by
//! their frames' function names and script paths (no positions, no query, content hashes
//! in file names normalised, original names with source maps), so a rebuild that moves
//! lines or renames `app.3f9a2b1c.js` still compares each chain with itself.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::analyze::Settings;
use crate::report::FileReport;
use crate::report::chain_key::{self, ChainKey};
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
    /// `--min-effect` in percent, when given.
    pub min_effect: Option<f64>,
    /// `--chain-key`: how chains of the two sets are matched.
    pub chain_key: ChainKey,
    /// CSV output (`None`: standard output).
    pub output: Option<PathBuf>,
    /// Markdown output.
    pub markdown: Option<PathBuf>,
    /// HTML output (`--html`).
    pub html: Option<PathBuf>,
    /// Analysis settings.
    pub analysis: Settings,
    /// Threads.
    pub jobs: usize,
    /// Quiet.
    pub quiet: bool,
}

/// p-value below which a change is not put down to noise.
pub(crate) const ALPHA: f64 = 0.05;

/// The smallest change (percent of the baseline mean) called a regression or an
/// improvement when neither `--min-effect` nor `--fail-on-regression` is given.
pub(crate) const MIN_EFFECT_PCT: f64 = 5.0;

impl CompareConfig {
    /// The minimum effect in percent: `--min-effect`, else `--fail-on-regression`, else
    /// [`MIN_EFFECT_PCT`].
    pub fn min_effect_pct(&self) -> f64 {
        self.min_effect
            .or(self.fail_on_regression)
            .unwrap_or(MIN_EFFECT_PCT)
    }
}

/// Per-trace totals of one set.
#[derive(Debug, Default)]
struct Trace {
    long_task_time: f64,
    long_tasks: f64,
    /// chain key → (ms, count).
    chains: BTreeMap<String, (f64, f64)>,
}

/// How a chain key is shown: the exact chain text and the leaf function of its first task
/// (in the candidate set when it has one, so the positions are the new build's).
#[derive(Debug, Default)]
struct Shown {
    chain: String,
    leaf: String,
}

fn totals(
    reports: &[FileReport],
    mode: ChainKey,
    shown: &mut BTreeMap<String, Shown>,
) -> Vec<Trace> {
    reports
        .iter()
        .map(|r| {
            let mut t = Trace {
                long_task_time: r.stats.long_task_time.as_millis_f64(),
                long_tasks: r.long_tasks as f64,
                ..Trace::default()
            };
            for row in &r.rows {
                let key = chain_key::key(&row.chain, mode);
                shown.entry(key.clone()).or_insert_with(|| Shown {
                    chain: chain_text(&row.chain),
                    leaf: row
                        .leaf()
                        .map(|l| l.shown_function().to_string())
                        .unwrap_or_default(),
                });
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
pub(crate) struct Change {
    /// The INP line (`chain` is `None`): INP per trace in place of long-task time, and
    /// interactions per trace in place of long tasks.
    pub inp: bool,
    /// `None` for the overall and INP lines, else the chain as the CSV `chain` column writes it, of
    /// the key's first task in the candidate set (in the baseline when it is gone); empty:
    /// tasks without a chain.
    pub chain: Option<String>,
    /// The key the two sets' chains were matched by ([`ChainKey`]); empty for the overall
    /// line and tasks without a chain.
    pub chain_key: String,
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
    /// (candidate − base) / base × 100; `None` when the baseline mean is 0.
    pub change_pct: Option<f64>,
    /// Two-sided Mann-Whitney U p-value of the long-task times.
    pub p_value: f64,
    /// What the change is.
    pub change: ChangeKind,
}

/// What a line of the comparison says (the CSV `change` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChangeKind {
    /// A chain in no baseline trace. Its time counts in the overall line; on its own it
    /// does not fail `--fail-on-regression` (a renamed function is a new and a gone chain).
    New,
    /// A chain in no candidate trace.
    Gone,
    /// Higher, p < [`ALPHA`], by at least the minimum effect.
    Regression,
    /// Lower, p < [`ALPHA`], by at least the minimum effect.
    Improvement,
    /// Not significant, or smaller than the minimum effect.
    NoChange,
}

impl ChangeKind {
    /// As written in reports.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ChangeKind::New => "new",
            ChangeKind::Gone => "gone",
            ChangeKind::Regression => "regression",
            ChangeKind::Improvement => "improvement",
            ChangeKind::NoChange => "no change",
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

/// The line of one chain (`chain`: `Some`) or the overall line, `min_effect_pct` the
/// smallest change in percent that is a regression or an improvement.
fn change(
    chain: Option<(String, Shown)>,
    a: &[f64],
    b: &[f64],
    counts: (&[f64], &[f64]),
    min_effect_pct: f64,
) -> Change {
    let (ma, mb) = (mean(a), mean(b));
    let change_pct = (ma > 0.0).then(|| (mb - ma) / ma * 100.0);
    // The size of the change; infinite from nothing.
    let effect = change_pct.unwrap_or(if mb > 0.0 { f64::INFINITY } else { 0.0 });
    let p = mann_whitney_p(a, b);
    let is_chain = chain.is_some();
    let kind = if is_chain && ma == 0.0 && mb > 0.0 {
        ChangeKind::New
    } else if is_chain && mb == 0.0 && ma > 0.0 {
        ChangeKind::Gone
    } else if p < ALPHA && mb > ma && effect >= min_effect_pct {
        ChangeKind::Regression
    } else if p < ALPHA && mb < ma && -effect >= min_effect_pct {
        ChangeKind::Improvement
    } else {
        ChangeKind::NoChange
    };
    let (chain, chain_key, leaf) = match chain {
        Some((key, shown)) => (Some(shown.chain), key, shown.leaf),
        None => (None, String::new(), String::new()),
    };
    Change {
        inp: false,
        chain,
        chain_key,
        leaf,
        base_traces: a.len(),
        candidate_traces: b.len(),
        base_ms: ma,
        candidate_ms: mb,
        base_tasks: mean(counts.0),
        candidate_tasks: mean(counts.1),
        change_pct,
        p_value: p,
        change: kind,
    }
}

/// Compares two sets: the overall line first, then one line per chain key (`mode`) seen
/// in either set, largest absolute change in mean long-task time first (ties: by key).
pub(crate) fn compare(
    base: &[FileReport],
    candidate: &[FileReport],
    mode: ChainKey,
    min_effect_pct: f64,
) -> Vec<Change> {
    // The candidate's first: its chain texts are the ones shown.
    let mut shown = BTreeMap::new();
    let b = totals(candidate, mode, &mut shown);
    let a = totals(base, mode, &mut shown);
    let col = |s: &[Trace], f: &dyn Fn(&Trace) -> f64| s.iter().map(f).collect::<Vec<f64>>();
    let mut out = vec![change(
        None,
        &col(&a, &|t| t.long_task_time),
        &col(&b, &|t| t.long_task_time),
        (&col(&a, &|t| t.long_tasks), &col(&b, &|t| t.long_tasks)),
        min_effect_pct,
    )];
    // INP of the traces that have interactions.
    let inp = |s: &[FileReport]| -> (Vec<f64>, Vec<f64>) {
        s.iter()
            .filter_map(|r| Some((r.stats.inp?.as_millis_f64(), r.stats.interactions as f64)))
            .unzip()
    };
    let ((inp_a, n_a), (inp_b, n_b)) = (inp(base), inp(candidate));
    if !inp_a.is_empty() || !inp_b.is_empty() {
        let mut line = change(None, &inp_a, &inp_b, (&n_a, &n_b), min_effect_pct);
        line.inp = true;
        out.push(line);
    }
    let chains: BTreeSet<&String> = a.iter().chain(&b).flat_map(|t| t.chains.keys()).collect();
    let mut per_chain: Vec<Change> = chains
        .into_iter()
        .map(|c| {
            let ms = |s: &[Trace]| col(s, &|t| t.chains.get(c).map_or(0.0, |v| v.0));
            let n = |s: &[Trace]| col(s, &|t| t.chains.get(c).map_or(0.0, |v| v.1));
            let shown = shown.remove(c).unwrap_or_default();
            change(
                Some((c.clone(), shown)),
                &ms(&a),
                &ms(&b),
                (&n(&a), &n(&b)),
                min_effect_pct,
            )
        })
        .collect();
    per_chain.sort_by(|x, y| {
        let dx = (x.candidate_ms - x.base_ms).abs();
        let dy = (y.candidate_ms - y.base_ms).abs();
        dy.total_cmp(&dx)
            .then_with(|| x.chain_key.cmp(&y.chain_key))
    });
    out.extend(per_chain);
    out
}

/// True when `c` fails `--fail-on-regression PCT`: a regression (overall or of a chain)
/// that grew by at least PCT percent.
pub(crate) fn fails_gate(c: &Change, pct: f64) -> bool {
    c.change == ChangeKind::Regression && c.change_pct.is_none_or(|x| x >= pct)
}

/// Two-sided Mann-Whitney U test of `a` against `b`. 1 when either is empty.
pub(crate) fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
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
    /// Lines that fail `--fail-on-regression` ([`fails_gate`]; 0 without it).
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
            ("--html", cfg.html.as_deref()),
        ],
        &inputs,
        &cfg.analysis.enrich.read_paths().1,
    )?;
    let open = |p: &Option<PathBuf>| {
        p.as_deref()
            .map(|p| OutFile::open(Some(p), false))
            .transpose()
    };
    let csv_file = OutFile::open(cfg.output.as_deref(), false)?;
    let md_file = open(&cfg.markdown)?;
    let html_file = open(&cfg.html)?;
    let base = crate::batch::analyze_all(&cfg.base, &cfg.analysis, cfg.jobs, cfg.quiet)?;
    let cand = crate::batch::analyze_all(&cfg.candidate, &cfg.analysis, cfg.jobs, cfg.quiet)?;
    let changes = compare(
        &base.reports,
        &cand.reports,
        cfg.chain_key,
        cfg.min_effect_pct(),
    );
    let failed: Vec<String> = base
        .errors
        .iter()
        .chain(&cand.errors)
        .map(|e| e.error.clone())
        .collect();
    let out = CompareOutcome {
        failed: failed.len(),
        regressions: cfg.fail_on_regression.map_or(0, |pct| {
            changes.iter().filter(|c| fails_gate(c, pct)).count()
        }),
    };
    csv_file.fill(|w| write_csv(&changes, w))?;
    if let Some(f) = md_file {
        f.fill(|mut w| write_markdown(&changes, &failed, &mut w))?;
    }
    if let Some(f) = html_file {
        use crate::report::html::{self, CompareLine, Comparison, Page};
        let mut page = Page::new(html::DEFAULT_CARDS, cfg.chain_key);
        html::add_reports(&mut page, &cand.reports, &cand.errors);
        let comparison = Comparison {
            base_traces: base.reports.len(),
            candidate_traces: cand.reports.len(),
            lines: changes
                .iter()
                .map(|c| CompareLine {
                    change: c.change.as_str(),
                    chain: c.chain.clone(),
                    inp: c.inp,
                    leaf: c.leaf.clone(),
                    base_ms: c.base_ms,
                    candidate_ms: c.candidate_ms,
                    change_pct: c.change_pct,
                    base_tasks: c.base_tasks,
                    candidate_tasks: c.candidate_tasks,
                    p_value: c.p_value,
                })
                .collect(),
        };
        f.fill(|mut w| page.write(Some(&comparison), &mut w))?;
    }
    if !cfg.quiet {
        let count = |k: ChangeKind| changes.iter().filter(|c| c.change == k).count();
        for c in changes
            .iter()
            .filter(|c| c.change == ChangeKind::Regression)
        {
            say!(
                "taskchain: regression: {}: {} ms → {} ms ({}, p = {:.4})",
                c.chain.as_deref().map_or(
                    if c.inp {
                        "INP"
                    } else {
                        "overall long-task time"
                    },
                    |ch| if ch.is_empty() { "(no chain)" } else { ch }
                ),
                ms3(c.base_ms),
                ms3(c.candidate_ms),
                pct_text(c.change_pct),
                c.p_value
            );
        }
        say!(
            "taskchain: compared {} and {}: {}, {}, {} new, {} gone, {} failed",
            plural(base.reports.len(), "baseline trace", "baseline traces"),
            plural(cand.reports.len(), "candidate trace", "candidate traces"),
            plural(count(ChangeKind::Regression), "regression", "regressions"),
            plural(
                count(ChangeKind::Improvement),
                "improvement",
                "improvements"
            ),
            count(ChangeKind::New),
            count(ChangeKind::Gone),
            out.failed
        );
    }
    Ok(out)
}

/// The CSV columns of the comparison.
pub(crate) const COLUMNS: [&str; 13] = [
    "scope",
    "chain",
    "chain_key",
    "leaf_function",
    "base_traces",
    "candidate_traces",
    "base_mean_ms",
    "candidate_mean_ms",
    "change_pct",
    "change",
    "base_mean_tasks",
    "candidate_mean_tasks",
    "p_value",
];

fn ms3(x: f64) -> String {
    millis_text(TimeDelta::from_millis_f64(x))
}

/// The CSV's `change_pct`: one decimal, empty when the baseline mean is 0.
fn pct(x: Option<f64>) -> String {
    x.map_or_else(String::new, |x| format!("{x:.1}"))
}

/// [`pct`] with its sign and unit, for text: `+12.5%`, `-3.0%`, or `new` from nothing.
fn pct_text(x: Option<f64>) -> String {
    x.map_or_else(|| "from 0".into(), |x| format!("{x:+.1}%"))
}

/// Writes the comparison as CSV.
pub(crate) fn write_csv(changes: &[Change], out: impl Write) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(COLUMNS).map_err(std::io::Error::other)?;
    for c in changes {
        w.write_record([
            if c.inp {
                "inp"
            } else if c.chain.is_some() {
                "chain"
            } else {
                "overall"
            },
            c.chain.as_deref().unwrap_or(""),
            &c.chain_key,
            &c.leaf,
            &c.base_traces.to_string(),
            &c.candidate_traces.to_string(),
            &ms3(c.base_ms),
            &ms3(c.candidate_ms),
            &pct(c.change_pct),
            c.change.as_str(),
            &format!("{:.2}", c.base_tasks),
            &format!("{:.2}", c.candidate_tasks),
            &format!("{:.4}", c.p_value),
        ])
        .map_err(std::io::Error::other)?;
    }
    w.flush()
}

/// Writes the comparison as Markdown (overall, then up to 15 chains).
pub(crate) fn write_markdown(
    changes: &[Change],
    failed: &[String],
    out: &mut impl Write,
) -> std::io::Result<()> {
    writeln!(out, "## taskchain: candidate vs baseline\n")?;
    use crate::report::text::{cell, code, shorten};
    writeln!(
        out,
        "| scope | leaf | base ms | candidate ms | Δ | base tasks | candidate tasks | p | change |"
    )?;
    writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|---|")?;
    for c in changes.iter().take(16) {
        let scope = match &c.chain {
            None if c.inp => "**INP**".to_string(),
            None => "**overall**".to_string(),
            Some(ch) if ch.is_empty() => "(no chain)".into(),
            Some(ch) => format!("`{}`", cell(&shorten(ch, 80))),
        };
        let delta = match (c.change, c.change_pct) {
            (ChangeKind::New, _) => "new".to_string(),
            (_, x) => pct_text(x),
        };
        writeln!(
            out,
            "| {scope} | {} | {} | {} | {delta} | {:.2} | {:.2} | {:.4} | {} |",
            code(&c.leaf),
            ms3(c.base_ms),
            ms3(c.candidate_ms),
            c.base_tasks,
            c.candidate_tasks,
            c.p_value,
            c.change.as_str()
        )?;
    }
    if changes.len() > 16 {
        writeln!(out, "\n{} more chains in the CSV.", changes.len() - 16)?;
    }
    if !failed.is_empty() {
        writeln!(out, "\n**Files that could not be read:**\n")?;
        for f in failed {
            writeln!(out, "- {}", code(f))?;
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

    #[test]
    fn inp_per_trace_is_compared_by_the_same_test() {
        let report = |inp_ms: Option<i64>, interactions: usize| FileReport {
            stats: crate::report::FileStats {
                inp: inp_ms.map(|ms| TimeDelta::from_micros(ms * 1000)),
                interactions,
                ..Default::default()
            },
            ..Default::default()
        };
        // Base INP 100..140 ms (2 interactions each), candidate 200..240 ms (3 each), and
        // one candidate trace without interactions, which the INP line leaves out.
        let base: Vec<FileReport> = (0..5).map(|k| report(Some(100 + 10 * k), 2)).collect();
        let mut cand: Vec<FileReport> = (0..5).map(|k| report(Some(200 + 10 * k), 3)).collect();
        cand.push(report(None, 0));
        let changes = compare(&base, &cand, ChainKey::default(), MIN_EFFECT_PCT);
        let inp = &changes[1];
        assert!(inp.inp && inp.chain.is_none());
        assert_eq!((inp.base_traces, inp.candidate_traces), (5, 5));
        assert_eq!((inp.base_ms, inp.candidate_ms), (120.0, 220.0));
        assert_eq!((inp.base_tasks, inp.candidate_tasks), (2.0, 3.0));
        // 5 vs 5 separated: p = 2 / 252; +83.3%: a regression that fails a 50% gate.
        assert!((inp.p_value - 2.0 / 252.0).abs() < 1e-12);
        assert_eq!(inp.change, ChangeKind::Regression);
        assert!(fails_gate(inp, 50.0));
        let mut csv = Vec::new();
        write_csv(&changes, &mut csv).unwrap();
        let line = String::from_utf8(csv)
            .unwrap()
            .lines()
            .nth(2)
            .unwrap()
            .to_string();
        assert!(
            line.starts_with("inp,,,,5,5,120.000,220.000,83.3,regression,2.00,3.00,"),
            "{line}"
        );
        // No interactions anywhere: no INP line.
        let none = compare(
            &[report(None, 0)],
            &[report(None, 0)],
            ChainKey::default(),
            5.0,
        );
        assert!(none.iter().all(|c| !c.inp));
    }
}

//! `--aggregate`: one row per distinct call chain (or leaf script URL, leaf function, or
//! owner of the leaf frame) over every task and file — which chains cost the most
//! long-task time in total, and whose code they are.

use std::collections::HashMap;
use std::io::Write;

use super::chain_key::{self, ChainKey};
use super::{ReportRow, chain_text, millis_text};
use crate::enrich::party::NO_SCRIPT_URL;
use crate::time::TimeDelta;

/// What rows are grouped by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AggregateBy {
    /// The chain, by its [`ChainKey`] (`--chain-key`: by default function names and
    /// script paths, so one chain's tasks meet across builds and line moves).
    #[default]
    Chain,
    /// The leaf frame's script URL.
    Url,
    /// Who owns the leaf frame: `first-party`, `vendor:<name>`, `third-party:unknown`,
    /// `(no script url)` (see [`crate::enrich::party`]).
    Vendor,
    /// The leaf function with its script URL without query or fragment (`name (url)`), so
    /// one function's tasks meet whatever line, column or cache-busting query they had
    /// (and, with `--chain-key normalized`, content hash in the file name); with a source
    /// map, the original function and source (`name (source)`).
    Function,
}

/// The counts every grouping writes after its key columns.
const COUNT_COLUMNS: [&str; 7] = [
    "long_tasks",
    "ok_tasks",
    "files",
    "stack_ms_total",
    "stack_ms_p50",
    "stack_ms_p95",
    "task_ms_total",
];

/// A long task's blocking time: `dur − 50 ms` (Lighthouse's), zero for shorter tasks.
pub fn blocking_time(dur: TimeDelta) -> TimeDelta {
    TimeDelta::from_nanos((dur.as_nanos() - 50_000_000).max(0))
}

/// `url` without its query and fragment.
fn without_query(url: &str) -> &str {
    &url[..url.find(['?', '#']).unwrap_or(url.len())]
}

#[derive(Debug, Default)]
struct Group {
    /// The chain text of the group's first task.
    chain: String,
    leaf_function: String,
    leaf_url: String,
    tasks: u64,
    ok: u64,
    files: u64,
    last_file: Option<String>,
    chains: std::collections::HashSet<String>,
    stack: Vec<TimeDelta>,
    task_time: TimeDelta,
    blocking_time: TimeDelta,
    /// The vendor's company and category (`--aggregate-by vendor`).
    company: String,
    category: String,
}

/// One owner's line of the "who owns the blocking time" table.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnerLine {
    /// `first-party`, `vendor:<name>`, `third-party:unknown`, `(no script url)`, …
    pub owner: String,
    /// Long tasks whose leaf frame it owns.
    pub long_tasks: u64,
    /// Their blocking time ([`blocking_time`]).
    pub blocking_time: TimeDelta,
    /// Its share of all long tasks' window samples (by each sample's leaf frame), in [0, 1].
    pub sample_share: f64,
}

/// Collects rows (in report order) and writes the groups.
#[derive(Debug, Default)]
pub struct Aggregator {
    by: AggregateBy,
    mode: ChainKey,
    groups: HashMap<String, Group>,
    /// Window samples by owner group over every task (`--aggregate-by vendor`).
    samples: HashMap<String, u64>,
}

/// Nearest-rank percentile of sorted values (`p` in 0–100).
fn percentile(sorted: &[TimeDelta], p: f64) -> TimeDelta {
    if sorted.is_empty() {
        return TimeDelta::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

impl Aggregator {
    /// Groups by `by`, chains by `mode`.
    pub fn new(by: AggregateBy, mode: ChainKey) -> Self {
        Aggregator {
            by,
            mode,
            groups: HashMap::new(),
            samples: HashMap::new(),
        }
    }

    /// Adds a row (rows without a chain — no samples, no profile — are left out).
    pub fn add(&mut self, r: &ReportRow) {
        let Some(leaf) = r.leaf() else { return };
        let chain = chain_text(&r.chain);
        let parties = r.notes.parties.as_ref();
        let owner = parties.and_then(|p| p.task.as_ref());
        let key = match self.by {
            AggregateBy::Chain => chain_key::key(&r.chain, self.mode),
            AggregateBy::Url => leaf.url.clone(),
            AggregateBy::Vendor => owner.map_or_else(|| NO_SCRIPT_URL.to_owned(), |p| p.group()),
            AggregateBy::Function => match leaf.original.as_deref() {
                // With a source map: the original function and source.
                Some(o) if o.in_chain_text => format!(
                    "{} ({})",
                    o.function.as_deref().unwrap_or(&leaf.function),
                    o.source
                ),
                _ => match (self.mode, without_query(&leaf.url)) {
                    (_, "") => leaf.function.clone(),
                    (ChainKey::Exact, url) => format!("{} ({url})", leaf.function),
                    // A function is told apart by its script's whole URL: the host says
                    // whose script it is (a vendor's `/gtm.js` is not the page's).
                    (ChainKey::Normalized | ChainKey::Origin, url) => {
                        format!("{} ({})", leaf.function, chain_key::script_path(url))
                    }
                },
            },
        };
        if self.by == AggregateBy::Vendor {
            // Every group with samples gets a row, even one that leads no task.
            for x in parties.map_or(&[][..], |p| &p.shares[..]) {
                *self.samples.entry(x.group.clone()).or_default() += u64::from(x.samples);
                let g = self.groups.entry(x.group.clone()).or_default();
                if let Some(e) = &x.vendor {
                    g.company.clone_from(&e.company);
                    g.category.clone_from(&e.category);
                }
            }
        }
        let g = self.groups.entry(key).or_default();
        if g.tasks == 0 {
            g.chain.clone_from(&chain);
            g.leaf_function = leaf.shown_function().to_string();
            g.leaf_url = leaf.url.clone();
        }
        g.tasks += 1;
        g.ok += (r.status == crate::chain::ChainStatus::Ok) as u64;
        if g.last_file.as_deref() != Some(&*r.file) {
            g.files += 1;
            g.last_file = Some(r.file.to_string());
        }
        if self.by != AggregateBy::Vendor {
            g.chains.insert(chain);
        }
        g.stack.push(r.stack_time);
        g.task_time = g.task_time + r.task_dur;
        g.blocking_time = g.blocking_time + blocking_time(r.task_dur);
    }

    /// The owners of the leaf frames (grouped `--aggregate-by vendor`), most blocking time
    /// first (ties: most samples, then by name), with every owner that only has samples.
    pub fn owners(&self) -> Vec<OwnerLine> {
        let total: u64 = self.samples.values().sum();
        let share = |g: &str| match total {
            0 => 0.0,
            t => self.samples.get(g).copied().unwrap_or(0) as f64 / t as f64,
        };
        let mut v: Vec<OwnerLine> = self
            .groups
            .iter()
            .map(|(k, g)| OwnerLine {
                owner: k.clone(),
                long_tasks: g.tasks,
                blocking_time: g.blocking_time,
                sample_share: share(k),
            })
            .collect();
        v.sort_by(|a, b| {
            b.blocking_time
                .cmp(&a.blocking_time)
                .then(b.sample_share.total_cmp(&a.sample_share))
                .then_with(|| a.owner.cmp(&b.owner))
        });
        v
    }

    /// The groups, most total stack time first (ties: by key).
    fn sorted(&mut self) -> Vec<(&String, &mut Group)> {
        let mut v: Vec<(&String, &mut Group)> = self.groups.iter_mut().collect();
        for (_, g) in v.iter_mut() {
            g.stack.sort_unstable();
        }
        v.sort_by(|a, b| {
            let ta: TimeDelta = a.1.stack.iter().copied().sum();
            let tb: TimeDelta = b.1.stack.iter().copied().sum();
            tb.cmp(&ta).then_with(|| a.0.cmp(b.0))
        });
        v
    }

    /// The top `n` groups as (chain text of the first task, leaf function, total stack
    /// time, tasks), for summaries.
    pub fn top(&mut self, n: usize) -> Vec<(String, String, TimeDelta, u64)> {
        self.sorted()
            .into_iter()
            .take(n)
            .map(|(_, g)| {
                (
                    g.chain.clone(),
                    g.leaf_function.clone(),
                    g.stack.iter().copied().sum(),
                    g.tasks,
                )
            })
            .collect()
    }

    /// The groups as rows, in the CSV's order (most total stack time first, ties by key).
    pub fn rows(&mut self) -> Vec<AggregateRow> {
        let total_samples: u64 = self.samples.values().sum();
        let samples = self.samples.clone();
        self.sorted()
            .into_iter()
            .map(|(key, g)| AggregateRow {
                key: key.clone(),
                chain: g.chain.clone(),
                leaf_function: g.leaf_function.clone(),
                leaf_url: g.leaf_url.clone(),
                chains: g.chains.len() as u64,
                company: g.company.clone(),
                category: g.category.clone(),
                tasks: g.tasks,
                ok: g.ok,
                files: g.files,
                stack_total: g.stack.iter().copied().sum(),
                stack_p50: percentile(&g.stack, 50.0),
                stack_p95: percentile(&g.stack, 95.0),
                task_total: g.task_time,
                blocking_total: g.blocking_time,
                sample_share: (total_samples > 0).then(|| {
                    let n = samples.get(key.as_str()).copied().unwrap_or(0);
                    crate::chain::round_confidence(n as f64 / total_samples as f64)
                }),
            })
            .collect()
    }

    /// What rows are grouped by.
    pub fn by(&self) -> AggregateBy {
        self.by
    }

    /// Writes the CSV.
    pub fn write(&mut self, out: impl Write) -> std::io::Result<()> {
        let by = self.by;
        let mut w = csv::Writer::from_writer(out);
        // Every grouping's own key columns, then the same counts.
        let (key_columns, extra): (&[&str], &[&str]) = match by {
            AggregateBy::Chain => (
                &["chain", "leaf_function", "leaf_url", "chain_key", "chains"],
                &[],
            ),
            AggregateBy::Url => (&["url", "chains"], &[]),
            AggregateBy::Function => (&["function", "chains"], &[]),
            AggregateBy::Vendor => (
                &["owner", "company", "category"],
                &["blocking_ms_total", "sample_share"],
            ),
        };
        let head: Vec<&str> = [key_columns, &COUNT_COLUMNS, extra].concat();
        let total_samples: u64 = self.samples.values().sum();
        let samples = self.samples.clone();
        w.write_record(&head).map_err(std::io::Error::other)?;
        for (key, g) in self.sorted() {
            let total: TimeDelta = g.stack.iter().copied().sum();
            let tail = [
                g.tasks.to_string(),
                g.ok.to_string(),
                g.files.to_string(),
                millis_text(total),
                millis_text(percentile(&g.stack, 50.0)),
                millis_text(percentile(&g.stack, 95.0)),
                millis_text(g.task_time),
            ];
            let mut rec: Vec<String> = match by {
                AggregateBy::Chain => vec![
                    g.chain.clone(),
                    g.leaf_function.clone(),
                    g.leaf_url.clone(),
                    key.clone(),
                    g.chains.len().to_string(),
                ],
                AggregateBy::Url | AggregateBy::Function => {
                    vec![key.clone(), g.chains.len().to_string()]
                }
                AggregateBy::Vendor => vec![key.clone(), g.company.clone(), g.category.clone()],
            };
            rec.extend(tail);
            if by == AggregateBy::Vendor {
                rec.push(millis_text(g.blocking_time));
                let n = samples.get(key.as_str()).copied().unwrap_or(0);
                rec.push(match total_samples {
                    0 => String::new(),
                    t => format!("{:.3}", n as f64 / t as f64),
                });
            }
            w.write_record(&rec).map_err(std::io::Error::other)?;
        }
        w.flush()
    }
}

/// One group of the aggregate, as its outputs show it (Parquet; the CSV's columns for
/// each [`AggregateBy`]).
#[derive(Clone, Debug, PartialEq)]
pub struct AggregateRow {
    /// The chain key ([`ChainKey`]), the leaf's script URL, the owner or the function (by
    /// `by`).
    pub key: String,
    /// The chain text of the group's first task (`chain`: the CSV's `chain` column).
    pub chain: String,
    /// The leaf function of the group's first task (`chain`).
    pub leaf_function: String,
    /// The leaf URL of the group's first task (`chain`).
    pub leaf_url: String,
    /// Distinct chain texts (`chain`: more than one when the key joined chains whose
    /// positions differ; `url`, `function`).
    pub chains: u64,
    /// The vendor's company (`vendor`).
    pub company: String,
    /// The vendor's category (`vendor`).
    pub category: String,
    /// Long tasks.
    pub tasks: u64,
    /// Of them, with status `ok`.
    pub ok: u64,
    /// Files with at least one of the tasks.
    pub files: u64,
    /// Sum of their stack time.
    pub stack_total: TimeDelta,
    /// Nearest-rank median of their stack time.
    pub stack_p50: TimeDelta,
    /// Nearest-rank 95th percentile of their stack time.
    pub stack_p95: TimeDelta,
    /// Sum of their durations.
    pub task_total: TimeDelta,
    /// Sum of their blocking time (`vendor`).
    pub blocking_total: TimeDelta,
    /// The owner's share of all window samples, 3 decimals (`vendor`; `None` without
    /// samples).
    pub sample_share: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<TimeDelta> = (1..=20).map(TimeDelta::from_micros).collect();
        // p50 of 20 values: rank 10; p95: rank 19.
        assert_eq!(percentile(&v, 50.0), TimeDelta::from_micros(10));
        assert_eq!(percentile(&v, 95.0), TimeDelta::from_micros(19));
        assert_eq!(percentile(&v[..1], 95.0), TimeDelta::from_micros(1));
    }
}

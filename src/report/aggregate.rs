//! `--aggregate`: one row per distinct call chain (or leaf script URL) over every task and
//! file — which chains cost the most long-task time in total.

use std::collections::HashMap;
use std::io::Write;

use super::{ReportRow, chain_text, millis_text};
use crate::time::TimeDelta;

/// What rows are grouped by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum AggregateBy {
    /// The whole chain (frames and positions).
    #[default]
    Chain,
    /// The leaf frame's script URL.
    Url,
}

#[derive(Debug, Default)]
struct Group {
    leaf_function: String,
    leaf_url: String,
    tasks: u64,
    ok: u64,
    files: u64,
    last_file: Option<String>,
    chains: std::collections::HashSet<String>,
    stack: Vec<TimeDelta>,
    task_time: TimeDelta,
}

/// Collects rows (in report order) and writes the groups.
#[derive(Debug, Default)]
pub struct Aggregator {
    by: AggregateBy,
    groups: HashMap<String, Group>,
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
    /// Groups by `by`.
    pub fn new(by: AggregateBy) -> Self {
        Aggregator {
            by,
            groups: HashMap::new(),
        }
    }

    /// Adds a row (rows without a chain — no samples, no profile — are left out).
    pub fn add(&mut self, r: &ReportRow) {
        let Some(leaf) = r.leaf() else { return };
        let chain = chain_text(&r.chain);
        let key = match self.by {
            AggregateBy::Chain => chain.clone(),
            AggregateBy::Url => leaf.url.clone(),
        };
        let g = self.groups.entry(key).or_default();
        if g.tasks == 0 {
            g.leaf_function = leaf.shown_function().to_string();
            g.leaf_url = leaf.url.clone();
        }
        g.tasks += 1;
        g.ok += (r.status == crate::chain::ChainStatus::Ok) as u64;
        if g.last_file.as_deref() != Some(r.file.as_str()) {
            g.files += 1;
            g.last_file = Some(r.file.clone());
        }
        if self.by == AggregateBy::Url {
            g.chains.insert(chain);
        }
        g.stack.push(r.stack_time);
        g.task_time = g.task_time + r.task_dur;
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

    /// The top `n` groups as (key, leaf function, total stack time, tasks), for summaries.
    pub fn top(&mut self, n: usize) -> Vec<(String, String, TimeDelta, u64)> {
        self.sorted()
            .into_iter()
            .take(n)
            .map(|(k, g)| {
                (
                    k.clone(),
                    g.leaf_function.clone(),
                    g.stack.iter().copied().sum(),
                    g.tasks,
                )
            })
            .collect()
    }

    /// Writes the CSV.
    pub fn write(&mut self, out: impl Write) -> std::io::Result<()> {
        let by = self.by;
        let mut w = csv::Writer::from_writer(out);
        let head: &[&str] = match by {
            AggregateBy::Chain => &[
                "chain",
                "leaf_function",
                "leaf_url",
                "long_tasks",
                "ok_tasks",
                "files",
                "stack_ms_total",
                "stack_ms_p50",
                "stack_ms_p95",
                "task_ms_total",
            ],
            AggregateBy::Url => &[
                "url",
                "chains",
                "long_tasks",
                "ok_tasks",
                "files",
                "stack_ms_total",
                "stack_ms_p50",
                "stack_ms_p95",
                "task_ms_total",
            ],
        };
        w.write_record(head).map_err(std::io::Error::other)?;
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
                AggregateBy::Chain => {
                    vec![key.clone(), g.leaf_function.clone(), g.leaf_url.clone()]
                }
                AggregateBy::Url => vec![key.clone(), g.chains.len().to_string()],
            };
            rec.extend(tail);
            w.write_record(&rec).map_err(std::io::Error::other)?;
        }
        w.flush()
    }
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

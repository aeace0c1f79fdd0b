//! CI gates: per-file budgets (`--budget KEY=VALUE`). A breach makes the exit code 1.

use std::fmt;
use std::str::FromStr;

use crate::report::FileStats;

/// What a budget limits, per file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetKey {
    /// Number of long tasks (`long-tasks`).
    LongTasks,
    /// Blocking time of the whole trace, ms (`tbt-ms`).
    TbtMs,
    /// Total blocking time from the first contentful paint on, ms (`tbt-from-fcp-ms`; 0
    /// without one).
    TbtFromFcpMs,
    /// Longest top-level task, ms (`max-task-ms`).
    MaxTaskMs,
    /// Sum of long-task durations, ms (`long-task-ms`).
    LongTaskMs,
    /// Interaction to Next Paint, ms (`inp-ms`; 0 without interactions).
    InpMs,
}

/// One `--budget KEY=VALUE`: the file breaks it when its value is above `limit`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    /// What is limited.
    pub key: BudgetKey,
    /// The largest value allowed.
    pub limit: f64,
}

impl BudgetKey {
    const ALL: [(&'static str, BudgetKey); 6] = [
        ("long-tasks", BudgetKey::LongTasks),
        ("tbt-ms", BudgetKey::TbtMs),
        ("tbt-from-fcp-ms", BudgetKey::TbtFromFcpMs),
        ("max-task-ms", BudgetKey::MaxTaskMs),
        ("long-task-ms", BudgetKey::LongTaskMs),
        ("inp-ms", BudgetKey::InpMs),
    ];

    /// The key as written on the command line.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .expect("listed")
            .0
    }

    /// This key's value for one file.
    pub fn value(self, long_tasks: usize, s: &FileStats) -> f64 {
        match self {
            BudgetKey::LongTasks => long_tasks as f64,
            BudgetKey::TbtMs => s.blocking_time.as_millis_f64(),
            BudgetKey::TbtFromFcpMs => s.blocking_time_from_fcp.map_or(0.0, |d| d.as_millis_f64()),
            BudgetKey::MaxTaskMs => s.max_task.as_millis_f64(),
            BudgetKey::LongTaskMs => s.long_task_time.as_millis_f64(),
            BudgetKey::InpMs => s.inp.map_or(0.0, |d| d.as_millis_f64()),
        }
    }
}

impl FromStr for Budget {
    type Err = String;
    fn from_str(s: &str) -> Result<Budget, String> {
        let keys = || {
            BudgetKey::ALL
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| format!("--budget wants KEY=VALUE (keys: {}), got {s:?}", keys()))?;
        let key = BudgetKey::ALL
            .iter()
            .find(|(n, _)| *n == k.trim())
            .map(|(_, key)| *key)
            .ok_or_else(|| format!("--budget: unknown key {k:?} (keys: {})", keys()))?;
        let limit: f64 = v
            .trim()
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| format!("--budget {k}: want a number ≥ 0, got {v:?}"))?;
        Ok(Budget { key, limit })
    }
}

/// A file over a budget.
#[derive(Clone, Debug, PartialEq)]
pub struct Breach {
    /// The file.
    pub file: String,
    /// The budget.
    pub budget: Budget,
    /// The file's value.
    pub value: f64,
}

impl fmt::Display for Breach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} is {} (budget {})",
            self.file,
            self.budget.key.name(),
            round3(self.value),
            round3(self.budget.limit)
        )
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The budgets `file` breaks.
pub fn check(budgets: &[Budget], file: &str, long_tasks: usize, s: &FileStats) -> Vec<Breach> {
    budgets
        .iter()
        .filter_map(|b| {
            let value = b.key.value(long_tasks, s);
            (value > b.limit).then(|| Breach {
                file: file.to_string(),
                budget: *b,
                value,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::TimeDelta;

    #[test]
    fn parse_and_check() {
        let b: Budget = "tbt-ms=200".parse().unwrap();
        assert_eq!((b.key, b.limit), (BudgetKey::TbtMs, 200.0));
        assert!(
            "tbt=1"
                .parse::<Budget>()
                .unwrap_err()
                .contains("unknown key")
        );
        assert!("long-tasks=-1".parse::<Budget>().is_err());
        let s = FileStats {
            blocking_time: TimeDelta::from_micros(200_001),
            max_task: TimeDelta::from_micros(150_000),
            inp: Some(TimeDelta::from_micros(180_568)),
            ..FileStats::default()
        };
        let budgets: Vec<Budget> = [
            "tbt-ms=200",
            "max-task-ms=150",
            "long-tasks=0",
            "inp-ms=200",
        ]
        .iter()
        .map(|b| b.parse().unwrap())
        .collect();
        // 200.001 ms > 200 breaks; 150 ms = 150 does not; 2 long tasks > 0 breaks; an INP
        // of 180.568 ms is within 200.
        let breaches = check(&budgets, "f.json", 2, &s);
        assert_eq!(
            breaches.iter().map(|b| b.to_string()).collect::<Vec<_>>(),
            [
                "f.json: tbt-ms is 200.001 (budget 200)",
                "f.json: long-tasks is 2 (budget 0)"
            ]
        );
        let inp: Budget = "inp-ms=180.5".parse().unwrap();
        assert_eq!(
            check(&[inp], "f.json", 0, &s)[0].to_string(),
            "f.json: inp-ms is 180.568 (budget 180.5)"
        );
        // No interaction: an INP of 0 breaks no budget.
        assert!(check(&[inp], "f.json", 0, &FileStats::default()).is_empty());
        // m86 from its first contentful paint: 3943.594 ms (docs/METHOD.md §2.3); none
        // without a paint.
        let fcp: Budget = "tbt-from-fcp-ms=3900".parse().unwrap();
        let m86 = FileStats {
            blocking_time_from_fcp: Some(TimeDelta::from_micros(3_943_594)),
            ..FileStats::default()
        };
        assert_eq!(
            check(&[fcp], "m86.json", 5, &m86)[0].to_string(),
            "m86.json: tbt-from-fcp-ms is 3943.594 (budget 3900)"
        );
        assert!(check(&[fcp], "f.json", 0, &s).is_empty());
    }
}

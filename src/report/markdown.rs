//! `--markdown`: a short report of a batch for `$GITHUB_STEP_SUMMARY` or a pull-request
//! comment: totals, the files with the most blocking time, who owns the blocking time, the
//! top chains, the slowest interactions, budget breaches and failed files.

use std::io::Write;

use super::millis_text;
use super::text::{cell, code, plural, shorten};
use crate::time::TimeDelta;

/// One file's line in the report.
#[derive(Clone, Debug)]
pub struct FileLine {
    /// The file.
    pub file: String,
    /// Long tasks.
    pub long_tasks: usize,
    /// Total blocking time.
    pub blocking_time: TimeDelta,
    /// Longest task.
    pub max_task: TimeDelta,
}

/// One interaction's line in "Slowest interactions".
#[derive(Clone, Debug, PartialEq)]
pub struct InteractionLine {
    /// The file.
    pub file: String,
    /// `pointer`, `keyboard` or `other`, with the event type (`pointer (click)`).
    pub kind: String,
    /// Input to next paint.
    pub duration: TimeDelta,
    /// Input delay, processing, presentation delay.
    pub phases: [TimeDelta; 3],
    /// The longest phase's name and its chain text (empty when it has none).
    pub longest: (&'static str, String),
    /// It is the INP interaction of its page.
    pub is_inp: bool,
}

impl InteractionLine {
    /// The line of one reported interaction.
    pub fn of(r: &super::interactions::InteractionRow) -> InteractionLine {
        let i = &r.interaction;
        let longest = r.longest_phase().map_or(("", String::new()), |p| {
            (p.phase.as_str(), super::chain_text(&p.row.chain))
        });
        InteractionLine {
            file: r.file.to_string(),
            kind: format!("{} ({})", i.category.as_str(), i.event.event_type),
            duration: i.duration(),
            phases: [i.input_delay(), i.processing(), i.presentation_delay()],
            longest,
            is_inp: i.is_inp,
        }
    }
}

/// Keeps the `n` slowest of `lines` and `more`, slowest first (ties: by file, then as
/// given).
pub fn keep_slowest(
    lines: &mut Vec<InteractionLine>,
    more: impl IntoIterator<Item = InteractionLine>,
    n: usize,
) {
    lines.extend(more);
    lines.sort_by(|a, b| {
        b.duration
            .cmp(&a.duration)
            .then_with(|| a.file.cmp(&b.file))
    });
    lines.truncate(n);
}

/// What the report shows.
#[derive(Debug, Default)]
pub struct MarkdownReport {
    /// Files read, long tasks, rows `ok`.
    pub files: usize,
    /// Long tasks.
    pub long_tasks: usize,
    /// Rows with status `ok`.
    pub attributed: usize,
    /// Per file.
    pub lines: Vec<FileLine>,
    /// Top chains: (chain, leaf, total stack time, tasks).
    pub top_chains: Vec<(String, String, TimeDelta, u64)>,
    /// Owners of the long tasks' leaf frames, most blocking time first.
    pub owners: Vec<super::aggregate::OwnerLine>,
    /// The slowest interactions of every file (at most 10, [`keep_slowest`]).
    pub slowest_interactions: Vec<InteractionLine>,
    /// Budget breaches, as sentences.
    pub breaches: Vec<String>,
    /// Failed files, as sentences.
    pub failed: Vec<String>,
}

impl MarkdownReport {
    /// Writes the Markdown.
    pub fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(out, "## taskchain\n")?;
        writeln!(
            out,
            "{}, {}, {} attributed with confidence.\n",
            plural(self.files, "file", "files"),
            plural(self.long_tasks, "long task", "long tasks"),
            self.attributed
        )?;
        if !self.breaches.is_empty() {
            writeln!(out, "### Budget breaches\n")?;
            for b in &self.breaches {
                writeln!(out, "- ❌ {}", cell(b))?;
            }
            writeln!(out)?;
        }
        let mut lines = self.lines.clone();
        lines.sort_by(|a, b| {
            b.blocking_time
                .cmp(&a.blocking_time)
                .then_with(|| a.file.cmp(&b.file))
        });
        if lines.iter().any(|l| l.long_tasks > 0) {
            writeln!(out, "### Files with the most blocking time\n")?;
            writeln!(
                out,
                "| file | long tasks | blocking ms (whole trace) | longest task ms |"
            )?;
            writeln!(out, "|---|---:|---:|---:|")?;
            for l in lines.iter().filter(|l| l.long_tasks > 0).take(10) {
                writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    code(&l.file),
                    l.long_tasks,
                    millis_text(l.blocking_time),
                    millis_text(l.max_task)
                )?;
            }
            writeln!(out)?;
        }
        if self.owners.iter().any(|o| o.long_tasks > 0) {
            let total: TimeDelta = self.owners.iter().map(|o| o.blocking_time).sum();
            writeln!(
                out,
                "### Who owns the blocking time
"
            )?;
            writeln!(
                out,
                "By the owner of each long task's leaf frame; blocking time is each task's \
                 duration − 50 ms. Samples: the share of all long tasks' samples whose leaf \
                 frame it owns.\n"
            )?;
            writeln!(
                out,
                "| owner | long tasks | blocking ms | share | samples |"
            )?;
            writeln!(out, "|---|---:|---:|---:|---:|")?;
            for o in self.owners.iter().take(15) {
                let share = match total.as_nanos() {
                    0 => 0.0,
                    t => o.blocking_time.as_nanos() as f64 / t as f64,
                };
                writeln!(
                    out,
                    "| {} | {} | {} | {:.1}% | {:.1}% |",
                    cell(&o.owner),
                    o.long_tasks,
                    millis_text(o.blocking_time),
                    share * 100.0,
                    o.sample_share * 100.0
                )?;
            }
            writeln!(out)?;
        }
        if !self.top_chains.is_empty() {
            writeln!(out, "### Chains that cost the most long-task time\n")?;
            writeln!(out, "| chain | leaf | long tasks | stack ms |")?;
            writeln!(out, "|---|---|---:|---:|")?;
            for (chain, leaf, t, n) in &self.top_chains {
                writeln!(
                    out,
                    "| `{}` | {} | {} | {} |",
                    cell(&shorten(chain, 90)),
                    code(leaf),
                    n,
                    millis_text(*t)
                )?;
            }
            writeln!(out)?;
        }
        if !self.slowest_interactions.is_empty() {
            writeln!(out, "### Slowest interactions\n")?;
            writeln!(
                out,
                "Input to next paint; INP marks each page's INP interaction. The chain is the \
                 longest phase's.\n"
            )?;
            writeln!(
                out,
                "| file | type | ms | input delay ms | processing ms | presentation delay ms | longest phase | chain |"
            )?;
            writeln!(out, "|---|---|---:|---:|---:|---:|---|---|")?;
            for l in &self.slowest_interactions {
                writeln!(
                    out,
                    "| {} | {}{} | {} | {} | {} | {} | {} | {} |",
                    code(&l.file),
                    code(&l.kind),
                    if l.is_inp { " INP" } else { "" },
                    millis_text(l.duration),
                    millis_text(l.phases[0]),
                    millis_text(l.phases[1]),
                    millis_text(l.phases[2]),
                    l.longest.0.replace('_', " "),
                    if l.longest.1.is_empty() {
                        String::new()
                    } else {
                        format!("`{}`", cell(&shorten(&l.longest.1, 90)))
                    }
                )?;
            }
            writeln!(out)?;
        }
        if !self.failed.is_empty() {
            writeln!(out, "### Files that could not be read\n")?;
            for f in &self.failed {
                writeln!(out, "- {}", code(f))?;
            }
        }
        Ok(())
    }
}

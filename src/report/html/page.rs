//! The page: what a run found, kept within bounds as files finish, and written as HTML.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::{esc, flame, script_json};
use crate::chain::{ChainFrame, ChainStatus, Timeline};
use crate::report::aggregate::{AggregateBy, Aggregator, OwnerLine, blocking_time};
use crate::report::chain_key::{self, ChainKey};
use crate::report::sink::{FileDone, FileOutcome};
use crate::report::text::{plural, shorten};
use crate::report::{FileError, FileReport, ReportRow, chain_text, json, share_of};
use crate::time::TimeDelta;

/// Task rows (after the cards) a page shows at most; the rest are counted.
pub(crate) const TABLE_ROWS: usize = 1_000;
/// Traces the Traces table lists at most (most blocking time first).
const FILE_ROWS: usize = 200;
/// Bytes the cards' flame charts take at most in all (a 1,200-box chart of a deep
/// recursion is 320 KB: 50 of them made a 16 MB page).
const CHART_BYTES: usize = 3_500_000;
/// Bytes of the tasks' JSON objects in the page's data at most: table rows past it are
/// left out (each row's chain and runner-up stacks, with long URLs, can take tens of KB).
const DATA_BYTES: usize = 3_500_000;
/// Interactions listed at most (longest first).
const INTERACTION_ROWS: usize = 200;
/// Chains in Top chains.
const TOP_CHAINS: usize = 15;
/// Owners in Who owns the time.
const OWNERS: usize = 12;

/// One trace's line in the Traces table.
#[derive(Clone, Debug)]
struct FileLine {
    file: String,
    long_tasks: usize,
    blocking_time: TimeDelta,
    max_task: TimeDelta,
    error: Option<String>,
}

/// One line of a comparison, as `compare` found it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CompareLine {
    /// `regression`, `improvement`, `new`, `gone` or `unchanged`.
    pub(crate) change: &'static str,
    /// The chain's text; `None` for the overall long-task time and for INP.
    pub(crate) chain: Option<String>,
    /// The INP line: INP per trace in place of long-task time, interactions per trace in
    /// place of long tasks.
    pub(crate) inp: bool,
    /// Its leaf function.
    pub(crate) leaf: String,
    /// Mean long-task ms per trace, baseline and candidate.
    pub(crate) base_ms: f64,
    pub(crate) candidate_ms: f64,
    /// Change in percent of the baseline mean (`None` from 0).
    pub(crate) change_pct: Option<f64>,
    /// Mean long tasks per trace.
    pub(crate) base_tasks: f64,
    pub(crate) candidate_tasks: f64,
    /// Mann-Whitney U p-value.
    pub(crate) p_value: f64,
}

/// A comparison for the head of a page.
#[derive(Clone, Debug, Default)]
pub(crate) struct Comparison {
    /// Traces in each set.
    pub(crate) base_traces: usize,
    pub(crate) candidate_traces: usize,
    /// Every line (overall first).
    pub(crate) lines: Vec<CompareLine>,
}

/// What a page shows, gathered as files finish: every row counts in the totals, owners and
/// chains; the longest rows are kept (with their timelines for the cards).
pub(crate) struct Page {
    cards: usize,
    key: ChainKey,
    rows: Vec<ReportRow>,
    /// Kept rows holding a timeline.
    timelines: usize,
    rows_seen: usize,
    /// Blocking time of every row, and of the rows with status `ok`.
    row_blocking: TimeDelta,
    ok_blocking: TimeDelta,
    /// Sum of the files' total blocking time.
    tbt: TimeDelta,
    long_tasks: usize,
    files: Vec<FileLine>,
    files_seen: usize,
    failed: usize,
    owners: Aggregator,
    chains: Aggregator,
    breaches: Vec<String>,
    errors: Vec<FileError>,
    /// Interactions as `--interactions` JSON objects, when the run has them:
    /// the longest kept.
    pub(crate) interactions: Vec<serde_json::Value>,
    /// Interactions seen, and the INP ones (ms, trace) with their count.
    interactions_seen: usize,
    worst_inp: Option<(f64, String)>,
    inp_traces: usize,
}

/// Rows in the order a page shows them: longest first (ties: report order).
fn order(a: &ReportRow, b: &ReportRow) -> std::cmp::Ordering {
    b.task_dur
        .cmp(&a.task_dur)
        .then_with(|| a.sort_key().cmp(&b.sort_key()))
}

impl Page {
    /// A page with at most `cards` cards, chains grouped by `key`.
    pub(crate) fn new(cards: usize, key: ChainKey) -> Self {
        Page {
            cards,
            key,
            rows: Vec::new(),
            timelines: 0,
            rows_seen: 0,
            row_blocking: TimeDelta::ZERO,
            ok_blocking: TimeDelta::ZERO,
            tbt: TimeDelta::ZERO,
            long_tasks: 0,
            files: Vec::new(),
            files_seen: 0,
            failed: 0,
            owners: Aggregator::new(AggregateBy::Vendor, key),
            chains: Aggregator::new(AggregateBy::Chain, key),
            breaches: Vec::new(),
            errors: Vec::new(),
            interactions: Vec::new(),
            interactions_seen: 0,
            worst_inp: None,
            inp_traces: 0,
        }
    }

    fn keep(&self) -> usize {
        self.cards + TABLE_ROWS
    }

    /// Counts a row and keeps it while it is among the longest.
    pub(crate) fn row(&mut self, r: ReportRow) {
        self.rows_seen += 1;
        self.owners.add(&r);
        self.chains.add(&r);
        let b = blocking_time(r.task_dur);
        self.row_blocking = self.row_blocking + b;
        if r.status == ChainStatus::Ok {
            self.ok_blocking = self.ok_blocking + b;
        }
        self.timelines += usize::from(r.timeline.is_some());
        self.rows.push(r);
        if self.rows.len() > 2 * self.keep() || self.timelines > 2 * self.cards + 16 {
            self.compact();
        }
    }

    /// Keeps the longest rows, and timelines only for the cards.
    fn compact(&mut self) {
        self.rows.sort_by(order);
        self.rows.truncate(self.keep());
        for r in self.rows.iter_mut().skip(self.cards) {
            r.timeline = None;
        }
        self.timelines = self.rows.iter().filter(|r| r.timeline.is_some()).count();
    }

    /// A file is done (its rows, when not streamed, come with it).
    pub(crate) fn file_done(&mut self, done: &FileDone<'_>) {
        if let FileOutcome::Done(rep) = done.outcome {
            for r in &rep.rows {
                self.row(r.clone());
            }
        }
        self.file_outcome(done.outcome, done.breaches);
    }

    /// Counts a file (not its rows).
    pub(crate) fn file_outcome(&mut self, o: &FileOutcome, breaches: &[String]) {
        match o {
            FileOutcome::Done(rep) => self.file_report(rep, breaches),
            FileOutcome::Failed(e) => {
                self.files_seen += 1;
                self.failed += 1;
                self.errors.push(e.clone());
                self.file_line(FileLine {
                    file: e.file.clone(),
                    long_tasks: 0,
                    blocking_time: TimeDelta::ZERO,
                    max_task: TimeDelta::ZERO,
                    error: Some(e.reason.clone()),
                });
            }
            FileOutcome::Skipped(_) | FileOutcome::LeftOut(_) => {}
        }
    }

    /// Counts a file that was read (not its rows).
    pub(crate) fn file_report(&mut self, rep: &FileReport, breaches: &[String]) {
        self.files_seen += 1;
        self.long_tasks += rep.long_tasks;
        self.tbt = self.tbt + rep.stats.blocking_time;
        self.breaches.extend(breaches.iter().cloned());
        for i in &rep.interactions {
            self.interaction(crate::report::interactions::interaction_value(i));
        }
        if let Some(b) = &rep.broken {
            self.failed += 1;
            self.errors.push(FileError::new(&rep.file, b.clone()));
        }
        self.file_line(FileLine {
            file: rep.file.clone(),
            long_tasks: rep.long_tasks,
            blocking_time: rep.stats.blocking_time,
            max_task: rep.stats.max_task,
            error: rep.broken.clone(),
        });
    }

    /// Counts an interaction (its `--interactions` JSON object) and keeps the longest.
    pub(crate) fn interaction(&mut self, i: serde_json::Value) {
        self.interactions_seen += 1;
        if i["is_inp"].as_bool() == Some(true) {
            self.inp_traces += 1;
            let d = i["duration_ms"].as_f64().unwrap_or(0.0);
            if self.worst_inp.as_ref().is_none_or(|(w, _)| d > *w) {
                self.worst_inp = Some((d, i["file"].as_str().unwrap_or("").to_string()));
            }
        }
        self.interactions.push(i);
        if self.interactions.len() > 2 * INTERACTION_ROWS {
            self.trim_interactions();
        }
    }

    /// Keeps the longest interactions.
    fn trim_interactions(&mut self) {
        let d = |v: &serde_json::Value| v["duration_ms"].as_f64().unwrap_or(0.0);
        self.interactions.sort_by(|a, b| d(b).total_cmp(&d(a)));
        self.interactions.truncate(INTERACTION_ROWS);
    }

    fn file_line(&mut self, l: FileLine) {
        self.files.push(l);
        if self.files.len() > 4 * FILE_ROWS {
            self.sort_files();
            self.files.truncate(FILE_ROWS);
        }
    }

    /// Failed files first, then most blocking time (ties: by name).
    fn sort_files(&mut self) {
        self.files.sort_by(|a, b| {
            b.error
                .is_some()
                .cmp(&a.error.is_some())
                .then(b.blocking_time.cmp(&a.blocking_time))
                .then_with(|| a.file.cmp(&b.file))
        });
    }

    /// Writes the page; `comparison` puts a compare's sections first.
    pub(crate) fn write(
        mut self,
        comparison: Option<&Comparison>,
        out: &mut impl Write,
    ) -> io::Result<()> {
        self.compact();
        self.sort_files();
        self.trim_interactions();
        let texts = self.trim_rows_to_bytes();
        let mut h = String::with_capacity(1 << 20);
        let title = match comparison {
            Some(_) => "taskchain: candidate vs baseline".to_string(),
            None => format!(
                "taskchain: {} in {}",
                plural(self.long_tasks, "long task", "long tasks"),
                plural(self.files_seen, "trace", "traces")
            ),
        };
        head(&mut h, &title);
        let verdict = self.verdict(comparison);
        let _ = write!(
            h,
            "<main>\n<section id=\"verdict\"><h2>Verdict</h2>\n<p class=\"verdict\">{}</p>\n",
            esc(&verdict)
        );
        if !self.breaches.is_empty() {
            h.push_str("<p><b>Budget breaches:</b></p><ul class=\"breaches\">");
            for b in self.breaches.iter().take(50) {
                let _ = write!(h, "<li>{}</li>", esc(b));
            }
            if self.breaches.len() > 50 {
                let _ = write!(h, "<li>… and {} more</li>", self.breaches.len() - 50);
            }
            h.push_str("</ul>");
        }
        h.push_str("</section>\n");
        if let Some(c) = comparison {
            comparison_sections(&mut h, c);
        }
        self.owners_section(&mut h);
        let ranks = self.ranks_by_chain();
        self.chains_section(&mut h, &ranks);
        if !self.interactions.is_empty() {
            self.interactions_section(&mut h);
        }
        self.tasks_section(&mut h);
        self.files_section(&mut h);
        let _ = write!(
            h,
            "</main>\n<footer><p>Made by taskchain {}. The tasks this page shows are in the \
             element <code>#taskchain-data</code> as <code>--format json</code> writes them; \
             docs/REPORTS.md says what each column means.</p></footer>\n",
            esc(json::TASKCHAIN_VERSION)
        );
        out.write_all(h.as_bytes())?;
        self.write_data(&texts, out, comparison)?;
        out.write_all(b"</body>\n</html>\n")
    }

    /// The verdict as one plain sentence or three.
    fn verdict(&self, comparison: Option<&Comparison>) -> String {
        let mut v = String::new();
        if let Some(c) = comparison {
            let count = |k: &str| c.lines.iter().filter(|l| l.change == k).count();
            let _ = write!(
                v,
                "Candidate ({}) vs baseline ({}): {}, {}, {} new and {} gone chains. ",
                plural(c.candidate_traces, "trace", "traces"),
                plural(c.base_traces, "trace", "traces"),
                plural(count("regression"), "regression", "regressions"),
                plural(count("improvement"), "improvement", "improvements"),
                count("new"),
                count("gone"),
            );
            if let Some(o) = c.lines.iter().find(|l| l.chain.is_none() && !l.inp) {
                let _ = write!(
                    v,
                    "Long-task time per trace {:.1} ms → {:.1} ms ({}, p = {:.3}). The \
                     candidate set: ",
                    o.base_ms,
                    o.candidate_ms,
                    pct_text(o.change_pct),
                    o.p_value
                );
            }
        }
        let _ = write!(
            v,
            "{}, {}, blocking time {} over the whole traces",
            plural(self.files_seen, "trace", "traces"),
            plural(self.long_tasks, "long task", "long tasks"),
            ms(self.tbt)
        );
        if self.failed > 0 {
            let _ = write!(v, ", {} could not be read", self.failed);
        }
        if let Some((inp, file, n)) = self.worst_inp() {
            let _ = write!(
                v,
                ", INP {inp:.0} ms at worst ({file}; {})",
                plural(n, "trace", "traces")
            );
        }
        v.push('.');
        if let Some(w) = self.rows.first() {
            let _ = write!(
                v,
                " Worst task: {} in {}, {}.",
                ms(w.task_dur),
                w.file,
                who(w)
            );
        }
        if self.row_blocking > TimeDelta::ZERO {
            let _ = write!(
                v,
                " {:.0}% of the long tasks' blocking time has a call chain with status ok.",
                share_of(self.ok_blocking, self.row_blocking) * 100.0
            );
        }
        v
    }

    /// The worst INP over the traces (ms, its trace, traces with an INP).
    fn worst_inp(&self) -> Option<(f64, String, usize)> {
        self.worst_inp.clone().map(|(d, f)| (d, f, self.inp_traces))
    }

    fn owners_section(&self, h: &mut String) {
        h.push_str("<section id=\"owners\"><h2>Who owns the time</h2>\n");
        let owners: Vec<OwnerLine> = self.owners.owners();
        let total: TimeDelta = owners.iter().map(|o| o.blocking_time).sum();
        if owners.iter().all(|o| o.long_tasks == 0) {
            h.push_str("<p>No long task has a chain to own.</p></section>\n");
            return;
        }
        h.push_str(
            "<p>Blocking time (each long task's duration − 50 ms) by the owner of the task's \
             leaf frame: the code that ran, by the host that served it.</p>\n<div \
             class=\"scroll\"><table><thead><tr><th>owner</th><th>blocking time</th><th>share</th>\
             <th class=\"n\">long tasks</th><th class=\"n\">samples</th></tr></thead><tbody>\n",
        );
        for o in owners.iter().filter(|o| o.long_tasks > 0).take(OWNERS) {
            let share = share_of(o.blocking_time, total);
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{:.1}%</td></tr>",
                esc(&owner_name(&o.owner)),
                ms(o.blocking_time),
                bar(share, "owner"),
                o.long_tasks,
                o.sample_share * 100.0
            );
        }
        h.push_str("</tbody></table></div>");
        let more = owners.iter().filter(|o| o.long_tasks > 0).count();
        if more > OWNERS {
            let _ = write!(
                h,
                "<p class=\"note\">{} more owners left out.</p>",
                more - OWNERS
            );
        }
        h.push_str("</section>\n");
    }

    /// Each chain key's kept rows, as their ranks (1-based), in page order.
    fn ranks_by_chain(&self) -> std::collections::HashMap<String, Vec<usize>> {
        let mut m: std::collections::HashMap<String, Vec<usize>> = Default::default();
        for (i, r) in self.rows.iter().enumerate() {
            if !r.chain.is_empty() {
                m.entry(chain_key::key(&r.chain, self.key))
                    .or_default()
                    .push(i + 1);
            }
        }
        m
    }

    fn chains_section(
        &mut self,
        h: &mut String,
        ranks: &std::collections::HashMap<String, Vec<usize>>,
    ) {
        h.push_str("<section id=\"chains\"><h2>Top chains</h2>\n");
        let rows = self.chains.rows();
        if rows.is_empty() {
            h.push_str("<p>No long task has a call chain.</p></section>\n");
            return;
        }
        h.push_str(
            "<p>Long tasks grouped by call chain (function names and script paths), most \
             time in the chain's stack first. <i>ok</i>: tasks whose chain holds at least the \
             minimum confidence.</p>\n<div class=\"scroll\"><table><thead><tr><th>#</th>\
             <th>leaf function and chain</th><th class=\"n\">long tasks</th><th class=\"n\">ok</th>\
             <th class=\"n\">traces</th><th class=\"n\">stack total</th><th class=\"n\">stack p95</th>\
             <th>tasks</th></tr></thead><tbody>\n",
        );
        for (i, g) in rows.iter().take(TOP_CHAINS).enumerate() {
            let links = ranks.get(&g.key).map_or_else(String::new, |rs| {
                let mut s = rs
                    .iter()
                    .take(6)
                    .map(|r| format!("<a href=\"#t{r}\">#{r}</a>"))
                    .collect::<Vec<_>>()
                    .join(" ");
                if rs.len() > 6 {
                    let _ = write!(s, " +{}", rs.len() - 6);
                }
                s
            });
            let _ = writeln!(
                h,
                "<tr><td class=\"n\">{}</td><td><b><code>{}</code></b><br><span \
                 class=\"chaintext\">{}</span></td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                i + 1,
                esc(&g.leaf_function),
                esc(&shorten(&g.chain, 160)),
                g.tasks,
                g.ok,
                g.files,
                ms(g.stack_total),
                ms(g.stack_p95),
                links
            );
        }
        h.push_str("</tbody></table></div>");
        if rows.len() > TOP_CHAINS {
            let _ = write!(
                h,
                "<p class=\"note\">{} more chains left out (<code>--aggregate</code> lists \
                 every one).</p>",
                rows.len() - TOP_CHAINS
            );
        }
        h.push_str("</section>\n");
    }

    fn interactions_section(&self, h: &mut String) {
        h.push_str("<section id=\"interactions\"><h2>Interactions</h2>\n");
        h.push_str(
            "<p>Each interaction's three phases: <span class=\"key ph-input\">input delay</span> \
             (event to handler start), <span class=\"key ph-processing\">processing</span> \
             (the handlers), <span class=\"key ph-presentation\">presentation delay</span> \
             (handlers to the next paint), the call chain of each phase and what the main \
             thread did in it (from the trace's events, longest first).</p>\n",
        );
        let mut list: Vec<&serde_json::Value> = self.interactions.iter().collect();
        list.sort_by(|a, b| {
            b["duration_ms"]
                .as_f64()
                .unwrap_or(0.0)
                .total_cmp(&a["duration_ms"].as_f64().unwrap_or(0.0))
        });
        let longest = list
            .first()
            .and_then(|i| i["duration_ms"].as_f64())
            .unwrap_or(0.0)
            .max(1.0);
        h.push_str(
            "<div class=\"scroll\"><table class=\"interactions\"><thead><tr><th>trace</th>\
             <th>type</th><th class=\"n\">duration</th><th>phases</th><th class=\"n\">input delay</th>\
             <th class=\"n\">processing</th><th class=\"n\">presentation</th>\
             <th>chain of each phase</th></tr></thead><tbody>\n",
        );
        for i in list.iter().take(INTERACTION_ROWS) {
            let num = |k: &str| i[k].as_f64().unwrap_or(0.0);
            let (d, a, b, c) = (
                num("duration_ms"),
                num("input_delay_ms"),
                num("processing_ms"),
                num("presentation_delay_ms"),
            );
            let types: Vec<&str> = i["event_types"]
                .as_array()
                .map(|v| v.iter().filter_map(|t| t.as_str()).collect())
                .unwrap_or_default();
            let inp = if i["is_inp"].as_bool() == Some(true) {
                " <b class=\"inp\">INP</b>"
            } else {
                ""
            };
            let mut bars = String::new();
            for (v, class, name) in [
                (a, "ph-input", "input delay"),
                (b, "ph-processing", "processing"),
                (c, "ph-presentation", "presentation delay"),
            ] {
                let w = (v / longest * 100.0).clamp(0.0, 100.0);
                let _ = write!(
                    bars,
                    "<span class=\"{class}\" style=\"width:{w:.2}%\" title=\"{name} {v:.1} ms\"></span>"
                );
            }
            let mut chains = String::new();
            for (k, name) in [
                ("input_delay", "input delay"),
                ("processing", "processing"),
                ("presentation_delay", "presentation delay"),
            ] {
                let p = &i["phases"][k];
                if p.is_null() {
                    continue;
                }
                let leaf = p["chain"]
                    .as_array()
                    .and_then(|c| c.last())
                    .map(|f| {
                        f["original_function"]
                            .as_str()
                            .or(f["function"].as_str())
                            .unwrap_or("")
                            .to_string()
                    })
                    .unwrap_or_default();
                let status = p["status"].as_str().unwrap_or("");
                let chain_full = p["chain"]
                    .as_array()
                    .map(|c| {
                        c.iter()
                            .map(|f| {
                                f["original_function"]
                                    .as_str()
                                    .or(f["function"].as_str())
                                    .unwrap_or("")
                            })
                            .collect::<Vec<_>>()
                            .join(" > ")
                    })
                    .unwrap_or_default();
                let _ = write!(
                    chains,
                    "<div><i>{name}:</i> <code title=\"{}\">{}</code> {}{}</div>",
                    esc(&chain_full),
                    if leaf.is_empty() {
                        "(no JavaScript)".to_string()
                    } else {
                        esc(&leaf)
                    },
                    status_html(status),
                    phase_breakdown(p)
                );
            }
            let _ = writeln!(
                h,
                "<tr><td class=\"file\">{}</td><td>{} <span class=\"sub\">{}</span>{inp}</td>\
                 <td class=\"n\">{d:.1} ms</td><td><div class=\"phases\">{bars}</div></td>\
                 <td class=\"n\">{a:.1}</td><td class=\"n\">{b:.1}</td><td class=\"n\">{c:.1}</td>\
                 <td>{chains}</td></tr>",
                esc(i["file"].as_str().unwrap_or("")),
                esc(i["type"].as_str().unwrap_or("")),
                esc(&types.join(", ")),
            );
        }
        h.push_str("</tbody></table></div>");
        let shown = list.len().min(INTERACTION_ROWS);
        if self.interactions_seen > shown {
            let _ = write!(
                h,
                "<p class=\"note\">{} shorter interactions left out.</p>",
                self.interactions_seen - shown
            );
        }
        h.push_str("</section>\n");
    }

    fn tasks_section(&self, h: &mut String) {
        h.push_str("<section id=\"tasks\"><h2>Long tasks</h2>\n");
        if self.rows.is_empty() {
            h.push_str("<p>No long tasks.</p></section>\n");
            return;
        }
        let cards = self.rows.len().min(self.cards);
        let _ = write!(
            h,
            "<p>The {} as cards: the task's window as a flame chart (time left to right, \
             callers above callees; orange and outlined: frames of the chosen stack, mostly \
             while it ran; the track on top: when it ran), its call chain, the runner-up \
             stacks and what the main thread did (from the trace's events where it has them, \
             else where the samples were).",
            if cards == 1 {
                "longest task".to_string()
            } else {
                format!("{cards} longest tasks")
            }
        );
        if self.rows.len() > cards {
            let _ = write!(
                h,
                " The next {} as table rows.",
                plural(self.rows.len() - cards, "task", "tasks")
            );
        }
        let left = self.rows_seen - self.rows.len();
        if left > 0 {
            let _ = write!(
                h,
                " {} shorter {} left out of this page (the JSON and CSV reports have every \
                 one).",
                left,
                if left == 1 { "task is" } else { "tasks are" }
            );
        }
        h.push_str("</p>\n");
        // The charts share CHART_BYTES: each card may take 2 ÷ (cards left + 1) of what
        // is left (more for the first, the longest tasks; never past the total).
        let mut budget = CHART_BYTES;
        for (i, r) in self.rows.iter().take(cards).enumerate() {
            let allowance = budget * 2 / (cards - i + 1);
            budget -= card(h, i + 1, r, allowance).min(budget);
        }
        if self.rows.len() > cards {
            h.push_str(
                "<div class=\"scroll\"><table class=\"rows\"><thead><tr><th>#</th><th>trace</th>\
                 <th class=\"n\">duration</th><th class=\"n\">start</th><th>status</th>\
                 <th class=\"n\">confidence</th><th>leaf function</th><th>owner</th><th>trigger</th>\
                 </tr></thead><tbody>\n",
            );
            for (i, r) in self.rows.iter().enumerate().skip(cards) {
                let _ = writeln!(
                    h,
                    "<tr id=\"t{}\" class=\"task-row\"><td class=\"n\">{}</td><td class=\"file\">{}</td>\
                     <td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{:.3}</td>\
                     <td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                    i + 1,
                    i + 1,
                    esc(&r.file),
                    ms(r.task_dur),
                    ms(r.task_start),
                    status_html(r.status.as_str()),
                    r.confidence,
                    esc(r.leaf().map_or("", |f| f.shown_function())),
                    esc(&owner_name(&task_owner(r))),
                    esc(&trigger_text(r)),
                );
            }
            h.push_str("</tbody></table></div>");
        }
        h.push_str("</section>\n");
    }

    fn files_section(&self, h: &mut String) {
        h.push_str("<section id=\"traces\"><h2>Traces</h2>\n");
        let _ = write!(
            h,
            "<p>{} read; failed first, then most blocking time.</p>\n<div class=\"scroll\"><table>\
             <thead><tr><th>trace</th><th class=\"n\">long tasks</th><th class=\"n\">total \
             blocking time</th><th class=\"n\">longest task</th><th>status</th></tr></thead><tbody>\n",
            plural(self.files_seen, "trace", "traces")
        );
        for f in self.files.iter().take(FILE_ROWS) {
            let _ = writeln!(
                h,
                "<tr><td class=\"file\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td>{}</td></tr>",
                esc(&f.file),
                f.long_tasks,
                ms(f.blocking_time),
                ms(f.max_task),
                match &f.error {
                    Some(e) => format!("<b>error:</b> {}", esc(e)),
                    None => "read".into(),
                }
            );
        }
        h.push_str("</tbody></table></div>");
        if self.files_seen > FILE_ROWS.min(self.files.len()) {
            let _ = write!(
                h,
                "<p class=\"note\">{} traces with less blocking time left out (<code>--summary</code> \
                 lists every one).</p>",
                self.files_seen - FILE_ROWS.min(self.files.len())
            );
        }
        h.push_str("</section>\n");
    }

    /// The kept rows' JSON objects, the table rows cut where they would take the page's
    /// data past [`DATA_BYTES`] (the cards' rows always stay; the rows cut are counted as
    /// left out with the shorter tasks).
    fn trim_rows_to_bytes(&mut self) -> Vec<String> {
        let mut texts = Vec::with_capacity(self.rows.len());
        let mut bytes = 0;
        for (i, r) in self.rows.iter().enumerate() {
            let t = json::task_text(r);
            bytes += t.len() + 1;
            if i >= self.cards && bytes > DATA_BYTES {
                break;
            }
            texts.push(t);
        }
        self.rows.truncate(texts.len());
        texts
    }

    /// The page's data: the shown tasks as JSON rows (`texts`, from
    /// [`Page::trim_rows_to_bytes`]), and the counts.
    fn write_data(
        &self,
        texts: &[String],
        out: &mut impl Write,
        comparison: Option<&Comparison>,
    ) -> io::Result<()> {
        let mut d = String::with_capacity(texts.iter().map(|t| t.len() + 1).sum::<usize>() + 4096);
        let _ = write!(
            d,
            "{{\"taskchain_version\":{},\"tasks\":[",
            serde_json::Value::from(json::TASKCHAIN_VERSION)
        );
        for (i, t) in texts.iter().enumerate() {
            if i > 0 {
                d.push(',');
            }
            d.push_str(t);
        }
        d.push_str("],\"errors\":");
        d.push_str(&serde_json::to_string(&self.errors).unwrap_or_else(|_| "[]".into()));
        let ok_share = (self.row_blocking > TimeDelta::ZERO)
            .then(|| crate::chain::round_confidence(share_of(self.ok_blocking, self.row_blocking)));
        let summary = serde_json::json!({
            "traces": self.files_seen,
            "failed": self.failed,
            "long_tasks": self.long_tasks,
            "total_blocking_time_ms": crate::report::millis_number(self.tbt),
            "ok_blocking_share": ok_share,
            "cards": self.rows.len().min(self.cards),
            "task_rows": self.rows.len().saturating_sub(self.cards),
        });
        let _ = write!(d, ",\"summary\":{summary}");
        let left_out = serde_json::json!({
            "tasks": self.rows_seen - self.rows.len(),
            "traces": self.files_seen - FILE_ROWS.min(self.files.len()),
            "interactions": self.interactions_seen - self.interactions.len(),
        });
        let _ = write!(d, ",\"left_out\":{left_out}");
        if !self.interactions.is_empty() {
            let _ = write!(
                d,
                ",\"interactions\":{}",
                serde_json::Value::from(self.interactions.clone())
            );
        }
        if let Some(c) = comparison {
            let lines: Vec<serde_json::Value> = c
                .lines
                .iter()
                .map(|l| {
                    serde_json::json!({
                        "change": l.change, "chain": l.chain, "leaf_function": l.leaf,
                        "base_mean_ms": l.base_ms, "candidate_mean_ms": l.candidate_ms,
                        "change_pct": l.change_pct, "base_mean_tasks": l.base_tasks,
                        "candidate_mean_tasks": l.candidate_tasks, "p_value": l.p_value,
                    })
                })
                .collect();
            let _ = write!(d, ",\"compare\":{}", serde_json::Value::from(lines));
        }
        d.push('}');
        out.write_all(b"<script type=\"application/json\" id=\"taskchain-data\">")?;
        out.write_all(script_json(&d).as_bytes())?;
        out.write_all(b"</script>\n")
    }
}

/// `12.3 ms` (one decimal; thousands separated by a thin space for reading).
fn ms(d: TimeDelta) -> String {
    let v = d.as_nanos() as f64 / 1e6;
    format!("{v:.1} ms")
}

fn pct_text(x: Option<f64>) -> String {
    x.map_or_else(|| "from 0".into(), |x| format!("{x:+.1}%"))
}

/// An owner group as a reader says it.
fn owner_name(group: &str) -> String {
    match group {
        "first-party" => "first party".into(),
        "third-party:unknown" => "unknown third party".into(),
        "(no script url)" => "no script URL (browser work)".into(),
        "(no page url)" => "unknown (no page URL in the trace)".into(),
        g => match g.strip_prefix("vendor:") {
            Some(v) => format!("{v} (vendor)"),
            None => g.into(),
        },
    }
}

/// The group of the row's leaf frame's owner.
fn task_owner(r: &ReportRow) -> String {
    r.notes
        .parties
        .as_ref()
        .and_then(|p| p.task.as_ref())
        .map_or_else(|| "(no script url)".into(), |p| p.group())
}

fn trigger_text(r: &ReportRow) -> String {
    match &r.trigger {
        Some(t) if t.detail.is_empty() => t.kind.clone(),
        Some(t) => format!("{} ({})", t.kind, t.detail),
        None => r
            .loaf
            .as_ref()
            .map(|l| format!("LoAF {}", l.invoker))
            .unwrap_or_default(),
    }
}

/// What ran in a task, as the verdict says it: `scoreRows (app.js), first party, status
/// ok`.
fn who(r: &ReportRow) -> String {
    match r.leaf() {
        Some(f) => format!(
            "{} ({}), {}, status {}",
            f.shown_function(),
            short_location(f),
            owner_name(&task_owner(r)),
            r.status.as_str()
        ),
        None => format!("no call chain (status {})", r.status.as_str()),
    }
}

/// A frame's script (original source with a map), by its last path segment.
fn short_location(f: &ChainFrame) -> String {
    let src = match f.original.as_deref().filter(|o| o.in_chain_text) {
        Some(o) => o.source.as_str(),
        None => f.url.as_str(),
    };
    let path = src.split(['?', '#']).next().unwrap_or(src);
    let name = path.rsplit('/').find(|s| !s.is_empty()).unwrap_or(path);
    if name.is_empty() {
        "no script".into()
    } else {
        name.into()
    }
}

fn status_html(status: &str) -> String {
    let class = match status {
        "ok" => "ok",
        "low_confidence" => "low",
        "" => return String::new(),
        _ => "none",
    };
    format!("<span class=\"st st-{class}\">{}</span>", esc(status))
}

/// A share as a bar with its percentage as text.
fn bar(share: f64, class: &str) -> String {
    format!(
        "<span class=\"bar {class}\"><span style=\"width:{:.1}%\"></span></span> {:.0}%",
        share * 100.0,
        share * 100.0
    )
}

/// A frame's location as chains show it (original source with a map).
fn location(f: &ChainFrame) -> String {
    let t = f.text();
    match t.find(" (") {
        Some(i) if t.ends_with(')') => t[i + 2..t.len() - 1].to_string(),
        _ => String::new(),
    }
}

/// The chain as a list, outermost caller first; long chains keep both ends in view.
fn chain_list(h: &mut String, r: &ReportRow) {
    let frames = &r.chain;
    if frames.is_empty() {
        h.push_str("<p>No call chain.</p>");
        return;
    }
    let item = |h: &mut String, i: usize, f: &ChainFrame| {
        let party = r
            .notes
            .frame(i)
            .and_then(|n| n.party.as_ref())
            .map(|p| owner_name(&p.group()))
            .unwrap_or_default();
        let leaf = if i + 1 == frames.len() {
            " class=\"leaf\""
        } else {
            ""
        };
        let _ = write!(
            h,
            "<li{leaf}><code>{}</code>{} <span class=\"loc\">{}</span>{}</li>",
            esc(f.shown_function()),
            if f.recursion_depth > 1 {
                format!(" ×{}", f.recursion_depth)
            } else {
                String::new()
            },
            esc(&location(f)),
            if party.is_empty() {
                String::new()
            } else {
                format!(" <span class=\"party\">{}</span>", esc(&party))
            }
        );
    };
    h.push_str("<ol class=\"chain\">");
    if frames.len() <= 14 {
        for (i, f) in frames.iter().enumerate() {
            item(h, i, f);
        }
    } else {
        for (i, f) in frames.iter().enumerate().take(3) {
            item(h, i, f);
        }
        let hidden = frames.len() - 11;
        let _ = write!(
            h,
            "<li class=\"more\"><details><summary>{hidden} frames between</summary><ol start=\"4\">"
        );
        for (i, f) in frames.iter().enumerate().skip(3).take(hidden) {
            item(h, i, f);
        }
        h.push_str("</ol></details></li>");
        for (i, f) in frames.iter().enumerate().skip(3 + hidden) {
            item(h, i, f);
        }
    }
    h.push_str("</ol>");
}

/// DevTools' categories as the page names them, with their JSON keys (docs/METHOD.md
/// §2.10), in the order of [`crate::report::breakdown_times`] then idle.
const CATEGORIES: [(&str, &str); 7] = [
    ("scripting_ms", "scripting"),
    ("style_layout_ms", "style and layout"),
    ("paint_composite_ms", "paint and composite"),
    ("gc_ms", "garbage collection"),
    ("parse_compile_ms", "parsing and compiling"),
    ("other_ms", "other (in a task, no event)"),
    ("idle_ms", "idle (between tasks)"),
];

/// What the main thread did in a task's window, from the trace's events: (label, time)
/// of each category with time.
fn event_breakdown(b: &crate::chain::breakdown::Breakdown) -> Vec<(&'static str, TimeDelta)> {
    let t = crate::report::breakdown_times(b);
    let times = [t[0], t[1], t[2], t[3], t[4], t[5], b.idle];
    CATEGORIES
        .iter()
        .zip(times)
        .map(|(&(_, label), d)| (label, d))
        .filter(|(_, d)| *d > TimeDelta::ZERO)
        .collect()
}

/// A phase's breakdown as one line of text (its JSON object's `scripting_ms` …): the
/// categories with at least 0.05 ms, longest first, and the forced layout; empty when the
/// phase has none (field data).
fn phase_breakdown(p: &serde_json::Value) -> String {
    let mut parts: Vec<(&str, f64)> = CATEGORIES
        .iter()
        .filter_map(|&(key, label)| Some((label, p[key].as_f64()?)))
        .filter(|&(_, v)| v >= 0.05)
        .collect();
    if parts.is_empty() {
        return String::new();
    }
    parts.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut text: Vec<String> = parts
        .iter()
        .map(|(label, v)| format!("{label} {v:.1} ms"))
        .collect();
    if let Some(f) = p["forced_layout_ms"].as_f64().filter(|&f| f >= 0.05) {
        let by = p["forced_layout_function"]
            .as_str()
            .map(|w| format!(" by {w}"))
            .unwrap_or_default();
        text.push(format!("forced layout {f:.1} ms{by}"));
    }
    format!(
        " <span class=\"did\">main thread: {}</span>",
        esc(&text.join(", "))
    )
}

/// Where a timeline's samples were, by their leaf frame: (label, time).
fn breakdown(t: &Timeline) -> Vec<(&'static str, TimeDelta)> {
    let mut by = [
        ("JavaScript", TimeDelta::ZERO),
        (
            "(program): native work — style, layout, paint, parsing, browser code",
            TimeDelta::ZERO,
        ),
        ("(garbage collector)", TimeDelta::ZERO),
        ("(idle)", TimeDelta::ZERO),
    ];
    let mut sampled = TimeDelta::ZERO;
    for run in &t.runs {
        sampled = sampled + run.dur;
        let name = run
            .stack
            .and_then(|s| t.stacks.get(s as usize))
            .and_then(|&(_, f)| t.frames.get(f as usize))
            .map_or("(program)", |f| f.function.as_str());
        let i = match name {
            "(program)" | "(root)" => 1,
            "(garbage collector)" => 2,
            "(idle)" => 3,
            _ => 0,
        };
        by[i].1 = by[i].1 + run.dur;
    }
    let mut v: Vec<(&'static str, TimeDelta)> = by.to_vec();
    v.push(("no samples", (t.length - sampled).max(TimeDelta::ZERO)));
    v.retain(|(_, d)| *d > TimeDelta::ZERO);
    v
}

/// A row of a card's small table: `label` (HTML), the time, its share of `whole`.
fn share_row(h: &mut String, label: &str, d: TimeDelta, whole: TimeDelta) {
    let _ = write!(
        h,
        "<tr><td>{label}</td><td class=\"n\">{}</td><td class=\"n\">{:.0}%</td></tr>",
        ms(d),
        share_of(d, whole) * 100.0
    );
}

/// One task's card, its flame chart within about `chart_bytes`; returns the chart's bytes.
fn card(h: &mut String, rank: usize, r: &ReportRow, chart_bytes: usize) -> usize {
    let mut chart_len = 0;
    let leaf = r.leaf().map_or("(no call chain)", |f| f.shown_function());
    let _ = writeln!(
        h,
        "<article class=\"card\" id=\"t{rank}\"><h3>#{rank} · {} · <code>{}</code></h3>",
        ms(r.task_dur),
        esc(leaf)
    );
    let thread = if r.thread_name.is_empty() {
        format!("pid {} tid {}", r.thread.pid.0, r.thread.tid.0)
    } else {
        format!(
            "{} (pid {} tid {})",
            r.thread_name, r.thread.pid.0, r.thread.tid.0
        )
    };
    let _ = write!(
        h,
        "<p class=\"meta\"><span class=\"file\">{}</span> · {} · starts {} into the trace · {} \
         confidence {:.3} · owner {}",
        esc(&r.file),
        esc(&thread),
        ms(r.task_start),
        status_html(r.status.as_str()),
        r.confidence,
        esc(&owner_name(&task_owner(r))),
    );
    let trigger = trigger_text(r);
    if !trigger.is_empty() {
        let _ = write!(h, " · trigger <b>{}</b>", esc(&trigger));
    }
    if let Some(page) = &r.notes.page_url {
        let _ = write!(h, " · page <span class=\"url\">{}</span>", esc(page));
    }
    let flags = r.flags.to_text();
    if !flags.is_empty() {
        let _ = write!(h, " · flags {}", esc(&flags));
    }
    h.push_str("</p>\n");
    match &r.timeline {
        Some(t) => {
            let lookback = r.task_ts.since(t.start);
            let label = format!("Flame chart of task #{rank}");
            let (svg, left) = flame::chart(t, lookback, &label, chart_bytes);
            chart_len = svg.len();
            let samples: u32 = t.runs.iter().map(|x| x.samples).sum();
            let _ = write!(
                h,
                "<figure class=\"chart\">{svg}<figcaption>{} over {} of window; the chosen \
                 stack ran {} ({:.0}% of the task)",
                plural(samples as usize, "sample", "samples"),
                ms(t.length),
                ms(r.stack_time),
                r.confidence * 100.0
            );
            let mut gone = Vec::new();
            if left.boxes > 0 {
                gone.push(plural(
                    left.boxes,
                    "box too narrow to see",
                    "boxes too narrow to see",
                ));
            }
            if left.for_size > 0 {
                gone.push(format!(
                    "{} narrowest for the page's size",
                    plural(left.for_size, "box", "boxes")
                ));
            }
            if left.deep_rows > 0 {
                gone.push(format!(
                    "{} below depth {}",
                    plural(left.deep_rows, "row", "rows"),
                    flame::MAX_DEPTH
                ));
            }
            if left.merged_runs > 0 {
                gone.push(format!("{} short runs of samples merged", left.merged_runs));
            }
            if !gone.is_empty() {
                let _ = write!(h, "; left out: {}", gone.join(", "));
            }
            h.push_str(".</figcaption></figure>\n");
        }
        None => {
            let _ = writeln!(
                h,
                "<figure class=\"chart none\"><p>No flame chart: {}.</p></figure>",
                match r.status {
                    ChainStatus::NoProfile => "no CPU profile covers this thread",
                    ChainStatus::ProfileCutOff => "the file was cut off before its profile",
                    ChainStatus::NoSamples => "no sample falls in the task's window",
                    _ => "the window's samples were not kept",
                }
            );
        }
    }
    h.push_str("<div class=\"cols\"><div><h4>Call chain</h4>");
    chain_list(h, r);
    h.push_str("</div><div>");
    if let Some(alts) = r.alternatives.as_ref().filter(|a| !a.is_empty()) {
        h.push_str("<h4>Runner-up stacks</h4><ul class=\"alts\">");
        for a in alts {
            let leaf = a.chain.last().map_or("(root)", |f| f.shown_function());
            let _ = write!(
                h,
                "<li><code>{}</code> {:.0}% ({}, {}) <span class=\"chaintext\">{}</span></li>",
                esc(leaf),
                share_of(a.time, r.task_dur) * 100.0,
                ms(a.time),
                plural(a.samples, "sample", "samples"),
                esc(&shorten(&chain_text(&a.chain), 120))
            );
        }
        h.push_str("</ul>");
    }
    if let Some(b) = r.breakdown.as_deref() {
        h.push_str(
            "<h4>What the main thread did</h4><p class=\"note\">From the trace's events, self \
             time.</p><table class=\"mini\"><tbody>",
        );
        for (label, d) in event_breakdown(b) {
            share_row(h, &esc(label), d, r.task_dur);
        }
        if b.forced_layout > TimeDelta::ZERO {
            let by = if b.forced_by.is_empty() {
                String::new()
            } else {
                format!(" by <code>{}</code>", esc(&b.forced_by))
            };
            share_row(
                h,
                &format!("of which forced layout{by}"),
                b.forced_layout,
                r.task_dur,
            );
        }
        h.push_str("</tbody></table>");
    } else if let Some(t) = &r.timeline {
        h.push_str("<h4>Where the samples were</h4><table class=\"mini\"><tbody>");
        for (label, d) in breakdown(t) {
            share_row(h, &esc(label), d, t.length);
        }
        h.push_str("</tbody></table>");
    }
    if let Some(l) = &r.loaf {
        let _ = write!(
            h,
            "<h4>Long animation frame script</h4><p>invoker <code>{}</code>, function \
             <code>{}</code>, source <span class=\"url\">{}</span></p>",
            esc(&l.invoker),
            esc(&l.function),
            esc(&l.source_url)
        );
    }
    h.push_str("</div></div></article>\n");
    chart_len
}

fn comparison_sections(h: &mut String, c: &Comparison) {
    for (id, title, change, what) in [
        (
            "regressions",
            "Regressions",
            "regression",
            "Chains whose long-task time per trace went up by at least the minimum effect, \
             with p < 0.05",
        ),
        (
            "improvements",
            "Improvements",
            "improvement",
            "Chains whose long-task time per trace went down the same way",
        ),
        (
            "new-chains",
            "New chains",
            "new",
            "Chains with long tasks in the candidate only",
        ),
        (
            "gone-chains",
            "Gone chains",
            "gone",
            "Chains with long tasks in the baseline only",
        ),
    ] {
        let lines: Vec<&CompareLine> = c.lines.iter().filter(|l| l.change == change).collect();
        let _ = write!(h, "<section id=\"{id}\"><h2>{title}</h2>\n<p>{what}: ");
        if lines.is_empty() {
            h.push_str("none.</p></section>\n");
            continue;
        }
        let _ = write!(
            h,
            "{}.</p>\n<div class=\"scroll\"><table><thead><tr><th>leaf function and chain</th>\
             <th class=\"n\">baseline ms</th><th class=\"n\">candidate ms</th><th class=\"n\">change</th>\
             <th class=\"n\">baseline tasks</th><th class=\"n\">candidate tasks</th><th class=\"n\">p</th>\
             </tr></thead><tbody>\n",
            lines.len()
        );
        for l in lines.iter().take(50) {
            let chain = match &l.chain {
                None if l.inp => {
                    "INP (ms per trace; interactions in the tasks columns)".to_string()
                }
                None => "overall long-task time".to_string(),
                Some(ch) if ch.is_empty() => "(no chain)".into(),
                Some(ch) => shorten(ch, 160),
            };
            let _ = writeln!(
                h,
                "<tr><td><b><code>{}</code></b><br><span class=\"chaintext\">{}</span></td>\
                 <td class=\"n\">{:.1}</td><td class=\"n\">{:.1}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{:.2}</td><td class=\"n\">{:.2}</td><td class=\"n\">{:.4}</td></tr>",
                esc(&l.leaf),
                esc(&chain),
                l.base_ms,
                l.candidate_ms,
                esc(&pct_text(l.change_pct)),
                l.base_tasks,
                l.candidate_tasks,
                l.p_value
            );
        }
        h.push_str("</tbody></table></div>");
        if lines.len() > 50 {
            let _ = write!(
                h,
                "<p class=\"note\">{} more left out (the CSV has every one).</p>",
                lines.len() - 50
            );
        }
        h.push_str("</section>\n");
    }
}

/// The document's head and the start of its body.
fn head(h: &mut String, title: &str) {
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\">\n<title>{}</title>\n<style>{CSS}</style>\n\
         </head>\n<body>\n",
        esc(title)
    );
}

const CSS: &str = r#"
:root{--fg:#1b1b1f;--muted:#5b5f6a;--line:#d9dbe1;--bg:#fff;--card:#fafbfc;--accent:#b35900}
*{box-sizing:border-box}
body{margin:0;padding:0 16px 32px;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main,footer{max-width:1240px;margin:0 auto}
h2{font-size:1.3em;margin:1.6em 0 .5em;padding-bottom:.2em;border-bottom:2px solid var(--line)}
h3{font-size:1.05em;margin:0 0 .3em}
h4{font-size:.95em;margin:.8em 0 .3em}
code{font:13px/1.3 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;word-break:break-word}
.verdict{font-size:1.15em;line-height:1.5;padding:.6em .8em;border-left:5px solid var(--accent);background:#fff7ef}
.note,.sub,.loc,.chaintext,.meta,.did,figcaption{color:var(--muted);font-size:.9em}
.chaintext,.url,.file,.loc{word-break:break-all}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.92em}
th,td{text-align:left;vertical-align:top;padding:.3em .5em;border-bottom:1px solid var(--line)}
th{background:#f1f2f5;font-weight:600}
td.n,th.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
table.mini{width:auto}
.bar{display:inline-block;width:120px;height:.8em;background:#eceef2;vertical-align:middle}
.bar span{display:block;height:100%;background:var(--accent)}
.st{display:inline-block;padding:0 .4em;border-radius:3px;font-size:.85em;border:1px solid}
.st-ok{color:#0a5c2a;border-color:#0a5c2a;background:#e6f4ea}
.st-low{color:#7a4b00;border-color:#7a4b00;background:#fff4de}
.st-none{color:#444;border-color:#888;background:#f0f0f0}
.card{border:1px solid var(--line);background:var(--card);border-radius:6px;padding:.8em 1em;margin:1em 0;break-inside:avoid}
.chart{margin:.6em 0;background:#fff;border:1px solid var(--line);padding:4px}
.chart.none p{margin:.4em}
svg.flame{display:block;width:100%;height:auto;font:11px ui-monospace,Menlo,Consolas,monospace}
svg.flame text{fill:#111;pointer-events:none}
svg.flame .axis{fill:#5b5f6a}
svg.flame .label{fill:#3b1d00;stroke:#fff;stroke-width:3px;paint-order:stroke;font-weight:600}
svg.flame .tick{stroke:#eceef2}
svg.flame .start{stroke:#b00020;stroke-dasharray:4 3}
svg.flame .track{fill:#e8891a}
svg.flame rect{stroke:#fff;stroke-width:.5}
svg.flame rect.chosen{stroke:#5a2a00;stroke-width:1.5}
.cols{display:grid;grid-template-columns:minmax(0,1.2fr) minmax(0,1fr);gap:1.2em}
ol.chain{margin:.2em 0;padding-left:2.2em}
ol.chain li.leaf code{font-weight:700;background:#fde3c4}
.party{font-size:.8em;border:1px solid var(--line);border-radius:3px;padding:0 .3em;color:var(--muted)}
ul.alts{margin:.2em 0;padding-left:1.2em}
.phases{display:flex;width:220px;height:1em;background:#f3f4f6}
.phases span,.key{display:inline-block;height:100%}
.key{padding:0 .3em}
.ph-input{background:#8fb8de}.ph-processing{background:#e8891a}.ph-presentation{background:#9dc79b}
.inp{color:#b00020}
footer{margin-top:2em;border-top:1px solid var(--line)}
@media (max-width:720px){body{padding:0 8px 24px;font-size:14px}.cols{grid-template-columns:1fr}.bar{width:60px}.phases{width:120px}}
@media print{body{font-size:11pt;padding:0}.scroll{overflow:visible}.card{background:none}details>*{display:block}a{color:inherit;text-decoration:none}h2{break-after:avoid}}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_groups_read_as_words() {
        assert_eq!(owner_name("first-party"), "first party");
        assert_eq!(
            owner_name("vendor:Google Tag Manager"),
            "Google Tag Manager (vendor)"
        );
        assert_eq!(owner_name("third-party:unknown"), "unknown third party");
    }

    #[test]
    fn interactions_from_their_json_objects_get_a_section() {
        let mut p = Page::new(5, ChainKey::Normalized);
        p.file_report(
            &FileReport {
                file: "a.json".into(),
                long_tasks: 0,
                ..FileReport::default()
            },
            &[],
        );
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/data/html/interactions.json"))
                .unwrap();
        for i in fixture["interactions"].as_array().unwrap() {
            p.interaction(i.clone());
        }
        let mut out = Vec::new();
        p.write(None, &mut out).unwrap();
        let html = String::from_utf8(out).unwrap();
        assert!(html.contains("<h2>Interactions</h2>"));
        // The INP interaction (180 ms) in the verdict and its processing chain's leaf.
        assert!(
            html.contains("INP 180 ms at worst (a.json; 1 trace)"),
            "{html}"
        );
        assert!(html.contains("<code title=\"onClick &gt; scoreRows\">scoreRows</code>"));
        // A name holding markup shows as text.
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(!html.contains("<img src=x"));
        let data = &html[html.find("id=\"taskchain-data\">").unwrap()..];
        assert!(data.contains("\\u003cimg src=x onerror=alert(1)\\u003e"));
    }

    #[test]
    fn the_inp_line_of_a_comparison_is_named_inp() {
        // Overall long-task time 256.5 → 403.0 ms and INP 264.5 → 409.5 ms, both regressions
        // (the shape `compare` gives when both sets have interactions).
        let line = |inp: bool, base_ms: f64, candidate_ms: f64| CompareLine {
            change: "regression",
            chain: None,
            inp,
            leaf: String::new(),
            base_ms,
            candidate_ms,
            change_pct: Some((candidate_ms / base_ms - 1.0) * 100.0),
            base_tasks: 2.0,
            candidate_tasks: 2.0,
            p_value: 0.0286,
        };
        let c = Comparison {
            base_traces: 4,
            candidate_traces: 4,
            lines: vec![line(true, 264.5, 409.5), line(false, 256.5, 403.0)],
        };
        let mut out = Vec::new();
        Page::new(5, ChainKey::Normalized)
            .write(Some(&c), &mut out)
            .unwrap();
        let html = String::from_utf8(out).unwrap();
        let rows: Vec<&str> = html
            .lines()
            .filter(|l| l.starts_with("<tr><td><b>"))
            .collect();
        assert_eq!(rows.len(), 2, "{html}");
        assert!(
            rows[0].contains("INP (ms per trace") && rows[0].contains("<td class=\"n\">264.5</td>")
        );
        assert!(rows[1].contains("overall long-task time") && rows[1].contains(">256.5<"));
        // The verdict's long-task time is the overall line's, whichever comes first.
        assert!(
            html.contains("Long-task time per trace 256.5 ms → 403.0 ms"),
            "{html}"
        );
    }

    #[test]
    fn rows_with_long_chains_stay_within_the_data_budget() {
        // 1,050 tasks (5 cards, 1,000 rows kept), each with a 40-frame chain of 300-byte
        // URLs: about 20 KB of JSON a task, 21 MB in all without the budget.
        let mut p = Page::new(5, ChainKey::Normalized);
        let url = format!("https://cdn.example.test/{}.js", "x".repeat(270));
        for k in 0..1_050i64 {
            let task = crate::tasks::TopLevelTask {
                thread: crate::vocab::ThreadKey::default(),
                ts: crate::time::Timestamp::from_micros(k * 1_000_000),
                dur: TimeDelta::from_micros(60_000 + k),
                incomplete: false,
            };
            let mut c = crate::chain::resolve(
                &task,
                &crate::profile::ProfileSet::default(),
                None,
                &crate::chain::ChainConfig::default(),
            )
            .unwrap();
            c.chain = (0..40)
                .map(|i| ChainFrame {
                    function: format!("f{i}"),
                    url: url.clone(),
                    line: Some(1),
                    column: Some(1),
                    ..ChainFrame::default()
                })
                .collect();
            let file: std::sync::Arc<str> = "a.json".into();
            p.row(ReportRow::new(&file, &"".into(), Default::default(), c));
        }
        let mut out = Vec::new();
        p.write(None, &mut out).unwrap();
        let html = String::from_utf8(out).unwrap();
        let open = "id=\"taskchain-data\">";
        let start = html.find(open).unwrap() + open.len();
        let end = start + html[start..].find("</script>").unwrap();
        let d: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
        let tasks = d["tasks"].as_array().unwrap().len();
        assert!(end - start < DATA_BYTES + 100_000, "{} bytes", end - start);
        // Every card's task, and the rows that fit; the rest counted.
        assert!((5..1_005).contains(&tasks), "{tasks}");
        assert_eq!(d["left_out"]["tasks"], 1_050 - tasks);
        assert_eq!(html.matches("class=\"task-row\"").count(), tasks - 5);
        assert!(html.contains(&format!("{} shorter tasks are left out", 1_050 - tasks)));
    }
}

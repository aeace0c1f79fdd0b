//! The Chrome trace reader: a scanned trace ([`crate::scan::ScannedTrace`]) → a
//! [`Recording`]: the top-level tasks of the threads in scope and the long ones among
//! them, beside the trace's profiles rebuilt as sample / stack / frame tables.

use super::{FoundTask, Recording, TaskSource};
use crate::error::AnalyzeError;
use crate::profile;
use crate::scan::{self, ScannedTrace};
use crate::tasks::{self, Scope};
use crate::time::TimeDelta;
use crate::vocab::{DeferredDrop, Diagnostics};

/// Reads a scanned trace: tasks longer than `threshold` on the threads of `scope`.
/// `file`: the whole trace, when the scan left the args of entry points in it.
/// `tasks_file_given`: `--tasks` was given, which a trace ignores (a note says so). What
/// the recording no longer needs (the scan's records, the task lists) goes to `later`.
///
/// Errors: an array none of whose objects is a trace event.
pub(crate) fn read(
    mut trace: ScannedTrace,
    file: Option<&[u8]>,
    scope: Scope,
    threshold: TimeDelta,
    tasks_file_given: bool,
    later: &mut DeferredDrop,
) -> Result<Recording, AnalyzeError> {
    no_trace_events(&trace)?;
    let mut diagnostics = std::mem::take(&mut trace.diagnostics);
    if trace.events == 0 && trace.damage.is_empty() && !trace.truncated() {
        diagnostics.note("the trace holds no events: there was nothing to read".into());
    }
    if tasks_file_given {
        diagnostics.note(
            "--tasks is for field profiles; a Chrome trace has its own tasks (ignored)".into(),
        );
    }
    let trace_end = trace.last_ts.unwrap_or_default();
    let threads = tasks::threads_in_scope(&trace, scope);
    // Tasks and profiles come from different parts of the scan: built side by side.
    let marks = std::mem::take(&mut trace.task_marks);
    let wider = WiderScopes::of(&trace, &threads, scope);
    let mut task_diagnostics = Diagnostics::default();
    let entry_points = std::mem::take(&mut trace.entry_points);
    let timer_installs = std::mem::take(&mut trace.timer_installs);
    // The profiles' build is the longer side: the entry points are indexed beside it.
    let ((mut top, outside, entries), profiles) = rayon::join(
        || {
            let (top, added) = tasks::top_level_tasks_beside(
                &marks,
                &threads,
                &wider.added,
                trace_end,
                &mut task_diagnostics,
            );
            let outside = outside_scope(&added, &wider, scope, threshold);
            let entries = super::EntryIndex::new(entry_points, timer_installs, &threads);
            (top, outside, entries)
        },
        || profile::build(&mut trace, &mut diagnostics),
    );
    tasks::end_open_tasks_at_last_busy_sample(&mut top, &profiles, file, trace_end);
    diagnostics.merge(&task_diagnostics);
    if let Some((_, note)) = &outside {
        diagnostics.note(note.clone());
    }
    // Plain data (no heap inside): freed at once, not kept until the report is written,
    // where with millions of tasks the scan's marks and the task lists added up to 2.7×
    // the rows' CSV.
    drop(marks);
    // Counted first: the list is allocated once, not grown by doubling.
    let mut long = Vec::with_capacity(tasks::long_tasks_in_order(&top, threshold).count());
    long.extend(
        tasks::long_tasks_in_order(&top, threshold).map(|t| FoundTask {
            task: t,
            source: TaskSource::Trace,
            loaf: None,
        }),
    );
    let mut top_level = tasks::TopLevelCounts::of(top.values().flatten());
    top_level.blocking_time_from_fcp = trace
        .first_contentful_paint
        .map(|fcp| tasks::blocking_time_from(top.values().flatten(), fcp));
    let (frames, _) =
        super::frames::long_frames(std::mem::take(&mut trace.frame_marks), &threads, threshold);
    let interactions = crate::interactions::interactions(
        &std::mem::take(&mut trace.event_timings),
        &trace.navigations,
    );
    let mut task_spans = crate::vocab::FastMap::default();
    let windowed = frames.iter().map(|f| f.thread);
    for thread in windowed.chain(interactions.iter().map(|i| i.event.thread)) {
        task_spans.entry(thread).or_insert_with(|| {
            top.get(&thread)
                .map(|list| list.iter().map(|t| (t.ts, t.dur)).collect())
                .unwrap_or_default()
        });
    }
    drop(top);
    let mut broken: Vec<String> = Vec::new();
    if let Some(d) = trace.damage.first() {
        let mut line = format!(
            "invalid JSON at byte {} (event {}): expected {}; skipped {} ({}), resumed at byte {}",
            d.offset,
            d.event_index,
            d.expected,
            plural(d.skipped, "byte", "bytes"),
            plural(d.skipped_events, "event", "events"),
            d.resumed
        );
        if trace.damage.len() > 1 {
            let rest = &trace.damage[1..];
            line += &format!(
                "; {} more damaged {} skipped ({}, {}; the next at byte {})",
                rest.len(),
                if rest.len() == 1 {
                    "stretch"
                } else {
                    "stretches"
                },
                plural(rest.iter().map(|d| d.skipped).sum(), "byte", "bytes"),
                plural(
                    rest.iter().map(|d| d.skipped_events).sum(),
                    "event",
                    "events"
                ),
                rest[0].offset
            );
        }
        broken.push(line);
    }
    if let Some(scan::ArrayEnd::Broken { offset, expected }) = trace.end {
        broken.push(format!(
            "invalid JSON at byte {offset} (event {}): expected {expected}; the file after it was not read",
            trace.events + trace.damage.iter().map(|d| d.skipped_events).sum::<u64>()
        ));
    }
    let broken = (!broken.is_empty()).then(|| broken.join("; "));
    let mut recording = Recording {
        tasks: long,
        top_level,
        threads: threads.len(),
        thread_names: std::mem::take(&mut trace.thread_names),
        first_ts: trace.first_ts.unwrap_or_default(),
        truncated: trace.truncated(),
        damaged: trace.damaged(),
        profiles,
        pages: std::mem::take(&mut trace.pages),
        scripts: std::mem::take(&mut trace.scripts),
        embedded_maps: std::mem::take(&mut trace.embedded_maps),
        diagnostics,
        events: trace.events,
        broken,
        sample_interval: None,
        entries,
        interactions,
        frames,
        task_spans,
        outside_scope_long_tasks: outside.map_or(0, |(n, _)| n),
    };
    read_entry_details(&mut recording, file);
    later.keep(trace);
    Ok(recording)
}

/// Reads the args of the entry points inside the long tasks, the only ones a task's
/// trigger looks at (the scan kept the others' bytes unread), and inside the interactions,
/// whose phases have triggers too. Threads share no entry point: each thread's are read
/// on its own rayon task (on the 1 GB benchmark trace this was 15 ms on one core).
fn read_entry_details(rec: &mut Recording, file: Option<&[u8]>) {
    use rayon::prelude::*;
    // Per thread, the ranges of its entry-point list to read.
    let mut ranges: crate::vocab::FastMap<crate::vocab::ThreadKey, Vec<std::ops::Range<usize>>> =
        Default::default();
    // (A thread with no entry points gets an empty range, and no list below.)
    for t in rec.tasks.iter().filter(|t| t.source == TaskSource::Trace) {
        let (list, _) = rec.entries.of_thread(t.task.thread);
        let inside = scan::records::entries_inside(list, t.task.ts, t.task.dur);
        ranges.entry(t.task.thread).or_default().push(inside);
    }
    for i in &rec.interactions {
        let (list, longest) = rec.entries.of_thread(i.event.thread);
        let inside = scan::records::entries_overlapping(list, longest, i.event.ts, i.event.end);
        ranges.entry(i.event.thread).or_default().push(inside);
    }
    let mut lists: Vec<_> = rec
        .entries
        .by_thread
        .iter_mut()
        .filter_map(|(thread, list)| Some((ranges.get(thread)?, list)))
        .collect();
    let (diagnostics, cut) = lists
        .par_iter_mut()
        .map(|(ranges, list)| {
            let mut parser = scan::args::ArgsParser::default();
            let mut diagnostics = Diagnostics::default();
            for r in ranges.iter() {
                scan::read_entry_details(&mut list[r.clone()], file, &mut parser, &mut diagnostics);
            }
            (diagnostics, parser.cut)
        })
        .reduce(
            || (Diagnostics::default(), 0),
            |(mut d, cut), (other, more)| {
                d.merge(&other);
                (d, cut + more)
            },
        );
    rec.diagnostics.merge(&diagnostics);
    rec.diagnostics.add(scan::args::STRINGS_CUT, cut);
}

/// The threads a wider `--scope` than the one asked for adds: those of `--scope all`
/// (and of `--scope renderers`, for a main-frame scope) outside it, sorted.
struct WiderScopes {
    /// Threads of `--scope all` not in scope.
    added: Vec<crate::vocab::ThreadKey>,
    /// Of those, the threads of `--scope renderers` (main-frame scope only).
    renderers: Vec<crate::vocab::ThreadKey>,
}

impl WiderScopes {
    fn of(trace: &ScannedTrace, in_scope: &[crate::vocab::ThreadKey], scope: Scope) -> Self {
        let outside = |wider: Scope| -> Vec<_> {
            tasks::threads_in_scope(trace, wider)
                .into_iter()
                .filter(|t| in_scope.binary_search(t).is_err())
                .collect()
        };
        match scope {
            Scope::All => WiderScopes {
                added: Vec::new(),
                renderers: Vec::new(),
            },
            Scope::MainFrame => WiderScopes {
                added: outside(Scope::All),
                renderers: outside(Scope::Renderers),
            },
            Scope::Renderers => WiderScopes {
                added: outside(Scope::All),
                renderers: Vec::new(),
            },
        }
    }
}

/// How many long tasks lie on threads outside the scope (their rows are not written), with
/// a sentence saying so and which `--scope` shows them; `None` when there are none (or the
/// scope is `all`). `top`: the top-level tasks of the threads `wider` adds (made in the
/// pass over the marks that makes those in scope); the threads of `--scope renderers` are
/// among those of `--scope all`.
fn outside_scope(
    top: &std::collections::HashMap<crate::vocab::ThreadKey, Vec<tasks::TopLevelTask>>,
    wider: &WiderScopes,
    scope: Scope,
    threshold: TimeDelta,
) -> Option<(u64, String)> {
    let long = |t: &crate::vocab::ThreadKey| {
        top.get(t).map_or(0, |list| {
            list.iter().filter(|t| t.dur > threshold).count() as u64
        })
    };
    let all: u64 = wider.added.iter().map(long).sum();
    if all == 0 {
        return None;
    }
    let (name, how) = match scope {
        Scope::MainFrame => {
            let renderers: u64 = wider.renderers.iter().map(long).sum();
            let how = if renderers > 0 && renderers < all {
                format!("--scope renderers shows {renderers} of them, --scope all every one")
            } else if renderers == all {
                "--scope renderers shows them".to_string()
            } else {
                "--scope all shows them".to_string()
            };
            ("main-frame", how)
        }
        _ => ("renderers", "--scope all shows them".to_string()),
    };
    Some((
        all,
        format!(
            "{} on threads outside --scope {name} {} not in the report: {how}",
            plural(all, "long task", "long tasks"),
            if all == 1 { "is" } else { "are" }
        ),
    ))
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Refuses an array none of whose objects is a trace event (none has a `ph`): a
/// Lighthouse `devtoolslog.json` (DevTools protocol messages) or other JSON.
fn no_trace_events(trace: &ScannedTrace) -> Result<(), AnalyzeError> {
    if trace.events > 0 && trace.diagnostics.count(scan::NO_PHASE) == trace.events {
        return Err(AnalyzeError::OtherJson(format!(
            "a JSON array of {} objects, none a trace event (no \"ph\"; a DevTools protocol log?)",
            trace.events
        )));
    }
    Ok(())
}

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
    let mut task_diagnostics = Diagnostics::default();
    let (mut top, profiles) = rayon::join(
        || tasks::top_level_tasks(&marks, &threads, trace_end, &mut task_diagnostics),
        || profile::build(&mut trace, &mut diagnostics),
    );
    tasks::end_open_tasks_at_last_busy_sample(&mut top, &profiles, file, trace_end);
    diagnostics.merge(&task_diagnostics);
    let outside = outside_scope(&trace, &marks, &threads, scope, threshold, trace_end);
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
        entries: super::EntryIndex::new(
            std::mem::take(&mut trace.entry_points),
            std::mem::take(&mut trace.timer_installs),
            &threads,
        ),
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
/// trigger looks at (the scan kept the others' bytes unread).
fn read_entry_details(rec: &mut Recording, file: Option<&[u8]>) {
    let mut parser = scan::args::ArgsParser::default();
    for t in &rec.tasks {
        if t.source != TaskSource::Trace {
            continue;
        }
        let Some(list) = rec.entries.by_thread.get_mut(&t.task.thread) else {
            continue;
        };
        let inside = scan::records::entries_inside(list, t.task.ts, t.task.dur);
        scan::read_entry_details(&mut list[inside], file, &mut parser, &mut rec.diagnostics);
    }
    // And those inside the interactions, whose phases have triggers too.
    for i in &rec.interactions {
        let Some(list) = rec.entries.by_thread.get_mut(&i.event.thread) else {
            continue;
        };
        let inside = scan::records::entries_overlapping(list, i.event.ts, i.event.end);
        scan::read_entry_details(&mut list[inside], file, &mut parser, &mut rec.diagnostics);
    }
    rec.diagnostics.add(scan::args::STRINGS_CUT, parser.cut);
}

/// How many long tasks lie on threads outside `scope` (their rows are not written), with a
/// sentence saying so and which `--scope` shows them; `None` when there are none (or the
/// scope is `all`).
fn outside_scope(
    trace: &ScannedTrace,
    marks: &scan::records::TaskMarks,
    in_scope: &[crate::vocab::ThreadKey],
    scope: Scope,
    threshold: TimeDelta,
    trace_end: crate::time::Timestamp,
) -> Option<(u64, String)> {
    if scope == Scope::All {
        return None;
    }
    // The long tasks of the threads a wider scope adds to this one.
    let count = |wider: Scope| {
        let added: Vec<_> = tasks::threads_in_scope(trace, wider)
            .into_iter()
            .filter(|t| in_scope.binary_search(t).is_err())
            .collect();
        if added.is_empty() {
            return 0;
        }
        let top = tasks::top_level_tasks(marks, &added, trace_end, &mut Diagnostics::default());
        tasks::long_tasks_in_order(&top, threshold).count() as u64
    };
    let all = count(Scope::All);
    if all == 0 {
        return None;
    }
    let (name, how) = match scope {
        Scope::MainFrame => {
            let renderers = count(Scope::Renderers);
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

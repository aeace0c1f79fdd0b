//! `--speedscope FILE`: each long task's window, and each interaction phase's, as one
//! sampled profile in speedscope's file
//! format (<https://www.speedscope.app/file-format-schema.json>, the schema the `speedscope`
//! npm package ships as `dist/release/file-format-schema.json`), so "open this task" works
//! offline in speedscope. Frames are shared by every profile (`shared.frames`: `name`,
//! `file`, 1-based `line` and `col`, the source-map original when one is shown in chains);
//! a profile is `type: "sampled"` in milliseconds from its window's start, one sample per
//! run of samples on one stack (outermost frame first) weighted by the run's time, and is
//! named `file · thread · start · length` (a phase: `file · thread · interaction ID · phase ·
//! start · length`). A file's task profiles come first, then its phases' in interaction
//! order. Profiles are written as tasks finish; the frames at the end (JSON objects are
//! unordered).

use std::collections::HashMap;
use std::io::{self, BufWriter, Write};

use serde::Serialize;

use super::sink::{FileDone, Out, Sink, Totals};
use super::{ReportRow, json::TASKCHAIN_VERSION, millis_number};
use crate::chain::ChainFrame;

/// The schema a file names.
pub(crate) const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

#[derive(Serialize, PartialEq, Eq, Hash, Clone)]
struct Frame {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    col: Option<u32>,
}

impl Frame {
    fn of(f: &ChainFrame) -> Frame {
        match f.original.as_deref().filter(|o| o.in_chain_text) {
            Some(o) => Frame {
                name: o.function.clone().unwrap_or_else(|| f.function.clone()),
                file: Some(o.source.clone()),
                line: Some(o.line),
                col: Some(o.column),
            },
            None => Frame {
                name: f.function.clone(),
                file: (!f.url.is_empty()).then(|| f.url.clone()),
                line: f.line,
                col: f.column,
            },
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Profile<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    unit: &'static str,
    start_value: f64,
    end_value: f64,
    samples: Vec<Vec<usize>>,
    weights: Vec<f64>,
}

/// The speedscope file, a profile per task with samples.
pub(crate) struct SpeedscopeSink<'a> {
    out: BufWriter<Out<'a>>,
    frames: Vec<Frame>,
    index: HashMap<Frame, usize>,
    profiles: usize,
}

impl<'a> SpeedscopeSink<'a> {
    /// Starts the file (its head and the open list of profiles).
    pub(crate) fn new(out: Out<'a>) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 16, out);
        write!(
            out,
            "{{\"$schema\":{},\"exporter\":{},\"name\":\"taskchain: long tasks\",\
             \"activeProfileIndex\":0,\"profiles\":[",
            serde_json::Value::from(SCHEMA),
            serde_json::Value::from(format!("taskchain {TASKCHAIN_VERSION}"))
        )?;
        Ok(SpeedscopeSink {
            out,
            frames: Vec::new(),
            index: HashMap::new(),
            profiles: 0,
        })
    }

    fn frame(&mut self, f: &ChainFrame) -> usize {
        let fr = Frame::of(f);
        if let Some(&i) = self.index.get(&fr) {
            return i;
        }
        self.frames.push(fr.clone());
        self.index.insert(fr, self.frames.len() - 1);
        self.frames.len() - 1
    }

    /// The thread as a profile's name shows it.
    fn thread(r: &ReportRow) -> String {
        if r.thread_name.is_empty() {
            format!("pid {} tid {}", r.thread.pid.0, r.thread.tid.0)
        } else {
            format!("{} {}:{}", r.thread_name, r.thread.pid.0, r.thread.tid.0)
        }
    }

    fn task(&mut self, r: &ReportRow) -> io::Result<()> {
        let name = format!(
            "{} · {} · {} ms · {} ms long",
            r.file,
            Self::thread(r),
            super::millis_text(r.task_start),
            super::millis_text(r.task_dur),
        );
        self.profile(r, &name)
    }

    /// Each phase of an interaction with samples, named `file · thread · interaction ID ·
    /// phase · start ms · length ms`.
    fn interaction(&mut self, i: &super::interactions::InteractionRow) -> io::Result<()> {
        for p in &i.phases {
            let r = &p.row;
            let name = format!(
                "{} · {} · interaction {} · {} · {} ms · {} ms long",
                r.file,
                Self::thread(r),
                i.interaction.event.interaction_id,
                p.phase.as_str(),
                super::millis_text(r.task_start),
                super::millis_text(r.task_dur),
            );
            self.profile(r, &name)?;
        }
        Ok(())
    }

    /// The window of `r` (its samples over time) as a profile named `name`; nothing when
    /// it has no timeline.
    fn profile(&mut self, r: &ReportRow, name: &str) -> io::Result<()> {
        let Some(t) = &r.timeline else { return Ok(()) };
        // The shared index of each of the timeline's frames, and each stack's path.
        let frames: Vec<usize> = t.frames.iter().map(|f| self.frame(f)).collect();
        let mut paths: Vec<Vec<usize>> = Vec::with_capacity(t.stacks.len());
        for &(parent, frame) in &t.stacks {
            let mut p = parent.map_or_else(Vec::new, |p| paths[p as usize].clone());
            p.push(frames[frame as usize]);
            paths.push(p);
        }
        let profile = Profile {
            kind: "sampled",
            name,
            unit: "milliseconds",
            start_value: t.runs.first().map_or(0.0, |x| millis_number(x.start)),
            end_value: millis_number(t.length),
            samples: t
                .runs
                .iter()
                .map(|x| x.stack.map_or_else(Vec::new, |s| paths[s as usize].clone()))
                .collect(),
            weights: t.runs.iter().map(|x| millis_number(x.dur)).collect(),
        };
        if self.profiles > 0 {
            self.out.write_all(b",")?;
        }
        self.profiles += 1;
        serde_json::to_writer(&mut self.out, &profile)?;
        Ok(())
    }
}

impl Sink for SpeedscopeSink<'_> {
    fn rows(&mut self, rows: &[ReportRow]) -> io::Result<()> {
        rows.iter().try_for_each(|r| self.task(r))
    }

    fn file_done(&mut self, done: &FileDone<'_>) -> io::Result<()> {
        if let super::sink::FileOutcome::Done(rep) = done.outcome {
            rep.rows.iter().try_for_each(|r| self.task(r))?;
            rep.interactions
                .iter()
                .try_for_each(|i| self.interaction(i))?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>, _: &Totals) -> io::Result<()> {
        self.out.write_all(b"],\"shared\":{\"frames\":")?;
        serde_json::to_writer(&mut self.out, &self.frames)?;
        self.out.write_all(b"}}\n")?;
        self.out.flush()
    }
}

//! Profile reconstruction: `Profile` + `ProfileChunk` events of one (pid, `id`), or one
//! legacy `CpuProfile` event → [`CpuProfile`] with the sample / stack / frame tables of
//! docs/METHOD.md §1, owned by the thread of its `Profile` (or `CpuProfile`) event.
//!
//! Chunks are matched to their `Profile` by (pid, id) — ids repeat across processes — and
//! taken in (ts, file order) order. Chunks whose `Profile` event is missing cannot be
//! placed on a thread or a clock and are counted, not used. Odd input is counted in
//! [`Diagnostics`], never an error.

mod builder;
pub(crate) mod index;
pub(crate) mod samples;
pub(crate) mod tables;

use std::collections::{BTreeMap, HashMap};

use rayon::prelude::*;

pub(crate) use builder::ProfileBuilder;
pub(crate) use index::{FrameIndex, StackIndex};
pub(crate) use samples::{NodeStacks, Placement, WindowSamples};
pub(crate) use tables::{FrameKind, FrameTable, SampleTable, StackTable};

use crate::scan::records::ProfileData;

use crate::scan::ScannedTrace;
use crate::time::{TimeDelta, Timestamp};
use crate::vocab::Diagnostics;
use crate::vocab::{Pid, ProfileId, ThreadKey};

/// Which thread a profile samples and where its clock starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The profiled thread (the `Profile`/`CpuProfile` event's pid/tid).
    pub thread: ThreadKey,
    /// The profile `id` (`CpuProfile` events: their file offset, as text).
    pub id: ProfileId,
    /// Time of the profile's start, from which the first delta counts.
    pub t0: Timestamp,
    /// `t0` is the `Profile` event's `ts` because `startTime` was on another clock.
    pub start_on_other_clock: bool,
    /// `args.data.source` (`Internal` for a Performance-panel recording).
    pub source: Option<String>,
}

/// One reconstructed profile.
#[derive(Debug)]
pub struct CpuProfile {
    /// Thread, id and clock.
    pub origin: Origin,
    /// Call frames.
    pub frames: FrameTable,
    /// Stacks (frame, parent).
    pub stacks: StackTable,
    /// Node id → stack.
    pub node_stacks: NodeStacks,
    /// The chunks, placed in time; samples are read per window ([`CpuProfile::window`]).
    pub placement: Placement,
    /// Number of samples in the whole profile.
    pub sample_count: u64,
    /// Time of the profile's earliest sample, known node or not (`None` without samples).
    pub first_sample: Option<Timestamp>,
    /// Time of the profile's latest sample, known node or not (`None` without samples).
    pub last_sample: Option<Timestamp>,
    /// Mean gap between samples over the whole profile, (last − first) / (count − 1), as
    /// DevTools weighs the last sample; zero with fewer than 2 samples.
    pub mean_interval: TimeDelta,
}

impl CpuProfile {
    /// The samples of the chunks that meet `[start, end)` (every sample inside it is
    /// there), sorted by time. `file` is the whole trace for chunks left in it.
    pub fn window(&self, start: Timestamp, end: Timestamp, file: Option<&[u8]>) -> WindowSamples {
        self.placement.window(start, end, file, &self.node_stacks)
    }

    /// Time of the latest sample naming a known node ([`Placement::last_known`]).
    pub fn last_known_sample(&self, file: Option<&[u8]>) -> Option<Timestamp> {
        self.placement.last_known(file, &self.node_stacks)
    }

    /// True when `source` says the profile is the Performance panel's own (`Internal`).
    pub fn is_internal(&self) -> bool {
        self.origin.source.as_deref() == Some("Internal")
    }

    /// The most frames of any stack, and the most bytes of call frame text (function
    /// name, at least 11 bytes as `(anonymous)`, URL and `scriptId`) along any stack: a
    /// bound on what one chain copies, which a report row holds. One pass over the stacks
    /// (a parent's row comes before its children's, [`StackTable::intern`]).
    pub(crate) fn longest_stack(&self) -> (usize, usize) {
        let mut along: Vec<(usize, usize)> = Vec::with_capacity(self.stacks.len());
        let mut most = (0, 0);
        for i in 0..self.stacks.len() {
            let s = StackIndex::new(i);
            let cf = self.frames.get(self.stacks.frame(s));
            let text = cf.function_name.len().max(11) + cf.url.len() + cf.script_id.len();
            let (frames, bytes) = self.stacks.parent(s).map_or((0, 0), |p| along[p.index()]);
            let here = (frames + 1, bytes + text);
            most = (most.0.max(here.0), most.1.max(here.1));
            along.push(here);
        }
        most
    }
}

/// All profiles of a trace, by thread.
#[derive(Debug, Default)]
pub struct ProfileSet {
    /// Profiles in a fixed order (by thread, then t0, then id).
    pub profiles: Vec<CpuProfile>,
    by_thread: HashMap<ThreadKey, Vec<usize>>,
}

impl ProfileSet {
    /// The profiles of `thread` (empty when none).
    pub fn of_thread(&self, thread: ThreadKey) -> impl Iterator<Item = &CpuProfile> {
        self.by_thread
            .get(&thread)
            .into_iter()
            .flatten()
            .map(|&i| &self.profiles[i])
    }
    /// True when `thread` owns at least one profile.
    pub fn covers(&self, thread: ThreadKey) -> bool {
        self.by_thread.contains_key(&thread)
    }
    /// Threads that own a profile.
    pub fn threads(&self) -> impl Iterator<Item = ThreadKey> + '_ {
        self.by_thread.keys().copied()
    }

    /// A set of given profiles (field data: one profile, no trace).
    pub fn from_profiles(profiles: Vec<CpuProfile>) -> ProfileSet {
        let mut set = ProfileSet::default();
        for p in profiles {
            set.by_thread
                .entry(p.origin.thread)
                .or_default()
                .push(set.profiles.len());
            set.profiles.push(p);
        }
        set
    }

    #[cfg(test)]
    pub(crate) fn push_for_tests(&mut self, p: CpuProfile) {
        self.by_thread
            .entry(p.origin.thread)
            .or_default()
            .push(self.profiles.len());
        self.profiles.push(p);
    }
}

/// Builds every profile of a scanned trace (nodes, stacks, frames, chunks placed in time;
/// samples stay unread). Consumes the chunks.
pub fn build(trace: &mut ScannedTrace, diagnostics: &mut Diagnostics) -> ProfileSet {
    // Each profile with its chunks' data, added in the parallel part (sorting a profile's
    // chunks and reading its nodes is most of the work).
    let mut builders: BTreeMap<(Pid, ProfileId), (ProfileBuilder, Option<ProfileData>)> =
        BTreeMap::new();
    let mut profile_events = std::mem::take(&mut trace.profiles);
    profile_events.sort_by_key(|p| p.order);
    for p in profile_events {
        let key = (p.thread.pid, p.id.clone());
        if builders.contains_key(&key) {
            diagnostics.add("Profile events repeated for one (pid, id) (first kept)", 1);
            continue;
        }
        builders.insert(
            key,
            (
                ProfileBuilder::new(Origin::from_profile_event(
                    p.thread,
                    p.id,
                    p.ts,
                    p.start_time,
                    p.source,
                )),
                None,
            ),
        );
    }
    let mut orphan = 0u64;
    for (key, data) in std::mem::take(&mut trace.profile_data) {
        match builders.get_mut(&key) {
            Some((_, slot)) => *slot = Some(data),
            None => {
                orphan += data
                    .chunks
                    .iter()
                    .map(|c| c.samples.summary().count.max(1) as u64)
                    .sum::<u64>()
            }
        }
    }
    diagnostics.add(
        "profile samples in chunks without a Profile event (unplaceable, ignored)",
        orphan,
    );
    let mut all: Vec<(ProfileBuilder, Option<ProfileData>)> = builders.into_values().collect();
    let mut cpu_profiles = std::mem::take(&mut trace.cpu_profiles);
    cpu_profiles.sort_by_key(|c| c.order);
    for c in cpu_profiles {
        // Chrome writes the event after the profile ends; without startTime, count back.
        let t0 = c
            .data
            .start_time
            .unwrap_or(c.ts - c.data.samples.summary().sum);
        let mut b = ProfileBuilder::new(Origin {
            thread: c.thread,
            id: ProfileId(format!("CpuProfile@{}", c.order)),
            t0,
            start_on_other_clock: false,
            source: None,
        });
        b.add_chunk(c.data);
        all.push((b, None));
    }
    let built: Vec<(CpuProfile, Diagnostics)> = all
        .into_par_iter()
        .map(|(mut b, data)| {
            if let Some(data) = data {
                b.add_profile_data(data);
            }
            let mut d = Diagnostics::default();
            (b.finish(&mut d), d)
        })
        .collect();
    let mut profiles = Vec::with_capacity(built.len());
    for (p, d) in built {
        diagnostics.merge(&d);
        profiles.push(p);
    }
    profiles.sort_by(|a, b| {
        (a.origin.thread, a.origin.t0, &a.origin.id).cmp(&(
            b.origin.thread,
            b.origin.t0,
            &b.origin.id,
        ))
    });
    let mut by_thread: HashMap<ThreadKey, Vec<usize>> = HashMap::new();
    for (i, p) in profiles.iter().enumerate() {
        by_thread.entry(p.origin.thread).or_default().push(i);
    }
    ProfileSet {
        profiles,
        by_thread,
    }
}

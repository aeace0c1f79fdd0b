//! Chains: a long task and its thread's profiles → [`TaskChain`] (docs/METHOD.md §1 steps 1–6).
//!
//! 1. Window `[ts − lookback, ts + dur)`.
//! 2. Candidates: the samples of one profile of the task's thread inside it.
//! 3. Targets: the largest group of candidates with the same stack (ties: earliest first
//!    sample).
//! 4. Its stack's frame is the leaf.
//! 5. The parent walk gives the chain, reversed to root → leaf, without `(root)`.
//! 6. Confidence: the targets' time (each sample stands until the next sample, clipped to
//!    the window) ÷ `dur`.
//!
//! [`Method::HeaviestPath`] replaces steps 3–4 by a descent into the heaviest child stack.

pub mod breakdown;
mod heaviest;
pub mod phases;
mod recursion;
mod timeline;
pub mod trigger;
mod window;

use crate::profile::{CpuProfile, FrameIndex, FrameKind, ProfileSet, StackIndex, WindowSamples};
use crate::tasks::LongTask;
use crate::time::{TimeDelta, Timestamp};
pub use recursion::CollapseRecursion;
pub use timeline::{Alternative, TIMELINE_RUNS, Timeline, TimelineRun};
pub(crate) use window::Window;

/// How the target stack is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Method {
    /// docs/METHOD.md §1: the largest group of samples with the same stack.
    #[default]
    LargestStack,
    /// Descend from the root into the child with the most sample time while it holds at
    /// least half of its parent's time.
    HeaviestPath,
}

/// What happens to a task whose confidence is below `--min-confidence`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LowConfidencePolicy {
    /// Keep the row with status `low_confidence`.
    #[default]
    Flag,
    /// Leave the row out.
    Drop,
    /// Resolve again with the heaviest-path method; its answer replaces the first only
    /// when it has a JS chain and a higher confidence (then flag `fallback`).
    Fallback,
}

/// Settings of chain resolution.
#[derive(Clone, Copy, Debug)]
pub struct ChainConfig {
    /// Back-tracking time before `ts` (`--lookback-ms`, default 0).
    pub lookback: TimeDelta,
    /// `--min-confidence` (0.5).
    pub min_confidence: f64,
    /// `--on-low-confidence`.
    pub policy: LowConfidencePolicy,
    /// `--method`.
    pub method: Method,
    /// `--collapse-recursion`: how stacks are grouped (default direct recursion merged).
    pub collapse: CollapseRecursion,
    /// Also count the window's samples by stack ([`TaskChain::stacks`]), for `--folded`.
    pub collect_stacks: bool,
    /// Also count the window's samples by their leaf frame's script URL
    /// ([`TaskChain::leaf_urls`]), for the parties' sample shares.
    pub collect_leaf_urls: bool,
    /// Also name the runner-up groups of the window ([`TaskChain::alternatives`]), for
    /// JSON rows and the HTML report.
    pub collect_alternatives: bool,
    /// Also keep the window's samples over time ([`TaskChain::timeline`]), for flame
    /// charts and speedscope.
    pub collect_timeline: bool,
    /// Also resolve each interaction phase's chain and make each long animation frame's
    /// row (`FileReport::interactions`, `FileReport::frames`): on by default; the CLI turns
    /// it off when no output shows them, since a frame's window is mostly a long task's,
    /// resolved a second time. The summary's counts and INP come from the events either way.
    pub collect_interactions: bool,
    /// Fewer samples than this in the window make a task low confidence whatever its
    /// ratio (3: field sampling is coarse, and two samples say little).
    pub min_samples: usize,
    /// A stretch without samples longer than this sets `profile_gap` (10 ms; field data,
    /// sampled every ~10 ms, uses 2.5 sample intervals).
    pub gap: TimeDelta,
}

impl Default for ChainConfig {
    fn default() -> Self {
        ChainConfig {
            lookback: TimeDelta::ZERO,
            min_confidence: 0.5,
            policy: LowConfidencePolicy::Flag,
            method: Method::LargestStack,
            collapse: CollapseRecursion::Direct,
            collect_stacks: false,
            collect_leaf_urls: false,
            collect_alternatives: false,
            collect_timeline: false,
            collect_interactions: true,
            min_samples: 3,
            gap: PROFILE_GAP,
        }
    }
}

/// The outcome of one task (docs/METHOD.md §3 `status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChainStatus {
    /// Attributed with confidence ≥ the minimum.
    Ok,
    /// Attributed with confidence below the minimum.
    LowConfidence,
    /// The target stack is a VM state: the task was mostly native work.
    NonJs,
    /// The thread has a profile but no sample falls in the window.
    NoSamples,
    /// No profile covers the task's thread.
    NoProfile,
    /// The file was cut off (flag `truncated_file`) and no profile of the part read covers
    /// the task's thread: the profile's events may have been after the cut, so the
    /// recording is not to blame.
    ProfileCutOff,
}

impl ChainStatus {
    /// The CSV spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ChainStatus::Ok => "ok",
            ChainStatus::LowConfidence => "low_confidence",
            ChainStatus::NonJs => "non_js",
            ChainStatus::NoSamples => "no_samples",
            ChainStatus::NoProfile => "no_profile",
            ChainStatus::ProfileCutOff => "profile_cut_off",
        }
    }
}

/// Quality notes of one row (docs/METHOD.md §3 `flags`), as bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags(u16);

impl Flags {
    /// A `B` with no `E`: the task is cut at the trace's end.
    pub const INCOMPLETE: Flags = Flags(1);
    /// The file ends inside the event array.
    pub const TRUNCATED_FILE: Flags = Flags(2);
    /// `t0` taken from the `Profile` event's `ts`.
    pub const PROFILE_START_ON_OTHER_CLOCK: Flags = Flags(4);
    /// Sorting samples that came out of order (negative `timeDeltas`) changed the answer:
    /// which samples are in the window, or which of two equal groups is the target.
    pub const SAMPLES_REORDERED: Flags = Flags(8);
    /// No sample for over 10 ms inside the window.
    pub const PROFILE_GAP: Flags = Flags(16);
    /// The low-confidence answer was replaced by the heaviest path's, a JS chain with a
    /// higher confidence.
    pub const FALLBACK: Flags = Flags(32);
    /// The profile's first sample lies inside the window (after its start): the profiler started during the
    /// task, whose start it did not see (its own start shows as `(program)`).
    pub const PROFILE_STARTED_INSIDE: Flags = Flags(64);
    /// Part of the file's event array was invalid JSON and skipped (the events in it are
    /// missing: a chunk among them would have held samples of any task).
    pub const DAMAGED_FILE: Flags = Flags(128);
    /// A string of the file longer than 1 MiB (a function name, a URL, a thread name) was
    /// cut to 1 MiB (`LONG_STRING` in `src/scan/args.rs`): a name in the row may be cut.
    pub const STRING_CUT: Flags = Flags(256);

    const NAMES: [(Flags, &'static str); 9] = [
        (Flags::INCOMPLETE, "incomplete"),
        (Flags::TRUNCATED_FILE, "truncated_file"),
        (
            Flags::PROFILE_START_ON_OTHER_CLOCK,
            "profile_start_on_other_clock",
        ),
        (Flags::SAMPLES_REORDERED, "samples_reordered"),
        (Flags::PROFILE_GAP, "profile_gap"),
        (Flags::FALLBACK, "fallback"),
        (Flags::PROFILE_STARTED_INSIDE, "profile_started_inside"),
        (Flags::DAMAGED_FILE, "damaged_file"),
        (Flags::STRING_CUT, "string_cut"),
    ];

    /// Sets `f` when `on`.
    pub fn set(&mut self, f: Flags, on: bool) {
        if on {
            self.0 |= f.0;
        }
    }
    /// True when `f` is set.
    pub fn contains(self, f: Flags) -> bool {
        self.0 & f.0 == f.0
    }
    /// The names of the set flags, in the order docs/METHOD.md §3 lists them.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Self::NAMES
            .iter()
            .filter(move |(f, _)| self.contains(*f))
            .map(|(_, n)| *n)
    }
    /// The names of the set flags joined by `;` (empty when none).
    pub fn to_text(self) -> String {
        self.names().collect::<Vec<_>>().join(";")
    }
}

/// One frame of a chain as reports show it: line and column **1-based** (the trace's
/// 0-based values + 1), `None` when unknown; `url` empty when none.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChainFrame {
    /// Function name; `(anonymous)` for an empty one.
    pub function: String,
    /// Script URL.
    pub url: String,
    /// 1-based line.
    pub line: Option<u32>,
    /// 1-based column.
    pub column: Option<u32>,
    /// `scriptId` (text; empty when none): joins the trace's source-rundown events.
    pub script_id: String,
    /// Where the frame is in the original source, from a source map (set by
    /// [`crate::enrich::symbolicate`]); `None` when no map covers it.
    pub original: Option<Box<OriginalFrame>>,
    /// Calls of this function merged into the frame by `--collapse-recursion` (1: none).
    pub recursion_depth: u32,
}

/// A frame's original position and name, from a source map.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OriginalFrame {
    /// The name of the original function holding the position (as V8 names it unminified);
    /// `None` when the original source is not available to parse.
    pub function: Option<String>,
    /// The map's `sources` entry (with its `sourceRoot`).
    pub source: String,
    /// 1-based line in the original source.
    pub line: u32,
    /// 1-based column (UTF-16 units, as source maps count).
    pub column: u32,
    /// The source is in the map's `ignoreList` / `x_google_ignoreList` (library code).
    pub ignore_listed: bool,
    /// Chain texts (CSV `chain`, aggregates, folded stacks) show the original
    /// (`--chain-names original`, the default).
    pub in_chain_text: bool,
}

/// The call chain of one long task.
#[derive(Clone, Debug, PartialEq)]
#[doc(hidden)]
pub struct TaskChain {
    /// The task.
    pub task: LongTask,
    /// Samples in the window (candidates).
    pub window_samples: usize,
    /// Samples of the target stack (for heaviest path: in the chosen subtree).
    pub target_samples: usize,
    /// Samples in the window whose leaf is a JS frame (not a VM state such as
    /// `(program)`, `(idle)` or `(garbage collector)`): 0 when no JavaScript ran.
    pub js_samples: usize,
    /// Time the target samples stand for, clipped to the window (docs/METHOD.md §1 step 6).
    pub stack_time: TimeDelta,
    /// `stack_time / dur`, in [0, 1].
    pub confidence: f64,
    /// Outcome.
    pub status: ChainStatus,
    /// Quality notes (without `truncated_file`, which the file adds).
    pub flags: Flags,
    /// Frames root → leaf, without `(root)`. The leaf is the last.
    pub chain: Vec<ChainFrame>,
    /// Samples read for the window that name no node (left out).
    pub unknown_samples: u64,
    /// Chunks meeting the window whose sample arrays could not be read (left out).
    pub unreadable_chunks: u64,
    /// With [`ChainConfig::collect_stacks`]: every stack of the window's samples as a
    /// folded path (frames root → leaf joined by `;`, see [`ChainFrame::text`]), with its
    /// sample count and time.
    pub stacks: Vec<(String, u32, TimeDelta)>,
    /// With [`ChainConfig::collect_leaf_urls`]: the window's samples by the script URL of
    /// their leaf frame (`""` for frames without one: `(program)`, natives, VM states),
    /// with the sample count, most samples first (ties: by URL).
    pub leaf_urls: Vec<(String, u32)>,
    /// Times of the target samples (those counted in `target_samples`), sorted: which
    /// entry point of the task ran them decides its trigger.
    pub target_times: Vec<Timestamp>,
    /// What started the task, for trace tasks (`trigger::of_task`, filled by the caller,
    /// which has the trace's entry points).
    pub trigger: Option<trigger::Trigger>,
    /// With [`ChainConfig::collect_alternatives`] (and samples in the window): the
    /// runner-up groups, largest first.
    pub alternatives: Option<Vec<Alternative>>,
    /// With [`ChainConfig::collect_timeline`] (and samples in the window): the window's
    /// samples over time.
    pub timeline: Option<Box<Timeline>>,
    /// The task's time by category and its forced layout, for trace tasks
    /// (`breakdown::of_window`, filled by the caller).
    pub breakdown: Option<breakdown::Breakdown>,
    /// Out-of-order samples (negative `timeDeltas`) met the window's edges or decided a
    /// tie, yet placing them on either side changed no chain, leaf or status: the row is
    /// not flagged `samples_reordered`, and the file counts such rows in one warning.
    pub reordered_unflagged: bool,
}

impl TaskChain {
    /// A row for `task` before its window is read: no samples, no chain, `no_profile`.
    fn empty(task: &LongTask) -> TaskChain {
        TaskChain {
            task: *task,
            window_samples: 0,
            target_samples: 0,
            js_samples: 0,
            stack_time: TimeDelta::ZERO,
            confidence: 0.0,
            status: ChainStatus::NoProfile,
            flags: Flags::default(),
            chain: Vec::new(),
            unknown_samples: 0,
            unreadable_chunks: 0,
            stacks: Vec::new(),
            leaf_urls: Vec::new(),
            target_times: Vec::new(),
            trigger: None,
            alternatives: None,
            timeline: None,
            breakdown: None,
            reordered_unflagged: false,
        }
    }
}

/// Gaps without samples longer than this inside a window set [`Flags::PROFILE_GAP`] (the
/// default of [`ChainConfig::gap`]).
pub(crate) const PROFILE_GAP: TimeDelta = TimeDelta::from_micros(10_000);

/// Resolves one task. `file` is the whole trace, for sample arrays left in it. `None` when
/// the policy drops the task.
#[doc(hidden)]
pub fn resolve(
    task: &LongTask,
    profiles: &ProfileSet,
    file: Option<&[u8]>,
    cfg: &ChainConfig,
) -> Option<TaskChain> {
    let mut out = TaskChain::empty(task);
    out.flags.set(Flags::INCOMPLETE, task.incomplete);
    if !profiles.covers(task.thread) {
        return Some(out);
    }
    let window = Window::of(task, cfg.lookback);
    let (picked, left_out) = pick_profile(profiles, task, &window, file);
    (out.unknown_samples, out.unreadable_chunks) = left_out;
    let Some((profile, samples, rows)) = picked else {
        out.status = ChainStatus::NoSamples;
        return Some(out);
    };
    let w = window::Weighted::new(profile, &samples.table, rows, &window, file);
    out.window_samples = w.len();
    out.js_samples = w
        .stack_runs()
        .filter(|(stack, _)| {
            let leaf = profile.stacks.frame(*stack);
            !profile.frames.kind(leaf).is_vm_state()
        })
        .map(|(_, run)| run.len())
        .sum();
    out.flags.set(
        Flags::PROFILE_START_ON_OTHER_CLOCK,
        profile.origin.start_on_other_clock,
    );
    out.flags.set(Flags::PROFILE_GAP, w.has_gap_over(cfg.gap));
    out.flags.set(
        Flags::PROFILE_STARTED_INSIDE,
        profile
            .first_sample
            .is_some_and(|t| window.start < t && t < window.end),
    );

    if cfg.collect_stacks {
        out.stacks = folded_stacks(&w);
    }
    if cfg.collect_leaf_urls {
        out.leaf_urls = leaf_urls(&w);
    }
    // With recursion in the window, its samples are grouped by collapsed stacks.
    let collapsed = recursion::Collapsed::of_window(&w, cfg.collapse);
    let heaviest = || match &collapsed {
        Some(c) => c.heaviest(&w),
        None => heaviest::heaviest_path(&w),
    };
    let pick = pick_in(&w, collapsed.as_ref(), cfg.method);
    apply(&mut out, profile, pick.as_ref(), cfg.min_confidence);
    let mut final_pick = pick;
    if out.window_samples < cfg.min_samples {
        out.status = ChainStatus::LowConfidence;
    }
    // Sorting out-of-order samples can change the answer only when a backward step crosses
    // an edge of the window (which samples are inside depends on the order) or lies inside
    // it while two groups tie (the order decides which came first). A crossed edge counts
    // only when moving it to either end of the step's span changes the chain or status.
    let tie = final_pick.as_ref().is_some_and(|p| p.tied)
        && window.holds_backward_step(&samples.reordered);
    let crossed = window.edge_crossed_backwards(&samples.reordered);
    if tie || crossed {
        // With one profile on the thread, the rows already read answer for a moved window
        // that they reach past on both sides: no second read of the sample arrays.
        let one_profile = profiles.of_thread(task.thread).nth(1).is_none();
        let changed = tie
            || window
                .with_edges_across(&samples.reordered)
                .into_iter()
                .any(|moved| {
                    let (chain, status) = if one_profile && reaches_past(&samples.table, &moved) {
                        answer_in(&out, profile, &samples.table, &moved, file, cfg)
                    } else {
                        answer_over(&out, profiles, &moved, file, cfg)
                    };
                    chain != out.chain || status != out.status
                });
        out.flags.set(Flags::SAMPLES_REORDERED, changed);
        out.reordered_unflagged = !changed;
    }
    if out.status == ChainStatus::LowConfidence {
        match cfg.policy {
            LowConfidencePolicy::Flag => {}
            LowConfidencePolicy::Drop => return None,
            LowConfidencePolicy::Fallback => {
                if cfg.method != Method::HeaviestPath {
                    let mut alt = out.clone();
                    apply(&mut alt, profile, heaviest().as_ref(), cfg.min_confidence);
                    // Only a JS chain more certain than the first answer replaces it.
                    let js_leaf = !alt.chain.is_empty() && alt.status != ChainStatus::NonJs;
                    if js_leaf && alt.confidence > out.confidence {
                        if out.window_samples < cfg.min_samples {
                            alt.status = ChainStatus::LowConfidence;
                        }
                        alt.flags.set(Flags::FALLBACK, true);
                        out = alt;
                        final_pick = heaviest();
                    }
                }
            }
        }
    }
    let Some(pick) = &final_pick else {
        return Some(out);
    };
    let is_target = target_filter(&w, collapsed.as_ref(), pick);
    out.target_times = target_times(&w, &*is_target, pick.samples);
    if cfg.collect_alternatives {
        out.alternatives = Some(match &collapsed {
            Some(c) => timeline::alternatives(
                &w,
                c.len(),
                |s| c.node_of(s) as usize,
                &*is_target,
                |g, _| recursion::collapsed_frames(profile, &c.path(g as u32)),
            ),
            None => timeline::alternatives(
                &w,
                profile.stacks.len(),
                |s| s.index(),
                &*is_target,
                |_, s| chain_frames(profile, s),
            ),
        });
    }
    if cfg.collect_timeline {
        let length = window.end.since(window.start);
        let t = timeline::timeline(&w, window.start, length, &*is_target);
        out.timeline = Some(Box::new(t));
    }
    Some(out)
}

/// The pick of `method` over a window (with its samples grouped by `collapsed` stacks
/// when recursion was collapsed).
fn pick_in(
    w: &window::Weighted<'_>,
    collapsed: Option<&recursion::Collapsed>,
    method: Method,
) -> Option<Pick> {
    match (method, collapsed) {
        (Method::LargestStack, Some(c)) => c.largest(w),
        (Method::LargestStack, None) => w.largest_stack(),
        (Method::HeaviestPath, Some(c)) => c.heaviest(w),
        (Method::HeaviestPath, None) => heaviest::heaviest_path(w),
    }
}

/// The chain and status `base`'s task would get over `window` instead (steps 1 to 6 and
/// the status rules, before `--on-low-confidence`), to tell whether moving an edge of its
/// window changes the answer.
fn answer_over(
    base: &TaskChain,
    profiles: &ProfileSet,
    window: &Window,
    file: Option<&[u8]>,
    cfg: &ChainConfig,
) -> (Vec<ChainFrame>, ChainStatus) {
    let Some((profile, samples, _)) = pick_profile(profiles, &base.task, window, file).0 else {
        return (Vec::new(), ChainStatus::NoSamples);
    };
    answer_in(base, profile, &samples.table, window, file, cfg)
}

/// True when `table` holds a sample before `window` and one at or after its end: its rows
/// in the window, and the weight of the last of them, are those a read of the window gives.
fn reaches_past(table: &crate::profile::tables::SampleTable, window: &Window) -> bool {
    table.ts.first().is_some_and(|&t| t < window.start)
        && table.ts.last().is_some_and(|&t| t >= window.end)
}

/// [`answer_over`] from rows already read (`table`, sorted, reaching past `window`).
fn answer_in(
    base: &TaskChain,
    profile: &CpuProfile,
    table: &crate::profile::tables::SampleTable,
    window: &Window,
    file: Option<&[u8]>,
    cfg: &ChainConfig,
) -> (Vec<ChainFrame>, ChainStatus) {
    let rows = table.range(window.start, window.end);
    if rows.is_empty() {
        return (Vec::new(), ChainStatus::NoSamples);
    }
    let w = window::Weighted::new(profile, table, rows, window, file);
    let collapsed = recursion::Collapsed::of_window(&w, cfg.collapse);
    let pick = pick_in(&w, collapsed.as_ref(), cfg.method);
    // A fresh row, not a clone of `base`: `apply` sets all it reads back.
    let mut alt = TaskChain::empty(&base.task);
    apply(&mut alt, profile, pick.as_ref(), cfg.min_confidence);
    if w.len() < cfg.min_samples {
        alt.status = ChainStatus::LowConfidence;
    }
    (alt.chain, alt.status)
}

/// Which of the window's stacks `pick` counted: its stack (or collapsed node), and with
/// `subtree` every stack under it.
fn target_filter<'w>(
    w: &'w window::Weighted<'_>,
    collapsed: Option<&'w recursion::Collapsed>,
    pick: &'w Pick,
) -> Box<dyn Fn(StackIndex) -> bool + 'w> {
    let stacks = &w.profile.stacks;
    match (&pick.target, collapsed) {
        (Target::Collapsed(_, node), Some(c)) => Box::new(move |s| c.holds(s, *node, pick.subtree)),
        (Target::Stack(s), _) if !pick.subtree => {
            let s = *s;
            Box::new(move |r| r == s)
        }
        (Target::Stack(s), _) => {
            // A stack is under `s` when `s` is among its callers, which have smaller
            // indices than the stacks they call: the walk up stops below `s`.
            let s = *s;
            Box::new(move |r| {
                let mut cur = Some(r);
                while let Some(c) = cur
                    && c >= s
                {
                    if c == s {
                        return true;
                    }
                    cur = stacks.parent(c);
                }
                false
            })
        }
        (Target::Collapsed(..), None) => Box::new(|_| false),
    }
}

/// Times of the candidates `is_target` counts (`samples` of them), in time order.
fn target_times(
    w: &window::Weighted<'_>,
    is_target: &dyn Fn(StackIndex) -> bool,
    samples: usize,
) -> Vec<Timestamp> {
    let ts = w.ts();
    // Sized once: the pick counted its samples (growing the vector page by page cost
    // more than resolving the chain on traces with thousands of long tasks).
    let mut out = Vec::with_capacity(samples);
    // Run by run: a run's samples share a stack, so they are all targets or none.
    for run in w.runs().iter().filter(|r| is_target(r.stack)) {
        out.extend_from_slice(&ts[run.start..run.end]);
    }
    out
}

/// What a pick names: a stack of the profile, or a path of collapsed frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// An exact stack.
    Stack(StackIndex),
    /// Frames root → leaf, each with the calls merged into it, and the collapsed node.
    Collapsed(Vec<(FrameIndex, u32)>, u32),
}

/// A chosen stack with its sample count and time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pick {
    /// The target stack.
    pub target: Target,
    /// Samples counted for it.
    pub samples: usize,
    /// Their time in the window.
    pub time: TimeDelta,
    /// Another group has as many samples (the tie went to the earliest).
    pub tied: bool,
    /// The samples counted are the target stack's whole subtree (heaviest path).
    pub subtree: bool,
}

/// Fills the row from a pick and sets its status: `low_confidence` below
/// `min_confidence` (or with nothing picked, or an empty chain), else `non_js` for a VM-state leaf (the task
/// was mostly native work), else `ok`. Confidence is compared as reported (3 decimals), so
/// a row shown as 0.950 is never below a minimum of 0.95.
fn apply(out: &mut TaskChain, profile: &CpuProfile, pick: Option<&Pick>, min_confidence: f64) {
    let dur = out.task.dur;
    let Some(pick) = pick else {
        out.target_samples = 0;
        out.stack_time = TimeDelta::ZERO;
        out.confidence = 0.0;
        out.chain.clear();
        out.status = ChainStatus::LowConfidence;
        return;
    };
    out.target_samples = pick.samples;
    out.stack_time = pick.time;
    out.confidence = if dur.as_nanos() > 0 {
        (pick.time.as_nanos() as f64 / dur.as_nanos() as f64).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let leaf = match &pick.target {
        Target::Stack(s) => {
            out.chain = chain_frames(profile, *s);
            profile.stacks.frame(*s)
        }
        Target::Collapsed(path, _) => {
            out.chain = recursion::collapsed_frames(profile, path);
            path.last().expect("a collapsed path has a frame").0
        }
    };
    let leaf_kind = profile.frames.kind(leaf);
    // A row is never `ok` without a chain: a target stack of `(root)` alone names nothing.
    out.status = if round_confidence(out.confidence) < min_confidence || out.chain.is_empty() {
        ChainStatus::LowConfidence
    } else if leaf_kind.is_vm_state() {
        ChainStatus::NonJs
    } else {
        ChainStatus::Ok
    };
}

/// Confidence as reported: rounded half away from zero to 3 decimals (0.8125 → 0.813).
pub fn round_confidence(c: f64) -> f64 {
    (c * 1000.0).round() / 1000.0
}

/// The window's samples by stack: (folded path, samples, time), in stack order.
fn folded_stacks(w: &window::Weighted<'_>) -> Vec<(String, u32, TimeDelta)> {
    let mut by_stack: Vec<(u32, TimeDelta)> = vec![(0, TimeDelta::ZERO); w.profile.stacks.len()];
    for run in w.runs() {
        let e = &mut by_stack[run.stack.index()];
        e.0 += run.len() as u32;
        e.1 = e.1 + w.run_weight(run);
    }
    by_stack
        .into_iter()
        .enumerate()
        .filter(|(_, (n, _))| *n > 0)
        .map(|(s, (n, t))| {
            // `;` separates frames and a line is one stack: neither may appear in a frame.
            let path = chain_frames(w.profile, StackIndex::new(s))
                .iter()
                .map(|f| f.text().replace(';', ",").replace(['\n', '\r'], " "))
                .collect::<Vec<_>>()
                .join(";");
            (path, n, t)
        })
        .collect()
}

/// The window's samples by their leaf frame's URL (see [`TaskChain::leaf_urls`]).
fn leaf_urls(w: &window::Weighted<'_>) -> Vec<(String, u32)> {
    // (leaf frame, samples) run by run of equal stacks: samples mostly repeat their
    // neighbour's stack, so this is a few entries where one per sample was sorted.
    let mut frames: Vec<(u32, u32)> = w
        .stack_runs()
        .map(|(stack, run)| {
            let frame = w.profile.stacks.frame(stack).index() as u32;
            (frame, run.len() as u32)
        })
        .collect();
    frames.sort_unstable_by_key(|&(frame, _)| frame);
    let mut by_url: crate::vocab::FastMap<&str, u32> = Default::default();
    for run in frames.chunk_by(|a, b| a.0 == b.0) {
        let url = w
            .profile
            .frames
            .get(FrameIndex::new(run[0].0 as usize))
            .url
            .as_ref();
        *by_url.entry(url).or_default() += run.iter().map(|&(_, n)| n).sum::<u32>();
    }
    let mut v: Vec<(String, u32)> = by_url.into_iter().map(|(u, n)| (u.to_owned(), n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

impl ChainFrame {
    /// The function name chain texts show: the source-map original when one is shown
    /// (see [`OriginalFrame::in_chain_text`]), else the trace's.
    pub fn shown_function(&self) -> &str {
        self.original
            .as_deref()
            .filter(|o| o.in_chain_text)
            .and_then(|o| o.function.as_deref())
            .unwrap_or(&self.function)
    }

    /// The frame as reports show it: `name (url:line:column)`; the url is left out where
    /// empty, and the parenthesis where nothing is known.
    pub fn text(&self) -> String {
        let mut s = String::new();
        self.write_text(&mut s);
        s
    }

    /// Appends [`ChainFrame::text`] to `out`: `function (url:line:column)`, or with an
    /// original shown, `originalFunction (source:line:column)` (the generated name when the
    /// original function is unknown).
    pub fn write_text(&self, out: &mut String) {
        use std::fmt::Write;
        if let Some(o) = self.original.as_deref().filter(|o| o.in_chain_text) {
            out.push_str(o.function.as_deref().unwrap_or(&self.function));
            let _ = write!(out, " ({}:{}:{})", o.source, o.line, o.column);
        } else {
            self.write_generated(out);
        }
        if self.recursion_depth > 1 {
            let _ = write!(out, " ×{}", self.recursion_depth);
        }
    }

    /// The generated part of [`ChainFrame::write_text`]: `function (url:line:column)`.
    fn write_generated(&self, out: &mut String) {
        use std::fmt::Write;
        out.push_str(&self.function);
        if !(self.url.is_empty() && self.line.is_none()) {
            out.push_str(" (");
            out.push_str(&self.url);
            if let Some(l) = self.line {
                let sep = if self.url.is_empty() { "" } else { ":" };
                let _ = write!(out, "{sep}{l}");
                if let Some(c) = self.column {
                    let _ = write!(out, ":{c}");
                }
            }
            out.push(')');
        }
    }
}

/// Frames of `stack` from the outermost caller to the leaf, without `(root)` (docs/METHOD.md §1 step 5).
pub(crate) fn chain_frames(profile: &CpuProfile, stack: StackIndex) -> Vec<ChainFrame> {
    let mut frames = Vec::new();
    let mut cur = Some(stack);
    while let Some(s) = cur {
        let f = profile.stacks.frame(s);
        if profile.frames.kind(f) != FrameKind::Root {
            frames.push(chain_frame(profile, f));
        }
        cur = profile.stacks.parent(s);
    }
    frames.reverse();
    frames
}

/// Frame `f` as reports show it (1-based line and column; `(anonymous)` for no name).
pub(crate) fn chain_frame(profile: &CpuProfile, f: FrameIndex) -> ChainFrame {
    let cf = profile.frames.get(f);
    let one_based = |v: i32| u32::try_from(v).ok().map(|v| v + 1);
    ChainFrame {
        function: if cf.function_name.is_empty() {
            "(anonymous)".to_string()
        } else {
            cf.function_name.to_string()
        },
        url: cf.url.to_string(),
        line: one_based(cf.line_number),
        column: one_based(cf.column_number),
        recursion_depth: 1,
        script_id: cf.script_id.to_string(),
        original: None,
    }
}

/// A profile picked for a task: the profile, the samples read for the window, and the rows
/// inside the window.
type Picked<'p> = (&'p CpuProfile, WindowSamples, std::ops::Range<usize>);

/// The profile a task takes its samples from: among the thread's profiles with samples in
/// the window, the `Internal` one, else the one with the most samples there (docs/METHOD.md §2);
/// never two, which would count samples twice. Also returns what every profile read for
/// the window left out: (samples naming no node, unreadable chunks) — so a window whose
/// samples are all unknown still says why it has none.
fn pick_profile<'p>(
    profiles: &'p ProfileSet,
    task: &LongTask,
    window: &Window,
    file: Option<&[u8]>,
) -> (Option<Picked<'p>>, (u64, u64)) {
    let mut best: Option<Picked<'p>> = None;
    let mut left_out = (0, 0);
    for p in profiles.of_thread(task.thread) {
        let samples = p.window(window.start, window.end, file);
        left_out.0 += samples.unknown;
        left_out.1 += samples.unreadable;
        let r = samples.table.range(window.start, window.end);
        if r.is_empty() {
            continue;
        }
        let better = match &best {
            None => true,
            Some((b, _, br)) => (p.is_internal(), r.len()) > (b.is_internal(), br.len()),
        };
        if better {
            best = Some((p, samples, r));
        }
    }
    (best, left_out)
}

#[cfg(test)]
mod tests;

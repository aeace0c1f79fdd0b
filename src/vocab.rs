//! The shared vocabulary of every stage: the ids of processes, threads, profiles and
//! nodes, a call frame, the counts of odd input ([`Diagnostics`]) and the hash map of the
//! hot paths. It imports nothing of the crate, so every stage can use it without an
//! import pointing up.

use std::collections::BTreeMap;
use std::fmt;

/// The hash map of the hot paths (per-task-event, per-chunk and per-node lookups): std's
/// map with foldhash, a fast hasher (randomly seeded per process), instead of SipHash.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A process id (`pid`). Strings in hand-made traces are hashed (see `json::integer`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pid(pub i64);

/// A thread id (`tid`). Only unique inside its process: key threads by [`ThreadKey`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tid(pub i64);

/// A thread: (`pid`, `tid`). Small macOS tids repeat across processes, so both are needed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ThreadKey {
    /// Process.
    pub pid: Pid,
    /// Thread within it.
    pub tid: Tid,
}

impl fmt::Display for Pid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
impl fmt::Display for Tid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A profile's `id` as text (`"0x1"` from Chrome, a number from some other producers).
/// Unique only inside one process: key profiles by (pid, id).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProfileId(pub String);

/// A profile's key: (pid, `id`), since ids repeat across processes.
pub(crate) type ProfileKey = (Pid, ProfileId);

/// A node `id` from `cpuProfile.nodes` (sparse, foreign; never an index into our tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub i64);

/// A `callFrame` of a profile node, as in the trace: line and column **0-based**, `-1`
/// when the trace leaves them out (V8 omits them; CDP writes -1). The texts are shared
/// (`Arc<str>`): a profile's nodes name a few scripts and functions many times over, and a
/// stream keeps every chunk's nodes until its scan ends.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CallFrame {
    /// `functionName`; empty for an anonymous function.
    pub function_name: std::sync::Arc<str>,
    /// `url`; empty when none.
    pub url: std::sync::Arc<str>,
    /// `scriptId` as text (an integer in traces, a string in `.cpuprofile`s).
    pub script_id: std::sync::Arc<str>,
    /// `lineNumber`, 0-based, -1 unknown.
    pub line_number: i32,
    /// `columnNumber`, 0-based, -1 unknown.
    pub column_number: i32,
}

/// The node that stands for samples without a JS stack (ProfilerTrace samples without
/// `stackId`): a VM state, so a task made of them is `non_js`.
pub(crate) const NO_STACK: &str = "(no stack)";

/// Counts of odd but usable input, by kind. Each kind is reported once per file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics {
    counts: BTreeMap<&'static str, u64>,
    notes: Vec<String>,
}

impl Diagnostics {
    /// Adds `n` occurrences of `kind` (a short sentence, e.g. "samples naming unknown nodes").
    pub fn add(&mut self, kind: &'static str, n: u64) {
        if n > 0 {
            *self.counts.entry(kind).or_default() += n;
        }
    }
    /// Adds a one-off note with details (a gzip error and its position).
    pub fn note(&mut self, text: String) {
        self.notes.push(text);
    }
    /// The count of `kind` (0 when none was added).
    pub fn count(&self, kind: &str) -> u64 {
        self.counts.get(kind).copied().unwrap_or(0)
    }
    /// Removes `kind` and returns its count (0 when none was added): for a count that a
    /// later stage says better in a note of its own.
    pub fn take(&mut self, kind: &str) -> u64 {
        self.counts.remove(kind).unwrap_or(0)
    }
    /// The notes, in the order added.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
    /// Adds the counts and notes of `other`.
    pub fn merge(&mut self, other: &Diagnostics) {
        for (k, v) in &other.counts {
            self.add(k, *v);
        }
        self.notes.extend(other.notes.iter().cloned());
    }
    /// (kind, count) pairs in a fixed order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.counts.iter().map(|(k, v)| (*k, *v))
    }
    /// Number of warning lines: distinct kinds plus notes.
    pub fn kinds(&self) -> usize {
        self.counts.len() + self.notes.len()
    }
}

/// What a file's analysis is done with but has not freed: its profiles, task lists and
/// scan records. The caller drops it once the report is handed on, so that freeing a large
/// trace's data (for a 1 GB trace, ~10⁶ chunks and every profile's strings: tens of ms)
/// runs beside writing the report instead of before it.
#[derive(Default)]
pub(crate) struct DeferredDrop(Vec<Box<dyn Send>>);

impl DeferredDrop {
    /// Keeps `v` until the deferred drop is dropped.
    pub(crate) fn keep<T: Send + 'static>(&mut self, v: T) {
        self.0.push(Box::new(v));
    }

    /// Drops what was kept, the parts side by side on the current rayon pool (unmapping a
    /// 1 GB file and freeing its profiles take ~30 ms each).
    #[cfg(feature = "cli")]
    pub(crate) fn drop_in_parallel(self) {
        use rayon::prelude::*;
        self.0.into_par_iter().for_each(drop);
    }
}

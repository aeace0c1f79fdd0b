//! Enrichment: after chain resolution, before the reports, what a chain's frames mean
//! beyond their names and positions. Runs once per file on what the file's reading
//! produced ([`FileContext`]: the page's URL, …) and adds [`TaskNotes`] to each row.
//!
//! Stages run in a fixed order inside [`FileEnricher::task`]: symbolication (source maps)
//! first, then parties, which go by the generated script's URL (the host that served it),
//! not the original source's. Every field a stage adds is optional: `None` when unknown or
//! when the stage is off, so readers of the notes never depend on a stage having run.

pub mod symbolicate;

use std::sync::Arc;

use crate::chain::TaskChain;
use crate::scan::records::{EmbeddedMap, PageUrl, ScriptRecord};
use crate::time::Timestamp;
use crate::vocab::Pid;

/// What a file's reading says about the recording beyond its tasks and profiles.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileContext {
    /// The main frame's URLs in `ts` order: a trace's navigations
    /// ([`PageUrl`]), or a field bundle's `page` at its time origin. Empty when the file
    /// does not say (a `.cpuprofile`, an old trace).
    pub pages: Vec<PageUrl>,
    /// Scripts with a source map URL (V8 source-rundown events), in file order.
    pub scripts: Vec<ScriptRecord>,
    /// Maps embedded in the trace (`metadata.sourceMaps`).
    pub embedded_maps: Vec<EmbeddedMap>,
}

impl FileContext {
    /// The page's URL when a task of renderer `pid` started at `ts`: the last main-frame
    /// URL at or before `ts` shown by that renderer (or by an unnamed one), else by any
    /// renderer, else the first URL after `ts` (tracing may start before the commit is
    /// recorded). `None` when the file names no page.
    pub fn page_at(&self, pid: Pid, ts: Timestamp) -> Option<&str> {
        let before = |same_pid: bool| {
            self.pages
                .iter()
                .rev()
                .filter(|p| p.ts <= ts)
                .find(|p| !same_pid || p.pid.is_none_or(|q| q == pid))
        };
        before(true)
            .or_else(|| before(false))
            .or_else(|| self.pages.first())
            .map(|p| p.url.as_str())
    }
}

/// The enrichment settings of a run, resolved before any file is read (cheap to clone:
/// loaded data is shared).
#[derive(Clone, Debug, Default)]
pub struct Enrichment {
    /// Source maps (`--source-maps`, `--chain-names`) and the maps decoded this run, shared
    /// by the batch's files. Maps embedded in a trace are used without options.
    pub symbolicator: Arc<symbolicate::Symbolicator>,
}

/// What enrichment adds to one frame of a chain; each field `None` when unknown.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameNotes {}

/// What enrichment adds to one long task.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskNotes {
    /// The page's URL when the task ran ([`FileContext::page_at`]).
    pub page_url: Option<String>,
    /// One entry per frame of the chain, root → leaf (empty when no stage ran).
    pub frames: Vec<FrameNotes>,
}

/// One file's enrichment: the run's settings with the file's context.
pub struct FileEnricher<'a> {
    settings: &'a Enrichment,
    context: &'a FileContext,
}

impl<'a> FileEnricher<'a> {
    /// Enrichment of the file whose reading gave `context`.
    pub fn new(settings: &'a Enrichment, context: &'a FileContext) -> Self {
        FileEnricher { settings, context }
    }

    /// The first stage, symbolication, for this file's tasks: it rewrites their frames
    /// (originals) and folded stacks in place, before the notes of [`FileEnricher::task`].
    pub fn symbolication(&self) -> symbolicate::FileSymbolication<'a> {
        self.settings
            .symbolicator
            .file(&self.context.scripts, &self.context.embedded_maps)
    }

    /// The notes of one resolved task.
    pub fn task(&self, chain: &TaskChain) -> TaskNotes {
        TaskNotes {
            page_url: self
                .context
                .page_at(chain.task.thread.pid, chain.task.ts)
                .map(str::to_owned),
            frames: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(ts_us: i64, pid: Option<i64>, url: &str) -> PageUrl {
        PageUrl {
            ts: Timestamp::from_micros(ts_us),
            pid: pid.map(Pid),
            url: url.into(),
        }
    }

    #[test]
    fn page_at_takes_the_last_commit_before_the_task_on_its_renderer() {
        let ctx = FileContext {
            scripts: Vec::new(),
            embedded_maps: Vec::new(),
            pages: vec![
                page(10, Some(1), "https://a.test/"),
                page(20, Some(2), "https://b.test/"),
                page(30, Some(1), "https://a.test/next"),
            ],
        };
        let at = |pid, ts| ctx.page_at(Pid(pid), Timestamp::from_micros(ts));
        assert_eq!(at(1, 5), Some("https://a.test/")); // before any: the first
        assert_eq!(at(1, 25), Some("https://a.test/")); // renderer 2's commit is not ours
        assert_eq!(at(2, 25), Some("https://b.test/"));
        assert_eq!(at(1, 30), Some("https://a.test/next"));
        assert_eq!(at(3, 25), Some("https://b.test/")); // unknown renderer: any
        assert_eq!(
            FileContext::default().page_at(Pid(1), Timestamp::from_micros(1)),
            None
        );
    }
}

//! Enrichment: after chain resolution, before the reports, what a chain's frames mean
//! beyond their names and positions. Runs once per file on what the file's reading
//! produced (`FileContext`: the page's URL, …) and adds [`TaskNotes`] to each row.
//!
//! Stages run in a fixed order inside `FileEnricher::task`: symbolication (source maps)
//! first, then parties, which go by the generated script's URL (the host that served it),
//! not the original source's. Every field a stage adds is optional: `None` when unknown or
//! when the stage is off, so readers of the notes never depend on a stage having run.

pub mod party;
pub mod symbolicate;

use std::sync::Arc;

use crate::chain::TaskChain;
use crate::scan::records::{EmbeddedMap, PageUrl, ScriptRecord};
use crate::time::Timestamp;
use crate::vocab::Pid;

/// What a file's reading says about the recording beyond its tasks and profiles.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FileContext {
    /// The main frame's URLs in `ts` order: a trace's navigations
    /// (`PageUrl`s), or a field bundle's `page` at its time origin. Empty when the file
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
    pub(crate) fn page_at(&self, pid: Pid, ts: Timestamp) -> Option<&str> {
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
#[derive(Clone, Debug)]
pub struct Enrichment {
    /// Source maps (`--source-maps`, `--chain-names`) and the maps decoded this run, shared
    /// by the batch's files. Maps embedded in a trace are used without options.
    pub symbolicator: Arc<symbolicate::Symbolicator>,
    /// Parties (on by default: the dataset is bundled; `--party-overrides`); `None`
    /// leaves them out.
    pub parties: Option<Arc<party::Parties>>,
}

impl Default for Enrichment {
    fn default() -> Self {
        Enrichment {
            symbolicator: Default::default(),
            parties: Some(Arc::new(party::Parties::new())),
        }
    }
}

impl Enrichment {
    /// The files enrichment reads (`--party-overrides`) and the folders it reads from
    /// (`--source-maps`): inputs, which no output may overwrite.
    pub fn read_paths(&self) -> (Vec<std::path::PathBuf>, Vec<std::path::PathBuf>) {
        let files = self
            .parties
            .as_ref()
            .and_then(|p| p.file.clone())
            .into_iter()
            .collect();
        let folders = self
            .symbolicator
            .folders()
            .into_iter()
            .map(std::path::Path::to_path_buf)
            .collect();
        (files, folders)
    }

    /// What chain resolution must collect for these stages (the parties' sample shares
    /// need the window's leaf URLs).
    pub fn chain_config(&self, mut c: crate::chain::ChainConfig) -> crate::chain::ChainConfig {
        c.collect_leaf_urls |= self.parties.is_some();
        c
    }
}

/// What enrichment adds to one frame of a chain; each field `None` when unknown.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameNotes {
    /// Who owns the frame's script (`None`: no script URL, no host in it, or parties off).
    pub party: Option<party::FrameParty>,
}

/// What enrichment adds to one long task.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskNotes {
    /// The page's URL when the task ran (`FileContext::page_at`).
    pub page_url: Option<String>,
    /// One entry per frame of the chain, root → leaf (empty when no stage ran).
    pub frames: Vec<FrameNotes>,
    /// Who owns the task (`None` when parties are off).
    pub parties: Option<party::TaskParties>,
}

impl TaskNotes {
    /// The notes of frame `i` of the chain (`None` when none were made).
    pub fn frame(&self, i: usize) -> Option<&FrameNotes> {
        self.frames.get(i)
    }
}

/// One file's enrichment: the run's settings with the file's context.
pub(crate) struct FileEnricher<'a> {
    settings: &'a Enrichment,
    context: &'a FileContext,
    parties: Option<party::FileParties<'a>>,
}

impl<'a> FileEnricher<'a> {
    /// Enrichment of the file whose reading gave `context`.
    pub(crate) fn new(settings: &'a Enrichment, context: &'a FileContext) -> Self {
        FileEnricher {
            settings,
            context,
            parties: settings.parties.as_deref().map(party::FileParties::new),
        }
    }

    /// The first stage, symbolication, for this file's tasks: it rewrites their frames
    /// (originals) and folded stacks in place, before the notes of [`FileEnricher::task`].
    pub(crate) fn symbolication(&self) -> symbolicate::FileSymbolication<'a> {
        self.settings
            .symbolicator
            .file(&self.context.scripts, &self.context.embedded_maps)
    }

    /// The notes of one resolved task, after [`FileEnricher::symbolication`]: parties, by
    /// the generated script's URL (the host that served it).
    pub(crate) fn task(&self, chain: &TaskChain) -> TaskNotes {
        let page_url = self
            .context
            .page_at(chain.task.thread.pid, chain.task.ts)
            .map(str::to_owned);
        let mut notes = TaskNotes {
            page_url,
            frames: Vec::new(),
            parties: None,
        };
        if let Some(fp) = &self.parties {
            notes
                .frames
                .resize(chain.chain.len(), FrameNotes::default());
            notes.parties = Some(task_parties(
                fp,
                chain,
                &mut notes.frames,
                notes.page_url.as_deref(),
            ));
        }
        notes
    }
}

/// Each frame's party (into `frames`) and the task's: leaf, entry and sample shares.
fn task_parties(
    fp: &party::FileParties<'_>,
    chain: &TaskChain,
    frames: &mut [FrameNotes],
    page_url: Option<&str>,
) -> party::TaskParties {
    let site = page_url.and_then(|u| fp.site_of(u));
    let site = site.as_deref();
    for (f, n) in chain.chain.iter().zip(frames.iter_mut()) {
        n.party = fp.of_url(&f.url, site);
    }
    let mut shares: Vec<party::Share> = Vec::new();
    for (url, n) in &chain.leaf_urls {
        let p = fp.of_url(url, site);
        let group = p
            .as_ref()
            .map_or_else(|| party::NO_SCRIPT_URL.to_owned(), |p| p.group());
        match shares.iter_mut().find(|s| s.group == group) {
            Some(s) => s.samples += n,
            None => shares.push(party::Share {
                group,
                vendor: p.and_then(|p| p.vendor),
                samples: *n,
            }),
        }
    }
    shares.sort_by(|a, b| {
        b.samples
            .cmp(&a.samples)
            .then_with(|| a.group.cmp(&b.group))
    });
    party::TaskParties {
        task: frames.last().and_then(|n| n.party.clone()),
        entry: frames.iter().find_map(|n| n.party.clone()),
        shares,
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

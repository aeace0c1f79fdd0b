//! Symbolication: each chain frame's original function name, source, line and column, from
//! source maps found offline (see docs/SOURCE-MAPS.md).
//!
//! Where a script's map comes from, first match wins: a map embedded in the trace
//! (`metadata.sourceMaps`, DevTools' "Include script content and source maps"); a `data:`
//! URL as the script's map URL; `--source-maps PREFIX=DIR` (a local mirror of a server:
//! the map URL the trace gives for the script — `ScriptCatchup` / `ScriptCompiled`
//! source-rundown events joined by (pid, `scriptId`) — resolved against the script URL,
//! else the script file's `//# sourceMappingURL=` comment, else `<script>.map` beside it);
//! `--source-maps DIR` (a folder of `.map` files, matched by file name or `file` field).
//!
//! A frame's generated position is the `(` of the function's parameter list (what V8
//! reports, 0-based in the trace); it is looked up with greatest-lower-bound on its line
//! (the source-map libraries' default). The original function is the one of the original
//! source whose head or body holds the mapped position (`names::FunctionIndex`, parsed
//! with oxc), not the map's `names` entry, which minifiers leave out or put elsewhere.

mod load;
#[doc(hidden)]
pub use load::{Probe, probe_map};
mod mappings;
mod names;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use load::{
    Loaded, LoadedMap, MapFolder, data_url_text, path_inside, read_bounded, source_mapping_url,
    without_query,
};
pub(crate) use load::{MAX_SOURCE_BYTES, MapCache};

use crate::chain::{ChainFrame, OriginalFrame, TaskChain};
use crate::scan::records::{EmbeddedMap, ScriptRecord};
use crate::time::TimeDelta;
use crate::vocab::Diagnostics;

/// Which names chain texts show (`--chain-names`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChainNames {
    /// `originalName (source:line:column)` for frames with an original.
    #[default]
    Original,
    /// The trace's own (minified) names and positions.
    Generated,
}

/// One `--source-maps` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapSource {
    /// `PREFIX=DIR`: script URLs starting with `prefix` are files under `dir` (canonical).
    Mirror {
        /// URL prefix, such as `https://example.com/static/`.
        prefix: String,
        /// The local folder.
        dir: PathBuf,
    },
    /// `DIR`: a folder of `.map` files, searched recursively (canonical).
    Folder(PathBuf),
}

impl MapSource {
    /// Reads `PREFIX=DIR` or `DIR` (split at the first `=`); the folder must exist.
    pub fn parse(s: &str) -> Result<MapSource, String> {
        let (prefix, dir) = match s.split_once('=') {
            Some((p, d)) if !p.is_empty() => (Some(p), d),
            _ => (None, s),
        };
        let canon = Path::new(dir)
            .canonicalize()
            .map_err(|e| format!("--source-maps {s}: {dir} cannot be read ({e})"))?;
        if !canon.is_dir() {
            return Err(format!("--source-maps {s}: {dir} is not a folder"));
        }
        Ok(match prefix {
            Some(p) => MapSource::Mirror {
                prefix: p.to_string(),
                dir: canon,
            },
            None => MapSource::Folder(canon),
        })
    }
}

/// The symbolicator of a run: where maps come from and the maps decoded so far, shared by
/// every trace of a batch (each map is decoded once).
#[derive(Debug, Default)]
pub struct Symbolicator {
    mirrors: Vec<(String, PathBuf)>,
    folders: Vec<MapFolder>,
    /// Which names chain texts show.
    pub chain_names: ChainNames,
    cache: MapCache,
    /// A local script's `sourceMappingURL` comment, by (path, size, modification time):
    /// read once per run, not once per trace.
    comments: std::sync::Mutex<HashMap<ScriptFileKey, Option<String>>>,
}

type ScriptFileKey = (PathBuf, u64, Option<std::time::SystemTime>);

impl Symbolicator {
    /// A symbolicator over `sources` (in the order given: first match wins).
    pub fn new(sources: Vec<MapSource>, chain_names: ChainNames) -> Symbolicator {
        let mut s = Symbolicator {
            chain_names,
            ..Symbolicator::default()
        };
        for src in sources {
            match src {
                MapSource::Mirror { prefix, dir } => s.mirrors.push((prefix, dir)),
                MapSource::Folder(dir) => s.folders.push(MapFolder::new(dir)),
            }
        }
        s
    }

    /// The folders maps, scripts and original sources are read from (`--source-maps`):
    /// no output may be written inside them.
    pub fn folders(&self) -> Vec<&Path> {
        self.mirrors
            .iter()
            .map(|(_, d)| d.as_path())
            .chain(self.folders.iter().map(|f| f.root.as_path()))
            .collect()
    }

    /// The `sourceMappingURL` comment of the local script at `path` (none when it cannot
    /// be read or is over [`MAX_SOURCE_BYTES`]).
    fn script_comment(&self, path: &Path) -> Option<String> {
        let meta = std::fs::metadata(path).ok()?;
        let key = (path.to_path_buf(), meta.len(), meta.modified().ok());
        let mut comments = self.comments.lock().unwrap_or_else(|e| e.into_inner());
        comments
            .entry(key)
            .or_insert_with(|| {
                read_bounded(path, MAX_SOURCE_BYTES)
                    .ok()
                    .and_then(|b| source_mapping_url(&b))
            })
            .clone()
    }

    /// Maps decoded so far this run (each distinct map file or inline map counts once,
    /// also when it could not be decoded).
    pub fn maps_decoded(&self) -> u64 {
        self.cache.decoded()
    }

    /// Symbolication of one file's tasks, given what the trace says of its scripts.
    pub fn file<'a>(
        &'a self,
        scripts: &'a [ScriptRecord],
        embedded: &'a [EmbeddedMap],
    ) -> FileSymbolication<'a> {
        let off = self.mirrors.is_empty()
            && self.folders.is_empty()
            && embedded.is_empty()
            && !scripts
                .iter()
                .any(|s| s.source_map_url.starts_with("data:"));
        FileSymbolication {
            maps: (!off).then(|| FileMaps::new(self, scripts, embedded)),
        }
    }
}

/// Frames of a task: how many have a script position, and how many got an original; both
/// 0 when no map can apply to the file (no `--source-maps`, nothing embedded), so that a
/// share of symbolicated frames is said only where maps were given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Frames with a script URL and line (0 when no map can apply).
    pub frames: u32,
    /// Of those, frames a map gave an original position.
    pub symbolicated: u32,
}

/// One file's symbolication (see [`Symbolicator::file`]).
pub struct FileSymbolication<'a> {
    /// `None` when no map can apply (no options, nothing embedded, no `data:` URL).
    maps: Option<FileMaps<'a>>,
}

impl FileSymbolication<'_> {
    /// Fills `original` in every frame of `c`'s chain that a map covers and rewrites its
    /// folded stacks with the originals (stacks that become one are merged).
    pub fn task(&mut self, c: &mut TaskChain) -> Counts {
        let mut n = Counts::default();
        let pid = c.task.thread.pid.0;
        for f in c
            .chain
            .iter_mut()
            .filter(|f| !f.url.is_empty() && f.line.is_some())
        {
            n.frames += u32::from(self.maps.is_some());
            if let Some(maps) = &mut self.maps
                && let Some(o) = maps.original(pid, &f.script_id, &f.url, f.line, f.column)
            {
                n.symbolicated += 1;
                f.original = Some(Box::new(o));
            }
        }
        // The runner-ups' and the timeline's frames get their originals too (not
        // counted: the counts are the chain's).
        if let Some(maps) = &mut self.maps {
            let alternatives = c
                .alternatives
                .iter_mut()
                .flatten()
                .flat_map(|a| &mut a.chain);
            let timeline = c.timeline.iter_mut().flat_map(|t| &mut t.frames);
            for f in alternatives
                .chain(timeline)
                .filter(|f| !f.url.is_empty() && f.line.is_some())
            {
                if let Some(o) = maps.original(pid, &f.script_id, &f.url, f.line, f.column) {
                    f.original = Some(Box::new(o));
                }
            }
        }
        if let Some(maps) = &mut self.maps
            && !c.stacks.is_empty()
        {
            let mut merged: BTreeMap<String, (u32, TimeDelta)> = BTreeMap::new();
            for (path, k, t) in std::mem::take(&mut c.stacks) {
                let new_path = path
                    .split(';')
                    .map(|frame| maps.folded_frame(pid, frame))
                    .collect::<Vec<_>>()
                    .join(";");
                let e = merged.entry(new_path).or_default();
                e.0 += k;
                e.1 = e.1 + t;
            }
            c.stacks = merged.into_iter().map(|(p, (k, t))| (p, k, t)).collect();
        }
        n
    }

    /// Ends the file: one warning per map that was missing or could not be used.
    pub fn finish(self) -> Diagnostics {
        let mut d = Diagnostics::default();
        for w in self.maps.map(|m| m.warnings).unwrap_or_default() {
            d.note(w);
        }
        d
    }
}

/// One trace's view of the maps: its scripts, and the maps found for them.
struct FileMaps<'s> {
    sym: &'s Symbolicator,
    scripts: HashMap<(i64, &'s str), &'s ScriptRecord>,
    by_url: HashMap<&'s str, &'s ScriptRecord>,
    /// (pid, url) → the first script of that URL in the process (folded stacks keep no
    /// script ids).
    by_pid_url: HashMap<(i64, &'s str), &'s ScriptRecord>,
    /// Folded frame texts already rewritten, by (pid, text).
    folded: HashMap<(i64, String), String>,
    embedded: HashMap<&'s str, &'s EmbeddedMap>,
    /// (pid, scriptId, url) → its map.
    found: HashMap<(i64, String, String), Option<Arc<LoadedMap>>>,
    /// Maps given inline (embedded, `data:` URLs), by a hash of their text and its length:
    /// this file's own, let go when it is done.
    inline: std::cell::RefCell<HashMap<(u64, usize), Loaded>>,
    warned: BTreeSet<String>,
    warnings: Vec<String>,
}

impl<'s> FileMaps<'s> {
    fn new(
        sym: &'s Symbolicator,
        records: &'s [ScriptRecord],
        embedded: &'s [EmbeddedMap],
    ) -> Self {
        let mut scripts = HashMap::new();
        let mut by_url = HashMap::new();
        let mut by_pid_url = HashMap::new();
        for s in records {
            scripts.entry((s.pid.0, s.script_id.as_str())).or_insert(s);
            if !s.url.is_empty() {
                by_url.entry(s.url.as_str()).or_insert(s);
                by_pid_url.entry((s.pid.0, s.url.as_str())).or_insert(s);
            }
        }
        FileMaps {
            sym,
            scripts,
            by_url,
            by_pid_url,
            folded: HashMap::new(),
            embedded: embedded.iter().map(|e| (e.url.as_str(), e)).collect(),
            found: HashMap::new(),
            inline: Default::default(),
            warned: BTreeSet::new(),
            warnings: Vec::new(),
        }
    }

    /// The original of a frame at 1-based `line`/`column` of `url`.
    fn original(
        &mut self,
        pid: i64,
        script_id: &str,
        url: &str,
        line: Option<u32>,
        column: Option<u32>,
    ) -> Option<OriginalFrame> {
        let (line, column) = (line?.checked_sub(1)?, column.unwrap_or(1).checked_sub(1)?);
        let key = (pid, script_id.to_string(), url.to_string());
        let map = match self.found.get(&key) {
            Some(m) => m.clone(),
            None => {
                let m = self.find(pid, script_id, url);
                self.found.insert(key, m.clone());
                m
            }
        }?;
        let (mut o, failure) = lookup(&map, line, column)?;
        if let Some(why) = failure {
            self.warn(format!(
                "original source {} {why}; its frames keep no original function name",
                o.source
            ));
        }
        o.in_chain_text = self.sym.chain_names == ChainNames::Original;
        Some(o)
    }

    /// A folded-stack frame (`function (url:line:column)`) with its original.
    fn folded_frame(&mut self, pid: i64, text: &str) -> String {
        let key = (pid, text.to_string());
        if let Some(done) = self.folded.get(&key) {
            return done.clone();
        }
        let done = self.rewrite_folded_frame(pid, text);
        self.folded.insert(key, done.clone());
        done
    }

    fn rewrite_folded_frame(&mut self, pid: i64, text: &str) -> String {
        // A frame merged by --collapse-recursion ends in ` ×N`.
        let (text_only, depth) = match text.rsplit_once(" ×") {
            Some((t, n)) if n.parse::<u32>().is_ok() => (t, n.parse().unwrap_or(1)),
            _ => (text, 1),
        };
        let parsed = (|| {
            let inner = text_only.strip_suffix(')')?;
            let at = inner.rfind(" (")?;
            let (function, loc) = (&inner[..at], &inner[at + 2..]);
            let mut parts = loc.rsplitn(3, ':');
            let column: u32 = parts.next()?.parse().ok()?;
            let line: u32 = parts.next()?.parse().ok()?;
            let url = parts.next()?;
            Some((function, url, line, column))
        })();
        let Some((function, url, line, column)) = parsed else {
            return text.to_string();
        };
        // Folded stacks keep no script ids: the trace's script of that URL in the process.
        let script_id = self
            .by_pid_url
            .get(&(pid, url))
            .map_or(String::new(), |s| s.script_id.clone());
        match self.original(pid, &script_id, url, Some(line), Some(column)) {
            Some(o) => {
                let f = ChainFrame {
                    function: function.to_string(),
                    url: url.to_string(),
                    line: Some(line),
                    column: Some(column),
                    recursion_depth: depth,
                    script_id,
                    original: Some(Box::new(o)),
                };
                f.text().replace(';', ",")
            }
            None => text.to_string(),
        }
    }

    /// The map of a script, first match wins; a map that cannot be used adds a warning.
    fn find(&mut self, pid: i64, script_id: &str, url: &str) -> Option<Arc<LoadedMap>> {
        match self.resolve(pid, script_id, url) {
            Ok(m) => m,
            Err((what, why)) => {
                self.warn(format!(
                    "source map {what} {why}; its frames keep their generated names"
                ));
                None
            }
        }
    }

    /// Adds `warning` once per file.
    fn warn(&mut self, warning: String) {
        if self.warned.insert(warning.clone()) {
            self.warnings.push(warning);
        }
    }

    fn resolve(
        &self,
        pid: i64,
        script_id: &str,
        url: &str,
    ) -> Result<Option<Arc<LoadedMap>>, (String, String)> {
        let cache = &self.sym.cache;
        let record = self
            .scripts
            .get(&(pid, script_id))
            .filter(|r| r.url.is_empty() || r.url == url)
            .or_else(|| self.by_url.get(url).filter(|_| script_id.is_empty()));
        let embedded = self.embedded.get(url);
        if let Some(text) = embedded.and_then(|e| e.source_map.as_ref()) {
            return self
                .inline(text)
                .map(Some)
                .map_err(|w| (format!("embedded in the trace for {url}"), w));
        }
        let map_url = record
            .map(|r| r.source_map_url.as_str())
            .or(embedded.map(|e| e.source_map_url.as_str()))
            .filter(|m| !m.is_empty());
        if let Some(m) = map_url.filter(|m| m.starts_with("data:")) {
            return self.data_url(m, url);
        }
        if let Some((prefix, dir)) = self.mirror_of(url) {
            let rest = without_query(&url[prefix.len()..]);
            let map_url = match map_url {
                Some(m) => Some(m.to_string()),
                None => match path_inside(dir, rest) {
                    Ok(script) => match self.sym.script_comment(&script) {
                        Some(c) => Some(c),
                        None => {
                            let beside = PathBuf::from(format!("{}.map", script.display()));
                            if !beside.is_file() {
                                return Ok(None);
                            }
                            let path = path_inside(dir, &format!("{rest}.map"))
                                .map_err(|e| (format!("for {url}"), e))?;
                            return cache
                                .file(&path, dir)
                                .map(Some)
                                .map_err(|w| (path.display().to_string(), w));
                        }
                    },
                    Err(_) => None,
                },
            };
            let Some(m) = map_url else { return Ok(None) };
            if m.starts_with("data:") {
                return self.data_url(&m, url);
            }
            let abs = join_url(url, &m);
            let Some((p2, d2)) = self.mirror_of(&abs) else {
                return Err((
                    abs.clone(),
                    "(the map URL of {url}) is under no --source-maps prefix".replace("{url}", url),
                ));
            };
            let path = path_inside(d2, without_query(&abs[p2.len()..]))
                .map_err(|e| (abs.clone(), format!("is missing or refused: {e}")))?;
            return cache
                .file(&path, d2)
                .map(Some)
                .map_err(|w| (path.display().to_string(), w));
        }
        let name = without_query(url).rsplit('/').next().unwrap_or("");
        if name.is_empty() {
            return Ok(None);
        }
        for f in &self.sym.folders {
            if let Some(path) = f.find(name) {
                return cache
                    .file(path, &f.root)
                    .map(Some)
                    .map_err(|w| (path.display().to_string(), w));
            }
        }
        Ok(None)
    }

    /// A map given as text, decoded once for this file.
    fn inline(&self, text: &Arc<Vec<u8>>) -> Loaded {
        use std::hash::{BuildHasher, Hasher};
        let mut h = self.sym.cache.hasher.build_hasher();
        h.write(text);
        let key = (h.finish(), text.len());
        if let Some(done) = self.inline.borrow().get(&key) {
            return done.clone();
        }
        let done = self.sym.cache.inline(Arc::clone(text));
        self.inline.borrow_mut().insert(key, done.clone());
        done
    }

    /// The map of a `data:` URL `m` given for script `url`.
    fn data_url(&self, m: &str, url: &str) -> Result<Option<Arc<LoadedMap>>, (String, String)> {
        data_url_text(m)
            .and_then(|text| self.inline(&Arc::new(text)))
            .map(Some)
            .map_err(|w| (format!("in the data: URL of {url}"), w))
    }

    /// The longest `--source-maps` prefix `url` starts with.
    fn mirror_of(&self, url: &str) -> Option<&'s (String, PathBuf)> {
        self.sym
            .mirrors
            .iter()
            .filter(|(p, _)| url.starts_with(p.as_str()))
            .max_by_key(|(p, _)| p.len())
    }
}

/// `map` resolved against `base` (a script URL), as a browser resolves a map URL.
fn join_url(base: &str, map: &str) -> String {
    match url::Url::parse(base).and_then(|b| b.join(map)) {
        Ok(u) => u.to_string(),
        Err(_) => match base.rfind('/') {
            Some(i) if !map.contains("://") => format!("{}{map}", &base[..=i]),
            _ => map.to_string(),
        },
    }
}

/// The original of generated 0-based `line`/`column`: the greatest mapping at or before
/// it on the same line, and the original function holding the mapped position.
/// With it, why the original source names no function when it could not be parsed.
fn lookup(map: &LoadedMap, line: u32, column: u32) -> Option<(OriginalFrame, Option<String>)> {
    let m = map.map.lookup(line, column)?;
    let functions = map.functions(m.source);
    let frame = OriginalFrame {
        function: functions
            .as_ref()
            .and_then(|f| f.name_at(m.line, m.column))
            .map(str::to_string),
        source: map.map.source(m.source)?.into_owned(),
        line: m.line + 1,
        column: m.column + 1,
        ignore_listed: map.map.is_ignored(m.source),
        in_chain_text: true,
    };
    Some((frame, functions.and_then(|f| f.failure.clone())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_urls_resolve_against_the_script_url() {
        assert_eq!(
            join_url("http://h:1/sm/dist/app.min.js?v=2", "app.min.js.map"),
            "http://h:1/sm/dist/app.min.js.map"
        );
        assert_eq!(
            join_url("http://h/a/b.js", "../maps/b.js.map"),
            "http://h/maps/b.js.map"
        );
        assert_eq!(
            join_url("http://h/a/b.js", "http://cdn/x.map"),
            "http://cdn/x.map"
        );
    }

    #[test]
    fn source_map_options_read_prefix_and_folder() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let canon = dir.path().canonicalize().unwrap();
        assert_eq!(
            MapSource::parse(&format!("http://x/={d}")).unwrap(),
            MapSource::Mirror {
                prefix: "http://x/".into(),
                dir: canon.clone()
            }
        );
        assert_eq!(MapSource::parse(d).unwrap(), MapSource::Folder(canon));
        assert!(
            MapSource::parse("http://x/=/no/such/dir")
                .unwrap_err()
                .contains("cannot be read")
        );
    }
}

//! Finding and loading source maps: local mirrors of servers (`PREFIX=DIR`), folders of
//! `.map` files, maps embedded in the trace and `data:` URLs. Nothing is fetched.
//!
//! Every map is decoded once per run ([`MapCache`]): files are keyed by canonical path,
//! size and modification time, inline maps (embedded, `data:`) by a hash of their text.
//! Paths built from script URLs stay inside their folder: `..` segments are refused, and
//! the canonical path (symlinks resolved) must start with the folder's canonical path.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::mappings::MapIndex;
use super::names::FunctionIndex;

/// Maps larger than this (64 MiB; a large app's map is a few MB) are refused with a
/// warning: a map is decoded whole, so its size bounds the memory it takes.
pub(crate) const MAX_MAP_BYTES: u64 = 64 << 20;

/// Scripts and original sources read from disk larger than this (64 MiB) are not read.
pub(crate) const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// A decoded map with what naming needs.
#[derive(Debug)]
pub(crate) struct LoadedMap {
    /// The map (index maps' sections kept as sections), read for lookups.
    pub map: MapIndex,
    /// Where the map file is, and the folder its sources must stay inside (for sources
    /// without `sourcesContent`); `None` for inline maps.
    pub place: Option<(PathBuf, PathBuf)>,
    /// Sources parsed so far (on first use), by index: only those frames land in.
    functions: Mutex<HashMap<u32, ParsedSource>>,
}

/// A source's functions, parsed once (`None`: no text for it).
type ParsedSource = Arc<OnceLock<Option<Arc<FunctionIndex>>>>;

impl LoadedMap {
    /// Decodes `bytes` (a source map or an index map with `sections`). `place`: the map
    /// file and the folder its sources must stay inside.
    pub(crate) fn decode(
        bytes: Arc<Vec<u8>>,
        place: Option<(PathBuf, PathBuf)>,
    ) -> Result<LoadedMap, String> {
        Ok(LoadedMap {
            map: MapIndex::read(bytes)?,
            place,
            functions: Mutex::default(),
        })
    }

    /// Bytes the map holds (for the cache's bound), its parsed sources included.
    pub(crate) fn held_bytes(&self) -> usize {
        let parsed: usize = self
            .functions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter_map(|c| c.get().cloned().flatten())
            .map(|f| f.held_bytes())
            .sum();
        self.map.held_bytes() + parsed
    }

    /// The functions of source `src`, parsed once: from `sourcesContent`, else from the
    /// local file the source names (relative to the map, inside its folder). `None` when
    /// neither is there.
    pub(crate) fn functions(&self, src: u32) -> Option<Arc<FunctionIndex>> {
        if src >= self.map.source_count() {
            return None;
        }
        let cell = self
            .functions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(src)
            .or_default()
            .clone();
        cell.get_or_init(|| {
            let name = self.map.source(src)?;
            let failed = |why: String| Some(Arc::new(FunctionIndex::failed(why)));
            if let Some(len) = self.map.content_json_len(src) {
                if len as u64 > MAX_PARSED_SOURCE_BYTES {
                    return failed(too_large(len as u64));
                }
                return match self.map.content(src)? {
                    Ok(text) => Some(Arc::new(FunctionIndex::parse(&name, &text))),
                    Err(e) => failed(e),
                };
            }
            let (file, root) = self.place.as_ref()?;
            let path = local_source(file, root, &name)?;
            let text = match crate::input::side::read(&path, MAX_PARSED_SOURCE_BYTES) {
                Ok(t) => t,
                Err(e) if e.over_limit => return failed(e.why),
                Err(_) => return None,
            };
            Some(Arc::new(FunctionIndex::parse(
                &name,
                &String::from_utf8_lossy(&text),
            )))
        })
        .clone()
    }
}

/// What a probe of a map found at one generated position: the original source's index,
/// 0-based line and UTF-16 column, the source's name, and the original function there.
pub type Probe = (u32, u32, u32, Option<String>, Option<String>);

/// For the `source_maps` fuzz target: decodes `bytes` as a map (as an inline map is) and,
/// at each generated position of `probes` (0-based line, UTF-16 column), looks it up,
/// reads its source's name and parses its `sourcesContent` for the function there, as a
/// frame's symbolication does. `Err`: why the map is refused. Panics where an invariant
/// fails (a mapping names a source the map does not have).
#[doc(hidden)]
pub fn probe_map(bytes: &[u8], probes: &[(u32, u32)]) -> Result<Vec<Option<Probe>>, String> {
    let map = LoadedMap::decode(Arc::new(bytes.to_vec()), None)?;
    Ok(probes
        .iter()
        .map(|&(line, column)| {
            let m = map.map.lookup(line, column)?;
            assert!(m.source < map.map.source_count(), "{m:?}");
            let name = map.map.source(m.source).map(|n| n.into_owned());
            let function = map
                .functions(m.source)
                .and_then(|f| f.name_at(m.line, m.column).map(str::to_owned));
            Some((m.source, m.line, m.column, name, function))
        })
        .collect())
}

/// Original sources longer than this (8 MiB; real ones are a few KB to a few hundred) are
/// not parsed for names: a parse holds several times its text.
pub(crate) const MAX_PARSED_SOURCE_BYTES: u64 = 8 << 20;

fn too_large(len: u64) -> String {
    format!(
        "is {len} bytes, over the {} MiB a source is parsed for names",
        MAX_PARSED_SOURCE_BYTES >> 20
    )
}

/// The file a map's source names, when it is a relative path (or a `file:` URL) that
/// stays inside `root`.
fn local_source(map_file: &Path, root: &Path, source: &str) -> Option<PathBuf> {
    let rel = source.strip_prefix("file://").unwrap_or(source);
    if rel.contains("://") {
        return None;
    }
    let joined = map_file.parent()?.join(rel);
    let canon = joined.canonicalize().ok()?;
    canon.starts_with(root).then_some(canon)
}

/// Reads `path` whole (a map, a script, an original source), refusing files over
/// `limit` bytes, FIFOs nothing writes to and devices ([`crate::input::side::read`]).
pub(super) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    crate::input::side::read(path, limit).map_err(|e| e.why)
}

/// The cache key of a map file: its path as it is now.
type FileKey = (PathBuf, u64, Option<std::time::SystemTime>);

/// A map's load outcome: the map, or why it could not be used.
pub(super) type Loaded = Result<Arc<LoadedMap>, String>;

/// Decoded map files kept at most, in bytes they hold ([`LoadedMap::held_bytes`]): the
/// least recently used are let go past it (and read again if asked for again).
pub(crate) const CACHE_BYTES: usize = 256 << 20;

/// One map file of the cache.
struct Cached {
    cell: Arc<OnceLock<Loaded>>,
    /// When it was last asked for (a counter).
    used: u64,
    /// What it held then.
    bytes: usize,
}

/// Map files decoded this run, shared by every trace of a batch, bounded by bytes
/// ([`CACHE_BYTES`]). Maps given inline (embedded in a trace, `data:` URLs) are the
/// file's own: kept by its [`super::FileSymbolication`] until the file is done.
pub(crate) struct MapCache {
    files: Mutex<(HashMap<FileKey, Cached>, u64)>,
    decoded: AtomicU64,
    pub(super) hasher: foldhash::quality::RandomState,
    /// [`CACHE_BYTES`] (smaller in tests).
    bound: usize,
}

impl Default for MapCache {
    fn default() -> Self {
        MapCache {
            files: Mutex::default(),
            decoded: AtomicU64::new(0),
            hasher: Default::default(),
            bound: CACHE_BYTES,
        }
    }
}

impl std::fmt::Debug for MapCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MapCache({} decoded)", self.decoded())
    }
}

impl MapCache {
    /// How many maps were decoded (or failed to decode) so far: each distinct map file
    /// once while it is cached, an inline map once per file.
    pub(crate) fn decoded(&self) -> u64 {
        self.decoded.load(Ordering::Relaxed)
    }

    /// The map file at `path` (already checked to be inside `root`).
    pub(crate) fn file(&self, path: &Path, root: &Path) -> Loaded {
        let meta = std::fs::metadata(path).map_err(|e| format!("cannot be read ({e})"))?;
        if meta.is_file() && meta.len() > MAX_MAP_BYTES {
            return Err(format!(
                "is {} bytes, over the limit of {} MiB",
                meta.len(),
                MAX_MAP_BYTES >> 20
            ));
        }
        let key = (path.to_path_buf(), meta.len(), meta.modified().ok());
        let cell = {
            let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
            let (map, tick) = &mut *files;
            *tick += 1;
            let e = map.entry(key.clone()).or_insert_with(|| Cached {
                cell: Arc::default(),
                used: 0,
                bytes: 0,
            });
            e.used = *tick;
            e.cell.clone()
        };
        // Other threads wanting the same map wait here instead of decoding it again.
        let loaded = cell
            .get_or_init(|| {
                self.decoded.fetch_add(1, Ordering::Relaxed);
                let bytes = read_bounded(path, MAX_MAP_BYTES)?;
                LoadedMap::decode(
                    Arc::new(bytes),
                    Some((path.to_path_buf(), root.to_path_buf())),
                )
                .map(Arc::new)
            })
            .clone();
        let held = loaded.as_ref().map_or(64, |m| m.held_bytes());
        self.bound_to(&key, held);
        loaded
    }

    /// Notes that `key` holds `held` bytes, and lets the least recently used maps go
    /// while the cache holds more than its bound (`key` itself stays).
    fn bound_to(&self, key: &FileKey, held: usize) {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        let (map, _) = &mut *files;
        if let Some(e) = map.get_mut(key) {
            e.bytes = held;
        }
        let mut total: usize = map.values().map(|e| e.bytes).sum();
        while total > self.bound {
            let Some(oldest) = map
                .iter()
                .filter(|(k, e)| *k != key && e.cell.get().is_some())
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(e) = map.remove(&oldest) {
                total -= e.bytes;
            }
        }
    }

    /// A map given as text (embedded in the trace, or a decoded `data:` URL), decoded.
    pub(crate) fn inline(&self, text: Arc<Vec<u8>>) -> Loaded {
        if text.len() as u64 > MAX_MAP_BYTES {
            return Err(format!(
                "is {} bytes, over the limit of {} MiB",
                text.len(),
                MAX_MAP_BYTES >> 20
            ));
        }
        self.decoded.fetch_add(1, Ordering::Relaxed);
        LoadedMap::decode(text, None).map(Arc::new)
    }
}

/// The map text of a `data:` URL (`data:application/json[;charset=utf-8];base64,…`, or
/// percent-encoded JSON after the comma).
pub(crate) fn data_url_text(url: &str) -> Result<Vec<u8>, String> {
    let (head, body) = url
        .strip_prefix("data:")
        .and_then(|r| r.split_once(','))
        .ok_or_else(|| "data: URL without a comma".to_string())?;
    if body.len() as u64 > MAX_MAP_BYTES * 4 / 3 + 4 {
        return Err(format!("is over the limit of {} MiB", MAX_MAP_BYTES >> 20));
    }
    if head.ends_with(";base64") {
        data_encoding::BASE64
            .decode(body.trim().as_bytes())
            .map_err(|e| format!("data: URL is not base64 ({e})"))
    } else {
        Ok(percent_encoding::percent_decode_str(body).collect())
    }
}

/// The path of `url_path` (a URL's path after a prefix: `/`-separated, percent-encoded,
/// query and fragment already dropped) inside `root` (canonical). Refuses `..`, and a
/// path whose canonical form (symlinks resolved) leaves `root`. `Err` says why.
pub(super) fn path_inside(root: &Path, url_path: &str) -> Result<PathBuf, String> {
    let decoded = percent_encoding::percent_decode_str(url_path).decode_utf8_lossy();
    let mut p = root.to_path_buf();
    for seg in decoded.split('/') {
        match seg {
            "" | "." => {}
            ".." => return Err(format!("{url_path}: a path with `..` is refused")),
            s if s.contains('\\') || s.contains('\0') => {
                return Err(format!("{url_path}: a path with `\\` or NUL is refused"));
            }
            s => p.push(s),
        }
    }
    let canon = p
        .canonicalize()
        .map_err(|e| format!("{} cannot be read ({e})", p.display()))?;
    if !canon.starts_with(root) {
        return Err(format!(
            "{} leads outside {} (a symlink?): refused",
            p.display(),
            root.display()
        ));
    }
    Ok(canon)
}

/// A URL without its query and fragment.
pub(super) fn without_query(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

/// The `//# sourceMappingURL=` (or `//@`) comment of a script's text: the last one, in
/// the script's last lines.
pub(super) fn source_mapping_url(script: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(&script[script.len().saturating_sub(1 << 20)..]);
    text.lines()
        .rev()
        .take(5)
        .find_map(|l| {
            let l = l.trim();
            let rest = l
                .strip_prefix("//# sourceMappingURL=")
                .or_else(|| l.strip_prefix("//@ sourceMappingURL="))?;
            let url = rest.trim();
            (!url.is_empty()).then(|| url.to_string())
        })
        .or_else(|| {
            // An inline data: map is one long line: look for it whole when it is larger than
            // the tail read above.
            let text = String::from_utf8_lossy(script);
            let at = text.rfind("//# sourceMappingURL=data:")?;
            let url = text[at + "//# sourceMappingURL=".len()..]
                .lines()
                .next()?
                .trim();
            Some(url.to_string())
        })
}

/// A folder of `.map` files (`--source-maps DIR`), indexed on first use: by file name,
/// and by each map's `file` field.
#[derive(Debug)]
pub(super) struct MapFolder {
    /// The folder, canonical.
    pub root: PathBuf,
    index: OnceLock<FolderIndex>,
}

#[derive(Debug, Default)]
struct FolderIndex {
    by_name: HashMap<String, PathBuf>,
    by_file: HashMap<String, PathBuf>,
}

/// Folders deeper than this are not searched, nor more than this many entries read (a
/// guard against a mistaken `--source-maps /`).
const MAX_DEPTH: usize = 32;
const MAX_ENTRIES: usize = 1_000_000;

impl MapFolder {
    /// The folder at `root` (already canonical).
    pub(super) fn new(root: PathBuf) -> MapFolder {
        MapFolder {
            root,
            index: OnceLock::new(),
        }
    }

    fn index(&self) -> &FolderIndex {
        self.index.get_or_init(|| {
            let mut idx = FolderIndex::default();
            let mut stack = vec![(self.root.clone(), 0usize)];
            let mut seen = 0usize;
            while let Some((dir, depth)) = stack.pop() {
                let Ok(rd) = std::fs::read_dir(&dir) else {
                    continue;
                };
                let mut entries: Vec<_> = rd.flatten().collect();
                entries.sort_by_key(|e| e.file_name());
                for e in entries {
                    seen += 1;
                    if seen > MAX_ENTRIES {
                        return idx;
                    }
                    // Symlinks are not followed out of the folder: file_type does not follow them.
                    let Ok(ft) = e.file_type() else { continue };
                    let path = e.path();
                    if ft.is_dir() && depth < MAX_DEPTH {
                        stack.push((path, depth + 1));
                    } else if ft.is_file()
                        && let Some(name) = path.file_name().and_then(|n| n.to_str())
                        && name.ends_with(".map")
                    {
                        idx.by_name.entry(name.to_string()).or_insert(path.clone());
                        if let Some(file) = map_file_field(&path) {
                            let base = file.rsplit('/').next().unwrap_or(&file).to_string();
                            idx.by_file.entry(base).or_insert(path);
                        }
                    }
                }
            }
            idx
        })
    }

    /// The map of a script whose URL ends in file name `script_name`: `script_name.map`,
    /// else a map whose `file` names it.
    pub(super) fn find(&self, script_name: &str) -> Option<&Path> {
        let idx = self.index();
        idx.by_name
            .get(&format!("{script_name}.map"))
            .or_else(|| idx.by_file.get(script_name))
            .map(PathBuf::as_path)
    }
}

/// The `file` field of the map at `path` (maps over the size limit are skipped).
fn map_file_field(path: &Path) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct F {
        file: Option<String>,
    }
    let bytes = read_bounded(path, MAX_MAP_BYTES).ok()?;
    serde_json::from_slice::<F>(&bytes).ok()?.file
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_their_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::write(root.join("a/x.js"), "1").unwrap();
        assert_eq!(path_inside(&root, "/a/x.js").unwrap(), root.join("a/x.js"));
        assert_eq!(path_inside(&root, "a/%78.js").unwrap(), root.join("a/x.js"));
        assert!(
            path_inside(&root, "/a/../a/x.js")
                .unwrap_err()
                .contains("..")
        );
        assert!(
            path_inside(&root, "/a/%2e%2e/a/x.js")
                .unwrap_err()
                .contains("..")
        );
        assert!(
            path_inside(&root, "/a/missing.js")
                .unwrap_err()
                .contains("cannot be read")
        );
        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().unwrap();
            std::fs::write(outside.path().join("secret.js"), "s").unwrap();
            std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
            assert!(
                path_inside(&root, "/link/secret.js")
                    .unwrap_err()
                    .contains("outside")
            );
        }
    }

    #[test]
    fn maps_over_the_limit_are_refused_before_reading() {
        let c = MapCache::default();
        let big = vec![b' '; MAX_MAP_BYTES as usize + 1];
        assert!(
            c.inline(Arc::new(big))
                .unwrap_err()
                .contains("over the limit")
        );
        assert_eq!(c.decoded(), 0);
    }

    #[test]
    fn one_map_file_is_decoded_once_and_the_cache_is_bounded_by_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        // Each map holds about 110 KB read (its text of 100 KB and checkpoints): a bound
        // of 250 KB keeps two of them.
        let c = MapCache {
            bound: 250_000,
            ..MapCache::default()
        };
        let segs = vec!["CAAC"; 20_000].join(",");
        let paths: Vec<PathBuf> = (0..4)
            .map(|i| {
                let p = root.join(format!("m{i}.map"));
                let json = format!(r#"{{"sources":["s{i}.js"],"mappings":"AAAA,{segs}"}}"#);
                std::fs::write(&p, json).unwrap();
                p
            })
            .collect();
        for _ in 0..3 {
            assert!(c.file(&paths[0], &root).is_ok());
        }
        assert_eq!(c.decoded(), 1);
        for p in &paths {
            c.file(p, &root).unwrap();
        }
        let files = c.files.lock().unwrap();
        let kept: usize = files.0.values().map(|e| e.bytes).sum();
        assert!(kept <= 250_000, "{kept}");
        assert!(files.0.len() < 4, "{}", files.0.len());
        // The last one asked for stays.
        assert!(files.0.keys().any(|k| k.0 == paths[3]));
        drop(files);
        // A broken map is decoded once too, and says why.
        let bad = root.join("bad.map");
        std::fs::write(&bad, b"{\"no\":1}").unwrap();
        for _ in 0..3 {
            assert!(
                c.file(&bad, &root)
                    .unwrap_err()
                    .contains("not a source map")
            );
        }
        assert_eq!(c.decoded(), 5);
    }

    #[test]
    fn ignore_lists_are_read_in_both_spellings_and_in_sections() {
        let ignored = |l: &LoadedMap| {
            (0..l.map.source_count())
                .map(|i| l.map.is_ignored(i))
                .collect::<Vec<_>>()
        };
        let m = br#"{"version":3,"sources":["a.js","lib.js"],"names":[],"mappings":"AAAA;ACAA","x_google_ignoreList":[1]}"#;
        assert_eq!(
            ignored(&LoadedMap::decode(Arc::new(m.to_vec()), None).unwrap()),
            [false, true]
        );
        let idx = br#"{"version":3,"sections":[{"offset":{"line":0,"column":0},"map":{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA"}},{"offset":{"line":1,"column":0},"map":{"version":3,"sources":["vendor.js"],"names":[],"mappings":"AAAA","ignoreList":[0]}}]}"#;
        let l = LoadedMap::decode(Arc::new(idx.to_vec()), None).unwrap();
        let names: Vec<String> = (0..2)
            .map(|i| l.map.source(i).unwrap().into_owned())
            .collect();
        assert_eq!(names, ["a.js", "vendor.js"]);
        assert_eq!(ignored(&l), [false, true]);
        // The second section's mapping is on line 1.
        assert_eq!(l.map.lookup(1, 0).map(|m| m.source), Some(1));
    }

    #[test]
    fn data_urls_in_base64_and_percent_encoding() {
        let json = r#"{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA"}"#;
        let b64 = data_encoding::BASE64.encode(json.as_bytes());
        assert_eq!(
            data_url_text(&format!("data:application/json;charset=utf-8;base64,{b64}")).unwrap(),
            json.as_bytes()
        );
        let pct: String =
            percent_encoding::utf8_percent_encode(json, percent_encoding::NON_ALPHANUMERIC)
                .to_string();
        assert_eq!(
            data_url_text(&format!("data:application/json,{pct}")).unwrap(),
            json.as_bytes()
        );
        assert!(
            data_url_text("data:application/json;base64,@@@")
                .unwrap_err()
                .contains("base64")
        );
    }

    #[test]
    fn the_last_source_mapping_comment_is_found() {
        assert_eq!(
            source_mapping_url(b"var a=1;\n//# sourceMappingURL=app.js.map\n").as_deref(),
            Some("app.js.map")
        );
        assert_eq!(source_mapping_url(b"var a=1;\n"), None);
    }
}

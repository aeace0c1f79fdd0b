//! Finding and loading source maps: local mirrors of servers (`PREFIX=DIR`), folders of
//! `.map` files, maps embedded in the trace and `data:` URLs. Nothing is fetched.
//!
//! Every map is decoded once per run ([`MapCache`]): files are keyed by canonical path,
//! size and modification time, inline maps (embedded, `data:`) by a hash of their text.
//! Paths built from script URLs stay inside their folder: `..` segments are refused, and
//! the canonical path (symlinks resolved) must start with the folder's canonical path.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use sourcemap::{DecodedMap, SourceMap};

use super::names::FunctionIndex;

/// Maps larger than this (64 MiB; a large app's map is a few MB) are refused with a
/// warning: a map is decoded whole, so its size bounds the memory it takes.
pub(crate) const MAX_MAP_BYTES: u64 = 64 << 20;

/// Scripts and original sources read from disk larger than this (64 MiB) are not read.
pub(crate) const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// A decoded map with what naming needs.
#[derive(Debug)]
pub(crate) struct LoadedMap {
    /// The map (index maps flattened into one).
    pub map: SourceMap,
    /// Per source index: listed in `ignoreList` / `x_google_ignoreList`.
    pub ignored: Vec<bool>,
    /// Where the map file is, and the folder its sources must stay inside (for sources
    /// without `sourcesContent`); `None` for inline maps.
    pub place: Option<(PathBuf, PathBuf)>,
    /// Per source index: its functions, parsed on first use.
    functions: Vec<OnceLock<Option<FunctionIndex>>>,
}

impl LoadedMap {
    /// Decodes `bytes` (a source map or an index map with `sections`). `place`: the map
    /// file and the folder its sources must stay inside.
    pub(crate) fn decode(
        bytes: &[u8],
        place: Option<(PathBuf, PathBuf)>,
    ) -> Result<LoadedMap, String> {
        let raw = serde_json::from_slice::<Raw>(bytes)
            .map_err(|e| format!("is not a source map (not JSON: {e})"))?;
        if raw.mappings.is_none() && raw.sections.is_empty() {
            return Err("is not a source map (no \"mappings\" nor \"sections\")".into());
        }
        let decoded =
            sourcemap::decode_slice(bytes).map_err(|e| format!("is not a source map ({e})"))?;
        let map = match decoded {
            DecodedMap::Regular(m) => m,
            DecodedMap::Index(i) => i
                .flatten()
                .map_err(|e| format!("index map cannot be read ({e})"))?,
            DecodedMap::Hermes(h) => SourceMap::clone(&h),
        };
        let mut ignored_names = Vec::new();
        raw.ignored(&mut ignored_names);
        let ignored = map
            .sources()
            .map(|s| ignored_names.iter().any(|n| n == s))
            .collect();
        let functions = (0..map.get_source_count())
            .map(|_| OnceLock::new())
            .collect();
        Ok(LoadedMap {
            map,
            ignored,
            place,
            functions,
        })
    }

    /// The functions of source `src`, parsed once: from `sourcesContent`, else from the
    /// local file the source names (relative to the map, inside its folder). `None` when
    /// neither is there.
    pub(crate) fn functions(&self, src: u32) -> Option<&FunctionIndex> {
        let cell = self.functions.get(src as usize)?;
        cell.get_or_init(|| {
            let name = self.map.get_source(src)?;
            if let Some(text) = self.map.get_source_contents(src) {
                return Some(FunctionIndex::parse(name, text));
            }
            let (file, root) = self.place.as_ref()?;
            let path = local_source(file, root, name)?;
            let text = read_bounded(&path, MAX_SOURCE_BYTES).ok()?;
            Some(FunctionIndex::parse(name, &String::from_utf8_lossy(&text)))
        })
        .as_ref()
    }
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

/// The fields of a map read beside the decoder: `ignoreList` / `x_google_ignoreList`
/// (the decoder reads neither in index maps' sections) and whether it has mappings.
#[derive(serde::Deserialize, Default)]
struct Raw {
    #[serde(default)]
    sources: Vec<Option<String>>,
    mappings: Option<serde::de::IgnoredAny>,
    #[serde(rename = "ignoreList")]
    ignore_list: Option<Vec<u32>>,
    #[serde(rename = "x_google_ignoreList")]
    google: Option<Vec<u32>>,
    #[serde(default)]
    sections: Vec<Section>,
}

#[derive(serde::Deserialize)]
struct Section {
    map: Option<Raw>,
}

impl Raw {
    /// Adds the source names its ignore list (and its sections') names to `out`.
    fn ignored(&self, out: &mut Vec<String>) {
        let list = self.ignore_list.as_ref().or(self.google.as_ref());
        for &i in list.into_iter().flatten() {
            if let Some(Some(s)) = self.sources.get(i as usize) {
                out.push(s.clone());
            }
        }
        for s in &self.sections {
            if let Some(m) = &s.map {
                m.ignored(out);
            }
        }
    }
}

/// Reads `path` whole, refusing files over `limit` bytes.
pub(super) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| format!("cannot be read ({e})"))?;
    let len = f
        .metadata()
        .map_err(|e| format!("cannot be read ({e})"))?
        .len();
    if len > limit {
        return Err(format!(
            "is {len} bytes, over the limit of {} MiB",
            limit >> 20
        ));
    }
    let mut out = Vec::with_capacity(len as usize);
    f.take(limit + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("cannot be read ({e})"))?;
    if out.len() as u64 > limit {
        return Err(format!("is over the limit of {} MiB", limit >> 20));
    }
    Ok(out)
}

/// The cache key of a map: a file as it is now, or the text of an inline map.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum MapKey {
    File(PathBuf, u64, Option<std::time::SystemTime>),
    Inline(u64, usize),
}

/// A map's load outcome: the map, or why it could not be used.
pub(super) type Loaded = Result<Arc<LoadedMap>, String>;

/// Maps decoded this run, shared by every trace of a batch.
#[derive(Default)]
pub(crate) struct MapCache {
    maps: Mutex<HashMap<MapKey, Arc<OnceLock<Loaded>>>>,
    decoded: AtomicU64,
    hasher: foldhash::quality::RandomState,
}

impl std::fmt::Debug for MapCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MapCache({} decoded)", self.decoded())
    }
}

impl MapCache {
    /// How many maps were decoded (or failed to decode) so far: each distinct map once.
    pub(crate) fn decoded(&self) -> u64 {
        self.decoded.load(Ordering::Relaxed)
    }

    fn get_or_load(&self, key: MapKey, load: impl FnOnce() -> Loaded) -> Loaded {
        let cell = {
            let mut maps = self.maps.lock().unwrap_or_else(|e| e.into_inner());
            maps.entry(key).or_default().clone()
        };
        // Other threads wanting the same map wait here instead of decoding it again.
        cell.get_or_init(|| {
            self.decoded.fetch_add(1, Ordering::Relaxed);
            load()
        })
        .clone()
    }

    /// The map file at `path` (already checked to be inside `root`).
    pub(crate) fn file(&self, path: &Path, root: &Path) -> Loaded {
        let meta = std::fs::metadata(path).map_err(|e| format!("cannot be read ({e})"))?;
        if meta.len() > MAX_MAP_BYTES {
            return Err(format!(
                "is {} bytes, over the limit of {} MiB",
                meta.len(),
                MAX_MAP_BYTES >> 20
            ));
        }
        let key = MapKey::File(path.to_path_buf(), meta.len(), meta.modified().ok());
        self.get_or_load(key, || {
            let bytes = read_bounded(path, MAX_MAP_BYTES)?;
            LoadedMap::decode(&bytes, Some((path.to_path_buf(), root.to_path_buf()))).map(Arc::new)
        })
    }

    /// A map given as text (embedded in the trace, or a decoded `data:` URL).
    pub(crate) fn inline(&self, text: &[u8]) -> Loaded {
        if text.len() as u64 > MAX_MAP_BYTES {
            return Err(format!(
                "is {} bytes, over the limit of {} MiB",
                text.len(),
                MAX_MAP_BYTES >> 20
            ));
        }
        let mut h = self.hasher.build_hasher();
        h.write(text);
        self.get_or_load(MapKey::Inline(h.finish(), text.len()), || {
            LoadedMap::decode(text, None).map(Arc::new)
        })
    }

    /// A `data:` URL (`data:application/json[;charset=utf-8];base64,…`, or percent-encoded
    /// JSON after the comma).
    pub(crate) fn data_url(&self, url: &str) -> Loaded {
        let (head, body) = url
            .strip_prefix("data:")
            .and_then(|r| r.split_once(','))
            .ok_or_else(|| "data: URL without a comma".to_string())?;
        if body.len() as u64 > MAX_MAP_BYTES * 4 / 3 + 4 {
            return Err(format!("is over the limit of {} MiB", MAX_MAP_BYTES >> 20));
        }
        let text = if head.ends_with(";base64") {
            data_encoding::BASE64
                .decode(body.trim().as_bytes())
                .map_err(|e| format!("data: URL is not base64 ({e})"))?
        } else {
            percent_encoding::percent_decode_str(body).collect()
        };
        self.inline(&text)
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
        assert!(c.inline(&big).unwrap_err().contains("over the limit"));
        assert_eq!(c.decoded(), 0);
    }

    #[test]
    fn one_map_is_decoded_once_and_a_broken_one_once_too() {
        let c = MapCache::default();
        let map = br#"{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA"}"#;
        for _ in 0..3 {
            assert!(c.inline(map).is_ok());
        }
        assert_eq!(c.decoded(), 1);
        for _ in 0..3 {
            assert!(
                c.inline(b"{\"no\":1}")
                    .unwrap_err()
                    .contains("not a source map")
            );
        }
        assert_eq!(c.decoded(), 2);
    }

    #[test]
    fn ignore_lists_are_read_in_both_spellings_and_in_sections() {
        let m = br#"{"version":3,"sources":["a.js","lib.js"],"names":[],"mappings":"AAAA;ACAA","x_google_ignoreList":[1]}"#;
        assert_eq!(LoadedMap::decode(m, None).unwrap().ignored, [false, true]);
        let idx = br#"{"version":3,"sections":[{"offset":{"line":0,"column":0},"map":{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA"}},{"offset":{"line":1,"column":0},"map":{"version":3,"sources":["vendor.js"],"names":[],"mappings":"AAAA","ignoreList":[0]}}]}"#;
        let l = LoadedMap::decode(idx, None).unwrap();
        let names: Vec<&str> = l.map.sources().collect();
        assert_eq!(names, ["a.js", "vendor.js"]);
        assert_eq!(l.ignored, [false, true]);
        // The second section's token is on line 1.
        let t = l.map.lookup_token(1, 0).unwrap();
        assert_eq!(t.get_source(), Some("vendor.js"));
    }

    #[test]
    fn data_urls_in_base64_and_percent_encoding() {
        let c = MapCache::default();
        let json = r#"{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA"}"#;
        let b64 = data_encoding::BASE64.encode(json.as_bytes());
        assert!(
            c.data_url(&format!("data:application/json;charset=utf-8;base64,{b64}"))
                .is_ok()
        );
        let pct: String =
            percent_encoding::utf8_percent_encode(json, percent_encoding::NON_ALPHANUMERIC)
                .to_string();
        assert!(c.data_url(&format!("data:application/json,{pct}")).is_ok());
        assert!(
            c.data_url("data:application/json;base64,@@@")
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

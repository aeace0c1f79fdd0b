//! Chain identity across builds: a key of a chain by its frames' function names and script
//! paths, so that moving lines, a new content hash in a bundle's file name or another
//! bundler's source paths do not make every chain new. `compare`, `--aggregate` and the
//! Markdown's top chains group by it (`--chain-key`); the CSV `chain` column stays exact.

use crate::chain::ChainFrame;

/// How chains are keyed in `compare` and `--aggregate`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChainKey {
    /// Function names and script paths: no scheme, host or port (one dev server on two
    /// ports is one app), no line or column, the URL's query and fragment dropped,
    /// content hashes in file names as `[hash]`; the original name and source where a
    /// source map gave them.
    #[default]
    Normalized,
    /// As `Normalized`, keeping each script's scheme, host and port: the same path served
    /// from two origins is two chains.
    Origin,
    /// The chain text exactly (`name (url:line:column)`), as the CSV `chain` column.
    Exact,
}

/// The key of `chain` under `mode`: frames joined by ` > `, each `name (path)` when
/// normalized (with ` ×N` for collapsed recursion in both modes).
pub fn key(chain: &[ChainFrame], mode: ChainKey) -> String {
    if mode == ChainKey::Exact {
        return super::chain_text(chain);
    }
    let mut out = String::new();
    for (i, f) in chain.iter().enumerate() {
        if i > 0 {
            out.push_str(" > ");
        }
        let (name, path) = match &f.original {
            Some(o) => (
                o.function.as_deref().unwrap_or(&f.function),
                source_path(&o.source),
            ),
            None if mode == ChainKey::Origin => (f.function.as_str(), script_path(&f.url)),
            None => (f.function.as_str(), script_path(without_origin(&f.url))),
        };
        out.push_str(name);
        if !path.is_empty() {
            out.push_str(" (");
            out.push_str(&path);
            out.push(')');
        }
        if f.recursion_depth > 1 {
            out.push_str(&format!(" ×{}", f.recursion_depth));
        }
    }
    out
}

/// A URL without its scheme, host and port: `http://127.0.0.1:39927/js/app.js` →
/// `/js/app.js` (`/` for an origin alone); a URL without `scheme://` (a `data:` URL, a
/// bare path, an empty one) as it is.
pub fn without_origin(url: &str) -> &str {
    let Some(i) = url.find("://") else {
        return url;
    };
    let rest = &url[i + 3..];
    match rest.find(['/', '?', '#']) {
        Some(j) if rest.as_bytes()[j] == b'/' => &rest[j..],
        _ => "/",
    }
}

/// A script URL without its query and fragment, with content hashes in the file name
/// replaced by `[hash]`: `https://x/app.3f9a2b1c.js?v=2` → `https://x/app.[hash].js`.
pub fn script_path(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or("");
    let (dir, file) = match url.rfind('/') {
        Some(i) => url.split_at(i + 1),
        None => ("", url),
    };
    let mut out = String::with_capacity(url.len());
    out.push_str(dir);
    // Parts of the file name between dots and dashes; a part that looks like a hash
    // (8+ characters of hex, or of base32/64 with a digit in it) becomes `[hash]`.
    let mut part = String::new();
    let flush = |part: &mut String, out: &mut String| {
        if is_hash(part) {
            out.push_str("[hash]");
        } else {
            out.push_str(part);
        }
        part.clear();
    };
    for c in file.chars() {
        if c == '.' || c == '-' {
            flush(&mut part, &mut out);
            out.push(c);
        } else {
            part.push(c);
        }
    }
    flush(&mut part, &mut out);
    out
}

/// A source map's source as bundlers differ in writing it: without a `scheme://namespace/`
/// prefix (webpack's `webpack://app/`), leading `./` and `../` and `/`, then as
/// [`script_path`]: `webpack:///./src/main.js` and `../../src/main.js` are both
/// `src/main.js`.
pub fn source_path(source: &str) -> String {
    let mut s = match source.find("://") {
        // The namespace (or host) after the scheme goes too: `webpack://app/src/x.js`.
        Some(i) => source[i + 3..]
            .find('/')
            .map_or("", |j| &source[i + 3 + j..]),
        None => source,
    };
    loop {
        let t = s
            .trim_start_matches('/')
            .trim_start_matches("./")
            .trim_start_matches("../");
        if t == s {
            break;
        }
        s = t;
    }
    script_path(s)
}

/// True for a content hash: 8 or more characters, all hex digits, or all base32/64
/// (letters, digits, `_`) with at least one digit and one letter (so `bootstrap` or
/// `polyfills` are kept).
fn is_hash(s: &str) -> bool {
    if s.len() < 8 {
        return false;
    }
    if s.chars().all(|c| c.is_ascii_hexdigit()) {
        return true;
    }
    s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.chars().any(|c| c.is_ascii_digit())
        && s.chars().any(|c| c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_queries_and_fragments_are_normalised() {
        let p = script_path;
        assert_eq!(
            p("https://x/app.3f9a2b1c.js?v=1"),
            "https://x/app.[hash].js"
        );
        assert_eq!(
            p("https://x/app.8d7e6f5a.js#top"),
            "https://x/app.[hash].js"
        );
        // Webpack chunk names, Vite's base64url-ish hashes after a dash.
        assert_eq!(
            p("https://x/js/chunk-vendors.1a2b3c4d.js"),
            "https://x/js/chunk-vendors.[hash].js"
        );
        assert_eq!(
            p("https://x/assets/index-BzX9k2Qa.js"),
            "https://x/assets/index-[hash].js"
        );
        // Words and short parts stay; a hash-like directory stays (only file names).
        assert_eq!(
            p("https://x/3f9a2b1c4d/bootstrap.min.js"),
            "https://x/3f9a2b1c4d/bootstrap.min.js"
        );
        assert_eq!(p("https://x/polyfills.js"), "https://x/polyfills.js");
        assert_eq!(p("https://x/a.1234567.js"), "https://x/a.1234567.js");
        assert_eq!(p(""), "");
    }

    #[test]
    fn source_paths_of_different_bundlers_meet() {
        for s in [
            "webpack:///./src/main.js",
            "webpack://inventory/./src/main.js",
            "../../src/main.js",
            "./src/main.js",
            "/src/main.js",
            "src/main.js",
        ] {
            assert_eq!(source_path(s), "src/main.js", "{s}");
        }
        assert_eq!(
            source_path("webpack:///src/a.3f9a2b1c.js?x"),
            "src/a.[hash].js"
        );
        assert_eq!(source_path("../lib/../x.js"), "lib/../x.js");
    }

    #[test]
    fn the_normalized_key_drops_positions_and_the_exact_key_keeps_them() {
        let f = |name: &str, url: &str, line| ChainFrame {
            function: name.into(),
            url: url.into(),
            line: Some(line),
            column: Some(3),
            script_id: String::new(),
            original: None,
            recursion_depth: 1,
        };
        let a = [
            f("onSaveClick", "https://x/app.3f9a2b1c.js?v=1", 9),
            f("spin", "https://x/app.3f9a2b1c.js?v=1", 1),
        ];
        let b = [
            f("onSaveClick", "https://x/app.8d7e6f5a.js", 10),
            f("spin", "https://x/app.8d7e6f5a.js", 2),
        ];
        assert_eq!(key(&a, ChainKey::Normalized), key(&b, ChainKey::Normalized));
        assert_eq!(
            key(&a, ChainKey::Normalized),
            "onSaveClick (/app.[hash].js) > spin (/app.[hash].js)"
        );
        assert_ne!(key(&a, ChainKey::Exact), key(&b, ChainKey::Exact));
    }

    #[test]
    fn the_default_key_is_the_path_and_origin_keeps_the_server() {
        let f = |url: &str| ChainFrame {
            function: "busyLoop".into(),
            url: url.into(),
            line: Some(14),
            column: Some(18),
            script_id: String::new(),
            original: None,
            recursion_depth: 1,
        };
        // One dev server on two ports (the 39927 and 45611).
        let a = [f("http://127.0.0.1:39927/js/orders.3f9a2b1c.js")];
        let b = [f("http://127.0.0.1:45611/js/orders.8d7e6f5a.js?v=2")];
        assert_eq!(
            key(&a, ChainKey::Normalized),
            "busyLoop (/js/orders.[hash].js)"
        );
        assert_eq!(key(&a, ChainKey::Normalized), key(&b, ChainKey::Normalized));
        assert_eq!(
            key(&a, ChainKey::Origin),
            "busyLoop (http://127.0.0.1:39927/js/orders.[hash].js)"
        );
        assert_ne!(key(&a, ChainKey::Origin), key(&b, ChainKey::Origin));
        assert_eq!(without_origin("https://x.test"), "/");
        assert_eq!(without_origin("https://x.test?q=1"), "/");
        assert_eq!(without_origin("https://x.test/a/b.js?q"), "/a/b.js?q");
        assert_eq!(
            without_origin("data:text/javascript,1"),
            "data:text/javascript,1"
        );
        assert_eq!(without_origin(""), "");
    }
}

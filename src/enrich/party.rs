//! Parties: who owns each frame and each long task — the page's own code (first party), a
//! known vendor, or an unknown third party — by registrable domain.
//!
//! - The page's **site** is the registrable domain (eTLD+1 by the Public Suffix List, ICANN
//!   and private sections, default rule `*`; the `psl` crate with the list compiled in) of
//!   the main frame's URL when the task ran (`FileContext::page_at`).
//! - A frame with a script URL: its host's registrable domain ([`registrable_domain`]) is
//!   `first-party` when it equals the site or is listed in the overrides'
//!   `first_party_domains`; else it belongs to the first entity whose `domains` match the
//!   host — the overrides' `entities`, then the bundled third-party-web dataset
//!   ([`DATASET_VERSION`]); else it is an unknown third party. An IP address, `localhost`
//!   and any one-label host are their own site; a host that is itself a public suffix
//!   (`github.io`) is its own site too.
//! - Entity domains follow third-party-web: `x.y` matches that host alone, `*.x.y` matches
//!   `x.y` and every host under it, the most specific entry winning.
//! - Frames without a script URL (`(program)`, natives) have no party; nor does a URL
//!   without a host (`data:`, `file:`), whose owner the URL does not say.

use crate::vocab::FastMap;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The third-party-web release whose `dist/entities-nostats.json` is bundled (npm package
/// `third-party-web`, MIT; `data/third-party-web/`, updated by `scripts/update-entities`).
pub const DATASET_VERSION: &str = "0.30.0";

/// The bundled entities (third-party-web's entity objects without their statistics).
const DATASET_JSON: &str = include_str!("../../data/third-party-web/entities.json");

/// First party or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Party {
    /// The page's own site, or a domain listed as first party.
    FirstParty,
    /// Any other site: a known vendor or an unknown one.
    ThirdParty,
}

impl Party {
    /// The spelling in reports: `first-party`, `third-party`.
    pub fn as_str(self) -> &'static str {
        match self {
            Party::FirstParty => "first-party",
            Party::ThirdParty => "third-party",
        }
    }
}

/// An entity: a company's product that serves scripts from some domains (third-party-web's
/// fields; `company` and `category` may be empty).
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct Entity {
    /// Its name (`Google Tag Manager`): the `vendor` in reports.
    pub name: String,
    /// The company (`Google`).
    #[serde(default)]
    pub company: String,
    /// third-party-web's category (`tag-manager`, `ad`, `analytics`, …).
    #[serde(default)]
    pub category: String,
    /// Hosts (`cdn.vendor.example`) and wildcards (`*.vendor.example`).
    pub domains: Vec<String>,
}

/// Who owns one frame's script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameParty {
    /// `None` when the page's site is unknown (no page URL in the file) and the host is
    /// neither listed as first party nor a vendor's.
    pub party: Option<Party>,
    /// The entity, for a third party that a dataset knows.
    pub vendor: Option<Arc<Entity>>,
    /// The host's registrable domain.
    pub etld1: Arc<str>,
}

impl FrameParty {
    /// The group of [`TaskParties::shares`] this frame's samples count in.
    pub fn group(&self) -> String {
        match (&self.vendor, self.party) {
            (_, Some(Party::FirstParty)) => FIRST_PARTY.to_owned(),
            (Some(v), _) => format!("vendor:{}", v.name),
            (None, Some(Party::ThirdParty)) => UNKNOWN_THIRD_PARTY.to_owned(),
            (None, None) => NO_PAGE_URL.to_owned(),
        }
    }
}

/// Share group of first-party samples.
pub const FIRST_PARTY: &str = "first-party";
/// Share group of samples whose leaf has a URL of a third party no dataset knows.
pub const UNKNOWN_THIRD_PARTY: &str = "third-party:unknown";
/// Share group of samples whose leaf frame has no script URL (or no host in it).
pub const NO_SCRIPT_URL: &str = "(no script url)";
/// Share group of samples of an unlisted host in a file that names no page.
pub const NO_PAGE_URL: &str = "(no page url)";

/// Who owns one long task.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskParties {
    /// The leaf frame's party (`None` when the leaf has no script URL).
    pub task: Option<FrameParty>,
    /// The outermost frame with a script URL: where the task entered JavaScript.
    pub entry: Option<FrameParty>,
    /// The window's samples by the group of their leaf frame, most samples first (ties:
    /// by group).
    pub shares: Vec<Share>,
}

/// One group of a task's window samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Share {
    /// `first-party`, `vendor:<name>`, `third-party:unknown`, `(no script url)` or
    /// `(no page url)`.
    pub group: String,
    /// The vendor, for a `vendor:` group.
    pub vendor: Option<Arc<Entity>>,
    /// Samples whose leaf frame is in the group.
    pub samples: u32,
}

/// Entities by domain.
#[derive(Debug, Default)]
struct EntityIndex {
    /// `x.y` entries: that host only.
    exact: FastMap<String, Arc<Entity>>,
    /// `*.x.y` entries, by `x.y`: that host and all under it.
    wildcard: FastMap<String, Arc<Entity>>,
}

impl EntityIndex {
    /// Indexes `entities`; a domain listed twice keeps its first entity. Domains are
    /// lowercased (hosts in trace URLs are, and the dataset has a few capitals).
    fn new(entities: Vec<Entity>) -> Self {
        let mut ix = EntityIndex::default();
        for e in entities {
            let e = Arc::new(e);
            for d in &e.domains {
                let d = d.trim().trim_end_matches('.').to_ascii_lowercase();
                let (map, key) = match d.strip_prefix("*.") {
                    Some(rest) => (&mut ix.wildcard, rest.to_owned()),
                    None => (&mut ix.exact, d),
                };
                if !key.is_empty() {
                    map.entry(key).or_insert_with(|| e.clone());
                }
            }
        }
        ix
    }

    /// The entity of `host`: an exact entry, else the wildcard of the longest suffix of
    /// `host` on a label boundary (the host itself first).
    fn find(&self, host: &str) -> Option<&Arc<Entity>> {
        if let Some(e) = self.exact.get(host) {
            return Some(e);
        }
        let mut h = host;
        loop {
            if let Some(e) = self.wildcard.get(h) {
                return Some(e);
            }
            h = &h[h.find('.')? + 1..];
        }
    }
}

/// The dataset, parsed once per process.
fn dataset() -> &'static EntityIndex {
    static INDEX: OnceLock<EntityIndex> = OnceLock::new();
    INDEX.get_or_init(|| {
        let entities: Vec<Entity> =
            serde_json::from_str(DATASET_JSON).expect("the bundled entities.json is valid");
        EntityIndex::new(entities)
    })
}

/// `--party-overrides FILE`: `{"first_party_domains": [...], "entities": [...]}`; other
/// top-level keys (a `"description"`: JSON has no comments) are kept in `other` to be
/// warned about.
#[derive(Debug, Default, serde::Deserialize)]
struct OverridesFile {
    #[serde(default)]
    first_party_domains: Vec<String>,
    #[serde(default)]
    entities: Vec<Entity>,
    #[serde(flatten)]
    other: std::collections::BTreeMap<String, serde_json::Value>,
}

/// The overrides file may hold at most this many bytes (it is read whole).
const MAX_OVERRIDES_BYTES: u64 = 64 << 20;

/// The parties' settings of a run: the overrides (the dataset is shared by all).
#[derive(Debug, Default)]
pub struct Parties {
    /// Registrable domains (or hosts) that count as first party on every page, with
    /// every host under them (a set: a host is looked up once per label of it).
    first_party: std::collections::HashSet<String, foldhash::fast::RandomState>,
    overrides: EntityIndex,
    /// The overrides file read (`--party-overrides`): an input no output may overwrite.
    pub(crate) file: Option<std::path::PathBuf>,
    /// What the overrides file held that was left out (unknown top-level keys).
    warnings: Vec<String>,
}

impl Parties {
    /// No overrides: the page's site is the only first party, the dataset the only vendors.
    pub fn new() -> Self {
        Parties::default()
    }

    /// Reads `--party-overrides FILE`. Errors name the file and what is wrong with it (a
    /// JSON error's line and column, an entity without a name or domains).
    pub fn from_overrides_file(path: &Path) -> Result<Parties, String> {
        let shown = path.display();
        let meta = std::fs::metadata(path).map_err(|e| format!("{shown}: {e}"))?;
        if meta.len() > MAX_OVERRIDES_BYTES {
            return Err(format!(
                "{shown}: {} bytes; a party overrides file may hold at most {MAX_OVERRIDES_BYTES}",
                meta.len()
            ));
        }
        let bytes = crate::input::side::read(path, MAX_OVERRIDES_BYTES)
            .map_err(|e| format!("{shown} {}", e.why))?;
        let text = String::from_utf8(bytes).map_err(|e| format!("{shown}: not UTF-8 ({e})"))?;
        let mut p = Parties::from_overrides_json(&text).map_err(|e| format!("{shown}: {e}"))?;
        p.file = Some(path.to_path_buf());
        Ok(p)
    }

    /// Parses the overrides' JSON (see [`Parties::from_overrides_file`]): an object
    /// `{"first_party_domains": [...], "entities": [...]}` (other top-level keys are left
    /// out, each named in [`Parties::warnings`]), or an array of entities, as
    /// third-party-web's own `entities.json` is.
    pub fn from_overrides_json(text: &str) -> Result<Parties, String> {
        let bad = |e: serde_json::Error| {
            format!(
                "not a party overrides file ({e}); want {{\"first_party_domains\": [\"…\"], \
                 \"entities\": [{{\"name\", \"company\", \"category\", \"domains\"}}]}} \
                 or an array of entities"
            )
        };
        let mut f: OverridesFile = if text.trim_start().starts_with('[') {
            OverridesFile {
                entities: serde_json::from_str(text).map_err(bad)?,
                ..OverridesFile::default()
            }
        } else {
            serde_json::from_str(text).map_err(bad)?
        };
        let warnings = f
            .other
            .keys()
            .map(|k| {
                format!(
                    "unknown key {k:?} left out (the keys read are \"first_party_domains\" and \
                     \"entities\")"
                )
            })
            .collect();
        for (i, e) in f.entities.iter_mut().enumerate() {
            if e.name.trim().is_empty() {
                return Err(format!("entities[{i}] has an empty \"name\""));
            }
            if e.domains
                .iter()
                .all(|d| d.trim().trim_start_matches("*.").is_empty())
            {
                return Err(format!("entities[{i}] ({}) has no \"domains\"", e.name));
            }
            for (j, d) in e.domains.iter_mut().enumerate() {
                if let Some(n) = normalise_domain(d)
                    .map_err(|why| format!("entities[{i}].domains[{j}] {d:?} {why}"))?
                {
                    *d = n;
                }
            }
        }
        let mut first_party = std::collections::HashSet::default();
        for (i, d) in f.first_party_domains.iter().enumerate() {
            let n = normalise_domain(d)
                .map_err(|why| format!("first_party_domains[{i}] {d:?} {why}"))?;
            if let Some(n) = n {
                first_party.insert(n.trim_start_matches("*.").to_string());
            }
        }
        Ok(Parties {
            first_party,
            overrides: EntityIndex::new(f.entities),
            file: None,
            warnings,
        })
    }

    /// What the overrides file held that was left out, one sentence each (for
    /// `taskchain: warning:` lines); empty without overrides.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// True when `host` is a listed first-party domain or under one: the host and each
    /// of its suffixes on a label boundary looked up in the set.
    fn listed_first_party(&self, host: &str) -> bool {
        if self.first_party.is_empty() {
            return false;
        }
        let mut h = host;
        loop {
            if self.first_party.contains(h) {
                return true;
            }
            match h.find('.') {
                Some(i) => h = &h[i + 1..],
                None => return false,
            }
        }
    }

    /// Who owns a script at `url` on a page whose site is `site` (`None`: unknown).
    /// `None` for a URL without a host.
    pub fn of_url(&self, url: &str, site: Option<&str>) -> Option<FrameParty> {
        let host = host_of(url)?;
        Some(self.of_host(&host, site))
    }

    /// [`Parties::of_url`] for a host (lowercase, without port).
    pub fn of_host(&self, host: &str, site: Option<&str>) -> FrameParty {
        self.host(host).on(site)
    }

    /// What decides a host's owner whatever the page: its registrable domain, whether it
    /// is listed as first party, its entity.
    fn host(&self, host: &str) -> HostOwner {
        HostOwner {
            etld1: registrable_domain(host).into(),
            listed_first_party: self.listed_first_party(host),
            vendor: self
                .overrides
                .find(host)
                .or_else(|| dataset().find(host))
                .cloned(),
        }
    }
}

/// A host's owner before the page's site is known (see [`HostOwner::on`]).
#[derive(Clone, Debug)]
struct HostOwner {
    etld1: Arc<str>,
    listed_first_party: bool,
    vendor: Option<Arc<Entity>>,
}

impl HostOwner {
    /// The owner on a page of `site`: first party before any vendor.
    fn on(&self, site: Option<&str>) -> FrameParty {
        let first = self.listed_first_party || site == Some(&*self.etld1);
        let vendor = if first { None } else { self.vendor.clone() };
        let party = if first {
            Some(Party::FirstParty)
        } else if vendor.is_some() || site.is_some() {
            Some(Party::ThirdParty)
        } else {
            None
        };
        FrameParty {
            party,
            vendor,
            etld1: self.etld1.clone(),
        }
    }
}

/// A domain of the overrides as hosts in trace URLs are written: lowercase, without a
/// trailing dot, an international name in punycode (`bücher.example` →
/// `xn--bcher-kva.example`), an IPv6 literal without brackets; a scheme (`https://`) or a
/// port (`:8443`) is dropped (an entry names hosts, which any scheme or port serves).
/// `*.` is kept. `Ok(None)` for an empty entry; `Err` (why) for one that is no host: with
/// a path, a query, a user name, or characters no host has.
fn normalise_domain(entry: &str) -> Result<Option<String>, String> {
    let d = entry.trim();
    let (wild, d) = match d.strip_prefix("*.") {
        Some(rest) => ("*.", rest),
        None => ("", d),
    };
    let d = d.trim_end_matches('.');
    if d.is_empty() {
        return Ok(None);
    }
    // Most entries are already hosts as traces write them.
    if d.bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
        && !d.starts_with('.')
    {
        return Ok(Some(format!("{wild}{d}")));
    }
    let with_scheme = if d.contains("://") {
        d.to_string()
    } else {
        format!("http://{d}")
    };
    let u = url::Url::parse(&with_scheme).map_err(|e| format!("is not a host name ({e})"))?;
    if !u.username().is_empty() || u.password().is_some() {
        return Err("names a user: a domain is a host name alone".into());
    }
    if u.path() != "/" && !u.path().is_empty() || u.query().is_some() || u.fragment().is_some() {
        return Err("has a path or query: a domain is a host name alone".into());
    }
    let host = match u.host() {
        Some(url::Host::Domain(h)) => h.trim_end_matches('.').to_string(),
        Some(url::Host::Ipv4(a)) => a.to_string(),
        Some(url::Host::Ipv6(a)) => a.to_string(),
        None => return Err("has no host name".into()),
    };
    Ok(Some(format!("{wild}{host}")))
}

/// The host of a URL, lowercased, without userinfo, port or the brackets of an IPv6
/// address; `blob:` and `filesystem:` URLs give their inner URL's host. `None` for a URL
/// without an authority (`data:`, `about:`, `javascript:`, a bare path) or an empty host.
/// Chrome writes canonical URLs (punycode hosts), so no IDNA mapping is needed.
pub fn host_of(url: &str) -> Option<String> {
    let mut u = url.trim();
    for inner in ["blob:", "filesystem:"] {
        // Compared as bytes: the URL's byte at `inner.len()` may be inside a character.
        let head = u.as_bytes().get(..inner.len());
        if u.len() > inner.len() && head.is_some_and(|h| h.eq_ignore_ascii_case(inner.as_bytes())) {
            u = &u[inner.len()..];
        }
    }
    let colon = u.find(':')?;
    let scheme = &u[..colon];
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    {
        return None;
    }
    let rest = u[colon + 1..].strip_prefix("//")?;
    let authority = &rest[..rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len())];
    let host_port = &authority[authority.rfind('@').map_or(0, |i| i + 1)..];
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        &v6[..v6.find(']')?]
    } else {
        &host_port[..host_port.find(':').unwrap_or(host_port.len())]
    };
    let host = host.trim_end_matches('.');
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// The registrable domain (eTLD+1) of a lowercase host: by the Public Suffix List (ICANN
/// and private rules, default `*`), so `img.shop-cdn.co.uk` → `shop-cdn.co.uk` and
/// `me.github.io` → `me.github.io`. An IP address, a one-label host (`localhost`) or a host
/// that is itself a public suffix is its own site.
pub fn registrable_domain(host: &str) -> &str {
    let ip = || match host.contains(':') {
        true => host.parse::<Ipv6Addr>().is_ok(),
        false => host.ends_with(|c: char| c.is_ascii_digit()) && host.parse::<Ipv4Addr>().is_ok(),
    };
    if !host.contains('.') || ip() {
        return host;
    }
    psl::domain(host.as_bytes())
        .and_then(|d| std::str::from_utf8(d.as_bytes()).ok())
        .map(|d| &host[host.len() - d.len()..])
        .unwrap_or(host)
}

/// Parties of one file's frames, with each script URL looked up once (a file's tasks
/// share a few dozen script URLs).
#[derive(Debug)]
pub(crate) struct FileParties<'a> {
    parties: &'a Parties,
    /// URL → its host's owner (`None`: no host).
    urls: std::cell::RefCell<FastMap<String, Option<HostOwner>>>,
}

impl<'a> FileParties<'a> {
    /// An empty cache over `parties`.
    pub(crate) fn new(parties: &'a Parties) -> Self {
        FileParties {
            parties,
            urls: Default::default(),
        }
    }

    /// [`Parties::of_url`], looking each URL up once.
    pub(crate) fn of_url(&self, url: &str, site: Option<&str>) -> Option<FrameParty> {
        if url.is_empty() {
            return None;
        }
        let mut urls = self.urls.borrow_mut();
        if let Some(owner) = urls.get(url) {
            return owner.as_ref().map(|o| o.on(site));
        }
        let owner = host_of(url).map(|h| self.parties.host(&h));
        let party = owner.as_ref().map(|o| o.on(site));
        urls.insert(url.to_owned(), owner);
        party
    }

    /// The site of a page URL: its host's registrable domain.
    pub(crate) fn site_of(&self, page_url: &str) -> Option<String> {
        host_of(page_url).map(|h| registrable_domain(&h).to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registrable_domains_by_the_public_suffix_list() {
        let cases = [
            ("www.shop.test", "shop.test"), // unlisted TLD: the default rule `*`
            ("static.shop.test", "shop.test"),
            ("img.shop-cdn.co.uk", "shop-cdn.co.uk"), // not the last two labels
            ("shop-cdn.co.uk", "shop-cdn.co.uk"),
            ("a.b.example.org.uk", "example.org.uk"), // Lighthouse's regex reads org.uk
            ("me.github.io", "me.github.io"),         // private section
            ("cdn.me.github.io", "me.github.io"),
            ("github.io", "github.io"), // a suffix alone is its own site
            ("co.uk", "co.uk"),
            ("d1234.cloudfront.net", "d1234.cloudfront.net"),
            ("www.googletagmanager.com", "googletagmanager.com"),
            ("localhost", "localhost"),
            ("127.0.0.1", "127.0.0.1"),
            ("10.0.0.12", "10.0.0.12"),
            ("::1", "::1"),
            ("2001:db8::7", "2001:db8::7"),
            ("intranet", "intranet"),
            ("xn--80ak6aa92e.com", "xn--80ak6aa92e.com"),
            ("a.b.c.kawasaki.jp", "b.c.kawasaki.jp"), // `*.kawasaki.jp` wildcard rule
            ("city.kawasaki.jp", "city.kawasaki.jp"), // `!city.kawasaki.jp` exception
        ];
        for (host, want) in cases {
            assert_eq!(registrable_domain(host), want, "{host}");
        }
    }

    #[test]
    fn hosts_of_urls() {
        let cases = [
            ("https://www.shop.test/app.js", Some("www.shop.test")),
            (
                "https://WWW.Shop.Test:8443/a.js?v=1#x",
                Some("www.shop.test"),
            ),
            ("https://static.shop.test?x=a.b/c", Some("static.shop.test")),
            (
                "https://user:pw@cdn.example.com:443/x",
                Some("cdn.example.com"),
            ),
            ("http://127.0.0.1:45745/orders.html", Some("127.0.0.1")),
            ("http://[::1]:8080/x.js", Some("::1")),
            ("http://localhost:3000/", Some("localhost")),
            ("https://example.com./a.js", Some("example.com")),
            ("blob:https://www.shop.test/6f1c-44", Some("www.shop.test")),
            (
                "wss://socket.vendor.example/feed",
                Some("socket.vendor.example"),
            ),
            ("chrome-extension://abcdefgh/content.js", Some("abcdefgh")),
            ("data:text/javascript,1", None),
            ("about:blank", None),
            ("file:///home/me/app.js", None),
            ("app.js", None),
            ("", None),
            ("://x", None),
            // Non-ASCII where `blob:` or `filesystem:` would end (bytes 5 and 11).
            ("/ü例/app.js", None),
            ("node:i\u{FFFD}\u{FFFD}nal/timers", None),
            ("blob:https://例え.jp/x", Some("例え.jp")),
        ];
        for (url, want) in cases {
            assert_eq!(host_of(url).as_deref(), want, "{url}");
        }
    }

    #[test]
    fn dataset_vendors_with_wildcards_and_exact_hosts() {
        let p = Parties::new();
        let site = Some("shop.test");
        let v = |url: &str| {
            p.of_url(url, site)
                .and_then(|f| f.vendor)
                .map(|e| e.name.clone())
        };
        // `*.googletagmanager.com` matches the domain and every host under it.
        assert_eq!(
            v("https://www.googletagmanager.com/gtm.js?id=GTM-1").as_deref(),
            Some("Google Tag Manager")
        );
        assert_eq!(
            v("https://googletagmanager.com/gtm.js").as_deref(),
            Some("Google Tag Manager")
        );
        // `adservice.google.co.uk` is an exact host: other google.co.uk hosts are not it.
        assert_eq!(
            v("https://adservice.google.co.uk/x.js").as_deref(),
            Some("Google/Doubleclick Ads")
        );
        assert_ne!(
            v("https://maps.google.co.uk/x.js").as_deref(),
            Some("Google/Doubleclick Ads")
        );
        // A dataset domain with capitals (`*.Quinstreet.com`) matches lowercase hosts.
        assert!(v("https://x.quinstreet.com/a.js").is_some());
        let unknown = p
            .of_url("https://cdn.unknown-vendor.test/w.js", site)
            .unwrap();
        assert_eq!(unknown.party, Some(Party::ThirdParty));
        assert_eq!(unknown.vendor, None);
        assert_eq!(&*unknown.etld1, "unknown-vendor.test");
        assert_eq!(unknown.group(), "third-party:unknown");
    }

    #[test]
    fn first_party_beats_overrides_beats_dataset() {
        let p = Parties::from_overrides_json(
            r#"{"first_party_domains": ["shop-cdn.co.uk"],
                "entities": [
                  {"name": "Our GTM fork", "company": "Us", "category": "tag-manager",
                   "domains": ["*.googletagmanager.com"]},
                  {"name": "Widget Co", "domains": ["*.widgets.example", "cdn.other.example"],
                   "homepage": "https://widgets.example/"}]}"#,
        )
        .unwrap();
        let site = Some("shop.test");
        let of = |url: &str| p.of_url(url, site).unwrap();
        let first = of("https://img.shop-cdn.co.uk/i.js");
        assert_eq!(
            (first.party, first.vendor, &*first.etld1),
            (Some(Party::FirstParty), None, "shop-cdn.co.uk")
        );
        assert_eq!(
            of("https://static.shop.test/a.js").party,
            Some(Party::FirstParty)
        );
        let gtm = of("https://www.googletagmanager.com/gtm.js");
        assert_eq!(gtm.vendor.unwrap().name, "Our GTM fork");
        assert_eq!(
            of("https://a.widgets.example/w.js").group(),
            "vendor:Widget Co"
        );
        assert_eq!(
            of("https://cdn.other.example/w.js").group(),
            "vendor:Widget Co"
        );
        assert_eq!(
            of("https://www.other.example/w.js").group(),
            "third-party:unknown"
        );
        // The page's own site wins over every list: a tag manager's own page is first party.
        let own = p
            .of_url(
                "https://www.googletagmanager.com/a.js",
                Some("googletagmanager.com"),
            )
            .unwrap();
        assert_eq!((own.party, own.vendor), (Some(Party::FirstParty), None));
    }

    #[test]
    fn ip_and_localhost_pages_are_their_own_site() {
        let p = Parties::new();
        let fp = FileParties::new(&p);
        let site = fp.site_of("http://127.0.0.1:45745/orders.html");
        assert_eq!(site.as_deref(), Some("127.0.0.1"));
        let of = |url: &str| fp.of_url(url, site.as_deref()).unwrap();
        assert_eq!(
            of("http://127.0.0.1:9999/a.js").party,
            Some(Party::FirstParty)
        ); // ports do not matter
        assert_eq!(
            of("http://localhost:45745/a.js").party,
            Some(Party::ThirdParty)
        );
        assert_eq!(&*of("http://127.0.0.2/a.js").etld1, "127.0.0.2");
        assert_eq!(fp.of_url("", site.as_deref()), None);
        assert_eq!(fp.of_url("data:text/javascript,1", site.as_deref()), None);
    }

    #[test]
    fn without_a_page_only_lists_decide() {
        let p = Parties::from_overrides_json(r#"{"first_party_domains": ["shop.test"]}"#).unwrap();
        let of = |url: &str| p.of_url(url, None).unwrap();
        assert_eq!(
            of("https://www.shop.test/a.js").party,
            Some(Party::FirstParty)
        );
        assert_eq!(
            of("https://www.googletagmanager.com/g.js").party,
            Some(Party::ThirdParty)
        );
        let unknown = of("https://cdn.unknown-vendor.test/w.js");
        assert_eq!(unknown.party, None);
        assert_eq!(unknown.group(), "(no page url)");
    }

    #[test]
    fn bad_overrides_are_refused_with_what_is_wrong() {
        let err = |t: &str| Parties::from_overrides_json(t).unwrap_err();
        assert!(
            err("[1]").contains("not a party overrides file"),
            "{}",
            err("[1]")
        );
        assert!(
            err(r#"{"entities": [{"name": "", "domains": ["a.b"]}]}"#)
                .contains("entities[0] has an empty \"name\"")
        );
        assert!(
            err(r#"{"entities": [{"name": "X", "domains": []}]}"#)
                .contains("entities[0] (X) has no \"domains\"")
        );
        assert!(err(r#"{"entities": [{"name": "X"}]}"#).contains("missing field `domains`"));
        assert!(err("{").contains("line 1 column 1"));
        let missing =
            Parties::from_overrides_file(Path::new("/nonexistent/overrides.json")).unwrap_err();
        assert!(
            missing.starts_with("/nonexistent/overrides.json: "),
            "{missing}"
        );
    }

    #[test]
    fn listed_first_party_stops_at_label_boundaries() {
        let p = Parties::from_overrides_json(r#"{"first_party_domains": ["shop.test"]}"#).unwrap();
        assert!(p.listed_first_party("a.shop.test"));
        assert!(p.listed_first_party("shop.test"));
        assert!(!p.listed_first_party("myshop.test"));
        assert!(!p.listed_first_party("test"));
    }

    #[test]
    fn override_domains_with_scheme_port_idn_or_ipv6_are_normalised_and_paths_refused() {
        let p = Parties::from_overrides_json(
            r#"{"first_party_domains": ["https://Shop.Test:8443", "bücher.example", "[::1]", "*.cdn.test."],
                "entities": [{"name": "V", "domains": ["https://*.vendor.test", "10.0.0.1:81"]}]}"#,
        )
        .unwrap();
        assert!(p.listed_first_party("shop.test"));
        assert!(p.listed_first_party("xn--bcher-kva.example"));
        assert!(p.listed_first_party("::1"));
        assert!(p.listed_first_party("a.cdn.test"));
        // As hosts come out of trace URLs.
        for url in [
            "http://[::1]:8080/a.js",
            "https://www.xn--bcher-kva.example/b.js",
        ] {
            let f = p.of_url(url, Some("other.test")).unwrap();
            assert_eq!(f.party, Some(Party::FirstParty), "{url}");
        }
        let v = p
            .of_url("https://x.vendor.test/v.js", Some("shop.test"))
            .unwrap();
        assert_eq!(v.vendor.as_deref().map(|e| e.name.as_str()), Some("V"));
        let ip = p.of_url("http://10.0.0.1/v.js", Some("shop.test")).unwrap();
        assert_eq!(ip.vendor.as_deref().map(|e| e.name.as_str()), Some("V"));
        let err = |t: &str| Parties::from_overrides_json(t).unwrap_err();
        let e = err(r#"{"first_party_domains": ["a.b", "shop.test/path"]}"#);
        assert!(
            e.starts_with("first_party_domains[1] \"shop.test/path\" has a path"),
            "{e}"
        );
        let e = err(r#"{"entities": [{"name": "X", "domains": ["a b.test"]}]}"#);
        assert!(
            e.starts_with("entities[0].domains[0] \"a b.test\" is not a host name"),
            "{e}"
        );
    }

    #[test]
    fn unknown_keys_are_warned_and_the_rest_is_read() {
        let p = Parties::from_overrides_json(
            r#"{"description": "our CDNs", "first_party": ["x"],
                "first_party_domains": ["shop-cdn.co.uk"]}"#,
        )
        .unwrap();
        assert_eq!(
            p.warnings(),
            [
                "unknown key \"description\" left out (the keys read are \"first_party_domains\" and \"entities\")",
                "unknown key \"first_party\" left out (the keys read are \"first_party_domains\" and \"entities\")",
            ]
        );
        // The known key was still read: shop-cdn.co.uk is first party on another site.
        let owner = p.of_url("https://img.shop-cdn.co.uk/a.js", Some("shop.test"));
        assert_eq!(owner.unwrap().party, Some(Party::FirstParty));
        assert!(Parties::new().warnings().is_empty());
    }

    #[test]
    fn third_party_webs_entities_array_is_an_overrides_file() {
        // The shape of third-party-web's entities.json: an array, with keys taskchain does
        // not read (homepage, examples).
        let p = Parties::from_overrides_json(
            r#"[{"name": "Widget Co", "company": "Widget", "homepage": "https://w.example",
                 "category": "customer-success", "domains": ["*.widget.example"],
                 "examples": ["cdn.widget.example"]}]"#,
        )
        .unwrap();
        assert!(p.warnings().is_empty());
        let owner = p
            .of_url("https://cdn.widget.example/w.js", Some("shop.test"))
            .unwrap();
        assert_eq!(
            owner.vendor.as_deref().map(|e| e.name.as_str()),
            Some("Widget Co")
        );
        assert!(
            Parties::from_overrides_json(r#"[{"name": "X"}]"#)
                .unwrap_err()
                .contains("missing field `domains`")
        );
    }

    #[test]
    fn a_million_first_party_domains_are_looked_up_by_label_not_scanned() {
        let domains: Vec<String> = (0..1_000_000).map(|i| format!("\"d{i}.test\"")).collect();
        let p = Parties::from_overrides_json(&format!(
            r#"{{"first_party_domains": [{}]}}"#,
            domains.join(",")
        ))
        .unwrap();
        let t = std::time::Instant::now();
        for i in 0..5_000 {
            assert!(p.listed_first_party(&format!("www.d{}.test", i * 199)));
            assert!(!p.listed_first_party(&format!("www.e{i}.test")));
        }
        // A scan of the list per host took 12 s for 5,000 hosts; the set takes ms.
        assert!(
            t.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            t.elapsed()
        );
    }
}

//! `--folded` and `--flamegraph`: the samples inside long tasks as collapsed stacks
//! (Brendan Gregg's format, `frame;frame;frame N`, read by inferno, speedscope and
//! flamegraph.pl), and an SVG flame graph rendered from them with the `inferno` crate.
//! Frames are written as in the chain column (`name (url:line:column)`, `;` → `,`).

use std::collections::BTreeMap;
use std::io::Write;

use crate::time::TimeDelta;

/// What the stack counts are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FoldedWeight {
    /// Number of samples.
    #[default]
    Samples,
    /// Microseconds the samples stand for (clipped to their task).
    Us,
}

/// Folded stacks summed over files.
#[derive(Debug, Default)]
pub struct Folded {
    weight: FoldedWeight,
    stacks: BTreeMap<String, (u64, TimeDelta)>,
}

impl Folded {
    /// Counts by `weight`.
    pub fn new(weight: FoldedWeight) -> Self {
        Folded {
            weight,
            stacks: BTreeMap::new(),
        }
    }

    /// Adds one file's stacks.
    pub fn add(&mut self, stacks: &[(String, u64, TimeDelta)]) {
        for (path, n, t) in stacks {
            let e = self.stacks.entry(path.clone()).or_default();
            e.0 += n;
            e.1 = e.1 + *t;
        }
    }

    fn lines(&self) -> impl Iterator<Item = String> + '_ {
        self.stacks.iter().filter_map(|(path, (n, t))| {
            let count = match self.weight {
                FoldedWeight::Samples => *n,
                FoldedWeight::Us => (t.as_nanos().max(0) as u64 + 500) / 1000,
            };
            (count > 0 && !path.is_empty()).then(|| format!("{path} {count}"))
        })
    }

    /// Writes the collapsed stacks, one per line, sorted.
    pub fn write(&self, mut out: impl Write) -> std::io::Result<()> {
        for l in self.lines() {
            writeln!(out, "{l}")?;
        }
        out.flush()
    }

    /// Renders a flame graph (SVG), roots at the top.
    #[cfg(feature = "cli")]
    pub fn flamegraph(&self, title: &str, out: impl Write) -> std::io::Result<()> {
        // Labels with the script's file name only (`busyLoop (orders.js:14:18)`): a full
        // URL would take a box's width before the name could show.
        let lines: Vec<String> = self
            .lines()
            .map(|l| {
                // Control characters are not allowed in XML: escaped, as on standard error.
                l.split(';')
                    .map(|f| crate::report::text::printable(&short_label(f)).into_owned())
                    .collect::<Vec<_>>()
                    .join(";")
            })
            .collect();
        let mut opt = inferno::flamegraph::Options::default();
        opt.title = crate::report::text::printable(title).into_owned();
        opt.count_name = match self.weight {
            FoldedWeight::Samples => "samples".into(),
            FoldedWeight::Us => "µs".into(),
        };
        opt.deterministic = true;
        // Roots at the top (an icicle graph): deep recursion makes the SVG very tall, and
        // the part a browser shows first should be where the time starts.
        opt.direction = inferno::flamegraph::Direction::Inverted;
        // Frames read `name (url:line:column)`: keep the name when a box is narrow.
        opt.text_truncate_direction = inferno::flamegraph::TextTruncateDirection::Right;
        if lines.is_empty() {
            // inferno refuses empty input; an empty graph says the same thing.
            return write_empty_svg(title, out);
        }
        inferno::flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), out)
            .map_err(std::io::Error::other)
    }
}

/// A frame `name (url:line:column)` (with ` ×N` after it for collapsed recursion) as
/// `name (file:line:column)`: the URL cut to its last path segment (`/` for a page's own
/// inline script); a frame without a position in parentheses as it is.
#[cfg(feature = "cli")]
fn short_label(frame: &str) -> String {
    let Some(open) = frame.rfind(" (") else {
        return frame.to_owned();
    };
    let Some(close) = frame[open..].find(')').map(|c| open + c) else {
        return frame.to_owned();
    };
    let inside = &frame[open + 2..close];
    let Some(slash) = inside.rfind('/') else {
        return frame.to_owned();
    };
    let file = &inside[slash + 1..];
    let file = if file.is_empty() || file.starts_with(':') {
        &inside[slash..]
    } else {
        file
    };
    format!("{} ({file}){}", &frame[..open], &frame[close + 1..])
}

#[cfg(feature = "cli")]
fn write_empty_svg(title: &str, mut out: impl Write) -> std::io::Result<()> {
    let esc = title
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="800" height="60"><text x="10" y="30">{esc}: no samples inside long tasks</text></svg>"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_over_files_in_both_units() {
        let mut f = Folded::new(FoldedWeight::Samples);
        f.add(&[("a;b".into(), 2, TimeDelta::from_nanos(1_500))]);
        f.add(&[
            ("a;b".into(), 1, TimeDelta::from_nanos(400)),
            ("a".into(), 1, TimeDelta::from_micros(7)),
        ]);
        let mut out = Vec::new();
        f.write(&mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "a 1\na;b 3\n");
        f.weight = FoldedWeight::Us;
        let mut out = Vec::new();
        f.write(&mut out).unwrap();
        // 1.5 µs + 0.4 µs = 1.9 µs → 2.
        assert_eq!(String::from_utf8(out).unwrap(), "a 7\na;b 2\n");
    }

    #[cfg(feature = "cli")]
    #[test]
    fn flame_graph_labels_put_the_function_first_with_the_file_name_only() {
        assert_eq!(
            short_label("busyLoop (http://127.0.0.1:45745/js/orders.js:14:18)"),
            "busyLoop (orders.js:14:18)"
        );
        assert_eq!(
            short_label("fib (https://x.test/a/fib.js:4:13) ×15"),
            "fib (fib.js:4:13) ×15"
        );
        assert_eq!(
            short_label("wait (http://127.0.0.1:8080/:9:20)"),
            "wait (/:9:20)"
        );
        assert_eq!(short_label("(program)"), "(program)");
        assert_eq!(short_label("(garbage collector)"), "(garbage collector)");
        assert_eq!(short_label("f (native:1:2)"), "f (native:1:2)");
    }

    #[cfg(feature = "cli")]
    #[test]
    fn the_flame_graph_shows_short_labels_and_the_folded_file_full_ones() {
        let mut f = Folded::new(FoldedWeight::Samples);
        let path = "onOrderClick (http://127.0.0.1:45745/orders.js:41:22);\
                    stepLoadCatalogue (http://127.0.0.1:45745/lib/catalogue.js:3:1)";
        f.add(&[(path.into(), 5, TimeDelta::from_micros(5))]);
        let mut svg = Vec::new();
        f.flamegraph("t", &mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert!(
            svg.contains("stepLoadCatalogue (catalogue.js:3:1)"),
            "{svg}"
        );
        assert!(svg.contains("onOrderClick (orders.js:41:22)"), "{svg}");
        assert!(!svg.contains("127.0.0.1"), "{svg}");
        let mut folded = Vec::new();
        f.write(&mut folded).unwrap();
        assert_eq!(String::from_utf8(folded).unwrap(), format!("{path} 5\n"));
    }

    #[cfg(feature = "cli")]
    #[test]
    fn the_flame_graph_holds_only_characters_xml_allows() {
        // XML 1.0 allows no control character but tab, new line and carriage return, and
        // neither U+FFFE nor U+FFFF: such characters in a name show as escapes.
        let mut f = Folded::new(FoldedWeight::Samples);
        f.add(&[(
            "onClick;inner\u{1}x\0y\u{fffe} (a.js:1:2)".into(),
            3,
            TimeDelta::ZERO,
        )]);
        let mut svg = Vec::new();
        f.flamegraph("t\u{7}", &mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        let bad = |c: char| {
            (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
                || matches!(c, '\u{fffe}' | '\u{ffff}')
        };
        assert!(!svg.chars().any(bad), "{svg}");
        assert!(
            svg.contains("inner\\x01x\\x00y\\u{fffe} (a.js:1:2)"),
            "{svg}"
        );
    }
}

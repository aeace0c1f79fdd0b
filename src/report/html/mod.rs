//! `--html` (and `compare --html`): one self-contained page a team can read in a pull
//! request. Server-rendered HTML and SVG with no script at all (its Content-Security-Policy
//! forbids scripts, and any request: styles inline, no fonts, no images), so it opens from a
//! CI artifact, an e-mail or `file://` with nothing to load. Its data is inline as
//! `<script type="application/json" id="taskchain-data">` (never run): the objects of
//! `--format json` (`tasks`, `errors`) for the tasks the page shows, with `summary`,
//! `files`, `left_out` and, when the run has them, `interactions`.
//!
//! Sections, each under an `<h2>`: Verdict (its first paragraph is the verdict as plain
//! text), with `compare` Regressions, Improvements, New chains and Gone chains, then Who owns
//! the time, Top chains, Interactions (when present), Long tasks (a card with a flame chart
//! for each of the longest, the rest as table rows) and Traces. What a cap left out is said
//! where it was left out.

pub(crate) mod flame;
mod page;

use std::io::{self, Write};

pub(crate) use page::{CompareLine, Comparison, Page};

use super::sink::{FileDone, Out, Sink, Totals};
use super::{FileError, FileReport, ReportRow};

/// Cards of the longest tasks by default (`--html-tasks`).
pub(crate) const DEFAULT_CARDS: usize = 50;

/// `s` with `&`, `<`, `>`, `"` and `'` as character references: text and attribute
/// values that show as text, whatever they hold.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON text made safe inside `<script type="application/json">`: `<`, `>` and `&` as
/// `\u003c`, `\u003e`, `\u0026` (so `</script>` or `<!--` cannot end or change the
/// element), and U+2028 / U+2029 as `\u2028` / `\u2029` (line terminators to older
/// JavaScript parsers). In JSON these characters occur only inside strings, where the
/// escapes mean the same characters.
pub(crate) fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// `--html FILE`: the page, written when the run is over.
pub(crate) struct HtmlSink<'a> {
    page: Page,
    out: Out<'a>,
}

impl<'a> HtmlSink<'a> {
    /// A page with `cards` cards at most, chains grouped by `key`.
    pub(crate) fn new(cards: usize, key: super::chain_key::ChainKey, out: Out<'a>) -> Self {
        HtmlSink {
            page: Page::new(cards, key),
            out,
        }
    }
}

impl Sink for HtmlSink<'_> {
    fn rows(&mut self, rows: &[ReportRow]) -> io::Result<()> {
        for r in rows {
            self.page.row(r.clone());
        }
        Ok(())
    }

    fn file_done(&mut self, done: &FileDone<'_>) -> io::Result<()> {
        self.page.file_done(done);
        Ok(())
    }

    fn finish(self: Box<Self>, _: &Totals) -> io::Result<()> {
        let mut w = io::BufWriter::new(self.out);
        self.page.write(None, &mut w)?;
        w.flush()
    }
}

/// The reports of one set (a `compare`'s candidates) as a page's rows and files.
pub(crate) fn add_reports(page: &mut Page, reports: &[FileReport], errors: &[FileError]) {
    use super::sink::FileOutcome;
    for rep in reports {
        for r in &rep.rows {
            page.row(r.clone());
        }
        page.file_report(rep, &[]);
    }
    for e in errors {
        page.file_outcome(&FileOutcome::Failed(e.clone()), &[]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_script_data_cannot_become_markup() {
        assert_eq!(
            esc(r#"</script><img src=x onerror="alert('1')">&"#),
            "&lt;/script&gt;&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;"
        );
        let json = serde_json::to_string("</script><!-- \u{2028}\u{2029} & \"q\"").unwrap();
        let safe = script_json(&json);
        assert_eq!(
            safe,
            r#""\u003c/script\u003e\u003c!-- \u2028\u2029 \u0026 \"q\"""#
        );
        assert!(!safe.contains('<') && !safe.contains('\u{2028}'));
        // The same string once parsed.
        let back: String = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, "</script><!-- \u{2028}\u{2029} & \"q\"");
    }
}

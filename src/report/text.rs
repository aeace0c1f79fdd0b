//! Text helpers of the human-readable outputs (the stderr summary, Markdown, the
//! comparison table): counted nouns, table cells, chains shortened to fit a cell.

/// `n` and the noun for it: `1 file`, `2 files`.
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Text safe in a table cell and a code span.
pub(crate) fn cell(s: &str) -> String {
    s.replace('|', "\\|")
        .replace(['\n', '\r'], " ")
        .replace('`', "'")
}

/// `s` from the input (a name, a file, an error) as a Markdown table cell or list item that
/// shows as text: a code span of [`cell`], in which GitHub renders no HTML, link or
/// emphasis (a function named `<img src=…>` or `[x](https://…)` in a PR comment). Empty
/// for an empty `s` (an empty code span shows its backticks).
pub(crate) fn code(s: &str) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!("`{}`", cell(s))
    }
}

/// Shortens a chain text (`frame > frame > …`, see [`super::chain_text`]) to about `max`
/// characters for a table cell, by whole frames: keeps the first frame (where the task
/// entered JavaScript), the leaf, and the frames before the leaf that fit, and says how
/// many frames are left out between them (`onClick > …3… > scoreRows`), so chains that
/// differ at either end or in depth stay distinct. A name or URL is never cut: when the
/// first frame and the leaf alone are longer than `max`, they are kept whole.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    let chars = |t: &str| t.chars().count();
    let frames: Vec<&str> = s.split(" > ").collect();
    let n = frames.len();
    if chars(s) <= max || n <= 2 {
        return s.to_string();
    }
    // `first > …hidden… > ` plus the kept frames joined by ` > `.
    let width = |kept: usize| {
        let hidden = n - 1 - kept;
        let tail: usize = frames[n - kept..].iter().map(|f| chars(f) + 3).sum();
        chars(frames[0]) + 3 + chars(&format!("…{hidden}…")) + tail
    };
    // The leaf always; frames before it while the text fits (all of them cannot: the whole
    // chain is over `max`).
    let mut kept = 1;
    while kept + 1 < n - 1 && width(kept + 1) <= max {
        kept += 1;
    }
    let hidden = n - 1 - kept;
    format!(
        "{} > …{hidden}… > {}",
        frames[0],
        frames[n - kept..].join(" > ")
    )
}

/// `line` with the characters by which text from the input could act on a terminal or a
/// log written as escapes: control characters (a new line that forges another message,
/// an ESC sequence, a NUL) as `\x0a`, the C1 controls, line separators, bidirectional
/// overrides and the noncharacters U+FFFE and U+FFFF as `\u{202e}`. A message stays one
/// line and shows what the input holds; in an SVG, no character XML 1.0 refuses is left.
// Only the command line writes to standard error and flame graphs.
#[cfg_attr(not(feature = "cli"), allow(dead_code, unreachable_pub))]
pub fn printable(line: &str) -> std::borrow::Cow<'_, str> {
    fn acts(c: char) -> bool {
        c.is_control()
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{fffe}' | '\u{ffff}')
    }
    if !line.chars().any(acts) {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 16);
    for c in line.chars() {
        match c {
            c if acts(c) && (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if acts(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_would_act_on_a_terminal_is_escaped() {
        assert_eq!(printable("plain é 漢 text"), "plain é 漢 text");
        assert!(matches!(printable("plain"), std::borrow::Cow::Borrowed(_)));
        // A forged second message, an ESC sequence, a NUL, a tab.
        assert_eq!(
            printable("x\n::error file=a::y\u{1b}[2K\0\t"),
            "x\\x0a::error file=a::y\\x1b[2K\\x00\\x09"
        );
        // C1 control, line separator, right-to-left override.
        assert_eq!(
            printable("a\u{85}b\u{2028}c\u{202e}d"),
            "a\\u{85}b\\u{2028}c\\u{202e}d"
        );
    }

    #[test]
    fn shortened_chains_keep_both_ends_and_the_depth() {
        let chain = |depth: usize| {
            let mut f = vec!["(anonymous) (http://h/a.js:1:1)"];
            f.extend(std::iter::repeat_n("foo (http://h/a.js:3:9)", depth));
            f.push("count (http://h/a.js:8:2)");
            f.join(" > ")
        };
        // 1 + 4 + 1 frames, 40 characters kept: the first frame (31), the marker, the leaf.
        let short = chain(4);
        assert_eq!(shorten(&short, 500), short);
        assert_eq!(
            shorten(&short, 70),
            "(anonymous) (http://h/a.js:1:1) > …4… > count (http://h/a.js:8:2)"
        );
        // Room for the leaf and one `foo`: 31 + 12 + 25 + 3 + 23 = 94.
        assert_eq!(
            shorten(&chain(11), 94),
            "(anonymous) (http://h/a.js:1:1) > …10… > foo (http://h/a.js:3:9) > count (http://h/a.js:8:2)"
        );
        assert_ne!(shorten(&chain(4), 70), shorten(&chain(11), 70));
        // A name or URL is never cut: a single frame, or two, longer than the cell stay
        // whole, and so do the first frame and the leaf of a longer chain.
        assert_eq!(shorten("abcdefghij", 5), "abcdefghij");
        assert_eq!(shorten("onClick > scoreRows", 5), "onClick > scoreRows");
        assert_eq!(
            shorten("onClick > a > b > c > scoreRows", 10),
            "onClick > …3… > scoreRows"
        );
        // The whole chain is 31 characters; in 30 there is room for one frame more (`c`:
        // 7 + 3 + 3 + (3 + 1) + (3 + 9) = 29) but not two (33).
        assert_eq!(
            shorten("onClick > a > b > c > scoreRows", 31),
            "onClick > a > b > c > scoreRows"
        );
        assert_eq!(
            shorten("onClick > a > b > c > scoreRows", 30),
            "onClick > …2… > c > scoreRows"
        );
    }
}

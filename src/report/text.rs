//! Text helpers of the human-readable outputs (the stderr summary, Markdown, the
//! comparison table): counted nouns, table cells, chains shortened to fit a cell.

/// `n` and the noun for it: `1 file`, `2 files`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Text safe in a table cell and a code span.
pub fn cell(s: &str) -> String {
    s.replace('|', "\\|")
        .replace(['\n', '\r'], " ")
        .replace('`', "'")
}

/// Shortens a chain text (`frame > frame > …`, see [`super::chain_text`]) to about `max`
/// characters for a table cell: keeps the first frame (where the task entered JavaScript)
/// and the frames at the end (the leaf side) that fit, and says how many frames are left
/// out between them, so chains that differ at either end or in depth stay distinct.
pub fn shorten(s: &str, max: usize) -> String {
    let chars = |t: &str| t.chars().count();
    if chars(s) <= max {
        return s.to_string();
    }
    let frames: Vec<&str> = s.split(" > ").collect();
    let first = frames[0];
    // Frames from the leaf back while they fit beside the first one and the marker.
    let mut room = max.saturating_sub(chars(first) + 12);
    let mut kept = 0;
    for f in frames[1..].iter().rev() {
        let need = chars(f) + if kept == 0 { 0 } else { 3 };
        if need > room {
            break;
        }
        room -= need;
        kept += 1;
    }
    if kept == 0 || frames.len() < 3 {
        // One frame is too long for the cell: its end, as it is.
        let n = chars(s);
        return format!("…{}", s.chars().skip(n + 1 - max).collect::<String>());
    }
    let hidden = frames.len() - 1 - kept;
    let tail = frames[frames.len() - kept..].join(" > ");
    if hidden == 0 {
        return format!("{first} > {tail}");
    }
    format!("{first} > …{hidden}… > {tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // A single frame longer than the cell keeps its end.
        assert_eq!(shorten("abcdefghij", 5), "…ghij");
    }
}

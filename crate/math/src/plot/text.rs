//! Text in a figure without a DOM to measure it (plotters' text measuring goes through the DOM
//! in wasm, and the views lay out before any drawing): widths estimated per character, a CJK
//! character a full em; lines wrapped between words or, in Chinese, between characters, never
//! before a closing mark; a text that cannot fit cut with an ellipsis. A file of its own: the
//! layout's arithmetic, apart from the canvas that draws it (`super`).

/// A wide character: CJK ideographs and punctuation, kana, Hangul, full-width forms.
fn is_wide(c: char) -> bool {
    matches!(c, '\u{1100}'..='\u{115f}' | '\u{2e80}'..='\u{a4cf}' | '\u{ac00}'..='\u{d7a3}'
        | '\u{f900}'..='\u{faff}' | '\u{fe30}'..='\u{fe4f}' | '\u{ff00}'..='\u{ff60}' | '\u{ffe0}'..='\u{ffe6}')
}

/// Estimated width in pixels of `text` at `size` px, on the wide side: SVG text cannot be
/// measured here (the core draws without a DOM), and the page's sans-serif differs by engine
/// and system (Firefox's DejaVu Sans is wider than Chromium's default), so a Latin character is
/// counted as 0.62 em, above the average of common sans-serif faces, and a wide (CJK) one as 1 em.
pub fn text_width(text: &str, size: u32) -> i32 {
    let em_hundredths: u32 = text
        .chars()
        .map(|c| if is_wide(c) { 100 } else { 62 })
        .sum();
    (em_hundredths * size).div_ceil(100) as i32
}

/// `text` at `size` px when it fits `width` on one line, else at 2 px smaller (not under 12 px)
/// and wrapped: the size and the lines.
pub fn fit(text: &str, size: u32, width: i32) -> (u32, Vec<String>) {
    if text_width(text, size) <= width {
        return (size, vec![text.to_string()]);
    }
    let size = size.saturating_sub(2).max(12).min(size);
    (size, wrap(text, size, width))
}

/// `text` broken into lines no wider than `width` px at `size` px (estimated by [`text_width`]):
/// between words, and between any two wide characters, as Chinese is broken. A word longer than
/// a line is broken between characters.
pub fn wrap(text: &str, size: u32, width: i32) -> Vec<String> {
    wrap_words(text, size, width)
        .into_iter()
        .flat_map(|l| split_long(&l, size, width))
        .collect()
}

/// Like [`wrap`], but a word longer than a line is kept whole on a line of its own.
pub fn wrap_words(text: &str, size: u32, width: i32) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in words(text) {
        let joined = format!("{line}{word}");
        if line.is_empty() || text_width(joined.trim_end(), size) <= width {
            line = joined;
            continue;
        }
        lines.push(line.trim_end().to_string());
        line = word.trim_start().to_string();
    }
    lines.push(line.trim_end().to_string());
    lines
}

/// The units a line may break after: a Latin word with the spaces after it, or one wide
/// character (with any closing punctuation or spaces that follow it, which may not start a line).
/// A short full-width parenthetical, up to [`SHORT_ASIDE`] characters with its brackets, is one
/// unit: "top-k（确定性）" breaks before "（", not inside it.
fn words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<String> = Vec::new();
    let mut open = false; // whether the last unit still takes characters
    let mut aside = 0; // characters of a short parenthetical still to join the last unit
    for (i, &c) in chars.iter().enumerate() {
        if aside > 0 {
            out.last_mut().expect("an aside starts a unit").push(c);
            aside -= 1;
            continue;
        }
        if c == '（' {
            if let Some(len) = chars[i..].iter().take(SHORT_ASIDE).position(|&x| x == '）') {
                out.push(c.to_string());
                (aside, open) = (len, false);
                continue;
            }
        }
        let closing = matches!(
            c,
            '，' | '。' | '；' | '：' | '、' | '）' | '！' | '？' | ')' | ',' | '.' | ';' | ':'
        );
        match out.last_mut() {
            Some(last) if c == ' ' || (open && !is_wide(c)) || closing => {
                last.push(c);
                open = c != ' ' && !is_wide(c);
            }
            _ => {
                out.push(c.to_string());
                open = !is_wide(c);
            }
        }
    }
    out
}

/// The longest full-width parenthetical kept on one line, its brackets included.
const SHORT_ASIDE: usize = 6;

/// A line wider than `width` (one long word) cut between characters.
fn split_long(line: &str, size: u32, width: i32) -> Vec<String> {
    let mut out = vec![String::new()];
    for c in line.chars() {
        let last = out.last_mut().expect("out starts with a line");
        if !last.is_empty() && text_width(&format!("{last}{c}"), size) > width {
            out.push(c.to_string());
        } else {
            last.push(c);
        }
    }
    out
}

/// `text` cut to fit `width` px at `size` px, ending in "…" where it was cut: a label that does
/// not fit its room says so rather than vanishing or running into its neighbour. Empty when not
/// even one character and the ellipsis fit.
pub fn ellipsize(text: &str, size: u32, width: i32) -> String {
    if text_width(text, size) <= width {
        return text.to_string();
    }
    let mut kept = String::new();
    for c in text.chars() {
        if text_width(&format!("{kept}{c}…"), size) > width {
            break;
        }
        kept.push(c);
    }
    if kept.trim().is_empty() {
        String::new()
    } else {
        format!("{}…", kept.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_text_is_counted_a_full_em() {
        assert_eq!(text_width("step time", 12), 67);
        assert_eq!(text_width("每步时间", 12), 48);
        assert_eq!(text_width("E（每次调用）", 12), 80);
    }

    #[test]
    fn wrapped_lines_fit_and_keep_the_text() {
        let english = "The first prompt, call by call: target (blue), draft (orange)";
        let chinese = "第一个提示词，逐次调用：目标模型（蓝，标出决定的 token 数），草稿（橙）";
        for (text, joiner) in [(english, " "), (chinese, "")] {
            for width in [80, 150, 300] {
                let lines = wrap(text, 14, width);
                assert!(lines.len() > 1, "{text} at {width}");
                for line in &lines {
                    assert!(text_width(line, 14) <= width, "{line:?} at {width}");
                    assert!(!line.starts_with(['，', '：', '）']), "{line:?}");
                }
                let again = lines.join(joiner);
                assert_eq!(again.replace(' ', ""), text.replace(' ', ""));
            }
        }
        assert_eq!(wrap("short", 14, 300), vec!["short"]);
        // A short parenthetical stays whole; a long one breaks as any Chinese.
        assert_eq!(wrap("top-k（确定性）", 11, 76), ["top-k", "（确定性）"]);
        assert!(wrap("模型（蓝，标出决定的 token 数）", 11, 80).len() > 2);
        // One word longer than a line is cut between characters.
        assert!(wrap(&"x".repeat(40), 12, 60)
            .iter()
            .all(|l| text_width(l, 12) <= 60));
    }

    #[test]
    fn fit_shrinks_then_wraps() {
        assert_eq!(fit("a title", 14, 200), (14, vec!["a title".to_string()]));
        let (size, lines) = fit("最优 γ 随 c 的变化", 14, 100);
        assert_eq!(size, 12);
        assert!(lines.iter().all(|l| text_width(l, 12) <= 100), "{lines:?}");
    }

    #[test]
    fn ellipsized_text_fits_and_says_it_was_cut() {
        assert_eq!(ellipsize("short", 11, 100), "short");
        let long = "a".repeat(60);
        let cut = ellipsize(&long, 11, 100);
        assert!(cut.ends_with('…') && text_width(&cut, 11) <= 100, "{cut}");
        assert!(ellipsize("很长的中文标签很长的中文标签", 11, 50).ends_with('…'));
        assert_eq!(ellipsize("word", 11, 3), "");
    }
}

//! What a message repeats of a rejected text (`super`): a few dozen characters of it, so that a
//! pasted page comes back as one short line, not an alert taller than the screen; and a character
//! that shows nothing, named by its code point where it stands, so that a zero-width space is not
//! reported as a bracket left open. A file of its own: the quoting, apart from the messages.

use super::Text;

/// The most characters of a rejected text that a message repeats: a few dozen, as the page's own
/// messages quote what was typed (`clip`, www/html.js).
pub const QUOTED_MAX: usize = 40;

/// A rejected text as a message repeats it: whole up to [`QUOTED_MAX`] characters, else its
/// start and an ellipsis (a pasted page of text would otherwise come back as one unbreakable
/// line, or as an alert taller than the screen).
pub fn shown(text: &str) -> String {
    if text.chars().count() <= QUOTED_MAX {
        return text.to_string();
    }
    text.chars().take(QUOTED_MAX - 1).chain(['…']).collect()
}

/// The first character of `text` that a reader cannot see (a zero-width space pasted with a
/// config, a direction mark, a control character), said by its code point and name with its
/// position (counted in characters from 1): "unexpected character U+200B (zero width space) at
/// position 3". A parser that reads brackets and separators says this before anything else, so
/// that an invisible character is not reported as a bracket left open.
pub fn invisible_char(text: &str) -> Option<Text> {
    let (i, c, (en, zh)) = text
        .chars()
        .enumerate()
        .find_map(|(i, c)| invisible_name(c).map(|name| (i, c, name)))?;
    let code = format!("U+{:04X}", u32::from(c));
    Some(Text::new(
        format!("unexpected character {code} ({en}) at position {}", i + 1),
        format!("第 {} 个字符是意外的 {code}（{zh}）", i + 1),
    ))
}

/// The name of a character that shows nothing, in English and Chinese; None for a visible one or
/// for whitespace (which the parsers skip).
fn invisible_name(c: char) -> Option<(&'static str, &'static str)> {
    Some(match c {
        '\u{00AD}' => ("soft hyphen", "软连字符"),
        '\u{061C}' => ("Arabic letter mark", "阿拉伯字母标记"),
        '\u{180E}' => ("Mongolian vowel separator", "蒙古文元音分隔符"),
        '\u{200B}' => ("zero width space", "零宽空格"),
        '\u{200C}' => ("zero width non-joiner", "零宽不连字"),
        '\u{200D}' => ("zero width joiner", "零宽连字"),
        '\u{200E}' => ("left-to-right mark", "从左到右标记"),
        '\u{200F}' => ("right-to-left mark", "从右到左标记"),
        '\u{202A}' => ("left-to-right embedding", "从左到右嵌入"),
        '\u{202B}' => ("right-to-left embedding", "从右到左嵌入"),
        '\u{202C}' => ("pop directional formatting", "弹出方向格式"),
        '\u{202D}' => ("left-to-right override", "从左到右覆盖"),
        '\u{202E}' => ("right-to-left override", "从右到左覆盖"),
        '\u{2060}' => ("word joiner", "词连接符"),
        '\u{2061}'..='\u{2064}' => ("invisible operator", "不可见运算符"),
        '\u{2066}' => ("left-to-right isolate", "从左到右隔离"),
        '\u{2067}' => ("right-to-left isolate", "从右到左隔离"),
        '\u{2068}' => ("first strong isolate", "首个强字符隔离"),
        '\u{2069}' => ("pop directional isolate", "弹出方向隔离"),
        '\u{FEFF}' => (
            "zero width no-break space, a byte order mark",
            "零宽不换行空格，即字节顺序标记",
        ),
        '\u{FE00}'..='\u{FE0F}' => ("variation selector", "变体选择符"),
        c if c.is_control() && !c.is_whitespace() => ("control character", "控制字符"),
        _ => return None,
    })
}

/// `text` as [`shown`] cuts it, in Chinese quotation marks, with what `{:?}` escapes escaped
/// (a newline as `\n`, a `"` as `\"`), so that a bad value is seen exactly, up to [`shown`]'s
/// cut.
pub fn quoted_zh(text: &str) -> String {
    let debug = format!("{:?}", shown(text));
    format!("“{}”", &debug[1..debug.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;
    use crate::tree::parse_config;

    #[test]
    fn an_invisible_character_is_named() {
        let t = invisible_char("<2\u{200B},2>").unwrap();
        assert_eq!(
            t.en,
            "unexpected character U+200B (zero width space) at position 3"
        );
        assert_eq!(t.zh, "第 3 个字符是意外的 U+200B（零宽空格）");
        assert!(invisible_char("x\u{7}")
            .unwrap()
            .en
            .contains("U+0007 (control character) at position 2"));
        assert!(invisible_char("\u{FEFF}1")
            .unwrap()
            .en
            .contains("byte order mark"));
        assert_eq!(invisible_char(" <2,\t2>\n 中文 é \u{3000}"), None);
    }

    #[test]
    fn a_long_rejected_text_is_repeated_shortened() {
        let nines = "9".repeat(100_000);
        for text in [format!("<{nines}>"), format!("<1,{nines}"), nines.clone()] {
            let message = parse_config(&text, 64).unwrap_err().message(Lang::En);
            assert!(message.chars().count() < 250, "{message}");
            assert!(message.contains("99999…"), "{message}");
        }
        let short = parse_config("<2,x>", 64).unwrap_err().message(Lang::En);
        assert!(short.contains("\"<2,x>\""), "{short}");
    }
}

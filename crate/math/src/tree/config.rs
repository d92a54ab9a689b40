//! Expansion configurations ⟨k₁, k₂, …⟩ as typed by a person: `<2,2,1>`, `⟨2,2,1⟩` or `2,2,1`,
//! with spaces anywhere. Every malformed form gets a message that says what is wrong with it,
//! an invisible character (a pasted zero-width space) by its name and position.

use crate::error::{invisible_char, shown, Error, Text};

/// The most nodes a tree may have unless a caller asks for another budget.
pub const DEFAULT_NODE_BUDGET: usize = 512;

/// The widths k₁ … k_n of an expansion tree; valid by construction.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ExpansionConfig {
    widths: Vec<usize>,
}

impl ExpansionConfig {
    pub fn widths(&self) -> &[usize] {
        &self.widths
    }

    /// Speculated nodes: Σ_i Π_{j ≤ i} k_j.
    pub fn nodes(&self) -> u64 {
        node_count(&self.widths.iter().map(|&k| k as u64).collect::<Vec<_>>())
    }
}

/// Σ_i Π_{j ≤ i} k_j, saturating instead of overflowing (a hostile `<9999,9999,…>`).
fn node_count(widths: &[u64]) -> u64 {
    let (mut level, mut total) = (1u64, 0u64);
    for &k in widths {
        level = level.saturating_mul(k);
        total = total.saturating_add(level);
    }
    total
}

/// Parses a configuration and checks it against a node budget (the root is not counted).
pub fn parse_config(text: &str, budget: usize) -> Result<ExpansionConfig, Error> {
    let bad = |en: String, zh: String| Error::Parse {
        what: "tree config",
        text: text.to_string(),
        why: Text::new(en, zh),
    };
    // A character that shows nothing (a zero-width space pasted with the config) is named first:
    // after it, the brackets below would call a closed bracket open.
    if let Some(why) = invisible_char(text) {
        return Err(Error::Parse {
            what: "tree config",
            text: text.to_string(),
            why,
        });
    }
    let t = text.trim();
    let inner = match (t.chars().next(), t.chars().last()) {
        (Some('<'), Some('>')) | (Some('⟨'), Some('⟩')) if t.chars().count() >= 2 => {
            let mut cs = t.chars();
            cs.next();
            cs.next_back();
            cs.as_str()
        }
        (Some('<' | '⟨'), _) => {
            return Err(bad(
                "the opening bracket is not closed".into(),
                "左括号没有闭合".into(),
            ))
        }
        (_, Some('>' | '⟩')) => {
            return Err(bad(
                "a closing bracket has no opening one".into(),
                "右括号没有对应的左括号".into(),
            ))
        }
        _ => t,
    };
    if inner.trim().is_empty() {
        return Err(bad(
            "it has no levels; write widths such as <2,2,1>".into(),
            "没有任何层；请写出各层宽度，例如 <2,2,1>".into(),
        ));
    }
    let mut widths = Vec::new();
    for (i, part) in inner.split([',', '，']).enumerate() {
        let part = part.trim();
        if part.is_empty() {
            return Err(bad(
                format!("level {} is empty", i + 1),
                format!("第 {} 层是空的", i + 1),
            ));
        }
        // Digits too many for a u64 are a width over any budget: saturated, as the count is.
        let digits = !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
        let k: u64 = match part.parse() {
            Ok(k) => k,
            Err(_) if digits => u64::MAX,
            Err(_) => {
                return Err(bad(
                    format!("level {} ({:?}) is not a whole number", i + 1, shown(part)),
                    format!("第 {} 层（{:?}）不是整数", i + 1, shown(part)),
                ))
            }
        };
        if k == 0 {
            return Err(bad(
                format!(
                    "level {} has width 0; every level needs at least one child",
                    i + 1
                ),
                format!("第 {} 层宽度为 0；每层至少需要一个子节点", i + 1),
            ));
        }
        widths.push(k);
    }
    if widths.len() > 64 {
        return Err(bad(
            format!("{} levels is too deep (at most 64)", widths.len()),
            format!("{} 层太深（最多 64 层）", widths.len()),
        ));
    }
    let nodes = node_count(&widths);
    if nodes > budget as u64 {
        return Err(Error::TooLarge {
            what: Text::new(
                format!("tree config {}", shown(t)),
                format!("树配置 {}", shown(t)),
            ),
            nodes,
            budget,
        });
    }
    // Within the budget every width fits in usize.
    Ok(ExpansionConfig {
        widths: widths.into_iter().map(|k| k as usize).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expect: Result<&[usize], &str>) {
        match (parse_config(input, DEFAULT_NODE_BUDGET), expect) {
            (Ok(c), Ok(w)) => assert_eq!(c.widths(), w, "{input}"),
            (Err(e), Err(msg)) => assert!(e.to_string().contains(msg), "{input}: {e}"),
            (got, want) => panic!("{input}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn accepted_forms() {
        check("<2,2,1>", Ok(&[2, 2, 1]));
        check("⟨2,2,1⟩", Ok(&[2, 2, 1]));
        check(" < 3 , 1,1 ,1 > ", Ok(&[3, 1, 1, 1]));
        check("2,2,2,2", Ok(&[2, 2, 2, 2]));
        check("<1,1,3,1,1,1,1,1>", Ok(&[1, 1, 3, 1, 1, 1, 1, 1]));
    }

    #[test]
    fn rejected_forms_say_why() {
        check("<2,,1>", Err("level 2 is empty"));
        check("<0>", Err("width 0"));
        check("<>", Err("no levels"));
        check("<2,x>", Err("(\"x\") is not a whole number"));
        // Chinese commas, as the γ and batch lists take them; digits too many for any integer
        // type are a width over the budget.
        check("<2，2>", Ok(&[2, 2]));
        check(
            "<99999999999999999999>",
            Err("has at least 18446744073709551615 nodes, over the budget of"),
        );
        check("<2,-1>", Err("not a whole number"));
        check("<2,2", Err("not closed"));
        // An invisible character is named, not taken for a bracket left open.
        check(
            "<2,2>\u{200B}",
            Err("unexpected character U+200B (zero width space) at position 6"),
        );
        check(
            "<2\u{200B},2>",
            Err("U+200B (zero width space) at position 3"),
        );
        check("\u{FEFF}<2,2>", Err("U+FEFF"));
        check("2,2>", Err("no opening"));
        check("<99,99,99,99>", Err("over the budget of 512"));
        check(
            "<999999999999,999999999999,999999999999>",
            Err("over the budget"),
        );
    }
}

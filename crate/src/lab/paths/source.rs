//! Which trees the per-sequence against tree-parallel comparison verifies: one shape for every
//! prompt (the lecture's trees by name, drafts `a b|c d`, a configuration ⟨2,2,1⟩) filled later
//! by the draft, or EAGLE-2's dynamic tree grown after each prompt (`eagle-2`, `eagle-2:N`). Read
//! before any model loads, so that a bad name is refused first.

use crate::error::{Error, Range, Text};
use crate::lab::params::DEFAULT_BUDGET;
use crate::tree::{parse_config, parse_paths, TokenTree};

/// The most nodes a tree of this experiment may have: every path of it is run again.
pub const NODES: usize = 64;
/// The deepest tree: the longest prompt (27 tokens) and the tree share the models' 64 positions.
pub const DEPTH: Range = Range::new("tree depth", 1.0, 32.0);
/// The trees by name: `exercise-5` (its three drafts a b c, a b d e, f g), `slides` (machine
/// learning algorithm / system design, translation model), drafts as `a b c|a b d e|f g`, or an
/// expansion configuration `<2,2,1>`.
pub fn parse_tree(text: &str) -> Result<TokenTree, Error> {
    let t = text.trim();
    let tree = match t.to_lowercase().as_str() {
        "exercise-5" | "exercise5" | "ex5" => {
            TokenTree::merge(&parse_paths("a b c|a b d e|f g")?, "r")
        }
        "slides" => TokenTree::merge(
            &parse_paths("learning algorithm|learning system design|translation model")?,
            "machine",
        ),
        _ if t.contains('|') => TokenTree::merge(&parse_paths(t)?, "r"),
        _ => TokenTree::expand(&parse_config(t, NODES)?, "r"),
    };
    if tree.speculated() > NODES {
        return Err(Error::TooLarge {
            what: Text::new("the tree", "这棵树"),
            nodes: tree.speculated() as u64,
            budget: NODES,
        });
    }
    let depth = tree.nodes().iter().map(|n| n.depth).max().unwrap_or(0);
    DEPTH.check(depth as f64)?;
    Ok(tree)
}

/// Where the experiment's trees come from: one shape filled by the draft for every prompt, or
/// EAGLE-2's dynamic tree of at most `budget` nodes grown after each prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum TreeSource {
    Static(TokenTree),
    Eagle2 { budget: usize },
}

/// A tree as typed: `eagle-2` (EAGLE-2's dynamic tree at the hidden experiments' budget,
/// [`DEFAULT_BUDGET`] nodes), `eagle-2:N` (at most N nodes, 1 … [`NODES`]), or any tree
/// [`parse_tree`] reads.
pub fn parse_source(text: &str) -> Result<TreeSource, Error> {
    let t = text.trim();
    let lower = t.to_lowercase();
    if !lower.starts_with("eagle") {
        return parse_tree(t).map(TreeSource::Static);
    }
    let bad = |en: String, zh: String| Error::Parse {
        what: "tree",
        text: t.to_string(),
        why: Text::new(en, zh),
    };
    let budget = match lower.strip_prefix("eagle-2") {
        Some("") => DEFAULT_BUDGET,
        Some(rest) => match rest.strip_prefix(':').map(|n| n.trim().parse::<usize>()) {
            Some(Ok(n)) if (1..=NODES).contains(&n) => n,
            _ => {
                return Err(bad(
                    format!(
                    "EAGLE-2's node budget N in eagle-2:N must be a whole number from 1 to {NODES}"
                ),
                    format!("eagle-2:N 中 EAGLE-2 的节点预算 N 必须是 1 到 {NODES} 的整数"),
                ))
            }
        },
        None => {
            return Err(bad(
                "the dynamic tree is eagle-2 or eagle-2:N (EAGLE-2's, at most N nodes)".into(),
                "动态树写作 eagle-2 或 eagle-2:N（EAGLE-2 的树，至多 N 个节点）".into(),
            ))
        }
    };
    Ok(TreeSource::Eagle2 { budget })
}

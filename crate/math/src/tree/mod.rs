//! SpecInfer token trees (lecture §4.2–4.3; Miao et al., Definitions 3.1–3.2, 4.1).
//!
//! A tree's root is the last verified token; every root-to-node path is one candidate sequence.
//! Trees are built by merging several drafts' sequences ([`TokenTree::merge`], shared prefixes
//! stored once) or by expanding a configuration ⟨k₁, k₂, …⟩ ([`TokenTree::expand`], k_i children
//! per node at level i). [`TokenTree::linearize_dfs`] lays the nodes out depth-first so ancestors
//! come first, [`TokenTree::tree_mask`] lets each node see exactly its ancestors and itself, and
//! [`TokenTree::depths`] gives the position ids (nodes at one depth share a position). One forward
//! with that mask and those positions equals running every path on its own.
//!
//! Which tree to verify (§4.7): [`sequoia`] finds the tree of n nodes and depth d with the most
//! expected tokens under a positional acceptance vector (Sequoia's dynamic programme), and
//! [`choose`] picks a chain's γ and a tree's (n, d) from a device's T(k) and the draft's cost.

pub mod choose;
mod config;
pub mod sequoia;

pub use config::{parse_config, ExpansionConfig, DEFAULT_NODE_BUDGET};

use crate::error::{Error, Text};

/// A node: its token text, its parent (None for the root) and its depth (root = 0).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Node {
    pub token: String,
    pub parent: Option<usize>,
    pub depth: usize,
    pub children: Vec<usize>,
}

/// A token tree stored in insertion order; node 0 is the root.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TokenTree {
    nodes: Vec<Node>,
    /// Lengths of the sequences the tree stands for, when it was merged from sequences (one may
    /// be a prefix of another, so they are not the leaves' depths).
    #[serde(skip)]
    sequences: Option<Vec<usize>>,
}

impl TokenTree {
    fn with_root(root: &str) -> TokenTree {
        TokenTree {
            nodes: vec![Node {
                token: root.to_string(),
                parent: None,
                depth: 0,
                children: vec![],
            }],
            sequences: None,
        }
    }

    fn add_child(&mut self, parent: usize, token: &str) -> usize {
        let id = self.nodes.len();
        let depth = self.nodes[parent].depth + 1;
        self.nodes.push(Node {
            token: token.to_string(),
            parent: Some(parent),
            depth,
            children: vec![],
        });
        self.nodes[parent].children.push(id);
        id
    }

    /// Merges token sequences under one root; equal prefixes share nodes (Definition 3.2).
    pub fn merge(paths: &[Vec<String>], root: &str) -> TokenTree {
        let mut tree = TokenTree::with_root(root);
        for path in paths {
            let mut at = 0;
            for token in path {
                at = match tree.nodes[at]
                    .children
                    .iter()
                    .copied()
                    .find(|&c| tree.nodes[c].token == *token)
                {
                    Some(existing) => existing,
                    None => tree.add_child(at, token),
                };
            }
        }
        tree.sequences = Some(paths.iter().map(Vec::len).filter(|&l| l > 0).collect());
        tree
    }

    /// The expansion tree of a configuration: k_i children for every node at depth i − 1. Tokens
    /// are named by their path of child ranks, e.g. `2.1` is the first child of the second child.
    pub fn expand(config: &ExpansionConfig, root: &str) -> TokenTree {
        let mut tree = TokenTree::with_root(root);
        let mut frontier = vec![(0usize, String::new())];
        for &k in config.widths() {
            let mut next = Vec::with_capacity(frontier.len() * k);
            for (parent, name) in &frontier {
                for rank in 1..=k {
                    let label = if name.is_empty() {
                        rank.to_string()
                    } else {
                        format!("{name}.{rank}")
                    };
                    next.push((tree.add_child(*parent, &label), label));
                }
            }
            frontier = next;
        }
        tree
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Number of speculated nodes (the root excluded).
    pub fn speculated(&self) -> usize {
        self.nodes.len() - 1
    }

    /// Tokens decoded when every sequence is run on its own (the root excluded): the merged
    /// sequences, or every root-to-leaf path of an expansion tree.
    pub fn sequence_tokens(&self) -> usize {
        if let Some(lengths) = &self.sequences {
            return lengths.iter().sum();
        }
        self.nodes
            .iter()
            .filter(|n| n.children.is_empty() && n.parent.is_some())
            .map(|n| n.depth)
            .sum()
    }

    /// The root-to-leaf paths (the root excluded), leaves in depth-first order: the sequences
    /// per-sequence decoding runs, each on its own copy of the cache (lecture §4.3). A merged
    /// sequence that is a prefix of another ends at an inner node and is not a path of its own.
    pub fn paths(&self) -> Vec<Vec<usize>> {
        self.linearize_dfs()
            .into_iter()
            .filter(|&n| n != 0 && self.nodes[n].children.is_empty())
            .map(|leaf| {
                let mut path = vec![leaf];
                while let Some(p) = self.nodes[*path.last().expect("non-empty")].parent {
                    path.push(p);
                }
                path.pop(); // the root: the last verified token, already in the cache
                path.reverse();
                path
            })
            .collect()
    }

    /// Tokens per-sequence decoding computes: the sum of the root-to-leaf paths' lengths, where
    /// tree-parallel decoding computes [`TokenTree::speculated`] (each node once).
    pub fn path_tokens(&self) -> usize {
        self.paths().iter().map(Vec::len).sum()
    }

    /// Depth-first order, children in insertion order: every ancestor precedes its descendants.
    pub fn linearize_dfs(&self) -> Vec<usize> {
        let mut order = Vec::with_capacity(self.nodes.len());
        let mut stack = vec![0];
        while let Some(n) = stack.pop() {
            order.push(n);
            stack.extend(self.nodes[n].children.iter().rev());
        }
        order
    }

    /// Whether `ancestor` is on the path from the root to `node` (a node is its own ancestor).
    pub fn is_ancestor(&self, ancestor: usize, node: usize) -> bool {
        let mut at = Some(node);
        while let Some(n) = at {
            if n == ancestor {
                return true;
            }
            at = self.nodes[n].parent;
        }
        false
    }

    /// The topology-aware causal mask over `order`: row i may attend to column j iff node
    /// order[j] is an ancestor of (or is) node order[i]. The verified prefix, visible to every
    /// row, is not part of it.
    pub fn tree_mask(&self, order: &[usize]) -> Vec<Vec<bool>> {
        order
            .iter()
            .map(|&row| {
                order
                    .iter()
                    .map(|&col| self.is_ancestor(col, row))
                    .collect()
            })
            .collect()
    }

    /// Position offsets (depths) over `order`.
    pub fn depths(&self, order: &[usize]) -> Vec<usize> {
        order.iter().map(|&n| self.nodes[n].depth).collect()
    }
}

/// Parses `a b c|a b d e|f g`: paths separated by `|`, tokens by whitespace.
pub fn parse_paths(text: &str) -> Result<Vec<Vec<String>>, Error> {
    let bad = |en: &str, zh: &str| Error::Parse {
        what: "paths",
        text: text.to_string(),
        why: Text::new(en, zh),
    };
    if text.trim().is_empty() {
        return Err(bad("no paths given", "没有给出路径"));
    }
    let paths: Vec<Vec<String>> = text
        .split('|')
        .map(|p| p.split_whitespace().map(str::to_string).collect())
        .collect();
    if paths.iter().any(Vec::is_empty) {
        return Err(bad(
            "a path between '|' separators is empty",
            "两个 '|' 之间的路径是空的",
        ));
    }
    let nodes: usize = paths.iter().map(Vec::len).sum();
    if nodes > DEFAULT_NODE_BUDGET {
        return Err(Error::TooLarge {
            what: Text::new("the path list", "路径列表"),
            nodes: nodes as u64,
            budget: DEFAULT_NODE_BUDGET,
        });
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sequence_that_is_a_prefix_of_another_still_costs_its_own_run() {
        let paths = |t: &str| -> Vec<Vec<String>> {
            t.split('|')
                .map(|p| p.split_whitespace().map(String::from).collect())
                .collect()
        };
        let t = TokenTree::merge(&paths("a b|a b c"), "r");
        assert_eq!((t.speculated(), t.sequence_tokens()), (3, 5));
        let t = TokenTree::merge(&paths("a b c|a b d e|f g"), "r");
        assert_eq!(t.sequence_tokens(), 3 + 4 + 2);
    }

    fn tokens(tree: &TokenTree, order: &[usize]) -> Vec<String> {
        order
            .iter()
            .map(|&n| tree.nodes()[n].token.clone())
            .collect()
    }

    fn grid(mask: &[Vec<bool>]) -> Vec<String> {
        mask.iter()
            .map(|r| r.iter().map(|&b| if b { '1' } else { '.' }).collect())
            .collect()
    }

    #[test]
    fn exercise_5() {
        let tree = TokenTree::merge(&parse_paths("a b c|a b d e|f g").unwrap(), "r");
        assert_eq!(tree.speculated(), 7);
        assert_eq!(tree.sequence_tokens(), 9);
        let order = tree.linearize_dfs();
        assert_eq!(
            tokens(&tree, &order),
            ["r", "a", "b", "c", "d", "e", "f", "g"]
        );
        assert_eq!(tree.depths(&order), [0, 1, 2, 3, 3, 4, 1, 2]);
        // e sees r, a, b, d and itself; not c, f, g even though c comes before it.
        let mask = tree.tree_mask(&order);
        assert_eq!(grid(&mask)[5], "111.11..");
    }

    #[test]
    fn slide_example_mask() {
        let paths =
            parse_paths("learning algorithm|learning system design|translation model").unwrap();
        let tree = TokenTree::merge(&paths, "machine");
        let order = tree.linearize_dfs();
        assert_eq!(
            tokens(&tree, &order),
            [
                "machine",
                "learning",
                "algorithm",
                "system",
                "design",
                "translation",
                "model"
            ]
        );
        assert_eq!(tree.depths(&order), [0, 1, 2, 2, 3, 1, 2]);
        assert_eq!(
            grid(&tree.tree_mask(&order)),
            ["1......", "11.....", "111....", "11.1...", "11.11..", "1....1.", "1....11"]
        );
        // "learning" is shared: 6 nodes instead of 7 tokens decoded path by path.
        assert_eq!((tree.speculated(), tree.sequence_tokens()), (6, 7));
    }

    #[test]
    fn expansion_sizes() {
        let t = |s: &str| TokenTree::expand(&parse_config(s, DEFAULT_NODE_BUDGET).unwrap(), "r");
        let t221 = t("<2,2,1>");
        assert_eq!((t221.speculated(), t221.sequence_tokens()), (10, 12));
        assert_eq!(t("⟨1,1,1,1⟩").nodes().len(), 5);
        assert_eq!(t("<2,2,2,2>").nodes().len(), 31);
        let order = t221.linearize_dfs();
        assert_eq!(
            tokens(&t221, &order)[..5],
            ["r", "1", "1.1", "1.1.1", "1.2"]
        );
    }

    #[test]
    fn tree_parallel_computes_each_node_once_per_sequence_computes_every_path() {
        let merged = |t: &str, root: &str| TokenTree::merge(&parse_paths(t).unwrap(), root);
        let expanded =
            |s: &str| TokenTree::expand(&parse_config(s, DEFAULT_NODE_BUDGET).unwrap(), "r");
        let count = |t: &TokenTree| (t.speculated(), t.path_tokens());
        // Exercise 5's three drafts; the slides' example ("learning" twice); ⟨2,2,1⟩, ⟨2,2,2,2⟩.
        assert_eq!(count(&merged("a b c|a b d e|f g", "r")), (7, 9));
        let slides = "learning algorithm|learning system design|translation model";
        assert_eq!(count(&merged(slides, "machine")), (6, 7));
        assert_eq!(count(&expanded("<2,2,1>")), (10, 12));
        assert_eq!(count(&expanded("<2,2,2,2>")), (30, 64));
        // A draft that is a prefix of another is no leaf: per-sequence decoding runs a b c only.
        let prefix = merged("a b|a b c", "r");
        assert_eq!((count(&prefix), prefix.sequence_tokens()), ((3, 3), 5));
        let t = merged("a b c|a b d e|f g", "r");
        let names = |p: &Vec<usize>| p.iter().map(|&n| t.nodes()[n].token.as_str()).collect();
        let paths: Vec<Vec<&str>> = t.paths().iter().map(names).collect();
        assert_eq!(
            paths,
            [
                vec!["a", "b", "c"],
                vec!["a", "b", "d", "e"],
                vec!["f", "g"]
            ]
        );
    }

    #[test]
    fn paths_reject_empty_segments() {
        assert!(parse_paths("a b||c")
            .unwrap_err()
            .to_string()
            .contains("empty"));
        assert!(parse_paths("  ").is_err());
    }
}

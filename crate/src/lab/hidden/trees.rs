//! EAGLE-2's dynamic tree after each of several prompts, as token trees (lecture §5.2): what the
//! per-sequence against tree-parallel comparison (`lab::paths`, §4.3) verifies when it is asked
//! for a tree that is not one fixed shape. As in [`super::picture`], the target's own call over
//! the prompt yields the features the draft reads, and EAGLE-2 grows its greedy tree (top-k per
//! expanded node, the budget's best nodes by the draft's confidence along the path) after the
//! prompt's last token, so each prompt gets a tree of its own.

use super::drafts::Drafts;
use super::eagle::{EagleRun, Growth};
use super::shapes::RankTree;
use crate::decode::chance::Seeded;
use crate::decode::{LanguageModel, Speculation};
use crate::error::Error;
use crate::lab::lm::Cached;
use crate::lab::params::{TreeKind, Verification, DEFAULT_DEPTH};
use crate::likesworld;
use crate::model::Models;
use crate::tree::TokenTree;

/// One prompt's dynamic tree: its shape (each node named by its token id) and its tokens by node,
/// node 0 (the root) being the prompt's last token.
#[derive(Debug, Clone)]
pub struct PromptTree {
    pub tree: TokenTree,
    pub tokens: Vec<u32>,
}

/// EAGLE-2's greedy dynamic tree of at most `budget` nodes (and [`DEFAULT_DEPTH`] levels) after
/// each of `prompts`, grown on the target's features (on a widened target, one copy of each unit:
/// the features the drafts were trained on, as every hidden-state experiment reads them).
pub async fn eagle2_trees(
    models: &Models,
    budget: usize,
    prompts: &[Vec<u32>],
) -> Result<Vec<PromptTree>, Error> {
    let drafts = Drafts::load(models)?;
    let device = &models.device;
    // A dynamic tree reads no static shape.
    let shape = RankTree {
        ranks: vec![],
        parents: vec![],
    };
    let growth = Growth {
        tree: TreeKind::Dynamic,
        depth: DEFAULT_DEPTH,
        budget,
        shape: &shape,
        verification: Verification::Greedy,
    };
    let mut out = Vec::with_capacity(prompts.len());
    for prompt in prompts {
        let mut target = Cached::with_features(&models.target, device, 1.0, drafts.width());
        target
            .score(&prompt[..prompt.len() - 1], &Speculation::default())
            .await?;
        let feats = target.features(prompt);
        let limit = likesworld::MAX_LEN.saturating_sub(prompt.len() + 1);
        let mut run = EagleRun::new(&drafts.eagle, drafts.trained(), &drafts.device);
        let (mut chance, mut values) = (Seeded::new(0), Vec::new());
        let proposal = run
            .propose(prompt, &feats, &growth, limit, &mut chance, &mut values)
            .await?;
        let last = *prompt.last().expect("a prompt has tokens");
        out.push(token_tree(&proposal.tree, last));
    }
    Ok(out)
}

/// A speculation (parents before children, siblings distinct) as a token tree hanging off
/// `root`: the same nodes, merged from its root-to-leaf paths.
pub fn token_tree(spec: &Speculation, root: u32) -> PromptTree {
    let n = spec.tokens.len();
    let mut has_child = vec![false; n];
    spec.parents
        .iter()
        .flatten()
        .for_each(|&p| has_child[p] = true);
    let paths: Vec<Vec<String>> = (0..n)
        .filter(|&i| !has_child[i])
        .map(|leaf| {
            let mut path = vec![];
            let mut at = Some(leaf);
            while let Some(i) = at {
                path.push(spec.tokens[i].to_string());
                at = spec.parents[i];
            }
            path.reverse();
            path
        })
        .collect();
    let tree = TokenTree::merge(&paths, &root.to_string());
    debug_assert_eq!(
        tree.speculated(),
        n,
        "siblings of a speculation are distinct"
    );
    let tokens = tree
        .nodes()
        .iter()
        .map(|node| node.token.parse().expect("a token id"))
        .collect();
    PromptTree { tree, tokens }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_speculation_becomes_the_same_tree_with_its_tokens() {
        // 7 → (3 → (5, 6), 4 → 5): four leaves' worth of paths, 5 nodes.
        let spec = Speculation {
            tokens: vec![3, 4, 5, 6, 5],
            parents: vec![None, None, Some(0), Some(0), Some(1)],
        };
        let t = token_tree(&spec, 7);
        assert_eq!(t.tree.speculated(), 5);
        assert_eq!(t.tree.path_tokens(), 6);
        assert_eq!(t.tree.paths().len(), 3);
        assert_eq!(t.tokens[0], 7);
        let mut seen: Vec<(u32, Option<u32>)> = t
            .tree
            .nodes()
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, node)| (t.tokens[i], node.parent.map(|p| t.tokens[p])))
            .collect();
        seen.sort_unstable();
        assert_eq!(
            seen,
            [
                (3, Some(7)),
                (4, Some(7)),
                (5, Some(3)),
                (5, Some(4)),
                (6, Some(3))
            ]
        );
    }
}

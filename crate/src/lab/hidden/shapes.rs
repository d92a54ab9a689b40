//! The static trees of the drafts on the target's hidden states, at a node budget N:
//! - *sparse* (Medusa's tree, also EAGLE-1's): the N rank paths (r₁, …, r_j) with the highest
//!   product of measured rank accuracies, chosen once from calibration worlds ([`calibrate`]:
//!   teacher-forced guesses against the target's own argmax);
//! - *balanced*: k children per node, level by level, until N nodes.
//!
//! A tree is kept as rank paths ([`RankTree`]): node i is the `ranks[i]`-th most likely token of
//! the list its level reads. [`Shapes`] are the ones a run uses, measured once per run.

use super::drafts::{ranked, Drafts};
use crate::error::Error;
use crate::lab::params::{Drafter, TreeKind, DEPTH};
use crate::likesworld;
use crate::model::decoder::causal;
use crate::model::{floats, KvCache};
use burn::tensor::Tensor;

/// Children per expanded node in EAGLE-2's dynamic tree (its top-k; the paper takes 10 of a 32k
/// vocabulary; here 4 gave τ 0.1 lower at budget 16 than 8, and 6 to 12 the same), and the top-k a
/// head's accuracy is reported at.
pub const TOP_K: usize = 8;
/// Children per node of a balanced static tree: a binary tree, 2 + 4 + 8 + … nodes.
pub const BALANCED_K: usize = 2;
/// Calibration worlds for the rank accuracies of the static sparse trees.
const CALIBRATION_WORLDS: usize = 48;

/// A static tree as rank paths: node i is the `ranks[i]`-th most likely token of the list its
/// level reads, under `parents[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankTree {
    pub ranks: Vec<usize>,
    pub parents: Vec<Option<usize>>,
}

impl RankTree {
    pub fn depth(&self, node: usize) -> usize {
        let mut d = 1;
        let mut at = self.parents[node];
        while let Some(p) = at {
            d += 1;
            at = self.parents[p];
        }
        d
    }

    pub fn max_depth(&self) -> usize {
        (0..self.ranks.len())
            .map(|n| self.depth(n))
            .max()
            .unwrap_or(0)
    }

    /// The `budget` rank paths with the highest product of `accuracy[depth − 1][rank]`, grown
    /// best-first (a path's prefixes score at least as high, so the set is a tree), at most
    /// `accuracy.len()` deep. Parents come before their children.
    pub fn sparse(accuracy: &[Vec<f64>], budget: usize) -> RankTree {
        let mut shape = RankTree {
            ranks: Vec::new(),
            parents: Vec::new(),
        };
        // Frontier: (score, parent, depth of the child, rank of the child).
        let mut frontier: Vec<(f64, Option<usize>, usize, usize)> = Vec::new();
        let push = |f: &mut Vec<_>, score: f64, parent, depth: usize, rank: usize| {
            if let Some(a) = accuracy.get(depth - 1).and_then(|row| row.get(rank)) {
                f.push((score * a, parent, depth, rank));
            }
        };
        push(&mut frontier, 1.0, None, 1, 0);
        while shape.ranks.len() < budget && !frontier.is_empty() {
            let best = (0..frontier.len())
                .max_by(|&a, &b| frontier[a].0.total_cmp(&frontier[b].0).then(b.cmp(&a)))
                .expect("non-empty");
            let (score, parent, depth, rank) = frontier.swap_remove(best);
            shape.ranks.push(rank);
            shape.parents.push(parent);
            let node = shape.ranks.len() - 1;
            // Its next sibling, and its first child.
            let parent_score = score / accuracy[depth - 1][rank].max(f64::MIN_POSITIVE);
            push(&mut frontier, parent_score, parent, depth, rank + 1);
            push(&mut frontier, score, Some(node), depth + 1, 0);
        }
        shape
    }

    /// `k` children per node, breadth first, until `budget` nodes or `depth` levels.
    pub fn balanced(k: usize, depth: usize, budget: usize) -> RankTree {
        let mut shape = RankTree {
            ranks: Vec::new(),
            parents: Vec::new(),
        };
        let mut level: Vec<Option<usize>> = vec![None];
        for _ in 0..depth {
            let mut next = Vec::new();
            for &parent in &level {
                for r in 0..k {
                    if shape.ranks.len() == budget {
                        return shape;
                    }
                    shape.ranks.push(r);
                    shape.parents.push(parent);
                    next.push(Some(shape.ranks.len() - 1));
                }
            }
            level = next;
        }
        shape
    }
}

/// What a draft's guesses score on calibration worlds, teacher-forced, against the target's own
/// argmax: per depth (Medusa: per head), the fraction of positions whose guess at each rank is
/// right; and per depth the top-1 accuracy per kind of the token guessed.
pub struct Calibration {
    pub ranks: Vec<Vec<f64>>,
    pub by_kind: Vec<(likesworld::TokenKind, Vec<f64>)>,
}

/// [`Calibration`] of Medusa's heads (head i at depth i + 1), or of EAGLE's guess one step
/// ahead (the one row, used at every depth of a static tree).
pub async fn calibrate(drafts: &Drafts, medusa: bool) -> Result<Calibration, Error> {
    let worlds = likesworld::worlds(likesworld::Split::Train, 17, CALIBRATION_WORLDS);
    let (tokens, seqs) = crate::model::eval::batch(&worlds, &drafts.device);
    let len = tokens.dims()[1];
    let target = drafts.trained();
    let (features, logits) = target.features_causal(tokens.clone());
    let vocab = likesworld::VOCAB;
    let to_f64 = |row: &[f32]| row.iter().map(|&x| f64::from(x)).collect::<Vec<_>>();
    let argmax: Vec<u32> = floats(logits)
        .await?
        .chunks(vocab)
        .map(|row| crate::sampling::argmax(&to_f64(row)) as u32)
        .collect();
    // Each source of guesses: its logits [b, width, vocab], read after position t as a guess of
    // the token at t + 2 + i, which the target predicts after t + 1 + i.
    let sources: Vec<(usize, Tensor<3>)> = if medusa {
        drafts
            .medusa
            .forward(features)
            .into_iter()
            .enumerate()
            .collect()
    } else {
        let n = len - 1;
        let next = tokens.narrow(1, 1, n);
        let (_, mask) = causal(&next);
        let guess = drafts.eagle.forward(
            target,
            features.narrow(1, 0, n),
            next,
            mask,
            &mut KvCache::new(1),
        );
        vec![(0, target.head(guess))]
    };
    let kinds: Vec<Vec<likesworld::TokenKind>> =
        seqs.iter().map(|s| likesworld::token_kinds(s)).collect();
    let all = likesworld::TokenKind::ALL;
    let mut ranks: Vec<Vec<f64>> = Vec::new();
    let mut by_kind = vec![Vec::new(); all.len()];
    for (i, logits) in sources {
        let width = logits.dims()[1];
        let flat = floats(logits).await?;
        let mut hits = [0usize; 8];
        let mut n = 0usize;
        let mut kind_hits = vec![(0usize, 0usize); all.len()];
        for (s, seq) in seqs.iter().enumerate() {
            for t in 0..seq.len().saturating_sub(2 + i).min(width) {
                let at = s * width + t;
                let truth = argmax[s * len + t + 1 + i];
                let rank = ranked(&to_f64(&flat[at * vocab..(at + 1) * vocab]))
                    .iter()
                    .position(|&x| x == truth);
                if let Some(r) = rank.filter(|&r| r < hits.len()) {
                    hits[r] += 1;
                }
                n += 1;
                let k = all
                    .iter()
                    .position(|&x| x == kinds[s][t + 2 + i])
                    .expect("a kind");
                kind_hits[k].0 += usize::from(rank == Some(0));
                kind_hits[k].1 += 1;
            }
        }
        ranks.push(hits.iter().map(|&h| h as f64 / n.max(1) as f64).collect());
        for (k, (h, m)) in kind_hits.into_iter().enumerate() {
            by_kind[k].push(if m == 0 {
                f64::NAN
            } else {
                h as f64 / m as f64
            });
        }
    }
    if !medusa {
        ranks = vec![ranks[0].clone(); DEPTH.max as usize];
    }
    Ok(Calibration {
        ranks,
        by_kind: all.into_iter().zip(by_kind).collect(),
    })
}

/// The static shapes a run uses, measured once.
pub struct Shapes {
    pub medusa: RankTree,
    pub eagle: RankTree,
    /// Medusa's calibration, which its sparse tree was chosen from (the report's head accuracy).
    pub heads: Option<Calibration>,
}

impl Shapes {
    /// The deepest level `drafter`'s trees can reach at `budget` nodes (acceptance by depth is
    /// reported that far).
    pub fn reach(&self, drafter: Drafter, budget: usize) -> usize {
        match drafter {
            Drafter::Medusa { heads, .. } => self.medusa.max_depth().min(heads),
            Drafter::Eagle {
                tree: TreeKind::Dynamic,
                depth,
                ..
            } => depth.min(budget),
            Drafter::Eagle { depth, .. } => self.eagle.max_depth().min(depth),
        }
    }

    pub async fn new(drafts: &Drafts, drafter: Drafter, budget: usize) -> Result<Shapes, Error> {
        let shape = |tree: TreeKind, acc: &[Vec<f64>], depth: usize| match tree {
            TreeKind::Balanced => RankTree::balanced(BALANCED_K, depth, budget),
            _ => RankTree::sparse(acc, budget),
        };
        Ok(match drafter {
            Drafter::Medusa { heads, tree } => {
                let c = calibrate(drafts, true).await?;
                Shapes {
                    medusa: shape(tree, &c.ranks[..heads.min(c.ranks.len())], heads),
                    eagle: RankTree::balanced(1, 1, 1),
                    heads: Some(c),
                }
            }
            Drafter::Eagle { tree, depth, .. } => {
                let acc = if tree == TreeKind::Sparse {
                    calibrate(drafts, false).await?.ranks
                } else {
                    Vec::new()
                };
                Shapes {
                    medusa: RankTree::balanced(1, 1, 1),
                    eagle: shape(tree, &acc[..depth.min(acc.len())], depth),
                    heads: None,
                }
            }
        })
    }
}

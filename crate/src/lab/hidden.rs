//! Drafts that sit on the target's own hidden states (lecture §5.1, §5.2, §4.7): Medusa's heads,
//! EAGLE's one-layer feature draft with a static tree, EAGLE-2's dynamic tree, and EAGLE trained
//! with the training-time test. Every one is lossless: the target verifies each proposal in one
//! call (VerifyGreedy, or multi-step speculative sampling on a sampled dynamic tree), and that
//! same call yields the features the next proposal reads, so no separate draft pass over the
//! context exists.
//!
//! Both drafts read the *trained* target's features. On a widened target (`model::widen`) each
//! unit of the feature is replicated r times in place (a function-preserving map), so the drafts
//! read one copy of each: their outputs are the same as on the trained target and their cost stays a draft's
//! (a one-layer draft on a 40-layer LLM costs ≈ 1/40 of it; widened with the 2-layer target it
//! would cost half of it, which is not the regime the lecture describes).
//!
//! Trees are built three ways at a node budget N:
//! - static, *sparse* (Medusa's tree, also EAGLE-1's): the N rank paths (r₁, …, r_j) with the
//!   highest product of measured rank accuracies, chosen once from calibration worlds;
//! - static, *balanced*: k children per node, level by level, until N nodes;
//! - *dynamic* (EAGLE-2): grown per context by the draft's confidence — expand the top-k nodes of
//!   each level, then keep the N nodes with the highest product of the draft's probabilities
//!   along the path. Under sampling the children are drawn from q instead, and a node's next
//!   child is decided before it is drawn (best-first over "the path's probability × the mass of
//!   q not yet drawn"), which keeps MSS exact ([`DynamicSampled`]); EAGLE-2's own top-k children
//!   verified by MSS as if sampled are the biased variant.

use super::lm::{softmax, Cached};
use crate::clock::Clock;
use crate::decode::chance::{Chance, Seeded};
use crate::decode::engine::{verify_step, TreeRule, Verify};
use crate::decode::stats::Generation;
use crate::decode::{LanguageModel, Proposal};
use crate::error::{Error, Range};
use crate::i18n::Lang;
use crate::likesworld::{self, EOS};
use crate::model::decoder::causal;
use crate::model::eagle::Eagle;
use crate::model::medusa::Medusa;
use crate::model::weights::{load_eagle, load_medusa, HiddenKind};
use crate::model::{floats, Decoder, KvCache, Models};
use crate::sampling::Dist;
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};

/// Node budgets the experiments take (the §4.7 comparison runs 4, 8, 16 and 32).
pub const BUDGET: Range = Range::new("budget", 1.0, 64.0, "1 to 64 nodes");
/// Depths of a dynamic tree.
pub const DEPTH: Range = Range::new("depth", 1.0, 12.0, "1 to 12");
/// The depth a tree grows to unless told (EAGLE-2 on LikesWorld at 16 nodes: τ 3.98 at depth 6,
/// 4.18 at depth 10; deeper adds nothing, measured on 200 prompts).
pub const DEFAULT_DEPTH: usize = 10;
/// Medusa heads used.
pub const HEADS: Range = Range::new("heads", 1.0, 4.0, "1 to 4");
/// Children per expanded node in EAGLE-2's dynamic tree (its top-k; the paper takes 10 of a 32k
/// vocabulary; here 4 gave τ 0.1 lower at budget 16 than 8, and 6 to 12 the same), and the top-k a
/// head's accuracy is reported at.
pub const TOP_K: usize = 8;
/// Children per node of a balanced static tree: a binary tree, 2 + 4 + 8 + … nodes.
pub const BALANCED_K: usize = 2;
/// Calibration worlds for the rank accuracies of the static sparse trees.
const CALIBRATION_WORLDS: usize = 48;

/// The drafts on the trained target's features, loaded from the shipped weights.
pub struct Drafts {
    pub medusa: Medusa,
    pub eagle: Eagle,
    pub eagle_ttt: Eagle,
    /// The trained target (its embedding and LM head are the drafts' frozen parts).
    trained: Decoder,
}

impl Drafts {
    pub fn load(models: &Models) -> Result<Drafts, Error> {
        let trained = models.trained().clone();
        let d = &models.device;
        Ok(Drafts {
            medusa: load_medusa(&trained, d)?,
            eagle: load_eagle(HiddenKind::Eagle, &trained, d)?,
            eagle_ttt: load_eagle(HiddenKind::EagleTtt, &trained, d)?,
            trained,
        })
    }

    fn width(&self) -> usize {
        self.trained.d_model()
    }
}

/// How a tree is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TreeKind {
    /// The budget's best rank paths by measured rank accuracy (Medusa's tree, EAGLE-1's).
    Sparse,
    /// k children per node, level by level.
    Balanced,
    /// EAGLE-2: grown per context by the draft's confidence.
    Dynamic,
}

/// A static tree as rank paths: node i is the `ranks[i]`-th most likely token of the list its
/// level reads, under `parents[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub ranks: Vec<usize>,
    pub parents: Vec<Option<usize>>,
}

impl Shape {
    fn depth(&self, node: usize) -> usize {
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
    pub fn sparse(accuracy: &[Vec<f64>], budget: usize) -> Shape {
        let mut shape = Shape {
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
    pub fn balanced(k: usize, depth: usize, budget: usize) -> Shape {
        let mut shape = Shape {
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

/// The tokens of `dist` from most to least likely (ties: the lower id first).
fn ranked(dist: &[f64]) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..dist.len() as u32).collect();
    ids.sort_by(|&a, &b| {
        dist[b as usize]
            .total_cmp(&dist[a as usize])
            .then(a.cmp(&b))
    });
    ids
}

fn floats_tensor(values: Vec<f32>, shape: [usize; 3], device: &Device) -> Tensor<3> {
    Tensor::from_data(TensorData::new(values, shape), device)
}

fn ints(values: Vec<u32>, shape: [usize; 2], device: &Device) -> Tensor<2, Int> {
    let v: Vec<i64> = values.into_iter().map(i64::from).collect();
    Tensor::from_data(TensorData::new(v, shape), device)
}

/// Distributions from logits read back [n × vocab].
fn dists(flat: &[f32], vocab: usize) -> Vec<Dist> {
    flat.chunks(vocab).map(|l| softmax(l, 1.0)).collect()
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
async fn calibrate(drafts: &Drafts, medusa: bool, device: &Device) -> Result<Calibration, Error> {
    let worlds = likesworld::worlds(likesworld::Split::Train, 17, CALIBRATION_WORLDS);
    let (tokens, seqs) = crate::model::eval::batch(&worlds, device);
    let len = tokens.dims()[1];
    let target = &drafts.trained;
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

/// Which draft proposes, and how its tree is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Drafter {
    /// Medusa's first `heads` heads on a sparse (or balanced) static tree.
    Medusa { heads: usize, tree: TreeKind },
    /// EAGLE's draft (`ttt`: the one trained with the training-time test); a dynamic tree is
    /// EAGLE-2's, grown `depth` levels.
    Eagle {
        ttt: bool,
        tree: TreeKind,
        depth: usize,
    },
}

/// How a proposal's children are chosen and verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verification {
    /// Deterministic children, VerifyGreedy: the output is the target's greedy output.
    Greedy,
    /// A dynamic tree whose children are drawn from the draft's q, verified by MSS (exact).
    Mss,
    /// EAGLE-2's top-k children verified by MSS as if they were drawn (biased: what it costs
    /// is measured).
    MssTopK,
}

impl Verification {
    pub fn parse(name: &str) -> Result<Verification, Error> {
        match name {
            "greedy" => Ok(Verification::Greedy),
            "mss" => Ok(Verification::Mss),
            "mss-top-k" => Ok(Verification::MssTopK),
            _ => Err(Error::Unknown {
                what: "verification",
                name: name.into(),
                known: "greedy, mss, mss-top-k".into(),
            }),
        }
    }
}

/// One node of a tree being drafted by EAGLE: its token and parent, the product of the draft's
/// probabilities along its path, and once fed, its guessed feature, q and cache slot.
#[derive(Debug, Clone)]
struct Node {
    token: u32,
    parent: Option<usize>,
    value: f64,
    depth: usize,
    fed: Option<(Vec<f32>, Dist, usize)>,
}

/// EAGLE's draft over one generation: its one-layer KV cache holds an entry per context
/// position (the target's true feature there with the next token); a proposal appends its tree's
/// entries after them and drops them afterwards.
struct EagleRun<'a> {
    draft: &'a Eagle,
    trained: &'a Decoder,
    device: &'a Device,
    cache: KvCache,
    entries: usize,
    calls: usize,
}

impl<'a> EagleRun<'a> {
    fn new(draft: &'a Eagle, trained: &'a Decoder, device: &'a Device) -> Self {
        EagleRun {
            draft,
            trained,
            device,
            cache: KvCache::new(1),
            entries: 0,
            calls: 0,
        }
    }

    /// One draft call: entries (input feature, next token), each seeing the cached slots its
    /// `visible` list names and itself; returns each entry's guessed feature and q.
    async fn call(
        &mut self,
        inputs: &[(&[f32], u32, Vec<usize>)],
    ) -> Result<Vec<(Vec<f32>, Dist)>, Error> {
        let d = self.trained.d_model();
        let n = inputs.len();
        let s = self.cache.len();
        let width = s + n;
        let mut feats = Vec::with_capacity(n * d);
        let mut mask = vec![false; n * width];
        for (j, (f, _, visible)) in inputs.iter().enumerate() {
            feats.extend_from_slice(f);
            for &v in visible {
                mask[j * width + v] = true;
            }
            mask[j * width + s + j] = true;
        }
        let next = inputs.iter().map(|x| x.1).collect();
        let guess = self.draft.forward(
            self.trained,
            floats_tensor(feats, [1, n, d], self.device),
            ints(next, [1, n], self.device),
            Tensor::<3, Bool>::from_data(TensorData::new(mask, [1, n, width]), self.device),
            &mut self.cache,
        );
        let logits = floats(self.trained.head(guess.clone())).await?;
        let guess = floats(guess).await?;
        self.calls += 1;
        Ok(guess
            .chunks(d)
            .zip(dists(&logits, likesworld::VOCAB))
            .map(|(g, q)| (g.to_vec(), q))
            .collect())
    }

    /// Feeds the context entries the cache lacks (after dropping the last tree's) and returns
    /// the guessed feature after the context and the draft's q of the next token.
    async fn catch_up(&mut self, ctx: &[u32], feats: &[&[f32]]) -> Result<(Vec<f32>, Dist), Error> {
        self.cache.narrow(self.entries);
        let last = ctx.len() - 2; // the last entry: (f at len − 2, the context's last token)
        let inputs: Vec<(&[f32], u32, Vec<usize>)> = (self.entries..=last)
            .map(|t| (feats[t], ctx[t + 1], (0..t).collect()))
            .collect();
        let mut out = self.call(&inputs).await?;
        self.entries = last + 1;
        Ok(out.pop().expect("at least the last entry"))
    }

    /// Feeds tree nodes `which` (their parents already fed): each sees the context entries, its
    /// ancestors' slots and itself.
    async fn feed(
        &mut self,
        nodes: &mut [Node],
        root: &[f32],
        which: &[usize],
    ) -> Result<(), Error> {
        if which.is_empty() {
            return Ok(());
        }
        let s = self.cache.len();
        let mut inputs: Vec<(&[f32], u32, Vec<usize>)> = Vec::new();
        for &i in which {
            let mut visible: Vec<usize> = (0..self.entries).collect();
            let mut at = nodes[i].parent;
            while let Some(p) = at {
                visible.push(nodes[p].fed.as_ref().expect("parents are fed first").2);
                at = nodes[p].parent;
            }
            let input = match nodes[i].parent {
                Some(p) => nodes[p].fed.as_ref().expect("fed").0.as_slice(),
                None => root,
            };
            inputs.push((input, nodes[i].token, visible));
        }
        let out = self.call(&inputs).await?;
        for (j, (&i, (g, q))) in which.iter().zip(out).enumerate() {
            nodes[i].fed = Some((g, q, s + j));
        }
        Ok(())
    }
}

/// Cumulative order: higher value first, then the earlier node.
fn by_value(nodes: &[Node]) -> impl Fn(&usize, &usize) -> std::cmp::Ordering + '_ {
    move |&a, &b| nodes[b].value.total_cmp(&nodes[a].value).then(a.cmp(&b))
}

/// Turns drafted nodes (parents before children) into a proposal, keeping `keep` (closed under
/// parents) in index order; `q_of` gives the distribution a candidate was drawn from, if any.
fn to_proposal(
    nodes: &[Node],
    keep: &[usize],
    q_of: impl Fn(usize) -> Option<Dist>,
    values: &mut Vec<f64>,
) -> Proposal {
    let mut keep = keep.to_vec();
    keep.sort_unstable();
    let mut at_of = vec![usize::MAX; nodes.len()];
    let mut proposal = Proposal::empty();
    values.clear();
    for &i in &keep {
        let at = nodes[i].parent.map_or(0, |p| at_of[p]);
        debug_assert!(at != usize::MAX, "a kept node's parent is kept");
        let node = proposal.merge(at, nodes[i].token, q_of(i));
        at_of[i] = node + 1;
        values.push(nodes[i].value);
    }
    proposal
}

/// A proposal from EAGLE's draft after `ctx` (features `feats` up to its second-to-last token),
/// at most `budget` nodes and `limit` levels deep.
#[allow(clippy::too_many_arguments)]
async fn eagle_propose(
    run: &mut EagleRun<'_>,
    ctx: &[u32],
    feats: &[&[f32]],
    tree: TreeKind,
    depth: usize,
    shape: Option<&Shape>,
    budget: usize,
    limit: usize,
    verification: Verification,
    chance: &mut impl Chance,
    values: &mut Vec<f64>,
) -> Result<Proposal, Error> {
    values.clear();
    let (root, q_root) = run.catch_up(ctx, feats).await?;
    // A tree of `budget` nodes is at most `budget` deep: deeper levels would be drafted for nothing.
    let depth = depth.min(limit).min(budget);
    if depth == 0 || budget == 0 {
        return Ok(Proposal::empty());
    }
    let mut nodes: Vec<Node> = Vec::new();
    let q_parent = |nodes: &[Node], i: usize, q_root: &Dist| -> Dist {
        match nodes[i].parent {
            Some(p) => nodes[p].fed.as_ref().expect("fed").1.clone(),
            None => q_root.clone(),
        }
    };
    match (tree, verification) {
        (TreeKind::Dynamic, Verification::Mss) => {
            return dynamic_sampled(run, &root, &q_root, depth, budget, chance, values).await;
        }
        (TreeKind::Dynamic, _) => {
            // EAGLE-2: the top-k of the root, then per level the top-k nodes expanded by their
            // top-k children, then the budget's best nodes by value.
            for &t in ranked(&q_root).iter().take(TOP_K) {
                let value = q_root[t as usize];
                nodes.push(Node {
                    token: t,
                    parent: None,
                    value,
                    depth: 1,
                    fed: None,
                });
            }
            let mut level: Vec<usize> = (0..nodes.len()).collect();
            for d in 2..=depth {
                level.retain(|&p| nodes[p].token != EOS); // nothing follows <eos>
                level.sort_by(by_value(&nodes));
                level.truncate(TOP_K);
                run.feed(&mut nodes, &root, &level).await?;
                let mut next = Vec::new();
                for &p in &level {
                    let q = nodes[p].fed.as_ref().expect("fed").1.clone();
                    for &t in ranked(&q).iter().take(TOP_K) {
                        let value = nodes[p].value * q[t as usize];
                        nodes.push(Node {
                            token: t,
                            parent: Some(p),
                            value,
                            depth: d,
                            fed: None,
                        });
                        next.push(nodes.len() - 1);
                    }
                }
                level = next;
            }
            let mut all: Vec<usize> = (0..nodes.len()).collect();
            all.sort_by(by_value(&nodes));
            all.truncate(budget);
            let sampled = verification == Verification::MssTopK;
            Ok(to_proposal(
                &nodes,
                &all,
                |i| sampled.then(|| q_parent(&nodes, i, &q_root)),
                values,
            ))
        }
        (_, _) => {
            // A static tree: level by level, each node the rank-th token of its parent's q.
            let shape = shape.expect("a static tree has a shape");
            let mut index = vec![usize::MAX; shape.ranks.len()];
            for d in 1..=depth.min(shape.max_depth()) {
                // Nothing follows <eos>: its subtree (and a skipped node's) is left out.
                let here: Vec<usize> = (0..shape.ranks.len())
                    .filter(|&n| shape.depth(n) == d)
                    .filter(|&n| {
                        shape.parents[n]
                            .is_none_or(|p| index[p] != usize::MAX && nodes[index[p]].token != EOS)
                    })
                    .collect();
                let parents: Vec<usize> = here
                    .iter()
                    .filter_map(|&n| shape.parents[n].map(|p| index[p]))
                    .filter(|&p| nodes[p].fed.is_none())
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect();
                run.feed(&mut nodes, &root, &parents).await?;
                for n in here {
                    let parent = shape.parents[n].map(|p| index[p]);
                    let q = match parent {
                        Some(p) => nodes[p].fed.as_ref().expect("fed").1.clone(),
                        None => q_root.clone(),
                    };
                    let t = ranked(&q)[shape.ranks[n]];
                    let value = parent.map_or(1.0, |p| nodes[p].value) * q[t as usize];
                    nodes.push(Node {
                        token: t,
                        parent,
                        value,
                        depth: d,
                        fed: None,
                    });
                    index[n] = nodes.len() - 1;
                }
            }
            let all: Vec<usize> = (0..nodes.len()).collect();
            Ok(to_proposal(&nodes, &all, |_| None, values))
        }
    }
}

/// Draws per node at most (a node whose q is nearly covered stops being drawn from sooner).
const MAX_DRAWS: usize = 8;

/// A dynamic tree with sampled children that MSS verifies exactly. Best-first over "draw one
/// more child of v", scored value(v) × (1 − the q-mass of v's children drawn so far); whether a
/// node gets another child is decided before that child is drawn, from what was drawn earlier,
/// so each node's candidates are draws from q that MSS may verify in order (the sequential
/// argument of SpecInfer's Theorem 4.2 holds for any number of candidates decided that way).
async fn dynamic_sampled(
    run: &mut EagleRun<'_>,
    root: &[f32],
    q_root: &Dist,
    depth: usize,
    budget: usize,
    chance: &mut impl Chance,
    values: &mut Vec<f64>,
) -> Result<Proposal, Error> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut proposal = Proposal::empty();
    let mut at_of: Vec<usize> = Vec::new(); // proposal position of each node
                                            // Per parent (None = root, Some(i) = node i): drawn mass and draws.
    let mut covered: std::collections::HashMap<Option<usize>, (f64, usize)> = Default::default();
    // Open "draw another child of v" offers: (v, score).
    let mut open: Vec<(Option<usize>, f64)> = vec![(None, 1.0)];
    let mut draws = 0usize;
    while nodes.len() < budget && draws < 4 * budget {
        let Some(best) =
            (0..open.len()).max_by(|&a, &b| open[a].1.total_cmp(&open[b].1).then(b.cmp(&a)))
        else {
            break;
        };
        let (v, _) = open[best];
        // The parent's q: the root's, or a node's once fed (feeding every unfed node that may
        // still get children, in one call).
        if let Some(i) = v {
            if nodes[i].fed.is_none() {
                let unfed: Vec<usize> = (0..nodes.len())
                    .filter(|&n| nodes[n].fed.is_none() && nodes[n].depth < depth)
                    .collect();
                run.feed(&mut nodes, root, &unfed).await?;
            }
        }
        open.swap_remove(best);
        let q = match v {
            Some(i) => nodes[i].fed.as_ref().expect("fed").1.clone(),
            None => q_root.clone(),
        };
        let x = chance.draw(&q) as u32;
        draws += 1;
        let at = v.map_or(0, |i| at_of[i]);
        let existing = proposal.child(at, x);
        let node = proposal.merge(at, x, Some(q.clone()));
        let entry = covered.entry(v).or_insert((0.0, 0));
        entry.1 += 1;
        if existing.is_none() {
            entry.0 += q[x as usize];
            let parent_value = v.map_or(1.0, |i| nodes[i].value);
            let d = v.map_or(1, |i| nodes[i].depth + 1);
            nodes.push(Node {
                token: x,
                parent: v,
                value: parent_value * q[x as usize],
                depth: d,
                fed: None,
            });
            at_of.push(node + 1);
            values.push(parent_value * q[x as usize]);
            let me = nodes.len() - 1;
            if d < depth && x != EOS {
                open.push((Some(me), nodes[me].value));
            }
        }
        let (mass, n) = covered[&v];
        if n < MAX_DRAWS && mass < 1.0 - 1e-9 {
            let value = v.map_or(1.0, |i| nodes[i].value);
            open.push((v, value * (1.0 - mass)));
        }
    }
    Ok(proposal)
}

/// A proposal from Medusa's heads on the feature after the context's second-to-last token.
async fn medusa_propose(
    medusa: &Medusa,
    feature: &[f32],
    shape: &Shape,
    limit: usize,
    device: &Device,
    values: &mut Vec<f64>,
) -> Result<Proposal, Error> {
    let d = feature.len();
    let heads = medusa.forward(floats_tensor(feature.to_vec(), [1, 1, d], device));
    let mut dists_of = Vec::with_capacity(heads.len());
    for logits in heads {
        dists_of.push(dists(&floats(logits).await?, likesworld::VOCAB).remove(0));
    }
    let lists: Vec<Vec<u32>> = dists_of.iter().map(|q| ranked(q)).collect();
    let mut proposal = Proposal::empty();
    values.clear();
    let mut at_of = vec![0usize; shape.ranks.len()];
    for n in 0..shape.ranks.len() {
        let depth = shape.depth(n);
        if depth > limit || depth > lists.len() {
            continue;
        }
        let at = shape.parents[n].map_or(0, |p| at_of[p]);
        if shape.parents[n].is_some() && (at == 0 || proposal.tree.tokens[at - 1] == EOS) {
            continue; // its parent was cut by the limit, or is <eos>, which nothing follows
        }
        let token = lists[depth - 1][shape.ranks[n]];
        let (node, new) = proposal.offer(at, token, crate::decode::Source::Draft);
        if new {
            // The heads guess independently: a path's confidence is the product of its heads'.
            let parent = at.checked_sub(1).map_or(1.0, |p| values[p]);
            values.push(parent * dists_of[depth - 1][token as usize]);
        }
        at_of[n] = node + 1;
    }
    Ok(proposal)
}

/// The static shapes a run uses, measured once.
pub struct Shapes {
    pub medusa: Shape,
    pub eagle: Shape,
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

    pub async fn new(
        drafts: &Drafts,
        drafter: Drafter,
        budget: usize,
        device: &Device,
    ) -> Result<Shapes, Error> {
        let shape = |tree: TreeKind, acc: &[Vec<f64>], depth: usize| match tree {
            TreeKind::Balanced => Shape::balanced(BALANCED_K, depth, budget),
            _ => Shape::sparse(acc, budget),
        };
        Ok(match drafter {
            Drafter::Medusa { heads, tree } => {
                let c = calibrate(drafts, true, device).await?;
                Shapes {
                    medusa: shape(tree, &c.ranks[..heads.min(c.ranks.len())], heads),
                    eagle: Shape::balanced(1, 1, 1),
                    heads: Some(c),
                }
            }
            Drafter::Eagle { tree, depth, .. } => {
                let acc = if tree == TreeKind::Sparse {
                    calibrate(drafts, false, device).await?.ranks
                } else {
                    Vec::new()
                };
                Shapes {
                    medusa: Shape::balanced(1, 1, 1),
                    eagle: shape(tree, &acc[..depth.min(acc.len())], depth),
                    heads: None,
                }
            }
        })
    }
}

/// Decodes `prompt` on `models`' target with `drafter`'s proposals: the first call is the
/// target's alone (it yields the prompt's features), every later proposal reads the features of
/// the call before. Greedy verification gives the target's greedy output; MSS samples from it.
#[allow(clippy::too_many_arguments)]
pub async fn generate(
    models: &Models,
    drafts: &Drafts,
    shapes: &Shapes,
    drafter: Drafter,
    budget: usize,
    verification: Verification,
    prompt: &[u32],
    seed: u64,
    clock: Clock<'_>,
) -> Result<Generation, Error> {
    let spec = (drafter, budget, verification);
    decode(models, drafts, shapes, spec, prompt, seed, false, clock).await
}

/// One greedy generation of `prompt` by `drafter` with a trace of every step (the page's
/// step-through: each node's depth, Medusa's head).
pub async fn step_through(
    models: &Models,
    drafter: Drafter,
    budget: usize,
    prompt: &[u32],
    clock: Clock<'_>,
) -> Result<Generation, Error> {
    drafter.check(budget)?;
    let drafts = Drafts::load(models)?;
    let shapes = Shapes::new(&drafts, drafter, budget, &models.device).await?;
    let spec = (drafter, budget, Verification::Greedy);
    decode(models, &drafts, &shapes, spec, prompt, 0, true, clock).await
}

#[allow(clippy::too_many_arguments)]
async fn decode(
    models: &Models,
    drafts: &Drafts,
    shapes: &Shapes,
    (drafter, budget, verification): (Drafter, usize, Verification),
    prompt: &[u32],
    seed: u64,
    trace: bool,
    clock: Clock<'_>,
) -> Result<Generation, Error> {
    let device = &models.device;
    let greedy = verification == Verification::Greedy;
    let temperature = 1.0;
    let mut target = Cached::with_features(&models.target, device, temperature, drafts.width());
    let mut chance = Seeded::new(seed);
    let eagle = match drafter {
        Drafter::Eagle { ttt: true, .. } => &drafts.eagle_ttt,
        _ => &drafts.eagle,
    };
    let mut run = EagleRun::new(eagle, &drafts.trained, device);
    let mut g = Generation::default();
    g.stats.generations = 1;
    let mut ctx = prompt.to_vec();
    let max_len = likesworld::MAX_LEN;
    let rule = if greedy {
        TreeRule::Greedy
    } else {
        TreeRule::Mss
    };
    let mut values = Vec::new();
    'steps: while ctx.len() < max_len {
        let limit = max_len.saturating_sub(ctx.len() + 1);
        let feats = target.features(&ctx);
        let ready = feats.len() + 1 == ctx.len();
        let start = clock();
        let calls_before = run.calls;
        let proposal = if !ready || limit == 0 {
            Proposal::empty()
        } else {
            match drafter {
                Drafter::Medusa { .. } => {
                    let f = feats[ctx.len() - 2];
                    medusa_propose(
                        &drafts.medusa,
                        f,
                        &shapes.medusa,
                        limit,
                        device,
                        &mut values,
                    )
                    .await?
                }
                Drafter::Eagle { tree, depth, .. } => {
                    eagle_propose(
                        &mut run,
                        &ctx,
                        &feats,
                        tree,
                        depth,
                        Some(&shapes.eagle),
                        budget,
                        limit,
                        verification,
                        &mut chance,
                        &mut values,
                    )
                    .await?
                }
            }
        };
        if ready {
            // Medusa's heads are one call; EAGLE counts its own.
            let calls = match drafter {
                Drafter::Medusa { .. } => 1,
                Drafter::Eagle { .. } => run.calls - calls_before,
            };
            g.drafted(calls, start, clock(), trace);
        }
        let offset = ctx.len() - prompt.len();
        let verify = Verify::Tree(rule);
        let (emitted, _) = verify_step(
            &mut target,
            &ctx,
            offset,
            &proposal,
            verify,
            trace,
            &mut chance,
            clock,
            &mut g,
        )
        .await?;
        for &t in &emitted {
            ctx.push(t);
            if t == EOS || ctx.len() == max_len {
                break 'steps;
            }
        }
    }
    g.output = ctx.split_off(prompt.len());
    g.finish();
    Ok(g)
}

/// Acceptance by depth from a histogram of accepted tokens per step: at depth d, the fraction
/// of steps that accepted at least d − 1 tokens which accepted at least d, for d up to `depth`
/// (the deepest level the trees reach) and no further than some step got.
pub fn acceptance_by_depth(accepted: &[usize], depth: usize) -> Vec<f64> {
    let at_least = |d: usize| accepted.iter().skip(d).sum::<usize>();
    (1..=depth)
        .map(|d| {
            let tried = at_least(d - 1);
            if tried == 0 {
                f64::NAN
            } else {
                at_least(d) as f64 / tried as f64
            }
        })
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .skip_while(|x| x.is_nan())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect()
}

/// What one drafter did over some prompts.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HiddenReport {
    pub method: String,
    pub prompts: usize,
    /// Outputs equal to the target's own greedy output (greedy verification; every one of them
    /// must be).
    pub identical: usize,
    pub tokens_per_call: f64,
    pub verified_nodes_per_call: f64,
    /// Accepted speculated nodes over speculated nodes verified.
    pub accepted_fraction: f64,
    /// At depth d: of the steps that accepted d − 1 drafted tokens, the fraction that accepted d.
    pub acceptance_by_depth: Vec<f64>,
    pub draft_calls_per_step: f64,
    /// The draft's time per step over the mean target call, measured in these runs.
    pub c: f64,
    /// The calibration test's P value (MSS runs; None under greedy).
    pub p_value: Option<f64>,
    /// Medusa: top-1 and top-`TOP_K` accuracy of each head on calibration worlds (teacher-forced,
    /// against the target's argmax).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_accuracy: Option<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_accuracy_top_k: Option<Vec<f64>>,
    /// Medusa: top-1 accuracy per kind of the token guessed, per head.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub head_accuracy_by_kind: Vec<(likesworld::TokenKind, Vec<f64>)>,
    /// MSS on EAGLE-2's top-k children: the mean exact TV between the token emitted at a step's
    /// first position and the target's p there (0 for a lossless rule).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_position_tv: Option<f64>,
}

impl Drafter {
    /// The drafter in the lecture's words, in `lang`.
    pub fn describe(&self, budget: usize, verification: Verification, lang: Lang) -> String {
        let l = lang;
        let tree = |t: TreeKind| match t {
            TreeKind::Sparse => l.pick("a static sparse tree", "静态稀疏树"),
            TreeKind::Balanced => l.pick("a static balanced tree", "静态平衡树"),
            TreeKind::Dynamic => l.pick("a dynamic tree", "动态树"),
        };
        let how = match verification {
            Verification::Greedy => "VerifyGreedy",
            Verification::Mss => l.pick("children sampled, MSS", "子节点抽样，MSS"),
            Verification::MssTopK => l.pick(
                "top-k children verified by MSS as if sampled (biased)",
                "top-k 子节点当作抽样用 MSS 验证（有偏）",
            ),
        };
        let nodes = match l {
            Lang::En => format!(
                "of up to {budget} node{}",
                if budget == 1 { "" } else { "s" }
            ),
            Lang::Zh => format!("（至多 {budget} 个节点）"),
        };
        match *self {
            Drafter::Medusa { heads, tree: t } => match l {
                Lang::En => format!(
                    "Medusa, {heads} head{}, {} {nodes}, {how}",
                    if heads == 1 { "" } else { "s" },
                    tree(t)
                ),
                Lang::Zh => format!("Medusa，{heads} 个头，{}{nodes}，{how}", tree(t)),
            },
            Drafter::Eagle {
                ttt,
                tree: t,
                depth,
            } => {
                let name = if t == TreeKind::Dynamic {
                    "EAGLE-2"
                } else {
                    "EAGLE"
                };
                let ttt = if ttt {
                    l.pick(" + training-time test", " + 训练时测试")
                } else {
                    ""
                };
                // The depth drafted: a tree of `budget` nodes is at most that deep.
                let d = depth.min(budget);
                let deep = match l {
                    Lang::En => format!(", depth {d}"),
                    Lang::Zh => format!("，深度 {d}"),
                };
                match l {
                    Lang::En => format!("{name}{ttt}, {} {nodes}{deep}, {how}", tree(t)),
                    Lang::Zh => format!("{name}{ttt}，{}{nodes}{deep}，{how}", tree(t)),
                }
            }
        }
    }

    fn check(&self, budget: usize) -> Result<(), Error> {
        BUDGET.check(budget as f64)?;
        match *self {
            Drafter::Medusa { heads, .. } => HEADS.check(heads as f64).map(|_| ()),
            Drafter::Eagle { depth, .. } => DEPTH.check(depth as f64).map(|_| ()),
        }
    }
}

/// `drafter` on `prompts`, against the target's own greedy output.
#[allow(clippy::too_many_arguments)]
pub async fn evaluate(
    models: &Models,
    drafts: &Drafts,
    drafter: Drafter,
    budget: usize,
    verification: Verification,
    prompts: &[Vec<u32>],
    seed: u64,
    lang: Lang,
    clock: Clock<'_>,
    progress: crate::clock::Progress<'_>,
) -> Result<HiddenReport, Error> {
    drafter.check(budget)?;
    if verification != Verification::Greedy
        && !matches!(
            drafter,
            Drafter::Eagle {
                tree: TreeKind::Dynamic,
                ..
            }
        )
    {
        return Err(Error::Unavailable {
            what: "verification",
            why: crate::error::Text::new(
                "sampled verification runs on EAGLE-2's dynamic tree (--dynamic)",
                "抽样验证只在 EAGLE-2 的动态树上运行（--dynamic）",
            ),
        });
    }
    let device = &models.device;
    let shapes = Shapes::new(drafts, drafter, budget, device).await?;
    let reference = super::target_greedy(models, prompts, clock, &mut |_, _| {}).await?;
    let mut stats = crate::decode::stats::Stats::default();
    let mut identical = 0;
    let mut tv = (0.0, 0usize);
    for (i, (prompt, own)) in prompts.iter().zip(&reference).enumerate() {
        let seed = super::derive_seed(seed, i, 0);
        let g = generate(
            models,
            drafts,
            &shapes,
            drafter,
            budget,
            verification,
            prompt,
            seed,
            clock,
        )
        .await?;
        identical += usize::from(g.output == own.output);
        stats.add(&g.stats);
        if verification == Verification::MssTopK {
            let (s, n) =
                first_position_tv(models, drafts, &shapes, drafter, budget, prompt, seed).await?;
            tv.0 += s;
            tv.1 += n;
        }
        progress(i + 1, prompts.len());
    }
    let (target_us, _) = stats.mean_call_us();
    let steps = stats.target_calls.max(1) as f64;
    // Medusa: each head's top-1 and top-k accuracy, and top-1 per kind of the token guessed.
    let head = if let (Drafter::Medusa { heads, .. }, Some(c)) = (drafter, &shapes.heads) {
        let acc = &c.ranks[..heads.min(c.ranks.len())];
        let by_kind = c
            .by_kind
            .iter()
            .map(|(k, v)| (*k, v.iter().copied().take(heads).collect()))
            .collect();
        Some((
            acc.iter().map(|a| a[0]).collect::<Vec<f64>>(),
            acc.iter()
                .map(|a| a.iter().take(TOP_K).sum())
                .collect::<Vec<f64>>(),
            by_kind,
        ))
    } else {
        None
    };
    let depth = shapes.reach(drafter, budget);
    Ok(HiddenReport {
        method: drafter.describe(budget, verification, lang),
        prompts: prompts.len(),
        identical,
        tokens_per_call: stats.tokens_per_call(),
        verified_nodes_per_call: stats.verified_per_call(),
        accepted_fraction: stats.accepted_node_fraction(),
        acceptance_by_depth: acceptance_by_depth(&stats.accepted, depth),
        draft_calls_per_step: stats.draft_calls as f64 / steps,
        c: stats.draft_us / steps / target_us.max(f64::MIN_POSITIVE),
        p_value: (verification != Verification::Greedy).then(|| stats.calibration.p_value()),
        head_accuracy: head.as_ref().map(|h| h.0.clone()),
        head_accuracy_top_k: head.as_ref().map(|h| h.1.clone()),
        head_accuracy_by_kind: head.map(|h| h.2).unwrap_or_default(),
        first_position_tv: (verification == Verification::MssTopK)
            .then(|| tv.0 / tv.1.max(1) as f64),
    })
}

/// Σ over the steps of one generation of TV(the exact law of the token MSS emits at the first
/// position given the top-k candidates there, p), and the number of steps: EAGLE-2's top-k
/// children verified as if sampled. Replays the greedy run's contexts.
async fn first_position_tv(
    models: &Models,
    drafts: &Drafts,
    shapes: &Shapes,
    drafter: Drafter,
    budget: usize,
    prompt: &[u32],
    seed: u64,
) -> Result<(f64, usize), Error> {
    use crate::sampling::multi::{verify_given, Mode};
    let clock_zero = &|| 0.0;
    let g = generate(
        models,
        drafts,
        shapes,
        drafter,
        budget,
        Verification::Greedy,
        prompt,
        seed,
        clock_zero,
    )
    .await?;
    let device = &models.device;
    let mut target = Cached::with_features(&models.target, device, 1.0, drafts.width());
    let eagle = match drafter {
        Drafter::Eagle { ttt: true, .. } => &drafts.eagle_ttt,
        _ => &drafts.eagle,
    };
    let mut run = EagleRun::new(eagle, &drafts.trained, device);
    let (mut sum, mut n) = (0.0, 0usize);
    let full: Vec<u32> = [prompt, g.output.as_slice()].concat();
    // Score every prefix once so that the features exist, then the first position's law.
    let empty = crate::decode::Speculation::default();
    for len in prompt.len()..full.len() {
        let ctx = &full[..len];
        let p = target.score(ctx, &empty).await?.remove(0);
        if len < prompt.len() + 1 {
            continue;
        }
        let feats = target.features(ctx);
        if feats.len() + 1 < ctx.len() {
            continue;
        }
        let (_, q) = run.catch_up(ctx, &feats[..ctx.len() - 1]).await?;
        let cands: Vec<(usize, &[f64])> = ranked(&q)
            .into_iter()
            .take(TOP_K.min(budget))
            .map(|t| (t as usize, q.as_slice()))
            .collect();
        let law = verify_given(&p, &cands, Mode::Mss).output;
        sum += 0.5 * law.iter().zip(&p).map(|(a, b)| (a - b).abs()).sum::<f64>();
        n += 1;
    }
    Ok((sum, n))
}

/// One row of the lecture's §6 table, measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MethodRow {
    pub method: String,
    /// A short name for a figure's axis.
    pub short: String,
    pub tokens_per_call: f64,
    pub verified_nodes_per_call: f64,
    /// Accepted drafted nodes over drafted nodes verified.
    pub accepted_fraction: f64,
    /// The hidden-state drafts' acceptance by depth (empty for the others).
    pub acceptance_by_depth: Vec<f64>,
    pub draft_calls_per_step: f64,
    /// The draft's time per step over a one-token target call.
    pub c: f64,
    /// The lecture's prediction, verification free: E(α, γ)/(γc + 1) for a chain, τ/(1 + c) for
    /// the others.
    pub predicted_speedup: f64,
    /// τ / (T(n)/T(1) + c), with T(n)/T(1) this run's verification call over a one-token call:
    /// the same formula on the measured cost curve (so it agrees with the measured speedup up to
    /// the time spent outside model calls).
    pub predicted_speedup_curve: f64,
    /// Target-alone wall time over this method's, on the same prompts.
    pub measured_speedup: f64,
}

/// The §6 table at one node budget.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MethodsReport {
    pub budget: usize,
    pub prompts: usize,
    pub target_width: usize,
    pub rows: Vec<MethodRow>,
}

/// Prompts decoded both ways before the clock starts.
const WARM_UP: usize = 2;

/// `drafter` against the target alone on the wall clock, prompt by prompt, one after the other.
#[allow(clippy::too_many_arguments)]
async fn timed(
    models: &Models,
    drafts: &Drafts,
    drafter: Drafter,
    budget: usize,
    prompts: &[Vec<u32>],
    lang: Lang,
    clock: Clock<'_>,
) -> Result<MethodRow, Error> {
    let shapes = Shapes::new(drafts, drafter, budget, &models.device).await?;
    let plain = crate::decode::engine::Method::Target { greedy: true };
    let (mut p_stats, mut s_stats) = (
        crate::decode::stats::Stats::default(),
        crate::decode::stats::Stats::default(),
    );
    let (mut p_us, mut s_us) = (0.0, 0.0);
    // The first prompts decoded both ways before the clock counts, then every prompt.
    let warm = prompts.iter().take(WARM_UP).map(|p| (p, false));
    for (p, counted) in warm.chain(prompts.iter().map(|p| (p, true))) {
        let t0 = clock();
        let a = super::run(models, plain.clone(), 1.0, p, 0, false, clock).await?;
        let t1 = clock();
        let spec = (drafter, budget, Verification::Greedy);
        let b = decode(models, drafts, &shapes, spec, p, 0, false, clock).await?;
        let t2 = clock();
        if counted {
            p_us += t1 - t0;
            s_us += t2 - t1;
            p_stats.add(&a.stats);
            s_stats.add(&b.stats);
        }
    }
    let t1 = p_stats.mean_call_us().0.max(f64::MIN_POSITIVE);
    let tv = s_stats.mean_call_us().0;
    let steps = s_stats.target_calls.max(1) as f64;
    let c = s_stats.draft_us / steps / t1;
    let depth = shapes.reach(drafter, budget);
    Ok(MethodRow {
        short: match drafter {
            Drafter::Medusa { .. } => "Medusa".into(),
            Drafter::Eagle {
                tree: TreeKind::Dynamic,
                ttt: true,
                ..
            } => "EAGLE-2+TTT".into(),
            Drafter::Eagle {
                tree: TreeKind::Dynamic,
                ..
            } => "EAGLE-2".into(),
            Drafter::Eagle { .. } => "EAGLE".into(),
        },
        method: drafter.describe(budget, Verification::Greedy, lang),
        tokens_per_call: s_stats.tokens_per_call(),
        verified_nodes_per_call: s_stats.verified_per_call(),
        accepted_fraction: s_stats.accepted_node_fraction(),
        acceptance_by_depth: acceptance_by_depth(&s_stats.accepted, depth),
        draft_calls_per_step: s_stats.draft_calls as f64 / steps,
        c,
        predicted_speedup: s_stats.tokens_per_call() / (1.0 + c),
        predicted_speedup_curve: s_stats.tokens_per_call() / (tv / t1 + c),
        measured_speedup: p_us / s_us.max(f64::MIN_POSITIVE),
    })
}

/// Lecture §6 measured: chains of drafts A and B, a static tree of B, the suffix index without a
/// model, Medusa, EAGLE, EAGLE-2 and EAGLE-2 with the training-time test, at node budget
/// `budget`, on the models' target (trained or widened), greedy.
pub async fn methods(
    models: &Models,
    budget: usize,
    prompts: &[Vec<u32>],
    lang: Lang,
    clock: Clock<'_>,
    progress: crate::clock::Progress<'_>,
) -> Result<MethodsReport, Error> {
    let total = 8;
    use super::params::{Draft, Shape as Proposing, Speedup};
    BUDGET.check(budget as f64)?;
    let drafts = Drafts::load(models)?;
    let mut rows = Vec::new();
    let gamma = budget.min(4) as u32;
    let specs = [
        Speedup {
            draft: Draft::A,
            gamma,
            prompts: prompts.len(),
            batch: 1,
            shape: Proposing::Chain,
            config: String::new(),
        },
        Speedup {
            draft: Draft::B,
            gamma,
            prompts: prompts.len(),
            batch: 1,
            shape: Proposing::Chain,
            config: String::new(),
        },
        Speedup {
            draft: Draft::B,
            gamma,
            prompts: prompts.len(),
            batch: 1,
            shape: Proposing::Tree,
            config: static_tree(budget).into(),
        },
        Speedup {
            draft: Draft::B,
            gamma: budget.min(16) as u32,
            prompts: prompts.len(),
            batch: 1,
            shape: Proposing::Suffix,
            config: String::new(),
        },
    ];
    for spec in &specs {
        let r = super::speedup::speedup(models, spec, prompts, lang, clock, &mut |_, _| {}).await?;
        rows.push(MethodRow {
            short: match spec.shape {
                Proposing::Chain => format!("{} γ{}", spec.draft.name(), spec.gamma),
                Proposing::Tree => format!("B {}", spec.config),
                _ => lang.pick("suffix", "后缀").into(),
            },
            method: r.method,
            tokens_per_call: r.tokens_per_call,
            verified_nodes_per_call: f64::NAN,
            accepted_fraction: r.alpha,
            acceptance_by_depth: Vec::new(),
            draft_calls_per_step: r.draft_calls_per_step,
            c: r.c * r.draft_calls_per_step,
            predicted_speedup: r
                .predicted_speedup
                .unwrap_or(r.tokens_per_call / (1.0 + r.c * r.draft_calls_per_step)),
            predicted_speedup_curve: r.predicted_speedup_curve,
            measured_speedup: r.measured_speedup,
        });
        progress(rows.len(), total);
    }
    let hidden = [
        Drafter::Medusa {
            heads: 4,
            tree: TreeKind::Sparse,
        },
        Drafter::Eagle {
            ttt: false,
            tree: TreeKind::Sparse,
            depth: DEFAULT_DEPTH,
        },
        Drafter::Eagle {
            ttt: false,
            tree: TreeKind::Dynamic,
            depth: DEFAULT_DEPTH,
        },
        Drafter::Eagle {
            ttt: true,
            tree: TreeKind::Dynamic,
            depth: DEFAULT_DEPTH,
        },
    ];
    for drafter in hidden {
        rows.push(timed(models, &drafts, drafter, budget, prompts, lang, clock).await?);
        progress(rows.len(), total);
    }
    Ok(MethodsReport {
        budget,
        prompts: prompts.len(),
        target_width: models.target_width(),
        rows,
    })
}

/// A static expansion tree of draft B near `budget` nodes (⟨k₁, …⟩ with k₁ + k₁k₂ + … ≤ budget).
fn static_tree(budget: usize) -> &'static str {
    match budget {
        0..=3 => "<1,1>",
        4..=7 => "<2,1>",
        8..=13 => "<2,2,1>",
        14..=27 => "<2,2,1,1>",
        _ => "<4,2,1,1>",
    }
}

/// One proposal drawn for the page: its tree, each node's draft confidence (the product of the
/// draft's probabilities along its path) and depth (Medusa: the head that proposed it), and
/// which nodes the target's greedy verification accepts.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Pictured {
    pub method: String,
    /// The context's last few tokens, then the tree hangs off the last.
    pub context: Vec<u32>,
    pub tokens: Vec<u32>,
    pub parents: Vec<Option<usize>>,
    pub values: Vec<f64>,
    pub depths: Vec<usize>,
    pub accepted: Vec<bool>,
}

/// `drafter`'s greedy proposal after `prompt` and the first `after` tokens of the target's own
/// greedy output (at least 1: the first call yields the prompt's features), with the nodes that
/// output accepts.
pub async fn picture(
    models: &Models,
    drafts: &Drafts,
    drafter: Drafter,
    budget: usize,
    prompt: &[u32],
    after: usize,
    lang: Lang,
) -> Result<Pictured, Error> {
    drafter.check(budget)?;
    let device = &models.device;
    let clock_zero = &|| 0.0;
    let own = super::target_greedy(models, &[prompt.to_vec()], clock_zero, &mut |_, _| {}).await?;
    let output = &own[0].output;
    let after = after.clamp(1, output.len().saturating_sub(1).max(1));
    let ctx: Vec<u32> = [prompt, &output[..after.min(output.len())]].concat();
    let mut target = Cached::with_features(&models.target, device, 1.0, drafts.width());
    target
        .score(
            &ctx[..ctx.len() - 1],
            &crate::decode::Speculation::default(),
        )
        .await?;
    let feats = target.features(&ctx);
    let shapes = Shapes::new(drafts, drafter, budget, device).await?;
    let limit = likesworld::MAX_LEN.saturating_sub(ctx.len() + 1);
    let mut values = Vec::new();
    let proposal = match drafter {
        Drafter::Medusa { .. } => {
            medusa_propose(
                &drafts.medusa,
                feats[ctx.len() - 2],
                &shapes.medusa,
                limit,
                device,
                &mut values,
            )
            .await?
        }
        Drafter::Eagle { ttt, tree, depth } => {
            let eagle = if ttt {
                &drafts.eagle_ttt
            } else {
                &drafts.eagle
            };
            let mut run = EagleRun::new(eagle, &drafts.trained, device);
            eagle_propose(
                &mut run,
                &ctx,
                &feats,
                tree,
                depth,
                Some(&shapes.eagle),
                budget,
                limit,
                Verification::Greedy,
                &mut Seeded::new(0),
                &mut values,
            )
            .await?
        }
    };
    let tree = proposal.tree;
    let truth = &output[after.min(output.len())..];
    let depths = tree.depths();
    let accepted = (0..tree.len())
        .map(|n| {
            let path = tree.path_to(n);
            path.len() <= truth.len() && path.iter().zip(truth).all(|(&a, &t)| tree.tokens[a] == t)
        })
        .collect();
    Ok(Pictured {
        method: drafter.describe(budget, Verification::Greedy, lang),
        context: ctx[ctx.len().saturating_sub(6)..].to_vec(),
        tokens: tree.tokens,
        parents: tree.parents,
        values,
        depths,
        accepted,
    })
}

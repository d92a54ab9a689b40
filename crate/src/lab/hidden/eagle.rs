//! EAGLE's proposals (lecture §5.2, §4.7): a one-layer draft over [the target's feature; the
//! next token's embedding] that guesses the next feature, run autoregressively over a tree. Its
//! KV cache holds an entry per context position (the target's true feature there with the next
//! token); a proposal appends its tree's entries and drops them afterwards. Three trees:
//! - static (sparse or balanced, [`super::shapes`]): level by level, each node the rank-th token
//!   of its parent's q;
//! - dynamic (EAGLE-2): the top-k of the root, then per level the top-k nodes expanded by their
//!   top-k children, then the budget's best nodes by the product of the draft's probabilities
//!   along the path; only the nodes that could still have a kept descendant are fed (at 8 nodes
//!   on the ×16 target: 6.4 → 4.9 draft calls a step, fewer rows each, the drafting of a step
//!   from 0.21 to 0.12–0.14 of a target call, natively; the same trees);
//! - dynamic and sampled: children drawn from q, a node's next child decided before it is drawn
//!   (best-first over "the path's probability × the mass of q not yet drawn"), which keeps MSS
//!   exact; EAGLE-2's own top-k children verified by MSS as if sampled are the biased variant.

use super::drafts::{dists, floats_tensor, ints, ranked};
use super::shapes::{RankTree, TOP_K};
use crate::decode::chance::Chance;
use crate::decode::Proposal;
use crate::error::Error;
use crate::lab::params::{TreeKind, Verification};
use crate::likesworld::{self, EOS};
use crate::model::eagle::Eagle;
use crate::model::{floats, Decoder, KvCache};
use crate::sampling::Dist;
use burn::tensor::{Bool, Device, Tensor, TensorData};

/// How an EAGLE tree grows: its kind, how deep, how many nodes, the static shape a static tree
/// follows, and how it will be verified (which decides whether children are drawn).
pub struct Growth<'s> {
    pub tree: TreeKind,
    pub depth: usize,
    pub budget: usize,
    pub shape: &'s RankTree,
    pub verification: Verification,
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
pub struct EagleRun<'a> {
    draft: &'a Eagle,
    trained: &'a Decoder,
    device: &'a Device,
    cache: KvCache,
    entries: usize,
    /// Draft calls so far.
    pub calls: usize,
    /// EAGLE-2's dynamic tree feeds only the nodes that can still have a descendant among the
    /// budget's best (the same tree in fewer calls of fewer rows); off in the tests' reference.
    pruned: bool,
}

impl<'a> EagleRun<'a> {
    pub fn new(draft: &'a Eagle, trained: &'a Decoder, device: &'a Device) -> Self {
        EagleRun {
            draft,
            trained,
            device,
            cache: KvCache::new(1),
            entries: 0,
            calls: 0,
            pruned: true,
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
    pub async fn catch_up(
        &mut self,
        ctx: &[u32],
        feats: &[&[f32]],
    ) -> Result<(Vec<f32>, Dist), Error> {
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

/// The value of the `budget`-th best of `nodes`, if there are that many (the best `budget` kept
/// in order by insertion: a few hundred nodes, a budget of at most 64).
fn budget_th_value(nodes: &[Node], budget: usize) -> Option<f64> {
    if budget == 0 || nodes.len() < budget {
        return None;
    }
    let mut best: Vec<f64> = Vec::with_capacity(budget + 1);
    for n in nodes {
        let at = best.iter().position(|&b| n.value > b).unwrap_or(best.len());
        if at < budget {
            best.insert(at, n.value);
            best.truncate(budget);
        }
    }
    best.last().copied()
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

/// Draws per node at most (a node whose q is nearly covered stops being drawn from sooner).
const MAX_DRAWS: usize = 8;

impl EagleRun<'_> {
    /// A proposal after `ctx` (features `feats` up to its second-to-last token), grown as
    /// `growth` says and at most `limit` levels deep; `values` receives each node's product of
    /// the draft's probabilities along its path.
    pub async fn propose(
        &mut self,
        ctx: &[u32],
        feats: &[&[f32]],
        growth: &Growth<'_>,
        limit: usize,
        chance: &mut impl Chance,
        values: &mut Vec<f64>,
    ) -> Result<Proposal, Error> {
        values.clear();
        let (root, q_root) = self.catch_up(ctx, feats).await?;
        // A tree of `budget` nodes is at most `budget` deep: deeper levels would be drafted for
        // nothing.
        let budget = growth.budget;
        let depth = growth.depth.min(limit).min(budget);
        if depth == 0 || budget == 0 {
            return Ok(Proposal::empty());
        }
        match (growth.tree, growth.verification) {
            (TreeKind::Dynamic, Verification::Mss) => {
                self.dynamic_sampled(&root, &q_root, depth, budget, chance, values)
                    .await
            }
            (TreeKind::Dynamic, v) => {
                let sampled = v == Verification::MssTopK;
                self.dynamic_top_k(&root, &q_root, depth, budget, sampled, values)
                    .await
            }
            _ => {
                self.static_tree(&root, &q_root, depth, growth.shape, values)
                    .await
            }
        }
    }

    /// EAGLE-2: the top-k of the root, then per level the top-k nodes expanded by their top-k
    /// children, then the budget's best nodes by value; `sampled`: each node carries the q it
    /// would have been drawn from (MSS on top-k children, biased).
    async fn dynamic_top_k(
        &mut self,
        root: &[f32],
        q_root: &Dist,
        depth: usize,
        budget: usize,
        sampled: bool,
        values: &mut Vec<f64>,
    ) -> Result<Proposal, Error> {
        let mut nodes: Vec<Node> = Vec::new();
        // EAGLE-2: the top-k of the root, then per level the top-k nodes expanded by their
        // top-k children, then the budget's best nodes by value.
        for &t in ranked(q_root).iter().take(TOP_K) {
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
            // A child's value is at most its parent's, and it comes after every node so far, so a
            // node worth no more than the budget-th best cannot have a kept descendant: it is not
            // fed, and once no node of a level is worth more, growing stops. The trees are the
            // unpruned ones (the test below); the values agree to rounding, since a row's sums
            // depend in their last bits on the other rows of its call.
            if self.pruned {
                if let Some(floor) = budget_th_value(&nodes, budget) {
                    level.retain(|&p| nodes[p].value > floor);
                }
                if level.is_empty() {
                    break;
                }
            }
            self.feed(&mut nodes, root, &level).await?;
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
        let q_parent = |i: usize| -> Dist {
            match nodes[i].parent {
                Some(p) => nodes[p].fed.as_ref().expect("fed").1.clone(),
                None => q_root.clone(),
            }
        };
        Ok(to_proposal(
            &nodes,
            &all,
            |i| sampled.then(|| q_parent(i)),
            values,
        ))
    }

    /// A static tree: level by level, each node the rank-th token of its parent's q.
    async fn static_tree(
        &mut self,
        root: &[f32],
        q_root: &Dist,
        depth: usize,
        shape: &RankTree,
        values: &mut Vec<f64>,
    ) -> Result<Proposal, Error> {
        let mut nodes: Vec<Node> = Vec::new();
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
            self.feed(&mut nodes, root, &parents).await?;
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

    /// A dynamic tree with sampled children that MSS verifies exactly. Best-first over "draw one
    /// more child of v", scored value(v) × (1 − the q-mass of v's children drawn so far); whether a
    /// node gets another child is decided before that child is drawn, from what was drawn earlier,
    /// so each node's candidates are draws from q that MSS may verify in order (the sequential
    /// argument of SpecInfer's Theorem 4.2 holds for any number of candidates decided that way).
    async fn dynamic_sampled(
        &mut self,
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
        let mut covered: std::collections::HashMap<Option<usize>, (f64, usize)> =
            Default::default();
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
                    self.feed(&mut nodes, root, &unfed).await?;
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::chance::Seeded;
    use crate::model::device::Backend;
    use crate::model::Models;
    use burn::tensor::read_sync;

    /// Every candidate's node and q of `p`, flattened (a q's absence as -1).
    fn all_q(p: &Proposal) -> Vec<f64> {
        let candidates = p.candidates.iter().flatten();
        candidates
            .flat_map(|c| {
                let q = c.q.as_ref().map_or(vec![-1.0], |q| q.to_vec());
                std::iter::once(c.node as f64).chain(q)
            })
            .collect()
    }

    fn node(value: f64) -> Node {
        Node {
            token: 0,
            parent: None,
            value,
            depth: 1,
            fed: None,
        }
    }

    /// The floor is the budget-th best value, ties counted once each; none with fewer nodes than
    /// the budget (or a budget of 0).
    #[test]
    fn the_budget_th_value_counts_ties_and_needs_a_full_budget() {
        let nodes: Vec<Node> = [0.5, 0.9, 0.5, 0.1, 0.7].into_iter().map(node).collect();
        let at = |b| budget_th_value(&nodes, b);
        assert_eq!(
            [at(1), at(2), at(3), at(4), at(5)],
            [0.9, 0.7, 0.5, 0.5, 0.1].map(Some)
        );
        assert_eq!((at(6), at(0)), (None, None));
    }

    /// EAGLE-2's tree grown with pruning is the tree grown without it, node for node, with the q
    /// each node would be drawn from, its values equal to rounding (1e-4 relative: f32 logits),
    /// after every prefix of greedy generations, at budgets from 2 to 40 and depths from 2 to 8,
    /// on one draft run each (its cache carried from prefix to prefix); and pruning saved calls.
    #[test]
    fn pruning_eagle_2s_tree_keeps_the_tree_in_fewer_calls() {
        let models = read_sync(Models::load(Backend::Flex)).expect("the shipped weights load");
        let drafts = models.hidden_drafts().expect("the shipped drafts load");
        let (trained, device) = (drafts.trained(), &drafts.device);
        let shape = RankTree::balanced(1, 1, 1); // a dynamic tree follows no shape
        let (mut full, mut pruned, mut trees) = (0, 0, 0);
        for world in likesworld::prompts(4) {
            let mut seq = world.prompt();
            let prompt = seq.len();
            read_sync(async {
                while seq.len() < prompt + 12 && seq.last() != Some(&EOS) {
                    let tokens = ints(seq.clone(), [1, seq.len()], device);
                    let logits = floats(trained.forward_causal(tokens)).await?;
                    seq.push(ranked(&dists(&logits, likesworld::VOCAB).pop().expect("a row"))[0]);
                }
                Ok::<_, Error>(())
            })
            .expect("the target generates");
            let tokens = ints(seq.clone(), [1, seq.len()], device);
            let (f, _) = trained.features_causal(tokens);
            let f = read_sync(floats(f)).expect("features");
            let feats: Vec<&[f32]> = f.chunks(trained.d_model()).collect();
            for (budget, depth, v) in [
                (2, 8, Verification::Greedy),
                (4, 8, Verification::Greedy),
                (8, 8, Verification::Greedy),
                (8, 3, Verification::MssTopK),
                (16, 8, Verification::MssTopK),
                (40, 6, Verification::Greedy),
                (8, 2, Verification::Greedy),
            ] {
                let growth = Growth {
                    tree: TreeKind::Dynamic,
                    depth,
                    budget,
                    shape: &shape,
                    verification: v,
                };
                let mut runs = [true, false].map(|p| EagleRun {
                    pruned: p,
                    ..EagleRun::new(&drafts.eagle, trained, device)
                });
                for len in prompt..=seq.len() - 1 {
                    let ctx = &seq[..len];
                    let [a, b] = &mut runs;
                    let (mut va, mut vb) = (Vec::new(), Vec::new());
                    let (mut ca, mut cb) = (Seeded::new(1), Seeded::new(1));
                    let limit = 8;
                    let pa = read_sync(a.propose(ctx, &feats, &growth, limit, &mut ca, &mut va));
                    let pb = read_sync(b.propose(ctx, &feats, &growth, limit, &mut cb, &mut vb));
                    let what = format!("budget {budget}, depth {depth}, {v:?}, {ctx:?}");
                    let (pa, pb) = (pa.expect("proposes"), pb.expect("proposes"));
                    assert_eq!(pa.tree, pb.tree, "{what}");
                    let (qa, qb) = (all_q(&pa), all_q(&pb));
                    assert_eq!(qa.len(), qb.len(), "{what}");
                    assert_eq!(va.len(), vb.len(), "{what}");
                    for (x, y) in va.iter().zip(&vb).chain(qa.iter().zip(&qb)) {
                        assert!((x - y).abs() <= 1e-4 * y.abs(), "{what}: {x} against {y}");
                    }
                    trees += 1;
                }
                full += runs[1].calls;
                pruned += runs[0].calls;
                assert!(
                    runs[0].calls <= runs[1].calls,
                    "budget {budget}, depth {depth}"
                );
            }
        }
        assert!(trees > 100, "{trees} trees compared");
        assert!(pruned < full, "pruning saved no call: {pruned} of {full}");
        std::println!("{trees} trees: {pruned} draft calls pruned, {full} without pruning");
    }
}

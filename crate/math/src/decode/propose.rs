//! The draft side of a step (lecture §2.4, §4.2, §4.5): the drafts' calls, timed and counted,
//! and the [`Proposal`] they build — a chain of γ tokens, an expansion tree ⟨k₁,…⟩ whose children
//! are sampled i.i.d., without replacement or taken top-k, or the merge of several drafts'
//! chains. The engine ([`super::engine`]) then makes one target call over it and verifies.

use super::stats::{Span, Stats};
use super::{Chance, LanguageModel, Proposal, Speculation};
use crate::clock::Clock;
use crate::error::{Error, Text};
use crate::sampling::multi::Children;
use crate::sampling::rule::Rule;
use crate::sampling::speculative::Variant;
use crate::sampling::{argmax, Dist};

/// How a chain's drafts are verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainRule {
    /// Drafts are the draft's argmax; accept while each equals the target's argmax.
    Greedy,
    /// Drafts are sampled; the rule's acceptance, rejection and bonus (Algorithm 1 when the rule
    /// is [`Variant::Correct`]; Medusa's typical acceptance is one too).
    Sample(Rule),
}

/// The shape of an expansion tree: how many children each node gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// ⟨k₁, k₂, …⟩: k_i children for every node at level i − 1.
    Widths(Vec<usize>),
    /// Each node's own count, level by level: level 0 holds the root's, level j the counts of
    /// the nodes at depth j in the order the expansion adds them (by parent, then by rank), as
    /// [`crate::tree::sequoia::Plan::levels`] gives them for Sequoia's trees.
    Levels(Vec<Vec<usize>>),
}

impl Shape {
    /// The counts level by level, node by node.
    pub fn levels(&self) -> Vec<Vec<usize>> {
        match self {
            Shape::Levels(levels) => levels.clone(),
            Shape::Widths(widths) => {
                let mut nodes = 1;
                widths
                    .iter()
                    .map(|&k| {
                        let level = vec![k; nodes];
                        nodes *= k;
                        level
                    })
                    .collect()
            }
        }
    }

    /// Draft nodes (the root excluded).
    pub fn nodes(&self) -> usize {
        self.levels().iter().flatten().sum()
    }
}

pub(super) fn model<M>(drafts: &mut [M], i: usize) -> Result<&mut M, Error> {
    let n = drafts.len();
    drafts.get_mut(i).ok_or_else(|| Error::Unknown {
        what: "draft",
        name: i.to_string(),
        known: Text::new(
            format!("{n} drafts loaded"),
            format!("已加载 {n} 个草稿模型"),
        ),
    })
}

/// The draft side of a step: its random choices, its clock and what it counts.
pub(super) struct Drafting<'a, 'c, C: Chance> {
    pub(super) chance: &'a mut C,
    pub(super) clock: Clock<'c>,
    pub(super) stats: &'a mut Stats,
    pub(super) spans: Option<&'a mut Vec<Span>>,
}

impl<C: Chance> Drafting<'_, '_, C> {
    /// One draft call, timed and counted.
    async fn call<M: LanguageModel>(
        &mut self,
        m: &mut M,
        ctx: &[u32],
        tree: &Speculation,
    ) -> Result<Vec<Dist>, Error> {
        let start = (self.clock)();
        let out = m.score(ctx, tree).await?;
        let end = (self.clock)();
        self.stats.draft_calls += 1;
        self.stats.draft_us += end - start;
        if let Some(spans) = self.spans.as_deref_mut() {
            spans.push(Span {
                target: false,
                start_us: start,
                end_us: end,
                tokens: 0,
            });
        }
        Ok(out)
    }

    /// γ tokens, one draft call each (the draft's KV cache grows by one token per call).
    pub(super) async fn chain<M: LanguageModel>(
        &mut self,
        draft: &mut M,
        ctx: &[u32],
        gamma: usize,
        rule: ChainRule,
        eos: Option<u32>,
    ) -> Result<Proposal, Error> {
        let mut p = Proposal::empty();
        let mut seq = ctx.to_vec();
        let none = Speculation::default();
        for i in 0..gamma {
            let q = self.call(draft, &seq, &none).await?.swap_remove(0);
            let x = match rule {
                ChainRule::Greedy => argmax(&q) as u32,
                ChainRule::Sample(v) => self.chance.draw(&v.draft_dist(&q)) as u32,
            };
            let sampled = matches!(rule, ChainRule::Sample(_)).then(|| q.clone());
            p.q[i] = Some(q);
            p.add(i, x, sampled);
            p.draft_calls += 1;
            seq.push(x);
            if Some(x) == eos {
                return Ok(p);
            }
        }
        // Only the wrong "bonus from the draft" rule needs q_{γ+1}: one more draft call.
        if gamma > 0 && rule == ChainRule::Sample(Variant::BonusFromDraft.into()) {
            p.q[gamma] = Some(self.call(draft, &seq, &none).await?.swap_remove(0));
            p.draft_calls += 1;
        }
        Ok(p)
    }

    /// An expansion tree, one draft call per level (tree attention on the draft too).
    /// `children` is None for greedy (top-k, deterministic).
    pub(super) async fn expand<M: LanguageModel>(
        &mut self,
        draft: &mut M,
        ctx: &[u32],
        levels: &[Vec<usize>],
        children: Option<Children>,
        eos: Option<u32>,
    ) -> Result<Proposal, Error> {
        let mut p = Proposal::empty();
        // The nodes of the last level in the order the shape counts them; None where a node was
        // not added (under an end of text, or past the tokens a draft offers), so that the
        // counts of the next level stay aligned.
        let mut frontier = vec![Some(0usize)];
        for level in levels {
            let dists = self.call(draft, ctx, &p.tree).await?;
            p.draft_calls += 1;
            let mut next = Vec::new();
            for (i, slot) in frontier.iter().enumerate() {
                let k = level.get(i).copied().unwrap_or(0);
                let start = next.len();
                let Some(at) = *slot else {
                    next.resize(start + k, None);
                    continue;
                };
                if at > 0 && Some(p.tree.tokens[at - 1]) == eos {
                    next.resize(start + k, None);
                    continue;
                }
                let q = &dists[at];
                p.q[at] = Some(q.clone());
                match children {
                    None => {
                        for x in top_k(q, k) {
                            next.push(Some(p.add(at, x, None) + 1));
                        }
                    }
                    Some(Children::TopK) => {
                        // Deterministic children verified as if sampled: biased (lecture §4.5).
                        for x in top_k(q, k) {
                            next.push(Some(p.add(at, x, Some(q.clone())) + 1));
                        }
                    }
                    Some(Children::Iid) => {
                        for _ in 0..k {
                            let x = self.chance.draw(q) as u32;
                            next.push(Some(p.add(at, x, Some(q.clone())) + 1));
                        }
                    }
                    Some(Children::WithoutReplacement) => {
                        let mut qj = q.clone();
                        for _ in 0..k {
                            if qj.iter().all(|&w| w <= 0.0) {
                                break;
                            }
                            let x = self.chance.draw(&qj);
                            next.push(Some(p.add(at, x as u32, Some(qj.clone())) + 1));
                            qj[x] = 0.0;
                            let mass: f64 = qj.iter().sum();
                            if mass > 0.0 {
                                qj.iter_mut().for_each(|w| *w /= mass);
                            }
                        }
                    }
                }
                next.resize(start + k, None);
            }
            frontier = next;
        }
        Ok(p)
    }

    /// Each draft's chain of γ, merged into one tree; every draft's token is a candidate at its
    /// position, with that draft's q.
    pub(super) async fn merge<M: LanguageModel>(
        &mut self,
        drafts: &mut [M],
        ctx: &[u32],
        gamma: usize,
        greedy: bool,
        eos: Option<u32>,
    ) -> Result<Proposal, Error> {
        let mut p = Proposal::empty();
        let rule = if greedy {
            ChainRule::Greedy
        } else {
            ChainRule::Sample(Variant::Correct.into())
        };
        for d in drafts.iter_mut() {
            let chain = self.chain(d, ctx, gamma, rule, eos).await?;
            p.draft_calls += chain.draft_calls;
            let mut at = 0;
            for (i, &x) in chain.tree.tokens.iter().enumerate() {
                let q = chain.candidates[i][0].q.clone();
                if p.q[at].is_none() {
                    p.q[at] = chain.q[i].clone();
                }
                at = p.merge(at, x, q) + 1;
            }
        }
        Ok(p)
    }
}

/// The `k` most probable tokens, most probable first (ties: lowest id).
pub fn top_k(q: &[f64], k: usize) -> Vec<u32> {
    let mut order: Vec<usize> = (0..q.len()).collect();
    order.sort_by(|&a, &b| q[b].total_cmp(&q[a]).then(a.cmp(&b)));
    order.into_iter().take(k).map(|x| x as u32).collect()
}

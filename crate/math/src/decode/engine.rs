//! The draft → verify loop (lecture §2.4, §4.4, §4.5).
//!
//! A step proposes (the drafts build a [`Proposal`]: a chain, an expansion tree ⟨k₁,…⟩ from one
//! draft, or the merge of several drafts' chains), makes one target call over the context and
//! every proposed node, and verifies:
//! - chains under a sampling [`Variant`] follow Algorithm 1 literally (accept with the variant's
//!   probability, sample its rejection distribution, the bonus token when all γ pass), the wrong
//!   variants included, so that the lab can show them failing on a real model;
//! - trees (and greedy chains) walk from the root: VerifyGreedy (the target's argmax must be a
//!   child), naive sampling (a draw from p must be a child), or multi-step speculative sampling
//!   (each candidate in turn, handing the residual norm(max(0, r − q_j)) on).
//!
//! Plain decoding is the same loop with an empty proposal, so the reference and the speculative
//! runs share every line that touches the target.

pub use super::propose::ChainRule;
use super::propose::{model, Drafting, Shape};
use super::stats::{top, Check, Compared, Ending, Generation, Source, Span, StepTrace};
use super::{Chance, LanguageModel, Proposal};
use crate::clock::Clock;
use crate::error::Error;
use crate::sampling::multi::Children;
use crate::sampling::rule::Rule;
use crate::sampling::typical::Typical;
use crate::sampling::{argmax, residual, Dist};

crate::error::choices! {
    /// How a tree is verified (SpecInfer Algorithm 2).
    pub enum TreeRule("verification") {
        /// VerifyGreedy: follow the child equal to the target's argmax.
        Greedy = "greedy",
        /// Draw y ~ p; follow the child equal to y.
        Naive = "naive",
        /// Multi-step speculative sampling over the candidates, in order.
        Mss = "mss",
    }
}

/// What one run does.
#[derive(Debug, Clone, PartialEq)]
pub enum Method {
    /// The target alone, one token per call: its argmax, or a draw from p.
    Target { greedy: bool },
    /// γ tokens from draft `draft`, verified as a chain.
    Chain {
        draft: usize,
        gamma: usize,
        rule: ChainRule,
    },
    /// An expansion tree from draft `draft`: k_i children per node at level i (⟨k₁,…⟩), or each
    /// node's own count (Sequoia's trees): [`Shape`]. Greedy takes the top-k; the sampling rules
    /// draw children as `children` says.
    Expand {
        draft: usize,
        shape: Shape,
        children: Children,
        rule: TreeRule,
    },
    /// Every draft proposes a chain of γ (argmax under greedy, sampled otherwise), merged.
    Merge { gamma: usize, rule: TreeRule },
}

/// A run's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub method: Method,
    /// Generation stops when prompt + output reach this length…
    pub max_len: usize,
    /// …or after this token.
    pub eos: Option<u32>,
    /// Record a [`StepTrace`] per step and a [`Span`] per call.
    pub trace: bool,
}

/// Generates from `prompt` until `eos` or `max_len`: one [`step`] after another.
pub async fn generate<M: LanguageModel>(
    target: &mut M,
    drafts: &mut [M],
    prompt: &[u32],
    config: &Config,
    chance: &mut impl Chance,
    clock: Clock<'_>,
) -> Result<Generation, Error> {
    let mut g = Generation::default();
    g.stats.generations = 1;
    let mut ctx = prompt.to_vec();
    'steps: while ctx.len() < config.max_len {
        let at = At {
            ctx: &ctx,
            offset: ctx.len() - prompt.len(),
        };
        let emitted = step(target, drafts, at, config, chance, clock, &mut g).await?;
        for &t in &emitted {
            ctx.push(t);
            if Some(t) == config.eos || ctx.len() == config.max_len {
                break 'steps;
            }
        }
    }
    g.output = ctx.split_off(prompt.len());
    g.finish();
    Ok(g)
}

/// Where a step stands: the context so far, of which the tokens from `offset` on are output.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    pub ctx: &'a [u32],
    pub offset: usize,
}

/// How a step's proposal is checked: the rule, and whether the step is recorded for the
/// step-through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checking {
    pub verify: Verify,
    pub trace: bool,
}

/// One target call after `at.ctx`: returns the tokens it decides (1 to depth + 1), and counts
/// into `g`.
pub async fn step<M: LanguageModel>(
    target: &mut M,
    drafts: &mut [M],
    at: At<'_>,
    config: &Config,
    chance: &mut impl Chance,
    clock: Clock<'_>,
    g: &mut Generation,
) -> Result<Vec<u32>, Error> {
    let ctx = at.ctx;
    // Speculated tokens may not run past max_len: depth + 1 tokens come out of a step.
    let depth = config.max_len.saturating_sub(ctx.len() + 1);
    let eos = config.eos;
    let mut drafting = Drafting {
        chance: &mut *chance,
        clock,
        stats: &mut g.stats,
        spans: config.trace.then_some(&mut g.spans),
    };
    let proposal = match &config.method {
        Method::Target { .. } => Proposal::empty(),
        Method::Chain { draft, gamma, rule } => {
            let d = model(drafts, *draft)?;
            drafting
                .chain(d, ctx, (*gamma).min(depth), *rule, eos)
                .await?
        }
        Method::Expand {
            draft,
            shape,
            children,
            rule,
        } => {
            let d = model(drafts, *draft)?;
            let levels = shape.levels();
            let levels = &levels[..levels.len().min(depth)];
            // Greedy verification takes the top-k (deterministic) whatever `children` says.
            let children = (*rule != TreeRule::Greedy).then_some(*children);
            drafting.expand(d, ctx, levels, children, eos).await?
        }
        Method::Merge { gamma, rule } => {
            drafting
                .merge(
                    drafts,
                    ctx,
                    (*gamma).min(depth),
                    *rule == TreeRule::Greedy,
                    eos,
                )
                .await?
        }
    };
    let verify = match &config.method {
        Method::Chain {
            rule: ChainRule::Sample(v),
            ..
        } => Verify::Chain(*v),
        Method::Chain {
            rule: ChainRule::Greedy,
            ..
        }
        | Method::Target { greedy: true } => Verify::Tree(TreeRule::Greedy),
        Method::Target { greedy: false } => Verify::Tree(TreeRule::Naive),
        Method::Expand { rule, .. } | Method::Merge { rule, .. } => Verify::Tree(*rule),
    };
    let check = Checking {
        verify,
        trace: config.trace,
    };
    let (emitted, _) = verify_step(target, at, &proposal, check, chance, clock, g).await?;
    Ok(emitted)
}

/// How a step's proposal is verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Algorithm 1 over a chain, under a rule.
    Chain(Rule),
    /// A tree rule (a chain is a tree too).
    Tree(TreeRule),
    /// Medusa's typical acceptance over a tree (lossy on purpose, lecture §5.1).
    Typical(Typical),
}

/// The verify half of a step, shared by the model drafts and the model-free drafters: one target
/// call over the context and every proposed node, the rule's walk, and the counting. Returns the
/// tokens the step decides and the target's distributions (a Jacobi drafter learns from them).
pub async fn verify_step<M: LanguageModel>(
    target: &mut M,
    at: At<'_>,
    proposal: &Proposal,
    check: Checking,
    chance: &mut impl Chance,
    clock: Clock<'_>,
    g: &mut Generation,
) -> Result<(Vec<u32>, Vec<Dist>), Error> {
    let (ctx, offset) = (at.ctx, at.offset);
    let (verify, trace) = (check.verify, check.trace);
    let start = clock();
    let p = target.score(ctx, &proposal.tree).await?;
    let end = clock();
    let verdict = match verify {
        Verify::Chain(v) => verify_chain(v, proposal, &p, chance),
        Verify::Tree(rule) => verify_tree(rule, proposal, &p, chance),
        Verify::Typical(t) => verify_typical(t, proposal, &p, chance),
    };
    // Count: the call, the accepted path, which positions passed, and the calibration.
    let s = &mut g.stats;
    s.target_calls += 1;
    s.target_us += end - start;
    s.step(verdict.path.len(), proposal.tree.len());
    let positions: Vec<usize> = std::iter::once(0)
        .chain(verdict.path.iter().map(|n| n + 1))
        .collect();
    for (j, &at) in positions.iter().enumerate() {
        if !proposal.candidates[at].is_empty() {
            let passed = j < verdict.path.len();
            s.tested += 1;
            s.passed += usize::from(passed);
            g.tests.push((offset + j, passed));
        }
        s.calibration.observe(
            &p[at],
            proposal.q[at].as_deref(),
            verdict.emitted[j] as usize,
        );
        g.sources.push(match verdict.path.get(j) {
            Some(&node) => proposal.sources[node],
            None => Source::Target,
        });
    }
    if trace {
        g.spans.push(Span {
            target: true,
            start_us: start,
            end_us: end,
            tokens: verdict.emitted.len(),
        });
        let compare = verdict.drawn_at.map_or_else(Vec::new, |at| {
            // The draft's q where the last token was drawn: the candidate's (a rejection) or the
            // one after the chain (the bonus).
            let q = match proposal.candidates[at].first() {
                Some(c) => c.q.as_ref(),
                None => proposal.q[at].as_ref(),
            };
            q.map_or_else(Vec::new, |q| compare(&p[at], q, &verdict.last_dist, 6))
        });
        g.trace.push(StepTrace {
            before: offset,
            tree: proposal.tree.clone(),
            checks: verdict.checks,
            path: verdict.path,
            ending: verdict.ending,
            compare,
            cut_at_end: false,
            last_dist: top(&verdict.last_dist, 6),
            last: *verdict.emitted.last().expect("a step emits a token"),
            emitted: verdict.emitted.clone(),
        });
    }
    Ok((verdict.emitted, p))
}

/// p, q, the residual norm(max(0, p − q)) and the distribution the rule actually drew from, side
/// by side, for the tokens that lead any of p, q or the draw (at most `k` of each, by p).
fn compare(p: &[f64], q: &[f64], drawn: &[f64], k: usize) -> Vec<Compared> {
    let r = residual(p, q);
    let mut tokens: Vec<u32> = Vec::new();
    for d in [p, q, drawn] {
        for (t, _) in top(d, k) {
            if !tokens.contains(&t) {
                tokens.push(t);
            }
        }
    }
    tokens.sort_by(|&a, &b| p[b as usize].total_cmp(&p[a as usize]).then(a.cmp(&b)));
    tokens
        .into_iter()
        .map(|t| {
            let i = t as usize;
            Compared {
                token: t,
                p: p[i],
                q: q[i],
                residual: r[i],
                drawn: drawn[i],
            }
        })
        .collect()
}

/// What verification decided.
struct Verdict {
    path: Vec<usize>,
    emitted: Vec<u32>,
    checks: Vec<Check>,
    ending: Ending,
    last_dist: Dist,
    /// A sampled chain: the position whose p and q the last token's draw came from.
    drawn_at: Option<usize>,
}

impl Verdict {
    fn new() -> Verdict {
        Verdict {
            path: Vec::new(),
            emitted: Vec::new(),
            checks: Vec::new(),
            ending: Ending::Target,
            last_dist: Vec::new(),
            drawn_at: None,
        }
    }

    fn finish(mut self, ending: Ending, dist: Dist, y: usize) -> Verdict {
        self.emitted.push(y as u32);
        self.ending = ending;
        self.last_dist = dist;
        self
    }
}

/// Algorithm 1 over a chain, under `variant`'s rules.
fn verify_chain(
    variant: Rule,
    proposal: &Proposal,
    p: &[Dist],
    chance: &mut impl Chance,
) -> Verdict {
    let mut v = Verdict::new();
    let n = proposal.tree.len();
    for (i, pi) in p[..n].iter().enumerate() {
        let x = proposal.tree.tokens[i] as usize;
        let q = proposal.candidates[i][0]
            .q
            .as_ref()
            .expect("sampled drafts carry their q");
        let a = variant.accept_prob(pi, q, x);
        let (accepted, u) = chance.accept(a);
        v.checks.push(Check {
            at: i,
            node: i,
            token: x as u32,
            p: pi[x],
            q: Some(q[x]),
            a,
            u: Some(u),
            accepted,
        });
        if !accepted {
            let r = variant.reject_dist(pi, q);
            let y = chance.draw(&r);
            v.drawn_at = Some(i);
            return v.finish(Ending::Residual, r, y);
        }
        v.path.push(i);
        v.emitted.push(x as u32);
    }
    let bonus = match &proposal.q[n] {
        Some(q_next) => variant.bonus_dist(&p[n], q_next),
        None => p[n].clone(),
    };
    let y = chance.draw(&bonus);
    let ending = if n == 0 {
        Ending::Target
    } else {
        Ending::Bonus
    };
    v.drawn_at = Some(n);
    v.finish(ending, bonus, y)
}

/// Walks the tree from the root under `rule`.
fn verify_tree(
    rule: TreeRule,
    proposal: &Proposal,
    p: &[Dist],
    chance: &mut impl Chance,
) -> Verdict {
    let mut v = Verdict::new();
    let tokens = &proposal.tree.tokens;
    let mut at = 0;
    'down: loop {
        let cands = &proposal.candidates[at];
        let leaf = if at == 0 {
            Ending::Target
        } else {
            Ending::Bonus
        };
        match rule {
            TreeRule::Greedy | TreeRule::Naive => {
                let y = match rule {
                    TreeRule::Greedy => argmax(&p[at]),
                    _ => chance.draw(&p[at]),
                };
                let hit = cands.iter().find(|c| tokens[c.node] as usize == y);
                for c in cands {
                    let accepted = hit.is_some_and(|h| h.node == c.node);
                    v.checks.push(Check {
                        at,
                        node: c.node,
                        token: tokens[c.node],
                        p: p[at][tokens[c.node] as usize],
                        q: c.q.as_ref().map(|q| q[tokens[c.node] as usize]),
                        a: f64::from(u8::from(accepted)),
                        u: None,
                        accepted,
                    });
                    if accepted {
                        break;
                    }
                }
                match hit {
                    Some(c) => {
                        v.path.push(c.node);
                        v.emitted.push(y as u32);
                        at = c.node + 1;
                    }
                    None => {
                        let ending = if cands.is_empty() {
                            leaf
                        } else {
                            Ending::Target
                        };
                        return v.finish(ending, p[at].clone(), y);
                    }
                }
            }
            TreeRule::Mss => {
                let mut r = p[at].clone();
                for c in cands {
                    let x = tokens[c.node] as usize;
                    // A candidate chosen deterministically is a draw from the one-hot q = δ_x.
                    let q =
                        c.q.clone()
                            .unwrap_or_else(|| crate::sampling::one_hot(r.len(), x));
                    let a = if q[x] > 0.0 {
                        (r[x] / q[x]).min(1.0)
                    } else {
                        f64::from(u8::from(r[x] > 0.0))
                    };
                    let (accepted, u) = chance.accept(a);
                    v.checks.push(Check {
                        at,
                        node: c.node,
                        token: x as u32,
                        p: p[at][x],
                        q: c.q.as_ref().map(|q| q[x]),
                        a,
                        u: Some(u),
                        accepted,
                    });
                    if accepted {
                        v.path.push(c.node);
                        v.emitted.push(x as u32);
                        at = c.node + 1;
                        continue 'down;
                    }
                    r = residual(&r, &q);
                }
                let y = chance.draw(&r);
                let ending = if cands.is_empty() {
                    leaf
                } else {
                    Ending::Residual
                };
                return v.finish(ending, r, y);
            }
        }
    }
}

/// Medusa's typical acceptance over a tree (its `evaluate_posterior`): every node is kept when
/// p(token) > min(ε, δ·e^{−H(p)}) at its parent; the deepest root path of kept nodes wins, ties
/// going to the highest Σ ln p along it; then a token is drawn from p where that path ends.
fn verify_typical(
    t: Typical,
    proposal: &Proposal,
    p: &[Dist],
    chance: &mut impl Chance,
) -> Verdict {
    let tokens = &proposal.tree.tokens;
    // best[at]: (kept depth, Σ ln p, first node) of the best kept path down from position `at`;
    // a node's position (its index + 1) is past its parent's, so one pass from the back does.
    let mut best: Vec<(usize, f64, Option<usize>)> = vec![(0, 0.0, None); p.len()];
    for at in (0..proposal.candidates.len()).rev() {
        for c in &proposal.candidates[at] {
            let x = tokens[c.node] as usize;
            if t.keeps(&p[at], x) {
                let (depth, ll, _) = best[c.node + 1];
                let (d, l) = (depth + 1, ll + p[at][x].ln());
                if d > best[at].0 || (d == best[at].0 && l > best[at].1) {
                    best[at] = (d, l, Some(c.node));
                }
            }
        }
    }
    let mut v = Verdict::new();
    let mut at = 0;
    loop {
        let cands = &proposal.candidates[at];
        for c in cands {
            let x = tokens[c.node] as usize;
            v.checks.push(Check {
                at,
                node: c.node,
                token: x as u32,
                p: p[at][x],
                q: c.q.as_ref().map(|q| q[x]),
                a: f64::from(u8::from(t.keeps(&p[at], x))),
                u: None,
                accepted: best[at].2 == Some(c.node),
            });
        }
        match best[at].2 {
            Some(node) => {
                v.path.push(node);
                v.emitted.push(tokens[node]);
                at = node + 1;
            }
            None => {
                let y = chance.draw(&p[at]);
                let ending = if at > 0 && cands.is_empty() {
                    Ending::Bonus
                } else {
                    Ending::Target
                };
                return v.finish(ending, p[at].clone(), y);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::chance::Seeded;

    #[test]
    fn typical_acceptance_takes_the_deepest_kept_path_then_breaks_ties_by_likelihood() {
        // Root: token 1 kept (0.3 > 0.09), token 3 not (0.05). Under token 1 both children are
        // kept at depth 2; token 0 (p 0.4) beats token 2 (p 0.3). The last draw is one-hot.
        let mut pr = Proposal::empty();
        let a = pr.add(0, 1, None);
        pr.add(0, 3, None);
        pr.add(a + 1, 2, None);
        let d = pr.add(a + 1, 0, None);
        let mut p = vec![vec![0.25; 4]; 5];
        p[0] = vec![0.5, 0.3, 0.15, 0.05];
        p[a + 1] = vec![0.4, 0.1, 0.3, 0.2];
        p[d + 1] = vec![0.0, 0.0, 1.0, 0.0];
        let v = verify_typical(Typical::MEDUSA, &pr, &p, &mut Seeded::new(0));
        assert_eq!((v.path, v.emitted), (vec![a, d], vec![1, 0, 2]));
        assert_eq!(v.checks.iter().filter(|c| c.accepted).count(), 2);
        // A threshold nothing passes: the root's own draw.
        let strict = Typical::new(1.0, 1.0).unwrap();
        p[0] = vec![0.25; 4];
        let v = verify_typical(strict, &pr, &p, &mut Seeded::new(0));
        assert!(v.path.is_empty() && v.emitted.len() == 1 && v.ending == Ending::Target);
    }
}

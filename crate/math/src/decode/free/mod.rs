//! Drafting without a model (lecture §5.3, demos 05.1–05.3): the draft is looked up, not
//! computed, so it costs almost nothing (c ≈ 0) and pays off exactly as far as the workload
//! repeats itself.
//!
//! - [`lookup`]: Prompt Lookup — the last n tokens, their most recent earlier occurrence in
//!   prompt + output, and the k tokens that followed it (a chain).
//! - [`suffix`]: a suffix automaton over token sequences, the request index (this prompt and
//!   output) and the global index (earlier outputs of the workload); the longest suffix of the
//!   context is matched and its continuations, scored by frequency, grow a speculation tree
//!   best-first under a node budget (SuffixDecoding).
//! - [`jacobi`]: Jacobi iteration over a window of guesses and Lookahead decoding (an n-gram pool
//!   gathered from the Jacobi trajectory, verified in the same call as the lookahead branch).
//! - [`workloads`]: "code rewrite", "agent" (deterministic rule targets that only count calls)
//!   and LikesWorld with the real target.
//! - [`kind`]: the drafters by name (`DrafterKind`), their budgets, and the drafter each builds.
//!
//! The demos that run these drafters on the workloads (and LikesWorld on the trained target)
//! are experiments, in `specdec::lab::modelfree`.
//!
//! A [`Drafter`] plugs into the engine's verify half ([`super::engine`]): every proposal is a
//! tree of deterministic candidates verified by VerifyGreedy in one target call, so the output is
//! the target's own greedy output whatever the drafter proposes.

pub mod jacobi;
pub mod kind;
pub mod lookup;
pub mod suffix;
pub mod workloads;

use super::chance::Seeded;
use super::engine::{verify_step, At, Checking, Verify};
use super::stats::Generation;
use super::{LanguageModel, Proposal, TreeRule};
use crate::clock::Clock;
use crate::error::Error;
use crate::sampling::Dist;

/// A source of speculation trees that needs no model of its own.
pub trait Drafter {
    /// A tree after `ctx` (of which the first `prompt` tokens are the prompt), at most `depth`
    /// levels deep.
    fn propose(&mut self, ctx: &[u32], prompt: usize, depth: usize) -> Proposal;
    /// What the target said of the proposal (`p`: after the context and after every node) and
    /// which tokens the step decided. Jacobi iteration feeds on it; lookups need nothing.
    fn observe(&mut self, _ctx: &[u32], _proposal: &Proposal, _p: &[Dist], _emitted: &[u32]) {}
    /// The request ended with `output` (the suffix index remembers it for later requests).
    fn finish(&mut self, _output: &[u32]) {}
}

/// Generation limits of a model-free run (greedy: the target's argmax decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_len: usize,
    pub eos: Option<u32>,
    pub trace: bool,
}

/// Greedy decoding of `prompt` with `drafter`'s trees, verified by VerifyGreedy.
pub async fn generate<M: LanguageModel>(
    target: &mut M,
    drafter: &mut dyn Drafter,
    prompt: &[u32],
    limits: Limits,
    clock: Clock<'_>,
) -> Result<Generation, Error> {
    let mut g = Generation::default();
    g.stats.generations = 1;
    // VerifyGreedy draws nothing; the generator is only there to satisfy the signature.
    let mut chance = Seeded::new(0);
    let mut ctx = prompt.to_vec();
    'steps: while ctx.len() < limits.max_len {
        let depth = limits.max_len.saturating_sub(ctx.len() + 1);
        // The drafter's own cost, timed like a draft model's call: its c in the speedup
        // experiment is this look-up against a target call.
        let start = clock();
        let proposal = drafter.propose(&ctx, prompt.len(), depth);
        g.drafted(1, start, clock(), limits.trace);
        let at = At {
            ctx: &ctx,
            offset: ctx.len() - prompt.len(),
        };
        let check = Checking {
            verify: Verify::Tree(TreeRule::Greedy),
            trace: limits.trace,
        };
        let (emitted, p) =
            verify_step(target, at, &proposal, check, &mut chance, clock, &mut g).await?;
        drafter.observe(&ctx, &proposal, &p, &emitted);
        for &t in &emitted {
            ctx.push(t);
            if Some(t) == limits.eos || ctx.len() == limits.max_len {
                break 'steps;
            }
        }
    }
    g.output = ctx.split_off(prompt.len());
    g.finish();
    drafter.finish(&g.output);
    Ok(g)
}

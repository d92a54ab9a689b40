//! Decoding with a draft on the target's hidden states: the target's cache keeps every fed
//! position's feature, the first call of a generation is the target's alone (it yields the
//! prompt's features), and every later proposal reads the features the call before it left, so
//! no separate draft pass over the context exists. Greedy verification gives the target's greedy
//! output; MSS on a sampled dynamic tree samples from it.

use super::drafts::Drafts;
use super::eagle::{EagleRun, Growth};
use super::medusa;
use super::shapes::Shapes;
use crate::decode::chance::{Chance, Seeded};
use crate::decode::engine::{verify_step, At, Checking, TreeRule, Verify};
use crate::decode::stats::Generation;
use crate::decode::Proposal;
use crate::error::Error;
use crate::lab::context::Lab;
use crate::lab::lm::Cached;
use crate::lab::params::{Drafter, HiddenSpec, Verification};
use crate::likesworld::{self, EOS};

/// A run ready to decode: the loaded drafts, what runs (checked), and the static shapes measured
/// for it once.
pub struct Ready<'a> {
    pub drafts: &'a Drafts,
    pub spec: HiddenSpec,
    pub shapes: Shapes,
}

impl<'a> Ready<'a> {
    pub async fn new(drafts: &'a Drafts, spec: HiddenSpec) -> Result<Self, Error> {
        spec.check()?;
        let shapes = Shapes::new(drafts, spec.drafter, spec.budget).await?;
        Ok(Ready {
            drafts,
            spec,
            shapes,
        })
    }

    /// The same drafts and shapes verified another way (the shapes do not depend on it).
    pub fn verified_by(&self, verification: Verification) -> HiddenSpec {
        HiddenSpec {
            verification,
            ..self.spec
        }
    }
}

/// The proposals of one generation: Medusa's heads, or EAGLE's draft with its running cache, on
/// the drafts' device.
pub struct Proposer<'a> {
    ready: &'a Ready<'a>,
    spec: HiddenSpec,
    eagle: EagleRun<'a>,
}

impl<'a> Proposer<'a> {
    /// A fresh proposer of `ready`'s drafter, verified as `spec` says.
    pub fn new(ready: &'a Ready<'a>, spec: HiddenSpec) -> Self {
        let drafts = ready.drafts;
        let eagle = drafts.eagle_for(spec.drafter);
        Proposer {
            ready,
            spec,
            eagle: EagleRun::new(eagle, drafts.trained(), &drafts.device),
        }
    }

    /// Draft calls so far (Medusa's heads: one a proposal).
    pub fn eagle_calls(&self) -> usize {
        self.eagle.calls
    }

    /// EAGLE's draft, to replay a context (`first_position_tv`).
    pub fn eagle(&mut self) -> &mut EagleRun<'a> {
        &mut self.eagle
    }

    /// A proposal after `ctx` (features `feats` up to its second-to-last token), at most `limit`
    /// levels deep; `values` receives each node's draft confidence in its path.
    pub async fn propose(
        &mut self,
        ctx: &[u32],
        feats: &[&[f32]],
        limit: usize,
        chance: &mut impl Chance,
        values: &mut Vec<f64>,
    ) -> Result<Proposal, Error> {
        let shapes = &self.ready.shapes;
        match self.spec.drafter {
            Drafter::Medusa { .. } => {
                let f = feats[ctx.len() - 2];
                let drafts = self.ready.drafts;
                let (heads, device) = (&drafts.medusa, &drafts.device);
                medusa::propose(heads, f, &shapes.medusa, limit, device, values).await
            }
            Drafter::Eagle { tree, depth, .. } => {
                let growth = Growth {
                    tree,
                    depth,
                    budget: self.spec.budget,
                    shape: &shapes.eagle,
                    verification: self.spec.verification,
                };
                self.eagle
                    .propose(ctx, feats, &growth, limit, chance, values)
                    .await
            }
        }
    }
}

/// Decodes `prompt` on the target of `lab`'s models with `spec`'s proposals (`ready`'s drafts
/// and shapes); `trace` records every step (the page's step-through).
pub async fn decode(
    lab: Lab<'_>,
    ready: &Ready<'_>,
    spec: HiddenSpec,
    prompt: &[u32],
    seed: u64,
    trace: bool,
) -> Result<Generation, Error> {
    let (models, clock) = (lab.models, lab.clock);
    let device = &models.device;
    let greedy = spec.verification == Verification::Greedy;
    let temperature = 1.0;
    let width = ready.drafts.width();
    let mut target = Cached::with_features(&models.target, device, temperature, width);
    let mut chance = Seeded::new(seed);
    let mut proposer = Proposer::new(ready, spec);
    let mut g = Generation::default();
    g.stats.generations = 1;
    let mut ctx = prompt.to_vec();
    let max_len = likesworld::MAX_LEN;
    let verify = match spec.verification {
        _ if greedy => Verify::Tree(TreeRule::Greedy),
        Verification::Typical(t) => Verify::Typical(t),
        _ => Verify::Tree(TreeRule::Mss),
    };
    let mut values = Vec::new();
    'steps: while ctx.len() < max_len {
        let limit = max_len.saturating_sub(ctx.len() + 1);
        let feats = target.features(&ctx);
        let ready_now = feats.len() + 1 == ctx.len();
        let start = clock();
        let calls_before = proposer.eagle_calls();
        let proposal = if !ready_now || limit == 0 {
            Proposal::empty()
        } else {
            proposer
                .propose(&ctx, &feats, limit, &mut chance, &mut values)
                .await?
        };
        if ready_now {
            // Medusa's heads are one call; EAGLE counts its own.
            let calls = match spec.drafter {
                Drafter::Medusa { .. } => 1,
                Drafter::Eagle { .. } => proposer.eagle_calls() - calls_before,
            };
            g.drafted(calls, start, clock(), trace);
        }
        let at = At {
            ctx: &ctx,
            offset: ctx.len() - prompt.len(),
        };
        let check = Checking { verify, trace };
        let (emitted, _) = verify_step(
            &mut target,
            at,
            &proposal,
            check,
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

/// One greedy generation of `prompt` by `drafter` at `budget` nodes with a trace of every step
/// (the page's step-through: each node's depth, Medusa's head).
pub async fn step_through(
    lab: Lab<'_>,
    drafter: Drafter,
    budget: usize,
    prompt: &[u32],
) -> Result<Generation, Error> {
    let spec = HiddenSpec::greedy(drafter, budget);
    spec.check()?;
    let drafts = Drafts::load(lab.models)?;
    let ready = Ready::new(&drafts, spec).await?;
    decode(lab, &ready, spec, prompt, 0, true).await
}

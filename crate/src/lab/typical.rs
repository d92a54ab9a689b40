//! Typical acceptance on LikesWorld (lecture §5.1): what Medusa's relaxed rule buys in tokens per
//! target call and what it costs in fidelity, on draft B's sampled chains (beside Algorithm 1 at
//! the same γ; `repeats` samples a prompt) and on Medusa's static sparse tree (beside the same
//! tree verified greedily; one sample a prompt, as `hidden::report::evaluate` runs it), over
//! a sweep of ε with δ = √ε (Medusa's pairing: its defaults are ε 0.09, δ 0.3).
//!
//! Fidelity is measured two ways. The calibration test (`decode::stats`) asks of every emitted
//! token whether it is distributed as the target's p given its context: its p-value, beside the
//! same test on the target's own samples (a control). And the exact one-step distortion: at each
//! position the chain emitted a token, TV(the law of the token the rule emits there from one
//! draft x ~ q, p) — 0 for Algorithm 1 — averaged over the positions.

use super::context::Lab;
use super::decoding::mean_over_outputs;
use super::generate::{derive_seed, run_all};
use super::hidden::report::evaluate;
use super::hidden::{Drafts, Ready};
use super::params::{Draft, Drafter, HiddenSpec, TreeKind, Verification};
use crate::clock::Progress;
use crate::decode::engine::Method;
use crate::decode::propose::ChainRule;
use crate::decode::stats::{Generation, Stats};
use crate::error::Error;
use crate::model::medusa::MAX_HEADS;
use crate::sampling::rule::{single_position, Rule};
use crate::sampling::speculative::Variant;
use crate::sampling::tv;
use crate::sampling::typical::Typical;

/// ε of the sweep (δ = √ε).
pub const EPSILONS: [f64; 6] = [0.01, 0.03, 0.09, 0.2, 0.3, 0.5];
/// Medusa's tree budget in this experiment (the §6 table's 8 nodes).
pub const MEDUSA_BUDGET: usize = 8;

/// One rule's figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Point {
    /// None for the exact rule (Algorithm 1 on chains, greedy on Medusa's tree).
    pub epsilon: Option<f64>,
    pub delta: Option<f64>,
    pub tokens_per_call: f64,
    /// The calibration test's p-value (none for greedy decoding, which is deterministic).
    pub p_value: Option<f64>,
    /// Chains: the mean exact one-step TV at the emitted positions.
    pub step_tv: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TypicalReport {
    pub prompts: usize,
    pub repeats: usize,
    pub gamma: usize,
    /// Draft B's chain: Algorithm 1, then typical acceptance at each ε.
    pub chain_exact: Point,
    pub chain: Vec<Point>,
    /// Medusa's sparse tree of [`MEDUSA_BUDGET`] nodes: greedy, then typical at each ε.
    pub medusa_greedy: Point,
    pub medusa: Vec<Point>,
    /// The calibration test on the target's own samples of the same prompts (the control).
    pub target_p_value: f64,
}

/// The sweep's rules: ε with δ = √ε.
pub fn sweep() -> Vec<Typical> {
    EPSILONS
        .iter()
        .map(|&e| Typical {
            epsilon: e,
            delta: e.sqrt(),
        })
        .collect()
}

/// Chains of `gamma` from draft B and Medusa's tree on `prompts` (`repeats` samples each), under
/// Algorithm 1 or greedy and under typical acceptance at every rule of `rules`.
pub async fn typical(
    lab: Lab<'_>,
    prompts: &[Vec<u32>],
    gamma: usize,
    repeats: usize,
    rules: &[Typical],
    seed: u64,
    progress: Progress<'_>,
) -> Result<TypicalReport, Error> {
    let (models, clock) = (lab.models, lab.clock);
    let jobs = |s: u64| -> Vec<(Vec<u32>, u64)> {
        let each = prompts.iter().enumerate();
        each.flat_map(|(i, p)| (0..repeats).map(move |r| (p.clone(), derive_seed(s, i, r))))
            .collect()
    };
    let total = 2 * (rules.len() + 1) + 1;
    let mut done = 0;
    let chain = |rule: Rule| Method::Chain {
        draft: Draft::B.index(),
        gamma,
        rule: ChainRule::Sample(rule),
    };
    let mut points = Vec::new();
    for t in std::iter::once(None).chain(rules.iter().copied().map(Some)) {
        let rule = t.map_or(Rule::Lecture(Variant::Correct), Rule::Typical);
        let runs = run_all(models, chain(rule), 1.0, jobs(seed), clock, &mut |_, _| {}).await?;
        points.push(chain_point(lab, rule, t, jobs(seed), runs).await?);
        done += 1;
        progress(done, total);
    }
    let own = run_all(
        models,
        Method::Target { greedy: false },
        1.0,
        jobs(seed ^ 1),
        clock,
        &mut |_, _| {},
    )
    .await?;
    let mut own_stats = Stats::default();
    own.iter().for_each(|g| own_stats.add(&g.stats));
    done += 1;
    progress(done, total);
    // Medusa's tree: greedy (its output is the target's greedy output), then typical.
    let drafts = Drafts::load(models)?;
    let drafter = Drafter::Medusa {
        heads: MAX_HEADS,
        tree: TreeKind::Sparse,
    };
    let ready = Ready::new(&drafts, HiddenSpec::greedy(drafter, MEDUSA_BUDGET)).await?;
    let mut medusa = Vec::new();
    for t in std::iter::once(None).chain(rules.iter().copied().map(Some)) {
        let verification = t.map_or(Verification::Greedy, Verification::Typical);
        let spec = ready.verified_by(verification);
        let r = evaluate(lab, &ready, spec, prompts, seed, &mut |_, _| {}).await?;
        medusa.push(Point {
            epsilon: t.map(|t| t.epsilon),
            delta: t.map(|t| t.delta),
            tokens_per_call: r.tokens_per_call,
            p_value: r.p_value,
            step_tv: None,
        });
        done += 1;
        progress(done, total);
    }
    let (chain_exact, medusa_greedy) = (points.remove(0), medusa.remove(0));
    Ok(TypicalReport {
        prompts: prompts.len(),
        repeats,
        gamma,
        chain_exact,
        chain: points,
        medusa_greedy,
        medusa,
        target_p_value: own_stats.calibration.p_value(),
    })
}

/// A chain's figures from its runs (`jobs`: the prompts they ran on, in order).
async fn chain_point(
    lab: Lab<'_>,
    rule: Rule,
    typical: Option<Typical>,
    jobs: Vec<(Vec<u32>, u64)>,
    runs: Vec<Generation>,
) -> Result<Point, Error> {
    let mut stats = Stats::default();
    runs.iter().for_each(|g| stats.add(&g.stats));
    let pairs: Vec<(Vec<u32>, Generation)> = jobs.into_iter().map(|(p, _)| p).zip(runs).collect();
    Ok(Point {
        epsilon: typical.map(|t| t.epsilon),
        delta: typical.map(|t| t.delta),
        tokens_per_call: stats.tokens_per_call(),
        p_value: Some(stats.calibration.p_value()),
        step_tv: Some(step_tv(lab, &pairs, rule).await?),
    })
}

/// The mean over the positions each generation emitted of TV(the rule's one-step law from draft
/// B's q there, the target's p there): exact per position, given the context the run reached.
async fn step_tv(lab: Lab<'_>, runs: &[(Vec<u32>, Generation)], rule: Rule) -> Result<f64, Error> {
    mean_over_outputs(lab.models, runs, |p, q| {
        tv(&single_position(p, q, rule).output, p)
    })
    .await
}

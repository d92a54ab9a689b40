//! What a draft on the target's hidden states did over some prompts, against the target's own
//! greedy output: τ, the nodes verified, acceptance by depth, the draft's calls and c, the
//! calibration test under MSS, Medusa's head accuracy, and for MSS on EAGLE-2's top-k children
//! the exact distortion at each step's first position. And whether it pays on this device
//! (lecture §5's question): each prompt is decoded by the target alone (its greedy output, the
//! reference) and then with the draft, one after the other on the caller's clock, and the time
//! per output token of the one over the other's is the measured speedup, with its spread over
//! the prompts (their IQR).

use super::decode::{decode, Proposer, Ready};
use super::drafts::ranked;
use super::shapes::TOP_K;
use crate::clock::Progress;
use crate::decode::engine::Method;
use crate::decode::stats::Stats;
use crate::decode::LanguageModel;
use crate::decode::Speculation;
use crate::error::Error;
use crate::lab::context::Lab;
use crate::lab::generate::{derive_seed, run};
use crate::lab::lm::Cached;
use crate::lab::params::{Drafter, HiddenSpec, Verification};
use crate::likesworld;
use crate::model::measure;
use crate::sampling::multi::{verify_given, Mode};

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
    /// The drafts' backend where it is not the target's (on WebGPU, the CPU beside the GPU: c is
    /// then the draft's CPU time over the target's GPU step).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drafts_on: Option<&'static str>,
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
    /// The target alone's wall time per output token over this run's, on the same prompts (for
    /// greedy verification, whose outputs are the target's, the ratio of the wall times).
    pub measured_speedup: f64,
    /// The spread of the per-prompt speedups: their IQR.
    pub measured_speedup_iqr: f64,
    /// The target alone's mean call, µs: what a busy device moves (a noisy speedup's note).
    pub target_call_us: f64,
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

/// `ready`'s drafter verified as `spec` says on `prompts`, against the target's own greedy
/// output.
pub async fn evaluate(
    lab: Lab<'_>,
    ready: &Ready<'_>,
    spec: HiddenSpec,
    prompts: &[Vec<u32>],
    seed: u64,
    progress: Progress<'_>,
) -> Result<HiddenReport, Error> {
    spec.check()?;
    let (drafter, budget, verification) = (spec.drafter, spec.budget, spec.verification);
    let shapes = &ready.shapes;
    let (models, clock) = (lab.models, lab.clock);
    let plain = Method::Target { greedy: true };
    // The first prompt decoded both ways before the clock counts (the first calls warm up).
    if let Some(p) = prompts.first() {
        run(models, plain.clone(), 1.0, p, 0, false, clock).await?;
        decode(lab, ready, spec, p, derive_seed(seed, 0, 0), false).await?;
    }
    let (mut stats, mut alone) = (Stats::default(), Stats::default());
    let mut identical = 0;
    let mut tv = (0.0, 0usize);
    let (mut plain_us, mut spec_us, mut plain_tokens, mut ratios) = (0.0, 0.0, 0usize, Vec::new());
    for (i, prompt) in prompts.iter().enumerate() {
        let seed = derive_seed(seed, i, 0);
        let t0 = clock();
        let own = run(models, plain.clone(), 1.0, prompt, 0, false, clock).await?;
        let t1 = clock();
        let g = decode(lab, ready, spec, prompt, seed, false).await?;
        let t2 = clock();
        identical += usize::from(g.output == own.output);
        let per_token = |us: f64, n: usize| us / n.max(1) as f64;
        let (p, s) = (
            per_token(t1 - t0, own.output.len()),
            per_token(t2 - t1, g.output.len()),
        );
        ratios.push(p / s.max(f64::MIN_POSITIVE));
        (plain_us, spec_us) = (plain_us + t1 - t0, spec_us + t2 - t1);
        plain_tokens += own.output.len();
        alone.add(&own.stats);
        stats.add(&g.stats);
        if verification == Verification::MssTopK {
            let (s, n) = first_position_tv(lab, ready, prompt, seed).await?;
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
        method: spec.describe(lab.lang),
        drafts_on: lab.models.drafts_apart(),
        prompts: prompts.len(),
        identical,
        tokens_per_call: stats.tokens_per_call(),
        verified_nodes_per_call: stats.verified_per_call(),
        accepted_fraction: stats.accepted_node_fraction(),
        acceptance_by_depth: acceptance_by_depth(&stats.accepted, depth),
        draft_calls_per_step: stats.draft_calls as f64 / steps,
        c: stats.draft_us / steps / target_us.max(f64::MIN_POSITIVE),
        measured_speedup: (plain_us / plain_tokens.max(1) as f64)
            / (spec_us / stats.tokens.max(1) as f64).max(f64::MIN_POSITIVE),
        measured_speedup_iqr: measure::iqr(ratios),
        target_call_us: alone.mean_call_us().0,
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
    lab: Lab<'_>,
    ready: &Ready<'_>,
    prompt: &[u32],
    seed: u64,
) -> Result<(f64, usize), Error> {
    let quiet = Lab {
        clock: &|| 0.0,
        ..lab
    };
    let greedy = ready.verified_by(Verification::Greedy);
    let g = decode(quiet, ready, greedy, prompt, seed, false).await?;
    let budget = greedy.budget;
    let device = &lab.models.device;
    let width = ready.drafts.width();
    let mut target = Cached::with_features(&lab.models.target, device, 1.0, width);
    let mut proposer = Proposer::new(ready, greedy);
    let run = proposer.eagle();
    let (mut sum, mut n) = (0.0, 0usize);
    let full: Vec<u32> = [prompt, g.output.as_slice()].concat();
    // Score every prefix once so that the features exist, then the first position's law.
    let empty = Speculation::default();
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

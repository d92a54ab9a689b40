//! Greedy and sampled speculative decoding of held-out LikesWorld prompts against the target's
//! own (lecture §3.2–§3.4, §4.3–§4.5; demos 03.2, 03.3, 04.3, 04.5): greedy chains and trees
//! must give the target's output token for token; sampling must pass the calibration test; naive
//! sampling and MSS on stochastic trees, with the biased top-k beside them. Each function is one
//! method on one set of prompts; the sweeps over them are in `lab::experiment`.

use super::acceptance::{alpha_by_kind, KindAlpha, DISTRIBUTION_CHUNK};
use super::context::Lab;
use super::generate::{derive_seed, describe, run_all, target_greedy};
use super::params::{Draft, Sampling, Stochastic};
use crate::clock::Progress;
use crate::decode::engine::{Method, TreeRule};
use crate::decode::propose::top_k;
use crate::decode::stats::{Generation, Stats};
use crate::decode::Shape;
use crate::error::Error;
use crate::likesworld::{self, token_kinds, TokenKind, Q};
use crate::model::eval::distributions_many;
use crate::model::Models;
use crate::sampling::multi::{verify_given, Children, Mode};
use crate::sampling::speculative::Variant;
use crate::sampling::tv;
use crate::theory;

/// Demo 03.2 (and 04.3 for trees): greedy speculative decoding against the target's own.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GreedyReport {
    pub method: String,
    pub prompts: usize,
    /// Outputs identical to the target's own greedy output.
    pub identical: usize,
    pub tokens: usize,
    pub target_calls: usize,
    pub draft_calls: usize,
    pub tokens_per_call: f64,
    pub verified_nodes_per_call: f64,
    /// Measured α (drafted positions that passed / tested) and E(α, γ) of the i.i.d. formula.
    pub alpha: f64,
    pub formula_tokens_per_call: Option<f64>,
    pub accepted: Vec<usize>,
    pub by_kind: Vec<KindAlpha>,
    /// The target's own greedy decoding: calls (= tokens).
    pub reference_calls: usize,
}

/// Greedy decoding of every prompt with `method`, compared with `reference`.
pub async fn greedy(
    lab: Lab<'_>,
    method: Method,
    prompts: &[Vec<u32>],
    reference: &[Generation],
    progress: Progress<'_>,
) -> Result<GreedyReport, Error> {
    let jobs = prompts.iter().map(|p| (p.clone(), 0)).collect();
    let gens = run_all(lab.models, method.clone(), 1.0, jobs, lab.clock, progress).await?;
    let mut stats = Stats::default();
    let mut identical = 0;
    for (g, r) in gens.iter().zip(reference) {
        identical += usize::from(g.output == r.output);
        stats.add(&g.stats);
    }
    let runs: Vec<(Vec<u32>, Generation)> = prompts.iter().cloned().zip(gens).collect();
    let alpha = stats.alpha();
    let formula = match &method {
        Method::Chain { gamma, .. } => Some(theory::expected_tokens(alpha, *gamma as u32)),
        _ => None,
    };
    Ok(GreedyReport {
        method: describe(&method, lab.models.whose(), lab.lang),
        prompts: prompts.len(),
        identical,
        tokens: stats.tokens,
        target_calls: stats.target_calls,
        draft_calls: stats.draft_calls,
        tokens_per_call: stats.tokens_per_call(),
        verified_nodes_per_call: stats.verified_per_call(),
        alpha,
        formula_tokens_per_call: formula,
        accepted: stats.accepted.clone(),
        by_kind: alpha_by_kind(&runs),
        reference_calls: reference.iter().map(|g| g.stats.target_calls).sum(),
    })
}

/// Output statistics of sampled sequences.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct OutputStats {
    pub sequences: usize,
    pub mean_length: f64,
    pub answers: usize,
    /// Questions answered with the item the facts give.
    pub answer_accuracy: f64,
    /// Mean log p of the emitted tokens under the target (its own samples: −entropy).
    pub mean_log_p: f64,
}

/// Demo 03.3: sampling at temperature 1 against the target's own sampling.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SampleReport {
    pub method: String,
    pub variant: Variant,
    pub prompts: usize,
    pub repeats: usize,
    pub tokens: usize,
    pub target_calls: usize,
    pub tokens_per_call: f64,
    pub alpha: f64,
    /// The calibration test: χ², its degrees of freedom, and P(χ² ≥ observed) if every emitted
    /// token were distributed as the target's p.
    pub chi_square: f64,
    pub df: usize,
    pub p_value: f64,
    /// The same test on the target's own samples (a control), and output statistics of both.
    pub target_p_value: f64,
    pub speculative: OutputStats,
    pub target: OutputStats,
    pub by_kind: Vec<KindAlpha>,
}

fn output_stats(runs: &[(Vec<u32>, Generation)]) -> OutputStats {
    let mut s = OutputStats::default();
    let mut log_p = (0.0, 0usize);
    for (prompt, g) in runs {
        s.sequences += 1;
        s.mean_length += g.output.len() as f64;
        let mut seq = prompt.clone();
        seq.extend(&g.output);
        let facts: Vec<(u32, u32)> = seq
            .windows(4)
            .take_while(|w| w[0] != Q)
            .filter(|w| w[1] == likesworld::LIKES)
            .map(|w| (w[0], w[2]))
            .collect();
        for (i, k) in token_kinds(&seq).into_iter().enumerate().skip(prompt.len()) {
            if k == TokenKind::Answer {
                s.answers += 1;
                let right = facts.iter().any(|&(n, it)| n == seq[i - 1] && it == seq[i]);
                s.answer_accuracy += f64::from(u8::from(right));
            }
        }
        log_p.0 += g.stats.calibration.log_p;
        log_p.1 += g.stats.calibration.tokens;
    }
    s.mean_length /= s.sequences.max(1) as f64;
    s.answer_accuracy /= s.answers.max(1) as f64;
    s.mean_log_p = log_p.0 / log_p.1.max(1) as f64;
    s
}

/// Sampling with `s`'s chain under its verification rule, `s.repeats` times per prompt, beside
/// the target's own sampling of the same prompts with other seeds.
pub async fn sample(
    lab: Lab<'_>,
    s: &Sampling,
    prompts: &[Vec<u32>],
    progress: Progress<'_>,
) -> Result<SampleReport, Error> {
    let (method, variant, repeats, seed) = (s.method(), s.variant, s.repeats, s.seed);
    let (models, clock) = (lab.models, lab.clock);
    let jobs = |seed: u64| -> Vec<(Vec<u32>, u64)> {
        let each = prompts.iter().enumerate();
        each.flat_map(|(i, p)| (0..repeats).map(move |r| (p.clone(), derive_seed(seed, i, r))))
            .collect()
    };
    let (spec_jobs, own_jobs) = (jobs(seed), jobs(seed ^ 1));
    let each_prompt: Vec<Vec<u32>> = spec_jobs.iter().map(|(p, _)| p.clone()).collect();
    // The speculative runs, then the target's own sampling with other seeds: half the progress
    // each.
    let total = 2 * spec_jobs.len();
    let half = spec_jobs.len();
    let g = run_all(
        models,
        method.clone(),
        1.0,
        spec_jobs,
        clock,
        &mut |d, _| progress(d, total),
    )
    .await?;
    let t = Method::Target { greedy: false };
    let o = run_all(models, t, 1.0, own_jobs, clock, &mut |d, _| {
        progress(half + d, total)
    })
    .await?;
    let (mut stats, mut own_stats) = (Stats::default(), Stats::default());
    g.iter().for_each(|g| stats.add(&g.stats));
    o.iter().for_each(|o| own_stats.add(&o.stats));
    let runs: Vec<(Vec<u32>, Generation)> = each_prompt.iter().cloned().zip(g).collect();
    let own: Vec<(Vec<u32>, Generation)> = each_prompt.into_iter().zip(o).collect();
    let (chi_square, df) = stats.calibration.chi_square();
    Ok(SampleReport {
        method: describe(&method, lab.models.whose(), lab.lang),
        variant,
        prompts: prompts.len(),
        repeats,
        tokens: stats.tokens,
        target_calls: stats.target_calls,
        tokens_per_call: stats.tokens_per_call(),
        alpha: stats.alpha(),
        chi_square,
        df,
        p_value: stats.calibration.p_value(),
        target_p_value: own_stats.calibration.p_value(),
        speculative: output_stats(&runs),
        target: output_stats(&own),
        by_kind: alpha_by_kind(&runs),
    })
}

/// The mean over every output position of `runs` of `at(p, q)`, p the target's and q draft B's
/// next-token distribution there (the positions the runs reached, scored in chunks).
pub async fn mean_over_outputs(
    models: &Models,
    runs: &[(Vec<u32>, Generation)],
    mut at: impl FnMut(&[f64], &[f64]) -> f64,
) -> Result<f64, Error> {
    let (mut sum, mut n) = (0.0, 0usize);
    for chunk in runs.chunks(DISTRIBUTION_CHUNK) {
        let seqs: Vec<Vec<u32>> = chunk
            .iter()
            .map(|(prompt, g)| [prompt.as_slice(), &g.output].concat())
            .collect();
        let p = distributions_many(&models.target, &seqs, &models.device).await?;
        let q = distributions_many(&models.draft_b, &seqs, &models.draft_device).await?;
        for (i, (prompt, _)) in chunk.iter().enumerate() {
            for j in prompt.len() - 1..seqs[i].len() - 1 {
                sum += at(&p[i][j], &q[i][j]);
                n += 1;
            }
        }
    }
    Ok(sum / n.max(1) as f64)
}

/// Demo 04.5's biased variant: the exact one-position distortion TV(output, p) of verifying
/// the draft's deterministic top-k children with MSS as if sampled, averaged over the output
/// positions of the target's own greedy outputs (draft B's q there).
pub async fn top_k_distortion(
    models: &Models,
    reference: &[(Vec<u32>, Generation)],
    k: usize,
) -> Result<f64, Error> {
    mean_over_outputs(models, reference, |p, q| {
        let top = top_k(q, k);
        let cands: Vec<(usize, &[f64])> = top.iter().map(|&x| (x as usize, q)).collect();
        tv(&verify_given(p, &cands, Mode::Mss).output, p)
    })
    .await
}

/// Demo 04.5: stochastic trees, naive vs MSS.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StochasticReport {
    pub method: String,
    pub children: Children,
    pub verify: TreeRule,
    pub prompts: usize,
    pub tokens_per_call: f64,
    /// Drafted tokens accepted per call (SpecInfer Table 3 counts these).
    pub accepted_per_call: f64,
    pub verified_nodes_per_call: f64,
    pub p_value: f64,
    /// For top-k children: the mean exact one-step TV to the target (see [`top_k_distortion`]).
    pub distortion: Option<f64>,
}

/// Stochastic trees from draft B (children drawn as `children` says), verified with `verify`.
pub async fn stochastic(
    lab: Lab<'_>,
    shape: &Shape,
    children: Children,
    verify: Stochastic,
    prompts: &[Vec<u32>],
    seed: u64,
    progress: Progress<'_>,
) -> Result<StochasticReport, Error> {
    let (models, clock) = (lab.models, lab.clock);
    let rule = verify.rule();
    let method = Method::Expand {
        draft: Draft::B.index(),
        shape: shape.clone(),
        children,
        rule,
    };
    let jobs = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| (p.clone(), derive_seed(seed, i, 0)))
        .collect();
    let mut stats = Stats::default();
    for g in run_all(models, method.clone(), 1.0, jobs, clock, progress).await? {
        stats.add(&g.stats);
    }
    let distortion = if children == Children::TopK && rule == TreeRule::Mss {
        let reference = target_greedy(models, prompts, clock, &mut |_, _| {}).await?;
        let pairs: Vec<(Vec<u32>, Generation)> = prompts.iter().cloned().zip(reference).collect();
        let k = shape.levels().first().map_or(1, |root| root[0]);
        Some(top_k_distortion(models, &pairs, k).await?)
    } else {
        None
    };
    Ok(StochasticReport {
        method: describe(&method, lab.models.whose(), lab.lang),
        children,
        verify: rule,
        prompts: prompts.len(),
        tokens_per_call: stats.tokens_per_call(),
        accepted_per_call: stats.accepted_per_call(),
        verified_nodes_per_call: stats.verified_per_call(),
        p_value: stats.calibration.p_value(),
        distortion,
    })
}

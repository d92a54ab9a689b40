//! Demo 04.6: speculative decoding on the wall clock. Plain and speculative decoding of the same
//! prompts, one after the other, timed with the caller's clock, on the target the models carry
//! (the trained one, or it widened until each step is memory-bound: `model::widen`):
//! - measured α, τ (tokens per target call) and c (a draft call over a one-token target call);
//! - the lecture's prediction E(α, γ)/(γc + 1) (chains), which assumes a verification costs
//!   what one token costs;
//! - the prediction from the measured cost curve, E(α, γ)/(T(γ+1)/T(1) + γc), with T(γ+1)/T(1)
//!   the measured verification call over a one-token call: the lecture's formula with this
//!   device's roofline in place of "verification is free" (for a tree, which has no E, the
//!   measured τ over T(n)/T(1) + d·c, d its draft calls per step);
//! - the measured speedup (total plain time / total speculative time) and its spread over groups
//!   of prompts; the first prompt's calls as two lanes on one axis.
//!
//! With a batch of B prompts decoded together, every call feeds B rows (lecture §1.2, §2.5: the
//! larger the batch, the more compute-bound a step, the less speculation gains); the call costs
//! are then measured at that batch beside the runs ([`crate::model::measure::time_call`]).

use super::params::{Draft, Speedup};
use super::{describe, run, run_all};
use crate::clock::{Clock, Progress};
use crate::decode::engine::{ChainRule, Method, TreeRule};
use crate::decode::stats::{Span, Stats};
use crate::error::Error;
use crate::i18n::Lang;
use crate::model::measure;
use crate::model::Models;
use crate::sampling::multi::Children;
use crate::theory;

/// Demo 04.6: measured wall clock against the formula's prediction.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SpeedupReport {
    pub backend: &'static str,
    pub method: String,
    pub prompts: usize,
    /// How many times wider than the trained target the target is (1: the trained one).
    pub target_width: usize,
    /// Prompts decoded together.
    pub batch: usize,
    pub alpha: f64,
    /// Mean draft call / mean one-token target call, measured in these runs.
    pub c: f64,
    pub tokens_per_call: f64,
    /// Draft calls per target call (γ for a chain, the depth for a tree).
    pub draft_calls_per_step: f64,
    /// A verification call over a one-token call, measured: T(n)/T(1).
    pub verify_over_target: f64,
    /// E(α, γ) / (γc + 1), for a chain (a tree has no such formula).
    pub predicted_speedup: Option<f64>,
    /// E(α, γ) / (T(γ+1)/T(1) + γc) for a chain, τ / (T(n)/T(1) + d·c) for a tree: the
    /// lecture's formula on the measured cost curve.
    pub predicted_speedup_curve: f64,
    /// Plain wall time / speculative wall time over the same prompts.
    pub measured_speedup: f64,
    /// The spread of the per-group speedups (a group is `batch` prompts).
    pub measured_speedup_iqr: f64,
    pub plain_us: f64,
    pub speculative_us: f64,
    pub target_call_us: f64,
    pub verify_call_us: f64,
    pub draft_call_us: f64,
    /// The first prompt's calls on the wall clock: plain decoding and speculative decoding
    /// (batch 1 only).
    pub plain_lane: Vec<Span>,
    pub speculative_lane: Vec<Span>,
}

impl Speedup {
    /// The speculative method: a greedy chain of γ, or a greedy static tree.
    pub fn method(&self) -> Result<Method, Error> {
        Ok(if self.tree {
            Method::Expand {
                draft: self.draft.index(),
                widths: super::params::tree_widths(&self.config)?,
                children: Children::TopK,
                rule: TreeRule::Greedy,
            }
        } else {
            Method::Chain {
                draft: self.draft.index(),
                gamma: self.gamma as usize,
                rule: ChainRule::Greedy,
            }
        })
    }
}

/// `spec` timed against the target alone on the same prompts, `batch` prompts at a time.
pub async fn speedup(
    models: &Models,
    spec: &Speedup,
    prompts: &[Vec<u32>],
    lang: Lang,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<SpeedupReport, Error> {
    spec.check()?;
    let method = spec.method()?;
    let plain_method = Method::Target { greedy: true };
    let batch = spec.batch.min(prompts.len()).max(1);
    // Warm up both paths once (first calls allocate and, on a GPU, compile kernels).
    if let Some(p) = prompts.first() {
        run(models, plain_method.clone(), 1.0, p, 0, false, clock).await?;
        run(models, method.clone(), 1.0, p, 0, false, clock).await?;
    }
    let (mut plain, mut fast) = (Stats::default(), Stats::default());
    let (mut plain_us, mut fast_us) = (0.0, 0.0);
    let (mut plain_lane, mut speculative_lane) = (Vec::new(), Vec::new());
    let mut ratios = Vec::new();
    let groups: Vec<&[Vec<u32>]> = prompts.chunks(batch).collect();
    for (i, group) in groups.iter().enumerate() {
        let (a, b, t_plain, t_fast) = if batch == 1 {
            let t0 = clock();
            let a = run(
                models,
                plain_method.clone(),
                1.0,
                &group[0],
                0,
                i == 0,
                clock,
            )
            .await?;
            let t1 = clock();
            let b = run(models, method.clone(), 1.0, &group[0], 0, i == 0, clock).await?;
            let t2 = clock();
            if i == 0 {
                plain_lane = rebase(&a.spans);
                speculative_lane = rebase(&b.spans);
            }
            (vec![a], vec![b], t1 - t0, t2 - t1)
        } else {
            let jobs = || group.iter().map(|p| (p.clone(), 0)).collect::<Vec<_>>();
            let mut quiet = |_: usize, _: usize| {};
            let t0 = clock();
            let a = run_all(models, plain_method.clone(), 1.0, jobs(), clock, &mut quiet).await?;
            let t1 = clock();
            let b = run_all(models, method.clone(), 1.0, jobs(), clock, &mut quiet).await?;
            let t2 = clock();
            (a, b, t1 - t0, t2 - t1)
        };
        for g in &a {
            plain.add(&g.stats);
        }
        for g in &b {
            fast.add(&g.stats);
        }
        plain_us += t_plain;
        fast_us += t_fast;
        ratios.push(t_plain / t_fast.max(1e-9));
        progress(i + 1, groups.len());
    }
    let draft_calls_per_step = fast.draft_calls as f64 / fast.target_calls.max(1) as f64;
    let (target_call_us, verify_call_us, draft_call_us) = if batch == 1 {
        let (target, _) = plain.mean_call_us();
        let (verify, draft) = fast.mean_call_us();
        (target, verify, draft)
    } else {
        // The engine times a batched call as a whole; here each kind is timed at this batch.
        let nodes = fast.verified_per_call().round().max(1.0) as usize;
        let r = measure::clock_resolution(clock);
        let d = &models.device;
        let draft = match spec.draft {
            Draft::A => &models.draft_a,
            Draft::B => &models.draft_b,
        };
        let t1 = measure::time_call(&models.target, d, 1, batch, r, clock).await?;
        let tn = measure::time_call(&models.target, d, nodes + 1, batch, r, clock).await?;
        let td = measure::time_call(draft, d, 1, batch, r, clock).await?;
        (t1.median_us, tn.median_us, td.median_us)
    };
    let c = draft_call_us / target_call_us;
    let verify_over_target = verify_call_us / target_call_us;
    let alpha = fast.alpha();
    let tokens_per_call = fast.tokens_per_call();
    let chain = matches!(method, Method::Chain { .. });
    Ok(SpeedupReport {
        backend: models.backend.name(),
        method: describe(&method, lang),
        prompts: prompts.len(),
        target_width: models.target_width(),
        batch,
        alpha,
        c,
        tokens_per_call,
        draft_calls_per_step,
        verify_over_target,
        predicted_speedup: chain.then(|| theory::speedup(alpha, spec.gamma, c)),
        predicted_speedup_curve: if chain {
            theory::expected_tokens(alpha, spec.gamma)
                / (verify_over_target + f64::from(spec.gamma) * c)
        } else {
            tokens_per_call / (verify_over_target + draft_calls_per_step * c)
        },
        measured_speedup: plain_us / fast_us,
        measured_speedup_iqr: measure::iqr(ratios),
        plain_us,
        speculative_us: fast_us,
        target_call_us,
        verify_call_us,
        draft_call_us,
        plain_lane,
        speculative_lane,
    })
}

/// Spans relative to the first call's start.
fn rebase(spans: &[Span]) -> Vec<Span> {
    let t0 = spans.first().map_or(0.0, |s| s.start_us);
    spans
        .iter()
        .map(|s| Span {
            start_us: s.start_us - t0,
            end_us: s.end_us - t0,
            ..*s
        })
        .collect()
}

//! Demo 04.6: speculative decoding on the wall clock. Plain and speculative decoding of the same
//! prompts, one after the other, timed with the caller's clock: measured α and c (a draft call
//! over a one-token target call), the formula's prediction E(α, γ)/(γc + 1) beside the measured
//! speedup, and the first prompt's calls as two lanes on one axis.

use super::{describe, run};
use crate::clock::{Clock, Progress};
use crate::decode::engine::{ChainRule, Method};
use crate::decode::stats::{Span, Stats};
use crate::error::Error;
use crate::model::Models;
use crate::theory;

/// Demo 04.6: measured wall clock against the formula's prediction.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SpeedupReport {
    pub backend: &'static str,
    pub method: String,
    pub prompts: usize,
    pub alpha: f64,
    /// Mean draft call / mean one-token target call, measured in these runs.
    pub c: f64,
    pub tokens_per_call: f64,
    /// E(α, γ) / (γc + 1).
    pub predicted_speedup: f64,
    /// Plain wall time / speculative wall time over the same prompts.
    pub measured_speedup: f64,
    pub plain_us: f64,
    pub speculative_us: f64,
    pub target_call_us: f64,
    pub verify_call_us: f64,
    pub draft_call_us: f64,
    /// The first prompt's calls on the wall clock: plain decoding and speculative decoding.
    pub plain_lane: Vec<Span>,
    pub speculative_lane: Vec<Span>,
}

/// Greedy chains from `draft` with γ, timed against the target alone on the same prompts.
pub async fn speedup(
    models: &Models,
    draft: usize,
    gamma: usize,
    prompts: &[Vec<u32>],
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<SpeedupReport, Error> {
    let spec = Method::Chain {
        draft,
        gamma,
        rule: ChainRule::Greedy,
    };
    // Warm up both paths once (first calls allocate and, on a GPU, compile kernels).
    let warm = &prompts[..1.min(prompts.len())];
    for p in warm {
        run(
            models,
            Method::Target { greedy: true },
            1.0,
            p,
            0,
            false,
            clock,
        )
        .await?;
        run(models, spec.clone(), 1.0, p, 0, false, clock).await?;
    }
    let (mut plain, mut fast) = (Stats::default(), Stats::default());
    let (mut plain_us, mut fast_us) = (0.0, 0.0);
    let (mut plain_lane, mut speculative_lane) = (Vec::new(), Vec::new());
    for (i, p) in prompts.iter().enumerate() {
        let t0 = clock();
        let a = run(
            models,
            Method::Target { greedy: true },
            1.0,
            p,
            0,
            i == 0,
            clock,
        )
        .await?;
        let t1 = clock();
        let b = run(models, spec.clone(), 1.0, p, 0, i == 0, clock).await?;
        let t2 = clock();
        plain_us += t1 - t0;
        fast_us += t2 - t1;
        plain.add(&a.stats);
        fast.add(&b.stats);
        if i == 0 {
            plain_lane = rebase(&a.spans);
            speculative_lane = rebase(&b.spans);
        }
        progress(i + 1, prompts.len());
    }
    let (target_call_us, _) = plain.mean_call_us();
    let (verify_call_us, draft_call_us) = fast.mean_call_us();
    let c = draft_call_us / target_call_us;
    let alpha = fast.alpha();
    Ok(SpeedupReport {
        backend: models.backend.name(),
        method: describe(&spec),
        prompts: prompts.len(),
        alpha,
        c,
        tokens_per_call: fast.tokens_per_call(),
        predicted_speedup: theory::speedup(alpha, gamma as u32, c),
        measured_speedup: plain_us / fast_us,
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

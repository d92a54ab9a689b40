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
//! The proposer is a draft model's chain or static tree, or a drafter without a model (lecture
//! §5.3: Prompt Lookup, the suffix index, Jacobi, Lookahead), whose c is the time it takes to look
//! its tree up. [`sweep`] measures every γ of a list and sets the best measured γ beside the
//! formula's optimum and, for a chain, beside the γ the hardware-aware choice picks from this
//! device's T(k), c and the draft's vector ([`super::auto::sweep_choice`]) — demo 5's question,
//! answered on this device.
//!
//! With a batch of B prompts decoded together, every call feeds B rows (lecture §1.2, §2.5: the
//! larger the batch, the more compute-bound a step, the less speculation gains); the call costs
//! are then measured at that batch beside the runs ([`crate::model::measure::time_call`]).

use super::auto::{sweep_choice, SweepChoice};
use super::context::Lab;
use super::generate::{describe, run, run_all};
use super::lm::Cached;
use super::params::{tree_shape, Draft, Proposing, Speedup, Sweep, GAMMA};
use crate::clock::{part, Clock, Progress};
use crate::decode::engine::{ChainRule, Method, TreeRule};
use crate::decode::free::kind::{self, DrafterKind, Settings, EARLIER};
use crate::decode::free::workloads::{Kind, Workload};
use crate::decode::free::{self, Drafter, Limits};
use crate::decode::stats::{Generation, Span, Stats};
use crate::error::Error;
use crate::i18n::{zh_join, Lang};
use crate::likesworld::{EOS, MAX_LEN};
use crate::model::measure::{self, Transfer};
use crate::model::{Models, Whose};
use crate::sampling::multi::Children;
use crate::theory;

/// Demo 04.6: measured wall clock against the formula's prediction.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SpeedupReport {
    /// The target's backend.
    pub backend: &'static str,
    /// The drafts' backend where it is not the target's (on WebGPU, the CPU beside the GPU: c is
    /// then a draft's CPU time over the target's GPU step).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drafts_on: Option<&'static str>,
    pub method: String,
    /// What proposed: a chain, a tree or a drafter without a model.
    pub shape: Proposing,
    /// Tokens proposed a step: a chain's γ, a drafter's budget (a tree's shape is `method`).
    pub gamma: u32,
    pub prompts: usize,
    /// How many times wider than the trained target the target is (1: the trained one).
    pub target_width: usize,
    /// Prompts decoded together.
    pub batch: usize,
    pub alpha: f64,
    /// Mean draft call / mean one-token target call, measured in these runs.
    pub c: f64,
    pub tokens_per_call: f64,
    /// Drafted tokens accepted per target call (τ less the target's own token).
    pub accepted_per_call: f64,
    /// Output tokens of the prompts (greedy: the same both ways).
    pub tokens: usize,
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
    /// The wall time over the output tokens, µs, every row of a batch counted (the inverse of
    /// throughput): plain and speculative.
    pub plain_us_per_token: f64,
    pub speculative_us_per_token: f64,
    pub target_call_us: f64,
    pub verify_call_us: f64,
    pub draft_call_us: f64,
    /// The first prompt's calls on the wall clock: plain decoding and speculative decoding
    /// (batch 1 only; a sweep keeps none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plain_lane: Vec<Span>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub speculative_lane: Vec<Span>,
    /// With the target's weights offloaded: their crossing alone, measured after the runs
    /// (every target call above paid one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer: Option<Transfer>,
    /// The same τ and drafting at this device's limit ([`super::limit::Limit`]): at batch 1 with
    /// the weights on the device, priced by the experiment's runner once per report; never under
    /// the measured speedup.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_speedup: Option<f64>,
}

impl SpeedupReport {
    /// The groups of `batch` prompts it was timed in: its IQR is over them, and one group has
    /// none.
    pub fn groups(&self) -> usize {
        self.prompts.div_ceil(self.batch.max(1))
    }
}

/// What proposes: the engine's method with a draft model, or a drafter without a model (which
/// keeps what it learns from one prompt to the next, as the suffix index does).
enum Proposer {
    Model(Method),
    Free(Box<dyn Drafter>),
}

impl Speedup {
    /// The speculative method: a greedy chain of γ, or a greedy static tree (None for a drafter
    /// without a model, which is not one of the engine's methods).
    pub fn method(&self) -> Result<Option<Method>, Error> {
        Ok(match self.shape {
            Proposing::Tree => Some(Method::Expand {
                draft: self.draft.index(),
                shape: tree_shape(&self.config)?,
                children: Children::TopK,
                rule: TreeRule::Greedy,
            }),
            Proposing::Chain => Some(Method::Chain {
                draft: self.draft.index(),
                gamma: self.gamma as usize,
                rule: ChainRule::Greedy,
            }),
            _ => None,
        })
    }

    /// The proposer, fresh (a drafter without a model starts with an empty request index and the
    /// global index of earlier LikesWorld outputs, as in demo 05.1).
    fn proposer(&self) -> Result<Proposer, Error> {
        Ok(match (self.method()?, self.shape.free()) {
            (Some(m), _) => Proposer::Model(m),
            (None, Some(kind)) => Proposer::Free(free_drafter(kind, self.gamma as usize)),
            (None, None) => unreachable!("every shape is a method or a drafter"),
        })
    }

    /// The method in the lecture's words, in `lang`, its draft named as `whose` drafts run.
    fn describe(&self, whose: Whose, lang: Lang) -> Result<String, Error> {
        Ok(match (self.method()?, self.shape.free()) {
            (Some(m), _) => describe(&m, whose, lang),
            (_, Some(kind)) => match lang {
                Lang::En => format!(
                    "{} without a model, {} token{} a step, greedy",
                    kind.label(lang),
                    self.gamma,
                    if self.gamma == 1 { "" } else { "s" }
                ),
                Lang::Zh => format!(
                    "{}（无模型），每步 {} 个 token，贪心",
                    kind.label(lang),
                    self.gamma
                ),
            },
            (None, None) => unreachable!("every shape is a method or a drafter"),
        })
    }
}

/// A drafter without a model proposing up to `budget` tokens a step on LikesWorld.
fn free_drafter(kind: DrafterKind, budget: usize) -> Box<dyn Drafter> {
    let workload = Workload::new(Kind::Likesworld, 0, EARLIER, 0);
    let settings = Settings::new(Kind::Likesworld, kind, budget, 1, 0);
    kind::drafter(&settings, &workload)
}

/// One speculative generation of `prompt` by `proposer`, greedy, on the models' target.
async fn speculate(
    models: &Models,
    proposer: &mut Proposer,
    prompt: &[u32],
    trace: bool,
    clock: Clock<'_>,
) -> Result<Generation, Error> {
    match proposer {
        Proposer::Model(m) => run(models, m.clone(), 1.0, prompt, 0, trace, clock).await,
        Proposer::Free(drafter) => {
            let mut target = Cached::new(&models.target, &models.device, 1.0);
            let limits = Limits {
                max_len: MAX_LEN,
                eos: Some(EOS),
                trace,
            };
            free::generate(&mut target, drafter.as_mut(), prompt, limits, clock).await
        }
    }
}

/// Prompts decoded both ways before the clock starts.
const WARM_UP: usize = 2;

/// `spec` timed against the target alone on the same prompts, `batch` prompts at a time.
pub async fn speedup(
    lab: Lab<'_>,
    spec: &Speedup,
    prompts: &[Vec<u32>],
    progress: Progress<'_>,
) -> Result<SpeedupReport, Error> {
    let (models, lang, clock) = (lab.models, lab.lang, lab.clock);
    spec.check()?;
    let mut proposer = spec.proposer()?;
    let plain_method = Method::Target { greedy: true };
    let batch = spec.batch.min(prompts.len()).max(1);
    // Warm up both paths on the first prompts (first calls allocate, a browser's wasm engine
    // compiles its optimised code after a while, and a GPU compiles kernels); a drafter without
    // a model warms up on a copy of its own, so that it has learnt nothing yet.
    let mut warm = spec.proposer()?;
    for p in prompts.iter().take(WARM_UP) {
        run(models, plain_method.clone(), 1.0, p, 0, false, clock).await?;
        speculate(models, &mut warm, p, false, clock).await?;
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
            let b = speculate(models, &mut proposer, &group[0], i == 0, clock).await?;
            let t2 = clock();
            if i == 0 {
                plain_lane = rebase(&a.spans);
                speculative_lane = rebase(&b.spans);
            }
            (vec![a], vec![b], t1 - t0, t2 - t1)
        } else {
            let Proposer::Model(method) = &proposer else {
                unreachable!("checked: a drafter without a model runs at batch 1")
            };
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
        let dd = &models.draft_device;
        let t1 = measure::time_call(&models.target, d, 1, batch, r, clock).await?;
        let tn = measure::time_call(&models.target, d, nodes + 1, batch, r, clock).await?;
        let td = measure::time_call(draft, dd, 1, batch, r, clock).await?;
        (t1.median_us, tn.median_us, td.median_us)
    };
    // With the weights offloaded, their crossing alone (every call above paid it).
    let transfer = match models.offloaded() {
        true => measure::transfer(&models.target, measure::clock_resolution(clock), clock).await?,
        false => None,
    };
    let c = draft_call_us / target_call_us;
    let verify_over_target = verify_call_us / target_call_us;
    let alpha = fast.alpha();
    let tokens_per_call = fast.tokens_per_call();
    let chain = spec.shape == Proposing::Chain;
    Ok(SpeedupReport {
        backend: models.backend.name(),
        drafts_on: models
            .drafts_apart()
            .filter(|_| matches!(proposer, Proposer::Model(_))),
        method: spec.describe(models.whose(), lang)?,
        shape: spec.shape,
        gamma: spec.gamma,
        prompts: prompts.len(),
        target_width: models.target_width(),
        batch,
        alpha,
        c,
        tokens_per_call,
        accepted_per_call: fast.accepted_per_call(),
        tokens: plain.tokens,
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
        plain_us_per_token: plain_us / plain.tokens.max(1) as f64,
        speculative_us_per_token: fast_us / plain.tokens.max(1) as f64,
        target_call_us,
        verify_call_us,
        draft_call_us,
        plain_lane,
        speculative_lane,
        transfer,
        limit_speedup: None,
    })
}

/// Prices `reports` (one γ each, of `spec`'s shape) at this device's limit: the same τ and
/// drafting with every verification call at T_lim (issue 54, item 4). Only at batch 1 with the
/// weights on the device (the limit is a single row's, and has no crossing).
pub async fn with_limit(
    lab: Lab<'_>,
    spec_config: &str,
    reports: &mut [SpeedupReport],
) -> Result<(), Error> {
    if reports.is_empty() || lab.models.offloaded() || reports.iter().any(|r| r.batch != 1) {
        return Ok(());
    }
    let limit = super::limit::Limit::measure(lab, None, &[]).await?;
    for r in reports {
        // The verification call: a tree's nodes + 1, a chain's (or a drafter's) γ + 1.
        let k = match r.shape {
            Proposing::Tree => super::params::tree_shape(spec_config)?.nodes() as f64 + 1.0,
            _ => f64::from(r.gamma) + 1.0,
        };
        let drafting = r.c * r.draft_calls_per_step;
        let (tau, wall) = (r.tokens_per_call, r.measured_speedup);
        let at_limit = limit.speedup(tau, k, r.verify_over_target, drafting, wall);
        r.limit_speedup = Some(at_limit);
    }
    Ok(())
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

impl Sweep {
    /// What proposes, γ aside, in `lang`, its draft named as `whose` drafts run.
    fn describe(&self, whose: Whose, lang: Lang) -> String {
        let draft = self.draft.called(whose, lang);
        match (self.shape.free(), lang) {
            (Some(kind), Lang::En) => format!("{} without a model, greedy", kind.label(lang)),
            (Some(kind), Lang::Zh) => format!("{}（无模型），贪心", kind.label(lang)),
            (None, Lang::En) => format!("{draft} chains, greedy"),
            (None, Lang::Zh) => format!("{}，贪心", zh_join(draft, "链")),
        }
    }
}

/// Demo 5 answered by measurement: the speedup of each γ of a sweep, the best measured γ, and
/// beside it the γ the formula picks from the measured α and c, and the best γ of the measured
/// cost curve.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SweepReport {
    /// What proposes, γ aside, in the lecture's words.
    pub method: String,
    pub shape: Proposing,
    pub target_width: usize,
    pub batch: usize,
    /// One report per γ, in increasing γ (without their lanes).
    pub rows: Vec<SpeedupReport>,
    /// The γ with the largest measured wall-clock speedup, and that speedup.
    pub best_gamma: u32,
    pub best_speedup: f64,
    /// The γ the measured-curve prediction E(α, γ)/(T(γ+1)/T(1) + γc) ranks first (for a drafter
    /// without a model, τ over its measured cost), and its prediction.
    pub curve_gamma: u32,
    pub curve_speedup: f64,
    /// α and c over the sweep (their means over the γ measured).
    pub alpha: f64,
    pub c: f64,
    /// The lecture's formula E(α, γ)/(γc + 1) at each γ of `rows` with the mean α and c (α and c
    /// belong to the draft and the target, not to γ: one pair for the whole sweep, so that the
    /// optimum below is the best of these and of every other γ), chains only.
    pub formula_at: Vec<f64>,
    /// The lecture's optimum, `theory::optimal_gamma(α, c)` over 0 ≤ γ ≤ 16 with the mean α and c
    /// (0: no γ pays), and the speedup the formula promises there (chains only: a drafter
    /// without a model has no E(α, γ)).
    pub formula_gamma: Option<u32>,
    pub formula_speedup: Option<f64>,
    /// The device's choice for a chain: the γ the hardware-aware choice picks from T(k) timed in
    /// this job, the draft's vector and c, and its prediction (none for a drafter without a
    /// model, which has no vector).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_choice: Option<SweepChoice>,
}

/// Every γ of `sweep` measured as [`speedup`] measures one, on the same prompts.
pub async fn sweep(
    lab: Lab<'_>,
    sweep: &Sweep,
    prompts: &[Vec<u32>],
    progress: Progress<'_>,
) -> Result<SweepReport, Error> {
    let (models, lang) = (lab.models, lab.lang);
    let gammas = sweep.check()?;
    let mut rows = Vec::with_capacity(gammas.len());
    // Each γ reports one unit per group of prompts, as `speedup` counts them.
    let groups = prompts
        .len()
        .div_ceil(sweep.batch.min(prompts.len()).max(1));
    for (k, &gamma) in gammas.iter().enumerate() {
        let mut tell = part(progress, k, groups, groups * gammas.len());
        let mut r = speedup(lab, &sweep.at(gamma), prompts, &mut tell).await?;
        r.plain_lane.clear();
        r.speculative_lane.clear();
        rows.push(r);
    }
    let best = |key: fn(&SpeedupReport) -> f64| {
        let i = (0..rows.len())
            .max_by(|&a, &b| key(&rows[a]).total_cmp(&key(&rows[b])))
            .expect("a sweep measures at least one γ");
        (gammas[i], key(&rows[i]))
    };
    let (best_gamma, best_speedup) = best(|r| r.measured_speedup);
    let (curve_gamma, curve_speedup) = best(|r| r.predicted_speedup_curve);
    let mean =
        |key: fn(&SpeedupReport) -> f64| rows.iter().map(key).sum::<f64>() / rows.len() as f64;
    let (alpha, c) = (mean(|r| r.alpha), mean(|r| r.c));
    let chain = sweep.shape == Proposing::Chain && alpha.is_finite();
    let a = alpha.clamp(0.0, 0.999_999);
    let formula = chain.then(|| theory::optimal_gamma(a, c, GAMMA.max as u32));
    let device_choice = match sweep.shape {
        Proposing::Chain => {
            let top = *gammas.last().expect("a checked list") as usize;
            Some(sweep_choice(lab, sweep.draft, rows[0].batch, top).await?)
        }
        _ => None,
    };
    let formula_at = if chain {
        gammas.iter().map(|&g| theory::speedup(a, g, c)).collect()
    } else {
        Vec::new()
    };
    Ok(SweepReport {
        method: sweep.describe(models.whose(), lang),
        shape: sweep.shape,
        formula_at,
        target_width: models.target_width(),
        batch: rows[0].batch,
        best_gamma,
        best_speedup,
        curve_gamma,
        curve_speedup,
        alpha,
        c,
        formula_gamma: formula.map(|f| f.0),
        formula_speedup: formula.map(|f| f.1),
        device_choice,
        rows,
    })
}

//! Lecture §6 measured: every method of the lecture on one wall-clock axis at one node budget —
//! chains of drafts A and B, a static tree of B, the suffix index without a model (timed by
//! [`super::speedup`]), Medusa, EAGLE, EAGLE-2 and EAGLE-2 with the training-time test (timed
//! here with [`super::hidden`]'s decoding) — each against the target alone on the same prompts.
//! It sits above both experiments it compares. With the budget `auto` every row runs at the size
//! [`super::auto`] chooses for this device from T(k), c and its draft's vector, timed in the same
//! job (the suffix index, which has no vector, at a fixed budget), and says which and what it
//! predicts.

use super::auto::{self, Sized, Sizes};
use super::context::Lab;
use super::generate::run;
use super::hidden::decode::{decode, Ready};
use super::hidden::drafts::Drafts;
use super::hidden::report::acceptance_by_depth;
use super::limit::Limit;
use super::params::ranges::tree_shape;
use super::params::{
    Budget, Draft, HiddenMethod, HiddenSpec, Proposing, Speedup, Verification, DEFAULT_DEPTH,
    DEFAULT_GAMMA, RANKS_PREFIX,
};
use super::speedup::speedup;
use crate::clock::Progress;
use crate::decode::engine::Method;
use crate::decode::stats::Stats;
use crate::error::Error;
use crate::model::medusa::MAX_HEADS;

/// One row of the lecture's §6 table, measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MethodRow {
    pub method: String,
    /// A short name for a figure's axis.
    pub short: String,
    pub tokens_per_call: f64,
    pub verified_nodes_per_call: f64,
    /// Accepted drafted nodes over drafted nodes verified.
    pub accepted_fraction: f64,
    /// The hidden-state drafts' acceptance by depth (empty for the others).
    pub acceptance_by_depth: Vec<f64>,
    pub draft_calls_per_step: f64,
    /// The draft's time per step over a one-token target call.
    pub c: f64,
    /// T(n)/T(1): this run's mean verification call over its mean one-token call (plain decoding's).
    pub verify_over_target: f64,
    /// The lecture's prediction, verification free: τ/(1 + c) with `c` the drafting of a step;
    /// for a chain E(α, γ)/(γc + 1), with c there a draft call's.
    pub predicted_speedup: f64,
    /// τ / (T(n)/T(1) + c), with T(n)/T(1) this run's verification call over a one-token call:
    /// the same formula on the measured cost curve (so it agrees with the measured speedup up to
    /// the time spent outside model calls).
    pub predicted_speedup_curve: f64,
    /// Target-alone wall time over this method's, on the same prompts.
    pub measured_speedup: f64,
    /// The spread (IQR) of that ratio prompt by prompt (a chain's: group by group).
    pub measured_speedup_iqr: f64,
    /// τ / (min(T_lim(k)/T_lim(1), T(n)/T(1)) + c): the same τ and drafting at this device's
    /// limit ([`super::limit::Limit`]), k the row's verification call, no call priced dearer than
    /// this run paid (nor under a one-token call); never under the measured speedup, which sets it where the run's own call
    /// timers priced a step dearer than the wall clock did.
    pub limit_speedup: f64,
    /// With the budget `auto`: the size chosen for this device and what the choice predicts
    /// (none for the suffix index, which keeps a fixed budget, nor with a budget of nodes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto: Option<Sized>,
}

/// The §6 table at one node budget.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MethodsReport {
    /// A number of nodes, or `auto`: each row at its device-best size ([`MethodRow::auto`]).
    pub budget: Budget,
    /// With `auto`: T(1) … T(K) of the target, µs, timed in this job, and the suffix index's
    /// fixed budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub times_us: Option<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suffix_nodes: Option<usize>,
    /// Where every model draft of the table ran where it is not the target's backend (on WebGPU,
    /// the CPU beside the GPU); the rows are compared at one placement either way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drafts_on: Option<&'static str>,
    pub prompts: usize,
    pub target_width: usize,
    pub rows: Vec<MethodRow>,
}

/// Prompts decoded both ways before the clock starts.
const WARM_UP: usize = 2;

/// `ready`'s drafter, greedy, against the target alone on the wall clock, prompt by prompt, one
/// after the other.
pub(super) async fn timed(
    lab: Lab<'_>,
    ready: &Ready<'_>,
    prompts: &[Vec<u32>],
) -> Result<MethodRow, Error> {
    let (models, clock) = (lab.models, lab.clock);
    let spec = ready.verified_by(Verification::Greedy);
    let (drafter, budget) = (spec.drafter, spec.budget);
    let shapes = &ready.shapes;
    let plain = Method::Target { greedy: true };
    let (mut p_stats, mut s_stats) = (Stats::default(), Stats::default());
    let (mut p_us, mut s_us) = (0.0, 0.0);
    let mut ratios = Vec::with_capacity(prompts.len());
    // The first prompts decoded both ways before the clock counts, then every prompt.
    let warm = prompts.iter().take(WARM_UP).map(|p| (p, false));
    for (p, counted) in warm.chain(prompts.iter().map(|p| (p, true))) {
        let t0 = clock();
        let a = run(models, plain.clone(), 1.0, p, 0, false, clock).await?;
        let t1 = clock();
        let b = decode(lab, ready, spec, p, 0, false).await?;
        let t2 = clock();
        if counted {
            p_us += t1 - t0;
            s_us += t2 - t1;
            // Greedy: the same output tokens both ways, so the times' ratio is the speedup.
            ratios.push((t1 - t0) / (t2 - t1).max(f64::MIN_POSITIVE));
            p_stats.add(&a.stats);
            s_stats.add(&b.stats);
        }
    }
    let t1 = p_stats.mean_call_us().0.max(f64::MIN_POSITIVE);
    let tv = s_stats.mean_call_us().0;
    let steps = s_stats.target_calls.max(1) as f64;
    let c = s_stats.draft_us / steps / t1;
    let depth = shapes.reach(drafter, budget);
    Ok(MethodRow {
        short: drafter.short().into(),
        method: spec.describe(lab.lang),
        tokens_per_call: s_stats.tokens_per_call(),
        verified_nodes_per_call: s_stats.verified_per_call(),
        accepted_fraction: s_stats.accepted_node_fraction(),
        acceptance_by_depth: acceptance_by_depth(&s_stats.accepted, depth),
        draft_calls_per_step: s_stats.draft_calls as f64 / steps,
        c,
        verify_over_target: tv / t1,
        predicted_speedup: s_stats.tokens_per_call() / (1.0 + c),
        predicted_speedup_curve: s_stats.tokens_per_call() / (tv / t1 + c),
        measured_speedup: p_us / s_us.max(f64::MIN_POSITIVE),
        measured_speedup_iqr: match ratios.is_empty() {
            true => 0.0,
            false => crate::model::measure::iqr(ratios),
        },
        // Priced by `methods` once the device's limit is measured.
        limit_speedup: f64::NAN,
        auto: None,
    })
}

/// Lecture §6 measured: chains of drafts A and B, a static tree of B, the suffix index without a
/// model, Medusa, EAGLE, EAGLE-2 and EAGLE-2 with the training-time test, at node budget
/// `budget` (or each at its device-best size: `auto`), on the models' target (trained or
/// widened), greedy.
pub async fn methods(
    lab: Lab<'_>,
    budget: Budget,
    prompts: &[Vec<u32>],
    progress: Progress<'_>,
) -> Result<MethodsReport, Error> {
    let (models, lang) = (lab.models, lab.lang);
    budget.check()?;
    let sizes = match budget {
        Budget::Auto => Some(auto::sizes(lab).await?),
        Budget::Nodes(_) => None,
    };
    let total = 8 + usize::from(sizes.is_some());
    let mut rows = Vec::new();
    let mut calls = Vec::new();
    if sizes.is_some() {
        progress(1, total);
    }
    let drafts = Drafts::load(models)?;
    let plan = Plan::new(budget, sizes.as_ref());
    let spec = |draft, gamma, shape, config: String| Speedup {
        draft,
        gamma,
        prompts: prompts.len(),
        batch: 1,
        shape,
        config,
    };
    let specs = [
        spec(Draft::A, plan.gamma_a, Proposing::Chain, String::new()),
        spec(Draft::B, plan.gamma_b, Proposing::Chain, String::new()),
        spec(Draft::B, plan.gamma_b, Proposing::Tree, plan.tree.clone()),
        spec(Draft::B, plan.suffix, Proposing::Suffix, String::new()),
    ];
    let chosen = sizes.as_ref().map(|s| {
        [
            Some(s.chain_a.clone()),
            Some(s.chain_b.clone()),
            Some(s.tree_b.clone()),
            None,
        ]
    });
    for (i, spec) in specs.iter().enumerate() {
        let r = speedup(lab, spec, prompts, &mut |_, _| {}).await?;
        let auto = chosen.as_ref().and_then(|c| c[i].clone());
        rows.push(MethodRow {
            short: match (spec.shape, &auto) {
                (Proposing::Chain, _) => format!("{} γ{}", spec.draft.letter(), spec.gamma),
                (Proposing::Tree, Some(a)) => format!("B n{}", a.size),
                (Proposing::Tree, None) => format!("B {}", spec.config),
                _ => lang.pick("suffix", "后缀").into(),
            },
            method: r.method,
            tokens_per_call: r.tokens_per_call,
            verified_nodes_per_call: f64::NAN,
            accepted_fraction: r.alpha,
            acceptance_by_depth: Vec::new(),
            draft_calls_per_step: r.draft_calls_per_step,
            c: r.c * r.draft_calls_per_step,
            verify_over_target: r.verify_over_target,
            predicted_speedup: r
                .predicted_speedup
                .unwrap_or(r.tokens_per_call / (1.0 + r.c * r.draft_calls_per_step)),
            predicted_speedup_curve: r.predicted_speedup_curve,
            measured_speedup: r.measured_speedup,
            measured_speedup_iqr: r.measured_speedup_iqr,
            limit_speedup: f64::NAN,
            auto,
        });
        // The row's verification call: a chain's γ + 1, a tree's nodes + 1, the suffix index's
        // budget + 1 (at most).
        calls.push(match spec.shape {
            Proposing::Tree => tree_shape(&spec.config)?.nodes() as f64 + 1.0,
            _ => f64::from(spec.gamma) + 1.0,
        });
        progress(rows.len() + total - 8, total);
    }
    let hidden = [
        HiddenMethod::Medusa,
        HiddenMethod::Eagle,
        HiddenMethod::Eagle2,
        HiddenMethod::Eagle2Ttt,
    ];
    for method in hidden {
        let (size, depth, auto) = match &sizes {
            None => (plan.nodes, DEFAULT_DEPTH, None),
            Some(s) => {
                let (sized, depth) = match method {
                    HiddenMethod::Medusa => (&s.medusa, DEFAULT_DEPTH),
                    HiddenMethod::Eagle2 | HiddenMethod::Eagle2Ttt => (&s.eagle, s.eagle2_depth()),
                    _ => (&s.eagle, DEFAULT_DEPTH),
                };
                (sized.size, depth, Some(sized.clone()))
            }
        };
        let drafter = method.drafter(depth, MAX_HEADS);
        let ready = Ready::new(&drafts, HiddenSpec::greedy(drafter, size)).await?;
        let mut row = timed(lab, &ready, prompts).await?;
        row.auto = auto;
        calls.push(row.verified_nodes_per_call + 1.0);
        rows.push(row);
        progress(rows.len() + total - 8, total);
    }
    // This device's limit beside every row (issue 54, item 4).
    let limit = Limit::measure(lab, None, &[]).await?;
    for (row, &k) in rows.iter_mut().zip(&calls) {
        let (tau, wall) = (row.tokens_per_call, row.measured_speedup);
        row.limit_speedup = limit.speedup(tau, k, row.verify_over_target, row.c, wall);
    }
    Ok(MethodsReport {
        budget,
        times_us: sizes.as_ref().map(|s| s.times_us.clone()),
        suffix_nodes: sizes.as_ref().map(|s| s.suffix_nodes),
        drafts_on: models.drafts_apart(),
        prompts: prompts.len(),
        target_width: models.target_width(),
        rows,
    })
}

/// What each row runs: at a budget of nodes as the lecture's table did, or at the sizes chosen.
struct Plan {
    gamma_a: u32,
    gamma_b: u32,
    /// Draft B's static tree: a ⟨…⟩ configuration, or Sequoia's tree by its rank paths.
    tree: String,
    suffix: u32,
    /// The hidden-state drafts' budget (at a budget of nodes).
    nodes: usize,
}

impl Plan {
    fn new(budget: Budget, sizes: Option<&Sizes>) -> Plan {
        match (budget, sizes) {
            (Budget::Nodes(_), _) | (Budget::Auto, None) => {
                let n = budget.nodes().unwrap_or(auto::SUFFIX_NODES);
                // The chains draft the default γ, or as many tokens as the budget where it is
                // smaller.
                let gamma = (n as u32).min(DEFAULT_GAMMA);
                Plan {
                    gamma_a: gamma,
                    gamma_b: gamma,
                    tree: static_tree(n).into(),
                    suffix: n.min(16) as u32,
                    nodes: n,
                }
            }
            (Budget::Auto, Some(s)) => Plan {
                gamma_a: s.chain_a.size as u32,
                gamma_b: s.chain_b.size as u32,
                tree: format!("{RANKS_PREFIX}{}", s.tree_b_plan.labels().join(" ")),
                suffix: s.suffix_nodes as u32,
                nodes: 0,
            },
        }
    }
}

/// A static expansion tree of draft B near `budget` nodes (⟨k₁, …⟩ with k₁ + k₁k₂ + … ≤ budget).
fn static_tree(budget: usize) -> &'static str {
    match budget {
        0..=3 => "<1,1>",
        4..=7 => "<2,1>",
        8..=13 => "<2,2,1>",
        14..=27 => "<2,2,1,1>",
        _ => "<4,2,1,1>",
    }
}

//! How to speculate on this device, measured (lecture §4.7; Sequoia's hardware-aware optimiser;
//! issue 54): draft B's greedy acceptance vector measured (with every draft's: item 1), then the
//! target's calls T(1) … T(K) timed on this device, draft B's one-token call over T(1) as the
//! draft's cost per level c, both lifted to what decoding pays on calibration prompts decoded
//! just before the decodings they predict; the choice of [`crate::tree::choose`] from those;
//! then, in the same run, the chosen chain and tree (the DP's tree refined on the replayed
//! decoding at the chosen size: [`super::sequoia::refine`]) and EAGLE-2 at a fixed 8 nodes, each
//! timed against the target alone — the four decoded prompt by prompt in turn, each prompt the
//! row of its faster pass ([`super::race`]) — and the better choice set against EAGLE-2 prompt by
//! prompt. Each timed row carries the three figures of issue 54's item 4: measured, predicted
//! from the measured curve, and this device's limit (T_lim(k) from its bandwidth and peak, a
//! ceiling); the report carries the acceptance vectors of every draft
//! ([`super::vectors::table`]) and the vector a depth that the chosen tree's decoding meets, both
//! read from the trained target beside the drafts ([`crate::model::Models::reference`]: the
//! same answers as the target timed, for less).

use super::auto::{draft_cost, time_target};
use super::context::Lab;
use super::engine_costs::{engine_costs, EngineCosts};
use super::hidden::decode::Ready;
use super::hidden::drafts::Drafts;
use super::limit::Limit;
use super::params::{tree_shape, Draft, HiddenMethod, HiddenSpec, DEFAULT_DEPTH, RANKS_PREFIX};
use super::race::{race, Laps, Paired, Way, PASSES, WARM_UP};
use super::sequoia::{config_plan, refine, RankVector, Replay};
use super::vectors::{table, VectorTable};
use crate::clock::Progress;
use crate::decode::engine::{ChainRule, Method, TreeRule};
use crate::error::{Error, Range};
use crate::likesworld;
use crate::model::measure::Calibration;
use crate::model::medusa::MAX_HEADS;
use crate::sampling::multi::Children;
use crate::tree::choose::{choose, predicted, ChainPick, Times};
use crate::tree::sequoia::{self, Plan};

/// The most draft nodes a tree may have here: T(1) … T(MAX_NODES + 1) are timed.
pub const MAX_NODES: Range = Range::new("max-nodes", 1.0, 31.0).after("nodes", "个节点");
/// EAGLE-2's fixed budget the choice is set against (the §6 table's).
pub const EAGLE2_NODES: usize = 8;

/// The chosen tree: the DP's choice (n, d) under the vector, and the tree decoded at that size —
/// the DP's refined on the replay ([`refine`]) — with its own prediction and its measurement.
/// Where the choice is plain decoding (no nodes), the tree of one node is timed instead.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChosenTree {
    /// The tree decoded: its nodes, depth and rank paths.
    pub nodes: usize,
    pub depth: usize,
    pub labels: Vec<String>,
    /// Its τ replayed on the calibration prompts, and the speedup that predicts:
    /// replayed τ / (T(n+1)/T(1) + d·c).
    pub replayed_tokens: f64,
    pub predicted_speedup: f64,
    /// The DP's own choice: its size, its expectation under the vector, its prediction.
    pub dp: DpTree,
    #[serde(flatten)]
    pub timed: Timed,
}

/// A decoding timed against the target alone, with the three figures of each speedup: measured;
/// predicted from the measured curve (τ over this run's verification call and drafting, each
/// over its one-token call); and the limit, τ / (T_lim(k)/T_lim(1) + drafting): what the same
/// drafts would give on a kernel at this device's bandwidth and peak, never under the measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Timed {
    pub measured_speedup: f64,
    pub measured_speedup_iqr: f64,
    pub tokens_per_call: f64,
    /// This run's mean verification call over its mean one-token call.
    pub verify_over_target: f64,
    /// Drafting per step over a one-token call.
    pub drafting: f64,
    pub predicted_speedup_curve: f64,
    pub limit_speedup: f64,
    /// Wall time over the output tokens, µs: the target alone, and this decoding.
    pub plain_us_per_token: f64,
    pub us_per_token: f64,
}

/// The DP's choice under the acceptance vector.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DpTree {
    pub nodes: usize,
    pub depth: usize,
    pub expected_tokens: f64,
    pub predicted_speedup: f64,
}

/// The chain and the tree chosen, each measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Chosen {
    pub chain: ChosenChain,
    pub tree: ChosenTree,
}

/// The chosen chain and its measurement (where the choice is plain decoding, γ 0, the chain of
/// one is timed instead, to show what it would cost).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChosenChain {
    #[serde(flatten)]
    pub pick: ChainPick,
    /// The γ timed.
    pub timed_gamma: u32,
    /// Its τ replayed on the calibration prompts (as the tree's), and the speedup that predicts:
    /// replayed τ / (T(γ+1)/T(1) + γ·c) (the choice's own prediction reads the vector's E).
    pub replayed_tokens: f64,
    pub timed_predicted_speedup: f64,
    #[serde(flatten)]
    pub timed: Timed,
}

/// `likesworld choose`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChooseReport {
    pub target_width: usize,
    /// The target's backend, and the drafts' where they run apart (beside a GPU target, the CPU).
    pub backend: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drafts_on: Option<&'static str>,
    /// T(1) … T(K) in µs as decoding pays them ([`EngineCosts`]): what the choice reads.
    pub times_us: Vec<f64>,
    /// Draft B's one-token call over T(1), as decoding pays it.
    pub draft_cost: f64,
    /// The same calls on bare forwards (the median of a few rounds), and draft B's bare call over
    /// bare T(1); what decoding paid beyond them on the calibration prompts.
    pub bare_times_us: Vec<f64>,
    pub bare_draft_cost: f64,
    pub engine: EngineCosts,
    pub vector: RankVector,
    /// Every draft's vector (issue 54, item 1): A and B greedy and MSS, Medusa and EAGLE a depth.
    pub vectors: VectorTable,
    /// Draft B's vector a depth that the chosen tree's greedy decoding meets, replayed on the
    /// calibration prompts (a step starts after a rejection: not the vector's own).
    pub met_by_depth: Vec<Vec<f64>>,
    pub chosen: Chosen,
    /// EAGLE-2's dynamic tree at a fixed [`EAGLE2_NODES`] nodes, timed in the same run.
    pub fixed_eagle2_8: Timed,
    /// EAGLE-2's wall time over the better of the chain and the tree's (the faster in all), in
    /// all and prompt by prompt: over 1, the choice is the faster.
    pub versus_eagle2: Paired,
    /// This device's limit, T_lim(k) = max(weight bytes / bandwidth, k · FLOPs a token / peak),
    /// from the measured roofline's bandwidth and peak (a ceiling): in µs, k = 1 … K.
    pub limit_times_us: Vec<f64>,
    pub bandwidth_gbs: f64,
    pub peak_gflops: f64,
    /// The calibrations the bandwidth and peak came from (a page keeps a GPU's for its next job).
    #[serde(skip)]
    pub calibration: Calibration,
    /// The better of the chain and the tree chosen on T_lim with the same vector and c, each
    /// call priced no dearer than this device's bare call of its size, and never under what the
    /// chosen chain or tree measured: no kernel on this device does better with this draft (where
    /// a measured speedup sets it, that is all the run can say); the gap to the measured-curve
    /// prediction is the kernel's, the rest (c, and τ below the vector's) the draft's.
    pub limit_speedup: f64,
    pub prompts: usize,
}

/// Chooses for this device, then measures the choice on `prompts` held-out prompts. `known`: this
/// device's calibrations from an earlier measurement, reused where they hold (a GPU's take
/// seconds; [`crate::model::measure::roofline`]).
pub async fn choose_here(
    lab: Lab<'_>,
    max_nodes: usize,
    prompts: usize,
    known: Option<Calibration>,
    progress: Progress<'_>,
) -> Result<ChooseReport, Error> {
    MAX_NODES.check(max_nodes as f64)?;
    let models = lab.models;
    // Three stages before the decodings (the vectors, this device's calls, the calibration),
    // then a prompt decoded every way at a time.
    let total = 3 + WARM_UP.min(prompts) + PASSES * prompts;
    // The vectors and the replay depend only on the target's answers: read from the trained
    // target beside the drafts (a widened or GPU target answers the same, up to rounding). They
    // come first, so that what the choice reads of this device is timed just before the
    // decodings it predicts.
    let reference = models.reference()?;
    let vectors = table(&reference).await?;
    let replay = Replay::measure(
        Lab {
            models: &reference,
            ..lab
        },
        Draft::B,
    )
    .await?;
    // EAGLE-2's drafter, ready before anything is timed.
    let drafts = Drafts::load(models)?;
    let drafter = HiddenMethod::Eagle2.drafter(DEFAULT_DEPTH, MAX_HEADS);
    let ready = Ready::new(&drafts, HiddenSpec::greedy(drafter, EAGLE2_NODES)).await?;
    progress(1, total);
    // T(1) … T(K) as the median of a few rounds over every k, so that a moment's load moves one
    // round of one k and not the curve the choice reads ([`time_target`]).
    let bare_times_us = time_target(lab, max_nodes + 1, 1).await?;
    let bare_c = draft_cost(lab, Draft::B, 1, bare_times_us[0]).await?;
    // This device's limit: its bandwidth and peak (a ceiling over the calls just timed).
    let rows: Vec<(usize, f64)> = (bare_times_us.iter().enumerate())
        .map(|(i, &t)| (i + 1, t))
        .collect();
    let limit = Limit::measure(lab, known, &rows).await?;
    let limit_times_us = limit.times_us(max_nodes + 1);
    progress(2, total);
    // What decoding pays beyond the bare calls, read on calibration prompts right before the
    // decodings: the curve and c the choice (and its prediction) use.
    let engine = engine_costs(lab, &bare_times_us, bare_c).await?;
    let times_us = engine.times_us.clone();
    let c = engine.draft_cost(bare_c);
    let vector = vectors
        .models
        .iter()
        .find(|v| v.draft == Draft::B.letter() && v.verify == "greedy")
        .expect("the table holds B's greedy vector")
        .clone();
    let p = vector.acceptance();
    let times = Times::new(times_us.clone())?;
    let choice = choose(&p, &times, c)?;
    // The choice at the limit prices no call dearer than this device's bare call of its size, as
    // every row's limit does ([`Limit::speedup`]).
    let capped: Vec<f64> = (limit_times_us.iter().zip(&bare_times_us))
        .map(|(l, b)| (l / limit_times_us[0]).min(b / bare_times_us[0]) * limit_times_us[0])
        .collect();
    let at_limit = choose(&p, &Times::new(capped)?, c)?;
    let at_limit = at_limit
        .chain
        .predicted_speedup
        .max(at_limit.tree.predicted_speedup);
    // The tree decoded: the DP's at the chosen size, refined on the replay within its depth.
    let (n, d) = (choice.tree.nodes.max(1), choice.tree.depth.max(1));
    let dp = Plan {
        parents: choice.tree.parents.clone(),
        ranks: choice.tree.ranks.clone(),
        expected_tokens: choice.tree.expected_tokens,
    };
    let dp = if dp.nodes() == 0 {
        sequoia::sequoia(&p, n, d)?
    } else {
        dp
    };
    let refined = refine(&replay, &dp, d);
    let run = replay.run(&refined);
    let replayed = run.tokens_per_step;
    let met_by_depth = run
        .rows(refined.depth(), &p)
        .iter()
        .map(|a| a.entries().to_vec())
        .collect();
    let held: Vec<Vec<u32>> = likesworld::prompts(prompts)
        .iter()
        .map(|w| w.prompt())
        .collect();
    let gamma = choice.chain.gamma.max(1) as u32;
    // The chain's τ replayed on the same prompts as the tree's: what its prediction reads (the
    // vector's expectation runs high on LikesWorld, where a step starts after a rejection).
    let chain_replayed = replay
        .run(&config_plan(&p, &vec![1; gamma as usize]))
        .tokens_per_step;
    let chain_method = Method::Chain {
        draft: Draft::B.index(),
        gamma: gamma as usize,
        rule: ChainRule::Greedy,
    };
    let tree_method = Method::Expand {
        draft: Draft::B.index(),
        shape: tree_shape(&format!("{RANKS_PREFIX}{}", refined.labels().join(" ")))?,
        children: Children::TopK,
        rule: TreeRule::Greedy,
    };
    progress(3, total);
    // The four decoded prompt by prompt in turn ([`race`]): a drift of this device's speed meets
    // each alike, and the target alone is decoded once a prompt for all three.
    let ways = [
        Way::Plain,
        Way::Engine(chain_method),
        Way::Engine(tree_method),
        Way::Hidden(&ready),
    ];
    let laps = race(lab, &ways, &held, PASSES, &mut |i, _| {
        progress(3 + i, total)
    })
    .await?;
    let [plain, chain, tree, eagle2] = <[Laps; 4]>::try_from(laps).expect("a lap a way");
    let plain_us_per_token = plain.total_us() / plain.stats.tokens.max(1) as f64;
    // `k`: the verification call's tokens, where the bare curve has them; else priced at the
    // call as this run paid it (EAGLE-2's dynamic tree: its mean call).
    let of = |r: &Laps, k: Option<usize>| {
        let speedup = r.speedup(&plain);
        let (verify_over_target, drafting) = r.calls_over(&plain);
        let tokens_per_call = r.stats.tokens_per_call();
        let own_k = r.stats.verified_per_call() + 1.0;
        let (k, measured) = match k.and_then(|k| bare_times_us.get(k - 1).map(|t| (k, t))) {
            Some((k, t)) => (k as f64, t / bare_times_us[0]),
            None => (k.map_or(own_k, |k| k as f64), verify_over_target),
        };
        Timed {
            measured_speedup: speedup.ratio,
            measured_speedup_iqr: speedup.iqr,
            tokens_per_call,
            verify_over_target,
            drafting,
            predicted_speedup_curve: tokens_per_call / (verify_over_target + drafting),
            limit_speedup: limit.speedup(tokens_per_call, k, measured, drafting, speedup.ratio),
            plain_us_per_token,
            // Greedy: the same output tokens every way.
            us_per_token: r.total_us() / plain.stats.tokens.max(1) as f64,
        }
    };
    let chain_timed = of(&chain, Some(gamma as usize + 1));
    let tree_timed = of(&tree, Some(refined.nodes() + 1));
    let (chain_timed_measured, tree_timed_measured) =
        (chain_timed.measured_speedup, tree_timed.measured_speedup);
    let eagle2_timed = of(&eagle2, None);
    // The better of the chain and the tree, against EAGLE-2 prompt by prompt.
    let better = match tree.total_us() < chain.total_us() {
        true => &tree,
        false => &chain,
    };
    let versus_eagle2 = Paired::new(&eagle2, better);
    Ok(ChooseReport {
        target_width: models.target_width(),
        draft_cost: c,
        vector,
        chosen: Chosen {
            chain: ChosenChain {
                pick: choice.chain.clone(),
                timed_gamma: gamma,
                replayed_tokens: chain_replayed,
                timed_predicted_speedup: predicted(
                    &times,
                    chain_replayed,
                    gamma as usize,
                    gamma as usize,
                    c,
                ),
                timed: chain_timed,
            },
            tree: ChosenTree {
                nodes: refined.nodes(),
                depth: refined.depth(),
                labels: refined.labels(),
                replayed_tokens: replayed,
                predicted_speedup: predicted(&times, replayed, refined.nodes(), refined.depth(), c),
                dp: DpTree {
                    nodes: choice.tree.nodes,
                    depth: choice.tree.depth,
                    expected_tokens: choice.tree.expected_tokens,
                    predicted_speedup: choice.tree.predicted_speedup,
                },
                timed: tree_timed,
            },
        },
        times_us,
        bare_times_us,
        bare_draft_cost: bare_c,
        engine,
        fixed_eagle2_8: eagle2_timed,
        versus_eagle2,
        backend: models.backend.name(),
        drafts_on: models.drafts_apart(),
        vectors,
        met_by_depth,
        limit_times_us,
        bandwidth_gbs: limit.bandwidth_gbs,
        peak_gflops: limit.peak_gflops,
        calibration: limit.calibration,
        // Never under what the chain or the tree measured: what this device did, it can do.
        limit_speedup: at_limit.max(chain_timed_measured).max(tree_timed_measured),
        prompts: held.len(),
    })
}

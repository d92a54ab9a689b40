//! How to speculate on this device, measured (lecture §4.7; Sequoia's hardware-aware optimiser;
//! issue 54): the target's calls T(1) … T(K) timed on this device, draft B's one-token call over
//! T(1) as the draft's cost per level c, draft B's greedy acceptance vector measured; the choice
//! of [`crate::tree::choose`] from those; then, in the same run, the chosen chain and tree (the
//! DP's tree refined on the replayed decoding at the chosen size: [`super::sequoia::refine`])
//! timed against the target alone, and EAGLE-2 at a fixed 8 nodes beside them.

use super::context::Lab;
use super::hidden::decode::Ready;
use super::hidden::drafts::Drafts;
use super::methods::timed;
use super::params::{
    Draft, HiddenMethod, HiddenSpec, Proposing, Speedup, DEFAULT_DEPTH, RANKS_PREFIX,
};
use super::sequoia::{measure, refine, RankVector, Replay};
use super::speedup::speedup;
use crate::clock::Progress;
use crate::error::{Error, Range};
use crate::likesworld;
use crate::model::measure::{call_flops, clock_resolution, roofline, time_call, Subject};
use crate::model::medusa::MAX_HEADS;
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
    pub measured_speedup: f64,
    pub measured_speedup_iqr: f64,
    pub tokens_per_call: f64,
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

/// A method at a fixed size, timed in the same run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Fixed {
    pub measured_speedup: f64,
    pub measured_speedup_iqr: f64,
}

/// The chosen chain and its measurement (where the choice is plain decoding, γ 0, the chain of
/// one is timed instead, to show what it would cost).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChosenChain {
    #[serde(flatten)]
    pub pick: ChainPick,
    /// The γ timed.
    pub timed_gamma: u32,
    pub measured_speedup: f64,
    pub measured_speedup_iqr: f64,
    pub tokens_per_call: f64,
}

/// `likesworld choose`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChooseReport {
    pub target_width: usize,
    /// T(1) … T(K) in µs, timed on this device.
    pub times_us: Vec<f64>,
    /// Draft B's one-token call over T(1).
    pub draft_cost: f64,
    pub vector: RankVector,
    pub chosen: Chosen,
    /// EAGLE-2's dynamic tree at a fixed [`EAGLE2_NODES`] nodes, timed in the same run.
    pub fixed_eagle2_8: Fixed,
    /// This device's limit, T_lim(k) = max(weight bytes / bandwidth, k · FLOPs a token / peak),
    /// from the measured roofline's bandwidth and peak (a ceiling): in µs, k = 1 … K.
    pub limit_times_us: Vec<f64>,
    pub bandwidth_gbs: f64,
    pub peak_gflops: f64,
    /// The better of the chain and the tree chosen on T_lim with the same vector and c: no
    /// kernel on this device does better; the gap to the measured-curve prediction is the
    /// kernel's, the rest (c, and τ below the vector's) the draft's.
    pub limit_speedup: f64,
    pub prompts: usize,
}

/// Chooses for this device, then measures the choice on `prompts` held-out prompts.
pub async fn choose_here(
    lab: Lab<'_>,
    max_nodes: usize,
    prompts: usize,
    progress: Progress<'_>,
) -> Result<ChooseReport, Error> {
    MAX_NODES.check(max_nodes as f64)?;
    let (models, clock) = (lab.models, lab.clock);
    let r = clock_resolution(clock);
    // T(k) from the measured roofline: the same calls, with the bandwidth and peak beside them.
    let ks: Vec<usize> = (1..=max_nodes + 1).collect();
    let subject = Subject {
        model: &models.target,
        width: models.target_width(),
        backend: models.backend,
        device: &models.device,
    };
    let roof = roofline(subject, &ks, 1, None, clock, &mut |_, _| {}).await?;
    progress(max_nodes + 1, max_nodes + 5);
    let times_us: Vec<f64> = roof.rows.iter().map(|p| p.median_us).collect();
    let limit_times_us: Vec<f64> = ks
        .iter()
        .map(|&k| {
            let compute_us = call_flops(roof.weight_bytes, k, 1) / (roof.peak_gflops * 1e3);
            roof.memory_floor_us.max(compute_us)
        })
        .collect();
    let draft = time_call(&models.draft_b, &models.draft_device, 1, 1, r, clock).await?;
    let c = draft.median_us / times_us[0];
    let vector = measure(models, Draft::B, false).await?;
    let p = vector.acceptance();
    let times = Times::new(times_us.clone())?;
    let choice = choose(&p, &times, c)?;
    let at_limit = choose(&p, &Times::new(limit_times_us.clone())?, c)?;
    let limit_speedup = at_limit
        .chain
        .predicted_speedup
        .max(at_limit.tree.predicted_speedup);
    // The tree decoded: the DP's at the chosen size, refined on the replay within its depth.
    let replay = Replay::measure(lab, Draft::B).await?;
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
    let replayed = replay.run(&refined).tokens_per_step;
    let held: Vec<Vec<u32>> = likesworld::prompts(prompts)
        .iter()
        .map(|w| w.prompt())
        .collect();
    let spec = |gamma: u32, shape, config: String| Speedup {
        draft: Draft::B,
        gamma,
        prompts: held.len(),
        batch: 1,
        shape,
        config,
    };
    let gamma = choice.chain.gamma.max(1) as u32;
    let chain_spec = spec(gamma, Proposing::Chain, String::new());
    let chain = speedup(lab, &chain_spec, &held, &mut |_, _| {}).await?;
    progress(max_nodes + 3, max_nodes + 5);
    let config = format!("{RANKS_PREFIX}{}", refined.labels().join(" "));
    let tree = speedup(
        lab,
        &spec(gamma, Proposing::Tree, config),
        &held,
        &mut |_, _| {},
    )
    .await?;
    progress(max_nodes + 4, max_nodes + 5);
    let drafts = Drafts::load(models)?;
    let drafter = HiddenMethod::Eagle2.drafter(DEFAULT_DEPTH, MAX_HEADS);
    let ready = Ready::new(&drafts, HiddenSpec::greedy(drafter, EAGLE2_NODES)).await?;
    let eagle2 = timed(lab, &ready, &held).await?;
    progress(max_nodes + 5, max_nodes + 5);
    Ok(ChooseReport {
        target_width: models.target_width(),
        draft_cost: c,
        vector,
        chosen: Chosen {
            chain: ChosenChain {
                pick: choice.chain.clone(),
                timed_gamma: gamma,
                measured_speedup: chain.measured_speedup,
                measured_speedup_iqr: chain.measured_speedup_iqr,
                tokens_per_call: chain.tokens_per_call,
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
                measured_speedup: tree.measured_speedup,
                measured_speedup_iqr: tree.measured_speedup_iqr,
                tokens_per_call: tree.tokens_per_call,
            },
        },
        times_us,
        fixed_eagle2_8: Fixed {
            measured_speedup: eagle2.measured_speedup,
            measured_speedup_iqr: eagle2.measured_speedup_iqr,
        },
        limit_times_us,
        bandwidth_gbs: roof.bandwidth_gbs,
        peak_gflops: roof.peak_gflops,
        limit_speedup,
        prompts: held.len(),
    })
}

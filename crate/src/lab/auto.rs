//! Every method at its device-best size (lecture §4.7; Sequoia's hardware-aware optimiser; issue
//! 54): the §6 table with the budget `auto`, and the sweep's own choice of γ. The inputs are timed
//! in the same job as the runs they size — T(1) … T(K) of the target ([`time_target`]), each
//! model draft's cost per level c over T(1) ([`draft_cost`], [`hidden_costs`]), both lifted to
//! what decoding pays ([`super::engine_costs`]: drafts A and B's c scaled as draft B's calls
//! pay; the hidden-state drafts' c kept bare, over decoding's T(1)) — beside each
//! draft's acceptance vector (drafts A and B: [`super::sequoia::measure`]; Medusa's heads a
//! depth, EAGLE's one step ahead: [`super::hidden::shapes::calibrate`]). The choice itself is
//! [`crate::tree::choose`]'s, untouched: [`chain_size`] and [`tree_size`] only read it into the
//! size a row runs at, which a chain or tree needs at least one of (where the choice is plain
//! decoding, the row runs the smallest size and says so). [`sweep_choice`] is the same choice for
//! the chain a sweep over γ measures, set beside its measured best.

use super::context::Lab;
use super::engine_costs::engine_costs;
use super::hidden::drafts::{floats_tensor, ints, Drafts};
use super::hidden::shapes::calibrate;
use super::params::{Draft, DEPTH};
use super::sequoia::measure;
use crate::error::Error;
use crate::model::measure::{clock_resolution, time_blocks, time_call};
use crate::model::{floats, KvCache, ModelKind};
use crate::tree::choose::{choose, choose_by_depth, Times};
use crate::tree::sequoia::{Acceptance, Plan};
use burn::tensor::{Bool, Tensor, TensorData};

/// T(1) … T(MAX_K) are timed: chains up to γ 16 (the page's largest), trees up to 16 nodes.
pub const MAX_K: usize = 17;
/// The suffix index has no acceptance vector to choose by: it keeps this budget (the §6
/// preset's 8 nodes).
pub const SUFFIX_NODES: usize = 8;
/// Rounds over every k (and over a draft's call): each T(k) is the median of its rounds, so that a
/// moment's load on a shared machine moves one round of one k, not the curve (one pass over k
/// on a loaded 2-core machine read T(2)/T(1) = 4 and T(8)/T(1) = 0.8 for the trained target).
pub const ROUNDS: usize = 3;
/// Tokens cached before a hidden-state draft's timed call (as before a target's).
const CACHED: usize = 32;

/// The size the choice gives one row of the table, and what it predicts there.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Sized {
    /// A chain's γ or a tree's nodes, as run: at least 1.
    pub size: usize,
    /// The chosen depth (a chain's: its γ).
    pub depth: usize,
    /// Whether the choice was plain decoding (γ 0, no nodes): then the smallest size ran, to show
    /// what it costs.
    pub plain: bool,
    /// The choice's expected tokens a step and its predicted speedup,
    /// E / (T(n + 1)/T(1) + d·c) (1 where it is plain decoding).
    pub expected_tokens: f64,
    pub predicted_speedup: f64,
    /// The draft's cost per level, over T(1), that the choice read.
    pub c: f64,
}

/// The chain [`choose`] picks for `p`, `times` and `c`, as a size to run.
pub fn chain_size(p: &Acceptance, times: &Times, c: f64) -> Result<Sized, Error> {
    let pick = choose(p, times, c)?.chain;
    Ok(Sized {
        size: pick.gamma.max(1),
        depth: pick.gamma.max(1),
        plain: pick.gamma == 0,
        expected_tokens: pick.expected_tokens,
        predicted_speedup: pick.predicted_speedup,
        c,
    })
}

/// The tree [`crate::tree::choose::choose_by_depth`] picks for a vector a depth (`rows[j]` at
/// depth j + 1, the last row deeper), `times` and `c`, as a size to run, with its shape (the
/// tree of one node where the choice is plain decoding).
pub fn tree_size(rows: &[Acceptance], times: &Times, c: f64) -> Result<(Sized, Plan), Error> {
    let pick = choose_by_depth(rows, times, c)?.tree;
    let plain = pick.nodes == 0;
    let plan = Plan {
        parents: if plain { vec![None] } else { pick.parents },
        ranks: if plain { vec![0] } else { pick.ranks },
        expected_tokens: pick.expected_tokens,
    };
    let sized = Sized {
        size: plan.nodes(),
        depth: pick.depth.max(1),
        plain,
        expected_tokens: pick.expected_tokens,
        predicted_speedup: pick.predicted_speedup,
        c,
    };
    Ok((sized, plan))
}

/// What the §6 table's rows run at on this device.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Sizes {
    /// T(1) … T(K) of the target, µs, timed in this job.
    pub times_us: Vec<f64>,
    pub chain_a: Sized,
    pub chain_b: Sized,
    /// Draft B's static tree: Sequoia's tree for its vector at the chosen (n, d).
    pub tree_b: Sized,
    #[serde(skip)]
    pub tree_b_plan: Plan,
    /// Medusa's heads (its vector a head; no deeper than its heads).
    pub medusa: Sized,
    /// EAGLE's draft: EAGLE's static tree, EAGLE-2 and EAGLE-2 + the training-time test (the
    /// draft with the training-time test has EAGLE's shape, and is sized by EAGLE's vector).
    pub eagle: Sized,
    /// The suffix index's fixed budget ([`SUFFIX_NODES`]).
    pub suffix_nodes: usize,
}

impl Sizes {
    /// EAGLE-2's dynamic tree grows as many levels as the chosen tree is deep (within its
    /// [`DEPTH`]).
    pub fn eagle2_depth(&self) -> usize {
        self.eagle
            .depth
            .clamp(DEPTH.min as usize, DEPTH.max as usize)
    }
}

/// Times this device and measures every draft's vector, then sizes each row of the §6 table.
pub async fn sizes(lab: Lab<'_>) -> Result<Sizes, Error> {
    let models = lab.models;
    // The vectors depend only on the target's answers: read from the trained target beside the
    // drafts (`Models::reference`), whatever the target timed.
    let reference = models.reference()?;
    let bare = time_target(lab, MAX_K, 1).await?;
    let bare_t1 = bare[0];
    let c_b = draft_cost(lab, Draft::B, 1, bare_t1).await?;
    // T(k) and c as decoding pays them (`engine_costs`).
    let engine = engine_costs(lab, &bare, c_b).await?;
    let times_us = engine.times_us.clone();
    let times = Times::new(times_us.clone())?;
    let t1 = times_us[0];
    // Each draft's c and vector once (draft B's c is the one the lift read).
    let c_a = engine.draft_cost(draft_cost(lab, Draft::A, 1, bare_t1).await?);
    let p_a = measure(&reference, Draft::A, false).await?.acceptance();
    let p_b = measure(&reference, Draft::B, false).await?.acceptance();
    let chain_a = chain_size(&p_a, &times, c_a)?;
    let chain_b = chain_size(&p_b, &times, engine.draft_cost(c_b))?;
    let (tree_b, tree_b_plan) = tree_size(std::slice::from_ref(&p_b), &times, chain_b.c)?;
    let drafts = Drafts::load(models)?;
    let (medusa_c, eagle_c) = hidden_costs(lab, &drafts, t1).await?;
    let heads = calibrate(&drafts, true).await?.ranks;
    let mut rows: Vec<Acceptance> = heads
        .iter()
        .map(|r| Acceptance::new(r.clone()))
        .collect::<Result<_, _>>()?;
    // No head guesses deeper than the last: the row below it accepts nothing.
    rows.push(Acceptance::new(vec![0.0; heads[0].len()])?);
    let (medusa, _) = tree_size(&rows, &times, medusa_c)?;
    let ahead = calibrate(&drafts, false).await?.ranks;
    let (eagle, _) = tree_size(&[Acceptance::new(ahead[0].clone())?], &times, eagle_c)?;
    Ok(Sizes {
        times_us,
        chain_a,
        chain_b,
        tree_b,
        tree_b_plan,
        medusa,
        eagle,
        suffix_nodes: SUFFIX_NODES,
    })
}

/// The sweep's own choice of γ for this device: the chain [`choose`] picks from T(k) timed in the
/// same job (at the sweep's batch), the draft's vector and c, over the γ the sweep spans.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SweepChoice {
    /// γ chosen (0: plain decoding), what it expects and predicts.
    pub gamma: usize,
    pub expected_tokens: f64,
    pub predicted_speedup: f64,
    /// The draft's one-token call over T(1), both at the sweep's batch.
    pub c: f64,
    /// T(1) … T(γ_max + 1), µs.
    pub times_us: Vec<f64>,
    /// The draft's greedy acceptance vector p_1 … p_8.
    pub p: Vec<f64>,
}

/// [`SweepChoice`] for a chain of `draft` at `batch`, over γ 1 … `max_gamma`.
pub async fn sweep_choice(
    lab: Lab<'_>,
    draft: Draft,
    batch: usize,
    max_gamma: usize,
) -> Result<SweepChoice, Error> {
    let bare = time_target(lab, max_gamma.max(1) + 1, batch).await?;
    let bare_c = draft_cost(lab, draft, batch, bare[0]).await?;
    // At batch 1, T(k) and c as decoding pays them (`engine_costs`, read at batch 1); a batch's
    // calls are timed whole by the engine, and keep the bare curve.
    let (times_us, c) = match batch {
        1 => {
            // The calibration lifts draft B's c (its chains are what it times); the swept draft's
            // is lifted as B's was.
            let c_b = match draft {
                Draft::B => bare_c,
                _ => draft_cost(lab, Draft::B, 1, bare[0]).await?,
            };
            let engine = engine_costs(lab, &bare, c_b).await?;
            let c = engine.draft_cost(bare_c);
            (engine.times_us, c)
        }
        _ => (bare, bare_c),
    };
    let vector = measure(&lab.models.reference()?, draft, false).await?;
    let pick = choose(&vector.acceptance(), &Times::new(times_us.clone())?, c)?.chain;
    Ok(SweepChoice {
        gamma: pick.gamma,
        expected_tokens: pick.expected_tokens,
        predicted_speedup: pick.predicted_speedup,
        c,
        times_us,
        p: vector.p,
    })
}

/// T(1) … T(`max_k`) of the target, µs: a call of k new tokens in each of `batch` rows, as the
/// measured roofline times it, the median of [`ROUNDS`] rounds over every k.
pub async fn time_target(lab: Lab<'_>, max_k: usize, batch: usize) -> Result<Vec<f64>, Error> {
    let (models, clock) = (lab.models, lab.clock);
    let r = clock_resolution(clock);
    let mut rounds = vec![Vec::with_capacity(ROUNDS); max_k];
    for _ in 0..ROUNDS {
        for (k, times) in (1..=max_k).zip(&mut rounds) {
            let point = time_call(&models.target, &models.device, k, batch, r, clock).await?;
            times.push(point.median_us);
        }
    }
    Ok(rounds.into_iter().map(median).collect())
}

/// The middle of a few timings.
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Draft `draft`'s one-token call (each of `batch` rows) over `t1`, the target's (the median of
/// [`ROUNDS`]).
pub async fn draft_cost(lab: Lab<'_>, draft: Draft, batch: usize, t1: f64) -> Result<f64, Error> {
    let (models, clock) = (lab.models, lab.clock);
    let kind = [ModelKind::DraftA, ModelKind::DraftB][draft.index()];
    let r = clock_resolution(clock);
    let mut rounds = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let point = time_call(models.get(kind), models.device_of(kind), 1, batch, r, clock).await?;
        rounds.push(point.median_us);
    }
    Ok(median(rounds) / t1)
}

/// The hidden-state drafts' cost per level over `t1`: Medusa's heads on one feature (all its
/// levels in that one call, counted at every level as the choice counts a draft: an over-count,
/// small beside T(1)), and one level of EAGLE's draft (its layer on one feature and token after
/// a warm cache, read through the target's head).
pub async fn hidden_costs(lab: Lab<'_>, drafts: &Drafts, t1: f64) -> Result<(f64, f64), Error> {
    let clock = lab.clock;
    let r = clock_resolution(clock);
    let (d, device) = (drafts.width(), &drafts.device);
    let feature = || floats_tensor(vec![0.1; d], [1, 1, d], device);
    let (medusa, _) = time_blocks(
        async || {
            for head in drafts.medusa.forward(feature()) {
                std::hint::black_box(floats(head).await?);
            }
            Ok(())
        },
        r,
        clock,
    )
    .await?;
    let target = drafts.trained();
    let mut cache = KvCache::new(1);
    let causal: Vec<bool> = (0..CACHED * CACHED)
        .map(|i| i % CACHED <= i / CACHED)
        .collect();
    drafts.eagle.forward(
        target,
        floats_tensor(vec![0.1; CACHED * d], [1, CACHED, d], device),
        ints(
            (0..CACHED as u32).map(|i| 6 + i % 30).collect(),
            [1, CACHED],
            device,
        ),
        Tensor::<3, Bool>::from_data(TensorData::new(causal, [1, CACHED, CACHED]), device),
        &mut cache,
    );
    let (eagle, _) = time_blocks(
        async || {
            let out = drafts.eagle.forward(
                target,
                feature(),
                ints(vec![7], [1, 1], device),
                Tensor::<3, Bool>::from_data(
                    TensorData::new(vec![true; CACHED + 1], [1, 1, CACHED + 1]),
                    device,
                ),
                &mut cache,
            );
            std::hint::black_box(floats(target.head(out)).await?);
            cache.narrow(CACHED);
            Ok(())
        },
        r,
        clock,
    )
    .await?;
    Ok((medusa.median_us / t1, eagle.median_us / t1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::choose::choose_by_depth;

    /// A device where verifying costs more with every token (a CPU's curve), and a flat one
    /// (a GPU's): each row's size is the choice's own, chain and tree, vector and vectors a depth.
    #[test]
    fn the_sizes_are_the_choices_own_on_made_up_inputs() {
        let cpu = Times::new((1..=MAX_K).map(|k| 1.0 + 0.12 * (k - 1) as f64).collect()).unwrap();
        let gpu = Times::new(vec![1.0; MAX_K]).unwrap();
        let p = Acceptance::new(vec![0.6, 0.15, 0.05, 0.02]).unwrap();
        let deep = [
            Acceptance::new(vec![0.7, 0.1]).unwrap(),
            Acceptance::new(vec![0.5, 0.1]).unwrap(),
            Acceptance::new(vec![0.0, 0.0]).unwrap(),
        ];
        for (times, c) in [(&cpu, 0.05), (&gpu, 0.02), (&cpu, 0.3)] {
            let choice = choose(&p, times, c).unwrap();
            let chain = chain_size(&p, times, c).unwrap();
            assert_eq!(chain.size, choice.chain.gamma.max(1));
            assert_eq!(chain.plain, choice.chain.gamma == 0);
            assert_eq!(chain.predicted_speedup, choice.chain.predicted_speedup);
            assert_eq!(chain.c, c);
            let (tree, plan) = tree_size(std::slice::from_ref(&p), times, c).unwrap();
            assert_eq!(tree.size, choice.tree.nodes.max(1));
            assert_eq!(tree.depth, choice.tree.depth.max(1));
            assert_eq!(tree.predicted_speedup, choice.tree.predicted_speedup);
            if !tree.plain {
                assert_eq!(plan.parents, choice.tree.parents);
                assert_eq!(plan.ranks, choice.tree.ranks);
            }
            let by_depth = choose_by_depth(&deep, times, c).unwrap().tree;
            let (sized, plan) = tree_size(&deep, times, c).unwrap();
            assert_eq!(
                (sized.size, plan.nodes()),
                (by_depth.nodes.max(1), by_depth.nodes.max(1))
            );
            // Nothing is accepted below the second level: no tree goes deeper.
            assert!(plan.depths().iter().all(|&d| d <= 2), "{plan:?}");
        }
        // On the flat curve the tree uses many nodes; where c is large, few or none.
        let (flat, _) = tree_size(std::slice::from_ref(&p), &gpu, 0.02).unwrap();
        assert!(flat.size >= 8, "{flat:?}");
        let costly = chain_size(&p, &cpu, 5.0).unwrap();
        assert!(costly.plain && costly.size == 1 && costly.predicted_speedup == 1.0);
        let (costly, plan) = tree_size(std::slice::from_ref(&p), &cpu, 5.0).unwrap();
        assert!(costly.plain && costly.size == 1 && plan.nodes() == 1);
    }
}

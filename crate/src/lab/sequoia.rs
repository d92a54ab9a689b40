//! Sequoia's trees on LikesWorld (lecture §4.7; issue 54). A draft's positional acceptance vector
//! is measured on calibration worlds, apart from the prompts decoded later, teacher-forced on
//! their text (the accepted path is the target's own text): under greedy verification p_i is the
//! share of positions where the target's argmax is the draft's i-th ranked token; under MSS with
//! children drawn without replacement, the share of draws in which the i-th child is the one
//! accepted ([`DRAWS`] a position, seeded). A draft model sees the same context at every depth of
//! an accepted path, so its vector does not depend on depth. Sequoia's tree for that vector is
//! then decoded beside every ⟨k₁,…⟩ configuration of as many nodes: τ measured beside the
//! expectation each tree predicts.

use super::context::Lab;
use super::decoding::{greedy, stochastic};
use super::generate::target_greedy;
use super::params::{Draft, Stochastic, TREE_DEPTH};
use crate::clock::{part, Progress};
use crate::decode::engine::{Method, TreeRule};
use crate::decode::propose::top_k;
use crate::decode::Shape;
use crate::error::Error;
use crate::likesworld::{self, Split};
use crate::model::eval::distributions_many;
use crate::model::{ModelKind, Models};
use crate::sampling::multi::Children;
use crate::sampling::{residual, sample};
use crate::tree::sequoia::{self, Acceptance, Plan};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Ranks measured: children per node of any tree built from the vector.
pub const RANKS: usize = 8;
/// Calibration worlds (the training stream, not the prompts decoded).
const CALIBRATION_WORLDS: usize = 48;
/// MSS draws per position for the sampled vector.
pub const DRAWS: usize = 16;
/// The seed of the calibration worlds and the draws.
const SEED: u64 = 29;

/// A measured positional acceptance vector.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RankVector {
    pub draft: &'static str,
    /// "greedy" or "mss" (children drawn without replacement).
    pub verify: &'static str,
    /// p_1 … p_RANKS.
    pub p: Vec<f64>,
    /// Positions measured (draws: positions × [`DRAWS`] under MSS).
    pub positions: usize,
}

impl RankVector {
    pub fn acceptance(&self) -> Acceptance {
        Acceptance::new(self.p.clone()).expect("shares of one total")
    }
}

/// The acceptance vector of `draft` under greedy verification or MSS.
pub async fn measure(models: &Models, draft: Draft, mss: bool) -> Result<RankVector, Error> {
    let worlds = likesworld::worlds(Split::Train, SEED, CALIBRATION_WORLDS);
    let seqs: Vec<Vec<u32>> = worlds.iter().map(|w| w.tokens()).collect();
    let kind = [ModelKind::DraftA, ModelKind::DraftB][draft.index()];
    let target = models.get(ModelKind::Target);
    let p_all = distributions_many(target, &seqs, models.device_of(ModelKind::Target)).await?;
    let q_all = distributions_many(models.get(kind), &seqs, models.device_of(kind)).await?;
    let mut hits = [0usize; RANKS];
    let mut positions = 0;
    let mut rng = StdRng::seed_from_u64(SEED);
    for (w, (ps, qs)) in worlds.iter().zip(p_all.iter().zip(&q_all)) {
        // Positions that predict an output token: from the prompt's last token on.
        for t in w.prompt().len() - 1..ps.len() - 1 {
            let (p, q) = (&ps[t], &qs[t]);
            positions += 1;
            if !mss {
                let truth = crate::sampling::argmax(p) as u32;
                if let Some(r) = top_k(q, RANKS).iter().position(|&x| x == truth) {
                    hits[r] += 1;
                }
                continue;
            }
            for _ in 0..DRAWS {
                if let Some(r) = mss_accepted(p, q, &mut rng) {
                    hits[r] += 1;
                }
            }
        }
    }
    let total = (positions * if mss { DRAWS } else { 1 }).max(1) as f64;
    Ok(RankVector {
        draft: draft.name(),
        verify: if mss { "mss" } else { "greedy" },
        p: hits.iter().map(|&h| h as f64 / total).collect(),
        positions,
    })
}

/// Which of up to [`RANKS`] children drawn from q without replacement MSS accepts (None: all
/// rejected, the token then comes from the residual).
fn mss_accepted(p: &[f64], q: &[f64], rng: &mut StdRng) -> Option<usize> {
    let (mut r, mut qj) = (p.to_vec(), q.to_vec());
    for j in 0..RANKS {
        if qj.iter().all(|&w| w <= 0.0) {
            return None;
        }
        let x = sample(&qj, rng);
        if rng.random::<f64>() < (r[x] / qj[x]).min(1.0) {
            return Some(j);
        }
        r = residual(&r, &qj);
        qj[x] = 0.0;
        let mass: f64 = qj.iter().sum();
        qj.iter_mut().for_each(|w| *w /= mass);
    }
    None
}

/// One tree decoded: its name, shape, the τ its vector predicts and the τ measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TreeRow {
    /// `sequoia` or the configuration, `<2,2,1>`.
    pub tree: String,
    pub nodes: usize,
    pub depth: usize,
    /// 1 + Σ over nodes of the product of p along the path.
    pub predicted_tokens: f64,
    /// Tokens a target call, measured.
    pub tokens_per_call: f64,
    /// Greedy: outputs identical to the target's own (every one, or verification is wrong).
    pub identical: Option<usize>,
}

/// Sequoia's tree against the configurations of as many nodes, on `prompts` held-out prompts.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SequoiaReport {
    pub vector: RankVector,
    /// Sequoia's tree: node parents and ranks, by rank path.
    pub labels: Vec<String>,
    pub levels: Vec<Vec<usize>>,
    pub prompts: usize,
    /// Sequoia's first, then the configurations by predicted τ, best first.
    pub rows: Vec<TreeRow>,
}

/// Every ⟨k₁,…⟩ of exactly `nodes` nodes, each k ≤ [`RANKS`], at most `depth` levels.
pub fn configs_of(nodes: usize, depth: usize) -> Vec<Vec<usize>> {
    fn grow(
        left: usize,
        level: usize,
        depth: usize,
        w: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
    ) {
        if left == 0 {
            out.push(w.clone());
            return;
        }
        if w.len() == depth {
            return;
        }
        for k in 1..=RANKS {
            let here = level * k;
            if here > left {
                break;
            }
            w.push(k);
            grow(left - here, here, depth, w, out);
            w.pop();
        }
    }
    let mut out = Vec::new();
    grow(nodes, 1, depth, &mut Vec::new(), &mut out);
    out
}

/// The plan of a configuration: its nodes with parents and ranks, breadth first.
pub fn config_plan(p: &Acceptance, widths: &[usize]) -> Plan {
    let (mut parents, mut ranks) = (Vec::new(), Vec::new());
    let mut level: Vec<Option<usize>> = vec![None];
    for &k in widths {
        let mut next = Vec::new();
        for &parent in &level {
            for r in 0..k {
                parents.push(parent);
                ranks.push(r);
                next.push(Some(parents.len() - 1));
            }
        }
        level = next;
    }
    let expected_tokens = sequoia::expected_tokens(p, &parents, &ranks);
    Plan {
        parents,
        ranks,
        expected_tokens,
    }
}

/// `likesworld sequoia`: the vector measured, Sequoia's tree of `budget` nodes (depth ≤ `depth`)
/// and every configuration of as many nodes decoded on `prompts` held-out prompts (greedy: each
/// against the target's own output; MSS: seeded, children without replacement).
pub async fn compare(
    lab: Lab<'_>,
    draft: Draft,
    budget: usize,
    depth: usize,
    mss: bool,
    prompts: usize,
    progress: Progress<'_>,
) -> Result<SequoiaReport, Error> {
    let depth = depth.min(TREE_DEPTH.max as usize);
    let vector = measure(lab.models, draft, mss).await?;
    let p = vector.acceptance();
    let plan = sequoia::sequoia(&p, budget, depth)?;
    let mut trees = vec![(
        "sequoia".to_string(),
        plan.clone(),
        Shape::Levels(plan.levels()),
    )];
    let mut configs: Vec<(String, Plan, Shape)> = configs_of(budget, depth)
        .into_iter()
        .map(|w| {
            let name = format!(
                "<{}>",
                w.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
            );
            (name, config_plan(&p, &w), Shape::Widths(w))
        })
        .collect();
    configs.sort_by(|a, b| b.1.expected_tokens.total_cmp(&a.1.expected_tokens));
    trees.extend(configs);
    let held: Vec<Vec<u32>> = likesworld::prompts(prompts)
        .iter()
        .map(|w| w.prompt())
        .collect();
    let sampled = likesworld::sampling_prompts(prompts);
    let (n, total) = (held.len(), held.len() * (trees.len() + 1));
    let reference = if mss {
        Vec::new()
    } else {
        target_greedy(
            lab.models,
            &held,
            lab.clock,
            &mut part(progress, 0, n, total),
        )
        .await?
    };
    let mut rows = Vec::new();
    for (k, (name, plan, shape)) in trees.into_iter().enumerate() {
        let mut tell = part(progress, k + 1, n, total);
        let (tokens_per_call, identical) = if mss {
            let r = stochastic(
                lab,
                &shape,
                Children::WithoutReplacement,
                Stochastic::Mss,
                &sampled,
                SEED,
                &mut tell,
            );
            (r.await?.tokens_per_call, None)
        } else {
            let method = Method::Expand {
                draft: draft.index(),
                shape,
                children: Children::TopK,
                rule: TreeRule::Greedy,
            };
            let r = greedy(lab, method, &held, &reference, &mut tell).await?;
            (r.tokens_per_call, Some(r.identical))
        };
        rows.push(TreeRow {
            tree: name,
            nodes: plan.nodes(),
            depth: plan.depth(),
            predicted_tokens: plan.expected_tokens,
            tokens_per_call,
            identical,
        });
    }
    Ok(SequoiaReport {
        vector,
        labels: plan.labels(),
        levels: plan.levels(),
        prompts: n,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_of_exactly_n_nodes() {
        let eight = configs_of(8, 8);
        for w in &eight {
            assert_eq!(Shape::Widths(w.clone()).nodes(), 8, "{w:?}");
        }
        for w in [
            vec![8],
            vec![4, 1],
            vec![2, 3],
            vec![1, 1, 1, 1, 1, 1, 1, 1],
            vec![2, 1, 1, 1],
        ] {
            assert!(eight.contains(&w), "{w:?}");
        }
        assert!(configs_of(8, 2).iter().all(|w| w.len() <= 2));
        let p = Acceptance::parse("0.5,0.3").unwrap();
        let plan = config_plan(&p, &[2, 1]);
        assert_eq!(plan.parents, vec![None, None, Some(0), Some(1)]);
        // 0.5 + 0.3 + 0.25 + 0.15
        assert!((plan.expected_tokens - 2.2).abs() < 1e-12);
    }

    #[test]
    fn mss_accepts_the_first_child_when_the_draft_is_the_target() {
        let mut rng = StdRng::seed_from_u64(1);
        let p = [0.5, 0.3, 0.2];
        for _ in 0..100 {
            assert_eq!(mss_accepted(&p, &p, &mut rng), Some(0));
        }
        // A draft that never proposes the target's token: every child rejected or never drawn.
        let q = [0.0, 0.0, 1.0];
        let t = [1.0, 0.0, 0.0];
        assert_eq!(mss_accepted(&t, &q, &mut rng), None);
    }
}

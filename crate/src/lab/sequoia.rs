//! Sequoia's trees on LikesWorld (lecture §4.7; issue 54). Sequoia's tree for a draft's measured
//! acceptance vector ([`super::vectors`]) is decoded beside every ⟨k₁,…⟩ configuration of as
//! many nodes: τ measured beside the expectation each tree predicts. Greedy decoding with a static
//! tree is also replayed exactly without a model ([`Replay`]), which gives the vector a depth that
//! decoding meets and refines the DP's tree on it ([`refine`]).

use super::context::Lab;
use super::decoding::{greedy, stochastic};
use super::generate::target_greedy;
use super::params::{Draft, Stochastic, TREE_DEPTH};
pub use super::vectors::{measure, RankVector, DRAWS, RANKS};
use super::vectors::{CALIBRATION_WORLDS, SEED};
use crate::clock::{part, Progress};
use crate::decode::engine::{Method, TreeRule};
use crate::decode::propose::top_k;
use crate::decode::Shape;
use crate::error::Error;
use crate::likesworld::{self, Split};
use crate::model::eval::distributions_many;
use crate::model::{ModelKind, Models};
use crate::sampling::multi::Children;
use crate::tree::sequoia::{self, Acceptance, Plan};

/// A draft on the target's hidden states, its vector a depth and Sequoia's tree for it beside the
/// static sparse tree the page runs (Medusa's, also EAGLE-1's: the `budget` rank paths with the
/// highest product of accuracies), both under the same vectors.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HiddenVectors {
    pub draft: &'static str,
    /// rows[j][r]: teacher-forced, the share of positions whose guess at rank r + 1 is the
    /// target's argmax at depth j + 1 (Medusa: head j; EAGLE: one step ahead, every depth).
    pub rows: Vec<Vec<f64>>,
    pub sequoia_tokens: f64,
    pub sequoia_labels: Vec<String>,
    pub sparse_tokens: f64,
    pub sparse_labels: Vec<String>,
}

/// [`HiddenVectors`] of Medusa's heads (`medusa`) or EAGLE's draft, at `budget` nodes, depth ≤
/// `depth`.
pub async fn hidden_vectors(
    models: &Models,
    medusa: bool,
    budget: usize,
    depth: usize,
) -> Result<HiddenVectors, Error> {
    let drafts = super::hidden::Drafts::load(models)?;
    let ranks = super::hidden::shapes::calibrate(&drafts, medusa)
        .await?
        .ranks;
    let depth = depth.min(ranks.len());
    let rows: Vec<Acceptance> = ranks[..depth]
        .iter()
        .map(|r| Acceptance::new(r.clone()))
        .collect::<Result<_, _>>()?;
    let plan = sequoia::sequoia_by_depth(&rows, budget, depth)?;
    let sparse = super::hidden::RankTree::sparse(&ranks[..depth], budget);
    let sparse = Plan {
        expected_tokens: sequoia::expected_tokens_by_depth(&rows, &sparse.parents, &sparse.ranks),
        parents: sparse.parents,
        ranks: sparse.ranks,
    };
    Ok(HiddenVectors {
        draft: if medusa { "Medusa" } else { "EAGLE" },
        rows: ranks[..depth].to_vec(),
        sequoia_tokens: plan.expected_tokens,
        sequoia_labels: plan.labels(),
        sparse_tokens: sparse.expected_tokens,
        sparse_labels: sparse.labels(),
    })
}

/// The target's greedy text on calibration prompts, each output token by its rank in the
/// draft's ranking there ([`RANKS`]: beyond the ranks measured). Greedy decoding with a static
/// tree of a draft model is then replayed exactly without a model: a step from output position
/// i accepts the longest rank path R[i], R[i + 1], … that the tree holds, then the target's own
/// next token; and what each depth of those steps saw is the vector a depth that the process
/// of that tree meets (after a rejection a step starts where the draft is often wrong).
pub struct Replay {
    ranks: Vec<Vec<usize>>,
}

/// A replay's result: tokens a step, and per depth the count of each rank met there.
pub struct Replayed {
    pub tokens_per_step: f64,
    /// met[j][r]: steps that reached depth j + 1 with the target's token at rank r ([`RANKS`]:
    /// beyond).
    pub met: Vec<[usize; RANKS + 1]>,
}

impl Replay {
    /// The replay of `draft` against the target's greedy output on the calibration prompts.
    pub async fn measure(lab: Lab<'_>, draft: Draft) -> Result<Replay, Error> {
        let worlds = likesworld::worlds(Split::Train, SEED, CALIBRATION_WORLDS);
        let prompts: Vec<Vec<u32>> = worlds.iter().map(|w| w.prompt()).collect();
        let outputs = target_greedy(lab.models, &prompts, lab.clock, &mut |_, _| {}).await?;
        let texts: Vec<Vec<u32>> = prompts
            .iter()
            .zip(&outputs)
            .map(|(p, g)| [p.as_slice(), &g.output].concat())
            .collect();
        let kind = [ModelKind::DraftA, ModelKind::DraftB][draft.index()];
        let qs =
            distributions_many(lab.models.get(kind), &texts, lab.models.device_of(kind)).await?;
        let ranks = texts
            .iter()
            .zip(&prompts)
            .zip(&qs)
            .map(|((text, prompt), q)| {
                (prompt.len()..text.len())
                    .map(|u| {
                        let top = top_k(&q[u - 1], RANKS);
                        top.iter().position(|&x| x == text[u]).unwrap_or(RANKS)
                    })
                    .collect()
            })
            .collect();
        Ok(Replay { ranks })
    }

    /// Greedy decoding with the tree `plan` replayed.
    pub fn run(&self, plan: &Plan) -> Replayed {
        // child[node + 1][rank]: the node under `node` (0: the root) at `rank`.
        let mut child = vec![[None; RANKS]; plan.nodes() + 1];
        for (i, (&parent, &rank)) in plan.parents.iter().zip(&plan.ranks).enumerate() {
            if rank < RANKS {
                child[parent.map_or(0, |p| p + 1)][rank] = Some(i + 1);
            }
        }
        let (mut tokens, mut steps) = (0usize, 0usize);
        let mut met = Vec::new();
        for r in &self.ranks {
            let mut i = 0;
            while i < r.len() {
                let (mut at, mut j) = (0usize, 0usize);
                while i + j < r.len() {
                    if met.len() <= j {
                        met.push([0; RANKS + 1]);
                    }
                    met[j][r[i + j]] += 1;
                    match child[at].get(r[i + j]).copied().flatten() {
                        Some(next) => (at, j) = (next, j + 1),
                        None => break,
                    }
                }
                // j accepted, then the target's own token (none past the end of the text).
                let step = (j + 1).min(r.len() - i);
                tokens += step;
                steps += 1;
                i += step;
            }
        }
        Replayed {
            tokens_per_step: tokens as f64 / steps.max(1) as f64,
            met,
        }
    }
}

impl Replayed {
    /// The vector of each depth this process met (a depth never reached: `fallback`'s).
    pub fn rows(&self, depth: usize, fallback: &Acceptance) -> Vec<Acceptance> {
        (0..depth)
            .map(|j| match self.met.get(j) {
                Some(m) if m.iter().sum::<usize>() > 0 => {
                    let n = m.iter().sum::<usize>() as f64;
                    Acceptance::new(m[..RANKS].iter().map(|&c| c as f64 / n).collect())
                        .expect("shares of one total")
                }
                _ => fallback.clone(),
            })
            .collect()
    }
}

/// A tree improved on the replay: while moving one leaf (the last child of its parent) under
/// another node (as its next rank, within `depth`) gives more tokens a step on the calibration
/// prompts, the best such move. Sequoia's expectation assumes each depth's acceptance
/// independent of the path; LikesWorld's grammar is not (after a rejection the next step starts
/// at a name), so the DP's tree is where this search starts, not where it ends.
pub fn refine(replay: &Replay, plan: &Plan, depth: usize) -> Plan {
    let mut best = plan.clone();
    let mut best_tau = replay.run(&best).tokens_per_step;
    for _ in 0..4 * plan.nodes() {
        let mut improved = None;
        for leaf in 0..best.nodes() {
            let siblings = |t: &Plan, n: usize| {
                (0..t.nodes())
                    .filter(|&x| t.parents[x] == t.parents[n])
                    .count()
            };
            let is_leaf = !best.parents.contains(&Some(leaf));
            if !is_leaf || best.ranks[leaf] + 1 != siblings(&best, leaf) {
                continue;
            }
            let without = remove(&best, leaf);
            let depths = without.depths();
            for under in std::iter::once(None).chain((0..without.nodes()).map(Some)) {
                let d = under.map_or(0, |u| depths[u]);
                let rank = (0..without.nodes())
                    .filter(|&x| without.parents[x] == under)
                    .count();
                if d >= depth || rank >= RANKS {
                    continue;
                }
                let mut t = without.clone();
                t.parents.push(under);
                t.ranks.push(rank);
                let tau = replay.run(&t).tokens_per_step;
                // More tokens a step, or as many from fewer draft calls (a shallower tree).
                let (bar, bar_depth) = improved
                    .as_ref()
                    .map_or((best_tau, best.depth()), |(x, p): &(f64, Plan)| {
                        (*x, p.depth())
                    });
                let tie = (tau - bar).abs() <= 1e-12 && t.depth() < bar_depth;
                if tau > bar + 1e-12 || tie {
                    improved = Some((tau, t));
                }
            }
        }
        match improved {
            Some((tau, t)) => (best_tau, best) = (tau, t),
            None => break,
        }
    }
    best
}

/// `plan` without node `leaf` (childless), the later nodes renumbered.
fn remove(plan: &Plan, leaf: usize) -> Plan {
    let keep: Vec<usize> = (0..plan.nodes()).filter(|&x| x != leaf).collect();
    let renumber = |p: Option<usize>| p.map(|q| if q > leaf { q - 1 } else { q });
    Plan {
        parents: keep.iter().map(|&x| renumber(plan.parents[x])).collect(),
        ranks: keep.iter().map(|&x| plan.ranks[x]).collect(),
        expected_tokens: f64::NAN,
    }
}

/// One tree decoded: its name, shape, the τ its vector predicts and the τ measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TreeRow {
    /// `sequoia` or the configuration, `<2,2,1>`.
    pub tree: String,
    pub nodes: usize,
    pub depth: usize,
    /// 1 + Σ over nodes of the product of p along the path (its vector a depth for the fitted
    /// tree, the overall vector for the others).
    pub predicted_tokens: f64,
    /// Greedy: tokens a step of this tree's decoding replayed on the calibration prompts.
    pub replayed_tokens: Option<f64>,
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
    /// Greedy: the vectors a depth its decoding meets; the tree refined on the replay (by rank path).
    pub by_depth: Option<Vec<Vec<f64>>>,
    /// Which depths the decoding reached; a row of a depth never reached is the overall vector.
    pub by_depth_reached: Option<Vec<bool>>,
    pub fitted_labels: Option<Vec<String>>,
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
    let replay = if mss {
        None
    } else {
        Some(Replay::measure(lab, draft).await?)
    };
    let (mut by_depth, mut fitted_labels, mut by_depth_reached) = (None, None, None);
    if let Some(replay) = &replay {
        // The vector a depth that Sequoia's tree's own decoding meets, and the tree for it.
        let replayed = replay.run(&plan);
        let rows = replayed.rows(depth, &p);
        by_depth_reached = Some(
            (0..depth)
                .map(|j| {
                    replayed
                        .met
                        .get(j)
                        .is_some_and(|m| m.iter().sum::<usize>() > 0)
                })
                .collect(),
        );
        let deep = sequoia::sequoia_by_depth(&rows, budget, depth)?;
        by_depth = Some(rows.iter().map(|r| r.entries().to_vec()).collect());
        let start = [&plan, &deep]
            .into_iter()
            .max_by(|a, b| {
                replay
                    .run(a)
                    .tokens_per_step
                    .total_cmp(&replay.run(b).tokens_per_step)
            })
            .expect("two trees");
        let mut refined = refine(replay, start, depth);
        refined.expected_tokens =
            sequoia::expected_tokens_by_depth(&rows, &refined.parents, &refined.ranks);
        fitted_labels = Some(refined.labels());
        let shape = Shape::Levels(deep.levels());
        trees.push(("sequoia-by-depth".into(), deep, shape));
        let shape = Shape::Levels(refined.levels());
        trees.push(("sequoia-refined".into(), refined, shape));
    }
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
    for (k, (name, tree, shape)) in trees.into_iter().enumerate() {
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
            nodes: tree.nodes(),
            depth: tree.depth(),
            predicted_tokens: tree.expected_tokens,
            replayed_tokens: replay.as_ref().map(|r| r.run(&tree).tokens_per_step),
            tokens_per_call,
            identical,
        });
    }
    Ok(SequoiaReport {
        vector,
        labels: plan.labels(),
        levels: plan.levels(),
        by_depth,
        by_depth_reached,
        fitted_labels,
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
}

//! A draft's positional acceptance vector on LikesWorld (lecture §4.7; Sequoia; issue 54, item
//! 1), measured on calibration worlds apart from the prompts decoded later, teacher-forced on
//! their text (the accepted path is the target's own text): under greedy verification p_i is the
//! share of positions where the target's argmax is the draft's i-th ranked token; under MSS with
//! children drawn without replacement, the share of draws in which the i-th child is the one
//! accepted ([`DRAWS`] a position, seeded). A draft model sees the same context at every depth of
//! an accepted path, so its vector does not depend on depth; what decoding meets a depth does
//! ([`super::sequoia::Replay`]). [`table`] measures drafts A and B both ways on one pass of the
//! target, the shipped pools of four (boost-tuned, and the control's) as one proposer each
//! ([`PoolVector`]), and the drafts on its hidden states (Medusa's heads, EAGLE) a depth.

use super::hidden::shapes::calibrate;
use super::hidden::Drafts;
use super::params::Draft;
use crate::decode::propose::top_k;
use crate::error::Error;
use crate::likesworld::{self, Split, World};
use crate::model::draft_file::{shipped_pool, POOL};
use crate::model::eval::distributions_many;
use crate::model::{ModelKind, Models};
use crate::sampling::{argmax, residual, sample};
use crate::tree::sequoia::Acceptance;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Ranks measured: children per node of any tree built from the vector.
pub const RANKS: usize = 8;
/// Calibration worlds (the training stream, not the prompts decoded).
pub(super) const CALIBRATION_WORLDS: usize = 200;
/// MSS draws per position for the sampled vector.
pub const DRAWS: usize = 16;
/// The seed of the calibration worlds and the draws.
pub(super) const SEED: u64 = 29;

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
    let p_all = target_distributions(models, &worlds).await?;
    from_distributions(models, &worlds, &p_all, draft, mss).await
}

/// The target's next-token distributions over the calibration worlds' text.
async fn target_distributions(
    models: &Models,
    worlds: &[World],
) -> Result<Vec<Vec<Vec<f64>>>, Error> {
    let seqs: Vec<Vec<u32>> = worlds.iter().map(|w| w.tokens()).collect();
    let target = models.get(ModelKind::Target);
    distributions_many(target, &seqs, models.device_of(ModelKind::Target)).await
}

/// [`measure`] on the target's distributions `p_all` over `worlds`, already computed.
async fn from_distributions(
    models: &Models,
    worlds: &[World],
    p_all: &[Vec<Vec<f64>>],
    draft: Draft,
    mss: bool,
) -> Result<RankVector, Error> {
    let seqs: Vec<Vec<u32>> = worlds.iter().map(|w| w.tokens()).collect();
    let kind = [ModelKind::DraftA, ModelKind::DraftB][draft.index()];
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
                let truth = argmax(p) as u32;
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
        draft: draft.letter(),
        verify: if mss { "mss" } else { "greedy" },
        p: hits.iter().map(|&h| h as f64 / total).collect(),
        positions,
    })
}

/// A draft on the target's hidden states, greedy, a depth: rows[j][r] is the share of positions
/// whose guess at rank r + 1 is the target's argmax at depth j + 1 (Medusa: head j; EAGLE: its
/// guess one step ahead, the one row it uses at every depth of a static tree).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DepthVectors {
    pub draft: &'static str,
    pub rows: Vec<Vec<f64>>,
}

/// A pool of drafts as one proposer (lecture §4.2: SpecInfer's boost-tuned pool, its members'
/// greedy chains merged into one tree), greedy: p_i is the share of positions where the
/// target's argmax is the i-th distinct guess of the members in order (a guess two members
/// share is one child, the earlier member's).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PoolVector {
    /// The shipped boost-tuned pool, or the control's (every member trained on every sample).
    pub boosted: bool,
    pub members: usize,
    /// p_1 … p_RANKS (0 beyond the members).
    pub p: Vec<f64>,
    pub positions: usize,
}

/// Item 1's table: drafts A and B under greedy verification and MSS (one pass of the target for
/// the four), the shipped pools of four (boost-tuned and the control's) greedy, and Medusa's
/// heads and EAGLE a depth.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct VectorTable {
    pub models: Vec<RankVector>,
    pub pools: Vec<PoolVector>,
    pub hidden: Vec<DepthVectors>,
}

/// The shipped pool's vector (its first `members`), on the target's distributions `p_all` over
/// `worlds`.
async fn pool_vector(
    models: &Models,
    worlds: &[World],
    p_all: &[Vec<Vec<f64>>],
    boosted: bool,
    members: usize,
) -> Result<PoolVector, Error> {
    let seqs: Vec<Vec<u32>> = worlds.iter().map(|w| w.tokens()).collect();
    let device = &models.draft_device;
    let mut q_all = Vec::with_capacity(members);
    for member in shipped_pool(boosted, members, device)? {
        q_all.push(distributions_many(&member, &seqs, device).await?);
    }
    let mut hits = [0usize; RANKS];
    let mut positions = 0;
    for (n, (w, ps)) in worlds.iter().zip(p_all).enumerate() {
        for t in w.prompt().len() - 1..ps.len() - 1 {
            positions += 1;
            let truth = argmax(&ps[t]);
            let guesses: Vec<usize> = q_all.iter().map(|q| argmax(&q[n][t])).collect();
            if let Some(r) = distinct_rank(&guesses, truth) {
                hits[r] += 1;
            }
        }
    }
    Ok(PoolVector {
        boosted,
        members,
        p: hits
            .iter()
            .map(|&h| h as f64 / positions.max(1) as f64)
            .collect(),
        positions,
    })
}

/// Where `truth` stands among the distinct `guesses`, in their order (None: no member guessed
/// it).
fn distinct_rank(guesses: &[usize], truth: usize) -> Option<usize> {
    let mut seen: Vec<usize> = Vec::with_capacity(guesses.len());
    for &g in guesses {
        if !seen.contains(&g) {
            if g == truth {
                return Some(seen.len());
            }
            seen.push(g);
        }
    }
    None
}

/// [`VectorTable`] on `models` (the target as the job runs it: trained or widened; a widened
/// target's answers are the trained one's up to rounding).
pub async fn table(models: &Models) -> Result<VectorTable, Error> {
    let worlds = likesworld::worlds(Split::Train, SEED, CALIBRATION_WORLDS);
    let p_all = target_distributions(models, &worlds).await?;
    let mut rows = Vec::new();
    for draft in [Draft::A, Draft::B] {
        for mss in [false, true] {
            rows.push(from_distributions(models, &worlds, &p_all, draft, mss).await?);
        }
    }
    let mut pools = Vec::new();
    for boosted in [true, false] {
        let members = POOL.max as usize;
        pools.push(pool_vector(models, &worlds, &p_all, boosted, members).await?);
    }
    let drafts = Drafts::load(models)?;
    let mut hidden = Vec::new();
    for (medusa, name) in [(true, "Medusa"), (false, "EAGLE")] {
        let ranks = calibrate(&drafts, medusa).await?.ranks;
        // EAGLE's one row stands for every depth: kept once.
        let depths = if medusa { ranks.len() } else { 1 };
        hidden.push(DepthVectors {
            draft: name,
            rows: (ranks.iter().take(depths))
                .map(|r| r.iter().take(RANKS).copied().collect())
                .collect(),
        });
    }
    Ok(VectorTable {
        models: rows,
        pools,
        hidden,
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
        if mass <= 0.0 {
            // Every token the draft offers is drawn: no child left.
            return None;
        }
        qj.iter_mut().for_each(|w| *w /= mass);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pools_children_are_its_distinct_guesses_in_member_order() {
        // Members guess 7, 7, 3, 9: the children are 7, 3, 9.
        let guesses = [7, 7, 3, 9];
        assert_eq!(distinct_rank(&guesses, 7), Some(0));
        assert_eq!(distinct_rank(&guesses, 3), Some(1));
        assert_eq!(distinct_rank(&guesses, 9), Some(2));
        assert_eq!(distinct_rank(&guesses, 5), None);
        assert_eq!(distinct_rank(&[], 5), None);
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

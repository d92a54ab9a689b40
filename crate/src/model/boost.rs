//! SpecInfer's collective boost-tuning (lecture §4.2): a pool of drafts, the first member trained
//! on every sample, each next one (started from the first, as SpecInfer's small models start from
//! one pretrained model) only on the samples that no earlier member matches — a sample is a
//! position of the target's output and the [`SAMPLE_WINDOW`] tokens from it (what a chain
//! proposes there), matched when a member's argmax at the position is the target's token.
//! Without the filter (the control) every member trains on every sample, each with its own seed.
//! [`Booster`] runs it a step at a time (the page's training module), [`boost`] to the end; each
//! member is a [`super::distill::Distiller`] run.

use super::distill::{matches, Corpus, DistillConfig, Distiller};
use super::train::Point;
use super::Decoder;
use crate::error::Error;
use burn::tensor::Device;

/// A boost-tuning run: `pool` members of one shape, `steps` each.
#[derive(Debug, Clone)]
pub struct BoostConfig {
    pub member: DistillConfig,
    pub pool: usize,
    /// Drop the samples an earlier member matches (collective boost-tuning); off: the control.
    pub filter: bool,
}

/// The tokens a sample spans: the position whose token the pool must match, and the tokens a
/// chain proposes after it (γ 4, the pool's chains unless told).
pub const SAMPLE_WINDOW: usize = 4;

/// What the next member trains on: the samples no member matches yet — a sample starts at a
/// learned position and spans [`SAMPLE_WINDOW`] tokens, so that the member learns to continue
/// past the token the pool misses — each position weighted by the samples that span it; and how
/// many samples are left.
fn remaining(corpus: &Corpus, covered: &[Vec<bool>]) -> (Corpus, usize) {
    let mut next = corpus.clone();
    let mut starts = 0;
    for ((learn, weight), covered) in next.learn.iter_mut().zip(&mut next.weight).zip(covered) {
        weight.iter_mut().for_each(|w| *w = 0.0);
        for t in 0..learn.len() {
            if learn[t] && !covered[t] {
                starts += 1;
                for p in t..(t + SAMPLE_WINDOW).min(learn.len()) {
                    if learn[p] {
                        weight[p] += 1.0;
                    }
                }
            }
        }
        for (l, w) in learn.iter_mut().zip(weight.iter()) {
            *l = *w > 0.0;
        }
    }
    (next, starts)
}

/// One member of a pool, and what it covers of the corpus it was trained for.
pub struct Member {
    pub model: Decoder,
    /// Samples it was trained on.
    pub samples: usize,
    /// Fraction of the corpus's samples it matches alone, and the pool up to it together.
    pub coverage: f64,
    pub pool_coverage: f64,
}

/// Collective boost-tuning one step at a time (the page trains a pool a few steps per call, as
/// [`Distiller`] does a draft; [`boost`] runs it to the end): the members in order, each next one
/// started when the one before has taken its steps and been matched against the corpus.
pub struct Booster {
    config: BoostConfig,
    corpus: Corpus,
    target: Decoder,
    device: Device,
    members: Vec<Member>,
    /// The corpus's samples the pool matches so far.
    covered: Vec<Vec<bool>>,
    /// The member being trained, if any is left, and the samples it trains on.
    run: Option<Distiller>,
    samples: usize,
}

impl Booster {
    pub fn new(
        config: &BoostConfig,
        corpus: Corpus,
        target: &Decoder,
        device: &Device,
    ) -> Result<Booster, Error> {
        let covered = corpus.learn.iter().map(|r| vec![false; r.len()]).collect();
        let mut b = Booster {
            config: config.clone(),
            corpus,
            target: target.clone(),
            device: device.clone(),
            members: Vec::with_capacity(config.pool),
            covered,
            run: None,
            samples: 0,
        };
        b.next_member()?;
        Ok(b)
    }

    /// Starts the next member on what the pool misses (the filter) or on everything; a member
    /// with nothing left to learn is the first one again, untrained.
    fn next_member(&mut self) -> Result<(), Error> {
        while self.members.len() < self.config.pool {
            let i = self.members.len();
            let mut member = self.config.member.clone();
            member.seed = self.config.member.seed ^ ((i as u64 + 1) << 32);
            // The first member, and every member of the control, learn every sample.
            let (data, samples) = match self.config.filter && i > 0 {
                true => remaining(&self.corpus, &self.covered),
                false => (self.corpus.clone(), self.corpus.samples()),
            };
            let first = self.members.first().map(|m| m.model.clone());
            if let (Some(first), 0) = (&first, samples) {
                self.finish_member(first.clone(), 0);
                continue;
            }
            self.samples = samples;
            self.run = Some(Distiller::new(
                &member,
                data,
                &self.target,
                first.as_ref(),
                &self.device,
            )?);
            return Ok(());
        }
        self.run = None;
        Ok(())
    }

    /// Matches a trained member against the corpus and adds it to the pool.
    fn finish_member(&mut self, model: Decoder, samples: usize) {
        let total = self.corpus.samples().max(1) as f64;
        let hit = matches(&model, &self.corpus, &self.device);
        let own = hit.iter().flatten().filter(|&&b| b).count() as f64 / total;
        for (c, h) in self.covered.iter_mut().zip(&hit) {
            for (c, h) in c.iter_mut().zip(h) {
                *c |= *h;
            }
        }
        let pool = self.covered.iter().flatten().filter(|&&b| b).count() as f64 / total;
        self.members.push(Member {
            model,
            samples,
            coverage: own,
            pool_coverage: pool,
        });
    }

    /// One step of the member being trained: (its index, the point); when that was its last
    /// step, the member joins the pool and the next one starts. `None` once every member is
    /// trained.
    pub fn step(&mut self) -> Result<Option<(usize, Point)>, Error> {
        loop {
            let i = self.members.len();
            let Some(run) = self.run.as_mut() else {
                return Ok(None);
            };
            let point = run.step();
            // Its last step taken (or none to take: a run of 0 steps), the member joins the pool.
            if run.finished() {
                let model = run.model();
                self.run = None;
                self.finish_member(model, self.samples);
                self.next_member()?;
            }
            if let Some(point) = point {
                return Ok(Some((i, point)));
            }
        }
    }

    /// Whether every member is trained.
    pub fn finished(&self) -> bool {
        self.run.is_none()
    }

    /// The members trained so far.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// The pool as it is now: the members trained, and the one in training as it is.
    pub fn pool(&self) -> Vec<Decoder> {
        let mut pool: Vec<Decoder> = self.members.iter().map(|m| m.model.clone()).collect();
        pool.extend(self.run.as_ref().map(Distiller::model));
        pool
    }
}

/// Collective boost-tuning on `corpus` (a greedy teacher's: matching is argmax agreement), run to
/// the end ([`Booster`]). `progress` gets (member, point).
pub fn boost(
    config: &BoostConfig,
    corpus: &Corpus,
    target: &Decoder,
    device: &Device,
    mut progress: impl FnMut(usize, &Point),
) -> Result<Vec<Member>, Error> {
    let mut run = Booster::new(config, corpus.clone(), target, device)?;
    while let Some((i, point)) = run.step()? {
        progress(i, &point);
    }
    Ok(run.members)
}

#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::model::distill::Teacher;
    use crate::model::gradcheck::tiny;
    use crate::model::DecoderConfig;

    /// [`tiny`]'s two sequences as a corpus learned from position 2 on.
    fn corpus() -> Corpus {
        let rows = vec![vec![1, 5, 7, 3, 9, 2, 4], vec![1, 6, 6, 8, 11, 3]];
        Corpus::new(rows, &[2, 2])
    }

    #[test]
    fn boost_tuning_trains_each_next_member_only_where_the_pool_misses() {
        let d = Device::flex();
        let (target, _) = tiny(&d, 3);
        let data = corpus();
        let mut member =
            DistillConfig::new(DecoderConfig::new(12, 8, 1, 2, 8), Teacher::Greedy, 1, 30);
        member.batch = 2;
        member.eval_every = 0;
        let run = |filter| {
            let config = BoostConfig {
                member: member.clone(),
                pool: 3,
                filter,
            };
            boost(&config, &data, &target, &d, |_, _| {}).unwrap()
        };
        let boosted = run(true);
        let total = data.samples();
        assert_eq!(boosted[0].samples, total);
        for w in boosted.windows(2) {
            let left = ((1.0 - w[0].pool_coverage) * total as f64).round() as usize;
            assert_eq!(
                w[1].samples, left,
                "the next member sees what the pool missed"
            );
            assert!(w[1].pool_coverage >= w[0].pool_coverage);
        }
        for m in run(false) {
            assert_eq!(m.samples, total, "without the filter every member sees all");
        }
    }

    #[test]
    fn a_pool_of_runs_of_zero_steps_is_the_first_member_untrained_each_time() {
        let d = Device::flex();
        let (target, _) = tiny(&d, 3);
        let mut member =
            DistillConfig::new(DecoderConfig::new(12, 8, 1, 2, 8), Teacher::Greedy, 1, 0);
        member.batch = 2;
        member.eval_every = 0;
        for filter in [true, false] {
            let config = BoostConfig {
                member: member.clone(),
                pool: 3,
                filter,
            };
            let mut run = Booster::new(&config, corpus(), &target, &d).unwrap();
            assert!(run.step().unwrap().is_none(), "no step to take");
            assert!(run.finished());
            assert_eq!(run.members().len(), 3, "every member joins the pool");
            assert_eq!(run.pool().len(), 3);
        }
    }

    #[test]
    fn a_sample_spans_its_window_and_weighs_every_position_it_spans() {
        // One row of 9 tokens learned from position 2 on (learn[1..] true); the pool matches
        // positions 3 and 4: the samples left start at 1, 2, 5, 6 and 7.
        let data = Corpus::new(vec![(0..9).collect()], &[2]);
        let mut covered = vec![vec![false; 8]];
        covered[0][3] = true;
        covered[0][4] = true;
        let (next, starts) = remaining(&data, &covered);
        assert_eq!(starts, 5);
        // Position p weighs the samples t ≤ p < t + 4 left: 1 → {1}, 2 → {1, 2}, 3 → {1, 2},
        // 4 → {1, 2}, 5 → {2, 5}, 6 → {5, 6}, 7 → {5, 6, 7}.
        assert_eq!(next.weight[0], vec![0.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 3.0]);
        assert_eq!(
            next.learn[0],
            vec![false, true, true, true, true, true, true, true]
        );
    }
}

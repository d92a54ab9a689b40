//! Learned speculators (lecture §4.2): a draft of any shape distilled from the target, and
//! SpecInfer's collective boost-tuning of a pool of them.
//!
//! The data is a [`Corpus`]: sequences with, per position, whether the token after it is one
//! the draft should learn to propose (the continuation of a prompt: the draft proposes only
//! there). Three teachers ([`Teacher`]): the target's greedy outputs (cross-entropy on its
//! tokens), its next-token distributions on those outputs (a KL loss), or the LikesWorld text of
//! the same worlds (cross-entropy on the text, whose question order is random where the target's
//! is not). Making the corpus (decoding the target) is the lab's job; training on it is this
//! module's, with burn's autodiff, seeded (a run is a function of its seed): natively, and in the
//! page's training module, which steps a run ([`Distiller`], [`Booster`]) a few steps per call.
//!
//! [`boost`] is collective boost-tuning: the first member trained on every sample, each next one
//! (started from the first, as SpecInfer's small models start from one pretrained model) only on
//! the samples that no earlier member matches — a sample is a position of the target's output
//! and the [`SAMPLE_WINDOW`] tokens from it (what a chain proposes there), matched when a
//! member's argmax at the position is the target's token. Without the filter (the control)
//! every member trains on every sample, each with its own seed.

use super::train::{rate, Point};
use super::{Decoder, DecoderConfig};
use crate::error::Error;
use crate::likesworld::{worlds, Split, PAD};
use burn::module::Module;
use burn::optim::{AdamWConfig, GradientsParams};
use burn::tensor::activation::{log_softmax, softmax};
use burn::tensor::{Device, Int, Tensor, TensorData};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// What a draft learns from (lecture §4.2: the LLM's outputs, its distributions, or raw text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Teacher {
    /// The target's greedy outputs, cross-entropy on their tokens.
    Greedy,
    /// The target's next-token distributions along its outputs: KL(target ‖ draft).
    Kl,
    /// The LikesWorld text of the same worlds: cross-entropy on the text's tokens.
    Text,
}

crate::error::named!(Teacher, "teacher");

impl Teacher {
    pub const ALL: [Teacher; 3] = [Teacher::Greedy, Teacher::Kl, Teacher::Text];

    pub fn name(self) -> &'static str {
        match self {
            Teacher::Greedy => "greedy",
            Teacher::Kl => "kl",
            Teacher::Text => "text",
        }
    }
}

/// Sequences to learn from; `learn[i][t]` says whether the token at t + 1 of row i is learned
/// (and, for [`boost`], not yet matched by the pool).
#[derive(Debug, Clone, PartialEq)]
pub struct Corpus {
    pub rows: Vec<Vec<u32>>,
    pub learn: Vec<Vec<bool>>,
    /// How much each learned position weighs in the loss (1 unless [`boost`] says otherwise).
    pub weight: Vec<Vec<f32>>,
}

impl Corpus {
    /// Rows whose tokens from `from[i]` on are learned (their continuation of a prompt of that
    /// length).
    pub fn new(rows: Vec<Vec<u32>>, from: &[usize]) -> Corpus {
        let learn: Vec<Vec<bool>> = rows
            .iter()
            .zip(from)
            .map(|(r, &f)| (0..r.len().saturating_sub(1)).map(|t| t + 1 >= f).collect())
            .collect();
        let weight = Corpus::ones(&learn);
        Corpus {
            rows,
            learn,
            weight,
        }
    }

    fn ones(learn: &[Vec<bool>]) -> Vec<Vec<f32>> {
        learn
            .iter()
            .map(|r| r.iter().map(|&b| f32::from(u8::from(b))).collect())
            .collect()
    }

    /// Learned positions in all.
    pub fn samples(&self) -> usize {
        self.learn.iter().flatten().filter(|&&b| b).count()
    }
}

/// A distillation run.
#[derive(Debug, Clone)]
pub struct DistillConfig {
    pub shape: DecoderConfig,
    pub teacher: Teacher,
    pub seed: u64,
    pub steps: usize,
    pub batch: usize,
    pub learning_rate: f64,
    /// Held-out answer accuracy every this many steps (and at the end); 0: never.
    pub eval_every: usize,
}

impl DistillConfig {
    pub fn new(shape: DecoderConfig, teacher: Teacher, seed: u64, steps: usize) -> DistillConfig {
        DistillConfig {
            shape,
            teacher,
            seed,
            steps,
            batch: 64,
            learning_rate: 3e-3,
            eval_every: 250,
        }
    }
}

/// KL(p ‖ softmax(logits)) per learned row, averaged: `logits`, `probs` [n, vocab], `mask` [n]
/// (1 where the row is learned). The target's entropy term holds no parameter, so the gradient
/// is the soft cross-entropy's.
pub fn kl_loss(logits: Tensor<2>, probs: Tensor<2>, mask: Tensor<1>) -> Tensor<1> {
    let log_q = log_softmax(logits, 1);
    let log_p = probs.clone().clamp_min(1e-30).log();
    let per_row = (probs * (log_p - log_q)).sum_dim(1).squeeze_dim::<1>(1);
    let count = mask.clone().sum().clamp_min(1.0);
    (per_row * mask).sum() / count
}

/// One batch: inputs [b, len − 1], labels [b·(len − 1)] (PAD where not learned), the mask as
/// floats, all padded to the longest row.
fn batch_of(
    corpus: &Corpus,
    picks: &[usize],
    device: &Device,
) -> (Tensor<2, Int>, Tensor<1, Int>, Tensor<1>) {
    let len = picks
        .iter()
        .map(|&i| corpus.rows[i].len())
        .max()
        .unwrap_or(2)
        .max(2);
    let (mut inputs, mut labels, mut mask) = (Vec::new(), Vec::new(), Vec::new());
    for &i in picks {
        let row = &corpus.rows[i];
        for t in 0..len - 1 {
            inputs.push(i64::from(row.get(t).copied().unwrap_or(PAD)));
            let learned = corpus.learn[i].get(t).copied().unwrap_or(false);
            let next = row.get(t + 1).copied().unwrap_or(PAD);
            labels.push(i64::from(if learned { next } else { PAD }));
            let w = corpus.weight[i].get(t).copied().unwrap_or(0.0);
            mask.push(if learned { w } else { 0.0 });
        }
    }
    let b = picks.len();
    (
        Tensor::from_data(TensorData::new(inputs, [b, len - 1]), device),
        Tensor::from_data(TensorData::new(labels, [b * (len - 1)]), device),
        Tensor::from_data(TensorData::new(mask, [b * (len - 1)]), device),
    )
}

/// The loss of `model` on one batch under `teacher` (`target` gives the KL teacher's
/// distributions, computed without gradients).
pub fn loss(
    model: &Decoder,
    target: &Decoder,
    teacher: Teacher,
    (inputs, labels, mask): (Tensor<2, Int>, Tensor<1, Int>, Tensor<1>),
) -> Tensor<1> {
    let [b, len] = inputs.dims();
    let logits = model.forward_causal(inputs.clone());
    let vocab = logits.dims()[2];
    let logits = logits.reshape([b * len, vocab]);
    match teacher {
        Teacher::Greedy | Teacher::Text => {
            let picked = log_softmax(logits, 1)
                .gather(1, labels.reshape([b * len, 1]))
                .squeeze_dim::<1>(1);
            let count = mask.clone().sum().clamp_min(1e-6);
            -(picked * mask).sum() / count
        }
        Teacher::Kl => {
            let p = softmax(target.forward_causal(inputs).reshape([b * len, vocab]), 1).detach();
            kl_loss(logits, p, mask)
        }
    }
}

/// Rows with at least one learned position.
fn learnable(corpus: &Corpus) -> Vec<usize> {
    (0..corpus.rows.len())
        .filter(|&i| corpus.learn[i].iter().any(|&b| b))
        .collect()
}

/// A distillation run, one step at a time (the page trains a few steps per call, so that it can
/// draw the curve and stop when asked; [`distill`] runs it to the end). Owns what a run needs:
/// the corpus, the frozen target (the KL teacher), the model and its optimizer, the batch stream.
pub struct Distiller {
    config: DistillConfig,
    corpus: Corpus,
    rows: Vec<usize>,
    device: Device,
    ad: Device,
    frozen: Decoder,
    /// Always there between steps; taken for the optimizer's step, which consumes it (so that
    /// burn may update the weights in place).
    model: Option<Decoder>,
    optim: burn::optim::ModuleOptimizer,
    rng: StdRng,
    held_out: Vec<crate::likesworld::World>,
    step: usize,
}

impl Distiller {
    /// A run of `config` on `corpus`, from scratch or from `start`, on a CPU `device`; `target`
    /// is the KL teacher. Seeds the device's generator (the fresh model's initialisation).
    pub fn new(
        config: &DistillConfig,
        corpus: Corpus,
        target: &Decoder,
        start: Option<&Decoder>,
        device: &Device,
    ) -> Result<Distiller, Error> {
        let rows = learnable(&corpus);
        if rows.is_empty() {
            return Err(Error::Unavailable {
                what: "training",
                why: crate::error::Text::new(
                    "the corpus has no position to learn",
                    "语料里没有要学习的位置",
                ),
            });
        }
        device.seed(config.seed);
        let ad = device.clone().autodiff();
        let frozen = target.clone().fork(&ad).no_grad();
        let model = match start {
            Some(m) => m.clone().fork(&ad).train(),
            None => config.shape.init(&ad),
        };
        Ok(Distiller {
            config: config.clone(),
            corpus,
            rows,
            device: device.clone(),
            ad,
            frozen,
            model: Some(model),
            optim: AdamWConfig::new().with_weight_decay(0.01).init(),
            rng: StdRng::seed_from_u64(config.seed),
            held_out: worlds(Split::HeldOut, config.seed, 500),
            step: 0,
        })
    }

    /// Steps taken so far.
    pub fn steps_done(&self) -> usize {
        self.step
    }

    /// Whether every step of the run has been taken.
    pub fn finished(&self) -> bool {
        self.step >= self.config.steps
    }

    /// One optimizer step on a fresh batch (none past the run's last step).
    pub fn step(&mut self) -> Option<Point> {
        if self.finished() {
            return None;
        }
        self.step += 1;
        let (config, step) = (&self.config, self.step);
        let picks: Vec<usize> = (0..config.batch)
            .map(|_| self.rows[self.rng.random_range(0..self.rows.len())])
            .collect();
        let l = loss(
            self.current(),
            &self.frozen,
            config.teacher,
            batch_of(&self.corpus, &picks, &self.ad),
        );
        let value = f64::from(l.clone().into_scalar::<f32>());
        let grads = GradientsParams::from_grads(l.backward(), self.current());
        let rate = rate(config.learning_rate, step, config.steps);
        let model = self.model.take().expect("the model is there between steps");
        self.model = Some(self.optim.step(rate, model, grads));
        let evaluate =
            config.eval_every > 0 && (step % config.eval_every == 0 || step == config.steps);
        Some(Point {
            step,
            loss: value,
            held_out: evaluate
                .then(|| super::eval::accuracy(&self.model(), &self.held_out, &self.device)),
        })
    }

    fn current(&self) -> &Decoder {
        self.model
            .as_ref()
            .expect("the model is there between steps")
    }

    /// The draft as it is now, without autodiff.
    pub fn model(&self) -> Decoder {
        self.current().valid()
    }
}

/// Trains a draft of `config.shape` on `corpus` (from scratch, or from `start`) on a CPU
/// `device`; `target` is the KL teacher. `progress` gets every step's point.
pub fn distill(
    config: &DistillConfig,
    corpus: &Corpus,
    target: &Decoder,
    start: Option<&Decoder>,
    device: &Device,
    mut progress: impl FnMut(&Point),
) -> Result<(Decoder, Vec<Point>), Error> {
    let mut run = Distiller::new(config, corpus.clone(), target, start, device)?;
    let mut curve = Vec::with_capacity(config.steps);
    while let Some(point) = run.step() {
        progress(&point);
        curve.push(point);
    }
    Ok((run.model(), curve))
}

/// For every learned position of `corpus`, whether `model`'s argmax there is the corpus's next
/// token (teacher-forced), in the shape of `corpus.learn` (false where not learned).
pub fn matches(model: &Decoder, corpus: &Corpus, device: &Device) -> Vec<Vec<bool>> {
    let mut out = Vec::with_capacity(corpus.rows.len());
    let all: Vec<usize> = (0..corpus.rows.len()).collect();
    for chunk in all.chunks(256) {
        let (inputs, labels, _) = batch_of(corpus, chunk, device);
        let [_, len] = inputs.dims();
        let predicted: Vec<i64> = model
            .forward_causal(inputs)
            .argmax(2)
            .into_data()
            .convert::<i64>()
            .try_into_vec::<i64>()
            .expect("argmax gives integers");
        let labels: Vec<i64> = labels
            .into_data()
            .convert::<i64>()
            .try_into_vec::<i64>()
            .expect("ints");
        for (k, &i) in chunk.iter().enumerate() {
            out.push(
                (0..corpus.learn[i].len())
                    .map(|t| corpus.learn[i][t] && predicted[k * len + t] == labels[k * len + t])
                    .collect(),
            );
        }
    }
    out
}

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
    use crate::model::gradcheck::{directional, tiny, Jitter};

    /// A tiny draft (vocabulary 12, as [`tiny`]'s target), jittered away from its init.
    fn draft(device: &Device) -> Decoder {
        device.seed(5);
        DecoderConfig::new(12, 8, 1, 2, 8)
            .init(device)
            .map(&mut Jitter(0.2))
    }

    /// [`tiny`]'s two sequences as a corpus learned from position 2 on.
    fn corpus() -> Corpus {
        let rows = vec![vec![1, 5, 7, 3, 9, 2, 4], vec![1, 6, 6, 8, 11, 3]];
        Corpus::new(rows, &[2, 2])
    }

    #[test]
    fn each_teachers_loss_gradient_matches_finite_differences() {
        let ad = Device::flex().autodiff();
        let (target, _) = tiny(&ad, 3);
        let target = target.map(&mut Jitter(0.3));
        let data = corpus();
        for teacher in Teacher::ALL {
            let model = draft(&ad);
            let (g, fd, missing) = directional(
                &model,
                |m| loss(m, &target, teacher, batch_of(&data, &[0, 1], &ad)),
                1e-2,
            );
            assert_eq!(missing, 0, "{teacher:?}: every parameter has a gradient");
            assert!(
                g.abs() > 1e-3,
                "{teacher:?}: a direction the loss moves along: {g}"
            );
            assert!(
                (g - fd).abs() <= 0.02 * g.abs() + 1e-4,
                "{teacher:?}: autodiff {g} vs finite differences {fd}"
            );
        }
    }

    #[test]
    fn the_kl_loss_is_zero_against_itself_and_counts_only_learned_rows() {
        let d = Device::flex();
        let logits = Tensor::<2>::from_data(
            TensorData::new(vec![0.5f32, -1.0, 2.0, 0.0, 0.1, 0.3], [2, 3]),
            &d,
        );
        let p = softmax(logits.clone(), 1);
        let ones = Tensor::<1>::from_data(TensorData::new(vec![1.0f32, 1.0], [2]), &d);
        let zero: f32 = kl_loss(logits.clone(), p.clone(), ones).into_scalar();
        assert!(zero.abs() < 1e-6, "{zero}");
        // Against a uniform teacher, only the first row learned: KL(u ‖ q₀) by hand.
        let u = Tensor::<2>::from_data(TensorData::new(vec![1.0f32 / 3.0; 6], [2, 3]), &d);
        let first = Tensor::<1>::from_data(TensorData::new(vec![1.0f32, 0.0], [2]), &d);
        let got: f32 = kl_loss(logits, u, first).into_scalar();
        let z = [0.5f64, -1.0, 2.0];
        let lse = z.iter().map(|x| x.exp()).sum::<f64>().ln();
        let want: f64 = z
            .iter()
            .map(|x| (1.0 / 3.0) * ((1.0f64 / 3.0).ln() - (x - lse)))
            .sum();
        assert!((f64::from(got) - want).abs() < 1e-5, "{got} vs {want}");
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

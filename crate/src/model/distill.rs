//! Learned speculators (lecture §4.2): a draft of any shape distilled from the target.
//!
//! The data is a [`Corpus`]: sequences with, per position, whether the token after it is one
//! the draft should learn to propose (the continuation of a prompt: the draft proposes only
//! there). Three teachers ([`Teacher`]): the target's greedy outputs (cross-entropy on its
//! tokens), its next-token distributions on those outputs (a KL loss), or the LikesWorld text of
//! the same worlds (cross-entropy on the text, whose question order is random where the target's
//! is not). Making the corpus (decoding the target) is the lab's job; training on it is this
//! module's, with burn's autodiff, seeded (a run is a function of its seed): natively, and in the
//! page's training module, which steps a run ([`Distiller`]) a few steps per call.
//!
//! Collective boost-tuning, a pool of such drafts each trained where the earlier ones miss, is
//! [`super::boost`]'s, on the same runs and the same [`matches`].

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

crate::error::choices! {
    /// What a draft learns from (lecture §4.2: the LLM's outputs, its distributions, or raw text).
    pub enum Teacher("teacher") {
        /// The target's greedy outputs, cross-entropy on their tokens.
        Greedy = "greedy",
        /// The target's next-token distributions along its outputs: KL(target ‖ draft).
        Kl = "kl",
        /// The LikesWorld text of the same worlds: cross-entropy on the text's tokens.
        Text = "text",
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
}

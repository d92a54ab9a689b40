//! Training a LikesWorld model with burn's autodiff (lecture §3: the target reaches 100% answer
//! accuracy; the small drafts cannot). Every batch is a fresh draw of training worlds from a
//! seeded stream, so a run is a function of its seed; the loss is next-token cross-entropy over
//! every non-padding position.

use super::eagle::{self, Eagle};
use super::eval::{accuracy, batch, Accuracy};
use super::medusa::{self, Medusa};
use super::{Decoder, ModelKind};
use crate::likesworld::{worlds, Split, World, PAD, VOCAB};
use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamWConfig, GradientsParams};
use burn::tensor::Device;
use rand::rngs::StdRng;
use rand::SeedableRng;

/// What a run does.
#[derive(Debug, Clone)]
pub struct TrainConfig {
    pub kind: ModelKind,
    pub seed: u64,
    pub steps: usize,
    pub batch: usize,
    pub learning_rate: f64,
    /// Evaluate on held-out worlds every this many steps (and at the end).
    pub eval_every: usize,
}

impl TrainConfig {
    /// The settings the shipped weights were trained with (`seed` 1). The target passes its
    /// induction transition (answers 30% → 100%) around step 1,200; the drafts' budgets are
    /// what makes them drafts: cheap, and far from the target's accuracy.
    pub fn new(kind: ModelKind, seed: u64) -> TrainConfig {
        let steps = match kind {
            ModelKind::Target => 2000,
            ModelKind::DraftA => 2500,
            ModelKind::DraftB => 6000,
        };
        TrainConfig {
            kind,
            seed,
            steps,
            batch: 64,
            learning_rate: 3e-3,
            eval_every: 250,
        }
    }
}

/// One point of the training curve.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Point {
    pub step: usize,
    pub loss: f64,
    pub held_out: Option<Accuracy>,
}

/// Trains from scratch on `device` (a CPU device; autodiff is switched on here). `progress` is
/// called after every step with the latest point.
pub fn train(
    config: &TrainConfig,
    device: &Device,
    mut progress: impl FnMut(&Point),
) -> (Decoder, Vec<Point>) {
    device.seed(config.seed);
    let ad = device.clone().autodiff();
    let mut model = config.kind.config().init(&ad);
    let mut optim = AdamWConfig::new().with_weight_decay(0.01).init();
    let loss_fn = CrossEntropyLossConfig::new()
        .with_pad_tokens(Some(vec![PAD as usize]))
        .init(&ad);
    let mut rng = StdRng::seed_from_u64(config.seed);
    let held_out = worlds(Split::HeldOut, config.seed, 500);
    let mut curve = Vec::with_capacity(config.steps);
    for step in 1..=config.steps {
        let batch_worlds: Vec<World> = (0..config.batch).map(|_| World::sample(&mut rng)).collect();
        let (tokens, _) = batch(&batch_worlds, &ad);
        let [b, len] = tokens.dims();
        let inputs = tokens.clone().narrow(1, 0, len - 1);
        let targets = tokens.narrow(1, 1, len - 1).reshape([b * (len - 1)]);
        let logits = model.forward_causal(inputs).reshape([b * (len - 1), VOCAB]);
        let loss = loss_fn.forward(logits, targets);
        let loss_value = f64::from(loss.clone().into_scalar::<f32>());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(rate(config.learning_rate, step, config.steps), model, grads);
        let evaluate = step % config.eval_every == 0 || step == config.steps;
        let point = Point {
            step,
            loss: loss_value,
            held_out: evaluate.then(|| accuracy(&model.valid(), &held_out, device)),
        };
        progress(&point);
        curve.push(point);
    }
    (model.valid(), curve)
}

/// Linear warm-up over 5% of the run, then cosine decay to 10%.
pub(super) fn rate(peak: f64, step: usize, steps: usize) -> f64 {
    let t = step as f64 / steps as f64;
    peak * if t < 0.05 {
        t / 0.05
    } else {
        0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * (t - 0.05) / 0.95).cos())
    }
}

/// A draft that reads the target's features (lecture §5.1–5.2), and how it is trained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hidden {
    /// `heads` Medusa heads.
    Medusa { heads: usize },
    /// EAGLE's one-layer draft; `rollout` > 1 adds the training-time test over that many steps.
    Eagle { rollout: usize },
}

/// A run training a [`Hidden`] draft on the frozen, shipped target.
#[derive(Debug, Clone)]
pub struct HiddenConfig {
    pub kind: Hidden,
    pub seed: u64,
    pub steps: usize,
    pub batch: usize,
    pub learning_rate: f64,
}

impl HiddenConfig {
    /// The settings the shipped drafts were trained with (`seed` 1).
    pub fn new(kind: Hidden, seed: u64) -> HiddenConfig {
        HiddenConfig {
            kind,
            seed,
            steps: match kind {
                Hidden::Medusa { .. } => 1500,
                Hidden::Eagle { .. } => 2000,
            },
            batch: 64,
            learning_rate: 3e-3,
        }
    }
}

/// What [`train_hidden`] returns: the trained draft.
pub enum Trained {
    Medusa(Medusa),
    Eagle(Box<Eagle>),
}

/// Trains a draft on `target`'s features (the target frozen: its features are computed without
/// gradients) on a CPU `device`; every batch a fresh seeded draw of training worlds. `progress`
/// gets every step's point (no held-out evaluation: `specdec likesworld medusa|eagle` measures
/// the drafts in use).
pub fn train_hidden(
    config: &HiddenConfig,
    target: &Decoder,
    device: &Device,
    mut progress: impl FnMut(&Point),
) -> (Trained, Vec<Point>) {
    device.seed(config.seed);
    let ad = device.clone().autodiff();
    let frozen = target.clone().fork(&ad).no_grad();
    let mut rng = StdRng::seed_from_u64(config.seed);
    let mut curve = Vec::with_capacity(config.steps);
    let draw = |rng: &mut StdRng| {
        let worlds: Vec<World> = (0..config.batch).map(|_| World::sample(rng)).collect();
        let (tokens, _) = batch(&worlds, &ad);
        let (features, logits) = frozen.features_causal(tokens.clone());
        (tokens, features.detach(), logits.detach())
    };
    let mut record = |step: usize, loss: f64, curve: &mut Vec<Point>| {
        let point = Point {
            step,
            loss,
            held_out: None,
        };
        progress(&point);
        curve.push(point);
    };
    let lr = |step| rate(config.learning_rate, step, config.steps);
    let trained = match config.kind {
        Hidden::Medusa { heads } => {
            let mut model = Medusa::init(heads, &frozen, &ad);
            let mut optim = AdamWConfig::new().with_weight_decay(0.01).init();
            for step in 1..=config.steps {
                let (tokens, features, _) = draw(&mut rng);
                let loss = medusa::loss(&model, features, tokens, PAD);
                let value = f64::from(loss.clone().into_scalar::<f32>());
                let grads = GradientsParams::from_grads(loss.backward(), &model);
                model = optim.step(lr(step), model, grads);
                record(step, value, &mut curve);
            }
            Trained::Medusa(model.valid())
        }
        Hidden::Eagle { rollout } => {
            let mut model = Eagle::init(&frozen, &ad);
            let mut optim = AdamWConfig::new().with_weight_decay(0.01).init();
            for step in 1..=config.steps {
                let (tokens, features, logits) = draw(&mut rng);
                let loss = eagle::loss(&model, &frozen, features, logits, tokens, PAD, rollout);
                let value = f64::from(loss.clone().into_scalar::<f32>());
                let grads = GradientsParams::from_grads(loss.backward(), &model);
                model = optim.step(lr(step), model, grads);
                record(step, value, &mut curve);
            }
            Trained::Eagle(Box::new(model.valid()))
        }
    };
    (trained, curve)
}

/// A model's parameter count.
pub fn parameters(model: &Decoder) -> usize {
    model.num_params()
}

//! EAGLE's draft (lecture §5.2; Li et al. 2024): one decoder layer that autoregresses on the
//! target's *features* instead of on tokens. Its input at position t is the target's feature
//! f_t (the LM head's input, [`Decoder::forward_features`]) beside the embedding of the token
//! one step ahead, x_{t+1} (which removes the sampling's uncertainty from the feature's future);
//! its output is a guess of f_{t+1}, read through the target's frozen LM head as a distribution
//! of x_{t+2}. The embedding and the head are the target's, frozen; the draft owns only a linear
//! map [2d] → [d] and one pre-LayerNorm block of the target's shape. It has no position input:
//! the features carry the target's positions.
//!
//! Training ([`loss`]) is the paper's in form: a smooth-L1 regression of f_{t+1} plus the
//! cross-entropy of the head's distribution against the target's own p at t + 1 — weighed 1 here
//! (the paper: 0.1) and with p sharpened (`TEACHER_TEMPERATURE`), which LikesWorld's greedy
//! verification rewards (EAGLE-2 τ 3.88 → 4.18 at 16 nodes). With
//! `rollout` > 1 it adds the training-time test (HASS; EAGLE-3): step j feeds the draft its own
//! step-(j − 1) guesses where drafting at depth j would have only guesses, under the mask that
//! drafting at that depth sees (true entries up to t − j + 1, then its own guesses).

use super::cache::KvCache;
use super::decoder::{Block, DecoderConfig};
use super::matmul::linear;
use super::Decoder;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::activation::{log_softmax, softmax};
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};

#[derive(Module, Debug)]
pub struct Eagle {
    /// [f_t ; e(x_{t+1})] → [d].
    fc: Linear,
    block: Block,
    n_heads: usize,
}

impl Eagle {
    /// A fresh draft for `target` (its width, heads and MLP width; seeded by the device's seed).
    pub fn init(target: &Decoder, device: &Device) -> Eagle {
        let d = target.d_model();
        let config = DecoderConfig::new(0, d, 1, target.n_heads, target.d_ff());
        Eagle {
            fc: LinearConfig::new(2 * d, d).init(device),
            block: config.block(device),
            n_heads: target.n_heads,
        }
    }

    /// Guessed features [b, n, d] for input features [b, n, d] and the next tokens [b, n], under
    /// `mask` [b, n, cached + n] over the draft's own cache and the new entries (appended to
    /// `cache`, one layer).
    pub fn forward(
        &self,
        target: &Decoder,
        features: Tensor<3>,
        next: Tensor<2, Int>,
        mask: Tensor<3, Bool>,
        cache: &mut KvCache,
    ) -> Tensor<3> {
        let x = linear(&self.fc, Tensor::cat(vec![features, target.embed(next)], 2));
        let blocked = mask.bool_not().unsqueeze_dim::<4>(1);
        self.block.forward(x, blocked, self.n_heads, cache, 0)
    }
}

/// The classification's weight beside the regression's 1 (the paper: 0.1; measured here, EAGLE-2
/// at 16 nodes: τ 3.88 with 0.1, 3.94 with 1 over the same 2000 steps).
const CLASSIFICATION: f32 = 1.0;
/// The temperature the target's distribution is sharpened by before it teaches the draft's
/// classification (EAGLE's paper: 1). Greedy verification accepts the target's argmax only, and
/// where several tokens are nearly as likely (which person is asked about next) the soft p
/// teaches nothing about which one wins.
const TEACHER_TEMPERATURE: f32 = 0.1;
/// Each rollout step's weight is this times the one before.
const STEP_DECAY: f32 = 0.8;

/// EAGLE's training loss over whole sequences `tokens` [b, len] whose frozen target features are
/// `features` [b, len, d] and next-token logits `logits` [b, len, vocab], over `rollout` steps
/// (1: plain EAGLE; more: the training-time test). Padding (`pad`) is left out.
pub fn loss(
    eagle: &Eagle,
    target: &Decoder,
    features: Tensor<3>,
    logits: Tensor<3>,
    tokens: Tensor<2, Int>,
    pad: u32,
    rollout: usize,
) -> Tensor<1> {
    let [b, len, d] = features.dims();
    let n = len - 1; // entries t = 0..len − 2: (f_t, x_{t+1}) → f_{t+1}
    let device = features.device();
    let next = tokens.clone().narrow(1, 1, n);
    let truth = features.clone().narrow(1, 1, n); // f_{t+1}
                                                  // The target's p at t + 1, sharpened (see `TEACHER_TEMPERATURE`).
    let p = softmax(logits.narrow(1, 1, n) / TEACHER_TEMPERATURE, 2);
    let keep = next.clone().not_equal_elem(pad as i64).float(); // [b, n]
    let count = keep.clone().sum().clamp_min(1.0);
    let mut cache = KvCache::new(1);
    let mut input = features.narrow(1, 0, n);
    let mut total = Tensor::<1>::zeros([1], &device);
    for step in 0..rollout {
        let mask = rollout_mask(b, n, step, &device);
        let guess = eagle.forward(target, input, next.clone(), mask, &mut cache); // [b, n, d]
        let regression = smooth_l1(guess.clone() - truth.clone())
            .sum_dim(2)
            .reshape([b, n])
            / d as f32;
        let logq = log_softmax(target.head(guess.clone()), 2);
        let classification = -(p.clone() * logq).sum_dim(2).reshape([b, n]);
        let per = (regression + classification * CLASSIFICATION) * keep.clone();
        // Position t's step-j entry exists only where a guess chain of j steps fits (t ≥ j).
        let fits = Tensor::<1, Int>::arange(0..n as i64, &device)
            .greater_equal_elem(step as i64)
            .float()
            .unsqueeze::<2>();
        let per = per * fits;
        total = total + STEP_DECAY.powi(step as i32) * per.sum() / count.clone();
        // The next step's input at t is this step's guess of f_t (made at t − 1); position 0
        // has none (zeros: no row the loss counts reads it).
        let none = Tensor::<3>::zeros([b, 1, d], &device);
        input = Tensor::cat(vec![none, guess.narrow(1, 0, n - 1)], 1);
    }
    total
}

/// Which keys rollout step `step` (0-based) may see, over the cache of the earlier steps'
/// entries (step s's entry for position u is slot s·n + u): at depth step + 1, position t's
/// guess chain began at t − step, so it sees the true entries up to t − step and then the
/// chain's own entries, one per step: step s's entry at t − step + s.
fn rollout_mask(b: usize, n: usize, step: usize, device: &Device) -> Tensor<3, Bool> {
    let width = (step + 1) * n;
    let mut m = vec![false; n * width];
    for t in 0..n {
        let row = &mut m[t * width..(t + 1) * width];
        // The chain began at t − step: the true entries up to there, then one entry per step.
        let start = t as i64 - step as i64;
        for u in 0..=start {
            row[u as usize] = true;
        }
        for s in 1..=step {
            let u = start + s as i64;
            if u >= 0 {
                row[s * n + u as usize] = true;
            }
        }
    }
    Tensor::<3, Bool>::from_data(TensorData::new(m, [1, n, width]), device).expand([b, n, width])
}

/// Smooth L1 (β = 1), elementwise.
fn smooth_l1(x: Tensor<3>) -> Tensor<3> {
    let a = x.clone().abs();
    let small = a.clone().lower_elem(1.0);
    let quadratic = x.clone() * x * 0.5;
    let linear = a - 0.5;
    linear.mask_where(small, quadratic)
}

#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::model::gradcheck::{directional, tiny};

    #[test]
    fn the_loss_gradient_matches_finite_differences_with_and_without_rollout() {
        let ad = Device::flex().autodiff();
        let (target, tokens) = tiny(&ad, 5);
        let target = target.no_grad();
        let (features, logits) = target.features_causal(tokens.clone());
        let (features, logits) = (features.detach(), logits.detach());
        let draft = Eagle::init(&target, &ad);
        for rollout in [1, 3] {
            let (g, fd, missing) = directional(
                &draft,
                |m| {
                    loss(
                        m,
                        &target,
                        features.clone(),
                        logits.clone(),
                        tokens.clone(),
                        0,
                        rollout,
                    )
                },
                1e-2,
            );
            assert_eq!(
                missing, 0,
                "rollout {rollout}: every parameter has a gradient"
            );
            assert!(g.abs() > 1e-3, "rollout {rollout}: {g}");
            assert!(
                (g - fd).abs() <= 0.02 * g.abs() + 1e-4,
                "rollout {rollout}: autodiff {g} vs finite differences {fd}"
            );
        }
    }

    #[test]
    fn the_rollout_mask_sees_what_drafting_at_that_depth_sees() {
        let device = Device::flex();
        let m: Vec<bool> = rollout_mask(1, 4, 2, &device)
            .into_data()
            .try_to_vec::<bool>()
            .unwrap();
        let row = |t: usize| -> Vec<usize> { (0..12).filter(|&k| m[t * 12 + k]).collect() };
        // Depth 3 at t = 3: true entries 0..=1, step 1's entry at 2, its own at 3.
        assert_eq!(row(3), vec![0, 1, 4 + 2, 8 + 3]);
        // t = 1: the chain began before position 0: only the chain's own entries.
        assert_eq!(row(1), vec![4, 8 + 1]);
    }
}

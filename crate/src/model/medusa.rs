//! Medusa heads (lecture §5.1; Cai et al. 2024, Medusa-1): K small heads on the frozen target's
//! last hidden state, head i guessing the token i + 1 steps past the one the target's own LM head
//! predicts. Each head is one residual block, h + SiLU(W₁h + b₁), then a linear map to the
//! vocabulary (initialised from the target's LM head, as the paper does).
//!
//! Features are the target's LM-head input ([`Decoder::forward_features`]): after position t the
//! target's head predicts token t + 1 and head i (0-based) token t + 2 + i.

use super::matmul::linear;
use super::Decoder;
use burn::module::{Module, Param};
use burn::nn::{Linear, LinearConfig};
use burn::tensor::activation::{log_softmax, silu};
use burn::tensor::{Device, Int, Tensor};

/// At most this many heads (the K ≤ 4; Medusa's paper uses 4 or 5).
pub const MAX_HEADS: usize = 4;

#[derive(Module, Debug)]
pub struct Medusa {
    /// W₁ of each head's residual block, [d] → [d].
    blocks: Vec<Linear>,
    /// Each head's map to the vocabulary, [d] → [vocab].
    heads: Vec<Linear>,
}

/// A fresh copy of a linear layer's values under new parameter ids (so that K copies of the
/// target's head are K parameters to the optimiser, not one).
pub(crate) fn copy_linear(l: &Linear) -> Linear {
    Linear {
        weight: Param::from_tensor(l.weight.val().detach()),
        bias: l
            .bias
            .as_ref()
            .map(|b| Param::from_tensor(b.val().detach())),
    }
}

impl Medusa {
    /// K heads for features of width `d`, each block starting as the identity (W₁ = 0, so
    /// h + SiLU(0) = h) and each head as `target`'s LM head: at step 0 every head guesses what
    /// the target guesses for the next token, which is where training starts from.
    pub fn init(k: usize, target: &Decoder, device: &Device) -> Medusa {
        let d = target.d_model();
        let zero = |l: Linear| Linear {
            weight: Param::from_tensor(l.weight.val().zeros_like()),
            bias: l.bias.map(|b| Param::from_tensor(b.val().zeros_like())),
        };
        Medusa {
            blocks: (0..k)
                .map(|_| zero(LinearConfig::new(d, d).init(device)))
                .collect(),
            heads: (0..k).map(|_| copy_linear(&target.head)).collect(),
        }
    }

    /// The shape of `k` heads on `target`, for loading saved weights into.
    pub fn empty(k: usize, target: &Decoder, device: &Device) -> Medusa {
        let (d, vocab) = (target.d_model(), target.head.weight.dims()[1]);
        Medusa {
            blocks: (0..k)
                .map(|_| LinearConfig::new(d, d).init(device))
                .collect(),
            heads: (0..k)
                .map(|_| LinearConfig::new(d, vocab).init(device))
                .collect(),
        }
    }

    pub fn k(&self) -> usize {
        self.heads.len()
    }

    /// The heads' logits, one tensor [.., vocab] per head, for features [.., d].
    pub fn forward(&self, features: Tensor<3>) -> Vec<Tensor<3>> {
        self.blocks
            .iter()
            .zip(&self.heads)
            .map(|(w1, head)| {
                let h = features.clone() + silu(linear(w1, features.clone()));
                linear(head, h)
            })
            .collect()
    }

    /// The first `k` heads only (a run with fewer heads than were trained).
    pub fn first(&self, k: usize) -> Medusa {
        Medusa {
            blocks: self.blocks[..k].to_vec(),
            heads: self.heads[..k].to_vec(),
        }
    }
}

/// Medusa-1's loss: head i's cross-entropy against the token 2 + i positions on, over the
/// positions where that token is not padding, summed over heads with weights 0.8^i (the paper's
/// λ_k). `features` [b, len, d] are the frozen target's, `tokens` [b, len] the sequences.
pub fn loss(medusa: &Medusa, features: Tensor<3>, tokens: Tensor<2, Int>, pad: u32) -> Tensor<1> {
    let [b, len, _] = features.dims();
    let device = features.device();
    let mut total = Tensor::<1>::zeros([1], &device);
    for (i, logits) in medusa.forward(features).into_iter().enumerate() {
        let ahead = i + 2;
        if len <= ahead {
            break;
        }
        let n = len - ahead;
        let logp = log_softmax(logits.narrow(1, 0, n), 2); // [b, n, vocab]
        let target = tokens.clone().narrow(1, ahead, n); // [b, n]
        total = total + 0.8f32.powi(i as i32) * token_nll(logp, target, pad, [b, n]);
    }
    total
}

/// Mean −log p(target) over the non-padding targets.
pub(crate) fn token_nll(
    logp: Tensor<3>,
    target: Tensor<2, Int>,
    pad: u32,
    [b, n]: [usize; 2],
) -> Tensor<1> {
    let keep = target.clone().not_equal_elem(pad as i64).float(); // [b, n]
    let picked = logp.gather(2, target.reshape([b, n, 1])).reshape([b, n]); // [b, n]
    let count = keep.clone().sum().clamp_min(1.0);
    -(picked * keep).sum() / count
}

#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::model::gradcheck::{directional, tiny};

    #[test]
    fn the_loss_gradient_matches_finite_differences() {
        let ad = Device::flex().autodiff();
        let (target, tokens) = tiny(&ad, 3);
        let (features, _) = target.features_causal(tokens.clone());
        let features = features.detach();
        let mut heads = Medusa::init(3, &target, &ad);
        // Away from W₁ = 0, where SiLU's curvature would be invisible.
        heads = heads.map(&mut crate::model::gradcheck::Jitter(0.3));
        let (g, fd, missing) = directional(
            &heads,
            |m| loss(m, features.clone(), tokens.clone(), 0),
            1e-2,
        );
        assert_eq!(missing, 0, "every parameter has a gradient");
        assert!(g.abs() > 1e-3, "a direction the loss moves along: {g}");
        assert!(
            (g - fd).abs() <= 0.02 * g.abs() + 1e-4,
            "autodiff {g} vs finite differences {fd}"
        );
    }

    #[test]
    fn heads_start_as_the_targets_head() {
        let device = Device::flex();
        let (target, tokens) = tiny(&device, 3);
        let (features, logits) = target.features_causal(tokens);
        let heads = Medusa::init(2, &target, &device);
        for out in heads.forward(features) {
            let diff: f32 = (out - logits.clone()).abs().max().into_scalar();
            assert!(diff < 1e-5, "{diff}");
        }
    }
}

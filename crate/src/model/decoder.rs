//! A pre-LayerNorm decoder-only Transformer with learned token and position embeddings, GELU
//! MLPs and an untied output head — the shape of the reference decoders in `shared/peers`.
//!
//! Two departures from a textbook decoder make tree attention possible (lecture §4.3): the
//! position ids are an *input* (a tree gives every node its depth), and attention takes an
//! explicit boolean mask (`true` = may attend) over the cached prefix and the new tokens, so the
//! same forward serves a causal chain and a topology-aware tree mask.

use super::cache::KvCache;
use crate::error::Error;
use burn::backend::{BackendTensor, DispatchAutodiffContext, DispatchTensor, DispatchTensorKind};
use burn::config::Config;
use burn::module::Module;
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::activation::{self, softmax};
use burn::tensor::{Bool, Device, Int, Tensor};

/// The three models of the lecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelKind {
    /// d 64, 2 layers, 4 heads, d_ff 160: ≈ 85k parameters, 100% answer accuracy.
    Target,
    /// d 32, 1 layer: ≈ 13k parameters.
    DraftA,
    /// d 32, 2 layers: ≈ 22k parameters.
    DraftB,
}

impl ModelKind {
    pub const ALL: [ModelKind; 3] = [ModelKind::Target, ModelKind::DraftA, ModelKind::DraftB];

    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Target => "target",
            ModelKind::DraftA => "draft-a",
            ModelKind::DraftB => "draft-b",
        }
    }

    pub fn parse(name: &str) -> Result<ModelKind, Error> {
        ModelKind::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| Error::Unknown {
                what: "model",
                name: name.to_string(),
                known: "target, draft-a, draft-b".into(),
            })
    }

    pub fn config(self) -> DecoderConfig {
        let vocab = crate::likesworld::VOCAB;
        match self {
            ModelKind::Target => DecoderConfig::new(vocab, 64, 2, 4, 160),
            ModelKind::DraftA => DecoderConfig::new(vocab, 32, 1, 4, 64),
            ModelKind::DraftB => DecoderConfig::new(vocab, 32, 2, 4, 64),
        }
    }
}

#[derive(Config, Debug)]
pub struct DecoderConfig {
    pub vocab: usize,
    pub d_model: usize,
    pub n_layers: usize,
    pub n_heads: usize,
    pub d_ff: usize,
    /// Positions 0..max_positions (LikesWorld sequences are at most 50 tokens).
    #[config(default = 64)]
    pub max_positions: usize,
}

impl DecoderConfig {
    pub fn init(&self, device: &Device) -> Decoder {
        assert_eq!(
            self.d_model % self.n_heads,
            0,
            "d_model must be a multiple of n_heads"
        );
        Decoder {
            token: EmbeddingConfig::new(self.vocab, self.d_model).init(device),
            position: EmbeddingConfig::new(self.max_positions, self.d_model).init(device),
            blocks: (0..self.n_layers).map(|_| self.block(device)).collect(),
            norm: LayerNormConfig::new(self.d_model).init(device),
            head: LinearConfig::new(self.d_model, self.vocab).init(device),
            n_heads: self.n_heads,
        }
    }

    fn block(&self, device: &Device) -> Block {
        Block {
            norm_attn: LayerNormConfig::new(self.d_model).init(device),
            qkv: LinearConfig::new(self.d_model, 3 * self.d_model).init(device),
            out: LinearConfig::new(self.d_model, self.d_model).init(device),
            norm_mlp: LayerNormConfig::new(self.d_model).init(device),
            up: LinearConfig::new(self.d_model, self.d_ff).init(device),
            down: LinearConfig::new(self.d_ff, self.d_model).init(device),
        }
    }
}

#[derive(Module, Debug)]
pub struct Decoder {
    token: Embedding,
    position: Embedding,
    blocks: Vec<Block>,
    norm: LayerNorm,
    head: Linear,
    n_heads: usize,
}

#[derive(Module, Debug)]
pub struct Block {
    norm_attn: LayerNorm,
    /// Queries, keys and values in one matmul: [d] → [3d].
    qkv: Linear,
    out: Linear,
    norm_mlp: LayerNorm,
    up: Linear,
    down: Linear,
}

/// A large negative score instead of −∞, so a fully masked row stays finite.
const MASKED: f32 = -1.0e9;

impl Decoder {
    pub fn n_layers(&self) -> usize {
        self.blocks.len()
    }

    /// Logits for `tokens` at `positions`, attending under `mask` to the cached prefix and to
    /// the new tokens; the new keys and values are appended to `cache`.
    ///
    /// # Shapes
    /// - tokens, positions: [batch, new]
    /// - mask: [batch, new, cached + new], `true` = may attend
    /// - returns logits [batch, new, vocab]
    pub fn forward(
        &self,
        tokens: Tensor<2, Int>,
        positions: Tensor<2, Int>,
        mask: Tensor<3, Bool>,
        cache: &mut KvCache,
    ) -> Tensor<3> {
        let blocked = mask.bool_not().unsqueeze_dim::<4>(1); // [batch, 1, new, cached + new]
        let mut x = self.token.forward(tokens) + self.position.forward(positions); // [batch, new, d]
        for (layer, block) in self.blocks.iter().enumerate() {
            x = block.forward(x, blocked.clone(), self.n_heads, cache, layer);
        }
        self.head.forward(self.norm.forward(x))
    }

    /// A plain causal forward over whole sequences, no cache (training and scoring).
    ///
    /// # Shapes
    /// - tokens: [batch, len] → logits [batch, len, vocab]
    pub fn forward_causal(&self, tokens: Tensor<2, Int>) -> Tensor<3> {
        let [batch, len] = tokens.dims();
        let device = tokens.device();
        let positions = Tensor::<1, Int>::arange(0..len as i64, &device)
            .unsqueeze::<2>()
            .expand([batch, len]);
        let mask = Tensor::<2, Bool>::tril_mask([len, len], 0, &device)
            .bool_not()
            .unsqueeze::<3>()
            .expand([batch, len, len]);
        self.forward(tokens, positions, mask, &mut KvCache::new(self.n_layers()))
    }
}

impl Block {
    fn forward(
        &self,
        x: Tensor<3>,
        blocked: Tensor<4, Bool>,
        n_heads: usize,
        cache: &mut KvCache,
        layer: usize,
    ) -> Tensor<3> {
        let [batch, new, d] = x.dims();
        let dk = d / n_heads;
        let qkv = self.qkv.forward(self.norm_attn.forward(x.clone())); // [batch, new, 3d]
        let heads = |t: Tensor<3>| t.reshape([batch, new, n_heads, dk]).swap_dims(1, 2); // [batch, h, new, dk]
        let q = heads(qkv.clone().narrow(2, 0, d));
        let k = heads(qkv.clone().narrow(2, d, d));
        let v = heads(qkv.narrow(2, 2 * d, d));
        let (k, v) = cache.append(layer, k, v); // [batch, h, cached + new, dk]
        let scores = q.matmul(k.swap_dims(2, 3)).div_scalar((dk as f32).sqrt()); // [batch, h, new, cached + new]
        let weights = softmax(scores.mask_fill(blocked, MASKED), 3);
        let context = weights.matmul(v).swap_dims(1, 2).reshape([batch, new, d]);
        let x = x + self.out.forward(context);
        let h = self
            .down
            .forward(gelu(self.up.forward(self.norm_mlp.forward(x.clone()))));
        x + h
    }
}

/// GELU, 0.5·x·(1 + erf(x/√2)). On flex (outside training) with [`erf`], which the compiler
/// vectorises: flex itself calls libm's scalar `erff` per element, a quarter of a batched
/// forward's time. Elsewhere, and for autodiff, burn's own.
pub fn gelu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    match x.into_dispatch() {
        DispatchTensor {
            kind: DispatchTensorKind::Flex(BackendTensor::Float(t)),
            autodiff: DispatchAutodiffContext::Disabled,
        } => {
            let out = burn_flex::ops::unary::unary_op(t, gelu_f32, gelu_f64);
            Tensor::from_dispatch(DispatchTensor {
                kind: DispatchTensorKind::Flex(BackendTensor::Float(out)),
                autodiff: DispatchAutodiffContext::Disabled,
            })
        }
        other => activation::gelu(Tensor::from_dispatch(other)),
    }
}

#[inline(always)]
fn gelu_f32(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

fn gelu_f64(x: f64) -> f64 {
    f64::from(gelu_f32(x as f32))
}

/// erf for f32 without a branch or a call: an odd rational function of x on [−4, 4] (erf is ±1
/// in f32 beyond), the fit Eigen and XLA use for f32, within a few 1e-7 of the true erf.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    const ALPHA: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906e-4,
        -2.954_6e-3,
        -1.609_603_3e-2,
    ];
    const BETA: [f32; 5] = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329e-3,
        -1.426_474e-2,
    ];
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = ALPHA[1..].iter().fold(ALPHA[0], |p, &a| p * x2 + a) * x;
    let q = BETA[1..].iter().fold(BETA[0], |q, &b| q * x2 + b);
    p / q
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    fn values(t: Tensor<1>) -> Vec<f32> {
        burn::tensor::read_sync(crate::model::floats(t)).unwrap()
    }

    /// The vectorisable GELU on flex against flex's own erf (libm's `erff`) and against ndarray's
    /// GELU, over and beyond the range the models see.
    #[test]
    fn gelu_on_flex_equals_the_exact_one() {
        let xs: Vec<f32> = (-24_000..=24_000).map(|i| i as f32 / 2000.0).collect();
        let n = xs.len();
        let on = |d: &Device| Tensor::<1>::from_data(TensorData::new(xs.clone(), [n]), d);
        let flex = Device::flex();
        let fast = values(gelu(on(&flex)));
        let x = on(&flex);
        let exact = values(
            x.clone()
                .mul(
                    x.mul_scalar(std::f32::consts::FRAC_1_SQRT_2)
                        .erf()
                        .add_scalar(1.0),
                )
                .mul_scalar(0.5),
        );
        #[cfg(feature = "ndarray")]
        let ndarray = {
            #[allow(deprecated)] // burn deprecates ndarray for flex; the page still offers it
            let d = Device::ndarray();
            values(gelu(on(&d)))
        };
        for i in 0..n {
            let tol = 4e-7 * xs[i].abs().max(1.0);
            assert!(
                (fast[i] - exact[i]).abs() <= tol,
                "gelu({}) = {} ≠ {}",
                xs[i],
                fast[i],
                exact[i]
            );
            #[cfg(feature = "ndarray")]
            assert!(
                (fast[i] - ndarray[i]).abs() <= tol,
                "gelu({}): ndarray {}",
                xs[i],
                ndarray[i]
            );
        }
        // erf itself, at its extremes: ±1 to within an f32 step, odd, 0 at 0.
        assert!((erf(100.0) - 1.0).abs() <= 2e-7 && erf(-100.0) == -erf(100.0));
        assert_eq!(erf(0.0), 0.0);
    }
}

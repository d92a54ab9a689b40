//! A pre-LayerNorm decoder-only Transformer with learned token and position embeddings, GELU
//! MLPs and an untied output head — the shape of the reference decoders in `shared/peers`.
//!
//! Two departures from a textbook decoder make tree attention possible (lecture §4.3): the
//! position ids are an *input* (a tree gives every node its depth), and attention takes an
//! explicit boolean mask (`true` = may attend) over the cached prefix and the new tokens, so the
//! same forward serves a causal chain and a topology-aware tree mask.

use super::activation::{gelu, softmax_last};
use super::cache::KvCache;
use super::matmul::{linear, packed_linear, PackedLinear};
use crate::error::Error;
use burn::config::Config;
use burn::module::Module;
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::{Bool, Device, Int, Tensor};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

crate::error::choices! {
    /// The three models of the lecture.
    #[derive(Hash)]
    pub enum ModelKind("model") {
        /// d 64, 2 layers, 4 heads, d_ff 160: ≈ 85k parameters, 100% answer accuracy.
        Target = "target",
        /// d 32, 1 layer: ≈ 13k parameters.
        DraftA = "draft-a",
        /// d 32, 2 layers: ≈ 22k parameters.
        DraftB = "draft-b",
    }
}

impl ModelKind {
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
            host: None,
        }
    }

    pub(super) fn block(&self, device: &Device) -> Block {
        Block {
            norm_attn: LayerNormConfig::new(self.d_model).init(device),
            qkv: LinearConfig::new(self.d_model, 3 * self.d_model).init(device),
            out: LinearConfig::new(self.d_model, self.d_model).init(device),
            norm_mlp: LayerNormConfig::new(self.d_model).init(device),
            up: LinearConfig::new(self.d_model, self.d_ff).init(device),
            down: LinearConfig::new(self.d_ff, self.d_model).init(device),
            packed: None,
        }
    }
}

#[derive(Module, Debug)]
pub struct Decoder {
    pub(super) token: Embedding,
    pub(super) position: Embedding,
    pub(super) blocks: Vec<Block>,
    pub(super) norm: LayerNorm,
    pub(super) head: Linear,
    pub(super) n_heads: usize,
    /// With the weights offloaded (`model::offload`): their host copies, which cross into the
    /// parameters' buffers before every forward.
    #[module(skip)]
    pub(super) host: Option<Arc<dyn HostWeights>>,
}

/// A model's weights kept in host memory, crossing to the device before every forward (lecture
/// §4.6: offloading). `model::offload` holds them; the decoder only calls [`HostWeights::cross`].
pub trait HostWeights: std::fmt::Debug + Send + Sync {
    /// Writes every weight from host memory into its device buffer. Enqueued: the writes land
    /// before the kernels submitted after them, which read what crossed.
    fn cross(&self);
    /// The bytes one crossing writes.
    fn bytes(&self) -> usize;
    /// Crossings so far.
    fn crossings(&self) -> usize;
    /// Waits until the device has done everything queued on it, the crossings included.
    fn drain(&self) -> Pin<Box<dyn Future<Output = Result<(), Error>> + '_>>;
}

#[derive(Module, Debug)]
pub struct Block {
    pub(super) norm_attn: LayerNorm,
    /// Queries, keys and values in one matmul: [d] → [3d].
    pub(super) qkv: Linear,
    pub(super) out: Linear,
    pub(super) norm_mlp: LayerNorm,
    pub(super) up: Linear,
    pub(super) down: Linear,
    /// The four layers' weights packed for the few-row kernel, where [`Block::packed`] made them
    /// (a widened target's, on flex): qkv, out, up, down.
    #[module(skip)]
    pub(super) packed: Option<Arc<[Option<PackedLinear>; 4]>>,
}

/// A large negative score instead of −∞, so a fully masked row stays finite.
pub(super) const MASKED: f32 = -1.0e9;

impl Decoder {
    /// The host copies of this model's weights, when they are offloaded (`model::offload`).
    pub fn host_weights(&self) -> Option<&dyn HostWeights> {
        self.host.as_deref()
    }

    /// This model with `host` as its weights' host copies, crossing before every forward.
    #[cfg(feature = "wgpu")]
    pub(super) fn with_host_weights(&self, host: Arc<dyn HostWeights>) -> Decoder {
        let mut out = self.clone();
        out.host = Some(host);
        out
    }

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
        self.run(tokens, positions, mask, cache, false).1
    }

    /// [`Decoder::forward`], with the features the logits are read from: the final LayerNorm's
    /// output, the LM head's input (the "hidden state" that Medusa's heads and EAGLE's draft read,
    /// lecture §5.1–5.2).
    ///
    /// # Shapes
    /// - as [`Decoder::forward`]; returns (features [batch, new, d], logits [batch, new, vocab])
    pub fn forward_features(
        &self,
        tokens: Tensor<2, Int>,
        positions: Tensor<2, Int>,
        mask: Tensor<3, Bool>,
        cache: &mut KvCache,
    ) -> (Tensor<3>, Tensor<3>) {
        let (features, logits) = self.run(tokens, positions, mask, cache, true);
        (features.expect("asked for"), logits)
    }

    fn run(
        &self,
        tokens: Tensor<2, Int>,
        positions: Tensor<2, Int>,
        mask: Tensor<3, Bool>,
        cache: &mut KvCache,
        features: bool,
    ) -> (Option<Tensor<3>>, Tensor<3>) {
        if let Some(host) = &self.host {
            host.cross();
        }
        #[cfg(feature = "wgpu")]
        if let Some(out) = self.forward_gpu(&tokens, &positions, &mask, cache, features) {
            return out;
        }
        let blocked = mask.bool_not().unsqueeze_dim::<4>(1); // [batch, 1, new, cached + new]
        let mut x = self.token.forward(tokens) + self.position.forward(positions); // [batch, new, d]
        for (layer, block) in self.blocks.iter().enumerate() {
            x = block.forward(x, blocked.clone(), self.n_heads, cache, layer);
        }
        let f = self.norm.forward(x);
        let logits = linear(&self.head, f.clone());
        (features.then_some(f), logits)
    }

    /// The LM head alone on features (the frozen head a draft's predicted features go through).
    pub fn head(&self, features: Tensor<3>) -> Tensor<3> {
        linear(&self.head, features)
    }

    /// The token embedding alone (frozen, for EAGLE's draft).
    pub fn embed(&self, tokens: Tensor<2, Int>) -> Tensor<3> {
        self.token.forward(tokens)
    }

    pub fn d_model(&self) -> usize {
        self.token.weight.dims()[1]
    }

    pub fn d_ff(&self) -> usize {
        self.blocks[0].up.weight.dims()[1]
    }

    /// Features and logits of whole sequences, causally, no cache (training the drafts).
    pub fn features_causal(&self, tokens: Tensor<2, Int>) -> (Tensor<3>, Tensor<3>) {
        let (positions, mask) = causal(&tokens);
        self.forward_features(tokens, positions, mask, &mut KvCache::new(self.n_layers()))
    }

    /// A plain causal forward over whole sequences, no cache (training and scoring).
    ///
    /// # Shapes
    /// - tokens: [batch, len] → logits [batch, len, vocab]
    pub fn forward_causal(&self, tokens: Tensor<2, Int>) -> Tensor<3> {
        let (positions, mask) = causal(&tokens);
        self.forward(tokens, positions, mask, &mut KvCache::new(self.n_layers()))
    }
}

/// Positions 0..len and the causal mask for whole sequences [batch, len].
pub(crate) fn causal(tokens: &Tensor<2, Int>) -> (Tensor<2, Int>, Tensor<3, Bool>) {
    let [batch, len] = tokens.dims();
    let device = tokens.device();
    let positions = Tensor::<1, Int>::arange(0..len as i64, &device)
        .unsqueeze::<2>()
        .expand([batch, len]);
    let mask = Tensor::<2, Bool>::tril_mask([len, len], 0, &device)
        .bool_not()
        .unsqueeze::<3>()
        .expand([batch, len, len]);
    (positions, mask)
}

impl Block {
    /// This block with its large layers' weights packed ([`super::matmul::pack`]): a second
    /// copy of them, which the forward reads instead on flex.
    pub(super) fn packed(self) -> Block {
        let layers = [&self.qkv, &self.out, &self.up, &self.down].map(super::matmul::pack);
        Block {
            packed: layers.iter().any(Option::is_some).then(|| Arc::new(layers)),
            ..self
        }
    }

    /// `l.forward(x)`, over `l`'s packed weights where there are some (`which`: its place in
    /// [`Block::packed`]).
    fn linear<const D: usize>(&self, which: usize, l: &Linear, x: Tensor<D>) -> Tensor<D> {
        match &self.packed {
            Some(p) => packed_linear(l, p[which].as_ref(), x),
            None => linear(l, x),
        }
    }

    pub(super) fn forward(
        &self,
        x: Tensor<3>,
        blocked: Tensor<4, Bool>,
        n_heads: usize,
        cache: &mut KvCache,
        layer: usize,
    ) -> Tensor<3> {
        let [batch, new, d] = x.dims();
        let dk = d / n_heads;
        let qkv = self.linear(0, &self.qkv, self.norm_attn.forward(x.clone())); // [batch, new, 3d]
        let heads = |t: Tensor<3>| t.reshape([batch, new, n_heads, dk]).swap_dims(1, 2); // [batch, h, new, dk]
        let q = heads(qkv.clone().narrow(2, 0, d));
        let k = heads(qkv.clone().narrow(2, d, d));
        let v = heads(qkv.narrow(2, 2 * d, d));
        let (k, v) = cache.append(layer, k, v); // [batch, h, cached + new, dk]
        let scores = q.matmul(k.swap_dims(2, 3)); // [batch, h, new, cached + new]
        let weights = softmax_last(scores.mask_fill(blocked, MASKED), 1.0 / (dk as f32).sqrt());
        let context = weights.matmul(v).swap_dims(1, 2).reshape([batch, new, d]);
        let x = x + self.linear(1, &self.out, context);
        let up = self.linear(2, &self.up, self.norm_mlp.forward(x.clone()));
        let h = self.linear(3, &self.down, gelu(up));
        x + h
    }
}

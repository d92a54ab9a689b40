//! A burn decoder as a [`LanguageModel`] for the decoding engine: it owns a KV cache and knows
//! which tokens are in it.
//!
//! Each call feeds only what the cache lacks: the part of the context after the longest cached
//! prefix (at least the context's last token, whose next-token distribution is wanted), then the
//! speculated tree under the topology-aware mask with depth positions (lecture §4.3). Rolling
//! back after a rejection is keeping that prefix ([`KvCache::truncate`]); after a tree call the
//! cache holds the tree, and the next call keeps the prefix plus the root-to-node path its
//! context followed ([`KvCache::keep`]), wherever the tree put those nodes.

use super::{floats, Decoder, KvCache};
use crate::decode::{LanguageModel, Speculation};
use crate::error::Error;
use crate::sampling::Dist;
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};

/// Positions the decoders were trained with (`DecoderConfig::max_positions`).
pub const MAX_POSITIONS: usize = 64;

/// A decoder, its device and its KV cache.
pub struct Cached<'a> {
    model: &'a Decoder,
    device: &'a Device,
    cache: KvCache,
    /// The tokens whose keys and values are in the cache (a linear prefix)…
    cached: Vec<u32>,
    /// …followed by this tree, after a tree call.
    tree: Speculation,
    temperature: f64,
}

impl<'a> Cached<'a> {
    /// `temperature` scales the logits before the softmax (1: the model's own distribution).
    pub fn new(model: &'a Decoder, device: &'a Device, temperature: f64) -> Cached<'a> {
        Cached {
            cache: KvCache::new(model.n_layers()),
            model,
            device,
            cached: Vec::new(),
            tree: Speculation::default(),
            temperature,
        }
    }

    /// Tokens in the cache (tests: the rollback keeps exactly the accepted prefix).
    pub fn cached_len(&self) -> usize {
        self.cache.len()
    }

    /// Keeps the cached prefix of `context` (at most all but its last token), following an
    /// earlier tree along the path `context` took through it.
    fn reconcile(&mut self, context: &[u32]) {
        if !self.tree.is_empty() {
            let base = self.cached.len();
            let mut path = Vec::new();
            let mut parent = None;
            for &t in context.iter().skip(base) {
                let tree = &self.tree;
                match (0..tree.len()).find(|&i| tree.parents[i] == parent && tree.tokens[i] == t) {
                    Some(i) => {
                        path.push(i);
                        parent = Some(i);
                    }
                    None => break,
                }
            }
            let keep: Vec<usize> = (0..base).chain(path.iter().map(|&i| base + i)).collect();
            self.cache.keep(&keep);
            self.cached
                .extend(path.iter().map(|&i| self.tree.tokens[i]));
            self.tree = Speculation::default();
        }
        let common = self
            .cached
            .iter()
            .zip(context)
            .take_while(|(a, b)| a == b)
            .count()
            .min(context.len().saturating_sub(1));
        if common < self.cached.len() {
            self.cache.truncate(common);
            self.cached.truncate(common);
        }
    }
}

fn ints(values: Vec<i64>, n: usize, device: &Device) -> Tensor<2, Int> {
    Tensor::from_data(TensorData::new(values, [1, n]), device)
}

impl LanguageModel for Cached<'_> {
    fn vocab(&self) -> usize {
        crate::likesworld::VOCAB
    }

    async fn score(&mut self, context: &[u32], tree: &Speculation) -> Result<Vec<Dist>, Error> {
        let l = context.len();
        let depths = tree.depths();
        let deepest = l + depths.iter().copied().max().unwrap_or(0);
        if l == 0 || deepest > MAX_POSITIONS {
            return Err(Error::OutOfRange {
                name: "context + speculation length",
                value: deepest as f64,
                allowed: "1 to 64 tokens (the models' positions)",
            });
        }
        self.reconcile(context);
        let common = self.cached.len();
        let (fresh, nodes) = (l - common, tree.len());
        let n = fresh + nodes;
        let mut ids: Vec<i64> = context[common..].iter().map(|&t| i64::from(t)).collect();
        ids.extend(tree.tokens.iter().map(|&t| i64::from(t)));
        let mut pos: Vec<i64> = (common as i64..l as i64).collect();
        pos.extend(depths.iter().map(|&d| (l - 1 + d) as i64));
        // Context rows are causal; a node sees the cache, the whole context and its ancestors.
        let width = common + n;
        let mut mask = Vec::with_capacity(n * width);
        for r in 0..fresh {
            mask.extend((0..width).map(|c| c <= common + r));
        }
        for i in 0..nodes {
            mask.extend((0..width).map(|c| c < l || tree.is_ancestor(c - l, i)));
        }
        let logits = self.model.forward(
            ints(ids, n, self.device),
            ints(pos, n, self.device),
            Tensor::<3, Bool>::from_data(TensorData::new(mask, [1, n, width]), self.device),
            &mut self.cache,
        );
        // Only the rows whose next-token distribution is wanted are read back.
        let rows = floats(logits.narrow(1, fresh - 1, nodes + 1)).await?;
        self.cached = context.to_vec();
        self.tree = tree.clone();
        let v = self.vocab();
        Ok(rows
            .chunks(v)
            .map(|r| softmax(r, self.temperature))
            .collect())
    }
}

/// softmax(logits / T) in f64.
pub fn softmax(logits: &[f32], temperature: f64) -> Dist {
    let m = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f64> = logits
        .iter()
        .map(|&x| ((f64::from(x) - f64::from(m)) / temperature).exp())
        .collect();
    let s: f64 = e.iter().sum();
    e.into_iter().map(|x| x / s).collect()
}

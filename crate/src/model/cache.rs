//! The KV cache: per layer, the keys and values of every token already processed.
//!
//! Speculative decoding needs three operations beyond appending: after a chain verify, keep only
//! the accepted prefix ([`KvCache::truncate`]); after a tree verify, keep the prefix plus the
//! accepted root-to-node path, wherever the depth-first layout put those nodes
//! ([`KvCache::keep`]).

use burn::tensor::{Int, Tensor};

/// # Shapes
/// Each layer holds keys and values [batch, heads, cached, d_head].
#[derive(Debug, Clone)]
pub struct KvCache {
    layers: Vec<Option<(Tensor<4>, Tensor<4>)>>,
}

impl KvCache {
    pub fn new(n_layers: usize) -> KvCache {
        KvCache {
            layers: vec![None; n_layers],
        }
    }

    /// Cached tokens (0 when empty).
    pub fn len(&self) -> usize {
        self.layers
            .first()
            .and_then(|l| l.as_ref())
            .map_or(0, |(k, _)| k.dims()[2])
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends new keys and values to `layer` and returns the whole cached sequence.
    pub(super) fn append(
        &mut self,
        layer: usize,
        k: Tensor<4>,
        v: Tensor<4>,
    ) -> (Tensor<4>, Tensor<4>) {
        let (k, v) = match self.layers[layer].take() {
            Some((ck, cv)) => (Tensor::cat(vec![ck, k], 2), Tensor::cat(vec![cv, v], 2)),
            None => (k, v),
        };
        self.layers[layer] = Some((k.clone(), v.clone()));
        (k, v)
    }

    /// Keeps the first `len` cached tokens (rollback after a rejected draft).
    pub fn truncate(&mut self, len: usize) {
        for layer in self.layers.iter_mut() {
            if let Some((k, v)) = layer.take() {
                let keep = len.min(k.dims()[2]);
                *layer = (keep > 0).then(|| (k.narrow(2, 0, keep), v.narrow(2, 0, keep)));
            }
        }
    }

    /// Keeps the cached tokens at `indices`, in that order (a prefix plus an accepted tree path).
    pub fn keep(&mut self, indices: &[usize]) {
        for layer in self.layers.iter_mut() {
            if let Some((k, v)) = layer.take() {
                if indices.is_empty() {
                    continue;
                }
                let device = k.device();
                let idx: Vec<i64> = indices.iter().map(|&i| i as i64).collect();
                let idx = Tensor::<1, Int>::from_ints(idx.as_slice(), &device);
                *layer = Some((k.select(2, idx.clone()), v.select(2, idx)));
            }
        }
    }
}

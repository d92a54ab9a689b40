//! The KV cache: per layer, the keys and values of every token already processed, for a batch of
//! sequences.
//!
//! The cache is a block of *slots*: appending gives every sequence of the batch the same new
//! slots, and which slots a sequence may attend to is the attention mask's business (the
//! owner's: `lab::lm`). Speculative decoding drops slots (a rejected draft, the tree branches not
//! taken), so the owner compacts now and then: [`KvCache::narrow`] when every sequence keeps a
//! prefix, [`KvCache::gather`] to move each sequence's kept slots to the front, and
//! [`KvCache::select_rows`] / [`KvCache::grow_rows`] when sequences leave or join the batch.

use burn::tensor::{Int, Tensor};

/// # Shapes
/// Each layer holds keys and values [batch, heads, slots, d_head].
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

    fn dims(&self) -> Option<[usize; 4]> {
        self.layers
            .first()
            .and_then(|l| l.as_ref())
            .map(|(k, _)| k.dims())
    }

    /// Slots in the cache (0 when empty).
    pub fn len(&self) -> usize {
        self.dims().map_or(0, |d| d[2])
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sequences in the batch (0 when empty).
    pub fn rows(&self) -> usize {
        self.dims().map_or(0, |d| d[0])
    }

    /// Appends new keys and values to `layer` and returns the whole cached block.
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

    /// Takes `layer`'s keys and values out (the caller [`KvCache::put`]s the grown block back).
    #[cfg(feature = "wgpu")]
    pub(super) fn take(&mut self, layer: usize) -> Option<(Tensor<4>, Tensor<4>)> {
        self.layers[layer].take()
    }

    /// Sets `layer`'s keys and values.
    #[cfg(feature = "wgpu")]
    pub(super) fn put(&mut self, layer: usize, k: Tensor<4>, v: Tensor<4>) {
        self.layers[layer] = Some((k, v));
    }

    fn map(&mut self, f: impl Fn(Tensor<4>) -> Tensor<4>) {
        for layer in self.layers.iter_mut() {
            *layer = layer.take().map(|(k, v)| (f(k), f(v)));
        }
    }

    /// Keeps the first `len` slots (0 empties the cache).
    pub fn narrow(&mut self, len: usize) {
        if len == 0 {
            self.layers.iter_mut().for_each(|l| *l = None);
        } else if len < self.len() {
            self.map(|t| t.narrow(2, 0, len));
        }
    }

    /// Sequence `r` keeps its slots `slots[r]`, in that order, from slot 0 on; shorter lists
    /// leave garbage after their end (the caller masks it).
    pub fn gather(&mut self, slots: &[Vec<usize>]) {
        let Some([rows, heads, len, dk]) = self.dims() else {
            return;
        };
        assert_eq!(rows, slots.len(), "a slot list per sequence");
        let width = slots.iter().map(Vec::len).max().unwrap_or(0);
        if width == 0 {
            return self.narrow(0);
        }
        let device = self.layers[0].as_ref().expect("non-empty").0.device();
        // One sequence: select the slots. Several: flatten (sequence, slot) and select those.
        let mut idx = Vec::with_capacity(rows * width);
        for (r, s) in slots.iter().enumerate() {
            let at = |i: usize| (r * len + s.get(i).copied().unwrap_or(0)) as i64;
            idx.extend((0..width).map(at));
        }
        let idx = Tensor::<1, Int>::from_ints(idx.as_slice(), &device);
        if rows == 1 {
            return self.map(|t| t.select(2, idx.clone()));
        }
        self.map(|t| {
            t.swap_dims(1, 2)
                .reshape([rows * len, heads * dk])
                .select(0, idx.clone())
                .reshape([rows, width, heads, dk])
                .swap_dims(1, 2)
        });
    }

    /// Keeps the sequences `rows`, in that order.
    pub fn select_rows(&mut self, rows: &[usize]) {
        if rows.is_empty() {
            return self.narrow(0);
        }
        let Some(t) = self.layers[0].as_ref().map(|(k, _)| k.clone()) else {
            return;
        };
        let idx: Vec<i64> = rows.iter().map(|&r| r as i64).collect();
        let idx = Tensor::<1, Int>::from_ints(idx.as_slice(), &t.device());
        self.map(|t| t.select(0, idx.clone()));
    }

    /// Adds `n` sequences with zeroed slots at the end of the batch.
    pub fn grow_rows(&mut self, n: usize) {
        if let (Some([_, heads, len, dk]), true) = (self.dims(), n > 0) {
            self.map(|t| {
                let zeros = Tensor::zeros([n, heads, len, dk], &t.device());
                Tensor::cat(vec![t, zeros], 0)
            });
        }
    }
}

//! One decoder block on the GPU: its three attention kernels (the new keys and values appended
//! to the cache, the masked scores, their softmax and the weighted values) and
//! `Block::forward_gpu`, which chains them with the linear layers into seven kernels (nine for
//! d > `UNITS`).
//!
//! The attention kernels are the same for any head dim, so unlike the linear layers they have no
//! narrow and wide variants; they sit with the one forward that launches them. The linear layers
//! come from `super::linear`, buffers and conversions from `super::tensors`.

use super::linear::{norm_then_linear, plus_linear};
use super::tensors::{cube, empty, grid, tensor};
use crate::model::cache::KvCache;
use crate::model::decoder::{Block, MASKED};
use burn_backend::cubecl::dtype_to_storage_type;
use burn_backend::TensorMetadata;
use burn_cubecl::tensor::CubeTensor;
use kernels::*;

/// The attention kernels, in cubecl's Rust dialect (its `Tensor` and `Int` are not burn's).
mod kernels {
    use burn_cubecl::cubecl;
    use cubecl::prelude::*;

    /// The cache with this call's keys and values appended: k, v [batch, heads, cached + new, dk];
    /// slot s < cached from the old cache, the others from the Q/K/V rows [batch·new, 3d].
    #[cube(launch)]
    pub(super) fn append_kernel(
        old_k: &Tensor<f32>,
        old_v: &Tensor<f32>,
        qkv: &Tensor<f32>,
        k: &mut Tensor<f32>,
        v: &mut Tensor<f32>,
        total: u32,
        heads: u32,
        slots: u32,
        dk: u32,
        cached: u32,
        new: u32,
    ) {
        let (heads, slots, dk) = (heads as usize, slots as usize, dk as usize);
        let (cached, new) = (cached as usize, new as usize);
        if ABSOLUTE_POS >= total as usize {
            terminate!();
        }
        let e = ABSOLUTE_POS % dk;
        let s = (ABSOLUTE_POS / dk) % slots;
        let h = (ABSOLUTE_POS / (dk * slots)) % heads;
        let b = ABSOLUTE_POS / (dk * slots * heads);
        if s < cached {
            k[ABSOLUTE_POS] = old_k[b * old_k.stride(0)
                + h * old_k.stride(1)
                + s * old_k.stride(2)
                + e * old_k.stride(3)];
            v[ABSOLUTE_POS] = old_v[b * old_v.stride(0)
                + h * old_v.stride(1)
                + s * old_v.stride(2)
                + e * old_v.stride(3)];
        } else {
            let row = (b * new + s - cached) * qkv.stride(0);
            let d = heads * dk;
            let col = h * dk + e;
            k[ABSOLUTE_POS] = qkv[row + (d + col) * qkv.stride(1)];
            v[ABSOLUTE_POS] = qkv[row + (2 * d + col) * qkv.stride(1)];
        }
    }

    /// scores[r, h, j] = scale · q_{r,h} · k_{b,h,j}, or scale · `masked` where the mask forbids
    /// slot j (the CPU path's `mask_fill` then softmax of the scaled scores).
    #[cube(launch)]
    pub(super) fn scores_kernel<B: Int>(
        qkv: &Tensor<f32>,
        k: &Tensor<f32>,
        mask: &Tensor<B>,
        out: &mut Tensor<f32>,
        rows: u32,
        new: u32,
        scale: f32,
        masked: f32,
        #[define(B)] _dtype: ElemType,
    ) {
        let (heads, slots, dk) = (k.shape(1), k.shape(2), k.shape(3));
        let (rows, new) = (rows as usize, new as usize);
        if ABSOLUTE_POS >= rows * heads * slots {
            terminate!();
        }
        let j = ABSOLUTE_POS % slots;
        let h = (ABSOLUTE_POS / slots) % heads;
        let r = ABSOLUTE_POS / (slots * heads);
        let (b, q) = (r / new, r % new);
        let mut score = masked * scale;
        if u32::cast_from(mask[b * mask.stride(0) + q * mask.stride(1) + j * mask.stride(2)]) != 0 {
            let (qs, ks) = (qkv.stride(1), k.stride(3));
            let query = r * qkv.stride(0) + h * dk * qs;
            let key = b * k.stride(0) + h * k.stride(1) + j * k.stride(2);
            let mut dot = 0.0f32;
            for t in 0..dk {
                dot += qkv[query + t * qs] * k[key + t * ks];
            }
            score = dot * scale;
        }
        out[ABSOLUTE_POS] = score;
    }

    /// context[r, h·dk + e] = Σ_j softmax_j(scores[r, h, ·]) · v[b, h, j, e].
    #[cube(launch)]
    pub(super) fn context_kernel(
        scores: &Tensor<f32>,
        v: &Tensor<f32>,
        out: &mut Tensor<f32>,
        rows: u32,
        new: u32,
    ) {
        let (heads, slots, dk) = (v.shape(1), v.shape(2), v.shape(3));
        let d = heads * dk;
        let (rows, new) = (rows as usize, new as usize);
        if ABSOLUTE_POS >= rows * d {
            terminate!();
        }
        let r = ABSOLUTE_POS / d;
        let h = (ABSOLUTE_POS % d) / dk;
        let e = ABSOLUTE_POS % dk;
        let row = (r * heads + h) * slots; // scores are ours: contiguous
        let (values, vs) = (
            (r / new) * v.stride(0) + h * v.stride(1) + e * v.stride(3),
            v.stride(2),
        );
        let mut top = scores[row];
        for j in 1..slots {
            let s = scores[row + j];
            if s > top {
                top = s;
            }
        }
        let mut sum = 0.0f32;
        let mut acc = 0.0f32;
        for j in 0..slots {
            let w = f32::exp(scores[row + j] - top);
            sum += w;
            acc += w * v[values + j * vs];
        }
        out[ABSOLUTE_POS] = acc / sum;
    }
}

impl Block {
    /// [`Block::forward`] on x [batch·new, d] in seven kernels (nine for d > `UNITS`).
    pub(super) fn forward_gpu(
        &self,
        x: CubeTensor,
        mask: &CubeTensor,
        shape: [usize; 2],
        n_heads: usize,
        cache: &mut KvCache,
        layer: usize,
    ) -> CubeTensor {
        let [batch, new] = shape;
        let d = x.shape()[1];
        let dk = d / n_heads;
        let qkv = norm_then_linear(&x, &self.norm_attn, &self.qkv, false);
        // The cache, old and new.
        let old = cache.take(layer).map(|(k, v)| {
            (
                cube(k).expect("the cache is on the model's device"),
                cube(v).expect("the cache is on the model's device"),
            )
        });
        let cached = old.as_ref().map_or(0, |(k, _)| k.shape()[2]);
        // Without a cache, one-element stand-ins that the kernel never reads (a buffer bound
        // twice in one dispatch would be refused by WebGPU).
        let (old_k, old_v) =
            old.unwrap_or_else(|| (empty(&x, vec![1, 1, 1, 1]), empty(&x, vec![1, 1, 1, 1])));
        let slots = cached + new;
        let kv_shape = vec![batch, n_heads, slots, dk];
        let (k, v) = (empty(&x, kv_shape.clone()), empty(&x, kv_shape));
        let total = batch * n_heads * slots * dk;
        let (count, dim) = grid(&x, total);
        {
            append_kernel::launch(
                &x.client,
                count,
                dim,
                old_k.into_tensor_arg(),
                old_v.into_tensor_arg(),
                qkv.clone().into_tensor_arg(),
                k.clone().into_tensor_arg(),
                v.clone().into_tensor_arg(),
                total as u32,
                n_heads as u32,
                slots as u32,
                dk as u32,
                cached as u32,
                new as u32,
            );
        }
        cache.put(layer, tensor(k.clone()), tensor(v.clone()));
        // Attention: the scores, then their softmax and the weighted values.
        let rows = batch * new;
        let scores = empty(&x, vec![rows, n_heads, slots]);
        let (count, dim) = grid(&x, rows * n_heads * slots);
        scores_kernel::launch(
            &x.client,
            count,
            dim,
            qkv.into_tensor_arg(),
            k.into_tensor_arg(),
            mask.clone().into_tensor_arg(),
            scores.clone().into_tensor_arg(),
            rows as u32,
            new as u32,
            1.0 / (dk as f32).sqrt(),
            MASKED,
            dtype_to_storage_type(mask.dtype),
        );
        let context = empty(&x, vec![rows, d]);
        let (count, dim) = grid(&x, rows * d);
        context_kernel::launch(
            &x.client,
            count,
            dim,
            scores.into_tensor_arg(),
            v.into_tensor_arg(),
            context.clone().into_tensor_arg(),
            rows as u32,
            new as u32,
        );
        let x = plus_linear(&context, &self.out, &x);
        let h = norm_then_linear(&x, &self.norm_mlp, &self.up, true);
        plus_linear(&h, &self.down, &x)
    }
}

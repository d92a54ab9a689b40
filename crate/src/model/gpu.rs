//! The decoder's forward on burn's cubecl backend (WebGPU in the page, wgpu natively) as seven
//! kernels per block instead of ≈ 40 burn ops.
//!
//! The trained models are tiny (d ≤ 64, a call feeds at most a few hundred rows), so on a GPU a
//! forward is all dispatch overhead: each burn op is one or more dispatches, and cubek's matmul
//! falls back to its slowest kernel without cooperative matrices. Here a block is:
//!
//! 1. LayerNorm + the Q/K/V projection (a workgroup per row normalises it once, in shared memory);
//! 2. the new keys and values appended to the cache (one copy kernel writes both);
//! 3. the attention scores under the mask, a unit per (row, head, slot);
//! 4. their softmax and the weighted values, a unit per output element;
//! 5. the output projection + the residual;
//! 6. LayerNorm + the MLP's first layer + GELU;
//! 7. the MLP's second layer + the residual.
//!
//! With the embeddings before and the final LayerNorm + head after, the target's forward is 16
//! dispatches. Apart from the LayerNorm kernels, each unit computes one output element; every
//! kernel reads its inputs through their strides, so views need no copy. The masked score is the
//! same finite `MASKED` as on the CPU path, so a fully masked (padding) row gets the same uniform
//! weights there and here.
//!
//! Wider models (the widened target, `model::widen`: d up to 1536, d_ff up to 3840) feed as few
//! rows but read megabytes of weights a call, so there the linear layers stream their weights:
//! a LayerNorm kernel (a workgroup of 256 units per row) writes the normalised rows, then a unit
//! per output column and chunk of up to 16 rows holds one accumulator per row and reads its
//! column once for all of them (consecutive units, consecutive columns: the reads coalesce),
//! with the bias, GELU and residual fused. A block is then nine dispatches, the forward 21; the
//! attention kernels are the same for any head dim.
//!
//! Only outside autodiff: training runs natively on flex, and burn's ops keep the gradients.

use super::cache::KvCache;
use super::decoder::{Block, Decoder, MASKED};
use burn::backend::{BackendTensor, DispatchAutodiffContext, DispatchTensor, DispatchTensorKind};
use burn::tensor::{Bool, Int, Tensor};
use burn_backend::cubecl::dtype_to_storage_type;
use burn_backend::{DType, TensorMetadata};
use burn_cubecl::cubecl::{self, CubeCount, CubeDim};
use burn_cubecl::ops::numeric::empty_device_contiguous_dtype;
use burn_cubecl::tensor::CubeTensor;
use kernels::*;
use std::cell::Cell;

/// Units per workgroup; models with d ≤ `UNITS` take the seven-kernel block.
const UNITS: u32 = 64;

/// Units per workgroup of the wide path's LayerNorm (WebGPU allows at most 256).
const NORM_UNITS: u32 = 256;

/// The most rows a unit of the wide path's linear kernel carries at once.
const CHUNK: usize = 16;

std::thread_local! {
    /// Forwards this thread ran through these kernels: [d ≤ `UNITS`, wider].
    static FORWARDS: Cell<[usize; 2]> = const { Cell::new([0, 0]) };
}

/// The kernels, in cubecl's Rust dialect (its `Tensor` and `Int` are not burn's).
mod kernels {
    use burn_cubecl::cubecl;
    use cubecl::prelude::*;

    /// x[r, c] = token[ids[b, q], c] + position[pos[b, q], c], with r = b·new + q.
    #[cube(launch)]
    pub(super) fn embed_kernel<I: Int>(
        ids: &Tensor<I>,
        pos: &Tensor<I>,
        token: &Tensor<f32>,
        position: &Tensor<f32>,
        out: &mut Tensor<f32>,
        rows: u32,
        cols: u32,
        new: u32,
        #[define(I)] _dtype: ElemType,
    ) {
        let (rows, cols, new) = (rows as usize, cols as usize, new as usize);
        if ABSOLUTE_POS >= rows * cols {
            terminate!();
        }
        let r = ABSOLUTE_POS / cols;
        let c = ABSOLUTE_POS % cols;
        let (b, q) = (r / new, r % new);
        let id = u32::cast_from(ids[b * ids.stride(0) + q * ids.stride(1)]) as usize;
        let p = u32::cast_from(pos[b * pos.stride(0) + q * pos.stride(1)]) as usize;
        out[ABSOLUTE_POS] = token[id * token.stride(0) + c * token.stride(1)]
            + position[p * position.stride(0) + c * position.stride(1)];
    }

    /// out[r, c] = act(LayerNorm(x[r]) · w[:, c] + bias[c]); act is GELU or the identity.
    ///
    /// One workgroup per row: its `UNITS` units normalise the row together (unit i holds x[r, i];
    /// the mean and the variance are tree sums in shared memory), then each computes every
    /// `UNITS`-th column from the normalised row in shared memory. Needs d ≤ `UNITS`.
    #[cube(launch)]
    pub(super) fn norm_linear_kernel(
        x: &Tensor<f32>,
        gamma: &Tensor<f32>,
        beta: &Tensor<f32>,
        w: &Tensor<f32>,
        bias: &Tensor<f32>,
        out: &mut Tensor<f32>,
        rows: u32,
        cols: u32,
        epsilon: f32,
        #[comptime] gelu: bool,
    ) {
        let (rows, cols) = (rows as usize, cols as usize);
        let r = CUBE_POS;
        // A whole workgroup past the last row (the grid rounds up): no barrier is split.
        if r >= rows {
            terminate!();
        }
        let u = UNIT_POS as usize;
        let d = x.shape(1);
        let n = f32::cast_from(d as u32);
        let mut sums = Shared::new_slice(64usize);
        let mut normed = Shared::new_slice(64usize);
        let mut value = 0.0f32;
        if u < d {
            value = x[r * x.stride(0) + u * x.stride(1)];
        }
        sums[u] = value;
        sync_cube();
        // A tree sum: sums[0] = Σ sums, halving the live units each step.
        #[unroll]
        for level in 1..7usize {
            let half = 64usize >> level;
            if u < half {
                let both = sums[u] + sums[u + half];
                sums[u] = both;
            }
            sync_cube();
        }
        let mean = sums[0] / n;
        sync_cube();
        let centred = value - mean;
        sums[u] = 0.0f32;
        if u < d {
            sums[u] = centred * centred;
        }
        sync_cube();
        #[unroll]
        for level in 1..7usize {
            let step = 64usize >> level;
            if u < step {
                let both = sums[u] + sums[u + step];
                sums[u] = both;
            }
            sync_cube();
        }
        let denom = f32::sqrt(sums[0] / n + epsilon);
        if u < d {
            normed[u] = centred / denom * gamma[u * gamma.stride(0)] + beta[u * beta.stride(0)];
        }
        sync_cube();
        let (ws, cs) = (w.stride(0), w.stride(1));
        let mut c = u;
        while c < cols {
            let mut acc = bias[c * bias.stride(0)];
            for i in 0..d {
                acc += normed[i] * w[i * ws + c * cs];
            }
            if gelu {
                acc = 0.5f32 * acc * (1.0f32 + Erf::erf(acc * core::f32::consts::FRAC_1_SQRT_2));
            }
            out[r * cols + c] = acc;
            c += crate::model::gpu::UNITS as usize;
        }
    }

    /// out[r, c] = res[r, c] + x[r] · w[:, c] + bias[c].
    #[cube(launch)]
    pub(super) fn linear_residual_kernel(
        x: &Tensor<f32>,
        w: &Tensor<f32>,
        bias: &Tensor<f32>,
        res: &Tensor<f32>,
        out: &mut Tensor<f32>,
        rows: u32,
        cols: u32,
    ) {
        let (rows, cols) = (rows as usize, cols as usize);
        if ABSOLUTE_POS >= rows * cols {
            terminate!();
        }
        let r = ABSOLUTE_POS / cols;
        let c = ABSOLUTE_POS % cols;
        let (row, xs) = (r * x.stride(0), x.stride(1));
        let (ws, column) = (w.stride(0), c * w.stride(1));
        let mut acc = bias[c * bias.stride(0)];
        for i in 0..x.shape(1) {
            acc += x[row + i * xs] * w[i * ws + column];
        }
        out[ABSOLUTE_POS] = res[r * res.stride(0) + c * res.stride(1)] + acc;
    }

    /// out[r] = LayerNorm(x[r]) for a row of any width (the wide path: d > `UNITS`).
    ///
    /// One workgroup of `NORM_UNITS` units per row: unit i sums elements i, i + 256, …; the mean
    /// and then the variance of the centred row are tree sums in shared memory.
    #[cube(launch)]
    pub(super) fn layer_norm_kernel(
        x: &Tensor<f32>,
        gamma: &Tensor<f32>,
        beta: &Tensor<f32>,
        out: &mut Tensor<f32>,
        rows: u32,
        epsilon: f32,
    ) {
        let rows = rows as usize;
        let r = CUBE_POS;
        // A whole workgroup past the last row: no barrier is split.
        if r >= rows {
            terminate!();
        }
        let u = UNIT_POS as usize;
        let d = x.shape(1);
        let n = f32::cast_from(d as u32);
        let (row, xs) = (r * x.stride(0), x.stride(1));
        let mut sums = Shared::new_slice(256usize);
        let mut part = 0.0f32;
        let mut i = u;
        while i < d {
            part += x[row + i * xs];
            i += 256usize;
        }
        sums[u] = part;
        sync_cube();
        #[unroll]
        for level in 1..9usize {
            let half = 256usize >> level;
            if u < half {
                let both = sums[u] + sums[u + half];
                sums[u] = both;
            }
            sync_cube();
        }
        let mean = sums[0] / n;
        sync_cube();
        let mut square = 0.0f32;
        let mut i = u;
        while i < d {
            let centred = x[row + i * xs] - mean;
            square += centred * centred;
            i += 256usize;
        }
        sums[u] = square;
        sync_cube();
        #[unroll]
        for level in 1..9usize {
            let half = 256usize >> level;
            if u < half {
                let both = sums[u] + sums[u + half];
                sums[u] = both;
            }
            sync_cube();
        }
        let denom = f32::sqrt(sums[0] / n + epsilon);
        let mut i = u;
        while i < d {
            out[r * d + i] = (x[row + i * xs] - mean) / denom * gamma[i * gamma.stride(0)]
                + beta[i * beta.stride(0)];
            i += 256usize;
        }
    }

    /// out[r, c] = act(x[r] · w[:, c] + bias[c]) (+ res[r, c]) for few rows: the weights are
    /// streamed once per `chunk` rows.
    ///
    /// A unit per output column and chunk of rows (the grid's x and y): it holds `chunk`
    /// accumulators and reads its column of w once, consecutive units reading consecutive
    /// columns (the reads coalesce). Rows past the last repeat the last (read, never written).
    /// `res` is a stand-in, never read, without `residual`.
    #[cube(launch)]
    pub(super) fn linear_rows_kernel(
        x: &Tensor<f32>,
        w: &Tensor<f32>,
        bias: &Tensor<f32>,
        res: &Tensor<f32>,
        out: &mut Tensor<f32>,
        rows: u32,
        cols: u32,
        #[comptime] chunk: usize,
        #[comptime] gelu: bool,
        #[comptime] residual: bool,
    ) {
        let (rows, cols) = (rows as usize, cols as usize);
        let c = (CUBE_POS_X * CUBE_DIM_X + UNIT_POS_X) as usize;
        if c >= cols {
            terminate!();
        }
        let first = CUBE_POS_Y as usize * chunk;
        let (xs, ws, column) = (x.stride(1), w.stride(0), c * w.stride(1));
        let mut start = Array::<usize>::new(chunk);
        let mut acc = Array::<f32>::new(chunk);
        #[unroll]
        for j in 0..chunk {
            let r = min(first + j, rows - 1);
            start[j] = r * x.stride(0);
            acc[j] = 0.0f32;
        }
        for i in 0..x.shape(1) {
            let weight = w[i * ws + column];
            let at = i * xs;
            #[unroll]
            for j in 0..chunk {
                acc[j] += x[start[j] + at] * weight;
            }
        }
        let b = bias[c * bias.stride(0)];
        #[unroll]
        for j in 0..chunk {
            let r = first + j;
            if r < rows {
                let mut value = acc[j] + b;
                if gelu {
                    value = 0.5f32
                        * value
                        * (1.0f32 + Erf::erf(value * core::f32::consts::FRAC_1_SQRT_2));
                }
                if residual {
                    value += res[r * res.stride(0) + c * res.stride(1)];
                }
                out[r * cols + c] = value;
            }
        }
    }

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

/// A float, int or bool tensor's cubecl primitive, if it lives on a cubecl device outside
/// autodiff.
fn cube<const D: usize, K>(t: Tensor<D, K>) -> Option<CubeTensor>
where
    K: burn::tensor::kind::Basic,
{
    match t.into_dispatch() {
        DispatchTensor {
            kind:
                DispatchTensorKind::Cube(
                    BackendTensor::Float(t) | BackendTensor::Int(t) | BackendTensor::Bool(t),
                ),
            autodiff: DispatchAutodiffContext::Disabled,
        } => Some(t),
        _ => None,
    }
}

fn tensor<const D: usize>(t: CubeTensor) -> Tensor<D> {
    Tensor::from_dispatch(DispatchTensor {
        kind: DispatchTensorKind::Cube(BackendTensor::Float(t)),
        autodiff: DispatchAutodiffContext::Disabled,
    })
}

/// A parameter's primitive (the model is on the device the caller checked).
fn param<const D: usize>(p: &burn::module::Param<Tensor<D>>) -> CubeTensor {
    cube(p.val()).expect("the model's parameters are on its device")
}

fn bias(linear: &burn::nn::Linear) -> CubeTensor {
    param(
        linear
            .bias
            .as_ref()
            .expect("the decoder's linear layers have biases"),
    )
}

fn beta(norm: &burn::nn::LayerNorm) -> CubeTensor {
    param(
        norm.beta
            .as_ref()
            .expect("the decoder's LayerNorms have a bias"),
    )
}

/// A new contiguous f32 buffer beside `like`.
fn empty(like: &CubeTensor, shape: Vec<usize>) -> CubeTensor {
    empty_device_contiguous_dtype(
        like.client.clone(),
        like.device.clone(),
        shape.into(),
        DType::F32,
    )
}

/// Workgroups and units for one unit per output element.
fn grid(like: &CubeTensor, n: usize) -> (CubeCount, CubeDim) {
    let dim = CubeDim::new_1d(UNITS);
    (
        cubecl::calculate_cube_count_elemwise(&like.client, n, dim),
        dim,
    )
}

fn norm_linear(
    x: &CubeTensor,
    norm: &burn::nn::LayerNorm,
    linear: &burn::nn::Linear,
    gelu: bool,
) -> CubeTensor {
    let rows = x.shape()[0];
    let cols = linear.weight.dims()[1];
    let out = empty(x, vec![rows, cols]);
    // A workgroup per row.
    let (count, dim) = grid(x, rows * UNITS as usize);
    {
        norm_linear_kernel::launch(
            &x.client,
            count,
            dim,
            x.clone().into_tensor_arg(),
            param(&norm.gamma).into_tensor_arg(),
            beta(norm).into_tensor_arg(),
            param(&linear.weight).into_tensor_arg(),
            bias(linear).into_tensor_arg(),
            out.clone().into_tensor_arg(),
            rows as u32,
            cols as u32,
            burn::nn::LayerNormConfig::new(1).epsilon as f32,
            gelu,
        );
    }
    out
}

fn linear_residual(x: &CubeTensor, linear: &burn::nn::Linear, res: &CubeTensor) -> CubeTensor {
    let rows = x.shape()[0];
    let cols = linear.weight.dims()[1];
    let out = empty(x, vec![rows, cols]);
    let (count, dim) = grid(x, rows * cols);
    {
        linear_residual_kernel::launch(
            &x.client,
            count,
            dim,
            x.clone().into_tensor_arg(),
            param(&linear.weight).into_tensor_arg(),
            bias(linear).into_tensor_arg(),
            res.clone().into_tensor_arg(),
            out.clone().into_tensor_arg(),
            rows as u32,
            cols as u32,
        );
    }
    out
}

/// The wide path's LayerNorm: the normalised rows [rows, d], a workgroup per row.
fn layer_norm(x: &CubeTensor, norm: &burn::nn::LayerNorm) -> CubeTensor {
    let rows = x.shape()[0];
    let out = empty(x, x.shape().to_vec());
    layer_norm_kernel::launch(
        &x.client,
        CubeCount::new_1d(rows as u32),
        CubeDim::new_1d(NORM_UNITS),
        x.clone().into_tensor_arg(),
        param(&norm.gamma).into_tensor_arg(),
        beta(norm).into_tensor_arg(),
        out.clone().into_tensor_arg(),
        rows as u32,
        burn::nn::LayerNormConfig::new(1).epsilon as f32,
    );
    out
}

/// The wide path's linear layer, act(x · w + bias) (+ res), its weights streamed once per chunk
/// of up to `CHUNK` rows.
fn linear_rows(
    x: &CubeTensor,
    linear: &burn::nn::Linear,
    gelu: bool,
    res: Option<&CubeTensor>,
) -> CubeTensor {
    let rows = x.shape()[0];
    let cols = linear.weight.dims()[1];
    let out = empty(x, vec![rows, cols]);
    if rows == 0 {
        return out;
    }
    // The fewest chunks of at most `CHUNK` rows, each a power of two rows wide (one compiled
    // kernel per width: 1, 2, 4, 8, 16).
    let chunk = rows.div_ceil(rows.div_ceil(CHUNK)).next_power_of_two();
    let count = CubeCount::new_2d(
        cols.div_ceil(UNITS as usize) as u32,
        rows.div_ceil(chunk) as u32,
    );
    // Without a residual, a one-element stand-in that the kernel never reads.
    let residual = res.is_some();
    let res = res.cloned().unwrap_or_else(|| empty(x, vec![1, 1]));
    linear_rows_kernel::launch(
        &x.client,
        count,
        CubeDim::new_1d(UNITS),
        x.clone().into_tensor_arg(),
        param(&linear.weight).into_tensor_arg(),
        bias(linear).into_tensor_arg(),
        res.clone().into_tensor_arg(),
        out.clone().into_tensor_arg(),
        rows as u32,
        cols as u32,
        chunk,
        gelu,
        residual,
    );
    out
}

/// act(LayerNorm(x) · w + bias): one kernel for d ≤ `UNITS`, else the wide path's two.
fn norm_then_linear(
    x: &CubeTensor,
    norm: &burn::nn::LayerNorm,
    linear: &burn::nn::Linear,
    gelu: bool,
) -> CubeTensor {
    if x.shape()[1] <= UNITS as usize {
        norm_linear(x, norm, linear, gelu)
    } else {
        linear_rows(&layer_norm(x, norm), linear, gelu, None)
    }
}

/// res + x · w + bias, res [rows, d]: a unit per element for d ≤ `UNITS`, else weight-streaming.
fn plus_linear(x: &CubeTensor, linear: &burn::nn::Linear, res: &CubeTensor) -> CubeTensor {
    if res.shape()[1] <= UNITS as usize {
        linear_residual(x, linear, res)
    } else {
        linear_rows(x, linear, false, Some(res))
    }
}

impl Block {
    /// [`Block::forward`] on x [batch·new, d] in seven kernels (nine for d > `UNITS`).
    fn forward_gpu(
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

impl Decoder {
    /// [`Decoder::forward`] in the kernels above, when the model is on a cubecl device outside
    /// autodiff; `None` (and nothing consumed) otherwise.
    pub(super) fn forward_gpu(
        &self,
        tokens: &Tensor<2, Int>,
        positions: &Tensor<2, Int>,
        mask: &Tensor<3, Bool>,
        cache: &mut KvCache,
        features: bool,
    ) -> Option<(Option<Tensor<3>>, Tensor<3>)> {
        let token = cube(self.token.weight.val())?;
        let [batch, new] = tokens.dims();
        let ids = cube(tokens.clone()).expect("the tokens are on the model's device");
        let pos = cube(positions.clone()).expect("the positions are on the model's device");
        let mask = cube(mask.clone()).expect("the mask is on the model's device");
        let position = param(&self.position.weight);
        let rows = batch * new;
        let d = token.shape()[1];
        let mut x = empty(&token, vec![rows, d]);
        let (count, dim) = grid(&token, rows * d);
        {
            embed_kernel::launch(
                &token.client,
                count,
                dim,
                ids.clone().into_tensor_arg(),
                pos.into_tensor_arg(),
                token.clone().into_tensor_arg(),
                position.into_tensor_arg(),
                x.clone().into_tensor_arg(),
                rows as u32,
                d as u32,
                new as u32,
                dtype_to_storage_type(ids.dtype),
            );
        }
        for (layer, block) in self.blocks.iter().enumerate() {
            x = block.forward_gpu(x, &mask, [batch, new], self.n_heads, cache, layer);
        }
        let logits = norm_then_linear(&x, &self.norm, &self.head, false);
        let features =
            features.then(|| tensor::<2>(layer_norm(&x, &self.norm)).reshape([batch, new, d]));
        let vocab = logits.shape()[1];
        FORWARDS.with(|f| {
            let mut n = f.get();
            n[usize::from(d > UNITS as usize)] += 1;
            f.set(n);
        });
        Some((features, tensor::<2>(logits).reshape([batch, new, vocab])))
    }
}

impl Decoder {
    /// How many forwards this thread has run through this module's kernels: (d ≤ 64, wider).
    /// The tests' evidence that a model took the GPU path rather than burn's ops; not an API.
    #[doc(hidden)]
    pub fn gpu_forwards_on_this_thread() -> (usize, usize) {
        let [narrow, wide] = FORWARDS.with(Cell::get);
        (narrow, wide)
    }
}

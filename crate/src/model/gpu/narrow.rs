//! The linear layers of models with d ≤ [`UNITS`] (the trained ones): LayerNorm + a linear layer
//! (+ GELU) in one kernel, a workgroup per row that normalises the row once in shared memory, and
//! a linear layer + the residual in another, a unit per output element.
//!
//! The kernels and the launchers that bind their arguments sit together, since the two must
//! agree argument by argument. Which layers take this path and which take the wide one
//! (`super::wide`) is decided in `super::linear`; this file uses only `super::tensors`.

use super::tensors::{beta, bias, empty, grid, param, UNITS};
use burn_backend::TensorMetadata;
use burn_cubecl::tensor::CubeTensor;
use kernels::*;

/// The narrow path's kernels, in cubecl's Rust dialect (its `Tensor` and `Int` are not burn's).
mod kernels {
    use burn_cubecl::cubecl;
    use cubecl::prelude::*;

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
            c += crate::model::gpu::tensors::UNITS as usize;
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
}

pub(super) fn norm_linear(
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

pub(super) fn linear_residual(
    x: &CubeTensor,
    linear: &burn::nn::Linear,
    res: &CubeTensor,
) -> CubeTensor {
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

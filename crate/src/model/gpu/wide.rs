//! The linear layers of wider models (the widened target, `model::widen`: d up to 1536, d_ff up
//! to 3840), which feed as few rows as the trained ones but read megabytes of weights a call: a
//! LayerNorm kernel (a workgroup of [`NORM_UNITS`] units per row) writes the normalised rows,
//! then a linear kernel streams the weights once per chunk of up to [`CHUNK`] rows: a workgroup
//! per [`LANES`] output columns, whose units sum the columns over [`SLICES`] interleaved slices
//! of the inputs (one accumulator per row each) and then add the slices' sums in workgroup
//! memory, with the bias, GELU and residual fused.
//!
//! The kernels and the launchers that bind their arguments sit together, since the two must
//! agree argument by argument. Which layers take this path is decided in `super::linear`; this
//! file uses only `super::tensors`. The decoder's entry point also calls [`layer_norm`] alone, at
//! any width, for the features (the final LayerNorm's output) that the hidden-state drafts read.

use super::tensors::{beta, bias, empty, param};
use burn_backend::TensorMetadata;
use burn_cubecl::cubecl::{CubeCount, CubeDim};
use burn_cubecl::tensor::CubeTensor;
use kernels::*;

/// Units per workgroup of the wide path's LayerNorm (WebGPU allows at most 256).
const NORM_UNITS: u32 = 256;

/// The most rows a unit of the wide path's linear kernel carries at once (its workgroup then
/// holds 16 KiB of sums: all that WebGPU promises).
const CHUNK: usize = 16;

/// The wide path's linear kernel: output columns per workgroup ([`LANES`]) and the slices of
/// the inputs that its units sum apart ([`SLICES`]): 256 units, WebGPU's most. Timed on an H200
/// (Vulkan) in one run, the ×16 target's decode call: 8 × 32 0.87–0.92 ms, 4 × 64 0.94–1.07,
/// 16 × 16 1.25–1.26, 32 × 8 1.46–1.53, 64 × 4 1.97–2.39, 64 × 1 5.6–5.9; the kernel before
/// this one (a unit per column over all the inputs) 6.1–6.2 in other runs, where 8 × 32 took
/// 1.06–1.16 (each run had a machine of its own). A GPU needs tens of thousands of units in
/// flight to hide its memory's latency, and a unit per column gave it at most three thousand. On
/// lavapipe (a GPU emulated on two CPU cores) the split is slower: ×16 decode 32–33 → 44–68 ms,
/// 8 rows 116 → 145 ms (a barrier, and eight times the workgroups, which the emulator runs in
/// turn).
const LANES: usize = 8;
/// See [`LANES`].
const SLICES: usize = 32;

// A workgroup's units, and its sums for a chunk of rows, within what WebGPU promises.
const _: () = assert!(LANES * SLICES <= 256 && CHUNK * LANES * SLICES * 4 <= 16384);

/// The wide path's kernels, in cubecl's Rust dialect (its `Tensor` and `Int` are not burn's).
mod kernels {
    use burn_cubecl::cubecl;
    use cubecl::prelude::*;

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
    /// A workgroup per `LANES` output columns and chunk of rows (the grid's x and y), its
    /// `SLICES` × `LANES` units each summing one column over every `SLICES`-th input, `chunk`
    /// accumulators each; the slices' sums then meet in workgroup memory, and a unit per column
    /// and row adds them up in order and writes the result. Units past the last column read
    /// the last (they take part in the barrier), rows past the last repeat the last (read, never
    /// written). `res` is a stand-in, never read, without `residual`.
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
        #[comptime] lanes: usize,
        #[comptime] slices: usize,
        #[comptime] gelu: bool,
        #[comptime] residual: bool,
    ) {
        let (rows, cols) = (rows as usize, cols as usize);
        let u = UNIT_POS as usize;
        let units = lanes * slices;
        let (lane, slice) = (u % lanes, u / lanes);
        let c = min(CUBE_POS_X as usize * lanes + lane, cols - 1);
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
        let d = x.shape(1);
        let mut i = slice;
        while i < d {
            let weight = w[i * ws + column];
            let at = i * xs;
            #[unroll]
            for j in 0..chunk {
                acc[j] += x[start[j] + at] * weight;
            }
            i += slices;
        }
        let mut sums = Shared::new_slice(chunk * units);
        #[unroll]
        for j in 0..chunk {
            sums[j * units + u] = acc[j];
        }
        sync_cube();
        let mut o = u;
        while o < chunk * lanes {
            let (lane, j) = (o % lanes, o / lanes);
            let (c, r) = (CUBE_POS_X as usize * lanes + lane, first + j);
            if c < cols && r < rows {
                let mut value = bias[c * bias.stride(0)];
                for slice in 0..slices {
                    value += sums[j * units + slice * lanes + lane];
                }
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
            o += units;
        }
    }
}

/// The wide path's LayerNorm: the normalised rows [rows, d], a workgroup per row.
pub(super) fn layer_norm(x: &CubeTensor, norm: &burn::nn::LayerNorm) -> CubeTensor {
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
pub(super) fn linear_rows(
    x: &CubeTensor,
    linear: &burn::nn::Linear,
    gelu: bool,
    res: Option<&CubeTensor>,
) -> CubeTensor {
    let rows = x.shape()[0];
    let cols = linear.weight.dims()[1];
    let out = empty(x, vec![rows, cols]);
    if rows == 0 || cols == 0 {
        return out;
    }
    // The fewest chunks of at most `CHUNK` rows, each a power of two rows wide (one compiled
    // kernel per width: 1, 2, 4, 8, 16).
    let chunk = rows.div_ceil(rows.div_ceil(CHUNK)).next_power_of_two();
    let count = CubeCount::new_2d(cols.div_ceil(LANES) as u32, rows.div_ceil(chunk) as u32);
    // Without a residual, a one-element stand-in that the kernel never reads.
    let residual = res.is_some();
    let res = res.cloned().unwrap_or_else(|| empty(x, vec![1, 1]));
    linear_rows_kernel::launch(
        &x.client,
        count,
        CubeDim::new_1d((LANES * SLICES) as u32),
        x.clone().into_tensor_arg(),
        param(&linear.weight).into_tensor_arg(),
        bias(linear).into_tensor_arg(),
        res.clone().into_tensor_arg(),
        out.clone().into_tensor_arg(),
        rows as u32,
        cols as u32,
        chunk,
        LANES,
        SLICES,
        gelu,
        residual,
    );
    out
}

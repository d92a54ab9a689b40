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
//! a LayerNorm kernel (a workgroup of 256 units per row) writes the normalised rows, then a
//! workgroup per 8 output columns and chunk of up to 16 rows reads those columns once for all
//! the rows, its 256 units each summing one column over a 32nd of the inputs (eight consecutive
//! columns per read: 32 bytes) before the 32 partial sums meet in workgroup memory, with the
//! bias, GELU and residual fused. A block is then nine dispatches, the forward 21; the
//! attention kernels are the same for any head dim.
//!
//! Only outside autodiff: training runs natively on flex, and burn's ops keep the gradients.
//!
//! The files, each using only those listed before it: `tensors` (burn's tensors to cubecl's
//! primitives and back, buffers, grids, [`tensors::UNITS`]); `narrow` and `wide` (the linear
//! layers' kernels and launchers for d ≤ `UNITS` and beyond); `linear` (which of the two a layer
//! takes); `block` (the attention kernels and a block's forward); and this file, the entry point:
//! the embeddings' kernel, the decoder's forward through the blocks to the head, the count of
//! forwards the tests read, and [`streamed`] (the wide linear kernel alone, which the GPU's
//! bandwidth calibration times).

mod block;
mod linear;
mod narrow;
mod tensors;
mod wide;

use super::cache::KvCache;
use super::decoder::Decoder;
use burn::tensor::{Bool, Int, Tensor};
use burn_backend::cubecl::dtype_to_storage_type;
use burn_backend::TensorMetadata;
use kernels::*;
use linear::norm_then_linear;
use std::cell::Cell;
pub(in crate::model) use tensors::cube;
use tensors::{empty, grid, param, tensor, UNITS};
use wide::layer_norm;

std::thread_local! {
    /// Forwards this thread ran through these kernels: [d ≤ `UNITS`, wider].
    static FORWARDS: Cell<[usize; 2]> = const { Cell::new([0, 0]) };
}

/// The embeddings' kernel, in cubecl's Rust dialect (its `Tensor` and `Int` are not burn's).
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
}

impl Decoder {
    /// [`Decoder::forward`] in this module's kernels, when the model is on a cubecl device outside
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

/// x · w + bias through the wide path's linear kernel, whatever the width (the GPU's bandwidth
/// calibration, `super::measure`, times it: what a layer of a widened target streams); `None`
/// off a cubecl device.
pub(in crate::model) fn streamed(x: Tensor<2>, linear: &burn::nn::Linear) -> Option<Tensor<2>> {
    Some(tensor(wide::linear_rows(&cube(x)?, linear, false, None)))
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

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::model::device::Backend;
    use burn::nn::LinearConfig;
    use burn::tensor::activation::gelu;
    use burn::tensor::Distribution;

    /// The wide path's linear kernel gives burn's product where its split leaves tails: columns
    /// past a workgroup's eight (13, 1001), inputs that leave some of the 32 slices short or
    /// empty (5, 33, 40), and rows in chunks of 1, 2, 4, 8 and 16 (17: two chunks); with GELU and
    /// with the residual too.
    #[test]
    fn the_split_linear_kernel_gives_burns_product_on_ragged_shapes() {
        let device = Backend::Wgpu.device_blocking().unwrap_or_else(|e| {
            panic!("{e} (natively, wgpu needs a Vulkan driver: scripts/setup.sh installs lavapipe)")
        });
        let values = |t: Tensor<2>| -> Vec<f32> {
            t.into_data().convert::<f32>().try_into_vec().expect("f32")
        };
        let uniform = Distribution::Uniform(-1.0, 1.0);
        let shapes = [
            (1, 4096, 13),
            (3, 5, 1001),
            (7, 40, 9),
            (17, 33, 40),
            (2, 1536, 1001),
        ];
        for (rows, d_in, d_out) in shapes {
            let linear = LinearConfig::new(d_in, d_out).init(&device);
            let x = Tensor::<2>::random([rows, d_in], uniform, &device);
            let res = Tensor::<2>::random([rows, d_out], uniform, &device);
            let burns = linear.forward(x.clone());
            let cases = [
                (None, false, burns.clone()),
                (Some(res.clone()), false, burns.clone() + res),
                (None, true, gelu(burns)),
            ];
            for (res, with_gelu, expected) in cases {
                let x = cube(x.clone()).expect("on the device");
                let res = res.map(|r| cube(r).expect("on the device"));
                let got = tensor(wide::linear_rows(&x, &linear, with_gelu, res.as_ref()));
                let (got, expected) = (values(got), values(expected));
                assert_eq!(got.len(), expected.len());
                let worst = got
                    .iter()
                    .zip(&expected)
                    .map(|(g, e)| (g - e).abs())
                    .fold(0.0f32, f32::max);
                assert!(
                    worst <= 1e-5 * (d_in as f32).sqrt(),
                    "{rows} × {d_in} → {d_out}, residual {}, GELU {with_gelu}: off by {worst}",
                    res.is_some()
                );
            }
        }
    }
}

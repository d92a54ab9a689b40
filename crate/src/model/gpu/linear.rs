//! Which kernels a linear layer of the GPU forward takes: the narrow path's (`super::narrow`,
//! one kernel each) for d ≤ [`UNITS`], else the wide path's (`super::wide`, weights streamed
//! once per chunk of rows).
//!
//! A file of its own so that the block (`super::block`) and the decoder's head (the parent) ask
//! for "LayerNorm + linear" or "linear + residual" without knowing the paths, and neither path
//! knows the other.

use super::narrow::{linear_residual, norm_linear};
use super::tensors::UNITS;
use super::wide::{layer_norm, linear_rows};
use burn_backend::TensorMetadata;
use burn_cubecl::tensor::CubeTensor;

/// act(LayerNorm(x) · w + bias): one kernel for d ≤ `UNITS`, else the wide path's two.
pub(super) fn norm_then_linear(
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
pub(super) fn plus_linear(
    x: &CubeTensor,
    linear: &burn::nn::Linear,
    res: &CubeTensor,
) -> CubeTensor {
    if res.shape()[1] <= UNITS as usize {
        linear_residual(x, linear, res)
    } else {
        linear_rows(x, linear, false, Some(res))
    }
}

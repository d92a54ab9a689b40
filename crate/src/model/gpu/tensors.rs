//! What every launch of the GPU forward needs: burn's tensors to cubecl's primitives and back,
//! a layer's parameters as primitives, new output buffers, and the grid of one unit per output
//! element with its workgroup size [`UNITS`].
//!
//! A file of its own because every other file of the module uses it and it uses none of them:
//! the kernels and launchers (`narrow`, `wide`, `block`) and the forward's entry point in the
//! parent all stand on it. [`UNITS`] lives here because it is both the launches' workgroup size
//! and the widest model that takes the seven-kernel block (d ≤ `UNITS`).

use burn::backend::{BackendTensor, DispatchAutodiffContext, DispatchTensor, DispatchTensorKind};
use burn::tensor::Tensor;
use burn_backend::DType;
use burn_cubecl::cubecl::{self, CubeCount, CubeDim};
use burn_cubecl::ops::numeric::empty_device_contiguous_dtype;
use burn_cubecl::tensor::CubeTensor;

/// Units per workgroup; models with d ≤ `UNITS` take the seven-kernel block.
pub(super) const UNITS: u32 = 64;

/// A float, int or bool tensor's cubecl primitive, if it lives on a cubecl device outside
/// autodiff.
pub(in crate::model) fn cube<const D: usize, K>(t: Tensor<D, K>) -> Option<CubeTensor>
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

pub(super) fn tensor<const D: usize>(t: CubeTensor) -> Tensor<D> {
    Tensor::from_dispatch(DispatchTensor {
        kind: DispatchTensorKind::Cube(BackendTensor::Float(t)),
        autodiff: DispatchAutodiffContext::Disabled,
    })
}

/// A parameter's primitive (the model is on the device the caller checked).
pub(super) fn param<const D: usize>(p: &burn::module::Param<Tensor<D>>) -> CubeTensor {
    cube(p.val()).expect("the model's parameters are on its device")
}

pub(super) fn bias(linear: &burn::nn::Linear) -> CubeTensor {
    param(
        linear
            .bias
            .as_ref()
            .expect("the decoder's linear layers have biases"),
    )
}

pub(super) fn beta(norm: &burn::nn::LayerNorm) -> CubeTensor {
    param(
        norm.beta
            .as_ref()
            .expect("the decoder's LayerNorms have a bias"),
    )
}

/// A new contiguous f32 buffer beside `like`.
pub(super) fn empty(like: &CubeTensor, shape: Vec<usize>) -> CubeTensor {
    empty_device_contiguous_dtype(
        like.client.clone(),
        like.device.clone(),
        shape.into(),
        DType::F32,
    )
}

/// Workgroups and units for one unit per output element.
pub(super) fn grid(like: &CubeTensor, n: usize) -> (CubeCount, CubeDim) {
    let dim = CubeDim::new_1d(UNITS);
    (
        cubecl::calculate_cube_count_elemwise(&like.client, n, dim),
        dim,
    )
}

//! GELU and the attention softmax, with a fast path on flex outside training.
//!
//! flex computes both element by element with libm's scalar `erff` and `expf`; in the page's
//! wasm module those calls were a quarter (GELU) and then a seventh (softmax) of a model call's
//! time. Here the same formulas run in place over flex's own buffers with branch-free `erf` and
//! `exp` (`specdec_kernels`, built for speed in the size-optimised module), which the compiler
//! vectorises (SIMD128 in the browser). On the other backends, and whenever autodiff is on,
//! burn's own ops run.

use burn::tensor::activation;
use burn::tensor::Tensor;
#[cfg(feature = "flex")]
use std::ops::ControlFlow;

/// GELU, 0.5·x·(1 + erf(x/√2)); on flex with `specdec_kernels::erf`, in place.
pub fn gelu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    #[cfg(feature = "flex")]
    let x = match on_flex::gelu(x) {
        ControlFlow::Break(y) => return y,
        ControlFlow::Continue(x) => x,
    };
    activation::gelu(x)
}

/// softmax(scale · x) over the last dimension. On flex, in place in `x`'s buffer;
/// elsewhere burn's `softmax` after a `mul_scalar`. Folding the attention's 1/√d_k in here saves
/// one op per layer.
pub fn softmax_last<const D: usize>(x: Tensor<D>, scale: f32) -> Tensor<D> {
    #[cfg(feature = "flex")]
    let x = match on_flex::softmax_last(x, scale) {
        ControlFlow::Break(y) => return y,
        ControlFlow::Continue(x) => x,
    };
    activation::softmax(x.mul_scalar(scale), D - 1)
}

/// The in-place paths: `Break` with the result, or `Continue` with the input when it is not an
/// f32 flex tensor outside autodiff.
#[cfg(feature = "flex")]
mod on_flex {
    use burn::backend::{
        BackendTensor, DispatchAutodiffContext, DispatchTensor, DispatchTensorKind,
    };
    use burn::tensor::{DType, Tensor};
    use burn_flex::FlexTensor;
    use std::ops::ControlFlow;

    pub fn gelu<const D: usize>(x: Tensor<D>) -> ControlFlow<Tensor<D>, Tensor<D>> {
        match x.into_dispatch() {
            DispatchTensor {
                kind: DispatchTensorKind::Flex(BackendTensor::Float(t)),
                autodiff: DispatchAutodiffContext::Disabled,
            } if t.dtype() == DType::F32 => {
                let mut t = contiguous(t);
                specdec_kernels::gelu(t.storage_mut::<f32>());
                ControlFlow::Break(flex(t))
            }
            other => ControlFlow::Continue(Tensor::from_dispatch(other)),
        }
    }

    pub fn softmax_last<const D: usize>(
        x: Tensor<D>,
        scale: f32,
    ) -> ControlFlow<Tensor<D>, Tensor<D>> {
        match x.into_dispatch() {
            DispatchTensor {
                kind: DispatchTensorKind::Flex(BackendTensor::Float(t)),
                autodiff: DispatchAutodiffContext::Disabled,
            } if t.dtype() == DType::F32 && t.layout().shape().last().is_some_and(|&n| n > 0) => {
                let row = *t.layout().shape().last().expect("checked above");
                let mut t = contiguous(t);
                specdec_kernels::softmax_rows(t.storage_mut::<f32>(), row, scale);
                ControlFlow::Break(flex(t))
            }
            other => ControlFlow::Continue(Tensor::from_dispatch(other)),
        }
    }

    /// `t` with a contiguous buffer of its own: a copy only when `t` is a view. Otherwise `t`'s
    /// own buffer, which `storage_mut` then writes without copying, since nothing else holds it
    /// (a tensor handed to an op is consumed by it).
    fn contiguous(t: FlexTensor) -> FlexTensor {
        let c = t.to_contiguous();
        drop(t);
        c
    }

    fn flex<const D: usize>(t: FlexTensor) -> Tensor<D> {
        Tensor::from_dispatch(DispatchTensor {
            kind: DispatchTensorKind::Flex(BackendTensor::Float(t)),
            autodiff: DispatchAutodiffContext::Disabled,
        })
    }
}

#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use burn::tensor::{Device, TensorData};

    fn values(t: Tensor<1>) -> Vec<f32> {
        burn::tensor::read_sync(crate::model::floats(t)).unwrap()
    }

    /// The vectorisable GELU on flex against flex's own erf (libm's `erff`) and against ndarray's
    /// GELU, over and beyond the range the models see.
    #[test]
    fn gelu_on_flex_equals_the_exact_one() {
        let xs: Vec<f32> = (-24_000..=24_000).map(|i| i as f32 / 2000.0).collect();
        let n = xs.len();
        let on = |d: &Device| Tensor::<1>::from_data(TensorData::new(xs.clone(), [n]), d);
        let flex = Device::flex();
        let fast = values(gelu(on(&flex)));
        let x = on(&flex);
        let exact = values(
            x.clone()
                .mul(
                    x.mul_scalar(std::f32::consts::FRAC_1_SQRT_2)
                        .erf()
                        .add_scalar(1.0),
                )
                .mul_scalar(0.5),
        );
        #[cfg(feature = "ndarray")]
        let ndarray = {
            #[allow(deprecated)] // burn deprecates ndarray for flex; the page still offers it
            let d = Device::ndarray();
            values(gelu(on(&d)))
        };
        for i in 0..n {
            let tol = 4e-7 * xs[i].abs().max(1.0);
            assert!(
                (fast[i] - exact[i]).abs() <= tol,
                "gelu({}) = {} ≠ {}",
                xs[i],
                fast[i],
                exact[i]
            );
            #[cfg(feature = "ndarray")]
            assert!(
                (fast[i] - ndarray[i]).abs() <= tol,
                "gelu({}): ndarray {}",
                xs[i],
                ndarray[i]
            );
        }
    }

    /// The in-place softmax on flex against an f64 softmax on the host and against the
    /// decomposed path of another backend, with a scale, masked entries and a strided view.
    #[test]
    fn softmax_on_flex_equals_the_exact_one() {
        let (rows, cols) = (37, 63);
        let xs: Vec<f32> = (0..rows * cols)
            .map(|i| {
                if i % 7 == 3 {
                    -1.0e9
                } else {
                    ((i * 7919) % 2001) as f32 / 50.0 - 20.0
                }
            })
            .collect();
        let scale = 0.25;
        let exact: Vec<f64> = xs
            .chunks(cols)
            .flat_map(|r| {
                let m = r
                    .iter()
                    .fold(f64::NEG_INFINITY, |m, &x| m.max(f64::from(x)));
                let e: Vec<f64> = r
                    .iter()
                    .map(|&x| ((f64::from(x) - m) * f64::from(scale)).exp())
                    .collect();
                let s: f64 = e.iter().sum();
                e.into_iter().map(move |v| v / s)
            })
            .collect();
        let on = |d: &Device| Tensor::<2>::from_data(TensorData::new(xs.clone(), [rows, cols]), d);
        let flex = Device::flex();
        let fast = values(softmax_last(on(&flex), scale).reshape([rows * cols]));
        // A transposed view: the fast path copies it to a contiguous buffer first.
        let transposed = on(&flex).transpose();
        let fast_t = values(softmax_last(transposed.transpose(), scale).reshape([rows * cols]));
        for (i, want) in exact.iter().enumerate() {
            let tol = 1e-6 * want.max(1e-3);
            assert!(
                (f64::from(fast[i]) - want).abs() <= tol,
                "[{i}] {} ≠ {want}",
                fast[i]
            );
            assert_eq!(fast[i], fast_t[i], "[{i}] view");
        }
        #[cfg(feature = "ndarray")]
        {
            #[allow(deprecated)] // burn deprecates ndarray for flex; the page still offers it
            let d = Device::ndarray();
            let slow = values(softmax_last(on(&d), scale).reshape([rows * cols]));
            for i in 0..rows * cols {
                assert!(
                    (fast[i] - slow[i]).abs() <= 1e-6,
                    "[{i}] ndarray {}",
                    slow[i]
                );
            }
        }
    }
}

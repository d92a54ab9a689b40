//! The decoder's linear layers, with a weight-streaming path for few rows on flex.
//!
//! A decode step multiplies a handful of rows (one token, or the γ + 1 of a verification) with
//! every weight matrix. A general GEMM packs and blocks for large shapes and runs these at a
//! fraction of the memory's speed, so that verifying 4 tokens costs 3× one (measured on the
//! widened target: `shared/probes`). [`specdec_kernels::matmul_few_rows`] reads each weight
//! once per call for all rows, so that a memory-bound target's step costs what its bytes cost
//! whatever k (lecture §1.2). On flex outside autodiff, for at most
//! [`specdec_kernels::FEW_ROWS`] rows (natively twice that, in two passes: measured on the ×16
//! target, 17 rows 10.8 ms against burn's 16.9, 32 rows 16.4 against 29.5; on the trained target
//! 119 µs against 137 and 201 against 226; in wasm likewise on the threaded module, one pass on a
//! single thread), [`linear`] calls it over flex's own buffers; otherwise burn's `Linear` runs.

use burn::nn::Linear;
use burn::tensor::Tensor;
#[cfg(feature = "flex")]
use std::sync::atomic::{AtomicBool, Ordering};

#[cfg(feature = "flex")]
static FEW_ROWS_KERNEL: AtomicBool = AtomicBool::new(true);

/// Turns the few-rows path off (or back on) for every model in this process: a benchmark's and
/// a test's way to compare it with burn's matmul on the same calls.
#[cfg(feature = "flex")]
pub fn use_few_rows_kernel(on: bool) {
    FEW_ROWS_KERNEL.store(on, Ordering::Relaxed);
}

/// `l.forward(x)`: x [.., d_in] → [.., d_out].
pub fn linear<const D: usize>(l: &Linear, x: Tensor<D>) -> Tensor<D> {
    #[cfg(feature = "flex")]
    let x = if FEW_ROWS_KERNEL.load(Ordering::Relaxed) {
        match on_flex::linear(l, x) {
            std::ops::ControlFlow::Break(y) => return y,
            std::ops::ControlFlow::Continue(x) => x,
        }
    } else {
        x
    };
    l.forward(x)
}

#[cfg(feature = "flex")]
mod on_flex {
    use burn::backend::{
        BackendTensor, DispatchAutodiffContext, DispatchTensor, DispatchTensorKind,
    };
    use burn::nn::Linear;
    use burn::tensor::{DType, Tensor, TensorData};
    use burn_flex::FlexTensor;
    use std::ops::ControlFlow;

    /// An f32 flex tensor outside autodiff, or the dispatch tensor back.
    fn flex(t: DispatchTensor) -> Result<FlexTensor, Box<DispatchTensor>> {
        match t {
            DispatchTensor {
                kind: DispatchTensorKind::Flex(BackendTensor::Float(t)),
                autodiff: DispatchAutodiffContext::Disabled,
            } if t.dtype() == DType::F32 => Ok(t),
            other => Err(Box::new(other)),
        }
    }

    fn back(t: FlexTensor) -> DispatchTensor {
        DispatchTensor {
            kind: DispatchTensorKind::Flex(BackendTensor::Float(t)),
            autodiff: DispatchAutodiffContext::Disabled,
        }
    }

    /// The most rows streamed: two passes of [`specdec_kernels::FEW_ROWS`] (a 16-node tree's
    /// verification is 17 rows), natively and on the threaded wasm module's threads; one on a
    /// single wasm thread, where burn's blocked matmul did better beyond 16 rows.
    pub(super) fn most_rows() -> usize {
        if cfg!(target_arch = "wasm32") && specdec_kernels::threads() == 1 {
            specdec_kernels::FEW_ROWS
        } else {
            2 * specdec_kernels::FEW_ROWS
        }
    }

    pub fn linear<const D: usize>(l: &Linear, x: Tensor<D>) -> ControlFlow<Tensor<D>, Tensor<D>> {
        let [d_in, d_out] = l.weight.dims();
        let dims = x.dims();
        let rows = dims[..D - 1].iter().product::<usize>();
        if rows == 0 || rows > most_rows() || dims[D - 1] != d_in {
            return ControlFlow::Continue(x);
        }
        let x = match flex(x.into_dispatch()) {
            Ok(x) => x,
            Err(other) => return ControlFlow::Continue(Tensor::from_dispatch(*other)),
        };
        let (Ok(w), bias) = (
            flex(l.weight.val().into_dispatch()),
            l.bias.as_ref().map(|b| flex(b.val().into_dispatch())),
        ) else {
            return ControlFlow::Continue(Tensor::from_dispatch(back(x)));
        };
        let bias = match bias {
            None => None,
            Some(Ok(b)) => Some(b),
            Some(Err(_)) => return ControlFlow::Continue(Tensor::from_dispatch(back(x))),
        };
        // The weights as they are stored (a Linear's are contiguous; a view is copied once here).
        let w = if w.is_contiguous() {
            w
        } else {
            w.to_contiguous()
        };
        let x = if x.is_contiguous() {
            x
        } else {
            x.to_contiguous()
        };
        let (Some(ws), Some(xs)) = (w.as_slice::<f32>(), x.as_slice::<f32>()) else {
            return ControlFlow::Continue(Tensor::from_dispatch(back(x)));
        };
        let bias = bias.map(|b| {
            if b.is_contiguous() {
                b
            } else {
                b.to_contiguous()
            }
        });
        let bs = bias.as_ref().and_then(|b| b.as_slice::<f32>());
        let mut y = vec![0.0f32; rows * d_out];
        specdec_kernels::matmul_few_rows(xs, rows, ws, d_in, d_out, bs, &mut y);
        let mut shape = dims.to_vec();
        shape[D - 1] = d_out;
        ControlFlow::Break(Tensor::from_dispatch(back(FlexTensor::from_data(
            TensorData::new(y, shape),
        ))))
    }
}

#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use burn::nn::LinearConfig;
    use burn::tensor::{Device, TensorData};

    fn values<const D: usize>(t: Tensor<D>) -> Vec<f32> {
        burn::tensor::read_sync(crate::model::floats(t)).unwrap()
    }

    /// The few-rows path against burn's matmul on the same layer, for every row count it takes
    /// (two passes of `FEW_ROWS` natively) and one beyond (which burn runs), through a strided
    /// input view.
    #[test]
    fn the_few_rows_path_equals_burns_linear() {
        let device = Device::flex();
        let layer = LinearConfig::new(67, 131).init(&device);
        for rows in 1..=on_flex::most_rows() + 1 {
            let xs: Vec<f32> = (0..rows * 67)
                .map(|i| ((i * 7919) % 1001) as f32 / 500.0 - 1.0)
                .collect();
            let x = Tensor::<2>::from_data(TensorData::new(xs, [67, rows]), &device).transpose();
            let x = x.reshape([1, rows, 67]);
            let fast = values(linear(&layer, x.clone()));
            let slow = values(layer.forward(x));
            assert_eq!(fast.len(), rows * 131);
            for (i, (a, b)) in fast.iter().zip(&slow).enumerate() {
                assert!((a - b).abs() <= 1e-5, "{rows} rows [{i}]: {a} ≠ {b}");
            }
        }
    }
}

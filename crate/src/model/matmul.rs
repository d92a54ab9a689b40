//! The decoder's linear layers, with a weight-streaming path for few rows on flex.
//!
//! A decode step multiplies a handful of rows (one token, or the γ + 1 of a verification) with
//! every weight matrix. A general GEMM packs and blocks for large shapes and runs these at a
//! fraction of the memory's speed. [`specdec_kernels::matmul_few_rows`] reads each weight
//! once per call for all rows, so that a memory-bound target's step costs what its bytes cost
//! whatever k (lecture §1.2). On flex outside autodiff, for at most
//! [`specdec_kernels::FEW_ROWS`] rows (natively twice that, in two passes; in wasm likewise on
//! the threaded module, one pass on a single thread), [`linear`] calls it over flex's own
//! buffers; otherwise burn's `Linear` runs.
//!
//! A layer of a widened target can also carry its weights packed in strips ([`PackedLinear`],
//! made once by [`pack`]): [`packed_linear`] then runs [`specdec_kernels::matmul_packed`], which
//! reads each strip as one sequential stream, for any number of rows: past a few rows its later
//! passes over a strip read it from L2 at the multiply-adds' peak. It is a second copy of the
//! weights, so only the layers large enough to be split across threads are packed; a packed copy
//! whose layer's weights were replaced since is not used.
//!
//! Measurements: docs/performance.md, section "Figures once in the module headers",
//! `crate/src/model/matmul.rs`.

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

/// Whether widened targets pack their large layers here ([`pack`]), and the calibration times the
/// packed kernel: in wasm, where the row-major kernel's eight interleaved weight streams ran at
/// two thirds of the packed kernel's speed. Natively the AVX2 row-major kernel, which prefetches
/// its streams and holds twelve accumulators, stays: the packed one has not been measured there.
pub const PACKS: bool = cfg!(target_arch = "wasm32");

/// A [`Linear`]'s weights packed for [`specdec_kernels::matmul_packed`], with the weights they
/// were packed from: a second handle on their buffer, which keeps it alive and shared, so that
/// flex can neither free it nor change it in place (it copies a shared buffer first). A layer
/// whose weight is still that buffer, in the same shape, is the layer these were packed from.
#[derive(Debug)]
pub struct PackedLinear {
    #[cfg(feature = "flex")]
    packed: specdec_kernels::Packed,
    #[cfg(feature = "flex")]
    from: burn_flex::FlexTensor,
}

/// `l`'s weights packed, if they are flex f32 weights outside autodiff large enough to be split
/// across threads ([`specdec_kernels::matmul::SPLIT_WEIGHTS`] weights); `None` otherwise.
pub fn pack(l: &Linear) -> Option<PackedLinear> {
    #[cfg(feature = "flex")]
    return on_flex::pack(l);
    #[cfg(not(feature = "flex"))]
    {
        let _ = l;
        None
    }
}

/// `l.forward(x)` over `packed` where it is `l`'s weights packed (for any number of rows);
/// otherwise [`linear`].
pub fn packed_linear<const D: usize>(
    l: &Linear,
    packed: Option<&PackedLinear>,
    x: Tensor<D>,
) -> Tensor<D> {
    #[cfg(feature = "flex")]
    let x = match packed {
        Some(p) if FEW_ROWS_KERNEL.load(Ordering::Relaxed) => match on_flex::packed(l, p, x) {
            std::ops::ControlFlow::Break(y) => return y,
            std::ops::ControlFlow::Continue(x) => x,
        },
        _ => x,
    };
    #[cfg(not(feature = "flex"))]
    let _ = packed;
    linear(l, x)
}

/// The most rows a call that the row-major few-rows kernel takes (burn's matmul runs past them):
/// two passes of [`specdec_kernels::FEW_ROWS`] (a 16-node tree's verification is 17 rows),
/// natively and on the threaded wasm module's threads; one on a single wasm thread, where burn's
/// blocked matmul did better beyond 16 rows. The packed kernel takes any number.
pub fn most_rows() -> usize {
    if cfg!(target_arch = "wasm32") && specdec_kernels::threads() == 1 {
        specdec_kernels::FEW_ROWS
    } else {
        2 * specdec_kernels::FEW_ROWS
    }
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

    /// See [`super::pack`].
    pub fn pack(l: &Linear) -> Option<super::PackedLinear> {
        let [d_in, d_out] = l.weight.dims();
        if d_in * d_out < specdec_kernels::matmul::SPLIT_WEIGHTS {
            return None;
        }
        let w = flex(l.weight.val().into_dispatch()).ok()?;
        let ws = w.as_slice::<f32>().filter(|_| w.is_contiguous())?;
        Some(super::PackedLinear {
            packed: specdec_kernels::Packed::new(ws, d_in, d_out),
            from: w.clone(),
        })
    }

    /// `x` [.., d_in] and `bias` as flex slices, then `run(x, rows, bias, y)` into a new
    /// [.., d_out] tensor; `x` back where a tensor is not on flex, the rows are more than `most`
    /// or the shapes do not fit.
    fn few_rows<const D: usize>(
        l: &Linear,
        x: Tensor<D>,
        most: usize,
        run: impl FnOnce(&[f32], usize, Option<&[f32]>, &mut [f32]),
    ) -> ControlFlow<Tensor<D>, Tensor<D>> {
        let [d_in, d_out] = l.weight.dims();
        let dims = x.dims();
        let rows = dims[..D - 1].iter().product::<usize>();
        if rows == 0 || rows > most || dims[D - 1] != d_in {
            return ControlFlow::Continue(x);
        }
        let x = match flex(x.into_dispatch()) {
            Ok(x) => x,
            Err(other) => return ControlFlow::Continue(Tensor::from_dispatch(*other)),
        };
        let bias = match l.bias.as_ref().map(|b| flex(b.val().into_dispatch())) {
            None => None,
            Some(Ok(b)) => Some(if b.is_contiguous() {
                b
            } else {
                b.to_contiguous()
            }),
            Some(Err(_)) => return ControlFlow::Continue(Tensor::from_dispatch(back(x))),
        };
        let x = if x.is_contiguous() {
            x
        } else {
            x.to_contiguous()
        };
        let Some(xs) = x.as_slice::<f32>() else {
            return ControlFlow::Continue(Tensor::from_dispatch(back(x)));
        };
        let bs = bias.as_ref().and_then(|b| b.as_slice::<f32>());
        let mut y = vec![0.0f32; rows * d_out];
        run(xs, rows, bs, &mut y);
        let mut shape = dims.to_vec();
        shape[D - 1] = d_out;
        ControlFlow::Break(Tensor::from_dispatch(back(FlexTensor::from_data(
            TensorData::new(y, shape),
        ))))
    }

    /// `l.forward(x)` over `p`, if `p` was packed from `l`'s weights as they are now, for any
    /// number of rows (see the module's header).
    pub fn packed<const D: usize>(
        l: &Linear,
        p: &super::PackedLinear,
        x: Tensor<D>,
    ) -> ControlFlow<Tensor<D>, Tensor<D>> {
        let Ok(w) = flex(l.weight.val().into_dispatch()) else {
            return ControlFlow::Continue(x);
        };
        let same = |a: &FlexTensor| a.as_slice::<f32>().map(|s| (s.as_ptr(), s.len()));
        if same(&w).is_none()
            || same(&w) != same(&p.from)
            || w.layout().shape() != p.from.layout().shape()
        {
            return ControlFlow::Continue(x);
        }
        few_rows(l, x, usize::MAX, |xs, rows, bs, y| {
            #[cfg(test)]
            super::tests::PACKED_CALLS.with(|n| n.set(n.get() + 1));
            specdec_kernels::matmul_packed(xs, rows, &p.packed, bs, y)
        })
    }

    pub fn linear<const D: usize>(l: &Linear, x: Tensor<D>) -> ControlFlow<Tensor<D>, Tensor<D>> {
        let Ok(w) = flex(l.weight.val().into_dispatch()) else {
            return ControlFlow::Continue(x);
        };
        // The weights as they are stored (a Linear's are contiguous; a view is copied once here).
        let w = if w.is_contiguous() {
            w
        } else {
            w.to_contiguous()
        };
        let Some(ws) = w.as_slice::<f32>() else {
            return ControlFlow::Continue(x);
        };
        let [d_in, d_out] = l.weight.dims();
        few_rows(l, x, super::most_rows(), |xs, rows, bs, y| {
            specdec_kernels::matmul_few_rows(xs, rows, ws, d_in, d_out, bs, y)
        })
    }
}

#[cfg(all(test, feature = "flex"))]
pub(crate) mod tests {
    use super::*;
    use burn::nn::LinearConfig;
    use burn::tensor::{Device, TensorData};

    thread_local! {
        /// Calls that ran over packed weights on this thread (each test runs on its own).
        pub(crate) static PACKED_CALLS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

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
        for rows in 1..=most_rows() + 1 {
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

    /// A layer large enough is packed, and the packed path equals burn's matmul for any number
    /// of rows, past the row-major path's most too (and runs: the count of packed calls grows by
    /// each); packed weights that are not the layer's (another layer of the same shape) are not
    /// used.
    #[test]
    fn the_packed_path_equals_burns_linear_and_only_for_its_own_weights() {
        let device = Device::flex();
        let small = LinearConfig::new(67, 131).init(&device);
        assert!(
            pack(&small).is_none(),
            "a layer too small to split is not packed"
        );
        let layer = LinearConfig::new(256, 600).init(&device);
        let other = LinearConfig::new(256, 600).init(&device);
        let packed = pack(&layer).expect("256 × 600 weights are packed");
        let most = most_rows();
        for rows in (1..=most + 1).chain([2 * most + 3, 100]) {
            let xs: Vec<f32> = (0..rows * 256)
                .map(|i| ((i * 7919) % 1001) as f32 / 500.0 - 1.0)
                .collect();
            let x = Tensor::<3>::from_data(TensorData::new(xs, [1, rows, 256]), &device);
            let before = PACKED_CALLS.with(|n| n.get());
            let fast = values(packed_linear(&layer, Some(&packed), x.clone()));
            let ran = PACKED_CALLS.with(|n| n.get()) - before;
            assert_eq!(ran, 1, "{rows} rows");
            let slow = values(layer.forward(x.clone()));
            for (i, (a, b)) in fast.iter().zip(&slow).enumerate() {
                assert!((a - b).abs() <= 1e-5, "{rows} rows [{i}]: {a} ≠ {b}");
            }
            let wrong = values(packed_linear(&other, Some(&packed), x.clone()));
            let right = values(other.forward(x));
            for (i, (a, b)) in wrong.iter().zip(&right).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-5,
                    "other layer, {rows} rows [{i}]: {a} ≠ {b}"
                );
            }
        }
    }
}

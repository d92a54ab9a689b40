//! Matrix multiply for a few rows that streams the weights once, and two calibration kernels
//! (memory bandwidth, peak FMA rate) that say what "memory-bound" means on this machine.
//!
//! A decoder step multiplies a handful of rows (1 for plain decoding, k for verifying k draft
//! tokens) by weight matrices far larger than the caches. The time is then the weights' bytes over
//! the memory bandwidth, whatever k is, provided every weight byte is read from memory once per
//! call and not once per row: that is what makes verification nearly free. Two algorithms do it:
//! over weights as burn stores them (`blocked`: weight blocks, register tiles, panels of `y`) and
//! over weights packed once in strips (`packed`: one sequential stream a strip).
//!
//! Each runs on three back-ends behind the `Lanes` trait: AVX2 + FMA intrinsics on x86_64 (chosen
//! at run time, the answer cached), relaxed-SIMD FMA in the wasm build with the `relaxed` feature,
//! and fixed-size lane arrays everywhere else, which the compiler turns into SIMD where it has
//! some (SIMD128 on wasm). The portable back-end is also the reference the tests compare the fast
//! one against.
//!
//! The files follow the layers of that design. At the bottom `lanes`: the `Lanes` trait, its
//! portable back-end, and the `Kernel` trait (a loop generic over `Lanes`, with its arguments).
//! On it, knowing nothing of each other, the loops, each with its `Kernel` (`blocked` and `packed`
//! for the two matmuls, `calibrate` for the two calibrations), and the back-ends `avx2` and
//! `relaxed`, which run any `Kernel` with their CPU features and know no loop. Above them
//! `backend`, the one place that picks a back-end and names those two; then `split` (the
//! threads' shares of a blocked call); and this file on top: the entry points, which check the
//! shapes and run the loops through `backend`, and the tests, which hold both back-ends to a naive
//! product through those entry points. The one way back up: a call's shares, cut in `split` and
//! in `packed`'s `matmul_packed`, each come back to this file's `over_inputs` or `over_strips`,
//! side by side, to be run on the back-end.

#[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
mod avx2;
mod backend;
mod blocked;
mod calibrate;
mod lanes;
mod packed;
#[cfg(all(target_arch = "wasm32", feature = "relaxed"))]
mod relaxed;
mod split;

pub use blocked::FEW_ROWS;
pub use calibrate::FMA_CHAINS;
pub use packed::{matmul_packed, Packed, STRIP};
pub use split::{input_share, split};

use blocked::{accumulate, Accumulate};
use calibrate::{Fma, Sum};
use core::ops::Range;
use lanes::LANES;
use packed::Strips;

/// Weights (d_in × d_out) from which a call is split across the pool's threads: below it (the
/// drafts', the trained target's layers) waking a helper costs more than its share saves.
pub const SPLIT_WEIGHTS: usize = 1 << 17;

/// y\[m\]\[o\] = bias\[o\] + Σᵢ x\[m\]\[i\] · w\[i\]\[o\], for m in 0..rows.
///
/// `x`: rows × d_in row-major; `w`: d_in × d_out row-major (burn's `Linear` weight layout
/// `[d_input, d_output]`); `bias`: d_out values or `None` (zero); `y`: rows × d_out, overwritten.
/// No alignment is assumed. Every weight is read once per call, whatever `rows` is; meant for
/// rows ≤ [`FEW_ROWS`], correct for any. In the threaded wasm module a call of at least
/// [`SPLIT_WEIGHTS`] weights is split by its inputs across the pool's threads (each weight still
/// read once in all, each thread's share one sequential stream), within 1e-5 of one thread and
/// with the same bits for a row whatever the rows beside it.
///
/// # Panics
/// If a slice's length does not match the dimensions.
#[inline(never)]
pub fn matmul_few_rows(
    x: &[f32],
    rows: usize,
    w: &[f32],
    d_in: usize,
    d_out: usize,
    bias: Option<&[f32]>,
    y: &mut [f32],
) {
    check_shapes(x, rows, w, d_in, d_out, bias, y);
    #[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
    {
        use crate::pool::shared::{Futex, POOL};
        let of = crate::threads_for(d_in * d_out);
        if of > 1 {
            split(x, rows, w, d_in, d_out, bias, y, of, |job| {
                POOL.run::<Futex>(job)
            });
            return;
        }
    }
    // SAFETY: the lengths were checked above; this call owns all of y.
    unsafe { over_inputs(x, rows, w, d_in, d_out, bias, 0..d_in, y.as_mut_ptr()) };
}

/// [`matmul_few_rows`] on the portable back-end and one thread only, whatever the CPU: the
/// reference the tests hold the fast path to, and the baseline the benchmark compares it with.
///
/// # Panics
/// As [`matmul_few_rows`].
#[inline(never)]
pub fn matmul_few_rows_portable(
    x: &[f32],
    rows: usize,
    w: &[f32],
    d_in: usize,
    d_out: usize,
    bias: Option<&[f32]>,
    y: &mut [f32],
) {
    check_shapes(x, rows, w, d_in, d_out, bias, y);
    // SAFETY: the portable back-end needs no CPU feature; the lengths were checked above.
    unsafe {
        init_with_bias(y.as_mut_ptr(), rows, d_out, bias);
        accumulate::<[f32; LANES]>(x, rows, w, d_in, d_out, 0..d_in, y.as_mut_ptr());
    }
}

/// y set to `bias` (or zero) and then `+= x[.., inputs] · w[inputs, ..]`, on the best back-end
/// here.
///
/// # Safety
/// The slices have the lengths `check_shapes` asserts, `inputs` lies within `0..d_in`; `y`
/// addresses rows × d_out floats that no one else touches meanwhile.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn over_inputs(
    x: &[f32],
    rows: usize,
    w: &[f32],
    d_in: usize,
    d_out: usize,
    bias: Option<&[f32]>,
    inputs: Range<usize>,
    y: *mut f32,
) {
    // SAFETY: forwarded from the caller.
    unsafe {
        init_with_bias(y, rows, d_out, bias);
        backend::run(Accumulate {
            x,
            rows,
            w,
            d_in,
            d_out,
            inputs,
            y,
        })
    }
}

/// The strips `range` of every row of [`matmul_packed`]'s product, on the best back-end here.
///
/// # Safety
/// `x`, `bias` and `y` have the lengths `matmul_packed` asserts, `range` lies within `w`'s
/// strips; no one else touches the strips' columns of `y` meanwhile.
pub(super) unsafe fn over_strips(
    x: &[f32],
    rows: usize,
    w: &Packed,
    bias: Option<&[f32]>,
    range: Range<usize>,
    y: *mut f32,
) {
    // SAFETY: forwarded from the caller.
    unsafe {
        backend::run(Strips {
            x,
            rows,
            w,
            bias,
            range,
            y,
        })
    }
}

/// The matmul's back-end in this build on this CPU, in words: "AVX2 + FMA", "SIMD128 +
/// relaxed-SIMD FMA", "SIMD128 (no FMA)", or "portable".
pub fn kernel_path() -> &'static str {
    backend::name()
}

/// Whether the matmul's multiply-adds are fused here.
pub fn fused() -> bool {
    backend::fused()
}

/// Σ of every element of `data`, read once at the memory's streaming speed (eight independent
/// vector accumulators): a calibration kernel for "bytes / bandwidth". The order of the additions
/// differs from a left-to-right sum, so the result can differ from one in the last bits.
#[inline(never)]
pub fn stream_sum(data: &[f32]) -> f32 {
    // SAFETY: the loop needs nothing but its back-end's CPU features, which `run` checks.
    unsafe { backend::run(Sum(data)) }
}

/// A compute-bound calibration: `iterations` rounds of [`FMA_CHAINS`] independent vector
/// multiply-adds held in registers, on every thread of the pool at once ([`crate::threads`]: one
/// outside the threaded module). Returns the number of floating-point operations done in all (two per
/// lane per multiply-add), so that a caller timing it gets the peak GFLOP/s of the threads a
/// matmul runs on. The inputs and the result pass through [`black_box`](core::hint::black_box),
/// so the loop cannot be optimised away.
#[inline(never)]
pub fn fma_peak(iterations: usize) -> u64 {
    #[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
    {
        use crate::pool::shared::{Futex, POOL};
        use core::sync::atomic::{AtomicU64, Ordering};
        if crate::threads() == 1 {
            return fma_peak_here(iterations);
        }
        let flops = AtomicU64::new(0);
        POOL.run::<Futex>(&|_| {
            flops.fetch_add(fma_peak_here(iterations), Ordering::Relaxed);
        });
        flops.load(Ordering::Relaxed)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "atomics")))]
    fma_peak_here(iterations)
}

/// [`fma_peak`] on this thread alone.
fn fma_peak_here(iterations: usize) -> u64 {
    // SAFETY: the loop needs nothing but its back-end's CPU features, which `run` checks.
    unsafe { backend::run(Fma(iterations)) }
}

/// Asserts that the slices' lengths agree with the dimensions.
pub(super) fn check_shapes(
    x: &[f32],
    rows: usize,
    w: &[f32],
    d_in: usize,
    d_out: usize,
    bias: Option<&[f32]>,
    y: &[f32],
) {
    let size = |a: usize, b: usize| {
        a.checked_mul(b)
            .unwrap_or_else(|| panic!("matmul_few_rows: {a} × {b} overflows usize"))
    };
    assert_eq!(
        x.len(),
        size(rows, d_in),
        "matmul_few_rows: x has {} values, not rows × d_in = {rows} × {d_in}",
        x.len()
    );
    assert_eq!(
        w.len(),
        size(d_in, d_out),
        "matmul_few_rows: w has {} values, not d_in × d_out = {d_in} × {d_out}",
        w.len()
    );
    assert_eq!(
        y.len(),
        size(rows, d_out),
        "matmul_few_rows: y has {} values, not rows × d_out = {rows} × {d_out}",
        y.len()
    );
    if let Some(b) = bias {
        assert_eq!(
            b.len(),
            d_out,
            "matmul_few_rows: bias has {} values, not d_out = {d_out}",
            b.len()
        );
    }
}

/// Every `d_out`-long row of `y` (rows of them) set to `bias` (or zero).
///
/// # Safety
/// `y` addresses rows × d_out floats that no one else touches meanwhile; `bias`, if any, holds
/// d_out values.
unsafe fn init_with_bias(y: *mut f32, rows: usize, d_out: usize, bias: Option<&[f32]>) {
    for m in 0..rows {
        // SAFETY: the caller's y holds rows × d_out floats.
        unsafe {
            let at = y.add(m * d_out);
            match bias {
                Some(b) => core::ptr::copy_nonoverlapping(b.as_ptr(), at, d_out),
                None => core::ptr::write_bytes(at, 0, d_out),
            }
        }
    }
}

#[cfg(test)]
mod tests;

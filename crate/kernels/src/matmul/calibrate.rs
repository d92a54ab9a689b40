//! The two calibration loops, generic over the `Lanes` back-end: a streaming sum (what the
//! memory's bandwidth is) and independent multiply-add chains (what the core's arithmetic peak
//! is), which together say what "memory-bound" means on this machine.
//!
//! Separate from the matmul's loops in [`super::blocked`], which they share nothing with but the
//! traits. [`Sum`] and [`Fma`] are the loops as `Kernel`s, the form in which the dispatch point
//! hands them to a back-end; the public entry points that run them are `super::stream_sum` and
//! `super::fma_peak`.

use super::lanes::{Kernel, Lanes};
use core::hint::black_box;

/// Independent multiply-add chains in [`fma_peak`](super::fma_peak): enough to cover the FMA
/// latency (4 cycles) times the FMA units (2) of a current x86 core, with room to spare.
pub const FMA_CHAINS: usize = 10;

/// Σ data with eight independent vector accumulators (so the adds do not wait on each other).
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(super) unsafe fn sum_with<V: Lanes>(data: &[f32]) -> f32 {
    const K: usize = 8;
    let step = K * V::WIDTH;
    let split = data.len() / step * step;
    // SAFETY: every load reads step values starting below split ≤ data.len().
    unsafe {
        let mut acc = [V::zero(); K];
        let p = data.as_ptr();
        let mut i = 0;
        while i < split {
            for (k, a) in acc.iter_mut().enumerate() {
                *a = a.add(V::load(p.add(i + k * V::WIDTH)));
            }
            i += step;
        }
        let mut s = V::zero();
        for a in acc {
            s = s.add(a);
        }
        s.sum() + data[split..].iter().sum::<f32>()
    }
}

/// [`sum_with`] over the slice, to be run on a back-end.
pub(super) struct Sum<'a>(pub &'a [f32]);

impl Kernel for Sum<'_> {
    type Output = f32;

    /// # Safety
    /// The CPU has `V`'s features.
    #[inline(always)]
    unsafe fn run<V: Lanes>(self) -> f32 {
        // SAFETY: forwarded from the caller.
        unsafe { sum_with::<V>(self.0) }
    }
}

/// [`FMA_CHAINS`] chains of `a = a · m + c` (bounded: |m| < 1), `iterations` rounds.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(super) unsafe fn fma_with<V: Lanes>(iterations: usize) -> u64 {
    // SAFETY: register arithmetic only; the caller guarantees the features.
    unsafe {
        let m = V::splat(black_box(0.999_9));
        let c = V::splat(black_box(1.0e-3));
        let mut acc = [V::splat(black_box(0.5)); FMA_CHAINS];
        for _ in 0..black_box(iterations) {
            for a in acc.iter_mut() {
                *a = c.mul_add(*a, m);
            }
        }
        let mut s = V::zero();
        for a in acc {
            s = s.add(a);
        }
        black_box(s.sum());
    }
    (iterations * FMA_CHAINS * V::WIDTH * 2) as u64
}

/// [`fma_with`] for that many iterations, to be run on a back-end.
pub(super) struct Fma(pub usize);

impl Kernel for Fma {
    type Output = u64;

    /// # Safety
    /// The CPU has `V`'s features.
    #[inline(always)]
    unsafe fn run<V: Lanes>(self) -> u64 {
        // SAFETY: forwarded from the caller.
        unsafe { fma_with::<V>(self.0) }
    }
}

//! The models' inner loops over plain `f32` slices: the attention softmax and GELU here, and in
//! [`matmul`] the few-row matrix multiply that streams a layer's weights once (what makes a
//! memory-bound verification step cost about one decoding step) with its two calibration kernels.
//!
//! A crate of its own so that the wasm profile can build these loops, and only these, for speed
//! (`opt-level = 3`; the rest of the core is built for size). At the size setting the compiler
//! neither vectorises nor inlines them, and they took three times as long. The entry points are
//! `#[inline(never)]` so that they keep this crate's optimisation wherever they are called from.
//! The burn side (which tensors take this path) is `specdec::model::activation` for the softmax
//! and GELU and `specdec::model::matmul` for the matmul; `specdec::model::measure` runs the
//! calibrations. In the page's threaded module, [`pool`] splits a large matmul across threads
//! (`specdec::wasm::threads` starts them).
//!
//! The wasm builds differ in two ways that a browser must accept at load time: the `relaxed`
//! feature compiles the matmul with relaxed-SIMD FMA (the page loads that module only where the
//! browser validates relaxed SIMD), and a build with the `atomics` target feature (shared
//! memory, a nightly toolchain) has the pool. [`kernel_path`] and [`threads`] say which this
//! one is.

#![no_std]
#![cfg_attr(
    all(target_arch = "wasm32", target_feature = "atomics"),
    feature(stdarch_wasm_atomic_wait)
)]

extern crate alloc;

pub mod matmul;
pub mod pool;

pub use matmul::{
    fma_peak, fused, kernel_path, matmul_few_rows, matmul_packed, stream_sum, Packed, FEW_ROWS,
};

use core::sync::atomic::{AtomicBool, Ordering};

/// Set while a [`OneThread`] guard lives.
static ONE_THREAD: AtomicBool = AtomicBool::new(false);

/// Threads a large matmul (at least [`matmul::SPLIT_WEIGHTS`] weights) runs on here: the pool's,
/// in the threaded wasm module once the page has started its helpers and while no [`OneThread`]
/// guard lives; 1 everywhere else.
pub fn threads() -> usize {
    if ONE_THREAD.load(Ordering::Relaxed) {
        return 1;
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
    return pool::shared::POOL.threads();
    #[allow(unreachable_code)]
    1
}

/// Threads a matmul over `weights` weights runs on: [`threads`] from
/// [`matmul::SPLIT_WEIGHTS`] on, else 1.
pub fn threads_for(weights: usize) -> usize {
    if weights >= matmul::SPLIT_WEIGHTS {
        threads()
    } else {
        1
    }
}

/// While it lives, every matmul and calibration runs on the calling thread alone (the
/// calibrations of a model whose matmuls are too small to split must run as its calls do).
pub struct OneThread(bool);

/// A [`OneThread`] guard.
pub fn one_thread() -> OneThread {
    OneThread(ONE_THREAD.swap(true, Ordering::Relaxed))
}

impl Drop for OneThread {
    fn drop(&mut self) {
        ONE_THREAD.store(self.0, Ordering::Relaxed);
    }
}

/// softmax(scale · x) of every `row`-long row of `data`, in place. `row` must divide
/// `data.len()`.
#[inline(never)]
pub fn softmax_rows(data: &mut [f32], row: usize, scale: f32) {
    assert!(
        row > 0 && data.len() % row == 0,
        "softmax rows of {row} in {}",
        data.len()
    );
    for r in data.chunks_exact_mut(row) {
        softmax_row(r, scale);
    }
}

/// GELU, 0.5·x·(1 + erf(x/√2)), of every element, in place.
#[inline(never)]
pub fn gelu(data: &mut [f32]) {
    for x in data.iter_mut() {
        *x = gelu_one(*x);
    }
}

/// GELU of one value, with [`erf`].
#[inline(always)]
fn gelu_one(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * core::f32::consts::FRAC_1_SQRT_2))
}

/// One row of softmax(scale · x), in place. Each pass is a plain map or a reduction into eight
/// independent lanes, shapes the compiler turns into SIMD (a single running max or sum would be
/// a serial chain it must keep in order).
#[inline(always)]
fn softmax_row(row: &mut [f32], scale: f32) {
    const L: usize = 8;
    let split = row.len() / L * L;
    let mut lanes = [f32::NEG_INFINITY; L];
    for c in row[..split].chunks_exact(L) {
        for (m, &x) in lanes.iter_mut().zip(c) {
            *m = if x > *m { x } else { *m };
        }
    }
    let max = row[split..]
        .iter()
        .chain(&lanes)
        .fold(f32::NEG_INFINITY, |m, &x| if x > m { x } else { m });
    for x in row.iter_mut() {
        *x = exp((*x - max) * scale);
    }
    let mut lanes = [0.0f32; L];
    for c in row[..split].chunks_exact(L) {
        for (s, &x) in lanes.iter_mut().zip(c) {
            *s += x;
        }
    }
    let sum = row[split..].iter().sum::<f32>() + lanes.iter().sum::<f32>();
    let inv = 1.0 / sum;
    for x in row.iter_mut() {
        *x *= inv;
    }
}

/// eˣ for f32 without a branch or a call: x = n·ln 2 + r with |r| ≤ ln 2 / 2, Cephes' degree-6
/// polynomial for eʳ, and 2ⁿ written into the exponent bits. Within 2 ulp of the true value on
/// [−87, 88]; below −87 it returns e⁻⁸⁷ ≈ 1.6e−38 (a masked attention score's weight, against
/// a row sum ≥ 1), above 88 it returns e⁸⁸.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Adding and subtracting 1.5·2²³ rounds to the nearest integer (|x·log₂e| < 2²²).
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let n = (x * core::f32::consts::LOG2_E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = [
        1.987_569_1e-4,
        1.398_199_9e-3,
        8.333_452e-3,
        4.166_579_6e-2,
        1.666_666_5e-1,
        0.5,
    ]
    .iter()
    .fold(0.0, |p, &c| p * r + c);
    let er = p * r * r + r + 1.0;
    er * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

/// erf for f32 without a branch or a call: an odd rational function of x on [−4, 4] (erf is ±1
/// in f32 beyond), the fit Eigen and XLA use for f32, within a few 1e-7 of the true erf.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    const ALPHA: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906e-4,
        -2.954_6e-3,
        -1.609_603_3e-2,
    ];
    const BETA: [f32; 5] = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329e-3,
        -1.426_474e-2,
    ];
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = ALPHA[1..].iter().fold(ALPHA[0], |p, &a| p * x2 + a) * x;
    let q = BETA[1..].iter().fold(BETA[0], |q, &b| q * x2 + b);
    p / q
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    /// [`exp`] against f64's exp over its whole range, in relative error, and at its clamps.
    #[test]
    fn exp_is_within_two_ulp_of_the_true_value() {
        let mut worst = 0.0f64;
        for i in -870_000..=880_000 {
            let x = i as f32 / 10_000.0;
            let want = f64::from(x).exp();
            let rel = ((f64::from(exp(x)) - want) / want).abs();
            worst = worst.max(rel);
        }
        assert!(worst <= 2.5e-7, "worst relative error {worst}");
        assert_eq!(exp(0.0), 1.0);
        assert!(
            exp(-1.0e9) > 0.0 && exp(-1.0e9) < 1.0e-37,
            "masked: {}",
            exp(-1.0e9)
        );
        assert!(exp(1.0e9).is_finite());
    }

    /// erf at its extremes: ±1 to within an f32 step, odd, 0 at 0 (its values in between are
    /// checked through GELU in `specdec::model::activation`).
    #[test]
    fn erf_saturates_and_is_odd() {
        assert!((erf(100.0) - 1.0).abs() <= 2e-7 && erf(-100.0) == -erf(100.0));
        assert_eq!(erf(0.0), 0.0);
        for i in 0..1000 {
            let x = i as f32 / 100.0;
            assert_eq!(erf(-x), -erf(x));
        }
    }

    /// Rows of every length from 1 to 40 (the eight-lane split and its tail), against an f64
    /// softmax.
    #[test]
    fn softmax_rows_of_every_length_equal_the_exact_ones() {
        for row in 1..=40usize {
            let xs: std::vec::Vec<f32> = (0..3 * row)
                .map(|i| ((i * 7919) % 2001) as f32 / 50.0 - 20.0)
                .collect();
            let mut got = xs.clone();
            softmax_rows(&mut got, row, 0.5);
            for (r, g) in xs.chunks(row).zip(got.chunks(row)) {
                let m = r
                    .iter()
                    .fold(f64::NEG_INFINITY, |m, &x| m.max(f64::from(x)));
                let e: std::vec::Vec<f64> = r
                    .iter()
                    .map(|&x| ((f64::from(x) - m) * 0.5).exp())
                    .collect();
                let s: f64 = e.iter().sum();
                for (want, &g) in e.iter().map(|v| v / s).zip(g) {
                    assert!(
                        (f64::from(g) - want).abs() <= 1e-6 * want.max(1e-3),
                        "row {row}: {g} ≠ {want}"
                    );
                }
            }
        }
    }
}

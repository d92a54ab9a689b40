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
//! Each runs on two back-ends behind the `Lanes` trait: AVX2 + FMA intrinsics on x86_64 (chosen
//! at run time, the answer cached), and fixed-size lane arrays everywhere else, which the compiler
//! turns into SIMD where it has some (SIMD128 on wasm; `relaxed` adds FMA there). The portable
//! back-end is also the reference the tests compare the fast one against.
//!
//! The files follow the layers of that design, each using only the ones below it: `lanes` (the
//! `Lanes` trait and its portable back-end), `blocked` and `packed` (the matmuls' loops, generic
//! over `Lanes`) and `calibrate` (the two calibration loops, generic too), `avx2` and `relaxed`
//! (those loops compiled with their features), `split` (the threads' shares of a blocked call),
//! and this file on top: the entry points, which check the shapes and pick the back-end at run
//! time, and the tests, which hold both back-ends to a naive product through those entry points.

#[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
mod avx2;
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

use blocked::accumulate;
use calibrate::{fma_with, sum_with};
use core::ops::Range;
use lanes::LANES;

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
    unsafe { init_with_bias(y, rows, d_out, bias) };
    #[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 and FMA (just checked); the rest is the caller's.
        unsafe { avx2::matmul_acc(x, rows, w, d_in, d_out, inputs, y) };
        return;
    }
    #[cfg(all(target_arch = "wasm32", feature = "relaxed"))]
    // SAFETY: this module validated, so the browser has relaxed SIMD; the rest is the caller's.
    unsafe {
        relaxed::matmul_acc(x, rows, w, d_in, d_out, inputs, y)
    }
    #[cfg(not(all(target_arch = "wasm32", feature = "relaxed")))]
    // SAFETY: the portable back-end needs no CPU feature; the rest is the caller's.
    unsafe {
        accumulate::<[f32; LANES]>(x, rows, w, d_in, d_out, inputs, y)
    }
}

/// The matmul's back-end in this build on this CPU, in words: "AVX2 + FMA", "SIMD128 +
/// relaxed-SIMD FMA", "SIMD128 (no FMA)", or "portable".
pub fn kernel_path() -> &'static str {
    #[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
    if avx2::available() {
        return "AVX2 + FMA";
    }
    if cfg!(all(target_arch = "wasm32", feature = "relaxed")) {
        "SIMD128 + relaxed-SIMD FMA"
    } else if cfg!(all(target_arch = "wasm32", target_feature = "simd128")) {
        "SIMD128 (no FMA)"
    } else {
        "portable"
    }
}

/// Whether the matmul's multiply-adds are fused here.
pub fn fused() -> bool {
    #[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
    if avx2::available() {
        return true;
    }
    cfg!(all(target_arch = "wasm32", feature = "relaxed"))
}

/// Σ of every element of `data`, read once at the memory's streaming speed (eight independent
/// vector accumulators): a calibration kernel for "bytes / bandwidth". The order of the additions
/// differs from a left-to-right sum, so the result can differ from one in the last bits.
#[inline(never)]
pub fn stream_sum(data: &[f32]) -> f32 {
    #[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 and FMA (just checked).
        return unsafe { avx2::stream_sum(data) };
    }
    #[cfg(all(target_arch = "wasm32", feature = "relaxed"))]
    // SAFETY: this module validated, so the browser has relaxed SIMD.
    return unsafe { relaxed::stream_sum(data) };
    // SAFETY: the portable back-end needs no CPU feature.
    #[allow(unreachable_code)]
    unsafe {
        sum_with::<[f32; LANES]>(data)
    }
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
    #[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 and FMA (just checked).
        return unsafe { avx2::fma_peak(iterations) };
    }
    #[cfg(all(target_arch = "wasm32", feature = "relaxed"))]
    // SAFETY: this module validated, so the browser has relaxed SIMD.
    return unsafe { relaxed::fma_peak(iterations) };
    // SAFETY: the portable back-end needs no CPU feature.
    #[allow(unreachable_code)]
    unsafe {
        fma_with::<[f32; LANES]>(iterations)
    }
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
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    /// Deterministic values in [−1, 1) from a 64-bit LCG.
    pub(super) fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(6_364_136_223_846_793_005) | 1;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    /// The naive triple loop in f64, with Σ|bias| + Σ|x·w| per output (the scale of its rounding).
    pub(super) fn naive(
        x: &[f32],
        rows: usize,
        w: &[f32],
        d_in: usize,
        d_out: usize,
        bias: Option<&[f32]>,
    ) -> (Vec<f64>, Vec<f64>) {
        let mut y = std::vec![0.0; rows * d_out];
        let mut mag = std::vec![0.0; rows * d_out];
        for m in 0..rows {
            for o in 0..d_out {
                let b = bias.map_or(0.0, |b| f64::from(b[o]));
                let (mut s, mut a) = (b, b.abs());
                for i in 0..d_in {
                    let p = f64::from(x[m * d_in + i]) * f64::from(w[i * d_out + o]);
                    s += p;
                    a += p.abs();
                }
                y[m * d_out + o] = s;
                mag[m * d_out + o] = a;
            }
        }
        (y, mag)
    }

    type Matmul = fn(&[f32], usize, &[f32], usize, usize, Option<&[f32]>, &mut [f32]);

    /// `f` against [`naive`] over rows 1..=20 and widths with every tail (1, 3, 7, 17, 64, 160,
    /// 257), with and without bias; `y` starts as garbage, which must be overwritten.
    fn check_against_naive(f: Matmul) {
        const DIMS: [usize; 7] = [1, 3, 7, 17, 64, 160, 257];
        let mut seed = 1;
        for rows in 1..=20 {
            for d_in in DIMS {
                for d_out in DIMS {
                    for with_bias in [false, true] {
                        seed += 1;
                        let x = values(rows * d_in, seed);
                        let w = values(d_in * d_out, seed + 1000);
                        let b = values(d_out, seed + 2000);
                        let bias = with_bias.then_some(&b[..]);
                        let mut y = std::vec![f32::NAN; rows * d_out];
                        f(&x, rows, &w, d_in, d_out, bias, &mut y);
                        let (want, mag) = naive(&x, rows, &w, d_in, d_out, bias);
                        for (j, (&g, (&t, &a))) in y.iter().zip(want.iter().zip(&mag)).enumerate() {
                            assert!(
                                (f64::from(g) - t).abs() <= 1e-5 * a + 1e-30,
                                "rows {rows}, {d_in} → {d_out}, bias {with_bias}, y[{j}] = {g}, \
                                 want {t}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Both paths equal the naive product on layers wider than a panel (16384 floats in the wasm
    /// tiling, 4096 natively), so that every row count crosses from one panel to the next, and
    /// with columns left past the last whole chunk.
    #[test]
    fn layers_wider_than_a_panel_equal_the_naive_product() {
        let mut seed = 7;
        for f in [matmul_few_rows as Matmul, matmul_few_rows_portable] {
            for rows in [1, 2, 3, 4, 5, 7, 8, 16, 17] {
                for (d_in, d_out) in [(3, 16421), (17, 1057), (9, 4133)] {
                    seed += 1;
                    let x = values(rows * d_in, seed);
                    let w = values(d_in * d_out, seed + 1000);
                    let mut y = std::vec![f32::NAN; rows * d_out];
                    f(&x, rows, &w, d_in, d_out, None, &mut y);
                    let (want, mag) = naive(&x, rows, &w, d_in, d_out, None);
                    for (j, (&g, (&t, &a))) in y.iter().zip(want.iter().zip(&mag)).enumerate() {
                        assert!(
                            (f64::from(g) - t).abs() <= 1e-5 * a + 1e-30,
                            "rows {rows}, {d_in} → {d_out}, y[{j}] = {g}, want {t}"
                        );
                    }
                }
            }
        }
    }

    /// The dispatched path (AVX2 + FMA where the CPU has it) equals the naive product.
    #[test]
    fn fast_path_equals_the_naive_product() {
        check_against_naive(matmul_few_rows);
    }

    /// The portable back-end alone equals the naive product.
    #[test]
    fn portable_path_equals_the_naive_product() {
        check_against_naive(matmul_few_rows_portable);
    }

    /// Parks by yielding: the native tests' helpers are plain threads.
    struct Spin;
    impl crate::pool::Park for Spin {
        fn wait(_: &core::sync::atomic::AtomicU32, _: u32, timeout_ms: Option<u32>) {
            match timeout_ms {
                // `start` counts its waits as that long: sleep a little, so that it does not give
                // up on helpers that a loaded machine has not yet run.
                Some(ms) => {
                    std::thread::sleep(std::time::Duration::from_millis(ms.min(100).into()))
                }
                None => std::thread::yield_now(),
            }
        }
        fn wake(_: &core::sync::atomic::AtomicU32) {}
    }

    /// Stops `pool`'s helpers when dropped, so that a failed assertion inside a thread scope
    /// fails the test instead of waiting forever for helpers that never leave.
    struct Stop<'a>(&'a crate::pool::Pool);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.stop::<Spin>();
        }
    }

    /// The shares of inputs cover 0..d_in in order, each starting at a multiple of a block.
    #[test]
    fn input_shares_tile_the_inputs_in_whole_blocks() {
        for d_in in [0, 1, 7, 8, 9, 100, 1024, 4097] {
            for of in 1..=5 {
                let mut next = 0;
                for share in 0..of {
                    let r = input_share(d_in, share, of);
                    assert_eq!(r.start, next, "{d_in} / {of}: share {share} {r:?}");
                    assert!(r.start % 8 == 0 || r.start == d_in);
                    assert!(r.end >= r.start);
                    next = r.end;
                }
                assert_eq!(next, d_in, "{d_in} / {of}");
            }
        }
    }

    /// A matmul split by inputs across a pool of 3 threads (the caller and two helpers, real
    /// threads running the pool's protocol) agrees with one thread within 1e-5 relative (its
    /// partial sums are added in another order), for shapes with every kind of tail and with
    /// fewer blocks of inputs than threads; each row is the same bits whatever the rows beside
    /// it; and the helpers leave on `stop`.
    #[test]
    fn a_matmul_split_across_the_pool_agrees_with_one_thread() {
        use crate::pool::Pool;
        static POOL: Pool = Pool::new();
        std::thread::scope(|s| {
            for id in 1..3 {
                s.spawn(move || POOL.helper::<Spin>(id));
            }
            let _stop = Stop(&POOL);
            assert_eq!(POOL.start::<Spin>(3, 60_000), 3);
            let mut seed = 77;
            for (rows, d_in, d_out) in [
                (1, 64, 4096),
                (5, 33, 1000),
                (16, 128, 257),
                (17, 9, 47),
                (3, 160, 16),
                (32, 64, 515),
                (2, 7, 1),
            ] {
                for with_bias in [false, true] {
                    seed += 1;
                    let x = values(rows * d_in, seed);
                    let w = values(d_in * d_out, seed + 1000);
                    let b = values(d_out, seed + 2000);
                    let bias = with_bias.then_some(&b[..]);
                    let mut one = std::vec![f32::NAN; rows * d_out];
                    matmul_few_rows(&x, rows, &w, d_in, d_out, bias, &mut one);
                    let three = |x: &[f32], rows: usize| {
                        let mut y = std::vec![f32::NAN; rows * d_out];
                        split(x, rows, &w, d_in, d_out, bias, &mut y, 3, |job| {
                            POOL.run::<Spin>(job)
                        });
                        y
                    };
                    let split3 = three(&x, rows);
                    let scale = one.iter().fold(1.0f32, |m, v| m.max(v.abs()));
                    for (a, b) in one.iter().zip(&split3) {
                        assert!(
                            (a - b).abs() <= 1e-5 * scale,
                            "{rows} × {d_in} → {d_out}: {a} against {b}"
                        );
                    }
                    // The last row alone: the same bits as in the call over all rows.
                    let last = three(&x[(rows - 1) * d_in..], 1);
                    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&last), bits(&split3[(rows - 1) * d_out..]));
                }
            }
        });
    }

    /// The pool grants only the helpers that came, without a gap in their ids: with helper 2
    /// missing, helpers 1 and 3 give 2 threads; with none, 1 (and a job runs on the caller).
    #[test]
    fn the_pool_grants_the_helpers_that_came() {
        use crate::pool::Pool;
        static GAP: Pool = Pool::new();
        std::thread::scope(|s| {
            for id in [1, 3] {
                s.spawn(move || GAP.helper::<Spin>(id));
            }
            let _stop = Stop(&GAP);
            // Helper 3 came too, but without helper 2 it is not granted (and leaves).
            while GAP.helpers_in() != 0b1010 {
                std::thread::yield_now();
            }
            assert_eq!(GAP.start::<Spin>(4, 50), 2);
            let hits = core::sync::atomic::AtomicU32::new(0);
            GAP.run::<Spin>(&|share| {
                hits.fetch_add(1 << (8 * share), core::sync::atomic::Ordering::Relaxed);
            });
            assert_eq!(hits.into_inner(), 0x0101, "shares 0 and 1, once each");
            // A second start changes nothing; a second helper 1 leaves at once.
            assert_eq!(GAP.start::<Spin>(4, 0), 2);
            GAP.helper::<Spin>(1);
        });
        let alone = Pool::new();
        assert_eq!(alone.start::<Spin>(4, 30), 1);
        let mut ran = 0;
        let once = core::sync::atomic::AtomicU32::new(0);
        alone.run::<Spin>(&|share| {
            once.fetch_add(1 + share as u32, core::sync::atomic::Ordering::Relaxed);
        });
        ran += once.into_inner();
        assert_eq!(ran, 1);
    }

    /// No rows, no inputs (y = bias) and no outputs are fine.
    #[test]
    fn empty_dimensions_give_the_bias() {
        let b = [1.5f32, -2.0, 3.0];
        let mut y = [9.0f32; 6];
        matmul_few_rows(&[], 2, &[], 0, 3, Some(&b), &mut y);
        assert_eq!(y, [1.5, -2.0, 3.0, 1.5, -2.0, 3.0]);
        matmul_few_rows(&[], 2, &[], 0, 3, None, &mut y);
        assert_eq!(y, [0.0; 6]);
        matmul_few_rows(&[], 0, &[1.0; 12], 4, 3, Some(&b), &mut []);
        matmul_few_rows(&[1.0; 8], 2, &[], 4, 0, None, &mut []);
    }

    /// Inconsistent lengths panic and name the offending slice.
    #[test]
    #[should_panic(expected = "w has 11 values")]
    fn a_short_weight_matrix_panics() {
        let mut y = [0.0f32; 3];
        matmul_few_rows(&[1.0; 4], 1, &[0.0; 11], 4, 3, None, &mut y);
    }

    /// Inconsistent lengths panic and name the offending slice.
    #[test]
    #[should_panic(expected = "bias has 2 values")]
    fn a_short_bias_panics() {
        let mut y = [0.0f32; 3];
        matmul_few_rows(&[1.0; 4], 1, &[0.0; 12], 4, 3, Some(&[0.0; 2]), &mut y);
    }

    /// [`stream_sum`] equals an f64 sum at every length around its 64-value steps.
    #[test]
    fn stream_sum_equals_a_plain_sum() {
        for n in (0..300).chain([4096, 100_003]) {
            let data = values(n, n as u64 + 7);
            let want: f64 = data.iter().map(|&v| f64::from(v)).sum();
            let mag: f64 = data.iter().map(|&v| f64::from(v).abs()).sum();
            let got = f64::from(stream_sum(&data));
            assert!(
                (got - want).abs() <= 1e-6 * mag + 1e-30,
                "n {n}: {got} ≠ {want}"
            );
            let portable = f64::from(unsafe { sum_with::<[f32; LANES]>(&data) });
            assert!(
                (portable - want).abs() <= 1e-6 * mag + 1e-30,
                "n {n}: {portable}"
            );
        }
    }

    /// [`fma_peak`] counts two operations per lane per multiply-add and scales with iterations.
    #[test]
    fn fma_peak_counts_its_operations() {
        assert_eq!(fma_peak(0), 0);
        assert_eq!(fma_peak(1000), 1000 * FMA_CHAINS as u64 * 8 * 2);
    }
}

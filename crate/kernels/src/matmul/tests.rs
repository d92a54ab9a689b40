//! The matmul's tests: every path against a naive product in f64 ([`assert_naive`]), the split
//! across a pool of real threads against one thread, the pool's grants, empty and inconsistent
//! shapes, the streaming sum and the FMA peak's count.

extern crate std;
use super::calibrate::sum_with;
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

/// A case's `x` (rows × d_in), `w` (d_in × d_out) and bias values (d_out) from `seed`.
pub(super) fn inputs(
    (rows, d_in, d_out): (usize, usize, usize),
    seed: u64,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let x = values(rows * d_in, seed);
    (
        x,
        values(d_in * d_out, seed + 1000),
        values(d_out, seed + 2000),
    )
}

/// The naive triple loop in f64, with Σ|bias| + Σ|x·w| per output (the scale of its rounding).
fn naive(
    (x, rows): (&[f32], usize),
    w: &[f32],
    (d_in, d_out): (usize, usize),
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

/// `y` (rows × d_out) equals the naive product within 1e-5 of each output's scale (the sum of
/// the magnitudes it adds up); `what` names the case.
pub(super) fn assert_naive(
    (x, rows): (&[f32], usize),
    w: &[f32],
    (d_in, d_out): (usize, usize),
    bias: Option<&[f32]>,
    y: &[f32],
    what: &dyn core::fmt::Display,
) {
    let (want, mag) = naive((x, rows), w, (d_in, d_out), bias);
    assert_eq!(y.len(), want.len(), "{what}");
    for (j, (&g, (&t, &a))) in y.iter().zip(want.iter().zip(&mag)).enumerate() {
        assert!(
            (f64::from(g) - t).abs() <= 1e-5 * a + 1e-30,
            "{what}, y[{j}] = {g}, want {t}"
        );
    }
}

type Matmul = fn(&[f32], usize, &[f32], usize, usize, Option<&[f32]>, &mut [f32]);

/// `f` on one case of random inputs (`seed`), `y` starting as garbage, against [`naive`].
fn check_case(f: Matmul, (rows, d_in, d_out): (usize, usize, usize), with_bias: bool, seed: u64) {
    let (x, w, b) = inputs((rows, d_in, d_out), seed);
    let bias = with_bias.then_some(&b[..]);
    let mut y = std::vec![f32::NAN; rows * d_out];
    f(&x, rows, &w, d_in, d_out, bias, &mut y);
    let what = std::format!("rows {rows}, {d_in} → {d_out}, bias {with_bias}");
    assert_naive((&x, rows), &w, (d_in, d_out), bias, &y, &what);
}

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
                    check_case(f, (rows, d_in, d_out), with_bias, seed);
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
                check_case(f, (rows, d_in, d_out), false, seed);
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
            Some(ms) => std::thread::sleep(std::time::Duration::from_millis(ms.min(100).into())),
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
                let (x, w, b) = inputs((rows, d_in, d_out), seed);
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

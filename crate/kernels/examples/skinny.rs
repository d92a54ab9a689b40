//! Benchmark of `matmul_few_rows` on the widened target's eight weight matrices (d = 1024,
//! f = 2560: per layer [d, 3d], [d, d], [d, f], [f, d]; two layers; 75.5 MB of f32): the time of
//! all eight for k = 1..16 rows, T(k)/T(1), GB/s and GFLOP/s, beside the memory floor (the
//! weights' bytes over `stream_sum`'s bandwidth on the same bytes) and the core's FMA peak.
//!
//! `cargo run --release -p specdec-kernels --example skinny [portable]`; one core, so run
//! nothing else meanwhile. With `portable` it times the portable back-end instead.

use std::hint::black_box;
use std::time::Instant;

use specdec_kernels::matmul::matmul_few_rows_portable;
use specdec_kernels::{fma_peak, matmul_few_rows, stream_sum, FEW_ROWS};

/// Repetitions per measurement; the median is reported.
const REPS: usize = 31;

/// Median seconds of `REPS` runs of `f`, after one warm-up run.
fn median_time(mut f: impl FnMut()) -> f64 {
    f();
    let mut ts: Vec<f64> = (0..REPS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    ts.sort_by(f64::total_cmp);
    ts[REPS / 2]
}

/// Deterministic values in [−0.5, 0.5) from a 64-bit LCG.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect()
}

fn main() {
    let portable = std::env::args().any(|a| a == "portable");
    let matmul = if portable {
        matmul_few_rows_portable
    } else {
        matmul_few_rows
    };
    let (d, f) = (1024, 2560);
    // [d_in, d_out] of each matrix, burn's `Linear` layout.
    let shapes = [(d, 3 * d), (d, d), (d, f), (f, d)].repeat(2);
    let weights: Vec<Vec<f32>> = shapes
        .iter()
        .enumerate()
        .map(|(s, &(i, o))| values(i * o, s as u64 + 1))
        .collect();
    let biases: Vec<Vec<f32>> = shapes.iter().map(|&(_, o)| values(o, 99)).collect();
    let elements: usize = shapes.iter().map(|&(i, o)| i * o).sum();
    let bytes = (elements * 4) as f64;
    let x = values(FEW_ROWS * f, 7);
    let mut y = vec![0.0f32; FEW_ROWS * 3 * d];

    let flat: Vec<f32> = weights.concat();
    let t_stream = median_time(|| {
        black_box(stream_sum(black_box(&flat)));
    });
    drop(flat);
    let bandwidth = bytes / t_stream;
    let iterations = 20_000_000;
    let t0 = Instant::now();
    let flops = fma_peak(iterations);
    let peak = flops as f64 / t0.elapsed().as_secs_f64();

    println!(
        "weights {:.1} MB; stream_sum {:.2} ms = {:.1} GB/s; FMA peak {:.1} GFLOP/s; back-end {}",
        bytes / 1e6,
        t_stream * 1e3,
        bandwidth / 1e9,
        peak / 1e9,
        if portable { "portable" } else { "dispatched" }
    );
    println!(" k   T(k) ms  T(k)/T(1)  GB/s  GFLOP/s  T/floor");
    let mut t1 = 0.0;
    for k in [1, 2, 3, 4, 5, 6, 8, 12, 16] {
        let t = median_time(|| {
            for ((w, b), &(i, o)) in weights.iter().zip(&biases).zip(&shapes) {
                matmul(&x[..k * i], k, w, i, o, Some(b), black_box(&mut y[..k * o]));
            }
        });
        if k == 1 {
            t1 = t;
        }
        println!(
            "{k:2}  {:8.2}  {:9.2}  {:4.1}  {:7.1}  {:7.2}",
            t * 1e3,
            t / t1,
            bytes / t / 1e9,
            2.0 * k as f64 * elements as f64 / t / 1e9,
            t / t_stream
        );
    }
    println!(
        "memory floor (bytes / stream bandwidth) {:.2} ms; T(1) {:.2} ms = {:.2}× the floor",
        t_stream * 1e3,
        t1 * 1e3,
        t1 / t_stream
    );
}

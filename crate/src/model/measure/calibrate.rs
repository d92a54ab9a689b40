//! The device's two calibrations, which place a model's roofline under its measured points
//! (`super`): the bandwidth that a weight-streaming call achieves, for the memory floor, and the
//! arithmetic peak, for the compute slope. A file of its own: one procedure for the CPU backends
//! and one for a GPU, apart from the timing of calls they share with the roofline.

use super::{clock_resolution, time_blocks, time_blocks_within, Timing};
use crate::clock::Clock;
use crate::error::Error;
use crate::model::floats;
use burn::tensor::{Device, Tensor};

/// The device's two calibrations.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Calibration {
    /// What one row through a widened target's linear kernel streams, over 64 MB of weights.
    pub bandwidth_gbs: f64,
    /// A compute-bound kernel (matmuls on a GPU, an FMA loop on a CPU).
    pub peak_gflops: f64,
    /// The clock's measured resolution.
    pub clock_resolution_us: f64,
    /// What it was measured on: another measurement on the same may reuse it.
    pub on: On,
    /// How long the calibrations took, µs.
    pub took_us: f64,
}

/// What a calibration holds for: the backend, and on a CPU the threads and whether its
/// multiply-adds are fused (a model too small to split is calibrated on one thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct On {
    pub backend: &'static str,
    pub threads: usize,
    pub fma: bool,
}

/// Floats the bandwidth calibration reads: 64 MB, twice the largest last-level cache it meets.
const STREAM_FLOATS: usize = 16 << 20;
/// The inputs of the calibration's weight matrix on the CPU (4096 × 4096 floats: 64 MB).
const STREAM_IN: usize = 4096;
/// Layers of 64 MB in the longer call of the GPU's bandwidth calibration (the shorter has 2).
const GPU_LAYERS: usize = 6;
/// Untimed calls of the bandwidth calibration before it is timed (≈ 0.1 s in a browser).
const WARM_STREAMS: usize = 20;

/// The device's bandwidth and peak. The bandwidth is what a weight-streaming call achieves, so
/// that no call of the model can beat the floor it draws: one row through the kernel, access
/// pattern and threads of a widened target's linear layers over a 64 MB weight matrix, far
/// larger than a last-level cache (a plain streaming sum was beaten: in a browser it ran at half
/// a decode call's speed; so was the row-major kernel once the layers were packed). On the CPU
/// backends that kernel is [`specdec_kernels::matmul_packed`] where the layers are packed
/// ([`crate::model::matmul::PACKS`]), else [`specdec_kernels::matmul_few_rows`], and the peak is
/// [`specdec_kernels::fma_peak`] on the same threads at once ([`specdec_kernels::threads`]). On a
/// GPU the kernel is the wide path's linear kernel, timed as what each more layer adds to a call
/// (without the call's fixed cost), and the peak is the best rate of square matmuls, also as what
/// more of them add to a call, sized to the device ([`gpu_peak`]). Either peak is only a
/// calibration: the roofline raises it to what the model's own calls reach (`super::ceiling`).
pub async fn calibrate(device: &Device, on: On, clock: Clock<'_>) -> Result<Calibration, Error> {
    let started = clock();
    let resolution = clock_resolution(clock);
    let (bandwidth_gbs, peak_gflops) = if on.backend != "wgpu" {
        on_the_cpu(resolution, clock).await?
    } else {
        on_the_gpu(device, resolution, clock).await?
    };
    Ok(Calibration {
        bandwidth_gbs,
        peak_gflops,
        clock_resolution_us: resolution,
        on,
        took_us: clock() - started,
    })
}

/// [`calibrate`] on the CPU backends: (GB/s, GFLOP/s).
async fn on_the_cpu(resolution: f64, clock: Clock<'_>) -> Result<(f64, f64), Error> {
    let w: Vec<f32> = (0..STREAM_FLOATS).map(|i| (i % 7) as f32 * 1e-3).collect();
    let (d_in, d_out) = (STREAM_IN, STREAM_FLOATS / STREAM_IN);
    let packed = crate::model::matmul::PACKS.then(|| specdec_kernels::Packed::new(&w, d_in, d_out));
    let w = if packed.is_some() { Vec::new() } else { w };
    let x = vec![1.0f32; STREAM_IN];
    let mut y = vec![0.0f32; d_out];
    let mut stream = || {
        let x = std::hint::black_box(&x);
        match &packed {
            Some(p) => specdec_kernels::matmul_packed(x, 1, std::hint::black_box(p), None, &mut y),
            None => {
                let w = std::hint::black_box(&w);
                specdec_kernels::matmul_few_rows(x, 1, w, d_in, d_out, None, &mut y)
            }
        }
        std::hint::black_box(&y);
    };
    // Warm well before timing: a browser runs a function first in its baseline tier and
    // swaps in the optimised code only for later calls; measured cold, the kernel read at
    // two thirds of the speed a decode call then reaches.
    for _ in 0..WARM_STREAMS {
        stream();
    }
    let (read, _) = time_blocks(
        async || {
            stream();
            Ok(())
        },
        resolution,
        clock,
    )
    .await?;
    let iterations = 1 << 16;
    let mut flops = 0;
    let (fma, _) = time_blocks(
        async || {
            flops = specdec_kernels::fma_peak(iterations);
            Ok(())
        },
        resolution,
        clock,
    )
    .await?;
    Ok((
        (STREAM_FLOATS * 4) as f64 / read.median_us / 1e3,
        flops as f64 / fma.median_us / 1e3,
    ))
}

/// [`calibrate`] on a GPU: (GB/s, GFLOP/s).
async fn on_the_gpu(
    device: &Device,
    resolution: f64,
    clock: Clock<'_>,
) -> Result<(f64, f64), Error> {
    // Any call on a GPU first pays its submission and read-back (0.8 ms through wgpu on an
    // H200): one timed 64 MB sum measured that instead of the bandwidth (63.6 GB/s there, where
    // the ×24 target's calls then took half its "floor"), and burn's sum, even as a slope, read
    // at about 80 GB/s, below what the model's own layers stream. So the bandwidth is what the
    // widened target's linear kernel streams, as on the CPU: one row through 4096 × 4096
    // weights, as the slope between calls of `GPU_LAYERS` and of 2 such layers in a row, each
    // reading the last one's output, over two weight matrices in turn (128 MB, more than a
    // GPU's L2; both calls alternate, so neither reads from a cache the other cannot). Where
    // noise leaves no clear slope, or a steeper one, the longer call's time per layer stands
    // instead: its share of the fixed cost only lowers the bandwidth, and the floor it draws is
    // still under every call of a model up to GPU_LAYERS × 64 MB. Each timing keeps within
    // GPU_BUDGET_US: on a GPU emulated on the CPU one such call takes a tenth of a second.
    let layers = [0, 1]
        .map(|_| burn::nn::LinearConfig::new(STREAM_IN, STREAM_FLOATS / STREAM_IN).init(device));
    let layer = |x: Tensor<2>, l: &burn::nn::Linear| -> Tensor<2> {
        #[cfg(feature = "wgpu")]
        if let Some(y) = crate::model::gpu::streamed(x.clone(), l) {
            return y;
        }
        l.forward(x)
    };
    let x = Tensor::<2>::ones([1, STREAM_IN], device);
    let reads = async |n: usize| {
        let (timing, _) = time_blocks_within(
            async || {
                let mut y = layer(x.clone(), &layers[0]);
                for r in 1..n {
                    y = layer(y, &layers[r % 2]);
                }
                std::hint::black_box(floats(y).await?);
                Ok(())
            },
            resolution,
            clock,
            GPU_BUDGET_US,
        )
        .await?;
        Ok::<_, Error>(timing)
    };
    // A device so slow that two layers take a tenth of a second (a GPU emulated on the CPU)
    // compares them with three: six would cost it seconds a call.
    let two = reads(2).await?;
    let layers_many = match two.median_us > SLOW_CALL_US {
        true => 3,
        false => GPU_LAYERS,
    };
    let many = reads(layers_many).await?;
    let read_us = per_step(two, many, layers_many - 2, layers_many);
    drop(layers);
    let peak = gpu_peak(device, resolution, clock).await?;
    Ok(((STREAM_FLOATS * 4) as f64 / read_us / 1e3, peak))
}

/// Sizes of the square matmuls the GPU's peak tries, smallest first.
const MATMUL_SIZES: [usize; 4] = [128, 256, 512, 1024];
/// A call of two 64 MB layers slower than this (µs) marks a slow device: fewer layers.
const SLOW_CALL_US: f64 = 100_000.0;
/// Matmuls more in the longer of the two calls whose difference gives the GPU's peak.
const MATMULS: usize = 4;
/// A timing of the GPU's calibrations keeps within about this, once warm (µs).
const GPU_BUDGET_US: f64 = 1.5e6;
/// The next size is tried only while its longer call would take less than this (µs), judged
/// from this size's: on a GPU emulated on the CPU a larger one would take seconds a call.
const LONG_CALL_US: f64 = 100_000.0;

/// The time one more step adds to a call, from calls of `few` and `few + more` steps (`many`
/// steps in all, timed as `short` and `long`): the slope where it stands out of the noise and is
/// no steeper than the long call's own time per step, else that time per step (which counts its
/// share of the call's fixed cost, so it errs on the slow side).
pub fn per_step(short: Timing, long: Timing, more: usize, many: usize) -> f64 {
    let per = long.median_us / many as f64;
    let rise = long.median_us - short.median_us;
    if rise > short.iqr_us + long.iqr_us {
        (rise / more as f64).min(per)
    } else {
        per
    }
}

/// The GPU's arithmetic peak, GFLOP/s: the best rate of square matmuls on operands its caches
/// hold, from 128² up to 1024² while a call stays short (an emulated GPU stops at the first),
/// each timed as what [`MATMULS`] more matmuls in one call add, so that the call's submission
/// and read-back do not count as arithmetic.
async fn gpu_peak(device: &Device, resolution: f64, clock: Clock<'_>) -> Result<f64, Error> {
    let mut best = 0.0f64;
    for n in MATMUL_SIZES {
        // a / n: a chain of its products stays a / n, however long.
        let a = Tensor::<2>::ones([n, n], device).div_scalar(n as f32);
        let chain = async |count: usize| {
            time_blocks_within(
                async || {
                    let mut y = a.clone().matmul(a.clone());
                    for _ in 1..count {
                        y = y.matmul(a.clone());
                    }
                    std::hint::black_box(floats(y.sum()).await?);
                    Ok(())
                },
                resolution,
                clock,
                GPU_BUDGET_US,
            )
            .await
        };
        let ((one, _), (long, _)) = (chain(1).await?, chain(1 + MATMULS).await?);
        let us = per_step(one, long, MATMULS, 1 + MATMULS);
        best = best.max(2.0 * (n * n * n) as f64 / us / 1e3);
        // The next size has 8× the flops: tried only while its longer call would stay short.
        if 8.0 * long.median_us > LONG_CALL_US {
            break;
        }
    }
    Ok(best)
}

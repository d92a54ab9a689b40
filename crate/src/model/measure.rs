//! The roofline measured on this device (lecture §1.2, demo 1 measured): the time of one target
//! call against the tokens it feeds (k new tokens in each of `batch` sequences, on a warm
//! 32-token cache, its logits read back as a decoder must), beside two calibrations of the same
//! device — its streaming bandwidth and its arithmetic peak — that place the model's roofline
//! under the measured points: the memory floor (weight bytes / bandwidth) and the compute slope.
//! The slope's peak is a ceiling: where a call of the model itself computes faster than the
//! calibration did, its rate stands instead ([`ceiling`]), and the report says which call. The
//! calibrations take seconds on an emulated GPU, so a caller may hand earlier ones back
//! ([`roofline`]'s `known`): the page calibrates once per device.
//!
//! Every call is timed in blocks, as a browser's coarse clock needs ([`timing`]).
//!
//! With the target's weights offloaded (`super::offload`), every call pays their crossing first;
//! [`transfer`] times the crossing alone, and the roofline reports it beside T(k).

mod calibrate;
pub mod timing;

pub use calibrate::{calibrate, per_step, Calibration, On};
pub use timing::{
    blocks_within, clock_resolution, iqr, quartiles, time_blocks, time_blocks_within, Timing,
    BLOCKS, BLOCK_US, FEWEST_BLOCKS,
};

use super::{floats, Decoder, KvCache};
use crate::clock::Clock;
use crate::error::{Error, Range, Text};
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};

/// Cached tokens before every timed call (as in [`super::bench`]), fewer where the k new ones
/// would not fit the model's positions beside them (the LikesWorld models have 64: k = 64 runs
/// on an empty cache).
pub const CACHED: usize = 32;
/// Tokens per call the measurement takes.
pub const K: Range = Range::new("k", 1.0, 64.0);
/// Sequences per call.
pub const BATCH: Range = Range::new("batch", 1.0, 64.0);
/// The k of the lecture's demo 1, measured.
pub const KS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];
/// T(k) / T(1) above which verification is no longer "almost free": the knee.
pub const KNEE_RATIO: f64 = 1.25;

/// One measured point: a call feeding `k` tokens to each of `batch` sequences.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Point {
    pub k: usize,
    pub batch: usize,
    pub median_us: f64,
    pub iqr_us: f64,
    /// Calls per timed block.
    pub calls_per_block: usize,
}

/// One call of `model`: `k` new tokens in each of `batch` rows on a warm [`CACHED`]-token cache.
pub async fn time_call(
    model: &Decoder,
    device: &Device,
    k: usize,
    batch: usize,
    resolution_us: f64,
    clock: Clock<'_>,
) -> Result<Point, Error> {
    K.check(k as f64)?;
    BATCH.check(batch as f64)?;
    let rows = |v: Vec<i64>| -> Vec<i64> { (0..batch).flat_map(|_| v.clone()).collect() };
    let positions_held = model.position.weight.dims()[0];
    if k > positions_held {
        return Err(Error::OutOfRange {
            name: "k",
            value: k as f64,
            allowed: Text::new("k ≤ the model's positions", "k ≤ 模型的位置数"),
        });
    }
    let cached = CACHED.min(positions_held - k);
    let mut cache = KvCache::new(model.n_layers());
    if cached > 0 {
        let prefix: Vec<i64> = (0..cached as i64).map(|i| 6 + i % 30).collect();
        let prefix_mask: Vec<bool> = (0..batch * cached)
            .flat_map(|r| (0..cached).map(move |c| c <= r % cached))
            .collect();
        model.forward(
            Tensor::<2, Int>::from_data(TensorData::new(rows(prefix), [batch, cached]), device),
            Tensor::<2, Int>::from_data(
                TensorData::new(rows((0..cached as i64).collect()), [batch, cached]),
                device,
            ),
            Tensor::<3, Bool>::from_data(
                TensorData::new(prefix_mask, [batch, cached, cached]),
                device,
            ),
            &mut cache,
        );
    }
    let tokens = rows((0..k as i64).map(|i| 6 + i % 30).collect());
    let positions = rows((cached as i64..(cached + k) as i64).collect());
    let mask: Vec<bool> = (0..batch * k)
        .flat_map(|r| (0..cached + k).map(move |c| c <= cached + r % k))
        .collect();
    let (timing, calls_per_block) = time_blocks(
        async || {
            let logits = model.forward(
                Tensor::<2, Int>::from_data(TensorData::new(tokens.clone(), [batch, k]), device),
                Tensor::<2, Int>::from_data(TensorData::new(positions.clone(), [batch, k]), device),
                Tensor::<3, Bool>::from_data(
                    TensorData::new(mask.clone(), [batch, k, cached + k]),
                    device,
                ),
                &mut cache,
            );
            std::hint::black_box(floats(logits).await?);
            cache.narrow(cached);
            Ok(())
        },
        resolution_us,
        clock,
    )
    .await?;
    Ok(Point {
        k,
        batch,
        median_us: timing.median_us,
        iqr_us: timing.iqr_us,
        calls_per_block,
    })
}

/// Offloaded weights' crossing alone, measured: every weight written from host memory into the
/// device's buffers, then the queue drained (lecture §4.6; `super::offload`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Transfer {
    /// Weight bytes per crossing.
    pub bytes: usize,
    /// One crossing: median and interquartile range, µs.
    pub crossing: Timing,
    /// Bytes over the median crossing, GB/s.
    pub gb_per_s: f64,
}

impl Transfer {
    /// In words, for the command line: "76.2 MB cross before every call: 22463 µs a crossing
    /// (IQR 5646), 3.39 GB/s".
    pub fn summary(&self) -> String {
        format!(
            "{:.1} MB cross before every call: {:.0} µs a crossing (IQR {:.0}), {:.2} GB/s",
            self.bytes as f64 / 1e6,
            self.crossing.median_us,
            self.crossing.iqr_us,
            self.gb_per_s
        )
    }
}

/// Times `model`'s crossing in blocks, as every measured call is timed ([`time_blocks`]);
/// `None` when its weights are not offloaded.
pub async fn transfer(
    model: &Decoder,
    resolution_us: f64,
    clock: Clock<'_>,
) -> Result<Option<Transfer>, Error> {
    let Some(host) = model.host_weights() else {
        return Ok(None);
    };
    let (crossing, _) = time_blocks(
        async || {
            host.cross();
            host.drain().await
        },
        resolution_us,
        clock,
    )
    .await?;
    Ok(Some(Transfer {
        bytes: host.bytes(),
        crossing,
        gb_per_s: host.bytes() as f64 / crossing.median_us.max(1e-9) / 1e3,
    }))
}

/// The measured roofline of one model on one device.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Roofline {
    pub backend: &'static str,
    /// How many times wider than the trained target the model is.
    pub width: usize,
    pub params: usize,
    /// Bytes of weights one call reads (every matrix once).
    pub weight_bytes: usize,
    pub rows: Vec<Point>,
    pub bandwidth_gbs: f64,
    /// The compute slope's peak: the calibration's, or the rate of the model's own fastest call
    /// where that is higher ([`ceiling`]): a ceiling no measured point lies above.
    pub peak_gflops: f64,
    /// The calibration's own peak (equal to `peak_gflops` unless a call did better).
    pub calibrated_peak_gflops: f64,
    /// The k of the call whose rate is `peak_gflops`, where it beat the calibration's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_from_k: Option<usize>,
    /// Whether the calibrations were measured before, in this page's worker, and reused.
    pub calibration_reused: bool,
    /// The calibrations as measured (`took_us`: how long they took), for the next measurement
    /// on the same device to reuse.
    pub calibration: Calibration,
    pub clock_resolution_us: f64,
    /// weight_bytes / bandwidth: no call can be faster.
    pub memory_floor_us: f64,
    /// The roofline model's knee on this device: the k where 2·params·k·batch flops take as long
    /// as reading the weights (k = peak · weight bytes / (2 · params · batch · bandwidth)).
    pub model_knee_k: f64,
    /// The measured knee ([`knee`]); `None` when T(k) stays within [`KNEE_RATIO`] of T(1).
    pub knee_k: Option<f64>,
    /// With the weights offloaded: their crossing alone, which every measured call paid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer: Option<Transfer>,
    /// How the CPU ran the calls' matmuls (threads, FMA, kernel); `None` on a GPU.
    pub execution: Option<Execution>,
}

/// How a CPU backend runs the target's linear layers here.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Execution {
    /// Threads this model's matmuls ran on: the pool's ([`Execution::pool`]) for a model whose
    /// matrices are large enough to split, else 1.
    pub threads: usize,
    /// Threads a large matmul is split across here (the page's threaded module with its helpers
    /// started; 1 everywhere else).
    pub pool: usize,
    /// Whether its multiply-adds are fused.
    pub fma: bool,
    /// The matmul's back-end in words.
    pub kernel: &'static str,
    /// Whether the model's large layers read weights packed in strips (`super::matmul::pack`).
    pub packed: bool,
    /// The most rows a call that the row-major kernel takes (the layers not packed: all of them
    /// natively, the smaller ones in wasm); burn's matmul runs past them. `None`: burn's matmul
    /// throughout (ndarray). Packed layers take any number.
    pub most_rows: Option<usize>,
}

/// [`Execution`] of `model` on `backend`: flex runs the few-rows kernel (`super::matmul`),
/// ndarray burn's matmul on one thread; a GPU has none.
pub fn execution(model: &Decoder, backend: super::device::Backend) -> Option<Execution> {
    use super::device::Backend;
    match backend {
        Backend::Flex => Some(Execution {
            threads: specdec_kernels::threads_for(largest_matrix(model)),
            pool: specdec_kernels::threads(),
            fma: specdec_kernels::fused(),
            kernel: specdec_kernels::kernel_path(),
            packed: model.blocks.iter().any(|b| b.packed.is_some()),
            most_rows: Some(super::matmul::most_rows()),
        }),
        Backend::Ndarray => Some(Execution {
            threads: 1,
            pool: 1,
            fma: false,
            kernel: "burn's ndarray matmul",
            packed: false,
            most_rows: None,
        }),
        Backend::Wgpu => None,
    }
}

/// Weights of `model`'s largest linear layer: whether its matmuls are split across threads.
fn largest_matrix(model: &Decoder) -> usize {
    let blocks = model
        .blocks
        .iter()
        .flat_map(|b| [&b.qkv, &b.out, &b.up, &b.down]);
    blocks
        .chain([&model.head])
        .map(|l| l.weight.dims().iter().product::<usize>())
        .max()
        .unwrap_or(0)
}

/// Bytes of weights one call of `model` reads: every matrix of every block and the head (the
/// embeddings only a row per token).
pub fn weight_bytes(model: &Decoder) -> usize {
    let matrices = model
        .blocks
        .iter()
        .flat_map(|b| [&b.qkv, &b.out, &b.up, &b.down]);
    4 * matrices
        .chain([&model.head])
        .map(|l| l.weight.dims().iter().product::<usize>())
        .sum::<usize>()
}

/// The model a roofline measures, and where: what [`Roofline`] reports beside its points.
#[derive(Clone, Copy)]
pub struct Subject<'a> {
    pub model: &'a Decoder,
    /// How many times wider than the trained target `model` is.
    pub width: usize,
    /// The backend `device` belongs to: the calibrations run on the CPU unless it is wgpu.
    pub backend: super::device::Backend,
    pub device: &'a Device,
}

/// What a calibration of `backend` holds for, with this `execution` of the model's matmuls.
pub fn calibrated_on(backend: super::device::Backend, execution: Option<Execution>) -> On {
    On {
        backend: backend.name(),
        threads: execution.map_or(1, |e| e.threads),
        fma: execution.is_some_and(|e| e.fma),
    }
}

/// Flops of one call of a model of `weight_bytes` (2 per weight and token) feeding `k` tokens to
/// each of `batch` sequences.
pub fn call_flops(weight_bytes: usize, k: usize, batch: usize) -> f64 {
    2.0 * (weight_bytes / 4) as f64 * (k * batch) as f64
}

/// The compute slope's peak in GFLOP/s, and the k of the call that set it if not the
/// calibration: the higher of `calibrated` and the best rate that the measured `rows` reached
/// (their median time). A peak below what a call does would draw the slope above the points.
pub fn ceiling(calibrated: f64, rows: &[Point], weight_bytes: usize) -> (f64, Option<usize>) {
    let best = rows
        .iter()
        .filter(|p| p.median_us > 0.0)
        .map(|p| {
            (
                call_flops(weight_bytes, p.k, p.batch) / p.median_us / 1e3,
                p.k,
            )
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((rate, k)) if rate > calibrated => (rate, Some(k)),
        _ => (calibrated, None),
    }
}

/// The roofline of `subject`'s model on its device: T(k) for every k of `ks` at `batch`, and the
/// device's calibrations, measured unless `known` holds for this device and model
/// ([`calibrated_on`]): a page calibrates once and reuses it.
pub async fn roofline(
    subject: Subject<'_>,
    ks: &[usize],
    batch: usize,
    known: Option<Calibration>,
    clock: Clock<'_>,
    progress: crate::clock::Progress<'_>,
) -> Result<Roofline, Error> {
    let Subject {
        model,
        width,
        backend,
        device,
    } = subject;
    for &k in ks {
        K.check(k as f64)?;
    }
    BATCH.check(batch as f64)?;
    let total = ks.len() + 1;
    let execution = execution(model, backend);
    // The calibrations run on the threads the model's calls run on: one for a model too small to
    // split (its peak on every thread would put the roofline's slope where no call reaches).
    let _alone = (execution.map(|e| e.threads) == Some(1)).then(specdec_kernels::one_thread);
    let on = calibrated_on(backend, execution);
    let (calibration, calibration_reused) = match known {
        Some(c) if c.on == on => (c, true),
        _ => (calibrate(device, on, clock).await?, false),
    };
    progress(1, total);
    let mut rows = Vec::with_capacity(ks.len());
    for (i, &k) in ks.iter().enumerate() {
        rows.push(
            time_call(
                model,
                device,
                k,
                batch,
                calibration.clock_resolution_us,
                clock,
            )
            .await?,
        );
        progress(i + 2, total);
    }
    let transfer = transfer(model, calibration.clock_resolution_us, clock).await?;
    let bytes = weight_bytes(model);
    let params = burn::module::Module::num_params(model);
    let bandwidth = calibration.bandwidth_gbs * 1e3; // bytes per µs
    let (peak_gflops, peak_from_k) = ceiling(calibration.peak_gflops, &rows, bytes);
    let peak = peak_gflops * 1e3; // flops per µs
    Ok(Roofline {
        backend: backend.name(),
        width,
        params,
        weight_bytes: bytes,
        knee_k: knee(&rows),
        rows,
        bandwidth_gbs: calibration.bandwidth_gbs,
        peak_gflops,
        calibrated_peak_gflops: calibration.peak_gflops,
        peak_from_k,
        calibration_reused,
        calibration,
        clock_resolution_us: calibration.clock_resolution_us,
        memory_floor_us: bytes as f64 / bandwidth,
        model_knee_k: peak * bytes as f64 / (2.0 * (bytes / 4) as f64 * bandwidth * batch as f64),
        transfer,
        execution,
    })
}

/// Where the measured T(k) first exceeds [`KNEE_RATIO`]·T(1), interpolated on log k between the
/// two measured points around it; `None` while it never does (the knee lies beyond the last k).
pub fn knee(points: &[Point]) -> Option<f64> {
    let t1 = points.iter().find(|p| p.k == 1)?.median_us;
    let limit = KNEE_RATIO * t1;
    let mut sorted: Vec<&Point> = points.iter().collect();
    sorted.sort_by_key(|p| p.k);
    for w in sorted.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a.median_us <= limit && b.median_us > limit {
            let f = (limit - a.median_us) / (b.median_us - a.median_us);
            let (la, lb) = ((a.k as f64).ln(), (b.k as f64).ln());
            return Some((la + f * (lb - la)).exp());
        }
    }
    (sorted.first()?.median_us > limit).then_some(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(k: usize, t: f64) -> Point {
        Point {
            k,
            batch: 1,
            median_us: t,
            iqr_us: 0.0,
            calls_per_block: 1,
        }
    }

    #[test]
    fn the_knee_is_where_the_curve_leaves_the_floor() {
        // Flat to k = 4, then linear in k: T(8) = 2·T(1) crosses 1.25·T(1) between 4 and 8.
        let pts: Vec<Point> = [(1, 100.0), (2, 101.0), (4, 110.0), (8, 200.0)]
            .map(|(k, t)| point(k, t))
            .to_vec();
        let k = knee(&pts).unwrap();
        // 125 is 15/90 of the way from 110 to 200 on log k.
        let want = (4f64.ln() + (15.0 / 90.0) * (8f64.ln() - 4f64.ln())).exp();
        assert!((k - want).abs() < 1e-9, "{k} vs {want}");
        // Never leaves it: no knee within the measured ks.
        assert_eq!(knee(&[point(1, 100.0), point(64, 120.0)]), None);
    }

    /// The review's ×16 run on WebGPU: the calibration's matmul said 5.0 GFLOP/s while the k = 64
    /// call did 2.43 GFLOP in 91.7 ms. The slope takes the call's rate, and says which call.
    #[test]
    fn the_peak_is_never_below_what_a_call_reaches() {
        let bytes = 75_900_000; // 2 · 18.98 M weights · 64 tokens = 2.43 GFLOP
        let rows = [(1, 17_000.0), (16, 30_000.0), (64, 91_700.0)].map(|(k, t)| point(k, t));
        let (peak, k) = ceiling(5.0, &rows, bytes);
        let rate = call_flops(bytes, 64, 1) / 91_700.0 / 1e3;
        assert!((rate - 26.5).abs() < 0.1, "{rate}");
        assert_eq!((peak, k), (rate, Some(64)));
        // Every call lies on or under the slope it draws: no call beats the peak.
        for p in &rows {
            assert!(call_flops(bytes, p.k, p.batch) / p.median_us / 1e3 <= peak);
        }
        // A calibration above every call stands, and says so by naming no call.
        assert_eq!(ceiling(40.0, &rows, bytes), (40.0, None));
        // A batch counts its rows: 4 sequences of 16 tokens are 64 tokens' flops.
        let batched = [Point {
            batch: 4,
            ..point(16, 91_700.0)
        }];
        assert_eq!(ceiling(5.0, &batched, bytes), (rate, Some(16)));
        assert_eq!(ceiling(5.0, &[], bytes), (5.0, None));
    }

    #[test]
    fn a_step_is_the_slope_where_it_stands_out_of_the_noise() {
        let t = |median_us, iqr_us| Timing { median_us, iqr_us };
        // 1 ms of fixed cost, 0.5 ms a step: 2 steps 2 ms, 6 steps 4 ms.
        assert_eq!(per_step(t(2000.0, 50.0), t(4000.0, 50.0), 4, 6), 500.0);
        // No clear rise: the long call's time per step, fixed cost included.
        assert_eq!(
            per_step(t(2000.0, 900.0), t(2600.0, 900.0), 4, 6),
            2600.0 / 6.0
        );
        // A rise steeper than the long call's own time per step cannot be a step's time.
        assert_eq!(per_step(t(100.0, 1.0), t(6000.0, 1.0), 4, 6), 1000.0);
    }
}

//! Timing a browser can trust, for the measured roofline (`super`) and its calibrations:
//! `performance.now()` ticks every 100 µs in a page that is not cross-origin isolated, and a call
//! of the trained target takes 20–300 µs. So calls are timed in blocks of at least [`BLOCK_US`]
//! (and at least 20 ticks of the measured clock), and every time is the median over [`BLOCKS`]
//! blocks with its interquartile range; a timing within a budget keeps fewer blocks where one
//! call is slow ([`time_blocks_within`]: an emulated GPU's). A file of its own: the statistics and
//! the clock, apart from what is timed.

use crate::clock::Clock;
use crate::error::Error;

/// Shortest block of timed calls, in microseconds.
pub const BLOCK_US: f64 = 2000.0;
/// Blocks per measured point.
pub const BLOCKS: usize = 9;

/// A median and its spread, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Timing {
    pub median_us: f64,
    pub iqr_us: f64,
}

impl Timing {
    /// Median and interquartile range of `samples` (not empty).
    pub fn of(samples: Vec<f64>) -> Timing {
        let [q1, median, q3] = quartiles(samples);
        Timing {
            median_us: median,
            iqr_us: q3 - q1,
        }
    }
}

/// The quartiles of `samples` (not empty), interpolated between neighbours.
pub fn quartiles(mut samples: Vec<f64>) -> [f64; 3] {
    assert!(!samples.is_empty(), "no samples");
    samples.sort_by(f64::total_cmp);
    let q = |f: f64| {
        let x = f * (samples.len() - 1) as f64;
        let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
        samples[lo] + (samples[hi] - samples[lo]) * (x - lo as f64)
    };
    [q(0.25), q(0.5), q(0.75)]
}

/// The interquartile range of `samples` (not empty).
pub fn iqr(samples: Vec<f64>) -> f64 {
    let [q1, _, q3] = quartiles(samples);
    q3 - q1
}

/// The clock's resolution: the smallest step it was seen to take.
pub fn clock_resolution(clock: Clock<'_>) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t0 = clock();
        let mut t1 = clock();
        let mut spins = 0u32;
        while t1 == t0 && spins < 10_000_000 {
            t1 = clock();
            spins += 1;
        }
        if t1 > t0 {
            best = best.min(t1 - t0);
        }
    }
    if best.is_finite() {
        best
    } else {
        0.0
    }
}

/// Times `call` in blocks of at least [`BLOCK_US`] (and 20 clock ticks): the median and IQR of
/// the time per call over [`BLOCKS`] blocks, and the calls per block.
pub async fn time_blocks(
    call: impl AsyncFnMut() -> Result<(), Error>,
    resolution_us: f64,
    clock: Clock<'_>,
) -> Result<(Timing, usize), Error> {
    time_blocks_within(call, resolution_us, clock, f64::INFINITY).await
}

/// Fewest blocks a timing within a budget keeps (a median and quartiles of three).
pub const FEWEST_BLOCKS: usize = 3;

/// [`time_blocks`] in about `budget_us` once warm: where one call is so slow that [`BLOCKS`]
/// blocks would outrun it (a GPU emulated on the CPU takes a tenth of a second for what a real
/// one does in a millisecond), fewer blocks, never under [`FEWEST_BLOCKS`].
pub async fn time_blocks_within(
    mut call: impl AsyncFnMut() -> Result<(), Error>,
    resolution_us: f64,
    clock: Clock<'_>,
    budget_us: f64,
) -> Result<(Timing, usize), Error> {
    // Warm: the first calls allocate (and on a GPU compile their kernels).
    call().await?;
    let t0 = clock();
    call().await?;
    let one = (clock() - t0).max(1.0);
    let block_us = BLOCK_US.max(20.0 * resolution_us);
    let n = ((block_us / one).ceil() as usize).clamp(1, 10_000);
    let blocks = blocks_within(budget_us, one * n as f64);
    let mut samples = Vec::with_capacity(blocks);
    for _ in 0..blocks {
        let started = clock();
        for _ in 0..n {
            call().await?;
        }
        samples.push((clock() - started) / n as f64);
    }
    Ok((Timing::of(samples), n))
}

/// Blocks of `block_us` each that fit `budget_us`: [`BLOCKS`] where they fit, else fewer, down to
/// [`FEWEST_BLOCKS`].
pub fn blocks_within(budget_us: f64, block_us: f64) -> usize {
    let fit = (budget_us / block_us.max(1e-9)).floor();
    if fit >= BLOCKS as f64 {
        BLOCKS
    } else {
        (fit as usize).max(FEWEST_BLOCKS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_device_times_fewer_blocks_within_the_budget() {
        assert_eq!(blocks_within(f64::INFINITY, 2_000.0), BLOCKS);
        assert_eq!(blocks_within(1.5e6, 2_000.0), BLOCKS);
        // 200 ms a block: 7 fit in 1.5 s.
        assert_eq!(blocks_within(1.5e6, 200_000.0), 7);
        assert_eq!(blocks_within(1.5e6, 400_000.0), 3);
        // A second a block: never fewer than FEWEST_BLOCKS.
        assert_eq!(blocks_within(1.5e6, 1e6), FEWEST_BLOCKS);
    }

    #[test]
    fn median_and_iqr_interpolate_between_samples() {
        let t = Timing::of(vec![5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!(t.median_us, 3.0);
        assert_eq!(t.iqr_us, 2.0);
    }
}

//! This device's limit (issue 54, item 4): a target call of k tokens costs no less than
//! T_lim(k) = max(weight bytes / bandwidth, k · FLOPs a token / peak), with the bandwidth and the
//! peak measured here (the roofline's calibrations, the peak raised to what the calls themselves
//! reached: a ceiling). A method's speedup at the limit prices its own τ and drafting at that
//! curve, τ / (r + drafting) with r = T_lim(k)/T_lim(1), but never more than the call of k tokens
//! measured here costs over the one-token call: where T(1) sits far above the memory floor (the
//! trained target, whose weights stay in a cache; a GPU's fixed cost a call) this device's calls
//! are flatter in k than the limit's, and a limit steeper than the calls would price them above
//! what they cost. Nor is it ever under the wall clock's speedup of the same run: what this device
//! did, it can do (there the calls' own timers, summed, read a step dearer than the wall clock
//! did, as when plain decoding spends more outside its calls than the method; the figure is then
//! the measurement itself, and says nothing of the kernel). Otherwise no kernel on this device
//! does better with those drafts, so the gap from the measured speedup is the kernel's (and
//! decoding's own work), the rest the draft's.

use super::context::Lab;
use crate::error::Error;
use crate::model::measure::{call_flops, ceiling, roofline, Calibration, Point, Subject};

/// The limit's curve for the models' target on this device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limit {
    pub bandwidth_gbs: f64,
    pub peak_gflops: f64,
    pub weight_bytes: usize,
    pub calibration: Calibration,
}

impl Limit {
    /// Calibrates this device (or reuses `known` where it holds), its peak raised to what the
    /// target's calls in `rows` (bare, each k's median) reached.
    pub async fn measure(
        lab: Lab<'_>,
        known: Option<Calibration>,
        rows: &[(usize, f64)],
    ) -> Result<Limit, Error> {
        let models = lab.models;
        let subject = Subject {
            model: &models.target,
            width: models.target_width(),
            backend: models.backend,
            device: &models.device,
        };
        let roof = roofline(subject, &[1], 1, known, lab.clock, &mut |_, _| {}).await?;
        let points: Vec<Point> = (rows.iter())
            .map(|&(k, t)| Point {
                k,
                batch: 1,
                median_us: t,
                iqr_us: 0.0,
                calls_per_block: 0,
            })
            .chain(roof.rows.iter().copied())
            .collect();
        let (peak_gflops, _) = ceiling(roof.peak_gflops, &points, roof.weight_bytes);
        Ok(Limit {
            bandwidth_gbs: roof.bandwidth_gbs,
            peak_gflops,
            weight_bytes: roof.weight_bytes,
            calibration: roof.calibration,
        })
    }

    /// T_lim(k), µs; `k` may be a mean (a dynamic tree's verified nodes + 1).
    pub fn time_us(&self, k: f64) -> f64 {
        let floor = self.weight_bytes as f64 / (self.bandwidth_gbs * 1e3);
        let compute = call_flops(self.weight_bytes, 1, 1) * k.max(1.0) / (self.peak_gflops * 1e3);
        floor.max(compute)
    }

    /// T_lim(1) … T_lim(K), µs.
    pub fn times_us(&self, max_k: usize) -> Vec<f64> {
        (1..=max_k).map(|k| self.time_us(k as f64)).collect()
    }

    /// max(τ / (min(T_lim(k)/T_lim(1), `measured`) + drafting), `wall`): a method's tokens a
    /// step `tau`, its call of `k` tokens (costing `measured` one-token calls here) and its
    /// drafting a step over a one-token call, at this device's limit, and never under `wall`, the
    /// speedup the same run measured on the wall clock.
    pub fn speedup(&self, tau: f64, k: f64, measured: f64, drafting: f64, wall: f64) -> f64 {
        let ratio = (self.time_us(k) / self.time_us(1.0)).min(measured.max(1.0));
        (tau / (ratio + drafting)).max(wall)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_the_memory_floor_until_the_compute_slope_passes_it() {
        let calibration = Calibration {
            bandwidth_gbs: 10.0,
            peak_gflops: 100.0,
            clock_resolution_us: 1.0,
            on: crate::model::measure::On {
                backend: "flex",
                threads: 1,
                fma: false,
            },
            took_us: 0.0,
        };
        // 1 MB of weights: a floor of 100 µs at 10 GB/s; 2 · 250 k flops a token at 100 GFLOP/s
        // is 5 µs a token, so the slope passes the floor at k = 20.
        let l = Limit {
            bandwidth_gbs: 10.0,
            peak_gflops: 100.0,
            weight_bytes: 1_000_000,
            calibration,
        };
        assert!((l.time_us(1.0) - 100.0).abs() < 1e-9);
        assert!((l.time_us(20.0) - 100.0).abs() < 1e-9);
        assert!((l.time_us(40.0) - 200.0).abs() < 1e-9);
        // τ 3 with drafting 0.5 a step: 3 / (1 + 0.5) = 2 under the floor, 3 / (2 + 0.5) at k 40.
        assert!((l.speedup(3.0, 8.0, 1.5, 0.5, 1.0) - 2.0).abs() < 1e-12);
        assert!((l.speedup(3.0, 40.0, 4.0, 0.5, 1.0) - 1.2).abs() < 1e-12);
        // Calls flatter than the limit's (T(1) far above the floor): priced at what they cost.
        assert!((l.speedup(3.0, 40.0, 1.5, 0.5, 1.0) - 1.5).abs() < 1e-12);
        // A wall clock that read the run faster than its calls' timers did (1.6 against 1.5):
        // the limit is that, not under it; one under the priced limit leaves it be.
        assert!((l.speedup(3.0, 40.0, 1.5, 0.5, 1.6) - 1.6).abs() < 1e-12);
        assert!((l.speedup(3.0, 40.0, 1.5, 0.5, 1.4) - 1.5).abs() < 1e-12);
        assert_eq!(l.times_us(3).len(), 3);
    }
}

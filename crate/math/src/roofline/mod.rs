//! The roofline time model of one decoding step (lecture §1.2, §2.5, demos 1/4/5, exercise 4).
//!
//! In one step each of B requests processes k tokens against a context of L tokens:
//! FLOPs = 2·P·B·k + 4·layers·d·B·Σ_{i<k}(L + i) (weights, then attention over the context),
//! bytes = 2·P + B·(L + k − 1)·KV (fp16 weights read once, each request's KV read once),
//! time = max(FLOPs/peak, bytes/bandwidth) + a fixed overhead per step (kernel launches, sampling).
//! The constants reproduce the lecture on an A100-40GB; the other presets are for exploring.
//! `parallel` runs the same step on many GPUs (tensor and pipeline parallel) or with the weights
//! offloaded to the host; `presets` holds the GPUs, links and models; `profiles` the curves T(k)
//! of devices to choose how to speculate on (measured ones, and this model's).

use crate::error::{Error, Range};
use crate::theory;

mod parallel;
mod presets;
pub mod profiles;

pub use parallel::{
    all_reduce_ms, step_on, Deployment, Limit, Served, LECTURE_1_1, MICRO_BATCHES, PP, TP,
};
pub use presets::{
    gpu, model, Gpu, Link, Model, EFFICIENCY, GPUS, INFINIBAND, MODELS, NVLINK3, NVLINK4, PCIE4,
};

/// Sequences decoded together.
pub const BATCH: Range = Range::new("batch", 1.0, 4096.0);
/// Tokens already in the KV cache.
pub const CONTEXT: Range = Range::new("context", 0.0, 1_048_576.0);
/// Tokens scored per sequence in one step.
pub const K: Range = Range::new("k", 1.0, 1024.0);
/// The fixed cost of a step.
pub const OVERHEAD_MS: Range = Range::new("overhead_ms", 0.0, 1000.0)
    .shown_as("overhead")
    .after("ms", "毫秒");

/// The largest γ the optimum and the heat map search.
pub const MAX_GAMMA: u32 = 16;

/// The lecture's fixed overhead per step, in milliseconds.
pub const DEFAULT_OVERHEAD_MS: f64 = 1.5;

/// Which roof limits a step on one GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Memory,
    Compute,
}

/// The shape of one step: B requests, k new tokens each, context L, fixed overhead.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Workload {
    pub batch: u32,
    pub context: u32,
    pub k: u32,
    pub overhead_ms: f64,
}

impl Workload {
    pub fn new(batch: u32, context: u32, k: u32, overhead_ms: f64) -> Result<Workload, Error> {
        BATCH.check(f64::from(batch))?;
        CONTEXT.check(f64::from(context))?;
        K.check(f64::from(k))?;
        OVERHEAD_MS.check(overhead_ms)?;
        Ok(Workload {
            batch,
            context,
            k,
            overhead_ms,
        })
    }
}

/// The cost of one step.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Step {
    pub flops: f64,
    pub bytes: f64,
    pub compute_ms: f64,
    pub memory_ms: f64,
    pub time_ms: f64,
    pub intensity: f64,
    pub bound: Bound,
}

/// Time of one step of `model` on `gpu` under `w` (the module doc has the formulas).
pub fn step(gpu: &Gpu, model: &Model, w: &Workload) -> Step {
    let (b, l, k) = (f64::from(w.batch), f64::from(w.context), f64::from(w.k));
    // Σ_{i<k} (L + i) = kL + k(k − 1)/2: token i of the k attends to L + i earlier positions.
    let attended = k * l + k * (k - 1.0) / 2.0;
    let attention = 4.0 * f64::from(model.layers) * f64::from(model.d) * b * attended;
    let flops = 2.0 * model.params * b * k + attention;
    let bytes = 2.0 * model.params + b * (l + k - 1.0) * model.kv_bytes_per_token();
    let compute_ms = flops / (gpu.peak_tflop_s * 1e12) * 1e3;
    let memory_ms = bytes / (gpu.bandwidth_gb_s * 1e9) * 1e3;
    let bound = if compute_ms > memory_ms {
        Bound::Compute
    } else {
        Bound::Memory
    };
    Step {
        flops,
        bytes,
        compute_ms,
        memory_ms,
        time_ms: compute_ms.max(memory_ms) + w.overhead_ms,
        intensity: flops / bytes,
        bound,
    }
}

/// A draft/target pair with a fixed overhead per step: what demos 4 and 5 vary. The target runs
/// on `deployment` (one GPU, many, or offloaded); the draft is small and runs data-parallel, a
/// copy on every GPU with its share of the batch, never offloaded and without communication.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    pub gpu: Gpu,
    pub draft: Model,
    pub target: Model,
    pub overhead_ms: f64,
    pub deployment: Deployment,
}

/// One cell of the demo-5 heat map.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Cell {
    pub batch: u32,
    pub context: u32,
    /// The best γ and its speedup, where the step can run; none where it cannot (the fields are
    /// then absent from the JSON): the time model would still give a number there, and the
    /// lecture's demo 5 follows its trend, but no deployment could measure it.
    #[serde(flatten)]
    pub best: Option<Best>,
    /// Whether the target's weights and KV cache fit its GPUs' memory (the lecture's demo 5
    /// does not ask; a step that does not fit could not run).
    pub fits: bool,
}

/// The best γ of a cell (0: speculation does not pay) and its speedup over plain decoding.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Best {
    pub gamma: u32,
    pub speedup: f64,
}

impl Pair {
    /// The pair on one GPU, as the lecture's demos have it.
    pub fn single(gpu: Gpu, draft: Model, target: Model, overhead_ms: f64) -> Pair {
        Pair {
            gpu,
            draft,
            target,
            overhead_ms,
            deployment: Deployment::SINGLE,
        }
    }

    fn workload(&self, batch: u32, context: u32, k: u32) -> Workload {
        Workload {
            batch,
            context,
            k,
            overhead_ms: self.overhead_ms,
        }
    }

    /// One target step on the pair's deployment.
    pub fn target_step(&self, batch: u32, context: u32, k: u32) -> Served {
        step_on(
            &self.gpu,
            &self.target,
            &self.workload(batch, context, k),
            &self.deployment,
        )
    }

    fn target_ms(&self, batch: u32, context: u32, k: u32) -> f64 {
        self.target_step(batch, context, k).time_ms
    }

    /// One draft step: every GPU drafts for its share of the batch (all of it on one GPU).
    fn draft_ms(&self, batch: u32, context: u32) -> f64 {
        let share = batch.div_ceil(self.deployment.gpus());
        step(&self.gpu, &self.draft, &self.workload(share, context, 1)).time_ms
    }

    /// c = draft step time / target step time, both one token per request (lecture demo 4).
    pub fn cost_ratio(&self, batch: u32, context: u32) -> f64 {
        self.draft_ms(batch, context) / self.target_ms(batch, context, 1)
    }

    /// Speedup with γ drafts under the time model: E tokens cost γ draft steps plus one target
    /// step on γ + 1 tokens, against E plain target steps.
    pub fn speculative_speedup(&self, batch: u32, context: u32, alpha: f64, gamma: u32) -> f64 {
        if gamma == 0 {
            return 1.0;
        }
        let plain = self.target_ms(batch, context, 1);
        let spec = f64::from(gamma) * self.draft_ms(batch, context)
            + self.target_ms(batch, context, gamma + 1);
        theory::expected_tokens(alpha, gamma) * plain / spec
    }

    /// The γ in `0..=max_gamma` with the best speedup (γ = 0: do not speculate).
    pub fn optimal_gamma(&self, batch: u32, context: u32, alpha: f64, max_gamma: u32) -> Cell {
        let fits = self.target_step(batch, context, 1).fits;
        Cell {
            batch,
            context,
            best: fits.then(|| self.best_gamma(batch, context, alpha, max_gamma)),
            fits,
        }
    }

    /// The γ in 1..=`max_gamma` of the largest speedup, or 0 where none beats plain decoding,
    /// by the time model alone (whether the step fits is the caller's question).
    pub fn best_gamma(&self, batch: u32, context: u32, alpha: f64, max_gamma: u32) -> Best {
        let mut best = Best {
            gamma: 0,
            speedup: 1.0,
        };
        for gamma in 1..=max_gamma {
            let s = self.speculative_speedup(batch, context, alpha, gamma);
            if s > best.speedup + 1e-12 {
                best = Best { gamma, speedup: s };
            }
        }
        best
    }

    /// Demo 5: the optimal γ (up to 16) and its speedup for every batch × context (rows = batches).
    pub fn heat_map(&self, batches: &[u32], contexts: &[u32], alpha: f64) -> Vec<Vec<Cell>> {
        batches
            .iter()
            .map(|&b| {
                contexts
                    .iter()
                    .map(|&l| self.optimal_gamma(b, l, alpha, MAX_GAMMA))
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(x: f64, digits: i32) -> f64 {
        let m = 10f64.powi(digits);
        (x * m).round() / m
    }

    fn a100() -> Gpu {
        gpu("a100-40gb").unwrap()
    }

    fn opt13b() -> Model {
        model("opt-13b").unwrap()
    }

    #[test]
    fn kv_bytes_of_opt_13b() {
        assert_eq!(opt13b().kv_bytes_per_token(), 819_200.0);
    }

    #[test]
    fn batch_32_context_512_k4_memory_k8_compute() {
        let s4 = step(&a100(), &opt13b(), &Workload::new(32, 512, 4, 1.5).unwrap());
        assert_eq!(round(s4.time_ms, 2), 26.90);
        assert_eq!(s4.bound, Bound::Memory);
        let s8 = step(&a100(), &opt13b(), &Workload::new(32, 512, 8, 1.5).unwrap());
        assert_eq!(round(s8.time_ms, 2), 37.63);
        assert_eq!(s8.bound, Bound::Compute);
    }

    #[test]
    fn exercise_4_intensity_and_knee() {
        let s1 = step(&a100(), &opt13b(), &Workload::new(32, 512, 1, 1.5).unwrap());
        assert_eq!(round(s1.intensity, 1), 21.4);
        assert_eq!(round(a100().knee(), 0), 120.0);
    }

    #[test]
    fn batch_1_is_flat_in_k() {
        let t = |k| step(&a100(), &opt13b(), &Workload::new(1, 512, k, 1.5).unwrap()).time_ms;
        assert!(t(32) / t(1) < 1.01, "{} vs {}", t(32), t(1));
    }

    #[test]
    fn opt_125m_reads_quarter_gigabyte_in_0_16_ms() {
        let m = model("opt-125m").unwrap();
        assert_eq!(2.0 * m.params, 0.25e9);
        assert_eq!(
            round(2.0 * m.params / (a100().bandwidth_gb_s * 1e9) * 1e3, 2),
            0.16
        );
    }

    fn pair(overhead_ms: f64) -> Pair {
        Pair::single(a100(), model("opt-125m").unwrap(), opt13b(), overhead_ms)
    }

    #[test]
    fn cost_ratio_demo_4() {
        assert_eq!(round(pair(1.5).cost_ratio(1, 512), 2), 0.09);
        assert_eq!(round(pair(0.2).cost_ratio(1, 512), 2), 0.02);
    }

    #[test]
    fn demo_5_long_context_favours_large_batch_short_context_kills_it() {
        // The lecture's trend, by the time model alone (its demo 5 does not ask about memory).
        let p = pair(1.5);
        let best = |b, l| p.best_gamma(b, l, 0.8, MAX_GAMMA);
        let (small_short, big_short, big_long) = (best(1, 128), best(256, 128), best(256, 32768));
        assert!(
            small_short.gamma >= 1 && small_short.speedup > 1.5,
            "{small_short:?}"
        );
        assert!(big_short.speedup < 1.1, "{big_short:?}");
        assert!(
            big_long.speedup > 2.0 && big_long.gamma >= 3,
            "{big_long:?}"
        );
    }

    #[test]
    fn a_heat_map_cell_whose_step_could_not_run_has_no_gamma_and_no_speedup() {
        // 256 × 32k tokens of OPT-13B's cache are 6.9 TB, past an A100-40GB's memory; 1 × 128 fit.
        let map = pair(1.5).heat_map(&[1, 256], &[128, 32768], 0.8);
        let (fits, too_big) = (map[0][0], map[1][1]);
        assert!(fits.fits && fits.best.is_some(), "{fits:?}");
        assert!(!too_big.fits && too_big.best.is_none(), "{too_big:?}");
        // In the JSON the page and the CLI read, the cell has neither field.
        let json = serde_json::to_value(too_big).unwrap();
        assert!(
            json.get("gamma").is_none() && json.get("speedup").is_none(),
            "{json}"
        );
        assert_eq!(json["fits"], false);
        let json = serde_json::to_value(fits).unwrap();
        assert!(json["gamma"].as_u64().unwrap() >= 1 && json["speedup"].as_f64().unwrap() > 1.5);
    }

    #[test]
    fn unknown_presets_name_themselves() {
        let e = gpu("v100").unwrap_err().to_string();
        assert!(e.contains("\"v100\"") && e.contains("a100-40gb"), "{e}");
        assert!(Workload::new(0, 512, 1, 1.5).is_err());
    }
}

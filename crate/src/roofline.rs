//! The roofline time model of one decoding step (lecture §1.2, §2.5, demos 1/4/5, exercise 4).
//!
//! In one step each of B requests processes k tokens against a context of L tokens:
//! FLOPs = 2·P·B·k + 4·layers·d·B·Σ_{i<k}(L + i) (weights, then attention over the context),
//! bytes = 2·P + B·(L + k − 1)·KV (fp16 weights read once, each request's KV read once),
//! time = max(FLOPs/peak, bytes/bandwidth) + a fixed overhead per step (kernel launches, sampling).
//! The constants reproduce the lecture on an A100-40GB; the other presets are for exploring.

use crate::error::{Error, Range};
use crate::theory;

/// Sequences decoded together.
pub const BATCH: Range = Range::new("batch", 1.0, 4096.0);
/// Tokens already in the KV cache.
pub const CONTEXT: Range = Range::new("context", 0.0, 1_048_576.0);
/// Tokens scored per sequence in one step.
pub const K: Range = Range::new("k", 1.0, 1024.0);
/// The fixed cost of a step.
pub const OVERHEAD_MS: Range = Range::new("overhead_ms", 0.0, 1000.0)
    .shown_as("overhead")
    .after("ms");

/// A GPU: memory bandwidth and the *effective* compute peak (0.6 × the datasheet fp16 peak).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Gpu {
    pub name: &'static str,
    pub label: &'static str,
    pub bandwidth_gb_s: f64,
    pub peak_tflop_s: f64,
}

/// A decoder-only model: parameters (fp16), layers and hidden size d.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Model {
    pub name: &'static str,
    pub label: &'static str,
    pub params: f64,
    pub layers: u32,
    pub d: u32,
}

/// Datasheet dense fp16 tensor peaks × 0.6, the lecture's efficiency factor.
pub const GPUS: &[Gpu] = &[
    Gpu {
        name: "a100-40gb",
        label: "A100-40GB",
        bandwidth_gb_s: 1555.0,
        peak_tflop_s: 0.6 * 312.0,
    },
    Gpu {
        name: "a100-80gb",
        label: "A100-80GB",
        bandwidth_gb_s: 2039.0,
        peak_tflop_s: 0.6 * 312.0,
    },
    Gpu {
        name: "h100-sxm",
        label: "H100 SXM",
        bandwidth_gb_s: 3350.0,
        peak_tflop_s: 0.6 * 989.0,
    },
    Gpu {
        name: "h200",
        label: "H200",
        bandwidth_gb_s: 4800.0,
        peak_tflop_s: 0.6 * 989.0,
    },
    Gpu {
        name: "rtx-4090",
        label: "RTX 4090",
        bandwidth_gb_s: 1008.0,
        peak_tflop_s: 0.6 * 165.2,
    },
    Gpu {
        name: "l4",
        label: "L4",
        bandwidth_gb_s: 300.0,
        peak_tflop_s: 0.6 * 121.0,
    },
];

pub const MODELS: &[Model] = &[
    Model {
        name: "opt-125m",
        label: "OPT-125M",
        params: 125e6,
        layers: 12,
        d: 768,
    },
    Model {
        name: "opt-350m",
        label: "OPT-350M",
        params: 350e6,
        layers: 24,
        d: 1024,
    },
    Model {
        name: "opt-1.3b",
        label: "OPT-1.3B",
        params: 1.3e9,
        layers: 24,
        d: 2048,
    },
    Model {
        name: "opt-6.7b",
        label: "OPT-6.7B",
        params: 6.7e9,
        layers: 32,
        d: 4096,
    },
    Model {
        name: "opt-13b",
        label: "OPT-13B",
        params: 13e9,
        layers: 40,
        d: 5120,
    },
    Model {
        name: "opt-30b",
        label: "OPT-30B",
        params: 30e9,
        layers: 48,
        d: 7168,
    },
];

/// The lecture's fixed overhead per step, in milliseconds.
pub const DEFAULT_OVERHEAD_MS: f64 = 1.5;

pub fn gpu(name: &str) -> Result<Gpu, Error> {
    GPUS.iter()
        .copied()
        .find(|g| g.name == name)
        .ok_or_else(|| Error::Unknown {
            what: "GPU",
            name: name.to_string(),
            known: GPUS
                .iter()
                .map(|g| g.name)
                .collect::<Vec<_>>()
                .join(", ")
                .into(),
        })
}

pub fn model(name: &str) -> Result<Model, Error> {
    MODELS
        .iter()
        .copied()
        .find(|m| m.name == name)
        .ok_or_else(|| Error::Unknown {
            what: "model",
            name: name.to_string(),
            known: MODELS
                .iter()
                .map(|m| m.name)
                .collect::<Vec<_>>()
                .join(", ")
                .into(),
        })
}

impl Model {
    /// KV cache bytes per token: keys and values, every layer, fp16.
    pub fn kv_bytes_per_token(&self) -> f64 {
        2.0 * f64::from(self.layers) * f64::from(self.d) * 2.0
    }
}

impl Gpu {
    /// The arithmetic intensity (FLOP/byte) where compute time equals memory time.
    pub fn knee(&self) -> f64 {
        self.peak_tflop_s * 1e12 / (self.bandwidth_gb_s * 1e9)
    }
}

/// Which roof limits a step.
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

/// A draft/target pair on one GPU with a fixed overhead per step: what demos 4 and 5 vary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    pub gpu: Gpu,
    pub draft: Model,
    pub target: Model,
    pub overhead_ms: f64,
}

/// One cell of the demo-5 heat map.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Cell {
    pub batch: u32,
    pub context: u32,
    pub gamma: u32,
    pub speedup: f64,
}

impl Pair {
    fn time_ms(&self, model: &Model, batch: u32, context: u32, k: u32) -> f64 {
        step(
            &self.gpu,
            model,
            &Workload {
                batch,
                context,
                k,
                overhead_ms: self.overhead_ms,
            },
        )
        .time_ms
    }

    /// c = draft step time / target step time, both one token per request (lecture demo 4).
    pub fn cost_ratio(&self, batch: u32, context: u32) -> f64 {
        self.time_ms(&self.draft, batch, context, 1) / self.time_ms(&self.target, batch, context, 1)
    }

    /// Speedup with γ drafts under the time model: E tokens cost γ draft steps plus one target
    /// step on γ + 1 tokens, against E plain target steps.
    pub fn speculative_speedup(&self, batch: u32, context: u32, alpha: f64, gamma: u32) -> f64 {
        if gamma == 0 {
            return 1.0;
        }
        let plain = self.time_ms(&self.target, batch, context, 1);
        let spec = f64::from(gamma) * self.time_ms(&self.draft, batch, context, 1)
            + self.time_ms(&self.target, batch, context, gamma + 1);
        theory::expected_tokens(alpha, gamma) * plain / spec
    }

    /// The γ in `0..=max_gamma` with the best speedup (γ = 0: do not speculate).
    pub fn optimal_gamma(&self, batch: u32, context: u32, alpha: f64, max_gamma: u32) -> Cell {
        let mut best = Cell {
            batch,
            context,
            gamma: 0,
            speedup: 1.0,
        };
        for gamma in 1..=max_gamma {
            let s = self.speculative_speedup(batch, context, alpha, gamma);
            if s > best.speedup + 1e-12 {
                best = Cell {
                    gamma,
                    speedup: s,
                    ..best
                };
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
                    .map(|&l| self.optimal_gamma(b, l, alpha, 16))
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
        Pair {
            gpu: a100(),
            draft: model("opt-125m").unwrap(),
            target: opt13b(),
            overhead_ms,
        }
    }

    #[test]
    fn cost_ratio_demo_4() {
        assert_eq!(round(pair(1.5).cost_ratio(1, 512), 2), 0.09);
        assert_eq!(round(pair(0.2).cost_ratio(1, 512), 2), 0.02);
    }

    #[test]
    fn demo_5_long_context_favours_large_batch_short_context_kills_it() {
        let map = pair(1.5).heat_map(&[1, 256], &[128, 32768], 0.8);
        let (small_short, big_short, big_long) = (map[0][0], map[1][0], map[1][1]);
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
    fn unknown_presets_name_themselves() {
        let e = gpu("v100").unwrap_err().to_string();
        assert!(e.contains("\"v100\"") && e.contains("a100-40gb"), "{e}");
        assert!(Workload::new(0, 512, 1, 1.5).is_err());
    }
}

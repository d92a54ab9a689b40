//! One decoding step on many GPUs, or with the weights offloaded to the host (lecture §1.1, §4.6).
//!
//! **Tensor parallelism** (Megatron, inside a node): t GPUs each hold 1/t of every layer's
//! weights and of the KV heads, so each reads 1/t of the bytes and does 1/t of the FLOPs; every
//! layer ends its attention and its MLP with an all-reduce of the activations (B·k·d fp16 values)
//! over the node's link. A ring all-reduce takes 2(t − 1) hops, each a latency and 1/t of the
//! message: 2(t − 1)·latency + 2(t − 1)/t · bytes / bandwidth.
//! **Pipeline parallelism** (across nodes): p stages of layers/p layers each; the batch is cut
//! into m micro-batches (at most B; one without a pipeline) that follow each other through the stages, so a step takes
//! (m + p − 1) stage times plus p − 1 hand-overs of a micro-batch's activations over the network;
//! the stages wait for (p − 1)/(m + p − 1) of the step (the bubble), and each stage reads its
//! weights once per micro-batch.
//! **Offloading**: the weights live in the host's memory and cross to each GPU every step over
//! its own PCIe link, overlapped with the computation layer by layer (FlexGen's schedule): the
//! step takes the longer of the two.
//! A step: max(pipeline, transfer) + the fixed overhead. With t = p = m = 1 and nothing offloaded
//! this is [`super::step`] exactly.

use super::{presets::INFINIBAND, presets::PCIE4, step, Bound, Gpu, Model, Workload};
use crate::error::{Error, Range, Text};

/// GPUs of a node that split every layer (tensor parallelism).
pub const TP: Range = Range::new("tp", 1.0, 64.0);
/// Nodes, each a stage of consecutive layers (pipeline parallelism).
pub const PP: Range = Range::new("pp", 1.0, 64.0);
/// Micro-batches that follow each other through the pipeline's stages.
pub const MICRO_BATCHES: Range = Range::new("micro_batches", 1.0, 4096.0);

/// §1.1's LLaMA-2-70B on 4 A100-40GB: batch, context and k of the step the model reproduces the
/// measured 2% compute and 76% bandwidth with (the measurement's batch is not stated; at batch 4,
/// context 2048 the model gives 1.6% and 78%).
pub const LECTURE_1_1: (u32, u32, u32) = (4, 2048, 1);

/// How the target is deployed: t-way tensor parallel, p pipeline stages with m micro-batches,
/// the weights on the GPUs or offloaded to the host.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Deployment {
    pub tp: u32,
    pub pp: u32,
    pub micro_batches: u32,
    pub offload: bool,
}

impl Deployment {
    /// One GPU holding every weight: the lecture's demos.
    pub const SINGLE: Deployment = Deployment {
        tp: 1,
        pp: 1,
        micro_batches: 1,
        offload: false,
    };

    /// A deployment of `model`: t divides its heads and KV heads, p its layers.
    pub fn new(
        model: &Model,
        tp: u32,
        pp: u32,
        micro_batches: u32,
        offload: bool,
    ) -> Result<Deployment, Error> {
        TP.check(f64::from(tp))?;
        PP.check(f64::from(pp))?;
        MICRO_BATCHES.check(f64::from(micro_batches))?;
        if model.heads % tp != 0 || model.kv_heads % tp != 0 {
            let (h, kv, l) = (model.heads, model.kv_heads, model.label);
            let divisors = common_divisors(h, kv);
            return Err(Error::Parse {
                what: "parallelism",
                text: format!("tp {tp}"),
                why: Text::new(
                    format!("t GPUs split {l}'s {h} attention heads and {kv} KV heads, so t divides both ({divisors})"),
                    format!("t 块 GPU 平分 {l} 的 {h} 个注意力头和 {kv} 个 KV 头，所以 t 要同时整除两者（{divisors}）"),
                ),
            });
        }
        if model.layers % pp != 0 {
            let (n, l) = (model.layers, model.label);
            let divisors = common_divisors(n, n);
            return Err(Error::Parse {
                what: "parallelism",
                text: format!("pp {pp}"),
                why: Text::new(
                    format!("p stages split {l}'s {n} layers, so p divides {n} ({divisors})"),
                    format!("p 级流水线平分 {l} 的 {n} 层，所以 p 要整除 {n}（{divisors}）"),
                ),
            });
        }
        Ok(Deployment {
            tp,
            pp,
            micro_batches,
            offload,
        })
    }

    /// The GPUs the target runs on.
    pub fn gpus(&self) -> u32 {
        self.tp * self.pp
    }

    /// The micro-batches a step of `batch` requests runs in: none without a pipeline (one stage
    /// has nothing to overlap, so cutting the batch would only read the weights again), and at
    /// most one request each.
    pub fn micro_batches_used(&self, batch: u32) -> u32 {
        if self.pp == 1 {
            1
        } else {
            self.micro_batches.min(batch)
        }
    }
}

fn common_divisors(a: u32, b: u32) -> String {
    (1..=a.min(b))
        .filter(|t| a % t == 0 && b % t == 0)
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What limits a step on a deployment: one GPU's memory or compute, the GPUs' communication, or
/// (offloaded) the weights' crossing from the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    Memory,
    Compute,
    Communication,
    Transfer,
}

impl From<Bound> for Limit {
    fn from(b: Bound) -> Limit {
        match b {
            Bound::Memory => Limit::Memory,
            Bound::Compute => Limit::Compute,
        }
    }
}

/// The cost of one step on a deployment.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Served {
    /// FLOPs of the whole step, all GPUs together.
    pub flops: f64,
    /// Bytes read from the GPUs' memories, all GPUs together (weights once per micro-batch).
    pub bytes: f64,
    /// One GPU, one micro-batch through its stage: FLOPs/peak and bytes/bandwidth.
    pub compute_ms: f64,
    pub memory_ms: f64,
    /// The all-reduces and stage hand-overs on the step's critical path.
    pub comm_ms: f64,
    /// The weights' crossing from the host (offloading; 0 otherwise).
    pub transfer_ms: f64,
    /// The share of the step a stage waits for the pipeline to fill and drain.
    pub bubble: f64,
    /// The step, overhead included.
    pub time_ms: f64,
    /// The FLOPs done against what the GPUs' datasheet peaks could do in the step.
    pub compute_utilisation: f64,
    /// The bytes read against what the GPUs' memory bandwidth could read in the step.
    pub bandwidth_utilisation: f64,
    pub bound: Limit,
    pub gpus: u32,
    /// What one GPU holds: its share of the weights (none offloaded) and of the KV cache.
    pub memory_per_gpu_gb: f64,
    /// Of which the weights.
    pub weights_per_gpu_gb: f64,
    pub fits: bool,
}

/// A ring all-reduce of `bytes` over t GPUs on `gpu`'s link (0 on one GPU).
pub fn all_reduce_ms(gpu: &Gpu, t: u32, bytes: f64) -> f64 {
    if t == 1 {
        return 0.0;
    }
    let (t, link) = (f64::from(t), gpu.link);
    2.0 * (t - 1.0) * (link.latency_us / 1e3 + bytes / t / (link.bandwidth_gb_s * 1e9) * 1e3)
}

/// One step of `model` on `gpu`s deployed as `d` under `w` (the module doc has the formulas).
pub fn step_on(gpu: &Gpu, model: &Model, w: &Workload, d: &Deployment) -> Served {
    let (t, p) = (f64::from(d.tp), f64::from(d.pp));
    let m = d.micro_batches_used(w.batch);
    let micro = Workload {
        batch: w.batch.div_ceil(m),
        ..*w
    };
    let one = step(gpu, model, &micro);
    let shards = t * p;
    let (compute_ms, memory_ms) = (one.compute_ms / shards, one.memory_ms / shards);
    // Each layer's two all-reduces carry the micro-batch's activations: B·k·d fp16 values.
    let activations = f64::from(micro.batch) * f64::from(w.k) * f64::from(model.d) * 2.0;
    let layers = f64::from(model.layers) / p;
    let all_reduces = 2.0 * layers * all_reduce_ms(gpu, d.tp, activations);
    let stage_ms = compute_ms.max(memory_ms) + all_reduces;
    let hop_ms = if d.pp == 1 {
        0.0
    } else {
        INFINIBAND.latency_us / 1e3 + activations / (INFINIBAND.bandwidth_gb_s * 1e9) * 1e3
    };
    let rounds = f64::from(m) + p - 1.0;
    let pipeline_ms = rounds * stage_ms + (p - 1.0) * hop_ms;
    let weight_bytes = 2.0 * model.params;
    let transfer_ms = if d.offload {
        weight_bytes / shards / (PCIE4.bandwidth_gb_s * 1e9) * 1e3
    } else {
        0.0
    };
    let time_ms = pipeline_ms.max(transfer_ms) + w.overhead_ms;
    let whole = step(gpu, model, w);
    let kv_bytes = whole.bytes - weight_bytes;
    let bytes = f64::from(m) * weight_bytes + kv_bytes;
    let comm_ms = rounds * all_reduces + (p - 1.0) * hop_ms;
    let gpus = d.gpus();
    let seconds = time_ms / 1e3;
    let roof_ms = rounds * compute_ms.max(memory_ms);
    let bound = if transfer_ms > pipeline_ms {
        Limit::Transfer
    } else if comm_ms > roof_ms {
        Limit::Communication
    } else {
        Limit::from(one.bound)
    };
    let held = if d.offload { 0.0 } else { weight_bytes } + kv_bytes;
    let memory_per_gpu_gb = held / shards / 1e9;
    let weights_per_gpu_gb = if d.offload {
        0.0
    } else {
        weight_bytes / shards / 1e9
    };
    Served {
        flops: whole.flops,
        bytes,
        compute_ms,
        memory_ms,
        comm_ms,
        transfer_ms,
        bubble: (p - 1.0) / rounds,
        time_ms,
        compute_utilisation: whole.flops / (f64::from(gpus) * gpu.datasheet_flop_s() * seconds),
        bandwidth_utilisation: bytes / (f64::from(gpus) * gpu.bandwidth_gb_s * 1e9 * seconds),
        bound,
        gpus,
        memory_per_gpu_gb,
        weights_per_gpu_gb,
        fits: memory_per_gpu_gb <= gpu.memory_gb,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roofline::{gpu, model, Pair};

    fn w(batch: u32, context: u32, k: u32) -> Workload {
        Workload::new(batch, context, k, 1.5).unwrap()
    }

    #[test]
    fn one_gpu_is_the_single_gpu_model_exactly() {
        for g in crate::roofline::GPUS {
            for m in crate::roofline::MODELS {
                for (b, l, k) in [(1, 0, 1), (32, 512, 4), (7, 4096, 9), (256, 32768, 16)] {
                    let s = step(g, m, &w(b, l, k));
                    let d = step_on(g, m, &w(b, l, k), &Deployment::SINGLE);
                    assert_eq!(d.time_ms, s.time_ms, "{} {} {b} {l} {k}", g.name, m.name);
                    assert_eq!((d.compute_ms, d.memory_ms), (s.compute_ms, s.memory_ms));
                    assert_eq!((d.comm_ms, d.transfer_ms, d.bubble), (0.0, 0.0, 0.0));
                    assert_eq!((d.flops, d.bytes), (s.flops, s.bytes));
                    assert_eq!(d.bound, Limit::from(s.bound));
                }
            }
        }
    }

    #[test]
    fn t_gpus_split_the_weight_bytes_t_ways() {
        let (a100, llama) = (gpu("a100-40gb").unwrap(), model("llama2-70b").unwrap());
        let one = step(&a100, &llama, &w(1, 0, 1));
        for t in [2, 4, 8] {
            let d = Deployment::new(&llama, t, 1, 1, false).unwrap();
            let s = step_on(&a100, &llama, &w(1, 0, 1), &d);
            // Context 0, k 1: one token, no KV read; the weights, 138 GB, split t ways.
            assert_eq!(s.memory_ms, 2.0 * 69e9 / f64::from(t) / 1555e9 * 1e3);
            assert_eq!(s.memory_ms * f64::from(t), one.memory_ms);
            assert_eq!(s.gpus, t);
        }
    }

    #[test]
    fn all_reduce_by_hand() {
        // 4 A100s, 1 MB: 6 hops of 5 µs and of 1/4 MB at 300 GB/s.
        let a100 = gpu("a100-40gb").unwrap();
        let hand = 6.0 * (5e-3 + 0.25e6 / 300e9 * 1e3);
        assert!((all_reduce_ms(&a100, 4, 1e6) - hand).abs() < 1e-15);
        assert_eq!(all_reduce_ms(&a100, 1, 1e6), 0.0);
    }

    #[test]
    fn tensor_parallel_step_by_hand() {
        // LLaMA-2-70B, 4 × A100-40GB, batch 8, context 1024, k 1.
        let (a100, llama) = (gpu("a100-40gb").unwrap(), model("llama2-70b").unwrap());
        let d = Deployment::new(&llama, 4, 1, 1, false).unwrap();
        let s = step_on(&a100, &llama, &w(8, 1024, 1), &d);
        // KV per token: 2 (K and V) · 80 layers · 1024 (8 of 64 heads of 8192) · 2 bytes.
        let kv = 2.0 * 80.0 * 1024.0 * 2.0;
        let bytes = 2.0 * 69e9 + 8.0 * 1024.0 * kv;
        let memory = bytes / 4.0 / 1555e9 * 1e3;
        let flops = 2.0 * 69e9 * 8.0 + 4.0 * 80.0 * 8192.0 * 8.0 * 1024.0;
        let compute = flops / 4.0 / (0.6 * 312e12) * 1e3;
        let message = 8.0 * 8192.0 * 2.0;
        let comm = 160.0 * 6.0 * (5e-3 + message / 4.0 / 300e9 * 1e3);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b;
        assert!(
            close(s.memory_ms, memory) && close(s.compute_ms, compute),
            "{s:?}"
        );
        assert!(close(s.comm_ms, comm), "{} vs {comm}", s.comm_ms);
        assert!(close(s.time_ms, memory + comm + 1.5), "{s:?}");
        let seconds = s.time_ms / 1e3;
        assert!(close(
            s.bandwidth_utilisation,
            bytes / (4.0 * 1555e9 * seconds)
        ));
        assert!(close(
            s.compute_utilisation,
            flops / (4.0 * 312e12 * seconds)
        ));
        assert_eq!(s.bound, Limit::Memory);
        assert!(s.fits, "{} GB", s.memory_per_gpu_gb);
    }

    #[test]
    fn pipeline_fills_and_drains_by_hand() {
        // OPT-13B on 2 stages × 1 GPU, batch 8 in 4 micro-batches of 2: 5 stage times, 1 hop.
        let (a100, opt) = (gpu("a100-40gb").unwrap(), model("opt-13b").unwrap());
        let d = Deployment::new(&opt, 1, 2, 4, false).unwrap();
        let s = step_on(&a100, &opt, &w(8, 512, 1), &d);
        let one = step(&a100, &opt, &w(2, 512, 1));
        let stage = one.compute_ms.max(one.memory_ms) / 2.0;
        let hop = 10e-3 + 2.0 * 5120.0 * 2.0 / 25e9 * 1e3;
        assert!(
            (s.time_ms - (5.0 * stage + hop + 1.5)).abs() < 1e-12,
            "{s:?}"
        );
        assert_eq!(s.bubble, 1.0 / 5.0);
        // Each stage reads its weights once per micro-batch.
        assert_eq!(
            s.bytes,
            4.0 * 26e9 + step(&a100, &opt, &w(8, 512, 1)).bytes - 26e9
        );
    }

    #[test]
    fn micro_batches_need_a_pipeline() {
        let (a100, opt) = (gpu("a100-40gb").unwrap(), model("opt-13b").unwrap());
        let one = step_on(&a100, &opt, &w(32, 512, 4), &Deployment::SINGLE);
        let cut = Deployment::new(&opt, 1, 1, 8, false).unwrap();
        assert_eq!(step_on(&a100, &opt, &w(32, 512, 4), &cut), one);
        // With two stages, 8 micro-batches of 4, at batch 2 only 2 of one each.
        let piped = Deployment::new(&opt, 1, 2, 8, false).unwrap();
        assert_eq!(piped.micro_batches_used(32), 8);
        assert_eq!(piped.micro_batches_used(2), 2);
    }

    #[test]
    fn offloaded_step_is_the_weights_over_pcie() {
        // OPT-30B on one A10, weights in host memory: 60 GB at 25 GB/s = 2.4 s a step, and k
        // barely matters.
        let (a10, opt) = (gpu("a10").unwrap(), model("opt-30b").unwrap());
        let on_gpu = step_on(&a10, &opt, &w(1, 512, 1), &Deployment::SINGLE);
        assert!(!on_gpu.fits, "60 GB of weights do not fit 24 GB");
        let d = Deployment::new(&opt, 1, 1, 1, true).unwrap();
        let s = |k| step_on(&a10, &opt, &w(1, 512, k), &d);
        assert_eq!(s(1).transfer_ms, 60e9 / 25e9 * 1e3);
        assert_eq!(s(1).time_ms, 2400.0 + 1.5);
        assert_eq!(s(1).bound, Limit::Transfer);
        assert!(s(1).fits);
        assert_eq!(s(16).time_ms, s(1).time_ms);
        // So speculation gains most: with a draft on the GPU, γ = 16 is best at α = 0.8.
        let pair = Pair {
            deployment: d,
            ..Pair::single(a10, model("opt-125m").unwrap(), opt, 1.5)
        };
        let best = pair.optimal_gamma(1, 512, 0.8, 16).best.unwrap();
        assert_eq!(best.gamma, 16);
        assert!(best.speedup > 4.5, "{best:?}");
    }

    #[test]
    fn lecture_llama_70b_on_four_a100s_uses_2_percent_compute_76_percent_bandwidth() {
        // §1.1 at the lecture's configuration (LECTURE_1_1): 1.6% and 78%.
        let (a100, llama) = (gpu("a100-40gb").unwrap(), model("llama2-70b").unwrap());
        let d = Deployment::new(&llama, 4, 1, 1, false).unwrap();
        let (b, l, k) = LECTURE_1_1;
        let s = step_on(&a100, &llama, &w(b, l, k), &d);
        let (c, b) = (
            s.compute_utilisation * 100.0,
            s.bandwidth_utilisation * 100.0,
        );
        assert!(
            (c - 2.0).abs() < 0.5 && (b - 76.0).abs() < 3.0,
            "{c:.2}% / {b:.2}%"
        );
        // The rest of the step is the 160 all-reduces (4.85 ms) and the fixed 1.5 ms.
        assert!((s.comm_ms - 4.85).abs() < 0.01, "{}", s.comm_ms);
    }

    #[test]
    fn bad_deployments_name_the_rule() {
        let llama = model("llama2-70b").unwrap();
        let e = Deployment::new(&llama, 3, 1, 1, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("tp 3") && e.contains("1, 2, 4, 8"), "{e}");
        let e = Deployment::new(&llama, 16, 1, 1, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("8 KV heads"), "{e}");
        let e = Deployment::new(&llama, 1, 3, 1, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("pp 3") && e.contains("80 layers"), "{e}");
        assert!(Deployment::new(&llama, 0, 1, 1, false).is_err());
        assert!(Deployment::new(&llama, 1, 1, 0, false).is_err());
    }
}

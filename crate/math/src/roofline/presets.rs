//! The roofline model's hardware and models: GPUs (bandwidth, effective peak, memory, the link
//! between GPUs of a node), the links between nodes and to the host, and decoder-only models
//! (parameters, layers, d, attention and KV heads). Figures are datasheet figures; where a link's
//! achieved figure differs from its nominal one, the achieved one is used and both are named.

use crate::error::Error;

/// The lecture's efficiency factor: a GPU reaches 0.6 of its datasheet dense fp16 peak.
pub const EFFICIENCY: f64 = 0.6;

/// A link that moves bytes: per direction, with a latency per hop (one message one way).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Link {
    pub name: &'static str,
    pub label: &'static str,
    pub bandwidth_gb_s: f64,
    pub latency_us: f64,
}

/// NVLink 3 (A100): 600 GB/s both ways together, 300 GB/s each way.
pub const NVLINK3: Link = Link {
    name: "nvlink3",
    label: "NVLink 3",
    bandwidth_gb_s: 300.0,
    latency_us: 5.0,
};

/// NVLink 4 (H100, H200): 900 GB/s both ways together, 450 GB/s each way.
pub const NVLINK4: Link = Link {
    name: "nvlink4",
    label: "NVLink 4",
    bandwidth_gb_s: 450.0,
    latency_us: 5.0,
};

/// PCIe 4.0 ×16: 32 GB/s each way nominal, about 25 GB/s achieved. The link between GPUs that
/// have no NVLink, and between a GPU and the host's memory (offloading).
pub const PCIE4: Link = Link {
    name: "pcie4-x16",
    label: "PCIe 4.0 ×16",
    bandwidth_gb_s: 25.0,
    latency_us: 10.0,
};

/// InfiniBand HDR (200 Gb/s = 25 GB/s) between nodes: pipeline stages hand activations over it.
pub const INFINIBAND: Link = Link {
    name: "infiniband-hdr",
    label: "InfiniBand HDR",
    bandwidth_gb_s: 25.0,
    latency_us: 10.0,
};

/// A GPU: memory bandwidth, the *effective* compute peak (`EFFICIENCY` × the datasheet fp16
/// peak), its memory and the link to the other GPUs of its node.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Gpu {
    pub name: &'static str,
    pub label: &'static str,
    pub bandwidth_gb_s: f64,
    pub peak_tflop_s: f64,
    pub memory_gb: f64,
    pub link: Link,
}

/// A decoder-only model: parameters (fp16), layers, hidden size d, attention heads and KV heads
/// (fewer than the heads under grouped-query attention: LLaMA-2-70B's 8 of 64).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Model {
    pub name: &'static str,
    pub label: &'static str,
    pub params: f64,
    pub layers: u32,
    pub d: u32,
    pub heads: u32,
    pub kv_heads: u32,
}

const fn gpu_of(
    name: &'static str,
    label: &'static str,
    bandwidth_gb_s: f64,
    datasheet_tflop_s: f64,
    memory_gb: f64,
    link: Link,
) -> Gpu {
    Gpu {
        name,
        label,
        bandwidth_gb_s,
        peak_tflop_s: EFFICIENCY * datasheet_tflop_s,
        memory_gb,
        link,
    }
}

/// Datasheet dense fp16 tensor peaks × `EFFICIENCY`.
pub const GPUS: &[Gpu] = &[
    gpu_of("a100-40gb", "A100-40GB", 1555.0, 312.0, 40.0, NVLINK3),
    gpu_of("a100-80gb", "A100-80GB", 2039.0, 312.0, 80.0, NVLINK3),
    gpu_of("h100-sxm", "H100 SXM", 3350.0, 989.0, 80.0, NVLINK4),
    gpu_of("h200", "H200", 4800.0, 989.0, 141.0, NVLINK4),
    gpu_of("rtx-4090", "RTX 4090", 1008.0, 165.2, 24.0, PCIE4),
    gpu_of("l4", "L4", 300.0, 121.0, 24.0, PCIE4),
    // SpecInfer's offloading runs: one 24 GB A10 with OPT-13B or OPT-30B in the host's memory.
    gpu_of("a10", "A10", 600.0, 125.0, 24.0, PCIE4),
];

const fn model_of(
    name: &'static str,
    label: &'static str,
    params: f64,
    layers: u32,
    d: u32,
    heads: u32,
    kv_heads: u32,
) -> Model {
    Model {
        name,
        label,
        params,
        layers,
        d,
        heads,
        kv_heads,
    }
}

pub const MODELS: &[Model] = &[
    model_of("opt-125m", "OPT-125M", 125e6, 12, 768, 12, 12),
    model_of("opt-350m", "OPT-350M", 350e6, 24, 1024, 16, 16),
    model_of("opt-1.3b", "OPT-1.3B", 1.3e9, 24, 2048, 32, 32),
    model_of("opt-6.7b", "OPT-6.7B", 6.7e9, 32, 4096, 32, 32),
    model_of("opt-13b", "OPT-13B", 13e9, 40, 5120, 40, 40),
    model_of("opt-30b", "OPT-30B", 30e9, 48, 7168, 56, 56),
    // SpecInfer's small speculative model for the LLaMA family.
    model_of("llama-68m", "LLaMA-68M", 68e6, 2, 768, 12, 12),
    model_of("llama2-7b", "LLaMA-2-7B", 6.74e9, 32, 4096, 32, 32),
    model_of("llama2-13b", "LLaMA-2-13B", 13.0e9, 40, 5120, 40, 40),
    // Grouped-query attention: 64 heads share 8 KV heads.
    model_of("llama2-70b", "LLaMA-2-70B", 69e9, 80, 8192, 64, 8),
];

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
    /// KV cache bytes per token: keys and values of the KV heads, every layer, fp16.
    pub fn kv_bytes_per_token(&self) -> f64 {
        let kv_width = f64::from(self.d) * f64::from(self.kv_heads) / f64::from(self.heads);
        2.0 * f64::from(self.layers) * kv_width * 2.0
    }
}

impl Gpu {
    /// The arithmetic intensity (FLOP/byte) where compute time equals memory time.
    pub fn knee(&self) -> f64 {
        self.peak_tflop_s * 1e12 / (self.bandwidth_gb_s * 1e9)
    }

    /// The datasheet peak in FLOP/s, against which a utilisation is measured.
    pub fn datasheet_flop_s(&self) -> f64 {
        self.peak_tflop_s / EFFICIENCY * 1e12
    }
}

//! Per-call latency of a model, the way a decode loop calls it (lecture §2.5: c is measured, not
//! assumed): one token on a warm 32-token KV cache, a chain of γ + 1 = 5 tokens on that cache, and
//! the ⟨2,2,2,2⟩ tree (31 tokens with its root) under the tree mask on that cache — the same
//! workloads as the peer benchmark in `shared/peers`. Every call reads its logits back to the
//! host, as a decoder must, and the cache is truncated back to 32 tokens after each call.

use super::tree_attention::tree_inputs;
use super::{floats, Decoder, KvCache, ModelKind, Models};
use crate::clock::Clock;
use crate::error::{Error, Range};
use crate::tree::{parse_config, TokenTree, DEFAULT_NODE_BUDGET};
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};

/// Cached tokens before every timed call.
pub const CACHED: usize = 32;
/// Calls per timed block.
pub const BLOCK: usize = 10;

/// One workload's input: tokens, positions and mask for the new tokens.
struct Call {
    tokens: Vec<i64>,
    positions: Vec<i64>,
    mask: Vec<bool>,
}

impl Call {
    fn chain(n: usize) -> Call {
        Call {
            tokens: (0..n as i64).map(|i| 6 + i).collect(),
            positions: (CACHED as i64..(CACHED + n) as i64).collect(),
            mask: (0..n)
                .flat_map(|r| (0..CACHED + n).map(move |c| c <= CACHED + r))
                .collect(),
        }
    }

    /// The ⟨2,2,2,2⟩ tree with its root as the first new token, in depth-first order.
    fn tree() -> Call {
        let config = parse_config("<2,2,2,2>", DEFAULT_NODE_BUDGET).expect("a valid config");
        let inputs = tree_inputs(&TokenTree::expand(&config, "r"), true, CACHED, CACHED);
        Call {
            tokens: (0..inputs.order.len() as i64).map(|i| 6 + i % 30).collect(),
            positions: inputs.positions,
            mask: inputs.mask,
        }
    }
}

/// Median and 95th percentile of one workload, in microseconds, and what one call costs in GPU
/// dispatches where the caller can count them (the page wraps WebGPU's `dispatchWorkgroups`).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Latency {
    pub median_us: f64,
    /// The spread of the blocks' times (interquartile range); `None` for one block, which has none.
    pub iqr_us: Option<f64>,
    pub p95_us: f64,
    pub dispatches: Option<f64>,
}

/// Latency of the three workloads (decode1, chain5, tree31).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct ModelLatency {
    pub decode1: Latency,
    pub chain5: Latency,
    pub tree31: Latency,
}

/// A running count of GPU dispatches, where the caller has one.
pub type Counter<'a> = Option<&'a dyn Fn() -> f64>;

async fn time_call(
    model: &Decoder,
    device: &Device,
    call: &Call,
    runs: usize,
    warmup: usize,
    clock: Clock<'_>,
    dispatches: Counter<'_>,
) -> Result<Latency, Error> {
    let n = call.tokens.len();
    let mut cache = KvCache::new(model.n_layers());
    let prefix_tokens: Vec<i64> = (0..CACHED as i64).map(|i| 6 + i % 30).collect();
    let prefix_pos: Vec<i64> = (0..CACHED as i64).collect();
    let prefix_mask: Vec<bool> = (0..CACHED)
        .flat_map(|r| (0..CACHED).map(move |c| c <= r))
        .collect();
    model.forward(
        Tensor::<2, Int>::from_data(TensorData::new(prefix_tokens, [1, CACHED]), device),
        Tensor::<2, Int>::from_data(TensorData::new(prefix_pos, [1, CACHED]), device),
        Tensor::<3, Bool>::from_data(TensorData::new(prefix_mask, [1, CACHED, CACHED]), device),
        &mut cache,
    );
    // Calls are timed in blocks of BLOCK: browsers coarsen `performance.now()` to 100 µs without
    // cross-origin isolation, finer than a block of calls but not than one call.
    let mut times = Vec::with_capacity(runs / BLOCK + 1);
    let mut call_once = async || -> Result<(), Error> {
        let logits = model.forward(
            Tensor::<2, Int>::from_data(TensorData::new(call.tokens.clone(), [1, n]), device),
            Tensor::<2, Int>::from_data(TensorData::new(call.positions.clone(), [1, n]), device),
            Tensor::<3, Bool>::from_data(
                TensorData::new(call.mask.clone(), [1, n, CACHED + n]),
                device,
            ),
            &mut cache,
        );
        std::hint::black_box(floats(logits).await?);
        cache.narrow(CACHED);
        Ok(())
    };
    for _ in 0..warmup {
        call_once().await?;
    }
    let counted_from = dispatches.map(|count| count());
    for _ in 0..runs.div_ceil(BLOCK) {
        let started = clock();
        for _ in 0..BLOCK {
            call_once().await?;
        }
        times.push((clock() - started) / BLOCK as f64);
    }
    let calls = (times.len() * BLOCK) as f64;
    let dispatches = dispatches
        .zip(counted_from)
        .map(|(count, from)| (count() - from) / calls);
    times.sort_by(f64::total_cmp);
    Ok(Latency {
        median_us: times[times.len() / 2],
        iqr_us: (times.len() > 1).then(|| super::measure::iqr(times.clone())),
        p95_us: times[(times.len() * 95 / 100).min(times.len() - 1)],
        dispatches,
    })
}

/// Timed calls per workload a user may ask for, and untimed calls before them.
pub const RUNS: Range = Range::new("runs", 1.0, 10_000.0);
pub const WARMUP: Range = Range::new("warmup", 0.0, 10_000.0);

/// The three models' latencies on one backend, and c of each draft: its one-token call over the
/// target's, on a warm cache (the lecture's c, measured).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Latencies {
    pub target: ModelLatency,
    pub draft_a: ModelLatency,
    pub draft_b: ModelLatency,
    pub c: [f64; 2],
}

impl Latencies {
    pub fn new(target: ModelLatency, draft_a: ModelLatency, draft_b: ModelLatency) -> Latencies {
        let c = |d: &ModelLatency| d.decode1.median_us / target.decode1.median_us;
        Latencies {
            c: [c(&draft_a), c(&draft_b)],
            target,
            draft_a,
            draft_b,
        }
    }
}

/// [`latency`] of each of `models`' three models, `runs` calls each after `warmup` untimed ones
/// (default: runs / 3 + 20, enough for a browser to tier up); `timing` is told which model is
/// being timed.
pub async fn latencies(
    models: &Models,
    (runs, warmup): (usize, Option<usize>),
    clock: Clock<'_>,
    dispatches: Counter<'_>,
    timing: &mut dyn FnMut(ModelKind),
) -> Result<Latencies, Error> {
    RUNS.check(runs as f64)?;
    let warmup = match warmup {
        Some(w) => WARMUP.check(w as f64)? as usize,
        None => runs / 3 + 20,
    };
    let mut timed = Vec::with_capacity(3);
    for kind in ModelKind::ALL {
        timing(kind);
        let m = models.get(kind);
        timed.push(latency(m, models.device_of(kind), runs, warmup, clock, dispatches).await?);
    }
    Ok(Latencies::new(timed[0], timed[1], timed[2]))
}

/// Times the three workloads, `runs` calls each after `warmup` untimed ones (and counts the
/// dispatches of the timed calls, given a counter).
pub async fn latency(
    model: &Decoder,
    device: &Device,
    runs: usize,
    warmup: usize,
    clock: Clock<'_>,
    dispatches: Counter<'_>,
) -> Result<ModelLatency, Error> {
    let time = |call| time_call(model, device, call, runs, warmup, clock, dispatches);
    Ok(ModelLatency {
        decode1: time(&Call::chain(1)).await?,
        chain5: time(&Call::chain(5)).await?,
        tree31: time(&Call::tree()).await?,
    })
}

//! The roofline explorer (lecture §1.2, §2.5, demos 1/4/5): one step's time against k with its
//! memory and compute parts, the cost ratio c of the draft, and the demo-5 heat map of the
//! optimal γ over batch × context. The target can be deployed on many GPUs (tensor and pipeline
//! parallel, §1.1, §4.6) or offloaded to the host's memory: the step, the heat map and the
//! utilisation line follow.

use crate::error::{Error, Range};
use crate::i18n::Lang;
use crate::plot::diagrams::{ramp, Grid};
use crate::plot::{colors, figure_width, render, render_overlay, Align, Chart, Labels, Scale};
use crate::roofline::{
    self, Best, Cell, Deployment, Limit, Pair, Served, Step, Workload, EFFICIENCY,
};

/// The acceptance rate of the heat map.
pub const ALPHA: Range = Range::new("alpha", 0.0, 1.0).shown_as("α");

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct RooflineParams {
    pub gpu: String,
    pub target: String,
    pub draft: String,
    pub batch: u32,
    pub context: u32,
    pub k: u32,
    pub overhead_ms: f64,
    /// α used for the heat map's optimal γ.
    pub alpha: f64,
    /// The target's deployment: tensor-parallel GPUs, pipeline stages, micro-batches, and the
    /// weights offloaded to the host's memory.
    pub tp: u32,
    pub pp: u32,
    pub micro_batches: u32,
    pub offload: bool,
    /// The language of the figures' texts.
    pub lang: Lang,
    /// The room the page has for a figure, in CSS px (none: each figure's own width): figures
    /// are drawn for it rather than scaled down, so that their labels keep their size.
    pub figure_width: Option<u32>,
}

impl Default for RooflineParams {
    fn default() -> Self {
        RooflineParams {
            gpu: "a100-40gb".into(),
            target: "opt-13b".into(),
            draft: "opt-125m".into(),
            batch: 32,
            context: 512,
            k: 4,
            overhead_ms: roofline::DEFAULT_OVERHEAD_MS,
            alpha: 0.8,
            tp: 1,
            pp: 1,
            micro_batches: 1,
            offload: false,
            lang: Lang::En,
            figure_width: None,
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct RooflineView {
    /// The step on one GPU (its intensity is the step's whatever the deployment).
    pub step: Step,
    /// The step on the deployment (one GPU: the same time and roof as `step`).
    pub served: Served,
    pub deployment: Deployment,
    /// What the deployment does: GPUs, communication, utilisation, memory, in the page's language.
    pub deployed: String,
    pub knee: f64,
    /// c of the draft against the target at this batch and context (k = 1).
    pub c: f64,
    /// The best γ for this batch and context at α, up to `max_gamma`.
    pub optimal: Cell,
    pub max_gamma: u32,
    pub batches: Vec<u32>,
    pub contexts: Vec<u32>,
    pub heat: Vec<Vec<Cell>>,
    pub svg: String,
    pub svg_heat: String,
    /// A transparent layer over `svg_heat` outlining the current batch × context cell.
    pub svg_heat_marker: String,
}

pub const HEAT_BATCHES: [u32; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];
pub const HEAT_CONTEXTS: [u32; 9] = [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768];
/// k shown on the x-axis of the step chart (the page's k slider stops there).
pub const K_AXIS: u32 = 64;

pub fn roofline_view(params: &RooflineParams) -> Result<RooflineView, Error> {
    let gpu = roofline::gpu(&params.gpu)?;
    let target = roofline::model(&params.target)?;
    let (tp, pp, m) = (params.tp, params.pp, params.micro_batches);
    let pair = Pair {
        deployment: Deployment::new(&target, tp, pp, m, params.offload)?,
        ..Pair::single(
            gpu,
            roofline::model(&params.draft)?,
            target,
            params.overhead_ms,
        )
    };
    let w = Workload::new(params.batch, params.context, params.k, params.overhead_ms)?;
    let alpha = ALPHA.check(params.alpha)?;
    let step = roofline::step(&gpu, &pair.target, &w);
    let served = pair.target_step(w.batch, w.context, w.k);
    let heat = pair.heat_map(&HEAT_BATCHES, &HEAT_CONTEXTS, alpha);
    Ok(RooflineView {
        step,
        served,
        deployment: pair.deployment,
        deployed: deployed(&pair, &w, &served, params.lang),
        knee: gpu.knee(),
        c: pair.cost_ratio(w.batch, w.context),
        optimal: pair.optimal_gamma(w.batch, w.context, alpha, roofline::MAX_GAMMA),
        max_gamma: roofline::MAX_GAMMA,
        svg: time_against_k(
            &pair,
            &w,
            params.lang,
            figure_width(560, params.figure_width),
        ),
        svg_heat: heat_svg(&heat, alpha, &pair, params.lang),
        svg_heat_marker: heat_marker(&w, params.lang),
        batches: HEAT_BATCHES.to_vec(),
        contexts: HEAT_CONTEXTS.to_vec(),
        heat,
    })
}

/// Where the target runs, as a title says it: "LLaMA-2-70B on 4 × A100-40GB (tp 4)",
/// "OPT-30B on A10, weights offloaded" / "OPT-30B 在 A10 上（权重卸载到主机）".
fn runs_on(pair: &Pair, l: Lang) -> String {
    let (d, g, t) = (pair.deployment, pair.gpu.label, pair.target.label);
    let on = match (d.tp, d.pp) {
        (1, 1) => g.to_string(),
        (n, 1) => format!("{n} × {g} (tp {n})"),
        (n, p) => format!("{} × {g} (tp {n} × pp {p})", n * p),
    };
    match (l, d.offload) {
        (Lang::En, false) => format!("{t} on {on}"),
        (Lang::En, true) => format!("{t} on {on}, weights offloaded"),
        (Lang::Zh, false) => format!("{t} 在 {on} 上"),
        (Lang::Zh, true) => format!("{t} 在 {on} 上（权重卸载到主机）"),
    }
}

/// The words for what limits a step.
pub fn limit_words(limit: Limit, l: Lang) -> &'static str {
    match limit {
        Limit::Memory => l.pick("memory-bound", "访存受限"),
        Limit::Compute => l.pick("compute-bound", "算力受限"),
        Limit::Communication => l.pick("communication-bound", "通信受限"),
        Limit::Transfer => l.pick(
            "transfer-bound (weights over PCIe)",
            "搬运受限（权重走 PCIe）",
        ),
    }
}

/// The deployment's line: what does not fit, GPUs, communication, transfer, bubble,
/// utilisation, memory per GPU.
fn deployed(pair: &Pair, w: &Workload, s: &Served, l: Lang) -> String {
    let d = pair.deployment;
    let (cu, bu) = (
        s.compute_utilisation * 100.0,
        s.bandwidth_utilisation * 100.0,
    );
    let (held, cap) = (s.memory_per_gpu_gb, pair.gpu.memory_gb);
    let (weights, kv) = (s.weights_per_gpu_gb, held - s.weights_per_gpu_gb);
    // The cache holds the context and the step's k new tokens but the last (the spec's bytes).
    let (b, c) = (w.batch, w.context + w.k.max(1) - 1);
    let mut parts = Vec::new();
    // What does not fit comes first: every number after it describes a step that cannot run.
    if !s.fits {
        parts.push(if weights > cap {
            l.pick(
                format!("does not fit: {held:.1} GB per GPU, {cap} GB each (the weights alone are {weights:.1} GB): add GPUs or offload the weights"),
                format!("放不下：每块 GPU 要 {held:.1} GB，每块只有 {cap} GB（光权重就 {weights:.1} GB）：加 GPU，或把权重卸载到主机"),
            )
        } else {
            l.pick(
                format!("does not fit: {held:.1} GB per GPU, {cap} GB each, {kv:.1} GB of it the KV cache of {b} × {c} tokens: a smaller batch or context, or more GPUs"),
                format!("放不下：每块 GPU 要 {held:.1} GB，每块只有 {cap} GB，其中 KV 缓存（{b} × {c} 个 token）占 {kv:.1} GB：减小批或上下文，或者加 GPU"),
            )
        });
    }
    if d.tp > 1 || d.pp > 1 {
        let comm = s.comm_ms;
        parts.push(if d.pp > 1 {
            let (m, bubble) = (d.micro_batches_used(b), s.bubble * 100.0);
            let es = if m == 1 { "" } else { "es" };
            l.pick(
                format!("{} GPUs: communication {comm:.2} ms of the step, pipeline bubble {bubble:.0}% ({m} micro-batch{es})", s.gpus),
                format!("{} 块 GPU：通信占每步 {comm:.2} ms，流水线气泡 {bubble:.0}%（{m} 个微批）", s.gpus),
            )
        } else {
            l.pick(
                format!("{} GPUs: communication {comm:.2} ms of the step", s.gpus),
                format!("{} 块 GPU：通信占每步 {comm:.2} ms", s.gpus),
            )
        });
    }
    if d.offload {
        parts.push(l.pick(
            format!("the weights cross PCIe in {:.1} ms a step", s.transfer_ms),
            format!("权重每步经 PCIe 搬运 {:.1} ms", s.transfer_ms),
        ));
    }
    // The model's compute roof is EFFICIENCY of the datasheet peak; utilisation is measured
    // against the datasheet, as a measurement would be.
    let roof = EFFICIENCY * 100.0;
    parts.push(l.pick(
        format!("utilisation: compute {cu:.1}% of the datasheet peak (at most {roof:.0}% in this model), memory bandwidth {bu:.1}%"),
        format!("利用率：算力为标称峰值的 {cu:.1}%（本模型最多 {roof:.0}%），显存带宽 {bu:.1}%"),
    ));
    if s.fits {
        parts.push(l.pick(
            format!("{held:.1} GB per GPU, {cap} GB each"),
            format!("每块 GPU 占用 {held:.1} GB（每块 {cap} GB）"),
        ));
    }
    parts.join(l.pick("; ", "；"))
}

fn time_against_k(pair: &Pair, w: &Workload, l: Lang, width: u32) -> String {
    let kmax = K_AXIS.max(w.k);
    let steps: Vec<(f64, Served)> = (1..=kmax)
        .map(|k| (f64::from(k), pair.target_step(w.batch, w.context, k)))
        .collect();
    let d = pair.deployment;
    // The pipeline's stage rounds: the roofs are each GPU's, once per round.
    let rounds = f64::from(d.micro_batches_used(w.batch) + d.pp - 1);
    let line = |f: &dyn Fn(&Served) -> f64| -> Vec<(f64, f64)> {
        steps.iter().map(|(k, s)| (*k, f(s))).collect()
    };
    let total = line(&|s| s.time_ms);
    let mem = line(&|s| rounds * s.memory_ms + w.overhead_ms);
    let comp = line(&|s| rounds * s.compute_ms + w.overhead_ms);
    let comm = line(&|s| s.comm_ms + w.overhead_ms);
    let transfer = line(&|s| s.transfer_ms + w.overhead_ms);
    let top = total.iter().map(|t| t.1).fold(0.0, f64::max) * 1.1;
    let now = pair.target_step(w.batch, w.context, w.k);
    let (t, b, c) = (pair.target.label, w.batch, w.context);
    let on = runs_on(pair, l);
    let label = l.pick(
        format!("Step time of {t} against k at batch {b}, context {c}"),
        format!("批 {b}、上下文 {c} 时 {t} 的每步时间随 k 的变化"),
    );
    render(width, 310, &label, |cv| {
        let title = l.pick(
            format!("{on}: one step, batch {b}, context {c}"),
            format!("{on}：一步，批 {b}，上下文 {c}"),
        );
        let labels = Labels {
            title: &title,
            x: l.pick(
                "k (tokens per request in the step, log)",
                "k（这一步里每个请求的 token 数，对数）",
            ),
            y: l.pick("time per step (ms)", "每步时间（ms）"),
        };
        let ch = Chart::new(
            cv,
            (60, 40, width as i32 - 20, 250),
            Scale::log(1.0, f64::from(kmax)),
            Scale::linear(0.0, top),
            &labels,
        );
        ch.polyline(&mem, colors::BLUE, 1);
        ch.polyline(&comp, colors::PURPLE, 1);
        let mut legend = vec![
            (l.pick("step time", "每步时间"), colors::INK),
            (
                l.pick("bytes/bandwidth + overhead", "字节/带宽 + 固定开销"),
                colors::BLUE,
            ),
            (
                l.pick("FLOPs/peak + overhead", "FLOPs/峰值 + 固定开销"),
                colors::PURPLE,
            ),
        ];
        if d.tp > 1 || d.pp > 1 {
            ch.polyline(&comm, colors::ORANGE, 1);
            legend.push((l.pick("communication", "通信"), colors::ORANGE));
        }
        if d.offload {
            ch.polyline(&transfer, colors::RED, 1);
            legend.push((l.pick("weights over PCIe", "权重经 PCIe"), colors::RED));
        }
        ch.polyline(&total, colors::INK, 3);
        let k = f64::from(w.k);
        ch.vline(k, colors::AXIS);
        ch.dots(&[(k, now.time_ms)], colors::RED, 5);
        ch.note(
            k,
            now.time_ms,
            &{
                let (k, t, b) = (w.k, now.time_ms, limit_words(now.bound, l));
                l.pick(
                    format!("k={k}: {t:.2} ms, {b}"),
                    format!("k={k}：{t:.2} ms，{b}"),
                )
            },
            colors::RED,
            Align::Start,
        );
        cv.legend((70, 298), &legend);
    })
}

// Shared by the heat map and its marker overlay, which must line up cell for cell.
// Room under the title for a second line (the deployment) above the column labels, and under
// the grid for two lines of key.
const HEAT_SIZE: (u32, u32) = (560, 360);
const HEAT_ORIGIN: (i32, i32) = (70, 60);
const HEAT_CELL: (i32, i32) = (52, 30);

fn heat_svg(heat: &[Vec<Cell>], alpha: f64, pair: &Pair, l: Lang) -> String {
    let rows: Vec<String> = HEAT_BATCHES.iter().map(|b| format!("B {b}")).collect();
    let cols: Vec<String> = HEAT_CONTEXTS
        .iter()
        .map(|l| {
            if *l >= 1024 {
                format!("{}k", l / 1024)
            } else {
                l.to_string()
            }
        })
        .collect();
    // The colour scale over the cells whose step can run: the others have no speedup.
    let best = heat
        .iter()
        .flatten()
        .filter_map(|c| c.best)
        .map(|b| b.speedup)
        .fold(1.0, f64::max);
    let label = l.pick(
        format!("Optimal gamma over batch and context at alpha {alpha}"),
        format!("α = {alpha} 时各批大小与上下文的最优 γ"),
    );
    render(HEAT_SIZE.0, HEAT_SIZE.1, &label, |cv| {
        if pair.deployment != Deployment::SINGLE {
            cv.text(
                (60, 32),
                &runs_on(pair, l),
                11,
                colors::AXIS,
                Align::Start,
                false,
            );
        }
        cv.text(
            (60, 16),
            &l.pick(
                format!("Demo 5: optimal γ (and speedup) at α = {alpha}"),
                format!("演示 5：α = {alpha} 时的最优 γ（和加速比）"),
            ),
            14,
            colors::INK,
            Align::Start,
            false,
        );
        let grid = Grid {
            rows: &rows,
            cols: &cols,
            cell_w: HEAT_CELL.0,
            cell_h: HEAT_CELL.1,
            origin: HEAT_ORIGIN,
        };
        grid.draw(cv, |r, c| match heat[r][c].best {
            // A step that could not run has no γ and no speedup: a dash, nearly white.
            None => (ramp(colors::GREY, 0.08), "—".to_string()),
            Some(Best { gamma: 0, .. }) => {
                (ramp(colors::GREY, 0.35), l.pick("off", "不用").to_string())
            }
            Some(Best { gamma, speedup }) => {
                let t = if best > 1.0 {
                    (speedup - 1.0) / (best - 1.0)
                } else {
                    0.0
                };
                (
                    ramp(colors::TEAL, 0.15 + 0.75 * t),
                    format!("{gamma} · {speedup:.1}×"),
                )
            }
        });
        cv.text(
            (70, 338),
            l.pick(
                "context length →   (grey “off”: speculation does not pay)",
                "上下文长度 →   （灰色“不用”：推测解码不划算）",
            ),
            11,
            colors::AXIS,
            Align::Start,
            false,
        );
        // A dot in the corner of each cell whose step could not run: the colours stay the
        // lecture's demo 5, which does not ask about memory.
        for (r, row) in heat.iter().enumerate() {
            for (c, cell) in row.iter().enumerate().filter(|(_, cell)| !cell.fits) {
                let x = HEAT_ORIGIN.0 + (c as i32 + 1) * HEAT_CELL.0 - 7;
                let y = HEAT_ORIGIN.1 + r as i32 * HEAT_CELL.1 + 6;
                debug_assert_eq!(
                    (cell.batch, cell.context),
                    (HEAT_BATCHES[r], HEAT_CONTEXTS[c])
                );
                cv.circle((x, y), 3, colors::ORANGE, true);
            }
        }
        if heat.iter().flatten().any(|c| !c.fits) {
            cv.circle((74, 349), 3, colors::ORANGE, true);
            cv.text(
                (82, 353),
                l.pick(
                    "— the weights and KV cache exceed the GPUs’ memory: the step could not run",
                    "— 权重和 KV 缓存超出 GPU 显存：这一步跑不起来",
                ),
                11,
                colors::AXIS,
                Align::Start,
                false,
            );
        }
    })
}

/// Outlines the cell of the current batch and context when it is on the grid.
fn heat_marker(w: &Workload, l: Lang) -> String {
    render_overlay(
        HEAT_SIZE.0,
        HEAT_SIZE.1,
        l.pick("Current batch and context", "当前的批大小和上下文"),
        |cv| {
            let r = HEAT_BATCHES.iter().position(|&b| b == w.batch);
            let c = HEAT_CONTEXTS.iter().position(|&l| l == w.context);
            if let (Some(r), Some(c)) = (r, c) {
                let (x, y) = (
                    HEAT_ORIGIN.0 + c as i32 * HEAT_CELL.0,
                    HEAT_ORIGIN.1 + r as i32 * HEAT_CELL.1,
                );
                cv.rect(
                    (x - 1, y - 1),
                    (x + HEAT_CELL.0 - 1, y + HEAT_CELL.1 - 1),
                    colors::RED,
                    false,
                );
                cv.rect(
                    (x, y),
                    (x + HEAT_CELL.0 - 2, y + HEAT_CELL.1 - 2),
                    colors::RED,
                    false,
                );
            }
        },
    )
}

#[cfg(test)]
mod tests;

//! How to speculate on this device, measured (lecture §4.7; issue 54, items 1, 3 and 4): the
//! parameters checked before any model loads, one call of [`crate::lab::choose::choose_here`] on
//! the page's models (the CPU module, or a WebGPU target with its drafts on the CPU), and its
//! figures: the heat map and the tree of the choice on this device's own T(k), c and vector (the
//! analytic widget's drawings, [`heat_svg`], [`tree_svg`]); what a call of k tokens
//! costs here — measured, at this device's limit, and as each decoding's calls measured; and
//! every draft's acceptance vector by rank. The widget words the comparison from the numbers.

use crate::clock::{Clock, Progress};
use crate::error::Error;
use crate::i18n::Lang;
use crate::lab::choose::{choose_here, ChooseReport, MAX_NODES};
use crate::lab::params::PROMPTS;
use crate::lab::Lab;
use crate::model::measure::Calibration;
use crate::model::widen::WIDTH;
use crate::model::Models;
use crate::plot::{colors, figure_width, render, Chart, Labels, Scale};
use crate::tree::choose::{choose, Times};
use crate::views::choose::{heat_svg, labels, tree_svg};

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct ChooseHereParams {
    pub backend: String,
    pub target_width: usize,
    /// T(1) … T(max_nodes + 1) are timed: the largest tree considered.
    pub max_nodes: usize,
    /// Held-out prompts each choice (and EAGLE-2 at 8 nodes) is timed on.
    pub prompts: usize,
    pub lang: Lang,
    /// The room the page has for a figure (CSS px).
    pub figure_width: Option<u32>,
}

impl Default for ChooseHereParams {
    fn default() -> Self {
        ChooseHereParams {
            backend: "flex".into(),
            target_width: 1,
            max_nodes: 16,
            prompts: 10,
            lang: Lang::En,
            figure_width: None,
        }
    }
}

impl ChooseHereParams {
    /// Every value against its range, before any model loads.
    pub fn check(&self) -> Result<(), Error> {
        WIDTH.check(self.target_width as f64)?;
        MAX_NODES.check(self.max_nodes as f64)?;
        PROMPTS.check(self.prompts as f64)?;
        Ok(())
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ChooseHereView {
    #[serde(flatten)]
    pub report: ChooseReport,
    /// The choice on this device's curve, over every (n, d), and the tree chosen (the DP's).
    pub svg_heat: String,
    pub svg_tree: String,
    /// T(k)/T(1): measured, at the limit, and each decoding's calls.
    pub svg_curve: String,
    /// p_i by rank for every draft.
    pub svg_vectors: String,
    /// A WebGPU job that ran on the CPU says why.
    pub note: Option<String>,
}

impl ChooseHereView {
    pub fn noted(mut self, note: Option<String>) -> ChooseHereView {
        self.note = note;
        self
    }
}

/// Measures this device and chooses (`models`: the target already widened).
/// `known`: this device's calibrations from an earlier job, reused where they hold.
pub async fn choose_here_view(
    params: &ChooseHereParams,
    models: &Models,
    known: Option<Calibration>,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<ChooseHereView, Error> {
    params.check()?;
    let l = params.lang;
    let lab = Lab::new(models, l, clock);
    let report = choose_here(lab, params.max_nodes, params.prompts, known, progress).await?;
    view_of(report, l, params.figure_width)
}

/// The drawings of a report (pure).
pub fn view_of(report: ChooseReport, l: Lang, room: Option<u32>) -> Result<ChooseHereView, Error> {
    let w = figure_width(560, room);
    let times = Times::new(report.times_us.clone())?;
    let choice = choose(&report.vector.acceptance(), &times, report.draft_cost)?;
    let name = l.pick(
        format!("this device ({})", report.backend),
        format!("这台设备（{}）", report.backend),
    );
    let labels = labels(&choice.tree.parents, &choice.tree.ranks);
    Ok(ChooseHereView {
        svg_heat: heat_svg(&choice, times.max_k() - 1, &name, report.draft_cost, l, w),
        svg_tree: tree_svg(&choice, &labels, l, w),
        svg_curve: curve_svg(&report, l, w),
        svg_vectors: vectors_svg(&report, l, w),
        report,
        note: None,
    })
}

/// T(k)/T(1) against k: the bare calls timed; the same as decoding pays them (the calibration),
/// with the points it timed; the limit from the bandwidth and peak; and the verification calls
/// of each decoding timed (its mean call over its one-token call).
fn curve_svg(r: &ChooseReport, l: Lang, width: u32) -> String {
    let ratios = |ts: &[f64]| -> Vec<(f64, f64)> {
        (ts.iter().enumerate())
            .map(|(i, t)| ((i + 1) as f64, t / ts[0]))
            .collect()
    };
    let measured = ratios(&r.bare_times_us);
    let paid = ratios(&r.times_us);
    // Where the calibration timed decoding, at its calls' mean tokens: the purple curve is read
    // from them at whole k.
    let timed: Vec<(f64, f64)> = (r.engine.points.iter())
        .map(|p| (p.tokens, p.decoding))
        .collect();
    let lim1 = r.limit_times_us[0];
    let limit: Vec<(f64, f64)> = (r.limit_times_us.iter().enumerate())
        .map(|(i, t)| ((i + 1) as f64, t / lim1))
        .collect();
    let (chain, tree) = (&r.chosen.chain, &r.chosen.tree);
    let calls = [
        (
            chain.timed_gamma as f64 + 1.0,
            chain.timed.verify_over_target,
        ),
        (tree.nodes as f64 + 1.0, tree.timed.verify_over_target),
    ];
    let kmax = measured.len() as f64;
    let hi = (measured.iter().chain(&paid).chain(&limit).map(|p| p.1))
        .chain(calls.iter().map(|p| p.1))
        .fold(1.0f64, f64::max)
        * 1.12;
    let label = l.pick(
        "What a target call of k tokens costs on this device, over a one-token call: measured, at the device's limit, and in decoding",
        "这台设备上目标模型一次 k 个 token 的调用相对单 token 调用的时间：实测、设备极限、解码中",
    );
    let w = width as i32;
    render(width, 300, label, |cv| {
        let labels = Labels {
            title: l.pick(
                "T(k)/T(1) on this device: what each verified token adds",
                "这台设备上的 T(k)/T(1)：每多验证一个 token 增加多少",
            ),
            x: l.pick("tokens k in one call", "一次调用的 token 数 k"),
            y: "T(k)/T(1)",
        };
        let ch = Chart::new(
            cv,
            (58, 40, w - 16, 226),
            Scale::linear(1.0, kmax.max(2.0)),
            Scale::linear(0.0, hi),
            &labels,
        );
        ch.hline(1.0, colors::GRID);
        ch.polyline(&limit, colors::GREY, 2);
        ch.polyline(&measured, colors::BLUE, 2);
        ch.dots(&measured, colors::BLUE, 3);
        ch.polyline(&paid, colors::PURPLE, 2);
        ch.dots(&timed, colors::PURPLE, 4);
        ch.dots(&calls, colors::RED, 5);
        cv.legend(
            (58, 272),
            &[
                (l.pick("bare calls, timed", "单独计时的调用"), colors::BLUE),
                (
                    l.pick(
                        "as decoding pays them (calibrated at the purple dots): what the choice reads",
                        "解码实际付出的（在紫色圆点处校准）：选择依据的曲线",
                    ),
                    colors::PURPLE,
                ),
                (
                    l.pick(
                        "the limit: max(weights / bandwidth, k·FLOPs / peak)",
                        "极限：max(权重 / 带宽, k·FLOPs / 峰值)",
                    ),
                    colors::GREY,
                ),
                (
                    l.pick(
                        "the chosen chain's and tree's calls in decoding",
                        "选出的链和树在解码中的调用",
                    ),
                    colors::RED,
                ),
            ],
        );
    })
}

/// p_i against the rank i: drafts A and B under greedy verification and MSS, the boost-tuned
/// pool as one proposer and EAGLE's guess one step ahead (greedy).
fn vectors_svg(r: &ChooseReport, l: Lang, width: u32) -> String {
    let mut series: Vec<(String, Vec<f64>, plotters::style::RGBColor)> = Vec::new();
    let palette = [colors::BLUE, colors::TEAL, colors::ORANGE, colors::PURPLE];
    for (v, color) in r.vectors.models.iter().zip(palette) {
        let how = match v.verify {
            "mss" => l.pick("MSS", "MSS"),
            _ => l.pick("greedy", "贪心"),
        };
        let name = l.pick(
            format!("draft {} ({how})", v.draft),
            format!("草稿 {}（{how}）", v.draft),
        );
        series.push((name, v.p.clone(), color));
    }
    if let Some(pool) = r.vectors.pools.iter().find(|p| p.boosted) {
        let name = l.pick(
            format!("boost-tuned pool of {} (greedy)", pool.members),
            format!("集体提升调优的 {} 个草稿（贪心）", pool.members),
        );
        series.push((name, pool.p.clone(), colors::GREY));
    }
    if let Some(row) = (r.vectors.hidden.iter())
        .find(|h| h.draft == "EAGLE")
        .and_then(|h| h.rows.first())
    {
        let name = l.pick("EAGLE (greedy)", "EAGLE（贪心）").to_string();
        series.push((name, row.clone(), colors::RED));
    }
    let ranks = series.iter().map(|s| s.1.len()).max().unwrap_or(1).max(2);
    let label = l.pick(
        "Acceptance vectors: p_i, the chance that the i-th ranked draft child is the one accepted, for drafts A and B, the boost-tuned pool and EAGLE (Medusa's heads and the control pool in the table)",
        "接受向量：每个草稿排第 i 的孩子正是被接受那一个的概率 p_i",
    );
    let w = width as i32;
    render(width, 300, label, |cv| {
        let labels = Labels {
            title: l.pick(
                "p_i by rank (calibration worlds, teacher-forced)",
                "按秩的 p_i（校准世界，教师强制）",
            ),
            x: l.pick("rank i of the draft's child", "草稿孩子的秩 i"),
            y: "p_i",
        };
        let ch = Chart::new(
            cv,
            (58, 40, w - 16, 226),
            Scale::linear(1.0, ranks as f64),
            Scale::linear(0.0, 1.0),
            &labels,
        );
        for (_, p, color) in &series {
            let points: Vec<(f64, f64)> = (p.iter().enumerate())
                .map(|(i, &x)| ((i + 1) as f64, x))
                .collect();
            ch.polyline(&points, *color, 2);
            ch.dots(&points, *color, 3);
        }
        let entries: Vec<(&str, plotters::style::RGBColor)> =
            series.iter().map(|(n, _, c)| (n.as_str(), *c)).collect();
        cv.legend((58, 272), &entries);
    })
}

//! Per-sequence against tree-parallel decoding, measured (lecture §4.3, SpecInfer's Figure 11):
//! the parameters checked before any model loads, one call of [`crate::lab::paths`], and its
//! figure — the time of each way's call against the batch, with paths / tree written at each
//! batch. The widget words the comparison with Figure 11 from these numbers.

use crate::clock::{Clock, Progress};
use crate::error::Error;
use crate::i18n::Lang;
use crate::lab::paths::{
    self, parse_batches, parse_source, PathsReport, TreeSource, DEFAULT_BATCHES, PROMPTS,
};
use crate::lab::Lab;
use crate::model::widen::WIDTH;
use crate::model::Models;
use crate::plot::{colors, figure_width, render, Align, Chart, Labels, Scale};

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct TreePathsParams {
    pub backend: String,
    pub target_width: usize,
    /// The tree: `exercise-5`, `slides`, drafts `a b|a c`, `<2,2,1>`, or EAGLE-2's dynamic tree
    /// per prompt, `eagle-2` or `eagle-2:N` (N nodes).
    pub config: String,
    /// Batch sizes, `1,2,4`.
    pub batches: String,
    /// The prompts the batches are drawn from (none: as many as the largest batch).
    pub prompts: Option<usize>,
    pub lang: Lang,
    /// The room the page has for the figure (CSS px).
    pub figure_width: Option<u32>,
}

impl Default for TreePathsParams {
    fn default() -> Self {
        TreePathsParams {
            backend: "flex".into(),
            target_width: 1,
            config: "<2,2,1>".into(),
            batches: DEFAULT_BATCHES.into(),
            prompts: None,
            lang: Lang::En,
            figure_width: None,
        }
    }
}

impl TreePathsParams {
    /// Every value checked before any model loads: the batch sizes and the prompts.
    pub fn check(&self) -> Result<(Vec<usize>, usize), Error> {
        WIDTH.check(self.target_width as f64)?;
        parse_source(&self.config)?;
        let batches = parse_batches(&self.batches)?;
        let largest = *batches.last().expect("at least one batch size");
        let prompts = self.prompts.unwrap_or(largest.min(PROMPTS.max as usize));
        PROMPTS.check(prompts as f64)?;
        Ok((batches, prompts))
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct TreePathsView {
    #[serde(flatten)]
    pub report: PathsReport,
    pub note: Option<String>,
    pub svg: String,
}

/// Runs the comparison on `models` (the target already widened `params.target_width`×).
pub async fn treepaths_view(
    params: &TreePathsParams,
    models: &Models,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<TreePathsView, Error> {
    let (batches, prompts) = params.check()?;
    let lab = Lab::new(models, params.lang, clock);
    let report = paths::tree_vs_paths(lab, &params.config, &batches, prompts, progress).await?;
    Ok(view_of(report, params.lang, params.figure_width))
}

/// A tree as the page names it: the menu's words for the lecture's trees and EAGLE-2's, ⟨2,2,1⟩
/// for a configuration, the drafts as typed otherwise.
pub fn tree_name(config: &str, l: Lang) -> String {
    if let Ok(TreeSource::Eagle2 { budget }) = parse_source(config) {
        return l.pick(
            format!("EAGLE-2's dynamic tree per prompt ({budget} nodes at most)"),
            format!("每个提示词各自的 EAGLE-2 动态树（至多 {budget} 个节点）"),
        );
    }
    match config.trim().to_lowercase().as_str() {
        "exercise-5" | "exercise5" | "ex5" => l
            .pick("exercise 5's three drafts", "练习 5 的三个草稿")
            .into(),
        "slides" => l.pick("the slides' example", "讲义幻灯片上的例子").into(),
        t if t.starts_with('<') => t.replace('<', "⟨").replace('>', "⟩"),
        _ => config.trim().to_string(),
    }
}

/// The view of a report (pure: the drawing only), the tree named as the page names it.
pub fn view_of(mut report: PathsReport, lang: Lang, room: Option<u32>) -> TreePathsView {
    report.tree = tree_name(&report.tree, lang);
    TreePathsView {
        svg: times_svg(&report, lang, figure_width(560, room)),
        report,
        note: None,
    }
}

/// Each way's median time against the batch (log–log), paths / tree above each batch.
fn times_svg(r: &PathsReport, l: Lang, width: u32) -> String {
    let times = r.rows.iter().flat_map(|x| [x.tree_us, x.paths_us]);
    let positive: Vec<f64> = times.filter(|t| t.is_finite() && *t > 0.0).collect();
    let lo = positive.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = positive.iter().copied().fold(0.0f64, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > lo {
        (lo / 1.3, hi * 1.6)
    } else {
        (1.0, 10.0)
    };
    let bmax = r.rows.last().map_or(2, |x| x.batch).max(2) as f64;
    let label = l.pick(
        format!(
            "Time of one verification call against the batch, tree {}: one call with the tree mask, or every path as its own sequence, on {}",
            r.tree, r.backend
        ),
        format!(
            "一次验证调用的时间随批大小的变化，树 {}：带树掩码的一次调用，或每条路径各自一个序列，在 {} 上",
            r.tree, r.backend
        ),
    );
    let w = width as i32;
    render(width, 320, &label, |cv| {
        let title = l.pick(
            format!(
                "{}: {} nodes vs {} path tokens, target ×{} on {}",
                r.tree, r.nodes, r.path_tokens, r.target_width, r.backend
            ),
            format!(
                "{}：{} 个节点 对 {} 个路径 token，目标模型 ×{}，{}",
                r.tree, r.nodes, r.path_tokens, r.target_width, r.backend
            ),
        );
        let labels = Labels {
            title: &title,
            x: l.pick(
                "batch (prompts per call, log)",
                "批大小（每次调用的提示词数，对数）",
            ),
            y: l.pick("time per call (µs, log)", "每次调用的时间（µs，对数）"),
        };
        let ch = Chart::new(
            cv,
            (70, 40, w - 20, 250),
            Scale::log(1.0, bmax),
            Scale::log(lo, hi),
            &labels,
        );
        let line = |f: fn(&paths::PathsRow) -> f64| -> Vec<(f64, f64)> {
            r.rows.iter().map(|x| (x.batch as f64, f(x))).collect()
        };
        let (tree, per_path) = (line(|x| x.tree_us), line(|x| x.paths_us));
        ch.polyline(&tree, colors::BLUE, 2);
        ch.dots(&tree, colors::BLUE, 4);
        ch.polyline(&per_path, colors::ORANGE, 2);
        ch.dots(&per_path, colors::ORANGE, 4);
        for x in &r.rows {
            let (px, py) = ch.px(x.batch as f64, x.tree_us.max(x.paths_us));
            cv.text(
                (px, py - 12),
                &format!("×{:.2}", x.ratio),
                11,
                colors::INK,
                Align::Middle,
                false,
            );
        }
        cv.legend(
            (70, 290),
            &[
                (
                    l.pick(
                        "tree-parallel: one call, tree mask",
                        "树形并行：一次调用，树掩码",
                    ),
                    colors::BLUE,
                ),
                (
                    l.pick("per sequence: a call row per path", "按序列：每条路径一行"),
                    colors::ORANGE,
                ),
            ],
        );
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::paths::PathsRow;

    fn sample() -> PathsReport {
        let rows = [(1, 100.0, 110.0), (8, 150.0, 240.0)]
            .map(|(batch, t, p)| PathsRow {
                batch,
                tokens_tree: 10 * batch,
                tokens_paths: 12 * batch,
                tree_us: t,
                paths_us: p,
                tree_iqr_us: 5.0,
                paths_iqr_us: 5.0,
                ratio: p / t,
                identical: true,
            })
            .to_vec();
        PathsReport {
            tree: "<2,2,1>".into(),
            backend: "flex",
            target_width: 1,
            nodes: 10,
            path_tokens: 12,
            paths: 4,
            longest_path: 3,
            prompt_trees: None,
            repeats: 5,
            max_abs_diff: 1e-7,
            accepted_mean: 1.0,
            rows,
        }
    }

    #[test]
    fn the_figure_writes_each_ratio_in_both_languages() {
        let v = view_of(sample(), Lang::En, None);
        assert!(
            v.svg.contains("×1.10") && v.svg.contains("×1.60"),
            "{}",
            v.svg
        );
        assert!(v.svg.contains("10 nodes vs 12 path tokens"));
        let zh = view_of(sample(), Lang::Zh, Some(390));
        assert!(zh.svg.contains("树形并行") && !zh.svg.contains("tree-parallel"));
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["rows"][1]["tokens_paths"], 96);
        assert_eq!(json["nodes"], 10);
    }

    #[test]
    fn bad_values_are_named_before_any_model_loads() {
        let d = TreePathsParams::default;
        let bad = |p: TreePathsParams| p.check().unwrap_err().to_string();
        let b = |s: &str| TreePathsParams {
            batches: s.into(),
            ..d()
        };
        assert!(bad(b("0")).contains("batch = 0 is out of range"));
        assert!(bad(b("2,x")).contains("every value must be a whole number"));
        let c = TreePathsParams {
            config: "<2,,1>".into(),
            ..d()
        };
        assert!(bad(c).contains("tree config"));
        let w = TreePathsParams {
            target_width: 0,
            ..d()
        };
        assert!(bad(w).contains("width"));
        let e = |c: &str| TreePathsParams {
            config: c.into(),
            ..d()
        };
        assert!(bad(e("eagle-2:0")).contains("bad tree \"eagle-2:0\""));
        assert!(bad(e("eagle-3")).contains("bad tree \"eagle-3\""));
        assert!(e("eagle-2").check().is_ok() && e("EAGLE-2:32").check().is_ok());
        assert_eq!(
            tree_name("eagle-2:8", Lang::En),
            "EAGLE-2's dynamic tree per prompt (8 nodes at most)"
        );
        assert_eq!(d().check().unwrap(), (vec![1, 2, 4, 8, 16, 32], 32));
    }
}

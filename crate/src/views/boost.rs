//! Collective boost-tuning measured (lecture §4.2, the slides' figure: 1 → 2 → 4 small models,
//! verified tokens per step rising): the parameters checked before any model loads, the shipped
//! pools — boost-tuned, and the control trained without the filter — at each pool size, each one
//! call of [`crate::lab::learned::pool_report`], and the figure of tokens per call against the
//! pool size, one line per way of training. The widget words the comparison from the numbers.

use crate::clock::{Clock, Progress};
use crate::error::Named;
use crate::error::{shown, Error, Text};
use crate::i18n::Lang;
use crate::lab::learned::{pool_report, PoolReport, PoolVerify};
use crate::lab::params::{GAMMA, PROMPTS};
use crate::lab::Lab;
use crate::model::draft_file::{shipped_pool, POOL};
use crate::model::widen::WIDTH;
use crate::model::Models;
use crate::plot::{colors, figure_width, render, Align, Chart, Labels, Scale};

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct BoostParams {
    pub backend: String,
    pub target_width: usize,
    /// Pool sizes, `1,2,4`.
    pub pools: String,
    pub gamma: usize,
    /// `greedy` (VerifyGreedy) or `mss` (the members' chains sampled, MSS).
    pub verify: String,
    pub prompts: usize,
    pub lang: Lang,
    /// The room the page has for the figure (CSS px).
    pub figure_width: Option<u32>,
}

impl Default for BoostParams {
    fn default() -> Self {
        BoostParams {
            backend: "flex".into(),
            target_width: 1,
            pools: "1,2,4".into(),
            gamma: 4,
            verify: "greedy".into(),
            prompts: 30,
            lang: Lang::En,
            figure_width: None,
        }
    }
}

impl BoostParams {
    /// Every value checked before any model loads; the pool sizes, ascending.
    pub fn check(&self) -> Result<Vec<usize>, Error> {
        PoolVerify::parse(&self.verify)?;
        WIDTH.check(self.target_width as f64)?;
        GAMMA.check(self.gamma as f64)?;
        PROMPTS.check(self.prompts as f64)?;
        parse_pools(&self.pools)
    }
}

/// `1,2,4`: pool sizes of 1 to 4, each once, ascending.
pub fn parse_pools(text: &str) -> Result<Vec<usize>, Error> {
    let bad = |why: Text| Error::Parse {
        what: "pool sizes",
        text: text.into(),
        why,
    };
    let mut sizes = Vec::new();
    for part in text.split(',') {
        let n: usize = part.trim().parse().map_err(|_| {
            bad(Text::new(
                format!("{:?} is not a whole number", shown(part.trim())),
                format!("{:?} 不是整数", shown(part.trim())),
            ))
        })?;
        POOL.check(n as f64)?;
        if sizes.last().is_some_and(|&last| last >= n) {
            return Err(bad(Text::new(
                "the sizes must rise, each once",
                "大小必须递增，每个只出现一次",
            )));
        }
        sizes.push(n);
    }
    Ok(sizes)
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct BoostView {
    /// Per pool size, the boost-tuned pool, then the control; a pool of one once (`boosted:
    /// None`: its one model is the same either way).
    pub rows: Vec<PoolReport>,
    pub backend: &'static str,
    pub note: Option<String>,
    pub svg: String,
}

impl BoostView {
    /// The view with `note` (a WebGPU job that ran on the CPU says why).
    pub fn noted(mut self, note: Option<String>) -> BoostView {
        self.note = note;
        self
    }
}

/// Runs both pools at every size on `models` (the target already widened).
pub async fn boost_view(
    params: &BoostParams,
    models: &Models,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<BoostView, Error> {
    let sizes = params.check()?;
    let lab = Lab::new(models, params.lang, clock);
    // A pool of one is the same model either way: run once.
    let runs: Vec<(usize, Option<bool>)> = sizes
        .iter()
        .flat_map(|&n| match n {
            1 => vec![(1, None)],
            _ => vec![(n, Some(true)), (n, Some(false))],
        })
        .collect();
    let total = runs.len();
    let mut rows = Vec::with_capacity(total);
    for (k, &(n, way)) in runs.iter().enumerate() {
        let pool = shipped_pool(way.unwrap_or(true), n, &models.draft_device)?;
        let mut part = |done: usize, all: usize| progress(k * all + done, total * all.max(1));
        let run = (params.gamma, PoolVerify::parse(&params.verify)?.rule());
        rows.push(pool_report(&lab, &pool, way, run, params.prompts, &mut part).await?);
    }
    let svg = figure(&rows, params.lang, figure_width(560, params.figure_width));
    Ok(BoostView {
        rows,
        backend: models.backend.name(),
        note: None,
        svg,
    })
}

/// Tokens per call against the pool size: the boost-tuned pools and the control.
fn figure(rows: &[PoolReport], l: Lang, width: u32) -> String {
    let series = |boosted: bool| -> Vec<(f64, f64)> {
        rows.iter()
            .filter(|r| r.boosted.is_none_or(|b| b == boosted))
            .map(|r| (r.pool as f64, r.tokens_per_call))
            .collect()
    };
    let (boost, plain) = (series(true), series(false));
    let all = boost.iter().chain(&plain).map(|p| p.1);
    let hi = all.clone().fold(1.0f64, f64::max) * 1.15;
    let lo = (all.fold(f64::INFINITY, f64::min) * 0.9).clamp(0.0, hi - 0.1);
    let gamma = rows.first().map_or(0, |r| r.gamma);
    let label = l.pick(
        format!("Tokens per target call against the number of small models, γ {gamma}: boost-tuned pools and pools trained without the filter"),
        format!("每次目标模型调用得到的 token 数随小模型个数的变化，γ {gamma}：boost-tuning 训练的池和不过滤训练的池"),
    );
    let w = width as i32;
    render(width, 300, &label, |cv| {
        let title = l.pick(
            format!("Pools of small models, their chains of γ {gamma} merged into one tree"),
            format!("小模型池：各自的 γ {gamma} 链合并成一棵树"),
        );
        let labels = Labels {
            title: &title,
            x: l.pick("small models in the pool", "池里的小模型个数"),
            y: l.pick("tokens per target call", "每次目标调用的 token 数"),
        };
        let ch = Chart::new(
            cv,
            (70, 40, w - 20, 230),
            Scale::linear(0.5, 4.5),
            Scale::linear(lo, hi),
            &labels,
        );
        for (points, color, dy) in [(&boost, colors::BLUE, -12), (&plain, colors::ORANGE, 18)] {
            ch.polyline(points, color, 2);
            ch.dots(points, color, 4);
            for &(x, y) in points.iter() {
                let (px, py) = ch.px(x, y);
                cv.text(
                    (px, py + dy),
                    &format!("{y:.2}"),
                    11,
                    color,
                    Align::Middle,
                    false,
                );
            }
        }
        cv.legend(
            (70, 272),
            &[
                (
                    l.pick(
                        "boost-tuned: each next model trained where the pool misses",
                        "boost-tuning：下一个模型只在池没命中的地方训练",
                    ),
                    colors::BLUE,
                ),
                (
                    l.pick(
                        "control: every model trained on every sample",
                        "对照：每个模型都在全部样本上训练",
                    ),
                    colors::ORANGE,
                ),
            ],
        );
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_sizes_are_checked_before_anything_runs() {
        assert_eq!(parse_pools("1,2,4").unwrap(), vec![1, 2, 4]);
        assert_eq!(parse_pools(" 3 ").unwrap(), vec![3]);
        for bad in ["", "0", "5", "2,1", "1,1", "a", "1,,2"] {
            assert!(parse_pools(bad).is_err(), "{bad:?}");
        }
        let e = parse_pools("2,1").unwrap_err().to_string();
        assert!(e.contains("rise"), "{e}");
        let e = parse_pools("9").unwrap_err().to_string();
        assert!(e.contains("pool"), "{e}");
    }
}

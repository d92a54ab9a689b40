//! The speedup explorer (lecture §2.5): E, speedup and operations for α, γ, c, ĉ; E and speedup
//! against γ with the optimum and the 1/(1 − α) cap; the optimal γ against c.

use crate::error::Error;
use crate::i18n::Lang;
use crate::plot::{colors, figure_width, render, Align, Chart, Labels, Scale};
use crate::theory::{self, Params};

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct TheoryParams {
    pub alpha: f64,
    pub gamma: u32,
    pub c: f64,
    pub c_hat: f64,
    /// The language of the figures' texts.
    pub lang: Lang,
    /// The room the page has for a figure, in CSS px (none: each figure's own width): figures
    /// are drawn for it rather than scaled down, so that their labels keep their size.
    pub figure_width: Option<u32>,
}

impl Default for TheoryParams {
    fn default() -> Self {
        TheoryParams {
            alpha: 0.8,
            gamma: 5,
            c: 0.05,
            c_hat: 0.0,
            lang: Lang::En,
            figure_width: None,
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct TheoryView {
    pub expected_tokens: f64,
    pub speedup: f64,
    pub operations: f64,
    /// 1/(1 − α), or `null` at α = 1.
    pub cap: Option<f64>,
    pub optimal_gamma: u32,
    pub optimal_speedup: f64,
    /// The speedup still rises at `optimal_gamma` (= `theory::MAX_GAMMA`): no optimum up to
    /// there (none at all at α = 1 with c < 1, nor at c = 0).
    pub optimal_beyond: bool,
    pub svg: String,
    pub svg_optimal: String,
}

/// γ shown on the x-axis of the first chart (the page's γ slider stops there).
pub const GAMMA_AXIS: u32 = 30;

pub fn theory_view(params: &TheoryParams) -> Result<TheoryView, Error> {
    let p = Params::new(params.alpha, params.gamma, params.c, params.c_hat)?;
    let (optimal_gamma, optimal_speedup) = theory::optimal_gamma(p.alpha, p.c, theory::MAX_GAMMA);
    let optimal_beyond = theory::still_rising(p.alpha, optimal_gamma, p.c);
    let cap = theory::expected_tokens_cap(p.alpha);
    let w = figure_width(560, params.figure_width);
    Ok(TheoryView {
        expected_tokens: theory::expected_tokens(p.alpha, p.gamma),
        speedup: theory::speedup(p.alpha, p.gamma, p.c),
        operations: theory::operations(p.alpha, p.gamma, p.c_hat),
        cap: cap.is_finite().then_some(cap),
        optimal_gamma,
        optimal_speedup,
        optimal_beyond,
        svg: against_gamma(&p, (optimal_gamma, optimal_beyond), params.lang, w),
        svg_optimal: optimal_against_c(p.alpha, p.c, params.lang, w),
    })
}

/// `optimal`: the best γ found, and whether the speedup still rises there (no optimum).
fn against_gamma(p: &Params, (optimal, beyond): (u32, bool), l: Lang, w: u32) -> String {
    let max_g = GAMMA_AXIS.max(p.gamma);
    let e: Vec<(f64, f64)> = (0..=max_g)
        .map(|g| (f64::from(g), theory::expected_tokens(p.alpha, g)))
        .collect();
    let s: Vec<(f64, f64)> = (0..=max_g)
        .map(|g| (f64::from(g), theory::speedup(p.alpha, g, p.c)))
        .collect();
    let cap = theory::expected_tokens_cap(p.alpha);
    let top = e
        .last()
        .map_or(1.0, |l| l.1)
        .max(cap.min(f64::from(max_g) + 1.0))
        * 1.08;
    let label = l.pick(
        format!(
            "Expected tokens and speedup against gamma at alpha {}, c {}",
            p.alpha, p.c
        ),
        format!(
            "α = {}、c = {} 时期望 token 数和加速比随 γ 的变化",
            p.alpha, p.c
        ),
    );
    render(w, 310, &label, |cv| {
        let labels = Labels {
            title: l.pick("E and speedup against γ", "E 和加速比随 γ 的变化"),
            x: l.pick(
                "γ (draft tokens per target call)",
                "γ（每次目标模型调用的草稿 token 数）",
            ),
            y: l.pick("tokens / speedup", "token 数 / 加速比"),
        };
        let ch = Chart::new(
            cv,
            (60, 40, w as i32 - 20, 250),
            Scale::linear(0.0, f64::from(max_g)),
            Scale::linear(0.0, top),
            &labels,
        );
        if cap.is_finite() {
            ch.hline(cap, colors::GREY);
            ch.note(
                f64::from(max_g),
                cap,
                &format!("{} 1/(1−α) = {cap:.2}", l.pick("cap", "上限")),
                colors::AXIS,
                Align::End,
            );
        }
        ch.polyline(&e, colors::BLUE, 2);
        ch.polyline(&s, colors::ORANGE, 2);
        if optimal <= max_g {
            let (g, sp) = (f64::from(optimal), theory::speedup(p.alpha, optimal, p.c));
            ch.dots(&[(g, sp)], colors::RED, 4);
            ch.note(
                g,
                sp,
                &format!("{} γ = {optimal}", l.pick("optimum", "最优")),
                colors::RED,
                Align::Middle,
            );
        } else {
            // Past the axis, or no optimum at all: said at the end of the speedup's line.
            let text = if beyond {
                l.pick(
                    "no optimum: the speedup keeps rising →".to_string(),
                    "没有最优：加速比一直上升 →".to_string(),
                )
            } else {
                format!("{} γ = {optimal} →", l.pick("optimum", "最优"))
            };
            let end = theory::speedup(p.alpha, max_g, p.c);
            ch.note(f64::from(max_g), end, &text, colors::RED, Align::End);
        }
        let gc = f64::from(p.gamma);
        ch.vline(gc, colors::AXIS);
        ch.dots(
            &[
                (gc, theory::expected_tokens(p.alpha, p.gamma)),
                (gc, theory::speedup(p.alpha, p.gamma, p.c)),
            ],
            colors::INK,
            3,
        );
        cv.legend(
            (70, 298),
            &[
                (
                    l.pick("E (tokens per call)", "E（每次调用的 token 数）"),
                    colors::BLUE,
                ),
                (
                    l.pick("speedup E/(γc+1)", "加速比 E/(γc+1)"),
                    colors::ORANGE,
                ),
                (l.pick("optimum", "最优"), colors::RED),
            ],
        );
    })
}

fn optimal_against_c(alpha: f64, c_now: f64, l: Lang, w: u32) -> String {
    let cs: Vec<f64> = (0..=60)
        .map(|i| 10f64.powf(-3.0 + 3.0 * f64::from(i) / 60.0))
        .collect();
    // A c at which the speedup still rises at the search's limit has no optimum to draw.
    let best: Vec<(f64, f64)> = cs
        .iter()
        .map(|&c| (c, theory::optimal_gamma(alpha, c, theory::MAX_GAMMA).0))
        .filter(|&(c, g)| !theory::still_rising(alpha, g, c))
        .map(|(c, g)| (c, f64::from(g)))
        .collect();
    let top = best.iter().map(|b| b.1).fold(1.0, f64::max) * 1.1;
    let label = l.pick(
        format!("Optimal gamma against c at alpha {alpha}"),
        format!("α = {alpha} 时最优 γ 随 c 的变化"),
    );
    render(w, 260, &label, |cv| {
        let labels = Labels {
            title: l.pick("Optimal γ against c", "最优 γ 随 c 的变化"),
            x: l.pick(
                "c = draft time / target time (log)",
                "c = 草稿耗时 / 目标耗时（对数）",
            ),
            y: l.pick("optimal γ", "最优 γ"),
        };
        let ch = Chart::new(
            cv,
            (60, 40, w as i32 - 20, 210),
            Scale::log(1e-3, 1.0),
            Scale::linear(0.0, top),
            &labels,
        );
        ch.polyline(&best, colors::TEAL, 2);
        if alpha >= 1.0 {
            ch.note(
                0.03,
                top / 2.0,
                l.pick("α = 1: no optimum", "α = 1：没有最优 γ"),
                colors::INK,
                Align::Middle,
            );
        }
        let (g, _) = theory::optimal_gamma(alpha, c_now, theory::MAX_GAMMA);
        if c_now > 0.0 && !theory::still_rising(alpha, g, c_now) {
            let g = f64::from(g);
            ch.vline(c_now.clamp(1e-3, 1.0), colors::AXIS);
            ch.dots(&[(c_now.clamp(1e-3, 1.0), g)], colors::RED, 4);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_reports_the_lecture_numbers() {
        let v = theory_view(&TheoryParams {
            alpha: 0.8,
            gamma: 5,
            c: 0.0,
            c_hat: 0.0,
            lang: Lang::En,
            figure_width: None,
        })
        .unwrap();
        assert_eq!(format!("{:.2} {:.2}", v.operations, v.speedup), "1.63 3.69");
        assert_eq!(v.cap, Some(1.0 / (1.0 - 0.8)));
        assert!(v.svg.contains("<svg") && v.svg.contains("optimum"));
    }

    #[test]
    fn alpha_one_has_no_cap_and_still_draws() {
        let v = theory_view(&TheoryParams {
            alpha: 1.0,
            gamma: 4,
            c: 0.1,
            c_hat: 0.0,
            lang: Lang::En,
            figure_width: None,
        })
        .unwrap();
        assert_eq!(v.cap, None);
        assert_eq!(v.expected_tokens, 5.0);
        assert!(!v.svg.contains("NaN") && !v.svg.contains("inf"));
        // The search's limit is not shown as an optimum: the speedup rises towards 1/c = 10.
        assert!(v.optimal_beyond, "{}", v.optimal_gamma);
        assert!(v.svg.contains("no optimum") && !v.svg.contains("optimum γ"));
        assert!(v.svg_optimal.contains("no optimum"));
        // Below α = 1 the optimum is drawn where it is.
        let v = theory_view(&TheoryParams {
            alpha: 0.8,
            c: 0.05,
            ..TheoryParams::default()
        })
        .unwrap();
        assert!(!v.optimal_beyond && v.svg.contains(&format!("optimum γ = {}", v.optimal_gamma)));
    }

    /// In Chinese the figures' titles, axes, legends and notes are Chinese.
    #[test]
    fn the_figures_speak_chinese() {
        let v = theory_view(&TheoryParams {
            lang: Lang::Zh,
            ..TheoryParams::default()
        })
        .unwrap();
        for want in [
            "E 和加速比随 γ 的变化",
            "加速比 E/(γc+1)",
            "最优 γ = ",
            "上限 1/(1−α)",
        ] {
            assert!(v.svg.contains(want), "{want}");
        }
        assert!(v.svg_optimal.contains("最优 γ 随 c 的变化"));
        assert!(!v.svg.contains("speedup") && !v.svg_optimal.contains("against"));
    }

    #[test]
    fn bad_alpha_is_an_error() {
        assert!(theory_view(&TheoryParams {
            alpha: -0.1,
            ..TheoryParams::default()
        })
        .is_err());
    }
}

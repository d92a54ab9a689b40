//! The exactness lab (lecture §2.3, §2.6, demos 02.1–02.5): every sampler variant's exact TV to
//! the target over the first n tokens of the toy LM (the window: γ + 1 by default, at least the
//! lecture's 4), each with a verdict that says what it covers and when the window cannot decide,
//! the distributions side by side, Monte Carlo against its 1/√n noise floor, and α against
//! temperature for two shapes of distribution.

mod figures;
pub mod gallery;
pub mod typical;

use crate::error::{Error, Range};
use crate::i18n::Lang;
use crate::plot::{colors, figure_width, render, Chart, Labels, Scale};
use crate::sampling::rule::Rule;
use crate::sampling::speculative::Variant;
use crate::sampling::tv;
use crate::sampling::typical::Typical;
use crate::toy::enumerate::{
    exact_distribution, exact_distribution_over, expected_tokens_per_call, Strategy,
};
use crate::toy::montecarlo::{empirical, noise_floor, tv_curve};
use crate::toy::{ToyConfig, ToyLm, HORIZON};
use figures::{side_by_side, temperature_chart, tv_bars};

/// Draft tokens of the exactness lab.
pub const GAMMA: Range = Range::new("gamma", 1.0, MAX_GAMMA as f64).shown_as("γ");
/// Monte Carlo runs.
pub const RUNS: Range = Range::new("runs", 100.0, MAX_RUNS as f64);
/// Output tokens the enumeration covers (5⁷ = 78,125 sequences at most: a fifth of a second for
/// the six rules in the page).
pub const WINDOW: Range = Range::new("window", 1.0, 7.0);

/// The TV at or under which a rule is called exact (rounding: the correct rule prints 1e-16).
pub const EXACT_TV: f64 = 1e-12;

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct ExactnessParams {
    pub gamma: u32,
    /// The selected rule's name: a lecture variant or `typical`.
    pub variant: String,
    /// Typical acceptance's ε and δ (Medusa's 0.09 and 0.3 unless set).
    pub epsilon: f64,
    pub delta: f64,
    /// Output tokens enumerated; none: γ + 1, at least the lecture's 4, at most [`WINDOW`]'s top.
    pub window: Option<u32>,
    pub toy: ToyConfig,
    /// Monte Carlo runs (only [`monte_carlo_view`] uses it).
    pub runs: u32,
    /// The language of the figures' texts.
    pub lang: Lang,
    /// The room the page has for a figure, in CSS px (none: each figure's own width): figures
    /// are drawn for it rather than scaled down, so that their labels keep their size.
    pub figure_width: Option<u32>,
}

impl Default for ExactnessParams {
    fn default() -> Self {
        ExactnessParams {
            gamma: 3,
            variant: "correct".into(),
            epsilon: Typical::MEDUSA.epsilon,
            delta: Typical::MEDUSA.delta,
            window: None,
            toy: ToyConfig::default(),
            runs: 20_000,
            lang: Lang::En,
            figure_width: None,
        }
    }
}

/// The largest γ the lab enumerates (the cost grows as 5^min(γ, 4) per call).
pub const MAX_GAMMA: u32 = 8;
pub const MAX_RUNS: u32 = 200_000;

struct Checked {
    gamma: u32,
    window: usize,
    variant: Rule,
    /// Typical acceptance at the page's ε and δ (a bar of its own beside the lecture's rules).
    typical: Typical,
    lm: ToyLm,
    runs: usize,
    seed: u64,
}

fn check(params: &ExactnessParams) -> Result<Checked, Error> {
    GAMMA.check(f64::from(params.gamma))?;
    RUNS.check(f64::from(params.runs))?;
    if let Some(w) = params.window {
        WINDOW.check(f64::from(w))?;
    }
    let typical = Typical::new(params.epsilon, params.delta)?;
    let variant = Rule::parse(&params.variant, Some(typical))?;
    let toy = params.toy.validate()?;
    Ok(Checked {
        gamma: params.gamma,
        window: params
            .window
            .map_or_else(|| auto_window(params.gamma), |w| w as usize),
        variant,
        typical,
        lm: ToyLm::new(&toy),
        runs: params.runs as usize,
        seed: monte_carlo_stream(toy.seed),
    })
}

/// The window when none is asked for: one whole target call and its bonus token (γ + 1), at
/// least the lecture's 4, at most what the page can afford.
pub fn auto_window(gamma: u32) -> usize {
    (gamma as usize + 1).clamp(HORIZON, WINDOW.max as usize)
}

/// The Monte Carlo uniforms' seed: a stream independent of the one that made the toy's logits
/// (the same seed would replay the very draws that built the world). SplitMix64 of a tagged seed.
fn monte_carlo_stream(seed: u64) -> u64 {
    let mut z = seed ^ 0x4d43_5f75_6e69_666f; // "MC_unifo"
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct VariantTv {
    /// The rule (its name in JSON).
    pub variant: Rule,
    pub tv: f64,
    pub verdict: Verdict,
}

/// What an exact TV over a window says about a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// TV ≤ [`EXACT_TV`] over a window that reaches past one whole call (γ + 1 tokens or more).
    Exact,
    /// TV above [`EXACT_TV`]: the rule changes the output distribution.
    Biased,
    /// TV ≤ [`EXACT_TV`], but the window ends before the first call's bonus token (window ≤ γ):
    /// a rule that errs there cannot show. A wider window decides.
    Undecided,
}

impl Verdict {
    pub fn of(tv: f64, window: usize, gamma: u32) -> Verdict {
        if tv > EXACT_TV {
            Verdict::Biased
        } else if window > gamma as usize {
            Verdict::Exact
        } else {
            Verdict::Undecided
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ExactnessView {
    pub gamma: u32,
    /// Output tokens the TVs and verdicts cover.
    pub window: usize,
    /// Whether the window was chosen by the lab (γ + 1, at least 4) rather than asked for.
    pub window_auto: bool,
    /// The toy world the verdicts are about.
    pub seed: u64,
    /// What the verdicts cover, in words (the window, the world, why a verdict is undecided).
    pub coverage: String,
    pub variant: &'static str,
    /// Exact TV to the target of every variant at this γ, the correct one first.
    pub tvs: Vec<VariantTv>,
    /// β = Σ min(p, q) of the 25 contexts, and their mean.
    pub beta_by_context: Vec<f64>,
    pub mean_beta: f64,
    /// Tokens per target call of the selected sampler, exactly (calls from each context equally).
    pub tokens_per_call: f64,
    /// The i.i.d. formula E(ᾱ, γ) with ᾱ the mean β.
    pub tokens_per_call_formula: f64,
    pub svg_tv: String,
    pub svg_dist: String,
    pub svg_temperature: String,
}

pub fn exactness_view(params: &ExactnessParams) -> Result<ExactnessView, Error> {
    let c = check(params)?;
    let target = exact_distribution_over(&c.lm, Strategy::Target, c.window);
    let mut selected = target.clone();
    let rules = Variant::ALL
        .map(Rule::Lecture)
        .into_iter()
        .chain([Rule::Typical(c.typical)]);
    let tvs: Vec<VariantTv> = rules
        .map(|v| {
            let d = exact_distribution_over(
                &c.lm,
                Strategy::Speculative {
                    gamma: c.gamma,
                    rule: v,
                },
                c.window,
            );
            let t = tv(&d, &target);
            if v == c.variant {
                selected = d;
            }
            VariantTv {
                variant: v,
                tv: t,
                verdict: Verdict::of(t, c.window, c.gamma),
            }
        })
        .collect();
    let beta = c.lm.acceptance_by_context();
    let mean_beta = beta.iter().sum::<f64>() / beta.len() as f64;
    let w = figure_width(560, params.figure_width);
    Ok(ExactnessView {
        gamma: c.gamma,
        window: c.window,
        window_auto: params.window.is_none(),
        seed: params.toy.seed,
        coverage: coverage(c.window, c.gamma, &params.toy, params.lang),
        variant: c.variant.name(),
        tokens_per_call: expected_tokens_per_call(&c.lm, c.gamma, c.variant),
        tokens_per_call_formula: crate::theory::expected_tokens(mean_beta, c.gamma),
        mean_beta,
        beta_by_context: beta,
        svg_tv: tv_bars(&tvs, c.gamma, c.window, c.variant, params.lang, w),
        svg_dist: side_by_side(&target, &selected, c.window, c.variant, params.lang, w),
        svg_temperature: temperature_chart(params.lang, w),
        tvs,
    })
}

/// What the verdicts cover: the window (and whether it reaches the first call's bonus token),
/// the toy world, and that nothing beyond the window is claimed.
fn coverage(window: usize, gamma: u32, toy: &ToyConfig, l: Lang) -> String {
    let world = l.pick(
        format!(
            "this toy world (seed {}, draft noise {}, T {})",
            toy.seed, toy.draft_noise, toy.temperature
        ),
        format!(
            "这一个玩具世界（种子 {}，草稿噪声 {}，温度 {}）",
            toy.seed, toy.draft_noise, toy.temperature
        ),
    );
    let reach = if window > gamma as usize {
        l.pick(
            format!(
                "The window reaches the first call's bonus token (token {}), so a rule that errs anywhere in a call can show.",
                gamma + 1
            ),
            format!(
                "窗口覆盖了第一次调用的奖励 token（第 {} 个），所以一次调用里任何位置出错的规则都会显形。",
                gamma + 1
            ),
        )
    } else {
        l.pick(
            format!(
                "The window ends before the first call's bonus token (token {}): a rule that errs only there looks exact here, so a TV of 0 is undecided, not exact. Widen the window to γ + 1 = {} to decide.",
                gamma + 1,
                gamma + 1
            ),
            format!(
                "窗口在第一次调用的奖励 token（第 {} 个）之前就结束了：只在那里出错的规则在这里看起来是精确的，所以 TV 为 0 只是“未判定”，不是“精确”。把窗口放宽到 γ + 1 = {} 才能判定。",
                gamma + 1,
                gamma + 1
            ),
        )
    };
    l.pick(
        format!(
            "Verdicts cover the first {window} output tokens of {world}, enumerated exactly; nothing beyond them is claimed. {reach}"
        ),
        format!("判定只覆盖{world}输出的前 {window} 个 token（精确枚举），不对更后面的 token 作任何断言。{reach}"),
    )
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct MonteCarloView {
    pub runs: u32,
    pub variant: &'static str,
    /// TV(empirical of the sampler, exact target) after all runs.
    pub tv_sampler: f64,
    /// TV between two seeds of the target itself: the noise floor in the lecture's terms.
    pub tv_two_seeds: f64,
    /// Expected TV of one n-run sample from its own distribution (first order).
    pub floor: f64,
    /// TV of the target's own n samples to its exact distribution (the blue line's end): what
    /// the sampler's TV is to be compared with.
    pub tv_target: f64,
    pub curve: Vec<(usize, f64)>,
    pub svg: String,
}

/// Monte Carlo beside the exact numbers (demo 02.3). Runs are the only slow part of the lab, so
/// the page calls this after the exact view has drawn.
pub fn monte_carlo_view(params: &ExactnessParams) -> Result<MonteCarloView, Error> {
    let c = check(params)?;
    let l = params.lang;
    let w = figure_width(560, params.figure_width);
    let target = exact_distribution(&c.lm, Strategy::Target);
    let checkpoints = log_checkpoints(c.runs);
    let strategy = Strategy::Speculative {
        gamma: c.gamma,
        rule: c.variant,
    };
    let curve = tv_curve(&c.lm, strategy, &target, &checkpoints, c.seed);
    let own = tv_curve(
        &c.lm,
        Strategy::Target,
        &target,
        &checkpoints,
        c.seed ^ 0x5eed,
    );
    let a = empirical(&c.lm, Strategy::Target, c.runs, c.seed.wrapping_add(1));
    let b = empirical(&c.lm, Strategy::Target, c.runs, c.seed.wrapping_add(2));
    let floor_curve: Vec<(f64, f64)> = checkpoints
        .iter()
        .map(|&n| (n as f64, noise_floor(&target, n)))
        .collect();
    let svg = render(
        w,
        280,
        l.pick(
            "Monte Carlo total variation against the number of runs",
            "蒙特卡洛的总变差随次数的变化",
        ),
        |cv| {
            let labels = Labels {
                title: l.pick(
                    "Monte Carlo: TV to the exact target against runs",
                    "蒙特卡洛：与精确目标分布的 TV 随次数的变化",
                ),
                x: l.pick("runs (log)", "次数（对数）"),
                y: l.pick("TV (log)", "TV（对数）"),
            };
            let ch = Chart::new(
                cv,
                (60, 40, w as i32 - 20, 230),
                Scale::log(checkpoints[0] as f64, c.runs as f64),
                Scale::log(1e-3, 1.0),
                &labels,
            );
            ch.polyline(&floor_curve, colors::GREY, 2);
            let pts =
                |v: &[(usize, f64)]| v.iter().map(|&(n, t)| (n as f64, t)).collect::<Vec<_>>();
            ch.polyline(&pts(&own), colors::BLUE, 2);
            ch.polyline(&pts(&curve), colors::ORANGE, 2);
            cv.legend(
                (70, 275),
                &[
                    (l.pick("1/√n noise floor", "1/√n 噪声下限"), colors::GREY),
                    (
                        l.pick("target's own samples", "目标模型自己的样本"),
                        colors::BLUE,
                    ),
                    (&c.variant.label(l), colors::ORANGE),
                ],
            );
        },
    );
    Ok(MonteCarloView {
        runs: c.runs as u32,
        variant: c.variant.name(),
        tv_sampler: curve.last().map_or(0.0, |l| l.1),
        tv_two_seeds: tv(&a, &b),
        floor: noise_floor(&target, c.runs),
        tv_target: own.last().map_or(0.0, |l| l.1),
        curve,
        svg,
    })
}

/// 100, 200, 500, 1000, … up to and including `runs`.
fn log_checkpoints(runs: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (2..7)
        .flat_map(|e| [1, 2, 5].map(|m| m * 10usize.pow(e)))
        .filter(|&n| n < runs)
        .collect();
    v.push(runs);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correct_variant_is_exact_and_listed_first() {
        let v = exactness_view(&ExactnessParams::default()).unwrap();
        assert_eq!(v.tvs[0].variant.name(), "correct");
        assert!(v.tvs[0].tv <= 1e-12);
        assert!(v.tvs[1..].iter().all(|t| t.tv > 0.02), "{:?}", v.tvs);
        assert!(
            v.svg_tv.contains("greedy-\n") && v.svg_tv.contains("\nrule\n"),
            "names under the bars"
        );
        // On a phone, a line at every hyphen: "accept-", "q-", "over-", "p".
        let phone = exactness_view(&ExactnessParams {
            figure_width: Some(350),
            ..ExactnessParams::default()
        })
        .unwrap();
        assert!(phone.svg_tv.contains("\nq-\n") && phone.svg_tv.contains("\nover-\n"));
        assert!(!v.svg_tv.contains("\nq-\n"));
    }

    #[test]
    fn the_default_window_reaches_the_bonus_token_and_catches_bonus_from_draft() {
        // Issue 32 item 1: at γ 4 the lecture's 4-token window never reaches the bonus token, so
        // bonus-from-draft looked exact. The default window is γ + 1 and names itself.
        for gamma in 1..=6 {
            let v = exactness_view(&ExactnessParams {
                gamma,
                ..ExactnessParams::default()
            })
            .unwrap();
            assert_eq!(v.window, (gamma as usize + 1).max(4));
            let bonus = v
                .tvs
                .iter()
                .find(|t| t.variant.name() == "bonus-from-draft")
                .unwrap();
            assert_eq!(bonus.verdict, Verdict::Biased, "γ {gamma}: {}", bonus.tv);
            assert_eq!(v.tvs[0].verdict, Verdict::Exact);
            assert!(v
                .coverage
                .contains(&format!("first {} output tokens", v.window)));
        }
    }

    #[test]
    fn a_window_short_of_the_bonus_token_is_undecided_and_says_why() {
        let v = exactness_view(&ExactnessParams {
            gamma: 4,
            window: Some(4),
            ..ExactnessParams::default()
        })
        .unwrap();
        let bonus = v
            .tvs
            .iter()
            .find(|t| t.variant.name() == "bonus-from-draft")
            .unwrap();
        assert!(bonus.tv <= EXACT_TV, "{}", bonus.tv);
        assert_eq!(bonus.verdict, Verdict::Undecided);
        assert_eq!(v.tvs[0].verdict, Verdict::Undecided);
        assert!(
            v.coverage.contains("undecided") && v.coverage.contains("γ + 1 = 5"),
            "{}",
            v.coverage
        );
        // The same γ with the window widened decides it.
        let wide = exactness_view(&ExactnessParams {
            gamma: 4,
            window: Some(5),
            ..ExactnessParams::default()
        })
        .unwrap();
        assert!(wide
            .tvs
            .iter()
            .any(|t| t.variant.name() == "bonus-from-draft" && t.verdict == Verdict::Biased));
        assert!(exactness_view(&ExactnessParams {
            window: Some(8),
            ..ExactnessParams::default()
        })
        .unwrap_err()
        .to_string()
        .contains("window"));
    }

    #[test]
    fn monte_carlo_sits_on_the_floor_for_the_correct_sampler() {
        let v = monte_carlo_view(&ExactnessParams::default()).unwrap();
        assert_eq!(v.curve.last().unwrap().0, 20_000);
        assert!(
            v.tv_sampler < 1.25 * v.floor,
            "{} vs {}",
            v.tv_sampler,
            v.floor
        );
        // Lecture: 0.023 (sampler) against 0.028 (two seeds): the same order.
        assert!(
            v.tv_two_seeds > 0.015 && v.tv_two_seeds < 0.05,
            "{}",
            v.tv_two_seeds
        );
    }

    #[test]
    fn the_figures_speak_chinese() {
        let p = ExactnessParams {
            lang: Lang::Zh,
            runs: 1_000,
            ..ExactnessParams::default()
        };
        let v = exactness_view(&p).unwrap();
        assert!(v.svg_tv.contains("与目标分布的精确 TV") && v.svg_tv.contains("1e-12：精确"));
        assert!(v.svg_dist.contains("目标 p") && v.svg_temperature.contains("温度 T"));
        let m = monte_carlo_view(&p).unwrap();
        assert!(m.svg.contains("1/√n 噪声下限"));
        assert!(!m.svg.contains("noise floor") && !v.svg_temperature.contains("temperature T"));
        // The rules by their Chinese names, each line of a bar's label narrow enough for a
        // phone (a Chinese character counts one, a Latin letter half).
        assert!(v.svg_tv.contains("\n奖励取\n") && !v.svg_tv.contains("bonus"));
        assert!(m.svg.contains(Variant::Correct.label(Lang::Zh)));
        for line in Variant::ALL
            .map(|v| figures::bar_label_zh(v.into()))
            .iter()
            .flat_map(|b| b.lines())
        {
            let width: f64 = line
                .chars()
                .map(|c| if c.is_ascii() { 0.5 } else { 1.0 })
                .sum();
            assert!(width <= 3.0, "{line}");
        }
    }

    #[test]
    fn wrong_variant_plateaus_above_the_floor() {
        let p = ExactnessParams {
            variant: "greedy-rule".into(),
            runs: 5_000,
            ..ExactnessParams::default()
        };
        let v = monte_carlo_view(&p).unwrap();
        assert!(
            v.tv_sampler > 3.0 * v.floor,
            "{} vs {}",
            v.tv_sampler,
            v.floor
        );
    }

    #[test]
    fn bad_params_are_errors() {
        assert!(exactness_view(&ExactnessParams {
            gamma: 0,
            ..ExactnessParams::default()
        })
        .is_err());
        assert!(exactness_view(&ExactnessParams {
            variant: "magic".into(),
            ..ExactnessParams::default()
        })
        .is_err());
        assert!(monte_carlo_view(&ExactnessParams {
            runs: 10_000_000,
            ..ExactnessParams::default()
        })
        .is_err());
    }
}

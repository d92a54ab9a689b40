//! Typical acceptance's trade (lecture §5.1): on the toy, exactly, the tokens a target call yields
//! against the TV to the target over the lab's window, as ε varies at the page's δ and δ at its
//! ε, beside the exact rule's point — what a system buys when it turns the relaxed rule on, and
//! what it pays.

use super::{check, ExactnessParams};
use crate::error::Error;
use crate::i18n::Lang;
use crate::plot::{colors, figure_width, render, Align, Chart, Labels, Scale};
use crate::sampling::rule::Rule;
use crate::sampling::speculative::Variant;
use crate::sampling::tv;
use crate::sampling::typical::Typical;
use crate::toy::enumerate::{exact_distribution_over, expected_tokens_per_call, Strategy};

/// The thresholds swept (each of ε and δ runs over these).
pub const SWEEP: [f64; 11] = [0.0, 0.01, 0.02, 0.05, 0.09, 0.15, 0.2, 0.3, 0.5, 0.7, 1.0];

/// One rule's exact point.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Point {
    pub epsilon: f64,
    pub delta: f64,
    /// Exact TV to the target over the window, and tokens per call (calls from each context).
    pub tv: f64,
    pub tokens_per_call: f64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct TypicalView {
    pub gamma: u32,
    pub window: usize,
    /// ε swept at the page's δ, δ swept at its ε.
    pub by_epsilon: Vec<Point>,
    pub by_delta: Vec<Point>,
    /// The page's (ε, δ), and the exact rule (Algorithm 1).
    pub current: Point,
    pub exact_tv: f64,
    pub exact_tokens_per_call: f64,
    pub caption: String,
    pub svg: String,
}

pub fn typical_view(params: &ExactnessParams) -> Result<TypicalView, Error> {
    let c = check(params)?;
    let target = exact_distribution_over(&c.lm, Strategy::Target, c.window);
    let at = |rule: Rule| {
        let s = Strategy::Speculative {
            gamma: c.gamma,
            rule,
        };
        (
            tv(&exact_distribution_over(&c.lm, s, c.window), &target),
            expected_tokens_per_call(&c.lm, c.gamma, rule),
        )
    };
    let point = |epsilon, delta| {
        let (tv, tokens_per_call) = at(Rule::Typical(Typical { epsilon, delta }));
        Point {
            epsilon,
            delta,
            tv,
            tokens_per_call,
        }
    };
    let t = c.typical;
    let by_epsilon: Vec<Point> = SWEEP.iter().map(|&e| point(e, t.delta)).collect();
    let by_delta: Vec<Point> = SWEEP.iter().map(|&d| point(t.epsilon, d)).collect();
    let current = point(t.epsilon, t.delta);
    let (exact_tv, exact_tokens_per_call) = at(Rule::Lecture(Variant::Correct));
    let l = params.lang;
    let gain = (current.tokens_per_call / exact_tokens_per_call - 1.0) * 100.0;
    let (cost_en, cost_zh) = if gain >= 0.0 {
        ("paid for with", "代价是")
    } else {
        ("fewer tokens, and on top of that", "反而更少，而且")
    };
    let caption = l.pick(
        format!(
            "Typical acceptance at ε {}, δ {}: {:.2} tokens a call against the exact rule's {:.2} ({gain:+.1}%), {cost_en} a TV of {:.3} to the target over the first {} tokens (the exact rule: {:.0e}).",
            t.epsilon, t.delta, current.tokens_per_call, exact_tokens_per_call, current.tv, c.window, exact_tv
        ),
        format!(
            "典型接受在 ε {}、δ {} 时每次调用 {:.2} 个 token，精确规则是 {:.2}（{gain:+.1}%），{cost_zh}前 {} 个 token 与目标分布的 TV 为 {:.3}（精确规则：{:.0e}）。",
            t.epsilon, t.delta, current.tokens_per_call, exact_tokens_per_call, c.window, current.tv, exact_tv
        ),
    );
    let w = figure_width(560, params.figure_width);
    let svg = chart(&by_epsilon, &by_delta, current, exact_tokens_per_call, l, w);
    Ok(TypicalView {
        gamma: c.gamma,
        window: c.window,
        by_epsilon,
        by_delta,
        current,
        exact_tv,
        exact_tokens_per_call,
        caption,
        svg,
    })
}

fn chart(
    by_epsilon: &[Point],
    by_delta: &[Point],
    current: Point,
    exact_tokens: f64,
    l: Lang,
    w: u32,
) -> String {
    let label = l.pick(
        "Tokens per target call against total variation to the target, typical acceptance and the exact rule",
        "每次目标调用的 token 数与总变差：典型接受和精确规则",
    );
    render(w, 280, label, |cv| {
        let labels = Labels {
            title: l.pick(
                "Typical acceptance: tokens a call vs TV",
                "典型接受：每次调用的 token 数 vs TV",
            ),
            x: l.pick("TV to the target", "与目标分布的 TV"),
            y: l.pick("tokens / call", "token 数 / 调用"),
        };
        let all = by_epsilon.iter().chain(by_delta).chain([&current]);
        let (mut top_tv, mut lo, mut hi) = (0.05f64, exact_tokens, exact_tokens);
        for p in all {
            top_tv = top_tv.max(p.tv);
            lo = lo.min(p.tokens_per_call);
            hi = hi.max(p.tokens_per_call);
        }
        let ch = Chart::new(
            cv,
            (60, 40, w as i32 - 20, 220),
            Scale::linear(0.0, top_tv * 1.1),
            Scale::linear((lo - 0.1).max(0.0), hi + 0.1),
            &labels,
        );
        let pts = |v: &[Point]| {
            v.iter()
                .map(|p| (p.tv, p.tokens_per_call))
                .collect::<Vec<_>>()
        };
        ch.polyline(&pts(by_epsilon), colors::BLUE, 2);
        ch.dots(&pts(by_epsilon), colors::BLUE, 3);
        ch.polyline(&pts(by_delta), colors::PURPLE, 2);
        ch.dots(&pts(by_delta), colors::PURPLE, 3);
        ch.dots(&[(0.0, exact_tokens)], colors::TEAL, 6);
        ch.note(
            0.0,
            exact_tokens,
            l.pick("  exact rule", "  精确规则"),
            colors::TEAL,
            Align::Start,
        );
        // Both curves start where a threshold of 0 keeps every draft: the loose end. As its
        // parameter grows to 1 each keeps fewer drafts (fewer tokens a call), and its TV stays far
        // from the exact rule's 0: typical acceptance never becomes Algorithm 1.
        if let Some(loose) = by_epsilon.first() {
            ch.note(
                loose.tv,
                loose.tokens_per_call,
                l.pick("ε or δ = 0: every draft kept", "ε 或 δ = 0：草稿全收"),
                colors::INK,
                Align::End,
            );
        }
        ch.dots(&[(current.tv, current.tokens_per_call)], colors::ORANGE, 6);
        cv.legend(
            (70, 268),
            &[
                (l.pick("ε 0 → 1", "ε 0 → 1"), colors::BLUE),
                (l.pick("δ 0 → 1", "δ 0 → 1"), colors::PURPLE),
                (l.pick("this ε, δ", "当前 ε、δ"), colors::ORANGE),
            ],
        );
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trade_is_measured_exactly_and_the_exact_rule_sits_at_zero() {
        let v = typical_view(&ExactnessParams {
            variant: "typical".into(),
            ..ExactnessParams::default()
        })
        .unwrap();
        assert!(v.exact_tv <= 1e-12);
        assert_eq!(v.by_epsilon.len(), SWEEP.len());
        // ε = 0 keeps every draft (tokens a call at its most); a point's TV is the enumeration's.
        let loose = v.by_epsilon[0];
        assert!(v
            .by_epsilon
            .iter()
            .all(|p| p.tokens_per_call <= loose.tokens_per_call + 1e-12));
        assert!(loose.tokens_per_call > v.exact_tokens_per_call && loose.tv > 0.1);
        assert!(v
            .caption
            .contains(&format!("{:.2}", v.current.tokens_per_call)));
        assert!(v.svg.contains("exact rule"));
        // The loose end is marked, and both curves start there (a threshold of 0 keeps all).
        assert!(v.svg.contains("ε or δ = 0: every draft kept") && v.svg.contains("ε 0 → 1"));
        let (e0, d0) = (v.by_epsilon[0], v.by_delta[0]);
        assert_eq!((e0.tv, e0.tokens_per_call), (d0.tv, d0.tokens_per_call));
        let bad = typical_view(&ExactnessParams {
            delta: -0.5,
            ..ExactnessParams::default()
        })
        .unwrap_err();
        assert!(bad.to_string().contains("delta"), "{bad}");
    }
}

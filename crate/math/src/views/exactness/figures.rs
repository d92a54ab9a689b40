//! The exactness lab's three figures: every rule's exact TV over the window, the most likely
//! outputs under the target and under the selected rule, and α against temperature.

use super::{VariantTv, Verdict, EXACT_TV};
use crate::i18n::Lang;
use crate::plot::{colors, render, text_width, Align, Chart, Labels, Scale};
use crate::sampling::rule::Rule;
use crate::sampling::speculative::Variant;
use crate::toy::temperature::{acceptance_vs_temperature, SHAPES};

pub(super) fn tv_bars(
    tvs: &[VariantTv],
    gamma: u32,
    window: usize,
    selected: Rule,
    l: Lang,
    w: u32,
) -> String {
    let label = l.pick(
        format!("Exact total variation to the target of each sampler at gamma {gamma} over the first {window} tokens"),
        format!("γ = {gamma} 时各采样规则前 {window} 个 token 与目标分布的精确总变差"),
    );
    render(w, 280, &label, |cv| {
        let title = l.pick(
            format!("Exact TV to the target, first {window} tokens, γ = {gamma}"),
            format!("与目标分布的精确 TV，前 {window} 个 token，γ = {gamma}"),
        );
        let labels = Labels {
            title: &title,
            x: "",
            y: l.pick("TV (log)", "TV（对数）"),
        };
        let ch = Chart::new(
            cv,
            (60, 40, w as i32 - 20, 200),
            Scale::categories(tvs.len()),
            Scale::log(1e-17, 1.0),
            &labels,
        );
        // A bar's TV in full (2.17e-2) where it fits over the bar, else its order alone (2e-2):
        // on a phone six bars share 240 px.
        let pitch = ch.px(1.0, 1.0).0 - ch.px(0.0, 1.0).0;
        let fits = tvs
            .iter()
            .all(|t| text_width(&format!("{:.2e}", t.tv), 11) <= pitch - 4);
        for (i, t) in tvs.iter().enumerate() {
            let x = i as f64;
            let color = if t.variant == selected {
                colors::ORANGE
            } else if t.verdict == Verdict::Exact {
                colors::TEAL
            } else {
                colors::GREY
            };
            // Exact zero has no logarithm: draw it on the axis floor.
            ch.bar(x + 0.15, x + 0.85, t.tv.max(1e-17), color);
            ch.note(
                x + 0.5,
                t.tv.max(1e-17),
                &if fits {
                    format!("{:.2e}", t.tv)
                } else {
                    format!("{:.0e}", t.tv)
                },
                colors::INK,
                Align::Middle,
            );
        }
        // Each rule's name for the reader: an English id cut after its first hyphen, a Chinese
        // name in lines of at most three characters.
        let names: Vec<String> = tvs
            .iter()
            .map(|t| match l {
                Lang::Zh => bar_label_zh(t.variant).to_string(),
                // On a phone a category is about 48 px: a line at each hyphen.
                Lang::En if w < 480 => t.variant.name().replace('-', "-\n"),
                Lang::En => t.variant.name().replacen('-', "-\n", 1),
            })
            .collect();
        ch.categories(&names.iter().map(String::as_str).collect::<Vec<_>>());
        ch.hline(EXACT_TV, colors::RED);
        ch.note(
            tvs.len() as f64,
            EXACT_TV,
            l.pick("1e-12: exact", "1e-12：精确"),
            colors::RED,
            Align::End,
        );
    })
}

/// A rule's Chinese name ([`Variant::label`]) broken into the lines of a bar's label.
pub(super) fn bar_label_zh(v: Rule) -> &'static str {
    match v {
        Rule::Lecture(Variant::Correct) => "正确\n规则",
        Rule::Lecture(Variant::ResampleFromTarget) => "拒绝后\n从 p\n重采",
        Rule::Lecture(Variant::GreedyRule) => "贪心\n规则",
        Rule::Lecture(Variant::ArgmaxDraft) => "草稿取\nargmax",
        Rule::Lecture(Variant::AcceptQOverP) => "接受率\nq/p",
        Rule::Lecture(Variant::BonusFromDraft) => "奖励取\n自草稿",
        Rule::Typical(_) => "典型\n接受",
    }
}

pub(super) fn side_by_side(
    target: &[f64],
    other: &[f64],
    window: usize,
    variant: Rule,
    l: Lang,
    w: u32,
) -> String {
    let mut rank: Vec<usize> = (0..target.len()).collect();
    rank.sort_by(|&a, &b| target[b].total_cmp(&target[a]));
    let shown = 40;
    let top = rank
        .iter()
        .take(shown)
        .map(|&i| target[i].max(other[i]))
        .fold(0.0, f64::max)
        * 1.1;
    let name = variant.label(l);
    let label = l.pick(
        format!("The {shown} most likely {window}-token outputs under the target and under {name}"),
        format!("目标分布和{name}下最可能的 {shown} 个 {window}-token 输出"),
    );
    let title = l.pick(
        format!("Most likely first-{window}-token outputs: target vs sampler"),
        format!("最可能的前 {window} 个 token 输出：目标 vs 采样规则"),
    );
    render(w, 280, &label, |cv| {
        let labels = Labels {
            title: &title,
            x: l.pick(
                "output sequence (by target probability)",
                "输出序列（按目标概率排序）",
            ),
            y: l.pick("probability", "概率"),
        };
        let ch = Chart::new(
            cv,
            (60, 40, w as i32 - 20, 230),
            Scale::linear(0.0, shown as f64),
            Scale::linear(0.0, top),
            &labels,
        );
        for (i, &s) in rank.iter().take(shown).enumerate() {
            ch.bar(i as f64 + 0.1, i as f64 + 0.9, target[s], colors::BLUE);
        }
        let pts: Vec<(f64, f64)> = rank
            .iter()
            .take(shown)
            .enumerate()
            .map(|(i, &s)| (i as f64 + 0.5, other[s]))
            .collect();
        ch.dots(&pts, colors::ORANGE, 3);
        cv.legend(
            (300, (ch.below + 10).max(275)),
            &[
                (l.pick("target p", "目标 p"), colors::BLUE),
                (&name, colors::ORANGE),
            ],
        );
    })
}

pub(super) fn temperature_chart(l: Lang, w: u32) -> String {
    let temps: Vec<f64> = (0..=40).map(|i| 0.1 + 2.9 * f64::from(i) / 40.0).collect();
    render(
        w,
        260,
        l.pick(
            "Acceptance rate against temperature for a flat and a peaked distribution",
            "平坦分布和尖峰分布的接受率随温度的变化",
        ),
        |cv| {
            let labels = Labels {
                title: l.pick(
                    "α against temperature (demo 02.5)",
                    "α 随温度的变化（演示 02.5）",
                ),
                x: l.pick("temperature T", "温度 T"),
                y: "α = Σ min(p_T, q_T)",
            };
            let ch = Chart::new(
                cv,
                (60, 40, w as i32 - 20, 210),
                Scale::linear(0.0, 3.0),
                Scale::linear(0.0, 1.0),
                &labels,
            );
            for (shape, color) in SHAPES.iter().zip([colors::TEAL, colors::PURPLE]) {
                let a = acceptance_vs_temperature(shape, &temps);
                let pts: Vec<(f64, f64)> = temps.iter().copied().zip(a).collect();
                ch.polyline(&pts, color, 2);
            }
            cv.legend(
                (w as i32 / 2 + 20, 255),
                &[
                    (l.pick("flat: α rises", "平坦：α 上升"), colors::TEAL),
                    (
                        l.pick("peaked + tail: α falls", "尖峰 + 长尾：α 下降"),
                        colors::PURPLE,
                    ),
                ],
            );
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::{exactness_view, ExactnessParams};
    use crate::i18n::Lang;
    use crate::plot::tests::text_clashes;
    use crate::plot::MIN_WIDTH;

    /// The three figures at the narrowest width, a 390 px phone's room and their own, in both
    /// languages and for every rule: no two texts overlap, none passes the figure's edge.
    #[test]
    fn no_text_of_the_three_figures_overlaps_another() {
        for w in [MIN_WIDTH, 322, 560] {
            for lang in [Lang::En, Lang::Zh] {
                for variant in ["correct", "greedy-rule", "accept-q-over-p"] {
                    for gamma in [1, 4] {
                        let v = exactness_view(&ExactnessParams {
                            figure_width: Some(w),
                            variant: variant.into(),
                            gamma,
                            lang,
                            ..ExactnessParams::default()
                        })
                        .unwrap();
                        for svg in [&v.svg_tv, &v.svg_dist, &v.svg_temperature] {
                            assert_eq!(
                                text_clashes(svg, w as i32),
                                Vec::<String>::new(),
                                "{w} px, {lang:?}, {variant}, γ {gamma}"
                            );
                        }
                    }
                }
            }
        }
    }
}

//! Speculation under load, drawn and said (the decoding widget's `load` experiment, and
//! `specdec likesworld speedup --batch 1,2,4,…`): the measured speedup against the batch on a
//! log₂ batch axis, the time model's prediction from the costs measured at each batch, and the
//! published serving figures (the EAGLE-3 paper's) beside them, each labelled as published; and a
//! caption whose every number is this run's or the paper's, saying whether the speedup falls
//! with the batch here as it does in serving, and why, from the measured verification cost.

use crate::i18n::Lang;
use crate::lab::load::LoadReport;
use crate::lab::speedup::SpeedupReport;
use crate::plot::{colors, render, Canvas, Chart, Labels, Scale};
use plotters::style::RGBColor;

/// The batch axis ends at the core's largest batch (64): 1, 2, 4, … 64, a category each.
const AXIS_BATCHES: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

/// Where batch `b` sits on the log₂ axis (category i is centred at i + 0.5).
fn at(b: f64) -> f64 {
    b.max(1.0).log2() + 0.5
}

/// A change smaller than this fraction of the speedup is "about level".
const LEVEL: f64 = 0.1;

/// The published serving systems' colours, in [`crate::lab::load::PUBLISHED`]'s order.
const PUBLISHED_COLORS: [RGBColor; 2] = [colors::TEAL, colors::PURPLE];

/// Measured speedups at `xs` (blue, with a bar as long as each one's IQR, clipped to `top`)
/// and the prediction on the measured cost curve (orange): what the sweeps over γ (views::decoding)
/// and over the batch both draw.
pub(crate) fn measured_and_curve(
    cv: &Canvas,
    ch: &Chart,
    rows: &[SpeedupReport],
    xs: &[f64],
    top: f64,
) {
    let points = |f: fn(&SpeedupReport) -> f64| -> Vec<(f64, f64)> {
        rows.iter().zip(xs).map(|(x, &g)| (g, f(x))).collect()
    };
    let curve = points(|x| x.predicted_speedup_curve);
    ch.polyline(&curve, colors::ORANGE, 2);
    ch.dots(&curve, colors::ORANGE, 3);
    for (x, &g) in rows.iter().zip(xs) {
        let half = x.measured_speedup_iqr / 2.0;
        let lo = ch.px(g, (x.measured_speedup - half).max(0.0));
        let hi = ch.px(g, (x.measured_speedup + half).min(top));
        cv.line(&[lo, hi], colors::BLUE, 1);
    }
    let measured = points(|x| x.measured_speedup);
    ch.polyline(&measured, colors::BLUE, 2);
    ch.dots(&measured, colors::BLUE, 4);
}

/// The measured speedup against the batch (with its IQR bar), the prediction on the cost curve
/// measured at each batch, and the published serving figures (a range drawn as a bar).
pub fn load_svg(r: &LoadReport, l: Lang, w: u32) -> String {
    let top = r
        .rows
        .iter()
        .map(|x| x.measured_speedup + x.measured_speedup_iqr / 2.0)
        .chain(r.rows.iter().map(|x| x.predicted_speedup_curve))
        .chain(
            r.published
                .iter()
                .flat_map(|p| p.points.iter().map(|q| q.2)),
        )
        .filter(|v| v.is_finite())
        .fold(2.0f64, f64::max)
        .min(8.0);
    let top = (top * 2.0).ceil() / 2.0;
    let label = l.pick(
        "Measured speedup against the batch, beside the published serving figures",
        "实测加速比随批大小的变化，与已发表的服务系统数据并列",
    );
    render(w, 340, label, |cv| {
        let labels = Labels {
            title: l.pick(
                "Speculation under load: speedup against the batch",
                "负载下的推测解码：加速比随批大小的变化",
            ),
            x: l.pick(
                "batch (prompts decoded together)",
                "批大小（一起解码的提示词数）",
            ),
            y: l.pick("speedup ×", "加速比 ×"),
        };
        let ch = Chart::new(
            cv,
            (70, 40, w as i32 - 20, 240),
            Scale::categories(AXIS_BATCHES.len()),
            Scale::linear(0.0, top),
            &labels,
        );
        let names: Vec<String> = AXIS_BATCHES.iter().map(u32::to_string).collect();
        ch.categories(&names.iter().map(String::as_str).collect::<Vec<_>>());
        ch.hline(1.0, colors::GREY);
        let mut entries = Vec::new();
        let published: Vec<String> = r.published.iter().map(|p| p.label(l)).collect();
        for ((p, color), name) in r.published.iter().zip(PUBLISHED_COLORS).zip(&published) {
            let mid: Vec<(f64, f64)> = p
                .points
                .iter()
                .map(|&(b, lo, hi)| (at(b), (lo + hi) / 2.0))
                .collect();
            ch.polyline(&mid, color, 1);
            // A figure is a dot; a quoted range ("≈ 1.3–1.4×") a bar from its low to its high.
            for &(b, lo, hi) in p.points {
                let (x, y0) = ch.px(at(b), lo);
                let (_, y1) = ch.px(at(b), hi);
                if lo == hi {
                    cv.circle((x, y0), 4, color, true);
                } else {
                    cv.rect((x - 4, y1), (x + 4, y0), color, true);
                }
            }
            entries.push((name.as_str(), color));
        }
        let xs: Vec<f64> = r.rows.iter().map(|x| at(x.batch as f64)).collect();
        measured_and_curve(cv, &ch, &r.rows, &xs, top);
        let mut legend = vec![
            (
                l.pick(
                    "measured here, wall clock (bar: its IQR)",
                    "这里实测的墙钟（竖线：IQR）",
                ),
                colors::BLUE,
            ),
            (
                l.pick(
                    "predicted from the costs measured at each batch",
                    "按每个批大小实测的开销预测",
                ),
                colors::ORANGE,
            ),
        ];
        legend.extend(entries);
        legend.push((l.pick("plain decoding", "普通解码"), colors::GREY));
        cv.legend((70, 295), &legend);
    })
}

fn x2(v: f64) -> String {
    format!("{v:.2}×")
}

/// What the measured rows say, in `lang`: the speedup from the smallest batch to the largest
/// beside the serving figures, and why, from the verification cost measured at each end.
pub fn caption(r: &LoadReport, lang: Lang) -> String {
    let (a, z) = r.ends();
    let (sa, sz) = (a.measured_speedup, z.measured_speedup);
    let (ba, bz) = (a.batch, z.batch);
    let (va, vz) = (a.verify_over_target, z.verify_over_target);
    let serving = lang.pick(
        "the EAGLE-3 paper reports 1.81× at batch 2 falling to ≈ 1.3–1.4× at batch 64 (SGLang on an H100, a chain of 3) and 1.75× to 1.01× at batch 56 (vLLM, a chain of 2)",
        "EAGLE-3 论文报告：批 2 时 1.81×，到批 64 降到 ≈ 1.3–1.4×（H100 上的 SGLang，长 3 的链）；批 2 时 1.75×，到批 56 降到 1.01×（vLLM，长 2 的链）",
    );
    if r.rows.len() == 1 {
        return match lang {
            Lang::En => format!("One batch measured: {} at batch {ba}. List several batches (1,2,4,8) to see the speedup move with the load; in serving, {serving}.", x2(sa)),
            Lang::Zh => format!("只测了一个批大小：批 {ba} 时 {}。列出几个批大小（1,2,4,8）才能看到加速比随负载的变化；在服务系统中，{serving}。", x2(sa)),
        };
    }
    // A change smaller than the ends' own spread (their IQRs) is not a trend; nor is one whose
    // end was timed as one group, which has no spread to judge it by.
    let spread = a.measured_speedup_iqr.max(z.measured_speedup_iqr);
    let one_group = [a, z].into_iter().find(|s| s.groups() < 2).map(|s| s.batch);
    let moved = one_group.is_none() && (sz - sa).abs() > spread;
    let trend = if sz < sa * (1.0 - LEVEL) && moved {
        lang.pick("falls, as it does in serving", "下降了，和服务系统一样")
            .to_string()
    } else if sz > sa * (1.0 + LEVEL) && moved {
        lang.pick(
            "rises, unlike serving, where it falls",
            "上升了，和服务系统相反（那里是下降的）",
        )
        .to_string()
    } else if let Some(b) = one_group.filter(|_| sz < sa * (1.0 - LEVEL) || sz > sa * (1.0 + LEVEL))
    {
        lang.pick(
            "changes, but batch {b} was timed as one group, whose spread is unknown, so no trend can be read from it; in serving it falls",
            "有变化，但批 {b} 只计时了一组，离散度未知，读不出趋势；服务系统里是下降的",
        )
        .replace("{b}", &b.to_string())
    } else if sz < sa * (1.0 - LEVEL) || sz > sa * (1.0 + LEVEL) {
        lang.pick(
            "moves less than the runs’ own spread (IQR up to {spread}×), so no trend can be read from it; in serving it falls",
            "变化小于这些运行自身的离散（IQR 最大 {spread}×），读不出趋势；服务系统里是下降的",
        )
        .replace("{spread}", &format!("{spread:.2}"))
    } else {
        lang.pick(
            "stays about level, where in serving it falls",
            "大致持平，而服务系统里是下降的",
        )
        .to_string()
    };
    let mut said = match lang {
        Lang::En => format!(
            "Here the speedup goes from {} at batch {ba} to {} at batch {bz}: it {trend} — {serving}.",
            x2(sa),
            x2(sz)
        ),
        Lang::Zh => format!(
            "这里加速比从批 {ba} 的 {} 变到批 {bz} 的 {}：{trend}——{serving}。",
            x2(sa),
            x2(sz)
        ),
    };
    // The time model: a step costs T(n)/T(1) + d·c one-token calls and yields τ tokens.
    let cost = |x: &SpeedupReport| x.verify_over_target + x.draft_calls_per_step * x.c;
    let (ta, tz) = (a.tokens_per_call, z.tokens_per_call);
    said.push_str(&match lang {
        Lang::En => format!(" Measured, a speculative step costs T(n)/T(1) + d·c = {va:.2} + {:.2} one-token calls at batch {ba} and {vz:.2} + {:.2} at batch {bz}, for τ = {ta:.2} and {tz:.2} tokens.", cost(a) - va, cost(z) - vz),
        Lang::Zh => format!("实测：一个推测步花 T(n)/T(1) + d·c = {va:.2} + {:.2} 次单 token 调用（批 {ba}），{vz:.2} + {:.2} 次（批 {bz}），分别得到 τ = {ta:.2} 和 {tz:.2} 个 token。", cost(a) - va, cost(z) - vz),
    });
    // Only a fall the runs' spread does not cover is explained (as the trend above says).
    let falls = sz < sa * (1.0 - LEVEL) && moved;
    let why = if falls && vz > va * (1.0 + LEVEL) {
        lang.pick(
            " The verification is what grew: the larger the batch, the more a step computes for every weight byte it reads, the nearer it is to compute-bound, and the less the extra tokens of a verification are free — what speculation saves in steps it spends in compute, as in serving.",
            "变大的是验证：批越大，每读一个权重字节要算的就越多，一步越接近受算力限制，验证多出来的 token 就越不免费——推测省下的步数又花在了计算上，和服务系统一样。",
        )
    } else if falls {
        let (grew, grew_zh) = match vz <= va {
            true => ("did not grow", "没有变大"),
            false => ("hardly grew", "几乎没有变大"),
        };
        &match lang {
            Lang::En => format!(" The verification’s cost {grew} (T(n)/T(1) {va:.2} at batch {ba}, {vz:.2} at batch {bz}), so the step is not turning compute-bound across these batches: the rest of the step (the draft’s calls, τ) moved the speedup."),
            Lang::Zh => format!("验证的开销{grew_zh}（T(n)/T(1)：批 {ba} 时 {va:.2}，批 {bz} 时 {vz:.2}），所以在这些批大小上一步并没有变成受算力限制：是步里的其余部分（草稿调用、τ）让加速比变了。"),
        }
    } else {
        ""
    };
    said.push_str(why);
    // The device: a serving GPU at a small batch verifies almost for free; say what this one pays.
    if falls && va >= 1.0 + LEVEL {
        said.push_str(&match lang {
            Lang::En => format!(" On this device verifying costs {va:.2}× a one-token call already at batch {ba}, where a serving GPU’s small batches are memory-bound and verify nearly free: the fall starts here at a smaller batch than in serving."),
            Lang::Zh => format!("在这台设备上，批 {ba} 时验证就已经是单 token 调用的 {va:.2} 倍，而服务用的 GPU 在小批量时受访存限制、验证几乎免费：所以这里的下降比服务系统开始得更早。"),
        });
    }
    // Every batch where speculation lost, not just the first: a noisy sweep need not stay below 1.
    let slow: Vec<String> = r
        .rows
        .iter()
        .filter(|x| x.measured_speedup < 1.0)
        .map(|x| match lang {
            Lang::En => format!("{} ({})", x.batch, x2(x.measured_speedup)),
            Lang::Zh => format!("{}（{}）", x.batch, x2(x.measured_speedup)),
        })
        .collect();
    if !slow.is_empty() {
        said.push_str(&match lang {
            Lang::En => format!(" Slower than plain decoding at batch {}.", slow.join(", ")),
            Lang::Zh => format!("比普通解码还慢的批大小：{}。", slow.join("，")),
        });
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::load::PUBLISHED;
    use crate::lab::params::Proposing;
    use crate::plot::figure_width;
    use crate::plot::tests::text_spans;

    /// A sweep whose speedup is `speedups[i]` at batch `batches[i]`, verification `verify[i]`.
    fn report(batches: &[usize], speedups: &[f64], verify: &[f64]) -> LoadReport {
        let rows = batches
            .iter()
            .zip(speedups)
            .zip(verify)
            .map(|((&batch, &s), &v)| SpeedupReport {
                backend: "flex",
                drafts_on: None,
                method: "draft B chain of 3, greedy".into(),
                shape: Proposing::Chain,
                gamma: 3,
                prompts: (2 * batch).max(10),
                target_width: 16,
                batch,
                alpha: 0.8,
                c: 0.05,
                tokens_per_call: 3.0,
                accepted_per_call: 2.0,
                tokens: 400,
                draft_calls_per_step: 3.0,
                verify_over_target: v,
                predicted_speedup: Some(2.5),
                predicted_speedup_curve: s * 1.05,
                measured_speedup: s,
                measured_speedup_iqr: 0.1,
                plain_us: 4e5,
                speculative_us: 4e5 / s,
                plain_us_per_token: 1000.0,
                speculative_us_per_token: 1000.0 / s,
                target_call_us: 1000.0,
                verify_call_us: 1000.0 * v,
                draft_call_us: 50.0,
                plain_lane: Vec::new(),
                speculative_lane: Vec::new(),
                transfer: None,
                limit_speedup: None,
            })
            .collect();
        LoadReport {
            method: "draft B chain of 3, greedy".into(),
            backend: "flex",
            shape: Proposing::Chain,
            gamma: 3,
            target_width: 16,
            rows,
            published: &PUBLISHED,
        }
    }

    #[test]
    fn the_caption_says_the_measured_fall_and_why_from_the_measured_costs() {
        let r = report(&[1, 4, 32], &[1.9, 1.5, 0.8], &[1.3, 1.9, 4.2]);
        let en = caption(&r, Lang::En);
        assert!(
            en.starts_with("Here the speedup goes from 1.90× at batch 1 to 0.80× at batch 32: it falls, as it does in serving"),
            "{en}"
        );
        assert!(
            en.contains("T(n)/T(1) + d·c = 1.30 + 0.15 one-token calls at batch 1 and 4.20 + 0.15 at batch 32, for τ = 3.00 and 3.00 tokens"),
            "{en}"
        );
        assert!(en.contains("The verification is what grew"), "{en}");
        assert!(
            en.contains("costs 1.30× a one-token call already at batch 1"),
            "{en}"
        );
        assert!(
            en.ends_with("Slower than plain decoding at batch 32 (0.80×)."),
            "{en}"
        );
        let zh = caption(&r, Lang::Zh);
        assert!(
            zh.contains("批 1 的 1.90× 变到批 32 的 0.80×：下降了"),
            "{zh}"
        );
        assert!(
            zh.ends_with("比普通解码还慢的批大小：32（0.80×）。"),
            "{zh}"
        );
    }

    #[test]
    fn a_change_within_the_runs_spread_is_not_called_a_trend() {
        let mut r = report(&[1, 8], &[1.3, 1.0], &[1.0, 1.1]);
        r.rows[0].measured_speedup_iqr = 0.5;
        let en = caption(&r, Lang::En);
        assert!(
            en.contains("moves less than the runs’ own spread (IQR up to 0.50×)"),
            "{en}"
        );
        assert!(!en.contains("falls, as it does"), "{en}");
        // No trend, so nothing explains one: neither the costs nor where a fall starts.
        for said in ["did not grow", "what grew", "the fall starts"] {
            assert!(!en.contains(said), "{en}");
        }
        let zh = caption(&r, Lang::Zh);
        assert!(zh.contains("读不出趋势"), "{zh}");
    }

    #[test]
    fn a_change_timed_as_one_group_is_not_called_a_trend() {
        let mut r = report(&[1, 8], &[1.3, 0.7], &[1.0, 1.1]);
        r.rows[1].prompts = 8; // batch 8 of 8 prompts: one group, an IQR of 0 that says nothing
        r.rows[1].measured_speedup_iqr = 0.0;
        let en = caption(&r, Lang::En);
        assert!(
            en.contains("it changes, but batch 8 was timed as one group, whose spread is unknown"),
            "{en}"
        );
        assert!(!en.contains("falls, as it does"), "{en}");
        let zh = caption(&r, Lang::Zh);
        assert!(zh.contains("批 8 只计时了一组"), "{zh}");
    }

    #[test]
    fn a_level_or_rising_sweep_is_called_so_with_what_moved_instead() {
        let level = caption(&report(&[1, 8], &[1.5, 1.45], &[1.0, 1.02]), Lang::En);
        assert!(
            level.contains("it stays about level, where in serving it falls"),
            "{level}"
        );
        assert!(!level.contains("what grew"), "{level}");
        assert!(!level.contains("already at batch"), "{level}");
        assert!(!level.contains("Slower than plain"), "{level}");
        // A noisy sweep: every batch below 1 is named.
        let noisy = caption(&report(&[1, 2, 4], &[0.9, 1.2, 0.8], &[1.0; 3]), Lang::En);
        assert!(noisy.ends_with("at batch 1 (0.90×), 4 (0.80×)."), "{noisy}");
        // A costly verification at batch 1 is no reason for a fall that did not happen.
        let rising = caption(&report(&[1, 8], &[1.2, 1.6], &[1.5, 1.5]), Lang::En);
        assert!(rising.contains("it rises, unlike serving"), "{rising}");
        assert!(!rising.contains("the fall starts"), "{rising}");
        let flat_cost = caption(&report(&[1, 8], &[1.6, 1.2], &[1.0, 0.9]), Lang::En);
        assert!(
            flat_cost.contains("cost did not grow (T(n)/T(1) 1.00 at batch 1, 0.90 at batch 8)"),
            "{flat_cost}"
        );
        let little = caption(&report(&[1, 8], &[1.6, 1.2], &[1.0, 1.04]), Lang::En);
        assert!(
            little.contains("cost hardly grew (T(n)/T(1) 1.00 at batch 1, 1.04 at batch 8)"),
            "{little}"
        );
        let one = caption(&report(&[4], &[1.2], &[1.0]), Lang::Zh);
        assert!(one.starts_with("只测了一个批大小：批 4 时 1.20×"), "{one}");
    }

    /// The figure names the published figures as published, draws a bar for the quoted range,
    /// and keeps every text inside at a phone's width, in both languages.
    #[test]
    fn the_figure_labels_the_published_figures_and_fits_a_phone() {
        let r = report(
            &[1, 2, 4, 8, 16, 32],
            &[2.0, 1.9, 1.7, 1.4, 1.1, 0.9],
            &[1.2; 6],
        );
        for lang in Lang::ALL {
            for room in [Some(324), None] {
                let w = figure_width(560, room);
                let svg = load_svg(&r, lang, w);
                // The y-axis title is drawn upright along the axis: measured across, it is not.
                let upright = lang.pick("speedup ×", "加速比 ×");
                for (text, left, right) in text_spans(&svg).into_iter().filter(|t| t.0 != upright) {
                    assert!(
                        left >= 0 && right <= w as i32,
                        "{lang:?} at {w}: {text:?} spans {left}…{right}"
                    );
                }
            }
        }
        let svg = load_svg(&r, Lang::En, 560);
        assert!(
            svg.contains("published (EAGLE-3 paper), H100/SGLang, chain of 3"),
            "{svg}"
        );
        assert!(
            svg.contains("published (EAGLE-3 paper), vLLM, chain of 2"),
            "{svg}"
        );
        let texts: Vec<String> = text_spans(&svg).into_iter().map(|t| t.0).collect();
        for batch in ["1", "2", "4", "8", "16", "32", "64"] {
            assert!(texts.iter().any(|t| t == batch), "{batch}: {texts:?}");
        }
        assert!(
            load_svg(&r, Lang::Zh, 560).contains("已发表（EAGLE-3 论文），H100/SGLang，长 3 的链")
        );
    }
}

//! The speculative-decoding widget (lecture §3–§4): one experiment at a time on the LikesWorld
//! models, run in a worker — acceptance by kind, greedy chains over several γ, sampling with any
//! verification rule and its calibration test, greedy trees over the lecture's shapes, naive vs
//! MSS trees, measured wall clock with its two lanes, a seeded step-through of one run, the drafts
//! on the target's hidden states and the §6 table (their figures are [`super::hidden`]'s). The
//! experiment itself is one call of [`crate::lab::experiment::run`]; this view only turns its
//! outcome into the report (as the CLI prints it with --json), the figure and the steps.

use super::hidden::{hidden_svg, methods_svg};
use super::load::{caption, load_svg, measured_and_curve};
use crate::clock::{Clock, Progress};
use crate::decode::engine::{ChainRule, Method};
use crate::decode::stats::{Span, StepTrace};
use crate::error::Error;
use crate::i18n::Lang;
use crate::lab::decoding::GreedyReport;
use crate::lab::experiment::{self, Outcome};
use crate::lab::params::Drafter;
use crate::lab::speedup::SweepReport;
use crate::lab::{describe, Experiment, Lab};
use crate::likesworld;
use crate::model::Models;
use crate::plot::{colors, figure_width, render, Align, Chart, Labels, Scale};
use crate::theory;

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DecodingView {
    pub experiment: &'static str,
    pub backend: &'static str,
    /// The draft models' backend where it is not the target's (on WebGPU, the CPU beside it),
    /// whatever the experiment: the page's status line names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drafts_on: Option<&'static str>,
    pub note: Option<String>,
    /// The experiment's report(s), as the CLI prints them with --json.
    pub report: serde_json::Value,
    pub svg: String,
    /// Step-through: the prompt, the output, and every step.
    pub prompt: Vec<&'static str>,
    pub steps: Vec<StepTrace>,
    pub words: Vec<&'static str>,
    pub elapsed_ms: f64,
}

fn json(v: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(v).expect("reports serialise")
}

/// Runs `experiment` on `models` and draws what it measured, with texts in `lang`, for a figure
/// room `room` px wide (none: the figures' own widths).
pub async fn decoding_view(
    experiment: &Experiment,
    lang: Lang,
    room: Option<u32>,
    models: &Models,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<DecodingView, Error> {
    let started = clock();
    let lab = Lab::new(models, lang, clock);
    let outcome = experiment::run(experiment, lab, progress).await?;
    let mut view = DecodingView {
        experiment: experiment.name(),
        backend: models.backend.name(),
        drafts_on: models.drafts_apart(),
        words: (0..likesworld::VOCAB as u32)
            .map(likesworld::word)
            .collect(),
        ..DecodingView::default()
    };
    match outcome {
        Outcome::Acceptance(rows) => view.report = json(&rows),
        Outcome::Greedy(reports) => {
            view.svg = greedy_svg(&reports, lang, figure_width(560, room));
            view.report = json(&reports.iter().map(|(_, r)| r).collect::<Vec<_>>());
        }
        Outcome::Sample(r) => view.report = json(&r),
        Outcome::Tree(reports) => view.report = json(&reports),
        Outcome::Stochastic(reports) => view.report = json(&reports),
        Outcome::Speedup(r) => {
            // The lanes are recorded at batch 1 only: a batch has no single clock of its own.
            if !(r.plain_lane.is_empty() && r.speculative_lane.is_empty()) {
                view.svg = lanes_svg(
                    &r.plain_lane,
                    &r.speculative_lane,
                    lang,
                    figure_width(760, room),
                );
            }
            view.report = json(&r);
        }
        Outcome::Sweep(r) => {
            view.svg = sweep_svg(&r, lang, figure_width(560, room));
            view.report = json(&r);
        }
        Outcome::Load(r) => {
            view.svg = load_svg(&r, lang, figure_width(560, room));
            view.report = json(&r);
            view.report["caption"] = caption(&r, lang).into();
        }
        Outcome::Hidden { report, trees } => {
            view.svg = hidden_svg(&trees, lang, figure_width(420, room));
            view.report = serde_json::json!({ "report": report, "trees": trees });
        }
        Outcome::Methods(r) => {
            view.svg = methods_svg(&r, lang, figure_width(460, room));
            view.report = json(&r);
        }
        Outcome::Step {
            method,
            hidden,
            prompt,
            run,
        } => {
            let words = |ts: &[u32]| ts.iter().map(|&t| likesworld::word(t)).collect::<Vec<_>>();
            view.prompt = words(&prompt);
            // The rule in force, so that the page labels every step by what it does.
            let variant = match &method {
                Method::Chain {
                    rule: ChainRule::Sample(v),
                    ..
                } => Some(v.name()),
                _ => None,
            };
            // Medusa's node at depth d was proposed by head d: the page labels it so.
            let heads = matches!(hidden, Some((Drafter::Medusa { .. }, _)));
            view.report = serde_json::json!({
                "variant": variant,
                "hidden": hidden.is_some(),
                "heads": heads,
                "method": hidden.map_or_else(|| describe(&method, models.whose(), lang), |h| h.1),
                "output": words(&run.output),
                "stats": run.stats,
            });
            view.steps = run.trace;
        }
    }
    view.elapsed_ms = (clock() - started) / 1e3;
    Ok(view)
}

/// Measured tokens per call against γ, beside the i.i.d. formula with the measured α.
fn greedy_svg(reports: &[(usize, GreedyReport)], l: Lang, w: u32) -> String {
    let max_g = reports.iter().map(|(g, _)| *g).max().unwrap_or(1) as f64;
    let top = reports
        .iter()
        .map(|(_, r)| {
            r.formula_tokens_per_call
                .unwrap_or(1.0)
                .max(r.tokens_per_call)
        })
        .fold(1.0f64, f64::max)
        .ceil();
    let label = l.pick(
        "Tokens per target call against γ",
        "每次目标模型调用的 token 数随 γ 的变化",
    );
    render(w, 300, label, |cv| {
        let labels = Labels {
            title: l.pick(
                "Tokens per target call: measured vs the i.i.d. formula",
                "每次目标模型调用的 token 数：实测 vs i.i.d. 公式",
            ),
            x: l.pick("γ (draft tokens per call)", "γ（每次调用的草稿 token 数）"),
            y: l.pick("tokens per call", "每次调用的 token 数"),
        };
        let ch = Chart::new(
            cv,
            (70, 40, w as i32 - 20, 240),
            Scale::linear(0.0, max_g),
            Scale::linear(0.0, top),
            &labels,
        );
        let measured: Vec<(f64, f64)> = reports
            .iter()
            .map(|(g, r)| (*g as f64, r.tokens_per_call))
            .collect();
        let formula: Vec<(f64, f64)> = reports
            .iter()
            .map(|(g, r)| (*g as f64, theory::expected_tokens(r.alpha, *g as u32)))
            .collect();
        ch.polyline(&formula, colors::ORANGE, 2);
        ch.dots(&formula, colors::ORANGE, 3);
        ch.polyline(&measured, colors::BLUE, 2);
        ch.dots(&measured, colors::BLUE, 4);
        cv.legend(
            (70, 290),
            &[
                (l.pick("measured", "实测"), colors::BLUE),
                (
                    l.pick("E(α, γ) with the measured α", "用实测 α 的 E(α, γ)"),
                    colors::ORANGE,
                ),
            ],
        );
    })
}

/// The wall-clock speedup against γ (total plain time over total speculative time, with a bar as
/// long as the IQR of the per-group speedups centred on it) beside the measured-curve prediction
/// and the lecture's formula (with the sweep's mean α and c); plain decoding is the line at 1.
fn sweep_svg(r: &SweepReport, l: Lang, w: u32) -> String {
    let gammas: Vec<f64> = r.rows.iter().map(|x| f64::from(x.gamma)).collect();
    let max_g = gammas.iter().copied().fold(1.0, f64::max);
    let formula: Vec<(f64, f64)> = gammas.iter().copied().zip(r.formula_at.clone()).collect();
    let whiskers = r
        .rows
        .iter()
        .map(|x| x.measured_speedup + x.measured_speedup_iqr / 2.0);
    let top = r
        .rows
        .iter()
        .map(|x| x.predicted_speedup_curve)
        .chain(formula.iter().map(|p| p.1))
        .chain(whiskers)
        .fold(1.25f64, f64::max)
        .min(8.0);
    let top = (top * 2.0).ceil() / 2.0;
    let label = l.pick("Measured speedup against γ", "实测加速比随 γ 的变化");
    render(w, 330, label, |cv| {
        let labels = Labels {
            title: l.pick(
                "Speedup against γ: measured, predicted, and the formula",
                "加速比随 γ 的变化：实测、预测与公式",
            ),
            x: l.pick("γ (tokens proposed per step)", "γ（每步提出的 token 数）"),
            y: l.pick("speedup ×", "加速比 ×"),
        };
        let ch = Chart::new(
            cv,
            (70, 40, w as i32 - 20, 240),
            Scale::linear(0.0, max_g),
            Scale::linear(0.0, top),
            &labels,
        );
        ch.hline(1.0, colors::GREY);
        if !formula.is_empty() {
            ch.polyline(&formula, colors::PURPLE, 2);
            ch.dots(&formula, colors::PURPLE, 3);
        }
        measured_and_curve(cv, &ch, &r.rows, &gammas, top);
        // The device's choice, at its own prediction (where it is a γ the axis holds).
        let chosen = r
            .device_choice
            .as_ref()
            .filter(|d| d.gamma > 0 && d.gamma as f64 <= max_g);
        if let Some(d) = chosen {
            let at = [(d.gamma as f64, d.predicted_speedup.min(top))];
            ch.dots(&at, colors::TEAL, 6);
        }
        let mut entries = vec![
            (
                l.pick(
                    "measured wall clock (bar: its IQR)",
                    "实测墙钟（竖线：IQR）",
                ),
                colors::BLUE,
            ),
            (
                l.pick("on the measured cost curve", "按实测开销曲线"),
                colors::ORANGE,
            ),
        ];
        if !formula.is_empty() {
            entries.push((
                l.pick(
                    "lecture: E(α, γ)/(γc + 1), mean α and c",
                    "课上：E(α, γ)/(γc + 1)，平均 α 与 c",
                ),
                colors::PURPLE,
            ));
        }
        if chosen.is_some() {
            entries.push((
                l.pick(
                    "this device’s choice, predicted from T(k), c and the vector",
                    "这台设备的选择，按 T(k)、c 和接受向量预测",
                ),
                colors::TEAL,
            ));
        }
        entries.push((l.pick("plain decoding", "普通解码"), colors::GREY));
        cv.legend((70, 290), &entries);
    })
}

/// Two lanes on one wall-clock axis: plain decoding and speculative decoding of one prompt. The
/// colours are named by a legend, which wraps on a narrow figure (a title saying them ran past
/// the figure); a draft call, microseconds beside a target call, is drawn at least
/// [`MIN_BAR_PX`](crate::plot::MIN_BAR_PX) wide.
fn lanes_svg(plain: &[Span], fast: &[Span], lang: Lang, w: u32) -> String {
    let end = plain
        .iter()
        .chain(fast)
        .map(|s| s.end_us)
        .fold(1.0, f64::max);
    render(
        w,
        190,
        lang.pick(
            "Plain and speculative decoding of one prompt on one clock",
            "同一个提示词的普通解码和推测解码，在同一个时钟上",
        ),
        |cv| {
            let labels = Labels {
                title: lang.pick("The first prompt, call by call", "第一个提示词，逐次调用"),
                x: lang.pick("wall clock (ms)", "墙钟（ms）"),
                y: "",
            };
            let ch = Chart::new(
                cv,
                (110, 40, w as i32 - 20, 140),
                Scale::linear(0.0, end / 1e3),
                // Two lanes, named on the left: no numeric ticks behind the names.
                Scale::categories(2),
                &labels,
            );
            let names = [lang.pick("plain", "普通"), lang.pick("speculative", "推测")];
            for (lane, spans, name) in [(1.0, plain, names[0]), (0.0, fast, names[1])] {
                let (l, y) = ch.px(0.0, lane + 0.5);
                cv.text((l - 8, y), name, 12, colors::INK, Align::End, false);
                for s in spans {
                    let color = if s.target {
                        colors::BLUE
                    } else {
                        colors::ORANGE
                    };
                    let (start, end) = (s.start_us / 1e3, s.end_us / 1e3);
                    ch.span((start, end), (lane + 0.15, lane + 0.85), color);
                    let (a, y0) = ch.px(start, lane + 0.85);
                    let (b, y1) = ch.px(end, lane + 0.15);
                    if s.target && s.tokens > 1 && b - a > 8 {
                        cv.text(
                            ((a + b) / 2, (y0 + y1) / 2),
                            &s.tokens.to_string(),
                            10,
                            colors::INK,
                            Align::Middle,
                            false,
                        );
                    }
                }
            }
            cv.legend(
                (20, 180),
                &[
                    (
                        lang.pick(
                            "target call (number: tokens decided; the first reads the prompt)",
                            "目标模型调用（数字：决定的 token 数；第一次是读入提示词）",
                        ),
                        colors::BLUE,
                    ),
                    (lang.pick("draft call", "草稿调用"), colors::ORANGE),
                ],
            );
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::tests::text_spans;

    /// Target calls of a millisecond with draft calls of a microsecond between them, as the
    /// trained models' calls are timed on a fast CPU.
    fn lanes() -> (Vec<Span>, Vec<Span>) {
        let call = |target, start_us: f64, len: f64, tokens| Span {
            target,
            start_us,
            end_us: start_us + len,
            tokens,
        };
        let plain = (0..8)
            .map(|i| call(true, f64::from(i) * 1000.0, 1000.0, 1))
            .collect();
        let mut fast = Vec::new();
        for i in 0..3 {
            let at = f64::from(i) * 1500.0;
            fast.push(call(false, at, 1.0, 0));
            fast.push(call(false, at + 1.0, 1.0, 0));
            fast.push(call(true, at + 2.0, 1400.0, 3));
        }
        (plain, fast)
    }

    /// On a phone (324 px of room) and on a desktop, in English and Chinese, every text of the
    /// two lanes (the title, the names, the legend) lies inside the figure.
    #[test]
    fn the_lanes_texts_stay_inside_their_figure() {
        let (plain, fast) = lanes();
        for lang in Lang::ALL {
            for room in [Some(324), None] {
                let w = figure_width(760, room);
                let svg = lanes_svg(&plain, &fast, lang, w);
                assert!(svg.contains(&format!("width=\"{w}\"")), "{svg}");
                for (text, left, right) in text_spans(&svg) {
                    assert!(
                        left >= 0 && right <= w as i32,
                        "{lang:?} at {w}: {text:?} spans {left}…{right}"
                    );
                }
            }
        }
    }

    /// A draft call of a microsecond, under a pixel on this axis, is drawn two pixels wide.
    #[test]
    fn the_lanes_draw_every_draft_call_at_least_two_pixels_wide() {
        let (plain, fast) = lanes();
        let svg = lanes_svg(&plain, &fast, Lang::En, 560);
        let orange = format!(
            "fill=\"#{:02X}{:02X}{:02X}\"",
            colors::ORANGE.0,
            colors::ORANGE.1,
            colors::ORANGE.2
        );
        let widths: Vec<f64> = svg
            .split("<rect")
            .filter(|r| r.split("/>").next().is_some_and(|r| r.contains(&orange)))
            .map(|r| {
                let at = r.find(" width=\"").expect("width") + 8;
                r[at..at + r[at..].find('"').expect("quote")]
                    .parse()
                    .expect("number")
            })
            .collect();
        // Six draft calls and the legend's swatch.
        assert_eq!(widths.len(), 7, "{svg}");
        assert!(
            widths
                .iter()
                .all(|&w| w >= f64::from(crate::plot::MIN_BAR_PX)),
            "{widths:?}"
        );
    }
}

//! The model-free drafting widget (lecture §5.3, demos 05.1–05.3): every drafter on every
//! workload beside draft B; the suffix tree's node budget swept; Jacobi from a fixed or a random
//! start; and one output with each token coloured by where it came from.

use crate::clock::{Clock, Progress};
use crate::decode::free::kind::{DrafterKind, JacobiStart, Settings, BUDGET, WINDOW};
use crate::decode::free::workloads::Kind;
use crate::error::Error;
use crate::error::Named;
use crate::i18n::Lang;
use crate::lab::modelfree::{self as ex, Highlight, Row, TableReport};
use crate::model::Models;
use crate::plot::{colors, figure_width, render, text_width, Align, Chart, Labels, Scale};
use plotters::style::RGBColor;

crate::error::choices! {
    /// What the model-free widget runs: every drafter × workload (demo 05.1), the node budget
    /// sweep (05.2), Jacobi's fixed vs random start (05.3), or where each token of one request
    /// came from.
    pub enum FreeExperiment("experiment") {
        Table = "table",
        Sweep = "sweep",
        Jacobi = "jacobi",
        Highlight = "highlight",
    }
}

impl FreeExperiment {
    /// The experiment in its menu's words, with the lecture's demo number.
    pub fn label(self, l: Lang) -> &'static str {
        match self {
            FreeExperiment::Table => l.pick(
                "every drafter × workload (05.1)",
                "所有草稿方法 × 负载（05.1）",
            ),
            FreeExperiment::Sweep => l.pick("node budget sweep (05.2)", "节点预算扫描（05.2）"),
            FreeExperiment::Jacobi => l.pick(
                "Jacobi: fixed vs random start (05.3)",
                "Jacobi：固定 vs 随机初值（05.3）",
            ),
            FreeExperiment::Highlight => l.pick("where each token came from", "每个 token 的来源"),
        }
    }
}

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct ModelfreeParams {
    pub experiment: FreeExperiment,
    pub backend: String,
    pub workload: String,
    pub drafter: String,
    pub budget: usize,
    pub requests: usize,
    pub seed: u64,
    /// Jacobi's start: fixed or random (highlight).
    pub init: String,
    /// Which request the highlight shows.
    pub request: usize,
    /// Jacobi's window (demo 05.3).
    pub window: usize,
    /// The language of the figures' texts.
    pub lang: Lang,
    /// The room the page has for a figure, in CSS px (none: each figure's own width): figures
    /// are drawn for it rather than scaled down, so that their labels keep their size.
    pub figure_width: Option<u32>,
}

impl Default for ModelfreeParams {
    fn default() -> Self {
        ModelfreeParams {
            experiment: FreeExperiment::Table,
            backend: "flex".into(),
            workload: "agent".into(),
            drafter: "both".into(),
            budget: 8,
            requests: 30,
            seed: 0,
            init: "random".into(),
            request: 5,
            window: 6,
            lang: Lang::En,
            figure_width: None,
        }
    }
}

/// What the widget draws.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ModelfreeView {
    pub experiment: String,
    /// The LikesWorld backend, when the run used the models.
    pub backend: Option<&'static str>,
    pub note: Option<String>,
    pub report: serde_json::Value,
    pub svg: String,
    pub highlight: Option<Highlight>,
    pub elapsed_ms: f64,
}

/// The validated settings of `p`.
pub fn settings(p: &ModelfreeParams) -> Result<Settings, Error> {
    let s = Settings {
        workload: Kind::parse(&p.workload)?,
        drafter: DrafterKind::parse(&p.drafter)?,
        budget: p.budget,
        requests: p.requests,
        seed: p.seed,
        fixed_init: JacobiStart::parse(&p.init)? == JacobiStart::Fixed,
    };
    s.check()?;
    WINDOW.check(p.window as f64)?;
    Ok(s)
}

/// Whether the experiment needs the LikesWorld models (the page loads them only then).
pub fn needs_models(p: &ModelfreeParams) -> bool {
    p.experiment == FreeExperiment::Table || p.workload == "likesworld"
}

pub async fn modelfree_view(
    p: &ModelfreeParams,
    models: Option<&Models>,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<ModelfreeView, Error> {
    let s = settings(p)?;
    let started = clock();
    let mut view = ModelfreeView {
        experiment: p.experiment.name().into(),
        backend: models.map(|m| m.backend.name()),
        ..ModelfreeView::default()
    };
    match p.experiment {
        FreeExperiment::Table => {
            let r = ex::table(models, s.requests, s.budget, s.seed, clock, progress).await?;
            view.svg = table_svg(&r, p.lang, p.figure_width);
            view.report = serde_json::to_value(&r).expect("reports serialise");
        }
        FreeExperiment::Sweep => {
            if !DrafterKind::TREES.contains(&s.drafter) {
                let known: Vec<&str> = DrafterKind::TREES.iter().map(|d| d.name()).collect();
                return Err(Error::Unknown {
                    what: "drafter for the budget sweep",
                    name: p.drafter.clone(),
                    known: known.join(", ").into(),
                });
            }
            let rows = ex::budget_sweep(
                models, s.workload, s.drafter, s.requests, s.seed, clock, progress,
            )
            .await?;
            view.svg = sweep_svg(&rows, p.lang, p.figure_width);
            view.report = serde_json::json!({ "rows": rows });
        }
        FreeExperiment::Jacobi => {
            let rows = ex::jacobi_inits(
                models, s.workload, p.window, s.requests, s.seed, clock, progress,
            )
            .await?;
            view.svg = jacobi_svg(&rows, p.lang, p.figure_width);
            view.report = serde_json::json!({ "rows": rows.iter().map(|(n, r)| serde_json::json!({"init": n, "row": r})).collect::<Vec<_>>() });
        }
        FreeExperiment::Highlight => {
            let h = ex::highlight(models, &s, p.request, clock).await?;
            progress(1, 1);
            view.report = serde_json::to_value(&h.row).expect("reports serialise");
            view.highlight = Some(h);
        }
    }
    view.elapsed_ms = (clock() - started) / 1e3;
    Ok(view)
}

const DRAFTER_COLORS: [RGBColor; 5] = [
    colors::BLUE,
    colors::ORANGE,
    colors::TEAL,
    colors::PURPLE,
    colors::GREY,
];
/// The legend's names, as the widget's drafter choice names them: the methods by the names the
/// lecture gives them in both languages (Prompt Lookup, SuffixDecoding, Jacobi, Lookahead), the
/// suffix index of earlier outputs alone described.
const DRAFTER_NAMES: [&str; 5] = [
    "Prompt Lookup",
    "suffix index (earlier outputs)",
    "SuffixDecoding",
    "Jacobi",
    "Lookahead",
];
const DRAFTER_NAMES_ZH: [&str; 5] = [
    "Prompt Lookup",
    "后缀索引（以前的输出）",
    "SuffixDecoding",
    "Jacobi",
    "Lookahead",
];

/// The least pitch of bars (px) that holds an upright 11 px value beside its neighbours: a line
/// of text is about 1.2 em high.
const UPRIGHT_PITCH: i32 = 14;

/// Tokens per call, a group of bars per workload, draft B γ 6 as a line over LikesWorld.
fn table_svg(r: &TableReport, l: Lang, room: Option<u32>) -> String {
    let w = figure_width(640, room);
    let kinds: Vec<Kind> = Kind::ALL
        .into_iter()
        .filter(|k| r.rows.iter().any(|x| x.workload == *k))
        .collect();
    let top = r
        .rows
        .iter()
        .map(|x| x.tokens_per_call)
        .chain(r.draft_b.iter().map(|b| b.tokens_per_call))
        .fold(1.0f64, f64::max)
        .ceil();
    render(
        w,
        320,
        l.pick(
            "Tokens per target call by drafter and workload",
            "各草稿方法和负载下每次目标模型调用的 token 数",
        ),
        |cv| {
            let labels = Labels {
                title: l.pick(
                    "Tokens decided per target call (VerifyGreedy, budget as set)",
                    "每次目标模型调用决定的 token 数（VerifyGreedy，按设定的预算）",
                ),
                x: "",
                y: l.pick("tokens per call", "每次调用的 token 数"),
            };
            let ch = Chart::new(
                cv,
                (70, 40, w as i32 - 20, 250),
                Scale::categories(kinds.len()),
                Scale::linear(0.0, top),
                &labels,
            );
            let names: Vec<&str> = kinds.iter().map(|k| k.title(l)).collect();
            ch.categories(&names);
            let pitch = ch.px(0.16, 0.0).0 - ch.px(0.0, 0.0).0;
            for (i, k) in kinds.iter().enumerate() {
                for (j, d) in DrafterKind::ALL.iter().enumerate() {
                    if let Some(x) = r.rows.iter().find(|x| x.workload == *k && x.drafter == *d) {
                        let x0 = i as f64 + 0.1 + 0.16 * j as f64;
                        ch.bar(x0, x0 + 0.14, x.tokens_per_call, DRAFTER_COLORS[j]);
                        // The value over its bar where it fits the bar's pitch, turned upright
                        // where only its height does, else left to the table under the figure
                        // (on a phone five values a workload ran together: "1.01.0").
                        let value = format!("{:.1}", x.tokens_per_call);
                        let (cx, top) = ch.px(x0 + 0.07, x.tokens_per_call);
                        let wide = text_width(&value, 11);
                        if wide <= pitch - 2 {
                            ch.note(
                                x0 + 0.07,
                                x.tokens_per_call,
                                &value,
                                colors::INK,
                                Align::Middle,
                            );
                        } else if pitch >= UPRIGHT_PITCH {
                            cv.text_vertical((cx, top - 4 - wide / 2), &value, 11, colors::INK);
                        }
                    }
                }
                if let (Kind::Likesworld, Some(b)) = (k, &r.draft_b) {
                    let (a, y) = ch.px(i as f64 + 0.05, b.tokens_per_call);
                    let (z, _) = ch.px(i as f64 + 0.95, b.tokens_per_call);
                    cv.line(&[(a, y), (z, y)], colors::RED, 2);
                }
            }
            // Draft B's line is named in the legend, with its value: over the bars its label ran
            // into their values, and past a phone's edge.
            let draft_b = r.draft_b.as_ref().map(|b| {
                l.pick(
                    format!("draft B, γ 6 (line): {:.2}", b.tokens_per_call),
                    format!("草稿 B，γ 6（横线）：{:.2}", b.tokens_per_call),
                )
            });
            let entries: Vec<(&str, RGBColor)> = l
                .pick(DRAFTER_NAMES, DRAFTER_NAMES_ZH)
                .into_iter()
                .zip(DRAFTER_COLORS)
                .chain(draft_b.as_deref().map(|b| (b, colors::RED)))
                .collect();
            cv.legend((70, 300), &entries);
        },
    )
}

/// Tokens per call and the accepted fraction of verified nodes against the node budget.
fn sweep_svg(rows: &[Row], l: Lang, room: Option<u32>) -> String {
    // Two panels side by side, each half of the room.
    let w = figure_width(720, room);
    let half = w as i32 / 2;
    let top = rows
        .iter()
        .map(|r| r.tokens_per_call)
        .fold(1.0f64, f64::max)
        .ceil();
    let label = l.pick(
        "Node budget sweep of the suffix tree",
        "后缀树的节点预算扫描",
    );
    let (budget, per_call) = (
        l.pick("node budget", "节点预算"),
        l.pick("tokens per call", "每次调用的 token 数"),
    );
    render(w, 300, label, |cv| {
        let left = Chart::new(
            cv,
            (60, 40, half - 20, 240),
            Scale::log(1.0, BUDGET.max),
            Scale::linear(0.0, top),
            &Labels {
                title: l.pick("Tokens decided per call", "每次调用决定的 token 数"),
                x: budget,
                y: per_call,
            },
        );
        let right = Chart::new(
            cv,
            (half + 60, 40, w as i32 - 20, 240),
            Scale::log(1.0, BUDGET.max),
            Scale::linear(0.0, 1.0),
            &Labels {
                title: l.pick(
                    "Accepted fraction of verified nodes",
                    "被验证节点中被接受的比例",
                ),
                x: budget,
                y: l.pick("accepted / verified", "接受 / 验证"),
            },
        );
        let t: Vec<(f64, f64)> = rows
            .iter()
            .map(|r| (r.budget as f64, r.tokens_per_call))
            .collect();
        let f: Vec<(f64, f64)> = rows
            .iter()
            .map(|r| (r.budget as f64, r.accepted_node_fraction))
            .collect();
        left.polyline(&t, colors::BLUE, 2);
        left.dots(&t, colors::BLUE, 4);
        right.polyline(&f, colors::ORANGE, 2);
        right.dots(&f, colors::ORANGE, 4);
        for (chart, pts, fmt) in [(&left, &t, false), (&right, &f, true)] {
            for &(x, y) in [pts.first(), pts.last()].into_iter().flatten() {
                let text = if fmt {
                    format!("{:.0}%", 100.0 * y)
                } else {
                    format!("{y:.2}")
                };
                chart.note(x, y, &text, colors::INK, Align::Middle);
            }
        }
    })
}

/// Tokens per call of Jacobi from each start, and of Lookahead.
fn jacobi_svg(rows: &[(String, Row)], l: Lang, room: Option<u32>) -> String {
    let w = figure_width(520, room);
    let top = rows
        .iter()
        .map(|(_, r)| r.tokens_per_call)
        .fold(1.0f64, f64::max)
        .ceil();
    render(
        w,
        280,
        l.pick(
            "Jacobi decoding: tokens per call by initial guess",
            "Jacobi 解码：不同初始猜测下每次调用的 token 数",
        ),
        |cv| {
            let ch = Chart::new(
                cv,
                (70, 40, w as i32 - 20, 220),
                Scale::categories(rows.len()),
                Scale::linear(0.0, top),
                &Labels {
                    title: l.pick(
                        "Tokens decided per target call",
                        "每次目标模型调用决定的 token 数",
                    ),
                    x: "",
                    y: l.pick("tokens per call", "每次调用的 token 数"),
                },
            );
            let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
            ch.categories(&names);
            ch.hline(1.0, colors::RED);
            for (i, (_, r)) in rows.iter().enumerate() {
                ch.bar(
                    i as f64 + 0.25,
                    i as f64 + 0.75,
                    r.tokens_per_call,
                    DRAFTER_COLORS[if i < 2 { 3 } else { 4 }],
                );
                ch.note(
                    i as f64 + 0.5,
                    r.tokens_per_call,
                    &format!("{:.3}", r.tokens_per_call),
                    colors::INK,
                    Align::Middle,
                );
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::free::kind::REQUESTS;
    use burn::tensor::read_sync;

    const CLOCK: Clock<'static> = &|| 0.0;

    fn view(p: &ModelfreeParams) -> Result<ModelfreeView, Error> {
        read_sync(modelfree_view(p, None, CLOCK, &mut |_, _| {}))
    }

    #[test]
    fn every_experiment_draws_without_the_models_on_the_rule_workloads() {
        let base = ModelfreeParams {
            requests: 8,
            ..ModelfreeParams::default()
        };
        let t = view(&base).unwrap();
        assert!(t.svg.starts_with("<svg") && t.svg.contains("Prompt Lookup"));
        assert_eq!(t.report["rows"].as_array().unwrap().len(), 10);
        for e in [FreeExperiment::Sweep, FreeExperiment::Jacobi] {
            let v = view(&ModelfreeParams {
                experiment: e,
                ..base.clone()
            })
            .unwrap();
            assert!(v.svg.starts_with("<svg"), "{e:?}");
        }
        let h = view(&ModelfreeParams {
            experiment: FreeExperiment::Highlight,
            ..base.clone()
        })
        .unwrap();
        assert!(h.highlight.unwrap().identical);
        assert!(!needs_models(&base) || base.experiment == FreeExperiment::Table);
    }

    /// The table's figure at the narrowest width, a 390 px phone's room and its own, in both
    /// languages: no two texts overlap (on a phone the bars' values ran together, "1.01.0"), and
    /// the Chinese legend names the drafters as the lecture does, in no lower-case English.
    #[test]
    fn the_table_figure_keeps_its_texts_apart_in_both_languages() {
        use crate::model::device::Backend;
        use crate::plot::tests::text_clashes;
        use crate::plot::MIN_WIDTH;
        // With the models, as the page runs it: LikesWorld's bars and draft B's line too.
        let models = read_sync(Models::load(Backend::Flex)).unwrap();
        for w in [MIN_WIDTH, 322, 640] {
            for lang in [Lang::En, Lang::Zh] {
                let p = ModelfreeParams {
                    requests: 2,
                    lang,
                    figure_width: Some(w),
                    ..ModelfreeParams::default()
                };
                let v =
                    read_sync(modelfree_view(&p, Some(&models), CLOCK, &mut |_, _| {})).unwrap();
                assert!(v.svg.contains("LikesWorld"));
                assert_eq!(
                    text_clashes(&v.svg, w as i32),
                    Vec::<String>::new(),
                    "{w} px, {lang:?}"
                );
                for name in ["Prompt Lookup", "SuffixDecoding", "Jacobi", "Lookahead"] {
                    assert!(v.svg.contains(&format!("\n{name}\n")), "{name} in {lang:?}");
                }
                if lang == Lang::Zh {
                    for english in ["prompt lookup", "jacobi", "lookahead", "suffix", "both"] {
                        assert!(!v.svg.contains(english), "{english} in Chinese");
                    }
                    assert!(v.svg.contains("后缀索引（以前的输出）"));
                }
            }
        }
    }

    #[test]
    fn bad_values_are_named() {
        let bad = |f: fn(&mut ModelfreeParams), word: &str| {
            let mut p = ModelfreeParams::default();
            f(&mut p);
            let e = view(&p).unwrap_err().to_string();
            assert!(e.contains(word), "{e}");
        };
        bad(|p| p.budget = 0, "budget");
        bad(|p| p.budget = 10_000, "budget");
        bad(|p| p.requests = REQUESTS.max as usize + 1, "requests");
        bad(|p| p.workload = "chat".into(), "\"chat\"");
        bad(|p| p.drafter = "medusa".into(), "\"medusa\"");
        bad(|p| p.init = "zeros".into(), "\"zeros\"");
        bad(|p| p.window = 0, "window");
        // An unknown experiment is refused as the page's parameters are read, by its name.
        let e =
            serde_json::from_value::<ModelfreeParams>(serde_json::json!({ "experiment": "nope" }));
        let e = e.unwrap_err().to_string();
        assert!(e.contains("\"nope\"") && e.contains("table"), "{e}");
        bad(
            |p| {
                p.experiment = FreeExperiment::Sweep;
                p.drafter = "jacobi".into();
            },
            "\"jacobi\"",
        );
        bad(
            |p| {
                p.experiment = FreeExperiment::Highlight;
                p.request = 30;
            },
            "request",
        );
    }
}

//! The speculative-decoding widget (lecture §3–§4): one experiment at a time on the LikesWorld
//! models, run in a worker — acceptance by kind, greedy chains over several γ, sampling with any
//! verification rule and its calibration test, greedy trees over the lecture's shapes, naive vs
//! MSS trees, measured wall clock with its two lanes, and a seeded step-through of one run.

use crate::decode::experiments::{self as ex, Progress};
use crate::decode::stats::{Span, StepTrace};
use crate::decode::{ChainRule, Method, TreeRule};
use crate::error::{check_range, Error};
use crate::i18n::Lang;
use crate::likesworld;
use crate::model::bench::Clock;
use crate::model::Models;
use crate::plot::{colors, render, Align, Chart, Labels, Scale};
use crate::sampling::multi::Children;
use crate::sampling::speculative::Variant;
use crate::theory;
use crate::tree::parse_config;

/// The lecture's tree shapes (demo 04.3), beside any the user types.
pub const TREE_SHAPES: [&str; 6] = [
    "<1,1,1,1>",
    "<2,1,1,1>",
    "<3,1,1,1>",
    "<1,3,1,1>",
    "<2,2,1,1>",
    "<2,2,2,2>",
];
/// γ values of demo 03.2, beside the user's.
pub const GAMMAS: [usize; 4] = [1, 2, 4, 6];
/// A LikesWorld tree: at most this many nodes and levels.
pub const NODE_BUDGET: usize = 64;
pub const MAX_DEPTH: usize = 8;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct DecodingParams {
    /// acceptance, greedy, sample, tree, stochastic, speedup or step.
    pub experiment: String,
    pub backend: String,
    /// a or b.
    pub draft: String,
    pub gamma: u32,
    pub prompts: usize,
    pub repeats: usize,
    pub seed: u64,
    pub variant: String,
    pub config: String,
    /// naive or mss (stochastic trees).
    pub verify: String,
    pub children: String,
    /// Step-through: which prompt, and greedy (false) or sampling.
    pub sampling: bool,
    /// The language of the figures' texts.
    pub lang: Lang,
}

impl Default for DecodingParams {
    fn default() -> Self {
        DecodingParams {
            experiment: "greedy".into(),
            backend: "flex".into(),
            draft: "b".into(),
            gamma: 4,
            prompts: 50,
            repeats: 1,
            seed: 0,
            variant: "correct".into(),
            config: "<2,2,1,1>".into(),
            verify: "mss".into(),
            children: "without-replacement".into(),
            sampling: true,
            lang: Lang::En,
        }
    }
}

/// Experiments 1–5 at the lecture's sizes, as the benchmark times them (issue: under 10 s in all
/// on a CPU): natively `specdec decode-bench`, in the page `tests/bench.mjs` (through
/// `decoding_bench_suite`). Each is one call of [`decoding_view`].
pub fn bench_suite() -> Vec<(&'static str, DecodingParams)> {
    let p = |experiment: &str, draft: &str, prompts, repeats| DecodingParams {
        experiment: experiment.into(),
        draft: draft.into(),
        prompts,
        repeats,
        ..DecodingParams::default()
    };
    vec![
        (
            "1 acceptance by kind, 200 worlds",
            p("acceptance", "b", 200, 1),
        ),
        (
            "2 greedy chains, draft A, γ 1 2 4 6, 200 prompts",
            p("greedy", "a", 200, 1),
        ),
        (
            "2 greedy chains, draft B, γ 1 2 4 6, 200 prompts",
            p("greedy", "b", 200, 1),
        ),
        (
            "3 sampling, B γ 4, 200 × 3 (+ target alone)",
            p("sample", "b", 200, 3),
        ),
        (
            "4 greedy trees, 6 shapes, 100 prompts",
            p("tree", "b", 100, 1),
        ),
        (
            "5 naive / MSS / top-k trees ⟨1,1,3,1⟩, 100",
            DecodingParams {
                config: "<1,1,3,1>".into(),
                ..p("stochastic", "b", 100, 1)
            },
        ),
    ]
}

/// Validated parameters; each experiment checks only what it uses, so a bad tree typed for one
/// experiment does not stop another.
struct Checked<'p> {
    p: &'p DecodingParams,
    draft: usize,
    gamma: usize,
    prompts: usize,
}

fn check(p: &DecodingParams) -> Result<Checked<'_>, Error> {
    let draft = match p.draft.as_str() {
        "a" => 0,
        "b" => 1,
        d => {
            return Err(Error::Unknown {
                what: "draft",
                name: d.into(),
                known: "a, b".into(),
            })
        }
    };
    check_range("gamma", f64::from(p.gamma), 1.0, 16.0, "1 ≤ γ ≤ 16")?;
    check_range(
        "prompts",
        p.prompts as f64,
        1.0,
        1000.0,
        "1 ≤ prompts ≤ 1000",
    )?;
    check_range("repeats", p.repeats as f64, 1.0, 20.0, "1 ≤ repeats ≤ 20")?;
    Ok(Checked {
        p,
        draft,
        gamma: p.gamma as usize,
        prompts: p.prompts,
    })
}

impl Checked<'_> {
    fn variant(&self) -> Result<Variant, Error> {
        Variant::parse(&self.p.variant)
    }

    fn widths(&self) -> Result<Vec<usize>, Error> {
        tree_widths(&self.p.config)
    }

    /// Naive or MSS, and how children are drawn.
    fn stochastic(&self) -> Result<(TreeRule, Children), Error> {
        let verify = TreeRule::parse(&self.p.verify)?;
        if verify == TreeRule::Greedy {
            return Err(Error::Unknown {
                what: "stochastic verification",
                name: self.p.verify.clone(),
                known: "naive, mss".into(),
            });
        }
        Ok((verify, Children::parse(&self.p.children)?))
    }
}

/// A LikesWorld tree configuration: within the node budget and at most [`MAX_DEPTH`] levels.
pub fn tree_widths(config: &str) -> Result<Vec<usize>, Error> {
    let widths = parse_config(config, NODE_BUDGET)?.widths().to_vec();
    check_range(
        "tree depth",
        widths.len() as f64,
        1.0,
        MAX_DEPTH as f64,
        "1 to 8 levels",
    )?;
    Ok(widths)
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DecodingView {
    pub experiment: String,
    pub backend: &'static str,
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

/// Runs the experiment `params` names on `models`.
pub async fn decoding_view(
    params: &DecodingParams,
    models: &Models,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<DecodingView, Error> {
    let c = check(params)?;
    let started = clock();
    let prompts: Vec<Vec<u32>> = ex::prompts(c.prompts).iter().map(|w| w.prompt()).collect();
    let mut view = DecodingView {
        experiment: params.experiment.clone(),
        backend: models.backend.name(),
        words: (0..likesworld::VOCAB as u32)
            .map(likesworld::word)
            .collect(),
        ..DecodingView::default()
    };
    match params.experiment.as_str() {
        "acceptance" => {
            view.report = json(&ex::acceptance_by_kind(models, c.prompts, progress).await?);
        }
        "greedy" => {
            let mut gammas: Vec<usize> = GAMMAS.to_vec();
            if !gammas.contains(&c.gamma) {
                gammas.push(c.gamma);
                gammas.sort_unstable();
            }
            let total = prompts.len() * (gammas.len() + 1);
            let reference =
                ex::target_greedy(models, &prompts, clock, &mut |i, _| progress(i, total)).await?;
            let mut reports = Vec::new();
            for (k, &gamma) in gammas.iter().enumerate() {
                let method = Method::Chain {
                    draft: c.draft,
                    gamma,
                    rule: ChainRule::Greedy,
                };
                let base = prompts.len() * (k + 1);
                let r = ex::greedy(models, method, &prompts, &reference, clock, &mut |i, _| {
                    progress(base + i, total)
                })
                .await?;
                reports.push((gamma, r));
            }
            view.svg = greedy_svg(&reports, params.lang);
            view.report = json(&reports.iter().map(|(_, r)| r).collect::<Vec<_>>());
        }
        "sample" => {
            let variant = c.variant()?;
            let method = Method::Chain {
                draft: c.draft,
                gamma: c.gamma,
                rule: ChainRule::Sample(variant),
            };
            let sp = ex::sampling_prompts(c.prompts);
            view.report = json(
                &ex::sample(
                    models,
                    method,
                    variant,
                    &sp,
                    params.repeats,
                    params.seed,
                    clock,
                    progress,
                )
                .await?,
            );
        }
        "tree" => {
            let mut shapes: Vec<String> = TREE_SHAPES.iter().map(|s| s.to_string()).collect();
            let typed = format!(
                "<{}>",
                c.widths()?
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            );
            if !shapes.contains(&typed) {
                shapes.push(typed);
            }
            let total = prompts.len() * (shapes.len() + 1);
            let reference =
                ex::target_greedy(models, &prompts, clock, &mut |i, _| progress(i, total)).await?;
            let mut reports = Vec::new();
            for (k, s) in shapes.iter().enumerate() {
                let widths = parse_config(s, NODE_BUDGET)?.widths().to_vec();
                let method = Method::Expand {
                    draft: c.draft,
                    widths,
                    children: Children::TopK,
                    rule: TreeRule::Greedy,
                };
                let base = prompts.len() * (k + 1);
                reports.push(
                    ex::greedy(models, method, &prompts, &reference, clock, &mut |i, _| {
                        progress(base + i, total)
                    })
                    .await?,
                );
            }
            view.report = json(&reports);
        }
        "stochastic" => {
            let (widths, (_, children)) = (c.widths()?, c.stochastic()?);
            let sp = ex::sampling_prompts(c.prompts);
            let runs = [
                (TreeRule::Naive, children),
                (TreeRule::Mss, children),
                (TreeRule::Mss, Children::TopK),
            ];
            let total = sp.len() * runs.len();
            let mut reports = Vec::new();
            for (k, (rule, children)) in runs.into_iter().enumerate() {
                let base = sp.len() * k;
                reports.push(
                    ex::stochastic(
                        models,
                        &widths,
                        children,
                        rule,
                        &sp,
                        params.seed,
                        clock,
                        &mut |i, _| progress(base + i, total),
                    )
                    .await?,
                );
            }
            view.report = json(&reports);
        }
        "speedup" => {
            let r = ex::speedup(models, c.draft, c.gamma, &prompts, clock, progress).await?;
            view.svg = lanes_svg(&r.plain_lane, &r.speculative_lane, params.lang);
            view.report = json(&r);
        }
        "step" => {
            let i = (params.seed as usize) % ex::prompts(200).len();
            let prompt = ex::prompts(i + 1)[i].prompt();
            let method = if params.sampling {
                Method::Chain {
                    draft: c.draft,
                    gamma: c.gamma,
                    rule: ChainRule::Sample(c.variant()?),
                }
            } else {
                Method::Expand {
                    draft: c.draft,
                    widths: c.widths()?,
                    children: Children::TopK,
                    rule: TreeRule::Greedy,
                }
            };
            let g = ex::run(
                models,
                method.clone(),
                1.0,
                &prompt,
                params.seed,
                true,
                clock,
            )
            .await?;
            view.prompt = prompt.iter().map(|&t| likesworld::word(t)).collect();
            view.report = serde_json::json!({"method": ex::describe(&method), "output": g.output.iter().map(|&t| likesworld::word(t)).collect::<Vec<_>>(), "stats": g.stats});
            view.steps = g.trace;
            progress(1, 1);
        }
        other => {
            return Err(Error::Unknown {
                what: "experiment",
                name: other.into(),
                known: "acceptance, greedy, sample, tree, stochastic, speedup, step".into(),
            })
        }
    }
    view.elapsed_ms = (clock() - started) / 1e3;
    Ok(view)
}

/// Measured tokens per call against γ, beside the i.i.d. formula with the measured α.
fn greedy_svg(reports: &[(usize, ex::GreedyReport)], l: Lang) -> String {
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
    render(560, 300, label, |cv| {
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
            (70, 40, 540, 240),
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

/// Two lanes on one wall-clock axis: plain decoding and speculative decoding of one prompt.
fn lanes_svg(plain: &[Span], fast: &[Span], lang: Lang) -> String {
    let end = plain
        .iter()
        .chain(fast)
        .map(|s| s.end_us)
        .fold(1.0, f64::max);
    render(
        760,
        190,
        lang.pick(
            "Plain and speculative decoding of one prompt on one clock",
            "同一个提示词的普通解码和推测解码，在同一个时钟上",
        ),
        |cv| {
            let labels = Labels {
                title: lang.pick(
                    "Each bar is a measured call: target (blue, with tokens decided), draft (orange)",
                    "每个条是一次实测的调用：目标模型（蓝，标出决定的 token 数），草稿（橙）",
                ),
                x: lang.pick("wall clock (ms)", "墙钟（ms）"),
                y: "",
            };
            let ch = Chart::new(
                cv,
                (110, 40, 740, 140),
                Scale::linear(0.0, end / 1e3),
                Scale::linear(0.0, 2.0),
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
                    let (a, y0) = ch.px(s.start_us / 1e3, lane + 0.85);
                    let (b, y1) = ch.px(s.end_us / 1e3, lane + 0.15);
                    cv.rect((a, y0), (b.max(a + 1), y1), color, true);
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
        },
    )
}

//! `likesworld acceptance|greedy|sample|tree|stochastic|speedup`: speculative decoding with the
//! LikesWorld target and drafts (lecture §3–§4, demos 03.1–03.3 and 04.3–04.5). Each fills the
//! parameters of one `specdec::lab` experiment, checks them with the ranges the page uses, and
//! prints its report.

use super::models::backend;
use crate::{row, Opts, Report, Usage};
use burn::tensor::read_sync;
use serde::Serialize;
use specdec::clock::native_clock;
use specdec::decode::{Method, TreeRule};
use specdec::error::Range;
use specdec::i18n::Lang;
use specdec::lab::acceptance::{acceptance_by_kind, KindAlpha};
use specdec::lab::decoding::{self as ex, OutputStats};
use specdec::lab::params::{tree_widths, Chain, Draft, Stochastic, GAMMA, PROMPTS, REPEATS};
use specdec::lab::target_greedy;
use specdec::likesworld::{prompts as held_out, sampling_prompts};
use specdec::model::widen::{self, WIDTH};
use specdec::model::Models;
use specdec::sampling::multi::Children;
use specdec::sampling::speculative::Variant;

pub fn likesworld(o: &mut Opts) -> Result<Report, Usage> {
    const KNOWN: &str = "accuracy, acceptance, greedy, sample, tree, stochastic, speedup, widen-check, medusa, eagle, methods";
    if o.words.len() != 1 {
        return Err(Usage(format!(
            "likesworld: expected one of {KNOWN}, got {:?}",
            o.words.join(" ")
        )));
    }
    match o.words[0].as_str() {
        "acceptance" => acceptance(o),
        "greedy" => greedy(o),
        "sample" => sample(o),
        "tree" => tree(o),
        "stochastic" => stochastic(o),
        "speedup" => super::speedup::speedup(o),
        "widen-check" => widen_check(o),
        "medusa" => super::hidden::medusa(o),
        "eagle" => super::hidden::eagle(o),
        "methods" => super::hidden::methods(o),
        w => Err(Usage(format!(
            "likesworld: unknown experiment {w:?} (known: {KNOWN})"
        ))),
    }
}

/// The models on `--backend`, the target widened `--target-width`× (default 1: the trained one).
pub(super) fn models(o: &mut Opts) -> Result<Models, Usage> {
    let width = width(o, "target-width")?;
    let m = read_sync(Models::load(backend(o)?))?;
    Ok(read_sync(m.with_target_width(width))?)
}

/// A target width (`--target-width` or `--width`), checked before any model loads.
pub fn width(o: &mut Opts, option: &str) -> Result<usize, Usage> {
    let r: usize = o.number(option, Some(1))?;
    WIDTH.check(r as f64)?;
    Ok(r)
}

/// `--draft a|b`.
pub(super) fn draft(o: &mut Opts, default: Option<&str>) -> Result<Draft, Usage> {
    let name = match default {
        Some(d) => o.take("draft").unwrap_or_else(|| d.into()),
        None => o.required("draft")?,
    };
    Draft::parse(&name).map_err(|e| Usage(format!("{}: {e}", o.command)))
}

/// A whole number within a range the lab declares.
pub(super) fn ranged(o: &mut Opts, range: &Range, default: Option<usize>) -> Result<usize, Usage> {
    let n: usize = o.number(range.name, default)?;
    range.check(n as f64)?;
    Ok(n)
}

fn gamma(o: &mut Opts) -> Result<usize, Usage> {
    ranged(o, &GAMMA, None)
}

pub(super) fn prompts(o: &mut Opts, default: usize) -> Result<usize, Usage> {
    ranged(o, &PROMPTS, Some(default))
}

/// The prompts of `n` held-out worlds.
pub(super) fn prompt_tokens(n: usize) -> Vec<Vec<u32>> {
    held_out(n).iter().map(|w| w.prompt()).collect()
}

/// A tree configuration within the LikesWorld budget.
fn widths(o: &mut Opts) -> Result<Vec<usize>, Usage> {
    Ok(tree_widths(&o.required("config")?)?)
}

pub(super) fn value(report: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(report).expect("reports serialise")
}

pub(super) fn no_progress() -> impl FnMut(usize, usize) {
    |_, _| {}
}

fn kinds_row(by_kind: &[KindAlpha]) -> (String, String) {
    row(
        "α by kind of the output token",
        by_kind
            .iter()
            .map(|k| format!("{:?} {:.2} ({})", k.kind, k.alpha, k.tested))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

fn acceptance(o: &mut Opts) -> Result<Report, Usage> {
    let n = prompts(o, 200)?;
    let m = models(o)?;
    let rows = read_sync(acceptance_by_kind(&m, n, &mut no_progress()))?;
    let mut table = vec![row(
        "next token is",
        "positions   β A    β B    argmax A  argmax B",
    )];
    for r in &rows {
        table.push(row(
            &format!("{:?}", r.kind),
            format!(
                "{:>9}  {:.3}  {:.3}    {:.3}     {:.3}",
                r.positions, r.beta[0], r.beta[1], r.greedy[0], r.greedy[1]
            ),
        ));
    }
    Ok(Report {
        json: serde_json::json!({"worlds": n, "backend": m.backend.name(), "kinds": value(&rows)}),
        rows: table,
    })
}

fn greedy_report(r: &ex::GreedyReport) -> Vec<(String, String)> {
    let mut rows = vec![
        row("method", &r.method),
        row(
            "identical to the target's greedy output",
            format!("{}/{}", r.identical, r.prompts),
        ),
        row(
            "tokens / target calls",
            format!(
                "{} / {} = {:.3} per call (target alone: {} calls)",
                r.tokens, r.target_calls, r.tokens_per_call, r.reference_calls
            ),
        ),
        row(
            "verified nodes per call",
            format!("{:.2}", r.verified_nodes_per_call),
        ),
        row("measured α", format!("{:.3}", r.alpha)),
    ];
    if let Some(f) = r.formula_tokens_per_call {
        rows.push(row(
            "i.i.d. formula E(α, γ)",
            format!("{f:.3} (measured {:.3})", r.tokens_per_call),
        ));
    }
    rows.push(kinds_row(&r.by_kind));
    rows
}

fn run_greedy(o: &mut Opts, method: Method, n: usize) -> Result<Report, Usage> {
    let m = models(o)?;
    let prompts = prompt_tokens(n);
    let clock = native_clock();
    let reference = read_sync(target_greedy(&m, &prompts, &clock, &mut no_progress()))?;
    let r = read_sync(ex::greedy(
        &m,
        method,
        &prompts,
        &reference,
        Lang::En,
        &clock,
        &mut no_progress(),
    ))?;
    Ok(Report {
        rows: greedy_report(&r),
        json: value(&r),
    })
}

/// One γ (the page sweeps several). Greedy decoding is deterministic, so `--seed` is accepted,
/// as the contract says, and changes nothing.
fn greedy(o: &mut Opts) -> Result<Report, Usage> {
    let (d, g, n) = (draft(o, None)?, gamma(o)?, prompts(o, 200)?);
    let _deterministic: u64 = o.number("seed", Some(0))?;
    let chain = Chain {
        draft: d,
        gamma: g as u32,
        prompts: n,
    };
    run_greedy(o, chain.method(g), n)
}

fn tree(o: &mut Opts) -> Result<Report, Usage> {
    let (w, d, n) = (widths(o)?, draft(o, Some("b"))?, prompts(o, 100)?);
    let method = Method::Expand {
        draft: d.index(),
        widths: w,
        children: Children::TopK,
        rule: TreeRule::Greedy,
    };
    run_greedy(o, method, n)
}

fn sample(o: &mut Opts) -> Result<Report, Usage> {
    let (d, g, n) = (draft(o, None)?, gamma(o)?, prompts(o, 200)?);
    let repeats = ranged(o, &REPEATS, Some(3))?;
    let seed: u64 = o.number("seed", Some(0))?;
    let variant = Variant::parse(&o.take("variant").unwrap_or_else(|| "correct".into()))?;
    let m = models(o)?;
    let s = specdec::lab::params::Sampling {
        draft: d,
        gamma: g as u32,
        prompts: n,
        repeats,
        seed,
        variant,
    };
    let method = s.method();
    let prompts = sampling_prompts(n);
    let clock = native_clock();
    let r = read_sync(ex::sample(
        &m,
        method,
        variant,
        &prompts,
        repeats,
        seed,
        Lang::En,
        &clock,
        &mut no_progress(),
    ))?;
    let verdict = if r.p_value < 0.01 {
        "differs from the target's (p < 0.01)"
    } else {
        "consistent with the target's"
    };
    let stats = |s: &OutputStats| {
        format!(
            "{} sequences, mean length {:.2}, answers right {:.1}% of {}, mean ln p {:.3}",
            s.sequences,
            s.mean_length,
            100.0 * s.answer_accuracy,
            s.answers,
            s.mean_log_p
        )
    };
    Ok(Report {
        rows: vec![
            row("method", &r.method),
            row(
                "tokens per target call",
                format!("{:.3}", r.tokens_per_call),
            ),
            row("measured α", format!("{:.3}", r.alpha)),
            row(
                "calibration test",
                format!(
                    "χ² {:.2} ({} df), p = {:.3e}: output {verdict}",
                    r.chi_square, r.df, r.p_value
                ),
            ),
            row(
                "same test on the target's own samples",
                format!("p = {:.3}", r.target_p_value),
            ),
            row("speculative output", stats(&r.speculative)),
            row("target's own sampling", stats(&r.target)),
            kinds_row(&r.by_kind),
        ],
        json: value(&r),
    })
}

fn stochastic(o: &mut Opts) -> Result<Report, Usage> {
    let w = widths(o)?;
    let rule = Stochastic::parse(&o.required("verify")?).map_err(|e| {
        Usage(format!(
            "{}: {e} (greedy trees: likesworld tree)",
            o.command
        ))
    })?;
    let children = Children::parse(
        &o.take("children")
            .unwrap_or_else(|| "without-replacement".into()),
    )?;
    let n = prompts(o, 100)?;
    let seed: u64 = o.number("seed", Some(0))?;
    let m = models(o)?;
    let prompts = sampling_prompts(n);
    let clock = native_clock();
    let r = read_sync(ex::stochastic(
        &m,
        &w,
        children,
        rule,
        &prompts,
        seed,
        Lang::En,
        &clock,
        &mut no_progress(),
    ))?;
    let mut rows = vec![
        row("method", &r.method),
        row(
            "tokens per target call",
            format!("{:.3}", r.tokens_per_call),
        ),
        row(
            "drafted tokens accepted per call",
            format!("{:.3}", r.accepted_per_call),
        ),
        row(
            "verified nodes per call",
            format!("{:.2}", r.verified_nodes_per_call),
        ),
        row("calibration test p-value", format!("{:.3e}", r.p_value)),
    ];
    if let Some(d) = r.distortion {
        rows.push(row(
            "exact one-step TV to the target (top-k)",
            format!("{d:.4}"),
        ));
    }
    Ok(Report {
        rows,
        json: value(&r),
    })
}

/// `likesworld widen-check --width R`: the widened target against the trained one on held-out
/// worlds (teacher-forced logits and argmax).
fn widen_check(o: &mut Opts) -> Result<Report, Usage> {
    let r = width(o, "width")?;
    let n = prompts(o, 64)?;
    let m = models(o)?;
    let wide = read_sync(m.with_target_width(r))?;
    let seqs: Vec<Vec<u32>> = held_out(n).iter().map(|w| w.tokens()).collect();
    let a = read_sync(widen::agreement(&m.target, &wide.target, &seqs, &m.device))?;
    let params = burn::module::Module::num_params(&wide.target);
    let bytes = specdec::model::measure::weight_bytes(&wide.target);
    Ok(Report {
        rows: vec![
            row(
                "target widened",
                format!(
                    "×{r} on {}: {params} parameters, {:.1} MB read per step",
                    m.backend.name(),
                    bytes as f64 / 1e6
                ),
            ),
            row(
                "largest |logit difference|",
                format!(
                    "{:.2e} over {} positions of {n} held-out worlds",
                    a.max_abs_logit_diff, a.positions
                ),
            ),
            row("same argmax", format!("{:.2}%", 100.0 * a.argmax_agreement)),
        ],
        json: serde_json::json!({"width": r, "params": params, "weight_bytes": bytes,
            "max_abs_logit_diff": a.max_abs_logit_diff, "argmax_agreement": a.argmax_agreement,
            "positions": a.positions, "backend": m.backend.name()}),
    })
}

/// `decode-bench`: experiments 1–5 at the lecture's sizes, each timed as one call of the page's
/// `decoding_view` (the same list `tests/bench.mjs` times in the browser).
pub fn bench(o: &mut Opts) -> Result<Report, Usage> {
    use specdec::i18n::Lang;
    use specdec::lab::params::bench_suite;
    use specdec::model::device::Backend;
    use specdec::views::decoding::decoding_view;
    let backends = match o.take("backend") {
        Some(b) => vec![Backend::parse(&b)?],
        None => vec![Backend::Flex, Backend::Ndarray],
    };
    // A slow backend (wgpu on a software Vulkan) runs a fraction of the prompts, as the page's
    // bench does for WebGPU on SwiftShader.
    let divide = o.count("divide", Some(1), 100, "1 to 100")?;
    let clock = native_clock();
    let mut rows = Vec::new();
    let mut out = serde_json::Map::new();
    for backend in backends {
        let m = read_sync(Models::load(backend))?;
        let mut times = serde_json::Map::new();
        let mut total = 0.0;
        for (name, mut experiment) in bench_suite() {
            let name = match experiment.prompts_mut() {
                Some(n) if divide > 1 => {
                    *n = n.div_ceil(divide);
                    format!("{name} (÷{divide}: {n} prompts)")
                }
                _ => name.to_string(),
            };
            let t0 = clock();
            let mut quiet = no_progress();
            read_sync(decoding_view(&experiment, Lang::En, &m, &clock, &mut quiet))?;
            let s = (clock() - t0) / 1e6;
            total += s;
            rows.push(row(
                &format!("{} {name}", backend.name()),
                format!("{s:.2} s"),
            ));
            times.insert(name, s.into());
        }
        rows.push(row(
            &format!("{} total, experiments 1–5", backend.name()),
            match divide {
                1 => format!("{total:.2} s   (goal < 10 s)"),
                _ => format!("{total:.2} s"),
            },
        ));
        times.insert("total".into(), total.into());
        out.insert(backend.name().into(), times.into());
        out.insert("prompts_divided_by".into(), divide.into());
    }
    Ok(Report {
        json: out.into(),
        rows,
    })
}

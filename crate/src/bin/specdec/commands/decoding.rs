//! `likesworld acceptance|greedy|sample|tree|stochastic`, `decode-bench`: speculative decoding
//! with the LikesWorld target and drafts (lecture §3–§4, demos 03.1–03.3 and 04.3–04.5).
//! `acceptance`, `greedy`, `sample` and `tree` read their options into one `specdec::lab`
//! experiment and run it as the page does (`options::run`); `stochastic` calls its `lab` function
//! directly (the page's experiment sweeps all three verifications, the CLI reports the one asked
//! for); `decode-bench` times the page's `decoding_view` on the benchmark's suite. Each
//! prints its report.

use super::options::{draft, models, models_with_both_drafts, prompts, run, value};
use crate::opts::{row, Opts, Report, Usage};
use burn::tensor::read_sync;
use specdec::clock::native_clock;
use specdec::error::Named;
use specdec::i18n::Lang;
use specdec::lab::acceptance::KindAlpha;
use specdec::lab::decoding::{self as ex, OutputStats};
use specdec::lab::experiment::Outcome;
use specdec::lab::params::{
    tree_widths, Beside, Chain, Experiment, Sampling, Stochastic, Tree, Worlds, GAMMA, REPEATS,
};
use specdec::lab::Lab;
use specdec::likesworld::sampling_prompts;
use specdec::model::Models;
use specdec::sampling::multi::Children;
use specdec::sampling::speculative::Variant;

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

pub fn acceptance(o: &mut Opts) -> Result<Report, Usage> {
    let n = prompts(o, 200)?;
    let m = models_with_both_drafts(o, "acceptance by kind compares drafts A and B")?;
    let Outcome::Acceptance(rows) = run(o, &Experiment::Acceptance(Worlds { prompts: n }), &m)?
    else {
        unreachable!("the acceptance experiment reports acceptance by kind")
    };
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

/// A greedy experiment's one report (the CLI asks for nothing beside its own γ or tree).
fn greedy_run(o: &mut Opts, experiment: Experiment) -> Result<Report, Usage> {
    let m = models(o)?;
    let r = match run(o, &experiment, &m)? {
        Outcome::Greedy(mut reports) => reports.pop().expect("one γ").1,
        Outcome::Tree(mut reports) => reports.pop().expect("one tree"),
        _ => unreachable!("a greedy experiment reports greedy runs"),
    };
    Ok(Report {
        rows: greedy_report(&r),
        json: value(&r),
    })
}

/// One γ (the page sweeps several). Greedy decoding is deterministic, so `--seed` is accepted,
/// as the contract says, and changes nothing.
pub fn greedy(o: &mut Opts) -> Result<Report, Usage> {
    let (d, g, n) = (draft(o, None)?, o.count(&GAMMA, None)?, prompts(o, 200)?);
    let _deterministic: u64 = o.number("seed", Some(0))?;
    let chain = Chain {
        draft: d,
        gamma: g as u32,
        prompts: n,
        beside: Beside::Nothing,
    };
    greedy_run(o, Experiment::Greedy(chain))
}

/// One greedy tree of `--config` (the page adds the lecture's).
pub fn tree(o: &mut Opts) -> Result<Report, Usage> {
    let config = o.required("config")?;
    tree_widths(&config)?;
    let (d, n) = (draft(o, Some("b"))?, prompts(o, 100)?);
    let tree = Tree {
        draft: d,
        config,
        prompts: n,
        beside: Beside::Nothing,
    };
    greedy_run(o, Experiment::Tree(tree))
}

pub fn sample(o: &mut Opts) -> Result<Report, Usage> {
    let (d, g, n) = (draft(o, None)?, o.count(&GAMMA, None)?, prompts(o, 200)?);
    let repeats = o.count(&REPEATS, Some(3))?;
    let seed: u64 = o.number("seed", Some(0))?;
    let variant = Variant::parse(&o.take("variant").unwrap_or_else(|| "correct".into()))?;
    let m = models(o)?;
    let s = Sampling {
        draft: d,
        gamma: g as u32,
        prompts: n,
        repeats,
        seed,
        variant,
    };
    let Outcome::Sample(r) = run(o, &Experiment::Sample(s), &m)? else {
        unreachable!("a sampling experiment reports its sampling")
    };
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

pub fn stochastic(o: &mut Opts) -> Result<Report, Usage> {
    let w = tree_widths(&o.required("config")?)?;
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
    let lab = Lab::new(&m, Lang::En, &clock);
    let quiet = &mut |_, _| {};
    let r = read_sync(ex::stochastic(
        lab,
        &specdec::decode::Shape::Widths(w),
        children,
        rule,
        &prompts,
        seed,
        quiet,
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

/// How many times fewer prompts a slow backend's benchmark decodes.
const DIVIDE: specdec::error::Range = specdec::error::Range::new("divide", 1.0, 100.0);

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
    let divide = o.count(&DIVIDE, Some(1))?;
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
            let mut quiet = |_, _| {};
            read_sync(decoding_view(
                &experiment,
                Lang::En,
                None,
                &m,
                &clock,
                &mut quiet,
            ))?;
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

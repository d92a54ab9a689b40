//! `likesworld speedup`: speculative decoding on the wall clock (demo 04.6, lecture §1.2, §2.5).
//! One γ measures one proposer — a chain of draft A or B, a static tree (`--config`), or a
//! drafter without a model (`--drafter`) — against the target alone; a list of γ (`--gamma
//! 1,2,3,4,6`) measures each and sets the best measured γ beside the formula's optimum (demo 5,
//! answered by measurement); a list of batches (`--batch 1,2,4,8,16,32`) measures one chain or
//! tree at each batch beside the published serving figures (speculation under load). All print
//! the same numbers the page shows.

use super::options::{draft, drafts_row, prompts, run, timed_models, value};
use crate::opts::{row, Opts, Report, Usage};
use specdec::error::Named;
use specdec::i18n::Lang;
use specdec::lab::experiment::Outcome;
use specdec::lab::load::LoadReport;
use specdec::lab::params::{
    parse_batches, parse_gammas, Experiment, Load, Proposing, Speedup, Sweep, BATCH, GAMMA,
};
use specdec::lab::speedup::SpeedupReport;
use specdec::likesworld::VOCAB;
use specdec::model::widen;
use specdec::views::load::caption;

/// `--draft a|b --gamma G` (a chain), `--config <…>` (a greedy tree of that draft) or
/// `--drafter prompt-lookup|suffix|jacobi|lookahead` (γ tokens a step, no draft model);
/// `--gamma 1,2,4` sweeps γ; `--batch B` prompts decoded together (`--batch 1,2,4` sweeps the
/// batch), on the target widened `--target-width`×.
pub fn speedup(o: &mut Opts) -> Result<Report, Usage> {
    let config = o.take("config");
    let shape = match (o.take("drafter"), &config) {
        (Some(_), Some(_)) => {
            return Err(Usage(format!(
                "{}: --drafter and --config exclude each other (a drafter without a model grows its own tree)",
                o.command
            )));
        }
        (Some(name), None) => free_shape(o, &name)?,
        (None, Some(_)) => Proposing::Tree,
        (None, None) => Proposing::Chain,
    };
    let listed = |o: &Opts, key| o.peek(key).is_some_and(|t| t.contains([',', '，']));
    if listed(o, "gamma") && listed(o, "batch") {
        return Err(Usage(format!(
            "{}: --gamma and --batch are both lists: sweep γ or the batch, not both at once",
            o.command
        )));
    }
    // A list of batches is a sweep over the batch (read first, as a list of γ is below).
    let batches = if listed(o, "batch") {
        let t = o.take("batch").expect("peeked");
        Some(parse_batches(&t).map(|_| t)?)
    } else {
        None
    };
    // A list of γ is a sweep (read first, so that a bad list is named before anything else).
    let list = match o.peek("gamma") {
        Some(t) if t.contains([',', '，']) => {
            let t = o.take("gamma").expect("peeked");
            Some(parse_gammas(&t).map(|_| t)?)
        }
        _ => None,
    };
    // One γ (a chain names it; a tree and a drafter without a model default to 4), read before
    // the draft so that a bad γ is the error named.
    let g = if list.is_some() {
        4
    } else if batches.is_some() {
        // EAGLE-3's SGLang figures are for a chain of 3.
        o.count(&GAMMA, Some(3))?
    } else {
        o.count(&GAMMA, (shape != Proposing::Chain).then_some(4))?
    };
    // A draft model is named for a chain; a tree defaults to B; a drafter without a model has
    // none, so naming one is a mistake.
    if shape.free().is_some() && o.peek("draft").is_some() {
        return Err(Usage(format!(
            "{}: --draft names a draft model, and --drafter {} drafts without one",
            o.command,
            shape.name()
        )));
    }
    let d = draft(
        o,
        (shape != Proposing::Chain || list.is_some() || batches.is_some()).then_some("b"),
    )?;
    if let Some(batches) = batches {
        let spec = Load {
            draft: d,
            gamma: g as u32,
            batches,
            prompts: prompts(o, Load::default().prompts)?,
            shape,
            config: config.unwrap_or_default(),
        };
        spec.check()?;
        return load(o, &spec);
    }
    let n = prompts(o, 20)?;
    let batch = o.count(&BATCH, Some(1))?;
    if let Some(gammas) = list {
        if config.is_some() {
            return Err(Usage(format!(
                "{}: a static tree (--config) has no γ to sweep: give one --gamma, or sweep a chain or a --drafter",
                o.command
            )));
        }
        let spec = Sweep {
            draft: d,
            gammas,
            prompts: n,
            batch,
            shape,
        };
        spec.check()?;
        return sweep(o, &spec);
    }
    let spec = Speedup {
        draft: d,
        gamma: g as u32,
        prompts: n,
        batch,
        shape,
        config: config.unwrap_or_default(),
    };
    spec.check()?;
    let m = timed_models(o, spec.shape)?;
    let Outcome::Speedup(r) = run(o, &Experiment::Speedup(spec), &m)? else {
        unreachable!("a speedup experiment reports its speedup")
    };
    let mut json = value(&r);
    if let Some(obj) = json.as_object_mut() {
        // The lanes are for the page; the CLI prints the numbers.
        obj.remove("plain_lane");
        obj.remove("speculative_lane");
    }
    Ok(Report {
        rows: rows(&r),
        json,
    })
}

/// `--drafter NAME`: one of the drafters without a model (not `chain` or `tree`, which are
/// chosen by `--gamma` and `--config`).
fn free_shape(o: &Opts, name: &str) -> Result<Proposing, Usage> {
    match Proposing::parse(name) {
        Ok(s) if s.free().is_some() => Ok(s),
        _ => Err(Usage(format!(
            "{}: unknown --drafter {name:?} (known: prompt-lookup, suffix, jacobi, lookahead)",
            o.command
        ))),
    }
}

/// The report of one γ, as rows.
fn rows(r: &SpeedupReport) -> Vec<(String, String)> {
    let proposal = if r.shape.free().is_some() {
        "look-up"
    } else {
        "draft call"
    };
    let formula = match r.predicted_speedup {
        Some(s) => format!("{s:.3}×"),
        None => "— (the formula is for chains)".into(),
    };
    let mut rows = vec![
        row(
            "method",
            format!(
                "{} on {}, target ×{} ({} parameters), batch {}",
                r.method,
                r.backend,
                r.target_width,
                widen::params(VOCAB, r.target_width),
                r.batch
            ),
        ),
        row("measured α", format!("{:.3}", r.alpha)),
        row(
            &format!("measured c = {proposal} / target call"),
            format!(
                "{:.3} ({:.0} µs / {:.0} µs)",
                r.c, r.draft_call_us, r.target_call_us
            ),
        ),
        row(
            "verification T(n)/T(1)",
            format!(
                "{:.3} ({:.0} µs a verify call; {:.2} {proposal}s a step)",
                r.verify_over_target, r.verify_call_us, r.draft_calls_per_step
            ),
        ),
        row(
            "tokens per target call τ",
            format!("{:.3}", r.tokens_per_call),
        ),
        row("lecture's formula E(α,γ)/(γc+1)", formula),
        row(
            "on the measured curve",
            format!("{:.3}×", r.predicted_speedup_curve),
        ),
        row(
            "at this device's limit",
            r.limit_speedup
                .map_or("— (batch > 1 or offloaded)".into(), |l| {
                    format!("{l:.3}×")
                }),
        ),
        row(
            "measured speedup",
            format!(
                "{:.3}× ({}; {:.1} ms plain, {:.1} ms speculative)",
                r.measured_speedup,
                spread(r),
                r.plain_us / 1e3,
                r.speculative_us / 1e3
            ),
        ),
    ];
    rows.extend(crossed(r));
    rows
}

/// A measured speedup's spread over its timed groups of `batch` prompts: "IQR 0.150 over 10
/// groups", or that one group has none (an IQR of 0 would claim a steadiness).
fn spread(r: &SpeedupReport) -> String {
    match r.groups() {
        0 | 1 => "one group: no spread".into(),
        groups => format!("IQR {:.3} over {groups} groups", r.measured_speedup_iqr),
    }
}

/// The row that says what crossed before every target call, when the weights were offloaded
/// (timed after the first run of a sweep; every run's calls paid it).
fn crossed(r: &SpeedupReport) -> Vec<(String, String)> {
    let crossing = r.transfer.as_ref();
    let crossing = crossing.map(|t| row("offloaded weights", t.summary()));
    let drafts = drafts_row(r.drafts_on, r.backend);
    crossing.into_iter().chain(drafts).collect()
}

/// Every γ of the sweep: a line each, then the best measured γ beside the formula's.
fn sweep(o: &mut Opts, spec: &Sweep) -> Result<Report, Usage> {
    let m = timed_models(o, spec.shape)?;
    let Outcome::Sweep(r) = run(o, &Experiment::Sweep(spec.clone()), &m)? else {
        unreachable!("a sweep reports its sweep")
    };
    let mut rows = vec![row(
        "method",
        format!(
            "{}, γ swept, on {}, target ×{}, batch {}",
            r.method, r.rows[0].backend, r.target_width, r.batch
        ),
    )];
    for (i, x) in r.rows.iter().enumerate() {
        rows.push(row(
            &format!("γ {}", x.gamma),
            format!(
                "measured {:.3}× ({}), on the curve {:.3}×, limit {}, formula (mean α, c) {}; α {:.3}, c {:.3}, T(n)/T(1) {:.2}, τ {:.2}",
                x.measured_speedup,
                spread(x),
                x.predicted_speedup_curve,
                x.limit_speedup.map_or("—".into(), |l| format!("{l:.3}×")),
                r.formula_at
                    .get(i)
                    .map_or("—".into(), |s| format!("{s:.3}×")),
                x.alpha,
                x.c,
                x.verify_over_target,
                x.tokens_per_call
            ),
        ));
    }
    rows.extend(crossed(&r.rows[0]));
    rows.push(row(
        "best measured γ",
        format!("γ {} at {:.3}×", r.best_gamma, r.best_speedup),
    ));
    rows.push(row(
        "best on the measured curve",
        format!("γ {} at {:.3}×", r.curve_gamma, r.curve_speedup),
    ));
    rows.push(row(
        "the formula's optimum (mean α, c)",
        match (r.formula_gamma, r.formula_speedup) {
            (Some(0), _) => format!(
                "none pays: with α {:.3} and c {:.3}, plain decoding (γ 0) is best",
                r.alpha, r.c
            ),
            (Some(g), Some(s)) => format!("γ {g} at {s:.3}× (α {:.3}, c {:.3})", r.alpha, r.c),
            _ => "— (the formula is for chains)".into(),
        },
    ));
    if let Some(d) = &r.device_choice {
        let swept = r.rows.iter().any(|x| x.gamma as usize == d.gamma);
        rows.push(row(
            "this device's choice (T(k), c, vector)",
            match d.gamma {
                0 => format!(
                    "plain decoding (γ 0): no γ is predicted to pay, with c {:.3} and T(2)/T(1) {:.2}",
                    d.c,
                    d.times_us[1] / d.times_us[0]
                ),
                g => format!(
                    "γ {g}{} at {:.3}× predicted (E {:.2}, c {:.3}, T(γ+1)/T(1) {:.2})",
                    if swept { "" } else { ", not among those swept" },
                    d.predicted_speedup,
                    d.expected_tokens,
                    d.c,
                    d.times_us[g] / d.times_us[0]
                ),
            },
        ));
    }
    Ok(Report {
        rows,
        json: value(&r),
    })
}

/// Every batch of the sweep over the batch: a line each, the published serving figures, and what
/// the measured rows say beside them.
fn load(o: &mut Opts, spec: &Load) -> Result<Report, Usage> {
    let m = timed_models(o, spec.shape)?;
    let Outcome::Load(r) = run(o, &Experiment::Load(spec.clone()), &m)? else {
        unreachable!("a sweep over the batch reports its rows")
    };
    Ok(Report {
        rows: load_rows(&r),
        json: {
            let mut json = value(&r);
            json["caption"] = caption(&r, Lang::En).into();
            json
        },
    })
}

fn load_rows(r: &LoadReport) -> Vec<(String, String)> {
    let mut rows = vec![row(
        "method",
        format!(
            "{}, batch swept, on {}, target ×{} ({} parameters)",
            r.method,
            r.backend,
            r.target_width,
            widen::params(VOCAB, r.target_width)
        ),
    )];
    for s in &r.rows {
        rows.push(row(
            &format!("batch {}", s.batch),
            format!(
                "plain {:.1} µs/token, speculative {:.1} µs/token: measured {:.3}× ({}); on the measured curve {:.3}×, formula {}; τ {:.2} ({:.2} accepted a step), α {:.3}, c {:.3}, T(n)/T(1) {:.2}; {} prompts",
                s.plain_us_per_token,
                s.speculative_us_per_token,
                s.measured_speedup,
                spread(s),
                s.predicted_speedup_curve,
                s.predicted_speedup.map_or("—".into(), |f| format!("{f:.3}×")),
                s.tokens_per_call,
                s.accepted_per_call,
                s.alpha,
                s.c,
                s.verify_over_target,
                s.prompts
            ),
        ));
    }
    for p in r.published {
        let points: Vec<String> = p
            .points
            .iter()
            .map(|&(b, lo, hi)| match lo == hi {
                true => format!("{lo}× at batch {b}"),
                false => format!("≈ {lo}–{hi}× at batch {b}"),
            })
            .collect();
        rows.push(row(&p.label(Lang::En), points.join(", ")));
    }
    rows.extend(crossed(&r.rows[0]));
    rows.push(row("reading", caption(r, Lang::En)));
    rows
}

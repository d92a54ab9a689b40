//! `toy-exact`, `monte-carlo`, `sample-dist`, `multi-draft`: the verification rules on the toy LM
//! and on explicit distributions (lecture §2.3, §2.6, §4.5).

use crate::opts::{row, Opts, Report, Usage};
use serde_json::json;
use specdec::error::Named;
use specdec::sampling::multi::{verify_exact, verify_given, Mode};
use specdec::sampling::rule::{single_position, Rule};
use specdec::sampling::speculative::Variant;
use specdec::sampling::typical::Typical;
use specdec::sampling::{parse_dist, tv};
use specdec::toy::enumerate::{exact_distribution, Strategy};
use specdec::toy::{ToyConfig, ToyLm};
use specdec::views::exactness::{monte_carlo_view, ExactnessParams};
use specdec::views::multidraft::{parse_drafts, parse_given};

/// γ of the toy LM's exact enumeration.
const TOY_GAMMA: specdec::error::Range =
    specdec::error::Range::new("gamma", 0.0, 8.0).shown_as("γ");

fn toy(o: &mut Opts) -> Result<ToyLm, Usage> {
    let seed = o.number("seed", Some(0u64))?;
    Ok(ToyLm::new(
        &ToyConfig {
            seed,
            ..ToyConfig::default()
        }
        .validate()?,
    ))
}

pub fn cmd_toy_exact(o: &mut Opts) -> Result<Report, Usage> {
    let gamma: u32 = o.number("gamma", None)?;
    TOY_GAMMA.check(f64::from(gamma))?;
    let variant = rule(o, "variant")?;
    let lm = toy(o)?;
    let t = tv(
        &exact_distribution(
            &lm,
            Strategy::Speculative {
                gamma,
                rule: variant,
            },
        ),
        &exact_distribution(&lm, Strategy::Target),
    );
    let mut json = json!({"tv": t});
    if let Rule::Typical(t) = variant {
        json["epsilon"] = json!(t.epsilon);
        json["delta"] = json!(t.delta);
    }
    Ok(Report {
        json,
        rows: vec![
            row("variant", variant.label(specdec::i18n::Lang::En)),
            row("γ", gamma),
            row(
                "exact TV to the target (first 4 tokens)",
                format!("{t:.3e}"),
            ),
        ],
    })
}

/// The rule named by option `key`; `typical` reads `--epsilon` and `--delta` (Medusa's 0.09 and
/// 0.3 by default), which no other rule takes.
fn rule(o: &mut Opts, key: &str) -> Result<Rule, Usage> {
    let name = o.required(key)?;
    if name.trim() != "typical" {
        for k in ["epsilon", "delta"] {
            if o.take(k).is_some() {
                return Err(Usage(format!(
                    "--{k} is typical acceptance's threshold; --{key} {} does not take it",
                    name.trim()
                )));
            }
        }
    }
    let typical = Typical::new(
        o.number("epsilon", Some(Typical::MEDUSA.epsilon))?,
        o.number("delta", Some(Typical::MEDUSA.delta))?,
    )?;
    Ok(Rule::parse(&name, Some(typical))?)
}

pub fn cmd_monte_carlo(o: &mut Opts) -> Result<Report, Usage> {
    let params = ExactnessParams {
        gamma: o.number("gamma", None)?,
        variant: o.required("variant")?,
        runs: o.number("runs", Some(20_000))?,
        toy: ToyConfig {
            seed: o.number("seed", Some(0))?,
            ..ToyConfig::default()
        },
        ..ExactnessParams::default()
    };
    let v = monte_carlo_view(&params)?;
    Ok(Report {
        json: json!({"runs": v.runs, "tv": v.tv_sampler, "tv_two_seeds": v.tv_two_seeds, "noise_floor": v.floor}),
        rows: vec![
            row("runs", v.runs),
            row(
                &format!("TV({} samples, exact target)", v.variant),
                format!("{:.4}", v.tv_sampler),
            ),
            row(
                "TV(two seeds of the target)",
                format!("{:.4}", v.tv_two_seeds),
            ),
            row("expected 1/√n floor", format!("{:.4}", v.floor)),
        ],
    })
}

pub fn cmd_sample_dist(o: &mut Opts) -> Result<Report, Usage> {
    let p = parse_dist("p", &o.required("p")?)?;
    let q = parse_dist("q", &o.required("q")?)?;
    if p.len() != q.len() {
        return Err(Usage(format!(
            "sample-dist: p has {} entries but q has {}",
            p.len(),
            q.len()
        )));
    }
    let variant = rule(o, "rule")?;
    if variant == Variant::BonusFromDraft.into() {
        // One position has no bonus step, so this rule would look exact here (TV 0).
        return Err(Usage(
            "sample-dist: --rule bonus-from-draft changes only the bonus token after all γ drafts \
             pass, which a single position does not have; see it with toy-exact --variant \
             bonus-from-draft"
                .into(),
        ));
    }
    let pos = single_position(&p, &q, variant);
    Ok(Report {
        json: json!({"output": pos.output, "acceptance": pos.acceptance}),
        rows: vec![
            row("output", fmt_dist(&pos.output)),
            row("acceptance", format!("{:.4}", pos.acceptance)),
            row("TV to p", format!("{:.3e}", tv(&pos.output, &p))),
        ],
    })
}

pub fn cmd_multi_draft(o: &mut Opts) -> Result<Report, Usage> {
    let p = parse_dist("p", &o.required("p")?)?;
    let qs = parse_drafts(&o.required("drafts")?, p.len())?;
    let mode = Mode::parse(&o.required("mode")?)?;
    let given = parse_given(&o.take("given").unwrap_or_default(), &qs)?;
    let v = match &given {
        Some(xs) => {
            let cands: Vec<(usize, &[f64])> = xs
                .iter()
                .zip(&qs)
                .map(|(&x, q)| (x, q.as_slice()))
                .collect();
            verify_given(&p, &cands, mode)
        }
        None => verify_exact(&p, &qs, mode),
    };
    Ok(Report {
        json: json!({"acceptance": v.acceptance, "output": v.output}),
        rows: vec![
            row("acceptance", format!("{:.4}", v.acceptance)),
            row("output", fmt_dist(&v.output)),
        ],
    })
}

fn fmt_dist(d: &[f64]) -> String {
    d.iter()
        .map(|x| format!("{x:.4}"))
        .collect::<Vec<_>>()
        .join(" ")
}

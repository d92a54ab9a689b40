//! `theory`, `optimal-gamma`: the closed forms of lecture §2.5.

use crate::opts::{row, Opts, Report, Usage};
use serde_json::json;
use specdec::theory::{self, Params};

pub fn cmd_theory(o: &mut Opts) -> Result<Report, Usage> {
    let p = Params::new(
        o.number("alpha", None)?,
        o.number("gamma", None)?,
        o.number("c", Some(0.0))?,
        o.number("c-hat", Some(0.0))?,
    )?;
    let (e, s, ops) = (
        theory::expected_tokens(p.alpha, p.gamma),
        theory::speedup(p.alpha, p.gamma, p.c),
        theory::operations(p.alpha, p.gamma, p.c_hat),
    );
    Ok(Report {
        json: json!({"expected_tokens": e, "speedup": s, "operations": ops}),
        rows: vec![
            row("expected tokens per call", format!("{e:.4}")),
            row("speedup", format!("{s:.4}×")),
            row("operations", format!("{ops:.4}×")),
        ],
    })
}

pub fn cmd_optimal_gamma(o: &mut Opts) -> Result<Report, Usage> {
    let alpha = o.number("alpha", None)?;
    let c = o.number("c", None)?;
    let max = o.number("max-gamma", Some(64u32))?;
    Params::new(alpha, max, c, 0.0)?;
    let (g, s) = theory::optimal_gamma(alpha, c, max);
    let rising = theory::still_rising(alpha, g, c);
    let mut rows = vec![row("optimal γ", g), row("speedup", format!("{s:.4}×"))];
    if rising {
        rows.push(row(
            "note",
            format!("the speedup still rises at γ = {g}: no optimum up to --max-gamma {max}"),
        ));
    }
    Ok(Report {
        json: json!({"gamma": g, "speedup": s, "still_rising": rising}),
        rows,
    })
}

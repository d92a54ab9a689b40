//! `roofline`, `cost-ratio`, `heat-map`: the time model of lecture §1.2 and demos 1/4/5.

use crate::opts::{row, Opts, Report, Usage};
use serde_json::json;
use specdec::roofline::{self, Pair, Workload};
use specdec::theory::Params;
use specdec::views::roofline::{HEAT_BATCHES, HEAT_CONTEXTS};

pub fn cmd_roofline(o: &mut Opts) -> Result<Report, Usage> {
    let gpu = roofline::gpu(&o.required("gpu")?)?;
    let model = roofline::model(&o.required("model")?)?;
    let w = Workload::new(
        o.number("batch", None)?,
        o.number("context", None)?,
        o.number("k", None)?,
        o.number("overhead-ms", Some(roofline::DEFAULT_OVERHEAD_MS))?,
    )?;
    let s = roofline::step(&gpu, &model, &w);
    let bound = serde_json::to_value(s.bound).expect("an enum serialises");
    Ok(Report {
        json: json!({"time_ms": s.time_ms, "bound": bound, "intensity": s.intensity}),
        rows: vec![
            row("time per step", format!("{:.2} ms", s.time_ms)),
            row("bound", bound.as_str().unwrap_or_default()),
            row(
                "arithmetic intensity",
                format!("{:.1} FLOP/byte (knee {:.1})", s.intensity, gpu.knee()),
            ),
            row(
                "compute / memory",
                format!("{:.2} ms / {:.2} ms", s.compute_ms, s.memory_ms),
            ),
        ],
    })
}

fn pair(
    o: &mut Opts,
    draft_default: Option<&str>,
    target_default: Option<&str>,
) -> Result<Pair, Usage> {
    let take = |o: &mut Opts, name: &str, d: Option<&str>| match d {
        Some(d) => Ok(o.take(name).unwrap_or_else(|| d.to_string())),
        None => o.required(name),
    };
    let gpu = roofline::gpu(&take(o, "gpu", Some("a100-40gb"))?)?;
    let draft = roofline::model(&take(o, "draft", draft_default)?)?;
    let target = roofline::model(&take(o, "target", target_default)?)?;
    let overhead_ms = o.number("overhead-ms", Some(roofline::DEFAULT_OVERHEAD_MS))?;
    Workload::new(1, 0, 1, overhead_ms)?;
    Ok(Pair {
        gpu,
        draft,
        target,
        overhead_ms,
    })
}

pub fn cmd_cost_ratio(o: &mut Opts) -> Result<Report, Usage> {
    let pair = pair(o, None, None)?;
    let w = Workload::new(
        o.number("batch", Some(1))?,
        o.number("context", Some(512))?,
        1,
        pair.overhead_ms,
    )?;
    let c = pair.cost_ratio(w.batch, w.context);
    Ok(Report {
        json: json!({"c": c}),
        rows: vec![row("c = draft / target step time", format!("{c:.4}"))],
    })
}

pub fn cmd_heat_map(o: &mut Opts) -> Result<Report, Usage> {
    let pair = pair(o, Some("opt-125m"), Some("opt-13b"))?;
    let alpha: f64 = o.number("alpha", Some(0.8))?;
    Params::new(alpha, 1, 0.0, 0.0)?;
    let map = pair.heat_map(&HEAT_BATCHES, &HEAT_CONTEXTS, alpha);
    let mut rows = vec![row(
        "batch \\ context",
        HEAT_CONTEXTS.map(|l| format!("{l:>9}")).join(""),
    )];
    for (b, cells) in HEAT_BATCHES.iter().zip(&map) {
        let line: String = cells
            .iter()
            .map(|c| format!("{:>9}", format!("{}·{:.2}×", c.gamma, c.speedup)))
            .collect();
        rows.push(row(&b.to_string(), line));
    }
    Ok(Report {
        json: json!({"alpha": alpha, "batches": HEAT_BATCHES, "contexts": HEAT_CONTEXTS, "cells": map}),
        rows,
    })
}

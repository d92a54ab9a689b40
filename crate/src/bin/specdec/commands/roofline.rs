//! `roofline`, `cost-ratio`, `heat-map`: the time model of lecture §1.2 and demos 1/4/5, on one
//! GPU or deployed on many (`--tp`, `--pp`, `--micro-batches`, §1.1 and §4.6) or offloaded
//! (`--offload`).

use crate::opts::{row, Opts, Report, Usage};
use serde_json::json;
use specdec::roofline::{self, Deployment, Model, Pair, Workload, LECTURE_1_1};
use specdec::theory::Params;
use specdec::views::roofline::{HEAT_BATCHES, HEAT_CONTEXTS};

/// `--tp T --pp P --micro-batches M --offload`: how `model` is deployed (one GPU by default).
fn deployment(o: &mut Opts, model: &Model) -> Result<Deployment, Usage> {
    let tp = o.number("tp", Some(1))?;
    let pp = o.number("pp", Some(1))?;
    let micro = o.number("micro-batches", Some(1))?;
    let offload = o.flag("offload");
    Ok(Deployment::new(model, tp, pp, micro, offload)?)
}

/// One step: its time and roof; deployed, its communication and the GPUs' utilisation; with
/// `--draft`, the best γ at `--alpha` and its speedup. Batch, context and k default to §1.1's
/// configuration (batch 4, context 2048, one token).
pub fn cmd_roofline(o: &mut Opts) -> Result<Report, Usage> {
    let gpu = roofline::gpu(&o.required("gpu")?)?;
    let model = roofline::model(&o.required("model")?)?;
    let (b, l, k) = LECTURE_1_1;
    let w = Workload::new(
        o.number("batch", Some(b))?,
        o.number("context", Some(l))?,
        o.number("k", Some(k))?,
        o.number("overhead-ms", Some(roofline::DEFAULT_OVERHEAD_MS))?,
    )?;
    let d = deployment(o, &model)?;
    let draft = o.take("draft").map(|n| roofline::model(&n)).transpose()?;
    let alpha: f64 = o.number("alpha", Some(0.8))?;
    Params::new(alpha, 1, 0.0, 0.0)?;
    let one = roofline::step(&gpu, &model, &w);
    let s = roofline::step_on(&gpu, &model, &w, &d);
    let bound = serde_json::to_value(s.bound).expect("an enum serialises");
    let mut json = json!({
        "time_ms": s.time_ms, "step_ms": s.time_ms, "bound": bound, "intensity": one.intensity,
        "compute_ms": s.compute_ms, "memory_ms": s.memory_ms, "comm_ms": s.comm_ms,
        "transfer_ms": s.transfer_ms, "bubble": s.bubble, "gpus": s.gpus,
        "compute_utilisation": s.compute_utilisation,
        "bandwidth_utilisation": s.bandwidth_utilisation,
        "memory_per_gpu_gb": s.memory_per_gpu_gb, "fits": s.fits,
    });
    let mut rows = vec![
        row("time per step", format!("{:.2} ms", s.time_ms)),
        row("bound", bound.as_str().unwrap_or_default()),
        row(
            "arithmetic intensity",
            format!("{:.1} FLOP/byte (knee {:.1})", one.intensity, gpu.knee()),
        ),
        row(
            "compute / memory",
            format!("{:.2} ms / {:.2} ms", s.compute_ms, s.memory_ms),
        ),
    ];
    if d != Deployment::SINGLE {
        rows.extend([
            row(
                "deployment",
                format!(
                    "{} GPU{}: tp {} × pp {}, {} micro-batch{}{}",
                    s.gpus,
                    if s.gpus == 1 { "" } else { "s" },
                    d.tp,
                    d.pp,
                    d.micro_batches_used(w.batch),
                    if d.micro_batches_used(w.batch) == 1 {
                        ""
                    } else {
                        "es"
                    },
                    if d.offload { ", weights offloaded" } else { "" }
                ),
            ),
            row(
                "communication / transfer",
                format!("{:.2} ms / {:.2} ms", s.comm_ms, s.transfer_ms),
            ),
            row("pipeline bubble", format!("{:.1}%", s.bubble * 100.0)),
        ]);
    }
    rows.extend([
        row(
            "utilisation",
            format!(
                "compute {:.1}%, memory bandwidth {:.1}%",
                s.compute_utilisation * 100.0,
                s.bandwidth_utilisation * 100.0
            ),
        ),
        row(
            "memory per GPU",
            format!(
                "{:.1} GB of {} ({})",
                s.memory_per_gpu_gb,
                gpu.memory_gb,
                if s.fits { "fits" } else { "does not fit" }
            ),
        ),
    ]);
    if let Some(draft) = draft {
        let pair = Pair {
            deployment: d,
            ..Pair::single(gpu, draft, model, w.overhead_ms)
        };
        let cell = pair.optimal_gamma(w.batch, w.context, alpha, roofline::MAX_GAMMA);
        // A step that could not run has no best γ and no speedup (null in the JSON).
        json["gamma"] = json!(cell.best.map(|b| b.gamma));
        json["speedup"] = json!(cell.best.map(|b| b.speedup));
        rows.push(row(
            &format!("best γ at α = {alpha}"),
            match cell.best {
                Some(b) => format!("{} → {:.2}× ({})", b.gamma, b.speedup, draft.label),
                None => "— (the step could not run)".into(),
            },
        ));
    }
    Ok(Report { json, rows })
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
        deployment: deployment(o, &target)?,
        ..Pair::single(gpu, draft, target, overhead_ms)
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
            .map(|c| match c.best {
                Some(b) => format!("{:>9}", format!("{}·{:.2}×", b.gamma, b.speedup)),
                // The step could not run (out of the GPUs' memory): no γ, no speedup.
                None => format!("{:>9}", "—"),
            })
            .collect();
        rows.push(row(&b.to_string(), line));
    }
    Ok(Report {
        json: json!({"alpha": alpha, "batches": HEAT_BATCHES, "contexts": HEAT_CONTEXTS, "cells": map}),
        rows,
    })
}

//! The LikesWorld model commands: `train`, `likesworld accuracy`, `tree-attention`,
//! `model-bench`, `roofline-measure` and `likesworld widen-check` (native only).

use super::options::{backend, models_without_draft, offload, prompts, return_if_drafts_on, width};
use crate::opts::{row, Opts, Report, Usage};
use burn::module::Module;
use burn::tensor::read_sync;
use serde_json::json;
use specdec::error::{Named, Range};
use specdec::lab::params::{HEADS, PROMPTS};
use specdec::likesworld::{prompts as held_out, worlds, Split};
use specdec::model::bench::RUNS;
use specdec::model::device::Backend;
use specdec::model::eval::accuracy as answer_accuracy;
use specdec::model::medusa::MAX_HEADS;
use specdec::model::train::{
    parameters, train as run_training, train_hidden as train_hidden_run, Hidden, HiddenConfig,
    Point, TrainConfig, Trained,
};
use specdec::model::tree_attention::check;
use specdec::model::weights::HiddenKind;
use specdec::model::widen;
use specdec::model::{weights, ModelKind};
use specdec::tree::{parse_config, TokenTree, DEFAULT_NODE_BUDGET};
use std::io::Write;

/// Training steps and the batch of one step.
const STEPS: Range = Range::new("steps", 1.0, 1_000_000.0);
const TRAIN_BATCH: Range = Range::new("batch", 1.0, 4096.0);
/// The training-time test's rollout (1 would be plain EAGLE).
const ROLLOUT: Range = Range::new("rollout", 2.0, 6.0);
/// Held-out worlds an accuracy run scores.
const WORLDS: Range = Range::new("worlds", 1.0, 100_000.0);

/// A progress bar on stderr for a training run.
fn bar(p: &Point, total: usize) {
    if p.step % 10 != 0 && p.held_out.is_none() && p.step != total {
        return;
    }
    let width = 30;
    let done = p.step * width / total;
    let acc = p
        .held_out
        .map(|a| format!("  held-out answers {:.1}%", 100.0 * a.answer_accuracy))
        .unwrap_or_default();
    eprint!(
        "\r[{}{}] {}/{} loss {:.3}{acc}   ",
        "#".repeat(done),
        " ".repeat(width - done),
        p.step,
        total,
        p.loss
    );
    if p.held_out.is_some() || p.step == total {
        eprintln!();
    }
    let _ = std::io::stderr().flush();
}

/// Writes a run's loss curve (with its held-out accuracy where it was evaluated) beside its
/// weights at `weights`, as `<name>.loss.svg`; returns the path.
fn write_curve(
    name: &str,
    weights: &std::path::Path,
    curve: &[Point],
) -> Result<std::path::PathBuf, Usage> {
    let svg_path = weights.with_extension("loss.svg");
    let losses: Vec<(usize, f64)> = curve.iter().map(|p| (p.step, p.loss)).collect();
    let accs: Vec<(usize, f64)> = curve
        .iter()
        .filter_map(|p| p.held_out.map(|a| (p.step, a.answer_accuracy)))
        .collect();
    std::fs::write(
        &svg_path,
        specdec::views::training::loss_svg(name, &losses, &accs),
    )
    .map_err(|e| Usage(format!("train: cannot write {}: {e}", svg_path.display())))?;
    Ok(svg_path)
}

/// `train --model medusa|eagle|eagle-ttt`: a draft on the shipped target's features.
fn train_hidden(o: &mut Opts, kind: HiddenKind) -> Result<Report, Usage> {
    let hidden = match kind {
        HiddenKind::Medusa => Hidden::Medusa {
            heads: o.count(&HEADS, Some(MAX_HEADS))?,
        },
        HiddenKind::Eagle => Hidden::Eagle { rollout: 1 },
        HiddenKind::EagleTtt => Hidden::Eagle {
            rollout: o.count(&ROLLOUT, Some(3))?,
        },
    };
    let mut config = HiddenConfig::new(hidden, o.number("seed", None)?);
    config.steps = o.count(&STEPS, Some(config.steps))?;
    config.batch = o.count(&TRAIN_BATCH, Some(config.batch))?;
    let device = backend(o)?.device_blocking()?;
    // Every option is read: a mistyped one fails now, before training overwrites the weights.
    o.finish()?;
    let target = weights::load(ModelKind::Target, &device)?;
    let started = std::time::Instant::now();
    let total = config.steps;
    let (trained, curve) = train_hidden_run(&config, &target, &device, |p| bar(p, total));
    let path = weights::asset_path(kind);
    let params = match &trained {
        Trained::Medusa(m) => {
            weights::save(m, &path)?;
            m.num_params()
        }
        Trained::Eagle(e) => {
            weights::save(e.as_ref(), &path)?;
            e.num_params()
        }
    };
    let svg_path = write_curve(kind.name(), &path, &curve)?;
    let secs = started.elapsed().as_secs_f64();
    let last = curve.last().map(|p| p.loss);
    Ok(Report {
        json: json!({"model": kind.name(), "parameters": params, "steps": total, "seconds": secs,
            "final_loss": last, "weights": path.display().to_string(),
            "loss_curve": svg_path.display().to_string()}),
        rows: vec![
            row("model", format!("{} ({params} parameters)", kind.name())),
            row("steps", format!("{total} in {secs:.0} s")),
            row("final loss", format!("{:.4}", last.unwrap_or(f64::NAN))),
            row("weights", path.display()),
            row("loss curve", svg_path.display()),
        ],
    })
}

pub fn train(o: &mut Opts) -> Result<Report, Usage> {
    let name = o.required("model")?;
    if let Some(kind) = HiddenKind::ALL.into_iter().find(|k| k.name() == name) {
        return train_hidden(o, kind);
    }
    let kind = ModelKind::parse(&name).map_err(|_| {
        Usage(format!(
            "train: unknown model {name:?} (known: target, draft-a, draft-b, medusa, eagle, eagle-ttt, draft, pool)"
        ))
    })?;
    let mut config = TrainConfig::new(kind, o.number("seed", None)?);
    config.steps = o.count(&STEPS, Some(config.steps))?;
    config.batch = o.count(&TRAIN_BATCH, Some(config.batch))?;
    let device = backend(o)?.device_blocking()?;
    o.finish()?; // as above: before the weights are overwritten
    let started = std::time::Instant::now();
    let total = config.steps;
    let (model, curve) = run_training(&config, &device, |p| bar(p, total));
    let path = weights::asset_path(kind);
    weights::save(&model, &path)?;
    let svg_path = write_curve(kind.name(), &path, &curve)?;
    let last = curve
        .iter()
        .rev()
        .find_map(|p| p.held_out)
        .expect("the last step is evaluated");
    let secs = started.elapsed().as_secs_f64();
    Ok(Report {
        json: json!({"model": kind.name(), "parameters": parameters(&model), "steps": total, "seconds": secs,
            "final_loss": curve.last().map(|p| p.loss), "answer_accuracy": last.answer_accuracy,
            "weights": path.display().to_string(), "loss_curve": svg_path.display().to_string()}),
        rows: vec![
            row(
                "model",
                format!("{} ({} parameters)", kind.name(), parameters(&model)),
            ),
            row("steps", format!("{total} in {secs:.0} s")),
            row(
                "held-out answer accuracy",
                format!("{:.2}%", 100.0 * last.answer_accuracy),
            ),
            row("weights", path.display()),
            row("loss curve", svg_path.display()),
        ],
    })
}

pub fn accuracy(o: &mut Opts) -> Result<Report, Usage> {
    let kind = ModelKind::parse(&o.required("model")?)?;
    let n = o.count(&WORLDS, Some(1000))?;
    let seed = o.number("seed", Some(12345u64))?;
    let device = backend(o)?.device_blocking()?;
    let model = weights::load(kind, &device)?;
    let a = answer_accuracy(&model, &worlds(Split::HeldOut, seed, n), &device);
    Ok(Report {
        json: json!({"answer_accuracy": a.answer_accuracy, "world_accuracy": a.world_accuracy, "answers": a.answers,
            "worlds": a.worlds, "parameters": parameters(&model), "model": kind.name()}),
        rows: vec![
            row(
                "model",
                format!("{} ({} parameters)", kind.name(), parameters(&model)),
            ),
            row(
                "answer accuracy",
                format!("{:.2}% of {} answers", 100.0 * a.answer_accuracy, a.answers),
            ),
            row(
                "worlds with every answer right",
                format!("{:.2}% of {}", 100.0 * a.world_accuracy, a.worlds),
            ),
        ],
    })
}

pub fn tree_attention(o: &mut Opts) -> Result<Report, Usage> {
    let config = parse_config(&o.required("config")?, DEFAULT_NODE_BUDGET)?;
    let prompts = o.count(&PROMPTS, Some(4))?;
    let kind = ModelKind::parse(&o.take("model").unwrap_or_else(|| "target".into()))?;
    let cached = !o.flag("no-cache");
    let device = backend(o)?.device_blocking()?;
    let model = weights::load(kind, &device)?;
    let tree = TokenTree::expand(&config, "r");
    let depth = config.widths().len();
    // Positions are depths after the prompt (at most 25 tokens): they must stay below 64.
    if 25 + depth > 64 {
        return Err(Usage(format!(
            "tree-attention: depth {depth} does not fit the model's 64 positions after a prompt"
        )));
    }
    let mut worst: Option<specdec::model::tree_attention::TreeCheck> = None;
    for (i, w) in worlds(Split::HeldOut, 77, prompts).iter().enumerate() {
        let prompt = w.prompt();
        // Node tokens: a fixed pseudo-random fill; exactness does not depend on which tokens.
        let tokens: Vec<u32> = (0..tree.nodes().len())
            .map(|j| ((j * 7 + i * 3) % specdec::likesworld::VOCAB) as u32)
            .collect();
        let c = read_sync(check(&model, &prompt, &tree, &tokens, cached, &device))?;
        worst = Some(match worst {
            Some(prev) if prev.max_abs_diff >= c.max_abs_diff => prev,
            _ => c,
        });
    }
    let c = worst.expect("at least one prompt");
    Ok(Report {
        json: json!({"max_abs_diff": c.max_abs_diff, "tree_tokens": c.tree_tokens, "path_tokens": c.path_tokens}),
        rows: vec![
            row(
                "max |Δlogit| (tree vs paths)",
                format!("{:.2e}", c.max_abs_diff),
            ),
            row("tokens in one tree forward", c.tree_tokens),
            row("tokens path by path", c.path_tokens),
        ],
    })
}

pub fn bench(o: &mut Opts) -> Result<Report, Usage> {
    let named = o.take("backend");
    let backends = match named.clone() {
        Some(b) => vec![Backend::parse(&b)?],
        None => Backend::ALL.to_vec(),
    };
    let runs = o.count(&RUNS, Some(300))?;
    let mut rows = vec![row(
        "backend / model",
        "decode1 µs   chain5 µs   tree31 µs   (median; p95 of decode1)",
    )];
    let mut out = serde_json::Map::new();
    for backend in backends {
        let device = match backend.device_blocking() {
            Ok(d) => d,
            // Asked for by name, a missing GPU is an error; in the all-backends run, a note.
            Err(e) if named.is_none() => {
                rows.push(row(&format!("{} (skipped)", backend.name()), &e));
                out.insert(backend.name().into(), json!({"unavailable": e.to_string()}));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let mut per_model = serde_json::Map::new();
        let mut decode1 = Vec::new();
        for kind in ModelKind::ALL {
            let model = weights::load(kind, &device)?;
            let clock = specdec::clock::native_clock();
            let l = read_sync(specdec::model::bench::latency(
                &model,
                &device,
                runs,
                runs / 3 + 20,
                &clock,
                None,
            ))?;
            decode1.push(l.decode1.median_us);
            rows.push(row(
                &format!("{} / {}", backend.name(), kind.name()),
                format!(
                    "{:>10.1}  {:>10.1}  {:>10.1}   (p95 {:.1})",
                    l.decode1.median_us, l.chain5.median_us, l.tree31.median_us, l.decode1.p95_us
                ),
            ));
            per_model.insert(
                kind.name().into(),
                serde_json::to_value(l).expect("serialisable"),
            );
        }
        let c = json!({"draft-a": decode1[1] / decode1[0], "draft-b": decode1[2] / decode1[0]});
        rows.push(row(
            &format!("{} c = draft / target", backend.name()),
            format!(
                "draft-a {:.2}, draft-b {:.2}",
                decode1[1] / decode1[0],
                decode1[2] / decode1[0]
            ),
        ));
        per_model.insert("c".into(), c);
        out.insert(backend.name().into(), serde_json::Value::Object(per_model));
    }
    Ok(Report {
        json: serde_json::Value::Object(out),
        rows,
    })
}

/// `roofline-measure`: time per target call against the tokens it feeds, on the target widened
/// `--width`×, beside this device's bandwidth and peak (lecture §1.2, demo 1 measured).
pub fn roofline_measure(o: &mut Opts) -> Result<Report, Usage> {
    use specdec::model::measure::{self, K};
    let width = width(o, "width")?;
    let ks: Vec<usize> = match o.take("k") {
        None => measure::KS.to_vec(),
        Some(list) => list
            .split(',')
            .map(|k| {
                let n: usize = k.trim().parse().map_err(|_| {
                    Usage(format!(
                        "roofline-measure: --k: {k:?} is not a whole number"
                    ))
                })?;
                K.check(n as f64)?;
                Ok(n)
            })
            .collect::<Result<_, Usage>>()?,
    };
    // As many k as the page may ask for: each is a measurement of seconds.
    specdec::views::measured::KS_COUNT.check(ks.len() as f64)?;
    let batch = o.count(&measure::BATCH, Some(1))?;
    // Which matmul flex runs for few rows: ours (weights streamed once) or burn's GEMM, to compare.
    match o.take("matmul").as_deref() {
        None | Some("few-rows") => specdec::model::matmul::use_few_rows_kernel(true),
        Some("burn") => specdec::model::matmul::use_few_rows_kernel(false),
        Some(other) => {
            return Err(Usage(format!(
                "roofline-measure: unknown --matmul {other:?} (known: few-rows, burn)"
            )))
        }
    }
    let backend = backend(o)?;
    let offload = offload(o, backend)?;
    let models = read_sync(specdec::model::Models::load(backend))?;
    let m = read_sync(models.with_target_width(width))?;
    let m = if offload {
        read_sync(m.with_offload())?
    } else {
        m
    };
    let clock = specdec::clock::native_clock();
    let r = read_sync(measure::roofline(
        measure::Subject {
            model: &m.target,
            width,
            backend,
            device: &m.device,
        },
        &ks,
        batch,
        None,
        &clock,
        &mut |_, _| {},
    ))?;
    let t1 = r.rows.iter().find(|p| p.k == 1).map(|p| p.median_us);
    let mut rows = vec![
        row(
            "target",
            format!(
                "×{width} on {}: {} parameters, {:.1} MB of weights a call",
                r.backend,
                r.params,
                r.weight_bytes as f64 / 1e6
            ),
        ),
        row(
            "calibration",
            format!(
                "bandwidth {:.1} GB/s, peak {:.1} GFLOP/s{}, clock resolution {:.3} µs",
                r.bandwidth_gbs,
                r.peak_gflops,
                match r.peak_from_k {
                    Some(k) => format!(
                        " (the k = {k} call's rate: the calibration's {:.1} was below it)",
                        r.calibrated_peak_gflops
                    ),
                    None => String::new(),
                },
                r.clock_resolution_us
            ),
        ),
        row(
            "matmuls",
            match r.execution {
                Some(e) => format!(
                    "{} thread{}, FMA {}, kernel: {}{}{}",
                    e.threads,
                    if e.threads == 1 { "" } else { "s" },
                    if e.fma { "on" } else { "off" },
                    e.kernel,
                    if e.packed {
                        ", over weights packed in strips"
                    } else {
                        ""
                    },
                    e.most_rows
                        .map(|n| format!(
                            "{} up to {n} rows a call, burn's matmul beyond",
                            if e.packed { "; smaller layers" } else { "," }
                        ))
                        .unwrap_or_default()
                ),
                None => "on the GPU".to_string(),
            },
        ),
        row(
            "memory floor",
            format!(
                "{:.1} µs (weight bytes / bandwidth); the roofline model's knee at k ≈ {:.1}",
                r.memory_floor_us, r.model_knee_k
            ),
        ),
        row("k × batch", "median µs   IQR µs   T(k)/T(1)   vs floor"),
    ];
    if let Some(t) = r.transfer {
        rows.insert(rows.len() - 1, row("offloaded", t.summary()));
    }
    for p in &r.rows {
        rows.push(row(
            &format!("{} × {}", p.k, p.batch),
            format!(
                "{:>10.1}  {:>7.1}  {:>10.2}  {:>8.2}",
                p.median_us,
                p.iqr_us,
                t1.map_or(f64::NAN, |t| p.median_us / t),
                p.median_us / r.memory_floor_us
            ),
        ));
    }
    rows.push(row(
        "measured knee",
        match r.knee_k {
            Some(k) => format!("k ≈ {k:.1} (T(k) > {}·T(1))", measure::KNEE_RATIO),
            None => format!(
                "beyond the largest k measured (T(k) ≤ {}·T(1) throughout)",
                measure::KNEE_RATIO
            ),
        },
    ));
    Ok(Report {
        json: serde_json::to_value(&r).expect("serialisable"),
        rows,
    })
}

/// `likesworld widen-check --width R`: the widened target against the trained one on held-out
/// worlds (teacher-forced logits and argmax).
pub fn widen_check(o: &mut Opts) -> Result<Report, Usage> {
    let r = width(o, "width")?;
    let n = prompts(o, 64)?;
    return_if_drafts_on(o, "the widening check runs no draft model")?;
    let m = models_without_draft(o, "the widening check")?;
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

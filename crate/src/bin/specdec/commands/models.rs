//! The LikesWorld model commands: `train`, `likesworld accuracy`, `tree-attention`,
//! `model-bench` (native only).

use crate::{row, Opts, Report, Usage};
use burn::tensor::read_sync;
use serde_json::json;
use specdec::likesworld::{worlds, Split};
use specdec::model::device::Backend;
use specdec::model::eval::accuracy as answer_accuracy;
use specdec::model::train::{parameters, train as run_training, TrainConfig};
use specdec::model::tree_attention::check;
use specdec::model::{weights, ModelKind};
use specdec::tree::{parse_config, TokenTree, DEFAULT_NODE_BUDGET};
use std::io::Write;

pub fn backend(o: &mut Opts) -> Result<Backend, Usage> {
    Ok(Backend::parse(
        &o.take("backend").unwrap_or_else(|| "flex".into()),
    )?)
}

pub fn train(o: &mut Opts) -> Result<Report, Usage> {
    let kind = ModelKind::parse(&o.required("model")?)?;
    let mut config = TrainConfig::new(kind, o.number("seed", None)?);
    config.steps = o.count(
        "steps",
        Some(config.steps),
        1_000_000,
        "1 ≤ steps ≤ 1000000",
    )?;
    config.batch = o.count("batch", Some(config.batch), 4096, "1 ≤ batch ≤ 4096")?;
    let device = backend(o)?.device_blocking()?;
    let started = std::time::Instant::now();
    let total = config.steps;
    let (model, curve) = run_training(&config, &device, |p| {
        if p.step % 10 != 0 && p.held_out.is_none() {
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
        if p.held_out.is_some() {
            eprintln!();
        }
        let _ = std::io::stderr().flush();
    });
    let path = weights::asset_path(kind);
    weights::save(&model, &path)?;
    let svg_path = path.with_extension("loss.svg");
    let losses: Vec<(usize, f64)> = curve.iter().map(|p| (p.step, p.loss)).collect();
    let accs: Vec<(usize, f64)> = curve
        .iter()
        .filter_map(|p| p.held_out.map(|a| (p.step, a.answer_accuracy)))
        .collect();
    std::fs::write(
        &svg_path,
        specdec::views::training::loss_svg(kind.name(), &losses, &accs),
    )
    .map_err(|e| Usage(format!("train: cannot write {}: {e}", svg_path.display())))?;
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
    if o.words.first().map(String::as_str) != Some("accuracy") {
        return Err(Usage(
            "likesworld: expected `likesworld accuracy --model M`".into(),
        ));
    }
    let kind = ModelKind::parse(&o.required("model")?)?;
    let n = o.count("worlds", Some(1000), 100_000, "1 ≤ worlds ≤ 100000")?;
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
    let prompts = o.count("prompts", Some(4), 1000, "1 ≤ prompts ≤ 1000")?;
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
    let runs = o.count("runs", Some(300), 100_000, "1 ≤ runs ≤ 100000")?;
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

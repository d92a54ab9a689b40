//! `specdec`: the lecture's experiments on the command line.
//!
//! A contract other tools script against: human-readable tables by default; with `--json`,
//! exactly one JSON object on stdout; bad arguments exit with status 2 and one line on stderr
//! naming the bad value. Every subcommand is a thin shell over the same core functions the
//! page calls.

use serde_json::{json, Value};
use specdec::roofline::{self, Pair, Workload};
use specdec::sampling::multi::{verify_exact, verify_given, Mode};
use specdec::sampling::speculative::{single_position, Variant};
use specdec::sampling::{parse_dist, tv};
use specdec::theory::{self, Params};
use specdec::toy::enumerate::{exact_distribution, Strategy};
use specdec::toy::{ToyConfig, ToyLm};
use specdec::tree::{parse_config, parse_paths, TokenTree, DEFAULT_NODE_BUDGET};
use specdec::views::exactness::{monte_carlo_view, ExactnessParams};
use specdec::views::multidraft::{parse_drafts, parse_given};
use specdec::views::roofline::{HEAT_BATCHES, HEAT_CONTEXTS};
use std::collections::BTreeMap;
use std::process::ExitCode;

const USAGE: &str = "\
specdec — speculative decoding, exactly (lecture 17)

USAGE: specdec <command> [--option value]... [--json]

  theory        --alpha A --gamma G [--c C] [--c-hat CH]
  optimal-gamma --alpha A --c C [--max-gamma N]
  roofline      --gpu G --model M --batch B --context L --k K [--overhead-ms X]
  cost-ratio    --draft M --target M [--gpu G] [--batch B] [--context L] [--overhead-ms X]
  heat-map      [--gpu G] [--draft M] [--target M] [--alpha A] [--overhead-ms X]
  toy-exact     --gamma G --variant V [--seed S]
  monte-carlo   --gamma G --variant V [--runs N] [--seed S]
  sample-dist   --p P --q Q --rule R          (P, Q comma-separated)
  multi-draft   --p P --drafts \"Q1;Q2;...\" --mode mss|naive [--given I,J,...]
  tree          --paths \"a b c|a b d e|f g\" [--root r]
  tree          --config \"<2,2,1>\" [--budget N]

LikesWorld models (native):
  train               --model target|draft-a|draft-b --seed S [--steps N] [--batch B] [--backend flex|ndarray|wgpu]
  likesworld accuracy --model M [--worlds N] [--seed S] [--backend flex|ndarray|wgpu]
  tree-attention      --config \"<2,2,1>\" [--prompts N] [--model M] [--backend flex|ndarray|wgpu] [--no-cache]
  model-bench         [--backend flex|ndarray|wgpu] [--runs N]   (per-call latency; c = draft/target)

GPUs: a100-40gb a100-80gb h100-sxm h200 rtx-4090 l4
Models: opt-125m opt-350m opt-1.3b opt-6.7b opt-13b opt-30b
Variants: correct resample-from-target greedy-rule argmax-draft accept-q-over-p bonus-from-draft
";

/// Options that take no value.
const FLAGS: [&str; 1] = ["--no-cache"];
/// Sub-command words that may follow a command.
const WORDS: [&str; 1] = ["accuracy"];

/// A failed invocation: the one line printed on stderr before exiting with status 2.
struct Usage(String);

impl From<specdec::Error> for Usage {
    fn from(e: specdec::Error) -> Usage {
        Usage(e.to_string())
    }
}

/// Parsed `--name value` options of one subcommand; each read removes its option so that
/// anything left over is reported as unknown.
struct Opts {
    command: String,
    values: BTreeMap<String, String>,
    /// Words before the first option (`likesworld accuracy …`; the model commands are native).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    words: Vec<String>,
    /// Options given without a value (`--no-cache`).
    flags: Vec<String>,
    json: bool,
}

impl Opts {
    fn parse(command: &str, args: &[String]) -> Result<Opts, Usage> {
        let mut values = BTreeMap::new();
        let (mut words, mut flags) = (Vec::new(), Vec::new());
        let mut json = false;
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            if arg == "--json" {
                json = true;
                continue;
            }
            if FLAGS.contains(&arg.as_str()) {
                flags.push(arg[2..].to_string());
                continue;
            }
            let Some(name) = arg.strip_prefix("--") else {
                if values.is_empty() && flags.is_empty() && WORDS.contains(&arg.as_str()) {
                    words.push(arg.clone());
                    continue;
                }
                return Err(Usage(format!(
                    "{command}: unexpected argument {arg:?} (options look like --name value)"
                )));
            };
            let (name, value) = match name.split_once('=') {
                Some((n, v)) => (n.to_string(), v.to_string()),
                None => {
                    let v = it
                        .next()
                        .ok_or_else(|| Usage(format!("{command}: --{name} needs a value")))?;
                    (name.to_string(), v.clone())
                }
            };
            if values.insert(name.clone(), value).is_some() {
                return Err(Usage(format!("{command}: --{name} given twice")));
            }
        }
        Ok(Opts {
            command: command.to_string(),
            values,
            words,
            flags,
            json,
        })
    }

    /// Whether a value-less option such as `--no-cache` was given.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    fn flag(&mut self, name: &str) -> bool {
        let had = self.flags.iter().any(|f| f == name);
        self.flags.retain(|f| f != name);
        had
    }

    fn take(&mut self, name: &str) -> Option<String> {
        self.values.remove(name)
    }

    fn required(&mut self, name: &str) -> Result<String, Usage> {
        self.take(name)
            .ok_or_else(|| Usage(format!("{}: missing --{name}", self.command)))
    }

    fn number<T: std::str::FromStr>(&mut self, name: &str, default: Option<T>) -> Result<T, Usage> {
        match self.take(name) {
            Some(text) => text.trim().parse().map_err(|_| {
                Usage(format!(
                    "{}: bad value for --{name}: {text:?} is not a valid number here",
                    self.command
                ))
            }),
            None => default.ok_or_else(|| Usage(format!("{}: missing --{name}", self.command))),
        }
    }

    /// Fails on any option no reader asked for.
    fn finish(&self) -> Result<(), Usage> {
        match (self.values.keys().next(), self.flags.first()) {
            (Some(name), _) | (None, Some(name)) => {
                Err(Usage(format!("{}: unknown option --{name}", self.command)))
            }
            (None, None) => Ok(()),
        }
    }
}

/// What a subcommand produces: the JSON object and the table rows for people.
struct Report {
    json: Value,
    rows: Vec<(String, String)>,
}

fn row(k: &str, v: impl std::fmt::Display) -> (String, String) {
    (k.to_string(), v.to_string())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    if command == "--help" || command == "-h" || command == "help" {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    match Opts::parse(command, &args[1..]).and_then(|mut o| run(&mut o).map(|r| (o.json, r))) {
        Ok((true, report)) => {
            println!("{}", report.json);
            ExitCode::SUCCESS
        }
        Ok((false, report)) => {
            let width = report
                .rows
                .iter()
                .map(|(k, _)| k.chars().count())
                .max()
                .unwrap_or(0);
            for (k, v) in report.rows {
                println!("{k:width$}  {v}");
            }
            ExitCode::SUCCESS
        }
        Err(Usage(msg)) => {
            eprintln!("specdec: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(o: &mut Opts) -> Result<Report, Usage> {
    let report = match o.command.as_str() {
        "theory" => cmd_theory(o)?,
        "optimal-gamma" => cmd_optimal_gamma(o)?,
        "roofline" => cmd_roofline(o)?,
        "cost-ratio" => cmd_cost_ratio(o)?,
        "heat-map" => cmd_heat_map(o)?,
        "toy-exact" => cmd_toy_exact(o)?,
        "monte-carlo" => cmd_monte_carlo(o)?,
        "sample-dist" => cmd_sample_dist(o)?,
        "multi-draft" => cmd_multi_draft(o)?,
        "tree" => cmd_tree(o)?,
        #[cfg(not(target_arch = "wasm32"))]
        "train" => models::train(o)?,
        #[cfg(not(target_arch = "wasm32"))]
        "likesworld" => models::likesworld(o)?,
        #[cfg(not(target_arch = "wasm32"))]
        "tree-attention" => models::tree_attention(o)?,
        #[cfg(not(target_arch = "wasm32"))]
        "model-bench" => models::bench(o)?,
        other => {
            return Err(Usage(format!(
                "unknown command {other:?} (try specdec --help)"
            )))
        }
    };
    o.finish()?;
    Ok(report)
}

fn cmd_theory(o: &mut Opts) -> Result<Report, Usage> {
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

fn cmd_optimal_gamma(o: &mut Opts) -> Result<Report, Usage> {
    let alpha = o.number("alpha", None)?;
    let c = o.number("c", None)?;
    let max = o.number("max-gamma", Some(64u32))?;
    Params::new(alpha, max, c, 0.0)?;
    let (g, s) = theory::optimal_gamma(alpha, c, max);
    Ok(Report {
        json: json!({"gamma": g, "speedup": s}),
        rows: vec![row("optimal γ", g), row("speedup", format!("{s:.4}×"))],
    })
}

fn cmd_roofline(o: &mut Opts) -> Result<Report, Usage> {
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

fn cmd_cost_ratio(o: &mut Opts) -> Result<Report, Usage> {
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

fn cmd_heat_map(o: &mut Opts) -> Result<Report, Usage> {
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

fn cmd_toy_exact(o: &mut Opts) -> Result<Report, Usage> {
    let gamma: u32 = o.number("gamma", None)?;
    specdec::error::check_range("gamma", f64::from(gamma), 0.0, 8.0, "0 ≤ γ ≤ 8")?;
    let variant = Variant::parse(&o.required("variant")?)?;
    let lm = toy(o)?;
    let t = tv(
        &exact_distribution(&lm, Strategy::Speculative { gamma, variant }),
        &exact_distribution(&lm, Strategy::Target),
    );
    Ok(Report {
        json: json!({"tv": t}),
        rows: vec![
            row("variant", variant.name()),
            row("γ", gamma),
            row(
                "exact TV to the target (first 4 tokens)",
                format!("{t:.3e}"),
            ),
        ],
    })
}

fn cmd_monte_carlo(o: &mut Opts) -> Result<Report, Usage> {
    let params = ExactnessParams {
        gamma: o.number("gamma", None)?,
        variant: o.required("variant")?,
        runs: o.number("runs", Some(20_000))?,
        toy: ToyConfig {
            seed: o.number("seed", Some(0))?,
            ..ToyConfig::default()
        },
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

fn cmd_sample_dist(o: &mut Opts) -> Result<Report, Usage> {
    let p = parse_dist("p", &o.required("p")?)?;
    let q = parse_dist("q", &o.required("q")?)?;
    if p.len() != q.len() {
        return Err(Usage(format!(
            "sample-dist: p has {} entries but q has {}",
            p.len(),
            q.len()
        )));
    }
    let variant = Variant::parse(&o.required("rule")?)?;
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

fn cmd_multi_draft(o: &mut Opts) -> Result<Report, Usage> {
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

fn cmd_tree(o: &mut Opts) -> Result<Report, Usage> {
    match (o.take("paths"), o.take("config")) {
        (Some(_), Some(_)) => Err(Usage("tree: give --paths or --config, not both".into())),
        (None, None) => Err(Usage("tree: missing --paths or --config".into())),
        (None, Some(config)) => {
            let budget = o.number("budget", Some(DEFAULT_NODE_BUDGET))?;
            let tree = TokenTree::expand(&parse_config(&config, budget)?, "r");
            let (n, s) = (tree.speculated(), tree.sequence_tokens());
            Ok(Report {
                json: json!({"nodes": n, "sequence_tokens": s}),
                rows: vec![
                    row("nodes (without the root)", n),
                    row("tokens decoded path by path", s),
                    row("ratio", format!("{:.2}×", s as f64 / n as f64)),
                ],
            })
        }
        (Some(paths), None) => {
            let root = o.take("root");
            let tree = TokenTree::merge(&parse_paths(&paths)?, root.as_deref().unwrap_or("r"));
            let mut order = tree.linearize_dfs();
            if root.is_none() {
                order.remove(0);
            }
            let tokens: Vec<&str> = order
                .iter()
                .map(|&n| tree.nodes()[n].token.as_str())
                .collect();
            let depths = tree.depths(&order);
            let mask: Vec<Vec<u8>> = tree
                .tree_mask(&order)
                .iter()
                .map(|r| r.iter().map(|&b| u8::from(b)).collect())
                .collect();
            let mut rows = vec![
                row("order", tokens.join(" ")),
                row(
                    "depths",
                    depths
                        .iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
            ];
            for (t, r) in tokens.iter().zip(&mask) {
                rows.push(row(
                    &format!("mask {t}"),
                    r.iter()
                        .map(|&b| if b == 1 { "✓" } else { "·" })
                        .collect::<Vec<_>>()
                        .join(" "),
                ));
            }
            rows.push(row("nodes", tree.speculated()));
            rows.push(row("sequence tokens", tree.sequence_tokens()));
            Ok(Report {
                json: json!({"order": tokens, "depths": depths, "mask": mask, "nodes": tree.speculated(), "sequence_tokens": tree.sequence_tokens()}),
                rows,
            })
        }
    }
}

fn fmt_dist(d: &[f64]) -> String {
    d.iter()
        .map(|x| format!("{x:.4}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The LikesWorld model commands (native only: the models are not in the wasm build yet).
#[cfg(not(target_arch = "wasm32"))]
mod models {
    use super::{row, Opts, Report, Usage};
    use burn::tensor::read_sync;
    use serde_json::json;
    use specdec::likesworld::{worlds, Split};
    use specdec::model::device::Backend;
    use specdec::model::eval::accuracy;
    use specdec::model::train::{parameters, train as run_training, TrainConfig};
    use specdec::model::tree_attention::check;
    use specdec::model::{weights, ModelKind};
    use specdec::tree::{parse_config, TokenTree, DEFAULT_NODE_BUDGET};
    use std::io::Write;

    fn backend(o: &mut Opts) -> Result<Backend, Usage> {
        Ok(Backend::parse(
            &o.take("backend").unwrap_or_else(|| "flex".into()),
        )?)
    }

    pub fn train(o: &mut Opts) -> Result<Report, Usage> {
        let kind = ModelKind::parse(&o.required("model")?)?;
        let mut config = TrainConfig::new(kind, o.number("seed", None)?);
        config.steps = o.number("steps", Some(config.steps))?;
        config.batch = o.number("batch", Some(config.batch))?;
        if config.steps == 0 || config.batch == 0 {
            return Err(Usage(
                "train: --steps and --batch must be at least 1".into(),
            ));
        }
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

    pub fn likesworld(o: &mut Opts) -> Result<Report, Usage> {
        if o.words.first().map(String::as_str) != Some("accuracy") {
            return Err(Usage(
                "likesworld: expected `likesworld accuracy --model M`".into(),
            ));
        }
        let kind = ModelKind::parse(&o.required("model")?)?;
        let n: usize = o.number("worlds", Some(1000))?;
        let seed = o.number("seed", Some(12345u64))?;
        let device = backend(o)?.device_blocking()?;
        let model = weights::load(kind, &device)?;
        let a = accuracy(&model, &worlds(Split::HeldOut, seed, n.max(1)), &device);
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
        let prompts: usize = o.number("prompts", Some(4))?;
        let kind = ModelKind::parse(&o.take("model").unwrap_or_else(|| "target".into()))?;
        let cached = !o.flag("no-cache");
        let device = backend(o)?.device_blocking()?;
        let model = weights::load(kind, &device)?;
        let tree = TokenTree::expand(&config, "r");
        let depth = config.widths().len();
        // Positions are depths after the prompt (at most 25 tokens): they must stay below 64.
        if 25 + depth > 64 {
            return Err(Usage(format!("tree-attention: depth {depth} does not fit the model's 64 positions after a prompt")));
        }
        let mut worst: Option<specdec::model::tree_attention::TreeCheck> = None;
        for (i, w) in worlds(Split::HeldOut, 77, prompts.max(1))
            .iter()
            .enumerate()
        {
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
        let runs: usize = o.number("runs", Some(300))?;
        if runs == 0 {
            return Err(Usage("model-bench: --runs must be at least 1".into()));
        }
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
                let clock = specdec::model::bench::native_clock();
                let l = read_sync(specdec::model::bench::latency(
                    &model,
                    &device,
                    runs,
                    runs / 3 + 20,
                    &clock,
                ))?;
                decode1.push(l.decode1.median_us);
                rows.push(row(
                    &format!("{} / {}", backend.name(), kind.name()),
                    format!(
                        "{:>10.1}  {:>10.1}  {:>10.1}   (p95 {:.1})",
                        l.decode1.median_us,
                        l.chain5.median_us,
                        l.tree31.median_us,
                        l.decode1.p95_us
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
}

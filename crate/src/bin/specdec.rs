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

GPUs: a100-40gb a100-80gb h100-sxm h200 rtx-4090 l4
Models: opt-125m opt-350m opt-1.3b opt-6.7b opt-13b opt-30b
Variants: correct resample-from-target greedy-rule argmax-draft accept-q-over-p bonus-from-draft
";

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
    json: bool,
}

impl Opts {
    fn parse(command: &str, args: &[String]) -> Result<Opts, Usage> {
        let mut values = BTreeMap::new();
        let mut json = false;
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            if arg == "--json" {
                json = true;
                continue;
            }
            let Some(name) = arg.strip_prefix("--") else {
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
            json,
        })
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
        match self.values.keys().next() {
            Some(name) => Err(Usage(format!("{}: unknown option --{name}", self.command))),
            None => Ok(()),
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

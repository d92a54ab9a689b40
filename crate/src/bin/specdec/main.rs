//! `specdec`: the lecture's experiments on the command line.
//!
//! A contract other tools script against: human-readable tables by default; with `--json`,
//! exactly one JSON object on stdout; bad arguments exit with status 2 and one line on stderr
//! naming the bad value. Every subcommand is a thin shell over the same core functions the
//! page calls.

mod commands;

use commands::{exercises, roofline, sampling, theory, tree};
use serde_json::Value;
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
  exercise      --number 1|3|4|5|6|7 [--answers \"A1|A2|...\"] [--lang en|zh]   check answers to the lecture's exercises

LikesWorld models (native):
  train               --model target|draft-a|draft-b --seed S [--steps N] [--batch B] [--backend flex|ndarray|wgpu]
  train               --model medusa [--heads K] | eagle | eagle-ttt [--rollout R] --seed S [--steps N] [--batch B]
                      a draft on the shipped target's features (Medusa heads, EAGLE, EAGLE + training-time test)
  likesworld accuracy --model M [--worlds N] [--seed S] [--backend flex|ndarray|wgpu]
  tree-attention      --config \"<2,2,1>\" [--prompts N] [--model M] [--backend flex|ndarray|wgpu] [--no-cache]
  model-bench         [--backend flex|ndarray|wgpu] [--runs N]   (per-call latency; c = draft/target)
  roofline-measure    [--width R] [--k 1,2,4,8,16,32,64] [--batch B] [--backend flex|ndarray|wgpu] [--matmul few-rows|burn]
                      time per target call against tokens per call, beside this device's bandwidth and peak
  likesworld widen-check --width R [--prompts N]   the target widened R× (1 ≤ R ≤ 24) against the trained one

Speculative decoding on LikesWorld (native; every one takes [--backend flex|ndarray|wgpu]
and [--target-width R]: the target widened R×, its answers the trained target's):
  likesworld acceptance [--prompts N]                    acceptance by token kind, drafts A and B
  likesworld greedy     --draft a|b --gamma G [--prompts N] [--seed S]   (greedy is deterministic: the seed changes nothing)
  likesworld sample     --draft a|b --gamma G [--prompts N] [--repeats R] [--seed S] [--variant V]
  likesworld tree       --config \"<2,2,1>\" [--draft a|b] [--prompts N]        (VerifyGreedy)
  likesworld stochastic --config \"<1,1,3,1>\" --verify naive|mss [--children without-replacement|iid|top-k] [--prompts N] [--seed S]
  likesworld speedup    --draft a|b --gamma G | --config \"<2,2,1,1>\" [--draft a|b] | --drafter prompt-lookup|suffix|jacobi|lookahead [--gamma G]
                        [--prompts N] [--batch B]         measured c and wall-clock speedup against the target alone
  likesworld speedup    --gamma 1,2,3,4,6 [--draft a|b | --drafter D] [--prompts N] [--batch B]
                                                          every γ measured: the best measured γ beside the formula's
  likesworld medusa     [--heads K] [--budget N] [--tree sparse|balanced] [--prompts P]
                        Medusa's heads on the target's hidden state (lecture §5.1), VerifyGreedy
  likesworld eagle      [--dynamic] [--budget N] [--depth D] [--ttt] [--verify greedy|mss|mss-top-k]
                        [--tree sparse|balanced] [--seed S] [--prompts P]
                        EAGLE's feature draft (§5.2); --dynamic: EAGLE-2's tree; --ttt: trained with the
                        training-time test; mss: sampled children (exact), mss-top-k: top-k (biased)
  likesworld methods    [--budget N] [--prompts P]       lecture §6's table measured: chains, a tree, the
                        suffix index, Medusa, EAGLE, EAGLE-2, EAGLE-2 + training-time test
  decode-bench          [--backend flex|ndarray|wgpu] [--divide D]
                                                          experiments 1–5 at the lecture's sizes (prompts ÷ D), timed

Drafting without a model (native; LikesWorld runs take [--backend flex|ndarray|wgpu]):
  prompt-lookup --tokens 1,2,3,4,1,2,3 --ngram N --k K [--min-ngram M]
  modelfree --workload code-rewrite|agent|likesworld --drafter prompt-lookup|suffix|both|jacobi|lookahead
            [--budget B] [--requests N] [--seed S] [--init fixed|random]
  modelfree table     [--budget B] [--requests N]       every drafter × workload, and draft B γ 6
  modelfree sweep     [--workload W] [--drafter suffix|both] [--requests N]   node budget 1 → 48
  modelfree jacobi    [--workload W] [--window W] [--requests N]    fixed vs random initial guess
  modelfree highlight [--workload W] [--drafter D] [--request I]    where each output token came from
  suffix-bench        [--max-tokens N] [--lookups N]    one lookup's cost against the index size

GPUs: a100-40gb a100-80gb h100-sxm h200 rtx-4090 l4
Models: opt-125m opt-350m opt-1.3b opt-6.7b opt-13b opt-30b
Variants: correct resample-from-target greedy-rule argmax-draft accept-q-over-p bonus-from-draft
";

/// Options that take no value.
const FLAGS: [&str; 3] = ["--no-cache", "--dynamic", "--ttt"];
/// Sub-command words that may follow a command.
const WORDS: [&str; 15] = [
    "table",
    "sweep",
    "jacobi",
    "highlight",
    "accuracy",
    "acceptance",
    "greedy",
    "sample",
    "tree",
    "stochastic",
    "speedup",
    "widen-check",
    "medusa",
    "eagle",
    "methods",
];

/// A failed invocation: the one line printed on stderr before exiting with status 2.
pub struct Usage(pub String);

impl From<specdec::Error> for Usage {
    fn from(e: specdec::Error) -> Usage {
        Usage(e.to_string())
    }
}

/// Parsed `--name value` options of one subcommand; each read removes its option so that
/// anything left over is reported as unknown.
pub struct Opts {
    pub command: String,
    values: BTreeMap<String, String>,
    /// Words before the first option (`likesworld accuracy …`; the model commands are native).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub words: Vec<String>,
    /// Options given without a value (`--no-cache`).
    flags: Vec<String>,
    pub json: bool,
}

impl Opts {
    pub fn parse(command: &str, args: &[String]) -> Result<Opts, Usage> {
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
    pub fn flag(&mut self, name: &str) -> bool {
        let had = self.flags.iter().any(|f| f == name);
        self.flags.retain(|f| f != name);
        had
    }

    /// The value of `--name` without reading it (an option whose form decides what it means).
    pub fn peek(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    pub fn take(&mut self, name: &str) -> Option<String> {
        self.values.remove(name)
    }

    pub fn required(&mut self, name: &str) -> Result<String, Usage> {
        self.take(name)
            .ok_or_else(|| Usage(format!("{}: missing --{name}", self.command)))
    }

    pub fn number<T: std::str::FromStr>(
        &mut self,
        name: &str,
        default: Option<T>,
    ) -> Result<T, Usage> {
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

    /// A whole number within a documented range (the range is part of the message).
    pub fn count(
        &mut self,
        name: &'static str,
        default: Option<usize>,
        max: usize,
        allowed: &'static str,
    ) -> Result<usize, Usage> {
        let n: usize = self.number(name, default)?;
        specdec::error::check_range(name, n as f64, 1.0, max as f64, allowed)?;
        Ok(n)
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
pub struct Report {
    pub json: Value,
    pub rows: Vec<(String, String)>,
}

pub fn row(k: &str, v: impl std::fmt::Display) -> (String, String) {
    (k.to_string(), v.to_string())
}

fn main() -> ExitCode {
    let mut args: Vec<String> = Vec::new();
    for (i, a) in std::env::args_os().skip(1).enumerate() {
        match a.into_string() {
            Ok(a) => args.push(a),
            Err(a) => {
                eprintln!(
                    "specdec: argument {} ({}) is not valid UTF-8",
                    i + 1,
                    a.to_string_lossy()
                );
                return ExitCode::from(2);
            }
        }
    }
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
        "theory" => theory::cmd_theory(o)?,
        "optimal-gamma" => theory::cmd_optimal_gamma(o)?,
        "roofline" => roofline::cmd_roofline(o)?,
        "cost-ratio" => roofline::cmd_cost_ratio(o)?,
        "heat-map" => roofline::cmd_heat_map(o)?,
        "toy-exact" => sampling::cmd_toy_exact(o)?,
        "monte-carlo" => sampling::cmd_monte_carlo(o)?,
        "sample-dist" => sampling::cmd_sample_dist(o)?,
        "multi-draft" => sampling::cmd_multi_draft(o)?,
        "tree" => tree::cmd_tree(o)?,
        "exercise" => exercises::cmd_exercise(o)?,
        #[cfg(not(target_arch = "wasm32"))]
        "train" => commands::models::train(o)?,
        #[cfg(not(target_arch = "wasm32"))]
        "likesworld" => match o.words.first().map(String::as_str) {
            Some("accuracy") => commands::models::accuracy(o)?,
            _ => commands::decoding::likesworld(o)?,
        },
        #[cfg(not(target_arch = "wasm32"))]
        "prompt-lookup" => commands::modelfree::prompt_lookup(o)?,
        #[cfg(not(target_arch = "wasm32"))]
        "modelfree" => commands::modelfree::modelfree(o)?,
        #[cfg(not(target_arch = "wasm32"))]
        "suffix-bench" => commands::modelfree::suffix_bench(o)?,
        #[cfg(not(target_arch = "wasm32"))]
        "tree-attention" => commands::models::tree_attention(o)?,
        #[cfg(not(target_arch = "wasm32"))]
        "model-bench" => commands::models::bench(o)?,
        #[cfg(not(target_arch = "wasm32"))]
        "roofline-measure" => commands::models::roofline_measure(o)?,
        #[cfg(not(target_arch = "wasm32"))]
        "decode-bench" => commands::decoding::bench(o)?,
        other => {
            return Err(Usage(format!(
                "unknown command {other:?} (try specdec --help)"
            )))
        }
    };
    o.finish()?;
    Ok(report)
}

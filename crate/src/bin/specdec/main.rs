//! `specdec`: the lecture's experiments on the command line.
//!
//! A contract other tools script against: human-readable tables by default; with `--json`,
//! exactly one JSON object on stdout; bad arguments exit with status 2 and one line on stderr
//! naming the bad value. Every subcommand is a thin shell over the same core functions the
//! page calls.

mod commands;
mod opts;

use commands::{exercises, gallery, roofline, sampling, theory, tree};
use opts::{Opts, Report, Usage};
use std::process::ExitCode;
const USAGE: &str = "\
specdec — speculative decoding, exactly (lecture 17)

USAGE: specdec <command> [--option value]... [--json]

  theory        --alpha A --gamma G [--c C] [--c-hat CH]
  optimal-gamma --alpha A --c C [--max-gamma N]
  roofline      --gpu G --model M [--batch B] [--context L] [--k K] [--overhead-ms X]
                [--tp T] [--pp P] [--micro-batches M] [--offload] [--draft M [--alpha A]]
  cost-ratio    --draft M --target M [--gpu G] [--batch B] [--context L] [--overhead-ms X]
                [--tp T] [--pp P] [--micro-batches M] [--offload]
  heat-map      [--gpu G] [--draft M] [--target M] [--alpha A] [--overhead-ms X]
                [--tp T] [--pp P] [--micro-batches M] [--offload]
  toy-exact     --gamma G --variant V [--seed S] [--epsilon E --delta D]
                (V typical: Medusa's typical acceptance, p(x) > min(ε, δ·exp(−H(p))); ε 0.09, δ 0.3
                unless told)
  exactness     [--gamma G] [--epsilon E] [--delta D] [--draft-noise X] [--toy-seed S]
                every rule's exact TV to the target on the toy, typical acceptance among them
  exactness     --gallery [--draft-noise X] [--toy-seed S] [--seed S]
                ten bugs of real runtimes (sources in docs/lossless.md), each through exact
                enumeration, a χ² test (the samples it needs) and greedy identity
  monte-carlo   --gamma G --variant V [--runs N] [--seed S]
  sample-dist   --p P --q Q --rule R [--epsilon E --delta D]   (P, Q comma-separated)
  multi-draft   --p P --drafts \"Q1;Q2;...\" --mode mss|naive [--given I,J,...]
                (--given numbers the tokens from 1, as the lecture: t1 is 1)
  tree          --paths \"a b c|a b d e|f g\" [--root r]
  tree          --config \"<2,2,1>\" [--budget N]
  tree          --sequoia --acceptance P1,P2,... --budget N [--depth D]
                Sequoia's tree of N nodes (depth ≤ D) with the most expected tokens a step (§4.7)
  choose        --acceptance P1,P2,... --times T1,T2,...,TK --draft-cost C
                the best chain (γ) and tree (n, d) for these call times: T(k) verifies k tokens,
                C is the draft's cost per level over T(1); speedup E / (T(n+1)/T(1) + d·C)
  choose        --acceptance P1,P2,... --device D|all [--draft-cost C]
                the same on a device's curve: h200-measured, cpu-measured (LikesWorld ×16,
                docs/performance.md) or a GPU preset (the roofline model, the lecture's pair)
  exercise      --number 1|3|4|5|6|7 [--answers \"A1|A2|...\"] [--lang en|zh]   check answers to the lecture's exercises

LikesWorld models (native):
  train               --model target|draft-a|draft-b --seed S [--steps N] [--batch B] [--backend flex|ndarray|wgpu]
  train               --model medusa [--heads K] | eagle | eagle-ttt [--rollout R] --seed S [--steps N] [--batch B]
                      a draft on the shipped target's features (Medusa heads, EAGLE, EAGLE + training-time test)
  train               --model draft --shape a|b|d,layers,heads,d_ff [--teacher greedy|kl|text] [--steps N] [--seed S]
                      [--batch B] [--corpus W] [--out FILE] [--gamma G] [--prompts P] [--backend flex|ndarray]
                      a draft distilled from the target (lecture §4.2), written to FILE (draft.bpk unless told;
                      the shipped weights stay as they are), then checked: α, tokens per call of its chain of γ
  train               --model pool [--pool 1|2|3|4] [--no-filter] [--shape S] [--steps N] [--seed S] [--batch B]
                      [--corpus W] [--out-dir DIR]   collective boost-tuning: each next small model trained only
                      where the earlier ones miss (rewrites the shipped pool in crate/assets/pool/ unless --out-dir)
  likesworld accuracy --model M [--worlds N] [--seed S] [--backend flex|ndarray|wgpu]
  tree-attention      --config \"<2,2,1>\" [--prompts N] [--model M] [--backend flex|ndarray|wgpu] [--no-cache]
  model-bench         [--backend flex|ndarray|wgpu] [--runs N]   (per-call latency; c = draft/target)
  roofline-measure    [--width R] [--k 1,2,4,8,16,32,64] [--batch B] [--backend flex|ndarray|wgpu] [--matmul few-rows|burn]
                      [--offload]   time per target call against tokens per call, beside this device's bandwidth
                      and peak (--offload, wgpu only: the weights cross to the GPU before every call, timed alone too)
  likesworld widen-check --width R [--prompts N]   the target widened R× (1 ≤ R ≤ 24) against the trained one

Speculative decoding on LikesWorld (native; every one takes [--backend flex|ndarray|wgpu]
and [--target-width R]: the target widened R×, its answers the trained target's; and
[--draft-file FILE]: a draft trained by `train --model draft` in the place of both shipped drafts,
refused by the experiments that run neither draft A nor B; and [--drafts-on flex|ndarray|wgpu]:
every draft model (A, B, a trained draft or pool, Medusa's heads, EAGLE) on that backend, the
target on --backend, as the page runs WebGPU: --backend wgpu --drafts-on flex):
  likesworld acceptance [--prompts N]                    acceptance by token kind, drafts A and B
  likesworld greedy     --draft a|b --gamma G [--prompts N] [--seed S]   (greedy is deterministic: the seed changes nothing)
  likesworld sample     --draft a|b --gamma G [--prompts N] [--repeats R] [--seed S] [--variant V]
  likesworld tree       --config \"<2,2,1>\" [--draft a|b] [--prompts N]        (VerifyGreedy)
  likesworld stochastic --config \"<1,1,3,1>\" --verify naive|mss [--children without-replacement|iid|top-k] [--prompts N] [--seed S]
  likesworld speedup    --draft a|b --gamma G | --config \"<2,2,1,1>\" [--draft a|b] | --drafter prompt-lookup|suffix|jacobi|lookahead [--gamma G]
                        [--prompts N] [--batch B]         measured c and wall-clock speedup against the target alone
  likesworld speedup    --gamma 1,2,3,4,6 [--draft a|b | --drafter D] [--prompts N] [--batch B]
                                                          every γ measured: the best measured γ beside the formula's
  likesworld speedup    --batch 1,2,4,8,16,32 [--draft a|b] [--gamma G | --config C] [--prompts N]
                                                          speculation under load: the speedup at every batch, beside
                                                          the published serving figures (EAGLE-3 paper)
                        every speedup also takes [--offload] (wgpu only): the target's weights stay in host memory
                        and cross to the GPU before every target call (lecture §4.6); the crossing is timed alone
  likesworld boost      [--pool 1|2|3|4] [--no-filter] [--gamma G] [--verify greedy|mss] [--prompts P] [--pool-dir DIR]
                        the shipped boost-tuned pool (or the control trained without the filter): the members'
                        chains merged into one tree (lecture §4.2), VerifyGreedy (or, with --verify mss, the chains
                        sampled and MSS); coverage, tokens per call, speedup
  likesworld medusa     [--heads K] [--budget N] [--tree sparse|balanced] [--prompts P]
                        Medusa's heads on the target's hidden state (lecture §5.1), VerifyGreedy
  likesworld eagle      [--dynamic] [--budget N] [--depth D] [--ttt] [--verify greedy|mss|mss-top-k]
                        [--tree sparse|balanced] [--seed S] [--prompts P]
                        EAGLE's feature draft (§5.2); --dynamic: EAGLE-2's tree; --ttt: trained with the
                        training-time test; mss: sampled children (exact), mss-top-k: top-k (biased)
  likesworld methods    [--budget N] [--prompts P]       lecture §6's table measured: chains, a tree, the
                        suffix index, Medusa, EAGLE, EAGLE-2, EAGLE-2 + training-time test
  likesworld tree-vs-paths --config C [--batch 1,2,4,8,16,32] [--prompts P]
                        a tree (exercise-5, slides, \"a b|c d\", \"<2,2,1>\"; eagle-2[:N]: EAGLE-2's
                        dynamic tree of N nodes, 16 unless told, one per prompt) verified per sequence
                        and tree-parallel (lecture §4.3): tokens computed, time, paths/tree, verdicts
  likesworld sequoia  [--draft a|b|medusa|eagle] [--budget N] [--depth D] [--verify greedy|mss] [--prompts P]
                        the draft's acceptance vector p_1…p_8 measured, Sequoia's tree of N nodes for it
                        (lecture §4.7), decoded beside every <k1,...> of N nodes: τ predicted and measured
  likesworld choose   [--max-nodes M] [--prompts P] [--target-width W] [--backend flex|ndarray|wgpu]
                        how to speculate on this device: T(1)…T(M+1) and c measured and lifted to what
                        decoding pays, every draft's vector; the best chain and tree chosen, then both
                        timed beside EAGLE-2 at 8 nodes, each with its prediction and the device's limit
  likesworld typical  [--gamma G] [--prompts P] [--repeats R] [--seed S]
                        Medusa's typical acceptance (lecture §5.1), ε 0.01…0.5 with δ = √ε: tokens per
                        call gained against Algorithm 1 (draft B's chain) and greedy (Medusa's tree),
                        fidelity lost (the calibration test, the exact one-step TV)
  likesworld gallery  [--prompts P]
                        the gallery's bugs of the decoding loop (first-draft-unchecked, stale-cache,
                        row-numerics) in the target: draft B's greedy chains, γ 1–4, against its output
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
Variants: correct resample-from-target greedy-rule argmax-draft accept-q-over-p bonus-from-draft typical
";

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
        return emit(USAGE);
    }
    // `specdec likesworld choose --help`: that command's own lines of the help, not its options
    // (a `--help` taken for an option wanting a value, or `-h` starting a measurement).
    if args[1..].iter().any(|a| a == "--help" || a == "-h") {
        return emit(&help_for(&args));
    }
    match Opts::parse(command, &args[1..]).and_then(|mut o| run(&mut o).map(|r| (o.json, r))) {
        Ok((true, report)) => emit(&format!("{}\n", report.json)),
        Ok((false, report)) => {
            let width = report
                .rows
                .iter()
                .map(|(k, _)| k.chars().count())
                .max()
                .unwrap_or(0);
            let text: String = report
                .rows
                .iter()
                .map(|(k, v)| format!("{k:width$}  {v}\n"))
                .collect();
            emit(&text)
        }
        Err(Usage(msg)) => {
            // A closed standard error (`… 2>&1 | head -c0`) loses the line, not the exit code.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "specdec: {msg}");
            ExitCode::from(2)
        }
    }
}

/// The help's entries for the command in `args` (its words before the first option: `likesworld
/// choose`), or the whole help where none matches. An entry is a line indented by two spaces and
/// the deeper-indented lines under it.
fn help_for(args: &[String]) -> String {
    let words: Vec<&str> = (args.iter())
        .take_while(|a| !a.starts_with('-'))
        .map(String::as_str)
        .collect();
    let name = words.join(" ");
    let mut out = String::new();
    let mut keep = false;
    for line in USAGE.lines() {
        let entry = line.starts_with("  ") && !line.starts_with("   ");
        if entry {
            let head = line.trim_start();
            // `likesworld choose` matches its own entry; `likesworld` alone, every such entry.
            keep = head
                .strip_prefix(name.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '));
        } else if !line.starts_with("   ") {
            keep = false;
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    match out.is_empty() {
        true => USAGE.to_string(),
        false => format!("USAGE: specdec <command> [--option value]... [--json]\n\n{out}"),
    }
}

/// Writes the report (or the help) to standard output. A reader that stops early (`specdec … | head`) closes
/// the pipe: that ends the command quietly, as it does for other command-line tools, rather than
/// with a panic.
fn emit(text: &str) -> ExitCode {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "specdec: cannot write the report: {e}");
            ExitCode::FAILURE
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
        "exactness" => gallery::cmd_exactness(o)?,
        "tree" => tree::cmd_tree(o)?,
        "choose" => tree::cmd_choose(o)?,
        "exercise" => exercises::cmd_exercise(o)?,
        #[cfg(not(target_arch = "wasm32"))]
        "train" => match o.peek("model") {
            Some("draft" | "pool") => commands::learned::train(o)?,
            _ => commands::models::train(o)?,
        },
        #[cfg(not(target_arch = "wasm32"))]
        "likesworld" => commands::likesworld::route(o)?,
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
    let mut report = report;
    for (key, value) in std::mem::take(&mut o.beside) {
        if let Some(json) = report.json.as_object_mut() {
            json.insert(key.into(), value.clone().into());
        }
        report.rows.push((key.replace('_', " "), value));
    }
    Ok(report)
}

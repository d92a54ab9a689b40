//! Learned speculators (lecture §4.2): `train --model draft` distils a draft of any shape from
//! the target (its greedy outputs, its distributions, or the text) and reports it as a draft in
//! use; `train --model pool` boost-tunes a pool (the shipped one, or a file per member with
//! `--out-dir`); `likesworld boost` measures the shipped pool's merged tree (native only).

use super::options::{backend, models_without_draft, prompts};
use crate::opts::{row, Opts, Report, Usage};
use burn::tensor::read_sync;
use serde_json::json;
use specdec::clock::native_clock;
use specdec::decode::engine::TreeRule;
use specdec::error::{Named, Range};
use specdec::i18n::Lang;
use specdec::lab::learned::{corpus, pool_report, PoolReport, PoolVerify};
use specdec::lab::Lab;
use specdec::model::boost::{boost as boost_run, BoostConfig};
use specdec::model::distill::{distill, DistillConfig, Teacher};
use specdec::model::draft_file::{self, shape_name, POOL};
use specdec::model::Models;
use std::io::Write;
use std::path::PathBuf;

/// Training steps, and the worlds of the corpus a draft distils from.
const STEPS: Range = Range::new("steps", 1.0, 1_000_000.0);
const BATCH: Range = Range::new("batch", 1.0, 4096.0);
const CORPUS: Range = Range::new("corpus", 16.0, 65_536.0);
const GAMMA: Range = Range::new("gamma", 1.0, 8.0);

/// Steps a draft trains unless told (draft A's shape: ≈ 1 min on 2 cores).
const DEFAULT_STEPS: usize = 1500;
/// Worlds in the corpus unless told.
const DEFAULT_CORPUS: usize = 2048;
/// Prompts and γ of the check that reports a trained draft in use.
const CHECK_PROMPTS: usize = 200;
const CHECK_GAMMA: usize = 4;

fn progress(label: &str, step: usize, total: usize, loss: f64) {
    if step % 25 == 0 || step == total {
        eprint!("\r{label} {step}/{total} loss {loss:.4}   ");
        if step == total {
            eprintln!();
        }
        let _ = std::io::stderr().flush();
    }
}

fn teacher(o: &mut Opts) -> Result<Teacher, Usage> {
    let name = o.take("teacher").unwrap_or_else(|| "greedy".into());
    Teacher::parse(&name).map_err(|e| Usage(format!("{}: {e}", o.command)))
}

/// `train --model draft|pool`.
pub fn train(o: &mut Opts) -> Result<Report, Usage> {
    match o.required("model")?.as_str() {
        "pool" => train_pool(o),
        _ => train_draft(o),
    }
}

/// `train --model draft --shape S --teacher T --steps N --seed S [--out FILE]`.
fn train_draft(o: &mut Opts) -> Result<Report, Usage> {
    let shape =
        draft_file::shape(&o.required("shape")?).map_err(|e| Usage(format!("train: {e}")))?;
    let teacher = teacher(o)?;
    let mut config = DistillConfig::new(
        shape.clone(),
        teacher,
        o.number("seed", Some(1))?,
        o.count(&STEPS, Some(DEFAULT_STEPS))?,
    );
    config.batch = o.count(&BATCH, Some(config.batch))?;
    let worlds = o.count(&CORPUS, Some(DEFAULT_CORPUS))?;
    let gamma = o.count(&GAMMA, Some(CHECK_GAMMA))?;
    let n = prompts(o, CHECK_PROMPTS)?;
    let out = PathBuf::from(o.take("out").unwrap_or_else(|| "draft.bpk".into()));
    writable_file(&out)?;
    let models = read_sync(Models::load(backend(o)?))?;
    o.finish()?;
    let clock = native_clock();
    let lab = Lab::new(&models, Lang::En, &clock);
    let started = std::time::Instant::now();
    let data = read_sync(corpus(&lab, teacher, worlds, config.seed, &mut |_, _| {}))?;
    let total = config.steps;
    let (draft, curve) = distill(&config, &data, &models.target, None, &models.device, |p| {
        progress("train", p.step, total, p.loss)
    })?;
    let seconds = started.elapsed().as_secs_f64();
    draft_file::save(&draft, &shape, &out)?;
    let run = (gamma, TreeRule::Greedy);
    let check = read_sync(pool_report(&lab, &[draft], None, run, n, &mut |_, _| {}))?;
    let accuracy = curve.iter().rev().find_map(|p| p.held_out);
    let losses: Vec<f64> = curve.iter().map(|p| p.loss).collect();
    Ok(Report {
        json: json!({"model": "draft", "shape": shape_name(&shape), "teacher": teacher.name(),
            "steps": total, "seed": config.seed, "corpus": worlds, "seconds": seconds,
            "final_loss": losses.last(), "loss_curve": losses,
            "answer_accuracy": accuracy.map(|a| a.answer_accuracy),
            "check": check, "out": out.display().to_string()}),
        rows: vec![
            row(
                "draft",
                format!(
                    "{} (d,layers,heads,d_ff), {} teacher",
                    shape_name(&shape),
                    teacher.name()
                ),
            ),
            row(
                "steps",
                format!("{total} in {seconds:.0} s, corpus {worlds} worlds"),
            ),
            row(
                "final loss",
                format!("{:.4}", losses.last().copied().unwrap_or(f64::NAN)),
            ),
            row(
                "held-out answers",
                format!(
                    "{:.1}%",
                    100.0 * accuracy.map_or(f64::NAN, |a| a.answer_accuracy)
                ),
            ),
            check_row(&check),
            row("weights", out.display()),
        ],
    })
}

/// Where `--out` will write, checked before a minute of training: a file name in a directory
/// that exists.
fn writable_file(out: &std::path::Path) -> Result<(), Usage> {
    let bad = |why: &str| {
        Err(Usage(format!(
            "train: --out {:?}: {why}",
            out.display().to_string()
        )))
    };
    if out.as_os_str().is_empty() || out.is_dir() {
        return bad("not a file name");
    }
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() && !p.is_dir() => bad("its directory does not exist"),
        _ => Ok(()),
    }
}

fn check_row(r: &PoolReport) -> (String, String) {
    row(
        &format!("greedy γ {}, {} prompts", r.gamma, r.prompts),
        format!(
            "α {:.3}, {:.2} tokens per call, {}/{} identical to the target",
            r.alpha,
            r.tokens_per_call,
            r.identical.map_or("—".into(), |k| k.to_string()),
            r.prompts
        ),
    )
}

/// `train --model pool [--pool K] [--no-filter] [--steps N] [--seed S] [--out-dir DIR]`.
fn train_pool(o: &mut Opts) -> Result<Report, Usage> {
    let pool = o.count(&POOL, Some(4))?;
    let filter = !o.flag("no-filter");
    let shape = draft_file::shape(&o.take("shape").unwrap_or_else(|| "a".into()))
        .map_err(|e| Usage(format!("train: {e}")))?;
    let mut member = DistillConfig::new(
        shape.clone(),
        Teacher::Greedy,
        o.number("seed", Some(1))?,
        o.count(&STEPS, Some(DEFAULT_STEPS))?,
    );
    member.eval_every = 0;
    member.batch = o.count(&BATCH, Some(member.batch))?;
    let worlds = o.count(&CORPUS, Some(DEFAULT_CORPUS))?;
    let dir = o
        .take("out-dir")
        .map(PathBuf::from)
        .unwrap_or_else(draft_file::pool_dir);
    if dir.as_os_str().is_empty() || dir.is_file() {
        return Err(Usage(format!(
            "train: --out-dir {:?} is not a directory",
            dir.display().to_string()
        )));
    }
    let models = read_sync(Models::load(backend(o)?))?;
    o.finish()?;
    let clock = native_clock();
    let lab = Lab::new(&models, Lang::En, &clock);
    let started = std::time::Instant::now();
    let data = read_sync(corpus(
        &lab,
        Teacher::Greedy,
        worlds,
        member.seed,
        &mut |_, _| {},
    ))?;
    let total = member.steps;
    let config = BoostConfig {
        member,
        pool,
        filter,
    };
    let members = boost_run(&config, &data, &models.target, &models.device, |i, p| {
        progress(&format!("member {}", i + 1), p.step, total, p.loss)
    })?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| Usage(format!("train: cannot create {}: {e}", dir.display())))?;
    let mut rows = vec![row(
        "pool",
        format!(
            "{pool} × {} ({}), {total} steps each, corpus {worlds} worlds",
            shape_name(&shape),
            if filter { "boost-tuned" } else { "no filter" }
        ),
    )];
    let mut files = Vec::new();
    for (i, m) in members.iter().enumerate() {
        let path = dir.join(draft_file::pool_file(filter, i));
        draft_file::save(&m.model, &shape, &path)?;
        rows.push(row(
            &format!("member {}", i + 1),
            format!(
                "trained on {} samples; of the training corpus it covers {:.1}% alone, the pool {:.1}%: {}",
                m.samples,
                100.0 * m.coverage,
                100.0 * m.pool_coverage,
                path.display()
            ),
        ));
        files.push(json!({"samples": m.samples, "coverage": m.coverage,
            "pool_coverage": m.pool_coverage, "file": path.display().to_string()}));
    }
    let seconds = started.elapsed().as_secs_f64();
    rows.push(row("time", format!("{seconds:.0} s")));
    Ok(Report {
        json: json!({"pool": pool, "filter": filter, "shape": shape_name(&shape), "steps": total,
            "corpus": worlds, "seconds": seconds, "members": files}),
        rows,
    })
}

/// `likesworld boost --pool K [--no-filter] [--gamma G] [--verify greedy|mss] [--prompts P]
/// [--target-width R] [--pool-dir DIR]` (a pool `train --model pool --out-dir DIR` wrote, instead
/// of the shipped one). With `--verify mss` the members' chains are sampled (T = 1) and the
/// merged tree verified with multi-step speculative sampling.
pub fn boost(o: &mut Opts) -> Result<Report, Usage> {
    let pool = o.count(&POOL, Some(4))?;
    let filter = !o.flag("no-filter");
    let gamma = o.count(&GAMMA, Some(CHECK_GAMMA))?;
    let verify = o.take("verify").unwrap_or_else(|| "greedy".into());
    let verify = PoolVerify::parse(&verify).map_err(|e| Usage(format!("{}: {e}", o.command)))?;
    let n = prompts(o, 100)?;
    let dir = o.take("pool-dir").map(PathBuf::from);
    let models = models_without_draft(o, "a pool (its members are the drafts)")?;
    o.finish()?;
    let members = match &dir {
        Some(dir) => draft_file::read_pool(dir, filter, pool, &models.draft_device)?,
        None => draft_file::shipped_pool(filter, pool, &models.draft_device)?,
    };
    let clock = native_clock();
    let lab = Lab::new(&models, Lang::En, &clock);
    let run = (gamma, verify.rule());
    let r = read_sync(pool_report(
        &lab,
        &members,
        Some(filter),
        run,
        n,
        &mut |_, _| {},
    ))?;
    let verified = match verify {
        PoolVerify::Greedy => "greedy, VerifyGreedy",
        PoolVerify::Mss => "sampled (T = 1), MSS",
    };
    let mut rows = vec![
        row(
            "pool",
            format!(
                "{pool} small model(s), {}; their chains of γ {gamma} merged, {verified}",
                if filter {
                    "boost-tuned"
                } else {
                    "trained without the filter (control)"
                }
            ),
        ),
        row(
            "identical",
            match r.identical {
                Some(k) => format!("{k}/{}", r.prompts),
                None => format!(
                    "— ({} prompts sampled: MSS keeps the target's distribution, not its tokens)",
                    r.prompts
                ),
            },
        ),
        row("tokens per call", format!("{:.3}", r.tokens_per_call)),
        row("tree nodes per call", format!("{:.2}", r.tree_nodes)),
    ];
    for (i, c) in r.coverage.iter().enumerate() {
        rows.push(row(
            &format!("member {} covers", i + 1),
            format!(
                "{:.1}% alone, the pool {:.1}%",
                100.0 * c.alone,
                100.0 * c.pool
            ),
        ));
    }
    rows.push(row(
        "measured speedup",
        format!(
            "{:.2}× (IQR {:.2} prompt by prompt; {:.0} ms target alone, {:.0} ms speculative; target width {})",
            r.measured_speedup, r.measured_speedup_iqr, r.target_ms, r.speculative_ms, r.target_width
        ),
    ));
    Ok(Report {
        json: serde_json::to_value(&r).expect("reports serialise"),
        rows,
    })
}

//! Running an experiment: [`run`] is the one call per [`Experiment`] (the CLI and the page make
//! the same call), with one progress callback for the whole of it; what it returns, an
//! [`Outcome`], is what the view draws and the CLI prints. The sweeps the page shows are here:
//! every γ of demo 03.2, every tree shape of demo 04.3, the three verifications of demo 04.5
//! (the wall-clock sweep over γ is [`speedup::sweep`], over the batch [`load::load`]). It sits
//! above every experiment it runs.

use super::context::Lab;
use super::decoding::{self, GreedyReport, SampleReport, StochasticReport};
use super::generate::{run as run_one, target_greedy};
use super::hidden::{self, Drafts, Ready};
use super::methods::{self, MethodsReport};
use super::params::{
    tree_widths, Beside, Chain, Drafter, Experiment, HiddenMethod, HiddenRun, HiddenSpec, Step,
    Stochastic, StochasticTrees, Tree, GAMMAS, STEP_BUDGET, TREE_CONFIGS,
};
use super::{acceptance, load, speedup};
use crate::clock::{part, Progress};
use crate::decode::engine::{Method, TreeRule};
use crate::decode::stats::Generation;
use crate::decode::Shape;
use crate::error::Error;
use crate::likesworld::{prompts, sampling_prompts};
use crate::sampling::multi::Children;

/// What an experiment measured: the reports, typed, for the view to draw and the CLI to print.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Acceptance(Vec<acceptance::KindAcceptance>),
    /// One report per γ, in increasing γ.
    Greedy(Vec<(usize, GreedyReport)>),
    Sample(SampleReport),
    Tree(Vec<GreedyReport>),
    Stochastic(Vec<StochasticReport>),
    Speedup(speedup::SpeedupReport),
    Sweep(speedup::SweepReport),
    Load(load::LoadReport),
    Step {
        method: Method,
        /// A draft on the target's hidden states ran instead of `method`: it, and its description.
        hidden: Option<(Drafter, String)>,
        prompt: Vec<u32>,
        run: Generation,
    },
    /// A draft on the target's hidden states, and one proposal of it drawn beside the other kind
    /// of tree (static beside dynamic) for the same context.
    Hidden {
        report: hidden::HiddenReport,
        trees: Vec<hidden::Pictured>,
    },
    Methods(MethodsReport),
}

/// The output tokens before the drawn proposal of a hidden-state draft (into the first facts).
const PICTURE_AFTER: usize = 9;

/// The prompts of `n` held-out worlds.
fn held_out(n: usize) -> Vec<Vec<u32>> {
    prompts(n).iter().map(|w| w.prompt()).collect()
}

/// Runs `experiment` with `lab`'s models, language and clock: one call per experiment, one
/// progress callback for all of it.
pub async fn run(
    experiment: &Experiment,
    lab: Lab<'_>,
    progress: Progress<'_>,
) -> Result<Outcome, Error> {
    experiment.check()?;
    Ok(match experiment {
        Experiment::Acceptance(w) => Outcome::Acceptance(
            acceptance::acceptance_by_kind(lab.models, w.prompts, progress).await?,
        ),
        Experiment::Greedy(c) => {
            Outcome::Greedy(gamma_sweep(lab, c, &held_out(c.prompts), progress).await?)
        }
        Experiment::Sample(s) => {
            Outcome::Sample(decoding::sample(lab, s, &sampling_prompts(s.prompts), progress).await?)
        }
        Experiment::Tree(t) => Outcome::Tree(tree_sweep(lab, t, progress).await?),
        Experiment::Stochastic(s) => {
            Outcome::Stochastic(verification_sweep(lab, s, progress).await?)
        }
        Experiment::Hidden(h) => hidden_run(lab, h, progress).await?,
        Experiment::Methods(m) => {
            Outcome::Methods(methods::methods(lab, m.budget, &held_out(m.prompts), progress).await?)
        }
        Experiment::Speedup(s) => {
            let mut r = speedup::speedup(lab, s, &held_out(s.prompts), progress).await?;
            speedup::with_limit(lab, &s.config, std::slice::from_mut(&mut r)).await?;
            Outcome::Speedup(r)
        }
        Experiment::Sweep(s) => {
            let mut r = speedup::sweep(lab, s, &held_out(s.prompts), progress).await?;
            speedup::with_limit(lab, "", &mut r.rows).await?;
            Outcome::Sweep(r)
        }
        Experiment::Load(l) => {
            let prompts = held_out(l.prompts_needed()?);
            Outcome::Load(load::load(lab, l, &prompts, progress).await?)
        }
        Experiment::Step(s) => step_through(lab, s, progress).await?,
    })
}

/// Lecture §5.1–5.2: a draft on the target's hidden states over the prompts, and one proposal of
/// it drawn beside the other kind of tree for the same context (static beside dynamic).
async fn hidden_run(lab: Lab<'_>, h: &HiddenRun, progress: Progress<'_>) -> Result<Outcome, Error> {
    let drafts = Drafts::load(lab.models)?;
    let prompts = held_out(h.prompts);
    let spec = h.spec();
    let ready = Ready::new(&drafts, spec).await?;
    let report = hidden::evaluate(lab, &ready, spec, &prompts, h.seed, progress).await?;
    let other = match spec.drafter {
        Drafter::Eagle {
            tree: super::params::TreeKind::Dynamic,
            ..
        } => HiddenMethod::Eagle,
        _ => HiddenMethod::Eagle2,
    };
    let other = HiddenSpec::greedy(other.drafter(h.depth, h.heads), spec.budget);
    let prompt = &prompts[(h.seed as usize) % prompts.len()];
    let mut trees = vec![hidden::picture(lab, &ready, prompt, PICTURE_AFTER).await?];
    let ready = Ready::new(&drafts, other).await?;
    trees.push(hidden::picture(lab, &ready, prompt, PICTURE_AFTER).await?);
    Ok(Outcome::Hidden { report, trees })
}

/// One seeded run, step by step: the step-through's prompt is one of 200 held-out worlds, picked
/// by the seed.
async fn step_through(lab: Lab<'_>, s: &Step, progress: Progress<'_>) -> Result<Outcome, Error> {
    let worlds = prompts(200);
    let prompt = worlds[(s.seed as usize) % worlds.len()].prompt();
    let outcome = match (s.method()?, s.kind.hidden()) {
        (Some(method), _) => {
            let run = run_one(
                lab.models,
                method.clone(),
                1.0,
                &prompt,
                s.seed,
                true,
                lab.clock,
            )
            .await?;
            Outcome::Step {
                method,
                hidden: None,
                prompt,
                run,
            }
        }
        (None, Some(drafter)) => {
            let run = hidden::step_through(lab, drafter, STEP_BUDGET, &prompt).await?;
            let said = HiddenSpec::greedy(drafter, STEP_BUDGET).describe(lab.lang);
            Outcome::Step {
                method: Method::Target { greedy: true },
                hidden: Some((drafter, said)),
                prompt,
                run,
            }
        }
        (None, None) => unreachable!("a step-through runs a method or a hidden-state draft"),
    };
    progress(1, 1);
    Ok(outcome)
}

/// Demo 03.2: greedy chains of `c.draft` for every γ of [`GAMMAS`] (unless `c.beside` says
/// nothing) and `c.gamma`, each against the target's own greedy output (decoded once, first).
pub async fn gamma_sweep(
    lab: Lab<'_>,
    c: &Chain,
    prompts: &[Vec<u32>],
    progress: Progress<'_>,
) -> Result<Vec<(usize, GreedyReport)>, Error> {
    let mut gammas: Vec<usize> = match c.beside {
        Beside::Lecture => GAMMAS.to_vec(),
        Beside::Nothing => Vec::new(),
    };
    if !gammas.contains(&(c.gamma as usize)) {
        gammas.push(c.gamma as usize);
        gammas.sort_unstable();
    }
    let (n, total) = (prompts.len(), prompts.len() * (gammas.len() + 1));
    let reference = target_greedy(
        lab.models,
        prompts,
        lab.clock,
        &mut part(progress, 0, n, total),
    )
    .await?;
    let mut reports = Vec::new();
    for (k, &gamma) in gammas.iter().enumerate() {
        let mut tell = part(progress, k + 1, n, total);
        let method = c.method(gamma);
        let r = decoding::greedy(lab, method, prompts, &reference, &mut tell).await?;
        reports.push((gamma, r));
    }
    Ok(reports)
}

/// The lecture's trees (unless `beside` says nothing) and the typed one (if it is not among
/// them), as widths.
fn trees_with(typed: &[usize], beside: Beside) -> Vec<Vec<usize>> {
    let lecture = match beside {
        Beside::Lecture => &TREE_CONFIGS[..],
        Beside::Nothing => &[],
    };
    let mut trees: Vec<Vec<usize>> = lecture
        .iter()
        .map(|s| tree_widths(s).expect("the lecture's trees are valid"))
        .collect();
    if !trees.iter().any(|s| s == typed) {
        trees.push(typed.to_vec());
    }
    trees
}

/// Demo 04.3: greedy trees of `t.draft` of every shape (the lecture's and the typed one), each
/// against the target's own greedy output (decoded once, first).
pub async fn tree_sweep(
    lab: Lab<'_>,
    t: &Tree,
    progress: Progress<'_>,
) -> Result<Vec<GreedyReport>, Error> {
    let trees = trees_with(&t.check()?, t.beside);
    let prompts = held_out(t.prompts);
    let (n, total) = (prompts.len(), prompts.len() * (trees.len() + 1));
    let reference = target_greedy(
        lab.models,
        &prompts,
        lab.clock,
        &mut part(progress, 0, n, total),
    )
    .await?;
    let mut reports = Vec::new();
    for (k, widths) in trees.iter().enumerate() {
        let method = Method::Expand {
            draft: t.draft.index(),
            shape: Shape::Widths(widths.clone()),
            children: Children::TopK,
            rule: TreeRule::Greedy,
        };
        let mut tell = part(progress, k + 1, n, total);
        reports.push(decoding::greedy(lab, method, &prompts, &reference, &mut tell).await?);
    }
    Ok(reports)
}

/// Demo 04.5: one tree shape of draft B verified by naive sampling and MSS with its children
/// drawn as chosen, and by MSS on the deterministic top-k children (biased, with its
/// distortion).
pub async fn verification_sweep(
    lab: Lab<'_>,
    s: &StochasticTrees,
    progress: Progress<'_>,
) -> Result<Vec<StochasticReport>, Error> {
    let widths = s.check()?;
    let prompts = sampling_prompts(s.prompts);
    let runs = [
        (Stochastic::Naive, s.children),
        (Stochastic::Mss, s.children),
        (Stochastic::Mss, Children::TopK),
    ];
    let (n, total) = (prompts.len(), prompts.len() * runs.len());
    let mut reports = Vec::new();
    for (k, (rule, children)) in runs.into_iter().enumerate() {
        let mut tell = part(progress, k, n, total);
        let shape = Shape::Widths(widths.clone());
        let r = decoding::stochastic(lab, &shape, children, rule, &prompts, s.seed, &mut tell);
        reports.push(r.await?);
    }
    Ok(reports)
}

//! Running an experiment: [`run`] is the one call per [`Experiment`] (the CLI and the page make
//! the same call), with one progress callback for the whole of it; what it returns, an
//! [`Outcome`], is what the view draws and the CLI prints. The sweeps the page shows are here:
//! every γ of demo 03.2, every tree shape of demo 04.3, the three verifications of demo 04.5
//! (the wall-clock sweep over γ is [`speedup::sweep`]).

use super::decoding::{self, GreedyReport, SampleReport, StochasticReport};
use super::params::HiddenMethod;
use super::params::{tree_widths, Chain, Draft, Experiment, Stochastic, GAMMAS, TREE_SHAPES};
use super::{acceptance, hidden, run as run_one, speedup, target_greedy};
use crate::clock::{part, Clock, Progress};
use crate::decode::engine::{Method, TreeRule};
use crate::decode::stats::Generation;
use crate::error::Error;
use crate::i18n::Lang;
use crate::likesworld::{prompts, sampling_prompts};
use crate::model::Models;
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
    Step {
        method: Method,
        /// A draft on the target's hidden states ran instead of `method`: it, and its description.
        hidden: Option<(hidden::Drafter, String)>,
        prompt: Vec<u32>,
        run: Generation,
    },
    /// A draft on the target's hidden states, and one proposal of it drawn beside the other kind
    /// of tree (static beside dynamic) for the same context.
    Hidden {
        report: hidden::HiddenReport,
        trees: Vec<hidden::Pictured>,
    },
    Methods(hidden::MethodsReport),
}

/// Runs `experiment` on `models`: one call per experiment, one progress callback for all of it;
/// the reports name their methods in `lang`.
/// The output tokens before the drawn proposal of a hidden-state draft (into the first facts).
const PICTURE_AFTER: usize = 9;

pub async fn run(
    experiment: &Experiment,
    models: &Models,
    lang: Lang,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<Outcome, Error> {
    experiment.check()?;
    let held_out = |n: usize| -> Vec<Vec<u32>> { prompts(n).iter().map(|w| w.prompt()).collect() };
    Ok(match experiment {
        Experiment::Acceptance(w) => {
            Outcome::Acceptance(acceptance::acceptance_by_kind(models, w.prompts, progress).await?)
        }
        Experiment::Greedy(c) => Outcome::Greedy(
            gamma_sweep(models, c, &held_out(c.prompts), lang, clock, progress).await?,
        ),
        Experiment::Sample(s) => Outcome::Sample(
            decoding::sample(
                models,
                s.method(),
                s.variant,
                &sampling_prompts(s.prompts),
                s.repeats,
                s.seed,
                lang,
                clock,
                progress,
            )
            .await?,
        ),
        Experiment::Tree(t) => {
            let widths = t.check()?;
            let shapes = shapes_with(&widths);
            Outcome::Tree(
                tree_sweep(
                    models,
                    t.draft,
                    &shapes,
                    &held_out(t.prompts),
                    lang,
                    clock,
                    progress,
                )
                .await?,
            )
        }
        Experiment::Stochastic(s) => {
            let widths = s.check()?;
            let prompts = sampling_prompts(s.prompts);
            Outcome::Stochastic(
                verification_sweep(
                    models, &widths, s.children, &prompts, s.seed, lang, clock, progress,
                )
                .await?,
            )
        }
        Experiment::Hidden(h) => {
            let drafts = hidden::Drafts::load(models)?;
            let prompts = held_out(h.prompts);
            let drafter = h.drafter();
            let report = hidden::evaluate(
                models, &drafts, drafter, h.budget, h.verify, &prompts, h.seed, lang, clock,
                progress,
            )
            .await?;
            // The same context drawn with this tree and with the other kind: static beside
            // dynamic.
            let other = match drafter {
                hidden::Drafter::Eagle {
                    tree: hidden::TreeKind::Dynamic,
                    ..
                } => HiddenMethod::Eagle.drafter(h.depth),
                _ => HiddenMethod::Eagle2.drafter(h.depth),
            };
            let prompt = &prompts[(h.seed as usize) % prompts.len()];
            let mut trees = Vec::new();
            for d in [drafter, other] {
                trees.push(
                    hidden::picture(models, &drafts, d, h.budget, prompt, PICTURE_AFTER, lang)
                        .await?,
                );
            }
            Outcome::Hidden { report, trees }
        }
        Experiment::Methods(m) => Outcome::Methods(
            hidden::methods(
                models,
                m.budget,
                &held_out(m.prompts),
                lang,
                clock,
                progress,
            )
            .await?,
        ),
        Experiment::Speedup(s) => Outcome::Speedup(
            speedup::speedup(models, s, &held_out(s.prompts), lang, clock, progress).await?,
        ),
        Experiment::Sweep(s) => Outcome::Sweep(
            speedup::sweep(models, s, &held_out(s.prompts), lang, clock, progress).await?,
        ),
        Experiment::Step(s) => {
            let worlds = prompts(200);
            let prompt = worlds[(s.seed as usize) % worlds.len()].prompt();
            if let Some(h) = s.drafter {
                // Medusa: all four heads; EAGLE-2: its default depth.
                let depth = if h == HiddenMethod::Medusa {
                    4
                } else {
                    hidden::DEFAULT_DEPTH
                };
                let drafter = h.drafter(depth);
                let budget = super::params::STEP_BUDGET;
                let run = hidden::step_through(models, drafter, budget, &prompt, clock).await?;
                progress(1, 1);
                return Ok(Outcome::Step {
                    method: Method::Target { greedy: true },
                    hidden: Some((
                        drafter,
                        drafter.describe(budget, hidden::Verification::Greedy, lang),
                    )),
                    prompt,
                    run,
                });
            }
            let method = s.method()?;
            let run = run_one(models, method.clone(), 1.0, &prompt, s.seed, true, clock).await?;
            progress(1, 1);
            Outcome::Step {
                method,
                hidden: None,
                prompt,
                run,
            }
        }
    })
}

/// Demo 03.2: greedy chains of `c.draft` for every γ of [`GAMMAS`] and `c.gamma`, each against
/// the target's own greedy output (decoded once, first).
pub async fn gamma_sweep(
    models: &Models,
    c: &Chain,
    prompts: &[Vec<u32>],
    lang: Lang,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<Vec<(usize, GreedyReport)>, Error> {
    let mut gammas: Vec<usize> = GAMMAS.to_vec();
    if !gammas.contains(&(c.gamma as usize)) {
        gammas.push(c.gamma as usize);
        gammas.sort_unstable();
    }
    let (n, total) = (prompts.len(), prompts.len() * (gammas.len() + 1));
    let reference = target_greedy(models, prompts, clock, &mut part(progress, 0, n, total)).await?;
    let mut reports = Vec::new();
    for (k, &gamma) in gammas.iter().enumerate() {
        let mut tell = part(progress, k + 1, n, total);
        let method = c.method(gamma);
        let r =
            decoding::greedy(models, method, prompts, &reference, lang, clock, &mut tell).await?;
        reports.push((gamma, r));
    }
    Ok(reports)
}

/// The lecture's shapes and the typed one (if it is not among them), as widths.
fn shapes_with(typed: &[usize]) -> Vec<Vec<usize>> {
    let mut shapes: Vec<Vec<usize>> = TREE_SHAPES
        .iter()
        .map(|s| tree_widths(s).expect("the lecture's shapes are valid"))
        .collect();
    if !shapes.iter().any(|s| s == typed) {
        shapes.push(typed.to_vec());
    }
    shapes
}

/// Demo 04.3: greedy trees of every shape in `shapes` from `draft`, each against the target's own
/// greedy output (decoded once, first).
pub async fn tree_sweep(
    models: &Models,
    draft: Draft,
    shapes: &[Vec<usize>],
    prompts: &[Vec<u32>],
    lang: Lang,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<Vec<GreedyReport>, Error> {
    let (n, total) = (prompts.len(), prompts.len() * (shapes.len() + 1));
    let reference = target_greedy(models, prompts, clock, &mut part(progress, 0, n, total)).await?;
    let mut reports = Vec::new();
    for (k, widths) in shapes.iter().enumerate() {
        let method = Method::Expand {
            draft: draft.index(),
            widths: widths.clone(),
            children: Children::TopK,
            rule: TreeRule::Greedy,
        };
        let mut tell = part(progress, k + 1, n, total);
        reports.push(
            decoding::greedy(models, method, prompts, &reference, lang, clock, &mut tell).await?,
        );
    }
    Ok(reports)
}

/// Demo 04.5: one tree shape of draft B verified by naive sampling and MSS with `children` drawn
/// as chosen, and by MSS on the deterministic top-k children (biased, with its distortion).
#[allow(clippy::too_many_arguments)]
pub async fn verification_sweep(
    models: &Models,
    widths: &[usize],
    children: Children,
    prompts: &[Vec<u32>],
    seed: u64,
    lang: Lang,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<Vec<StochasticReport>, Error> {
    let runs = [
        (Stochastic::Naive, children),
        (Stochastic::Mss, children),
        (Stochastic::Mss, Children::TopK),
    ];
    let (n, total) = (prompts.len(), prompts.len() * runs.len());
    let mut reports = Vec::new();
    for (k, (rule, children)) in runs.into_iter().enumerate() {
        let mut tell = part(progress, k, n, total);
        reports.push(
            decoding::stochastic(
                models, widths, children, rule, prompts, seed, lang, clock, &mut tell,
            )
            .await?,
        );
    }
    Ok(reports)
}

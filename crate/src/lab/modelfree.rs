//! Demos 05.1–05.3 and the highlighted text: the model-free drafters of [`crate::decode::free`]
//! on the three workloads, each output checked against the target's own greedy output. The two
//! rule workloads need no model; LikesWorld decodes with the trained target (and draft B beside
//! the drafters), which is why these experiments live here, with the models.

use super::context::Lab;
use super::decoding::{self as ex, GreedyReport};
use super::generate::target_greedy;
use super::lm::Cached;
use crate::clock::{Clock, Progress};
use crate::decode::free::kind::{drafter, DrafterKind, Settings, EARLIER};
use crate::decode::free::workloads::{Kind, RuleTarget, Workload};
use crate::decode::free::{generate, Limits};
use crate::decode::stats::{Generation, Source, Stats};
use crate::decode::{ChainRule, LanguageModel, Method, Speculation};
use crate::error::{Error, Range, Text};
use crate::i18n::Lang;
use crate::model::Models;
use crate::sampling::Dist;

/// The target of a workload's request: its rule, or the LikesWorld target.
enum Target<'m> {
    Rule(RuleTarget),
    Model(Cached<'m>),
}

impl LanguageModel for Target<'_> {
    fn vocab(&self) -> usize {
        match self {
            Target::Rule(t) => t.vocab(),
            Target::Model(t) => t.vocab(),
        }
    }

    async fn score(&mut self, context: &[u32], tree: &Speculation) -> Result<Vec<Dist>, Error> {
        match self {
            Target::Rule(t) => t.score(context, tree).await,
            Target::Model(t) => t.score(context, tree).await,
        }
    }
}

fn target<'m>(w: &Workload, i: usize, models: Option<&'m Models>) -> Result<Target<'m>, Error> {
    let r = &w.requests[i];
    match (w.kind, models) {
        (Kind::Likesworld, Some(m)) => Ok(Target::Model(Cached::new(&m.target, &m.device, 1.0))),
        (Kind::Likesworld, None) => Err(Error::Unavailable {
            what: "LikesWorld target",
            why: Text::new("the models are not loaded", "模型尚未加载"),
        }),
        _ => Ok(Target::Rule(RuleTarget::new(
            w.vocab(),
            r.prompt.len(),
            r.output.clone(),
        ))),
    }
}

/// One drafter on one workload.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Row {
    pub workload: Kind,
    pub drafter: DrafterKind,
    pub budget: usize,
    pub requests: usize,
    /// Outputs identical to the target's own greedy output.
    pub identical: usize,
    pub tokens: usize,
    pub target_calls: usize,
    pub tokens_per_call: f64,
    pub verified_nodes_per_call: f64,
    pub accepted_node_fraction: f64,
    /// Output tokens by source (target, request, earlier, jacobi, pool).
    pub sources: Vec<(Source, usize)>,
}

/// The reference outputs: the rule's for the rule workloads, the target's own greedy decoding
/// for LikesWorld.
pub async fn references(
    w: &Workload,
    models: Option<&Models>,
    clock: Clock<'_>,
) -> Result<Vec<Vec<u32>>, Error> {
    match (w.kind, models) {
        (Kind::Likesworld, Some(m)) => {
            let runs = target_greedy(m, &prompts(w), clock, &mut |_, _| {}).await?;
            Ok(runs.into_iter().map(|g| g.output).collect())
        }
        _ => Ok(w.requests.iter().map(|r| r.output.clone()).collect()),
    }
}

/// Runs the drafter of `s` over every request of `w`, in order (the global index learns each
/// finished output). Returns the row and the generations.
pub async fn run(
    s: &Settings,
    w: &Workload,
    reference: &[Vec<u32>],
    models: Option<&Models>,
    trace: bool,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<(Row, Vec<Generation>), Error> {
    s.check()?;
    let mut d = drafter(s, w);
    let limits = Limits {
        max_len: w.max_len,
        eos: Some(w.eos),
        trace,
    };
    let mut stats = Stats::default();
    let mut identical = 0;
    let mut gens = Vec::with_capacity(s.requests);
    let mut sources: Vec<(Source, usize)> = Vec::new();
    for (i, (r, want)) in w
        .requests
        .iter()
        .zip(reference)
        .take(s.requests)
        .enumerate()
    {
        let mut t = target(w, i, models)?;
        let g = generate(&mut t, d.as_mut(), &r.prompt, limits, clock).await?;
        identical += usize::from(g.output == *want);
        stats.add(&g.stats);
        for &src in &g.sources {
            match sources.iter_mut().find(|(k, _)| *k == src) {
                Some((_, n)) => *n += 1,
                None => sources.push((src, 1)),
            }
        }
        gens.push(g);
        progress(i + 1, s.requests);
    }
    let row = Row {
        workload: w.kind,
        drafter: s.drafter,
        budget: s.budget,
        requests: gens.len(),
        identical,
        tokens: stats.tokens,
        target_calls: stats.target_calls,
        tokens_per_call: stats.tokens_per_call(),
        verified_nodes_per_call: stats.verified_per_call(),
        accepted_node_fraction: stats.accepted_node_fraction(),
        sources,
    };
    Ok((row, gens))
}

/// Demo 05.1: every drafter on every workload, beside draft B with γ 6 on LikesWorld.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TableReport {
    pub budget: usize,
    pub requests: usize,
    pub rows: Vec<Row>,
    /// Draft B, γ 6, greedy, on the LikesWorld requests (absent without the models).
    pub draft_b: Option<GreedyReport>,
}

pub async fn table(
    models: Option<&Models>,
    requests: usize,
    budget: usize,
    seed: u64,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<TableReport, Error> {
    let kinds: Vec<Kind> = Kind::ALL
        .into_iter()
        .filter(|&k| k != Kind::Likesworld || models.is_some())
        .collect();
    let total = kinds.len() * DrafterKind::ALL.len() + usize::from(models.is_some());
    let mut rows = Vec::new();
    let mut draft_b = None;
    for &k in &kinds {
        let w = Workload::new(k, requests, EARLIER, seed);
        let (reference, target_runs) = match (k, models) {
            (Kind::Likesworld, Some(m)) => {
                let runs = target_greedy(m, &prompts(&w), clock, &mut |_, _| {}).await?;
                (runs.iter().map(|g| g.output.clone()).collect(), Some(runs))
            }
            _ => (references(&w, models, clock).await?, None),
        };
        let settings = DrafterKind::ALL.map(|d| Settings::new(k, d, budget, requests, seed));
        let done = rows.len();
        rows.extend(
            run_all(&settings, &w, &reference, models, clock, &mut |i| {
                progress(done + i, total)
            })
            .await?,
        );
        // Draft B, γ 6 on the same prompts, against the same reference runs.
        if let (Some(m), Some(runs)) = (models, target_runs) {
            let method = Method::Chain {
                draft: 1,
                gamma: 6,
                rule: ChainRule::Greedy,
            };
            // The page words this row itself; the report's method name is the CLI's English.
            let lab = Lab::new(m, Lang::En, clock);
            let r = ex::greedy(lab, method, &prompts(&w), &runs, &mut |_, _| {}).await?;
            draft_b = Some(r);
        }
    }
    progress(total, total);
    Ok(TableReport {
        budget,
        requests,
        rows,
        draft_b,
    })
}

fn prompts(w: &Workload) -> Vec<Vec<u32>> {
    w.requests.iter().map(|r| r.prompt.clone()).collect()
}

/// Runs each of `settings` over `w` in turn; `progress` hears how many are done.
async fn run_all(
    settings: &[Settings],
    w: &Workload,
    reference: &[Vec<u32>],
    models: Option<&Models>,
    clock: Clock<'_>,
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<Row>, Error> {
    let mut rows = Vec::with_capacity(settings.len());
    for s in settings {
        rows.push(
            run(s, w, reference, models, false, clock, &mut |_, _| {})
                .await?
                .0,
        );
        progress(rows.len());
    }
    Ok(rows)
}

/// Demo 05.2: the node budget swept for one tree drafter on one workload.
pub const SWEEP: [usize; 8] = [1, 2, 4, 8, 12, 16, 32, 48];

pub async fn budget_sweep(
    models: Option<&Models>,
    workload: Kind,
    drafter: DrafterKind,
    requests: usize,
    seed: u64,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<Vec<Row>, Error> {
    let w = Workload::new(workload, requests, EARLIER, seed);
    let reference = references(&w, models, clock).await?;
    let settings = SWEEP.map(|b| Settings::new(workload, drafter, b, requests, seed));
    run_all(&settings, &w, &reference, models, clock, &mut |i| {
        progress(i, SWEEP.len())
    })
    .await
}

/// Demo 05.3: Jacobi from a fixed token and from random tokens, and Lookahead, on one workload.
pub async fn jacobi_inits(
    models: Option<&Models>,
    workload: Kind,
    window: usize,
    requests: usize,
    seed: u64,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<Vec<(String, Row)>, Error> {
    let w = Workload::new(workload, requests, EARLIER, seed);
    let reference = references(&w, models, clock).await?;
    let jacobi = Settings::new(workload, DrafterKind::Jacobi, window, requests, seed);
    let settings = [
        Settings {
            fixed_init: true,
            ..jacobi
        },
        jacobi,
        Settings::new(workload, DrafterKind::Lookahead, 2 * window, requests, seed),
    ];
    let rows = run_all(&settings, &w, &reference, models, clock, &mut |i| {
        progress(i, settings.len())
    })
    .await?;
    let names = ["fixed", "random", "lookahead (random)"].map(String::from);
    Ok(names.into_iter().zip(rows).collect())
}

/// One request's output, token by token, with where each token came from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Highlight {
    pub prompt: Vec<String>,
    pub output: Vec<String>,
    pub sources: Vec<Source>,
    /// Tokens decided by each target call, in order.
    pub steps: Vec<usize>,
    pub identical: bool,
    pub row: Row,
}

/// Runs the requests up to `request` (so the global index holds the earlier ones) and shows the
/// last.
pub async fn highlight(
    models: Option<&Models>,
    s: &Settings,
    request: usize,
    clock: Clock<'_>,
) -> Result<Highlight, Error> {
    let last = (s.requests.max(1) - 1) as f64;
    Range::new("request", 0.0, last).check(request as f64)?;
    let w = Workload::new(s.workload, s.requests, EARLIER, s.seed);
    let reference = references(&w, models, clock).await?;
    let upto = Settings {
        requests: request + 1,
        ..*s
    };
    let (row, gens) = run(&upto, &w, &reference, models, true, clock, &mut |_, _| {}).await?;
    let g = gens.last().expect("at least one request");
    Ok(Highlight {
        prompt: w.text(&w.requests[request].prompt),
        output: w.text(&g.output),
        sources: g.sources.clone(),
        steps: g
            .trace
            .iter()
            .scan(0, |done, t| {
                // The last step may decide tokens past the end of the output: cut them.
                let n = t.emitted.len().min(g.output.len() - *done);
                *done += n;
                Some(n)
            })
            .collect(),
        identical: g.output == reference[request],
        row,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Named;
    use burn::tensor::read_sync;

    const CLOCK: Clock<'static> = &|| 0.0;

    fn row(workload: Kind, drafter: DrafterKind, budget: usize) -> Row {
        let s = Settings {
            workload,
            drafter,
            budget,
            requests: 30,
            seed: 1,
            fixed_init: false,
        };
        let w = Workload::new(workload, 30, EARLIER, 1);
        let reference = read_sync(references(&w, None, CLOCK)).unwrap();
        read_sync(run(&s, &w, &reference, None, false, CLOCK, &mut |_, _| {}))
            .unwrap()
            .0
    }

    #[test]
    fn every_drafter_reproduces_the_rule_output_on_both_rule_workloads() {
        for k in [Kind::CodeRewrite, Kind::Agent] {
            for d in DrafterKind::ALL {
                for budget in [1, 3, 8, 48] {
                    let r = row(k, d, budget);
                    assert_eq!(r.identical, r.requests, "{k:?} {d:?} {budget}");
                    let n: usize = r.sources.iter().map(|s| s.1).sum();
                    assert_eq!(n, r.tokens);
                }
            }
        }
    }

    #[test]
    fn the_workloads_favour_the_drafters_the_lecture_says() {
        // Code rewrite: Prompt Lookup decides several tokens per call.
        let pl = row(Kind::CodeRewrite, DrafterKind::PromptLookup, 8);
        assert!(pl.tokens_per_call > 3.0, "{pl:?}");
        // Agent: the two indices merged beat either alone.
        let both = row(Kind::Agent, DrafterKind::Both, 8);
        let pl = row(Kind::Agent, DrafterKind::PromptLookup, 8);
        let global = row(Kind::Agent, DrafterKind::Suffix, 8);
        assert!(both.tokens_per_call > pl.tokens_per_call, "{both:?} {pl:?}");
        assert!(
            both.tokens_per_call > global.tokens_per_call,
            "{both:?} {global:?}"
        );
        // Jacobi on a rule target gains (almost) nothing.
        let j = row(Kind::Agent, DrafterKind::Jacobi, 6);
        assert!(j.tokens_per_call < 1.2, "{j:?}");
    }

    #[test]
    fn a_larger_budget_decides_more_per_call_and_accepts_a_smaller_fraction() {
        let small = row(Kind::Agent, DrafterKind::Suffix, 1);
        let large = row(Kind::Agent, DrafterKind::Suffix, 48);
        assert!(large.tokens_per_call > small.tokens_per_call);
        assert!(large.accepted_node_fraction < small.accepted_node_fraction);
    }

    #[test]
    fn bad_settings_are_named() {
        let mut s = Settings {
            workload: Kind::Agent,
            drafter: DrafterKind::Suffix,
            budget: 0,
            requests: 3,
            seed: 0,
            fixed_init: false,
        };
        assert!(s.check().unwrap_err().to_string().contains("budget"));
        s.budget = 4;
        s.requests = 100_000;
        assert!(s.check().unwrap_err().to_string().contains("requests"));
        assert!(DrafterKind::parse("medusa")
            .unwrap_err()
            .to_string()
            .contains("\"medusa\""));
        let w = Workload::new(Kind::Likesworld, 2, 0, 0);
        assert!(target(&w, 0, None).is_err());
    }

    #[test]
    fn the_highlight_names_every_token_source() {
        let s = Settings {
            workload: Kind::Agent,
            drafter: DrafterKind::Both,
            budget: 8,
            requests: 10,
            seed: 4,
            fixed_init: false,
        };
        let h = read_sync(highlight(None, &s, 9, CLOCK)).unwrap();
        assert!(h.identical);
        assert_eq!(h.output.len(), h.sources.len());
        assert_eq!(h.steps.iter().sum::<usize>(), h.output.len());
        assert!(h.sources.contains(&Source::Earlier) && h.sources.contains(&Source::Request));
        assert!(read_sync(highlight(None, &s, 10, CLOCK)).is_err());
    }
}

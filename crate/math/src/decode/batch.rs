//! Many generations at once, each model call batched across them (continuous batching, as
//! serving systems do).
//!
//! An experiment decodes hundreds of prompts. One at a time, every call feeds a tiny model a
//! token or a few, and the per-call overhead (launching each op; on a GPU, each dispatch and
//! read-back) is the whole cost. [`generate_all`] runs every prompt's [`generate`] loop as its own
//! task: a task's model call queues a request and waits; when every task waits, the model with
//! the most requests runs them all in one call ([`Batched::score_rows`]) and the tasks go on.
//! The loops are exactly the one-at-a-time loops, so a batched run decides what the separate
//! runs decide (bit for bit on the toy LM; on the burn models up to float rounding, since a
//! batched matmul may sum in another order).
//!
//! Call times in the statistics of a batched run include waiting for the other tasks: they are
//! not per-call latencies (the wall-clock experiment, `lab::speedup`, times single runs at batch
//! 1 and, at a larger batch, times each kind of call apart with `model::measure::time_call`).

use super::engine::{generate, Config};
use super::{Chance, Generation, LanguageModel, Speculation};
use crate::clock::Clock;
use crate::error::Error;
use crate::sampling::Dist;
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// One sequence's call: `LanguageModel::score(context, tree)` on row `row`.
#[derive(Debug, Clone)]
pub struct Request {
    pub row: usize,
    pub context: Vec<u32>,
    pub tree: Speculation,
}

/// A model that scores many sequences (rows) in one call, each on its own cache.
#[allow(async_fn_in_trait)] // generic use only, as `LanguageModel`
pub trait Batched {
    fn vocab(&self) -> usize;
    /// A new sequence with an empty cache; returns its row id.
    fn open(&mut self) -> usize;
    /// The sequence is done: its cache may be dropped.
    fn close(&mut self, row: usize);
    /// `score(context, tree)` for every request (at most one per row), in one call.
    async fn score_rows(&mut self, requests: &[Request]) -> Result<Vec<Vec<Dist>>, Error>;
}

/// Any [`LanguageModel`] as a [`Batched`] one, one instance per row, called in turn (no speed-up;
/// it lets the engine's exact tests cover [`generate_all`]).
pub struct Rows<M, F> {
    make: F,
    rows: Vec<Option<M>>,
}

impl<M: LanguageModel, F: FnMut() -> M> Rows<M, F> {
    pub fn new(make: F) -> Self {
        Rows {
            make,
            rows: Vec::new(),
        }
    }
}

impl<M: LanguageModel, F: FnMut() -> M> Batched for Rows<M, F> {
    fn vocab(&self) -> usize {
        self.rows.iter().flatten().next().map_or(0, M::vocab)
    }

    fn open(&mut self) -> usize {
        self.rows.push(Some((self.make)()));
        self.rows.len() - 1
    }

    fn close(&mut self, row: usize) {
        self.rows[row] = None;
    }

    async fn score_rows(&mut self, requests: &[Request]) -> Result<Vec<Vec<Dist>>, Error> {
        let mut out = Vec::with_capacity(requests.len());
        for r in requests {
            let m = self.rows[r.row].as_mut().expect("an open row");
            out.push(m.score(&r.context, &r.tree).await?);
        }
        Ok(out)
    }
}

/// One generation of a batched run: its prompt and its random choices.
pub struct Job<C> {
    pub prompt: Vec<u32>,
    pub chance: C,
}

/// The models and the requests waiting for them.
struct Hub<B> {
    /// `None` while the model's batch runs.
    models: Vec<Option<B>>,
    /// Per model, the queued requests.
    queued: Vec<Vec<Request>>,
    /// Answers not yet picked up, by (model, row).
    answers: HashMap<(usize, usize), Vec<Dist>>,
}

/// A task's view of one model: a [`LanguageModel`] whose calls wait for the batch.
struct Handle<'h, B: Batched> {
    hub: &'h RefCell<Hub<B>>,
    model: usize,
    row: usize,
    vocab: usize,
}

impl<B> Hub<B> {
    fn model(&mut self, m: usize) -> &mut B {
        self.models[m]
            .as_mut()
            .expect("no task runs during a batch")
    }
}

impl<'h, B: Batched> Handle<'h, B> {
    fn open(hub: &'h RefCell<Hub<B>>, model: usize) -> Self {
        let mut h = hub.borrow_mut();
        let row = h.model(model).open();
        let vocab = h.model(model).vocab();
        Handle {
            hub,
            model,
            row,
            vocab,
        }
    }
}

impl<B: Batched> Drop for Handle<'_, B> {
    fn drop(&mut self) {
        self.hub.borrow_mut().model(self.model).close(self.row);
    }
}

impl<B: Batched> LanguageModel for Handle<'_, B> {
    fn vocab(&self) -> usize {
        self.vocab
    }

    async fn score(&mut self, context: &[u32], tree: &Speculation) -> Result<Vec<Dist>, Error> {
        self.hub.borrow_mut().queued[self.model].push(Request {
            row: self.row,
            context: context.to_vec(),
            tree: tree.clone(),
        });
        let key = (self.model, self.row);
        Ok(
            poll_fn(|_| match self.hub.borrow_mut().answers.remove(&key) {
                Some(a) => Poll::Ready(a),
                None => Poll::Pending,
            })
            .await,
        )
    }
}

type Task<'h> = Pin<Box<dyn Future<Output = Result<Generation, Error>> + 'h>>;

/// Runs [`generate`] for every job with `models[0]` as the target and the others as the drafts
/// (in that order), at most `max_rows` jobs at a time, batching every model call across them.
/// Returns the generations in the jobs' order; `progress(done, total)` after each.
pub async fn generate_all<B: Batched, C: Chance>(
    models: Vec<B>,
    jobs: Vec<Job<C>>,
    config: &Config,
    max_rows: usize,
    clock: Clock<'_>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Generation>, Error> {
    let n_models = models.len();
    assert!(n_models > 0, "a target");
    let hub = RefCell::new(Hub {
        models: models.into_iter().map(Some).collect(),
        queued: vec![Vec::new(); n_models],
        answers: HashMap::new(),
    });
    let total = jobs.len();
    let mut waiting = jobs.into_iter().enumerate();
    let mut running: Vec<(usize, Task<'_>)> = Vec::new();
    let mut done: Vec<Option<Generation>> = (0..total).map(|_| None).collect();
    let mut finished = 0;
    let hub = &hub;
    // Tasks are polled with a waker that does nothing: a task only ever waits for an answer, and
    // every task is polled again after each batch.
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        // Admit new jobs when at most half the rows are busy: joining sequences bring their
        // whole prompt, so they are best admitted together.
        if running.len() <= max_rows / 2 {
            for (i, job) in waiting.by_ref().take(max_rows.max(1) - running.len()) {
                let task: Task<'_> = Box::pin(async move {
                    let mut target = Handle::open(hub, 0);
                    let mut drafts: Vec<_> = (1..n_models).map(|m| Handle::open(hub, m)).collect();
                    let mut chance = job.chance;
                    let prompt = job.prompt;
                    generate(
                        &mut target,
                        &mut drafts,
                        &prompt,
                        config,
                        &mut chance,
                        clock,
                    )
                    .await
                });
                running.push((i, task));
            }
        }
        if running.is_empty() {
            break;
        }
        let mut still = Vec::with_capacity(running.len());
        for (i, mut task) in running {
            match task.as_mut().poll(&mut cx) {
                Poll::Ready(g) => {
                    done[i] = Some(g?);
                    finished += 1;
                    progress(finished, total);
                }
                Poll::Pending => still.push((i, task)),
            }
        }
        running = still;
        if running.is_empty() {
            continue;
        }
        // Every running task waits for a model: run the one most of them wait for.
        let (model, requests) = {
            let mut h = hub.borrow_mut();
            let model = (0..n_models)
                .max_by_key(|&m| (h.queued[m].len(), std::cmp::Reverse(m)))
                .expect("a model");
            (model, std::mem::take(&mut h.queued[model]))
        };
        assert!(
            !requests.is_empty(),
            "every waiting task has queued a request"
        );
        // The batch runs with the hub released (a GPU read-back awaits the browser); tasks are
        // not polled meanwhile, so nothing else touches the model.
        let mut batched = hub.borrow_mut().models[model].take().expect("idle");
        let answers = batched.score_rows(&requests).await;
        hub.borrow_mut().models[model] = Some(batched);
        let mut h = hub.borrow_mut();
        for (r, a) in requests.iter().zip(answers?) {
            h.answers.insert((model, r.row), a);
        }
    }
    Ok(done
        .into_iter()
        .map(|g| g.expect("every job ran"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::chance::Seeded;
    use crate::decode::engine::{ChainRule, Method, TreeRule};
    use crate::decode::ready;
    use crate::decode::toy::ToyModel;
    use crate::decode::Shape;
    use crate::sampling::multi::Children;
    use crate::sampling::speculative::Variant;
    use crate::toy::{ToyConfig, ToyLm, PROMPT};

    /// The batched run decides exactly what the runs one by one decide, and counts the same,
    /// whatever the number of rows at once (1: no batching; 3: jobs admitted in waves).
    #[test]
    fn a_batched_run_equals_the_runs_one_by_one() {
        let lm = ToyLm::new(&ToyConfig {
            seed: 3,
            draft_noise: 1.5,
            ..ToyConfig::default()
        });
        let lm = &lm;
        let prompt: Vec<u32> = PROMPT.iter().map(|&t| t as u32).collect();
        let clock: Clock<'_> = &|| 0.0;
        let methods = [
            Method::Chain {
                draft: 0,
                gamma: 3,
                rule: ChainRule::Sample(Variant::Correct.into()),
            },
            Method::Chain {
                draft: 0,
                gamma: 2,
                rule: ChainRule::Greedy,
            },
            Method::Expand {
                draft: 0,
                shape: Shape::Widths(vec![2, 1]),
                children: Children::Iid,
                rule: TreeRule::Mss,
            },
            Method::Target { greedy: false },
        ];
        for method in methods {
            let config = Config {
                method,
                max_len: prompt.len() + 12,
                eos: None,
                trace: false,
            };
            let alone: Vec<Generation> = (0..7)
                .map(|seed| {
                    let mut target = ToyModel { lm, draft: false };
                    let mut drafts = [ToyModel { lm, draft: true }];
                    let mut chance = Seeded::new(seed);
                    let run = generate(
                        &mut target,
                        &mut drafts,
                        &prompt,
                        &config,
                        &mut chance,
                        clock,
                    );
                    ready(run).unwrap()
                })
                .collect();
            for max_rows in [1, 3, 64] {
                let models = [false, true].map(|draft| Rows::new(move || ToyModel { lm, draft }));
                let jobs = (0..7)
                    .map(|seed| Job {
                        prompt: prompt.clone(),
                        chance: Seeded::new(seed),
                    })
                    .collect();
                let mut calls = Vec::new();
                let mut progress = |d, t| calls.push((d, t));
                let run =
                    generate_all(models.into(), jobs, &config, max_rows, clock, &mut progress);
                let batched = ready(run).unwrap();
                assert_eq!(batched, alone, "{:?}, {max_rows} rows", config.method);
                assert_eq!(calls, (1..=7).map(|d| (d, 7)).collect::<Vec<_>>());
            }
        }
    }
}

//! The benchmark's suite: experiments 1–5 at the lecture's sizes, as the page and the CLI time
//! them (natively `specdec decode-bench`, in the page `tests/bench.mjs` through the
//! `decoding_bench_suite` export). Each is one call of `lab::experiment::run`.

use super::choices::Draft;
use super::experiments::{Chain, Experiment, Sampling, StochasticTrees, Tree, Worlds};

/// Experiments 1–5 at the lecture's sizes (the goal: under 10 s in all on a CPU).
pub fn bench_suite() -> Vec<(&'static str, Experiment)> {
    let chain = |draft, prompts| Chain {
        draft,
        prompts,
        ..Chain::default()
    };
    vec![
        (
            "1 acceptance by kind, 200 worlds",
            Experiment::Acceptance(Worlds { prompts: 200 }),
        ),
        (
            "2 greedy chains, draft A, γ 1 2 4 6, 200 prompts",
            Experiment::Greedy(chain(Draft::A, 200)),
        ),
        (
            "2 greedy chains, draft B, γ 1 2 4 6, 200 prompts",
            Experiment::Greedy(chain(Draft::B, 200)),
        ),
        (
            "3 sampling, B γ 4, 200 × 3 (+ target alone)",
            Experiment::Sample(Sampling {
                prompts: 200,
                repeats: 3,
                ..Sampling::default()
            }),
        ),
        (
            "4 greedy trees, 6 shapes, 100 prompts",
            Experiment::Tree(Tree {
                prompts: 100,
                ..Tree::default()
            }),
        ),
        (
            "5 naive / MSS / top-k trees ⟨1,1,3,1⟩, 100",
            Experiment::Stochastic(StochasticTrees {
                config: "<1,1,3,1>".into(),
                prompts: 100,
                ..StochasticTrees::default()
            }),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_benchmark_experiment_round_trips_as_the_page_sends_it_back() {
        for (name, e) in bench_suite() {
            let back: Experiment =
                serde_json::from_value(serde_json::to_value(&e).unwrap()).unwrap();
            assert_eq!(back, e, "{name}");
            e.check().unwrap();
        }
    }
}

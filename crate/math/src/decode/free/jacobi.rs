//! Jacobi iteration and Lookahead decoding (lecture §5.3, demo 05.3; Fu et al. 2024).
//!
//! Jacobi: a window of W guesses for the next W positions hangs off the context as a chain. One
//! target call predicts every position "as if the guesses before it were right"; VerifyGreedy
//! keeps the guesses that turn out right plus one token, and the predictions past them become
//! the next window (padded with the initial guess). Started from one token repeated, the guesses
//! are conditioned on a wrong token and the window stays one position behind: one token per call.
//!
//! Lookahead keeps the trajectory: the guesses at consecutive positions in consecutive
//! iterations, read along the diagonal, form n-grams; a pool keyed by first token collects
//! them. Each call verifies, beside the Jacobi window (the lookahead branch), the pooled n-grams
//! that start with the context's last token (the verification branch), in the same tree.

use std::collections::{HashMap, VecDeque};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::Drafter;
use crate::decode::{Proposal, Source};
use crate::sampling::{argmax, Dist};

/// How a window is filled where there is no prediction yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Init {
    /// One token repeated.
    Fixed(u32),
    /// Uniform over the vocabulary, from a seed.
    Random(u64),
}

/// The Lookahead pool's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pool {
    /// n-gram length (≥ 2).
    pub n: usize,
    /// Candidates verified per call (the most recent n-grams for the key).
    pub candidates: usize,
}

/// The Jacobi / Lookahead drafter.
#[derive(Debug, Clone)]
pub struct Jacobi {
    pub window: usize,
    pub pool: Option<Pool>,
    vocab: usize,
    init: Init,
    rng: StdRng,
    /// The current guesses and the absolute position of the first.
    guesses: Vec<u32>,
    start: usize,
    /// Window chain nodes of the last proposal.
    nodes: Vec<usize>,
    /// Earlier windows (absolute start, guesses), newest last, for the diagonal n-grams.
    history: VecDeque<(usize, Vec<u32>)>,
    ngrams: HashMap<u32, VecDeque<Vec<u32>>>,
}

/// n-grams kept per first token.
const POOL_PER_KEY: usize = 16;

impl Jacobi {
    pub fn new(window: usize, init: Init, pool: Option<Pool>, vocab: usize) -> Jacobi {
        let seed = match init {
            Init::Random(s) => s,
            Init::Fixed(_) => 0,
        };
        Jacobi {
            window,
            pool,
            vocab,
            init,
            rng: StdRng::seed_from_u64(seed),
            guesses: Vec::new(),
            start: usize::MAX,
            nodes: Vec::new(),
            history: VecDeque::new(),
            ngrams: HashMap::new(),
        }
    }

    fn fill(&mut self) -> u32 {
        match self.init {
            Init::Fixed(t) => t,
            Init::Random(_) => self.rng.random_range(0..self.vocab as u32),
        }
    }

    /// n-grams of the pool starting with `token`, most recent first.
    pub fn pooled(&self, token: u32) -> Vec<Vec<u32>> {
        self.ngrams
            .get(&token)
            .map(|q| q.iter().rev().cloned().collect())
            .unwrap_or_default()
    }

    fn remember(&mut self, gram: Vec<u32>) {
        let q = self.ngrams.entry(gram[0]).or_default();
        if let Some(i) = q.iter().position(|g| *g == gram) {
            q.remove(i);
        }
        q.push_back(gram);
        if q.len() > POOL_PER_KEY {
            q.pop_front();
        }
    }

    /// The guess at absolute position `pos` in the window `back` iterations ago (0: current).
    fn guess_at(&self, back: usize, pos: usize) -> Option<u32> {
        let (s, w) = if back == 0 {
            (self.start, &self.guesses)
        } else {
            let h = self.history.get(self.history.len().checked_sub(back)?)?;
            (h.0, &h.1)
        };
        w.get(pos.checked_sub(s)?).copied()
    }
}

impl Drafter for Jacobi {
    fn propose(&mut self, ctx: &[u32], _prompt: usize, depth: usize) -> Proposal {
        if self.start != ctx.len() {
            // A new request, or a window that no longer lines up: start over.
            self.start = ctx.len();
            self.guesses.clear();
            self.history.clear();
        }
        while self.guesses.len() < self.window {
            let t = self.fill();
            self.guesses.push(t);
        }
        let mut p = Proposal::empty();
        self.nodes.clear();
        let mut at = 0;
        for &t in self.guesses.iter().take(depth) {
            let (node, _) = p.offer(at, t, Source::Jacobi);
            self.nodes.push(node);
            at = node + 1;
        }
        if let (Some(pool), Some(&last)) = (self.pool, ctx.last()) {
            for gram in self.pooled(last).into_iter().take(pool.candidates) {
                let mut at = 0;
                for &t in gram[1..].iter().take(depth) {
                    at = p.offer(at, t, Source::Pool).0 + 1;
                }
            }
        }
        p
    }

    fn observe(&mut self, _ctx: &[u32], _proposal: &Proposal, p: &[Dist], emitted: &[u32]) {
        // z[i]: the target's token for position start + i given the guesses before it.
        let z: Vec<u32> = std::iter::once(0)
            .chain(self.nodes.iter().map(|n| n + 1))
            .map(|at| argmax(&p[at]) as u32)
            .collect();
        if let Some(pool) = self.pool {
            // Diagonal n-grams: older guesses at earlier positions, ending in this prediction.
            for (end, &last) in z.iter().enumerate().skip(1) {
                let first = (self.start + end).checked_sub(pool.n - 1);
                let Some(first) = first else { continue };
                let gram: Option<Vec<u32>> = (0..pool.n - 1)
                    .map(|j| self.guess_at(pool.n - 2 - j, first + j))
                    .chain(std::iter::once(Some(last)))
                    .collect();
                if let Some(g) = gram {
                    self.remember(g);
                }
            }
            self.history.push_back((self.start, self.guesses.clone()));
            if self.history.len() > pool.n {
                self.history.pop_front();
            }
        }
        let m = emitted.len();
        self.start += m;
        self.guesses = z.get(m..).map(<[u32]>::to_vec).unwrap_or_default();
        self.guesses.truncate(self.window);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::free::workloads::RuleTarget;
    use crate::decode::free::{generate, Limits};
    use crate::decode::ready;

    const CLOCK: crate::clock::Clock<'static> = &|| 0.0;

    fn rule(expected: &[u32]) -> RuleTarget {
        RuleTarget::new(50, 1, expected.to_vec())
    }

    #[test]
    fn a_window_of_right_guesses_is_accepted_whole() {
        // The target's output is 10 11 12 …; prime the window with the truth.
        let out: Vec<u32> = (10..30).collect();
        let mut t = rule(&out);
        let mut j = Jacobi::new(4, Init::Fixed(0), None, 50);
        j.start = 1;
        j.guesses = vec![10, 11, 12, 13];
        let limits = Limits {
            max_len: 21,
            eos: None,
            trace: false,
        };
        let g = ready(generate(&mut t, &mut j, &[0], limits, CLOCK)).unwrap();
        assert_eq!(g.output, out);
        assert_eq!(g.stats.accepted[4], 1, "{:?}", g.stats.accepted);
    }

    #[test]
    fn the_rule_target_converges_one_token_per_iteration_at_worst() {
        // A rule target predicts garbage off its path, so Jacobi gains only by luck.
        let out: Vec<u32> = (10..40).collect();
        for init in [Init::Fixed(0), Init::Random(3)] {
            let mut t = rule(&out);
            let mut j = Jacobi::new(
                5,
                init,
                Some(Pool {
                    n: 3,
                    candidates: 4,
                }),
                50,
            );
            let limits = Limits {
                max_len: 31,
                eos: None,
                trace: false,
            };
            let g = ready(generate(&mut t, &mut j, &[0], limits, CLOCK)).unwrap();
            assert_eq!(g.output, out);
        }
    }

    #[test]
    fn lookahead_pools_diagonal_ngrams_and_reuses_them() {
        // A target that repeats 1 2 3 4 forever (each token determined by the one before): the
        // trajectory's n-grams are right, and once pooled they are accepted.
        struct Cycle;
        impl crate::decode::LanguageModel for Cycle {
            fn vocab(&self) -> usize {
                5
            }
            async fn score(
                &mut self,
                ctx: &[u32],
                tree: &crate::decode::Speculation,
            ) -> Result<Vec<Dist>, crate::Error> {
                let next = |t: u32| crate::sampling::one_hot(5, (t % 4 + 1) as usize);
                let mut out = vec![next(*ctx.last().unwrap())];
                out.extend(tree.tokens.iter().map(|&t| next(t)));
                Ok(out)
            }
        }
        let mut plain = Jacobi::new(3, Init::Fixed(0), None, 5);
        let mut ahead = Jacobi::new(
            3,
            Init::Fixed(0),
            Some(Pool {
                n: 3,
                candidates: 4,
            }),
            5,
        );
        let limits = Limits {
            max_len: 41,
            eos: None,
            trace: false,
        };
        let a = ready(generate(&mut Cycle, &mut plain, &[4], limits, CLOCK)).unwrap();
        let b = ready(generate(&mut Cycle, &mut ahead, &[4], limits, CLOCK)).unwrap();
        assert_eq!(a.output, b.output);
        assert_eq!(&a.output[..5], &[1, 2, 3, 4, 1]);
        assert!(
            ahead.pooled(1).contains(&vec![1, 2, 3]),
            "{:?}",
            ahead.ngrams
        );
        assert!(
            b.stats.target_calls < a.stats.target_calls,
            "{} {}",
            b.stats.target_calls,
            a.stats.target_calls
        );
        assert!(b.sources.contains(&Source::Pool));
    }
}

//! Every random choice the decoding engine makes goes through [`Chance`]: a token drawn from a
//! distribution, or an acceptance test "u < a". Real runs use [`Seeded`] (the same seed replays
//! the same run on every backend, as far as the models' arithmetic agrees). [`enumerate`] runs
//! the engine once per branch of its choices, with each branch's probability: on the toy LM,
//! whose models are exact tables, that is the exact output distribution of the engine itself.

use crate::sampling::sample;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

pub trait Chance {
    /// Draws an index from `dist` (non-negative weights with a positive sum).
    fn draw(&mut self, dist: &[f64]) -> usize;
    /// Accepts with probability `a` (clamped to [0, 1]); returns the decision and the uniform
    /// number u it compared (accept iff u < a).
    fn accept(&mut self, a: f64) -> (bool, f64);
}

/// A seeded generator (rand's StdRng).
pub struct Seeded(StdRng);

impl Seeded {
    pub fn new(seed: u64) -> Seeded {
        Seeded(StdRng::seed_from_u64(seed))
    }
}

impl Chance for Seeded {
    fn draw(&mut self, dist: &[f64]) -> usize {
        sample(dist, &mut self.0)
    }

    fn accept(&mut self, a: f64) -> (bool, f64) {
        let u: f64 = self.0.random();
        (u < a, u)
    }
}

/// One branch of the choices: replays a script of choices, extending it with first options.
pub struct Branch {
    /// (option taken, number of options) at each choice point so far.
    script: Vec<(usize, usize)>,
    at: usize,
    weight: f64,
}

impl Branch {
    /// Takes the scripted option among `options` (value, probability), or the first one.
    fn choose<T: Copy>(&mut self, options: &[(T, f64)]) -> T {
        assert!(
            !options.is_empty(),
            "a choice with no option of positive probability"
        );
        if self.at == self.script.len() {
            self.script.push((0, options.len()));
        }
        let (taken, n) = self.script[self.at];
        assert_eq!(
            n,
            options.len(),
            "the engine is not deterministic given its choices"
        );
        self.at += 1;
        self.weight *= options[taken].1;
        options[taken].0
    }

    /// Moves the script to the next branch; false when every branch has been run.
    fn advance(&mut self) -> bool {
        while let Some((taken, n)) = self.script.last_mut() {
            if *taken + 1 < *n {
                *taken += 1;
                self.at = 0;
                self.weight = 1.0;
                return true;
            }
            self.script.pop();
        }
        false
    }
}

impl Chance for Branch {
    fn draw(&mut self, dist: &[f64]) -> usize {
        let total: f64 = dist.iter().sum();
        let options: Vec<(usize, f64)> = dist
            .iter()
            .enumerate()
            .filter(|(_, &w)| w > 0.0)
            .map(|(i, &w)| (i, w / total))
            .collect();
        self.choose(&options)
    }

    fn accept(&mut self, a: f64) -> (bool, f64) {
        let a = a.clamp(0.0, 1.0);
        let mut options = Vec::with_capacity(2);
        if a > 0.0 {
            options.push((true, a));
        }
        if a < 1.0 {
            options.push((false, 1.0 - a));
        }
        let yes = self.choose(&options);
        // A representative uniform number on the chosen side of a.
        (yes, if yes { a / 2.0 } else { (1.0 + a) / 2.0 })
    }
}

/// Runs `run` once per branch of its random choices and hands each result to `add` with the
/// branch's probability. Returns the number of branches. `run` must make the same choices given
/// the same earlier outcomes (the engine is deterministic apart from its [`Chance`]).
pub fn enumerate<R>(mut run: impl FnMut(&mut Branch) -> R, mut add: impl FnMut(f64, R)) -> usize {
    let mut branch = Branch {
        script: Vec::new(),
        at: 0,
        weight: 1.0,
    };
    let mut count = 0;
    loop {
        let out = run(&mut branch);
        assert_eq!(branch.at, branch.script.len(), "a branch ended early");
        add(branch.weight, out);
        count += 1;
        if !branch.advance() {
            return count;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enumeration_weights_sum_to_one_and_match_the_rule() {
        // Draw x from (0.2, 0.0, 0.8), then accept with probability 0.5 if x = 0.
        let mut by_outcome = [0.0; 4];
        let branches = enumerate(
            |c| {
                let x = c.draw(&[0.2, 0.0, 0.8]);
                if x == 0 && c.accept(0.5).0 {
                    3
                } else {
                    x
                }
            },
            |w, k| by_outcome[k] += w,
        );
        assert_eq!(branches, 3);
        assert_eq!(by_outcome, [0.1, 0.0, 0.8, 0.1]);
    }

    #[test]
    fn seeded_replays() {
        let draws = |seed| {
            let mut c = Seeded::new(seed);
            (0..20)
                .map(|_| c.draw(&[0.3, 0.3, 0.4]))
                .collect::<Vec<_>>()
        };
        assert_eq!(draws(5), draws(5));
        assert_ne!(draws(5), draws(6));
    }
}

//! The toy language model of lecture §0.4 and §2.3: vocabulary 5, the target's next-token
//! distribution depends only on the last 2 tokens (a seeded random table of 25 rows), and the draft
//! is q = softmax(log p + noise). Every probability is known, so [`enumerate`] computes the exact
//! distribution of the first 4 output tokens under any decoding strategy, and [`montecarlo`] runs
//! the same strategies with real random numbers beside it.

pub mod enumerate;
pub mod montecarlo;
pub mod temperature;

use crate::error::{Error, Range};
use crate::sampling::Dist;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// How peaked the toy target is.
pub const SHARPNESS: Range = Range::new("sharpness", 0.0, 10.0);
/// How far the toy draft is from the target.
pub const DRAFT_NOISE: Range = Range::new("draft_noise", 0.0, 10.0).shown_as("draft noise");
/// The sampling temperature.
pub const TEMPERATURE: Range = Range::new("temperature", 0.05, 20.0).shown_as("T");

/// The vocabulary size.
pub const VOCAB: usize = 5;
/// How many output tokens the exact distribution covers (5⁴ = 625 sequences).
pub const HORIZON: usize = 4;
/// Number of sequences of [`HORIZON`] tokens.
pub const SEQUENCES: usize = VOCAB * VOCAB * VOCAB * VOCAB;

/// What makes one toy world.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct ToyConfig {
    /// Seed of the target table and of the draft's noise.
    pub seed: u64,
    /// Standard deviation of the target's logits (larger: peakier rows).
    pub sharpness: f64,
    /// Standard deviation of the noise added to log p to make the draft.
    pub draft_noise: f64,
    /// Sampling temperature applied to both models: p_T ∝ p^{1/T}.
    pub temperature: f64,
}

impl Default for ToyConfig {
    fn default() -> Self {
        ToyConfig {
            seed: 0,
            sharpness: 2.2,
            draft_noise: 1.5,
            temperature: 1.0,
        }
    }
}

impl ToyConfig {
    pub fn validate(self) -> Result<ToyConfig, Error> {
        SHARPNESS.check(self.sharpness)?;
        DRAFT_NOISE.check(self.draft_noise)?;
        TEMPERATURE.check(self.temperature)?;
        Ok(self)
    }
}

/// The prompt every toy generation starts from (the first two tokens of context).
pub const PROMPT: [usize; 2] = [0, 1];

/// Target and draft tables, one row per context (previous two tokens).
#[derive(Debug, Clone, PartialEq)]
pub struct ToyLm {
    target: Vec<Dist>,
    draft: Vec<Dist>,
}

impl ToyLm {
    /// Builds the world of `config` (assumed validated).
    pub fn new(config: &ToyConfig) -> ToyLm {
        let mut rng = StdRng::seed_from_u64(config.seed);
        let rows = VOCAB * VOCAB;
        let logits: Vec<Vec<f64>> = (0..rows)
            .map(|_| {
                (0..VOCAB)
                    .map(|_| config.sharpness * normal(&mut rng))
                    .collect()
            })
            .collect();
        let noisy: Vec<Vec<f64>> = logits
            .iter()
            .map(|row| {
                let p = softmax(row, 1.0);
                p.iter()
                    .map(|x| x.ln() + config.draft_noise * normal(&mut rng))
                    .collect()
            })
            .collect();
        let t = config.temperature;
        let target = logits.iter().map(|row| softmax(row, t)).collect();
        let draft = noisy.iter().map(|row| softmax(row, t)).collect();
        ToyLm { target, draft }
    }

    /// The row of the context ending in `ctx` (at least two tokens).
    fn row(ctx: &[usize]) -> usize {
        ctx[ctx.len() - 2] * VOCAB + ctx[ctx.len() - 1]
    }

    /// Target p(next | ctx).
    pub fn p(&self, ctx: &[usize]) -> &[f64] {
        &self.target[Self::row(ctx)]
    }

    /// Draft q(next | ctx).
    pub fn q(&self, ctx: &[usize]) -> &[f64] {
        &self.draft[Self::row(ctx)]
    }

    /// β = Σ min(p, q) for each of the 25 contexts (lecture §2.6: 0.53 to 0.93 on its toy).
    pub fn acceptance_by_context(&self) -> Vec<f64> {
        self.target
            .iter()
            .zip(&self.draft)
            .map(|(p, q)| crate::sampling::overlap(p, q))
            .collect()
    }
}

/// softmax(logits / T).
pub fn softmax(logits: &[f64], temperature: f64) -> Dist {
    let m = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = logits
        .iter()
        .map(|x| ((x - m) / temperature).exp())
        .collect();
    let s: f64 = e.iter().sum();
    e.into_iter().map(|x| x / s).collect()
}

/// A standard normal draw (Box–Muller), so the tables depend on nothing but the seed.
fn normal<R: Rng>(rng: &mut R) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// The index of a sequence of [`HORIZON`] tokens in a distribution over [`SEQUENCES`].
pub fn sequence_index(tokens: &[usize]) -> usize {
    tokens.iter().fold(0, |acc, &t| acc * VOCAB + t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_distributions_and_seeded() {
        let lm = ToyLm::new(&ToyConfig::default());
        for ctx in [[0, 0], [4, 4], [2, 3]] {
            assert!((lm.p(&ctx).iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!((lm.q(&ctx).iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        assert_eq!(lm, ToyLm::new(&ToyConfig::default()));
        assert_ne!(
            lm,
            ToyLm::new(&ToyConfig {
                seed: 1,
                ..ToyConfig::default()
            })
        );
    }

    #[test]
    fn acceptance_varies_by_context_like_the_lecture() {
        // Lecture §2.6: β from 0.53 to 0.93 across contexts. Same kind, not the same digits.
        let beta = ToyLm::new(&ToyConfig::default()).acceptance_by_context();
        let (lo, hi) = beta
            .iter()
            .fold((1.0f64, 0.0f64), |(l, h), &b| (l.min(b), h.max(b)));
        assert!(lo > 0.3 && lo < 0.75 && hi > 0.85 && hi < 1.0, "{lo} {hi}");
    }

    #[test]
    fn bad_config_names_the_field() {
        let e = ToyConfig {
            temperature: 0.0,
            ..ToyConfig::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("temperature"), "{e}");
    }
}

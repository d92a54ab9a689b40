//! Monte Carlo beside exact enumeration (lecture §2.3, demo 02.3). [`speculative_step`] follows
//! Algorithm 1 literally — draft all γ tokens, compute p₁ … p_{γ+1}, verify left to right with real
//! coin flips — so it is an implementation independent of [`super::enumerate`], sharing only the
//! [`Rule`]s. Agreement between the two is the test of both.

use super::enumerate::Strategy;
use super::{sequence_index, ToyLm, HORIZON, PROMPT, SEQUENCES, VOCAB};
use crate::sampling::rule::Rule;
use crate::sampling::{sample, tv, Dist};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// One call of Algorithm 1 from context `ctx`: returns the tokens it emits (1 to γ + 1).
pub fn speculative_step<R: Rng + ?Sized>(
    lm: &ToyLm,
    ctx: &[usize],
    gamma: u32,
    variant: Rule,
    rng: &mut R,
) -> Vec<usize> {
    // 1. The draft proposes γ tokens autoregressively, remembering q₁ … q_{γ+1}.
    let mut c = ctx.to_vec();
    let mut drafts = Vec::new();
    let mut qs = Vec::new();
    for _ in 0..gamma {
        let q = lm.q(&c).to_vec();
        let x = sample(&variant.draft_dist(&q), rng);
        drafts.push(x);
        qs.push(q);
        c.push(x);
    }
    qs.push(lm.q(&c).to_vec());
    // 2. The target scores prefix + drafts in one (here: simulated) forward: p₁ … p_{γ+1}.
    let ps: Vec<Dist> = (0..=drafts.len())
        .map(|i| lm.p(&c[..ctx.len() + i]).to_vec())
        .collect();
    // 3. Verify left to right; the first rejection ends the call with a replacement token.
    let mut out = Vec::with_capacity(drafts.len() + 1);
    for (i, &x) in drafts.iter().enumerate() {
        if rng.random::<f64>() < variant.accept_prob(&ps[i], &qs[i], x) {
            out.push(x);
        } else {
            out.push(sample(&variant.reject_dist(&ps[i], &qs[i]), rng));
            return out;
        }
    }
    // 4. All accepted: one bonus token.
    out.push(sample(
        &variant.bonus_dist(&ps[drafts.len()], &qs[drafts.len()]),
        rng,
    ));
    out
}

/// Runs a strategy until [`HORIZON`] tokens are out; returns their sequence index.
pub fn sample_sequence<R: Rng + ?Sized>(lm: &ToyLm, strategy: Strategy, rng: &mut R) -> usize {
    let mut ctx = PROMPT.to_vec();
    while ctx.len() < PROMPT.len() + HORIZON {
        match strategy {
            Strategy::Target => {
                let y = sample(lm.p(&ctx), rng);
                ctx.push(y);
            }
            Strategy::Speculative { gamma, rule } => {
                let out = speculative_step(lm, &ctx, gamma, rule, rng);
                ctx.extend(out);
            }
        }
    }
    sequence_index(&ctx[PROMPT.len()..PROMPT.len() + HORIZON])
}

/// Empirical distribution of `runs` sequences with a seeded generator.
pub fn empirical(lm: &ToyLm, strategy: Strategy, runs: usize, seed: u64) -> Dist {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut counts = vec![0.0; SEQUENCES];
    for _ in 0..runs {
        counts[sample_sequence(lm, strategy, &mut rng)] += 1.0;
    }
    counts.iter_mut().for_each(|c| *c /= runs.max(1) as f64);
    counts
}

/// TV against `reference` after each of `checkpoints` runs (one growing sample).
pub fn tv_curve(
    lm: &ToyLm,
    strategy: Strategy,
    reference: &[f64],
    checkpoints: &[usize],
    seed: u64,
) -> Vec<(usize, f64)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut counts = vec![0.0; SEQUENCES];
    let mut done = 0;
    let mut curve = Vec::with_capacity(checkpoints.len());
    for &n in checkpoints {
        while done < n {
            counts[sample_sequence(lm, strategy, &mut rng)] += 1.0;
            done += 1;
        }
        let freq: Dist = counts.iter().map(|c| c / n.max(1) as f64).collect();
        curve.push((n, tv(&freq, reference)));
    }
    curve
}

/// The expected TV of an n-sample empirical distribution from its source p, to first order:
/// ½ Σ E|p̂ᵢ − pᵢ| ≈ ½ Σ √(2pᵢ(1 − pᵢ)/(πn)). This is the 1/√n noise floor of the lecture's
/// "TV 0.023 vs 0.028 between two seeds of the target".
pub fn noise_floor(p: &[f64], n: usize) -> f64 {
    let n = n.max(1) as f64;
    0.5 * p
        .iter()
        .map(|&x| (2.0 * x * (1.0 - x) / (std::f64::consts::PI * n)).sqrt())
        .sum::<f64>()
}

/// Tokens per call measured by running Algorithm 1 from every one of the 25 contexts.
pub fn tokens_per_call(lm: &ToyLm, gamma: u32, rule: Rule, calls: usize, seed: u64) -> f64 {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut tokens = 0usize;
    for i in 0..calls {
        let ctx = [(i / VOCAB) % VOCAB, i % VOCAB];
        tokens += speculative_step(lm, &ctx, gamma, rule, &mut rng).len();
    }
    tokens as f64 / calls.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::speculative::Variant;
    use crate::toy::enumerate::exact_distribution;
    use crate::toy::ToyConfig;

    #[test]
    fn monte_carlo_matches_enumeration_for_every_variant() {
        // 20,000 runs: E[TV] ≈ noise_floor ≈ 0.03 with sd ≈ 0.002. A sampler that disagrees with
        // the enumerator by TV ≥ 0.02 lands at ≥ ~1.3× the floor; we allow 1.25× the floor.
        let lm = ToyLm::new(&ToyConfig::default());
        for (k, variant) in Variant::ALL.into_iter().enumerate() {
            let strategy = Strategy::Speculative {
                gamma: 3,
                rule: variant.into(),
            };
            let exact = exact_distribution(&lm, strategy);
            let mc = empirical(&lm, strategy, 20_000, 100 + k as u64);
            let (t, floor) = (tv(&mc, &exact), noise_floor(&exact, 20_000));
            assert!(t < 1.25 * floor, "{variant:?}: TV {t} vs floor {floor}");
        }
    }

    /// The same check with stated power: 200,000 runs per variant, every one of the 625 cells
    /// tested (max |z| ≤ 4.5; false alarm ≤ 2·625·Φ(−4.5) ≈ 0.4%). A sampler that moves 0.005 of
    /// probability into or out of any cell with p ≤ 0.25 shifts that cell's z by ≥ 0.005·√200000
    /// / √(0.25·0.75) ≈ 5.2, so it is caught with power ≥ 0.7, and ≥ 0.99 where p ≤ 0.1 (z ≥ 7.5);
    /// the 1.25×-floor check above lets such a bias through.
    #[test]
    fn monte_carlo_matches_enumeration_cell_by_cell_with_stated_power() {
        use crate::sampling::max_abs_z;
        const RUNS: usize = 200_000;
        let lm = ToyLm::new(&ToyConfig::default());
        for (k, variant) in Variant::ALL.into_iter().enumerate() {
            let strategy = Strategy::Speculative {
                gamma: 3,
                rule: variant.into(),
            };
            let exact = exact_distribution(&lm, strategy);
            let mc = empirical(&lm, strategy, RUNS, 500 + k as u64);
            let z = max_abs_z(&mc, &exact, RUNS);
            assert!(z <= 4.5, "{variant:?}: max |z| = {z}");
            // The power, shown: the same sample against p with 0.005 moved between two cells.
            let mut off = exact.clone();
            let (a, b) = (
                crate::sampling::argmax(&off),
                (0..off.len())
                    .find(|&i| off[i] > 0.01 && off[i] < 0.1)
                    .unwrap(),
            );
            off[a] -= 0.005;
            off[b] += 0.005;
            assert!(
                max_abs_z(&mc, &off, RUNS) > 4.5,
                "{variant:?}: a 0.005 shift went unseen"
            );
        }
    }

    #[test]
    fn noise_floor_matches_two_seeds_of_the_target() {
        // The lecture's reference point: two seeds of the target differ by TV ≈ 0.028 at 20,000.
        let lm = ToyLm::new(&ToyConfig::default());
        let a = empirical(&lm, Strategy::Target, 20_000, 1);
        let b = empirical(&lm, Strategy::Target, 20_000, 2);
        let exact = exact_distribution(&lm, Strategy::Target);
        // Two independent samples: √2 × the one-sample floor.
        let expect = std::f64::consts::SQRT_2 * noise_floor(&exact, 20_000);
        let t = tv(&a, &b);
        assert!((t - expect).abs() < 0.2 * expect, "{t} vs {expect}");
        assert!(t > 0.015 && t < 0.05, "{t}");
    }

    #[test]
    fn tokens_per_call_measured_exact_and_formula() {
        // Measured over 50,000 calls against the exact expectation: per-call tokens have sd ≤ 1.5,
        // so the mean's sd is ≤ 0.007; 0.03 is > 4 sd. Lecture §2.6: on the toy the i.i.d.
        // formula with the mean β is close as well (the lecture: < 0.01; here within 0.1).
        let lm = ToyLm::new(&ToyConfig::default());
        for variant in [Variant::Correct, Variant::GreedyRule] {
            let measured = tokens_per_call(&lm, 3, variant.into(), 50_000, 9);
            let exact = crate::toy::enumerate::expected_tokens_per_call(&lm, 3, variant);
            assert!(
                (measured - exact).abs() < 0.03,
                "{variant:?}: {measured} vs {exact}"
            );
        }
        let beta = lm.acceptance_by_context();
        let alpha = beta.iter().sum::<f64>() / beta.len() as f64;
        let exact = crate::toy::enumerate::expected_tokens_per_call(&lm, 3, Variant::Correct);
        assert!((exact - crate::theory::expected_tokens(alpha, 3)).abs() < 0.1);
    }
}

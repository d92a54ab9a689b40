//! The tests a runtime can put to its speculative sampler, and what each of them sees (lecture
//! §2.3: "exact enumeration and Monte Carlo together are a good way to test sampling code").
//!
//! - **Exact enumeration**: the output distribution of the first γ + 1 tokens (one whole call and
//!   its last token), for γ = 1, 2, 3; TV above 1e-12 is an alarm. It sees any change, however
//!   small, but only on a model whose every probability is known.
//! - **Monte Carlo**: Pearson's χ² test of n sampled 4-token outputs (γ 3) against the target's
//!   exact distribution at level 5%, cells expected fewer than 5 times pooled into one. Its power
//!   against a bug with distribution r follows from the noncentrality λ = n · Σ (r − p)² / p over
//!   the pooled cells (Patnaik's approximation of the noncentral χ², Wilson–Hilferty for the
//!   tails); [`samples_needed`] is the smallest n with power 95%. A quick check of 1,000 samples
//!   is run too, seeded, beside the run at the needed n where that is within [`CAP`].
//! - **Greedy identity**: greedy decoding of all 25 two-token prompts, γ = 1 … 4, 12 tokens each,
//!   against the target's own greedy output. It runs only the code greedy decoding runs.

use super::{exact, samples, Mode, Run};
use crate::decode::stats::erfc;
use crate::sampling::gallery::Bug;
use crate::sampling::tv;
use crate::toy::{ToyLm, PROMPT, VOCAB};

/// The level of the χ² test, and the power [`samples_needed`] asks for.
pub const LEVEL: f64 = 0.05;
pub const POWER: f64 = 0.95;
/// The quick check's samples.
pub const QUICK: usize = 1_000;
/// The largest Monte Carlo run made (a bug needing more is reported, not run).
pub const CAP: usize = 200_000;
/// γ and the window of the Monte Carlo test (the lecture's demo 02.3).
pub const GAMMA: usize = 3;
pub const WINDOW: usize = 4;
/// Seeds of the correct rule's false-alarm count, and the sample sizes it is counted at.
pub const SEEDS: u64 = 20;
pub const ALARM_SIZES: [usize; 2] = [QUICK, 20_000];
/// Greedy identity: tokens a prompt, and the γs.
pub const GREEDY_TOKENS: usize = 12;
pub const GREEDY_GAMMAS: std::ops::RangeInclusive<usize> = 1..=4;
/// TV at or under which exact enumeration raises no alarm (rounding).
pub const EXACT_TV: f64 = 1e-12;

/// The upper 5% point of the standard normal.
const Z_LEVEL: f64 = 1.644_853_626_951_472_2;

/// P(Z > z) for a standard normal Z.
fn normal_tail(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// P(χ²_k > x), Wilson–Hilferty (k may be fractional).
pub fn chi_square_tail(x: f64, k: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    if x.is_infinite() {
        return 0.0;
    }
    let s = 2.0 / (9.0 * k);
    normal_tail(((x / k).cbrt() - (1.0 - s)) / s.sqrt())
}

/// The χ²_k value exceeded with probability [`LEVEL`] (Wilson–Hilferty).
fn critical(k: f64) -> f64 {
    let s = 2.0 / (9.0 * k);
    k * (1.0 - s + Z_LEVEL * s.sqrt()).powi(3)
}

/// The cells of the test at n samples: each cell expected 5 times or more alone, the rest pooled
/// into one group (index: the cell's group).
fn groups(p: &[f64], n: f64) -> (Vec<usize>, usize) {
    let mut next = 0;
    let mut of = vec![usize::MAX; p.len()];
    for (c, &x) in p.iter().enumerate() {
        if x * n >= 5.0 {
            of[c] = next;
            next += 1;
        }
    }
    if of.contains(&usize::MAX) {
        of.iter_mut()
            .filter(|g| **g == usize::MAX)
            .for_each(|g| *g = next);
        next += 1;
    }
    (of, next)
}

fn sums(values: &[f64], of: &[usize], k: usize) -> Vec<f64> {
    let mut s = vec![0.0; k];
    for (c, &v) in values.iter().enumerate() {
        s[of[c]] += v;
    }
    s
}

/// Pearson's χ² test of `counts` against `p`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ChiSquare {
    pub statistic: f64,
    pub df: usize,
    pub p_value: f64,
}

impl ChiSquare {
    pub fn alarm(&self) -> bool {
        self.p_value < LEVEL
    }
}

pub fn chi_square(counts: &[u64], p: &[f64]) -> ChiSquare {
    let n: u64 = counts.iter().sum();
    let (of, k) = groups(p, n as f64);
    let c: Vec<f64> = counts.iter().map(|&x| x as f64).collect();
    let (observed, expected) = (sums(&c, &of, k), sums(p, &of, k));
    // A draw where the target puts no mass at all is proof by itself.
    let impossible = observed
        .iter()
        .zip(&expected)
        .any(|(&o, &e)| e <= 0.0 && o > 0.0);
    let statistic: f64 = if impossible {
        f64::INFINITY
    } else {
        observed
            .iter()
            .zip(&expected)
            .filter(|(_, &e)| e > 0.0)
            .map(|(o, e)| (o - n as f64 * e).powi(2) / (n as f64 * e))
            .sum()
    };
    let df = k.saturating_sub(1).max(1);
    ChiSquare {
        statistic,
        df,
        p_value: chi_square_tail(statistic, df as f64),
    }
}

/// The power of [`chi_square`] at level [`LEVEL`] with `n` samples from `r` against `p`.
pub fn power(r: &[f64], p: &[f64], n: f64) -> f64 {
    let (of, k) = groups(p, n);
    let (rs, ps) = (sums(r, &of, k), sums(p, &of, k));
    let lambda: f64 = n * rs
        .iter()
        .zip(&ps)
        .filter(|(_, &e)| e > 0.0)
        .map(|(a, b)| (a - b).powi(2) / b)
        .sum::<f64>();
    let df = (k.saturating_sub(1)).max(1) as f64;
    // Patnaik: χ'²(k, λ) ≈ ρ · χ²(ν).
    let rho = (df + 2.0 * lambda) / (df + lambda);
    let nu = (df + lambda).powi(2) / (df + 2.0 * lambda);
    chi_square_tail(critical(df) / rho, nu)
}

/// The smallest n (on a grid of 2% steps) at which [`power`] reaches [`POWER`]; none below 10¹⁵
/// samples (a rule whose distribution is the target's is never detected).
pub fn samples_needed(r: &[f64], p: &[f64]) -> Option<f64> {
    let mut n = 10.0;
    while n < 1e15 {
        if power(r, p, n) >= POWER {
            return Some(n.ceil());
        }
        n *= 1.02;
    }
    None
}

/// What the tests saw of one rule (a bug, or the correct rule when `bug` is none).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Examined {
    pub bug: Option<Bug>,
    /// Exact TV over the first γ + 1 tokens for γ = 1, 2, 3.
    pub tv_by_gamma: Vec<f64>,
    /// The TV at γ 3 over 4 tokens (the Monte Carlo test's distribution).
    pub tv: f64,
    /// The smallest γ whose window of γ + 1 tokens shows it.
    pub exact_from_gamma: Option<usize>,
    /// The samples the χ² test needs for 95% power, and its power with 1,000.
    pub samples_needed: Option<f64>,
    pub quick_power: f64,
    /// The seeded runs: 1,000 samples, and the needed number where it is at most [`CAP`].
    pub quick: ChiSquare,
    pub at_needed: Option<ChiSquare>,
    /// Greedy identity: prompts × γs run and how many gave the target's own greedy output.
    pub greedy_runs: usize,
    pub greedy_identical: usize,
    pub detected_by: Vec<&'static str>,
    pub missed_by: Vec<&'static str>,
    /// Tests not run: the χ² run at the needed n when that is over [`CAP`] (or infinite).
    pub not_run: Vec<&'static str>,
}

impl Examined {
    /// Whether the rule changes the output at all in this world (TV over rounding).
    pub fn has_effect(&self) -> bool {
        self.tv > EXACT_TV || self.exact_from_gamma.is_some()
    }
}

/// The tests' names as [`Examined::detected_by`] lists them.
pub const EXACT: &str = "exact-enumeration";
pub const MONTE_CARLO_QUICK: &str = "monte-carlo-1000";
pub const MONTE_CARLO: &str = "monte-carlo-at-needed-n";
pub const GREEDY: &str = "greedy-identity";

/// Every test put to `bug` (none: the correct rule) on `lm`, Monte Carlo seeded with `seed`.
pub fn examine(lm: &ToyLm, bug: Option<Bug>, seed: u64) -> Examined {
    let run = |gamma, mode| Run {
        lm,
        gamma,
        bug,
        mode,
    };
    let target_alone = Run {
        lm,
        gamma: 0,
        bug: None,
        mode: Mode::Sampled,
    };
    let plain = |w| exact(target_alone, &PROMPT, w);
    let tv_by_gamma: Vec<f64> = (1..=GAMMA)
        .map(|g| tv(&exact(run(g, Mode::Sampled), &PROMPT, g + 1), &plain(g + 1)))
        .collect();
    let exact_from_gamma = tv_by_gamma
        .iter()
        .position(|&t| t > EXACT_TV)
        .map(|i| i + 1);
    let target = plain(WINDOW);
    let r = exact(run(GAMMA, Mode::Sampled), &PROMPT, WINDOW);
    let needed = samples_needed(&r, &target);
    let sampled = |n| samples(run(GAMMA, Mode::Sampled), &PROMPT, WINDOW, n, seed);
    let quick = chi_square(&sampled(QUICK), &target);
    let at_needed = needed
        .filter(|&n| n <= CAP as f64)
        .map(|n| chi_square(&sampled(n as usize), &target));
    let (greedy_runs, greedy_identical) = greedy_identity(lm, bug);
    let mut e = Examined {
        bug,
        tv: tv(&r, &target),
        tv_by_gamma,
        exact_from_gamma,
        samples_needed: needed,
        quick_power: power(&r, &target, QUICK as f64),
        quick,
        at_needed,
        greedy_runs,
        greedy_identical,
        detected_by: Vec::new(),
        missed_by: Vec::new(),
        not_run: Vec::new(),
    };
    if e.at_needed.is_none() {
        e.not_run.push(MONTE_CARLO);
    }
    for (name, alarm) in [
        (EXACT, e.exact_from_gamma.is_some()),
        (MONTE_CARLO_QUICK, e.quick.alarm()),
        (MONTE_CARLO, e.at_needed.is_some_and(|c| c.alarm())),
        (GREEDY, greedy_identical < greedy_runs),
    ] {
        if e.not_run.contains(&name) {
            continue;
        }
        if alarm {
            e.detected_by.push(name);
        } else {
            e.missed_by.push(name);
        }
    }
    e
}

/// Greedy decoding of every two-token prompt at γ = 1 … 4: (runs, identical to the target's).
pub fn greedy_identity(lm: &ToyLm, bug: Option<Bug>) -> (usize, usize) {
    let mut chance = super::Seeded::new(0);
    let (mut runs, mut same) = (0, 0);
    for prompt in (0..VOCAB * VOCAB).map(|c| [c / VOCAB, c % VOCAB]) {
        let own = Run {
            lm,
            gamma: 0,
            bug: None,
            mode: Mode::Greedy,
        }
        .tokens(&prompt, GREEDY_TOKENS, &mut chance);
        for gamma in GREEDY_GAMMAS {
            let run = Run {
                lm,
                gamma,
                bug,
                mode: Mode::Greedy,
            };
            runs += 1;
            same += usize::from(run.tokens(&prompt, GREEDY_TOKENS, &mut chance) == own);
        }
    }
    (runs, same)
}

/// The correct rule's χ² alarms over [`SEEDS`] seeds at each of [`ALARM_SIZES`]: (n, alarms).
pub fn false_alarms(lm: &ToyLm) -> Vec<(usize, u64)> {
    let run = |gamma| Run {
        lm,
        gamma,
        bug: None,
        mode: Mode::Sampled,
    };
    let target = exact(run(0), &PROMPT, WINDOW);
    ALARM_SIZES
        .iter()
        .map(|&n| {
            let alarms = (0..SEEDS)
                .filter(|&s| {
                    let counts = samples(run(GAMMA), &PROMPT, WINDOW, n, 1000 + s);
                    chi_square(&counts, &target).alarm()
                })
                .count() as u64;
            (n, alarms)
        })
        .collect()
}

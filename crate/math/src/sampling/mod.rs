//! Verification rules of speculative decoding, on explicit probability vectors.
//!
//! [`speculative`] is one draft token per position (Leviathan et al., Algorithm 1) and the wrong
//! variants the lecture warns about (§2.3); [`typical`] is Medusa's typical acceptance, lossy on
//! purpose (§5.1); [`rule::Rule`] is either, as every caller asks it; [`gallery`] names ten bugs
//! of real runtimes (§6); [`multi`] verifies several candidate tokens for one position
//! (SpecInfer's naive sampling and multi-step speculative sampling, lecture §4.5). The
//! helpers here are shared by exact enumeration and by Monte Carlo, so both see the same rules.

pub mod gallery;
pub mod multi;
pub mod rule;
pub mod speculative;
pub mod typical;

use crate::error::{shown, Error, Text};
use rand::Rng;

/// A probability distribution over token ids `0..len`.
pub type Dist = Vec<f64>;

/// Total variation distance ½ Σ |a − b|.
pub fn tv(a: &[f64], b: &[f64]) -> f64 {
    0.5 * a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>()
}

/// Per-position acceptance β = Σ min(p, q) = 1 − TV(p, q) (Theorem 3.5).
pub fn overlap(p: &[f64], q: &[f64]) -> f64 {
    p.iter().zip(q).map(|(x, y)| x.min(*y)).sum()
}

/// The most probable token; ties go to the lowest id, so every caller agrees.
pub fn argmax(p: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in p.iter().enumerate() {
        if x > p[best] {
            best = i;
        }
    }
    best
}

/// The largest standardised deviation of `freq` (frequencies of `n` independent draws) from `p`,
/// over the cells: max |f − p|·√n / √(p(1 − p)); infinite where p = 0 and f > 0. Cells expected
/// fewer than 20 times are pooled into one (where the normal approximation would not hold).
///
/// The per-cell test with a Bonferroni bound: under "the draws come from p" each cell's z is
/// approximately standard normal, so P(max |z| > z*) ≤ 2·cells·Φ(−z*) (≤ 0.005 for 625 cells at
/// z* = 4.5). Power: a cell whose probability is off by ε moves its z by ε·√n/√(p(1 − p)).
pub fn max_abs_z(freq: &[f64], p: &[f64], n: usize) -> f64 {
    let n = n as f64;
    let z = |f: f64, q: f64| {
        if q <= 0.0 || q >= 1.0 {
            if (f - q).abs() > 0.0 {
                f64::INFINITY
            } else {
                0.0
            }
        } else {
            (f - q).abs() * n.sqrt() / (q * (1.0 - q)).sqrt()
        }
    };
    let (mut rare_f, mut rare_p, mut worst) = (0.0, 0.0, 0.0f64);
    for (&f, &q) in freq.iter().zip(p) {
        if q > 0.0 && q * n < 20.0 {
            rare_f += f;
            rare_p += q;
        } else {
            worst = worst.max(z(f, q));
        }
    }
    if rare_p > 0.0 {
        worst = worst.max(z(rare_f, rare_p));
    }
    worst
}

/// The residual distribution norm(max(0, p − q)). Its mass equals the rejection probability of
/// the min(1, p/q) rule, so it is only ever sampled with positive mass; when p = q exactly (no
/// mass) it returns p, which no correct caller can reach.
pub fn residual(p: &[f64], q: &[f64]) -> Dist {
    let r: Dist = p.iter().zip(q).map(|(x, y)| (x - y).max(0.0)).collect();
    let mass: f64 = r.iter().sum();
    if mass > 0.0 {
        r.into_iter().map(|x| x / mass).collect()
    } else {
        p.to_vec()
    }
}

/// A one-hot distribution of length `len` on `token`.
pub fn one_hot(len: usize, token: usize) -> Dist {
    let mut d = vec![0.0; len];
    d[token] = 1.0;
    d
}

/// Draws a token from `dist` with one uniform number (inverse CDF).
pub fn sample<R: Rng + ?Sized>(dist: &[f64], rng: &mut R) -> usize {
    let u: f64 = rng.random::<f64>() * dist.iter().sum::<f64>();
    let mut acc = 0.0;
    let mut last = 0;
    for (i, &x) in dist.iter().enumerate() {
        if x > 0.0 {
            acc += x;
            last = i;
            if u < acc {
                return i;
            }
        }
    }
    last
}

/// `text` with a Chinese input method's full-width commas and semicolons as ASCII ones.
pub fn half_width(text: &str) -> String {
    text.replace('，', ",").replace('；', ";")
}

/// Parses a comma-separated distribution such as `0.6,0.4` (or `0.6，0.4`: a Chinese input
/// method types full-width commas). Entries must be finite and non-negative and sum to 1 within
/// 1e-6; the result is renormalised to sum to 1 exactly.
pub fn parse_dist(what: &'static str, text: &str) -> Result<Dist, Error> {
    let bad = |en: String, zh: String| Error::Parse {
        what,
        text: text.to_string(),
        why: Text::new(en, zh),
    };
    let mut d = Vec::new();
    for part in half_width(text).split(',') {
        let part = part.trim();
        let x: f64 = part.parse().map_err(|_| {
            bad(
                format!("{:?} is not a number", shown(part)),
                format!("{:?} 不是数", shown(part)),
            )
        })?;
        if !x.is_finite() || x < 0.0 {
            return Err(bad(
                format!("{part} is not a probability"),
                format!("{part} 不是概率"),
            ));
        }
        d.push(x);
    }
    if d.len() < 2 || d.len() > 64 {
        return Err(bad(
            format!("needs 2 to 64 entries, got {}", d.len()),
            format!("需要 2 到 64 项，给了 {} 项", d.len()),
        ));
    }
    let sum: f64 = d.iter().sum();
    if (sum - 1.0).abs() > 1e-6 {
        return Err(bad(
            format!("sums to {sum}, not 1"),
            format!("总和为 {sum}，不是 1"),
        ));
    }
    Ok(d.into_iter().map(|x| x / sum).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn residual_is_the_normalised_positive_part() {
        assert_eq!(residual(&[0.6, 0.4], &[0.5, 0.5]), vec![1.0, 0.0]);
        let r = residual(&[0.25; 4], &[1.0, 0.0, 0.0, 0.0]);
        assert!(r
            .iter()
            .zip([0.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0])
            .all(|(a, b)| (a - b).abs() < 1e-15));
    }

    #[test]
    fn overlap_is_one_minus_tv() {
        let (p, q) = ([0.1, 0.2, 0.7], [0.3, 0.3, 0.4]);
        assert!((overlap(&p, &q) - (1.0 - tv(&p, &q))).abs() < 1e-15);
    }

    #[test]
    fn parse_dist_names_the_bad_entry() {
        assert_eq!(parse_dist("p", "0.6, 0.4").unwrap(), vec![0.6, 0.4]);
        assert!(parse_dist("p", "0.6,x")
            .unwrap_err()
            .to_string()
            .contains("\"x\" is not a number"));
        assert!(parse_dist("p", "0.6,0.6")
            .unwrap_err()
            .to_string()
            .contains("sums to 1.2"));
        assert!(parse_dist("p", "1.5,-0.5").is_err());
        assert!(parse_dist("p", "1").is_err());
    }

    #[test]
    fn sample_follows_the_distribution() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let d = [0.2, 0.0, 0.8];
        let n = 40_000;
        let mut counts = [0usize; 3];
        for _ in 0..n {
            counts[sample(&d, &mut rng)] += 1;
        }
        assert_eq!(counts[1], 0);
        // Binomial sd at n = 40,000 is 0.002; 5 sd.
        assert!(
            (counts[0] as f64 / n as f64 - 0.2).abs() < 0.01,
            "{counts:?}"
        );
    }
}

//! Medusa's typical acceptance (lecture §5.1; Cai et al., 2024, §2.3.1; Medusa's
//! `evaluate_posterior`): a rule that gives losslessness up on purpose. A drafted token x is kept
//! when the target finds it plausible enough,
//!
//! p(x) > min(ε, δ · exp(−H(p))),  H(p) = −Σ p ln p (nats),
//!
//! and when it is not, the step's token is sampled from p and the step ends. On a tree, every
//! node is judged against its parent's p; the longest root path whose nodes are all kept wins,
//! ties going to the path of highest likelihood Σ ln p (Medusa's choice among its candidates).
//!
//! One draft token drawn from q gives, exactly,
//!
//! P(output = y) = q(y)·k(y) + (1 − Σ_x q(x)·k(x)) · p(y),  k(x) = [p(x) > threshold],
//!
//! so the output is p only where the kept tokens' q equals their share of p: a loose threshold
//! keeps whatever the draft over-proposes (at ε = 0 the output is q). No threshold in range falls
//! back to p: exp(−H) ≤ max p, so with δ ≤ 1 the target's most likely token is always kept (unless
//! p is uniform on its support), and the output keeps q's share of it.

use crate::error::{Error, Range};

/// Medusa's `posterior_threshold`, ε.
pub const EPSILON: Range = Range::new("epsilon", 0.0, 1.0).shown_as("ε");
/// Medusa's `posterior_alpha`, δ (δ·exp(−H) ≤ max p for δ ≤ 1, so the target's most likely token
/// can always be kept).
pub const DELTA: Range = Range::new("delta", 0.0, 1.0).shown_as("δ");

/// The typical-acceptance rule's two thresholds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Typical {
    pub epsilon: f64,
    pub delta: f64,
}

// Both values are checked finite (`Typical::new`), so equality is an equivalence.
impl Eq for Typical {}

impl Default for Typical {
    fn default() -> Self {
        Typical::MEDUSA
    }
}

/// The exact output distribution and acceptance of one draft token.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Closed {
    pub output: Vec<f64>,
    pub acceptance: f64,
}

impl Typical {
    /// Medusa's defaults (`medusa_generate`: posterior_threshold 0.09, posterior_alpha 0.3).
    pub const MEDUSA: Typical = Typical {
        epsilon: 0.09,
        delta: 0.3,
    };

    /// The rule with ε and δ checked against their ranges (a NaN or a negative is refused by
    /// name).
    pub fn new(epsilon: f64, delta: f64) -> Result<Typical, Error> {
        // (+ 0.0 writes −0 as 0.)
        Ok(Typical {
            epsilon: EPSILON.check(epsilon)? + 0.0,
            delta: DELTA.check(delta)? + 0.0,
        })
    }

    /// min(ε, δ · exp(−H(p))).
    pub fn threshold(&self, p: &[f64]) -> f64 {
        self.epsilon.min(self.delta * (-entropy(p)).exp())
    }

    /// Whether the drafted token `x` is kept under the target's `p`.
    pub fn keeps(&self, p: &[f64], x: usize) -> bool {
        p[x] > self.threshold(p)
    }

    /// One draft token drawn from `q`, in closed form (see the module documentation).
    pub fn closed_form(&self, p: &[f64], q: &[f64]) -> Closed {
        let t = self.threshold(p);
        let kept = |x: usize| f64::from(u8::from(p[x] > t));
        let acceptance: f64 = q.iter().enumerate().map(|(x, &w)| w * kept(x)).sum();
        let output = (0..p.len())
            .map(|y| q[y] * kept(y) + (1.0 - acceptance) * p[y])
            .collect();
        Closed { output, acceptance }
    }
}

/// The entropy −Σ p ln p in nats (0 · ln 0 = 0).
pub fn entropy(p: &[f64]) -> f64 {
    -p.iter()
        .filter(|&&x| x > 0.0)
        .map(|x| x * x.ln())
        .sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::rule::single_position;
    use crate::sampling::rule::Rule;
    use crate::sampling::tv;

    fn random_dist(next: &mut impl FnMut() -> f64, n: usize) -> Vec<f64> {
        let mut d: Vec<f64> = (0..n).map(|_| next().powi(3)).collect();
        let s: f64 = d.iter().sum();
        d.iter_mut().for_each(|x| *x /= s);
        d
    }

    fn lcg(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed;
        move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64) / (1u64 << 53) as f64
        }
    }

    #[test]
    fn the_rule_through_the_shared_hooks_equals_the_closed_form() {
        let mut next = lcg(7);
        for _ in 0..300 {
            let n = 2 + (next() * 7.0) as usize;
            let (p, q) = (random_dist(&mut next, n), random_dist(&mut next, n));
            let t = Typical::new(next(), next()).unwrap();
            let by_hooks = single_position(&p, &q, Rule::Typical(t));
            let closed = t.closed_form(&p, &q);
            assert!(tv(&by_hooks.output, &closed.output) <= 1e-12);
            assert!((by_hooks.acceptance - closed.acceptance).abs() <= 1e-12);
            assert!((closed.output.iter().sum::<f64>() - 1.0).abs() <= 1e-12);
        }
    }

    #[test]
    fn by_hand_on_two_tokens() {
        // p = (0.9, 0.1): H = 0.3251 nats, δ·e^{−H} = 0.3·0.7225 = 0.2167; ε = 0.09 is smaller,
        // so both tokens pass (0.1 > 0.09) and the output is q itself.
        let (p, q) = ([0.9, 0.1], [0.5, 0.5]);
        let t = Typical::MEDUSA;
        assert!((entropy(&p) - 0.325_082_973_391_448_2).abs() < 1e-15);
        assert!((t.threshold(&p) - 0.09).abs() < 1e-15);
        let c = t.closed_form(&p, &q);
        assert_eq!((c.output.clone(), c.acceptance), (vec![0.5, 0.5], 1.0));
        // ε = 0.2: token 1 fails; accepted 0.5 (token 0), the rest sampled from p.
        let c = Typical::new(0.2, 0.3).unwrap().closed_form(&p, &q);
        assert!((c.acceptance - 0.5).abs() < 1e-15);
        assert!(tv(&c.output, &[0.95, 0.05]) < 1e-15, "{c:?}");
    }

    #[test]
    fn the_most_likely_token_is_always_kept_and_the_loosest_rule_outputs_q() {
        let mut next = lcg(3);
        let strict = Typical::new(1.0, 1.0).unwrap();
        for _ in 0..50 {
            let (p, q) = (random_dist(&mut next, 5), random_dist(&mut next, 5));
            // e^{−H} ≤ max p: with δ ≤ 1 the argmax passes (p is not uniform here).
            let top = crate::sampling::argmax(&p);
            assert!(strict.keeps(&p, top), "{p:?}");
            // ε = 0: every token with p > 0 passes; the output is q.
            let loose = Typical::new(0.0, 0.3).unwrap().closed_form(&p, &q);
            assert!(tv(&loose.output, &q) <= 1e-15);
        }
        // Only a p uniform on its support keeps nothing at ε = δ = 1: the output is p itself.
        let (p, q) = ([0.25; 4], [0.7, 0.1, 0.1, 0.1]);
        let c = strict.closed_form(&p, &q);
        assert!(c.acceptance == 0.0 && tv(&c.output, &p) <= 1e-15, "{c:?}");
        assert_eq!(Typical::new(-0.0, 0.3).unwrap().epsilon.to_string(), "0");
    }

    #[test]
    fn bad_thresholds_are_refused_by_name() {
        for (e, d, name) in [
            (-0.1, 0.3, "epsilon"),
            (f64::NAN, 0.3, "epsilon"),
            (0.09, -1.0, "delta"),
            (0.09, 1.5, "delta"),
        ] {
            let msg = Typical::new(e, d).unwrap_err().to_string();
            assert!(msg.contains(name), "{msg}");
        }
    }
}

//! Closed forms of speculative decoding (lecture §2.5; Leviathan et al., eq. 1, Theorems 3.8 and
//! 3.11, Figure 3). They assume the acceptance of each draft token is i.i.d. with mean α; §3.3 of
//! the lecture shows where real text breaks that assumption.

use crate::error::{Error, Range};

/// The acceptance rate.
pub const ALPHA: Range = Range::new("alpha", 0.0, 1.0).shown_as("α");
/// Draft tokens per step.
pub const GAMMA: Range = Range::new("gamma", 0.0, MAX_GAMMA as f64).shown_as("γ");
/// A draft step over a target step.
pub const C: Range = Range::new("c", 0.0, 1e6);
/// A verification over a target step.
pub const C_HAT: Range = Range::new("c_hat", 0.0, 1e6).shown_as("ĉ");

/// Validated parameters of the closed forms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Acceptance rate α ∈ [0, 1].
    pub alpha: f64,
    /// Draft length γ ≥ 0.
    pub gamma: u32,
    /// Cost ratio c = draft step time / target step time, ≥ 0.
    pub c: f64,
    /// Operations ratio ĉ = draft FLOPs per token / target FLOPs per token, ≥ 0.
    pub c_hat: f64,
}

/// The largest γ any API accepts: beyond it every formula is flat to printing precision.
pub const MAX_GAMMA: u32 = 256;

impl Params {
    pub fn new(alpha: f64, gamma: u32, c: f64, c_hat: f64) -> Result<Params, Error> {
        ALPHA.check(alpha)?;
        GAMMA.check(f64::from(gamma))?;
        C.check(c)?;
        C_HAT.check(c_hat)?;
        Ok(Params {
            alpha,
            gamma,
            c,
            c_hat,
        })
    }
}

/// Expected tokens per target call, E = (1 − α^{γ+1})/(1 − α), with its limit γ + 1 at α = 1.
pub fn expected_tokens(alpha: f64, gamma: u32) -> f64 {
    // Σ_{i=0}^{γ} α^i is the same quantity without the 0/0 at α = 1, and it is exact there.
    if alpha >= 1.0 {
        return f64::from(gamma) + 1.0;
    }
    (1.0 - alpha.powi(gamma as i32 + 1)) / (1.0 - alpha)
}

/// Wall-clock speedup E/(γc + 1) (Theorem 3.8).
pub fn speedup(alpha: f64, gamma: u32, c: f64) -> f64 {
    expected_tokens(alpha, gamma) / (f64::from(gamma) * c + 1.0)
}

/// Total arithmetic operations relative to plain decoding, (γĉ + γ + 1)/E (Theorem 3.11).
pub fn operations(alpha: f64, gamma: u32, c_hat: f64) -> f64 {
    (f64::from(gamma) * c_hat + f64::from(gamma) + 1.0) / expected_tokens(alpha, gamma)
}

/// The upper bound on E for any γ, 1/(1 − α) (infinite at α = 1).
pub fn expected_tokens_cap(alpha: f64) -> f64 {
    if alpha >= 1.0 {
        f64::INFINITY
    } else {
        1.0 / (1.0 - alpha)
    }
}

/// The γ in `0..=max_gamma` with the largest speedup, and that speedup. γ = 0 means plain
/// decoding (speedup 1): speculation does not pay when c ≥ α.
pub fn optimal_gamma(alpha: f64, c: f64, max_gamma: u32) -> (u32, f64) {
    let mut best = (0, 1.0);
    for gamma in 1..=max_gamma {
        let s = speedup(alpha, gamma, c);
        if s > best.1 + 1e-12 {
            best = (gamma, s);
        }
    }
    best
}

/// Whether the speedup still rises past `gamma`: then the best γ up to it is where a search
/// stopped, not an optimum. At α = 1 and 0 < c < 1 the speedup (γ + 1)/(γc + 1) rises for
/// ever, towards 1/c; at c = 0 and any α it is E, which rises towards its cap.
pub fn still_rising(alpha: f64, gamma: u32, c: f64) -> bool {
    speedup(alpha, gamma + 1, c) > speedup(alpha, gamma, c) + 1e-12
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(x: f64, digits: i32) -> f64 {
        let m = 10f64.powi(digits);
        (x * m).round() / m
    }

    #[test]
    fn table_1_row_alpha_08_gamma_5() {
        // Lecture §2.5: α 0.8, γ 5, c = ĉ = 0 → operations 1.63×, speed 3.69×.
        assert_eq!(round(operations(0.8, 5, 0.0), 2), 1.63);
        assert_eq!(round(speedup(0.8, 5, 0.0), 2), 3.69);
    }

    #[test]
    fn exercise_1() {
        // α 0.75, γ 4: E 3.05, speedup 2.54× at c 0.05, operations 1.67× at ĉ 0.02.
        assert_eq!(round(expected_tokens(0.75, 4), 2), 3.05);
        assert_eq!(round(speedup(0.75, 4, 0.05), 2), 2.54);
        assert_eq!(round(operations(0.75, 4, 0.02), 2), 1.67);
    }

    #[test]
    fn optimal_gamma_figure_3() {
        // α 0.8: optimal γ 14, 11, 8, 6 for c 0.01, 0.02, 0.05, 0.1; speedup 4.2× → 2.5×.
        let got: Vec<u32> = [0.01, 0.02, 0.05, 0.1]
            .iter()
            .map(|&c| optimal_gamma(0.8, c, 64).0)
            .collect();
        assert_eq!(got, vec![14, 11, 8, 6]);
        assert_eq!(round(optimal_gamma(0.8, 0.01, 64).1, 1), 4.2);
        assert_eq!(round(optimal_gamma(0.8, 0.1, 64).1, 1), 2.5);
    }

    #[test]
    fn alpha_one_is_the_limit() {
        assert_eq!(expected_tokens(1.0, 5), 6.0);
        let near = expected_tokens(1.0 - 1e-9, 5);
        assert!((near - 6.0).abs() < 1e-6, "{near}");
        assert_eq!(expected_tokens(0.0, 7), 1.0);
    }

    #[test]
    fn no_speculation_when_draft_is_as_slow_as_acceptance() {
        assert_eq!(optimal_gamma(0.3, 0.5, 64), (0, 1.0));
        // At α = 1 the best γ found is the search's limit: the speedup still rises there.
        assert_eq!(optimal_gamma(1.0, 0.05, 64).0, 64);
        assert!(still_rising(1.0, 64, 0.05) && still_rising(1.0, MAX_GAMMA, 0.05));
        assert!(!still_rising(1.0, 3, 1.0) && !still_rising(0.8, 14, 0.01));
        assert!(still_rising(0.8, 13, 0.01));
        // Corollary 3.9: α > c gives at least (1 + α)/(1 + c) with γ = 1.
        let (g, s) = optimal_gamma(0.5, 0.2, 64);
        assert!(g >= 1 && s >= 1.5 / 1.2 - 1e-12);
    }

    #[test]
    fn params_reject_bad_values_by_name() {
        let e = Params::new(1.5, 3, 0.0, 0.0).unwrap_err();
        assert!(e.to_string().contains("alpha = 1.5"), "{e}");
        assert!(Params::new(f64::NAN, 3, 0.0, 0.0).is_err());
        assert!(Params::new(0.5, 3, -0.1, 0.0).is_err());
        assert!(Params::new(0.5, 300, 0.1, 0.0).is_err());
    }
}

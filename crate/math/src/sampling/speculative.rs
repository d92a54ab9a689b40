//! Speculative sampling for one draft token (lecture §2.3; Leviathan et al., Algorithm 1) and the
//! wrong variants the lecture warns about. A [`Variant`] is the whole rule: how the draft token is
//! chosen, when it is accepted, what is sampled after a rejection, and where the bonus token comes
//! from. Exact enumeration (`toy::enumerate`) and Monte Carlo (`toy::montecarlo`) both call these
//! methods, so a variant is defined in exactly one place.

use super::{argmax, one_hot, residual, Dist};

crate::error::choices! {
    /// A verification rule: the correct one and five ways to get it wrong.
    #[derive(Hash)]
    pub enum Variant("variant") {
        /// Algorithm 1: x ~ q, accept with min(1, p/q), else sample norm(max(0, p − q)); bonus from p.
        Correct = "correct",
        /// Rejected → sample from p instead of the residual (the subtle one: slightly off per position).
        ResampleFromTarget = "resample-from-target",
        /// Greedy verification under sampling: accept iff x = argmax p, else sample from p.
        GreedyRule = "greedy-rule",
        /// Draft deterministically argmax q, then the probabilistic rule (exercise 7).
        ArgmaxDraft = "argmax-draft",
        /// Accept with min(1, q/p) instead of min(1, p/q).
        AcceptQOverP = "accept-q-over-p",
        /// All γ accepted → bonus token from the draft's q_{γ+1} instead of the target's p_{γ+1}.
        BonusFromDraft = "bonus-from-draft",
    }
}

impl Variant {
    /// The rule's name for a reader: its id in English, a short Chinese name in Chinese (the
    /// lecture's terms: 正确的推测采样, 随机采样时用贪心规则, 奖励 token).
    pub fn label(self, l: crate::i18n::Lang) -> &'static str {
        l.pick(
            self.name(),
            match self {
                Variant::Correct => "正确规则",
                Variant::ResampleFromTarget => "拒绝后从 p 重采",
                Variant::GreedyRule => "贪心规则",
                Variant::ArgmaxDraft => "草稿取 argmax",
                Variant::AcceptQOverP => "接受率 q/p",
                Variant::BonusFromDraft => "奖励取自草稿",
            },
        )
    }

    /// The distribution the draft token is taken from, given the draft's q.
    pub fn draft_dist(self, q: &[f64]) -> Dist {
        match self {
            Variant::ArgmaxDraft => one_hot(q.len(), argmax(q)),
            _ => q.to_vec(),
        }
    }

    /// Probability of accepting draft token `x` given target p and draft q at this position.
    pub fn accept_prob(self, p: &[f64], q: &[f64], x: usize) -> f64 {
        match self {
            Variant::GreedyRule => f64::from(u8::from(x == argmax(p))),
            Variant::AcceptQOverP => ratio(q[x], p[x]),
            _ => ratio(p[x], q[x]),
        }
    }

    /// The distribution sampled after a rejection.
    pub fn reject_dist(self, p: &[f64], q: &[f64]) -> Dist {
        match self {
            Variant::ResampleFromTarget | Variant::GreedyRule => p.to_vec(),
            _ => residual(p, q),
        }
    }

    /// The distribution of the bonus token after all γ drafts were accepted.
    pub fn bonus_dist(self, p_next: &[f64], q_next: &[f64]) -> Dist {
        match self {
            Variant::BonusFromDraft => q_next.to_vec(),
            _ => p_next.to_vec(),
        }
    }
}

/// min(1, a/b), with a/0 read as +∞ (accept).
fn ratio(a: f64, b: f64) -> f64 {
    if b <= 0.0 {
        1.0
    } else {
        (a / b).min(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Named;
    use crate::sampling::rule::single_position;
    use crate::sampling::tv;

    fn close(a: &[f64], b: &[f64], eps: f64) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= eps)
    }

    #[test]
    fn exercise_3() {
        let (p, q) = ([0.6, 0.4], [0.5, 0.5]);
        let c = single_position(&p, &q, Variant::Correct);
        assert!(close(&c.output, &[0.6, 0.4], 1e-15), "{c:?}");
        assert!((c.acceptance - 0.9).abs() < 1e-15);
        let g = single_position(&p, &q, Variant::GreedyRule);
        assert!(close(&g.output, &[0.8, 0.2], 1e-15), "{g:?}");
    }

    #[test]
    fn exercise_7() {
        let a = single_position(&[0.5, 0.5], &[0.6, 0.4], Variant::ArgmaxDraft);
        assert!(close(&a.output, &[5.0 / 6.0, 1.0 / 6.0], 1e-15), "{a:?}");
        assert_eq!(
            format!("{:.4},{:.4}", a.output[0], a.output[1]),
            "0.8333,0.1667"
        );
    }

    #[test]
    fn correct_rule_is_exact_on_many_pairs() {
        // Deterministic pseudo-random pairs, including zeros in p and in q.
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as f64) / (1u64 << 31) as f64
        };
        for _ in 0..200 {
            let mut p: Vec<f64> = (0..6).map(|_| next()).collect();
            let mut q: Vec<f64> = (0..6).map(|_| next()).collect();
            p[0] = 0.0;
            q[1] = 0.0;
            let (sp, sq): (f64, f64) = (p.iter().sum(), q.iter().sum());
            p.iter_mut().for_each(|x| *x /= sp);
            q.iter_mut().for_each(|x| *x /= sq);
            let c = single_position(&p, &q, Variant::Correct);
            assert!(tv(&c.output, &p) <= 1e-12);
            assert!((c.acceptance - crate::sampling::overlap(&p, &q)).abs() <= 1e-12);
        }
    }

    #[test]
    fn wrong_variants_are_wrong_at_one_position() {
        let (p, q) = ([0.5, 0.3, 0.2], [0.2, 0.3, 0.5]);
        for v in [
            Variant::ResampleFromTarget,
            Variant::GreedyRule,
            Variant::AcceptQOverP,
        ] {
            assert!(tv(&single_position(&p, &q, v).output, &p) > 0.01, "{v:?}");
        }
    }

    #[test]
    fn names_round_trip() {
        for v in Variant::ALL {
            assert_eq!(Variant::parse(v.name()).unwrap(), v);
        }
        assert!(Variant::parse("nope")
            .unwrap_err()
            .to_string()
            .contains("correct, resample-from-target"));
    }
}

//! Exact distribution of the first [`HORIZON`] output tokens of the toy LM under a decoding
//! strategy (lecture §2.3, demo 02.2). Speculative decoding is enumerated branch by branch: each
//! draft token with its probability, then acceptance (continue drafting) or rejection (one token
//! from the rejection distribution, step over). Drafts after a rejection are never looked at, so
//! they are not enumerated: drawing them lazily gives the same distribution as drawing all γ first,
//! because the acceptance coin at position i is independent of the later drafts. A branch stops as
//! soon as it has emitted HORIZON tokens, since later tokens cannot change the first ones.

use super::{sequence_index, ToyLm, HORIZON, PROMPT, SEQUENCES};
use crate::sampling::speculative::Variant;
use crate::sampling::Dist;

/// A way of producing tokens from the toy LM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Sample every token from the target p (the reference).
    Target,
    /// Speculative decoding with γ draft tokens per target call and a verification rule.
    Speculative { gamma: u32, variant: Variant },
}

/// The exact distribution over the 625 sequences of the first 4 output tokens.
pub fn exact_distribution(lm: &ToyLm, strategy: Strategy) -> Dist {
    let mut e = Enumerator { lm, strategy, out: vec![0.0; SEQUENCES], ctx: PROMPT.to_vec() };
    e.step(1.0);
    e.out
}

struct Enumerator<'a> {
    lm: &'a ToyLm,
    strategy: Strategy,
    out: Dist,
    ctx: Vec<usize>,
}

impl Enumerator<'_> {
    fn emitted(&self) -> usize {
        self.ctx.len() - PROMPT.len()
    }

    /// Records the branch if it is long enough; returns whether it was.
    fn record(&mut self, prob: f64) -> bool {
        if self.emitted() < HORIZON {
            return false;
        }
        self.out[sequence_index(&self.ctx[PROMPT.len()..PROMPT.len() + HORIZON])] += prob;
        true
    }

    /// Emits one token from `dist` and continues with `then`.
    fn branch(&mut self, dist: &[f64], prob: f64, then: impl Fn(&mut Self, f64)) {
        for (y, &w) in dist.iter().enumerate() {
            if w > 0.0 {
                self.ctx.push(y);
                then(self, prob * w);
                self.ctx.pop();
            }
        }
    }

    /// The start of one target call (or one plain sampling step).
    fn step(&mut self, prob: f64) {
        if self.record(prob) {
            return;
        }
        match self.strategy {
            Strategy::Target => {
                let p = self.lm.p(&self.ctx).to_vec();
                self.branch(&p, prob, Self::step);
            }
            Strategy::Speculative { gamma, variant } => self.draft(0, gamma, variant, prob),
        }
    }

    /// Draft position i of γ within one target call.
    fn draft(&mut self, i: u32, gamma: u32, variant: Variant, prob: f64) {
        if self.record(prob) {
            return;
        }
        let (p, q) = (self.lm.p(&self.ctx).to_vec(), self.lm.q(&self.ctx).to_vec());
        if i == gamma {
            self.branch(&variant.bonus_dist(&p, &q), prob, Self::step);
            return;
        }
        let reject = variant.reject_dist(&p, &q);
        for (x, &w) in variant.draft_dist(&q).iter().enumerate() {
            if w <= 0.0 {
                continue;
            }
            let a = variant.accept_prob(&p, &q, x);
            if a > 0.0 {
                self.ctx.push(x);
                self.draft(i + 1, gamma, variant, prob * w * a);
                self.ctx.pop();
            }
            if a < 1.0 {
                self.branch(&reject, prob * w * (1.0 - a), Self::step);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::tv;
    use crate::toy::ToyConfig;

    fn lm() -> ToyLm {
        ToyLm::new(&ToyConfig::default())
    }

    #[test]
    fn target_distribution_sums_to_one() {
        let d = exact_distribution(&lm(), Strategy::Target);
        assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(d.iter().all(|&x| x > 0.0));
    }

    #[test]
    fn correct_algorithm_is_exact_for_gamma_1_to_4() {
        // Lecture demo 02.2: TV to the target ≤ 1e-12 (it prints 1e-16) for γ = 1..4.
        for seed in [0, 1, 2] {
            let lm = ToyLm::new(&ToyConfig { seed, ..ToyConfig::default() });
            let target = exact_distribution(&lm, Strategy::Target);
            for gamma in 1..=4 {
                let d = exact_distribution(&lm, Strategy::Speculative { gamma, variant: Variant::Correct });
                let t = tv(&d, &target);
                assert!(t <= 1e-12, "seed {seed} γ {gamma}: TV {t}");
            }
        }
    }

    #[test]
    fn wrong_variants_are_visibly_biased_at_gamma_3() {
        // Lecture: ≈ 0.2–0.5 at γ 3 for the wrong variants. In kind: every wrong variant is far
        // from exact, and the subtle one (resample from p) is the least biased.
        let lm = lm();
        let target = exact_distribution(&lm, Strategy::Target);
        let tv_of = |variant| tv(&exact_distribution(&lm, Strategy::Speculative { gamma: 3, variant }), &target);
        let subtle = tv_of(Variant::ResampleFromTarget);
        assert!(subtle > 0.1, "{subtle}");
        for v in [Variant::GreedyRule, Variant::ArgmaxDraft, Variant::AcceptQOverP] {
            let t = tv_of(v);
            assert!(t > subtle && t < 0.9, "{v:?}: {t}");
        }
        // The bonus token only comes from q when all γ drafts were accepted: a smaller bias, but
        // ten orders of magnitude above the correct rule's rounding.
        assert!(tv_of(Variant::BonusFromDraft) > 0.02);
    }

    #[test]
    fn gamma_zero_is_plain_target_sampling() {
        let lm = lm();
        let d = exact_distribution(&lm, Strategy::Speculative { gamma: 0, variant: Variant::GreedyRule });
        assert!(tv(&d, &exact_distribution(&lm, Strategy::Target)) <= 1e-12);
    }
}

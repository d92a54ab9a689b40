//! Exact distribution of the first n output tokens of the toy LM under a decoding strategy
//! (lecture §2.3, demo 02.2), computed two ways that must agree. n, the window, is [`HORIZON`]
//! (4, the lecture's) unless a caller asks for another: a rule's error can show only inside the
//! window, so a rule that errs at draft position γ + 1 (the bonus token) looks exact to any window
//! of at most γ tokens.
//!
//! [`exact_distribution_by_branches`] is the reference: it enumerates speculative decoding branch
//! by branch — each draft token with its probability, then acceptance (continue drafting) or
//! rejection (one token from the rejection distribution, step over). Drafts after a rejection are
//! never looked at, so they are not enumerated: drawing them lazily gives the same distribution as
//! drawing all γ first, because the acceptance coin at position i is independent of the later
//! drafts. A branch stops once it has emitted n tokens: later tokens cannot change the first.
//!
//! [`exact_distribution`] is the fast path the page calls on every slider move. The algorithm's
//! whole state is (tokens emitted so far, drafts accepted in the current call): the context is
//! the prompt plus the emitted tokens. Many branches meet in the same state, so a forward pass
//! over the at most Σ 5^ℓ · (γ + 1) states sums the same products once each.

use super::{sequence_index, ToyLm, HORIZON, PROMPT, VOCAB};
use crate::sampling::rule::Rule;
use crate::sampling::speculative::Variant;
use crate::sampling::Dist;

/// A way of producing tokens from the toy LM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Sample every token from the target p (the reference).
    Target,
    /// Speculative decoding with γ draft tokens per target call and a verification rule.
    Speculative { gamma: u32, rule: Rule },
}

/// The exact distribution over the 625 sequences of the first 4 output tokens (forward pass over
/// the algorithm's states; see the module documentation).
pub fn exact_distribution(lm: &ToyLm, strategy: Strategy) -> Dist {
    exact_distribution_over(lm, strategy, HORIZON)
}

/// The exact distribution over the 5ⁿ sequences of the first `window` output tokens (the cost
/// grows as 5ⁿ · (γ + 1) states).
pub fn exact_distribution_over(lm: &ToyLm, strategy: Strategy, window: usize) -> Dist {
    let (gamma, variant) = match strategy {
        // Plain sampling is speculative decoding with no drafts and the bonus token from p.
        Strategy::Target => (0, Rule::Lecture(Variant::Correct)),
        Strategy::Speculative { gamma, rule } => (gamma as usize, rule),
    };
    let slots = gamma + 1;
    // mass[ℓ][prefix · slots + i]: probability of having emitted `prefix` (ℓ tokens, as a base-5
    // number) with i drafts accepted so far in the current target call.
    let mut mass: Vec<Dist> = (0..=window)
        .map(|l| vec![0.0; VOCAB.pow(l as u32) * slots])
        .collect();
    mass[0][0] = 1.0;
    let mut ctx = PROMPT.to_vec();
    for len in 0..window {
        let (here, next) = mass.split_at_mut(len + 1);
        let (here, next) = (&here[len], &mut next[0]);
        for prefix in 0..VOCAB.pow(len as u32) {
            let states = &here[prefix * slots..(prefix + 1) * slots];
            if states.iter().all(|&w| w == 0.0) {
                continue;
            }
            ctx.truncate(PROMPT.len());
            ctx.extend(decode(prefix, len));
            let (p, q) = (lm.p(&ctx), lm.q(&ctx));
            let child = |y: usize, i: usize| (prefix * VOCAB + y) * slots + i;
            let (draft, reject) = (variant.draft_dist(q), variant.reject_dist(p, q));
            for (i, &w) in states.iter().enumerate().filter(|(_, &w)| w > 0.0) {
                if i == gamma {
                    for (y, &b) in variant.bonus_dist(p, q).iter().enumerate() {
                        next[child(y, 0)] += w * b;
                    }
                    continue;
                }
                for (x, &d) in draft.iter().enumerate().filter(|(_, &d)| d > 0.0) {
                    let a = variant.accept_prob(p, q, x);
                    next[child(x, i + 1)] += w * d * a;
                    for (y, &r) in reject.iter().enumerate() {
                        next[child(y, 0)] += w * d * (1.0 - a) * r;
                    }
                }
            }
        }
    }
    mass[window]
        .chunks(slots)
        .map(|states| states.iter().sum())
        .collect()
}

/// Expected tokens per target call, exactly, when a call starts from each of the 25 contexts with
/// equal weight (lecture §2.6: "formula vs measured tokens per step"). A call yields one token for
/// the final rejection or bonus plus every accepted draft, so E = 1 + Σ_{i=1}^{γ} P(first i
/// accepted); the probability of each (context, i) is carried forward like [`exact_distribution`].
pub fn expected_tokens_per_call(lm: &ToyLm, gamma: u32, rule: impl Into<Rule>) -> f64 {
    let variant: Rule = rule.into();
    let contexts = VOCAB * VOCAB;
    let mut reach = vec![1.0 / contexts as f64; contexts];
    let mut expected = 1.0;
    for _ in 0..gamma {
        let mut next = vec![0.0; contexts];
        for (c, &w) in reach.iter().enumerate().filter(|(_, &w)| w > 0.0) {
            let ctx = [c / VOCAB, c % VOCAB];
            let (p, q) = (lm.p(&ctx), lm.q(&ctx));
            for (x, &d) in variant
                .draft_dist(q)
                .iter()
                .enumerate()
                .filter(|(_, &d)| d > 0.0)
            {
                next[ctx[1] * VOCAB + x] += w * d * variant.accept_prob(p, q, x);
            }
        }
        expected += next.iter().sum::<f64>();
        reach = next;
    }
    expected
}

/// The tokens of a base-5 `prefix` of length `len`, first token first.
fn decode(mut prefix: usize, len: usize) -> Vec<usize> {
    let mut tokens = vec![0; len];
    for t in tokens.iter_mut().rev() {
        *t = prefix % VOCAB;
        prefix /= VOCAB;
    }
    tokens
}

/// The reference enumeration, branch by branch (see the module documentation).
pub fn exact_distribution_by_branches(lm: &ToyLm, strategy: Strategy) -> Dist {
    exact_distribution_by_branches_over(lm, strategy, HORIZON)
}

/// The reference enumeration over the first `window` output tokens.
pub fn exact_distribution_by_branches_over(lm: &ToyLm, strategy: Strategy, window: usize) -> Dist {
    let mut e = Enumerator {
        lm,
        strategy,
        window,
        out: vec![0.0; VOCAB.pow(window as u32)],
        ctx: PROMPT.to_vec(),
    };
    e.step(1.0);
    e.out
}

struct Enumerator<'a> {
    lm: &'a ToyLm,
    strategy: Strategy,
    window: usize,
    out: Dist,
    ctx: Vec<usize>,
}

impl Enumerator<'_> {
    fn emitted(&self) -> usize {
        self.ctx.len() - PROMPT.len()
    }

    /// Records the branch if it is long enough; returns whether it was.
    fn record(&mut self, prob: f64) -> bool {
        if self.emitted() < self.window {
            return false;
        }
        self.out[sequence_index(&self.ctx[PROMPT.len()..PROMPT.len() + self.window])] += prob;
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
            Strategy::Speculative { gamma, rule } => self.draft(0, gamma, rule, prob),
        }
    }

    /// Draft position i of γ within one target call.
    fn draft(&mut self, i: u32, gamma: u32, variant: Rule, prob: f64) {
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
            let lm = ToyLm::new(&ToyConfig {
                seed,
                ..ToyConfig::default()
            });
            let target = exact_distribution(&lm, Strategy::Target);
            for gamma in 1..=4 {
                let d = exact_distribution(
                    &lm,
                    Strategy::Speculative {
                        gamma,
                        rule: Variant::Correct.into(),
                    },
                );
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
        let tv_of = |variant| {
            tv(
                &exact_distribution(
                    &lm,
                    Strategy::Speculative {
                        gamma: 3,
                        rule: Rule::from(variant),
                    },
                ),
                &target,
            )
        };
        let subtle = tv_of(Variant::ResampleFromTarget);
        assert!(subtle > 0.1, "{subtle}");
        for v in [
            Variant::GreedyRule,
            Variant::ArgmaxDraft,
            Variant::AcceptQOverP,
        ] {
            let t = tv_of(v);
            assert!(t > subtle && t < 0.9, "{v:?}: {t}");
        }
        // The bonus token only comes from q when all γ drafts were accepted: a smaller bias, but
        // ten orders of magnitude above the correct rule's rounding.
        assert!(tv_of(Variant::BonusFromDraft) > 0.02);
    }

    #[test]
    fn forward_pass_equals_branch_enumeration() {
        for seed in [0, 3] {
            let lm = ToyLm::new(&ToyConfig {
                seed,
                ..ToyConfig::default()
            });
            let mut strategies = vec![Strategy::Target];
            for gamma in 0..=5 {
                strategies.extend(Variant::ALL.map(|v| Strategy::Speculative {
                    gamma,
                    rule: v.into(),
                }));
            }
            for s in strategies {
                let (fast, reference) = (
                    exact_distribution(&lm, s),
                    exact_distribution_by_branches(&lm, s),
                );
                let worst = fast
                    .iter()
                    .zip(&reference)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                assert!(worst <= 1e-15, "{s:?}: {worst}");
            }
        }
    }

    #[test]
    fn a_wider_window_agrees_with_the_branches_and_marginalises_to_the_narrower() {
        let lm = lm();
        for window in [1, 3, 5, 6] {
            for gamma in [1, 4, 5] {
                let s = Strategy::Speculative {
                    gamma,
                    rule: Variant::BonusFromDraft.into(),
                };
                let fast = exact_distribution_over(&lm, s, window);
                let reference = exact_distribution_by_branches_over(&lm, s, window);
                assert_eq!(fast.len(), VOCAB.pow(window as u32));
                let worst = fast
                    .iter()
                    .zip(&reference)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                assert!(worst <= 1e-15, "window {window} γ {gamma}: {worst}");
                // Summing out the last token gives the window one shorter.
                if window > 1 {
                    let shorter = exact_distribution_over(&lm, s, window - 1);
                    let summed: Vec<f64> = fast.chunks(VOCAB).map(|c| c.iter().sum()).collect();
                    assert!(tv(&summed, &shorter) <= 1e-14);
                }
            }
        }
    }

    #[test]
    fn bonus_from_draft_is_invisible_to_a_window_of_gamma_tokens_and_caught_by_gamma_plus_one() {
        // Lecture §2.3: a test sees only what its window reaches. The bonus token is the call's
        // (γ + 1)-th: a window of γ tokens never reaches it, one of γ + 1 does.
        let lm = lm();
        for gamma in 1..=5u32 {
            let s = Strategy::Speculative {
                gamma,
                rule: Variant::BonusFromDraft.into(),
            };
            let g = gamma as usize;
            let tv_at = |w| {
                tv(
                    &exact_distribution_over(&lm, s, w),
                    &exact_distribution_over(&lm, Strategy::Target, w),
                )
            };
            assert!(tv_at(g) <= 1e-12, "γ {gamma}: window γ {}", tv_at(g));
            assert!(
                tv_at(g + 1) > 1e-3,
                "γ {gamma}: window γ+1 {}",
                tv_at(g + 1)
            );
        }
    }

    #[test]
    fn typical_acceptance_enumerates_the_same_both_ways_and_is_biased() {
        use crate::sampling::typical::Typical;
        let lm = lm();
        let target = exact_distribution(&lm, Strategy::Target);
        for (epsilon, delta, biased) in [(0.09, 0.3, true), (0.3, 0.6, true), (0.0, 0.0, true)] {
            let t = Typical::new(epsilon, delta).unwrap();
            for gamma in 1..=4 {
                let s = Strategy::Speculative {
                    gamma,
                    rule: Rule::Typical(t),
                };
                let (fast, reference) = (
                    exact_distribution(&lm, s),
                    exact_distribution_by_branches(&lm, s),
                );
                assert!(tv(&fast, &reference) <= 1e-15, "{t:?} γ {gamma}");
                let to_target = tv(&fast, &target);
                assert_eq!(to_target > 1e-3, biased, "{t:?} γ {gamma}: {to_target}");
            }
        }
    }

    #[test]
    fn gamma_zero_is_plain_target_sampling() {
        let lm = lm();
        let d = exact_distribution(
            &lm,
            Strategy::Speculative {
                gamma: 0,
                rule: Variant::GreedyRule.into(),
            },
        );
        assert!(tv(&d, &exact_distribution(&lm, Strategy::Target)) <= 1e-12);
    }
}

//! The toy LM of [`crate::toy`] as a [`LanguageModel`]: its target or its draft table, looked up
//! by the last two tokens of each node's context. With [`super::chance::enumerate`], the engine's
//! exact output distribution on the toy is checked against the independent enumerations of
//! `toy::enumerate` (chains, every variant) and against the target's own distribution (trees).

use super::{LanguageModel, Speculation};
use crate::error::Error;
use crate::sampling::Dist;
use crate::toy::{ToyLm, VOCAB};

/// The toy target (`draft: false`) or draft.
pub struct ToyModel<'a> {
    pub lm: &'a ToyLm,
    pub draft: bool,
}

impl ToyModel<'_> {
    fn dist(&self, ctx: &[usize]) -> Dist {
        if self.draft {
            self.lm.q(ctx).to_vec()
        } else {
            self.lm.p(ctx).to_vec()
        }
    }
}

impl LanguageModel for ToyModel<'_> {
    fn vocab(&self) -> usize {
        VOCAB
    }

    async fn score(&mut self, context: &[u32], tree: &Speculation) -> Result<Vec<Dist>, Error> {
        let base: Vec<usize> = context.iter().map(|&t| t as usize).collect();
        let mut out = vec![self.dist(&base)];
        for node in 0..tree.len() {
            let mut ctx = base.clone();
            ctx.extend(tree.path_to(node).iter().map(|&n| tree.tokens[n] as usize));
            out.push(self.dist(&ctx));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::chance::{enumerate, Branch};
    use crate::decode::engine::{generate, step, ChainRule, Config, Method, TreeRule};
    use crate::decode::ready;
    use crate::decode::stats::Ending;
    use crate::decode::Generation;
    use crate::decode::Shape;
    use crate::sampling::multi::Children;
    use crate::sampling::rule::Rule;
    use crate::sampling::speculative::Variant;
    use crate::sampling::tv;
    use crate::sampling::typical::Typical;
    use crate::toy::enumerate::{exact_distribution, Strategy};
    use crate::toy::{sequence_index, ToyConfig, HORIZON, PROMPT, SEQUENCES};
    use std::collections::HashMap;

    const CLOCK: &dyn Fn() -> f64 = &|| 0.0;

    fn lm(seed: u64, draft_noise: f64) -> ToyLm {
        ToyLm::new(&ToyConfig {
            seed,
            draft_noise,
            ..ToyConfig::default()
        })
    }

    /// The toy target and its one draft.
    fn models(lm: &ToyLm) -> (ToyModel<'_>, [ToyModel<'_>; 1]) {
        (
            ToyModel { lm, draft: false },
            [ToyModel { lm, draft: true }],
        )
    }

    fn config(method: Method, max_len: usize) -> Config {
        Config {
            method,
            max_len,
            eos: None,
            trace: false,
        }
    }

    /// The distribution of the tokens one engine step emits after `ctx`, by enumeration. The
    /// drafts are the draft tables of `lms` (two for merge trees).
    fn step_distribution(lms: &[&ToyLm], method: &Method, ctx: &[u32]) -> HashMap<Vec<u32>, f64> {
        let cfg = config(method.clone(), usize::MAX);
        let mut out = HashMap::new();
        enumerate(
            |chance: &mut Branch| {
                let mut target = ToyModel {
                    lm: lms[0],
                    draft: false,
                };
                let mut drafts: Vec<ToyModel> =
                    lms.iter().map(|lm| ToyModel { lm, draft: true }).collect();
                let mut g = Generation::default();
                let at = crate::decode::engine::At { ctx, offset: 0 };
                let fut = step(&mut target, &mut drafts, at, &cfg, chance, CLOCK, &mut g);
                ready(fut).expect("the toy cannot fail")
            },
            |w, emitted| *out.entry(emitted).or_insert(0.0) += w,
        );
        out
    }

    /// The exact distribution of the first `horizon` output tokens when the engine's steps are
    /// composed (each step from the context it reaches), over base-5 sequence indices.
    fn composed(lms: &[&ToyLm], method: &Method, horizon: usize) -> Vec<f64> {
        let mut memo: HashMap<[u32; 2], HashMap<Vec<u32>, f64>> = HashMap::new();
        let mut out = vec![0.0; 5usize.pow(horizon as u32)];
        let mut frontier: Vec<(Vec<u32>, f64)> = vec![(Vec::new(), 1.0)];
        while let Some((prefix, w)) = frontier.pop() {
            if prefix.len() >= horizon {
                let idx = prefix[..horizon].iter().fold(0, |a, &t| a * 5 + t as usize);
                out[idx] += w;
                continue;
            }
            let mut ctx: Vec<u32> = PROMPT.iter().map(|&t| t as u32).collect();
            ctx.extend(&prefix);
            let key = [ctx[ctx.len() - 2], ctx[ctx.len() - 1]];
            let steps = memo
                .entry(key)
                .or_insert_with(|| step_distribution(lms, method, &ctx));
            for (emitted, &pw) in steps.iter() {
                let mut next = prefix.clone();
                next.extend(emitted);
                frontier.push((next, w * pw));
            }
        }
        out
    }

    /// A distribution over 4-token sequences, marginalised to the first `horizon` tokens.
    fn marginal(d: &[f64], horizon: usize) -> Vec<f64> {
        let per = 5usize.pow((HORIZON - horizon) as u32);
        d.chunks(per).map(|c| c.iter().sum()).collect()
    }

    #[test]
    fn chains_equal_the_reference_enumeration_for_every_variant() {
        for seed in [0, 1] {
            let lm = lm(seed, 1.5);
            let target = exact_distribution(&lm, Strategy::Target);
            for gamma in 1..=3 {
                let typical = Rule::Typical(Typical::MEDUSA);
                for variant in Variant::ALL.map(Rule::Lecture).into_iter().chain([typical]) {
                    let method = Method::Chain {
                        draft: 0,
                        gamma,
                        rule: ChainRule::Sample(variant),
                    };
                    let engine = composed(&[&lm], &method, HORIZON);
                    let reference = exact_distribution(
                        &lm,
                        Strategy::Speculative {
                            gamma: gamma as u32,
                            rule: variant,
                        },
                    );
                    // The engine is the reference algorithm, wrong variants included…
                    let d = tv(&engine, &reference);
                    assert!(d <= 1e-12, "seed {seed} γ {gamma} {variant:?}: TV {d}");
                    // …so the correct one is exact and the wrong ones are not.
                    let to_target = tv(&engine, &target);
                    if variant.is_correct() {
                        assert!(to_target <= 1e-12, "γ {gamma}: {to_target}");
                    } else {
                        assert!(to_target > 1e-3, "{variant:?} γ {gamma}: {to_target}");
                    }
                }
            }
        }
    }

    #[test]
    fn stochastic_trees_are_exact_and_top_k_is_biased() {
        let lm = lm(0, 1.5);
        let target = marginal(&exact_distribution(&lm, Strategy::Target), 3);
        let tree = |widths: &[usize], children, rule| Method::Expand {
            draft: 0,
            shape: Shape::Widths(widths.to_vec()),
            children,
            rule,
        };
        for (widths, children, rule) in [
            (&[3][..], Children::Iid, TreeRule::Mss),
            (&[2, 1], Children::Iid, TreeRule::Mss),
            (&[1, 2], Children::WithoutReplacement, TreeRule::Mss),
            (&[3], Children::WithoutReplacement, TreeRule::Mss),
            (&[2, 1], Children::WithoutReplacement, TreeRule::Naive),
            (&[2], Children::TopK, TreeRule::Naive),
        ] {
            let d = tv(&composed(&[&lm], &tree(widths, children, rule), 3), &target);
            assert!(d <= 1e-12, "{widths:?} {children:?} {rule:?}: TV {d}");
        }
        // Deterministic top-k children verified with MSS as if sampled: biased (§4.5).
        for widths in [&[1][..], &[2, 1]] {
            let d = tv(
                &composed(&[&lm], &tree(widths, Children::TopK, TreeRule::Mss), 3),
                &target,
            );
            assert!(d > 0.01, "top-k {widths:?}: TV {d}");
        }
    }

    #[test]
    fn trees_of_any_shape_are_exact() {
        // Sequoia's trees give each node its own count: the root 2 children, the first of them
        // 2 and the second none; a lopsided ⟨1⟩ then ⟨3⟩ under it. Exact under MSS whatever
        // the shape, and greedy decides the target's argmax path.
        let lm = lm(0, 1.5);
        let target = marginal(&exact_distribution(&lm, Strategy::Target), 3);
        let shaped = |levels: Vec<Vec<usize>>, children, rule| Method::Expand {
            draft: 0,
            shape: Shape::Levels(levels),
            children,
            rule,
        };
        for levels in [
            vec![vec![2], vec![2, 0]],
            vec![vec![1], vec![3]],
            vec![vec![2], vec![0, 1], vec![2]],
        ] {
            for children in [Children::WithoutReplacement, Children::Iid] {
                let m = shaped(levels.clone(), children, TreeRule::Mss);
                let d = tv(&composed(&[&lm], &m, 3), &target);
                assert!(d <= 1e-12, "{levels:?} {children:?}: TV {d}");
            }
        }
        // A shape of uniform counts is the ⟨…⟩ tree: the same step distribution.
        let uniform = shaped(
            vec![vec![2], vec![1, 1]],
            Children::WithoutReplacement,
            TreeRule::Mss,
        );
        let widths = Method::Expand {
            draft: 0,
            shape: Shape::Widths(vec![2, 1]),
            children: Children::WithoutReplacement,
            rule: TreeRule::Mss,
        };
        assert_eq!(
            Shape::Widths(vec![2, 1]).levels(),
            vec![vec![2], vec![1, 1]]
        );
        assert_eq!(Shape::Widths(vec![2, 2, 1]).nodes(), 10);
        for ctx in [vec![0u32, 1], vec![2, 3]] {
            assert_eq!(
                step_distribution(&[&lm], &uniform, &ctx),
                step_distribution(&[&lm], &widths, &ctx)
            );
        }
    }

    #[test]
    fn merged_chains_of_two_drafts_are_exact_under_mss() {
        // Same target table, two different drafts (different noise).
        let (a, b) = (lm(0, 1.5), lm(0, 0.7));
        assert_eq!(a.p(&[0, 1]), b.p(&[0, 1]));
        let target = marginal(&exact_distribution(&a, Strategy::Target), 3);
        for rule in [TreeRule::Mss, TreeRule::Naive] {
            let d = tv(
                &composed(&[&a, &b], &Method::Merge { gamma: 2, rule }, 3),
                &target,
            );
            assert!(d <= 1e-12, "{rule:?}: TV {d}");
        }
    }

    #[test]
    fn the_whole_loop_is_exact_with_its_length_cap() {
        // `generate` itself, every branch, to the end (max_len caps the drafts near the end).
        let lm = lm(2, 1.5);
        let target = exact_distribution(&lm, Strategy::Target);
        let prompt: Vec<u32> = PROMPT.iter().map(|&t| t as u32).collect();
        for method in [
            Method::Target { greedy: false },
            Method::Chain {
                draft: 0,
                gamma: 3,
                rule: ChainRule::Sample(Variant::Correct.into()),
            },
            Method::Expand {
                draft: 0,
                shape: Shape::Widths(vec![2, 1]),
                children: Children::WithoutReplacement,
                rule: TreeRule::Mss,
            },
        ] {
            let cfg = config(method.clone(), PROMPT.len() + 3);
            let mut d = vec![0.0; SEQUENCES / 5];
            let branches = enumerate(
                |chance: &mut Branch| {
                    let (mut t, mut drafts) = models(&lm);
                    let fut = generate(&mut t, &mut drafts, &prompt, &cfg, chance, CLOCK);
                    ready(fut).unwrap().output
                },
                |w, out| {
                    assert_eq!(out.len(), 3);
                    let idx: Vec<usize> = out.iter().map(|&t| t as usize).collect();
                    d[sequence_index(&idx)] += w;
                },
            );
            let t = tv(&d, &marginal(&target, 3));
            assert!(t <= 1e-12, "{method:?}: TV {t} over {branches} branches");
        }
    }

    #[test]
    fn greedy_chains_and_trees_reproduce_the_targets_greedy_output() {
        for seed in 0..5 {
            let lm = lm(seed, 1.5);
            let prompt: Vec<u32> = PROMPT.iter().map(|&t| t as u32).collect();
            let run = |method: Method| {
                let (mut t, mut drafts) = models(&lm);
                let cfg = config(method, 14);
                let mut c = crate::decode::Seeded::new(0);
                ready(generate(&mut t, &mut drafts, &prompt, &cfg, &mut c, CLOCK)).unwrap()
            };
            let reference = run(Method::Target { greedy: true });
            assert_eq!(reference.stats.target_calls, 12);
            for method in [
                Method::Chain {
                    draft: 0,
                    gamma: 4,
                    rule: ChainRule::Greedy,
                },
                Method::Expand {
                    draft: 0,
                    shape: Shape::Widths(vec![2, 2, 1]),
                    children: Children::Iid,
                    rule: TreeRule::Greedy,
                },
            ] {
                let g = run(method.clone());
                assert_eq!(g.output, reference.output, "seed {seed} {method:?}");
                assert!(g.stats.target_calls <= 12);
                assert_eq!(
                    g.stats.tokens,
                    g.stats
                        .accepted
                        .iter()
                        .enumerate()
                        .map(|(n, c)| (n + 1) * c)
                        .sum::<usize>()
                );
            }
        }
    }

    /// The step-through's side-by-side rows say what each rule drew from: the residual for
    /// Algorithm 1 after a rejection, p for the rules that resample from the target, q for the
    /// bonus from the draft; and the checks' a is the rule's own (min(1, q/p) for the swapped
    /// one). The page labels the steps from these, so a wrong rule cannot hide behind the
    /// correct rule's words.
    #[test]
    fn step_traces_show_what_the_rule_in_force_drew_from() {
        let lm = lm(3, 1.5);
        let prompt: Vec<u32> = PROMPT.iter().map(|&t| t as u32).collect();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12;
        for variant in Variant::ALL {
            let (mut t, mut drafts) = models(&lm);
            let mut cfg = config(
                Method::Chain {
                    draft: 0,
                    gamma: 3,
                    rule: ChainRule::Sample(variant.into()),
                },
                60,
            );
            cfg.trace = true;
            let (mut residuals, mut bonuses) = (0, 0);
            for seed in 0..20 {
                let mut c = crate::decode::Seeded::new(seed);
                let g = ready(generate(&mut t, &mut drafts, &prompt, &cfg, &mut c, CLOCK)).unwrap();
                for st in &g.trace {
                    // A rejection always compares; a bonus where the draft's q after the chain
                    // was computed (the bonus from the draft needs it).
                    assert!(
                        st.ending != Ending::Residual || !st.compare.is_empty(),
                        "{variant:?}: a rejected step compares"
                    );
                    for check in &st.checks {
                        let (p, q) = (check.p, check.q.expect("a sampled draft has q"));
                        match variant {
                            // Accept iff x = argmax p: a is 0 or 1, whatever p and q are.
                            Variant::GreedyRule => assert!(check.a == 0.0 || check.a == 1.0),
                            Variant::AcceptQOverP => assert!(close(check.a, (q / p).min(1.0))),
                            _ => assert!(close(check.a, (p / q).min(1.0)), "{variant:?}"),
                        }
                    }
                    let drew = |row: &crate::decode::stats::Compared| match (st.ending, variant) {
                        (Ending::Residual, Variant::ResampleFromTarget | Variant::GreedyRule) => {
                            row.p
                        }
                        (Ending::Residual, _) => row.residual,
                        (Ending::Bonus, Variant::BonusFromDraft) => row.q,
                        _ => row.p,
                    };
                    for row in &st.compare {
                        assert!(
                            close(row.drawn, drew(row)),
                            "{variant:?} {:?}: {row:?}",
                            st.ending
                        );
                    }
                    let compared = !st.compare.is_empty();
                    residuals += usize::from(compared && st.ending == Ending::Residual);
                    bonuses += usize::from(compared && st.ending == Ending::Bonus);
                }
            }
            assert!(residuals > 0, "{variant:?}: no rejection compared");
            if variant == Variant::BonusFromDraft {
                assert!(bonuses > 0, "no bonus from the draft compared");
            }
        }
    }
}

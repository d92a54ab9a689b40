//! Sequoia's table against brute force over every tree, exactly; the falling vector's best nodes;
//! the contract's bad input.

use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Every ordered tree of exactly `n` nodes, depth ≤ `depth`, ≤ `ranks` children a node, as
/// (parents, ranks): from its depth-first sequence of depths (d₁ = 1, d_{i+1} ≤ d_i + 1).
fn every_tree(n: usize, depth: usize, ranks: usize) -> Vec<(Vec<Option<usize>>, Vec<usize>)> {
    let mut out = Vec::new();
    let mut seq = Vec::new();
    fn walk(
        seq: &mut Vec<usize>,
        n: usize,
        depth: usize,
        ranks: usize,
        out: &mut Vec<(Vec<Option<usize>>, Vec<usize>)>,
    ) {
        if seq.len() == n {
            // The parent of node i: the last earlier node one level up; its rank: earlier siblings.
            let mut parents = Vec::with_capacity(n);
            let mut rank = Vec::with_capacity(n);
            for i in 0..n {
                let parent = (0..i)
                    .rev()
                    .find(|&j| seq[j] + 1 == seq[i])
                    .filter(|_| seq[i] > 1);
                let siblings = (0..i)
                    .filter(|&j| seq[j] == seq[i] && parents[j] == parent)
                    .count();
                parents.push(parent);
                rank.push(siblings);
            }
            if rank.iter().all(|&r| r < ranks) {
                out.push((parents, rank));
            }
            return;
        }
        let top = seq.last().map_or(1, |&d| (d + 1).min(depth));
        for d in 1..=top {
            seq.push(d);
            walk(seq, n, depth, ranks, out);
            seq.pop();
        }
    }
    walk(&mut seq, n, depth, ranks, &mut out);
    out
}

fn random_vector(rng: &mut StdRng, k: usize, falling: bool) -> Acceptance {
    let mut p: Vec<f64> = (0..k).map(|_| rng.random::<f64>()).collect();
    let total = p.iter().sum::<f64>() / rng.random_range(0.3..1.0);
    p.iter_mut().for_each(|x| *x /= total);
    if falling {
        p.sort_by(|a, b| b.total_cmp(a));
    }
    Acceptance::new(p).expect("valid by construction")
}

#[test]
fn the_table_is_the_best_of_every_tree() {
    let mut rng = StdRng::seed_from_u64(7);
    let mut checked = 0;
    for round in 0..24 {
        let k = 1 + round % 4;
        let p = random_vector(&mut rng, k, round % 2 == 0);
        let table = Table::new(&p, 7, 7);
        for n in 1..=7 {
            for d in 1..=7 {
                let trees = every_tree(n, d, k);
                let best = trees
                    .iter()
                    .map(|(par, r)| expected_tokens(&p, par, r))
                    .fold(f64::NEG_INFINITY, f64::max);
                match table.plan(n, d) {
                    None => assert!(trees.is_empty(), "{p:?} n {n} d {d}: a tree fits"),
                    Some(plan) => {
                        assert!(
                            (plan.expected_tokens - best).abs() <= 1e-12,
                            "{p:?} n {n} d {d}: {} vs {best}",
                            plan.expected_tokens
                        );
                        assert_eq!(plan.nodes(), n);
                        assert!(plan.depth() <= d);
                        let again = expected_tokens(&p, &plan.parents, &plan.ranks);
                        assert!((again - best).abs() <= 1e-12);
                        // Ranks run 0, 1, … under each parent: the plan is a tree the draft can fill.
                        for (i, &r) in plan.ranks.iter().enumerate() {
                            let elder = (0..i)
                                .filter(|&j| plan.parents[j] == plan.parents[i])
                                .count();
                            assert_eq!(r, elder, "node {i}");
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 500, "{checked}");
}

#[test]
fn a_vector_a_depth_is_the_best_of_every_tree() {
    let mut rng = StdRng::seed_from_u64(5);
    for round in 0..20 {
        let k = 1 + round % 3;
        let rows: Vec<Acceptance> = (0..1 + round % 3)
            .map(|_| random_vector(&mut rng, k, round % 2 == 1))
            .collect();
        for d in 1..=6 {
            let table = Table::by_depth(&rows, 6, d);
            for n in 1..=6 {
                let trees = every_tree(n, d, k);
                let best = trees
                    .iter()
                    .map(|(par, r)| expected_tokens_by_depth(&rows, par, r))
                    .fold(f64::NEG_INFINITY, f64::max);
                match table.plan(n, d) {
                    None => assert!(trees.is_empty()),
                    Some(plan) => assert!(
                        (plan.expected_tokens - best).abs() <= 1e-12,
                        "{rows:?} {n} {d}"
                    ),
                }
            }
            // A table a depth answers its own depth only.
            if rows.len() > 1 && d > 1 {
                assert!(table.plan(1, d - 1).is_none());
            }
        }
    }
}

#[test]
fn a_rising_vector_is_not_the_best_nodes() {
    // p₂ > p₁: a second child is worth more than a first, but needs the first beside it.
    let p = Acceptance::new(vec![0.1, 0.8]).unwrap();
    let plan = sequoia(&p, 2, 2).unwrap();
    assert_eq!(plan.ranks, vec![0, 1]);
    assert!((plan.expected_tokens - 1.9).abs() < 1e-15);
    // Greedy best-first sees only the first child's 0.1 and then a grandchild's 0.01 below it
    // or the sibling's 0.8: it gets there too, but with 3 nodes its choice differs from the DP.
    let dp = sequoia(&p, 3, 3).unwrap();
    let every = every_tree(3, 3, 2);
    let best = every
        .iter()
        .map(|(a, b)| expected_tokens(&p, a, b))
        .fold(0.0, f64::max);
    assert!((dp.expected_tokens - best).abs() < 1e-12);
}

#[test]
fn a_falling_vector_gives_its_best_nodes() {
    let mut rng = StdRng::seed_from_u64(11);
    for round in 0..30 {
        let p = random_vector(&mut rng, 1 + round % 6, true);
        let n = 1 + round % 40;
        let table = Table::new(&p, n, n);
        let dp = table.plan(n, n).unwrap();
        let greedy = best_nodes(&p, n);
        assert!(
            (dp.expected_tokens - greedy.expected_tokens).abs() <= 1e-12,
            "{p:?} {n}"
        );
        assert!(
            (expected_tokens(&p, &greedy.parents, &greedy.ranks) - greedy.expected_tokens).abs()
                <= 1e-12
        );
    }
}

#[test]
fn by_hand() {
    // Two nodes: a chain 0.5 + 0.25 or two children 0.5 + 0.3.
    let p = Acceptance::parse("0.5, 0.3").unwrap();
    let wide = sequoia(&p, 2, 2).unwrap();
    assert_eq!(
        (wide.parents.clone(), wide.ranks.clone()),
        (vec![None, None], vec![0, 1])
    );
    assert!((wide.expected_tokens - 1.8).abs() < 1e-15);
    assert_eq!(wide.levels(), vec![vec![2]]);
    assert_eq!(wide.labels(), vec!["1", "2"]);
    // One rank: the chain, 1 + p + p² + p³.
    let one = Acceptance::new(vec![0.5]).unwrap();
    let chain = sequoia(&one, 3, 3).unwrap();
    assert_eq!(chain.parents, vec![None, Some(0), Some(1)]);
    assert_eq!(chain.levels(), vec![vec![1], vec![1], vec![1]]);
    assert_eq!(chain.labels(), vec!["1", "1.1", "1.1.1"]);
    assert!((chain.expected_tokens - one.chain_tokens(3)).abs() < 1e-15);
    assert!((one.chain_tokens(3) - 1.875).abs() < 1e-15);
}

#[test]
fn levels_list_each_frontier_node() {
    // Root → 1, 2; 1 → 1.1, 1.2; 2 → 2.1; 1.2 → 1.2.1.
    let plan = Plan {
        parents: vec![None, None, Some(0), Some(0), Some(1), Some(3)],
        ranks: vec![0, 1, 0, 1, 0, 0],
        expected_tokens: 0.0,
    };
    assert_eq!(plan.levels(), vec![vec![2], vec![2, 1], vec![0, 1, 0]]);
    assert_eq!(plan.depth(), 3);
    assert_eq!(plan.labels(), vec!["1", "2", "1.1", "1.2", "2.1", "1.2.1"]);
}

#[test]
fn bad_input_is_named() {
    let msg = |e: Error| e.message(crate::i18n::Lang::En);
    assert!(msg(Acceptance::parse("0.6,0.5").unwrap_err()).contains("sum to 1.1000, over 1"));
    assert!(msg(Acceptance::parse("0.6,-0.1").unwrap_err())
        .starts_with("acceptance = -0.1 is out of range: 0 ≤ p_i ≤ 1"));
    assert!(msg(Acceptance::parse("0.6,x").unwrap_err()).contains("\"x\" is not a number"));
    assert!(msg(Acceptance::parse("NaN").unwrap_err()).contains("is not a number"));
    assert!(msg(Acceptance::parse("").unwrap_err()).contains("is not a number"));
    let p = Acceptance::new(vec![0.5, 0.2]).unwrap();
    assert!(msg(sequoia(&p, 0, 3).unwrap_err()).starts_with("budget = 0 is out of range"));
    assert!(msg(sequoia(&p, 3, 0).unwrap_err()).starts_with("depth = 0 is out of range"));
    assert!(msg(sequoia(&p, 7, 2).unwrap_err()).contains("2 levels hold at most 6 nodes"));
    assert_eq!(capacity(2, 2), 6);
    assert_eq!(capacity(16, 64), usize::MAX);
}

#[test]
fn labels_read_back() {
    let plan = Plan::from_labels("1 2 1.1 1.2 2.1 1.2.1").unwrap();
    assert_eq!(
        plan.parents,
        vec![None, None, Some(0), Some(0), Some(1), Some(3)]
    );
    assert_eq!(plan.labels().join(" "), "1 2 1.1 1.2 2.1 1.2.1");
    let msg = |t: &str| {
        Plan::from_labels(t)
            .unwrap_err()
            .message(crate::i18n::Lang::En)
    };
    assert!(msg("1 1.1.1").contains("comes before its parent"));
    assert!(msg("2").contains("not the next rank"));
    assert!(msg("1 1").contains("not the next rank"));
    assert!(msg("1 x").contains("not a rank path"));
    assert!(msg("1 0").contains("not a rank path"));
    assert!(msg("  ").contains("no nodes"));
}

//! The choice against exhaustive search over every tree; the regimes the lecture names.

use super::*;
use crate::tree::sequoia::expected_tokens;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Every ordered tree of n nodes (≤ `ranks` children a node), as (parents, ranks, depth).
fn every_tree(n: usize, ranks: usize) -> Vec<(Vec<Option<usize>>, Vec<usize>, usize)> {
    // Grow trees node by node: a new node goes under any existing node (or the root) as its
    // next rank. Each ordered tree arises from several orders; duplicates do not matter here.
    let mut trees: Vec<(Vec<Option<usize>>, Vec<usize>)> = vec![(vec![], vec![])];
    for _ in 0..n {
        let mut next = Vec::new();
        for (parents, r) in &trees {
            let mut under: Vec<Option<usize>> = vec![None];
            under.extend((0..parents.len()).map(Some));
            for u in under {
                let rank = parents.iter().filter(|&&p| p == u).count();
                if rank < ranks {
                    let (mut a, mut b) = (parents.clone(), r.clone());
                    a.push(u);
                    b.push(rank);
                    next.push((a, b));
                }
            }
        }
        trees = next;
    }
    trees
        .into_iter()
        .map(|(a, b)| {
            let mut depth = vec![0; a.len()];
            for i in 0..a.len() {
                depth[i] = a[i].map_or(1, |p| depth[p] + 1);
            }
            let d = depth.into_iter().max().unwrap_or(0);
            (a, b, d)
        })
        .collect()
}

#[test]
fn the_choice_is_the_best_of_every_tree_and_chain() {
    let mut rng = StdRng::seed_from_u64(3);
    for round in 0..40 {
        let k = 1 + round % 3;
        let mut p: Vec<f64> = (0..k).map(|_| rng.random::<f64>()).collect();
        let total = p.iter().sum::<f64>() / rng.random_range(0.4..1.0);
        p.iter_mut().for_each(|x| *x /= total);
        let p = Acceptance::new(p).unwrap();
        // T(k) rising from 1 (sometimes not monotone: measured curves are noisy), up to 7 tokens.
        let mut t = vec![1.0];
        for _ in 1..7 {
            let last = *t.last().unwrap();
            t.push(last + rng.random_range(-0.05..0.5));
        }
        let times = Times::new(t).unwrap();
        let c = rng.random_range(0.0..0.3);
        let choice = choose(&p, &times, c).unwrap();
        let mut best_tree = 1.0f64;
        for n in 1..=6 {
            for (par, r, d) in every_tree(n, k) {
                let e = expected_tokens(&p, &par, &r);
                best_tree = best_tree.max(predicted(&times, e, n, d, c));
            }
        }
        assert!(
            (choice.tree.predicted_speedup - best_tree).abs() <= 1e-12,
            "round {round}"
        );
        let best_chain = (1..=6)
            .map(|g| predicted(&times, p.chain_tokens(g), g, g, c))
            .fold(1.0, f64::max);
        assert!((choice.chain.predicted_speedup - best_chain).abs() <= 1e-12);
        // A chain is a tree: the best tree is never worse.
        assert!(choice.tree.predicted_speedup >= choice.chain.predicted_speedup - 1e-12);
        // The pick's own figures are its tree's.
        let tr = &choice.tree;
        if tr.nodes > 0 {
            let e = expected_tokens(&p, &tr.parents, &tr.ranks);
            assert!((e - tr.expected_tokens).abs() <= 1e-12);
            assert!(
                (predicted(&times, e, tr.nodes, tr.depth, c) - tr.predicted_speedup).abs() <= 1e-12
            );
        }
    }
}

#[test]
fn a_vector_a_depth_is_searched_exhaustively_too() {
    use crate::tree::sequoia::expected_tokens_by_depth;
    let rows = [
        Acceptance::parse("0.5,0.3").unwrap(),
        Acceptance::parse("0.9,0.05").unwrap(),
        Acceptance::parse("0.2,0.6").unwrap(),
    ];
    let times = Times::parse("1,1.1,1.2,1.3,1.5,1.8,2.2").unwrap();
    let choice = choose_by_depth(&rows, &times, 0.05).unwrap();
    let mut best = 1.0f64;
    for n in 1..=6 {
        for (par, r, d) in every_tree(n, 2) {
            best = best.max(predicted(
                &times,
                expected_tokens_by_depth(&rows, &par, &r),
                n,
                d,
                0.05,
            ));
        }
    }
    assert!((choice.tree.predicted_speedup - best).abs() <= 1e-12);
    // The chain: 1 + 0.5 + 0.45 + 0.09 + …
    let chain3 = 1.0 + 0.5 + 0.5 * 0.9 + 0.5 * 0.9 * 0.2;
    let g3 = choice.grid.len(); // the grid is there; the chain's own figures:
    assert!(g3 > 0);
    let c3 = predicted(&times, chain3, 3, 3, 0.05);
    assert!(choice.chain.predicted_speedup >= c3 - 1e-12);
}

#[test]
fn a_flat_curve_takes_many_nodes_a_steep_one_few() {
    let p = Acceptance::parse("0.55,0.15,0.07,0.04").unwrap();
    // A GPU of the H200's kind: verifying 32 tokens costs about one call.
    let flat = Times::new((1..=33).map(|k| 1.0 + 0.004 * k as f64).collect()).unwrap();
    let gpu = choose(&p, &flat, 0.07).unwrap();
    assert!(gpu.tree.nodes >= 16, "{:?}", gpu.tree);
    assert!(gpu.tree.predicted_speedup >= 2.0);
    // A 2-core CPU: each token adds a quarter of a call.
    let steep = Times::new((1..=33).map(|k| 1.0 + 0.25 * (k - 1) as f64).collect()).unwrap();
    let cpu = choose(&p, &steep, 0.07).unwrap();
    assert!(cpu.tree.nodes <= 4, "{:?}", cpu.tree);
    assert!(cpu.tree.predicted_speedup < gpu.tree.predicted_speedup);
}

#[test]
fn plain_decoding_when_nothing_pays() {
    let p = Acceptance::parse("0.1").unwrap();
    let times = Times::parse("1, 2, 3").unwrap();
    let choice = choose(&p, &times, 0.5).unwrap();
    assert_eq!((choice.chain.gamma, choice.tree.nodes), (0, 0));
    assert_eq!(choice.tree.predicted_speedup, 1.0);
    // One rank: no tree of 2 nodes has depth 1, so (1, 1) and (2, 2) only.
    assert_eq!(choice.grid.len(), 2);
}

#[test]
fn bad_input_is_named() {
    let msg = |e: Error| e.message(crate::i18n::Lang::En);
    assert!(msg(Times::parse("1,0,2").unwrap_err()).contains("must be a positive number"));
    assert!(msg(Times::parse("1,-2").unwrap_err()).contains("must be a positive number"));
    assert!(msg(Times::parse("1,inf").unwrap_err()).contains("must be a positive number"));
    assert!(msg(Times::parse("1,a").unwrap_err()).contains("\"a\" is not a number"));
    assert!(msg(Times::parse("1").unwrap_err())
        .starts_with("number of times = 1 is out of range: 2 ≤ K ≤ 257"));
    let p = Acceptance::parse("0.5").unwrap();
    let t = Times::parse("1,1.2").unwrap();
    assert!(msg(choose(&p, &t, -0.1).unwrap_err())
        .starts_with("draft-cost = -0.1 is out of range: 0 ≤ c ≤ 100"));
}

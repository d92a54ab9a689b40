//! Per-sequence against tree-parallel decoding on the LikesWorld models (lecture §4.3, issue 34):
//! on every CPU backend, for the lecture's trees and several batch sizes, both ways give every
//! node the same distribution and greedy verification the same verdict, and each computes
//! exactly the tokens the lecture counts; EAGLE-2's dynamic tree, grown after each prompt, differs
//! between prompts and is counted prompt by prompt.
#![cfg(not(target_arch = "wasm32"))]

use burn::tensor::read_sync;
use specdec::i18n::Lang;
use specdec::lab::hidden::trees::{eagle2_trees, PromptTree};
use specdec::lab::paths::{
    both_ways, parse_batches, parse_source, parse_tree, tree_vs_paths, Drafted, PathsReport,
    TreeCounts, TreeSource, TOLERANCE,
};
use specdec::lab::Lab;
use specdec::likesworld::sampling_prompts;
use specdec::model::device::Backend;
use specdec::model::Models;

fn run(m: &Models, tree: &str, batches: &[usize]) -> PathsReport {
    // The real clock: a run repeats its calls until they have taken a while.
    let clock = specdec::clock::native_clock();
    let lab = Lab::new(m, Lang::En, &clock);
    read_sync(tree_vs_paths(lab, tree, batches, 5, &mut |_, _| {})).expect("runs")
}

#[test]
fn both_ways_agree_and_compute_the_lectures_token_counts_on_every_cpu_backend() {
    // (tree, nodes, path tokens): exercise 5, the slides' example, ⟨2,2,1⟩, ⟨2,2,2,2⟩.
    let cases = [
        ("exercise-5", 7, 9),
        ("slides", 6, 7),
        ("<2,2,1>", 10, 12),
        ("<2,2,2,2>", 30, 64),
    ];
    for backend in [Backend::Flex, Backend::Ndarray] {
        let m = read_sync(Models::load(backend)).expect("the shipped weights load");
        for (tree, nodes, paths) in cases {
            let r = run(&m, tree, &[1, 3, 7]);
            assert_eq!((r.nodes, r.path_tokens), (nodes, paths), "{tree}");
            for row in &r.rows {
                let b = row.batch;
                assert!(row.identical, "{backend:?} {tree} batch {b}: {r:?}");
                assert_eq!((row.tokens_tree, row.tokens_paths), (b * nodes, b * paths));
            }
            assert!(r.max_abs_diff <= TOLERANCE, "{backend:?} {tree}: {r:?}");
            assert_eq!(
                r.rows.iter().map(|x| x.batch).collect::<Vec<_>>(),
                [1, 3, 7]
            );
        }
        // The draft's top choices are sometimes the target's: the verdicts compared accept tokens.
        let r = run(&m, "<2,2,1>", &[8]);
        assert!(r.accepted_mean > 0.0, "{r:?}");
    }
}

/// A tree's nodes and path tokens counted from its nodes alone: every node but the root, and the
/// depth of every leaf (a root-to-leaf path has as many tokens as its leaf is deep).
fn counted(t: &PromptTree) -> (usize, usize) {
    let nodes = t.tree.nodes();
    let leaves = nodes
        .iter()
        .filter(|n| n.parent.is_some() && n.children.is_empty());
    (nodes.len() - 1, leaves.map(|n| n.depth).sum())
}

/// A tree as (token, parent's token) pairs, sorted: its shape and its tokens.
fn edges(t: &PromptTree) -> Vec<(u32, u32)> {
    let nodes = t.tree.nodes().iter().enumerate().skip(1);
    let mut e: Vec<(u32, u32)> = nodes
        .map(|(i, n)| (t.tokens[i], t.tokens[n.parent.unwrap()]))
        .collect();
    e.sort_unstable();
    e
}

#[test]
fn eagle2_grows_a_tree_per_prompt_and_both_ways_count_each_prompts_own_tokens() {
    let pool = sampling_prompts(5);
    for backend in [Backend::Flex, Backend::Ndarray] {
        let m = read_sync(Models::load(backend)).expect("the shipped weights load");
        let trees = read_sync(eagle2_trees(&m, 16, &pool)).expect("EAGLE-2 grows");
        let counts: Vec<(usize, usize)> = trees.iter().map(counted).collect();
        // Trees differ between prompts, in tokens and in shape.
        let shapes: std::collections::BTreeSet<_> = trees.iter().map(edges).collect();
        assert!(shapes.len() >= 2, "{backend:?}: every prompt grew one tree");
        let paths: std::collections::BTreeSet<_> = counts.iter().map(|c| c.1).collect();
        assert!(paths.len() >= 2, "{backend:?}: {counts:?}");
        for ((t, &(nodes, _)), p) in trees.iter().zip(&counts).zip(&pool) {
            assert!((1..=16).contains(&nodes), "{nodes}");
            assert_eq!(
                t.tokens[0],
                *p.last().unwrap(),
                "the tree hangs off the prompt"
            );
        }
        let r = run(&m, "eagle-2", &[1, 3, 7]);
        for row in &r.rows {
            let b = row.batch;
            assert!(row.identical, "{backend:?} eagle-2 batch {b}: {r:?}");
            let want = (0..b).map(|i| counts[i % pool.len()]);
            let (nodes, paths): (Vec<usize>, Vec<usize>) = want.unzip();
            assert_eq!(
                (row.tokens_tree, row.tokens_paths),
                (nodes.iter().sum(), paths.iter().sum()),
                "{backend:?} batch {b}"
            );
        }
        assert!(r.max_abs_diff <= TOLERANCE, "{backend:?}: {r:?}");
        let own: Vec<(usize, usize)> = r
            .prompt_trees
            .as_ref()
            .expect("a tree per prompt")
            .iter()
            .map(|c: &TreeCounts| (c.nodes, c.path_tokens))
            .collect();
        assert_eq!(own, counts);
        let deepest = trees.iter().flat_map(|t| t.tree.paths()).map(|p| p.len());
        assert_eq!(r.longest_path, deepest.max().unwrap());
        // The ratio of tokens is each prompt's own, not one tree's times the batch.
        let last = r.rows.last().unwrap();
        assert!(last.tokens_paths > last.tokens_tree, "{r:?}");
    }
}

#[test]
fn trees_of_different_sizes_pad_the_tree_call_and_both_ways_still_agree() {
    let m = read_sync(Models::load(Backend::Flex)).unwrap();
    let pool = sampling_prompts(3);
    let mut trees = vec![];
    for (p, budget) in pool.iter().zip([4, 16, 9]) {
        let one = read_sync(eagle2_trees(&m, budget, std::slice::from_ref(p))).unwrap();
        trees.extend(one);
    }
    let counts: Vec<(usize, usize)> = trees.iter().map(counted).collect();
    assert_eq!(counts.iter().map(|c| c.0).collect::<Vec<_>>(), [4, 16, 9]);
    let clock = specdec::clock::native_clock();
    let lab = Lab::new(&m, Lang::En, &clock);
    let drafted = Drafted {
        name: "mixed",
        pool: &pool,
        trees: &trees,
        per_prompt: true,
    };
    let r = read_sync(both_ways(lab, drafted, &[1, 2, 5], &mut |_, _| {})).unwrap();
    for row in &r.rows {
        let b = row.batch;
        assert!(row.identical, "batch {b}: {r:?}");
        let (nodes, paths): (Vec<usize>, Vec<usize>) = (0..b).map(|i| counts[i % 3]).unzip();
        let want = (nodes.iter().sum(), paths.iter().sum());
        assert_eq!((row.tokens_tree, row.tokens_paths), want, "batch {b}");
    }
    assert!(r.max_abs_diff <= TOLERANCE, "{r:?}");
    assert_eq!((r.nodes, r.tree.as_str()), (10, "mixed")); // (4 + 16 + 9) / 3, rounded
}

#[test]
fn a_widened_target_agrees_both_ways_too() {
    let m = read_sync(Models::load(Backend::Flex)).unwrap();
    let wide = read_sync(m.with_target_width(2)).unwrap();
    let r = run(&wide, "<2,2,1>", &[4]);
    assert_eq!(r.target_width, 2);
    assert!(r.rows[0].identical && r.max_abs_diff <= TOLERANCE, "{r:?}");
    // EAGLE-2's draft reads one copy of each unit of the widened target's features, the trained
    // target's: the same trees as on the trained target.
    let e = run(&wide, "eagle-2", &[3]);
    assert!(e.rows[0].identical && e.max_abs_diff <= TOLERANCE, "{e:?}");
    assert_eq!(e.prompt_trees, run(&m, "eagle-2", &[3]).prompt_trees);
}

#[test]
fn bad_trees_and_batch_lists_are_named() {
    let tree = |t: &str| parse_tree(t).unwrap_err().to_string();
    assert!(tree("<2,,1>").contains("tree config"), "{}", tree("<2,,1>"));
    assert!(tree("bushy").contains("tree config"));
    assert!(tree("<4,4,4>").contains("84 nodes, over the budget of 64"));
    let source = |t: &str| parse_source(t).unwrap_err().to_string();
    for bad in [
        "eagle-2:0",
        "eagle-2:999",
        "eagle-2:x",
        "eagle-3",
        "eagle-2:",
    ] {
        assert!(
            source(bad).starts_with(&format!("bad tree \"{bad}\"")),
            "{}",
            source(bad)
        );
    }
    assert!(source("eagle-2:65").contains("from 1 to 64"));
    assert_eq!(
        parse_source(" EAGLE-2 ").unwrap(),
        TreeSource::Eagle2 { budget: 16 }
    );
    assert_eq!(
        parse_source("eagle-2:8").unwrap(),
        TreeSource::Eagle2 { budget: 8 }
    );
    assert!(matches!(
        parse_source("<2,2,1>").unwrap(),
        TreeSource::Static(_)
    ));
    let batches = |t: &str| parse_batches(t).unwrap_err().to_string();
    assert!(
        batches("0").contains("batch = 0 is out of range"),
        "{}",
        batches("0")
    );
    assert!(batches("1,,2").contains("expected whole numbers separated by commas"));
    assert!(batches("1,x").contains("every value must be a whole number"));
    assert!(batches("65").contains("batch = 65"));
    assert!(batches(" ").contains("bad batch list"));
    assert_eq!(parse_batches("8, 1,2,2").unwrap(), [1, 2, 8]);
}

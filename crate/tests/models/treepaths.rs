//! Per-sequence against tree-parallel decoding on the LikesWorld models (lecture §4.3, issue 34):
//! on every CPU backend, for the lecture's trees and several batch sizes, both ways give every
//! node the same distribution and greedy verification the same verdict, and each computes
//! exactly the tokens the lecture counts.
#![cfg(not(target_arch = "wasm32"))]

use burn::tensor::read_sync;
use specdec::i18n::Lang;
use specdec::lab::paths::{parse_batches, parse_tree, tree_vs_paths, PathsReport, TOLERANCE};
use specdec::lab::Lab;
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

#[test]
fn a_widened_target_agrees_both_ways_too() {
    let m = read_sync(Models::load(Backend::Flex)).unwrap();
    let wide = read_sync(m.with_target_width(2)).unwrap();
    let r = run(&wide, "<2,2,1>", &[4]);
    assert_eq!(r.target_width, 2);
    assert!(r.rows[0].identical && r.max_abs_diff <= TOLERANCE, "{r:?}");
}

#[test]
fn bad_trees_and_batch_lists_are_named() {
    let tree = |t: &str| parse_tree(t).unwrap_err().to_string();
    assert!(tree("<2,,1>").contains("tree config"), "{}", tree("<2,,1>"));
    assert!(tree("bushy").contains("tree config"));
    assert!(tree("<4,4,4>").contains("84 nodes, over the budget of 64"));
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

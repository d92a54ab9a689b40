//! Speculative decoding with the LikesWorld models (lecture §3.2–3.4, §4.4–4.5): greedy chains
//! and trees reproduce the target's own greedy output exactly, for both drafts, every γ and
//! every tree shape of the lecture; the KV cache of a model behind the engine gives the same
//! distributions as a fresh forward after any sequence of chain and tree calls; sampling passes
//! the calibration test with the correct rule and fails it with every wrong one.
#![cfg(not(target_arch = "wasm32"))]

use burn::tensor::read_sync;
use specdec::decode::batch::{Batched, Request};
use specdec::decode::Generation;
use specdec::decode::{ChainRule, LanguageModel, Method, Shape, Speculation, TreeRule};
use specdec::i18n::Lang;
use specdec::lab::decoding::{self as ex, GreedyReport};
use specdec::lab::lm::{Batch, Cached};
use specdec::lab::params::{Draft, Sampling, Stochastic};
use specdec::lab::Lab;
use specdec::likesworld::TokenKind;
use specdec::model::device::Backend;
use specdec::model::eval::{distributions, distributions_many};
use specdec::model::Models;
use specdec::sampling::multi::Children;
use specdec::sampling::speculative::Variant;
use specdec::sampling::tv;
use specdec::{lab, likesworld};
use std::sync::OnceLock;

fn flex() -> &'static Models {
    static M: OnceLock<Models> = OnceLock::new();
    M.get_or_init(|| read_sync(Models::load(Backend::Flex)).expect("the shipped weights load"))
}

/// The same models with the target widened 4× (`model::widen`): a different, 16× larger target
/// network whose answers are the trained target's.
fn wide() -> &'static Models {
    static M: OnceLock<Models> = OnceLock::new();
    M.get_or_init(|| read_sync(flex().with_target_width(4)).expect("the target widens"))
}

const CLOCK: &dyn Fn() -> f64 = &|| 0.0;

fn prompts(n: usize) -> Vec<Vec<u32>> {
    likesworld::prompts(n).iter().map(|w| w.prompt()).collect()
}

fn quiet() -> impl FnMut(usize, usize) {
    |_, _| {}
}

fn greedy(
    m: &Models,
    method: Method,
    prompts: &[Vec<u32>],
    reference: &[Generation],
) -> GreedyReport {
    let lab = Lab::new(m, Lang::En, CLOCK);
    read_sync(ex::greedy(lab, method, prompts, reference, &mut quiet())).unwrap()
}

#[test]
fn greedy_chains_are_identical_to_the_target_for_both_drafts_and_every_gamma() {
    let m = flex();
    let prompts = prompts(200);
    let reference = read_sync(lab::target_greedy(m, &prompts, CLOCK, &mut quiet())).unwrap();
    let mut per_call = Vec::new();
    for draft in [0, 1] {
        for gamma in [1, 2, 4, 6] {
            let method = Method::Chain {
                draft,
                gamma,
                rule: ChainRule::Greedy,
            };
            let r = greedy(m, method, &prompts, &reference);
            assert_eq!(r.identical, 200, "{}", r.method);
            assert!(
                r.tokens_per_call > 1.0,
                "{}: {}",
                r.method,
                r.tokens_per_call
            );
            // The i.i.d. formula with the measured α over-estimates (lecture §3.3).
            let formula = r.formula_tokens_per_call.unwrap();
            if gamma >= 2 {
                assert!(
                    formula > r.tokens_per_call,
                    "{}: {formula} vs {}",
                    r.method,
                    r.tokens_per_call
                );
            }
            per_call.push((draft, gamma, r.tokens_per_call, r.alpha));
        }
    }
    // Draft B is the better draft: a higher α and more tokens per call at every γ.
    for g in 0..4 {
        let (a, b) = (per_call[g], per_call[4 + g]);
        assert!(b.3 > a.3 && b.2 > a.2, "{a:?} vs {b:?}");
    }
}

#[test]
fn greedy_trees_of_the_lecture_are_identical_and_wider_trees_decide_more() {
    let m = flex();
    let prompts = prompts(100);
    let reference = read_sync(lab::target_greedy(m, &prompts, CLOCK, &mut quiet())).unwrap();
    let mut rows = Vec::new();
    for shape in specdec::lab::params::TREE_CONFIGS {
        let widths = specdec::tree::parse_config(shape, 64)
            .unwrap()
            .widths()
            .to_vec();
        let method = Method::Expand {
            draft: 1,
            shape: Shape::Widths(widths),
            children: Children::TopK,
            rule: TreeRule::Greedy,
        };
        let r = greedy(m, method, &prompts, &reference);
        assert_eq!(r.identical, 100, "{shape}");
        rows.push((shape, r.tokens_per_call, r.verified_nodes_per_call));
    }
    // ⟨1,1,1,1⟩ is a chain of 4; ⟨2,2,2,2⟩ verifies ~30 nodes a call and decides more tokens.
    let (chain, wide) = (rows[0], rows[5]);
    assert!(wide.1 > chain.1 && wide.2 > 5.0 * chain.2, "{rows:?}");
}

#[test]
fn merge_trees_of_both_drafts_are_identical_too() {
    let m = flex();
    let prompts = prompts(40);
    let reference = read_sync(lab::target_greedy(m, &prompts, CLOCK, &mut quiet())).unwrap();
    let method = Method::Merge {
        gamma: 4,
        rule: TreeRule::Greedy,
    };
    let r = greedy(m, method, &prompts, &reference);
    assert_eq!(r.identical, 40);
}

/// Sequences of different lengths scored in one padded forward, each against its own forward.
#[test]
fn a_padded_forward_scores_every_sequence_as_if_it_were_alone() {
    let m = flex();
    let seqs: Vec<Vec<u32>> = likesworld::prompts(6).iter().map(|w| w.tokens()).collect();
    let mut seqs: Vec<Vec<u32>> = seqs
        .iter()
        .enumerate()
        .map(|(i, s)| s[..s.len() - 3 * i].to_vec())
        .collect();
    seqs.push(vec![seqs[0][0]]);
    let lengths: std::collections::BTreeSet<usize> = seqs.iter().map(Vec::len).collect();
    assert!(lengths.len() >= 4, "{lengths:?}");
    let many = read_sync(distributions_many(&m.draft_b, &seqs, &m.device)).unwrap();
    assert_eq!(many.len(), seqs.len());
    for (seq, got) in seqs.iter().zip(&many) {
        let want = read_sync(distributions(&m.draft_b, seq, &m.device)).unwrap();
        assert_eq!(got.len(), seq.len());
        for (g, w) in got.iter().zip(&want) {
            assert!(tv(g, w) < 1e-5, "{seq:?}: TV {}", tv(g, w));
        }
    }
}

/// Demo 03.1: boilerplate is free for both drafts; random facts are drawn alike (β high) but
/// rarely guessed (greedy agreement low); names and answers are where the bigger draft B wins.
#[test]
fn acceptance_by_kind_follows_the_lecture() {
    let m = flex();
    let rows = read_sync(lab::acceptance::acceptance_by_kind(m, 40, &mut quiet())).unwrap();
    let row = |k: TokenKind| {
        rows.iter()
            .find(|r| r.kind == k)
            .expect("every kind occurs")
    };
    let b = row(TokenKind::Boilerplate);
    assert!(b.beta.iter().chain(&b.greedy).all(|&x| x > 0.98), "{b:?}");
    let f = row(TokenKind::RandomFact);
    assert!(
        f.beta.iter().all(|&x| x > 0.9) && f.greedy[0] < 0.4,
        "{f:?}"
    );
    for k in [TokenKind::QuestionName, TokenKind::Answer] {
        let r = row(k);
        assert!(
            r.beta[0] + 0.1 < r.beta[1] && r.greedy[0] + 0.1 < r.greedy[1],
            "{r:?}"
        );
    }
    let positions: usize = likesworld::prompts(40)
        .iter()
        .map(|w| w.tokens().len() - 1)
        .sum();
    assert_eq!(rows.iter().map(|r| r.positions).sum::<usize>(), positions);
}

/// Distributions from a model behind the engine, against a fresh causal forward of each path.
#[test]
fn the_cache_follows_rollbacks_and_accepted_tree_paths() {
    let m = flex();
    let w = &likesworld::prompts(3)[2];
    let full = w.tokens();
    let mut model = Cached::new(&m.target, &m.device, 1.0);
    let fresh = |seq: &[u32]| read_sync(distributions(&m.target, seq, &m.device)).unwrap();
    let check = |got: &[f64], seq: &[u32]| {
        let want = fresh(seq);
        let d = tv(got, want.last().unwrap());
        assert!(d < 1e-5, "after {seq:?}: TV {d}");
    };
    // A chain verify, then a rejection after 1 token (rollback), then a tree, then one of its
    // paths accepted, then a context that leaves the tree at once.
    let p = w.prompt();
    let tree_at_3 = {
        let mut t = Speculation::default();
        let a = t.push(full[p.len() + 3], None);
        t.push(11, None);
        let b = t.push(full[p.len() + 4], Some(a));
        t.push(13, Some(a));
        t.push(full[p.len() + 5], Some(b));
        t
    };
    let steps: Vec<(usize, Speculation)> = vec![
        (p.len(), Speculation::chain(&full[p.len()..p.len() + 4])),
        (p.len() + 1, Speculation::chain(&[7, 8, 9])),
        (p.len() + 3, tree_at_3.clone()),
        (p.len() + 3, {
            // The same context, the tree grown by a level, then asked again unchanged.
            let mut t = tree_at_3.clone();
            t.push(4, Some(4));
            t.push(full[p.len() + 6], Some(4));
            t
        }),
        (p.len() + 3, {
            let mut t = tree_at_3.clone();
            t.push(4, Some(4));
            t.push(full[p.len() + 6], Some(4));
            t
        }),
        (p.len() + 5, Speculation::chain(&[6])),
        (p.len() + 7, Speculation::default()),
        (p.len() + 2, Speculation::chain(&[5, 5])),
    ];
    // Tokens each call must feed: the context past what the cache keeps, and the new nodes.
    let feeds = [p.len() + 4, 1 + 3, 2 + 5, 2, 0, 1 + 1, 2, 1 + 2];
    for ((len, tree), feeds) in steps.into_iter().zip(feeds) {
        let ctx = &full[..len];
        let fed = model.fed();
        let got = read_sync(model.score(ctx, &tree)).unwrap();
        assert_eq!(model.fed() - fed, feeds, "after {len} tokens, {tree:?}");
        assert_eq!(got.len(), tree.len() + 1);
        check(&got[0], ctx);
        for node in 0..tree.len() {
            let mut seq = ctx.to_vec();
            seq.extend(tree.path_to(node).iter().map(|&n| tree.tokens[n]));
            check(&got[node + 1], &seq);
        }
        assert_eq!(
            model.cached_len(),
            len + tree.len(),
            "the cache holds the context and the tree"
        );
    }
}

/// Many sequences on one cache: every row's distributions equal a fresh forward of its sequence
/// on flex, whatever the other rows do (rollbacks, trees, skipped calls, rows leaving and
/// joining), with the cache compacted before every call, now and then, or never; on flex and on
/// wgpu (the GPU forward's own kernels append to the cache, burn's ops compact it).
#[test]
fn a_batch_scores_every_row_as_if_it_were_alone() {
    batch_rows_alone(flex());
    let gpu = read_sync(Models::load(Backend::Wgpu)).unwrap_or_else(|e| {
        panic!("{e} (natively, wgpu needs a Vulkan driver: scripts/setup.sh installs lavapipe)")
    });
    batch_rows_alone(&gpu);
}

fn batch_rows_alone(m: &Models) {
    let worlds: Vec<Vec<u32>> = likesworld::prompts(6).iter().map(|w| w.tokens()).collect();
    let start = likesworld::prompts(1)[0].prompt().len() - 4;
    for slack in [0, 4, 1000] {
        let mut batch = Batch::new(&m.target, &m.device, 1.0, slack);
        let mut rows: Vec<(usize, &[u32])> =
            worlds[..4].iter().map(|w| (batch.open(), &w[..])).collect();
        for round in 0..8usize {
            if round == 3 {
                batch.close(rows.remove(1).0);
            }
            if round == 4 {
                rows.extend(worlds[4..].iter().map(|w| (batch.open(), &w[..])));
            }
            let requests: Vec<Request> = rows
                .iter()
                .enumerate()
                .filter(|(i, _)| (round + i) % 4 != 3)
                .map(|(i, &(row, w))| {
                    // Forward, backward (a rollback) and forward again along the world's tokens.
                    let len = start + (round * 3 + i * 5) % 9;
                    let next = &w[len..len + 3];
                    let tree = if (round + i) % 2 == 0 {
                        Speculation::chain(next)
                    } else {
                        let mut t = Speculation::default();
                        let a = t.push(next[0], None);
                        t.push(5, None);
                        t.push(next[1], Some(a));
                        t
                    };
                    Request {
                        row,
                        context: w[..len].to_vec(),
                        tree,
                    }
                })
                .collect();
            // Then some rows grow their tree by a node after the same context (as a draft
            // expanding level by level does), and one asks the very same again.
            let mut grown: Vec<Request> = requests.iter().take(3).cloned().collect();
            for r in grown.iter_mut().take(2) {
                let last = r.tree.len() - 1;
                r.tree.push(7, Some(last));
                r.tree.push(9, None);
            }
            let got = read_sync(batch.score_rows(&requests)).unwrap();
            let more = read_sync(batch.score_rows(&grown)).unwrap();
            for (r, dists) in requests.iter().zip(got).chain(grown.iter().zip(more)) {
                assert_eq!(dists.len(), r.tree.len() + 1);
                for (node, got) in std::iter::once(None)
                    .chain((0..r.tree.len()).map(Some))
                    .zip(dists)
                {
                    let mut seq = r.context.clone();
                    if let Some(n) = node {
                        seq.extend(r.tree.path_to(n).iter().map(|&k| r.tree.tokens[k]));
                    }
                    let f = flex();
                    let want = read_sync(distributions(&f.target, &seq, &f.device)).unwrap();
                    let d = tv(&got, want.last().unwrap());
                    assert!(
                        d < 1e-5,
                        "{:?}, slack {slack}, round {round}, {seq:?}: TV {d}",
                        m.backend
                    );
                }
            }
        }
    }
}

/// A token outside the vocabulary is a clear error on every backend, before any model call.
#[test]
fn a_token_outside_the_vocabulary_is_an_error() {
    let m = flex();
    let vocab = specdec::likesworld::VOCAB as u32;
    let mut model = Cached::new(&m.target, &m.device, 1.0);
    for (context, tree) in [
        (vec![1, vocab], Speculation::default()),
        (vec![1, 2], Speculation::chain(&[3, vocab + 7])),
    ] {
        let e = read_sync(model.score(&context, &tree)).unwrap_err();
        assert!(e.to_string().starts_with("token id = "), "{e}");
    }
    assert_eq!(model.fed(), 0);
    // …and the model still answers.
    assert_eq!(
        read_sync(model.score(&[1, 2], &Speculation::default()))
            .unwrap()
            .len(),
        1
    );
}

/// Draft B's sampling chain of γ 4 under `variant`, 2 samples per prompt, seed 7.
fn sample_b4(m: &Models, variant: Variant, prompts: &[Vec<u32>]) -> ex::SampleReport {
    let s = Sampling {
        draft: Draft::B,
        gamma: 4,
        prompts: prompts.len(),
        repeats: 2,
        seed: 7,
        variant,
    };
    let lab = Lab::new(m, Lang::En, CLOCK);
    read_sync(ex::sample(lab, &s, prompts, &mut quiet())).unwrap()
}

#[test]
fn the_calibration_test_passes_the_correct_sampler_and_fails_every_wrong_one() {
    let m = flex();
    let prompts = likesworld::sampling_prompts(100);
    for variant in Variant::ALL {
        let r = sample_b4(m, variant, &prompts);
        // Fixed seeds: the control (the target's own samples) and the correct rule pass at 1%;
        // every wrong rule is rejected far beyond it.
        assert!(r.target_p_value > 0.01, "control: {r:?}");
        if variant == Variant::Correct {
            assert!(r.p_value > 0.01, "correct: p = {}", r.p_value);
            assert!(r.tokens_per_call > 1.5, "{}", r.tokens_per_call);
        } else {
            assert!(r.p_value < 1e-3, "{variant:?}: p = {}", r.p_value);
        }
    }
}

#[test]
fn mss_decides_more_than_naive_sampling_and_top_k_is_distorted() {
    let m = flex();
    let prompts = likesworld::sampling_prompts(60);
    let run = |children, rule| {
        let lab = Lab::new(m, Lang::En, CLOCK);
        read_sync(ex::stochastic(
            lab,
            &Shape::Widths(vec![1, 1, 1, 1]),
            children,
            rule,
            &prompts,
            3,
            &mut quiet(),
        ))
        .unwrap()
    };
    // On a chain ⟨1,1,1,1⟩ naive sampling must land on the one child; MSS tests it with
    // min(1, p/q). At "pick one of the remaining names" positions that is ≈ 1/k against ≈ β.
    let naive = run(Children::WithoutReplacement, Stochastic::Naive);
    let mss = run(Children::WithoutReplacement, Stochastic::Mss);
    assert!(
        mss.accepted_per_call > 1.15 * naive.accepted_per_call,
        "{mss:?} vs {naive:?}"
    );
    assert!(
        mss.p_value > 0.01 && naive.p_value > 0.01,
        "{mss:?} {naive:?}"
    );
    let top = run(Children::TopK, Stochastic::Mss);
    assert!(top.distortion.unwrap() > 0.01, "{top:?}");
}

/// On ndarray, on wgpu, and with the target on wgpu and the drafts on flex beside it (the page's
/// WebGPU runs, issue 31), greedy speculation reproduces the target's own greedy output.
#[test]
fn greedy_decoding_is_identical_on_ndarray_on_wgpu_and_with_the_drafts_on_flex_beside_wgpu() {
    let placements = [
        (Backend::Ndarray, Backend::Ndarray),
        (Backend::Wgpu, Backend::Wgpu),
        (Backend::Wgpu, Backend::Flex),
    ];
    for (backend, drafts) in placements {
        let m = read_sync(Models::load_on(backend, drafts)).unwrap_or_else(|e| {
            panic!("{e} (natively, wgpu needs a Vulkan driver: scripts/setup.sh installs lavapipe)")
        });
        assert_eq!(m.drafts_apart(), (drafts != backend).then(|| drafts.name()));
        let n = if backend == Backend::Wgpu { 6 } else { 30 };
        let prompts = prompts(n);
        let reference =
            read_sync(lab::target_greedy(flex(), &prompts, CLOCK, &mut quiet())).unwrap();
        for method in [
            Method::Chain {
                draft: 1,
                gamma: 4,
                rule: ChainRule::Greedy,
            },
            Method::Expand {
                draft: 0,
                shape: Shape::Widths(vec![2, 2, 1]),
                children: Children::TopK,
                rule: TreeRule::Greedy,
            },
        ] {
            let r = greedy(&m, method, &prompts, &reference);
            assert_eq!(
                r.identical, n,
                "{backend:?}, drafts {drafts:?}: {}",
                r.method
            );
        }
    }
}

/// Drafting without a model on the trained target: every drafter, at a small and a large budget,
/// reproduces the target's own greedy output (the drafter only changes how many calls it takes).
#[test]
fn model_free_drafters_reproduce_the_targets_greedy_output() {
    use specdec::decode::free::kind::{DrafterKind, Settings, EARLIER};
    use specdec::decode::free::workloads::{Kind, Workload};
    use specdec::lab::modelfree::{references, run};
    let m = flex();
    let clock = specdec::clock::native_clock();
    let w = Workload::new(Kind::Likesworld, 12, EARLIER, 0);
    let reference = read_sync(references(&w, Some(m), &clock)).unwrap();
    for drafter in DrafterKind::ALL {
        for (budget, fixed_init) in [(1, true), (6, false), (48, false)] {
            let s = Settings {
                workload: Kind::Likesworld,
                drafter,
                budget,
                requests: 12,
                seed: 3,
                fixed_init,
            };
            let (row, gens) = read_sync(run(
                &s,
                &w,
                &reference,
                Some(m),
                false,
                &clock,
                &mut quiet(),
            ))
            .unwrap();
            assert_eq!(row.identical, 12, "{drafter:?} budget {budget}");
            assert!(gens.iter().all(|g| g.sources.len() == g.output.len()));
            if budget > 1 && matches!(drafter, DrafterKind::Suffix | DrafterKind::Both) {
                assert!(row.tokens_per_call > 1.3, "{row:?}");
            }
        }
    }
}

/// The engine is lossless on the widened target too: its greedy output is the trained target's,
/// greedy chains and trees reproduce it exactly, and sampling passes the calibration test with
/// the correct rule and fails it with a wrong one.
#[test]
fn speculative_decoding_is_lossless_on_the_widened_target() {
    let (m, prompts) = (wide(), prompts(60));
    assert_eq!(m.target_width(), 4);
    let reference = read_sync(lab::target_greedy(m, &prompts, CLOCK, &mut quiet())).unwrap();
    let trained = read_sync(lab::target_greedy(flex(), &prompts, CLOCK, &mut quiet())).unwrap();
    for (a, b) in reference.iter().zip(&trained) {
        assert_eq!(a.output, b.output, "the widened target answers differently");
    }
    let chain = Method::Chain {
        draft: 1,
        gamma: 4,
        rule: ChainRule::Greedy,
    };
    let tree = Method::Expand {
        draft: 0,
        shape: Shape::Widths(vec![2, 2, 1, 1]),
        children: Children::TopK,
        rule: TreeRule::Greedy,
    };
    for method in [chain, tree] {
        let r = greedy(m, method, &prompts, &reference);
        assert_eq!(r.identical, 60, "{}", r.method);
        assert!(
            r.tokens_per_call > 1.5,
            "{}: {}",
            r.method,
            r.tokens_per_call
        );
    }
    let sampling = likesworld::sampling_prompts(100);
    for variant in [Variant::Correct, Variant::AcceptQOverP] {
        let r = sample_b4(m, variant, &sampling);
        assert!(r.target_p_value > 0.01, "control: {r:?}");
        if variant == Variant::Correct {
            assert!(r.p_value > 0.01, "correct: p = {}", r.p_value);
        } else {
            assert!(r.p_value < 1e-3, "{variant:?}: p = {}", r.p_value);
        }
    }
}

/// The step-through shows what was output: a step whose chain accepted `<eos>` (or reached the
/// length limit) before its last token keeps only the tokens up to the end, says it was cut, and
/// the steps' tokens add up to the output, for every rule.
#[test]
fn step_traces_end_where_the_output_ends() {
    let m = flex();
    let worlds = likesworld::prompts(40);
    let mut cut = 0;
    for variant in Variant::ALL {
        for (seed, gamma) in [(3, 2), (7, 5), (11, 4), (19, 3)] {
            let method = Method::Chain {
                draft: 1,
                gamma,
                rule: ChainRule::Sample(variant.into()),
            };
            let prompt = worlds[seed as usize % worlds.len()].prompt();
            let g = read_sync(lab::run(m, method, 1.0, &prompt, seed, true, CLOCK)).unwrap();
            let shown: Vec<u32> = g.trace.iter().flat_map(|s| s.emitted.clone()).collect();
            assert_eq!(shown, g.output, "{variant:?} seed {seed} γ {gamma}");
            let eos = g.output.iter().position(|&t| t == likesworld::EOS);
            assert!(
                eos.is_none_or(|i| i + 1 == g.output.len()),
                "nothing after <eos>"
            );
            let last = g.trace.last().unwrap();
            assert!(g.trace[..g.trace.len() - 1].iter().all(|s| !s.cut_at_end));
            cut += usize::from(last.cut_at_end);
        }
    }
    assert!(cut > 0, "no run ended inside a step: the test saw no cut");
}

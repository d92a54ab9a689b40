//! The LikesWorld models on burn's CPU backends and on wgpu (natively: Vulkan, which
//! `scripts/setup.sh` provides without a GPU through Mesa's lavapipe): the shipped weights decode
//! into the architecture and answer perfectly; the KV cache appends, truncates and keeps a tree
//! path without changing a logit; one tree forward equals every root-to-node path run on its
//! own; the CPU backends and the GPU agree; per-sequence and tree-parallel verification agree
//! and compute the lecture's token counts (`models/treepaths.rs`); an offloaded target's weights
//! cross before every forward and the forward reads them (`models/offload.rs`); a distilled draft
//! is reproducible and reads back from its file, and a pool's merged tree is the union of its
//! members' chains (`models/learned.rs`).
#![cfg(not(target_arch = "wasm32"))]

// Per-sequence against tree-parallel verification (issue 34), in this binary rather than one of
// its own: each test binary links burn again.
#[path = "models/treepaths.rs"]
mod treepaths;

// Offloading measured (issue 34, part 2): the weights cross before every forward.
#[path = "models/offload.rs"]
mod offload;

// Learned speculators (issue 33): distilled drafts, their files, the boost-tuned pools.
#[path = "models/learned.rs"]
mod learned;

use burn::tensor::{read_sync, Bool, Device, Int, Tensor, TensorData};
use specdec::likesworld::{encode, worlds, Split, VOCAB};
use specdec::model::device::Backend;
use specdec::model::eval::accuracy;
use specdec::model::tree_attention::{check, tree_inputs, tree_logits};
use specdec::model::{weights, Decoder, KvCache, ModelKind};
use specdec::tree::{parse_config, parse_paths, TokenTree, DEFAULT_NODE_BUDGET};

const TOL: f32 = 1e-4;

fn ints(v: &[u32], device: &Device) -> Tensor<2, Int> {
    let v: Vec<i64> = v.iter().map(|&t| i64::from(t)).collect();
    let n = v.len();
    Tensor::from_data(TensorData::new(v, [1, n]), device)
}

fn positions(from: usize, n: usize, device: &Device) -> Tensor<2, Int> {
    let v: Vec<i64> = (from..from + n).map(|p| p as i64).collect();
    Tensor::from_data(TensorData::new(v, [1, n]), device)
}

/// Causal mask for `n` new tokens after `cached` ones.
fn causal(cached: usize, n: usize, device: &Device) -> Tensor<3, Bool> {
    let v: Vec<bool> = (0..n)
        .flat_map(|r| (0..cached + n).map(move |c| c <= cached + r))
        .collect();
    Tensor::from_data(TensorData::new(v, [1, n, cached + n]), device)
}

fn rows(t: Tensor<3>) -> Vec<Vec<f32>> {
    let [_, n, v] = t.dims();
    let flat: Vec<f32> = t
        .into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .unwrap();
    (0..n).map(|i| flat[i * v..(i + 1) * v].to_vec()).collect()
}

fn max_diff(a: &[Vec<f32>], b: &[Vec<f32>]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p - q).abs()))
        .fold(0.0, f32::max)
}

fn target(backend: Backend) -> (Decoder, Device) {
    let device = backend.device_blocking().unwrap_or_else(|e| {
        panic!("{e} (natively, wgpu needs a Vulkan driver: scripts/setup.sh installs lavapipe)")
    });
    (
        weights::load(ModelKind::Target, &device).expect("shipped weights decode"),
        device,
    )
}

const SENTENCE: &str = "<bos> dan likes jam . fay likes nuts . eve likes tea . q fay nuts . q eve";

#[test]
fn shipped_weights_decode_with_the_documented_sizes() {
    let device = Backend::Flex.device_blocking().unwrap();
    let sizes: Vec<usize> = ModelKind::ALL
        .iter()
        .map(|&k| burn::module::Module::num_params(&weights::load(k, &device).unwrap()))
        .collect();
    // Target ≈ 85k; drafts as the reference decoders in shared/peers (13,256 and 21,800).
    assert_eq!(sizes, vec![84_584, 13_256, 21_800]);
}

#[test]
fn target_answers_every_held_out_question() {
    let (model, device) = target(Backend::Flex);
    let a = accuracy(&model, &worlds(Split::HeldOut, 2024, 300), &device);
    assert_eq!(a.answer_accuracy, 1.0, "{a:?}");
    for kind in [ModelKind::DraftA, ModelKind::DraftB] {
        let draft = weights::load(kind, &device).unwrap();
        let d = accuracy(&draft, &worlds(Split::HeldOut, 2024, 300), &device);
        assert!(
            d.answer_accuracy < 0.8,
            "{kind:?} answers {d:?}: a draft should not match the target"
        );
    }
}

#[test]
fn incremental_decoding_with_the_cache_equals_one_forward() {
    for backend in Backend::ALL {
        let (model, device) = target(backend);
        let tokens = encode(SENTENCE).unwrap();
        let whole = rows(model.forward_causal(ints(&tokens, &device)));
        let mut cache = KvCache::new(model.n_layers());
        let mut step = Vec::new();
        for (i, &t) in tokens.iter().enumerate() {
            let out = model.forward(
                ints(&[t], &device),
                positions(i, 1, &device),
                causal(i, 1, &device),
                &mut cache,
            );
            step.extend(rows(out));
        }
        assert_eq!(cache.len(), tokens.len());
        assert!(max_diff(&whole, &step) <= TOL, "{backend:?}");
    }
}

#[test]
fn truncate_rolls_back_a_rejected_chain() {
    let (model, device) = target(Backend::Flex);
    let tokens = encode(SENTENCE).unwrap();
    let whole = rows(model.forward_causal(ints(&tokens, &device)));
    let (keep, draft_len) = (10, 5);
    let mut cache = KvCache::new(model.n_layers());
    model.forward(
        ints(&tokens[..keep], &device),
        positions(0, keep, &device),
        causal(0, keep, &device),
        &mut cache,
    );
    // A chain of wrong drafts enters the cache, then is rejected.
    let wrong = [9u32; 5];
    model.forward(
        ints(&wrong, &device),
        positions(keep, draft_len, &device),
        causal(keep, draft_len, &device),
        &mut cache,
    );
    assert_eq!(cache.len(), keep + draft_len);
    cache.narrow(keep);
    let rest = &tokens[keep..];
    let out = rows(model.forward(
        ints(rest, &device),
        positions(keep, rest.len(), &device),
        causal(keep, rest.len(), &device),
        &mut cache,
    ));
    assert!(max_diff(&whole[keep..], &out) <= TOL);
}

#[test]
fn keep_retains_the_accepted_tree_path() {
    let (model, device) = target(Backend::Flex);
    let prompt = encode("<bos> dan likes jam . fay likes nuts . q").unwrap();
    let tree = TokenTree::expand(&parse_config("<2,2,1>", DEFAULT_NODE_BUDGET).unwrap(), "q");
    let tokens: Vec<u32> = (0..tree.nodes().len())
        .map(|i| [5u32, 9, 10, 26, 27, 4, 12, 28, 4, 3, 4][i % 11])
        .collect();
    let mut cache = KvCache::new(model.n_layers());
    let l = prompt.len();
    model.forward(
        ints(&prompt, &device),
        positions(0, l, &device),
        causal(0, l, &device),
        &mut cache,
    );
    let inputs = tree_inputs(&tree, false, l, l - 1);
    let (order, n) = (inputs.order.clone(), inputs.order.len());
    let ids: Vec<u32> = order.iter().map(|&i| tokens[i]).collect();
    model.forward(
        ints(&ids, &device),
        Tensor::from_data(TensorData::new(inputs.positions, [1, n]), &device),
        Tensor::from_data(TensorData::new(inputs.mask, [1, n, l + n]), &device),
        &mut cache,
    );
    // Accept the path to the last leaf in DFS order, then continue from it.
    let leaf = *order.last().unwrap();
    let mut path = vec![leaf];
    while let Some(p) = tree.nodes()[*path.last().unwrap()].parent {
        path.push(p);
    }
    path.pop();
    path.reverse();
    let mut keep: Vec<usize> = (0..l).collect();
    keep.extend(
        path.iter()
            .map(|node| l + order.iter().position(|o| o == node).unwrap()),
    );
    cache.gather(&[keep]);
    assert_eq!(cache.len(), l + path.len());
    let next = 4u32;
    let out = rows(model.forward(
        ints(&[next], &device),
        positions(l + path.len(), 1, &device),
        causal(l + path.len(), 1, &device),
        &mut cache,
    ));
    let mut seq = prompt.clone();
    seq.extend(path.iter().map(|&i| tokens[i]));
    seq.push(next);
    let whole = rows(model.forward_causal(ints(&seq, &device)));
    assert!(max_diff(&whole[seq.len() - 1..], &out) <= TOL);
}

#[test]
fn tree_forward_equals_every_path_on_its_own() {
    let configs = ["<2,2,1>", "<3,1,1,1>", "<2,2,2,2>"];
    for backend in Backend::ALL {
        let (model, device) = target(backend);
        for (w, world) in worlds(Split::HeldOut, 5, 2).iter().enumerate() {
            let prompt = world.prompt();
            for config in configs {
                let tree =
                    TokenTree::expand(&parse_config(config, DEFAULT_NODE_BUDGET).unwrap(), "r");
                let tokens: Vec<u32> = (0..tree.nodes().len())
                    .map(|i| ((i * 11 + w * 5) % VOCAB) as u32)
                    .collect();
                for cached in [true, false] {
                    let c =
                        read_sync(check(&model, &prompt, &tree, &tokens, cached, &device)).unwrap();
                    assert!(
                        c.max_abs_diff <= TOL,
                        "{backend:?} {config} cached={cached}: {c:?}"
                    );
                }
            }
            // The lecture's merge example, in LikesWorld words: three drafts' continuations.
            let paths = parse_paths("q dan jam | q dan nuts . | q fay").unwrap();
            let ids: Vec<Vec<String>> = paths;
            let tree = TokenTree::merge(&ids, "root");
            let tokens: Vec<u32> = tree
                .nodes()
                .iter()
                .map(|n| {
                    if n.parent.is_none() {
                        0
                    } else {
                        encode(&n.token).unwrap()[0]
                    }
                })
                .collect();
            let c = read_sync(check(&model, &prompt, &tree, &tokens, true, &device)).unwrap();
            assert!(c.max_abs_diff <= TOL, "{backend:?} merge: {c:?}");
            assert_eq!((c.tree_tokens, c.path_tokens), (6, 9));
        }
    }
}

#[test]
fn every_backend_agrees_with_flex() {
    let tokens = encode(SENTENCE).unwrap();
    let tree = TokenTree::expand(
        &parse_config("<2,2,2,2>", DEFAULT_NODE_BUDGET).unwrap(),
        "r",
    );
    let toks: Vec<u32> = (0..tree.nodes().len())
        .map(|i| (i % VOCAB) as u32)
        .collect();
    let mut out = Vec::new();
    for backend in Backend::ALL {
        let (model, device) = target(backend);
        out.push((
            rows(model.forward_causal(ints(&tokens, &device))),
            read_sync(tree_logits(&model, &tokens, &tree, &toks, true, &device)).unwrap(),
        ));
    }
    for (backend, o) in Backend::ALL.iter().zip(&out).skip(1) {
        assert!(max_diff(&out[0].0, &o.0) <= TOL, "{backend:?} causal");
        assert!(max_diff(&out[0].1, &o.1) <= TOL, "{backend:?} tree");
    }
}

/// The trained target widened r× (Net2Net, `model::widen`): the same logits within 1e-3 and the
/// same argmax on held-out worlds, for every width up to 16 on every backend, with the parameter
/// count the widening promises.
#[test]
fn widened_targets_give_the_trained_targets_logits_on_every_backend() {
    use specdec::model::widen::{agreement, params, widen};
    let seqs: Vec<Vec<u32>> = worlds(Split::HeldOut, 2024, 6)
        .iter()
        .map(|w| w.tokens())
        .collect();
    for backend in Backend::ALL {
        let (model, device) = target(backend);
        for r in [1, 2, 4, 8, 16] {
            let wide = read_sync(widen(&model, r, &device)).unwrap();
            assert_eq!(
                burn::module::Module::num_params(&wide),
                params(VOCAB, r),
                "{backend:?} ×{r}"
            );
            let a = read_sync(agreement(&model, &wide, &seqs, &device)).unwrap();
            assert!(a.positions > 200, "{a:?}");
            assert!(
                a.max_abs_logit_diff <= 1e-3,
                "{backend:?} ×{r}: logits differ by {}",
                a.max_abs_logit_diff
            );
            assert_eq!(a.argmax_agreement, 1.0, "{backend:?} ×{r}");
        }
    }
    // A width outside the documented range is refused with its range.
    let (model, device) = target(Backend::Flex);
    let e = read_sync(widen(&model, 25, &device)).err().unwrap();
    assert!(e.to_string().contains("24"), "{e}");
}

/// Token by token through the KV cache (one row per call: the few-rows matmul on flex), the
/// widened target gives the trained target's whole-sequence logits.
#[test]
fn a_widened_target_decodes_token_by_token_as_the_trained_one() {
    for backend in [Backend::Flex, Backend::Ndarray] {
        let (model, device) = target(backend);
        let wide = read_sync(specdec::model::widen::widen(&model, 8, &device)).unwrap();
        let tokens = encode(SENTENCE).unwrap();
        let whole = rows(model.forward_causal(ints(&tokens, &device)));
        let mut cache = KvCache::new(wide.n_layers());
        let mut step = Vec::new();
        // One token, then chains of 3 and 5 (a verification's shape).
        let mut at = 0;
        for n in [1, 3, 5].into_iter().cycle() {
            if at >= tokens.len() {
                break;
            }
            let n = n.min(tokens.len() - at);
            let out = wide.forward(
                ints(&tokens[at..at + n], &device),
                positions(at, n, &device),
                causal(at, n, &device),
                &mut cache,
            );
            step.extend(rows(out));
            at += n;
        }
        assert!(max_diff(&whole, &step) <= 1e-3, "{backend:?}");
    }
}

/// The wide GPU path (d > 64: a LayerNorm kernel, then linear kernels that stream their weights
/// once for a chunk of rows) gives flex's logits for the same widened target, token by token
/// through the cache in chains of 1, 3 and 5 tokens on a batch of two rows; the widened models
/// do take it, and the trained target keeps the seven-kernel block.
#[cfg(feature = "wgpu")]
#[test]
fn the_wide_gpu_path_gives_flexs_logits_through_the_cache() {
    use specdec::model::widen::widen;
    let first = encode(SENTENCE).unwrap();
    let second: Vec<u32> = first.iter().rev().copied().collect();
    let len = first.len();
    // Logits [2 · len rows] of the two sequences fed side by side in chains of 1, 3, 5, ….
    let decode = |model: &Decoder, device: &Device| -> (Vec<Vec<f32>>, usize) {
        let mut cache = KvCache::new(model.n_layers());
        let (mut out, mut calls, mut at) = (vec![Vec::new(); 2 * len], 0, 0);
        for n in [1, 3, 5].into_iter().cycle() {
            if at >= len {
                break;
            }
            let n = n.min(len - at);
            let ids: Vec<i64> = [&first, &second]
                .iter()
                .flat_map(|s| s[at..at + n].iter().map(|&t| i64::from(t)))
                .collect();
            let pos: Vec<i64> = (0..2)
                .flat_map(|_| (at..at + n).map(|p| p as i64))
                .collect();
            let mask: Vec<bool> = (0..2 * n)
                .flat_map(|r| (0..at + n).map(move |c| c <= at + r % n))
                .collect();
            let logits = model.forward(
                Tensor::from_data(TensorData::new(ids, [2, n]), device),
                Tensor::from_data(TensorData::new(pos, [2, n]), device),
                Tensor::from_data(TensorData::new(mask, [2, n, at + n]), device),
                &mut cache,
            );
            let v = logits.dims()[2];
            let flat: Vec<f32> = logits.into_data().convert::<f32>().try_into_vec().unwrap();
            for (i, row) in flat.chunks(v).enumerate() {
                out[(i / n) * len + at + i % n] = row.to_vec();
            }
            calls += 1;
            at += n;
        }
        (out, calls)
    };
    let (flex, flex_device) = target(Backend::Flex);
    let (gpu, gpu_device) = target(Backend::Wgpu);
    let before = Decoder::gpu_forwards_on_this_thread();
    let (_, calls) = decode(&gpu, &gpu_device);
    assert_eq!(
        Decoder::gpu_forwards_on_this_thread(),
        (before.0 + calls, before.1),
        "the trained target takes the seven-kernel block"
    );
    for r in [2, 16] {
        let wide_flex = read_sync(widen(&flex, r, &flex_device)).unwrap();
        let wide_gpu = read_sync(widen(&gpu, r, &gpu_device)).unwrap();
        let (expected, _) = decode(&wide_flex, &flex_device);
        let before = Decoder::gpu_forwards_on_this_thread();
        let (got, calls) = decode(&wide_gpu, &gpu_device);
        assert_eq!(
            Decoder::gpu_forwards_on_this_thread(),
            (before.0, before.1 + calls),
            "×{r} takes the wide GPU path"
        );
        let diff = max_diff(&expected, &got);
        assert!(
            diff <= 1e-3,
            "×{r}: wgpu's logits differ from flex's by {diff}"
        );
    }
}

/// The GPU attention over a long cache and a wide head: a tree of 120 nodes over a prompt of 56
/// tokens (over 128 slots, more than a workgroup's units) gives flex's logits on wgpu, for the
/// trained target and for ×16 (head dim 256).
#[cfg(feature = "wgpu")]
#[test]
fn the_gpu_attention_over_a_long_cache_and_a_wide_head_gives_flexs_logits() {
    use specdec::model::widen::widen;
    let mut prompt = encode(SENTENCE).unwrap();
    let more = encode("fay . q dan jam . q eve tea . q").unwrap();
    while prompt.len() < 56 {
        prompt.extend(&more);
    }
    prompt.truncate(56);
    let tree = TokenTree::expand(&parse_config("<3,3,3,3>", 120).unwrap(), "r");
    assert!(
        prompt.len() + tree.nodes().len() > 128,
        "more slots than a workgroup has units"
    );
    let toks: Vec<u32> = (0..tree.nodes().len())
        .map(|i| (i * 7 % VOCAB) as u32)
        .collect();
    let (flex, flex_device) = target(Backend::Flex);
    let (gpu, gpu_device) = target(Backend::Wgpu);
    let logits = |m: &Decoder, device: &Device| {
        read_sync(tree_logits(m, &prompt, &tree, &toks, true, device)).unwrap()
    };
    let before = Decoder::gpu_forwards_on_this_thread();
    let (expected, got) = (logits(&flex, &flex_device), logits(&gpu, &gpu_device));
    assert!(
        Decoder::gpu_forwards_on_this_thread().0 > before.0,
        "the GPU path ran"
    );
    let diff = max_diff(&expected, &got);
    assert!(diff <= TOL, "the trained target: {diff}");
    let wide_flex = read_sync(widen(&flex, 16, &flex_device)).unwrap();
    let wide_gpu = read_sync(widen(&gpu, 16, &gpu_device)).unwrap();
    let diff = max_diff(
        &logits(&wide_flex, &flex_device),
        &logits(&wide_gpu, &gpu_device),
    );
    assert!(diff <= 1e-3, "×16: {diff}");
}

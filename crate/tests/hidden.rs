//! Drafts on the target's hidden states (lecture §5.1, §5.2, §4.7): Medusa's heads, EAGLE on a
//! static tree, EAGLE-2's dynamic tree and EAGLE trained with the training-time test reproduce the
//! target's greedy output at every node budget, on every backend (on the CPU beside a GPU target
//! too) and on the widened target; the features the target's cache keeps are a fresh forward's;
//! MSS on the sampled dynamic tree passes the calibration test and EAGLE-2's top-k children
//! verified as if sampled fail it; training is seeded and reproducible; the drafts are parsed
//! once per loaded models and held.
#![cfg(not(target_arch = "wasm32"))]

use burn::module::Module;
use burn::tensor::read_sync;
use burn::tensor::{Device, Int, Tensor, TensorData};
use specdec::decode::{LanguageModel, Speculation};
use specdec::i18n::Lang;
use specdec::lab::hidden::{evaluate, Drafts, HiddenReport, Ready};
use specdec::lab::lm::Cached;
use specdec::lab::params::{Drafter, HiddenSpec, TreeKind, Verification, DEFAULT_DEPTH};
use specdec::lab::Lab;
use specdec::likesworld;
use specdec::model::device::Backend;
use specdec::model::train::{train_hidden, Hidden, HiddenConfig};
use specdec::model::Models;
use std::sync::OnceLock;

fn flex() -> &'static Models {
    static M: OnceLock<Models> = OnceLock::new();
    M.get_or_init(|| read_sync(Models::load(Backend::Flex)).expect("the shipped weights load"))
}

const CLOCK: &dyn Fn() -> f64 = &|| 0.0;

fn prompts(n: usize) -> Vec<Vec<u32>> {
    likesworld::prompts(n).iter().map(|w| w.prompt()).collect()
}

fn run(
    m: &Models,
    drafter: Drafter,
    budget: usize,
    v: Verification,
    n: usize,
    seed: u64,
) -> HiddenReport {
    let drafts = Drafts::load(m).expect("the shipped drafts load");
    let spec = HiddenSpec {
        drafter,
        budget,
        verification: v,
    };
    let lab = Lab::new(m, Lang::En, CLOCK);
    let report = async {
        let ready = Ready::new(&drafts, spec).await?;
        evaluate(lab, &ready, spec, &prompts(n), seed, &mut |_, _| {}).await
    };
    read_sync(report).unwrap_or_else(|e| panic!("{drafter:?} at {budget}: {e}"))
}

const MEDUSA: Drafter = Drafter::Medusa {
    heads: 4,
    tree: TreeKind::Sparse,
};
const EAGLE: Drafter = Drafter::Eagle {
    ttt: false,
    tree: TreeKind::Sparse,
    depth: DEFAULT_DEPTH,
};
const EAGLE2: Drafter = Drafter::Eagle {
    ttt: false,
    tree: TreeKind::Dynamic,
    depth: DEFAULT_DEPTH,
};

fn every_drafter() -> Vec<Drafter> {
    vec![
        MEDUSA,
        Drafter::Medusa {
            heads: 2,
            tree: TreeKind::Balanced,
        },
        EAGLE,
        Drafter::Eagle {
            ttt: false,
            tree: TreeKind::Balanced,
            depth: 3,
        },
        EAGLE2,
        Drafter::Eagle {
            ttt: true,
            tree: TreeKind::Dynamic,
            depth: 6,
        },
    ]
}

#[test]
fn every_hidden_state_draft_is_identical_to_the_target_at_every_budget() {
    let n = 8;
    for drafter in every_drafter() {
        let mut taus = Vec::new();
        for budget in [4, 8, 16, 32] {
            let r = run(flex(), drafter, budget, Verification::Greedy, n, 0);
            assert_eq!(r.identical, n, "{}", r.method);
            assert!(
                r.verified_nodes_per_call <= budget as f64,
                "{}: {} nodes a call",
                r.method,
                r.verified_nodes_per_call
            );
            taus.push(r.tokens_per_call);
        }
        // A draft that hugs the target decides more than one token a call.
        assert!(taus[2] > 1.5, "{drafter:?}: τ at budget 16 is {}", taus[2]);
    }
}

#[test]
fn hidden_state_drafts_are_identical_on_ndarray_on_wgpu_on_the_cpu_beside_wgpu_and_widened() {
    let wide = read_sync(flex().with_target_width(4)).expect("the target widens");
    let n = 4;
    for drafter in [MEDUSA, EAGLE, EAGLE2] {
        let r = run(&wide, drafter, 16, Verification::Greedy, n, 0);
        assert_eq!(r.identical, n, "×4: {}", r.method);
        let on_flex = run(flex(), drafter, 16, Verification::Greedy, n, 0);
        // The drafts read the first copy of the widened feature: the same proposals.
        assert!(
            (r.tokens_per_call - on_flex.tokens_per_call).abs() < 1e-9,
            "×4 {} vs ×1 {}",
            r.tokens_per_call,
            on_flex.tokens_per_call
        );
    }
    // The target and the drafts on one backend, or the drafts on the CPU beside the GPU target
    // (as the page runs WebGPU): they read the features its calls read back.
    use Backend::{Flex, Ndarray, Wgpu};
    for (backend, drafts) in [(Ndarray, Ndarray), (Wgpu, Wgpu), (Wgpu, Flex)] {
        let m = read_sync(Models::load_on(backend, drafts))
            .expect("the models load (natively, wgpu needs lavapipe: scripts/setup.sh)");
        for drafter in [MEDUSA, EAGLE, EAGLE2] {
            for budget in [4, 8, 16, 32] {
                let r = run(&m, drafter, budget, Verification::Greedy, n, 0);
                assert_eq!(
                    r.identical, n,
                    "{backend:?}, drafts {drafts:?}: {}",
                    r.method
                );
                let apart = (drafts != backend).then(|| drafts.name());
                assert_eq!(r.drafts_on, apart, "{}", r.method);
            }
        }
        // Their parameters are where the draft models run, the target's where it runs.
        let loaded = Drafts::load(&m).expect("the shipped drafts load");
        let on_drafts = vec![m.draft_device.clone()];
        assert_eq!(
            loaded.device, m.draft_device,
            "{backend:?}, drafts {drafts:?}"
        );
        assert_eq!(
            loaded.medusa.devices(),
            on_drafts,
            "{backend:?}, drafts {drafts:?}"
        );
        assert_eq!(
            loaded.eagle.devices(),
            on_drafts,
            "{backend:?}, drafts {drafts:?}"
        );
        assert_eq!(loaded.trained().devices(), on_drafts, "{drafts:?}");
        assert_eq!(m.target.devices(), vec![m.device.clone()], "{backend:?}");
    }
}

/// The drafts on the features are parsed at the first job on loaded models and held: the
/// widened target's jobs and a target given these drafts (`with_drafts_of`, as the page reuses a
/// widened target for another placement) find them held, on the drafts' device; models loaded
/// again hold none until they run a job. (The weights themselves cannot tell: a parse of the
/// embedded file reads its values in place, the same buffer every time.)
#[test]
fn the_hidden_state_drafts_are_parsed_once_and_held_for_every_job() {
    use Backend::{Flex, Wgpu};
    let on_drafts = |m: &Models| {
        let d = Drafts::load(m).expect("the drafts load");
        (d.device.clone(), d.medusa.devices(), d.eagle.devices())
    };
    for (backend, drafts) in [(Flex, Flex), (Wgpu, Flex)] {
        let m = read_sync(Models::load_on(backend, drafts))
            .expect("the models load (natively, wgpu needs lavapipe: scripts/setup.sh)");
        let wide = read_sync(m.with_target_width(2)).expect("the target widens");
        assert!(!m.hidden_drafts_held(), "{backend:?}: none before a job");
        let r = run(&m, EAGLE2, 8, Verification::Greedy, 1, 0);
        assert_eq!(r.identical, 1, "{backend:?}");
        assert!(
            m.hidden_drafts_held(),
            "{backend:?}: held after the first job"
        );
        assert!(
            wide.hidden_drafts_held(),
            "{backend:?}: the widened target's too"
        );
        let expected = (
            m.draft_device.clone(),
            vec![m.draft_device.clone()],
            vec![m.draft_device.clone()],
        );
        assert_eq!(on_drafts(&wide), expected, "{backend:?}");
        let fresh = read_sync(Models::load_on(backend, drafts)).expect("the models load");
        assert!(
            !fresh.hidden_drafts_held(),
            "{backend:?}: models loaded again"
        );
        if backend != drafts {
            // The GPU target given the CPU's drafts: theirs, held, on the CPU.
            let gpu = read_sync(Models::load_on(backend, backend)).expect("the models load");
            let mixed = gpu.with_drafts_of(&m);
            assert!(
                mixed.hidden_drafts_held(),
                "with_drafts_of takes the drafts held"
            );
            assert_eq!(on_drafts(&mixed), expected, "with_drafts_of");
            assert!(
                !gpu.hidden_drafts_held(),
                "the GPU's own models hold none yet"
            );
        }
    }
}

/// The features a feature-keeping cache returns after a chain call, a tree call and a rollback
/// are those of one fresh forward over the whole sequence.
#[test]
fn cached_features_are_a_fresh_forwards_features() {
    for backend in [Backend::Flex, Backend::Wgpu] {
        let m = read_sync(Models::load(backend)).expect("models load");
        let d = &m.device;
        let seq: Vec<u32> = likesworld::prompts(1)[0].tokens();
        let mut target = Cached::with_features(&m.target, d, 1.0, 64);
        let split = seq.len() - 6;
        // A tree whose path follows the sequence for two tokens, beside a wrong sibling.
        let mut tree = Speculation::default();
        let a = tree.push(seq[split], None);
        tree.push((seq[split] + 1) % likesworld::VOCAB as u32, None);
        tree.push(seq[split + 1], Some(a));
        read_sync(target.score(&seq[..split], &tree)).unwrap();
        let feats: Vec<Vec<f32>> = target
            .features(&seq[..split + 2])
            .iter()
            .map(|f| f.to_vec())
            .collect();
        assert_eq!(
            feats.len(),
            split + 2,
            "{backend:?}: the context and the accepted path"
        );
        let tokens = Tensor::<2, Int>::from_data(
            TensorData::new(
                seq.iter().map(|&t| i64::from(t)).collect::<Vec<_>>(),
                [1, seq.len()],
            ),
            d,
        );
        let (fresh, _) = m.target.features_causal(tokens);
        let fresh: Vec<f32> = fresh
            .into_data()
            .convert::<f32>()
            .try_to_vec::<f32>()
            .unwrap();
        for (i, f) in feats.iter().enumerate() {
            let diff = f
                .iter()
                .zip(&fresh[i * 64..(i + 1) * 64])
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(diff < 1e-3, "{backend:?}: position {i} differs by {diff}");
        }
    }
}

#[test]
fn mss_on_the_sampled_dynamic_tree_is_calibrated_and_top_k_children_are_not() {
    // 300 prompts: the biased variant's χ² grows with the tokens (at 60 prompts its P ranged
    // 3e-2 … 1e-5 over seeds; here far below the threshold), the fair one's P stays uniform.
    let n = 300;
    let fair = run(flex(), EAGLE2, 16, Verification::Mss, n, 7);
    assert!(
        fair.p_value.unwrap() > 0.01,
        "sampled children, MSS: P = {:?}",
        fair.p_value
    );
    assert!(fair.tokens_per_call > 1.5, "τ {}", fair.tokens_per_call);
    let biased = run(flex(), EAGLE2, 16, Verification::MssTopK, n, 7);
    assert!(
        biased.p_value.unwrap() < 1e-4,
        "top-k children, MSS: P = {:?}",
        biased.p_value
    );
    assert!(biased.first_position_tv.unwrap() > 0.01, "{biased:?}");
}

#[test]
fn training_a_hidden_state_draft_is_seeded_and_reproducible() {
    let device = Device::flex();
    let target = flex().trained().clone();
    for kind in [Hidden::Medusa { heads: 2 }, Hidden::Eagle { rollout: 2 }] {
        let mut config = HiddenConfig::new(kind, 11);
        config.steps = 3;
        config.batch = 4;
        let curve = |c: &HiddenConfig| -> Vec<f64> {
            train_hidden(c, &target, &device, |_| {})
                .1
                .iter()
                .map(|p| p.loss)
                .collect()
        };
        let (a, b) = (curve(&config), curve(&config));
        assert_eq!(a, b, "{kind:?}: the same seed, the same run");
        assert!(a.iter().all(|l| l.is_finite()), "{a:?}");
        config.seed = 12;
        assert_ne!(a, curve(&config), "{kind:?}: another seed, another run");
    }
}

//! Learned speculators (issue 33; lecture §4.2): a distilled draft is seeded and reproducible
//! bit for bit; saved and read back it is the same draft (the same α), and a corrupt or foreign
//! file is refused naming what is wrong; every pool size of the shipped pools, boost-tuned and
//! not, gives the target's own greedy output, and each step's merged tree is exactly the union
//! of the members' greedy chains, shared prefixes once.

use burn::module::Module;
use burn::tensor::{read_sync, Device, Int, Tensor, TensorData};
use specdec::clock::native_clock;
use specdec::decode::chance::Seeded;
use specdec::decode::engine::{generate, Config, Method, TreeRule};
use specdec::i18n::Lang;
use specdec::lab::learned::{check, pool_report, TrainParams};
use specdec::lab::lm::Cached;
use specdec::lab::Lab;
use specdec::likesworld::{self, worlds, Split, EOS, MAX_LEN};
use specdec::model::device::Backend;
use specdec::model::distill::{distill, Corpus, DistillConfig, Distiller, Teacher};
use specdec::model::draft_file::{self, from_bytes, shape, to_bytes, POOL};
use specdec::model::{weights, Decoder, ModelKind, Models};
use std::collections::BTreeSet;
use std::sync::OnceLock;

fn flex() -> &'static Models {
    static M: OnceLock<Models> = OnceLock::new();
    M.get_or_init(|| read_sync(Models::load(Backend::Flex)).unwrap())
}

/// The text of `n` training worlds, learned after each prompt.
fn text_corpus(n: usize) -> Corpus {
    let w = worlds(Split::Train, 3, n);
    let from: Vec<usize> = w.iter().map(|w| w.prompt().len()).collect();
    Corpus::new(w.iter().map(|w| w.tokens()).collect(), &from)
}

/// flex draws every random number from one global generator: the tests that initialise a model
/// hold this, so that a seeded run is not interleaved with another test's draws.
static RANDOM: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A tiny draft trained for `steps` on the text with the KL teacher (the target in the loop).
fn tiny_draft(seed: u64, steps: usize) -> (Decoder, Vec<f64>) {
    let _one_at_a_time = RANDOM.lock().unwrap_or_else(|e| e.into_inner());
    let m = flex();
    let mut config = DistillConfig::new(shape("16,1,2,32").unwrap(), Teacher::Kl, seed, steps);
    config.batch = 4;
    config.eval_every = 0;
    let (d, curve) = distill(
        &config,
        &text_corpus(32),
        &m.target,
        None,
        &m.device,
        |_| {},
    )
    .unwrap();
    (d, curve.iter().map(|p| p.loss).collect())
}

fn logit_bits(model: &Decoder, device: &Device) -> Vec<u32> {
    let probe =
        Tensor::<2, Int>::from_data(TensorData::new(vec![1i64, 7, 3, 20, 4], [1, 5]), device);
    model
        .forward_causal(probe)
        .into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .unwrap()
        .iter()
        .map(|x| x.to_bits())
        .collect()
}

#[test]
fn a_seeded_distillation_is_reproducible_bit_for_bit() {
    let d = &flex().device;
    let (a, la) = tiny_draft(7, 3);
    let (b, lb) = tiny_draft(7, 3);
    assert_eq!(la.len(), 3);
    assert!(la.iter().all(|l| l.is_finite() && *l > 0.0), "{la:?}");
    assert_eq!(la, lb, "the same seed, the same losses");
    assert!(
        logit_bits(&a, d) == logit_bits(&b, d),
        "the same seed, the same weights"
    );
    let (_, lc) = tiny_draft(8, 3);
    assert_ne!(la, lc, "another seed, another run");
}

#[test]
fn a_run_stepped_a_few_steps_at_a_time_as_the_page_does_is_the_run_at_once() {
    let m = flex();
    let d = &m.device;
    let (whole, losses) = tiny_draft(11, 5);
    let _one_at_a_time = RANDOM.lock().unwrap_or_else(|e| e.into_inner());
    let mut config = DistillConfig::new(shape("16,1,2,32").unwrap(), Teacher::Kl, 11, 5);
    config.batch = 4;
    config.eval_every = 0;
    let mut run = Distiller::new(&config, text_corpus(32), &m.target, None, d).unwrap();
    let mut stepped = Vec::new();
    // Slices of 2, 1 and 2 steps with a look at the draft between them (the page's checks).
    for slice in [2, 1, 2] {
        for _ in 0..slice {
            stepped.push(run.step().expect("a step of the run").loss);
        }
        let _ = logit_bits(&run.model(), d);
    }
    assert!(
        run.finished() && run.step().is_none(),
        "no step past the run's last"
    );
    assert_eq!(run.steps_done(), 5);
    assert_eq!(stepped, losses, "the same losses");
    assert!(
        logit_bits(&run.model(), d) == logit_bits(&whole, d),
        "the same weights"
    );
}

#[test]
fn the_pages_training_parameters_are_checked_and_the_check_agrees_with_the_pool_report() {
    let m = flex();
    let ok = TrainParams::default().config().unwrap();
    assert_eq!((ok.steps, ok.eval_every), (TrainParams::default().steps, 0));
    let bad = |f: &dyn Fn(&mut TrainParams)| {
        let mut p = TrainParams::default();
        f(&mut p);
        p.config().unwrap_err().to_string()
    };
    assert!(
        bad(&|p| p.steps = 0).contains("steps"),
        "{}",
        bad(&|p| p.steps = 0)
    );
    assert!(bad(&|p| p.teacher = "oracle".into()).contains("unknown teacher \"oracle\""));
    assert!(bad(&|p| p.shape = "4096,1,4,64".into()).contains("4 ≤ d ≤ 256"));
    assert!(bad(&|p| p.batch = 100_000).contains("batch"));
    assert!(bad(&|p| p.corpus = 1).contains("corpus"));
    // The widget's check of a draft is the pool report's numbers for a pool of one.
    let clock = native_clock();
    let lab = Lab::new(m, Lang::En, &clock);
    let c = read_sync(check(&lab, std::slice::from_ref(&m.draft_a), 4, 12)).unwrap();
    let r = read_sync(pool_report(
        &lab,
        std::slice::from_ref(&m.draft_a),
        None,
        (4, TreeRule::Greedy),
        12,
        &mut |_, _| {},
    ))
    .unwrap();
    assert_eq!(
        (c.identical, c.prompts),
        (12, 12),
        "greedy: the target's output"
    );
    assert_eq!(c.tokens_per_call, r.tokens_per_call);
    assert_eq!(c.alpha, r.alpha);
    assert_eq!(c.tree_nodes, r.tree_nodes);
    let tested: usize = c.by_kind.iter().map(|k| k.tested).sum();
    let passed: usize = c.by_kind.iter().map(|k| k.passed).sum();
    assert!(tested > 0);
    assert_eq!(
        passed as f64 / tested as f64,
        c.alpha,
        "α by kind adds up to α"
    );
}

#[test]
fn a_saved_draft_reads_back_as_the_same_draft_and_bad_files_are_refused() {
    let m = flex();
    let d = &m.device;
    let (draft, _) = tiny_draft(5, 20);
    let config = shape("16,1,2,32").unwrap();
    let bytes = to_bytes(&draft, &config).unwrap();
    let (back, read) = from_bytes(&bytes, "mine.bpk", d).unwrap();
    assert_eq!(draft_file::shape_name(&read), "16,1,2,32");
    assert!(logit_bits(&draft, d) == logit_bits(&back, d));
    let clock = native_clock();
    let lab = Lab::new(m, Lang::En, &clock);
    let alpha = |x: &Decoder| {
        read_sync(pool_report(
            &lab,
            std::slice::from_ref(x),
            None,
            (3, TreeRule::Greedy),
            8,
            &mut |_, _| {},
        ))
        .unwrap()
    };
    let (before, after) = (alpha(&draft), alpha(&back));
    assert_eq!(before.alpha, after.alpha);
    assert_eq!(before.tokens_per_call, after.tokens_per_call);
    assert_eq!(
        after.identical,
        Some(8),
        "greedy identity with a trained draft"
    );
    let refused = |b: &[u8]| match from_bytes(b, "bad.bpk", d) {
        Ok(_) => panic!("a bad file was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(refused(b"not a burnpack file").contains("not a Burnpack file"));
    assert!(refused(&bytes[..bytes.len() / 2]).contains("bad.bpk"));
    // The Burnpack reader's own words are English: in Chinese they come after a Chinese clause.
    let in_chinese = |b: &[u8]| match from_bytes(b, "bad.bpk", d) {
        Ok(_) => panic!("a bad file was accepted"),
        Err(e) => e.message(Lang::Zh),
    };
    assert!(in_chinese(b"not a burnpack file").contains("不是 Burnpack 文件（读取器报告："));
    let half = in_chinese(&bytes[..bytes.len() / 2]);
    assert!(half.contains("读取器报告："), "{half}");
    let mut flipped = bytes.clone();
    flipped[0] ^= 0xff;
    assert!(refused(&flipped).contains("bad.bpk"));
    // The shipped target's file is Burnpack, but not a draft written by `specdec train`.
    let target = std::fs::read(weights::asset_path(ModelKind::Target)).unwrap();
    assert!(
        refused(&target).contains("no specdec mark"),
        "{}",
        refused(&target)
    );
    // A draft of another vocabulary is not a LikesWorld draft.
    let other = specdec::model::DecoderConfig::new(12, 8, 1, 2, 8);
    let foreign = {
        let _one_at_a_time = RANDOM.lock().unwrap_or_else(|e| e.into_inner());
        to_bytes(&other.init(d), &other).unwrap()
    };
    assert!(
        refused(&foreign).contains("not a LikesWorld draft"),
        "{}",
        refused(&foreign)
    );
    // Weights that are not numbers (or absurdly large) would make the draft's distributions NaN.
    for poison in [f32::NAN, f32::INFINITY, 1e30] {
        let bad = draft.clone().map(&mut Scale(poison));
        let file = to_bytes(&bad, &config).unwrap();
        assert!(
            refused(&file).contains("a trained draft's weights are finite"),
            "{poison}: {}",
            refused(&file)
        );
    }
}

/// Multiplies every parameter by a number (a poisoned file's weights).
struct Scale(f32);

impl burn::module::ModuleMapper for Scale {
    fn map_float<const D: usize>(
        &mut self,
        param: burn::module::Param<Tensor<D>>,
    ) -> burn::module::Param<Tensor<D>> {
        let (id, t, _) = param.consume();
        burn::module::Param::initialized(id, t.mul_scalar(self.0))
    }
}

/// The root-to-node paths of a tree, one per node.
fn paths(tokens: &[u32], parents: &[Option<usize>]) -> BTreeSet<Vec<u32>> {
    (0..tokens.len())
        .map(|mut i| {
            let mut p = vec![tokens[i]];
            while let Some(up) = parents[i] {
                p.push(tokens[up]);
                i = up;
            }
            p.reverse();
            p
        })
        .collect()
}

#[test]
fn every_shipped_pool_gives_the_targets_output_and_merges_its_chains_once() {
    let m = flex();
    let d = &m.device;
    let clock = native_clock();
    let lab = Lab::new(m, Lang::En, &clock);
    let gamma = 3;
    for boosted in [true, false] {
        for n in 1..=POOL.max as usize {
            let pool = draft_file::shipped_pool(boosted, n, d).unwrap();
            let r = read_sync(pool_report(
                &lab,
                &pool,
                Some(boosted),
                (gamma, TreeRule::Greedy),
                12,
                &mut |_, _| {},
            ))
            .unwrap();
            assert_eq!(
                r.identical,
                Some(12),
                "pool of {n}, boosted {boosted}: {r:?}"
            );
            assert_eq!(r.coverage.len(), n);
            assert!(
                r.coverage.windows(2).all(|w| w[1].pool >= w[0].pool),
                "{r:?}"
            );
        }
    }
    // Each step's tree against the members' own greedy chains from the same context.
    let pool = draft_file::shipped_pool(true, 4, d).unwrap();
    let config = |method, max_len, trace| Config {
        method,
        max_len,
        eos: Some(EOS),
        trace,
    };
    let mut steps = 0;
    for w in likesworld::prompts(3) {
        let prompt = w.prompt();
        let mut target = Cached::new(&m.target, d, 1.0);
        let mut drafts: Vec<Cached> = pool.iter().map(|p| Cached::new(p, d, 1.0)).collect();
        let merge = Method::Merge {
            gamma,
            rule: TreeRule::Greedy,
        };
        let g = read_sync(generate(
            &mut target,
            &mut drafts,
            &prompt,
            &config(merge, MAX_LEN, true),
            &mut Seeded::new(0),
            &clock,
        ))
        .unwrap();
        for step in &g.trace {
            let ctx: Vec<u32> = prompt
                .iter()
                .chain(&g.output[..step.before])
                .copied()
                .collect();
            if ctx.len() + gamma + 1 > MAX_LEN {
                continue;
            }
            let mut union = BTreeSet::new();
            for p in &pool {
                let mut alone = Cached::new(p, d, 1.0);
                let chain = read_sync(generate(
                    &mut alone,
                    &mut [],
                    &ctx,
                    &config(Method::Target { greedy: true }, ctx.len() + gamma, false),
                    &mut Seeded::new(0),
                    &clock,
                ))
                .unwrap()
                .output;
                for k in 1..=chain.len() {
                    union.insert(chain[..k].to_vec());
                }
            }
            let tree = paths(&step.tree.tokens, &step.tree.parents);
            assert_eq!(tree.len(), step.tree.tokens.len(), "no node twice");
            assert_eq!(tree, union, "the merged tree is the union of the chains");
            steps += 1;
        }
    }
    assert!(steps > 10, "{steps} steps checked");
}

#[test]
fn a_pools_sampled_chains_are_verified_with_mss_and_reported_without_an_identity_claim() {
    let m = flex();
    let clock = native_clock();
    let lab = Lab::new(m, Lang::En, &clock);
    let pool = draft_file::shipped_pool(true, 2, &m.device).unwrap();
    let run = |rule| {
        read_sync(pool_report(
            &lab,
            &pool,
            Some(true),
            (3, rule),
            10,
            &mut |_, _| {},
        ))
        .unwrap()
    };
    let (mss, greedy) = (run(TreeRule::Mss), run(TreeRule::Greedy));
    assert_eq!((mss.verify, greedy.verify), ("mss", "greedy"));
    assert_eq!(
        mss.identical, None,
        "sampled outputs are not compared token for token"
    );
    assert_eq!(greedy.identical, Some(10));
    // Sampled chains still buy tokens: every call yields its bonus token and some drafts.
    assert!(
        mss.tokens_per_call > 1.2 && mss.alpha > 0.1 && mss.alpha < 1.0,
        "{mss:?}"
    );
    assert!(mss.tree_nodes > 3.0 && mss.tree_nodes <= 6.0, "{mss:?}");
    // Seeded: the same run twice is the same run.
    assert_eq!(run(TreeRule::Mss).tokens_per_call, mss.tokens_per_call);
}

//! What the model widgets' selects offer, declared once here and handed to the page by `presets`
//! (`menus`, beside the analytic widgets' of [`specdec_math::views::menus`]): the menus of the
//! core's named choices (the backends, what proposes, the step-through's runs, the hidden-state
//! drafts offered, their verifications, the pools'; the drafters without a model, every one and
//! those the budget sweep takes; the workloads and Jacobi's starts); the decoding widget's
//! experiments, drafts, prompts, batches, children and node budgets; the model-free widget's
//! experiments and requests; the speculation-here widget's plans, trees and prompts; the boost
//! widget's pools, γ and prompts; the tree-vs-paths widget's trees and batches; the training
//! widget's shapes, runs, teachers, steps and seeds; and where a WebGPU target's weights and
//! drafts sit. Where the page offers a few values of a wider range, they are listed here and a
//! test holds each to what the core takes.

use crate::decode::free::kind::{DrafterKind, JacobiStart};
use crate::decode::free::workloads::Kind as Workload;
use crate::lab::learned::PoolVerify;
use crate::lab::params;
use crate::model::device::Backend;
use crate::sampling::multi::Children;
use crate::views::modelfree::FreeExperiment;
pub use specdec_math::views::menus::{menu, Choice, Menu, Menus};

/// The decoding widget's experiments, in [`Experiment::all`](crate::lab::params::Experiment::all)'s order, in its menu's words with
/// the lecture's demo numbers.
pub const EXPERIMENTS: [Choice; 11] = [
    Choice::new(
        "acceptance",
        "acceptance by token kind (03.1)",
        "按 token 类别的接受率（03.1）",
    ),
    Choice::new(
        "greedy",
        "greedy chains over γ (03.2)",
        "不同 γ 的贪心链（03.2）",
    ),
    Choice::new(
        "sample",
        "sampling and its test (03.3)",
        "采样及其检验（03.3）",
    ),
    Choice::new("tree", "greedy trees (04.3)", "贪心树（04.3）"),
    Choice::new(
        "stochastic",
        "naive vs MSS trees (04.5)",
        "朴素采样 vs MSS 树（04.5）",
    ),
    Choice::new("speedup", "wall clock: c and speedup", "墙钟：c 与加速比"),
    Choice::new(
        "sweep",
        "wall clock over γ: the best γ",
        "不同 γ 的墙钟：最好的 γ",
    ),
    Choice::new(
        "load",
        "wall clock over the batch: under load",
        "不同批大小的墙钟：负载下",
    ),
    Choice::new("step", "step through one run", "逐步查看一次运行"),
    Choice::new(
        "hidden",
        "drafts on the target’s hidden states (§5)",
        "读目标模型隐藏状态的草稿（§5）",
    ),
    Choice::new(
        "methods",
        "every method on the wall clock (§6)",
        "墙钟上的每种方法（§6）",
    ),
];
/// The decoding widget's drafts: [`Draft`](crate::lab::params::Draft)'s, and the one trained in this browser.
pub const DRAFTS: [Choice; 3] = [
    Choice::new("a", "A (1 layer)", "A（1 层）"),
    Choice::new("b", "B (2 layers)", "B（2 层）"),
    Choice::new("yours", "yours (trained here)", "你的（在这里训练的）"),
];
/// A hidden-state draft's node budgets ([`params::BUDGETS`]), and Auto: each method of the §6
/// table at its size for this device.
pub const BUDGETS: [Choice; 5] = [
    Choice::new("4", "4", "4"),
    Choice::new("8", "8", "8"),
    Choice::new("16", "16", "16"),
    Choice::new("32", "32", "32"),
    Choice::new("auto", "Auto (this device)", "自动（这台设备）"),
];
/// The prompts the decoding widget offers, and its batches (the measured roofline's too).
pub const PROMPTS: [u32; 5] = [10, 20, 50, 100, 200];
pub const BATCHES: [u32; 4] = [1, 4, 16, 64];
/// The requests the model-free widget offers.
pub const REQUESTS: [u32; 5] = [10, 30, 50, 100, 200];
/// What the speculation-here widget measures, the largest trees it times, and its prompts.
pub const CHOOSE_PLANS: [Choice; 3] = [
    Choice::new(
        "both",
        "both where WebGPU is offered: pick the faster",
        "有 WebGPU 时两种都测：选更快的",
    ),
    Choice::new("cpu", "the CPU module", "CPU 模块"),
    Choice::new(
        "wgpu",
        "WebGPU target, drafts on the CPU",
        "WebGPU 目标模型，草稿在 CPU 上",
    ),
];
pub const CHOOSE_NODES: [u32; 3] = [8, 16, 31];
pub const CHOOSE_PROMPTS: [u32; 3] = [5, 10, 20];
/// The boost widget's pool sizes, γ of each chain, and prompts.
pub const BOOST_POOLS: [Choice; 4] = [
    Choice::new("1,2,4", "1,2,4", "1,2,4"),
    Choice::new("1,2,3,4", "1,2,3,4", "1,2,3,4"),
    Choice::new("1,2", "1,2", "1,2"),
    Choice::new("4", "4", "4"),
];
pub const BOOST_GAMMAS: [u32; 4] = [2, 3, 4, 6];
pub const BOOST_PROMPTS: [u32; 3] = [10, 30, 100];
/// The trees the tree-vs-paths widget offers: the lecture's, the exercise's and the slides',
/// SpecInfer's experiment's, two more shapes, and EAGLE-2's dynamic tree at two budgets.
pub const TREEPATHS_TREES: [Choice; 9] = [
    Choice::new("<2,2,1>", "⟨2,2,1⟩", "⟨2,2,1⟩"),
    Choice::new("<2,2,2,2>", "⟨2,2,2,2⟩", "⟨2,2,2,2⟩"),
    Choice::new(
        "exercise-5",
        "exercise 5 (three drafts)",
        "练习 5（三个草稿）",
    ),
    Choice::new("slides", "the slides’ example", "讲义幻灯片上的例子"),
    Choice::new(
        "<1,1,3,1,1,1,1,1>",
        "⟨1,1,3,1,1,1,1,1⟩",
        "⟨1,1,3,1,1,1,1,1⟩",
    ),
    Choice::new("<4,2,1>", "⟨4,2,1⟩", "⟨4,2,1⟩"),
    Choice::new("<8>", "⟨8⟩", "⟨8⟩"),
    Choice::new(
        "eagle-2",
        "EAGLE-2, dynamic (16 nodes)",
        "EAGLE-2，动态树（16 个节点）",
    ),
    Choice::new(
        "eagle-2:32",
        "EAGLE-2, dynamic (32 nodes)",
        "EAGLE-2，动态树（32 个节点）",
    ),
];
/// The tree-vs-paths widget's batch lists.
pub const TREEPATHS_BATCHES: [Choice; 6] = [
    Choice::new("1,2,4,8,16,32", "1,2,4,8,16,32", "1,2,4,8,16,32"),
    Choice::new("1,2,4,8", "1,2,4,8", "1,2,4,8"),
    Choice::new("1,4,16,64", "1,4,16,64", "1,4,16,64"),
    Choice::new("1", "1", "1"),
    Choice::new("8", "8", "8"),
    Choice::new("32", "32", "32"),
];
/// Where a WebGPU target's weights sit, and its drafts.
pub const GPU_WEIGHTS: [Choice; 2] = [
    Choice::new("gpu", "on the GPU", "在 GPU 上"),
    Choice::new(
        "host",
        "offloaded: cross to the GPU before every call",
        "卸载：每次调用前传到 GPU",
    ),
];
pub const GPU_DRAFTS: [Choice; 2] = [
    Choice::new(
        "cpu",
        "on the CPU, beside the GPU target",
        "在 CPU 上，GPU 上的目标模型旁边",
    ),
    Choice::new(
        "gpu",
        "on the GPU, with the target",
        "在 GPU 上，和目标模型一起",
    ),
];
/// The shapes the training widget offers (d, layers, heads, d_ff; `a`/`b` the shipped drafts'),
/// what trains (one draft, or a pool of two boost-tuned or without the filter), what a draft
/// learns from (`model::distill::Teacher`'s names, which only the training module holds), the
/// steps of a run and its seeds.
pub const TRAIN_SHAPES: [Choice; 4] = [
    Choice::new("a", "A: 32,1,4,64", "A：32,1,4,64"),
    Choice::new("b", "B: 32,2,4,64", "B：32,2,4,64"),
    Choice::new("16,1,2,32", "16,1,2,32 (tiny)", "16,1,2,32（很小）"),
    Choice::new("64,2,4,128", "64,2,4,128", "64,2,4,128"),
];
pub const TRAIN_MODELS: [Choice; 3] = [
    Choice::new("1", "one draft", "一个草稿"),
    Choice::new(
        "2",
        "a pool of 2, boost-tuned",
        "2 个模型的池，boost-tuning",
    ),
    Choice::new(
        "2-plain",
        "a pool of 2, no filter (the control)",
        "2 个模型的池，不过滤（对照）",
    ),
];
pub const TEACHERS: [Choice; 3] = [
    Choice::new(
        "greedy",
        "the target’s greedy outputs",
        "目标模型的贪心输出",
    ),
    Choice::new(
        "kl",
        "the target’s distributions (KL)",
        "目标模型的分布（KL）",
    ),
    Choice::new("text", "the LikesWorld text", "LikesWorld 文本"),
];
pub const TRAIN_STEPS: [u32; 6] = [50, 200, 500, 1000, 1500, 3000];
pub const TRAIN_SEEDS: [u32; 4] = [1, 2, 3, 4];

/// The model widgets' menus.
pub fn models() -> Menus {
    let children = [Children::WithoutReplacement, Children::Iid];
    Menus(vec![
        ("backend", menu(&Backend::ALL, Backend::label)),
        (
            "proposing",
            menu(&params::Proposing::ALL, params::Proposing::label),
        ),
        (
            "stepkind",
            menu(&params::StepKind::ALL, params::StepKind::label),
        ),
        (
            "method",
            menu(&params::HiddenMethod::OFFERED, params::HiddenMethod::label),
        ),
        (
            "verification",
            menu(&params::Verification::ALL, params::Verification::label),
        ),
        ("pool_verify", menu(&PoolVerify::ALL, PoolVerify::label)),
        ("drafter", menu(&DrafterKind::ALL, DrafterKind::menu_label)),
        (
            "tree_drafter",
            menu(&DrafterKind::TREES, DrafterKind::menu_label),
        ),
        ("workload", menu(&Workload::ALL, Workload::title)),
        ("init", menu(&JacobiStart::ALL, JacobiStart::label)),
        ("decoding.children", menu(&children, Children::label)),
        ("decoding.budget", Menu::Listed(&BUDGETS)),
        ("decoding.experiment", Menu::Listed(&EXPERIMENTS)),
        ("decoding.draft", Menu::Listed(&DRAFTS)),
        ("decoding.prompts", Menu::Numbers(&PROMPTS)),
        ("batch", Menu::Numbers(&BATCHES)),
        (
            "modelfree.experiment",
            menu(&FreeExperiment::ALL, FreeExperiment::label),
        ),
        ("modelfree.requests", Menu::Numbers(&REQUESTS)),
        ("choosehere.plan", Menu::Listed(&CHOOSE_PLANS)),
        ("choosehere.nodes", Menu::Numbers(&CHOOSE_NODES)),
        ("choosehere.prompts", Menu::Numbers(&CHOOSE_PROMPTS)),
        ("boost.pools", Menu::Listed(&BOOST_POOLS)),
        ("boost.gamma", Menu::Numbers(&BOOST_GAMMAS)),
        ("boost.prompts", Menu::Numbers(&BOOST_PROMPTS)),
        ("treepaths.config", Menu::Listed(&TREEPATHS_TREES)),
        ("treepaths.batches", Menu::Listed(&TREEPATHS_BATCHES)),
        ("gpu.weights", Menu::Listed(&GPU_WEIGHTS)),
        ("gpu.drafts", Menu::Listed(&GPU_DRAFTS)),
        ("train.shape", Menu::Listed(&TRAIN_SHAPES)),
        ("train.models", Menu::Listed(&TRAIN_MODELS)),
        ("train.teacher", Menu::Listed(&TEACHERS)),
        ("train.steps", Menu::Numbers(&TRAIN_STEPS)),
        ("train.seed", Menu::Numbers(&TRAIN_SEEDS)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::params::{Draft, Experiment};
    use crate::views::{boost, choose_here, modelfree, treepaths};

    #[test]
    fn every_menu_has_choices_each_named_once_and_labelled_in_both_languages() {
        let lecture = specdec_math::views::menus::lecture();
        for (name, m) in models() {
            assert!(lecture.get(name).is_none(), "{name} is the lecture's too");
            let mut names = m.names();
            assert!(!names.is_empty(), "{name}");
            names.sort();
            names.dedup();
            assert_eq!(names.len(), m.names().len(), "{name}: a name twice");
            assert!(
                m.labels()
                    .iter()
                    .all(|(en, zh)| !en.is_empty() && !zh.is_empty()),
                "{name}"
            );
        }
    }

    #[test]
    fn every_menu_is_named_once() {
        let mut names: Vec<&str> = models().into_iter().map(|(n, _)| n).collect();
        let all = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all);
    }

    #[test]
    fn the_experiments_menu_names_every_experiment_in_order_and_each_parses() {
        let names = models()["decoding.experiment"].names();
        let all: Vec<&str> = Experiment::all().iter().map(|e| e.name()).collect();
        assert_eq!(names, all);
        for n in names {
            let e: Experiment =
                serde_json::from_value(serde_json::json!({ "experiment": n })).unwrap();
            assert_eq!(e.name(), n);
        }
    }

    #[test]
    fn the_budgets_menu_is_the_cores_budgets_and_auto() {
        let budgets = params::BUDGETS.iter().map(|b| b.to_string());
        let expected: Vec<String> = budgets.chain(["auto".to_string()]).collect();
        assert_eq!(models()["decoding.budget"].names(), expected);
    }

    #[test]
    fn the_drafts_menu_is_every_shipped_draft_and_yours() {
        let shipped: Vec<String> = Draft::ALL.iter().map(|d| d.name().to_string()).collect();
        assert_eq!(
            models()["decoding.draft"].names(),
            [shipped, vec!["yours".into()]].concat()
        );
    }

    #[test]
    fn every_number_offered_is_in_the_range_the_core_takes() {
        let within = |range: crate::error::Range, values: &[u32]| {
            for &v in values {
                range.check(f64::from(v)).unwrap();
            }
        };
        within(params::PROMPTS, &PROMPTS);
        // The batches: the decoding widget's and the measured roofline's.
        within(params::BATCH, &BATCHES);
        within(crate::model::measure::BATCH, &BATCHES);
        within(crate::decode::free::kind::REQUESTS, &REQUESTS);
        within(crate::lab::choose::MAX_NODES, &CHOOSE_NODES);
        within(params::PROMPTS, &CHOOSE_PROMPTS);
        within(params::GAMMA, &BOOST_GAMMAS);
        within(params::PROMPTS, &BOOST_PROMPTS);
        within(crate::lab::learned::TRAIN_STEPS, &TRAIN_STEPS);
    }

    #[test]
    fn the_training_menus_are_the_training_modules_own() {
        let all: Vec<&str> = crate::model::distill::Teacher::ALL
            .iter()
            .map(|t| t.name())
            .collect();
        assert_eq!(TEACHERS.map(|t| t.name), *all);
        for c in TRAIN_SHAPES {
            crate::model::draft_file::shape(c.name).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        }
    }

    #[test]
    fn each_widget_default_is_one_its_menu_offers() {
        let menus = models();
        let has = |m: &str, v: String| assert!(menus[m].names().contains(&v), "{m}: {v}");
        has(
            "modelfree.requests",
            modelfree::ModelfreeParams::default().requests.to_string(),
        );
        let here = choose_here::ChooseHereParams::default();
        has("choosehere.nodes", here.max_nodes.to_string());
        has("choosehere.prompts", here.prompts.to_string());
        let b = boost::BoostParams::default();
        has("boost.pools", b.pools.clone());
        has("boost.gamma", b.gamma.to_string());
        has("boost.prompts", b.prompts.to_string());
        let t = treepaths::TreePathsParams::default();
        has("treepaths.config", t.config.clone());
        has("treepaths.batches", t.batches.clone());
    }

    #[test]
    fn every_pool_tree_and_batch_list_offered_is_one_the_core_reads() {
        for c in BOOST_POOLS {
            let p = boost::BoostParams {
                pools: c.name.into(),
                ..Default::default()
            };
            p.check().unwrap_or_else(|e| panic!("{}: {e}", c.name));
        }
        for c in TREEPATHS_TREES {
            let p = treepaths::TreePathsParams {
                config: c.name.into(),
                ..Default::default()
            };
            p.check().unwrap_or_else(|e| panic!("{}: {e}", c.name));
        }
        for c in TREEPATHS_BATCHES {
            let p = treepaths::TreePathsParams {
                batches: c.name.into(),
                ..Default::default()
            };
            p.check().unwrap_or_else(|e| panic!("{}: {e}", c.name));
        }
    }
}

//! What the page's controls offer, declared once in the core and handed over by one export
//! (`presets`): the GPU and model presets, the verification rules, the token kinds (with their
//! names in both languages), every range and default of the decoding widget's values (γ, the
//! prompts, the repeats, the trees, the batch, and the hidden-state drafts' node budget, depth
//! and heads), the target's widths with their sizes, and for every other widget the ranges its
//! sliders take with its parameters' defaults (its view's `Default`, serialised), and the
//! devices the speculation widget chooses for. The page's controls read these instead of
//! restating them (`declare` in `www/engine.js`).

use super::output;
use crate::error::Range;
use crate::i18n::Lang;
use crate::lab::params;
use crate::likesworld::TokenKind;
use crate::model::widen;
use crate::views::{
    boost, choose, exactness, modelfree, multidraft, roofline, theory, tree, treepaths,
};
use serde::Serialize;
use std::collections::BTreeMap;
use wasm_bindgen::prelude::*;

#[derive(Serialize)]
struct Kind {
    name: TokenKind,
    en: &'static str,
    zh: &'static str,
}

/// The decoding widget's ranges and defaults.
#[derive(Serialize)]
struct Ranges {
    gamma: Range,
    prompts: Range,
    repeats: Range,
    tree_depth: Range,
    tree_nodes: usize,
    batch: Range,
    /// A hidden-state draft's node budget, the budgets the page offers, and the default.
    budget: Range,
    budgets: &'static [usize],
    /// The verifications each hidden-state draft's proposals can take, by its name.
    verifications: std::collections::BTreeMap<&'static str, Vec<&'static str>>,
    depth: Range,
    heads: Range,
    /// Every default a control shows until it is moved.
    defaults: Defaults,
}

#[derive(Serialize)]
struct Defaults {
    gamma: u32,
    /// The batches of the sweep over the batch (speculation under load).
    batches: &'static str,
    budget: usize,
    depth: usize,
    heads: usize,
}

/// A width the page offers for the target, with what a step of it reads.
#[derive(Serialize)]
struct Width {
    width: usize,
    params: usize,
    step_bytes: usize,
}

/// A widget's ranges, by the name of the parameter each bounds, beside its parameters' defaults
/// (the view's `Default`, so that a default lives in one place).
#[derive(Serialize)]
struct Widget<D: Serialize> {
    #[serde(flatten)]
    ranges: BTreeMap<&'static str, Range>,
    defaults: D,
}

fn widget<D: Serialize>(ranges: &[(&'static str, Range)], defaults: D) -> Widget<D> {
    Widget {
        ranges: ranges.iter().copied().collect(),
        defaults,
    }
}

/// The roofline widget's: its ranges and defaults, and the heat map's batches and contexts (the
/// page's batch and context sliders span its cells).
#[derive(Serialize)]
struct Roofline {
    #[serde(flatten)]
    widget: Widget<roofline::RooflineParams>,
    heat_batches: &'static [u32],
    heat_contexts: &'static [u32],
    /// Where the step chart's k axis ends: the page's k slider stops there.
    k_axis: u32,
}

/// The theory widget's: its ranges and defaults, and where its first chart's γ axis ends (the
/// page's γ slider stops there).
#[derive(Serialize)]
struct Theory {
    #[serde(flatten)]
    widget: Widget<theory::TheoryParams>,
    gamma_axis: u32,
}

/// A device the choice can be made for, with its name in both languages and its own c.
#[derive(Serialize)]
struct Device {
    key: String,
    en: String,
    zh: String,
    draft_cost: f64,
}

/// The speculation widget's: its ranges and defaults, and the devices it chooses for (the
/// measured ones first, then each GPU preset through the roofline model).
#[derive(Serialize)]
struct Choose {
    #[serde(flatten)]
    widget: Widget<choose::ChooseParams>,
    devices: Vec<Device>,
}

#[derive(Serialize)]
struct Presets {
    gpus: &'static [crate::roofline::Gpu],
    models: &'static [crate::roofline::Model],
    variants: Vec<&'static str>,
    /// The rules' Chinese names, in the order of `variants`.
    variants_zh: Vec<&'static str>,
    /// The exactness lab's rules: the variants, then Medusa's typical acceptance; and their
    /// Chinese names.
    rules: Vec<&'static str>,
    rules_zh: Vec<&'static str>,
    token_kinds: Vec<Kind>,
    decoding: Ranges,
    theory: Theory,
    roofline: Roofline,
    exactness: Widget<exactness::ExactnessParams>,
    multidraft: Widget<multidraft::MultiDraftParams>,
    modelfree: Widget<modelfree::ModelfreeParams>,
    tree: Widget<tree::TreeParams>,
    choose: Choose,
    treepaths: Widget<treepaths::TreePathsParams>,
    boost: Widget<boost::BoostParams>,
    target_width: Range,
    widths: Vec<Width>,
    version: &'static str,
}

#[wasm_bindgen]
pub fn presets() -> Result<JsValue, JsError> {
    let hidden = params::HiddenRun::default();
    let p = Presets {
        gpus: crate::roofline::GPUS,
        models: crate::roofline::MODELS,
        variants: crate::sampling::speculative::Variant::ALL
            .iter()
            .map(|v| v.name())
            .collect(),
        variants_zh: crate::sampling::speculative::Variant::ALL
            .iter()
            .map(|v| v.label(Lang::Zh))
            .collect(),
        rules: crate::sampling::rule::Rule::names(),
        rules_zh: crate::sampling::speculative::Variant::ALL
            .iter()
            .map(|v| v.label(Lang::Zh))
            .chain(["典型接受"])
            .collect(),
        token_kinds: TokenKind::ALL
            .iter()
            .map(|&k| Kind {
                name: k,
                en: k.label(Lang::En),
                zh: k.label(Lang::Zh),
            })
            .collect(),
        decoding: Ranges {
            gamma: params::GAMMA,
            prompts: params::PROMPTS,
            repeats: params::REPEATS,
            tree_depth: params::TREE_DEPTH,
            tree_nodes: params::NODE_BUDGET,
            batch: params::BATCH,
            budget: params::BUDGET,
            budgets: &params::BUDGETS,
            verifications: params::HiddenMethod::ALL
                .iter()
                .map(|m| (m.name(), m.verifications()))
                .collect(),
            depth: params::DEPTH,
            heads: params::HEADS,
            defaults: Defaults {
                gamma: params::DEFAULT_GAMMA,
                batches: params::DEFAULT_BATCHES,
                budget: hidden.spec().budget,
                depth: hidden.depth,
                heads: hidden.heads,
            },
        },
        theory: Theory {
            widget: widget(
                &[
                    ("alpha", crate::theory::ALPHA),
                    ("gamma", crate::theory::GAMMA),
                    ("c", crate::theory::C),
                    ("c_hat", crate::theory::C_HAT),
                ],
                theory::TheoryParams::default(),
            ),
            gamma_axis: theory::GAMMA_AXIS,
        },
        roofline: Roofline {
            widget: widget(
                &[
                    ("batch", crate::roofline::BATCH),
                    ("context", crate::roofline::CONTEXT),
                    ("k", crate::roofline::K),
                    ("overhead_ms", crate::roofline::OVERHEAD_MS),
                    ("alpha", roofline::ALPHA),
                    ("tp", crate::roofline::TP),
                    ("pp", crate::roofline::PP),
                    ("micro_batches", crate::roofline::MICRO_BATCHES),
                ],
                roofline::RooflineParams::default(),
            ),
            heat_batches: &roofline::HEAT_BATCHES,
            heat_contexts: &roofline::HEAT_CONTEXTS,
            k_axis: roofline::K_AXIS,
        },
        exactness: widget(
            &[
                ("gamma", exactness::GAMMA),
                ("runs", exactness::RUNS),
                ("window", exactness::WINDOW),
                ("epsilon", crate::sampling::typical::EPSILON),
                ("delta", crate::sampling::typical::DELTA),
                ("sharpness", crate::toy::SHARPNESS),
                ("draft_noise", crate::toy::DRAFT_NOISE),
                ("temperature", crate::toy::TEMPERATURE),
            ],
            exactness::ExactnessParams::default(),
        ),
        multidraft: widget(
            &[("k", multidraft::K)],
            multidraft::MultiDraftParams::default(),
        ),
        modelfree: widget(
            &[
                ("budget", crate::decode::free::kind::BUDGET),
                ("window", crate::decode::free::kind::WINDOW),
                ("requests", crate::decode::free::kind::REQUESTS),
            ],
            modelfree::ModelfreeParams::default(),
        ),
        tree: widget(&[("budget", tree::BUDGET)], tree::TreeParams::default()),
        choose: Choose {
            widget: widget(
                &[
                    ("draft_cost", crate::tree::choose::DRAFT_COST),
                    ("acceptance", crate::tree::sequoia::ACCEPTANCE),
                    ("acceptance_entries", crate::tree::sequoia::RANKS),
                ],
                choose::ChooseParams::default(),
            ),
            devices: crate::roofline::profiles::profiles()
                .into_iter()
                .map(|d| Device {
                    en: d.name.get(Lang::En).into(),
                    zh: d.name.get(Lang::Zh).into(),
                    key: d.key,
                    draft_cost: d.draft_cost,
                })
                .collect(),
        },
        treepaths: widget(
            &[
                ("batch", params::BATCH),
                ("prompts", crate::lab::paths::PROMPTS),
            ],
            treepaths::TreePathsParams::default(),
        ),
        boost: widget(
            &[
                ("gamma", params::GAMMA),
                ("prompts", params::PROMPTS),
                ("pool", crate::model::draft_file::POOL),
            ],
            boost::BoostParams::default(),
        ),
        target_width: widen::WIDTH,
        widths: widen::WIDTHS
            .iter()
            .map(|&r| Width {
                width: r,
                params: widen::params(crate::likesworld::VOCAB, r),
                step_bytes: widen::step_bytes(crate::likesworld::VOCAB, r),
            })
            .collect(),
        version: env!("CARGO_PKG_VERSION"),
    };
    output(&p, Lang::En)
}

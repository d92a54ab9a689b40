//! What the page's controls offer, declared once in the core and handed over by one export
//! (`presets`): the analytic widgets' (`specdec_math::wasm::presets::Lecture`, flattened in: the
//! GPU and model presets, the verification rules, the theory, roofline, exactness, multi-draft,
//! tree and speculation widgets' ranges and defaults), the token kinds (with their
//! names in both languages), every range and default of the decoding widget's values (γ, the
//! prompts, the repeats, the trees, the batch, and the hidden-state drafts' node budget, depth
//! and heads), the target's widths with their sizes, and for the other model widgets the ranges
//! their sliders take with their parameters' defaults (the views' `Default`, serialised); every
//! select's menu with its labels (the lecture's, and the model widgets' of `views::menus`); and
//! which jobs are timed (run alone). The page's controls read these instead of restating them
//! (`declare` in `www/declare.js`).

use super::output;
use crate::error::Range;
use crate::i18n::Lang;
use crate::lab::params;
use crate::likesworld::TokenKind;
use crate::model::widen;
use crate::views::{boost, modelfree, treepaths};
use serde::Serialize;
use specdec_math::wasm::presets::{widget, Lecture, Widget};
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
    /// The samples per prompt the page's slider offers (fewer than the core allows).
    page_repeats: Range,
    tree_depth: Range,
    tree_nodes: usize,
    batch: Range,
    /// A hidden-state draft's node budget, the budgets the page offers, and the default.
    budget: Range,
    budgets: &'static [usize],
    /// The verifications each hidden-state draft's proposals can take, by its name.
    verifications: BTreeMap<&'static str, Vec<&'static str>>,
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

/// The jobs whose reports are wall-clock times, which the page runs alone: these exports, and
/// the decoding export with these experiments.
#[derive(Serialize)]
struct Timed {
    exports: &'static [&'static str],
    experiments: Vec<&'static str>,
}

#[derive(Serialize)]
struct Presets {
    /// The analytic widgets' (the lecture's module hands the same alone: `lecture_presets`).
    #[serde(flatten)]
    lecture: Lecture,
    token_kinds: Vec<Kind>,
    decoding: Ranges,
    modelfree: Widget<modelfree::ModelfreeParams>,
    treepaths: Widget<treepaths::TreePathsParams>,
    boost: Widget<boost::BoostParams>,
    target_width: Range,
    widths: Vec<Width>,
    timed: Timed,
}

#[wasm_bindgen]
pub fn presets() -> Result<JsValue, JsError> {
    let hidden = params::HiddenRun::default();
    // The selects' menus: the lecture's, and the model widgets' (`views::menus`).
    let mut lecture = Lecture::new();
    lecture.menus.extend(crate::views::menus::models());
    let p = Presets {
        lecture,
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
            page_repeats: params::PAGE_REPEATS,
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
        modelfree: widget(
            &[
                ("budget", crate::decode::free::kind::BUDGET),
                ("window", crate::decode::free::kind::WINDOW),
                ("requests", crate::decode::free::kind::REQUESTS),
                ("request", crate::decode::free::kind::REQUEST),
            ],
            modelfree::ModelfreeParams::default(),
        ),
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
        timed: Timed {
            exports: &super::jobs::TIMED,
            experiments: params::Experiment::all()
                .iter()
                .filter(|e| e.timed())
                .map(|e| e.name())
                .collect(),
        },
    };
    output(&p, Lang::En)
}

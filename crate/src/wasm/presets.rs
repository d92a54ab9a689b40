//! What the page's controls offer, declared once in the core and handed over by one export
//! (`presets`): the GPU and model presets, the verification rules, the token kinds (with their
//! names in both languages), every range and default of the decoding widget's values (γ, the
//! prompts, the repeats, the trees, the batch, and the hidden-state drafts' node budget, depth
//! and heads), and the target's widths with their sizes. The page's controls read these instead
//! of restating them (`declare` in `www/engine.js`).

use super::output;
use crate::error::Range;
use crate::i18n::Lang;
use crate::lab::params;
use crate::likesworld::TokenKind;
use crate::model::widen;
use serde::Serialize;
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
    depth: Range,
    heads: Range,
    /// Every default a control shows until it is moved.
    defaults: Defaults,
}

#[derive(Serialize)]
struct Defaults {
    gamma: u32,
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

#[derive(Serialize)]
struct Presets {
    gpus: &'static [crate::roofline::Gpu],
    models: &'static [crate::roofline::Model],
    variants: Vec<&'static str>,
    token_kinds: Vec<Kind>,
    decoding: Ranges,
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
            depth: params::DEPTH,
            heads: params::HEADS,
            defaults: Defaults {
                gamma: params::DEFAULT_GAMMA,
                budget: hidden.budget,
                depth: hidden.depth,
                heads: hidden.heads,
            },
        },
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

//! What the analytic widgets' controls offer, declared once in the core and handed over by one
//! export (`lecture_presets`): the GPU and model presets, the verification rules (with their
//! Chinese names), and for every analytic widget the ranges its sliders take beside its
//! parameters' defaults (its view's `Default`, serialised), and the devices the speculation
//! widget chooses for; and the menus its selects offer ([`crate::views::menus`]). `specdec`'s
//! `presets` flattens [`Lecture`] into its own, beside what the model widgets offer, and adds its
//! menus to these: the page reads one object either way (`declare` in `www/declare.js`).

use super::output;
use crate::error::Range;
use crate::i18n::Lang;
use crate::views::menus::{self, Menus};
use crate::views::{choose, exactness, multidraft, roofline, theory, tree};
use serde::Serialize;
use std::collections::BTreeMap;
use wasm_bindgen::prelude::*;

/// A widget's ranges, by the name of the parameter each bounds, beside its parameters' defaults
/// (the view's `Default`, so that a default lives in one place).
#[derive(Serialize)]
pub struct Widget<D: Serialize> {
    #[serde(flatten)]
    ranges: BTreeMap<&'static str, Range>,
    defaults: D,
}

pub fn widget<D: Serialize>(ranges: &[(&'static str, Range)], defaults: D) -> Widget<D> {
    Widget {
        ranges: ranges.iter().copied().collect(),
        defaults,
    }
}

/// The roofline widget's: its ranges and defaults, and the heat map's batches and contexts (the
/// page's batch and context sliders span its cells).
#[derive(Serialize)]
pub struct Roofline {
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
pub struct Theory {
    #[serde(flatten)]
    widget: Widget<theory::TheoryParams>,
    gamma_axis: u32,
}

/// A device the choice can be made for, with its name in both languages and its own c.
#[derive(Serialize)]
pub struct Device {
    key: String,
    en: String,
    zh: String,
    draft_cost: f64,
}

/// The speculation widget's: its ranges and defaults, and the devices it chooses for (the
/// measured ones first, then each GPU preset through the roofline model).
#[derive(Serialize)]
pub struct Choose {
    #[serde(flatten)]
    widget: Widget<choose::ChooseParams>,
    devices: Vec<Device>,
}

/// The analytic widgets' declarations.
#[derive(Serialize)]
pub struct Lecture {
    gpus: &'static [crate::roofline::Gpu],
    models: &'static [crate::roofline::Model],
    variants: Vec<&'static str>,
    /// The rules' Chinese names, in the order of `variants`.
    variants_zh: Vec<&'static str>,
    /// The exactness lab's rules: the variants, then Medusa's typical acceptance; and their
    /// Chinese names.
    rules: Vec<&'static str>,
    rules_zh: Vec<&'static str>,
    theory: Theory,
    roofline: Roofline,
    exactness: Widget<exactness::ExactnessParams>,
    multidraft: Widget<multidraft::MultiDraftParams>,
    tree: Widget<tree::TreeParams>,
    choose: Choose,
    /// The seeds a widget's seed field takes.
    seed: Range,
    /// The selects' menus (`specdec`'s `presets` adds the model widgets').
    pub menus: Menus,
    version: &'static str,
}

impl Lecture {
    pub fn new() -> Lecture {
        Lecture {
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
            tree: widget(
                &[("budget", tree::BUDGET), ("highlight", tree::HIGHLIGHT)],
                tree::TreeParams::default(),
            ),
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
            seed: crate::views::SEED,
            menus: menus::lecture(),
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

impl Default for Lecture {
    fn default() -> Lecture {
        Lecture::new()
    }
}

/// The analytic widgets' declarations (the page's first module has no other `presets`).
#[wasm_bindgen]
pub fn lecture_presets() -> Result<JsValue, JsError> {
    output(&Lecture::new(), Lang::En)
}

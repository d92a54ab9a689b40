//! The synchronous exports: one per view, each one line (`call`: parameters in, view out), and
//! the small calls around the model jobs (the worker's note for the WebGPU fallback) and the
//! benchmark's suite (`tests/bench.mjs`).

use super::{call, lang_of, output};
use crate::i18n::Lang;
use crate::model::device::Fallback;
use crate::views;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
pub fn roofline(params: JsValue) -> Result<JsValue, JsError> {
    call(params, views::roofline::roofline_view)
}

#[wasm_bindgen]
pub fn theory(params: JsValue) -> Result<JsValue, JsError> {
    call(params, views::theory::theory_view)
}

#[wasm_bindgen]
pub fn exactness(params: JsValue) -> Result<JsValue, JsError> {
    call(params, views::exactness::exactness_view)
}

#[wasm_bindgen]
pub fn monte_carlo(params: JsValue) -> Result<JsValue, JsError> {
    call(params, views::exactness::monte_carlo_view)
}

/// Typical acceptance's trade on the toy (cheap: a slider move).
#[wasm_bindgen]
pub fn typical(params: JsValue) -> Result<JsValue, JsError> {
    call(params, views::exactness::typical::typical_view)
}

/// The gallery of real bugs through every test (seconds: the page runs it in a worker).
#[wasm_bindgen]
pub fn gallery(params: JsValue) -> Result<JsValue, JsError> {
    call(params, views::exactness::gallery::gallery_view)
}

#[wasm_bindgen]
pub fn multi_draft(params: JsValue) -> Result<JsValue, JsError> {
    call(params, views::multidraft::multi_draft_view)
}

#[wasm_bindgen]
pub fn exercise(params: JsValue) -> Result<JsValue, JsError> {
    call(params, views::exercises::exercise_view)
}

#[wasm_bindgen]
pub fn token_tree(params: JsValue) -> Result<JsValue, JsError> {
    call(params, views::tree::tree_view)
}

#[wasm_bindgen]
pub fn choose(params: JsValue) -> Result<JsValue, JsError> {
    call(params, views::choose::choose_view)
}

/// The note for a WebGPU job the worker sends to the CPU because the browser's WebGPU cannot run
/// it (`{reason: "no-webgpu" | "no-adapter" | "no-timestamps", lang}`): every such note is
/// written in the core ([`Fallback::note`]).
#[wasm_bindgen]
pub fn webgpu_fallback_note(params: JsValue) -> Result<String, JsError> {
    #[derive(serde::Deserialize)]
    struct P {
        reason: Fallback,
    }
    let lang = lang_of(&params);
    let p: P = super::params(params, lang)?;
    Ok(p.reason.note(lang))
}

/// The benchmark's experiments 1–5: `[{name, params}]` for `likesworld_decode`.
#[wasm_bindgen]
pub fn decoding_bench_suite() -> Result<JsValue, JsError> {
    let suite: Vec<serde_json::Value> = crate::lab::params::bench_suite()
        .into_iter()
        .map(|(name, params)| serde_json::json!({ "name": name, "params": params }))
        .collect();
    output(&suite, Lang::En)
}

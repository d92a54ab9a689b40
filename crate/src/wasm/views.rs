//! The small synchronous calls around the model jobs: the worker's note for the WebGPU fallback
//! and the benchmark's suite (`tests/bench.mjs`). The analytic views' exports are
//! `specdec_math::wasm::views`, which every module of this crate links.

use super::{lang_of, output};
use crate::i18n::Lang;
use crate::model::device::Fallback;
use wasm_bindgen::prelude::*;

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

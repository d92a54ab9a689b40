//! The analytic widgets' exports: one per view, each one line (`call`: parameters in, view
//! out). Monte Carlo and the gallery take seconds: the page runs them in a worker.

use super::call;
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

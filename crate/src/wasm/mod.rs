//! The models' wasm binding: the only module of this crate that knows JavaScript exists, on
//! `specdec_math::wasm` (the analytic widgets' exports, which every module here links, and
//! start-up, the panic hook, reading parameters and writing views and errors in the page's
//! language). Split by job: [`views`] the small synchronous calls, [`jobs`] the asynchronous
//! model jobs (each a few lines, through [`jobs::Job`]), [`held`] the models a worker keeps
//! between jobs (and the draft trained in the page), [`presets`] what the page's controls
//! offer, [`weights`] the weights the page hands over, [`threads`] the pool of threads that splits
//! a large matmul and what this build runs on. The training module (feature `train`,
//! loaded only by the training widget) has [`weights`] and [`train`] alone: a draft distilled
//! step by step. This file holds the clock they share.
//!
//! Each export takes one plain object of parameters (missing fields take their defaults) and
//! returns a plain object; a rejected input becomes a thrown `Error` whose message names the bad
//! value. The binding keeps no state between calls but the loaded models.

use crate::i18n::Lang;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[cfg(not(feature = "train"))]
pub mod held;
#[cfg(not(feature = "train"))]
pub mod jobs;
#[cfg(not(feature = "train"))]
pub mod presets;
#[cfg(not(feature = "train"))]
pub mod threads;
#[cfg(feature = "train")]
pub mod train;
#[cfg(not(feature = "train"))]
pub mod views;
pub mod weights;

#[cfg(not(feature = "train"))]
pub use held::provide_trained_draft;
#[cfg(not(feature = "train"))]
pub use jobs::*;
#[cfg(not(feature = "train"))]
pub use presets::*;
#[cfg(not(feature = "train"))]
pub use threads::*;
#[cfg(feature = "train")]
pub use train::*;
#[cfg(not(feature = "train"))]
pub use views::*;
pub use weights::*;

pub(crate) use specdec_math::wasm::{into_error, lang_of, output, params};

pub(crate) fn performance(lang: Lang) -> Result<web_sys::Performance, JsError> {
    js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("performance"))
        .ok()
        .and_then(|v| v.dyn_into().ok())
        .ok_or_else(|| into_error("no performance.now() clock here", lang))
}

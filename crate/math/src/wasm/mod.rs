//! The lecture's wasm module (`pkg/math/`, feature `wasm`): the analytic widgets' exports, a
//! view each ([`views`]), and what the page's controls for them offer ([`presets`]). The page
//! loads it first and alone, so a student reads and moves the closed forms before any model is
//! downloaded. `specdec`'s modules (the CPU, GPU and training modules) link this crate, so they
//! carry these exports too, and build their own binding on what this file holds: start-up, the
//! panic hook, reading parameters (naming the one refused) and writing views and errors in the
//! page's language.
//!
//! Each export takes one plain object of parameters (missing fields take their defaults),
//! converts it with serde-wasm-bindgen, calls one `views::*` function, and returns a plain
//! object; a rejected input becomes a thrown `Error` whose message names the bad value. Every
//! call carries the page's language in its own parameters (`lang`, which `engine.js` adds). A
//! Rust panic aborts the instance: the hook installed at start-up records its message first, so
//! the page can show it (`last_panic`) before it starts a fresh instance.

use crate::i18n::Lang;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::Mutex;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

pub mod presets;
pub mod views;

pub use presets::*;
pub use views::*;

static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

// The one start of every module that links this crate (wasm-bindgen allows one). In `specdec`'s
// GPU module, burn's GPU stack (cubecl) registers its IR and compiler pieces with `inventory`, whose
// constructors the wasm linker gathers in `__wasm_call_ctors`. Unless an export calls that
// function itself, the linker takes the module for a command and calls every constructor again
// at the top of *every* export, that is at each of the many calls from JavaScript into a WebGPU
// forward (future wake-ups, callbacks): measured in Chromium, ⅞ of a WebGPU model call went
// there (`tests/gpu-profile.mjs --cpu-profile`). Calling it once, here, at start-up ends that.
// Whatever embeds the module must then call `start` first: wasm-bindgen's generated loader does
// (its default export runs it once the module is instantiated).
static STARTED: std::sync::Once = std::sync::Once::new();

unsafe extern "C" {
    fn __wasm_call_ctors();
}

#[wasm_bindgen(start)]
pub fn start() {
    STARTED.call_once(|| {
        // SAFETY: called once per instance (the `Once`), before any other export when the
        // embedder calls `start` first as wasm-bindgen's loader does; the constructors only
        // register static data.
        unsafe { __wasm_call_ctors() };
        std::panic::set_hook(Box::new(|info| {
            let msg = format!("internal error (a bug): {info}");
            web_sys::console::error_1(&JsValue::from_str(&msg));
            if let Ok(mut slot) = LAST_PANIC.lock() {
                *slot = Some(msg);
            }
        }));
    });
}

/// The message of the panic that aborted this instance, if any.
#[wasm_bindgen]
pub fn last_panic() -> Option<String> {
    LAST_PANIC.lock().ok().and_then(|s| s.clone())
}

/// What every call says besides its own parameters: the page's language, for the errors and notes
/// it writes (the views that write prose read the same field of their parameters; progress goes
/// out as numbers, [`Step`], which the page words).
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
#[serde(default)]
struct Call {
    lang: Lang,
}

/// The language a call's parameters ask for (English if they say nothing readable).
pub fn lang_of(params: &JsValue) -> Lang {
    if params.is_object() {
        serde_wasm_bindgen::from_value::<Call>(params.clone())
            .map(|c| c.lang)
            .unwrap_or_default()
    } else {
        Lang::En
    }
}

/// A thrown `Error`: the core's errors in `lang`, anything else as it reads.
pub fn into_error<E: std::fmt::Display + 'static>(e: E, lang: Lang) -> JsError {
    let text = match (&e as &dyn std::any::Any).downcast_ref::<crate::error::Error>() {
        Some(core) => core.message(lang),
        None => e.to_string(),
    };
    JsError::new(&text)
}

/// Parameters in, view out: the whole of every synchronous export.
pub fn call<P: DeserializeOwned, V: Serialize, E: std::fmt::Display + 'static>(
    params: JsValue,
    view: impl FnOnce(&P) -> Result<V, E>,
) -> Result<JsValue, JsError> {
    let lang = lang_of(&params);
    let params: P = self::params(params, lang)?;
    output(&view(&params).map_err(|e| into_error(e, lang))?, lang)
}

/// Parses an export's parameters (missing fields take their defaults).
pub fn params<P: DeserializeOwned>(params: JsValue, lang: Lang) -> Result<P, JsError> {
    if params.is_undefined() || params.is_null() {
        serde_wasm_bindgen::from_value(js_sys::Object::new().into())
    } else {
        serde_wasm_bindgen::from_value(params.clone())
    }
    .map_err(|e| {
        let text = e.to_string();
        let what = text.strip_prefix("Error: ").unwrap_or(&text);
        // serde names the type it wanted, not the parameter: the first field that fails alone
        // (the others left to their defaults) is the one named.
        let why = match culprit::<P>(&params) {
            Some(key) => lang.pick(
                format!("bad parameters: {key}: {what}"),
                format!("参数无法读取：{key}：{what}"),
            ),
            None => lang.pick(
                format!("bad parameters: {what}"),
                format!("参数无法读取：{what}"),
            ),
        };
        into_error(why, lang)
    })
}

/// The first field of the object `params` that `P` refuses on its own (a parameter struct takes
/// its defaults for what is missing), or none.
fn culprit<P: DeserializeOwned>(params: &JsValue) -> Option<String> {
    let obj = params.dyn_ref::<js_sys::Object>()?;
    // A `P` that needs some field (a tagged experiment) refuses every single field: no name then.
    serde_wasm_bindgen::from_value::<P>(js_sys::Object::new().into()).ok()?;
    js_sys::Object::keys(obj).iter().find_map(|key| {
        let single = js_sys::Object::new();
        let value = js_sys::Reflect::get(obj, &key).ok()?;
        js_sys::Reflect::set(&single, &key, &value).ok()?;
        serde_wasm_bindgen::from_value::<P>(single.into())
            .is_err()
            .then(|| key.as_string())
            .flatten()
    })
}

pub fn output(out: &impl Serialize, lang: Lang) -> Result<JsValue, JsError> {
    out.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| into_error(e, lang))
}

/// Panics on purpose, so the page's recovery from a Rust panic can be tested.
#[wasm_bindgen]
pub fn debug_panic() {
    panic!("debug_panic was called");
}

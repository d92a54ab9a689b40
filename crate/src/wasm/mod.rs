//! The wasm binding: the only module that knows JavaScript exists.
//!
//! Each export takes one plain object of parameters (missing fields take their defaults),
//! converts it with serde-wasm-bindgen, calls one `views::*` function, and returns a plain
//! object; a rejected input becomes a thrown `Error` whose message names the bad value. A Rust
//! panic aborts the instance: the hook installed at start-up records its message first, so the
//! page can show it (`last_panic`) before it starts a fresh instance.

use crate::views;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::Mutex;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        let msg = format!("internal error (a bug): {info}");
        web_sys::console::error_1(&JsValue::from_str(&msg));
        if let Ok(mut slot) = LAST_PANIC.lock() {
            *slot = Some(msg);
        }
    }));
}

/// The message of the panic that aborted this instance, if any.
#[wasm_bindgen]
pub fn last_panic() -> Option<String> {
    LAST_PANIC.lock().ok().and_then(|s| s.clone())
}

fn into_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// Parameters in, view out: the whole of every export.
fn call<P: DeserializeOwned, V: Serialize, E: std::fmt::Display>(
    params: JsValue,
    view: impl FnOnce(&P) -> Result<V, E>,
) -> Result<JsValue, JsError> {
    let params: P = if params.is_undefined() || params.is_null() {
        serde_wasm_bindgen::from_value(js_sys::Object::new().into())
    } else {
        serde_wasm_bindgen::from_value(params)
    }
    .map_err(|e| into_error(format!("bad parameters: {e}")))?;
    let out = view(&params).map_err(into_error)?;
    out.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(into_error)
}

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

#[wasm_bindgen]
pub fn multi_draft(params: JsValue) -> Result<JsValue, JsError> {
    call(params, views::multidraft::multi_draft_view)
}

#[wasm_bindgen]
pub fn token_tree(params: JsValue) -> Result<JsValue, JsError> {
    call(params, views::tree::tree_view)
}

thread_local! {
    /// Models stay loaded per backend: decoding the weights is the slow part of a first call.
    static MODELS: std::cell::RefCell<Vec<std::rc::Rc<crate::model::Models>>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn models(backend: &str) -> Result<std::rc::Rc<crate::model::Models>, crate::Error> {
    let backend = crate::model::device::Backend::parse(backend)?;
    if let Some(m) = MODELS.with(|m| m.borrow().iter().find(|m| m.backend == backend).cloned()) {
        return Ok(m);
    }
    let loaded = std::rc::Rc::new(crate::model::Models::load(backend)?);
    MODELS.with(|m| m.borrow_mut().push(loaded.clone()));
    Ok(loaded)
}

/// LikesWorld: every model's next-token distributions over a world (run it in a worker).
#[wasm_bindgen]
pub fn likesworld(params: JsValue) -> Result<JsValue, JsError> {
    call(params, |p: &views::likesworld::LikesWorldParams| {
        views::likesworld::likesworld_view(p, &*models(&p.backend)?)
    })
}

/// Per-call latency of the three models on one backend, measured here with `performance.now()`.
#[wasm_bindgen]
pub fn likesworld_latency(params: JsValue) -> Result<JsValue, JsError> {
    #[derive(serde::Deserialize)]
    #[serde(default)]
    struct P {
        backend: String,
        runs: usize,
    }
    impl Default for P {
        fn default() -> Self {
            P {
                backend: "flex".into(),
                runs: 200,
            }
        }
    }
    #[derive(Serialize)]
    struct Out {
        backend: &'static str,
        target: crate::model::bench::ModelLatency,
        draft_a: crate::model::bench::ModelLatency,
        draft_b: crate::model::bench::ModelLatency,
        /// c = draft / target time of one token on a warm cache.
        c: [f64; 2],
    }
    call(params, |p: &P| -> Result<Out, crate::Error> {
        crate::error::check_range("runs", p.runs as f64, 1.0, 10_000.0, "1 ≤ runs ≤ 10000")?;
        let m = models(&p.backend)?;
        let perf: web_sys::Performance =
            js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("performance"))
                .ok()
                .and_then(|v| v.dyn_into().ok())
                .ok_or_else(|| crate::Error::Unknown {
                    what: "clock",
                    name: "performance".into(),
                    known: "performance.now()".into(),
                })?;
        let clock = move || perf.now() * 1e3;
        let time = |d: &crate::model::Decoder| {
            crate::model::bench::latency(d, &m.device, p.runs, p.runs / 3 + 20, &clock)
        };
        let (target, draft_a, draft_b) = (time(&m.target), time(&m.draft_a), time(&m.draft_b));
        Ok(Out {
            backend: m.backend.name(),
            c: [
                draft_a.decode1.median_us / target.decode1.median_us,
                draft_b.decode1.median_us / target.decode1.median_us,
            ],
            target,
            draft_a,
            draft_b,
        })
    })
}

/// The presets the page offers in its menus.
#[wasm_bindgen]
pub fn presets() -> Result<JsValue, JsError> {
    #[derive(Serialize)]
    struct Presets {
        gpus: &'static [crate::roofline::Gpu],
        models: &'static [crate::roofline::Model],
        variants: Vec<&'static str>,
        version: &'static str,
    }
    let p = Presets {
        gpus: crate::roofline::GPUS,
        models: crate::roofline::MODELS,
        variants: crate::sampling::speculative::Variant::ALL
            .iter()
            .map(|v| v.name())
            .collect(),
        version: env!("CARGO_PKG_VERSION"),
    };
    p.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(into_error)
}

/// Panics on purpose, so the page's recovery from a Rust panic can be tested.
#[wasm_bindgen]
pub fn debug_panic() {
    panic!("debug_panic was called");
}

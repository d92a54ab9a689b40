//! The wasm binding: the only module that knows JavaScript exists.
//!
//! Each export takes one plain object of parameters (missing fields take their defaults),
//! converts it with serde-wasm-bindgen, calls one `views::*` function, and returns a plain
//! object; a rejected input becomes a thrown `Error` whose message names the bad value. Every
//! call carries the page's language in its own parameters (`lang`, which `engine.js` adds): the
//! binding keeps no state between calls but the loaded models. A Rust panic aborts the instance:
//! the hook installed at start-up records its message first, so the page can show it
//! (`last_panic`) before it starts a fresh instance.

use crate::i18n::Lang;
use crate::model::device::Fallback;
use crate::views;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::Mutex;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

// burn's GPU stack (cubecl) registers its IR and compiler pieces with `inventory`, whose
// constructors the wasm linker gathers in `__wasm_call_ctors`. Unless an export calls that
// function itself, the linker takes the module for a command and calls every constructor again
// at the top of *every* export, that is at each of the many calls from JavaScript into a WebGPU
// forward (future wake-ups, callbacks): measured in Chromium, ⅞ of a WebGPU model call went
// there (`tests/gpu-profile.mjs --cpu-profile`). Calling it once, here, at start-up ends that.
// Whatever embeds the module must then call `start` first: wasm-bindgen's generated loader does,
// a wasm-bindgen-test binary does not (the wasm tests call it themselves).
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
fn lang_of(params: &JsValue) -> Lang {
    if params.is_object() {
        serde_wasm_bindgen::from_value::<Call>(params.clone())
            .map(|c| c.lang)
            .unwrap_or_default()
    } else {
        Lang::En
    }
}

/// A thrown `Error`: the core's errors in `lang`, anything else as it reads.
fn into_error<E: std::fmt::Display + 'static>(e: E, lang: Lang) -> JsError {
    let text = match (&e as &dyn std::any::Any).downcast_ref::<crate::error::Error>() {
        Some(core) => core.message(lang),
        None => e.to_string(),
    };
    JsError::new(&text)
}

/// Parameters in, view out: the whole of every synchronous export.
fn call<P: DeserializeOwned, V: Serialize, E: std::fmt::Display + 'static>(
    params: JsValue,
    view: impl FnOnce(&P) -> Result<V, E>,
) -> Result<JsValue, JsError> {
    let lang = lang_of(&params);
    let params: P = self::params(params, lang)?;
    output(&view(&params).map_err(|e| into_error(e, lang))?, lang)
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
pub fn exercise(params: JsValue) -> Result<JsValue, JsError> {
    call(params, views::exercises::exercise_view)
}

#[wasm_bindgen]
pub fn token_tree(params: JsValue) -> Result<JsValue, JsError> {
    call(params, views::tree::tree_view)
}

/// Hands this module the weights of one model (`target`, `draft-a` or `draft-b`), downloaded by
/// the page from `pkg/weights/<model>.bpk`, or of a draft on the target's features (`medusa`,
/// `eagle`, `eagle-ttt`, from `pkg/weights/hidden/`, downloaded only for those experiments): the
/// modules do not embed them.
#[wasm_bindgen]
pub fn provide_weights(model: &str, bytes: &[u8]) -> Result<(), JsError> {
    let fail = |e| into_error(e, Lang::En);
    use crate::model::weights::{provide_hidden, HiddenKind};
    if let Some(kind) = HiddenKind::ALL.into_iter().find(|k| k.name() == model) {
        return provide_hidden(kind, bytes).map_err(fail);
    }
    let kind = crate::model::ModelKind::parse(model).map_err(fail)?;
    crate::model::weights::provide(kind, bytes).map_err(fail)
}

thread_local! {
    /// Models stay loaded per backend: decoding the weights is the slow part of a first call.
    static MODELS: std::cell::RefCell<Vec<std::rc::Rc<crate::model::Models>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Whether this module can run WebGPU jobs here: `undefined` when it can, else the note for a
/// run on the CPU instead (the worker asks the GPU module this before its first job, and sends
/// the jobs to the CPU module when WebGPU fails, since the GPU module has no CPU backend).
#[wasm_bindgen]
pub async fn webgpu_unavailable(params: JsValue) -> Result<Option<String>, JsError> {
    // Only the page's language is read from the parameters.
    let lang = lang_of(&params);
    Ok(crate::model::device::Backend::Wgpu
        .device()
        .await
        .err()
        .map(|e| Fallback::NoDevice(e).note(lang)))
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
    let p: P = self::params(params, lang)?;
    Ok(p.reason.note(lang))
}

/// The models on `backend`, loaded once. A build with flex gives a WebGPU job without a usable
/// adapter the flex models and the reason, for the page to show; the GPU module, which has no
/// CPU backend, gives the error (the worker asks [`webgpu_unavailable`] first).
async fn models(
    backend: &str,
    lang: Lang,
) -> Result<(std::rc::Rc<crate::model::Models>, Option<String>), crate::Error> {
    use crate::model::device::Backend;
    let mut backend = Backend::parse(backend)?;
    let mut note = None;
    if backend == Backend::Wgpu {
        if let Err(e) = backend.device().await {
            if !cfg!(feature = "flex") {
                return Err(e);
            }
            note = Some(Fallback::NoDevice(e).note(lang));
            backend = Backend::Flex;
        }
    }
    if let Some(m) = MODELS.with(|m| m.borrow().iter().find(|m| m.backend == backend).cloned()) {
        return Ok((m, note));
    }
    let loaded = std::rc::Rc::new(crate::model::Models::load(backend).await?);
    MODELS.with(|m| m.borrow_mut().push(loaded.clone()));
    Ok((loaded, note))
}

/// Parses an export's parameters (missing fields take their defaults).
fn params<P: DeserializeOwned>(params: JsValue, lang: Lang) -> Result<P, JsError> {
    if params.is_undefined() || params.is_null() {
        serde_wasm_bindgen::from_value(js_sys::Object::new().into())
    } else {
        serde_wasm_bindgen::from_value(params)
    }
    .map_err(|e| {
        let why = lang.pick("bad parameters: ", "参数无法读取：").to_string();
        into_error(why + &e.to_string(), lang)
    })
}

fn output(out: &impl Serialize, lang: Lang) -> Result<JsValue, JsError> {
    out.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| into_error(e, lang))
}

/// How a long job is going, as data: the page words it in its own language (`progressText` in
/// `www/engine.js`) and moves its progress bar by the numbers, so that nothing translated is
/// parsed back. Serialized as `{phase: "loading", backend}` and so on.
#[derive(Serialize)]
#[serde(tag = "phase", rename_all = "kebab-case")]
enum Step<'a> {
    /// The models are being loaded on `backend`.
    Loading { backend: &'a str },
    /// The models run on `backend` (one pass, no count).
    Running { backend: &'a str },
    /// `model` is being timed on `backend`.
    Timing { model: &'a str, backend: &'a str },
    /// The trained target is being widened `width`×.
    Widening { width: usize },
    /// `done` of `total` units of work, on `backend` (none for work without models).
    Count {
        done: usize,
        total: usize,
        backend: Option<&'a str>,
    },
}

/// Tells the caller how a long job is going, when it passed a callback.
fn report(progress: &Option<js_sys::Function>, step: &Step) {
    if let Some(f) = progress {
        let Ok(value) = step.serialize(&serde_wasm_bindgen::Serializer::json_compatible()) else {
            return;
        };
        // A throwing callback must not stop the job it reports on.
        let _ = f.call1(&JsValue::NULL, &value);
    }
}

/// A progress callback for the core that reports done of total (and on which backend, when
/// given) at most once per 1% (posting a message is not free) and at the end.
fn progress_every_percent<'a>(
    progress: &'a Option<js_sys::Function>,
    backend: Option<&'a str>,
) -> impl FnMut(usize, usize) + 'a {
    let mut last = -1.0f64;
    move |done, total| {
        let f = done as f64 / total.max(1) as f64;
        if f - last >= 0.01 || done == total {
            last = f;
            report(
                progress,
                &Step::Count {
                    done,
                    total,
                    backend,
                },
            );
        }
    }
}

/// LikesWorld: every model's next-token distributions over a world (run it in a worker).
#[wasm_bindgen]
pub async fn likesworld(
    params: JsValue,
    progress: Option<js_sys::Function>,
) -> Result<JsValue, JsError> {
    let lang = lang_of(&params);
    let fail = |e| into_error(e, lang);
    let p: views::likesworld::LikesWorldParams = self::params(params, lang)?;
    report(
        &progress,
        &Step::Loading {
            backend: &p.backend,
        },
    );
    let (m, note) = models(&p.backend, lang).await.map_err(fail)?;
    report(
        &progress,
        &Step::Running {
            backend: m.backend.name(),
        },
    );
    let mut view = views::likesworld::likesworld_view(&p, &m)
        .await
        .map_err(fail)?;
    view.note = note;
    output(&view, lang)
}

/// Per-call latency of the three models on one backend, measured here with `performance.now()`.
#[wasm_bindgen]
pub async fn likesworld_latency(
    params: JsValue,
    progress: Option<js_sys::Function>,
) -> Result<JsValue, JsError> {
    #[derive(serde::Deserialize)]
    #[serde(default)]
    struct P {
        backend: String,
        runs: usize,
        /// Untimed calls first (default: runs / 3 + 20, enough for the browser to tier up).
        warmup: Option<usize>,
    }
    impl Default for P {
        fn default() -> Self {
            P {
                backend: "flex".into(),
                runs: 200,
                warmup: None,
            }
        }
    }
    #[derive(Serialize)]
    struct Out {
        backend: &'static str,
        note: Option<String>,
        target: crate::model::bench::ModelLatency,
        draft_a: crate::model::bench::ModelLatency,
        draft_b: crate::model::bench::ModelLatency,
        /// c = draft / target time of one token on a warm cache.
        c: [f64; 2],
    }
    let lang = lang_of(&params);
    let fail = |e| into_error(e, lang);
    let p: P = self::params(params, lang)?;
    crate::error::check_range("runs", p.runs as f64, 1.0, 10_000.0, "1 ≤ runs ≤ 10000")
        .map_err(fail)?;
    if let Some(w) = p.warmup {
        crate::error::check_range("warmup", w as f64, 0.0, 10_000.0, "0 ≤ warmup ≤ 10000")
            .map_err(fail)?;
    }
    let (m, note) = models(&p.backend, lang).await.map_err(fail)?;
    let perf = performance(lang)?;
    let clock = move || perf.now() * 1e3;
    // A page that counts WebGPU dispatches (the benchmark wraps `dispatchWorkgroups`) exposes the
    // running count as `specdecDispatches()`.
    let counter = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("specdecDispatches"))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    let count = counter.map(|f| {
        move || {
            f.call0(&JsValue::NULL)
                .ok()
                .and_then(|v| v.as_f64())
                .unwrap_or(f64::NAN)
        }
    });
    let count_ref = count.as_ref().map(|c| c as &dyn Fn() -> f64);
    let mut timed = Vec::with_capacity(3);
    for kind in crate::model::ModelKind::ALL {
        report(
            &progress,
            &Step::Timing {
                model: kind.name(),
                backend: m.backend.name(),
            },
        );
        let warmup = p.warmup.unwrap_or(p.runs / 3 + 20);
        timed.push(
            crate::model::bench::latency(m.get(kind), &m.device, p.runs, warmup, &clock, count_ref)
                .await
                .map_err(fail)?,
        );
    }
    let (target, draft_a, draft_b) = (timed[0], timed[1], timed[2]);
    output(
        &Out {
            backend: m.backend.name(),
            note,
            c: [
                draft_a.decode1.median_us / target.decode1.median_us,
                draft_b.decode1.median_us / target.decode1.median_us,
            ],
            target,
            draft_a,
            draft_b,
        },
        lang,
    )
}

/// Speculative decoding on LikesWorld: one experiment (`crate::lab::Experiment`, tagged by
/// `experiment`) on the models of `backend`, drawn by `views::decoding` (run it in a worker).
#[wasm_bindgen]
pub async fn likesworld_decode(
    params: JsValue,
    progress: Option<js_sys::Function>,
) -> Result<JsValue, JsError> {
    let lang = lang_of(&params);
    let fail = |e| into_error(e, lang);
    let on: OnBackend = self::params(params.clone(), lang)?;
    let experiment: crate::lab::Experiment = self::params(with_experiment(params), lang)?;
    experiment.check().map_err(fail)?;
    report(
        &progress,
        &Step::Loading {
            backend: &on.backend,
        },
    );
    crate::model::widen::WIDTH
        .check(on.target_width as f64)
        .map_err(fail)?;
    let (m, note) = models(&on.backend, lang).await.map_err(fail)?;
    let m = widened(m, on.target_width).await.map_err(fail)?;
    let perf = performance(lang)?;
    let clock = move || perf.now() * 1e3;
    let mut tell = progress_every_percent(&progress, Some(m.backend.name()));
    let mut view = views::decoding::decoding_view(&experiment, lang, &m, &clock, &mut tell)
        .await
        .map_err(fail)?;
    view.note = note;
    output(&view, lang)
}

/// The measured roofline (`views::measured`): T(k) of the target widened `width`× on `backend`,
/// beside this device's bandwidth and peak (run it in a worker).
#[wasm_bindgen]
pub async fn roofline_measure(
    params: JsValue,
    progress: Option<js_sys::Function>,
) -> Result<JsValue, JsError> {
    let lang = lang_of(&params);
    let fail = |e| into_error(e, lang);
    let p: views::measured::MeasuredParams = self::params(params, lang)?;
    p.check().map_err(fail)?;
    report(
        &progress,
        &Step::Loading {
            backend: &p.backend,
        },
    );
    let (m, note) = models(&p.backend, lang).await.map_err(fail)?;
    if p.width > 1 {
        report(&progress, &Step::Widening { width: p.width });
    }
    let m = widened(m, p.width).await.map_err(fail)?;
    let perf = performance(lang)?;
    let clock = move || perf.now() * 1e3;
    let mut tell = progress_every_percent(&progress, Some(m.backend.name()));
    let mut view = views::measured::measured_view(&p, &m, &clock, &mut tell)
        .await
        .map_err(fail)?;
    view.note = note;
    output(&view, lang)
}

thread_local! {
    /// The last widened target's models: widening r = 16 reads and writes 76 MB, so a run of
    /// jobs at one width widens once; only one widened target is held at a time.
    static WIDENED: std::cell::RefCell<Option<std::rc::Rc<crate::model::Models>>> = const { std::cell::RefCell::new(None) };
}

/// `models` with the target widened `width`× (width 1: `models` itself).
async fn widened(
    models: std::rc::Rc<crate::model::Models>,
    width: usize,
) -> Result<std::rc::Rc<crate::model::Models>, crate::Error> {
    if width == 1 {
        return Ok(models);
    }
    let held = WIDENED.with(|w| w.borrow().clone());
    if let Some(m) = held.filter(|m| m.backend == models.backend && m.target_width() == width) {
        return Ok(m);
    }
    // The old one goes first: two wide targets at once may not fit the tab's memory.
    WIDENED.with(|w| w.borrow_mut().take());
    let wide = std::rc::Rc::new(models.with_target_width(width).await?);
    WIDENED.with(|w| *w.borrow_mut() = Some(wide.clone()));
    Ok(wide)
}

/// The parameters with `experiment` set to "greedy" where they name none: like every other
/// field, the experiment has a default (the widget's).
fn with_experiment(params: JsValue) -> JsValue {
    let key = JsValue::from_str("experiment");
    let named = params.is_object() && js_sys::Reflect::has(&params, &key).unwrap_or(false);
    if named {
        return params;
    }
    let out = js_sys::Object::new();
    if params.is_object() {
        js_sys::Object::assign(&out, params.unchecked_ref());
    }
    let _ = js_sys::Reflect::set(&out, &key, &JsValue::from_str("greedy"));
    out.into()
}

/// The backend a model job asks for, and how many times the trained target is widened.
#[derive(serde::Deserialize)]
#[serde(default)]
struct OnBackend {
    backend: String,
    target_width: usize,
}

impl Default for OnBackend {
    fn default() -> Self {
        OnBackend {
            backend: "flex".into(),
            target_width: 1,
        }
    }
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

/// Drafting without a model: one experiment of `views::modelfree` (run it in a worker). The
/// LikesWorld models are loaded only when the experiment decodes LikesWorld.
#[wasm_bindgen]
pub async fn modelfree(
    params: JsValue,
    progress: Option<js_sys::Function>,
) -> Result<JsValue, JsError> {
    use views::modelfree::{modelfree_view, needs_models, settings, ModelfreeParams};
    let lang = lang_of(&params);
    let fail = |e| into_error(e, lang);
    let p: ModelfreeParams = self::params(params, lang)?;
    settings(&p).map_err(fail)?;
    let (m, note) = if needs_models(&p) {
        report(
            &progress,
            &Step::Loading {
                backend: &p.backend,
            },
        );
        let (m, note) = models(&p.backend, lang).await.map_err(fail)?;
        (Some(m), note)
    } else {
        (None, None)
    };
    let perf = performance(lang)?;
    let clock = move || perf.now() * 1e3;
    let mut tell = progress_every_percent(&progress, None);
    let mut view = modelfree_view(&p, m.as_deref(), &clock, &mut tell)
        .await
        .map_err(fail)?;
    view.note = note;
    output(&view, lang)
}

fn performance(lang: Lang) -> Result<web_sys::Performance, JsError> {
    js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("performance"))
        .ok()
        .and_then(|v| v.dyn_into().ok())
        .ok_or_else(|| into_error("no performance.now() clock here", lang))
}

/// What the page's controls offer, declared once in the core: the GPU and model presets, the
/// verification rules, the token kinds (with their names in both languages), the ranges of
/// the decoding widget's values, and the target's widths with their sizes. The page reads these
/// instead of restating them.
#[wasm_bindgen]
pub fn presets() -> Result<JsValue, JsError> {
    use crate::lab::params::{GAMMA, NODE_BUDGET, PROMPTS, REPEATS, TREE_DEPTH};
    use crate::likesworld::TokenKind;
    #[derive(Serialize)]
    struct Kind {
        name: TokenKind,
        en: &'static str,
        zh: &'static str,
    }
    #[derive(Serialize)]
    struct Ranges {
        gamma: crate::error::Range,
        prompts: crate::error::Range,
        repeats: crate::error::Range,
        tree_depth: crate::error::Range,
        tree_nodes: usize,
        batch: crate::error::Range,
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
        target_width: crate::error::Range,
        widths: Vec<Width>,
        version: &'static str,
    }
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
            gamma: GAMMA,
            prompts: PROMPTS,
            repeats: REPEATS,
            tree_depth: TREE_DEPTH,
            tree_nodes: NODE_BUDGET,
            batch: crate::lab::params::BATCH,
        },
        target_width: crate::model::widen::WIDTH,
        widths: crate::model::widen::WIDTHS
            .iter()
            .map(|&r| Width {
                width: r,
                params: crate::model::widen::params(crate::likesworld::VOCAB, r),
                step_bytes: crate::model::widen::step_bytes(crate::likesworld::VOCAB, r),
            })
            .collect(),
        version: env!("CARGO_PKG_VERSION"),
    };
    output(&p, Lang::En)
}

/// Panics on purpose, so the page's recovery from a Rust panic can be tested.
#[wasm_bindgen]
pub fn debug_panic() {
    panic!("debug_panic was called");
}

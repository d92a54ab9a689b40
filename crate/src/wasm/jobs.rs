//! The asynchronous model jobs (run in a worker): LikesWorld's next-token view and latencies, the
//! decoding widget's experiments, the measured roofline, drafting without a model, a tree verified
//! per sequence and tree-parallel, the boost-tuned pools, how to speculate on this device. Each export is
//! a few lines over [`Job`], which does what they all do: read the page's language and the
//! parameters, take the models the worker holds (`super::held`: widened when asked, the drafts
//! on the CPU beside a WebGPU target when a decoding job asks, with the note for a WebGPU job that
//! ran on the CPU), hand the view the clock (`performance.now()`) and a progress callback, and
//! write the view or the error. Progress goes out as data ([`Step`]), which the page words. The
//! draft a student trained in the page takes both drafts' places in a decoding job that asks for
//! it (`trained_draft`).

use super::held::{self, models, widened, with_trained};
use super::{into_error, lang_of, output, params, performance};
use crate::i18n::Lang;
use crate::model::device::{Backend, Fallback};
use crate::model::{measure, Models};
use crate::views;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The exports whose reports are wall-clock times (the measured roofline, LikesWorld's per-call
/// latencies, a tree verified per sequence and tree-parallel, the boost-tuned pools' wall clock,
/// how to speculate on this device), beside the decoding experiments that are
/// ([`Experiment::timed`](crate::lab::params::Experiment::timed)): the page runs each alone
/// (`www/jobs.js`, told by `presets`).
pub const TIMED: [&str; 5] = [
    "roofline_measure",
    "likesworld_latency",
    "tree_vs_paths",
    "boost_pools",
    "likesworld_choose",
];

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
    /// The target's weights are being read back into host memory, to cross before every call.
    Offloading,
    /// `done` of `total` units of work, on `backend` (none for work without models).
    Count {
        done: usize,
        total: usize,
        backend: Option<&'a str>,
    },
}

/// One asynchronous job: its language, its progress callback and its clock.
struct Job {
    lang: Lang,
    progress: Option<js_sys::Function>,
    perf: web_sys::Performance,
}

impl Job {
    fn new(params: &JsValue, progress: Option<js_sys::Function>) -> Result<Job, JsError> {
        let lang = lang_of(params);
        Ok(Job {
            lang,
            progress,
            perf: performance(lang)?,
        })
    }

    /// The parameters (missing fields take their defaults).
    fn read<P: DeserializeOwned>(&self, value: JsValue) -> Result<P, JsError> {
        params(value, self.lang)
    }

    /// A core error, thrown in the job's language.
    fn fail(&self, e: crate::Error) -> JsError {
        into_error(e, self.lang)
    }

    /// The clock in microseconds.
    fn clock(&self) -> impl Fn() -> f64 + '_ {
        move || self.perf.now() * 1e3
    }

    /// Tells the caller how the job is going, when it passed a callback.
    fn report(&self, step: &Step) {
        if let Some(f) = &self.progress {
            let Ok(value) = step.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
            else {
                return;
            };
            // A throwing callback must not stop the job it reports on.
            let _ = f.call1(&JsValue::NULL, &value);
        }
    }

    /// A progress callback for the core that reports done of total (and on which backend, when
    /// given) at most once per 1% (posting a message is not free) and at the end.
    fn every_percent<'a>(&'a self, backend: Option<&'a str>) -> impl FnMut(usize, usize) + 'a {
        let mut last = -1.0f64;
        move |done, total| {
            let f = done as f64 / total.max(1) as f64;
            if f - last >= 0.01 || done == total {
                last = f;
                let backend = backend;
                self.report(&Step::Count {
                    done,
                    total,
                    backend,
                });
            }
        }
    }

    /// The models on `backend`, the target widened `width`×, loaded once, and the note for a
    /// WebGPU job that runs on the CPU instead.
    async fn models(
        &self,
        backend: &str,
        width: usize,
    ) -> Result<(Rc<Models>, Option<String>), JsError> {
        self.models_on(backend, None, width).await
    }

    /// [`Job::models`] with the draft models on `drafts` (the target's backend unless named).
    async fn models_on(
        &self,
        backend: &str,
        drafts: Option<&str>,
        width: usize,
    ) -> Result<(Rc<Models>, Option<String>), JsError> {
        self.report(&Step::Loading { backend });
        crate::model::widen::WIDTH
            .check(width as f64)
            .map_err(|e| self.fail(e))?;
        let (m, note) = models(backend, drafts, self.lang)
            .await
            .map_err(|e| self.fail(e))?;
        if width > 1 {
            self.report(&Step::Widening { width });
        }
        let m = widened(m, width).await.map_err(|e| self.fail(e))?;
        Ok((m, note))
    }

    /// `m` with the target's weights offloaded when `offload` asks (they cross to the GPU before
    /// every target call; refused on the CPU). A WebGPU job that fell back to flex (`note` says
    /// why) is refused with that reason first, so the student learns that WebGPU failed.
    async fn offloaded(
        &self,
        m: Rc<Models>,
        offload: bool,
        note: Option<&str>,
    ) -> Result<Rc<Models>, JsError> {
        if !offload {
            return Ok(m);
        }
        if let (Some(note), true) = (note, m.backend != Backend::Wgpu) {
            return Err(self.fail(crate::Error::Unavailable {
                what: "offloading",
                why: crate::error::Text::new(
                    format!("{note} Offloading needs the GPU: put the target’s weights back on the GPU to run this on the CPU."),
                    format!("{note}权重卸载需要 GPU：把目标模型的权重放回 GPU，就能在 CPU 上运行。"),
                ),
            }));
        }
        self.report(&Step::Offloading);
        let m = m.with_offload().await.map_err(|e| self.fail(e))?;
        Ok(Rc::new(m))
    }

    /// The view, or its error thrown in the job's language.
    fn output<V: Serialize>(&self, view: Result<V, crate::Error>) -> Result<JsValue, JsError> {
        output(&view.map_err(|e| self.fail(e))?, self.lang)
    }
}

/// A view that carries the note of a WebGPU job run on the CPU.
trait Noted {
    fn noted(self, note: Option<String>) -> Self;
}

macro_rules! noted {
    ($($ty:ty),*) => {$(
        impl Noted for $ty {
            fn noted(mut self, note: Option<String>) -> Self {
                self.note = note;
                self
            }
        }
    )*};
}

noted!(
    views::likesworld::LikesWorldView,
    views::decoding::DecodingView,
    views::measured::MeasuredView,
    views::modelfree::ModelfreeView,
    views::treepaths::TreePathsView
);

/// The backend a model job asks for, how many times the trained target is widened, and the room
/// the page has for the job's figure (CSS px).
#[derive(serde::Deserialize)]
#[serde(default)]
struct OnBackend {
    backend: String,
    target_width: usize,
    /// The target's weights cross to the GPU before every call (`model::offload`).
    offload: bool,
    /// The draft models' backend, when not the target's (`flex` beside a WebGPU target).
    drafts: Option<String>,
    figure_width: Option<u32>,
    /// The draft trained in the page ([`provide_trained_draft`]) takes both drafts' places.
    trained_draft: bool,
}

impl Default for OnBackend {
    fn default() -> Self {
        OnBackend {
            backend: "flex".into(),
            target_width: 1,
            offload: false,
            drafts: None,
            figure_width: None,
            trained_draft: false,
        }
    }
}

/// Whether this module can run WebGPU jobs here: `undefined` when it can, else the note for a
/// run on the CPU instead (the worker asks the GPU module this before its first job, and sends
/// the jobs to the CPU module when WebGPU fails: the GPU module's flex, there for drafts beside a
/// WebGPU target, has neither threads nor FMA).
#[wasm_bindgen]
pub async fn webgpu_unavailable(params: JsValue) -> Result<Option<String>, JsError> {
    // Only the page's language is read from the parameters.
    let lang = lang_of(&params);
    Ok(Backend::Wgpu
        .device()
        .await
        .err()
        .map(|e| Fallback::NoDevice(e).note(lang)))
}

/// LikesWorld: every model's next-token distributions over a world.
#[wasm_bindgen]
pub async fn likesworld(
    params: JsValue,
    progress: Option<js_sys::Function>,
) -> Result<JsValue, JsError> {
    let job = Job::new(&params, progress)?;
    let p: views::likesworld::LikesWorldParams = job.read(params)?;
    let (m, note) = job.models(&p.backend, 1).await?;
    job.report(&Step::Running {
        backend: m.backend.name(),
    });
    let view = views::likesworld::likesworld_view(&p, &m).await;
    job.output(view.map(|v| v.noted(note)))
}

/// Per-call latency of the three models on one backend, and c of each draft, measured here with
/// `performance.now()`.
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
        #[serde(flatten)]
        latencies: crate::model::bench::Latencies,
    }
    let job = Job::new(&params, progress)?;
    let p: P = job.read(params)?;
    use crate::model::bench::{RUNS, WARMUP};
    // Checked before the models load, so that a bad value is named at once.
    RUNS.check(p.runs as f64).map_err(|e| job.fail(e))?;
    if let Some(w) = p.warmup {
        WARMUP.check(w as f64).map_err(|e| job.fail(e))?;
    }
    let (m, note) = job.models(&p.backend, 1).await?;
    let backend = m.backend.name();
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
    let count = count.as_ref().map(|c| c as &dyn Fn() -> f64);
    let mut timing = |kind: crate::model::ModelKind| {
        let model = kind.name();
        job.report(&Step::Timing { model, backend });
    };
    let clock = job.clock();
    let runs = (p.runs, p.warmup);
    let l = crate::model::bench::latencies(&m, runs, &clock, count, &mut timing).await;
    job.output(l.map(|latencies| Out {
        backend,
        note,
        latencies,
    }))
}

/// Speculative decoding on LikesWorld: one experiment (`crate::lab::Experiment`, tagged by
/// `experiment`) on the models of `backend`, drawn by `views::decoding`.
#[wasm_bindgen]
pub async fn likesworld_decode(
    params: JsValue,
    progress: Option<js_sys::Function>,
) -> Result<JsValue, JsError> {
    let job = Job::new(&params, progress)?;
    let on: OnBackend = job.read(params.clone())?;
    let experiment: crate::lab::Experiment = job.read(with_experiment(params))?;
    experiment.check().map_err(|e| job.fail(e))?;
    let (m, note) = job
        .models_on(&on.backend, on.drafts.as_deref(), on.target_width)
        .await?;
    let m = job.offloaded(m, on.offload, note.as_deref()).await?;
    let (m, yours) = match on.trained_draft {
        true => {
            let (m, yours) = with_trained(m, job.lang).map_err(|e| job.fail(e))?;
            (m, Some(yours))
        }
        false => (m, None),
    };
    let mut tell = job.every_percent(Some(m.backend.name()));
    let (clock, lang) = (job.clock(), job.lang);
    let view =
        views::decoding::decoding_view(&experiment, lang, on.figure_width, &m, &clock, &mut tell)
            .await;
    // The trained draft ran in both drafts' places: the note says whose it is (the report's own
    // words name it so, `Models::whose`).
    let note = match (note, yours) {
        (Some(n), Some(y)) => Some(lang.pick(format!("{n} {y}"), format!("{n}{y}"))),
        (n, y) => n.or(y),
    };
    job.output(view.map(|v| v.noted(note)))
}

/// The measured roofline (`views::measured`): T(k) of the target widened `width`× on `backend`,
/// beside this device's bandwidth and peak.
#[wasm_bindgen]
pub async fn roofline_measure(
    params: JsValue,
    progress: Option<js_sys::Function>,
) -> Result<JsValue, JsError> {
    let job = Job::new(&params, progress)?;
    let p: views::measured::MeasuredParams = job.read(params)?;
    p.check().map_err(|e| job.fail(e))?;
    let (m, note) = job.models(&p.backend, p.width).await?;
    let m = job.offloaded(m, p.offload, note.as_deref()).await?;
    let mut tell = job.every_percent(Some(m.backend.name()));
    let clock = job.clock();
    // Reused on a GPU only, where calibrating takes seconds (an emulated one's, tens); a CPU's
    // takes a fraction of a second, and a measurement repeated on a quieter device gets fresh ones.
    let on = measure::calibrated_on(m.backend, measure::execution(&m.target, m.backend));
    let known = held::calibration(on).filter(|_| m.backend == Backend::Wgpu);
    let view = views::measured::measured_view(&p, &m, known, &clock, &mut tell).await;
    if let Ok(v) = &view {
        held::keep_calibration(v.roofline.calibration);
    }
    job.output(view.map(|v| v.noted(note)))
}

/// A token tree verified per sequence and tree-parallel (`views::treepaths`), timed at each batch
/// size on `backend`, the target widened `target_width`×.
#[wasm_bindgen]
pub async fn tree_vs_paths(
    params: JsValue,
    progress: Option<js_sys::Function>,
) -> Result<JsValue, JsError> {
    let job = Job::new(&params, progress)?;
    let p: views::treepaths::TreePathsParams = job.read(params)?;
    p.check().map_err(|e| job.fail(e))?;
    let (m, note) = job.models(&p.backend, p.target_width).await?;
    let mut tell = job.every_percent(Some(m.backend.name()));
    let clock = job.clock();
    let view = views::treepaths::treepaths_view(&p, &m, &clock, &mut tell).await;
    job.output(view.map(|v| v.noted(note)))
}

/// How to speculate on this device, measured (`views::choose_here`): T(k), c and the
/// acceptance vectors of the models on `backend` (beside a WebGPU target, the drafts on the CPU),
/// the target widened `target_width`×, the choice, then the chosen chain and tree timed beside
/// EAGLE-2 at 8 nodes.
#[wasm_bindgen]
pub async fn likesworld_choose(
    params: JsValue,
    progress: Option<js_sys::Function>,
) -> Result<JsValue, JsError> {
    use views::choose_here::{choose_here_view, ChooseHereParams};
    let job = Job::new(&params, progress)?;
    let p: ChooseHereParams = job.read(params)?;
    p.check().map_err(|e| job.fail(e))?;
    let drafts = (p.backend == "wgpu").then_some("flex");
    let (m, note) = job.models_on(&p.backend, drafts, p.target_width).await?;
    let mut tell = job.every_percent(Some(m.backend.name()));
    let clock = job.clock();
    // A GPU's calibrations (seconds; on an emulated one, tens) are kept for the page's next job.
    let on = measure::calibrated_on(m.backend, measure::execution(&m.target, m.backend));
    let known = held::calibration(on).filter(|_| m.backend == Backend::Wgpu);
    let view = choose_here_view(&p, &m, known, &clock, &mut tell).await;
    if let Ok(v) = &view {
        held::keep_calibration(v.report.calibration);
    }
    job.output(view.map(|v| v.noted(note)))
}

/// The shipped boost-tuned pools and their control at each pool size (`views::boost`), on
/// `backend`, the target widened `target_width`× (the page hands over the pools' files first).
#[wasm_bindgen]
pub async fn boost_pools(
    params: JsValue,
    progress: Option<js_sys::Function>,
) -> Result<JsValue, JsError> {
    let job = Job::new(&params, progress)?;
    let p: views::boost::BoostParams = job.read(params)?;
    p.check().map_err(|e| job.fail(e))?;
    let (m, note) = job.models(&p.backend, p.target_width).await?;
    let mut tell = job.every_percent(Some(m.backend.name()));
    let clock = job.clock();
    let view = views::boost::boost_view(&p, &m, &clock, &mut tell).await;
    job.output(view.map(|v| v.noted(note)))
}

/// Drafting without a model: one experiment of `views::modelfree`. The LikesWorld models are
/// loaded only when the experiment decodes LikesWorld.
#[wasm_bindgen]
pub async fn modelfree(
    params: JsValue,
    progress: Option<js_sys::Function>,
) -> Result<JsValue, JsError> {
    use views::modelfree::{modelfree_view, needs_models, settings, ModelfreeParams};
    let job = Job::new(&params, progress)?;
    let p: ModelfreeParams = job.read(params)?;
    settings(&p).map_err(|e| job.fail(e))?;
    let (m, note) = match needs_models(&p) {
        true => {
            let (m, note) = job.models(&p.backend, 1).await?;
            (Some(m), note)
        }
        false => (None, None),
    };
    let mut tell = job.every_percent(None);
    let clock = job.clock();
    let view = modelfree_view(&p, m.as_deref(), &clock, &mut tell).await;
    job.output(view.map(|v| v.noted(note)))
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

//! The training module's exports (feature `train`: `scripts/build-wasm.sh train` builds it into
//! `pkg/train/`, and only the training widget's worker loads it): a draft distilled from the
//! target in the page, a few steps per call, so that the worker can post the loss curve between
//! calls and the page can stop it by terminating the worker. [`training_start`] makes the corpus
//! and the run; [`Training`] steps it, checks the draft as it is (`lab::learned::check`: α by
//! token kind, tokens per call, greedy identity) and writes its file (`model::draft_file`), which
//! the page keeps and hands to the CPU module's decoding jobs. A pool (lecture §4.2) trains the
//! same way, member after member (`model::boost::Booster`), and is checked as one merged tree.

use super::{into_error, lang_of, output, params, performance};
use crate::i18n::Lang;
use crate::lab::learned::{check, corpus, TrainParams};
use crate::lab::Lab;
use crate::model::boost::{BoostConfig, Booster};
use crate::model::device::Backend;
use crate::model::distill::Distiller;
use crate::model::{DecoderConfig, ModelKind, Models};
use serde::Serialize;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// One draft distilled, or a pool of them boost-tuned (or not: the control).
enum Run {
    Draft(Box<Distiller>),
    Pool(Box<Booster>),
}

/// A distillation run in the page.
#[wasm_bindgen]
pub struct Training {
    run: Run,
    /// Steps taken, over all of a pool's members.
    done: usize,
    models: Rc<Models>,
    shape: DecoderConfig,
    lang: Lang,
    gamma: usize,
    prompts: usize,
    /// The shipped draft this one is measured against: draft B for its shape, else draft A.
    shipped: ModelKind,
}

/// Starts a run (`lab::learned::TrainParams`; missing fields take their defaults): checks every
/// value, loads the models on flex (the page has handed over their weights), makes the corpus
/// (the target's greedy outputs, `progress` gets `{phase: "count", done, total}`), and seeds the
/// draft. Nothing is trained yet.
#[wasm_bindgen]
pub async fn training_start(
    params: JsValue,
    progress: Option<js_sys::Function>,
) -> Result<Training, JsError> {
    let lang = lang_of(&params);
    let p: TrainParams = self::params(params, lang)?;
    let fail = |e| into_error(e, lang);
    let config = p.config().map_err(fail)?;
    let models = Rc::new(Models::load(Backend::Flex).await.map_err(fail)?);
    let perf = performance(lang)?;
    let clock = move || perf.now() * 1e3;
    let lab = Lab::new(&models, lang, &clock);
    let mut tell = |done: usize, total: usize| {
        if let Some(f) = &progress {
            let step = serde_json::json!({"phase": "count", "done": done, "total": total});
            if let Ok(v) = step.serialize(&serde_wasm_bindgen::Serializer::json_compatible()) {
                let _ = f.call1(&JsValue::NULL, &v);
            }
        }
    };
    let data = corpus(&lab, config.teacher, p.corpus, p.seed, &mut tell)
        .await
        .map_err(fail)?;
    let run = match p.pool {
        1 => Run::Draft(Box::new(
            Distiller::new(&config, data, &models.target, None, &models.device).map_err(fail)?,
        )),
        pool => {
            let boost = BoostConfig {
                member: config.clone(),
                pool,
                filter: p.filter,
            };
            let run = Booster::new(&boost, data, &models.target, &models.device).map_err(fail)?;
            Run::Pool(Box::new(run))
        }
    };
    let shipped = match same_shape(&config.shape, &ModelKind::DraftB.config()) {
        true => ModelKind::DraftB,
        false => ModelKind::DraftA,
    };
    Ok(Training {
        run,
        done: 0,
        models: models.clone(),
        shape: config.shape,
        lang,
        gamma: p.gamma,
        prompts: p.prompts,
        shipped,
    })
}

/// Whether two drafts have one shape (d, layers, heads, d_ff).
fn same_shape(a: &DecoderConfig, b: &DecoderConfig) -> bool {
    (a.d_model, a.n_layers, a.n_heads, a.d_ff) == (b.d_model, b.n_layers, b.n_heads, b.d_ff)
}

#[wasm_bindgen]
impl Training {
    /// Takes up to `n` steps (fewer at the end of the run): `[{step, loss, member}]`, `step`
    /// counted over all of a pool's members, `member` from 0.
    pub fn steps(&mut self, n: usize) -> Result<JsValue, JsError> {
        #[derive(Serialize)]
        struct Out {
            step: usize,
            loss: f64,
            member: usize,
        }
        let mut points = Vec::with_capacity(n);
        for _ in 0..n {
            let point = match &mut self.run {
                Run::Draft(d) => d.step().map(|p| (0, p)),
                Run::Pool(b) => b.step().map_err(|e| into_error(e, self.lang))?,
            };
            let Some((member, p)) = point else { break };
            self.done += 1;
            points.push(Out {
                step: self.done,
                loss: p.loss,
                member,
            });
        }
        output(&points, self.lang)
    }

    /// Steps taken so far (over all of a pool's members).
    pub fn done(&self) -> usize {
        self.done
    }

    /// Whether the run has taken all its steps.
    pub fn finished(&self) -> bool {
        match &self.run {
            Run::Draft(d) => d.finished(),
            Run::Pool(b) => b.finished(),
        }
    }

    /// A pool's members trained so far, each with the samples it trained on and how much of the
    /// corpus it matches alone and the pool up to it (`[]` for one draft).
    pub fn members(&self) -> Result<JsValue, JsError> {
        #[derive(Serialize)]
        struct Out {
            samples: usize,
            coverage: f64,
            pool_coverage: f64,
        }
        let members: Vec<Out> = match &self.run {
            Run::Draft(_) => Vec::new(),
            Run::Pool(b) => b
                .members()
                .iter()
                .map(|m| Out {
                    samples: m.samples,
                    coverage: m.coverage,
                    pool_coverage: m.pool_coverage,
                })
                .collect(),
        };
        output(&members, self.lang)
    }

    /// The draft or pool as it is now.
    fn pool(&self) -> Vec<crate::model::Decoder> {
        match &self.run {
            Run::Draft(d) => vec![d.model()],
            Run::Pool(b) => b.pool(),
        }
    }

    /// The draft as it is now, checked as a draft in use (`lab::learned::DraftCheck`): a promise.
    pub fn check(&self) -> js_sys::Promise {
        self.check_of(self.pool())
    }

    /// The same check of the shipped draft it is measured against (draft B for draft B's shape,
    /// else draft A), with its name as `model`: a promise.
    pub fn check_shipped(&self) -> js_sys::Promise {
        self.check_of(vec![self.models.get(self.shipped).clone()])
    }

    /// The name of the shipped draft [`Training::check_shipped`] checks.
    pub fn shipped(&self) -> String {
        self.shipped.name().to_string()
    }

    fn check_of(&self, pool: Vec<crate::model::Decoder>) -> js_sys::Promise {
        let (models, lang) = (self.models.clone(), self.lang);
        let (gamma, prompts) = (self.gamma, self.prompts);
        wasm_bindgen_futures::future_to_promise(async move {
            let perf = performance(lang)?;
            let clock = move || perf.now() * 1e3;
            let lab = Lab::new(&models, lang, &clock);
            let report = check(&lab, &pool, gamma, prompts)
                .await
                .map_err(|e| into_error(e, lang))?;
            Ok(output(&report, lang)?)
        })
    }

    /// The draft as it is now, as a draft file (`model::draft_file`: what the decoding widget
    /// loads, what the page stores and downloads); a pool's first member for a pool.
    pub fn file(&self) -> Result<Vec<u8>, JsError> {
        crate::model::draft_file::to_bytes(&self.pool()[0], &self.shape)
            .map_err(|e| into_error(e, self.lang))
    }
}

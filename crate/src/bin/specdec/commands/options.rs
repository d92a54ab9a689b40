//! The options the model commands share, read one way: the backend, the target's width, the
//! draft, the prompts, a whole number within a range the core declares; and the one call that
//! runs a LikesWorld experiment as the page runs it (`lab::experiment::run`). The commands
//! import this file; it imports none of them.

use crate::opts::{Opts, Usage};
use burn::tensor::read_sync;
use serde::Serialize;
use specdec::clock::native_clock;
use specdec::error::Named;
use specdec::i18n::Lang;
use specdec::lab::experiment::{self, Outcome};
use specdec::lab::params::{Draft, Experiment, Proposing, PROMPTS};
use specdec::lab::Lab;
use specdec::model::device::Backend;
use specdec::model::widen::WIDTH;
use specdec::model::Models;

/// `--backend flex|ndarray|wgpu` (default flex).
pub fn backend(o: &mut Opts) -> Result<Backend, Usage> {
    let name = o.take("backend").unwrap_or_else(|| "flex".into());
    Ok(Backend::parse(&name)?)
}

/// The models on `--backend`, the target widened `--target-width`× (default 1: the trained one).
pub fn models(o: &mut Opts) -> Result<Models, Usage> {
    let width = width(o, "target-width")?;
    let backend = backend(o)?;
    let m = load(o, backend)?;
    let m = draft_file(o, m)?;
    Ok(read_sync(m.with_target_width(width))?)
}

/// The models with the target on `backend` and the draft models on `--drafts-on` (default: the
/// target's backend; `--backend wgpu --drafts-on flex` puts the drafts on the CPU beside the
/// GPU target, as the page does on WebGPU).
fn load(o: &mut Opts, backend: Backend) -> Result<Models, Usage> {
    let drafts = match o.take("drafts-on") {
        Some(name) => {
            Backend::parse(&name).map_err(|e| Usage(format!("{}: --drafts-on: {e}", o.command)))?
        }
        None => backend,
    };
    Ok(read_sync(Models::load_on(backend, drafts))?)
}

/// `--draft-file FILE`: a draft trained by `specdec train --model draft` in the place of both
/// shipped drafts, so that whichever draft model the experiment runs is this one; a file that is
/// not such a draft is refused before anything runs.
fn draft_file(o: &mut Opts, models: Models) -> Result<Models, Usage> {
    let Some(path) = o.take("draft-file") else {
        return Ok(models);
    };
    let fail = |why: String| Usage(format!("{}: --draft-file {path:?}: {why}", o.command));
    // Its size before its bytes: a device or a huge file is refused without being read.
    let meta = std::fs::metadata(&path).map_err(|e| fail(e.to_string()))?;
    let limit = specdec::model::weights::MAX_WEIGHTS_BYTES as u64;
    if !meta.is_file() || meta.len() > limit {
        return Err(fail(format!(
            "not a regular file of at most {limit} bytes (a draft's file is far smaller)"
        )));
    }
    let bytes = std::fs::read(&path).map_err(|e| fail(e.to_string()))?;
    let (draft, _) = specdec::model::draft_file::from_bytes(&bytes, &path, &models.draft_device)
        .map_err(|e| Usage(format!("{}: {e}", o.command)))?;
    o.beside.push((
        "draft_file",
        format!("{path} (your draft, in the places of drafts A and B)"),
    ));
    Ok(models.with_own_draft(draft))
}

/// `--draft-file` refused where the experiment has no one draft's place for it: `why` says what
/// it runs instead.
fn return_if_draft_file(o: &Opts, why: &str) -> Result<(), Usage> {
    match o.peek("draft-file") {
        Some(_) => Err(Usage(format!(
            "{}: --draft-file: {why}, so a trained draft has no place here",
            o.command
        ))),
        None => Ok(()),
    }
}

/// The row that says where the drafts ran, when apart from the target (`--drafts-on`).
pub fn drafts_row(on: Option<&str>, backend: &str) -> Option<(String, String)> {
    on.map(|b| crate::opts::row("drafts on", format!("{b}, beside the target on {backend}")))
}

/// `--drafts-on` refused, naming why, where no draft model runs, rather than accepted without
/// effect.
pub fn return_if_drafts_on(o: &Opts, what: &str) -> Result<(), Usage> {
    match o.peek("drafts-on") {
        Some(_) => Err(Usage(format!(
            "{}: --drafts-on: {what}, so there is no draft model to place",
            o.command
        ))),
        None => Ok(()),
    }
}

/// [`models`] for an experiment that runs neither draft A nor B (Medusa, EAGLE, a pool, a drafter
/// without a model): `--draft-file` is refused, naming why, rather than ignored.
pub fn models_without_draft(o: &mut Opts, what: &str) -> Result<Models, Usage> {
    return_if_draft_file(o, &format!("{what} runs neither draft A nor draft B"))?;
    models(o)
}

/// [`models`] for an experiment that compares the shipped drafts A and B side by side (`what`
/// says how): `--draft-file`, which would take both places, is refused, naming why.
pub fn models_with_both_drafts(o: &mut Opts, what: &str) -> Result<Models, Usage> {
    return_if_draft_file(o, what)?;
    models(o)
}

/// [`models`] for the wall-clock commands of `shape`, which report what crossed: with `--offload`
/// the target's weights cross to the GPU before every target call (wgpu only, refused on the CPU
/// backends before any model loads). A drafter without a model refuses a draft's options.
pub fn timed_models(o: &mut Opts, shape: Proposing) -> Result<Models, Usage> {
    if shape.free().is_some() {
        return_if_draft_file(
            o,
            "a drafter without a model runs neither draft A nor draft B",
        )?;
        return_if_drafts_on(o, "a drafter without a model runs no draft model")?;
    }
    let width = width(o, "target-width")?;
    let backend = backend(o)?;
    let offload = offload(o, backend)?;
    let m = load(o, backend)?;
    let m = draft_file(o, m)?;
    let m = read_sync(m.with_target_width(width))?;
    Ok(if offload {
        read_sync(m.with_offload())?
    } else {
        m
    })
}

/// `--offload`: the target's weights cross to the GPU before every call (lecture §4.6), refused
/// before any model loads unless `backend` is wgpu.
pub fn offload(o: &mut Opts, backend: Backend) -> Result<bool, Usage> {
    let offload = o.flag("offload");
    if offload && backend != Backend::Wgpu {
        return Err(Usage(format!(
            "{}: --offload needs --backend wgpu (on {} the weights already live in host memory)",
            o.command,
            backend.name()
        )));
    }
    Ok(offload)
}

/// A target width (`--target-width` or `--width`), checked before any model loads.
pub fn width(o: &mut Opts, option: &str) -> Result<usize, Usage> {
    let r: usize = o.number(option, Some(1))?;
    WIDTH.check(r as f64)?;
    Ok(r)
}

/// `--draft a|b`, required unless a default is given or `--draft-file` brings the draft (which
/// takes both drafts' places).
pub fn draft(o: &mut Opts, default: Option<&str>) -> Result<Draft, Usage> {
    let default = default.or(o.peek("draft-file").map(|_| "a"));
    let name = match default {
        Some(d) => o.take("draft").unwrap_or_else(|| d.into()),
        None => o.required("draft")?,
    };
    Draft::parse(&name).map_err(|e| Usage(format!("{}: {e}", o.command)))
}

/// `--prompts N`.
pub fn prompts(o: &mut Opts, default: usize) -> Result<usize, Usage> {
    o.count(&PROMPTS, Some(default))
}

/// A report as the page receives it.
pub fn value(report: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(report).expect("reports serialise")
}

/// Runs `experiment` on `models` as the page does, reports in English; first fails on any
/// option of `o` no reader asked for (a mistyped one is named before a long run, not after).
pub fn run(o: &Opts, experiment: &Experiment, models: &Models) -> Result<Outcome, Usage> {
    o.finish()?;
    let clock = native_clock();
    let lab = Lab::new(models, Lang::En, &clock);
    Ok(read_sync(experiment::run(experiment, lab, &mut |_, _| {}))?)
}

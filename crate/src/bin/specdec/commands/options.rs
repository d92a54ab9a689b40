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
use specdec::lab::params::{Draft, Experiment, PROMPTS};
use specdec::lab::Lab;
use specdec::model::device::Backend;
use specdec::model::widen::WIDTH;
use specdec::model::{ModelKind, Models};

/// `--backend flex|ndarray|wgpu` (default flex).
pub fn backend(o: &mut Opts) -> Result<Backend, Usage> {
    let name = o.take("backend").unwrap_or_else(|| "flex".into());
    Ok(Backend::parse(&name)?)
}

/// The models on `--backend`, the target widened `--target-width`× (default 1: the trained one).
pub fn models(o: &mut Opts) -> Result<Models, Usage> {
    let width = width(o, "target-width")?;
    let m = read_sync(Models::load(backend(o)?))?;
    let m = draft_file(o, m)?;
    Ok(read_sync(m.with_target_width(width))?)
}

/// `--draft-file FILE`: a draft trained by `specdec train --model draft` in the place of the
/// draft that `--draft` names (draft A unless told); a file that is not such a draft is refused
/// before anything runs.
fn draft_file(o: &mut Opts, models: Models) -> Result<Models, Usage> {
    let Some(path) = o.take("draft-file") else {
        return Ok(models);
    };
    let slot = match Draft::parse(o.peek("draft").unwrap_or("a")) {
        Ok(Draft::B) => ModelKind::DraftB,
        _ => ModelKind::DraftA,
    };
    let bytes = std::fs::read(&path)
        .map_err(|e| Usage(format!("{}: --draft-file {path}: {e}", o.command)))?;
    let (draft, _) = specdec::model::draft_file::from_bytes(&bytes, &path, &models.device)
        .map_err(|e| Usage(format!("{}: {e}", o.command)))?;
    Ok(models.with_draft(slot, draft)?)
}

/// [`models`] for the wall-clock commands, which report what crossed: with `--offload` the
/// target's weights cross to the GPU before every target call (wgpu only, refused on the CPU
/// backends before any model loads).
pub fn timed_models(o: &mut Opts) -> Result<Models, Usage> {
    let width = width(o, "target-width")?;
    let backend = backend(o)?;
    let offload = offload(o, backend)?;
    let m = read_sync(Models::load(backend))?;
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

/// `--draft a|b`, required unless a default is given or `--draft-file` brings the draft (then
/// it takes draft A's place unless `--draft b` says otherwise).
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

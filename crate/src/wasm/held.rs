//! The models a worker holds between jobs: loaded once per placement (the target's backend and
//! the drafts'), the last widened target, and the draft a student trained in the page
//! ([`provide_trained_draft`], synchronous), which takes both drafts' places in a decoding job
//! that asks for it ([`with_trained`]; the reports name it as the student's), and the device's
//! calibrations for the measured roofline ([`calibration`]).

use super::{into_error, lang_of};
use crate::error::Named;
use crate::i18n::Lang;
use crate::model::device::{Backend, Fallback};
use crate::model::measure::{Calibration, On};
use crate::model::Models;
#[cfg(feature = "flex")]
use burn::tensor::Device;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

thread_local! {
    /// Models stay loaded per backend: decoding the weights is the slow part of a first call.
    static MODELS: std::cell::RefCell<Vec<Rc<Models>>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The last widened target's models: widening r = 16 reads and writes 76 MB, so a run of
    /// jobs at one width widens once; only one widened target is held at a time.
    static WIDENED: std::cell::RefCell<Option<Rc<Models>>> = const { std::cell::RefCell::new(None) };
    /// The file of the draft trained in the page, as the page handed it over.
    static TRAINED: std::cell::RefCell<Option<Vec<u8>>> = const { std::cell::RefCell::new(None) };
    /// The device's calibrations for the measured roofline, one per backend, threads and FMA
    /// (`measure::On`): a page calibrates a GPU once (seconds, tens on an emulated one) and
    /// reuses them.
    static CALIBRATIONS: std::cell::RefCell<Vec<Calibration>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The calibrations measured before in this worker, to reuse where they hold.
pub(super) fn calibration(on: On) -> Option<Calibration> {
    CALIBRATIONS.with(|c| c.borrow().iter().find(|c| c.on == on).copied())
}

/// Keeps `c` for the next measurement on the same device (replacing one for the same).
pub(super) fn keep_calibration(c: Calibration) {
    CALIBRATIONS.with(|all| {
        let mut all = all.borrow_mut();
        all.retain(|old| old.on != c.on);
        all.push(c);
    });
}

/// Hands this module the draft the student trained in the page (`{bytes: Uint8Array, name, lang}`: its
/// file, `model::draft_file`, as the training module wrote it or as uploaded), checked before it
/// is kept; returns its shape (`d,layers,heads,d_ff`). A bad file is refused with the reason and
/// the draft kept before stays. The page calls it to check an uploaded file, the worker before a
/// job that speculates with the trained draft. `bytes: null` forgets the draft (the student
/// pressed Forget): a job that asks for it is then refused, saying why.
#[wasm_bindgen]
pub fn provide_trained_draft(params: JsValue) -> Result<String, JsError> {
    let lang = lang_of(&params);
    // How messages name the file: the student's own file name, when the page passes it.
    let name = js_sys::Reflect::get(&params, &JsValue::from_str("name"))
        .ok()
        .and_then(|n| n.as_string())
        .unwrap_or_else(|| TRAINED_NAME.to_string());
    let bytes = js_sys::Reflect::get(&params, &JsValue::from_str("bytes")).ok();
    if bytes
        .as_ref()
        .is_none_or(|b| b.is_null() || b.is_undefined())
    {
        TRAINED.with(|t| t.borrow_mut().take());
        return Ok(String::new());
    }
    let bytes = bytes
        .filter(|b| b.is_instance_of::<js_sys::Uint8Array>())
        .map(|b| js_sys::Uint8Array::new(&b).to_vec())
        .ok_or_else(|| {
            into_error(
                "bytes: expected the draft file's bytes (a Uint8Array)",
                lang,
            )
        })?;
    // Read whole where this module has a CPU device (every parameter's name, shape and values);
    // the GPU module reads its shape and values, and the job reads it whole.
    #[cfg(feature = "flex")]
    let shape = crate::model::draft_file::from_bytes(&bytes, &name, &Device::flex())
        .map(|(_, shape)| shape);
    #[cfg(not(feature = "flex"))]
    let shape = crate::model::draft_file::read_shape(&bytes, &name);
    let shape = shape.map_err(|e| into_error(e, lang))?;
    TRAINED.with(|t| *t.borrow_mut() = Some(bytes));
    Ok(crate::model::draft_file::shape_name(&shape))
}

/// How messages name the trained draft's file.
const TRAINED_NAME: &str = "trained-draft.bpk";

/// `m` with the draft trained in the page in both drafts' places, and the note that says so.
pub(super) fn with_trained(
    m: Rc<Models>,
    lang: Lang,
) -> Result<(Rc<Models>, String), crate::Error> {
    use crate::model::draft_file::{from_bytes, shape_name};
    let bytes = TRAINED.with(|t| t.borrow().clone()).ok_or(crate::Error::Unavailable {
        what: "trained draft",
        why: crate::error::Text::new(
            "no draft is kept in this browser (none was trained here yet, or it was forgotten): train one in the training widget, or load its file there",
            "这个浏览器里没有保存草稿（还没在这里训练过，或已经删除）：先在训练小部件里训练一个，或在那里载入它的文件",
        ),
    })?;
    let (draft, shape) = from_bytes(&bytes, TRAINED_NAME, &m.draft_device)?;
    let m = m.with_own_draft(draft);
    let note = lang.pick(
        &format!("Your draft trained in this page ({}: d, layers, heads, d_ff) proposes in this run, in the place of drafts A and B.", shape_name(&shape)),
        &format!("这次运行由你在本页训练的草稿（{}：d、层数、头数、d_ff）提议，代替草稿 A 和 B。", shape_name(&shape)),
    ).to_string();
    Ok((Rc::new(m), note))
}

/// The models with the target on `backend` and the draft models on `drafts` (the target's backend
/// unless named), loaded once. A WebGPU job without a usable adapter gets the flex models and
/// the reason, for the page to show (the worker asks [`super::webgpu_unavailable`] first and
/// sends such jobs to the CPU module, whose threads and FMA the GPU module lacks).
pub(super) async fn models(
    backend: &str,
    drafts: Option<&str>,
    lang: Lang,
) -> Result<(Rc<Models>, Option<String>), crate::Error> {
    let mut backend = Backend::parse(backend)?;
    let mut drafts = drafts.map(Backend::parse).transpose()?.unwrap_or(backend);
    let mut note = None;
    if backend == Backend::Wgpu {
        if let Err(e) = backend.device().await {
            if !cfg!(feature = "flex") {
                return Err(e);
            }
            note = Some(Fallback::NoDevice(e).note(lang));
            (backend, drafts) = (Backend::Flex, Backend::Flex);
        }
    }
    let held = |m: &&Rc<Models>| m.backend == backend && m.drafts == drafts;
    if let Some(m) = MODELS.with(|m| m.borrow().iter().find(held).cloned()) {
        return Ok((m, note));
    }
    let loaded = Rc::new(Models::load_on(backend, drafts).await?);
    MODELS.with(|m| m.borrow_mut().push(loaded.clone()));
    Ok((loaded, note))
}

/// `models` with the target widened `width`× (width 1: `models` itself). A target widened for
/// other drafts' placement is reused with these drafts.
pub(super) async fn widened(models: Rc<Models>, width: usize) -> Result<Rc<Models>, crate::Error> {
    if width == 1 {
        return Ok(models);
    }
    let held = WIDENED.with(|w| w.borrow().clone());
    if let Some(m) = held.filter(|m| m.backend == models.backend && m.target_width() == width) {
        return Ok(match m.drafts == models.drafts {
            true => m,
            false => Rc::new(m.with_drafts_of(&models)),
        });
    }
    // The old one goes first: two wide targets at once may not fit the tab's memory.
    WIDENED.with(|w| w.borrow_mut().take());
    let wide = Rc::new(models.with_target_width(width).await?);
    WIDENED.with(|w| *w.borrow_mut() = Some(wide.clone()));
    Ok(wide)
}

//! The LikesWorld decoder on burn (lecture §3, §4.3; SPEC §2.4, §2.5).
//!
//! One code path for every device: the model takes a `&Device` and never asks which backend it
//! is on. [`decoder`] is the Transformer (position ids as an input, attention under an explicit
//! boolean mask) and [`cache`] its KV cache (append, narrow, gather the kept slots);
//! [`tree_attention`] checks one tree forward against every root-to-node path run on its own;
//! [`medusa`] and [`eagle`] are the drafts that read the target's features (lecture §5.1–5.2);
//! [`train`] trains a model or such a draft with burn's autodiff (natively and in the page's
//! training module), [`distill`] a draft of any shape from the target and [`boost`] a boost-tuned
//! pool of them (lecture §4.2), which
//! [`draft_file`] saves and reads back; [`weights`]
//! saves the trained weights and provides them (embedded natively, handed over by the page in
//! wasm); [`offload`] keeps a model's weights in host memory, crossing to the GPU before every
//! forward (lecture §4.6); [`device`] is the one place that chooses a device. No decoding loop lives here:
//! putting a decoder and its KV cache behind the engine's `LanguageModel` trait is `lab::lm`'s
//! job.

pub mod activation;
pub mod bench;
#[cfg(any(not(target_arch = "wasm32"), feature = "train"))]
pub mod boost;
pub mod cache;
pub mod decoder;
pub mod device;
#[cfg(any(not(target_arch = "wasm32"), feature = "train"))]
pub mod distill;
pub mod draft_file;
pub mod eagle;
pub mod eval;
#[cfg(feature = "wgpu")]
mod gpu;
#[cfg(all(test, feature = "flex"))]
pub(crate) mod gradcheck;
pub mod matmul;
pub mod measure;
pub mod medusa;
pub mod offload;
#[cfg(any(not(target_arch = "wasm32"), feature = "train"))]
pub mod train;
pub mod tree_attention;
pub mod weights;
pub mod widen;

pub use cache::KvCache;
pub use decoder::{Decoder, DecoderConfig, ModelKind};

use crate::error::Error;
use burn::tensor::{Device, Tensor};
use device::Backend;
use eagle::Eagle;
use medusa::Medusa;
use std::sync::{Arc, OnceLock};
use weights::HiddenKind;

/// Reads a float tensor back to the host, row-major. Awaited: a browser maps a WebGPU buffer
/// asynchronously (the CPU backends are ready at once).
pub async fn floats<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>, Error> {
    let unreadable = |why: String| Error::Unavailable {
        what: "tensor read-back",
        why: why.into(),
    };
    t.into_data_async()
        .await
        .map_err(|e| unreadable(format!("{e:?}")))?
        .convert::<f32>()
        .try_into_vec::<f32>()
        .map_err(|e| unreadable(format!("{e:?}")))
}

/// Whose drafts A and B are, for the reports to name them: the shipped ones, or one the student
/// trained (in the page, or by `specdec train`) in both places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    Shipped,
    Yours,
}

/// The target and both drafts, loaded from the shipped weights: on one backend, or the target on
/// the GPU and the drafts on the CPU beside it ([`Models::load_on`]). The target may be widened
/// ([`Models::with_target_width`]): the trained one is kept to widen from. A clone shares the
/// weights (a module's parameters are reference-counted).
#[derive(Clone)]
pub struct Models {
    /// The target's backend and device.
    pub backend: Backend,
    pub device: Device,
    /// The draft models' backend and device (drafts A and B here; Medusa's heads and EAGLE,
    /// `lab::hidden::Drafts`, load on it too): the target's, or the CPU's beside a GPU target.
    pub drafts: Backend,
    pub draft_device: Device,
    /// The target the experiments run: the trained one, or it widened [`Models::target_width`]×.
    pub target: Decoder,
    pub draft_a: Decoder,
    pub draft_b: Decoder,
    /// Whose drafts A and B are: the shipped ones, or the student's own in both places
    /// ([`Models::with_own_draft`]); the reports name them by it.
    whose: Whose,
    trained: Decoder,
    width: usize,
    /// The drafts on the trained target's features, on `draft_device`: parsed at the first job
    /// that asks for them, then shared by every clone with these drafts.
    hidden: Arc<OnceLock<HiddenDrafts>>,
}

/// The drafts on the trained target's features (lecture §5.1–5.2): Medusa's heads and EAGLE's
/// draft, trained without and with the training-time test, with the trained target beside them,
/// all where the draft models run ([`Models::draft_device`]): beside a GPU target, on the CPU, so
/// that a proposal costs the draft's CPU time and not a GPU call's fixed cost (issue 31). The
/// features they read are already on the host (the target's cache reads them back with its
/// logits), so nothing else crosses between the two. A clone shares the weights; the
/// experiments know it as `lab::hidden::Drafts`, which adds what they ask of it.
#[derive(Clone)]
pub struct HiddenDrafts {
    pub medusa: Medusa,
    pub eagle: Eagle,
    pub eagle_ttt: Eagle,
    /// The trained target (its embedding and LM head are the drafts' frozen parts), on the
    /// drafts' device.
    pub(crate) trained: Decoder,
    /// Where the drafts run.
    pub device: Device,
}

impl Models {
    /// Every model on `backend`.
    pub async fn load(backend: Backend) -> Result<Models, Error> {
        Models::load_on(backend, backend).await
    }

    /// The target on `backend` and the draft models on `drafts`: on WebGPU, the drafts on the CPU
    /// (flex) make c a draft's CPU time over the target's GPU step, instead of one GPU call's
    /// fixed cost over another's (issue 31). The engine only ever exchanges token ids,
    /// distributions and (for the drafts on its hidden states) the features the target's calls
    /// read back, all on the host, between them, so nothing else changes.
    pub async fn load_on(backend: Backend, drafts: Backend) -> Result<Models, Error> {
        let device = backend.device().await?;
        let draft_device = match drafts == backend {
            true => device.clone(),
            false => drafts.device().await?,
        };
        let target = weights::load(ModelKind::Target, &device)?;
        Ok(Models {
            trained: target.clone(),
            target,
            draft_a: weights::load(ModelKind::DraftA, &draft_device)?,
            draft_b: weights::load(ModelKind::DraftB, &draft_device)?,
            backend,
            device,
            drafts,
            draft_device,
            width: 1,
            whose: Whose::Shipped,
            hidden: Arc::default(),
        })
    }

    /// The device `kind` runs on.
    pub fn device_of(&self, kind: ModelKind) -> &Device {
        match kind {
            ModelKind::Target => &self.device,
            ModelKind::DraftA | ModelKind::DraftB => &self.draft_device,
        }
    }

    /// Where the draft models run when it is not where the target runs: their backend's name.
    pub fn drafts_apart(&self) -> Option<&'static str> {
        (self.drafts != self.backend).then(|| self.drafts.name())
    }

    /// How many times wider than the trained target [`Models::target`] is.
    pub fn target_width(&self) -> usize {
        self.width
    }

    /// These models with the trained target widened `width`× ([`widen::widen`]) as the target
    /// the experiments run; width 1 is the trained target itself. The drafts are shared (a
    /// module's parameters are reference-counted), only the widened target is new.
    pub async fn with_target_width(&self, width: usize) -> Result<Models, Error> {
        widen::WIDTH.check(width as f64)?;
        let target = if width == 1 {
            self.trained.clone()
        } else {
            widen::widen(&self.trained, width, &self.device).await?
        };
        Ok(Models {
            target,
            width,
            ..self.clone()
        })
    }

    /// These models with the target's weights offloaded ([`offload::offloaded`]): they cross to
    /// the device before every target call; the drafts stay where they are (on the GPU, as
    /// SpecInfer's offloading keeps its small models, or on the CPU beside it). Only on the wgpu
    /// backend.
    pub async fn with_offload(&self) -> Result<Models, Error> {
        Ok(Models {
            target: offload::offloaded(&self.target).await?,
            ..self.clone()
        })
    }

    /// These models' target with `other`'s drafts A and B, where `other` holds them.
    pub fn with_drafts_of(&self, other: &Models) -> Models {
        Models {
            drafts: other.drafts,
            draft_device: other.draft_device.clone(),
            draft_a: other.draft_a.clone(),
            draft_b: other.draft_b.clone(),
            whose: other.whose,
            hidden: other.hidden.clone(),
            ..self.clone()
        }
    }

    /// These models as a calibration reads them: the trained target on the drafts' device beside
    /// the drafts, the target the experiments run's answers up to rounding (a widened target's
    /// by construction, [`widen`]; a GPU target's, the same weights) at a fraction of its cost,
    /// for what depends only on the answers (acceptance vectors, the replayed decoding).
    pub fn reference(&self) -> Result<Models, Error> {
        let trained = match self.drafts_apart() {
            None => self.trained.clone(),
            Some(_) => weights::load(ModelKind::Target, &self.draft_device)?,
        };
        Ok(Models {
            backend: self.drafts,
            device: self.draft_device.clone(),
            target: trained.clone(),
            trained,
            width: 1,
            ..self.clone()
        })
    }

    /// Whether the target's weights are offloaded ([`Models::with_offload`]).
    pub fn offloaded(&self) -> bool {
        self.target.host_weights().is_some()
    }

    /// These models with `draft` (a draft the student trained, of any shape: [`draft_file`],
    /// loaded on [`Models::draft_device`]) in the places of drafts A and B, so that whichever
    /// draft an experiment runs is this one, and its reports call it the student's.
    pub fn with_own_draft(&self, draft: Decoder) -> Models {
        Models {
            draft_a: draft.clone(),
            draft_b: draft,
            whose: Whose::Yours,
            ..self.clone()
        }
    }

    /// Whose drafts A and B are ([`Models::with_own_draft`]).
    pub fn whose(&self) -> Whose {
        self.whose
    }

    /// The trained target (the one a widened target was widened from).
    pub fn trained(&self) -> &Decoder {
        &self.trained
    }

    /// The drafts on the trained target's features, on [`Models::draft_device`]: parsed from the
    /// shipped weights once (with the trained target again when the drafts run apart from it,
    /// on the CPU beside a GPU target), then shared by every job on these models. A failed load
    /// (in wasm: the page has not handed the weights over yet) is not kept.
    pub fn hidden_drafts(&self) -> Result<HiddenDrafts, Error> {
        if let Some(held) = self.hidden.get() {
            return Ok(held.clone());
        }
        let d = &self.draft_device;
        let trained = match self.drafts_apart() {
            None => self.trained.clone(),
            Some(_) => weights::load(ModelKind::Target, d)?,
        };
        let loaded = HiddenDrafts {
            medusa: weights::load_medusa(&trained, d)?,
            eagle: weights::load_eagle(HiddenKind::Eagle, &trained, d)?,
            eagle_ttt: weights::load_eagle(HiddenKind::EagleTtt, &trained, d)?,
            trained,
            device: d.clone(),
        };
        Ok(self.hidden.get_or_init(|| loaded).clone())
    }

    /// Whether [`Models::hidden_drafts`] holds the drafts already (a job parsed them).
    pub fn hidden_drafts_held(&self) -> bool {
        self.hidden.get().is_some()
    }

    pub fn get(&self, kind: ModelKind) -> &Decoder {
        match kind {
            ModelKind::Target => &self.target,
            ModelKind::DraftA => &self.draft_a,
            ModelKind::DraftB => &self.draft_b,
        }
    }
}

//! The LikesWorld decoder on burn (lecture §3, §4.3; SPEC §2.4, §2.5).
//!
//! One code path for every device: the model takes a `&Device` and never asks which backend it
//! is on. [`decoder`] is the Transformer (position ids as an input, attention under an explicit
//! boolean mask, a KV cache that appends, truncates and keeps an accepted tree path);
//! [`tree_attention`] checks one tree forward against every root-to-node path run on its own;
//! [`train`] trains a model with burn's autodiff (natively only); [`weights`] saves the trained
//! weights and provides them (embedded natively, handed over by the page in wasm); [`device`] is
//! the one place that chooses a device; [`lm`] puts a decoder and its KV cache behind the
//! decoding engine's `LanguageModel` trait.

pub mod activation;
pub mod bench;
pub mod cache;
pub mod decoder;
pub mod device;
pub mod eval;
#[cfg(feature = "wgpu")]
mod gpu;
#[cfg(not(target_arch = "wasm32"))]
pub mod train;
pub mod tree_attention;
pub mod weights;

pub use cache::KvCache;
pub use decoder::{Decoder, DecoderConfig, ModelKind};

use crate::error::Error;
use burn::tensor::{Device, Tensor};
use device::Backend;

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

/// The target and both drafts, loaded from the shipped weights on one backend.
pub struct Models {
    pub backend: Backend,
    pub device: Device,
    pub target: Decoder,
    pub draft_a: Decoder,
    pub draft_b: Decoder,
}

impl Models {
    pub async fn load(backend: Backend) -> Result<Models, Error> {
        let device = backend.device().await?;
        Ok(Models {
            target: weights::load(ModelKind::Target, &device)?,
            draft_a: weights::load(ModelKind::DraftA, &device)?,
            draft_b: weights::load(ModelKind::DraftB, &device)?,
            backend,
            device,
        })
    }

    pub fn get(&self, kind: ModelKind) -> &Decoder {
        match kind {
            ModelKind::Target => &self.target,
            ModelKind::DraftA => &self.draft_a,
            ModelKind::DraftB => &self.draft_b,
        }
    }
}

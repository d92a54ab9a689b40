//! The drafts on the trained target's features, where the draft models run (beside a GPU
//! target, on the CPU; parsed once per loaded models by [`Models::hidden_drafts`]), and the small
//! conversions every proposer uses: tensors from plain values, distributions from logits read back, tokens ranked by a
//! distribution.

use crate::error::Error;
use crate::lab::lm::softmax;
use crate::lab::params::Drafter;
use crate::model::eagle::Eagle;
use crate::model::{Decoder, Models};
use crate::sampling::Dist;
use burn::tensor::{Device, Int, Tensor, TensorData};

/// The drafts on the trained target's features ([`crate::model::HiddenDrafts`]), held by the
/// models.
pub use crate::model::HiddenDrafts as Drafts;

impl Drafts {
    /// `models`' drafts on the target's features (loaded at the first job that asks, then held
    /// by `models`).
    pub fn load(models: &Models) -> Result<Drafts, Error> {
        models.hidden_drafts()
    }

    /// The width of the trained target's features, which the drafts read.
    pub fn width(&self) -> usize {
        self.trained.d_model()
    }

    /// The trained target, whose embedding and LM head the drafts share.
    pub fn trained(&self) -> &Decoder {
        &self.trained
    }

    /// EAGLE's draft for `drafter`: the one trained with the training-time test if it says so
    /// (Medusa's runs carry one too, unused).
    pub fn eagle_for(&self, drafter: Drafter) -> &Eagle {
        match drafter {
            Drafter::Eagle { ttt: true, .. } => &self.eagle_ttt,
            _ => &self.eagle,
        }
    }
}

/// The tokens of `dist` from most to least likely (ties: the lower id first).
pub fn ranked(dist: &[f64]) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..dist.len() as u32).collect();
    ids.sort_by(|&a, &b| {
        dist[b as usize]
            .total_cmp(&dist[a as usize])
            .then(a.cmp(&b))
    });
    ids
}

pub fn floats_tensor(values: Vec<f32>, shape: [usize; 3], device: &Device) -> Tensor<3> {
    Tensor::from_data(TensorData::new(values, shape), device)
}

pub fn ints(values: Vec<u32>, shape: [usize; 2], device: &Device) -> Tensor<2, Int> {
    let v: Vec<i64> = values.into_iter().map(i64::from).collect();
    Tensor::from_data(TensorData::new(v, shape), device)
}

/// Distributions from logits read back [n × vocab].
pub fn dists(flat: &[f32], vocab: usize) -> Vec<Dist> {
    flat.chunks(vocab).map(|l| softmax(l, 1.0)).collect()
}

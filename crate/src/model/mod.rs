//! The LikesWorld decoder on burn (lecture §3, §4.3; SPEC §2.4, §2.5).
//!
//! One code path for every device: the model takes a `&Device` and never asks which backend it
//! is on. [`decoder`] is the Transformer (position ids as an input, attention under an explicit
//! boolean mask, a KV cache that appends, truncates and keeps an accepted tree path);
//! [`tree_attention`] checks one tree forward against every root-to-node path run on its own;
//! [`train`] trains a model with burn's autodiff; [`weights`] saves and embeds the trained
//! weights; [`device`] is the one place that chooses a device.

pub mod bench;
pub mod cache;
pub mod decoder;
pub mod device;
pub mod eval;
pub mod train;
pub mod tree_attention;
pub mod weights;

pub use cache::KvCache;
pub use decoder::{Decoder, DecoderConfig, ModelKind};

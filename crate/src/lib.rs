//! specdec: the Rust core of specdec-playground.
//!
//! Everything the lecture computes without a neural network lives here as plain functions on
//! `f64` and token ids, so that the same code runs natively (tests, the `specdec` CLI) and in
//! the browser (the wasm module). The module map follows the lecture:
//!
//! - [`theory`]: the closed forms of §2.5 (expected tokens per step, speedup, operations, optimal γ).
//! - [`roofline`]: the time model of one decoding step (§1.2, demos 1/4/5) with GPU and model presets.
//! - [`sampling`]: speculative sampling (Algorithm 1 of Leviathan et al.), its wrong variants,
//!   Medusa's typical acceptance, the gallery of real runtimes' bugs, and multi-draft
//!   verification (naive sampling and SpecInfer's multi-step speculative sampling).
//! - [`toy`]: the vocabulary-5 toy LM and exact enumeration of any decoding strategy (§2.3, §4.5).
//! - [`tree`]: SpecInfer token trees: merge/expand, depth-first linearisation, topology-aware mask;
//!   Sequoia's optimal trees and the hardware-aware choice of a chain or tree (§4.7).
//! - [`likesworld`]: the LikesWorld grammar, its tokens, worlds and held-out prompts.
//! - [`model`]: the burn decoder (the target and drafts), its KV cache, weights and evaluation —
//!   burn, with no decoding loop.
//! - [`decode`]: the generic speculative-decoding engine — the draft → verify loops over a
//!   `LanguageModel` trait (chains, expansion and merge trees; greedy, Algorithm 1 and its wrong
//!   variants, naive sampling, MSS), their statistics, and the model-free drafters — with no
//!   burn in it (it is tested exactly on the toy LM).
//! - [`lab`]: the LikesWorld experiments, the one room that joins the engine and the models.
//! - [`error`]: the one error type, the `Range` a typed value is checked against, and the
//!   `Named` choices.
//! - [`clock`]: the clock and progress callback that long jobs are handed.
//! - [`plot`]: SVG charts drawn with plotters.
//! - [`i18n`]: the page's two languages, for the views that write prose.
//! - [`views`]: one function per page widget, turning results into numbers + SVG.
//! - `wasm` (wasm32 only): the thin binding layer, the only module that knows JavaScript exists.
//!
//! The layers, top to bottom: `bin/` and `wasm` → [`views`] → [`lab`] → [`decode`] (no burn)
//! and [`model`] (no decoding loop) → [`plot`], [`roofline`], [`toy`], [`likesworld`] →
//! [`sampling`], [`tree`], [`theory`] → [`error`], [`clock`] → [`i18n`]. No module imports from
//! its own layer or one above (`tests/layers.rs`); `decode` and `model` never import each other,
//! and `lab` is where they are joined (the views above only hand the loaded models over and draw
//! the engine's traces).
//!
//! Invalid input is rejected at the boundary with [`Error`]; past it, the core cannot fail.

pub mod clock;
pub mod decode;
pub mod error;
pub mod i18n;
pub mod lab;
pub mod likesworld;
pub mod model;
pub mod plot;
pub mod roofline;
pub mod sampling;
pub mod theory;
pub mod toy;
pub mod tree;
pub mod views;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use error::Error;

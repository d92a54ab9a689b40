//! specdec-math: the lecture's mathematics, without burn — everything specdec-playground
//! computes without a neural network, as plain functions on `f64` and token ids, so that the same
//! code runs natively (tests, the `specdec` CLI) and in the browser. The crate `specdec` (the
//! models, the experiments that run them, the CLI and the wasm binding) depends on it and
//! re-exports each module under the same name; this crate's dependency tree holds no burn
//! (`crate/tests/layers.rs` checks it with `cargo metadata`). The module map follows the lecture:
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
//! - [`decode`]: the generic speculative-decoding engine — the draft → verify loops over a
//!   `LanguageModel` trait (chains, expansion and merge trees; greedy, Algorithm 1 and its wrong
//!   variants, naive sampling, MSS), their statistics, and the model-free drafters — tested
//!   exactly on the toy LM; `specdec::lab` runs it on the models.
//! - [`error`]: the one error type, the `Range` a typed value is checked against, and the
//!   `Named` choices.
//! - [`clock`]: the clock and progress callback that long jobs are handed.
//! - [`plot`]: SVG charts drawn with plotters.
//! - [`i18n`]: the page's two languages, for the views that write prose.
//! - [`views`]: one function per analytic widget, turning results into numbers + SVG.
//! - `wasm` (wasm32 with the feature `wasm`): the lecture's wasm module (`pkg/math/`), the
//!   analytic widgets' exports and what every module's binding shares.
//!
//! The layers, top to bottom: `wasm` → [`views`] → [`decode`] → [`plot`], [`roofline`], [`toy`],
//! [`likesworld`] → [`sampling`], [`tree`], [`theory`] → [`error`], [`clock`] → [`i18n`]. No
//! module imports from its own layer or one above (`crate/tests/layers.rs`, which reads both
//! crates' sources as one layering).
//!
//! Invalid input is rejected at the boundary with [`Error`]; past it, the core cannot fail.

pub mod clock;
pub mod decode;
pub mod error;
pub mod i18n;
pub mod likesworld;
pub mod plot;
pub mod roofline;
pub mod sampling;
pub mod theory;
pub mod toy;
pub mod tree;
pub mod views;
#[cfg(all(target_arch = "wasm32", feature = "wasm"))]
pub mod wasm;

pub use error::Error;

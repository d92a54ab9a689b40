//! specdec: the Rust core of specdec-playground — the models on burn, the experiments that run
//! the decoding engine on them, their views, the CLI and the wasm binding — over `specdec-math`,
//! the lecture's mathematics without burn. The same code runs natively (tests, the `specdec`
//! CLI) and in the browser (the wasm modules). The module map follows the lecture:
//!
//! - The lecture's mathematics, from the crate `specdec-math` (no burn in it), re-exported under
//!   the same names: [`theory`], [`roofline`], [`sampling`], [`toy`], [`tree`], [`likesworld`],
//!   [`decode`] (the generic speculative-decoding engine over a `LanguageModel` trait, tested
//!   exactly on the toy LM), [`error`], [`clock`], [`plot`], [`i18n`], and the analytic widgets'
//!   views (in [`views`]).
//! - [`model`]: the burn decoder (the target and drafts), its KV cache, weights and evaluation —
//!   burn, with no decoding loop.
//! - [`lab`]: the LikesWorld experiments, the one room that joins the engine and the models.
//! - [`views`]: one function per model widget, turning results into numbers + SVG, beside the
//!   analytic widgets' views re-exported from `specdec-math`.
//! - `wasm` (wasm32 only): the thin binding layer, the only module that knows JavaScript exists.
//!
//! The layers, top to bottom: `bin/` and `wasm` → [`views`] → [`lab`] → [`decode`] (no burn)
//! and [`model`] (no decoding loop) → [`plot`], [`roofline`], [`toy`], [`likesworld`] →
//! [`sampling`], [`tree`], [`theory`] → [`error`], [`clock`] → [`i18n`]. No module imports from
//! its own layer or one above (`tests/layers.rs`, which reads both crates as one layering, and
//! checks that `specdec-math`'s dependency tree has no burn); `decode` and `model` never import each other,
//! and `lab` is where they are joined (the views above only hand the loaded models over and draw
//! the engine's traces).
//!
//! Invalid input is rejected at the boundary with [`Error`]; past it, the core cannot fail.

pub use specdec_math::{
    clock, decode, error, i18n, likesworld, plot, roofline, sampling, theory, toy, tree,
};

pub mod lab;
pub mod model;
pub mod views;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use error::Error;

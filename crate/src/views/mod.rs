//! One function per page widget: validated parameters in, numbers and SVG out. Three files hold
//! figures only: [`hidden`] (the hidden-state drafts' and the §6 table's, for the decoding
//! widget), [`load`] (the decoding widget's speedup against the batch, with its caption) and
//! [`training`] (the loss curve `specdec train` writes). The analytic widgets' views (theory,
//! roofline, exactness, exercises, multi-draft, tree, choose) are `specdec_math::views`,
//! re-exported here under the same names. [`menus`] is no view: what the model widgets' selects
//! offer (it stands for the lecture's `menus` here, and uses it).
//!
//! Parameters are plain serde structs with a default for every field, so a widget, an embed
//! URL or a test can give only what it changes. Each `*_view` validates first (returning the
//! core's [`Error`](crate::Error) for a bad value) and then cannot fail. The wasm layer only
//! converts these structs to and from JavaScript.
//!
//! A view computes nothing of its own: the model widgets' experiments are one call into
//! [`crate::lab`] (the decoding widget's whole [`crate::lab::Experiment`] is its parameters); the view then turns the result into the numbers the
//! widget shows and the figures, in the page's language.

pub use specdec_math::views::*;

pub mod boost;
pub mod choose_here;
pub mod decoding;
pub mod hidden;
pub mod likesworld;
pub mod load;
pub mod measured;
pub mod menus;
pub mod modelfree;
pub mod training;
pub mod treepaths;

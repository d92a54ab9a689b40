//! One function per analytic widget: validated parameters in, numbers and SVG out. The model
//! widgets' views are `specdec::views`, which re-exports these beside its own. [`menus`] is no
//! view: what the analytic widgets' selects offer.
//!
//! Parameters are plain serde structs with a default for every field, so a widget, an embed
//! URL or a test can give only what it changes. Each `*_view` validates first (returning the
//! core's [`Error`](crate::Error) for a bad value) and then cannot fail. A view computes nothing
//! of its own: it calls the core modules, then turns the result into the numbers the widget
//! shows and the figures, in the page's language.

/// The seeds the page offers: every u32, which a JS number holds exactly (the core takes any u64).
pub const SEED: crate::error::Range = crate::error::Range::new("seed", 0.0, u32::MAX as f64);

pub mod choose;
pub mod exactness;
pub mod exercises;
pub mod menus;
pub mod multidraft;
pub mod roofline;
pub mod theory;
pub mod tree;

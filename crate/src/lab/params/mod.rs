//! The vocabulary of the LikesWorld experiments, and the leaf of `lab/`: it imports no other
//! room of `lab/`, and every experiment, the CLI, the wasm exports and the page (through
//! `presets`) read their parameters from here.
//!
//! - [`ranges`]: every range and default, declared once, and the typed texts they check (a tree
//!   configuration, a list of γ);
//! - [`choices`]: the named choices (drafts, what proposes, tree kinds, verifications), each
//!   parsed and listed by one mechanism ([`crate::error::Named`]);
//! - [`hidden`]: the drafts on the target's hidden states (which draft, its tree, how it is
//!   verified), their experiments' and the §6 table's parameters, and what a step-through runs;
//! - [`experiments`]: the [`Experiment`] enum the decoding widget and the CLI run, with each
//!   experiment's parameters and their checks; [`timed`] the wall-clock experiments' parameters;
//! - [`suite`]: the benchmark's experiments.

pub mod choices;
pub mod experiments;
pub mod hidden;
pub mod ranges;
pub mod suite;
pub mod timed;

pub use choices::*;
pub use experiments::*;
pub use hidden::*;
pub use ranges::*;
pub use suite::bench_suite;
pub use timed::*;

//! Drafts that sit on the target's own hidden states (lecture §5.1, §5.2, §4.7): Medusa's heads,
//! EAGLE's one-layer feature draft with a static tree, EAGLE-2's dynamic tree, and EAGLE trained
//! with the training-time test. Every one is lossless: the target verifies each proposal in one
//! call (VerifyGreedy, or multi-step speculative sampling on a sampled dynamic tree), and that
//! same call yields the features the next proposal reads, so no separate draft pass over the
//! context exists.
//!
//! Both drafts read the *trained* target's features. On a widened target (`model::widen`) each
//! unit of the feature is replicated r times in place (a function-preserving map), so the drafts
//! read one copy of each: their outputs are the same as on the trained target and their cost
//! stays a draft's (a one-layer draft on a 40-layer LLM costs ≈ 1/40 of it; widened with the
//! 2-layer target it would cost half of it, which is not the regime the lecture describes).
//! They run where the draft models run (`Models::draft_device`): beside a GPU target, on the CPU,
//! reading the features the target's calls read back, so that a proposal costs the draft's
//! arithmetic and not a GPU call's fixed cost (EAGLE's once per level of its tree).
//!
//! - [`drafts`]: the drafts loaded from the shipped weights, and small conversions;
//! - [`shapes`]: the static trees (sparse by calibrated rank accuracy, balanced) of a run;
//! - [`medusa`] and [`eagle`]: each draft's proposal (EAGLE's three trees);
//! - [`decode`]: a run ready to go ([`decode::Ready`]), the proposer of one generation, the
//!   decoding loop and the step-through;
//! - [`report`]: what a drafter did over some prompts; [`picture`]: one proposal drawn;
//!   [`trees`]: EAGLE-2's tree after each of several prompts, as token trees (`lab::paths`).
//!
//! The §6 table that compares them with the other methods is `lab::methods`.

pub mod decode;
pub mod drafts;
pub mod eagle;
pub mod medusa;
pub mod picture;
pub mod report;
pub mod shapes;
pub mod trees;

pub use decode::{decode, step_through, Ready};
pub use drafts::Drafts;
pub use picture::{picture, Pictured};
pub use report::{acceptance_by_depth, evaluate, HiddenReport};
pub use shapes::{RankTree, Shapes, TOP_K};

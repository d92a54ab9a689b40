//! The experiments: the one room where the decoding engine ([`crate::decode`]) meets the burn
//! models ([`crate::model`]). Below it the engine knows nothing of burn and the models nothing of
//! decoding loops; above it the views only draw what these functions return and the CLI only
//! prints it. Its files import each other without a cycle, from the vocabulary up:
//!
//! - [`params`]: the leaf — every experiment as a type ([`Experiment`]), every named choice and
//!   every range, declared once (the CLI, the wasm exports and the page all read these);
//! - [`lm`]: a burn decoder and its KV cache behind the engine's `LanguageModel` and `Batched`
//!   traits (each call feeds only what its cache lacks and keeps the prefix plus the accepted
//!   path);
//! - [`context`]: [`Lab`], what every experiment is handed (the models, the language of its
//!   reports, the caller's clock);
//! - [`generate`]: one generation or many with the three models, the target's own greedy
//!   reference, a method in the lecture's words;
//! - [`acceptance`]: acceptance by token kind (demo 03.1) and the next-token view of one world;
//! - [`decoding`]: greedy chains and trees against the target's own output (demos 03.2, 04.3),
//!   sampling with its calibration test (03.3), naive vs MSS trees and the top-k distortion
//!   (04.5);
//! - [`speedup`]: measured c and wall-clock speedup against the formula (the two lanes), and the
//!   sweep over γ; [`load`]: the sweep over the batch (speculation under load), beside the
//!   published serving figures;
//! - [`modelfree`]: drafting without a model on the three workloads (demos 05.1–05.3);
//! - [`paths`]: a token tree verified per sequence (each path on its own copy of the cache) and
//!   tree-parallel (one call, the tree mask), timed over the batch (lecture §4.3, Figure 11);
//! - [`hidden`]: drafts on the target's own hidden states — Medusa's heads, EAGLE, EAGLE-2's
//!   dynamic tree, EAGLE with the training-time test (lecture §5.1–5.2, §4.7);
//! - [`learned`]: learned speculators (lecture §4.2) — a trained draft's chain, a boost-tuned
//!   pool's merged tree, coverage and wall clock; natively the corpus a draft distils from;
//! - [`methods`]: the §6 table, every method above on one wall-clock axis; [`auto`]: each
//!   method's device-best size for it and for the sweep over γ, from this device's T(k), c and
//!   vectors;
//! - [`engine_costs`]: T(k) and c as decoding pays them: decoding timed on a few calibration
//!   prompts by the target alone and by up to three chains, joined by the larger of the line
//!   and the bare curve's shape, the bare curve's rise past them (what [`auto`] and [`choose`]
//!   choose on);
//! - [`vectors`]: a draft's positional acceptance vector measured (A and B, greedy and MSS;
//!   Medusa and EAGLE a depth); [`sequoia`]: Sequoia's trees for it (and refined on the replayed
//!   decoding) beside every ⟨k₁,…⟩ of as many nodes (§4.7); [`choose`]: how to speculate on this
//!   device, from its measured T(k), c and vector, the choice then timed; [`race`]: decodings
//!   timed prompt by prompt in turn, each way in each place alike (what [`choose`] times);
//! - [`typical`]: Medusa's typical acceptance on draft B's chains and Medusa's tree over ε, τ
//!   gained and fidelity lost (§5.1); [`gallery`]: the gallery's bugs of the decoding loop worn by
//!   the target, caught by greedy identity (§6);
//! - [`experiment`]: [`experiment::run`], one call per experiment — the CLI's and the page's —
//!   and the sweeps the page shows.
//!
//! Prompts are held-out worlds ([`crate::likesworld::prompts`]); every random run takes a seed.

pub mod acceptance;
pub mod auto;
pub mod choose;
pub mod context;
pub mod decoding;
pub mod engine_costs;
pub mod experiment;
pub mod gallery;
pub mod generate;
pub mod hidden;
pub mod learned;
pub mod limit;
pub mod lm;
pub mod load;
pub mod methods;
pub mod modelfree;
pub mod params;
pub mod paths;
pub mod race;
pub mod sequoia;
pub mod speedup;
pub mod typical;
pub mod vectors;

pub use context::Lab;
pub use generate::{derive_seed, describe, run, run_all, target_greedy, BATCH_ROWS};
pub use params::{Draft, Experiment};

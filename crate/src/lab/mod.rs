//! The experiments: the one room where the decoding engine ([`crate::decode`]) meets the burn
//! models ([`crate::model`]). Below it the engine knows nothing of burn and the models nothing of
//! decoding loops; above it the views only draw what these functions return and the CLI only
//! prints it.
//!
//! - [`lm`]: a burn decoder and its KV cache behind the engine's `LanguageModel` and `Batched`
//!   traits (each call feeds only what its cache lacks and keeps the prefix plus the accepted path).
//! - [`params`]: the LikesWorld experiments as types — an [`Experiment`] enum with each
//!   experiment's parameters, the [`Draft`] enum, every range declared once (the CLI, the wasm
//!   exports and the page all read these).
//! - [`experiment`]: [`experiment::run`], one call per experiment, and the sweeps the page shows.
//! - [`acceptance`]: acceptance by token kind (demo 03.1) and the next-token view of one world.
//! - [`decoding`]: greedy chains and trees against the target's own output (demos 03.2, 04.3),
//!   sampling with its calibration test (03.3), naive vs MSS trees and the top-k distortion (04.5).
//! - [`speedup`]: measured c and wall-clock speedup against the formula (the two lanes).
//! - [`modelfree`]: drafting without a model on the three workloads (demos 05.1–05.3).
//!
//! Prompts are held-out worlds ([`crate::likesworld::prompts`]); every random run takes a seed.

pub mod acceptance;
pub mod decoding;
pub mod experiment;
pub mod lm;
pub mod modelfree;
pub mod params;
pub mod speedup;

pub use params::{Draft, Experiment};

use crate::clock::{Clock, Progress};
use crate::decode::batch::{generate_all, Job};
use crate::decode::chance::Seeded;
use crate::decode::engine::{generate, ChainRule, Config, Method, TreeRule};
use crate::decode::stats::Generation;
use crate::error::Error;
use crate::likesworld::{self, EOS};
use crate::model::Models;
use lm::{Batch, Cached};

/// A seed per (run, prompt, repeat), so that runs are independent and replayable.
pub fn derive_seed(seed: u64, i: usize, r: usize) -> u64 {
    let mut z = seed ^ ((i as u64) << 20) ^ (r as u64) ^ 0x9E37_79B9_7F4A_7C15;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One generation with the three models of `models` (the engine's drafts: [`Draft::index`]).
pub async fn run(
    models: &Models,
    method: Method,
    temperature: f64,
    prompt: &[u32],
    seed: u64,
    trace: bool,
    clock: Clock<'_>,
) -> Result<Generation, Error> {
    let d = &models.device;
    let mut target = Cached::new(&models.target, d, temperature);
    let mut drafts = [
        Cached::new(&models.draft_a, d, temperature),
        Cached::new(&models.draft_b, d, temperature),
    ];
    generate(
        &mut target,
        &mut drafts,
        prompt,
        &config(method, trace),
        &mut Seeded::new(seed),
        clock,
    )
    .await
}

/// Sequences decoded at once in a batched run (the target's cache for 256 rows of 64 slots is
/// 4 MB).
pub const BATCH_ROWS: usize = 1024;

/// Forgotten cache slots a batched run tolerates before compacting the cache.
const SLACK: usize = 16;

/// One generation per (prompt, seed) with `method`, all at once, every model call batched across
/// them (see [`crate::decode::batch`]): what [`run`] does for each, in far fewer model calls.
pub async fn run_all(
    models: &Models,
    method: Method,
    temperature: f64,
    jobs: Vec<(Vec<u32>, u64)>,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<Vec<Generation>, Error> {
    let d = &models.device;
    let batch = |m| Batch::new(m, d, temperature, SLACK);
    let jobs = jobs
        .into_iter()
        .map(|(prompt, seed)| Job {
            prompt,
            chance: Seeded::new(seed),
        })
        .collect();
    let models = vec![
        batch(&models.target),
        batch(&models.draft_a),
        batch(&models.draft_b),
    ];
    let config = config(method, false);
    generate_all(models, jobs, &config, BATCH_ROWS, clock, progress).await
}

/// How the experiments decode a LikesWorld prompt with `method`: up to the longest world, ending
/// at EOS.
fn config(method: Method, trace: bool) -> Config {
    Config {
        method,
        max_len: likesworld::MAX_LEN,
        eos: Some(EOS),
        trace,
    }
}

/// The target's own greedy output for each prompt (the reference greedy runs must equal).
pub async fn target_greedy(
    models: &Models,
    prompts: &[Vec<u32>],
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<Vec<Generation>, Error> {
    let jobs = prompts.iter().map(|p| (p.clone(), 0)).collect();
    let m = Method::Target { greedy: true };
    run_all(models, m, 1.0, jobs, clock, progress).await
}

/// A method in the lecture's words, for reports.
pub fn describe(method: &Method) -> String {
    let draft = |d: &usize| Draft::from_index(*d).name();
    match method {
        Method::Target { greedy } => format!(
            "target alone ({})",
            if *greedy { "greedy" } else { "sampling" }
        ),
        Method::Chain {
            draft: d,
            gamma,
            rule,
        } => match rule {
            ChainRule::Greedy => format!("draft {} chain γ {gamma}, greedy", draft(d)),
            ChainRule::Sample(v) => format!(
                "draft {} chain γ {gamma}, sampling ({})",
                draft(d),
                v.name()
            ),
        },
        Method::Expand {
            draft: d,
            widths,
            children,
            rule,
        } => {
            let w: Vec<String> = widths.iter().map(usize::to_string).collect();
            let how = match rule {
                TreeRule::Greedy => "greedy (top-k)".to_string(),
                r => format!(
                    "{} ({} children)",
                    if *r == TreeRule::Mss { "MSS" } else { "naive" },
                    children.name()
                ),
            };
            format!("draft {} tree ⟨{}⟩, {how}", draft(d), w.join(","))
        }
        Method::Merge { gamma, rule } => format!("merge of A and B, γ {gamma}, {rule:?}"),
    }
}

//! The parameters of the wall-clock experiments (demo 04.6 and demo 5 measured): what proposes,
//! its γ, the prompts and the batch, for one γ ([`Speedup`]), a list of γ ([`Sweep`]) or a list of
//! batches (speculation under load: [`Load`]).

use super::choices::{Draft, Proposing};
use super::ranges::{
    parse_batches, parse_gammas, tree_shape, BATCH, DEFAULT_BATCHES, DEFAULT_GAMMA, DEFAULT_SWEEP,
    DEFAULT_TREE, GAMMA, PROMPTS,
};
use crate::error::{Error, Text};

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Speedup {
    pub draft: Draft,
    pub gamma: u32,
    pub prompts: usize,
    /// Prompts decoded together ([`BATCH`]).
    pub batch: usize,
    /// A chain of γ, a greedy static tree of `config`, or a drafter without a model.
    pub shape: Proposing,
    pub config: String,
}

/// The speedup of one shape of drafting for every γ of `gammas` (a chain's length, or a model-free
/// drafter's tokens a step; a static tree has no γ to sweep).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Sweep {
    pub draft: Draft,
    /// The γ values, as typed: `1,2,3,4,6`.
    pub gammas: String,
    pub prompts: usize,
    pub batch: usize,
    pub shape: Proposing,
}

/// Speculation under load (lecture §1.2; the EAGLE-3 paper's serving figures): one chain or
/// static tree timed against the target alone at every batch of a list.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Load {
    pub draft: Draft,
    pub gamma: u32,
    /// The batches, as typed: `1,2,4,8,16,32`.
    pub batches: String,
    /// Prompts decoded at each batch (at least one whole batch: [`Load::at`]).
    pub prompts: usize,
    /// A chain of γ or a greedy static tree of `config` (a drafter without a model follows one
    /// request: it has no batch to sweep).
    pub shape: Proposing,
    pub config: String,
}

impl Default for Speedup {
    fn default() -> Self {
        Speedup {
            draft: Draft::B,
            gamma: DEFAULT_GAMMA,
            prompts: 20,
            batch: 1,
            shape: Proposing::Chain,
            config: DEFAULT_TREE.into(),
        }
    }
}

impl Speedup {
    pub fn check(&self) -> Result<(), Error> {
        GAMMA.check(f64::from(self.gamma))?;
        PROMPTS.check(self.prompts as f64)?;
        BATCH.check(self.batch as f64)?;
        unbatched_free(self.shape, self.batch)?;
        if self.shape == Proposing::Tree {
            tree_shape(&self.config)?;
        }
        Ok(())
    }
}

/// A drafter without a model proposes for one sequence at a time (its indices and Jacobi's
/// window follow one request): it runs at batch 1 only.
fn unbatched_free(shape: Proposing, batch: usize) -> Result<(), Error> {
    if shape.free().is_some() && batch > 1 {
        return Err(Error::Unavailable {
            what: "batch",
            why: Text::new(
                format!(
                    "drafting without a model ({}) follows one request at a time: batch 1 only, not {batch}",
                    shape.name()
                ),
                format!(
                    "无模型起草（{}）一次只跟随一个请求：只能用批大小 1，不能用 {batch}",
                    shape.name()
                ),
            ),
        });
    }
    Ok(())
}

impl Default for Sweep {
    fn default() -> Self {
        Sweep {
            draft: Draft::B,
            gammas: DEFAULT_SWEEP.into(),
            prompts: 20,
            batch: 1,
            shape: Proposing::Chain,
        }
    }
}

impl Sweep {
    /// The γ list, checked: 1 to [`SWEEP_GAMMAS`] values, each within [`GAMMA`], sorted and
    /// without repeats.
    pub fn check(&self) -> Result<Vec<u32>, Error> {
        PROMPTS.check(self.prompts as f64)?;
        BATCH.check(self.batch as f64)?;
        unbatched_free(self.shape, self.batch)?;
        if self.shape == Proposing::Tree {
            return Err(Error::Unavailable {
                what: "drafting",
                why: Text::new(
                    "a static tree has no γ to sweep: choose a chain or a drafter without a model",
                    "静态树没有可扫描的 γ：请选链或无模型起草器",
                ),
            });
        }
        parse_gammas(&self.gammas)
    }

    /// The speedup experiment of one γ of the sweep.
    pub fn at(&self, gamma: u32) -> Speedup {
        Speedup {
            draft: self.draft,
            gamma,
            prompts: self.prompts,
            batch: self.batch,
            shape: self.shape,
            config: String::new(),
        }
    }
}

impl Default for Load {
    fn default() -> Self {
        Load {
            draft: Draft::B,
            // EAGLE-3's SGLang figures are for a chain of 3.
            gamma: 3,
            batches: DEFAULT_BATCHES.into(),
            prompts: 10,
            shape: Proposing::Chain,
            config: DEFAULT_TREE.into(),
        }
    }
}

impl Load {
    /// The batches, checked: 1 to [`super::LOAD_BATCHES`] values, each within [`BATCH`], sorted
    /// and without repeats; and the rest of the experiment as [`Speedup::check`] checks it.
    pub fn check(&self) -> Result<Vec<usize>, Error> {
        if self.shape.free().is_some() {
            return Err(Error::Unavailable {
                what: "drafting",
                why: Text::new(
                    format!(
                        "drafting without a model ({}) follows one request at a time, so it has no batch to sweep: choose a chain or a tree",
                        self.shape.name()
                    ),
                    format!(
                        "无模型起草（{}）一次只跟随一个请求，没有批大小可扫描：请选链或树",
                        self.shape.name()
                    ),
                ),
            });
        }
        let batches = parse_batches(&self.batches)?;
        self.at(batches[0]).check()?;
        Ok(batches)
    }

    /// The speedup experiment of one batch of the sweep: at least `batch` prompts, so that every
    /// batch decodes one whole batch at least.
    pub fn at(&self, batch: usize) -> Speedup {
        Speedup {
            draft: self.draft,
            gamma: self.gamma,
            prompts: self.prompts.max(batch),
            batch,
            shape: self.shape,
            config: self.config.clone(),
        }
    }

    /// The held-out prompts the sweep reads: enough for its largest batch.
    pub fn prompts_needed(&self) -> Result<usize, Error> {
        let batches = self.check()?;
        Ok(self.at(*batches.last().expect("a checked list")).prompts)
    }
}

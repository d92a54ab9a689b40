//! The parameters of the experiments with drafts on the target's hidden states (lecture
//! §5.1–5.2, §4.7) and of the §6 table: which draft, its node budget, depth and heads, and how
//! its proposals are verified.

use super::choices::{Drafter, HiddenMethod, HiddenSpec, Verification};
use super::ranges::{BUDGET, DEFAULT_BUDGET, DEFAULT_DEPTH, DEPTH, HEADS, PROMPTS};
use crate::error::Error;
use crate::model::medusa::MAX_HEADS;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct HiddenRun {
    pub method: HiddenMethod,
    /// Nodes verified per call at most.
    pub budget: usize,
    /// Tree depth (EAGLE).
    pub depth: usize,
    /// Medusa's heads.
    pub heads: usize,
    pub verify: Verification,
    pub prompts: usize,
    pub seed: u64,
}

impl Default for HiddenRun {
    fn default() -> Self {
        HiddenRun {
            method: HiddenMethod::Eagle2,
            budget: DEFAULT_BUDGET,
            depth: DEFAULT_DEPTH,
            heads: MAX_HEADS,
            verify: Verification::Greedy,
            prompts: 30,
            seed: 0,
        }
    }
}

impl HiddenRun {
    pub fn drafter(&self) -> Drafter {
        self.method.drafter(self.depth, self.heads)
    }

    /// The run: the drafter, the budget and the verification.
    pub fn spec(&self) -> HiddenSpec {
        HiddenSpec {
            drafter: self.drafter(),
            budget: self.budget,
            verification: self.verify,
        }
    }

    pub(super) fn check(&self) -> Result<(), Error> {
        PROMPTS.check(self.prompts as f64)?;
        DEPTH.check(self.depth as f64)?;
        HEADS.check(self.heads as f64)?;
        self.spec().check()
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct MethodsRun {
    pub budget: usize,
    pub prompts: usize,
}

impl Default for MethodsRun {
    fn default() -> Self {
        MethodsRun {
            budget: DEFAULT_BUDGET,
            prompts: 10,
        }
    }
}

impl MethodsRun {
    pub(super) fn check(&self) -> Result<(), Error> {
        PROMPTS.check(self.prompts as f64)?;
        BUDGET.check(self.budget as f64).map(|_| ())
    }
}

//! Speculation under load (lecture §1.2, §2.5; issue 34): one chain or static tree timed against
//! the target alone at every batch of a list, as [`super::speedup::speedup`] times one batch.
//! At batch B every call feeds B rows: the larger B, the more a step computes for every weight
//! byte it reads, the nearer it is to compute-bound, and the less a verification of γ + 1 tokens
//! is "free" — so the speedup falls with the batch. Serving systems report exactly that, and
//! [`PUBLISHED`] holds their figures (the EAGLE-3 paper's) to be set beside this device's.
//!
//! A row is the batch's [`SpeedupReport`], whose time per output token, plain and speculative, is
//! the wall time over every output token of the batch's prompts (the inverse of throughput).

use super::context::Lab;
use super::params::{Load, Proposing};
use super::speedup::{speedup, SpeedupReport};
use crate::clock::Progress;
use crate::error::Error;
use crate::i18n::Lang;

/// One serving system's published speedups against the batch: (batch, low, high) — a single
/// figure has low = high; "≈ 1.3–1.4" is the range it is quoted as.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Published {
    /// The serving system, as the paper names it.
    pub system: &'static str,
    /// The GPU it ran on, where the figures name one.
    pub gpu: Option<&'static str>,
    /// Drafted tokens a step: a chain of this length.
    pub chain: u32,
    pub points: &'static [(f64, f64, f64)],
}

/// The EAGLE-3 paper's serving figures (lecture §2.11's table; `SPEC.md` §2.11): SGLang on an
/// H100 with a chain of 3, 1.81× at batch 2 falling to ≈ 1.3–1.4× at batch 64; vLLM with a chain
/// of 2, 1.75× at batch 2 to 1.01× at batch 56.
pub const PUBLISHED: [Published; 2] = [
    Published {
        system: "SGLang",
        gpu: Some("H100"),
        chain: 3,
        points: &[(2.0, 1.81, 1.81), (64.0, 1.3, 1.4)],
    },
    Published {
        system: "vLLM",
        gpu: None,
        chain: 2,
        points: &[(2.0, 1.75, 1.75), (56.0, 1.01, 1.01)],
    },
];

impl Published {
    /// "published (EAGLE-3 paper), H100/SGLang, chain of 3", in `lang`.
    pub fn label(&self, lang: Lang) -> String {
        let on = match self.gpu {
            Some(gpu) => format!("{gpu}/{}", self.system),
            None => self.system.to_string(),
        };
        match lang {
            Lang::En => format!("published (EAGLE-3 paper), {on}, chain of {}", self.chain),
            Lang::Zh => format!("已发表（EAGLE-3 论文），{on}，长 {} 的链", self.chain),
        }
    }
}

/// The speedup against the batch, beside the published serving figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LoadReport {
    /// What proposes, in the lecture's words.
    pub method: String,
    pub backend: &'static str,
    pub shape: Proposing,
    pub gamma: u32,
    pub target_width: usize,
    /// One row per batch, in increasing batch (without the lanes).
    pub rows: Vec<SpeedupReport>,
    pub published: &'static [Published],
}

impl LoadReport {
    /// The rows of the smallest and the largest batch.
    pub fn ends(&self) -> (&SpeedupReport, &SpeedupReport) {
        let first = self
            .rows
            .first()
            .expect("a sweep measures at least one batch");
        (first, self.rows.last().expect("idem"))
    }
}

/// Every batch of `spec` measured as [`speedup`] measures one, on the first prompts of `prompts`
/// (at least [`Load::prompts_needed`] of them).
pub async fn load(
    lab: Lab<'_>,
    spec: &Load,
    prompts: &[Vec<u32>],
    progress: Progress<'_>,
) -> Result<LoadReport, Error> {
    let batches = spec.check()?;
    // Each batch reports one unit per group of prompts, as `speedup` counts them.
    let units: Vec<usize> = batches
        .iter()
        .map(|&b| spec.at(b).prompts.div_ceil(b))
        .collect();
    let total = units.iter().sum();
    let mut done = 0;
    let mut rows = Vec::with_capacity(batches.len());
    for (&batch, &n) in batches.iter().zip(&units) {
        let at = spec.at(batch);
        let mut tell = |d: usize, _: usize| progress(done + d, total);
        let mut run = speedup(lab, &at, &prompts[..at.prompts], &mut tell).await?;
        run.plain_lane.clear();
        run.speculative_lane.clear();
        done += n;
        rows.push(run);
    }
    let first = &rows[0];
    Ok(LoadReport {
        method: first.method.clone(),
        backend: first.backend,
        shape: spec.shape,
        gamma: spec.gamma,
        target_width: first.target_width,
        published: &PUBLISHED,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_figures_are_the_papers_and_fall_with_the_batch() {
        let [sglang, vllm] = PUBLISHED;
        assert_eq!(sglang.points, &[(2.0, 1.81, 1.81), (64.0, 1.3, 1.4)]);
        assert_eq!(vllm.points, &[(2.0, 1.75, 1.75), (56.0, 1.01, 1.01)]);
        for p in PUBLISHED {
            let (first, last) = (p.points[0], p.points[p.points.len() - 1]);
            assert!(last.0 > first.0 && last.2 < first.1, "{p:?}");
        }
        assert_eq!(
            sglang.label(Lang::En),
            "published (EAGLE-3 paper), H100/SGLang, chain of 3"
        );
        assert_eq!(
            vllm.label(Lang::Zh),
            "已发表（EAGLE-3 论文），vLLM，长 2 的链"
        );
    }
}

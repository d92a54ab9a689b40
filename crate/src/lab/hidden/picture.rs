//! One proposal of a draft on the target's hidden states, drawn for the page: its tree, each
//! node's confidence and depth (Medusa: the head), and which nodes the target's own greedy
//! output accepts.

use super::decode::{Proposer, Ready};
use crate::decode::chance::Seeded;
use crate::decode::{LanguageModel, Speculation};
use crate::error::Error;
use crate::lab::context::Lab;
use crate::lab::generate::target_greedy;
use crate::lab::lm::Cached;
use crate::lab::params::Verification;
use crate::likesworld;

/// One proposal drawn for the page: its tree, each node's draft confidence (the product of the
/// draft's probabilities along its path) and depth (Medusa: the head that proposed it), and
/// which nodes the target's greedy verification accepts.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Pictured {
    pub method: String,
    /// The context's last few tokens, then the tree hangs off the last.
    pub context: Vec<u32>,
    pub tokens: Vec<u32>,
    pub parents: Vec<Option<usize>>,
    pub values: Vec<f64>,
    pub depths: Vec<usize>,
    pub accepted: Vec<bool>,
}

/// `drafter`'s greedy proposal after `prompt` and the first `after` tokens of the target's own
/// greedy output (at least 1: the first call yields the prompt's features), with the nodes that
/// output accepts.
pub async fn picture(
    lab: Lab<'_>,
    ready: &Ready<'_>,
    prompt: &[u32],
    after: usize,
) -> Result<Pictured, Error> {
    let spec = ready.verified_by(Verification::Greedy);
    spec.check()?;
    let (models, drafts) = (lab.models, ready.drafts);
    let device = &models.device;
    let clock_zero = &|| 0.0;
    let own = target_greedy(models, &[prompt.to_vec()], clock_zero, &mut |_, _| {}).await?;
    let output = &own[0].output;
    let after = after.clamp(1, output.len().saturating_sub(1).max(1));
    let ctx: Vec<u32> = [prompt, &output[..after.min(output.len())]].concat();
    let mut target = Cached::with_features(&models.target, device, 1.0, drafts.width());
    target
        .score(&ctx[..ctx.len() - 1], &Speculation::default())
        .await?;
    let feats = target.features(&ctx);
    let limit = likesworld::MAX_LEN.saturating_sub(ctx.len() + 1);
    let mut values = Vec::new();
    let mut proposer = Proposer::new(ready, spec);
    let mut chance = Seeded::new(0);
    let proposal = proposer
        .propose(&ctx, &feats, limit, &mut chance, &mut values)
        .await?;
    let tree = proposal.tree;
    let truth = &output[after.min(output.len())..];
    let depths = tree.depths();
    let accepted = (0..tree.len())
        .map(|n| {
            let path = tree.path_to(n);
            path.len() <= truth.len() && path.iter().zip(truth).all(|(&a, &t)| tree.tokens[a] == t)
        })
        .collect();
    Ok(Pictured {
        method: spec.describe(lab.lang),
        context: ctx[ctx.len().saturating_sub(6)..].to_vec(),
        tokens: tree.tokens,
        parents: tree.parents,
        values,
        depths,
        accepted,
    })
}

//! Medusa's proposal (lecture §5.1): its heads read the target's feature after the context's
//! second-to-last token, each guesses one position further ahead, independently, and a static
//! tree of rank paths picks which of their guesses are verified.

use super::drafts::{dists, floats_tensor, ranked};
use super::shapes::RankTree;
use crate::decode::{Proposal, Source};
use crate::error::Error;
use crate::likesworld::{self, EOS};
use crate::model::floats;
use crate::model::medusa::Medusa;
use burn::tensor::Device;

/// A proposal from Medusa's heads on the feature after the context's second-to-last token.
pub async fn propose(
    medusa: &Medusa,
    feature: &[f32],
    shape: &RankTree,
    limit: usize,
    device: &Device,
    values: &mut Vec<f64>,
) -> Result<Proposal, Error> {
    let d = feature.len();
    let heads = medusa.forward(floats_tensor(feature.to_vec(), [1, 1, d], device));
    let mut dists_of = Vec::with_capacity(heads.len());
    for logits in heads {
        dists_of.push(dists(&floats(logits).await?, likesworld::VOCAB).remove(0));
    }
    let lists: Vec<Vec<u32>> = dists_of.iter().map(|q| ranked(q)).collect();
    let mut proposal = Proposal::empty();
    values.clear();
    let mut at_of = vec![0usize; shape.ranks.len()];
    for n in 0..shape.ranks.len() {
        let depth = shape.depth(n);
        if depth > limit || depth > lists.len() {
            continue;
        }
        let at = shape.parents[n].map_or(0, |p| at_of[p]);
        if shape.parents[n].is_some() && (at == 0 || proposal.tree.tokens[at - 1] == EOS) {
            continue; // its parent was cut by the limit, or is <eos>, which nothing follows
        }
        let token = lists[depth - 1][shape.ranks[n]];
        let (node, new) = proposal.offer(at, token, Source::Draft);
        if new {
            // The heads guess independently: a path's confidence is the product of its heads'.
            let parent = at.checked_sub(1).map_or(1.0, |p| values[p]);
            values.push(parent * dists_of[depth - 1][token as usize]);
        }
        at_of[n] = node + 1;
    }
    Ok(proposal)
}

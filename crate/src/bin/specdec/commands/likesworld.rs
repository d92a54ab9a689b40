//! `likesworld <experiment>`: the router of the LikesWorld commands, each routed once — the
//! models' accuracy and the widened target's check ([`super::models`]), the decoding experiments
//! ([`super::decoding`], [`super::speedup`]) and the drafts on the target's hidden states
//! ([`super::hidden`]).

use super::{decoding, hidden, models, speedup};
use crate::opts::{Opts, Report, Usage};

const KNOWN: &str = "accuracy, acceptance, greedy, sample, tree, stochastic, speedup, widen-check, medusa, eagle, methods";

pub fn route(o: &mut Opts) -> Result<Report, Usage> {
    if o.words.len() != 1 {
        return Err(Usage(format!(
            "likesworld: expected one of {KNOWN}, got {:?}",
            o.words.join(" ")
        )));
    }
    match o.words[0].as_str() {
        "accuracy" => models::accuracy(o),
        "widen-check" => models::widen_check(o),
        "acceptance" => decoding::acceptance(o),
        "greedy" => decoding::greedy(o),
        "sample" => decoding::sample(o),
        "tree" => decoding::tree(o),
        "stochastic" => decoding::stochastic(o),
        "speedup" => speedup::speedup(o),
        "medusa" => hidden::medusa(o),
        "eagle" => hidden::eagle(o),
        "methods" => hidden::methods(o),
        w => Err(Usage(format!(
            "likesworld: unknown experiment {w:?} (known: {KNOWN})"
        ))),
    }
}

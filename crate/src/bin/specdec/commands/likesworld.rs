//! `likesworld <experiment>`: the router of the LikesWorld commands, each routed once — the
//! models' accuracy and the widened target's check ([`super::models`]), the decoding experiments
//! ([`super::decoding`], [`super::speedup`]) and the drafts on the target's hidden states
//! ([`super::hidden`]), the boost-tuned pool ([`super::learned`]), per-sequence against tree-parallel verification
//! ([`super::treepaths`]), Sequoia's trees ([`super::sequoia`]) and typical acceptance
//! ([`super::typical`]), and the gallery's loop bugs ([`super::gallery`]).

use super::{decoding, gallery, hidden, learned, models, sequoia, speedup, treepaths, typical};
use crate::opts::{Opts, Report, Usage};

/// A command: its options in, its report out.
type Command = fn(&mut Opts) -> Result<Report, Usage>;

/// Every `likesworld` command by its word: the router and the list of known words both read it.
const COMMANDS: [(&str, Command); 17] = [
    ("accuracy", models::accuracy),
    ("acceptance", decoding::acceptance),
    ("greedy", decoding::greedy),
    ("sample", decoding::sample),
    ("tree", decoding::tree),
    ("stochastic", decoding::stochastic),
    ("speedup", speedup::speedup),
    ("widen-check", models::widen_check),
    ("medusa", hidden::medusa),
    ("eagle", hidden::eagle),
    ("methods", hidden::methods),
    ("boost", learned::boost),
    ("tree-vs-paths", treepaths::tree_vs_paths),
    ("sequoia", sequoia::sequoia),
    ("choose", sequoia::choose),
    ("typical", typical::typical),
    ("gallery", gallery::likesworld),
];

pub fn route(o: &mut Opts) -> Result<Report, Usage> {
    let known = || COMMANDS.map(|(w, _)| w).join(", ");
    let Some(word) = o.word() else {
        return Err(Usage(format!("likesworld: expected one of {}", known())));
    };
    match COMMANDS.iter().find(|(w, _)| *w == word) {
        Some((_, command)) => command(o),
        None => Err(Usage(format!(
            "likesworld: unknown experiment {word:?} (known: {})",
            known()
        ))),
    }
}

//! `likesworld tree-vs-paths`: a token tree (or EAGLE-2's dynamic tree, one per prompt) verified per sequence (each root-to-leaf path its own
//! sequence on its own copy of the prompt's cache) and tree-parallel (one call, the tree mask,
//! one cache), at several batch sizes, timed (lecture §4.3; SpecInfer's Figure 11). The numbers
//! are `lab::paths::tree_vs_paths`'s, the page's.

use super::options::{models, return_if_drafts_on, value};
use crate::opts::{row, Opts, Report, Usage};
use burn::tensor::read_sync;
use specdec::clock::native_clock;
use specdec::i18n::Lang;
use specdec::lab::paths::{self, parse_batches, parse_source, DEFAULT_BATCHES, PROMPTS};
use specdec::lab::Lab;

/// `--config C --batch 1,2,4,8,16,32 [--prompts P]` on `--backend`, `--target-width`.
pub fn tree_vs_paths(o: &mut Opts) -> Result<Report, Usage> {
    let config = o.required("config")?;
    // The tree and the batch list are checked before any model loads.
    parse_source(&config)?;
    let batches = parse_batches(&o.take("batch").unwrap_or_else(|| DEFAULT_BATCHES.into()))?;
    let largest = batches.last().copied().unwrap_or(1);
    let prompts = o.count(&PROMPTS, Some(largest.min(PROMPTS.max as usize)))?;
    return_if_drafts_on(
        o,
        "it times the target's calls alone (EAGLE-2's trees are grown before the clock starts)",
    )?;
    let m = models(o)?;
    o.finish()?;
    let clock = native_clock();
    let lab = Lab::new(&m, Lang::En, &clock);
    let r = read_sync(paths::tree_vs_paths(
        lab,
        &config,
        &batches,
        prompts,
        &mut |_, _| {},
    ))?;
    let mut rows = vec![
        row(
            "tree",
            format!(
                "{}: {} nodes, {} paths of {} tokens in all (longest {}){}; target ×{} on {}",
                r.tree,
                r.nodes,
                r.paths,
                r.path_tokens,
                r.longest_path,
                if r.prompt_trees.is_some() {
                    ", a tree per prompt: means over the prompts"
                } else {
                    ""
                },
                r.target_width,
                r.backend
            ),
        ),
        row(
            "batch: tokens tree / paths, tree µs / paths µs",
            "ratio = paths / tree, verdicts",
        ),
    ];
    for x in &r.rows {
        rows.push(row(
            &format!("batch {}", x.batch),
            format!(
                "{} / {} tokens, {:.0} / {:.0} µs (IQR {:.0} / {:.0}), ratio {:.2}, {}",
                x.tokens_tree,
                x.tokens_paths,
                x.tree_us,
                x.paths_us,
                x.tree_iqr_us,
                x.paths_iqr_us,
                x.ratio,
                if x.identical {
                    "identical"
                } else {
                    "DIFFERENT"
                }
            ),
        ));
    }
    rows.push(row(
        "max |Δp| between the ways",
        format!(
            "{:.1e} (each time the median of at least {} runs)",
            r.max_abs_diff, r.repeats
        ),
    ));
    Ok(Report {
        json: value(&r),
        rows,
    })
}

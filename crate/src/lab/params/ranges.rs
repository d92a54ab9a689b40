//! Every range and default a LikesWorld experiment reads, declared once: the CLI's options, the
//! core's checks ([`super::Experiment::check`]) and the page's controls (through the `presets`
//! export, which hands these very constants over) all read them, so that changing a bound here
//! changes all three. Also the three texts a user types whose checks are ranges: a tree
//! configuration within [`NODE_BUDGET`] and [`TREE_DEPTH`] (or a tree by rank paths, as
//! Sequoia's are written: [`tree_shape`]), a list of γ and a list of batches.

use crate::decode::Shape;
use crate::error::{Error, Range, Text};
use crate::model::medusa::MAX_HEADS;
use crate::tree::parse_config;
use crate::tree::sequoia::Plan;

/// Draft tokens per call.
pub const GAMMA: Range = Range::new("gamma", 1.0, 16.0).shown_as("γ");
/// Held-out worlds decoded by one experiment.
pub const PROMPTS: Range = Range::new("prompts", 1.0, 1000.0);
/// Prompts decoded together in the speedup experiment (lecture §1.2: the batch that makes a
/// step compute-bound).
pub const BATCH: Range = Range::new("batch", 1.0, 64.0);
/// Samples per prompt.
pub const REPEATS: Range = Range::new("repeats", 1.0, 20.0);
/// The samples per prompt the page's slider offers: fewer than the core allows, since 200
/// prompts × 5 already take a while in a browser.
pub const PAGE_REPEATS: Range = Range::new("repeats", 1.0, 5.0);
/// A LikesWorld tree: at most this many nodes…
pub const NODE_BUDGET: usize = 64;
/// …and levels.
pub const TREE_DEPTH: Range = Range::new("tree depth", 1.0, 8.0).after("levels", "层");

/// The page's defaults: the prompts, γ and tree of an experiment unless told.
pub const DEFAULT_PROMPTS: usize = 50;
pub const DEFAULT_GAMMA: u32 = 4;
pub const DEFAULT_TREE: &str = "<2,2,1,1>";

/// The lecture's tree configurations (demo 04.3), beside any the user types.
pub const TREE_CONFIGS: [&str; 6] = [
    "<1,1,1,1>",
    "<2,1,1,1>",
    "<3,1,1,1>",
    "<1,3,1,1>",
    "<2,2,1,1>",
    "<2,2,2,2>",
];
/// γ values of demo 03.2, beside the user's.
pub const GAMMAS: [usize; 4] = [1, 2, 4, 6];

/// The γ values a sweep may list, at most.
pub const SWEEP_GAMMAS: usize = 8;
/// How many γ a sweep lists.
pub const SWEEP_LENGTH: Range = Range::new("#γ", 1.0, SWEEP_GAMMAS as f64);
/// The sweep's γ when none are given: demo 5's neighbourhood of the optimum.
pub const DEFAULT_SWEEP: &str = "1,2,3,4,6";

/// The batches a sweep over the batch may list, at most.
pub const LOAD_BATCHES: usize = 8;
/// How many batches a sweep over the batch lists.
pub const LOAD_LENGTH: Range = Range::new("#batches", 1.0, LOAD_BATCHES as f64);
/// The sweep over the batch's batches when none are given: the serving figures' range (EAGLE-3's
/// batch 2 to 64), up to 32.
pub const DEFAULT_BATCHES: &str = "1,2,4,8,16,32";

/// Node budgets of a draft on the target's hidden states (the §4.7 comparison runs 4, 8, 16 and
/// 32, the budgets the page offers: [`BUDGETS`]).
pub const BUDGET: Range = Range::new("budget", 1.0, 64.0).after("nodes", "个节点");
/// The budgets the page offers.
pub const BUDGETS: [usize; 4] = [4, 8, 16, 32];
/// The budget of a run unless told.
pub const DEFAULT_BUDGET: usize = 16;
/// Depths of an EAGLE tree.
pub const DEPTH: Range = Range::new("depth", 1.0, 12.0);
/// The depth a tree grows to unless told (EAGLE-2 on LikesWorld at 16 nodes: τ 3.98 at depth 6,
/// 4.18 at depth 10; deeper adds nothing, measured on 200 prompts).
pub const DEFAULT_DEPTH: usize = 10;
/// Medusa heads used: every head the shipped weights have, at most.
pub const HEADS: Range = Range::new("heads", 1.0, MAX_HEADS as f64);
/// The node budget of a step-through with a draft on the target's hidden states.
pub const STEP_BUDGET: usize = 16;

/// A LikesWorld tree configuration: within [`NODE_BUDGET`] and [`TREE_DEPTH`].
pub fn tree_widths(config: &str) -> Result<Vec<usize>, Error> {
    let widths = parse_config(config, NODE_BUDGET)?.widths().to_vec();
    TREE_DEPTH.check(widths.len() as f64)?;
    Ok(widths)
}

/// The prefix of a tree written node by node, by rank path (`ranks:1 2 1.1`: Sequoia's trees).
pub const RANKS_PREFIX: &str = "ranks:";

/// A tree configuration ⟨k₁,…⟩ ([`tree_widths`]) or a tree by rank paths after
/// [`RANKS_PREFIX`] (`ranks:1 2 1.1`), within [`NODE_BUDGET`] and [`TREE_DEPTH`].
pub fn tree_shape(config: &str) -> Result<Shape, Error> {
    let Some(labels) = config.trim().strip_prefix(RANKS_PREFIX) else {
        return tree_widths(config).map(Shape::Widths);
    };
    let plan = Plan::from_labels(labels)?;
    if plan.nodes() > NODE_BUDGET {
        return Err(Error::TooLarge {
            what: Text::new("the tree", "这棵树"),
            nodes: plan.nodes() as u64,
            budget: NODE_BUDGET,
        });
    }
    TREE_DEPTH.check(plan.depth() as f64)?;
    Ok(Shape::Levels(plan.levels()))
}

/// A list of γ such as `1,2,3,4,6` (spaces allowed; `，` as typed on a Chinese keyboard too):
/// each a whole number within [`GAMMA`], 1 to [`SWEEP_GAMMAS`] of them; sorted, repeats dropped.
pub fn parse_gammas(text: &str) -> Result<Vec<u32>, Error> {
    let list = parse_list(text, "γ list", &GAMMA, &SWEEP_LENGTH)?;
    Ok(list.into_iter().map(|g| g as u32).collect())
}

/// A list of batches such as `1,2,4,8,16,32`, read as [`parse_gammas`] reads γ: each within
/// [`BATCH`], 1 to [`LOAD_BATCHES`] of them; sorted, repeats dropped.
pub fn parse_batches(text: &str) -> Result<Vec<usize>, Error> {
    let list = parse_list(text, "batch list", &BATCH, &LOAD_LENGTH)?;
    Ok(list.into_iter().map(|b| b as usize).collect())
}

/// Whole numbers separated by commas, each within `each`, as many as `length` allows.
fn parse_list(
    text: &str,
    what: &'static str,
    each: &Range,
    length: &Range,
) -> Result<Vec<u64>, Error> {
    let bad = |en: &str, zh: &str| Error::Parse {
        what,
        text: text.chars().take(40).collect(),
        why: Text::new(en, zh),
    };
    let parts: Vec<&str> = text.split([',', '，']).collect();
    length.check(parts.len() as f64)?;
    let mut list = Vec::new();
    for part in parts {
        let part = part.trim();
        if part.is_empty() {
            return Err(bad(
                "expected whole numbers separated by commas, such as 1,2,4",
                "应为用逗号分隔的整数，例如 1,2,4",
            ));
        }
        // A whole number out of range (a negative one, or one too long for any integer type)
        // is named with the range.
        let digits = part.strip_prefix('-').unwrap_or(part);
        let whole = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        let v: i64 = match part.parse() {
            Ok(v) => v,
            Err(_) if whole => {
                let (shown, allowed) = (crate::error::shown(part), each.allowed_text());
                return Err(bad(
                    &format!("{shown} is out of range: {}", allowed.en),
                    &format!("{shown} 超出范围：{}", allowed.zh),
                ));
            }
            Err(_) => {
                return Err(bad(
                    "every value must be a whole number, such as 1,2,4",
                    "每个值都必须是整数，例如 1,2,4",
                ))
            }
        };
        each.check(v as f64)?;
        list.push(v as u64);
    }
    list.sort_unstable();
    list.dedup();
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heads_range_is_every_head_the_weights_have() {
        assert_eq!(HEADS.max as usize, MAX_HEADS);
        assert!(BUDGETS.iter().all(|&b| BUDGET.check(b as f64).is_ok()));
        assert!(BUDGETS.contains(&DEFAULT_BUDGET));
        assert!(DEPTH.check(DEFAULT_DEPTH as f64).is_ok());
    }

    #[test]
    fn a_batch_list_is_read_as_a_gamma_list_is_within_the_batchs_range() {
        assert_eq!(
            parse_batches(DEFAULT_BATCHES).unwrap(),
            [1, 2, 4, 8, 16, 32]
        );
        assert_eq!(parse_batches(" 8，2,2 ").unwrap(), [2, 8]);
        let e = |t: &str| parse_batches(t).unwrap_err().to_string();
        assert_eq!(e("1,0"), "batch = 0 is out of range: 1 ≤ batch ≤ 64");
        assert_eq!(e("2,65"), "batch = 65 is out of range: 1 ≤ batch ≤ 64");
        assert_eq!(e("-1,2"), "batch = -1 is out of range: 1 ≤ batch ≤ 64");
        assert!(e("1,,2").starts_with("bad batch list \"1,,2\": expected whole numbers"));
        assert!(e("1,x").contains("every value must be a whole number"));
        assert!(e("1,2.5").contains("every value must be a whole number"));
        // Too long for any integer type: still a whole number, out of range.
        assert!(
            e("2,99999999999999999999")
                .ends_with(": 99999999999999999999 is out of range: 1 ≤ batch ≤ 64"),
            "{}",
            e("2,99999999999999999999")
        );
        assert!(e("1,2,3,4,5,6,7,8,9").contains("#batches = 9"));
        // The γ list keeps its own name and bounds.
        assert!(parse_gammas("1,17")
            .unwrap_err()
            .to_string()
            .contains("gamma = 17"));
        assert!(parse_gammas("1,x")
            .unwrap_err()
            .to_string()
            .starts_with("bad γ list"));
    }
}

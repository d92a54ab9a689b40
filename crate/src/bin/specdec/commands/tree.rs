//! `tree`: token trees, merged from paths, expanded from a configuration (lecture §4.2–4.3) or
//! Sequoia's best for an acceptance vector (§4.7); `choose`: the hardware-aware choice of a chain
//! and a tree from the times of the target's calls.

use crate::opts::{row, Opts, Report, Usage};
use serde_json::json;
use specdec::roofline::profiles;
use specdec::tree::choose::{choose, Times};
use specdec::tree::sequoia::{self, Acceptance};
use specdec::tree::{parse_config, parse_paths, TokenTree, DEFAULT_NODE_BUDGET};

/// The node budget of an expanded tree.
const BUDGET: specdec::error::Range =
    specdec::error::Range::new("budget", 1.0, 100_000.0).after("nodes", "个节点");

pub fn cmd_tree(o: &mut Opts) -> Result<Report, Usage> {
    if o.flag("sequoia") {
        return cmd_sequoia(o);
    }
    match (o.take("paths"), o.take("config")) {
        (Some(_), Some(_)) => Err(Usage("tree: give --paths or --config, not both".into())),
        (None, None) => Err(Usage("tree: missing --paths or --config".into())),
        (None, Some(config)) => {
            let budget = o.count(&BUDGET, Some(DEFAULT_NODE_BUDGET))?;
            let tree = TokenTree::expand(&parse_config(&config, budget)?, "r");
            let (n, s) = (tree.speculated(), tree.sequence_tokens());
            Ok(Report {
                json: json!({"nodes": n, "sequence_tokens": s}),
                rows: vec![
                    row("nodes (without the root)", n),
                    row("tokens decoded path by path", s),
                    row("ratio", format!("{:.2}×", s as f64 / n as f64)),
                ],
            })
        }
        (Some(paths), None) => {
            let root = o.take("root");
            let tree = TokenTree::merge(&parse_paths(&paths)?, root.as_deref().unwrap_or("r"));
            let mut order = tree.linearize_dfs();
            if root.is_none() {
                order.remove(0);
            }
            let tokens: Vec<&str> = order
                .iter()
                .map(|&n| tree.nodes()[n].token.as_str())
                .collect();
            let depths = tree.depths(&order);
            let mask: Vec<Vec<u8>> = tree
                .tree_mask(&order)
                .iter()
                .map(|r| r.iter().map(|&b| u8::from(b)).collect())
                .collect();
            let mut rows = vec![
                row("order", tokens.join(" ")),
                row(
                    "depths",
                    depths
                        .iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
            ];
            for (t, r) in tokens.iter().zip(&mask) {
                rows.push(row(
                    &format!("mask {t}"),
                    r.iter()
                        .map(|&b| if b == 1 { "✓" } else { "·" })
                        .collect::<Vec<_>>()
                        .join(" "),
                ));
            }
            rows.push(row("nodes", tree.speculated()));
            rows.push(row("sequence tokens", tree.sequence_tokens()));
            Ok(Report {
                json: json!({"order": tokens, "depths": depths, "mask": mask, "nodes": tree.speculated(), "sequence_tokens": tree.sequence_tokens()}),
                rows,
            })
        }
    }
}

/// `tree --sequoia --acceptance P --budget N [--depth D]`: the best tree of N nodes.
fn cmd_sequoia(o: &mut Opts) -> Result<Report, Usage> {
    let p = Acceptance::parse(&o.required("acceptance")?)?;
    let budget = o.count(&sequoia::BUDGET, None)?;
    let depth = o.count(
        &sequoia::DEPTH,
        Some(budget.min(sequoia::DEPTH.max as usize)),
    )?;
    let plan = sequoia::sequoia(&p, budget, depth)?;
    let labels = plan.labels();
    Ok(Report {
        json: json!({
            "expected_tokens": plan.expected_tokens,
            "nodes": plan.nodes(),
            "depth": plan.depth(),
            "parents": plan.parents,
            "ranks": plan.ranks,
            "labels": labels,
            "levels": plan.levels(),
        }),
        rows: vec![
            row(
                "expected tokens a step",
                format!("{:.6}", plan.expected_tokens),
            ),
            row("nodes (without the root)", plan.nodes()),
            row("depth", plan.depth()),
            row("children per level", levels_text(&plan.levels())),
            row("nodes by rank path", labels.join(" ")),
        ],
    })
}

/// `[2] [2 1] [0 1 0]`: each level's children counts, node by node.
fn levels_text(levels: &[Vec<usize>]) -> String {
    levels
        .iter()
        .map(|l| {
            let counts: Vec<String> = l.iter().map(usize::to_string).collect();
            format!("[{}]", counts.join(" "))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `choose --acceptance P --times T(1),…,T(K) --draft-cost C`: the best chain and tree; with
/// `--device D` the times and c of a device's profile (`all`: every profile side by side).
pub fn cmd_choose(o: &mut Opts) -> Result<Report, Usage> {
    let p = Acceptance::parse(&o.required("acceptance")?)?;
    if o.peek("device").is_some() && o.peek("times").is_some() {
        return Err(Usage(
            "choose: give --times (and --draft-cost) or --device, not both".into(),
        ));
    }
    let Some(device) = o.take("device") else {
        let times = Times::parse(&o.required("times")?)?;
        let c = o.number("draft-cost", None)?;
        return one_choice(&p, &times, c);
    };
    if device != "all" {
        let d = profiles::profile(&device)?;
        let c = o.number("draft-cost", Some(d.draft_cost))?;
        let mut r = one_choice(&p, &d.times(), c)?;
        r.rows.insert(0, row("device", d.name.en.clone()));
        r.rows.push(row("source", d.source.en.clone()));
        r.json["device"] = json!(d.key);
        r.json["draft_cost"] = json!(c);
        return Ok(r);
    }
    let mut rows = Vec::new();
    let mut devices = Vec::new();
    // A c given applies to every device; else each its own.
    let given: Option<f64> = match o.take("draft-cost") {
        None => None,
        Some(t) => Some(t.trim().parse().map_err(|_| {
            Usage(format!(
                "choose: bad value for --draft-cost: {t:?} is not a valid number here"
            ))
        })?),
    };
    for d in profiles::profiles() {
        let c = given.unwrap_or(d.draft_cost);
        let times = d.times();
        let choice = choose(&p, &times, c)?;
        // A tree that takes every node the times cover: a larger one might pay still.
        let capped = choice.tree.nodes + 1 == times.max_k();
        let (chain, tree) = (&choice.chain, &choice.tree);
        rows.push(row(
            &d.name.en,
            format!(
                "c {:.3}: chain γ {} {:.2}×, tree {}{} nodes depth {} {:.2}×",
                c,
                chain.gamma,
                chain.predicted_speedup,
                tree.nodes,
                if capped { "+" } else { "" },
                tree.depth,
                tree.predicted_speedup
            ),
        ));
        devices.push(json!({
            "device": d.key, "draft_cost": c, "chain": chain, "capped": capped,
            "tree": {"nodes": tree.nodes, "depth": tree.depth, "expected_tokens": tree.expected_tokens,
                     "predicted_speedup": tree.predicted_speedup},
        }));
    }
    Ok(Report {
        json: json!({ "devices": devices }),
        rows,
    })
}

fn one_choice(p: &Acceptance, times: &Times, c: f64) -> Result<Report, Usage> {
    let choice = choose(p, times, c)?;
    let (chain, tree) = (&choice.chain, &choice.tree);
    let mut rows = vec![
        row(
            "chain",
            if chain.gamma == 0 {
                "none pays: plain decoding is faster".to_string()
            } else {
                format!(
                    "γ {}: {:.3} tokens a step, predicted {:.3}×",
                    chain.gamma, chain.expected_tokens, chain.predicted_speedup
                )
            },
        ),
        row(
            "tree",
            if tree.nodes == 0 {
                "none pays: plain decoding is faster".to_string()
            } else {
                format!(
                    "{} nodes, depth {}: {:.3} tokens a step, predicted {:.3}×",
                    tree.nodes, tree.depth, tree.expected_tokens, tree.predicted_speedup
                )
            },
        ),
    ];
    if tree.nodes > 0 {
        let plan = sequoia::Plan {
            parents: tree.parents.clone(),
            ranks: tree.ranks.clone(),
            expected_tokens: tree.expected_tokens,
        };
        rows.push(row("the tree by rank path", plan.labels().join(" ")));
    }
    Ok(Report {
        json: json!({
            "chain": chain,
            "tree": {
                "nodes": tree.nodes,
                "depth": tree.depth,
                "expected_tokens": tree.expected_tokens,
                "predicted_speedup": tree.predicted_speedup,
                "parents": tree.parents,
                "ranks": tree.ranks,
            },
        }),
        rows,
    })
}

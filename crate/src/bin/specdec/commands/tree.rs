//! `tree`: token trees, merged from paths or expanded from a configuration (lecture §4.2–4.3).

use crate::opts::{row, Opts, Report, Usage};
use serde_json::json;
use specdec::tree::{parse_config, parse_paths, TokenTree, DEFAULT_NODE_BUDGET};

/// The node budget of an expanded tree.
const BUDGET: specdec::error::Range =
    specdec::error::Range::new("budget", 1.0, 100_000.0).after("nodes", "个节点");

pub fn cmd_tree(o: &mut Opts) -> Result<Report, Usage> {
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

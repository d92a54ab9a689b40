//! The token-tree builder (lecture §4.2–4.3, exercise 5): type paths to merge or an expansion
//! configuration; see the tree, its depth-first order with depths, and the topology-aware mask.

use crate::error::{Error, Range, Text};
use crate::i18n::Lang;
use crate::plot::diagrams::{draw_tree, ramp, Grid};
use crate::plot::{colors, ellipsize, figure_width, render, text_width, wrap, Align};
use crate::tree::{parse_config, parse_paths, TokenTree};

/// Nodes of a typed tree.
pub const BUDGET: Range = Range::new("budget", 1.0, 512.0);
/// The node highlighted: an index in DFS order, the root 0 (one past the tree's last highlights
/// none).
pub const HIGHLIGHT: Range = Range::new("highlight", 0.0, BUDGET.max);

crate::error::choices! {
    /// How the widget builds its tree: by merging the sequences typed, or by expanding a
    /// configuration ⟨k₁,…⟩ (lecture §4.2).
    pub enum TreeMode("tree mode") {
        Paths = "paths",
        Config = "config",
    }
}

impl TreeMode {
    /// The mode as the widget's menu says it.
    pub fn label(self, lang: Lang) -> &'static str {
        match self {
            TreeMode::Paths => lang.pick("sequences (merge)", "序列（合并）"),
            TreeMode::Config => lang.pick("configuration (expand)", "配置（展开）"),
        }
    }
}

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct TreeParams {
    pub mode: TreeMode,
    pub paths: String,
    pub config: String,
    pub root: String,
    /// Largest tree the widget draws (nodes without the root).
    pub budget: u32,
    /// A node (index in DFS order) whose root path and mask row are highlighted.
    pub highlight: Option<usize>,
    /// The language of the figures' texts.
    pub lang: Lang,
    /// The room the page has for a figure, in CSS px (none: each figure's own width): figures
    /// are drawn for it rather than scaled down, so that their labels keep their size.
    pub figure_width: Option<u32>,
}

impl Default for TreeParams {
    fn default() -> Self {
        TreeParams {
            mode: TreeMode::Paths,
            paths: "learning algorithm | learning system design | translation model".into(),
            config: "<2,2,1>".into(),
            root: "machine".into(),
            budget: 126,
            highlight: None,
            lang: Lang::En,
            figure_width: None,
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct TreeView {
    pub order: Vec<String>,
    pub depths: Vec<usize>,
    pub mask: Vec<Vec<u8>>,
    pub nodes: usize,
    pub sequence_tokens: usize,
    pub svg_tree: String,
    pub svg_mask: String,
}

pub fn tree_view(params: &TreeParams) -> Result<TreeView, Error> {
    BUDGET.check(f64::from(params.budget))?;
    let root = params.root.trim();
    let root = if root.is_empty() { "r" } else { root };
    let tree = match params.mode {
        TreeMode::Paths => TokenTree::merge(&parse_paths(&params.paths)?, root),
        TreeMode::Config => {
            TokenTree::expand(&parse_config(&params.config, params.budget as usize)?, root)
        }
    };
    if tree.speculated() > params.budget as usize {
        return Err(Error::TooLarge {
            what: Text::new("the merged tree", "合并后的树"),
            nodes: tree.speculated() as u64,
            budget: params.budget as usize,
        });
    }
    let order = tree.linearize_dfs();
    let highlight = params
        .highlight
        .filter(|&h| h < order.len())
        .map(|h| order[h]);
    let mask = tree.tree_mask(&order);
    let tokens: Vec<String> = order
        .iter()
        .map(|&n| tree.nodes()[n].token.clone())
        .collect();
    Ok(TreeView {
        svg_tree: tree_svg(
            &tree,
            highlight,
            params.lang,
            figure_width(560, params.figure_width),
        ),
        svg_mask: mask_svg(&tokens, &mask, params.highlight, params.lang),
        depths: tree.depths(&order),
        mask: mask
            .iter()
            .map(|r| r.iter().map(|&b| u8::from(b)).collect())
            .collect(),
        nodes: tree.speculated(),
        sequence_tokens: tree.sequence_tokens(),
        order: tokens,
    })
}

fn tree_svg(tree: &TokenTree, highlight: Option<usize>, l: Lang, w: u32) -> String {
    let depth = tree.nodes().iter().map(|n| n.depth).max().unwrap_or(0) as i32;
    let height = (70 + depth * 60).max(120) as u32;
    let (n, paths) = (tree.speculated(), tree.sequence_tokens());
    let label = l.pick(
        format!("Token tree with {n} speculated nodes"),
        format!("有 {n} 个猜测节点的令牌树"),
    );
    let title = l.pick(
        format!("{n} nodes in the tree vs {paths} tokens decoded path by path"),
        format!("树里 {n} 个节点，逐条路径解码则要 {paths} 个 token"),
    );
    // On a phone the title takes two lines, and the tree moves down under them.
    let lines = wrap(&title, 13, w as i32 - 16);
    let below = 16 * (lines.len() as i32 - 1);
    render(w, height + below as u32, &label, |cv| {
        for (i, line) in lines.iter().enumerate() {
            cv.text(
                (10, 14 + 16 * i as i32),
                line,
                13,
                colors::INK,
                Align::Start,
                false,
            );
        }
        draw_tree(cv, tree, w as i32, 40 + below, 60, highlight);
    })
}

fn mask_svg(tokens: &[String], mask: &[Vec<bool>], highlight: Option<usize>, l: Lang) -> String {
    let n = tokens.len() as i32;
    let cell = (420 / n.max(1)).clamp(6, 28);
    let show_labels = cell >= 14;
    // A row is named by its whole token where it fits a column of at most ROW_NAME_PX, else cut
    // with an ellipsis ("translation" was once cut to "translati"); a column by three characters.
    let rows: Vec<String> = tokens
        .iter()
        .map(|t| {
            if show_labels {
                ellipsize(t, 11, ROW_NAME_PX)
            } else {
                String::new()
            }
        })
        .collect();
    let cols: Vec<String> = tokens
        .iter()
        .map(|t| {
            if show_labels {
                t.chars().take(3).collect()
            } else {
                String::new()
            }
        })
        .collect();
    let names = rows.iter().map(|r| text_width(r, 11)).max().unwrap_or(0);
    let left = if show_labels { names.max(30) + 12 } else { 20 };
    let width = (left + n * cell + 20).max(200) as u32;
    let title = l.pick(
        "mask: row may attend to column (DFS order)",
        "掩码：行可以关注列（深度优先顺序）",
    );
    let lines = wrap(title, 12, width as i32 - 14);
    let top = 36 + 15 * (lines.len() as i32 - 1);
    let height = (top + n * cell + 24) as u32;
    render(
        width,
        height,
        l.pick(
            "Topology-aware causal mask: row attends to column",
            "拓扑感知的因果掩码：行关注列",
        ),
        |cv| {
            for (i, line) in lines.iter().enumerate() {
                cv.text(
                    (8, 12 + 15 * i as i32),
                    line,
                    12,
                    colors::INK,
                    Align::Start,
                    false,
                );
            }
            let grid = Grid {
                rows: &rows,
                cols: &cols,
                cell_w: cell,
                cell_h: cell,
                origin: (left, top),
            };
            grid.draw(cv, |r, c| {
                let lit = mask[r][c];
                let row_hl = highlight == Some(r);
                let fill = match (lit, row_hl) {
                    (true, true) => ramp(colors::ORANGE, 0.9),
                    (true, false) => ramp(colors::BLUE, 0.8),
                    (false, true) => ramp(colors::ORANGE, 0.15),
                    (false, false) => ramp(colors::GRID, 0.6),
                };
                (fill, String::new())
            });
        },
    )
}

/// The widest a mask's row name is drawn, in px (about 17 Latin characters at 11 px).
const ROW_NAME_PX: i32 = 118;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_mode_is_refused_by_name_as_the_parameters_are_read() {
        let e = serde_json::from_value::<TreeParams>(serde_json::json!({ "mode": "x" }));
        let e = e.unwrap_err().to_string();
        assert!(e.contains("\"x\"") && e.contains("paths, config"), "{e}");
        let p: TreeParams =
            serde_json::from_value(serde_json::json!({ "mode": "config" })).unwrap();
        assert_eq!(p.mode, TreeMode::Config);
    }

    #[test]
    fn slide_example_by_default() {
        let v = tree_view(&TreeParams::default()).unwrap();
        assert_eq!(
            v.order,
            [
                "machine",
                "learning",
                "algorithm",
                "system",
                "design",
                "translation",
                "model"
            ]
        );
        assert_eq!(v.mask[6], [1, 0, 0, 0, 0, 1, 1]);
        assert!(v.svg_tree.contains("\ntranslation\n"));
    }

    #[test]
    fn the_figures_speak_chinese() {
        let v = tree_view(&TreeParams {
            lang: Lang::Zh,
            ..TreeParams::default()
        })
        .unwrap();
        assert!(v
            .svg_tree
            .contains("树里 6 个节点，逐条路径解码则要 7 个 token"));
        assert!(v.svg_mask.contains("掩码：行可以关注列"));
        assert!(!v.svg_tree.contains("nodes in the tree") && !v.svg_mask.contains("attend"));
    }

    /// The mask names each row by its whole token ("translation", not "translati"), and a
    /// token too long for its room is cut with an ellipsis, in the tree and in the mask, rather
    /// than left out; no two texts of either figure overlap, at a phone's width or a wide one.
    #[test]
    fn long_tokens_are_cut_with_an_ellipsis_and_nothing_overlaps() {
        use crate::plot::tests::text_clashes;
        let v = tree_view(&TreeParams::default()).unwrap();
        assert!(v.svg_mask.contains("\ntranslation\n"), "{}", v.svg_mask);
        let long = "x".repeat(60);
        for (paths, width) in [
            (format!("{long} | a b"), 560),
            (format!("{long} | a b"), 322),
            (format!("learning {long} | learning {long}y | b"), 322),
            (TreeParams::default().paths, 322),
        ] {
            for lang in [Lang::En, Lang::Zh] {
                let v = tree_view(&TreeParams {
                    paths: paths.clone(),
                    figure_width: Some(width),
                    lang,
                    ..TreeParams::default()
                })
                .unwrap();
                if paths.contains(&long) {
                    assert!(v.svg_tree.contains("xxx…"), "{}", v.svg_tree);
                    assert!(v.svg_mask.contains("xxx…"), "{}", v.svg_mask);
                }
                for svg in [&v.svg_tree, &v.svg_mask] {
                    let w: i32 = svg
                        .split("width=\"")
                        .nth(1)
                        .and_then(|s| s.split('"').next())
                        .and_then(|s| s.parse().ok())
                        .unwrap();
                    assert_eq!(
                        text_clashes(svg, w),
                        Vec::<String>::new(),
                        "{paths} at {width}"
                    );
                }
            }
        }
    }

    #[test]
    fn config_mode_and_its_errors() {
        let cfg = |c: &str| {
            tree_view(&TreeParams {
                mode: TreeMode::Config,
                config: c.into(),
                ..TreeParams::default()
            })
        };
        let v = cfg("<2,2,1>").unwrap();
        assert_eq!((v.nodes, v.sequence_tokens), (10, 12));
        assert!(cfg("<2,,1>")
            .unwrap_err()
            .to_string()
            .contains("level 2 is empty"));
        assert!(cfg("<99,99,99,99>")
            .unwrap_err()
            .to_string()
            .contains("budget of 126"));
    }
}

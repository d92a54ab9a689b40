//! Pictures that are not x/y charts: a colour grid with labels (the demo-5 heat map, the tree
//! mask) and a token tree drawn top-down.

use super::{colors, Align, Canvas};
use crate::tree::TokenTree;
use plotters::style::{RGBAColor, RGBColor};

/// A grid of cells with row and column labels; `cell(r, c)` gives the fill and the text.
pub struct Grid<'s> {
    pub rows: &'s [String],
    pub cols: &'s [String],
    pub cell_w: i32,
    pub cell_h: i32,
    /// Top-left pixel of the first cell.
    pub origin: (i32, i32),
}

impl Grid<'_> {
    pub fn draw(&self, canvas: &Canvas, cell: impl Fn(usize, usize) -> (RGBAColor, String)) {
        let (x0, y0) = self.origin;
        for (r, row) in self.rows.iter().enumerate() {
            let y = y0 + r as i32 * self.cell_h;
            canvas.text(
                (x0 - 6, y + self.cell_h / 2),
                row,
                11,
                colors::INK,
                Align::End,
                false,
            );
            for c in 0..self.cols.len() {
                let x = x0 + c as i32 * self.cell_w;
                let (fill, text) = cell(r, c);
                canvas.rect_rgba((x, y), (x + self.cell_w - 1, y + self.cell_h - 1), fill);
                if !text.is_empty() {
                    canvas.text(
                        (x + self.cell_w / 2, y + self.cell_h / 2),
                        &text,
                        11,
                        colors::INK,
                        Align::Middle,
                        false,
                    );
                }
            }
        }
        for (c, col) in self.cols.iter().enumerate() {
            let x = x0 + c as i32 * self.cell_w + self.cell_w / 2;
            canvas.text((x, y0 - 6), col, 11, colors::INK, Align::Middle, false);
        }
    }
}

/// Blends white → `to` by t ∈ [0, 1].
pub fn ramp(to: RGBColor, t: f64) -> RGBAColor {
    let t = t.clamp(0.0, 1.0);
    let mix = |c: u8| (255.0 + (f64::from(c) - 255.0) * t).round() as u8;
    RGBAColor(mix(to.0), mix(to.1), mix(to.2), 1.0)
}

/// Pixel positions of every node of a tree drawn top-down: leaves evenly spaced in DFS order,
/// each parent centred over its children, one row per depth.
pub fn tree_layout(tree: &TokenTree, width: i32, top: i32, row_h: i32) -> Vec<(i32, i32)> {
    let nodes = tree.nodes();
    let leaves = nodes
        .iter()
        .filter(|n| n.children.is_empty())
        .count()
        .max(1) as f64;
    let mut x = vec![0.0; nodes.len()];
    let mut next_leaf = 0.0;
    // Post-order: children before parents.
    let order = tree.linearize_dfs();
    for &n in order.iter().rev() {
        let node = &nodes[n];
        x[n] = if node.children.is_empty() {
            next_leaf += 1.0;
            f64::from(width) * (leaves - next_leaf + 0.5) / leaves
        } else {
            node.children.iter().map(|&c| x[c]).sum::<f64>() / node.children.len() as f64
        };
    }
    nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (x[i].round() as i32, top + n.depth as i32 * row_h))
        .collect()
}

/// A node label's size.
const LABEL_PX: u32 = 11;

/// Each label as drawn centred under its node at `pos`: cut with an ellipsis to the room between
/// the node and its nearest neighbours on its row (the nodes of the same y: half the gap each
/// side, the figure's edge beyond the outermost), so that neighbouring labels never run together;
/// empty where not even one character fits. A long token is cut, not left out: a 60-character
/// token once vanished from the tree.
pub fn fitted_labels(texts: &[&str], pos: &[(i32, i32)], size: u32, width: i32) -> Vec<String> {
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let (x, y) = pos[i];
            let row = pos
                .iter()
                .enumerate()
                .filter(|&(j, p)| j != i && p.1 == y)
                .map(|(_, p)| p.0);
            let left = row.clone().filter(|&o| o <= x).map(|o| x - o).min();
            let right = row.filter(|&o| o > x).map(|o| o - x).min();
            // Half the gap to each neighbour, less a pixel either side; up to the edge beyond.
            let half = left
                .map_or(x - super::MARGIN, |g| g / 2 - 2)
                .min(right.map_or(width - super::MARGIN - x, |g| g / 2 - 2));
            super::ellipsize(text, size, 2 * half)
        })
        .collect()
}

/// Draws a token tree: edges, then labelled nodes; `highlight` nodes are filled in colour.
pub fn draw_tree(
    canvas: &Canvas,
    tree: &TokenTree,
    width: i32,
    top: i32,
    row_h: i32,
    highlight: Option<usize>,
) {
    let pos = tree_layout(tree, width, top, row_h);
    let nodes = tree.nodes();
    let compact = nodes.len() > 40;
    let labels = if compact {
        vec![String::new(); nodes.len()]
    } else {
        let tokens: Vec<&str> = nodes.iter().map(|n| n.token.as_str()).collect();
        fitted_labels(&tokens, &pos, LABEL_PX, width)
    };
    for (i, n) in nodes.iter().enumerate() {
        if let Some(p) = n.parent {
            canvas.line(&[pos[p], pos[i]], colors::GREY, 1);
        }
    }
    for (i, n) in nodes.iter().enumerate() {
        let is_root = n.parent.is_none();
        let on_path = highlight.is_some_and(|h| tree.is_ancestor(i, h));
        let color = if is_root {
            colors::INK
        } else if on_path {
            colors::ORANGE
        } else {
            colors::BLUE
        };
        let r = if compact { 4 } else { 7 };
        canvas.circle(pos[i], r, color, true);
        if !compact && !labels[i].is_empty() {
            canvas.text(
                (pos[i].0, pos[i].1 + 10),
                &labels[i],
                LABEL_PX,
                colors::INK,
                Align::Middle,
                true,
            );
        }
    }
}

//! Tree attention, checked (lecture §4.3; SpecInfer Definition 4.1): one forward over the prefix
//! and the depth-first linearised tree, with the topology-aware mask and depth positions, must
//! give every node the logits it gets when its root-to-node path is run as a plain sequence.

use super::{floats, Decoder, KvCache};
use crate::error::Error;
use crate::tree::TokenTree;
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};

/// The result of one check.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct TreeCheck {
    /// max |Δlogit| over every node and every vocabulary entry.
    pub max_abs_diff: f32,
    /// Tokens in the one tree forward (the speculated nodes).
    pub tree_tokens: usize,
    /// Tokens decoded when every root-to-leaf path is run on its own.
    pub path_tokens: usize,
}

fn ints<const D: usize>(values: Vec<i64>, shape: [usize; D], device: &Device) -> Tensor<D, Int> {
    Tensor::from_data(TensorData::new(values, shape), device)
}

fn bools(values: Vec<bool>, shape: [usize; 3], device: &Device) -> Tensor<3, Bool> {
    Tensor::from_data(TensorData::new(values, shape), device)
}

async fn logits_rows(t: Tensor<3>) -> Result<Vec<Vec<f32>>, Error> {
    let [_, n, v] = t.dims();
    let flat = floats(t).await?;
    Ok((0..n).map(|i| flat[i * v..(i + 1) * v].to_vec()).collect())
}

/// What one tree forward after `cached` tokens takes: the nodes in depth-first order (with or
/// without the root), their position ids (`root_position` + depth), and the mask over the cached
/// tokens and the nodes, row-major [nodes, cached + nodes] (every node sees the whole cache).
pub struct TreeInputs {
    pub order: Vec<usize>,
    pub positions: Vec<i64>,
    pub mask: Vec<bool>,
}

pub fn tree_inputs(
    tree: &TokenTree,
    with_root: bool,
    cached: usize,
    root_position: usize,
) -> TreeInputs {
    let order: Vec<usize> = tree
        .linearize_dfs()
        .into_iter()
        .skip(usize::from(!with_root))
        .collect();
    let m = tree.tree_mask(&order);
    let n = order.len();
    TreeInputs {
        positions: order
            .iter()
            .map(|&i| (root_position + tree.nodes()[i].depth) as i64)
            .collect(),
        mask: (0..n)
            .flat_map(|r| {
                (0..cached + n)
                    .map(|c| c < cached || m[r][c - cached])
                    .collect::<Vec<_>>()
            })
            .collect(),
        order,
    }
}

/// Logits of every speculated node (DFS order, root excluded) from one tree forward after
/// `prompt`, whose last token is the tree's root. With `cached`, the prompt goes through the KV
/// cache first and the tree forward sees only the tree; without, one forward covers both.
pub async fn tree_logits(
    model: &Decoder,
    prompt: &[u32],
    tree: &TokenTree,
    tokens: &[u32],
    cached: bool,
    device: &Device,
) -> Result<Vec<Vec<f32>>, Error> {
    let (l, inputs) = (
        prompt.len(),
        tree_inputs(tree, false, prompt.len(), prompt.len() - 1),
    );
    let n = inputs.order.len();
    let tree_tokens: Vec<i64> = inputs.order.iter().map(|&i| i64::from(tokens[i])).collect();
    let prompt_ids: Vec<i64> = prompt.iter().map(|&t| i64::from(t)).collect();
    if cached {
        let mut cache = KvCache::new(model.n_layers());
        let causal: Vec<bool> = (0..l).flat_map(|r| (0..l).map(move |c| c <= r)).collect();
        model.forward(
            ints(prompt_ids, [1, l], device),
            ints((0..l as i64).collect(), [1, l], device),
            bools(causal, [1, l, l], device),
            &mut cache,
        );
        let out = model.forward(
            ints(tree_tokens, [1, n], device),
            ints(inputs.positions, [1, n], device),
            bools(inputs.mask, [1, n, l + n], device),
            &mut cache,
        );
        return logits_rows(out).await;
    }
    // Without a cache: the prompt's rows are causal; each node's row is its cached-tree row.
    let total = l + n;
    let mut m: Vec<bool> = (0..l)
        .flat_map(|r| (0..total).map(move |c| c <= r))
        .collect();
    m.extend(inputs.mask);
    let mut ids = prompt_ids;
    ids.extend(tree_tokens);
    let mut pos: Vec<i64> = (0..l as i64).collect();
    pos.extend(inputs.positions);
    let out = model.forward(
        ints(ids, [1, total], device),
        ints(pos, [1, total], device),
        bools(m, [1, total, total], device),
        &mut KvCache::new(model.n_layers()),
    );
    Ok(logits_rows(out).await?.split_off(l))
}

/// Compares [`tree_logits`] with every root-to-leaf path run causally on its own.
pub async fn check(
    model: &Decoder,
    prompt: &[u32],
    tree: &TokenTree,
    tokens: &[u32],
    cached: bool,
    device: &Device,
) -> Result<TreeCheck, Error> {
    let order: Vec<usize> = tree.linearize_dfs().into_iter().skip(1).collect();
    let from_tree = tree_logits(model, prompt, tree, tokens, cached, device).await?;
    let row_of: std::collections::HashMap<usize, usize> =
        order.iter().enumerate().map(|(r, &i)| (i, r)).collect();
    let mut worst = 0.0f32;
    let mut path_tokens = 0;
    for (leaf, node) in tree
        .nodes()
        .iter()
        .enumerate()
        .filter(|(_, n)| n.children.is_empty() && n.parent.is_some())
    {
        let mut path = vec![leaf];
        while let Some(p) = tree.nodes()[*path.last().expect("non-empty")].parent {
            path.push(p);
        }
        path.pop(); // the root is the prompt's last token
        path.reverse();
        path_tokens += node.depth;
        let mut ids: Vec<i64> = prompt.iter().map(|&t| i64::from(t)).collect();
        ids.extend(path.iter().map(|&i| i64::from(tokens[i])));
        let len = ids.len();
        let rows = logits_rows(model.forward_causal(ints(ids, [1, len], device))).await?;
        for (k, &i) in path.iter().enumerate() {
            let (a, b) = (&rows[prompt.len() + k], &from_tree[row_of[&i]]);
            worst = a
                .iter()
                .zip(b)
                .fold(worst, |w, (x, y)| w.max((x - y).abs()));
        }
    }
    Ok(TreeCheck {
        max_abs_diff: worst,
        tree_tokens: order.len(),
        path_tokens,
    })
}

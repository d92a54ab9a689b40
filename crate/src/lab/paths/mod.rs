//! Per-sequence against tree-parallel decoding, measured (lecture §4.3; SpecInfer §4.2 and its
//! Figure 11). Existing systems verify a token tree by splitting it into its root-to-leaf paths,
//! each run as a sequence of its own on its own copy of the prompt's KV cache, so a prefix that
//! paths share is computed once per path; SpecInfer lays the tree out depth first and verifies it
//! in one call under the topology-aware mask, on one cache, each node once.
//!
//! [`tree_vs_paths`] does both on the real models for a batch of prompts: the draft fills the
//! tree's shape with its own top-ranked tokens (the j-th child of a node is the draft's j-th
//! choice after that node's path), the target's prompt cache is filled once, and then (a) one
//! call feeds every prompt's whole tree (batch rows) and (b) one call feeds every path of every
//! prompt (batch × paths rows, each a copy of its prompt's cache, padded to the longest path).
//! The tree is one shape for every prompt (the lecture's, a configuration), or EAGLE-2's dynamic
//! tree grown after each prompt on the target's features (`eagle-2`, `eagle-2:N` at N nodes;
//! `lab::hidden::trees`), one tree per prompt: then the tree call is padded to the largest tree
//! (padding rows see nothing and nothing sees them; `MASKED` is finite, so they stay finite),
//! the paths call holds each prompt's own paths, padded to the deepest path of the batch, and
//! the counts add each prompt's own nodes and path tokens.
//! Which trees, by name, is [`source`]'s ([`parse_source`]).
//! Each way is timed on the caller's clock, copy of the cache and read-back included, after a
//! warm-up, as the median of at least [`REPEATS`] runs taken in alternating order (more, up to
//! [`MAX_REPEATS`], while the batch's runs have taken less than [`TIMED_US`]: a call of a few
//! hundred µs on a busy CPU needs many runs for a steady median). The two ways must agree:
//! the target's distribution at every node within [`TOLERANCE`], and greedy verification
//! (walking the tree; or taking the path whose prefix the target accepts furthest) must accept
//! the same tokens and the same bonus token for every prompt.

use crate::clock::Progress;
use crate::decode::propose::top_k;
use crate::error::{Error, Range};
use crate::lab::hidden::trees::{eagle2_trees, PromptTree};
use crate::lab::lm::{softmax, MAX_POSITIONS};
use crate::lab::params::{BATCH, LOAD_LENGTH};
use crate::lab::Lab;
use crate::likesworld::sampling_prompts;
use crate::model::measure::quartiles;
use crate::model::{floats, Decoder, KvCache};
use crate::sampling::Dist;
use crate::tree::TokenTree;
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};

mod source;

pub use source::{parse_source, parse_tree, TreeSource, DEPTH, NODES};

/// Timed runs of each way per batch, at least (after one warm-up run)…
pub const REPEATS: usize = 5;
/// …and at most, while the batch's timed runs have taken less than [`TIMED_US`].
pub const MAX_REPEATS: usize = 61;
/// The time, µs, a batch's timed runs (both ways together) take at least, unless
/// [`MAX_REPEATS`] comes first.
pub const TIMED_US: f64 = 1_000_000.0;
/// The most a node's distribution may differ (max |Δp|) between the two ways.
pub const TOLERANCE: f64 = 1e-4;
/// The prompts the batches are drawn from (batch b takes prompts 0 … b − 1, cyclically).
pub const PROMPTS: Range = Range::new("prompts", 1.0, 64.0);

/// Batch sizes as typed (`1,2,4,8`): the list the speedup under load reads too.
pub use crate::lab::params::{parse_batches, DEFAULT_BATCHES};

/// One batch size, measured both ways.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PathsRow {
    pub batch: usize,
    /// Tokens the tree-parallel call computes: the sum of the batch's prompts' tree nodes (a
    /// static tree: batch × its nodes; padding to the largest tree not counted).
    pub tokens_tree: usize,
    /// Tokens the per-sequence call computes: the sum of the lengths of the batch's prompts'
    /// paths (a static tree: batch × its path tokens; padding to the longest path not counted).
    pub tokens_paths: usize,
    /// Median wall-clock time of each way's call, µs.
    pub tree_us: f64,
    pub paths_us: f64,
    /// The spread (IQR) of each way's timed calls, µs.
    pub tree_iqr_us: f64,
    pub paths_iqr_us: f64,
    /// paths_us / tree_us: how much faster tree-parallel decoding is (Figure 11's y).
    pub ratio: f64,
    /// The same accepted tokens for every prompt, and every node's distribution within
    /// [`TOLERANCE`].
    pub identical: bool,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PathsReport {
    /// The tree as asked for.
    pub tree: String,
    pub backend: &'static str,
    pub target_width: usize,
    /// The tree's nodes, its root-to-leaf paths' tokens and its paths (per prompt); a tree per
    /// prompt (EAGLE-2): their means over the prompts drawn, rounded (each prompt's own are in
    /// `prompt_trees`, and the rows' token counts are exact).
    pub nodes: usize,
    pub path_tokens: usize,
    pub paths: usize,
    /// The longest root-to-leaf path (a tree per prompt: over every prompt's): the per-sequence
    /// call's rows are padded to at most this many tokens.
    pub longest_path: usize,
    /// A tree per prompt (EAGLE-2): each prompt's own counts, in the order the batches draw the
    /// prompts; absent for a static tree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_trees: Option<Vec<TreeCounts>>,
    /// Timed runs of each way, at the batch that had the fewest.
    pub repeats: usize,
    /// max |Δp| over every node, prompt and batch between the two ways.
    pub max_abs_diff: f64,
    /// Tokens greedy verification accepted per prompt (bonus excluded), over the largest batch.
    pub accepted_mean: f64,
    pub rows: Vec<PathsRow>,
}

/// One prompt's tree counted: nodes, path tokens, root-to-leaf paths and the longest path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TreeCounts {
    pub nodes: usize,
    pub path_tokens: usize,
    pub paths: usize,
    pub longest_path: usize,
}

impl TreeCounts {
    fn of(tree: &TokenTree) -> TreeCounts {
        let paths = tree.paths();
        TreeCounts {
            nodes: tree.speculated(),
            path_tokens: tree.path_tokens(),
            paths: paths.len(),
            longest_path: paths.iter().map(Vec::len).max().unwrap_or(0),
        }
    }
}

fn ints(values: Vec<i64>, shape: [usize; 2], device: &Device) -> Tensor<2, Int> {
    Tensor::from_data(TensorData::new(values, shape), device)
}

fn bools(values: Vec<bool>, shape: [usize; 3], device: &Device) -> Tensor<3, Bool> {
    Tensor::from_data(TensorData::new(values, shape), device)
}

fn argmax(p: &[f64]) -> u32 {
    top_k(p, 1)[0]
}

/// The nodes on the path from the root to `node`, the root excluded (it is the prompt's last
/// token).
fn path_to(tree: &TokenTree, node: usize) -> Vec<usize> {
    let mut path = vec![];
    let mut at = node;
    while let Some(p) = tree.nodes()[at].parent {
        path.push(at);
        at = p;
    }
    path.reverse();
    path
}

/// The tree's tokens after `prompt`, indexed by node (node 0, the root, is the prompt's last
/// token): each node's j-th child is the draft's j-th most likely token after the node's path.
async fn draft_tokens(
    draft: &Decoder,
    device: &Device,
    tree: &TokenTree,
    prompt: &[u32],
) -> Result<Vec<u32>, Error> {
    let mut tokens = vec![0u32; tree.nodes().len()];
    tokens[0] = *prompt.last().expect("a prompt has tokens");
    for n in tree.linearize_dfs() {
        let children = &tree.nodes()[n].children;
        if children.is_empty() {
            continue;
        }
        let mut ids: Vec<i64> = prompt.iter().map(|&t| i64::from(t)).collect();
        ids.extend(path_to(tree, n).iter().map(|&i| i64::from(tokens[i])));
        let len = ids.len();
        let logits = floats(draft.forward_causal(ints(ids, [1, len], device))).await?;
        let v = logits.len() / len;
        let q = softmax(&logits[(len - 1) * v..], 1.0);
        for (&c, t) in children.iter().zip(top_k(&q, children.len())) {
            tokens[c] = t;
        }
    }
    Ok(tokens)
}

/// One batch, ready to time: the prompts' cache (slots 0 … longest − 1, of which prompt i's row
/// owns its first `len(prompt i)`) and both calls' tokens, positions and masks, built before the
/// clock starts.
struct Prepared {
    cache: KvCache,
    /// The target's distribution after each prompt's root (from filling the cache).
    root: Vec<Dist>,
    /// The tree call: [batch, nodes] tokens and positions, [batch, nodes, longest + nodes] mask
    /// (nodes: the largest tree's; a smaller tree's rows padded with rows that see nothing).
    tree: (Vec<i64>, Vec<i64>, Vec<bool>),
    /// The paths call: [Σ paths, deepest] tokens and positions, its mask, and the prompt whose
    /// cache each row copies (each prompt's paths in a run of rows).
    paths: (Vec<i64>, Vec<i64>, Vec<bool>),
    copies: Vec<usize>,
    /// The paths call's row of each prompt's first path.
    first_path: Vec<usize>,
    long: usize,
}

impl Prepared {
    async fn new(
        target: &Decoder,
        device: &Device,
        prompts: &[&[u32]],
        drafted: &[&PromptTree],
    ) -> Result<Prepared, Error> {
        let orders: Vec<Vec<usize>> = drafted
            .iter()
            .map(|d| d.tree.linearize_dfs()[1..].to_vec())
            .collect();
        let paths: Vec<Vec<Vec<usize>>> = drafted.iter().map(|d| d.tree.paths()).collect();
        let (b, n) = (
            prompts.len(),
            orders.iter().map(Vec::len).max().unwrap_or(0),
        );
        let long = prompts.iter().map(|p| p.len()).max().unwrap_or(0);
        let deep = paths.iter().flatten().map(Vec::len).max().unwrap_or(0);
        let seen = |c: usize, len: usize| c < len;
        // The prompts, padded to the longest; a row sees its own tokens causally.
        let (mut ids, mut pos, mut mask) = (vec![], vec![], vec![]);
        for p in prompts {
            for j in 0..long {
                ids.push(p.get(j).map_or(0, |&t| i64::from(t)));
                pos.push(j.min(p.len() - 1) as i64);
                mask.extend((0..long).map(|c| c <= j && seen(c, p.len())));
            }
        }
        let mut cache = KvCache::new(target.n_layers());
        let logits = target.forward(
            ints(ids, [b, long], device),
            ints(pos, [b, long], device),
            bools(mask, [b, long, long], device),
            &mut cache,
        );
        let flat = floats(logits).await?;
        let v = flat.len() / (b * long);
        let root = (0..b)
            .map(|i| {
                let at = (i * long + prompts[i].len() - 1) * v;
                softmax(&flat[at..at + v], 1.0)
            })
            .collect();
        // Tree-parallel: every node once, under the topology-aware mask, at depth positions; a
        // smaller tree's padding rows see nothing, and no node sees them.
        let (mut ids, mut pos, mut mask) = (vec![], vec![], vec![]);
        for (i, p) in prompts.iter().enumerate() {
            let (tree, order) = (&drafted[i].tree, &orders[i]);
            let anc = tree.tree_mask(order);
            for (r, &node) in order.iter().enumerate() {
                ids.push(i64::from(drafted[i].tokens[node]));
                pos.push((p.len() - 1 + tree.nodes()[node].depth) as i64);
                let row = (0..long + n).map(|c| {
                    c.checked_sub(long)
                        .map_or(seen(c, p.len()), |c| c < order.len() && anc[r][c])
                });
                mask.extend(row);
            }
            for _ in order.len()..n {
                ids.push(0);
                pos.push((p.len() - 1) as i64);
                mask.extend(std::iter::repeat_n(false, long + n));
            }
        }
        let tree_call = (ids, pos, mask);
        // Per-sequence: every path of every prompt as a plain causal sequence after its prompt.
        let (mut ids, mut pos, mut mask) = (vec![], vec![], vec![]);
        for (i, p) in prompts.iter().enumerate() {
            for path in &paths[i] {
                for k in 0..deep {
                    let token = |&node: &usize| i64::from(drafted[i].tokens[node]);
                    ids.push(path.get(k).map_or(0, token));
                    pos.push((p.len() + k) as i64);
                    let row = (0..long + deep)
                        .map(|c| c.checked_sub(long).map_or(seen(c, p.len()), |c| c <= k));
                    mask.extend(row);
                }
            }
        }
        Ok(Prepared {
            cache,
            root,
            tree: tree_call,
            paths: (ids, pos, mask),
            copies: (0..b).flat_map(|i| vec![i; paths[i].len()]).collect(),
            first_path: paths
                .iter()
                .scan(0, |at, p| {
                    *at += p.len();
                    Some(*at - p.len())
                })
                .collect(),
            long,
        })
    }

    /// The tree-parallel call on a copy of the prompts' cache: (µs, logits [batch, nodes, vocab]).
    async fn tree_call(&self, lab: &Lab<'_>) -> Result<(f64, Vec<f32>), Error> {
        self.timed(lab, &self.tree, self.root.len(), None).await
    }

    /// The per-sequence call: each row a copy of its prompt's cache, then its path:
    /// (µs, logits [batch · paths, deepest, vocab]).
    async fn paths_call(&self, lab: &Lab<'_>) -> Result<(f64, Vec<f32>), Error> {
        self.timed(lab, &self.paths, self.copies.len(), Some(&self.copies))
            .await
    }

    /// One call of `rows` rows (tokens, positions, mask) on a copy of the prompts' cache, its
    /// rows first copied as `copies` names them: the clock runs from the cache's copy to the
    /// logits' read-back.
    async fn timed(
        &self,
        lab: &Lab<'_>,
        (ids, pos, mask): &(Vec<i64>, Vec<i64>, Vec<bool>),
        rows: usize,
        copies: Option<&[usize]>,
    ) -> Result<(f64, Vec<f32>), Error> {
        let (target, device) = (&lab.models.target, &lab.models.device);
        let n = ids.len() / rows;
        let t0 = (lab.clock)();
        let mut cache = self.cache.clone();
        if let Some(copies) = copies {
            cache.select_rows(copies);
        }
        let logits = target.forward(
            ints(ids.clone(), [rows, n], device),
            ints(pos.clone(), [rows, n], device),
            bools(mask.clone(), [rows, n, self.long + n], device),
            &mut cache,
        );
        let flat = floats(logits).await?;
        Ok(((lab.clock)() - t0, flat))
    }
}

/// Greedy verification of one prompt's tree both ways (lecture §4.4, Algorithm 2): walking the
/// tree with the tree call's distributions; and, per sequence, taking the path whose prefix the
/// target accepts furthest, with the paths call's. Returns both verdicts (accepted tokens, then
/// the target's bonus token) and max |Δp| over the nodes.
fn verdicts(
    tree: &TokenTree,
    tokens: &[u32],
    root: &Dist,
    at_node: &dyn Fn(usize) -> Dist,
    at_path: &dyn Fn(usize, usize) -> Dist,
) -> (Vec<u32>, Vec<u32>, f64) {
    let mut walk = vec![];
    let mut at = 0;
    loop {
        let here = if at == 0 { root.clone() } else { at_node(at) };
        let a = argmax(&here);
        walk.push(a);
        match tree.nodes()[at].children.iter().find(|&&c| tokens[c] == a) {
            Some(&c) => at = c,
            None => break,
        }
    }
    let (mut best, mut diff) = (vec![], 0.0f64);
    for (p, path) in tree.paths().iter().enumerate() {
        let dists: Vec<Dist> = (0..path.len()).map(|k| at_path(p, k)).collect();
        for (k, &node) in path.iter().enumerate() {
            let here = at_node(node);
            let d = here.iter().zip(&dists[k]).map(|(x, y)| (x - y).abs());
            diff = d.fold(diff, f64::max);
        }
        let mut verdict = vec![];
        for (k, &node) in path.iter().enumerate() {
            let before = if k == 0 { root } else { &dists[k - 1] };
            if argmax(before) != tokens[node] {
                break;
            }
            verdict.push(tokens[node]);
        }
        let last = verdict.len();
        verdict.push(argmax(if last == 0 { root } else { &dists[last - 1] }));
        if verdict.len() > best.len() {
            best = verdict;
        }
    }
    (walk, best, diff)
}

/// Verifies the tree `config` names ([`parse_source`]) both ways for every batch size of
/// `batches` (prompts drawn cyclically from the first `prompts` of the experiments' sampling
/// prompts) and times each way.
pub async fn tree_vs_paths(
    lab: Lab<'_>,
    config: &str,
    batches: &[usize],
    prompts: usize,
    progress: Progress<'_>,
) -> Result<PathsReport, Error> {
    let source = parse_source(config)?;
    PROMPTS.check(prompts as f64)?;
    for &b in batches {
        BATCH.check(b as f64)?;
    }
    LOAD_LENGTH.check(batches.len() as f64)?;
    let m = lab.models;
    let pool = sampling_prompts(prompts);
    // The longest prompt (27 tokens) and the deepest tree fit the models' positions.
    debug_assert!(pool
        .iter()
        .all(|p| p.len() + DEPTH.max as usize <= MAX_POSITIONS));
    let drafted = match &source {
        TreeSource::Static(tree) => {
            let mut drafted = Vec::with_capacity(pool.len());
            for p in &pool {
                let tokens = draft_tokens(&m.draft_a, &m.draft_device, tree, p).await?;
                drafted.push(PromptTree {
                    tree: tree.clone(),
                    tokens,
                });
            }
            drafted
        }
        TreeSource::Eagle2 { budget } => eagle2_trees(m, *budget, &pool).await?,
    };
    let per_prompt = matches!(source, TreeSource::Eagle2 { .. });
    let trees = Drafted {
        name: config.trim(),
        pool: &pool,
        trees: &drafted,
        per_prompt,
    };
    both_ways(lab, trees, batches, progress).await
}

/// Trees ready to verify: the tree as asked for, the prompts, each prompt's drafted tree, and
/// whether the trees are one per prompt (their counts reported per prompt).
pub struct Drafted<'a> {
    pub name: &'a str,
    pub pool: &'a [Vec<u32>],
    pub trees: &'a [PromptTree],
    pub per_prompt: bool,
}

/// Verifies `drafted`'s trees both ways at every batch size of `batches` (batch b: prompts and
/// trees 0 … b − 1, cyclically) and times each way: [`tree_vs_paths`] after its trees are drafted
/// (tests: any trees, one per prompt).
pub async fn both_ways(
    lab: Lab<'_>,
    drafted: Drafted<'_>,
    batches: &[usize],
    progress: Progress<'_>,
) -> Result<PathsReport, Error> {
    let (m, pool) = (lab.models, drafted.pool);
    assert_eq!(pool.len(), drafted.trees.len(), "a tree per prompt");
    let drafted_trees = drafted.trees;
    let counts: Vec<TreeCounts> = drafted_trees
        .iter()
        .map(|d| TreeCounts::of(&d.tree))
        .collect();
    let (total, mut fewest) = (batches.len(), MAX_REPEATS);
    let (mut rows, mut worst, mut accepted) = (vec![], 0.0f64, 0.0);
    for (bi, &b) in batches.iter().enumerate() {
        let ps: Vec<&[u32]> = (0..b).map(|i| pool[i % pool.len()].as_slice()).collect();
        let ds: Vec<&PromptTree> = (0..b).map(|i| &drafted_trees[i % pool.len()]).collect();
        let prep = Prepared::new(&m.target, &m.device, &ps, &ds).await?;
        let (mut tree_us, mut paths_us) = (vec![], vec![]);
        let mut last = (vec![], vec![]);
        let mut r = 0;
        while r <= REPEATS
            || (r <= MAX_REPEATS && tree_us.iter().chain(&paths_us).sum::<f64>() < TIMED_US)
        {
            // Alternating which way goes first, so that neither always runs on a warmer cache.
            let (t, p) = if r % 2 == 0 {
                let t = prep.tree_call(&lab).await?;
                (t, prep.paths_call(&lab).await?)
            } else {
                let p = prep.paths_call(&lab).await?;
                (prep.tree_call(&lab).await?, p)
            };
            if r > 0 {
                tree_us.push(t.0);
                paths_us.push(p.0);
            }
            last = (t.1, p.1);
            r += 1;
        }
        fewest = fewest.min(tree_us.len());
        progress(bi + 1, total);
        let (n, deep) = (
            prep.tree.0.len() / b,
            prep.paths.0.len() / prep.copies.len(),
        );
        let v = last.0.len() / (b * n);
        let (mut same, mut acc) = (true, 0usize);
        for (i, (d, root)) in ds.iter().zip(&prep.root).enumerate() {
            let mut row_of = vec![0; d.tree.nodes().len()];
            let order = &d.tree.linearize_dfs()[1..];
            order.iter().enumerate().for_each(|(r, &x)| row_of[x] = r);
            let node = |x: usize| {
                let at = (i * n + row_of[x]) * v;
                softmax(&last.0[at..at + v], 1.0)
            };
            let path = |p: usize, k: usize| {
                let at = ((prep.first_path[i] + p) * deep + k) * v;
                softmax(&last.1[at..at + v], 1.0)
            };
            let (walk, best, diff) = verdicts(&d.tree, &d.tokens, root, &node, &path);
            worst = worst.max(diff);
            same &= walk == best && diff <= TOLERANCE;
            acc += walk.len() - 1;
        }
        accepted = acc as f64 / b as f64;
        let ([t0, t, t1], [p0, p, p1]) = (quartiles(tree_us), quartiles(paths_us));
        let at = |i: usize| counts[i % pool.len()];
        rows.push(PathsRow {
            batch: b,
            tokens_tree: (0..b).map(|i| at(i).nodes).sum(),
            tokens_paths: (0..b).map(|i| at(i).path_tokens).sum(),
            tree_us: t,
            paths_us: p,
            tree_iqr_us: t1 - t0,
            paths_iqr_us: p1 - p0,
            ratio: p / t,
            identical: same,
        });
    }
    let mean = |f: fn(&TreeCounts) -> usize| {
        let sum: usize = counts.iter().map(f).sum();
        (sum as f64 / counts.len() as f64).round() as usize
    };
    Ok(PathsReport {
        tree: drafted.name.to_string(),
        backend: m.backend.name(),
        target_width: m.target_width(),
        nodes: mean(|c| c.nodes),
        path_tokens: mean(|c| c.path_tokens),
        paths: mean(|c| c.paths),
        longest_path: counts.iter().map(|c| c.longest_path).max().unwrap_or(0),
        prompt_trees: drafted.per_prompt.then_some(counts),
        repeats: fewest,
        max_abs_diff: worst,
        accepted_mean: accepted,
        rows,
    })
}

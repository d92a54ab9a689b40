//! Sequoia's optimal trees (Chen et al., 2024; lecture §4.7: balanced or not, static trees
//! optimised offline). Under a *positional acceptance vector* p — p_i the probability that a
//! node's i-th ranked draft child is the one verification accepts, whatever the node's depth —
//! a tree's expected tokens per step are 1 + Σ over its nodes of the product of p along the path
//! from the root (the last verified token, not counted) to the node.
//!
//! [`Table`] is the dynamic programme over (nodes, depth): V_r(n), the best sum for exactly n
//! nodes below a node with r levels left, places children at ranks 1, 2, … in turn, each with a
//! subtree of some size s: V_r(n) = W_r(n, 1), W_r(n, i) = max(0 if n = 0; max over s of
//! p_i · (1 + V_{r−1}(s − 1)) + W_r(n − s, i + 1)). A child of rank i exists only beside its
//! siblings of ranks 1 … i − 1, so a vector that rises (p₂ > p₁) is solved as well as one that
//! falls; for a falling one the tree is the n best nodes ([`best_nodes`], checked against it).
//! One table answers every (n, d) at once: the hardware-aware choice ([`super::choose`]) reads
//! them all.

use crate::error::{Error, Range, Text};

/// One entry p_i of an acceptance vector.
pub const ACCEPTANCE: Range = Range::new("acceptance", 0.0, 1.0).shown_as("p_i");
/// The most ranks a vector may give (children per node).
pub const RANKS: Range = Range::new("acceptance entries", 1.0, 16.0);
/// Draft nodes of a tree (the root excluded).
pub const BUDGET: Range = Range::new("budget", 1.0, 256.0).after("nodes", "个节点");
/// Levels of a tree below its root.
pub const DEPTH: Range = Range::new("depth", 1.0, 64.0);

/// A positional acceptance vector: p_1 ≥ 0, …, p_K ≥ 0, Σ p_i ≤ 1 (at most one child of a node is
/// accepted). Valid by construction.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Acceptance(Vec<f64>);

impl Acceptance {
    pub fn new(p: Vec<f64>) -> Result<Acceptance, Error> {
        RANKS.check(p.len() as f64)?;
        for &x in &p {
            ACCEPTANCE.check(x)?;
        }
        let sum: f64 = p.iter().sum();
        // Measured vectors are sums of counts over one total: allow their rounding.
        if sum > 1.0 + 1e-9 {
            return Err(Error::Parse {
                what: "acceptance vector",
                text: p
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                why: Text::new(
                    format!("its entries sum to {sum:.4}, over 1 (at most one child is accepted)"),
                    format!("各项之和为 {sum:.4}，超过 1（每个节点至多接受一个子节点）"),
                ),
            });
        }
        Ok(Acceptance(p))
    }

    /// Reads `0.6,0.2,0.1`: numbers separated by commas (spaces allowed; `，` as typed on a
    /// Chinese keyboard too).
    pub fn parse(text: &str) -> Result<Acceptance, Error> {
        let bad = |why: Text| Error::Parse {
            what: "acceptance vector",
            text: text.to_string(),
            why,
        };
        let mut p = Vec::new();
        for part in text.split([',', '，']) {
            let part = part.trim();
            match part.parse::<f64>() {
                Ok(x) if x.is_finite() => p.push(x),
                _ => {
                    return Err(bad(Text::new(
                        format!("{part:?} is not a number (write p_1,p_2,…, e.g. 0.6,0.2,0.1)"),
                        format!("“{part}”不是数（写作 p_1,p_2,…，例如 0.6,0.2,0.1）"),
                    )))
                }
            }
        }
        Acceptance::new(p)
    }

    pub fn entries(&self) -> &[f64] {
        &self.0
    }

    /// The expected tokens of a chain of γ (the tree of width one): 1 + p₁ + … + p₁^γ.
    pub fn chain_tokens(&self, gamma: usize) -> f64 {
        let p = self.0[0];
        (0..=gamma).map(|i| p.powi(i as i32)).sum()
    }
}

/// A tree of draft nodes: node i's parent (None: the root) and its rank among its siblings
/// (0 = the draft's most likely token), parents before children.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Plan {
    pub parents: Vec<Option<usize>>,
    pub ranks: Vec<usize>,
    /// 1 + Σ over nodes of the product of p along the path.
    pub expected_tokens: f64,
}

impl Plan {
    pub fn nodes(&self) -> usize {
        self.parents.len()
    }

    /// Each node's depth (1 for the root's children).
    pub fn depths(&self) -> Vec<usize> {
        let mut depth = vec![0; self.parents.len()];
        for i in 0..depth.len() {
            depth[i] = self.parents[i].map_or(1, |p| depth[p] + 1);
        }
        depth
    }

    pub fn depth(&self) -> usize {
        self.depths().into_iter().max().unwrap_or(0)
    }

    /// The children each node gets, level by level: level 0 is the root's count, level j lists
    /// the counts of the nodes at depth j in the order an expansion adds them (by parent in that
    /// order, then by rank). What the decoding engine's expansion reads.
    pub fn levels(&self) -> Vec<Vec<usize>> {
        let children = |of: Option<usize>| {
            (0..self.parents.len())
                .filter(|&i| self.parents[i] == of)
                .collect::<Vec<_>>()
        };
        let mut levels = vec![vec![children(None).len()]];
        let mut frontier = children(None);
        while !frontier.is_empty() {
            let kids: Vec<Vec<usize>> = frontier.iter().map(|&n| children(Some(n))).collect();
            if kids.iter().all(Vec::is_empty) {
                break;
            }
            levels.push(kids.iter().map(Vec::len).collect());
            frontier = kids.into_iter().flatten().collect();
        }
        levels
    }

    /// Reads a tree written as [`Plan::labels`] writes it: `1 2 1.1 1.1.1`, each node after its
    /// parent and its elder siblings. Its expectation is left for a vector to give (NaN).
    pub fn from_labels(text: &str) -> Result<Plan, Error> {
        let bad = |en: String, zh: String| Error::Parse {
            what: "tree config",
            text: text.to_string(),
            why: Text::new(en, zh),
        };
        let mut plan = Plan {
            parents: Vec::new(),
            ranks: Vec::new(),
            expected_tokens: f64::NAN,
        };
        let mut seen: Vec<String> = Vec::new();
        for label in text.split_whitespace() {
            let parts: Vec<Option<usize>> = label
                .split('.')
                .map(|x| x.parse::<usize>().ok().filter(|&r| r >= 1))
                .collect();
            let Some(rank) = parts
                .last()
                .copied()
                .flatten()
                .filter(|_| parts.iter().all(Option::is_some))
            else {
                return Err(bad(
                    format!(
                        "{label:?} is not a rank path such as 1.2 (ranks from 1, joined by dots)"
                    ),
                    format!("“{label}”不是 1.2 这样的名次路径（名次从 1 起，用点连接）"),
                ));
            };
            let parent_label = label.rsplit_once('.').map(|(p, _)| p);
            let parent = match parent_label {
                None => None,
                Some(p) => match seen.iter().position(|s| s == p) {
                    Some(i) => Some(i),
                    None => {
                        return Err(bad(
                            format!("{label:?} comes before its parent {p:?}"),
                            format!("“{label}”出现在它的父节点“{p}”之前"),
                        ))
                    }
                },
            };
            let elder = plan.parents.iter().filter(|&&q| q == parent).count();
            if rank - 1 != elder || seen.iter().any(|s| s == label) {
                return Err(bad(
                    format!("{label:?} is not the next rank under its parent (siblings are 1, 2, … in order, each once)"),
                    format!("“{label}”不是其父节点下的下一个名次（兄弟节点依次为 1, 2, …，各一次）"),
                ));
            }
            plan.parents.push(parent);
            plan.ranks.push(rank - 1);
            seen.push(label.to_string());
        }
        if plan.parents.is_empty() {
            return Err(bad("no nodes".into(), "没有节点".into()));
        }
        Ok(plan)
    }

    /// Each node named by its path of ranks from 1, as [`super::TokenTree::expand`] names them
    /// (`2.1`: the first child of the second child).
    pub fn labels(&self) -> Vec<String> {
        let mut labels: Vec<String> = Vec::with_capacity(self.parents.len());
        for i in 0..self.parents.len() {
            let own = (self.ranks[i] + 1).to_string();
            let label = match self.parents[i] {
                Some(p) => format!("{}.{own}", labels[p]),
                None => own,
            };
            labels.push(label);
        }
        labels
    }
}

/// The expected tokens of a tree under `p`: 1 + Σ over nodes of the product of p along the path
/// (a rank beyond the vector is never accepted).
pub fn expected_tokens(p: &Acceptance, parents: &[Option<usize>], ranks: &[usize]) -> f64 {
    expected_tokens_by_depth(std::slice::from_ref(p), parents, ranks)
}

/// The same with a vector per depth: `rows[j]` for the nodes at depth j + 1, the last row deeper.
pub fn expected_tokens_by_depth(
    rows: &[Acceptance],
    parents: &[Option<usize>],
    ranks: &[usize],
) -> f64 {
    let mut reach = vec![0.0; parents.len()];
    let mut depth = vec![0; parents.len()];
    for i in 0..parents.len() {
        depth[i] = parents[i].map_or(1, |q| depth[q] + 1);
        let row = &rows[(depth[i] - 1).min(rows.len() - 1)];
        let own = row.0.get(ranks[i]).copied().unwrap_or(0.0);
        reach[i] = own * parents[i].map_or(1.0, |q| reach[q]);
    }
    1.0 + reach.iter().sum::<f64>()
}

/// Sequoia's table: the best tree for every number of nodes up to `max_nodes` and every depth up
/// to `max_depth`, under one acceptance vector (or, [`Table::by_depth`], one a depth: then for
/// trees of depth up to `max_depth` only).
pub struct Table {
    rows: Vec<Acceptance>,
    max_depth: usize,
    /// value[r][n]: the best Σ for exactly n nodes with at most r levels (−∞: impossible).
    value: Vec<Vec<f64>>,
    /// size[r][n][i]: the subtree size of the child of rank i in that best tree (0: none), given
    /// n nodes left for ranks i, i + 1, ….
    size: Vec<Vec<Vec<usize>>>,
    /// rest[r][n][i]: the best Σ of ranks i, i + 1, … with n nodes left.
    rest: Vec<Vec<Vec<f64>>>,
}

impl Table {
    pub fn new(p: &Acceptance, max_nodes: usize, max_depth: usize) -> Table {
        Table::by_depth(std::slice::from_ref(p), max_nodes, max_depth)
    }

    /// The table with `rows[j]` the vector of the nodes at depth j + 1 (the last row deeper).
    /// With r levels left the nodes sit at depth `max_depth` − r + 1, so with more than one row
    /// the table answers [`Table::plan`] at `max_depth` only.
    pub fn by_depth(rows: &[Acceptance], max_nodes: usize, max_depth: usize) -> Table {
        let k = rows
            .iter()
            .map(|p| p.0.len())
            .max()
            .expect("one row at least");
        let mut value = vec![vec![f64::NEG_INFINITY; max_nodes + 1]; max_depth + 1];
        value[0][0] = 0.0;
        let mut size = vec![vec![vec![0; k + 1]; max_nodes + 1]; max_depth + 1];
        let mut rest = vec![vec![vec![f64::NEG_INFINITY; k + 1]; max_nodes + 1]; max_depth + 1];
        for r in 1..=max_depth {
            let level = max_depth - r; // 0-based depth of the nodes placed with r levels left
            let p = &rows[level.min(rows.len() - 1)];
            for i in (0..=k).rev() {
                rest[r][0][i] = 0.0;
                if i == k {
                    continue;
                }
                for n in 1..=max_nodes {
                    let (mut best, mut best_s) = (f64::NEG_INFINITY, 0);
                    for s in 1..=n {
                        let (below, after) = (value[r - 1][s - 1], rest[r][n - s][i + 1]);
                        if below == f64::NEG_INFINITY || after == f64::NEG_INFINITY {
                            continue;
                        }
                        let v = p.0.get(i).copied().unwrap_or(0.0) * (1.0 + below) + after;
                        if v > best {
                            (best, best_s) = (v, s);
                        }
                    }
                    rest[r][n][i] = best;
                    size[r][n][i] = best_s;
                }
            }
            for n in 0..=max_nodes {
                value[r][n] = rest[r][n][0];
            }
        }
        Table {
            rows: rows.to_vec(),
            max_depth,
            value,
            size,
            rest,
        }
    }

    /// The best expected tokens with exactly `nodes` nodes and depth at most `depth`; None where
    /// no tree of that many nodes fits (ranks × depth too few) or the table is smaller.
    pub fn expected_tokens(&self, nodes: usize, depth: usize) -> Option<f64> {
        if self.rows.len() > 1 && depth != self.max_depth {
            return None;
        }
        let v = *self.value.get(depth)?.get(nodes)?;
        (v > f64::NEG_INFINITY).then_some(1.0 + v)
    }

    /// The best tree with exactly `nodes` nodes and depth at most `depth`.
    pub fn plan(&self, nodes: usize, depth: usize) -> Option<Plan> {
        let expected_tokens = self.expected_tokens(nodes, depth)?;
        let mut plan = Plan {
            parents: Vec::new(),
            ranks: Vec::new(),
            expected_tokens,
        };
        // Breadth-first, so that parents come before children and siblings sit by rank.
        let mut queue = std::collections::VecDeque::from([(None, depth, nodes)]);
        while let Some((parent, r, n)) = queue.pop_front() {
            let (mut left, mut i) = (n, 0);
            while left > 0 {
                let s = self.size[r][left][i];
                debug_assert!(s > 0 && self.rest[r][left][i] > f64::NEG_INFINITY);
                plan.parents.push(parent);
                plan.ranks.push(i);
                queue.push_back((Some(plan.parents.len() - 1), r - 1, s - 1));
                left -= s;
                i += 1;
            }
        }
        debug_assert!(
            (expected_tokens_by_depth(&self.rows, &plan.parents, &plan.ranks)
                - plan.expected_tokens)
                .abs()
                < 1e-9
        );
        Some(plan)
    }
}

/// The most nodes a tree of `ranks` children per node and `depth` levels holds (saturating).
pub fn capacity(ranks: usize, depth: usize) -> usize {
    let (mut level, mut total) = (1usize, 0usize);
    for _ in 0..depth {
        level = level.saturating_mul(ranks);
        total = total.saturating_add(level);
    }
    total
}

/// `tree --sequoia`: the best tree of `budget` nodes and depth at most `depth`, checked.
pub fn sequoia(p: &Acceptance, budget: usize, depth: usize) -> Result<Plan, Error> {
    sequoia_by_depth(std::slice::from_ref(p), budget, depth)
}

/// The same with a vector a depth (`rows[j]` at depth j + 1, the last row deeper).
pub fn sequoia_by_depth(rows: &[Acceptance], budget: usize, depth: usize) -> Result<Plan, Error> {
    BUDGET.check(budget as f64)?;
    DEPTH.check(depth as f64)?;
    let ranks = rows.iter().map(|p| p.0.len()).max().unwrap_or(0);
    let fits = capacity(ranks, depth);
    if budget > fits {
        return Err(Error::OutOfRange {
            name: "budget",
            value: budget as f64,
            allowed: Text::new(
                format!(
                    "with the vector's ranks ({ranks}) as the children of a node, {depth} levels hold at most {fits} nodes"
                ),
                format!("每个节点至多 {ranks} 个孩子（向量的名次数），{depth} 层至多放 {fits} 个节点"),
            ),
        });
    }
    Ok(Table::by_depth(rows, budget, depth)
        .plan(budget, depth)
        .expect("a budget within the capacity has a tree"))
}

/// The `budget` nodes with the highest product of p along their path, grown best-first (with a
/// falling vector a node's parent and elder siblings score at least as high, so they form a
/// tree): Sequoia's tree when p falls and the depth does not bind.
pub fn best_nodes(p: &Acceptance, budget: usize) -> Plan {
    let mut plan = Plan {
        parents: Vec::new(),
        ranks: Vec::new(),
        expected_tokens: 1.0,
    };
    // (score, parent, rank) of the nodes that may be added next.
    let mut frontier: Vec<(f64, Option<usize>, usize, f64)> = vec![(p.0[0], None, 0, 1.0)];
    while plan.parents.len() < budget && !frontier.is_empty() {
        let best = (0..frontier.len())
            .max_by(|&a, &b| frontier[a].0.total_cmp(&frontier[b].0).then(b.cmp(&a)))
            .expect("non-empty");
        let (score, parent, rank, parent_score) = frontier.swap_remove(best);
        plan.parents.push(parent);
        plan.ranks.push(rank);
        plan.expected_tokens += score;
        let node = plan.parents.len() - 1;
        if let Some(&q) = p.0.get(rank + 1) {
            frontier.push((parent_score * q, parent, rank + 1, parent_score));
        }
        frontier.push((score * p.0[0], Some(node), 0, score));
    }
    plan
}

#[cfg(test)]
mod tests;

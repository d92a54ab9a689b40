//! The hardware-aware choice (Sequoia's optimiser; lecture §4.7): given T(k), the time of a
//! target call that verifies k tokens (k = 1 is plain decoding), the draft's cost per level c as
//! a fraction of T(1), and an acceptance vector p, the predicted speedup of a tree of n draft
//! nodes and depth d is E(n, d) / (T(n + 1)/T(1) + d · c), with E from Sequoia's table
//! ([`super::sequoia::Table`]). A chain of γ is the tree of width one: 1 + p₁ + … + p₁^γ over
//! T(γ + 1)/T(1) + γ · c. [`choose`] searches every n the times cover and every depth d ≤ n; where
//! nothing beats plain decoding it says so (γ 0, no nodes).

use super::sequoia::{Acceptance, Table, BUDGET};
use crate::error::{Error, Range, Text};

/// The draft's cost per level of the tree, as a fraction of a one-token target call.
pub const DRAFT_COST: Range = Range::new("draft-cost", 0.0, 100.0).shown_as("c");
/// How many call sizes T(1) … T(K) may be given: a tree of n nodes is verified in n + 1.
pub const TIMES: Range = Range::new("number of times", 2.0, BUDGET.max + 1.0).shown_as("K");

/// T(1), …, T(K): the time of a target call verifying k tokens, in any unit; each positive.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Times(Vec<f64>);

impl Times {
    pub fn new(t: Vec<f64>) -> Result<Times, Error> {
        TIMES.check(t.len() as f64)?;
        if let Some(bad) = t.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
            return Err(Error::Parse {
                what: "times",
                text: bad.to_string(),
                why: Text::new(
                    "every time T(k) must be a positive number",
                    "每个时间 T(k) 都必须是正数",
                ),
            });
        }
        Ok(Times(t))
    }

    /// Reads `1,1.4,1.7`: T(1), T(2), … separated by commas (`，` as typed on a Chinese keyboard
    /// too).
    pub fn parse(text: &str) -> Result<Times, Error> {
        let mut t = Vec::new();
        for part in text.split([',', '，']) {
            match part.trim().parse::<f64>() {
                Ok(x) => t.push(x),
                Err(_) => {
                    return Err(Error::Parse {
                        what: "times",
                        text: text.to_string(),
                        why: Text::new(
                            format!("{:?} is not a number (write T(1),T(2),…)", part.trim()),
                            format!("“{}”不是数（写作 T(1),T(2),…）", part.trim()),
                        ),
                    })
                }
            }
        }
        Times::new(t)
    }

    /// T(k)/T(1): what verifying k tokens costs in one-token calls.
    pub fn ratio(&self, k: usize) -> f64 {
        self.0[k - 1] / self.0[0]
    }

    /// The largest k given.
    pub fn max_k(&self) -> usize {
        self.0.len()
    }

    pub fn entries(&self) -> &[f64] {
        &self.0
    }
}

/// The best chain.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChainPick {
    pub gamma: usize,
    pub expected_tokens: f64,
    pub predicted_speedup: f64,
}

/// The best tree, with its shape.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TreePick {
    pub nodes: usize,
    pub depth: usize,
    pub expected_tokens: f64,
    pub predicted_speedup: f64,
    /// Each node's parent (None: the root) and rank among its siblings (0: the draft's first).
    pub parents: Vec<Option<usize>>,
    pub ranks: Vec<usize>,
}

/// One point of the search: the best tree of exactly `nodes` nodes and depth at most `depth`
/// (its own depth may be less, and its draft cost is counted at that).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Cell {
    pub nodes: usize,
    pub depth: usize,
    pub expected_tokens: f64,
    pub predicted_speedup: f64,
}

/// What [`choose`] finds.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Choice {
    pub chain: ChainPick,
    pub tree: TreePick,
    /// Every (n, d) searched, n ascending, then d.
    pub grid: Vec<Cell>,
}

/// The predicted speedup of a call verifying `nodes` + 1 tokens after `depth` draft calls.
pub fn predicted(times: &Times, expected_tokens: f64, nodes: usize, depth: usize, c: f64) -> f64 {
    expected_tokens / (times.ratio(nodes + 1) + depth as f64 * c)
}

/// The best chain and the best tree for these times, draft cost and acceptance.
pub fn choose(p: &Acceptance, times: &Times, c: f64) -> Result<Choice, Error> {
    choose_by_depth(std::slice::from_ref(p), times, c)
}

/// The same with a vector a depth (`rows[j]` at depth j + 1, the last row deeper): one table
/// for every depth limit, since a tree's levels sit at other depths under another limit.
pub fn choose_by_depth(rows: &[Acceptance], times: &Times, c: f64) -> Result<Choice, Error> {
    DRAFT_COST.check(c)?;
    let n_max = times.max_k() - 1;
    let mut chain = ChainPick {
        gamma: 0,
        expected_tokens: 1.0,
        predicted_speedup: 1.0,
    };
    let first = |j: usize| rows[j.min(rows.len() - 1)].entries()[0];
    let mut e = 1.0;
    let mut reach = 1.0;
    for gamma in 1..=n_max {
        reach *= first(gamma - 1);
        e += reach;
        let s = predicted(times, e, gamma, gamma, c);
        if s > chain.predicted_speedup {
            chain = ChainPick {
                gamma,
                expected_tokens: e,
                predicted_speedup: s,
            };
        }
    }
    let one = (rows.len() == 1).then(|| Table::new(&rows[0], n_max, n_max));
    let tables: Vec<Table> = match one {
        Some(_) => Vec::new(),
        None => (0..=n_max)
            .map(|d| Table::by_depth(rows, n_max, d))
            .collect(),
    };
    let table = |d: usize| one.as_ref().unwrap_or_else(|| &tables[d]);
    let mut grid = Vec::new();
    let mut best: Option<(f64, usize, usize)> = None;
    for n in 1..=n_max {
        for d in 1..=n {
            let Some(plan) = table(d).plan(n, d) else {
                continue;
            };
            let s = predicted(times, plan.expected_tokens, n, plan.depth(), c);
            grid.push(Cell {
                nodes: n,
                depth: d,
                expected_tokens: plan.expected_tokens,
                predicted_speedup: s,
            });
            if s > best.map_or(1.0, |b| b.0) {
                best = Some((s, n, d));
            }
        }
    }
    let tree = match best {
        None => TreePick {
            nodes: 0,
            depth: 0,
            expected_tokens: 1.0,
            predicted_speedup: 1.0,
            parents: vec![],
            ranks: vec![],
        },
        Some((s, n, d)) => {
            let plan = table(d).plan(n, d).expect("searched");
            TreePick {
                nodes: n,
                depth: plan.depth(),
                expected_tokens: plan.expected_tokens,
                predicted_speedup: s,
                parents: plan.parents,
                ranks: plan.ranks,
            }
        }
    };
    Ok(Choice { chain, tree, grid })
}

#[cfg(test)]
mod tests;

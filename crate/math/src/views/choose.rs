//! How to speculate on this device (lecture §4.7, the open questions: balanced or unbalanced
//! trees, static trees optimised offline; Sequoia's hardware-aware optimiser). From an acceptance
//! vector p and a device's curve T(k) with its draft cost c, the best chain and the best tree
//! ([`crate::tree::choose`]); the predicted speedup over every (nodes n, depth d) as a heat map
//! with the choice outlined; the chosen tree drawn, its nodes named by their path of ranks; a
//! caption that says why in this device's own numbers; and every device side by side, so that a
//! reader sees why 8 nodes fit a GPU and 2–4 a laptop's CPU. Analytic: no model runs here;
//! `specdec::views::choose_here` measures the reader's own device and draws the same figures for
//! it (the heat map, the tree and its labels are public for that).

use crate::error::Error;
use crate::i18n::Lang;
use crate::plot::diagrams::{draw_tree, ramp, Grid};
use crate::plot::{colors, figure_width, render, text_width, wrap, Align};
use crate::roofline::profiles::{profile, profiles, Profile};
use crate::tree::choose::{choose, ChainPick, Choice, Times};
use crate::tree::sequoia::{Acceptance, Plan};
use crate::tree::TokenTree;

/// The acceptance vector the widget starts from: draft B's greedy vector on LikesWorld, measured
/// on 200 calibration prompts (`specdec likesworld sequoia --budget 8`: 0.763 0.113 0.072 0.032
/// 0.014 0.005 0 0 over 3,772 positions).
pub const DEFAULT_ACCEPTANCE: &str = "0.763,0.113,0.072,0.032,0.014,0.005";
/// The device the widget starts on: the one the page runs on, measured.
pub const DEFAULT_DEVICE: &str = "cpu-measured";

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct ChooseParams {
    /// p_1, p_2, …: the chance that a node's i-th ranked child is the one accepted.
    pub acceptance: String,
    /// A device's key ([`crate::roofline::profiles::profiles`]).
    pub device: String,
    /// c, the draft's cost per level over T(1), in place of the device's own (none: its own).
    pub draft_cost: Option<f64>,
    /// The language of the figures' and the caption's texts.
    pub lang: Lang,
    /// The room the page has for a figure, in CSS px (none: each figure's own width): figures
    /// are drawn for it rather than scaled down, so that their labels keep their size.
    pub figure_width: Option<u32>,
}

impl Default for ChooseParams {
    fn default() -> Self {
        ChooseParams {
            acceptance: DEFAULT_ACCEPTANCE.into(),
            device: DEFAULT_DEVICE.into(),
            draft_cost: None,
            lang: Lang::En,
            figure_width: None,
        }
    }
}

/// The best tree, its nodes named by their rank paths (`2.1`: the first child of the second).
#[derive(Debug, Clone, serde::Serialize)]
pub struct TreeChoice {
    pub nodes: usize,
    pub depth: usize,
    pub expected_tokens: f64,
    pub predicted_speedup: f64,
    pub parents: Vec<Option<usize>>,
    pub labels: Vec<String>,
}

/// One device's choice, for the table of every device (each at its own c).
#[derive(Debug, Clone, serde::Serialize)]
pub struct DeviceRow {
    pub key: String,
    pub name: String,
    pub draft_cost: f64,
    /// The largest call its times cover, K, and T(K)/T(1).
    pub max_k: usize,
    pub top_ratio: f64,
    pub chain: ChainPick,
    pub tree_nodes: usize,
    pub tree_depth: usize,
    pub tree_speedup: f64,
    /// The tree takes every node the times cover: more might still pay.
    pub tree_capped: bool,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ChooseView {
    pub device: String,
    pub name: String,
    /// Where the device's figures come from.
    pub source: String,
    /// The c used, and the device's own.
    pub draft_cost: f64,
    pub device_draft_cost: f64,
    /// The most nodes the times cover (K − 1).
    pub max_nodes: usize,
    /// (k, T(k)/T(1)) at k = 2, 4, 8, … up to K.
    pub ratios: Vec<(usize, f64)>,
    pub chain: ChainPick,
    pub tree: TreeChoice,
    /// Why, in this device's numbers.
    pub caption: String,
    pub devices: Vec<DeviceRow>,
    pub svg_heat: String,
    pub svg_tree: String,
}

pub fn choose_view(params: &ChooseParams) -> Result<ChooseView, Error> {
    let p = Acceptance::parse(&params.acceptance)?;
    let device = profile(&params.device)?;
    let c = params.draft_cost.unwrap_or(device.draft_cost);
    let times = device.times();
    let choice = choose(&p, &times, c)?;
    let l = params.lang;
    let devices = profiles()
        .iter()
        .map(|d| device_row(&p, d, l))
        .collect::<Result<Vec<_>, Error>>()?;
    let plan_labels = labels(&choice.tree.parents, &choice.tree.ranks);
    let w = figure_width(560, params.figure_width);
    Ok(ChooseView {
        device: device.key.clone(),
        name: device.name.get(l).to_string(),
        source: device.source.get(l).to_string(),
        draft_cost: c,
        device_draft_cost: device.draft_cost,
        max_nodes: times.max_k() - 1,
        ratios: ratios(&times),
        caption: caption(&choice, &times, c, l),
        svg_heat: heat_svg(&choice, times.max_k() - 1, device.name.get(l), c, l, w),
        svg_tree: tree_svg(&choice, &plan_labels, l, w),
        chain: choice.chain.clone(),
        tree: TreeChoice {
            nodes: choice.tree.nodes,
            depth: choice.tree.depth,
            expected_tokens: choice.tree.expected_tokens,
            predicted_speedup: choice.tree.predicted_speedup,
            parents: choice.tree.parents.clone(),
            labels: plan_labels,
        },
        devices,
    })
}

fn device_row(p: &Acceptance, d: &Profile, l: Lang) -> Result<DeviceRow, Error> {
    let times = d.times();
    let choice = choose(p, &times, d.draft_cost)?;
    Ok(DeviceRow {
        key: d.key.clone(),
        name: d.name.get(l).to_string(),
        draft_cost: d.draft_cost,
        max_k: times.max_k(),
        top_ratio: times.ratio(times.max_k()),
        tree_capped: choice.tree.nodes == times.max_k() - 1,
        tree_nodes: choice.tree.nodes,
        tree_depth: choice.tree.depth,
        tree_speedup: choice.tree.predicted_speedup,
        chain: choice.chain,
    })
}

/// Each node's rank path from 1, as the token-tree builder names an expansion's nodes.
pub fn labels(parents: &[Option<usize>], ranks: &[usize]) -> Vec<String> {
    Plan {
        parents: parents.to_vec(),
        ranks: ranks.to_vec(),
        expected_tokens: 0.0,
    }
    .labels()
}

/// T(k)/T(1) at k = 2, 4, 8, … and at K.
fn ratios(times: &Times) -> Vec<(usize, f64)> {
    let k_max = times.max_k();
    let mut ks: Vec<usize> = std::iter::successors(Some(2usize), |k| Some(k * 2))
        .take_while(|&k| k <= k_max)
        .collect();
    if ks.last() != Some(&k_max) {
        ks.push(k_max);
    }
    ks.into_iter().map(|k| (k, times.ratio(k))).collect()
}

fn num(x: f64) -> String {
    format!("{x:.2}")
}

/// Why this choice, in the device's numbers: what a call of k tokens costs, what the chosen tree
/// costs and yields, and what one node more would do (or that the times end there).
fn caption(choice: &Choice, times: &Times, c: f64, l: Lang) -> String {
    let list = ratios(times)
        .iter()
        .map(|(k, r)| format!("T({k})/T(1) = {}", num(*r)))
        .collect::<Vec<_>>()
        .join(l.pick(", ", "，"));
    let mut out = vec![l.pick(
        format!("On this device verifying k tokens costs T(k)/T(1) one-token calls: {list}. A tree of n nodes is verified in one call of n + 1 tokens after d draft calls of c = {c:.3} each, so it predicts E/(T(n+1)/T(1) + d·c)."),
        format!("在这台设备上，验证 k 个 token 花 T(k)/T(1) 次单 token 调用的时间：{list}。n 个节点的树要起草 d 层（每层 c = {c:.3}），再用一次 n + 1 个 token 的调用验证，预测加速比为 E/(T(n+1)/T(1) + d·c)。"),
    )];
    let (n, d) = (choice.tree.nodes, choice.tree.depth);
    let n_max = times.max_k() - 1;
    // k up to which a call costs within 10% of a one-token call.
    let flat = (1..=times.max_k())
        .take_while(|&k| times.ratio(k) <= 1.1)
        .last()
        .unwrap_or(1);
    if n == 0 && choice.chain.gamma == 0 {
        let one = times.ratio(2) + c;
        out.push(l.pick(
            format!("Here plain decoding is faster: even one node costs {} one-token calls, more than the tokens any tree or chain yields for it.", num(one)),
            format!("这里不推测更快：哪怕只猜一个节点也要花 {} 次单 token 调用的时间，比任何树或链换来的 token 都多。", num(one)),
        ));
        return out.join(" ");
    }
    if n > 0 {
        let (cost, e) = (
            times.ratio(n + 1) + d as f64 * c,
            choice.tree.expected_tokens,
        );
        out.push(l.pick(
            format!("The best tree, {n} nodes in {d} levels, costs {} one-token calls and yields E = {} tokens: {}×.", num(cost), num(e), num(choice.tree.predicted_speedup)),
            format!("最好的树有 {n} 个节点、{d} 层，花 {} 次单 token 调用的时间，产出 E = {} 个 token：{}×。", num(cost), num(e), num(choice.tree.predicted_speedup)),
        ));
    }
    let next = choice
        .grid
        .iter()
        .filter(|cell| cell.nodes == n + 1)
        .max_by(|a, b| a.predicted_speedup.total_cmp(&b.predicted_speedup));
    out.push(if flat >= 8 {
        l.pick(
            format!("Up to k = {flat} a call costs within 10% of a one-token call: nodes are nearly free here, so the tree grows until a further node's chance of acceptance is worth less than what it adds to the call and the draft, or the times given end."),
            format!("直到 k = {flat}，一次调用的时间都不超过单 token 调用的 1.1 倍：这里节点几乎免费，树一直长，直到再加一个节点被接受的机会抵不上它给调用和起草增加的时间，或给出的时间到头。"),
        )
    } else {
        l.pick(
            format!("Here every token in a call costs: T(k)/T(1) passes 1.1 already at k = {}, so the tree stays small.", flat + 1),
            format!("这里调用里每多一个 token 都要花时间：k = {} 时 T(k)/T(1) 已超过 1.1，所以树只能很小。", flat + 1),
        )
    });
    if n == n_max && n > 0 {
        out.push(l.pick(
            format!(
                "The times given end at k = {}: a larger tree might pay still.",
                n_max + 1
            ),
            format!("给出的时间只到 k = {}：更大的树也许还划算。", n_max + 1),
        ));
    } else if let Some(next) = next {
        // Two decimals where they tell the two apart, else four.
        let close = (next.predicted_speedup - choice.tree.predicted_speedup).abs() < 0.005;
        let (a, b) = match close {
            true => (
                format!("{:.4}", next.predicted_speedup),
                format!("{:.4}", choice.tree.predicted_speedup),
            ),
            false => (
                num(next.predicted_speedup),
                num(choice.tree.predicted_speedup),
            ),
        };
        out.push(l.pick(
            format!(
                "One node more (the best tree of {} nodes) would predict {a}×, against {b}×.",
                n + 1
            ),
            format!(
                "再多一个节点（{} 个节点里最好的树）预测为 {a}×，对比 {b}×。",
                n + 1
            ),
        ));
    }
    out.join(if l == Lang::Zh { "" } else { " " })
}

/// The depths worth a row: down to where every n's best tree is reached (a vector of one rank
/// needs n levels for n nodes); below that every row repeats the one above.
fn rows_needed(choice: &Choice) -> usize {
    let mut need = 1;
    for cell in &choice.grid {
        let deepest = choice
            .grid
            .iter()
            .filter(|o| o.nodes == cell.nodes)
            .map(|o| o.expected_tokens)
            .fold(f64::MIN, f64::max);
        let reached = choice
            .grid
            .iter()
            .filter(|o| o.nodes == cell.nodes && o.expected_tokens + 1e-12 >= deepest)
            .map(|o| o.depth)
            .min()
            .unwrap_or(1);
        need = need.max(reached);
    }
    need.max(choice.tree.depth)
}

const LEFT: i32 = 52;
const RIGHT: i32 = 12;

pub fn heat_svg(choice: &Choice, n_max: usize, device: &str, c: f64, l: Lang, w: u32) -> String {
    let depths = rows_needed(choice);
    let cell_w = ((w as i32 - LEFT - RIGHT) / n_max as i32).clamp(4, 44);
    let with_text = cell_w >= 30;
    let cell_h = if with_text { 22 } else { 16 };
    // A column label every `step` nodes, so that the labels never touch.
    let step = [1, 2, 4, 5, 8, 10, 16, 20, 32]
        .into_iter()
        .find(|s| s * cell_w >= 22)
        .unwrap_or(64) as usize;
    let cols: Vec<String> = (1..=n_max)
        .map(|n| {
            if n % step == 0 || (n == 1 && step >= 4) {
                n.to_string()
            } else {
                String::new()
            }
        })
        .collect();
    let rows: Vec<String> = (1..=depths).map(|d| d.to_string()).collect();
    let width = (LEFT + n_max as i32 * cell_w + RIGHT).max(w as i32) as u32;
    let title = l.pick(
        "Predicted speedup of the best tree of n nodes, depth ≤ d",
        "n 个节点、深度 ≤ d 的最好的树的预测加速比",
    );
    let head = wrap(title, 13, width as i32 - 16);
    let sub = wrap(
        &l.pick(
            format!("{device}, c = {c:.3}"),
            format!("{device}，c = {c:.3}"),
        ),
        11,
        width as i32 - 16,
    );
    let top = 16 + 16 * head.len() as i32 + 14 * sub.len() as i32 + 22;
    let best = choice
        .grid
        .iter()
        .map(|cell| cell.predicted_speedup)
        .fold(1.0, f64::max);
    let (n, d) = (choice.tree.nodes, choice.tree.depth);
    let worst = choice
        .grid
        .iter()
        .map(|cell| cell.predicted_speedup)
        .filter(|&s| s > 1.0)
        .fold(best, f64::min);
    let key = [
        l.pick(
            format!("colour: the predicted speedup, from {worst:.2}× (lightest) to {best:.2}× (darkest); grey: slower than plain decoding; white: n nodes do not fit in d levels of the vector's ranks"),
            format!("颜色：预测加速比，从 {worst:.2}×（最浅）到 {best:.2}×（最深）；灰色：比不推测还慢；白色：按向量的秩数，d 层放不下 n 个节点"),
        ),
        if n == 0 {
            l.pick(
                "no outline: no tree beats plain decoding".to_string(),
                "没有框：没有哪棵树比不推测快".to_string(),
            )
        } else {
            l.pick(
                format!("outlined: the choice, n = {n}, d = {d}, {:.2}×", choice.tree.predicted_speedup),
                format!("框出的是选择：n = {n}，d = {d}，{:.2}×", choice.tree.predicted_speedup),
            )
        },
    ];
    let key_lines: Vec<String> = key
        .iter()
        .flat_map(|k| wrap(k, 11, width as i32 - 16))
        .collect();
    // At least as tall as the rotated axis label, so that the key below never meets it.
    let grid_h = (depths as i32 * cell_h).max(72);
    let grid_bottom = top + grid_h;
    let height = (grid_bottom + 12 + 14 * key_lines.len() as i32 + 6) as u32;
    let label = l.pick(
        format!("Predicted speedup over nodes and depth on {device}"),
        format!("{device}上各节点数与深度的预测加速比"),
    );
    render(width, height, &label, |cv| {
        let mut y = 16;
        for line in &head {
            cv.text((8, y), line, 13, colors::INK, Align::Start, false);
            y += 16;
        }
        for line in &sub {
            cv.text((8, y), line, 11, colors::AXIS, Align::Start, false);
            y += 14;
        }
        cv.text(
            (LEFT, top - 20),
            l.pick("nodes n →", "节点数 n →"),
            11,
            colors::AXIS,
            Align::Start,
            false,
        );
        cv.text_vertical(
            (12, top + grid_h / 2),
            l.pick("depth ≤ d", "深度 ≤ d"),
            11,
            colors::AXIS,
        );
        let grid = Grid {
            rows: &rows,
            cols: &cols,
            cell_w,
            cell_h,
            origin: (LEFT, top),
        };
        grid.draw(cv, |r, col| {
            // Depth d beyond n: the best tree of depth ≤ n, the same cell as d = n. No cell:
            // n nodes do not fit in d levels of the vector's ranks.
            let (n, d) = (col + 1, (r + 1).min(col + 1));
            let Some(cell) = choice.grid.iter().find(|x| x.nodes == n && x.depth == d) else {
                return (ramp(colors::GREY, 0.0), String::new());
            };
            let s = cell.predicted_speedup;
            let text = if with_text {
                format!("{s:.2}")
            } else {
                String::new()
            };
            if s <= 1.0 {
                (ramp(colors::GREY, 0.35), text)
            } else {
                let t = if best > 1.0 {
                    (s - 1.0) / (best - 1.0)
                } else {
                    0.0
                };
                (ramp(colors::TEAL, 0.12 + 0.78 * t), text)
            }
        });
        if n > 0 {
            let (x, y) = (
                LEFT + (n as i32 - 1) * cell_w,
                top + (d as i32 - 1) * cell_h,
            );
            cv.rect((x - 1, y - 1), (x + cell_w, y + cell_h), colors::RED, false);
            cv.rect((x, y), (x + cell_w - 1, y + cell_h - 1), colors::RED, false);
        }
        for (i, line) in key_lines.iter().enumerate() {
            cv.text(
                (8, grid_bottom + 16 + 14 * i as i32),
                line,
                11,
                colors::AXIS,
                Align::Start,
                false,
            );
        }
    })
}

/// The chosen tree, top-down from the root (the last verified token), each node named by its
/// path of ranks.
pub fn tree_svg(choice: &Choice, labels: &[String], l: Lang, w: u32) -> String {
    let t = &choice.tree;
    // Where the widest level's full rank paths would not fit side by side (a phone, a 31-node
    // tree), each node is named by its own rank only: its path is the line up to the root.
    let room = (1..=t.depth)
        .map(|d| {
            (labels.iter().filter(|x| x.split('.').count() == d))
                .map(|x| text_width(x, 11) + 8)
                .sum::<i32>()
        })
        .max()
        .unwrap_or(0);
    let short = room > w as i32 - 16;
    let name = |i: usize| match short {
        true => labels[i].rsplit('.').next().unwrap_or_default().to_string(),
        false => labels[i].clone(),
    };
    let paths: Vec<Vec<String>> = (0..t.parents.len())
        .map(|i| {
            let mut path = vec![name(i)];
            let mut at = t.parents[i];
            while let Some(p) = at {
                path.push(name(p));
                at = t.parents[p];
            }
            path.reverse();
            path
        })
        .collect();
    let root = l.pick("root", "根");
    let tree = TokenTree::merge(&paths, root);
    let title = if t.nodes == 0 {
        l.pick(
            "No tree: plain decoding is faster here".to_string(),
            "没有树：这里不推测更快".to_string(),
        )
    } else {
        l.pick(
            format!(
                "The chosen tree: {} nodes, depth {}, E = {:.2} tokens a call (a node's name: {})",
                t.nodes,
                t.depth,
                t.expected_tokens,
                match short {
                    true => "its rank among its siblings",
                    false => "its ranks from the root",
                }
            ),
            format!(
                "选出的树：{} 个节点，深度 {}，每次调用 E = {:.2} 个 token（节点名：{}）",
                t.nodes,
                t.depth,
                t.expected_tokens,
                match short {
                    true => "它在兄弟节点中的秩",
                    false => "从根起各层的秩",
                }
            ),
        )
    };
    let lines = wrap(&title, 13, w as i32 - 16);
    let below = 16 * (lines.len() as i32 - 1);
    let height = (70 + t.depth as i32 * 56).max(110) + below;
    let label = l.pick(
        format!("The chosen tree of {} nodes", t.nodes),
        format!("选出的 {} 个节点的树", t.nodes),
    );
    render(w, height as u32, &label, |cv| {
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
        draw_tree(cv, &tree, w as i32, 40 + below, 56, None);
    })
}

#[cfg(test)]
mod tests;

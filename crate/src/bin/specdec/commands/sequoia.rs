//! `likesworld sequoia`: a draft's acceptance vector measured, Sequoia's tree built for it, and
//! that tree decoded beside every ⟨k₁,…⟩ configuration of as many nodes (lecture §4.7, issue 54);
//! `likesworld choose`: how to speculate on this device, chosen from what it measures, then timed.

use super::options::{draft, models, prompts, value};
use crate::opts::{row, Opts, Report, Usage};
use burn::tensor::read_sync;
use specdec::clock::native_clock;
use specdec::i18n::Lang;
use specdec::lab::choose::{choose_here, Timed, MAX_NODES};
use specdec::lab::sequoia::{compare, hidden_vectors};
use specdec::lab::Lab;
use specdec::tree::sequoia::{BUDGET, DEPTH};

pub fn sequoia(o: &mut Opts) -> Result<Report, Usage> {
    if let Some(hidden) = o.peek("draft").filter(|d| ["medusa", "eagle"].contains(d)) {
        let medusa = hidden == "medusa";
        o.take("draft");
        return hidden_sequoia(o, medusa);
    }
    let d = draft(o, Some("b"))?;
    let budget = o.count(&BUDGET, Some(8))?;
    let depth = o.count(&DEPTH, Some(8))?;
    let mss = match o.take("verify").as_deref() {
        None | Some("greedy") => false,
        Some("mss") => true,
        Some(other) => {
            return Err(Usage(format!(
                "{}: unknown verification {other:?} (known: greedy, mss)",
                o.command
            )))
        }
    };
    let n = prompts(o, 50)?;
    let m = models(o)?;
    let clock = native_clock();
    let lab = Lab::new(&m, Lang::En, &clock);
    let r = read_sync(compare(lab, d, budget, depth, mss, n, &mut |_, _| {}))?;
    let p: Vec<String> = r.vector.p.iter().map(|x| format!("{x:.3}")).collect();
    let mut rows = vec![
        row(
            &format!("acceptance vector ({})", r.vector.verify),
            format!("{} ({} positions)", p.join(" "), r.vector.positions),
        ),
        row("Sequoia's tree by rank path", r.labels.join(" ")),
    ];
    if let (Some(rows_by_depth), Some(fit)) = (&r.by_depth, &r.fitted_labels) {
        let reached = r.by_depth_reached.clone().unwrap_or_default();
        for (j, p) in rows_by_depth.iter().enumerate() {
            let p: Vec<String> = p.iter().map(|x| format!("{x:.3}")).collect();
            let how = match reached.get(j) {
                Some(true) => "its decoding",
                _ => "not reached: the overall vector",
            };
            rows.push(row(&format!("  at depth {} ({how})", j + 1), p.join(" ")));
        }
        rows.push(row("refined on the replay, by rank path", fit.join(" ")));
    }
    for t in &r.rows {
        let identical = t
            .identical
            .map(|i| format!(", identical {i}/{}", r.prompts))
            .unwrap_or_default();
        rows.push(row(
            &t.tree,
            format!(
                "{} nodes, depth {}: τ predicted {:.3}{}, measured {:.3}{identical}",
                t.nodes,
                t.depth,
                t.predicted_tokens,
                t.replayed_tokens
                    .map(|x| format!(", replayed {x:.3}"))
                    .unwrap_or_default(),
                t.tokens_per_call
            ),
        ));
    }
    Ok(Report {
        json: value(&r),
        rows,
    })
}

/// `likesworld choose [--max-nodes M] [--prompts P]`: how to speculate on this device, measured.
pub fn choose(o: &mut Opts) -> Result<Report, Usage> {
    let max_nodes = o.count(&MAX_NODES, Some(16))?;
    let n = prompts(o, 20)?;
    let m = models(o)?;
    let clock = native_clock();
    let lab = Lab::new(&m, Lang::En, &clock);
    let r = read_sync(choose_here(lab, max_nodes, n, None, &mut |_, _| {}))?;
    let t1 = r.times_us[0];
    let ratios: Vec<String> = r
        .times_us
        .iter()
        .map(|t| format!("{:.2}", t / t1))
        .collect();
    let p: Vec<String> = r.vector.p.iter().map(|x| format!("{x:.3}")).collect();
    let (chain, tree) = (&r.chosen.chain, &r.chosen.tree);
    // Every draft's vector (issue 54, item 1): A and B both ways, the shipped pools as one
    // proposer each, Medusa and EAGLE a depth.
    let mut vectors: Vec<(String, String)> = r
        .vectors
        .models
        .iter()
        .map(|v| row(&format!("  draft {} ({})", v.draft, v.verify), list(&v.p)))
        .collect();
    for pool in &r.vectors.pools {
        let name = match pool.boosted {
            true => "boost-tuned pool",
            false => "control pool",
        };
        let name = format!("  {name} of {} (greedy)", pool.members);
        vectors.push(row(&name, list(&pool.p)));
    }
    for h in &r.vectors.hidden {
        for (j, v) in h.rows.iter().enumerate() {
            vectors.push(row(&format!("  {} at depth {}", h.draft, j + 1), list(v)));
        }
    }
    Ok(Report {
        rows: vec![
            row("target", format!("×{}, T(1) {:.0} µs", r.target_width, t1)),
            row("T(k)/T(1), k = 1, 2, …", ratios.join(" ")),
            row("c (draft B's call over T(1))", format!("{:.3}", r.draft_cost)),
            row("acceptance vector (greedy)", p.join(" ")),
            row(
                "  met a depth by the tree",
                r.met_by_depth
                    .iter()
                    .map(|v| list(v))
                    .collect::<Vec<_>>()
                    .join(" | "),
            ),
            row(
                "chosen chain",
                match chain.pick.gamma {
                    0 => format!(
                        "plain decoding is faster (no γ predicted over 1×); γ {} timed to show it: τ replayed {:.2}, predicted {:.2}×, measured {:.2}× (IQR {:.2}), τ {:.2}",
                        chain.timed_gamma,
                        chain.replayed_tokens,
                        chain.timed_predicted_speedup,
                        chain.timed.measured_speedup,
                        chain.timed.measured_speedup_iqr,
                        chain.timed.tokens_per_call
                    ),
                    g => format!(
                        "γ {g}: predicted {:.2}× by the vector (E {:.2}); τ replayed {:.2}, predicted {:.2}×, measured {:.2}× (IQR {:.2}), τ {:.2}",
                        chain.pick.predicted_speedup,
                        chain.pick.expected_tokens,
                        chain.replayed_tokens,
                        chain.timed_predicted_speedup,
                        chain.timed.measured_speedup,
                        chain.timed.measured_speedup_iqr,
                        chain.timed.tokens_per_call
                    ),
                },
            ),
            row(
                "chosen tree",
                if tree.dp.nodes == 0 {
                    format!(
                        "none pays: plain decoding is faster (a tree of 1 node timed: {:.2}×, τ {:.2})",
                        tree.timed.measured_speedup, tree.timed.tokens_per_call
                    )
                } else {
                    format!(
                        "{} nodes, depth {}: predicted {:.2}× by the vector (E {:.2}); decoded: the DP's refined on the replay, {} nodes, depth {}, predicted {:.2}× (τ replayed {:.2}), measured {:.2}× (IQR {:.2}), τ {:.2}",
                        tree.dp.nodes,
                        tree.dp.depth,
                        tree.dp.predicted_speedup,
                        tree.dp.expected_tokens,
                        tree.nodes,
                        tree.depth,
                        tree.predicted_speedup,
                        tree.replayed_tokens,
                        tree.timed.measured_speedup,
                        tree.timed.measured_speedup_iqr,
                        tree.timed.tokens_per_call
                    )
                },
            ),
            row("  by rank path", tree.labels.join(" ")),
            row("  chain: three figures", three(&chain.timed)),
            row("  tree: three figures", three(&tree.timed)),
            row("  EAGLE-2 at 8: three figures", three(&r.fixed_eagle2_8)),
            row(
                "EAGLE-2 at 8 nodes",
                format!(
                    "measured {:.2}× (IQR {:.2})",
                    r.fixed_eagle2_8.measured_speedup, r.fixed_eagle2_8.measured_speedup_iqr
                ),
            ),
            row(
                "the better choice against it",
                format!(
                    "EAGLE-2's time over the better's {:.2} (IQR {:.2} prompt by prompt; the four decoded in turn)",
                    r.versus_eagle2.ratio, r.versus_eagle2.iqr
                ),
            ),
            row(
                "this device's limit",
                format!(
                    "{:.2}× (T_lim(k) = max(weights / {:.1} GB/s, k·FLOPs / {:.1} GFLOP/s): T_lim(k)/T_lim(1) {})",
                    r.limit_speedup,
                    r.bandwidth_gbs,
                    r.peak_gflops,
                    r.limit_times_us
                        .iter()
                        .map(|t| format!("{:.2}", t / r.limit_times_us[0]))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            ),
        ]
        .into_iter()
        .chain(std::iter::once(row("every draft's vector", String::new())))
        .chain(vectors)
        .collect(),
        json: value(&r),
    })
}

/// `likesworld sequoia --draft medusa|eagle`: the vector a depth, Sequoia's tree for it beside
/// the sparse tree the page runs.
fn hidden_sequoia(o: &mut Opts, medusa: bool) -> Result<Report, Usage> {
    let budget = o.count(&BUDGET, Some(8))?;
    let depth = o.count(&DEPTH, Some(8))?;
    let m = models(o)?;
    let r = read_sync(hidden_vectors(&m, medusa, budget, depth))?;
    let mut rows: Vec<(String, String)> = r
        .rows
        .iter()
        .enumerate()
        .map(|(j, p)| {
            let p: Vec<String> = p.iter().map(|x| format!("{x:.3}")).collect();
            row(&format!("{} at depth {}", r.draft, j + 1), p.join(" "))
        })
        .collect();
    rows.push(row(
        "Sequoia's tree (the vectors a depth)",
        format!(
            "{:.3} tokens a step: {}",
            r.sequoia_tokens,
            r.sequoia_labels.join(" ")
        ),
    ));
    rows.push(row(
        "the sparse tree the page runs",
        format!(
            "{:.3} tokens a step: {}",
            r.sparse_tokens,
            r.sparse_labels.join(" ")
        ),
    ));
    Ok(Report {
        json: value(&r),
        rows,
    })
}

/// p_1 … p_k to three decimals, dropping the trailing zeros of the ranks past the last measured.
fn list(v: &[f64]) -> String {
    let n = v.iter().rposition(|&x| x > 0.0).map_or(1, |i| i + 1);
    v[..n]
        .iter()
        .map(|x| format!("{x:.3}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Measured, predicted from the measured curve, and the limit (issue 54, item 4).
fn three(t: &Timed) -> String {
    format!(
        "measured {:.2}×, predicted from this run's curve {:.2}× (T(n)/T(1) {:.2}, drafting {:.3}), limit {:.2}×",
        t.measured_speedup,
        t.predicted_speedup_curve,
        t.verify_over_target,
        t.drafting,
        t.limit_speedup
    )
}

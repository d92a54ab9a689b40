//! `likesworld sequoia`: a draft's acceptance vector measured, Sequoia's tree built for it, and
//! that tree decoded beside every ⟨k₁,…⟩ configuration of as many nodes (lecture §4.7, issue 54).

use super::options::{draft, models, prompts, value};
use crate::opts::{row, Opts, Report, Usage};
use burn::tensor::read_sync;
use specdec::clock::native_clock;
use specdec::i18n::Lang;
use specdec::lab::sequoia::compare;
use specdec::lab::Lab;
use specdec::tree::sequoia::{BUDGET, DEPTH};

pub fn sequoia(o: &mut Opts) -> Result<Report, Usage> {
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
        for (j, p) in rows_by_depth.iter().enumerate() {
            let p: Vec<String> = p.iter().map(|x| format!("{x:.3}")).collect();
            rows.push(row(
                &format!("  at depth {} (its decoding)", j + 1),
                p.join(" "),
            ));
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

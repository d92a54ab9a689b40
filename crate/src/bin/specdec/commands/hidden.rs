//! `likesworld medusa|eagle|methods`: drafts on the target's own hidden states (lecture §5.1,
//! §5.2, §4.7) and the §6 table measured. Each reads its options into one `specdec::lab`
//! experiment, runs it as the page does (`options::run`), and prints its report.

use super::options::{
    drafts_row, models_with_both_drafts, models_without_draft, prompts, run, value,
};
use crate::opts::{row, Opts, Report, Usage};
use specdec::error::Named;
use specdec::i18n::Lang;
use specdec::lab::experiment::Outcome;
use specdec::lab::hidden::HiddenReport;
use specdec::lab::params::{
    Budget, Drafter, Experiment, HiddenMethod, HiddenRun, MethodsRun, TreeKind, Verification,
    BUDGET, DEFAULT_BUDGET, DEFAULT_DEPTH, DEPTH, HEADS,
};
use specdec::model::medusa::MAX_HEADS;

fn tree_kind(o: &mut Opts, dynamic: bool) -> Result<TreeKind, Usage> {
    let named = o.take("tree");
    match (dynamic, named.as_deref()) {
        (true, None | Some("dynamic")) => Ok(TreeKind::Dynamic),
        (true, Some(t)) => Err(Usage(format!(
            "{}: --dynamic and --tree {t} exclude each other",
            o.command
        ))),
        (false, None | Some("sparse")) => Ok(TreeKind::Sparse),
        (false, Some("balanced")) => Ok(TreeKind::Balanced),
        (false, Some("dynamic")) => Ok(TreeKind::Dynamic),
        (false, Some(t)) => Err(Usage(format!(
            "{}: unknown tree {t:?} (known: sparse, balanced, dynamic)",
            o.command
        ))),
    }
}

fn rows(r: &HiddenReport) -> Vec<(String, String)> {
    let list = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut rows = vec![
        row("method", &r.method),
        row(
            "identical to the target's greedy output",
            match r.p_value {
                None => format!("{}/{}", r.identical, r.prompts),
                Some(_) => "— (sampled: the calibration test below is the check)".into(),
            },
        ),
        row(
            "tokens per target call τ",
            format!("{:.3}", r.tokens_per_call),
        ),
        row(
            "verified nodes per call",
            format!("{:.2}", r.verified_nodes_per_call),
        ),
        row(
            "accepted fraction of nodes",
            format!("{:.3}", r.accepted_fraction),
        ),
        row("acceptance by depth", list(&r.acceptance_by_depth)),
        row(
            "draft calls per step, c (drafting a step / a target call)",
            format!(
                "{:.2}, {:.3} ({:.3} a call)",
                r.draft_calls_per_step,
                r.c,
                r.c / r.draft_calls_per_step.max(f64::MIN_POSITIVE)
            ),
        ),
        row(
            "wall clock: the target alone's time per token / this run's (IQR over prompts)",
            format!("{:.2}× ({:.2})", r.measured_speedup, r.measured_speedup_iqr),
        ),
    ];
    if let (Some(a), Some(k)) = (&r.head_accuracy, &r.head_accuracy_top_k) {
        rows.push(row("head accuracy, top-1", list(a)));
        rows.push(row("head accuracy, top-8", list(k)));
    }
    for (kind, acc) in &r.head_accuracy_by_kind {
        rows.push(row(
            &format!("head accuracy, top-1, {}", kind.label(Lang::En)),
            list(acc),
        ));
    }
    if let Some(p) = r.p_value {
        rows.push(row("calibration test P", format!("{p:.3e}")));
    }
    if let Some(tv) = r.first_position_tv {
        rows.push(row("first position: TV(output, p)", format!("{tv:.4}")));
    }
    rows
}

/// `drafter` at `budget` nodes, verified so, on `n` prompts: the page's experiment.
fn report(
    o: &mut Opts,
    drafter: Drafter,
    budget: usize,
    verify: Verification,
    n: usize,
    seed: u64,
) -> Result<Report, Usage> {
    let (depth, heads) = match drafter {
        Drafter::Medusa { heads, .. } => (DEFAULT_DEPTH, heads),
        Drafter::Eagle { depth, .. } => (depth, MAX_HEADS),
    };
    let experiment = Experiment::Hidden(HiddenRun {
        method: HiddenMethod::of(drafter),
        budget: Budget::Nodes(budget),
        depth,
        heads,
        verify,
        prompts: n,
        seed,
    });
    let m = models_without_draft(o, "a draft on the target's hidden states")?;
    let Outcome::Hidden { report: r, .. } = run(o, &experiment, &m)? else {
        unreachable!("a hidden-state experiment reports its draft")
    };
    let mut rows = rows(&r);
    rows.extend(drafts_row(r.drafts_on, m.backend.name()));
    Ok(Report {
        rows,
        json: value(&r),
    })
}

/// `likesworld medusa [--heads K] [--budget N] [--tree sparse|balanced] [--prompts P]`.
pub fn medusa(o: &mut Opts) -> Result<Report, Usage> {
    let heads = o.count(&HEADS, Some(MAX_HEADS))?;
    let budget = o.count(&BUDGET, Some(DEFAULT_BUDGET))?;
    let tree = tree_kind(o, false)?;
    if tree == TreeKind::Dynamic {
        return Err(Usage(format!(
            "{}: Medusa's heads do not see each other's tokens, so their tree is static (--tree sparse|balanced)",
            o.command
        )));
    }
    let n = prompts(o, 100)?;
    report(
        o,
        Drafter::Medusa { heads, tree },
        budget,
        Verification::Greedy,
        n,
        0,
    )
}

/// `likesworld eagle [--dynamic] [--budget N] [--depth D] [--ttt] [--verify greedy|mss|mss-top-k] [--seed S] [--prompts P]`.
pub fn eagle(o: &mut Opts) -> Result<Report, Usage> {
    let dynamic = o.flag("dynamic");
    let ttt = o.flag("ttt");
    let tree = tree_kind(o, dynamic)?;
    let budget = o.count(&BUDGET, Some(DEFAULT_BUDGET))?;
    let depth = o.count(&DEPTH, Some(DEFAULT_DEPTH))?;
    let verification = Verification::parse(&o.take("verify").unwrap_or_else(|| "greedy".into()))
        .map_err(|e| Usage(format!("{}: {e}", o.command)))?;
    if verification != Verification::Greedy && tree != TreeKind::Dynamic {
        return Err(Usage(format!(
            "{}: --verify {} needs the dynamic tree (--dynamic): a static tree's children are the draft's top-k, not draws",
            o.command,
            verification.key()
        )));
    }
    let seed: u64 = o.number("seed", Some(0))?;
    let n = prompts(o, 100)?;
    report(
        o,
        Drafter::Eagle { ttt, tree, depth },
        budget,
        verification,
        n,
        seed,
    )
}

/// `likesworld methods [--budget N|auto] [--prompts P]`: lecture §6's table, measured (with
/// `auto`, each method at the size chosen for this device).
pub fn methods(o: &mut Opts) -> Result<Report, Usage> {
    let budget = match o.take("budget") {
        None => Budget::Nodes(DEFAULT_BUDGET),
        Some(text) => Budget::parse(&text)
            .and_then(|b| b.check().map(|_| b))
            .map_err(|e| Usage(format!("{}: {}", o.command, e.message(Lang::En))))?,
    };
    let n = prompts(o, 20)?;
    // With --drafts-on every model draft moves (A, B, Medusa, EAGLE): the rows are compared at
    // one placement, as in the page.
    let m = models_with_both_drafts(
        o,
        "the §6 table compares drafts A and B with the other methods",
    )?;
    let experiment = Experiment::Methods(MethodsRun { budget, prompts: n });
    let Outcome::Methods(r) = run(o, &experiment, &m)? else {
        unreachable!("the §6 experiment reports its table")
    };
    let budget = match r.budget {
        Budget::Nodes(n) => format!("{n} nodes"),
        Budget::Auto => "auto (each method at its size for this device)".into(),
    };
    let mut rows = vec![row(
        "budget, prompts, target width",
        format!("{budget}, {}, ×{}", r.prompts, r.target_width),
    )];
    if let Some(t) = &r.times_us {
        let ratios: Vec<String> = t.iter().map(|x| format!("{:.2}", x / t[0])).collect();
        rows.push(row(
            "T(k)/T(1), k = 1…",
            format!("{} (T(1) {:.0} µs)", ratios.join(" "), t[0]),
        ));
    }
    rows.extend(drafts_row(r.drafts_on, m.backend.name()));
    for x in &r.rows {
        let chosen = match (&x.auto, r.suffix_nodes) {
            (Some(a), _) => format!(
                "  chosen: {}, c {:.3}, predicted {:.2}×{}",
                match x.short.contains('γ') {
                    true => format!("γ {}", a.size),
                    false => format!("{} node(s), depth {}", a.size, a.depth),
                },
                a.c,
                a.predicted_speedup,
                if a.plain {
                    " (the choice is plain decoding: the smallest size ran)"
                } else {
                    ""
                }
            ),
            (None, Some(n)) => format!("  fixed: {n} nodes (no acceptance vector to choose by)"),
            (None, None) => String::new(),
        };
        rows.push(row(
            &x.method,
            format!(
                "τ {:.2}  c {:.3}  predicted {:.2}× (on the measured curve {:.2}×)  measured {:.2}×  limit {:.2}×{chosen}",
                x.tokens_per_call,
                x.c,
                x.predicted_speedup,
                x.predicted_speedup_curve,
                x.measured_speedup,
                x.limit_speedup
            ),
        ));
    }
    Ok(Report {
        rows,
        json: value(&r),
    })
}

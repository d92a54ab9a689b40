//! `exactness`: every verification rule's exact TV on the toy (the lecture's, typical acceptance),
//! and with `--gallery` the bugs of real runtimes, each through every test (lecture §2.3, §6).

use crate::opts::{row, Opts, Report, Usage};
use serde_json::json;
use specdec::i18n::Lang;
use specdec::toy::ToyConfig;
use specdec::views::exactness::gallery::{gallery_view, GalleryParams};
use specdec::views::exactness::typical::typical_view;
use specdec::views::exactness::{exactness_view, ExactnessParams};

fn toy(o: &mut Opts) -> Result<ToyConfig, Usage> {
    let d = ToyConfig::default();
    Ok(ToyConfig {
        seed: o.number("toy-seed", Some(d.seed))?,
        draft_noise: o.number("draft-noise", Some(d.draft_noise))?,
        ..d
    })
}

pub fn cmd_exactness(o: &mut Opts) -> Result<Report, Usage> {
    if o.flag("gallery") {
        return gallery(o);
    }
    let d = ExactnessParams::default();
    let params = ExactnessParams {
        gamma: o.number("gamma", Some(d.gamma))?,
        epsilon: o.number("epsilon", Some(d.epsilon))?,
        delta: o.number("delta", Some(d.delta))?,
        toy: toy(o)?,
        ..d
    };
    let v = exactness_view(&params)?;
    let rules: Vec<_> = v
        .tvs
        .iter()
        .map(|t| json!({"name": t.variant.name(), "tv": t.tv, "verdict": t.verdict}))
        .collect();
    let mut rows = vec![row(
        "γ, window",
        format!("{}, {} tokens", v.gamma, v.window),
    )];
    rows.extend(v.tvs.iter().map(|t| {
        row(
            &t.variant.label(Lang::En),
            format!("TV {:.3e}  {:?}", t.tv, t.verdict),
        )
    }));
    // Typical acceptance's trade at these ε, δ: tokens a call against the exact rule's.
    let t = typical_view(&params)?;
    rows.push(row("", &t.caption));
    let trade: Vec<_> = t
        .by_epsilon
        .iter()
        .map(|p| json!({"epsilon": p.epsilon, "delta": p.delta, "tv": p.tv, "tokens_per_call": p.tokens_per_call}))
        .collect();
    Ok(Report {
        json: json!({"gamma": v.gamma, "window": v.window, "epsilon": params.epsilon,
                     "delta": params.delta, "rules": rules,
                     "typical": {"tokens_per_call": t.current.tokens_per_call, "tv": t.current.tv,
                                 "exact_tokens_per_call": t.exact_tokens_per_call,
                                 "by_epsilon": trade}}),
        rows,
    })
}

fn gallery(o: &mut Opts) -> Result<Report, Usage> {
    let params = GalleryParams {
        toy: toy(o)?,
        seed: o.number("seed", Some(GalleryParams::default().seed))?,
        ..GalleryParams::default()
    };
    let v = gallery_view(&params)?;
    let mut json = serde_json::to_value(&v).expect("the gallery serialises");
    json.as_object_mut().expect("an object").remove("svg");
    let needed = |n: Option<f64>| n.map_or("no finite number of".into(), |n| format!("{n:.0}"));
    let mut rows = Vec::new();
    for (i, r) in v.variants.iter().enumerate() {
        let e = &r.examined;
        rows.push(row(
            &format!("{}. {}", i + 1, r.name),
            format!(
                "TV {:.2e}; χ² needs {} samples (power {:.2} at {}); greedy {}/{} identical",
                e.tv,
                needed(e.samples_needed),
                e.quick_power,
                v.quick,
                e.greedy_identical,
                e.greedy_runs
            ),
        ));
        rows.push(row("   caught by", e.detected_by.join(", ")));
        rows.push(row("   missed by", e.missed_by.join(", ")));
        if !e.not_run.is_empty() {
            rows.push(row(
                "   not run",
                format!(
                    "{} (over the {} samples run at most)",
                    e.not_run.join(", "),
                    v.cap
                ),
            ));
        }
        rows.push(row(
            "   source",
            format!(
                "{} {} ({})",
                r.source.project, r.source.thread, r.source.url
            ),
        ));
    }
    let alarms: Vec<String> = v
        .correct
        .false_alarms
        .iter()
        .map(|f| format!("{}/{} at {} samples", f.alarms, v.correct.seeds, f.samples))
        .collect();
    rows.push(row(
        "correct rule",
        format!(
            "TV {:.0e}; greedy {}/{}; χ² false alarms {}",
            v.correct.tv,
            v.correct.greedy_identical,
            v.correct.greedy_runs,
            alarms.join(", ")
        ),
    ));
    rows.push(row("", &v.caption));
    Ok(Report { json, rows })
}

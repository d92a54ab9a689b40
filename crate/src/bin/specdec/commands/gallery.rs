//! `exactness`: every verification rule's exact TV on the toy (the lecture's, typical acceptance),
//! and with `--gallery` the bugs of real runtimes, each through every test (lecture §2.3, §6);
//! `likesworld gallery`: the bugs of the decoding loop on LikesWorld, by greedy identity.

use super::options::{models, prompts};
use crate::opts::{row, Opts, Report, Usage};
use burn::tensor::read_sync;
use serde_json::json;
use specdec::clock::native_clock;
use specdec::i18n::Lang;
use specdec::lab::gallery::{loop_bugs_on_likesworld, verdict, LoopRow};
use specdec::lab::params::Draft;
use specdec::lab::Lab;
use specdec::likesworld;
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

/// The options of one form of `exactness` that the other does not take.
const RULES_ONLY: [&str; 3] = ["gamma", "epsilon", "delta"];
const GALLERY_ONLY: [&str; 1] = ["seed"];

pub fn cmd_exactness(o: &mut Opts) -> Result<Report, Usage> {
    let with_gallery = o.flag("gallery");
    let (others, why) = match with_gallery {
        true => (&RULES_ONLY[..], "does not combine with --gallery (the gallery runs γ 1–3 itself; it takes --draft-noise, --toy-seed, --seed)"),
        false => (&GALLERY_ONLY[..], "applies only with --gallery (its χ² samples' seed)"),
    };
    if let Some(name) = others.iter().find(|n| o.peek(n).is_some()) {
        return Err(Usage(format!("exactness: --{name} {why}")));
    }
    if with_gallery {
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

/// `likesworld gallery [--prompts P]`: the loop's bugs in the trained target, draft B's greedy
/// chains of γ 1…4 against the target's greedy output.
pub fn likesworld(o: &mut Opts) -> Result<Report, Usage> {
    let n = prompts(o, 50)?;
    let m = models(o)?;
    let clock = native_clock();
    let lab = Lab::new(&m, Lang::En, &clock);
    let held: Vec<Vec<u32>> = likesworld::prompts(n).iter().map(|w| w.prompt()).collect();
    let r = read_sync(loop_bugs_on_likesworld(lab, &held, &mut |_, _| {}))?;
    let line = |x: &LoopRow| {
        let by: Vec<String> = r
            .gammas
            .iter()
            .zip(&x.identical_by_gamma)
            .map(|(g, k)| format!("γ{g} {k}/{n}"))
            .collect();
        let source = x
            .source
            .as_ref()
            .map_or(String::new(), |s| format!(" [{} {}]", s.project, s.thread));
        let outgrown = match x.outgrown {
            0 => String::new(),
            k => format!("; {k} runs outgrew the model's positions"),
        };
        let mut text = format!(
            "{} ({}){outgrown}{source}",
            verdict(x, Lang::En),
            by.join(", ")
        );
        if let Some(d) = &x.first_difference {
            text += &format!(
                "\n      prompt {} at γ {}: target \"{}\", speculative \"{}\"",
                d.prompt, d.gamma, d.target, d.speculative
            );
        }
        row(&format!("  {}", x.label), text)
    };
    let (draft, prompts) = (
        Draft::B.called(m.whose(), Lang::En),
        if n == 1 { "prompt" } else { "prompts" },
    );
    let mut rows = vec![row(
        "LikesWorld",
        format!(
            "{n} {prompts}, {draft}'s greedy chains, the first {} output tokens against the target's greedy output",
            r.window
        ),
    )];
    rows.extend(r.bugs.iter().map(line));
    rows.push(line(&r.correct));
    rows.push(row(
        "near-ties",
        format!(
            "{} of the target's {} greedy output positions compared have their two likeliest tokens within 0.02 in log-probability",
            r.near_ties, r.positions
        ),
    ));
    Ok(Report {
        json: serde_json::to_value(&r).expect("reports serialise"),
        rows,
    })
}

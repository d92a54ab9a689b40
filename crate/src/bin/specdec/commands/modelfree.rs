//! `prompt-lookup`, `modelfree [table|sweep|jacobi|highlight]` and `suffix-bench`: drafting
//! without a model (lecture §5.3, demos 05.1–05.3). Thin shells over
//! `specdec::decode::free`.

use super::options::backend;
use crate::opts::{row, Opts, Report, Usage};
use burn::tensor::read_sync;
use specdec::clock::native_clock;
use specdec::decode::free::kind::{
    DrafterKind, JacobiStart, Settings, BUDGET, EARLIER, REQUESTS, WINDOW,
};
use specdec::decode::free::lookup::PromptLookup;
use specdec::decode::free::suffix::{grow, Root, SuffixIndex};
use specdec::decode::free::workloads::{Kind, Workload};
use specdec::decode::Source;
use specdec::error::{Named, Range};
use specdec::i18n::Lang;
use specdec::lab::modelfree::{self as ex, Row};
use specdec::model::Models;
use specdec::views::modelfree::FreeExperiment;

/// The suffix benchmark's index sizes and look-ups.
const MAX_TOKENS: Range = Range::new("max-tokens", 1e3, 1e7);
const LOOKUPS: Range = Range::new("lookups", 1.0, 1e6);

/// `prompt-lookup --tokens 1,2,3 --ngram N --k K [--min-ngram M]`.
pub fn prompt_lookup(o: &mut Opts) -> Result<Report, Usage> {
    let text = o.required("tokens")?;
    let tokens = text
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse::<u32>().map_err(|_| {
                Usage(format!(
                    "prompt-lookup: bad token {t:?} in --tokens (token ids are whole numbers ≥ 0)"
                ))
            })
        })
        .collect::<Result<Vec<u32>, Usage>>()?;
    let n: usize = o.number("ngram", None)?;
    let min: usize = o.number("min-ngram", Some(1))?;
    let k: usize = o.number("k", None)?;
    let draft = PromptLookup::new(n, min, k)?.draft(&tokens);
    Ok(Report {
        rows: vec![row(
            "draft",
            if draft.is_empty() {
                "(no match)".to_string()
            } else {
                join(&draft)
            },
        )],
        json: serde_json::json!({ "draft": draft }),
    })
}

fn join(t: &[u32]) -> String {
    t.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
}

/// The settings every `modelfree` form reads.
fn settings(o: &mut Opts, drafter_default: Option<&str>) -> Result<Settings, Usage> {
    let workload = Kind::parse(&o.take("workload").unwrap_or_else(|| "code-rewrite".into()))?;
    let drafter = match (o.take("drafter"), drafter_default) {
        (Some(d), _) => d,
        (None, Some(d)) => d.into(),
        (None, None) => o.required("drafter")?,
    };
    let s = Settings {
        workload,
        drafter: DrafterKind::parse(&drafter)?,
        budget: o.number("budget", Some(8))?,
        requests: o.number("requests", Some(50))?,
        seed: o.number("seed", Some(0))?,
        fixed_init: match o.take("init") {
            None => false,
            Some(name) => JacobiStart::parse(&name)? == JacobiStart::Fixed,
        },
    };
    s.check()?;
    Ok(s)
}

fn requests(o: &mut Opts) -> Result<usize, Usage> {
    o.count(&REQUESTS, Some(50))
}

/// The LikesWorld models, loaded only when a LikesWorld run needs them.
fn models(o: &mut Opts, needed: bool) -> Result<Option<Models>, Usage> {
    let b = backend(o)?;
    Ok(if needed {
        Some(read_sync(Models::load(b))?)
    } else {
        None
    })
}

fn sources(r: &Row) -> String {
    r.sources
        .iter()
        .map(|(s, n)| format!("{} {n}", name(s)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A value's serde name, as in the JSON: `prompt-lookup`, `earlier`.
fn name(v: impl serde::Serialize) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

fn row_line(r: &Row) -> String {
    format!(
        "{:.3} tokens/call, {:.1}% of {:.1} nodes/call accepted, {}/{} identical ({})",
        r.tokens_per_call,
        100.0 * r.accepted_node_fraction,
        r.verified_nodes_per_call,
        r.identical,
        r.requests,
        sources(r)
    )
}

/// `modelfree …`: one run, or one of the demos.
pub fn modelfree(o: &mut Opts) -> Result<Report, Usage> {
    let Some(w) = o.word() else {
        return single(o);
    };
    let Ok(experiment) = FreeExperiment::parse(&w) else {
        let known = FreeExperiment::known().get(Lang::En).to_string();
        return Err(Usage(format!(
            "modelfree: unknown experiment {w:?} (known: {known})"
        )));
    };
    match experiment {
        FreeExperiment::Table => table(o),
        FreeExperiment::Sweep => sweep(o),
        FreeExperiment::Jacobi => jacobi(o),
        FreeExperiment::Highlight => highlight(o),
    }
}

fn single(o: &mut Opts) -> Result<Report, Usage> {
    let s = settings(o, None)?;
    let m = models(o, s.workload == Kind::Likesworld)?;
    let w = Workload::new(s.workload, s.requests, EARLIER, s.seed);
    let clock = native_clock();
    let reference = read_sync(ex::references(&w, m.as_ref(), &clock))?;
    let (r, _) = read_sync(ex::run(
        &s,
        &w,
        &reference,
        m.as_ref(),
        false,
        &clock,
        &mut |_, _| {},
    ))?;
    Ok(Report {
        rows: vec![
            row(
                "run",
                format!(
                    "{} on {}, budget {}",
                    name(s.drafter),
                    w.kind.name(),
                    s.budget
                ),
            ),
            row(
                "tokens / target calls",
                format!(
                    "{} / {} = {:.3} per call",
                    r.tokens, r.target_calls, r.tokens_per_call
                ),
            ),
            row(
                "accepted fraction of verified nodes",
                format!(
                    "{:.3} ({:.2} nodes per call)",
                    r.accepted_node_fraction, r.verified_nodes_per_call
                ),
            ),
            row(
                "identical to the target's greedy output",
                format!("{}/{}", r.identical, r.requests),
            ),
            row("output tokens by source", sources(&r)),
        ],
        json: serde_json::json!({
            "tokens_per_call": r.tokens_per_call,
            "accepted_node_fraction": r.accepted_node_fraction,
            "target_calls": r.target_calls,
            "tokens": r.tokens,
            "verified_nodes_per_call": r.verified_nodes_per_call,
            "identical": r.identical,
            "requests": r.requests,
        }),
    })
}

fn table(o: &mut Opts) -> Result<Report, Usage> {
    let budget = o.count(&BUDGET, Some(8))?;
    let requests = requests(o)?;
    let seed: u64 = o.number("seed", Some(0))?;
    let m = models(o, true)?;
    let clock = native_clock();
    let r = read_sync(ex::table(
        m.as_ref(),
        requests,
        budget,
        seed,
        &clock,
        &mut |_, _| {},
    ))?;
    let mut rows: Vec<(String, String)> = r
        .rows
        .iter()
        .map(|x| {
            row(
                &format!("{} × {}", x.workload.name(), name(x.drafter)),
                row_line(x),
            )
        })
        .collect();
    if let Some(b) = &r.draft_b {
        rows.push(row(
            "likesworld × draft B, γ 6",
            format!(
                "{:.3} tokens/call, {}/{} identical",
                b.tokens_per_call, b.identical, b.prompts
            ),
        ));
    }
    Ok(Report {
        rows,
        json: serde_json::to_value(&r).expect("reports serialise"),
    })
}

fn sweep(o: &mut Opts) -> Result<Report, Usage> {
    let s = settings(o, Some("suffix"))?;
    if !matches!(s.drafter, DrafterKind::Suffix | DrafterKind::Both) {
        return Err(Usage(
            "modelfree sweep: --drafter must be suffix or both (the node budget of a suffix tree)"
                .into(),
        ));
    }
    let m = models(o, s.workload == Kind::Likesworld)?;
    let clock = native_clock();
    let rows = read_sync(ex::budget_sweep(
        m.as_ref(),
        s.workload,
        s.drafter,
        s.requests,
        s.seed,
        &clock,
        &mut |_, _| {},
    ))?;
    Ok(Report {
        rows: rows
            .iter()
            .map(|r| row(&format!("budget {:>2}", r.budget), row_line(r)))
            .collect(),
        json: serde_json::json!({ "workload": s.workload, "drafter": s.drafter, "rows": rows }),
    })
}

fn jacobi(o: &mut Opts) -> Result<Report, Usage> {
    let workload = Kind::parse(&o.take("workload").unwrap_or_else(|| "likesworld".into()))?;
    let window = o.count(&WINDOW, Some(6))?;
    let requests = requests(o)?;
    let seed: u64 = o.number("seed", Some(0))?;
    let m = models(o, workload == Kind::Likesworld)?;
    let clock = native_clock();
    let rows = read_sync(ex::jacobi_inits(
        m.as_ref(),
        workload,
        window,
        requests,
        seed,
        &clock,
        &mut |_, _| {},
    ))?;
    Ok(Report {
        rows: rows.iter().map(|(n, r)| row(n, row_line(r))).collect(),
        json: serde_json::json!({
            "workload": workload,
            "window": window,
            "rows": rows.iter().map(|(n, r)| serde_json::json!({"init": n, "row": r})).collect::<Vec<_>>(),
        }),
    })
}

fn highlight(o: &mut Opts) -> Result<Report, Usage> {
    let s = settings(o, Some("both"))?;
    let request: usize = o.number("request", Some(s.requests - 1))?;
    let m = models(o, s.workload == Kind::Likesworld)?;
    let h = read_sync(ex::highlight(m.as_ref(), &s, request, &native_clock()))?;
    let marked: Vec<String> = h
        .output
        .iter()
        .zip(&h.sources)
        .map(|(w, s)| match s {
            Source::Target => w.clone(),
            s => format!("[{w}|{}]", name(s)),
        })
        .collect();
    Ok(Report {
        rows: vec![
            row("prompt", h.prompt.join(" ")),
            row(
                "output ([token|source]; bare: the target's)",
                marked.join(" "),
            ),
            row("tokens per call", format!("{:?}", h.steps)),
            row("identical to the target's greedy output", h.identical),
        ],
        json: serde_json::to_value(&h).expect("reports serialise"),
    })
}

/// `suffix-bench`: the cost of one lookup (match the context, grow a 16-node tree) against the
/// size of the global index, 10³ → 10⁶ tokens of agent outputs.
pub fn suffix_bench(o: &mut Opts) -> Result<Report, Usage> {
    let max: usize = o.number("max-tokens", Some(1_000_000))?;
    MAX_TOKENS.check(max as f64)?;
    let lookups = o.count(&LOOKUPS, Some(2000))?;
    // Documents: agent outputs, as many as the largest index needs; contexts: fresh requests.
    let per_doc = 30;
    let w = Workload::new(Kind::Agent, max / per_doc + 1, 0, 7);
    let fresh = Workload::new(Kind::Agent, 200, 0, 8);
    let contexts: Vec<Vec<u32>> = fresh
        .requests
        .iter()
        .flat_map(|r| {
            (1..r.output.len()).map(move |cut| {
                let mut c = r.prompt.clone();
                c.extend(&r.output[..cut]);
                c
            })
        })
        .collect();
    let mut index = SuffixIndex::new();
    let mut docs = w.requests.iter().map(|r| &r.output);
    let mut rows = Vec::new();
    let mut json = Vec::new();
    let mut size = 1000;
    while size <= max {
        let mut batch = Vec::new();
        let mut grown = index.tokens();
        while grown < size {
            match docs.next() {
                Some(d) => {
                    grown += d.len() + 1;
                    batch.push(d.as_slice());
                }
                None => break,
            }
        }
        index.add_documents(batch);
        let started = std::time::Instant::now();
        let (mut matched, mut nodes) = (0usize, 0usize);
        for i in 0..lookups {
            let c = &contexts[i % contexts.len()];
            let at = index.longest_suffix(c, 32);
            let root = Root {
                index: &index,
                at,
                source: Source::Earlier,
            };
            matched += at.len;
            nodes += std::hint::black_box(grow(&[root], 16, 16)).tree.len();
        }
        let us = started.elapsed().as_secs_f64() * 1e6 / lookups as f64;
        let (m, n) = (
            matched as f64 / lookups as f64,
            nodes as f64 / lookups as f64,
        );
        rows.push(row(
            &format!("{} tokens", index.tokens()),
            format!("{us:.2} µs per lookup (mean match {m:.1} tokens, {n:.1} nodes grown)"),
        ));
        json.push(serde_json::json!({
            "tokens": index.tokens(), "states": index.states(), "us_per_lookup": us,
            "mean_match": m, "mean_nodes": n,
        }));
        size *= 10;
    }
    Ok(Report {
        rows,
        json: serde_json::json!({ "lookups": lookups, "sizes": json }),
    })
}

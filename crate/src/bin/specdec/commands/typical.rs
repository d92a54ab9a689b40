//! `likesworld typical`: Medusa's typical acceptance on LikesWorld — tokens per call gained, and
//! fidelity lost, over a sweep of ε with δ = √ε (lecture §5.1, issue 55).

use super::options::{models, prompts};
use crate::opts::{row, Opts, Report, Usage};
use burn::tensor::read_sync;
use specdec::clock::native_clock;
use specdec::i18n::Lang;
use specdec::lab::params::ranges::{GAMMA, REPEATS};
use specdec::lab::typical::{sweep, typical as run, Point};
use specdec::lab::Lab;
use specdec::likesworld;

pub fn typical(o: &mut Opts) -> Result<Report, Usage> {
    let gamma = o.count(&GAMMA, Some(4))?;
    let repeats = o.count(&REPEATS, Some(2))?;
    let seed = o.number("seed", Some(7u64))?;
    let n = prompts(o, 50)?;
    let m = models(o)?;
    let clock = native_clock();
    let lab = Lab::new(&m, Lang::En, &clock);
    let held = likesworld::sampling_prompts(n);
    let r = read_sync(run(
        lab,
        &held,
        gamma,
        repeats,
        &sweep(),
        seed,
        &mut |_, _| {},
    ))?;
    let line = |p: &Point, base: f64| {
        let rule = p.epsilon.map_or("exact".into(), |e| {
            format!("ε {e}, δ {:.3}", p.delta.unwrap_or_default())
        });
        let p_value = p.p_value.map_or("—".into(), |v| format!("{v:.2e}"));
        let tv = p
            .step_tv
            .map_or(String::new(), |t| format!("; one-step TV {t:.4}"));
        row(
            &format!("  {rule}"),
            format!(
                "{:.3} tokens/call ({:+.1}%); calibration p {p_value}{tv}",
                p.tokens_per_call,
                (p.tokens_per_call / base - 1.0) * 100.0
            ),
        )
    };
    let mut rows = vec![row(
        "draft B's chain",
        format!("γ {gamma}, {n} prompts × {repeats}, sampled at T 1"),
    )];
    let base = r.chain_exact.tokens_per_call;
    rows.push(line(&r.chain_exact, base));
    rows.extend(r.chain.iter().map(|p| line(p, base)));
    rows.push(row(
        "Medusa's sparse tree",
        format!(
            "{} nodes, {n} prompts × 1 (one sample a prompt); exact: greedy verification",
            specdec::lab::typical::MEDUSA_BUDGET
        ),
    ));
    let base = r.medusa_greedy.tokens_per_call;
    rows.push(line(&r.medusa_greedy, base));
    rows.extend(r.medusa.iter().map(|p| line(p, base)));
    rows.push(row(
        "control",
        format!(
            "the target's own samples: calibration p {:.2}",
            r.target_p_value
        ),
    ));
    Ok(Report {
        json: serde_json::to_value(&r).expect("reports serialise"),
        rows,
    })
}

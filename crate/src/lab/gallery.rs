//! The gallery's loop bugs on LikesWorld (lecture §6's second principle; issue 55): the three
//! faults of the decoding loop ([`Place::Loop`]) put into the trained target
//! ([`Faulty`]), and the engine's own loop, unchanged, run on it with draft B's greedy chains of
//! γ 1…4 — against the target's own greedy output, token for token (greedy identity: the test that
//! needs no statistics). On the toy, greedy identity misses [`Bug::RowNumerics`]: its p has no
//! near-ties. LikesWorld has them where the field found this bug: the next person asked about is
//! any of those not yet asked, nearly equally likely, so a logit moved by 0.01 can change the
//! argmax — and the greedy output then changes with γ.

use super::context::Lab;
use super::decoding::mean_over_outputs;
use super::generate::target_greedy;
use super::lm::{Cached, MAX_POSITIONS};
use super::params::Draft;
use crate::clock::Progress;
use crate::decode::chance::Seeded;
use crate::decode::engine::{generate, ChainRule, Config, Method};
use crate::decode::gallery::faulty::Faulty;
use crate::decode::gallery::ROW_NUMERICS;
use crate::decode::stats::{top, Generation};
use crate::error::Error;
use crate::i18n::Lang;
use crate::likesworld::{self, EOS};
use crate::sampling::gallery::{Bug, Place, Source};

/// The output tokens compared (three questions and their answers).
pub const WINDOW: usize = 12;
/// The chains' lengths.
pub const GAMMAS: [usize; 4] = [1, 2, 3, 4];

/// One loop (a bug's, or the correct one) against the target's greedy output.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LoopRow {
    /// None: the correct loop.
    pub name: Option<&'static str>,
    pub label: String,
    pub source: Option<Source>,
    /// Runs (prompts × γ) whose first [`WINDOW`] tokens equal the target's, of `runs`.
    pub identical: usize,
    pub runs: usize,
    /// The same per γ of [`GAMMAS`].
    pub identical_by_gamma: Vec<usize>,
    /// Runs that stopped because a stale cache outgrew the model's positions (not counted in `runs`).
    pub outgrown: usize,
    /// The first run that differs: its prompt, γ, and both outputs in words.
    pub first_difference: Option<Difference>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Difference {
    pub prompt: usize,
    pub gamma: usize,
    pub target: String,
    pub speculative: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LoopReport {
    pub prompts: usize,
    pub window: usize,
    pub gammas: Vec<usize>,
    pub bugs: Vec<LoopRow>,
    pub correct: LoopRow,
    /// Output positions of the target's greedy runs, within the [`WINDOW`] compared, whose two
    /// likeliest tokens are within 2·[`ROW_NUMERICS`] in log-probability (a several-row kernel
    /// can swap them), of `positions`.
    pub near_ties: usize,
    pub positions: usize,
}

/// The bugs of the loop, in the gallery's order.
pub fn loop_bugs() -> Vec<Bug> {
    Bug::ALL
        .into_iter()
        .filter(|b| b.place() == Place::Loop)
        .collect()
}

/// Greedy identity of every loop bug, and of the correct loop, on `prompts` (LikesWorld prompts).
pub async fn loop_bugs_on_likesworld(
    lab: Lab<'_>,
    prompts: &[Vec<u32>],
    progress: Progress<'_>,
) -> Result<LoopReport, Error> {
    let (models, clock) = (lab.models, lab.clock);
    let reference = target_greedy(models, prompts, clock, &mut |_, _| {}).await?;
    let expected: Vec<&[u32]> = reference.iter().map(|g| window(&g.output)).collect();
    let bugs: Vec<Option<Bug>> = loop_bugs().into_iter().map(Some).chain([None]).collect();
    let total = bugs.len() * prompts.len() * GAMMAS.len();
    let mut done = 0;
    let mut rows = Vec::new();
    for bug in bugs {
        let mut row = LoopRow {
            name: bug.map(|b| b.name()),
            label: bug.map_or(
                lab.lang.pick("the correct loop", "正确的循环").into(),
                |b| b.label(lab.lang).into(),
            ),
            source: bug.map(|b| b.source()),
            identical: 0,
            runs: 0,
            identical_by_gamma: vec![0; GAMMAS.len()],
            outgrown: 0,
            first_difference: None,
        };
        for (g, &gamma) in GAMMAS.iter().enumerate() {
            for (i, prompt) in prompts.iter().enumerate() {
                match decode(lab, bug, gamma, prompt).await {
                    Ok(out) => {
                        row.runs += 1;
                        if window(&out) == expected[i] {
                            row.identical += 1;
                            row.identical_by_gamma[g] += 1;
                        } else if row.first_difference.is_none() {
                            row.first_difference = Some(Difference {
                                prompt: i,
                                gamma,
                                target: likesworld::decode(expected[i]),
                                speculative: likesworld::decode(window(&out)),
                            });
                        }
                    }
                    Err(Error::TooLarge { .. }) if bug == Some(Bug::StaleCache) => {
                        row.outgrown += 1
                    }
                    Err(e) => return Err(e),
                }
                done += 1;
                progress(done, total);
            }
        }
        rows.push(row);
    }
    let correct = rows.pop().expect("the correct loop ran last");
    // Near-ties within the window compared, where a swap can show.
    let pairs: Vec<(Vec<u32>, Generation)> = prompts
        .iter()
        .cloned()
        .zip(reference)
        .map(|(p, mut g)| {
            g.output.truncate(WINDOW);
            (p, g)
        })
        .collect();
    let tie = |p: &[f64], _: &[f64]| -> f64 {
        let near = matches!(top(p, 2)[..], [(_, a), (_, b)] if (a / b).ln() < 2.0 * ROW_NUMERICS);
        f64::from(u8::from(near))
    };
    let fraction = mean_over_outputs(models, &pairs, tie).await?;
    let positions: usize = pairs.iter().map(|(_, g)| g.output.len()).sum();
    Ok(LoopReport {
        prompts: prompts.len(),
        window: WINDOW,
        gammas: GAMMAS.to_vec(),
        bugs: rows,
        correct,
        near_ties: (fraction * positions as f64).round() as usize,
        positions,
    })
}

/// The first [`WINDOW`] tokens of an output.
fn window(out: &[u32]) -> &[u32] {
    &out[..out.len().min(WINDOW)]
}

/// One greedy generation of draft B's chain of `gamma` on the target with `bug`.
async fn decode(
    lab: Lab<'_>,
    bug: Option<Bug>,
    gamma: usize,
    prompt: &[u32],
) -> Result<Vec<u32>, Error> {
    let m = lab.models;
    let (d, dd) = (&m.device, &m.draft_device);
    let limit = MAX_POSITIONS;
    let mut target = Faulty::new(Cached::new(&m.target, d, 1.0), bug, limit);
    let mut drafts = [
        Faulty::new(Cached::new(&m.draft_a, dd, 1.0), None, limit),
        Faulty::new(Cached::new(&m.draft_b, dd, 1.0), None, limit),
    ];
    let config = Config {
        method: Method::Chain {
            draft: Draft::B.index(),
            gamma,
            rule: ChainRule::Greedy,
        },
        max_len: (prompt.len() + WINDOW).min(likesworld::MAX_LEN),
        eos: Some(EOS),
        trace: false,
    };
    let g = generate(
        &mut target,
        &mut drafts,
        prompt,
        &config,
        &mut Seeded::new(0),
        lab.clock,
    )
    .await?;
    Ok(g.output)
}

/// A row's verdict in words.
pub fn verdict(row: &LoopRow, lang: Lang) -> String {
    let (same, runs) = (row.identical, row.runs);
    if same == runs {
        lang.pick(
            format!("greedy identity holds in {same}/{runs}: not caught"),
            format!("贪心一致 {same}/{runs}：没抓到"),
        )
    } else {
        lang.pick(
            format!("greedy identity broken in {}/{runs}: caught", runs - same),
            format!("贪心不一致 {}/{runs}：抓到", runs - same),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::device::Backend;
    use crate::model::Models;
    use burn::tensor::read_sync;

    #[test]
    fn every_loop_bug_breaks_greedy_identity_on_likesworld_and_the_correct_loop_none() {
        let models = read_sync(Models::load(Backend::Flex)).expect("the shipped weights load");
        let clock = || 0.0;
        let lab = Lab::new(&models, Lang::En, &clock);
        let prompts: Vec<Vec<u32>> = likesworld::prompts(100)
            .iter()
            .map(|w| w.prompt())
            .collect();
        let r = read_sync(loop_bugs_on_likesworld(lab, &prompts, &mut |_, _| {})).unwrap();
        assert_eq!(r.bugs.len(), 3);
        assert_eq!((r.correct.identical, r.correct.runs), (400, 400));
        assert!(r.correct.first_difference.is_none());
        for row in &r.bugs {
            assert_eq!(row.runs + row.outgrown, 400, "{row:?}");
            assert!(row.identical < row.runs, "{} not caught", row.label);
            let d = row
                .first_difference
                .as_ref()
                .expect("a difference is shown");
            assert_ne!(d.target, d.speculative);
        }
        // The cache and the unchecked draft break most runs; the kernel's 0.01 only where the
        // target has near-ties (the toy has none, LikesWorld some), so its greedy output changes
        // with γ: some γ keep every prompt's output, others not.
        let [first, stale, rows] = [0, 1, 2].map(|i| &r.bugs[i]);
        assert_eq!(first.name, Some("first-draft-unchecked"));
        assert_eq!(stale.name, Some("stale-cache"));
        assert!(first.identical * 2 < first.runs && stale.identical * 2 < stale.runs);
        assert_eq!(rows.name, Some("row-numerics"));
        assert!(rows.identical * 10 > rows.runs * 9, "{rows:?}");
        let by = &rows.identical_by_gamma;
        assert!(by.contains(&100) && by.iter().any(|&k| k < 100), "{by:?}");
        assert!(
            r.near_ties > 0 && r.near_ties * 10 < r.positions,
            "{} of {}",
            r.near_ties,
            r.positions
        );
        assert!(verdict(rows, Lang::Zh).contains("抓到"));
        assert!(verdict(&r.correct, Lang::En).contains("not caught"));
    }
}

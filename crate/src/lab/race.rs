//! Decodings timed in turn, prompt by prompt (issue 54: the chosen chain and tree set against
//! EAGLE-2 at a fixed 8 nodes, in the same run). Each prompt is decoded by every way — the target
//! alone and each speculative decoding — before the next. A drift of the machine's speed
//! (another process, the browser still compiling the engine, a clock that slows when warm) then
//! meets every way alike, where timing one way over all the prompts and then the next puts the
//! drift between them; and the target alone is decoded once a prompt (a pass) for all the ways.
//! The prompts are decoded in two passes or more, and each prompt's row (every way's decoding
//! of it in one pass) is kept from its fastest pass ([`fastest_rows`]). The orders within a row
//! are the rows of a balanced Latin square (Williams's [`order`]: over every n rows, 2n for an
//! odd n, each way decodes at each place, and right after each other way within a row, equally
//! often; over fewer rows, or the rows kept, nearly so). Each way's speedup is the target
//! alone's wall time over its own on the same prompts ([`Laps::speedup`]); two ways are set
//! against each other prompt by prompt ([`Paired`]).

use super::context::Lab;
use super::generate::run;
use super::hidden::decode::{decode, Ready};
use super::params::Verification;
use crate::clock::Progress;
use crate::decode::engine::Method;
use crate::decode::stats::{Generation, Stats};
use crate::error::Error;
use crate::model::measure::iqr;

/// Prompts decoded by every way before the clock counts (first calls allocate, a browser's wasm
/// engine compiles its optimised code after a while).
pub const WARM_UP: usize = 2;
/// Passes over the prompts a timing takes (each prompt's time the faster of them).
pub const PASSES: usize = 2;

/// A way of decoding a prompt, greedy.
pub enum Way<'a> {
    /// The target alone.
    Plain,
    /// A method of the decoding engine (a draft model's chain or static tree).
    Engine(Method),
    /// A drafter on the target's hidden states (EAGLE-2's dynamic tree, …).
    Hidden(&'a Ready<'a>),
}

/// One way's decodings of the prompts: its counts, and its wall time a prompt (µs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Laps {
    pub stats: Stats,
    pub us: Vec<f64>,
}

impl Laps {
    /// Wall time over every prompt, µs.
    pub fn total_us(&self) -> f64 {
        self.us.iter().sum()
    }

    /// `plain`'s wall time over this one's on the same prompts, and the spread (IQR) of that
    /// ratio prompt by prompt.
    pub fn speedup(&self, plain: &Laps) -> Paired {
        Paired::new(plain, self)
    }

    /// This way's mean call over `plain`'s mean one-token call: its verification call, and its
    /// drafting a step (every draft call of a step, summed).
    pub fn calls_over(&self, plain: &Laps) -> (f64, f64) {
        let t1 = plain.stats.mean_call_us().0.max(f64::MIN_POSITIVE);
        let steps = self.stats.target_calls.max(1) as f64;
        (
            self.stats.mean_call_us().0 / t1,
            self.stats.draft_us / steps / t1,
        )
    }
}

/// Two ways on the same prompts: `slow`'s wall time over `fast`'s, in all and prompt by prompt.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Paired {
    /// Σ slow / Σ fast.
    pub ratio: f64,
    /// The spread (IQR) of slow / fast over the prompts (0 with none).
    pub iqr: f64,
}

impl Paired {
    /// (Laps of no prompt give no spread; the races time one prompt or more.)
    pub fn new(slow: &Laps, fast: &Laps) -> Paired {
        let ratios: Vec<f64> = (slow.us.iter().zip(&fast.us))
            .map(|(s, f)| s / f.max(f64::MIN_POSITIVE))
            .collect();
        Paired {
            ratio: slow.total_us() / fast.total_us().max(f64::MIN_POSITIVE),
            iqr: if ratios.is_empty() { 0.0 } else { iqr(ratios) },
        }
    }
}

/// The order `n` ways decode prompt `i` in: row i of Williams's balanced Latin square, the base
/// row 0, 1, n − 1, 2, n − 2, … shifted by i (for an odd n, every other square reversed).
pub fn order(i: usize, n: usize) -> Vec<usize> {
    let base = |j: usize| match j {
        0 => 0,
        j if j % 2 == 1 => j.div_ceil(2),
        j => n - j / 2,
    };
    let mut row: Vec<usize> = (0..n).map(|j| (base(j) + i) % n).collect();
    if n % 2 == 1 && (i / n) % 2 == 1 {
        row.reverse();
    }
    row
}

/// One prompt decoded by every way in one pass: each way's wall time (µs) and counts, in
/// `ways`' order.
pub type Row = Vec<(f64, Stats)>;

/// Decodes every prompt by every way, in turn ([`order`]), in `passes` passes over the prompts
/// (at least one), after the first [`WARM_UP`] prompts decoded by each unclocked: the laps of
/// each way, in `ways`' order, each prompt's from its fastest pass ([`fastest_rows`]). Progress
/// counts the prompts decoded, the warm-up's included.
pub async fn race(
    lab: Lab<'_>,
    ways: &[Way<'_>],
    prompts: &[Vec<u32>],
    passes: usize,
    progress: Progress<'_>,
) -> Result<Vec<Laps>, Error> {
    let warm = prompts.iter().take(WARM_UP).map(|p| (None, p));
    let timed =
        (0..passes.max(1)).flat_map(|_| prompts.iter().enumerate().map(|(i, p)| (Some(i), p)));
    let all: Vec<_> = warm.chain(timed).collect();
    // rows[i]: prompt i's rows, a pass each.
    let mut rows: Vec<Vec<Row>> = vec![Vec::new(); prompts.len()];
    for (r, &(at, p)) in all.iter().enumerate() {
        let mut row: Row = vec![(0.0, Stats::default()); ways.len()];
        for w in order(r, ways.len()) {
            let t0 = (lab.clock)();
            let g = one(lab, &ways[w], p).await?;
            row[w] = ((lab.clock)() - t0, g.stats);
        }
        if let Some(i) = at {
            rows[i].push(row);
        }
        progress(r + 1, all.len());
    }
    Ok(fastest_rows(rows, ways.len()))
}

/// Each prompt's fastest pass, the ways' times together (`rows[i]`: prompt i's rows, a pass
/// each), added up into each way's laps. A pause of the machine (another process taking one of
/// the cores the engine's threads share: tens of milliseconds, a decoding's whole time) lands
/// in one pass and seldom in the other; and the row is kept whole, so that every way's time of a
/// prompt comes from the same pass (the ratios stay paired) and a pause left in both passes
/// stays where it fell, on each way as often as its share of the row's time — the ratios of the
/// ways' times are not moved by it, as they would be if each way kept its own faster pass (the
/// longest, the target alone, would keep the most).
pub fn fastest_rows(rows: Vec<Vec<Row>>, ways: usize) -> Vec<Laps> {
    let mut laps = vec![Laps::default(); ways];
    for passes in rows {
        let total = |row: &Row| row.iter().map(|(us, _)| us).sum::<f64>();
        let Some(best) = passes
            .into_iter()
            .min_by(|a, b| total(a).total_cmp(&total(b)))
        else {
            continue;
        };
        for (lap, (us, stats)) in laps.iter_mut().zip(best) {
            lap.stats.add(&stats);
            lap.us.push(us);
        }
    }
    laps
}

/// `prompt` decoded by `way`, greedy.
async fn one(lab: Lab<'_>, way: &Way<'_>, prompt: &[u32]) -> Result<Generation, Error> {
    let clock = lab.clock;
    match way {
        Way::Plain => {
            let plain = Method::Target { greedy: true };
            run(lab.models, plain, 1.0, prompt, 0, false, clock).await
        }
        Way::Engine(m) => run(lab.models, m.clone(), 1.0, prompt, 0, false, clock).await,
        Way::Hidden(ready) => {
            let spec = ready.verified_by(Verification::Greedy);
            decode(lab, ready, spec, prompt, 0, false).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_decodes_at_every_place_and_after_every_other_equally_often() {
        // From any row on (the race's timed rows start after the warm-up's).
        for (n, start) in (1..=6).flat_map(|n| (0..2 * n + WARM_UP).map(move |s| (n, s))) {
            // One square for an even n, two for an odd one: each place, each pair, `times`.
            let (rows, times) = if n % 2 == 0 { (n, 1) } else { (2 * n, 2) };
            let orders: Vec<Vec<usize>> = (start..start + rows).map(|i| order(i, n)).collect();
            for o in &orders {
                let mut s = o.clone();
                s.sort();
                assert_eq!(s, (0..n).collect::<Vec<_>>(), "n {n}: {o:?}");
            }
            for w in 0..n {
                for place in 0..n {
                    let at = orders.iter().filter(|o| o[place] == w).count();
                    assert_eq!(at, times, "n {n}: way {w} at place {place}");
                }
                for v in (0..n).filter(|&v| v != w) {
                    let after = |o: &&Vec<usize>| o.windows(2).any(|p| p == [v, w]);
                    let count = orders.iter().filter(after).count();
                    assert_eq!(count, times, "n {n}: {w} right after {v}");
                }
            }
        }
    }

    #[test]
    fn the_ratio_is_of_the_sums_and_the_spread_prompt_by_prompt() {
        let laps = |us: Vec<f64>| Laps {
            stats: Stats::default(),
            us,
        };
        let plain = laps(vec![300.0, 100.0, 200.0, 400.0]);
        let fast = laps(vec![200.0, 100.0, 100.0, 200.0]);
        let p = fast.speedup(&plain);
        assert_eq!(p.ratio, 1000.0 / 600.0);
        // Ratios 1.5, 1, 2, 2: quartiles as `iqr` takes them.
        assert_eq!(p.iqr, iqr(vec![1.5, 1.0, 2.0, 2.0]));
        assert!(p.iqr > 0.0);
        assert_eq!(Paired::new(&plain, &laps(vec![])).iqr, 0.0);
    }

    #[test]
    fn each_prompt_keeps_its_fastest_pass_whole() {
        // Two ways; the counts mark the pass (target calls = 10 × pass + way).
        let cell = |us: f64, pass: usize, way: usize| {
            let stats = Stats {
                target_calls: 10 * pass + way,
                ..Stats::default()
            };
            (us, stats)
        };
        let rows = vec![
            // Prompt 0: a pause in pass 0's first way (300 + 100 > 150 + 200): pass 1 kept,
            // though pass 0's second way was the faster of that way's two.
            vec![
                vec![cell(300.0, 0, 0), cell(100.0, 0, 1)],
                vec![cell(150.0, 1, 0), cell(200.0, 1, 1)],
            ],
            // Prompt 1: pass 0 kept.
            vec![
                vec![cell(100.0, 0, 0), cell(80.0, 0, 1)],
                vec![cell(110.0, 1, 0), cell(90.0, 1, 1)],
            ],
            // A prompt with no pass adds nothing.
            vec![],
        ];
        let laps = fastest_rows(rows, 2);
        assert_eq!(laps[0].us, vec![150.0, 100.0]);
        assert_eq!(laps[1].us, vec![200.0, 80.0]);
        // Each way's counts are from the same pass as its time.
        // Prompt 0 from pass 1 (10 and 11), prompt 1 from pass 0 (0 and 1).
        assert_eq!(laps[0].stats.target_calls, 10);
        assert_eq!(laps[1].stats.target_calls, 12);
        assert_eq!(laps[1].speedup(&laps[0]).ratio, 250.0 / 280.0);
    }

    #[test]
    fn a_ways_calls_are_priced_in_the_target_alones_one_token_calls() {
        let laps = |target_us: f64, target_calls: usize, draft_us: f64| Laps {
            stats: Stats {
                target_us,
                target_calls,
                draft_us,
                ..Stats::default()
            },
            us: vec![],
        };
        // One-token calls of 100 µs; verification calls of 180 µs, 30 µs of drafting a step.
        let plain = laps(1000.0, 10, 0.0);
        let spec = laps(720.0, 4, 120.0);
        assert_eq!(spec.calls_over(&plain), (1.8, 0.3));
    }
}

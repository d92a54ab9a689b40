//! Decodings timed in turn, prompt by prompt (issue 54: the chosen chain and tree set against
//! EAGLE-2 at a fixed 8 nodes, in the same run). Each prompt is decoded by every way — the target
//! alone and each speculative decoding — before the next, and the order turns by one from a
//! prompt to the next. A drift of the machine's speed (another process, the browser still
//! compiling the engine, a clock that slows when warm) then meets every way alike, where timing
//! one way over all the prompts and then the next puts the drift between them; and the target
//! alone is decoded once a prompt for all the ways. Each prompt's time is the faster of two
//! passes or more over the prompts (a pause of the machine lands in one). The orders are a
//! balanced Latin square
//! (Williams's): over every n prompts (2n for an odd n) each way decodes at each place, and
//! right after each other way, equally often. Each way's speedup is the target alone's wall
//! time over its own on the same prompts ([`Laps::speedup`]); two ways are set against each
//! other prompt by prompt ([`Paired`]).

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

/// Decodes every prompt by every way, in turn ([`order`]), in `passes` passes over the prompts,
/// after [`WARM_UP`] prompts decoded by each unclocked: the laps of each way, in `ways`' order,
/// each prompt's the faster of its passes. A pause of the machine (another process taking one of
/// the cores the engine's threads share: tens of milliseconds, a decoding's whole time) lands in
/// one pass and seldom in another, while what a way costs is in every pass. Progress counts the
/// prompts decoded, the warm-up's included.
pub async fn race(
    lab: Lab<'_>,
    ways: &[Way<'_>],
    prompts: &[Vec<u32>],
    passes: usize,
    progress: Progress<'_>,
) -> Result<Vec<Laps>, Error> {
    // best[w][i]: way w's fastest decoding of prompt i so far, its time and its counts.
    let mut best: Vec<Vec<Option<(f64, Stats)>>> = vec![vec![None; prompts.len()]; ways.len()];
    let warm = prompts.iter().take(WARM_UP).map(|p| (None, p));
    let timed =
        (0..passes.max(1)).flat_map(|_| prompts.iter().enumerate().map(|(i, p)| (Some(i), p)));
    let all: Vec<_> = warm.chain(timed).collect();
    for (row, &(at, p)) in all.iter().enumerate() {
        for w in order(row, ways.len()) {
            let t0 = (lab.clock)();
            let g = one(lab, &ways[w], p).await?;
            let us = (lab.clock)() - t0;
            if let Some(i) = at {
                if best[w][i].as_ref().is_none_or(|(b, _)| us < *b) {
                    best[w][i] = Some((us, g.stats));
                }
            }
        }
        progress(row + 1, all.len());
    }
    Ok(best
        .into_iter()
        .map(|per_prompt| {
            let mut laps = Laps::default();
            for (us, stats) in per_prompt.into_iter().flatten() {
                laps.stats.add(&stats);
                laps.us.push(us);
            }
            laps
        })
        .collect())
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
        for n in 1..=6 {
            // One square for an even n, two for an odd one: each place, each pair, `times`.
            let (rows, times) = if n % 2 == 0 { (n, 1) } else { (2 * n, 2) };
            let orders: Vec<Vec<usize>> = (0..rows).map(|i| order(i, n)).collect();
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
}

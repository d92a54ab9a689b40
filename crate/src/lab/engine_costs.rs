//! What a call costs as decoding pays it (issue 54: the choice measured within 15% of its
//! prediction). The curve T(k) timed on bare forwards ([`super::auto::time_target`]) is what the
//! model costs; decoding pays more: the cache kept and gathered along the accepted path, the
//! rows' distributions, the masks (measurements: docs/performance.md, section "What decoding
//! pays beyond a bare call, and the choice in the page"). So before choosing, a few calibration
//! prompts (the training stream, not the prompts timed later) are decoded prompt by prompt in
//! turn and in two passes ([`super::race`]): by the target alone (its calls are k = 1) and by
//! draft B's chains of [`GAMMAS`] that the bare curve reaches (their verification calls carry
//! up to γ + 1 tokens: 2, 4 and 8; fewer where a chain meets the answer's end, so each is placed
//! at the tokens its calls carried on average; a speculative call pays a fixed part of
//! decoding's overhead at any k, so no line through k = 1 and one other point meets k = 2).
//! Each is read as calls of one token, a verification call over the target alone's call in the
//! same rows, so that the device's speed changing between the bare timing and the decodings
//! moves neither. Between those points the curve is the larger of the line joining them and
//! the bare curve's shape through them (its ratio plus decoding's overhead over it, linear
//! between the points): the shape carries what the kernel does between them (rows taken in
//! pairs cost nearly as much at k = 3 as at 4), and the line holds where the bare curve, timed
//! apart, dips by a moment's load, where the choice, picking the best size, would find the dip.
//! Past the last point it is the bare curve's rise plus decoding's overhead over it growing by
//! its slope between the last two speculative points, never falling. A draft's cost per level c
//! (its call over T(1)) is lifted by what draft B's c paid in the chains over its bare c, never
//! below 1. (The §6 table's auto budget and the sweep's choice read the same lift:
//! [`super::auto`].)

use super::context::Lab;
use super::params::Draft;
use super::race::{race, Way, PASSES};
use crate::decode::engine::{ChainRule, Method};
use crate::decode::stats::Stats;
use crate::error::Error;
use crate::likesworld::{self, Split};

/// The chains whose verification calls give the points beyond k = 1 (those the bare curve
/// reaches).
pub const GAMMAS: [usize; 3] = [1, 3, 7];
/// The least distance, in tokens, between the last two points for the overhead's slope past
/// them to be read.
const MIN_GAP: f64 = 0.5;
/// Calibration prompts decoded each way, in turn, in [`PASSES`] passes (after the first
/// [`super::race::WARM_UP`] decoded each way unclocked).
const PROMPTS: usize = 6;
/// Calibration worlds' seed (the training stream).
const SEED: u64 = 41;

/// The curve as decoding pays it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EngineCosts {
    /// T(1) … T(K), µs: the target alone's call in decoding times the curve in one-token calls
    /// that [`lift`] draws through the points, read at each whole k.
    pub times_us: Vec<f64>,
    /// Where decoding was timed, by size: k = 1, and each chain whose calls verified a draft
    /// within the bare curve (of two at the same size, the first).
    pub points: Vec<CostPoint>,
    /// Draft B's c in decoding (its call over the target alone's) over its bare c, at least 1.
    pub draft_lift: f64,
}

/// Verification calls in one-token calls: as decoding paid them on the calibration prompts, and
/// on the bare curve at the same size.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CostPoint {
    /// The most tokens a call of the chain carries: γ + 1 (1 for the target alone).
    pub k: usize,
    /// The tokens its calls carried on average (fewer than k where a chain met the answer's
    /// end): where the point sits.
    pub tokens: f64,
    /// Its mean call over the target alone's, in the same rows.
    pub decoding: f64,
    /// The bare curve's T(tokens)/T(1), between the whole sizes timed.
    pub bare: f64,
}

/// A chain's verification calls as decoding timed them: at most `k` tokens, `tokens` on average,
/// `us` the mean call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verify {
    pub k: usize,
    pub tokens: f64,
    pub us: f64,
}

impl EngineCosts {
    /// c as decoding pays it: a draft's bare call over bare T(1), `bare_c`, lifted as draft B's
    /// was.
    pub fn draft_cost(&self, bare_c: f64) -> f64 {
        bare_c * self.draft_lift
    }
}

/// Decodes the calibration prompts every way and lifts `bare` (T(1) … T(K), µs) to what decoding
/// pays; `bare_c`: draft B's bare one-token call over bare T(1).
pub async fn engine_costs(lab: Lab<'_>, bare: &[f64], bare_c: f64) -> Result<EngineCosts, Error> {
    let prompts: Vec<Vec<u32>> = likesworld::worlds(Split::Train, SEED, PROMPTS)
        .iter()
        .map(|w| w.prompt())
        .collect();
    let gammas: Vec<usize> = GAMMAS.into_iter().filter(|g| *g < bare.len()).collect();
    // Prompt by prompt in turn, each way first as often, each prompt the faster of its passes
    // ([`race`]).
    let ways: Vec<Way> = std::iter::once(Way::Plain)
        .chain(gammas.iter().map(|&gamma| {
            Way::Engine(Method::Chain {
                draft: Draft::B.index(),
                gamma,
                rule: ChainRule::Greedy,
            })
        }))
        .collect();
    let laps = race(lab, &ways, &prompts, PASSES, &mut |_, _| {}).await?;
    let (t1, _) = laps[0].stats.mean_call_us();
    let verify: Vec<Verify> = (gammas.iter().zip(&laps[1..]))
        .map(|(g, l)| Verify {
            k: g + 1,
            tokens: l.stats.verified_per_call() + 1.0,
            us: l.stats.mean_call_us().0,
        })
        .collect();
    // Every chain's draft calls (draft B's), pooled, over the target alone's call.
    let mut chains = Stats::default();
    laps[1..].iter().for_each(|l| chains.add(&l.stats));
    let draft_c = chains.mean_call_us().1 / t1.max(f64::MIN_POSITIVE);
    Ok(lift(bare, t1, &verify, draft_c, bare_c))
}

/// [`EngineCosts`] from decoding's mean one-token call `t1` (µs), its chains' verification calls
/// `verify` and draft B's c in them `draft_c`, against the bare curve `bare` and draft B's bare
/// c. In one-token calls: decoding's ratio at each chain's mean tokens (1 at k = 1), and between
/// them the larger of the line joining them and the bare ratio plus the overhead over it (linear
/// between the points); past the last, the bare ratio's rise plus the overhead over it
/// (decoding's ratio less the bare) growing by its slope between the last two speculative
/// points (at least [`MIN_GAP`] apart), never falling; the curve never falls with k, nor below
/// one call. A chain beyond the bare curve gives no point, nor one whose calls verified no
/// draft (of two at one size, the first counts).
pub fn lift(bare: &[f64], t1: f64, verify: &[Verify], draft_c: f64, bare_c: f64) -> EngineCosts {
    let t1 = t1.max(f64::MIN_POSITIVE);
    let n = bare.len();
    let ratio = |k: usize| bare[k - 1] / bare[0];
    // The bare ratio at a mean size, between the sizes timed.
    let at = |x: f64| -> f64 {
        let i = (x.floor() as usize).clamp(1, n);
        match i < n {
            true => ratio(i) + (ratio(i + 1) - ratio(i)) * (x - i as f64),
            false => ratio(n),
        }
    };
    let mut points: Vec<CostPoint> = std::iter::once(CostPoint {
        k: 1,
        tokens: 1.0,
        decoding: 1.0,
        bare: 1.0,
    })
    .chain(
        (verify
            .iter()
            .filter(|v| (2..=n).contains(&v.k) && v.tokens > 1.0))
        .map(|v| {
            let tokens = v.tokens.min(v.k as f64);
            CostPoint {
                k: v.k,
                tokens,
                decoding: v.us / t1,
                bare: at(tokens),
            }
        }),
    )
    .collect();
    // By size; of two at one size the first kept (a chain whose calls verified no draft, at one
    // token, merges into the target alone's point).
    points.sort_by(|a, b| a.tokens.total_cmp(&b.tokens));
    points.dedup_by(|b, a| a.tokens == b.tokens);
    let over = |p: &CostPoint| p.decoding - p.bare;
    let paid = |k: usize| -> f64 {
        let x = k as f64;
        // The k = 1 point comes first: j ≥ 1.
        let j = points.partition_point(|p| p.tokens <= x);
        let a = &points[j - 1];
        match points.get(j) {
            // Between two points timed in decoding: the line joining them, or the bare curve's
            // shape through them (its ratio plus the overhead over it, linear between the points:
            // a kernel that takes rows in pairs costs nearly as much at k = 3 as at 4), the
            // larger. A bare dip (a moment's load) then never prices a size under the line.
            Some(b) => {
                let f = (x - a.tokens) / (b.tokens - a.tokens);
                let line = a.decoding + (b.decoding - a.decoding) * f;
                let shape = ratio(k) + over(a) + (over(b) - over(a)) * f;
                line.max(shape)
            }
            // Past the last: the bare curve's rise, and the overhead's slope between the last two
            // speculative points (not from k = 1, where none is paid: that would take the fixed
            // part every speculative call pays for a slope; nor from two points closer than
            // [`MIN_GAP`], whose difference is noise over next to nothing).
            None => {
                let slope = match j {
                    3.. if a.tokens - points[j - 2].tokens >= MIN_GAP => {
                        let b = &points[j - 2];
                        ((over(a) - over(b)) / (a.tokens - b.tokens)).max(0.0)
                    }
                    _ => 0.0,
                };
                a.decoding + ratio(k) - a.bare + slope * (x - a.tokens)
            }
        }
    };
    // More tokens in a call cannot cost less: a k timed below a smaller one (a moment's load on
    // the smaller) is held at the larger's, so the choice never rests on a dip.
    let mut top = 1.0f64;
    let times_us = (1..=n)
        .map(|k| {
            top = top.max(paid(k));
            top * t1
        })
        .collect();
    EngineCosts {
        times_us,
        points,
        draft_lift: (draft_c / bare_c.max(f64::MIN_POSITIVE)).max(1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    /// A chain's calls, each of all its k tokens.
    fn full(k: usize, us: f64) -> Verify {
        Verify {
            k,
            tokens: k as f64,
            us,
        }
    }

    /// The curve in one-token calls.
    fn ratios(e: &EngineCosts) -> Vec<f64> {
        e.times_us.iter().map(|t| t / e.times_us[0]).collect()
    }

    #[test]
    fn the_curve_joins_the_timed_points_and_goes_on_by_the_overheads_last_slope() {
        // Bare: 1 + 0.1 (k − 1) one-token calls of 100 µs.
        let bare: Vec<f64> = (0..10).map(|i| 100.0 + 10.0 * i as f64).collect();
        // Decoding's one-token call 200 µs (the device slower than at the bare timing: the ratios
        // are what count); k = 2 at 1.3 calls (0.2 over bare), k = 4 at 1.5 (0.2 over), k = 8 at
        // 2.1 (0.4 over).
        let verify = [full(4, 300.0), full(2, 260.0), full(8, 420.0)];
        let e = lift(&bare, 200.0, &verify, 0.3, 0.2);
        let k: Vec<usize> = e.points.iter().map(|p| p.k).collect();
        assert_eq!(k, vec![1, 2, 4, 8]);
        assert!(close(
            &e.points.iter().map(|p| p.bare).collect::<Vec<_>>(),
            &[1.0, 1.1, 1.3, 1.7]
        ));
        assert_eq!(e.times_us[0], 200.0);
        // 1 → 0 over, 2 → 0.2, 3 → 0.2, 4 → 0.2, 5 … 8 → 0.25 … 0.4, 9 → 0.45, 10 → 0.5.
        assert!(close(
            &ratios(&e),
            &[1.0, 1.3, 1.4, 1.5, 1.65, 1.8, 1.95, 2.1, 2.25, 2.4]
        ));
        // Draft B's c paid 0.3 against 0.2 bare: every draft's c is lifted by 1.5.
        assert!((e.draft_lift - 1.5).abs() < 1e-12);
        assert!((e.draft_cost(0.1) - 0.15).abs() < 1e-12);
        // A c paid under the bare one (the device's drift) lifts nothing.
        assert_eq!(lift(&bare, 200.0, &verify, 0.1, 0.2).draft_lift, 1.0);
    }

    #[test]
    fn between_the_points_the_bare_curves_shape_counts_where_it_lies_above_the_line() {
        // A kernel that takes rows in pairs: bare k = 3 costs as much as k = 4 (1.3). Decoding
        // paid 0.2 over bare at k = 2 and at k = 4: the line puts k = 3 at 1.4, the shape at
        // 1.5, as k = 4.
        let bare = [100.0, 110.0, 130.0, 130.0, 150.0];
        let e = lift(&bare, 100.0, &[full(2, 130.0), full(4, 150.0)], 1.0, 1.0);
        assert!(close(&ratios(&e)[..4], &[1.0, 1.3, 1.5, 1.5]));
    }

    #[test]
    fn a_chain_that_met_the_answers_end_is_placed_at_the_tokens_its_calls_carried() {
        let bare: Vec<f64> = (0..10).map(|i| 100.0 + 10.0 * i as f64).collect();
        // γ 7's calls carried 7 tokens on average (1.6 one-token calls: 0.0 over the bare 1.6):
        // the curve reaches 1.6 at k = 7, not at 8, and k = 8 is the bare rise past it.
        let short = Verify {
            k: 8,
            tokens: 7.0,
            us: 160.0,
        };
        let e = lift(&bare, 100.0, &[full(4, 130.0), short], 1.0, 1.0);
        assert_eq!((e.points[2].k, e.points[2].tokens), (8, 7.0));
        assert!((e.points[2].bare - 1.6).abs() < 1e-12);
        assert!(close(
            &ratios(&e)[3..],
            &[1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9]
        ));
        // Mean sizes between the sizes timed read the bare curve between them.
        let half = Verify {
            k: 4,
            tokens: 3.5,
            us: 125.0,
        };
        assert!((lift(&bare, 100.0, &[half], 1.0, 1.0).points[1].bare - 1.25).abs() < 1e-12);
        // A chain whose calls verified no draft (one token) merges into the target alone's point.
        let none = Verify {
            k: 2,
            tokens: 1.0,
            us: 150.0,
        };
        let e = lift(&bare, 100.0, &[none], 1.0, 1.0);
        assert_eq!((e.points.len(), e.points[0].decoding), (1, 1.0));
        // Past a last point at 7.5 tokens the slope (0.2 to 0.4 over from 4 to 7.5 tokens) runs
        // from 7.5: k = 8 is 2.05 + (1.7 − 1.65) + 0.5 · 0.2 / 3.5.
        let late = Verify {
            k: 8,
            tokens: 7.5,
            us: 205.0,
        };
        let e = lift(&bare, 100.0, &[full(4, 150.0), late], 1.0, 1.0);
        assert!((ratios(&e)[7] - (2.1 + 0.5 * 0.2 / 3.5)).abs() < 1e-9);
    }

    #[test]
    fn the_slope_past_the_last_point_is_never_read_from_k_1_nor_falling() {
        // Only k = 2 timed (1.5 calls, 0.4 over the bare 1.1): past it the bare rise alone, not
        // the 0.4 that every speculative call pays taken for a slope from k = 1.
        let e = lift(&[100.0, 110.0, 120.0], 100.0, &[full(2, 150.0)], 1.0, 1.0);
        assert!(close(&ratios(&e), &[1.0, 1.5, 1.6]));
        // 0.4 over at k = 4, 0.2 at k = 8: held at 0.2 past 8, not continued down.
        let bare: Vec<f64> = (0..10).map(|i| 100.0 + 10.0 * i as f64).collect();
        let e = lift(&bare, 100.0, &[full(4, 170.0), full(8, 190.0)], 1.0, 1.0);
        assert!(close(&ratios(&e)[7..], &[1.9, 2.0, 2.1]));
        // Two points 0.2 tokens apart (0.2 and 0.38 over): no slope past them from so little,
        // where it would add 0.9 a token.
        let close_by = Verify {
            k: 4,
            tokens: 2.2,
            us: 150.0,
        };
        let e = lift(&bare, 100.0, &[full(2, 130.0), close_by], 1.0, 1.0);
        assert!(close(&ratios(&e)[..4], &[1.0, 1.3, 1.58, 1.68]));
    }

    #[test]
    fn dips_never_reach_the_curve_and_one_call_is_its_floor() {
        let bare: Vec<f64> = (0..10).map(|i| 100.0 + 10.0 * i as f64).collect();
        // Decoding timed under one call at k = 2 (noise): the curve never goes below one call,
        // and past the point it keeps the bare rise from there (0.9 + 0.1: still one call).
        let e = lift(&bare, 100.0, &[full(2, 90.0)], 1.0, 1.0);
        assert!(close(&ratios(&e)[..4], &[1.0, 1.0, 1.0, 1.1]));
        // Between the points timed a dip in the bare curve (k = 5 … 7, a moment's load) leaves
        // the line from k = 4 to k = 8; past it, the bare rise (0.1) plus the overhead's slope
        // from k = 4 to 8 (0.2 to 0.4 over: 0.05).
        let dipped = [
            100.0, 110.0, 120.0, 130.0, 100.0, 100.0, 100.0, 170.0, 180.0,
        ];
        let e = lift(&dipped, 100.0, &[full(4, 150.0), full(8, 210.0)], 1.0, 1.0);
        assert!(close(&ratios(&e)[3..], &[1.5, 1.65, 1.8, 1.95, 2.1, 2.25]));
        // Decoding's k = 4 timed under its k = 2: held at k = 2's, never falling.
        let e = lift(&bare, 100.0, &[full(2, 160.0), full(4, 140.0)], 1.0, 1.0);
        assert!(close(&ratios(&e)[..4], &[1.0, 1.6, 1.6, 1.6]));
        // A dip in the bare curve (k = 3 under k = 2) with nothing timed: held.
        let e = lift(&[100.0, 150.0, 120.0, 160.0], 100.0, &[], 1.0, 1.0);
        assert!(close(&e.times_us, &[100.0, 150.0, 150.0, 160.0]));
        // Points the bare curve does not reach are left out, and a size timed twice counts once
        // (the first).
        let e = lift(
            &[100.0, 150.0],
            100.0,
            &[full(2, 160.0), full(2, 170.0), full(4, 300.0)],
            1.0,
            1.0,
        );
        assert_eq!(e.points.len(), 2);
        assert!(close(&e.times_us, &[100.0, 160.0]));
    }
}

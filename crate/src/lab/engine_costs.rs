//! What a call costs as decoding pays it (issue 54: the choice measured within 15% of its
//! prediction). The curve T(k) timed on bare forwards ([`super::auto::time_target`]) is what the
//! model costs; decoding pays more: the cache kept and gathered along the accepted path, the
//! rows' distributions, the masks (measurements: docs/performance.md, section "What decoding
//! pays beyond a bare call, and the choice in the page"). So before choosing, a few calibration
//! prompts (the training stream, not the prompts timed later) are decoded prompt by prompt in
//! turn and in two passes ([`super::race`]): by the target alone (its calls are k = 1) and by
//! draft B's chains of [`GAMMAS`] (their verification calls are k = γ + 1: 2, 4 and 8 tokens).
//! Each is read as calls of one token, a verification call over the target alone's call in the
//! same rows, so that the device's speed changing between the bare timing and the decodings
//! moves neither. Between those points the curve is the line joining them: a speculative call
//! pays a fixed part of decoding's overhead at any k, so no line through k = 1 and one other
//! point meets k = 2; and the bare curve, timed apart, can dip between them by a moment's load,
//! where the choice, picking the best size, would find the dip. Past the last point it is the
//! bare curve's rise plus decoding's overhead over it (decoding's ratio less the bare) growing
//! by its last slope. A draft's cost per level is scaled by what the chains' draft calls paid
//! over draft B's bare call. (The §6 table's auto budget and the sweep's choice read the same
//! lift: [`super::auto`].)

use super::context::Lab;
use super::params::Draft;
use super::race::{race, Way, PASSES};
use crate::decode::engine::{ChainRule, Method};
use crate::error::Error;
use crate::likesworld::{self, Split};

/// The chains whose verification calls give the points beyond k = 1 (those the bare curve
/// reaches).
pub const GAMMAS: [usize; 3] = [1, 3, 7];
/// Calibration prompts decoded each way, in turn, in [`PASSES`] passes (after the first
/// [`super::race::WARM_UP`] decoded each way unclocked).
const PROMPTS: usize = 6;
/// Calibration worlds' seed (the training stream).
const SEED: u64 = 41;

/// The curve as decoding pays it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EngineCosts {
    /// T(1) … T(K), µs: decoding's one-token call times each bare ratio T(k)/T(1) lifted by
    /// decoding's overhead at k.
    pub times_us: Vec<f64>,
    /// Where decoding was timed: k = 1 and each chain's verification call.
    pub points: Vec<CostPoint>,
    /// A draft call in decoding over draft B's bare call (at least 1: no overhead).
    pub draft_scale: f64,
}

/// A call of `k` tokens in one-token calls: as decoding paid it on the calibration prompts, and
/// on the bare curve.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CostPoint {
    pub k: usize,
    pub decoding: f64,
    pub bare: f64,
}

impl EngineCosts {
    /// c as decoding pays it: a draft's bare call over bare T(1), `bare_c`, scaled to decoding's
    /// draft call over decoding's T(1).
    pub fn draft_cost(&self, bare_c: f64, bare_t1: f64) -> f64 {
        bare_c * bare_t1 * self.draft_scale / self.times_us[0]
    }
}

/// Decodes the calibration prompts every way and lifts `bare` (T(1) … T(K), µs) to what decoding
/// pays; `draft_bare_us`: draft B's bare one-token call.
pub async fn engine_costs(
    lab: Lab<'_>,
    bare: &[f64],
    draft_bare_us: f64,
) -> Result<EngineCosts, Error> {
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
    let verify: Vec<(usize, f64)> = (gammas.iter().zip(&laps[1..]))
        .map(|(g, l)| (g + 1, l.stats.mean_call_us().0))
        .collect();
    // Every chain's draft calls (draft B's), pooled.
    let (draft_us, draft_calls) = (laps[1..].iter()).fold((0.0, 0), |(us, n), l| {
        (us + l.stats.draft_us, n + l.stats.draft_calls)
    });
    let draft = draft_us / draft_calls.max(1) as f64;
    Ok(lift(bare, t1, &verify, draft, draft_bare_us))
}

/// [`EngineCosts`] from decoding's mean one-token call `t1`, its mean verification call of k
/// tokens at each `(k, µs)` of `verify` and its mean draft call `draft` (µs), against the bare
/// curve `bare` and draft B's bare call. In one-token calls: decoding's ratio at each timed k
/// (1 at k = 1) and the line joining them between; past the last, the bare ratio's rise plus
/// the overhead over it (decoding's ratio less the bare) growing by its last slope, never
/// falling; the curve never falls with k, nor below one call.
pub fn lift(
    bare: &[f64],
    t1: f64,
    verify: &[(usize, f64)],
    draft: f64,
    draft_bare_us: f64,
) -> EngineCosts {
    let t1 = t1.max(f64::MIN_POSITIVE);
    let ratio = |k: usize| bare[k - 1] / bare[0];
    let mut points: Vec<CostPoint> = std::iter::once(CostPoint {
        k: 1,
        decoding: 1.0,
        bare: 1.0,
    })
    .chain(
        (verify.iter().filter(|(k, _)| (2..=bare.len()).contains(k))).map(|&(k, us)| CostPoint {
            k,
            decoding: us / t1,
            bare: ratio(k),
        }),
    )
    .collect();
    points.sort_by_key(|p| p.k);
    points.dedup_by_key(|p| p.k);
    let over = |p: &CostPoint| p.decoding - p.bare;
    // Between two points timed in decoding, the line joining them; past the last, the bare
    // curve's rise plus the overhead's last slope (never falling).
    let paid = |k: usize| -> f64 {
        let j = points.partition_point(|p| p.k <= k);
        match (points.get(j.wrapping_sub(1)), points.get(j)) {
            (Some(a), Some(b)) => {
                a.decoding + (b.decoding - a.decoding) * (k - a.k) as f64 / (b.k - a.k) as f64
            }
            (Some(a), None) => {
                let slope = match j {
                    2.. => {
                        let b = &points[j - 2];
                        ((over(a) - over(b)) / (a.k - b.k) as f64).max(0.0)
                    }
                    _ => 0.0,
                };
                a.decoding + ratio(k) - a.bare + slope * (k - a.k) as f64
            }
            (None, _) => ratio(k),
        }
    };
    // More tokens in a call cannot cost less: a k timed below a smaller one (a moment's load on
    // the smaller) is held at the larger's, so the choice never rests on a dip.
    let mut top = 1.0f64;
    let times_us = (1..=bare.len())
        .map(|k| {
            top = top.max(paid(k));
            top * t1
        })
        .collect();
    EngineCosts {
        times_us,
        points,
        draft_scale: (draft / draft_bare_us.max(f64::MIN_POSITIVE)).max(1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn the_curve_joins_the_timed_points_and_goes_on_by_the_overheads_last_slope() {
        // Bare: 1 + 0.1 (k − 1) one-token calls of 100 µs.
        let bare: Vec<f64> = (0..10).map(|i| 100.0 + 10.0 * i as f64).collect();
        // Decoding's one-token call 200 µs (the device slower than at the bare timing: the ratios
        // are what count); k = 2 at 1.3 calls (0.2 over bare), k = 4 at 1.5 (0.2 over), k = 8 at
        // 2.1 (0.4 over).
        let e = lift(
            &bare,
            200.0,
            &[(4, 300.0), (2, 260.0), (8, 420.0)],
            30.0,
            20.0,
        );
        let k: Vec<usize> = e.points.iter().map(|p| p.k).collect();
        assert_eq!(k, vec![1, 2, 4, 8]);
        assert!(close(
            &e.points.iter().map(|p| p.bare).collect::<Vec<_>>(),
            &[1.0, 1.1, 1.3, 1.7]
        ));
        let ratios: Vec<f64> = e.times_us.iter().map(|t| t / 200.0).collect();
        // 1 → 0 over, 2 → 0.2, 3 → 0.2, 4 → 0.2, 5 … 8 → 0.25 … 0.4, 9 → 0.45, 10 → 0.5.
        assert!(close(
            &ratios,
            &[1.0, 1.3, 1.4, 1.5, 1.65, 1.8, 1.95, 2.1, 2.25, 2.4]
        ));
        assert_eq!(e.draft_scale, 1.5);
        // c as decoding pays it: the bare 0.2 (20 µs over bare T(1) 100) becomes 30 µs over 200.
        assert!((e.draft_cost(0.2, 100.0) - 30.0 / 200.0).abs() < 1e-12);
    }

    #[test]
    fn a_falling_overhead_stops_falling_past_the_last_point_and_dips_are_held() {
        let bare: Vec<f64> = (0..10).map(|i| 100.0 + 10.0 * i as f64).collect();
        // 0.4 over at k = 4, 0.2 at k = 8: held at 0.2 past 8, not continued down.
        let e = lift(&bare, 100.0, &[(4, 170.0), (8, 190.0)], 10.0, 20.0);
        let ratios: Vec<f64> = e.times_us.iter().map(|t| t / 100.0).collect();
        assert!(close(&ratios[7..], &[1.9, 2.0, 2.1]));
        // Between 4 and 8 the bare ratio climbs faster than the overhead falls: no dip.
        assert!(ratios.windows(2).all(|w| w[1] >= w[0]));
        assert_eq!(e.draft_scale, 1.0);
        // Decoding timed under the bare ratio (noise): the curve follows decoding where timed,
        // and never falls with k nor below one call.
        let e = lift(&bare, 100.0, &[(2, 90.0)], 10.0, 20.0);
        let ratios: Vec<f64> = e.times_us.iter().map(|t| t / 100.0).collect();
        assert_eq!(ratios[..2], [1.0, 1.0]);
        assert!(ratios.windows(2).all(|w| w[1] >= w[0]));
        // Between the points timed the bare curve plays no part: a dip there (k = 5 … 7, a
        // moment's load) leaves the line from k = 4 to k = 8; past it, the bare rise (0.1) plus
        // the overhead's slope from k = 4 to 8 (0.2 to 0.4 over: 0.05).
        let dipped = [
            100.0, 110.0, 120.0, 130.0, 100.0, 100.0, 100.0, 170.0, 180.0,
        ];
        let e = lift(&dipped, 100.0, &[(4, 150.0), (8, 210.0)], 10.0, 20.0);
        let ratios: Vec<f64> = e.times_us.iter().map(|t| t / 100.0).collect();
        assert!(close(&ratios[3..], &[1.5, 1.65, 1.8, 1.95, 2.1, 2.25]));
        // A dip in the bare curve (k = 3 under k = 2) never reaches the curve the choice reads.
        let e = lift(&[100.0, 150.0, 120.0, 160.0], 100.0, &[], 20.0, 20.0);
        assert!(close(&e.times_us, &[100.0, 150.0, 150.0, 160.0]));
        // Points the bare curve does not reach are left out.
        let e = lift(
            &[100.0, 150.0],
            100.0,
            &[(2, 160.0), (4, 300.0)],
            20.0,
            20.0,
        );
        assert_eq!(e.points.len(), 2);
        assert!(close(&e.times_us, &[100.0, 160.0]));
    }
}

//! What a call costs as decoding pays it (issue 54: the choice measured within 15% of its
//! prediction). The curve T(k) timed on bare forwards ([`super::auto::time_target`]) is what the
//! model costs; decoding pays more: the cache kept and gathered along the accepted path, the
//! rows' distributions, the masks (measurements: docs/performance.md, section "What decoding
//! pays beyond a bare call, and the choice in the page"). So before choosing, a few calibration
//! prompts (the training stream, not the prompts timed later) are decoded two ways, prompt by
//! prompt in turn and in two passes ([`super::race`]): by the target alone (its calls are
//! k = 1) and by draft B's chain of [`GAMMA`] (its verification calls are k = γ + 1).
//! Decoding's overhead over the bare call is taken as linear in k through those two points, and
//! added to every bare T(k); a draft's cost per level is scaled by what the chain's draft calls
//! paid over draft B's bare call. (The §6 table's auto budget and the sweep's choice read the
//! same lift: [`super::auto`].)

use super::context::Lab;
use super::params::Draft;
use super::race::{race, Way, PASSES};
use crate::decode::engine::{ChainRule, Method};
use crate::error::Error;
use crate::likesworld::{self, Split};

/// The chain whose verification calls give the second point.
pub const GAMMA: usize = 3;
/// Calibration prompts decoded each way, in turn, in [`PASSES`] passes (after the first
/// [`super::race::WARM_UP`] decoded each way unclocked).
const PROMPTS: usize = 6;
/// Calibration worlds' seed (the training stream).
const SEED: u64 = 41;

/// The curve as decoding pays it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EngineCosts {
    /// T(1) … T(K), µs: each bare T(k) plus decoding's overhead at k.
    pub times_us: Vec<f64>,
    /// Decoding's overhead over a bare call, µs: at k = 1, and at k = γ + 1.
    pub overhead_one_us: f64,
    pub overhead_chain_us: f64,
    /// A draft call in decoding over draft B's bare call (at least 1: no overhead).
    pub draft_scale: f64,
}

impl EngineCosts {
    /// c as decoding pays it: a draft's bare call over bare T(1), `bare_c`, scaled to decoding's
    /// draft call over decoding's T(1).
    pub fn draft_cost(&self, bare_c: f64, bare_t1: f64) -> f64 {
        bare_c * bare_t1 * self.draft_scale / self.times_us[0]
    }
}

/// Decodes the calibration prompts both ways and lifts `bare` (T(1) … T(K), µs) to what decoding
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
    let chain = Method::Chain {
        draft: Draft::B.index(),
        gamma: GAMMA,
        rule: ChainRule::Greedy,
    };
    // Prompt by prompt in turn, each way first as often, each prompt the faster of its passes
    // ([`race`]).
    let ways = [Way::Plain, Way::Engine(chain)];
    let laps = race(lab, &ways, &prompts, PASSES, &mut |_, _| {}).await?;
    let (t1, _) = laps[0].stats.mean_call_us();
    let (tv, draft) = laps[1].stats.mean_call_us();
    Ok(lift(bare, t1, tv, draft, draft_bare_us))
}

/// [`EngineCosts`] from decoding's mean one-token call `t1`, its mean verification call of
/// γ + 1 tokens `tv` and its mean draft call `draft` (µs), against the bare curve `bare` and
/// draft B's bare call: the overhead over bare, linear in k through k = 1 and k = γ + 1, never
/// below zero (a decoding call cannot cost less than its forward), and the curve never falling
/// with k.
pub fn lift(bare: &[f64], t1: f64, tv: f64, draft: f64, draft_bare_us: f64) -> EngineCosts {
    let k = (GAMMA + 1).min(bare.len());
    let one = (t1 - bare[0]).max(0.0);
    let at_k = (tv - bare[k - 1]).max(0.0);
    let slope = if k > 1 {
        (at_k - one) / (k - 1) as f64
    } else {
        0.0
    };
    // More tokens in a call cannot cost less: a k timed below a smaller one (a moment's load on
    // the smaller) is held at the larger's, so the choice never rests on a dip.
    let mut top = 0.0f64;
    let times_us = (bare.iter().enumerate())
        .map(|(i, &t)| {
            top = top.max(t + (one + slope * i as f64).max(0.0));
            top
        })
        .collect();
    EngineCosts {
        times_us,
        overhead_one_us: one,
        overhead_chain_us: at_k,
        draft_scale: (draft / draft_bare_us.max(f64::MIN_POSITIVE)).max(1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overhead_is_a_line_through_both_points_and_never_negative() {
        let bare = [100.0, 110.0, 120.0, 130.0, 140.0, 150.0];
        // Decoding paid 10 µs more at k = 1 and 40 µs more at k = 4: 10 µs a token beyond one.
        let e = lift(&bare, 110.0, 170.0, 30.0, 20.0);
        assert_eq!(e.times_us, vec![110.0, 130.0, 150.0, 170.0, 190.0, 210.0]);
        assert_eq!((e.overhead_one_us, e.overhead_chain_us), (10.0, 40.0));
        assert_eq!(e.draft_scale, 1.5);
        // c as decoding pays it: the bare 0.2 (20 µs over 100) becomes 30 µs over 110.
        assert!((e.draft_cost(0.2, 100.0) - 30.0 / 110.0).abs() < 1e-12);
        // Decoding timed below the bare calls (noise): no overhead, the bare curve itself.
        let e = lift(&bare, 90.0, 100.0, 10.0, 20.0);
        assert_eq!(e.times_us, bare.to_vec());
        assert_eq!(e.draft_scale, 1.0);
        // A falling line is held at zero where it would go negative.
        let e = lift(&bare, 140.0, 130.0, 20.0, 20.0);
        assert!(e.times_us.iter().zip(&bare).all(|(t, b)| t >= b));
        // A dip (k = 3 timed under k = 2) never reaches the curve the choice reads.
        let e = lift(&[100.0, 150.0, 120.0, 160.0], 100.0, 160.0, 20.0, 20.0);
        assert_eq!(e.times_us, vec![100.0, 150.0, 150.0, 160.0]);
    }
}

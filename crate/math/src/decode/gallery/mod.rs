//! The gallery's bugs ([`Bug`]) run on the toy LM: Algorithm 1 written once against [`Chance`],
//! with one fault switched in at the place its runtime had it, so that the same code gives the
//! exact output distribution (every branch of its choices, [`chance::enumerate`]), Monte Carlo
//! samples (a seeded generator) and greedy decoding. `None` is the correct algorithm, run through
//! the very same code and the same tests ([`power`]).
//! The loop's bugs also come as a wrapper any model can wear ([`faulty`]): the engine's loop, run
//! on LikesWorld's target with one of them, in `lab::gallery`.
//!
//! The toy target's state is its view of the context, kept apart from the true context so that a
//! state that is not rolled back ([`Bug::StaleCache`]) can be re-created: the toy's p reads the
//! last two tokens of the view. Drafts are drawn lazily (a draft after a rejection is never looked
//! at, which leaves the distribution unchanged), except where the bug needs the rejected drafts
//! that a real runtime had drafted before verifying.

pub mod faulty;
pub mod power;

use super::chance::{self, Chance, Seeded};
use crate::sampling::gallery::{Bug, Place};
use crate::sampling::{argmax, one_hot, residual, Dist};
use crate::toy::{sequence_index, ToyLm, VOCAB};

/// How the run decodes: sampling (the rejection sampler runs) or greedy (drafts are the draft's
/// argmax, kept while they equal the target's; the sampler is never called).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Sampled,
    Greedy,
}

/// The request's temperature that [`Bug::UnwarpedTarget`]'s scorer forgets.
pub const REQUEST_TEMPERATURE: f64 = 0.5;
/// The draft's top-k in [`Bug::RawDraftQ`] (the toy has 5 tokens; the thread's default was 50).
pub const DRAFT_TOP_K: usize = 2;
/// The largest change of a logit in [`Bug::RowNumerics`]'s several-row kernel.
pub const ROW_NUMERICS: f64 = 0.01;

/// One run's fixed inputs.
#[derive(Clone, Copy)]
pub struct Run<'a> {
    pub lm: &'a ToyLm,
    pub gamma: usize,
    pub bug: Option<Bug>,
    pub mode: Mode,
}

impl Run<'_> {
    fn has(&self, bug: Bug) -> bool {
        // A sampler's fault is not on greedy decoding's path.
        self.bug == Some(bug) && (self.mode == Mode::Sampled || bug.place() == Place::Loop)
    }

    /// The target's row after `view`, in a call that verifies `rows` rows.
    fn target(&self, view: &[usize], rows: usize) -> Dist {
        let p = self.lm.p(view);
        if self.has(Bug::RowNumerics) && rows > 1 {
            perturbed(p, view, rows)
        } else {
            p.to_vec()
        }
    }

    /// The first `window` tokens after `prompt` (at least two tokens).
    pub fn tokens(&self, prompt: &[usize], window: usize, chance: &mut impl Chance) -> Vec<usize> {
        let mut ctx = prompt.to_vec();
        // The target's state: what it has read (the true context unless a bug leaves drafts in).
        let mut seen = prompt.to_vec();
        let end = prompt.len() + window;
        while ctx.len() < end {
            let y = self.call(&mut ctx, &mut seen, end, chance);
            ctx.push(y);
            seen.push(y);
            if !self.has(Bug::StaleCache) {
                seen.clone_from(&ctx);
            }
        }
        ctx[prompt.len()..prompt.len() + window].to_vec()
    }

    /// One target call: pushes the kept drafts onto `ctx` and `seen`, returns the call's last
    /// token (the replacement or the bonus), and leaves in `seen` what the target's state holds
    /// before that token. Once `ctx` reaches `end` tokens nothing more is drawn (the window is
    /// full; what follows cannot change it).
    fn call(
        &self,
        ctx: &mut Vec<usize>,
        seen: &mut Vec<usize>,
        end: usize,
        chance: &mut impl Chance,
    ) -> usize {
        let (rows, sampled) = (self.gamma + 1, self.mode == Mode::Sampled);
        for i in 0..self.gamma {
            if ctx.len() >= end {
                return 0;
            }
            let q = self.lm.q(ctx).to_vec();
            let x = chance.draw(&self.draft_dist(&q));
            let p = self.target(seen, rows);
            let kept = if self.has(Bug::FirstDraftUnchecked) && i == 0 {
                true
            } else if !sampled {
                x == argmax(&p)
            } else {
                chance.accept(self.accept_prob(&p, &q, x, seen, rows)).0
            };
            if kept {
                ctx.push(x);
                seen.push(x);
                continue;
            }
            let y = if !sampled {
                argmax(&p)
            } else {
                chance.draw(&self.reject_dist(&p, &q, x, seen, rows))
            };
            // (Once y completes the window, what the state holds cannot show.)
            if self.has(Bug::StaleCache) && ctx.len() + 1 < end {
                // The call had read every draft; none of them is taken back out. The toy reads
                // the last two tokens, so of the drafts after x only the last one can show (with
                // y after it): it is drawn once, from its marginal.
                seen.push(x);
                if i + 1 < self.gamma {
                    let last = self.last_draft(ctx[ctx.len() - 1], x, self.gamma - i - 1);
                    seen.push(chance.draw(&last));
                }
            }
            return y;
        }
        let p = self.target(seen, rows);
        if !sampled {
            return argmax(&p);
        }
        let bonus = if self.has(Bug::UnwarpedTarget) {
            unwarped(&p)
        } else {
            p
        };
        chance.draw(&bonus)
    }

    /// The distribution of the draft's token `steps` draws after the context (…, a, b).
    fn last_draft(&self, a: usize, b: usize, steps: usize) -> Dist {
        // Over the last two tokens: pairs[a·V + b].
        let mut pairs = vec![0.0; VOCAB * VOCAB];
        pairs[a * VOCAB + b] = 1.0;
        for _ in 0..steps {
            let mut next = vec![0.0; VOCAB * VOCAB];
            for (pair, &w) in pairs.iter().enumerate().filter(|(_, &w)| w > 0.0) {
                let (a, b) = (pair / VOCAB, pair % VOCAB);
                for (c, &d) in self.draft_dist(self.lm.q(&[a, b])).iter().enumerate() {
                    next[b * VOCAB + c] += w * d;
                }
            }
            pairs = next;
        }
        let mut last = vec![0.0; VOCAB];
        for (pair, &w) in pairs.iter().enumerate() {
            last[pair % VOCAB] += w;
        }
        last
    }

    /// Where the draft token is drawn from.
    fn draft_dist(&self, q: &[f64]) -> Dist {
        match self.mode {
            Mode::Greedy => one_hot(q.len(), argmax(q)),
            Mode::Sampled if self.has(Bug::ArgmaxDraft) => one_hot(q.len(), argmax(q)),
            Mode::Sampled if self.has(Bug::RawDraftQ) => top_k(q, DRAFT_TOP_K),
            Mode::Sampled => q.to_vec(),
        }
    }

    /// The target's p that the sampler compares with (the right row, or the bug's).
    fn compared(&self, p: &[f64], x: usize, seen: &[usize], rows: usize) -> Dist {
        if self.has(Bug::UnwarpedTarget) {
            unwarped(p)
        } else if self.has(Bug::ShiftedRow) {
            let mut next = seen.to_vec();
            next.push(x);
            self.target(&next, rows)
        } else {
            p.to_vec()
        }
    }

    fn accept_prob(&self, p: &[f64], q: &[f64], x: usize, seen: &[usize], rows: usize) -> f64 {
        let p = self.compared(p, x, seen, rows);
        let a = if q[x] <= 0.0 {
            1.0
        } else {
            (p[x] / q[x]).min(1.0)
        };
        if self.has(Bug::SameTokenOr) {
            // Kept when an independent y ~ p equals x (probability p(x)), or else by the ratio.
            a + (1.0 - a) * p[x]
        } else {
            a
        }
    }

    fn reject_dist(&self, p: &[f64], q: &[f64], x: usize, seen: &[usize], rows: usize) -> Dist {
        if self.has(Bug::LateRejection) {
            let mut next = seen.to_vec();
            next.push(x);
            return self.target(&next, rows);
        }
        let p = self.compared(p, x, seen, rows);
        if self.has(Bug::SoftmaxResidual) {
            let r: Vec<f64> = p.iter().zip(q).map(|(a, b)| (a - b).max(0.0)).collect();
            crate::toy::softmax(&r, 1.0)
        } else {
            residual(&p, q)
        }
    }
}

/// p at temperature 1 when the request's p is at [`REQUEST_TEMPERATURE`]: p^T normalised.
pub fn unwarped(p: &[f64]) -> Dist {
    let r: Vec<f64> = p.iter().map(|x| x.powf(REQUEST_TEMPERATURE)).collect();
    let s: f64 = r.iter().sum();
    r.into_iter().map(|x| x / s).collect()
}

/// q's `k` most likely tokens, renormalised (ties to the lower id).
pub fn top_k(q: &[f64], k: usize) -> Dist {
    let mut order: Vec<usize> = (0..q.len()).collect();
    order.sort_by(|&a, &b| q[b].total_cmp(&q[a]).then(a.cmp(&b)));
    let mut out = vec![0.0; q.len()];
    for &t in &order[..k.min(q.len())] {
        out[t] = q[t];
    }
    let s: f64 = out.iter().sum();
    out.into_iter().map(|x| x / s).collect()
}

/// The several-row kernel's p: each logit moved by up to [`ROW_NUMERICS`], by a fixed function of
/// the row's context, the token and the call's row count (numerics depend on the call's shape).
fn perturbed(p: &[f64], view: &[usize], rows: usize) -> Dist {
    shifted(p, view[view.len() - 2] * VOCAB + view[view.len() - 1], rows)
}

/// `p` through the several-row kernel: each logit moved by up to [`ROW_NUMERICS`], by a fixed
/// function of `row` (the row's context, as a number), the token and the call's row count.
pub fn shifted(p: &[f64], row: usize, rows: usize) -> Dist {
    let logits: Vec<f64> = p
        .iter()
        .enumerate()
        .map(|(t, x)| x.ln() + ROW_NUMERICS * (2.0 * unit(row, t, rows) - 1.0))
        .collect();
    crate::toy::softmax(&logits, 1.0)
}

/// A fixed number in [0, 1) of (row, token, rows): SplitMix64 of the three.
fn unit(row: usize, token: usize, rows: usize) -> f64 {
    let mut z = ((row as u64) << 40) ^ ((token as u64) << 20) ^ rows as u64;
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

/// The exact distribution of the first `window` tokens after `prompt`, over every branch.
pub fn exact(run: Run<'_>, prompt: &[usize], window: usize) -> Dist {
    let mut out = vec![0.0; VOCAB.pow(window as u32)];
    chance::enumerate(
        |b| run.tokens(prompt, window, b),
        |w, seq| out[sequence_index(&seq)] += w,
    );
    out
}

/// `n` seeded samples of the first `window` tokens after `prompt`: counts per sequence.
pub fn samples(run: Run<'_>, prompt: &[usize], window: usize, n: usize, seed: u64) -> Vec<u64> {
    let mut counts = vec![0u64; VOCAB.pow(window as u32)];
    let mut chance = Seeded::new(seed);
    for _ in 0..n {
        counts[sequence_index(&run.tokens(prompt, window, &mut chance))] += 1;
    }
    counts
}

#[cfg(test)]
mod tests;

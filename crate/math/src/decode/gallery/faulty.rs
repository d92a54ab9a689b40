//! The gallery's loop bugs on any model ([`Faulty`]): the engine's own loop, unchanged, run on a
//! target whose answers carry the fault — as the field met them on real models, where the toy of
//! [`super`] cannot show them all (its p has no near-ties). Only the bugs of the decoding loop
//! ([`Place::Loop`]) can be put into a model this way; the sampler's bugs live in the sampler.
//! - [`Bug::FirstDraftUnchecked`]: the call's first drafted token is committed without a check —
//!   its p at the root is the point mass on it, so every rule keeps it;
//! - [`Bug::StaleCache`] (chains): what the target has read is never rolled back — a rejected
//!   chain's drafts stay in its state, and what comes after is read behind them, as in the toy;
//! - [`Bug::RowNumerics`]: a call of several rows gives each logit a fixed shift of up to
//!   [`ROW_NUMERICS`](super::ROW_NUMERICS), a function of the row's last two tokens, the token and the row count
//!   ([`shifted`], the toy's kernel); a one-row call (plain decoding) is exact.

use super::shifted;
use crate::decode::{LanguageModel, Speculation};
use crate::error::{Error, Text};
use crate::sampling::gallery::{Bug, Place};
use crate::sampling::{one_hot, Dist};

/// `inner` with `bug` (None: `inner` itself). Make one a generation: it keeps what the target
/// has read from its first call on.
pub struct Faulty<M> {
    inner: M,
    bug: Option<Bug>,
    /// [`Bug::StaleCache`]: what the target has read (the true context with stale drafts left
    /// in), how much of the true context that covers, and the chain of the last call (read too).
    seen: Vec<u32>,
    covered: usize,
    chain: Vec<u32>,
    /// The most tokens `inner` reads (its positions).
    limit: usize,
}

impl<M: LanguageModel> Faulty<M> {
    /// `bug` must be a loop bug; `limit`: the positions `inner` has (a stale cache grows past the
    /// true context).
    pub fn new(inner: M, bug: Option<Bug>, limit: usize) -> Faulty<M> {
        assert!(
            bug.is_none_or(|b| b.place() == Place::Loop),
            "{bug:?} is the sampler's"
        );
        Faulty {
            inner,
            bug,
            seen: Vec::new(),
            covered: 0,
            chain: Vec::new(),
            limit,
        }
    }

    /// What the target reads for `context` with a cache never rolled back (one [`Faulty`] a
    /// generation: its first call starts the state).
    fn stale(&mut self, context: &[u32], tree: &Speculation) -> Result<Vec<u32>, Error> {
        let is_chain = (0..tree.len()).all(|i| tree.parents[i] == i.checked_sub(1));
        if !is_chain {
            return Err(Error::Unavailable {
                what: "stale cache",
                why: Text::new("it is re-created on chains only", "它只在链上重现"),
            });
        }
        let seen = if self.covered == 0 {
            context.to_vec()
        } else {
            // The last call's chain was read whole; of the context since, the tokens the chain
            // already holds (the accepted ones) are not read again, the rest come after it.
            let new = &context[self.covered..];
            let kept = new
                .iter()
                .zip(&self.chain)
                .take_while(|(a, b)| a == b)
                .count();
            let mut seen = std::mem::take(&mut self.seen);
            seen.extend(&self.chain);
            seen.extend(&new[kept..]);
            seen
        };
        let read = seen.len() + tree.len();
        if read > self.limit {
            return Err(Error::TooLarge {
                what: Text::new(
                    "the stale cache (the tokens the target has read, as nodes)",
                    "未回滚的缓存（目标模型读过的 token，按节点计）",
                ),
                nodes: read as u64,
                budget: self.limit,
            });
        }
        self.seen = seen;
        self.covered = context.len();
        self.chain = tree.tokens.clone();
        Ok(self.seen.clone())
    }
}

impl<M: LanguageModel> LanguageModel for Faulty<M> {
    fn vocab(&self) -> usize {
        self.inner.vocab()
    }

    async fn score(&mut self, context: &[u32], tree: &Speculation) -> Result<Vec<Dist>, Error> {
        match self.bug {
            None => self.inner.score(context, tree).await,
            Some(Bug::FirstDraftUnchecked) => {
                let mut out = self.inner.score(context, tree).await?;
                if let Some(&x) = tree.tokens.first() {
                    out[0] = one_hot(out[0].len(), x as usize);
                }
                Ok(out)
            }
            Some(Bug::StaleCache) => {
                let read = self.stale(context, tree)?;
                self.inner.score(&read, tree).await
            }
            Some(Bug::RowNumerics) => {
                let out = self.inner.score(context, tree).await?;
                let rows = out.len();
                if rows == 1 {
                    return Ok(out);
                }
                Ok(out
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        // The row's last two tokens: along the path to its node, then the context's.
                        let path = if i == 0 {
                            Vec::new()
                        } else {
                            tree.path_to(i - 1)
                        };
                        let mut last = path
                            .iter()
                            .rev()
                            .map(|&n| tree.tokens[n])
                            .chain(context.iter().rev().copied());
                        let (b, a) = (last.next().unwrap_or(0), last.next().unwrap_or(0));
                        let key = a as usize * p.len() + b as usize;
                        shifted(p, key, rows)
                    })
                    .collect())
            }
            Some(b) => unreachable!("{b:?} is checked in Faulty::new"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::gallery::ROW_NUMERICS;
    use crate::decode::ready;

    /// A model that answers uniform distributions and records what it was asked to read.
    struct Recorder {
        read: Vec<Vec<u32>>,
    }

    impl LanguageModel for Recorder {
        fn vocab(&self) -> usize {
            4
        }

        async fn score(&mut self, context: &[u32], tree: &Speculation) -> Result<Vec<Dist>, Error> {
            self.read.push(context.to_vec());
            Ok(vec![vec![0.25; 4]; tree.len() + 1])
        }
    }

    fn faulty(bug: Option<Bug>) -> Faulty<Recorder> {
        Faulty::new(Recorder { read: Vec::new() }, bug, 64)
    }

    #[test]
    fn without_a_bug_the_model_answers_as_itself() {
        let mut m = faulty(None);
        let out = ready(m.score(&[1, 2], &Speculation::chain(&[3, 0]))).unwrap();
        assert_eq!(out, vec![vec![0.25; 4]; 3]);
        assert_eq!(m.inner.read, vec![vec![1, 2]]);
    }

    #[test]
    fn the_first_draft_is_kept_whatever_the_target_thinks() {
        let mut m = faulty(Some(Bug::FirstDraftUnchecked));
        let out = ready(m.score(&[1, 2], &Speculation::chain(&[3, 0]))).unwrap();
        assert_eq!(out[0], vec![0.0, 0.0, 0.0, 1.0]);
        assert_eq!(out[1..], vec![vec![0.25; 4]; 2]);
        // Plain decoding has no draft to keep.
        let plain = ready(m.score(&[1, 2], &Speculation::default())).unwrap();
        assert_eq!(plain, vec![vec![0.25; 4]]);
    }

    #[test]
    fn a_stale_cache_reads_the_rejected_drafts_before_what_follows() {
        let mut m = faulty(Some(Bug::StaleCache));
        ready(m.score(&[1, 2], &Speculation::chain(&[3, 0, 1]))).unwrap();
        // 3 was accepted, 0 rejected and replaced by 2: the target still holds 0 and 1.
        ready(m.score(&[1, 2, 3, 2], &Speculation::chain(&[1]))).unwrap();
        // Then everything accepted and a bonus 3: nothing stale is added.
        ready(m.score(&[1, 2, 3, 2, 1, 3], &Speculation::default())).unwrap();
        assert_eq!(
            m.inner.read,
            vec![
                vec![1, 2],
                vec![1, 2, 3, 0, 1, 2],
                vec![1, 2, 3, 0, 1, 2, 1, 3]
            ]
        );
        // A cache past the model's positions is refused.
        let mut small = Faulty::new(Recorder { read: Vec::new() }, Some(Bug::StaleCache), 3);
        let e = ready(small.score(&[1, 2], &Speculation::chain(&[3, 0]))).unwrap_err();
        assert!(
            e.message(crate::i18n::Lang::En).contains("stale cache"),
            "{e:?}"
        );
        // Trees are not re-created: refused by name, in both languages.
        let mut tree = Speculation::chain(&[3]);
        tree.push(0, None);
        let e = ready(faulty(Some(Bug::StaleCache)).score(&[1], &tree)).unwrap_err();
        assert_eq!(
            e.message(crate::i18n::Lang::En),
            "stale cache unavailable: it is re-created on chains only"
        );
        assert!(e
            .message(crate::i18n::Lang::Zh)
            .starts_with("未回滚的缓存不可用"));
    }

    #[test]
    fn several_rows_shift_each_logit_by_at_most_the_kernels_error_and_one_row_is_exact() {
        let mut m = faulty(Some(Bug::RowNumerics));
        let one = ready(m.score(&[1, 2], &Speculation::default())).unwrap();
        assert_eq!(one, vec![vec![0.25; 4]]);
        let out = ready(m.score(&[1, 2], &Speculation::chain(&[3, 0]))).unwrap();
        for p in &out {
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            // Log-ratios against the uniform answer: within 2·SHIFT of each other, and moved.
            let logs: Vec<f64> = p.iter().map(|x| x.ln()).collect();
            let spread = logs.iter().cloned().fold(f64::MIN, f64::max)
                - logs.iter().cloned().fold(f64::MAX, f64::min);
            assert!(
                spread > 0.0 && spread <= 2.0 * ROW_NUMERICS + 1e-12,
                "{spread}"
            );
        }
        // Each row by its own last two tokens: the context's, then along the chain.
        let u = vec![0.25; 4];
        assert_eq!(out[0], shifted(&u, 4 + 2, 3));
        assert_eq!(out[1], shifted(&u, 2 * 4 + 3, 3));
        assert_eq!(out[2], shifted(&u, 3 * 4, 3));
        assert_ne!(out[1], out[2], "rows of other contexts shift otherwise");
    }

    #[test]
    #[should_panic(expected = "the sampler's")]
    fn a_sampler_bug_is_not_a_models_fault() {
        faulty(Some(Bug::SoftmaxResidual));
    }
}

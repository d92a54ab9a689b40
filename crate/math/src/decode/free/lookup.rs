//! Prompt Lookup decoding (lecture §5.3): take the last n tokens, find their most recent earlier
//! occurrence in prompt + output, and propose the k tokens that followed it; n is tried from a
//! maximum down to a minimum, so the longest match wins.

use super::Drafter;
use crate::decode::{Proposal, Source};
use crate::error::{Error, Range};

/// The longest n-gram matched.
pub const NGRAM: Range = Range::new("ngram", 1.0, MAX_NGRAM as f64).shown_as("n");
/// Tokens copied after a match.
pub const K: Range = Range::new("k", 1.0, MAX_K as f64);

/// The rule's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptLookup {
    /// Longest and shortest n-gram to match.
    pub max_ngram: usize,
    pub min_ngram: usize,
    /// Tokens proposed.
    pub k: usize,
}

/// Largest n-gram and k accepted at the boundary.
pub const MAX_NGRAM: usize = 64;
pub const MAX_K: usize = 256;

impl PromptLookup {
    pub fn new(max_ngram: usize, min_ngram: usize, k: usize) -> Result<PromptLookup, Error> {
        NGRAM.check(max_ngram as f64)?;
        Range::new("min-ngram", 1.0, max_ngram as f64).check(min_ngram as f64)?;
        K.check(k as f64)?;
        Ok(PromptLookup {
            max_ngram,
            min_ngram,
            k,
        })
    }

    /// The draft after `tokens`: empty when no n-gram matches.
    pub fn draft(&self, tokens: &[u32]) -> Vec<u32> {
        let len = tokens.len();
        for n in (self.min_ngram..=self.max_ngram.min(len.saturating_sub(1))).rev() {
            let pattern = &tokens[len - n..];
            // Most recent occurrence that ends before the pattern itself does.
            if let Some(start) = (0..len - n).rev().find(|&s| &tokens[s..s + n] == pattern) {
                let from = start + n;
                return tokens[from..len.min(from + self.k)].to_vec();
            }
        }
        Vec::new()
    }
}

impl Drafter for PromptLookup {
    fn propose(&mut self, ctx: &[u32], _prompt: usize, depth: usize) -> Proposal {
        let mut p = Proposal::empty();
        let mut at = 0;
        for &t in self.draft(ctx).iter().take(depth) {
            at = p.offer(at, t, Source::Request).0 + 1;
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule, written the slow obvious way: every n from the top, every earlier start.
    fn reference(tokens: &[u32], max: usize, min: usize, k: usize) -> Vec<u32> {
        for n in (min..=max).rev() {
            if n >= tokens.len() {
                continue;
            }
            let pat = tokens[tokens.len() - n..].to_vec();
            let mut best = None;
            for s in 0..tokens.len() - n {
                if tokens[s..s + n] == pat[..] {
                    best = Some(s);
                }
            }
            if let Some(s) = best {
                return tokens[s + n..].iter().take(k).copied().collect();
            }
        }
        vec![]
    }

    #[test]
    fn follows_the_most_recent_occurrence_of_the_longest_ngram() {
        let pl = PromptLookup::new(3, 1, 3).unwrap();
        // "1 2 3" occurred at the start; what followed was 4 1 2.
        assert_eq!(pl.draft(&[1, 2, 3, 4, 1, 2, 3]), vec![4, 1, 2]);
        // 9 1 2 3 never occurred, nor 1 2 3 with n = 3 earlier than the end... only n = 1 matches 3.
        assert_eq!(pl.draft(&[3, 7, 8, 9, 3]), vec![7, 8, 9]);
        // Most recent: 5 was followed by 6 then by 8; the later one wins.
        assert_eq!(pl.draft(&[5, 6, 5, 8, 5]), vec![8, 5]);
        assert_eq!(pl.draft(&[1, 2, 3]), Vec::<u32>::new());
        assert_eq!(pl.draft(&[]), Vec::<u32>::new());
        let min2 = PromptLookup::new(3, 2, 3).unwrap();
        assert_eq!(min2.draft(&[3, 7, 8, 9, 3]), Vec::<u32>::new());
    }

    #[test]
    fn agrees_with_the_slow_rule_on_random_sequences() {
        use rand::{rngs::StdRng, Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(5);
        for _ in 0..2000 {
            let len = rng.random_range(0..30);
            let t: Vec<u32> = (0..len).map(|_| rng.random_range(0..4)).collect();
            let max = rng.random_range(1..5);
            let min = rng.random_range(1..=max);
            let k = rng.random_range(1..6);
            let pl = PromptLookup::new(max, min, k).unwrap();
            assert_eq!(
                pl.draft(&t),
                reference(&t, max, min, k),
                "{t:?} {max} {min} {k}"
            );
        }
    }

    #[test]
    fn rejects_bad_settings() {
        assert!(PromptLookup::new(0, 1, 3)
            .unwrap_err()
            .to_string()
            .contains("ngram"));
        assert!(PromptLookup::new(3, 4, 3)
            .unwrap_err()
            .to_string()
            .contains("min-ngram"));
        assert!(PromptLookup::new(3, 1, 100_000)
            .unwrap_err()
            .to_string()
            .contains("k"));
    }
}

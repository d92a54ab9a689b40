//! Acceptance by token kind (lecture §3.1, demo 03.1): how often each draft's next-token
//! distribution agrees with the target's, grouped by what predicting the token takes — over many
//! held-out worlds at once (the experiment), or at every position of one world (the LikesWorld
//! widget). Both are teacher-forced forwards ([`crate::model::eval::distributions_many`]) and
//! share one row type, [`KindAcceptance`].

use crate::clock::Progress;
use crate::decode::stats::Generation;
use crate::error::Error;
use crate::likesworld::{self, prompts, token_kinds, TokenKind, World};
use crate::model::eval::distributions_many;
use crate::model::{ModelKind, Models};
use crate::sampling::{argmax, overlap};

/// Measured acceptance of one token kind.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KindAlpha {
    pub kind: TokenKind,
    pub tested: usize,
    pub passed: usize,
    pub alpha: f64,
}

/// α by the kind of the output token at each tested position.
pub fn alpha_by_kind(runs: &[(Vec<u32>, Generation)]) -> Vec<KindAlpha> {
    let mut rows: Vec<KindAlpha> = TokenKind::ALL
        .iter()
        .map(|&kind| KindAlpha {
            kind,
            tested: 0,
            passed: 0,
            alpha: f64::NAN,
        })
        .collect();
    for (prompt, g) in runs {
        let mut seq = prompt.clone();
        seq.extend(&g.output);
        let kinds = token_kinds(&seq);
        for &(at, passed) in &g.tests {
            let k = kinds[prompt.len() + at];
            let row = rows.iter_mut().find(|r| r.kind == k).expect("every kind");
            row.tested += 1;
            row.passed += usize::from(passed);
        }
    }
    rows.retain(|r| r.tested > 0);
    rows.iter_mut()
        .for_each(|r| r.alpha = r.passed as f64 / r.tested as f64);
    rows
}

/// Demo 03.1: acceptance by token kind, teacher-forced over whole held-out worlds.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KindAcceptance {
    pub kind: TokenKind,
    pub positions: usize,
    /// Sampling acceptance β = Σ min(p, q) of draft A and B.
    pub beta: [f64; 2],
    /// Greedy acceptance: how often each draft's argmax is the target's.
    pub greedy: [f64; 2],
}

/// Sequences scored in one teacher-forced forward by the experiments that need every position's
/// distribution.
pub const DISTRIBUTION_CHUNK: usize = 64;

pub async fn acceptance_by_kind(
    models: &Models,
    n: usize,
    progress: Progress<'_>,
) -> Result<Vec<KindAcceptance>, Error> {
    let mut sums = [[0.0f64; 5]; 4]; // per kind: positions, β A, β B, greedy A, greedy B
    let worlds = prompts(n);
    let mut done = 0;
    // Teacher-forced forwards over many worlds at once (one model call per chunk, not per world).
    for chunk in worlds.chunks(DISTRIBUTION_CHUNK) {
        let seqs: Vec<Vec<u32>> = chunk.iter().map(World::tokens).collect();
        let (d, dd) = (&models.device, &models.draft_device);
        let p = distributions_many(&models.target, &seqs, d).await?;
        let a = distributions_many(&models.draft_a, &seqs, dd).await?;
        let b = distributions_many(&models.draft_b, &seqs, dd).await?;
        for (i, tokens) in seqs.iter().enumerate() {
            let (p, a, b) = (&p[i], &a[i], &b[i]);
            let kinds = token_kinds(tokens);
            for j in 0..tokens.len() - 1 {
                let k = TokenKind::ALL
                    .iter()
                    .position(|&k| k == kinds[j + 1])
                    .expect("a kind");
                let top = argmax(&p[j]);
                let s = &mut sums[k];
                s[0] += 1.0;
                s[1] += overlap(&p[j], &a[j]);
                s[2] += overlap(&p[j], &b[j]);
                s[3] += f64::from(u8::from(argmax(&a[j]) == top));
                s[4] += f64::from(u8::from(argmax(&b[j]) == top));
            }
        }
        done += chunk.len();
        progress(done, n);
    }
    Ok(TokenKind::ALL
        .iter()
        .zip(sums)
        .filter(|(_, s)| s[0] > 0.0)
        .map(|(&kind, s)| KindAcceptance {
            kind,
            positions: s[0] as usize,
            beta: [s[1] / s[0], s[2] / s[0]],
            greedy: [s[3] / s[0], s[4] / s[0]],
        })
        .collect())
}

/// One predicted position of a world: the token that comes next and what each model gave it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Position {
    pub next: &'static str,
    pub kind: TokenKind,
    /// Probability of `next` under the target, draft A and draft B.
    pub p: [f64; 3],
    /// β of draft A and draft B against the target at this position.
    pub beta: [f64; 2],
    /// Whether each draft's argmax equals the target's.
    pub agree: [bool; 2],
    /// The target's most likely next token and its probability.
    pub target_top: (&'static str, f64),
}

/// Every position of `tokens` (one world, from `<bos>`), scored by the three models.
pub async fn positions(models: &Models, tokens: &[u32]) -> Result<Vec<Position>, Error> {
    let seqs = [tokens.to_vec()];
    let mut d = Vec::with_capacity(3);
    for kind in ModelKind::ALL {
        d.push(
            distributions_many(models.get(kind), &seqs, models.device_of(kind))
                .await?
                .remove(0),
        );
    }
    let kinds = token_kinds(tokens);
    Ok((0..tokens.len() - 1)
        .map(|i| {
            let next = tokens[i + 1] as usize;
            let (p, a, b) = (&d[0][i], &d[1][i], &d[2][i]);
            let top = argmax(p);
            Position {
                next: likesworld::word(next as u32),
                kind: kinds[i + 1],
                p: [p[next], a[next], b[next]],
                beta: [overlap(p, a), overlap(p, b)],
                agree: [argmax(a) == top, argmax(b) == top],
                target_top: (likesworld::word(top as u32), p[top]),
            }
        })
        .collect())
}

/// Acceptance by kind over the positions of one world.
pub fn by_kind(positions: &[Position]) -> Vec<KindAcceptance> {
    TokenKind::ALL
        .into_iter()
        .filter_map(|kind| {
            let at: Vec<&Position> = positions.iter().filter(|p| p.kind == kind).collect();
            let n = at.len() as f64;
            (!at.is_empty()).then(|| KindAcceptance {
                kind,
                positions: at.len(),
                beta: [0, 1].map(|j| at.iter().map(|p| p.beta[j]).sum::<f64>() / n),
                greedy: [0, 1].map(|j| at.iter().filter(|p| p.agree[j]).count() as f64 / n),
            })
        })
        .collect()
}

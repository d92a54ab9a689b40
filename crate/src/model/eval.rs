//! Evaluating a model on whole sequences, teacher-forced: the next-token distributions at every
//! position ([`distributions`], [`distributions_many`]: what the LikesWorld widget shows and the
//! acceptance experiments compare, read back asynchronously so that they run in a browser on
//! every backend), and answer accuracy on held-out worlds ([`accuracy`], lecture §3: the target
//! answers 100%, the drafts ≈ 14% and ≈ 44%; natively only, as training uses it, since it reads
//! its tensors back synchronously).

use super::{floats, Decoder};
use crate::error::Error;
use crate::likesworld;
#[cfg(any(not(target_arch = "wasm32"), feature = "train"))]
use crate::likesworld::{token_kinds, TokenKind};
use crate::likesworld::{World, MAX_LEN, PAD};
use burn::tensor::activation::softmax;
use burn::tensor::{Device, Int, Tensor, TensorData};

/// Next-token distributions at every position, [positions][vocab].
pub async fn distributions(
    model: &Decoder,
    tokens: &[u32],
    device: &Device,
) -> Result<Vec<Vec<f64>>, Error> {
    let mut d = distributions_many(model, &[tokens.to_vec()], device).await?;
    Ok(d.pop().expect("one sequence"))
}

/// [`distributions`] of several sequences in one causal forward, [sequence][positions][vocab].
/// Shorter sequences are padded at the end, which the causal mask hides from every real
/// position.
pub async fn distributions_many(
    model: &Decoder,
    seqs: &[Vec<u32>],
    device: &Device,
) -> Result<Vec<Vec<Vec<f64>>>, Error> {
    let n = seqs.iter().map(Vec::len).max().unwrap_or(0);
    if n == 0 {
        return Ok(seqs.iter().map(|_| Vec::new()).collect());
    }
    let mut ids = Vec::with_capacity(seqs.len() * n);
    for s in seqs {
        ids.extend(s.iter().map(|&t| i64::from(t)));
        ids.extend(std::iter::repeat_n(i64::from(likesworld::PAD), n - s.len()));
    }
    let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids, [seqs.len(), n]), device);
    let probs = floats(softmax(model.forward_causal(tokens), 2)).await?;
    let v = likesworld::VOCAB;
    Ok(seqs
        .iter()
        .enumerate()
        .map(|(b, s)| {
            (0..s.len())
                .map(|i| {
                    let at = (b * n + i) * v;
                    probs[at..at + v].iter().map(|&x| f64::from(x)).collect()
                })
                .collect()
        })
        .collect())
}

/// Worlds padded to one batch: token ids [batch, MAX_LEN] and each world's tokens.
pub fn batch(worlds: &[World], device: &Device) -> (Tensor<2, Int>, Vec<Vec<u32>>) {
    let seqs: Vec<Vec<u32>> = worlds.iter().map(World::tokens).collect();
    let mut flat = Vec::with_capacity(seqs.len() * MAX_LEN);
    for s in &seqs {
        flat.extend(s.iter().map(|&t| i64::from(t)));
        flat.extend(std::iter::repeat_n(i64::from(PAD), MAX_LEN - s.len()));
    }
    (
        Tensor::from_data(TensorData::new(flat, [seqs.len(), MAX_LEN]), device),
        seqs,
    )
}

#[cfg(any(not(target_arch = "wasm32"), feature = "train"))]
/// Teacher-forced answer accuracy and the fraction of worlds with every answer right.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Accuracy {
    pub answer_accuracy: f64,
    pub world_accuracy: f64,
    pub answers: usize,
    pub worlds: usize,
}

#[cfg(any(not(target_arch = "wasm32"), feature = "train"))]
/// Scores `worlds` in batches of 256: the model's argmax at each answer position, given the true
/// sequence before it.
pub fn accuracy(model: &Decoder, worlds: &[World], device: &Device) -> Accuracy {
    let (mut right, mut answers, mut perfect) = (0usize, 0usize, 0usize);
    for chunk in worlds.chunks(256) {
        let (tokens, seqs) = batch(chunk, device);
        let predicted = model.forward_causal(tokens).argmax(2); // [batch, len, 1]
        let predicted: Vec<i64> = predicted
            .into_data()
            .convert::<i64>()
            .try_into_vec::<i64>()
            .expect("argmax gives integers");
        for (b, seq) in seqs.iter().enumerate() {
            let mut all = true;
            for (i, kind) in token_kinds(seq).into_iter().enumerate() {
                if kind == TokenKind::Answer {
                    let ok = predicted[b * MAX_LEN + i - 1] == i64::from(seq[i]);
                    right += usize::from(ok);
                    answers += 1;
                    all &= ok;
                }
            }
            perfect += usize::from(all);
        }
    }
    Accuracy {
        answer_accuracy: right as f64 / answers.max(1) as f64,
        world_accuracy: perfect as f64 / worlds.len().max(1) as f64,
        answers,
        worlds: worlds.len(),
    }
}

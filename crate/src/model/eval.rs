//! Measuring a model on LikesWorld: answer accuracy on held-out worlds (lecture §3: the target
//! answers 100%, the drafts ≈ 14% and ≈ 44%).

use super::Decoder;
use crate::likesworld::{token_kinds, TokenKind, World, MAX_LEN, PAD};
use burn::tensor::{Device, Int, Tensor, TensorData};

/// Worlds padded to one batch: token ids [batch, MAX_LEN] and each world's length.
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

/// Teacher-forced answer accuracy and the fraction of worlds with every answer right.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Accuracy {
    pub answer_accuracy: f64,
    pub world_accuracy: f64,
    pub answers: usize,
    pub worlds: usize,
}

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

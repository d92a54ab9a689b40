//! The trained target widened r× without retraining (Net2Net-style, a function-preserving map):
//! a memory-bound target whose answers are the trained target's (lecture §1.2: decoding reads
//! every weight once per step, so a target this wide costs what a real model costs).
//!
//! Every hidden unit of the residual stream and of the MLP is replicated r times, in place
//! (unit i becomes units i·r … i·r + r − 1, so head h's 16 dimensions become its 16r, and the
//! heads stay where they were):
//! - the embeddings' and every LayerNorm's vectors are replicated (the mean and the variance of a
//!   replicated vector are the original's, so its LayerNorm is the replicated LayerNorm);
//! - a linear layer that reads a replicated input has its weights replicated and divided by r
//!   (the r copies of x_i · w_io / r add up to x_i · w_io), its bias replicated;
//! - the queries are scaled by 1/√r: a head's q·k over r copies is r times the original, the
//!   scale 1/√(16r) is 1/√r times the original's, so the attention scores are unchanged;
//! - the head reads the replicated stream and writes the vocabulary (not replicated).
//!
//! In exact arithmetic the widened target's logits equal the trained target's; in f32 they
//! differ by rounding only. d_model 64r, d_ff 160r, the same 2 layers and 4 heads (head dim 16r):
//! at r = 16 one decode step reads 75.6 MB of weights (18.9 M parameters).

use super::decoder::{Block, Decoder};
use super::floats;
use crate::error::{Error, Range};
use burn::module::Param;
use burn::nn::{Embedding, LayerNorm, LayerNormConfig, Linear};
use burn::tensor::{Device, Tensor, TensorData};

/// Widths the playground builds: 24 is 43 M parameters (170 MB of f32), the most a browser tab's
/// 32-bit wasm memory holds beside the read-back copy while widening (and, in the page, the
/// layers' packed copy: 340 MB in all, run in the threaded module, whose memory stops at 2 GB).
pub const WIDTH: Range = Range::new("target width", 1.0, 24.0)
    .shown_as("width")
    .after(
        "(the widest: 43 M parameters, 170 MB)",
        "（最宽：4300 万个参数，170 MB）",
    );

/// The widths the page and the benchmarks offer.
pub const WIDTHS: [usize; 6] = [1, 2, 4, 8, 16, 24];

/// `model` widened `r`× on `device` (width 1: a copy). Reads the weights back (awaited: a
/// browser's GPU maps them asynchronously) and builds the wider decoder on `device`.
pub async fn widen(model: &Decoder, r: usize, device: &Device) -> Result<Decoder, Error> {
    WIDTH.check(r as f64)?;
    let d = model.token.weight.dims()[1];
    let vocab = model.head.weight.dims()[1];
    let rf = r as f32;
    let token = embedding(&model.token, r, device).await?;
    let position = embedding(&model.position, r, device).await?;
    let mut blocks = Vec::with_capacity(model.blocks.len());
    for b in &model.blocks {
        // Q, K and V are three [d, d] column blocks of one [d, 3d] matrix: each is widened on
        // its own, Q scaled by 1/√r.
        let qkv_w = floats(b.qkv.weight.val()).await?;
        let qkv_b = bias(&b.qkv).await?;
        let scales = [1.0 / rf.sqrt(), 1.0, 1.0];
        let mut w = vec![0.0f32; d * r * 3 * d * r];
        let mut bb = vec![0.0f32; 3 * d * r];
        for (part, scale) in scales.into_iter().enumerate() {
            let wp = columns(&qkv_w, d, 3 * d, part * d, d);
            let wide = matrix(&wp, d, d, r, r, scale);
            for row in 0..d * r {
                let to = row * 3 * d * r + part * d * r;
                w[to..to + d * r].copy_from_slice(&wide[row * d * r..(row + 1) * d * r]);
            }
            let bp: Vec<f32> = qkv_b[part * d..(part + 1) * d]
                .iter()
                .map(|x| x * scale)
                .collect();
            bb[part * d * r..(part + 1) * d * r].copy_from_slice(&replicate(&bp, r));
        }
        let qkv = Linear {
            weight: param2(w, [d * r, 3 * d * r], device),
            bias: Some(param1(bb, device)),
        };
        let block = Block {
            norm_attn: norm(&b.norm_attn, r, device).await?,
            qkv,
            out: linear(&b.out, r, r, device).await?,
            norm_mlp: norm(&b.norm_mlp, r, device).await?,
            up: linear(&b.up, r, r, device).await?,
            down: linear(&b.down, r, r, device).await?,
            packed: None,
        };
        // A second copy of the large layers, which the forward reads instead on flex.
        blocks.push(if super::matmul::PACKS {
            block.packed()
        } else {
            block
        });
    }
    let head = linear(&model.head, r, 1, device).await?;
    debug_assert_eq!(head.weight.dims(), [d * r, vocab]);
    Ok(Decoder {
        token,
        position,
        blocks,
        norm: norm(&model.norm, r, device).await?,
        head,
        n_heads: model.n_heads,
        host: None,
    })
}

/// How closely a widened model reproduces the one it was widened from.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Agreement {
    /// Largest |logit − logit'| over every real position of every sequence.
    pub max_abs_logit_diff: f64,
    /// Positions where both models' argmax is the same token, as a fraction.
    pub argmax_agreement: f64,
    pub positions: usize,
}

/// [`Agreement`] of `wide` with `model` on `seqs` (teacher-forced, one causal forward each).
pub async fn agreement(
    model: &Decoder,
    wide: &Decoder,
    seqs: &[Vec<u32>],
    device: &Device,
) -> Result<Agreement, Error> {
    let n = seqs.iter().map(Vec::len).max().unwrap_or(0);
    let mut ids = Vec::with_capacity(seqs.len() * n);
    for s in seqs {
        ids.extend(s.iter().map(|&t| i64::from(t)));
        ids.extend(std::iter::repeat_n(
            i64::from(crate::likesworld::PAD),
            n - s.len(),
        ));
    }
    let tokens = || {
        Tensor::<2, burn::tensor::Int>::from_data(
            TensorData::new(ids.clone(), [seqs.len(), n]),
            device,
        )
    };
    let a = floats(model.forward_causal(tokens())).await?;
    let b = floats(wide.forward_causal(tokens())).await?;
    let v = model.head.weight.dims()[1];
    let argmax = |row: &[f32]| {
        (0..row.len())
            .max_by(|&i, &j| row[i].total_cmp(&row[j]))
            .unwrap_or(0)
    };
    let (mut diff, mut same, mut positions) = (0.0f64, 0usize, 0usize);
    for (i, s) in seqs.iter().enumerate() {
        for p in 0..s.len() {
            let at = (i * n + p) * v;
            let (ra, rb) = (&a[at..at + v], &b[at..at + v]);
            for (x, y) in ra.iter().zip(rb) {
                diff = diff.max(f64::from((x - y).abs()));
            }
            same += usize::from(argmax(ra) == argmax(rb));
            positions += 1;
        }
    }
    Ok(Agreement {
        max_abs_logit_diff: diff,
        argmax_agreement: same as f64 / positions.max(1) as f64,
        positions,
    })
}

/// Parameters of the target widened `r`×: the trained target's count for r = 1.
pub fn params(vocab: usize, r: usize) -> usize {
    let (d, f, layers, positions) = (64 * r, 160 * r, 2, 64);
    let block = 2 * 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d);
    vocab * d + positions * d + layers * block + 2 * d + d * vocab + vocab
}

/// Bytes a decode step reads: every weight matrix once (the embeddings only a row per token).
pub fn step_bytes(vocab: usize, r: usize) -> usize {
    let (d, f, layers) = (64 * r, 160 * r, 2);
    4 * (layers * (d * 3 * d + d * d + d * f + f * d) + d * vocab)
}

/// Every element replicated `r` times in place: [a, b] → [a, a, b, b] for r = 2.
fn replicate(v: &[f32], r: usize) -> Vec<f32> {
    v.iter().flat_map(|&x| std::iter::repeat_n(x, r)).collect()
}

/// Columns `from..from + n` of a row-major `rows × cols` matrix.
fn columns(m: &[f32], rows: usize, cols: usize, from: usize, n: usize) -> Vec<f32> {
    (0..rows)
        .flat_map(|i| m[i * cols + from..i * cols + from + n].iter().copied())
        .collect()
}

/// A `[d_in, d_out]` weight that reads a `r_in`-times replicated input and writes an output
/// replicated `r_out` times: w'[i·r_in + j, o·r_out + l] = w[i, o] · scale / r_in.
fn matrix(w: &[f32], d_in: usize, d_out: usize, r_in: usize, r_out: usize, scale: f32) -> Vec<f32> {
    let k = scale / r_in as f32;
    let mut out = Vec::with_capacity(d_in * r_in * d_out * r_out);
    for i in 0..d_in {
        let row: Vec<f32> = w[i * d_out..(i + 1) * d_out]
            .iter()
            .flat_map(|&x| std::iter::repeat_n(x * k, r_out))
            .collect();
        for _ in 0..r_in {
            out.extend_from_slice(&row);
        }
    }
    out
}

async fn linear(l: &Linear, r_in: usize, r_out: usize, device: &Device) -> Result<Linear, Error> {
    let [d_in, d_out] = l.weight.dims();
    let w = matrix(
        &floats(l.weight.val()).await?,
        d_in,
        d_out,
        r_in,
        r_out,
        1.0,
    );
    let b = replicate(&bias(l).await?, r_out);
    Ok(Linear {
        weight: param2(w, [d_in * r_in, d_out * r_out], device),
        bias: Some(param1(b, device)),
    })
}

async fn bias(l: &Linear) -> Result<Vec<f32>, Error> {
    match &l.bias {
        Some(b) => floats(b.val()).await,
        None => Ok(vec![0.0; l.weight.dims()[1]]),
    }
}

async fn embedding(e: &Embedding, r: usize, device: &Device) -> Result<Embedding, Error> {
    let [n, d] = e.weight.dims();
    let w = floats(e.weight.val()).await?;
    Ok(Embedding {
        weight: param2(replicate(&w, r), [n, d * r], device),
    })
}

async fn norm(n: &LayerNorm, r: usize, device: &Device) -> Result<LayerNorm, Error> {
    let d = n.gamma.dims()[0];
    // The same epsilon as the trained model's (the default: it is not a parameter).
    let mut wide = LayerNormConfig::new(d * r).init(device);
    wide.gamma = param1(replicate(&floats(n.gamma.val()).await?, r), device);
    if let Some(beta) = &n.beta {
        wide.beta = Some(param1(replicate(&floats(beta.val()).await?, r), device));
    }
    Ok(wide)
}

fn param2(v: Vec<f32>, shape: [usize; 2], device: &Device) -> Param<Tensor<2>> {
    Param::from_tensor(Tensor::from_data(TensorData::new(v, shape), device))
}

fn param1(v: Vec<f32>, device: &Device) -> Param<Tensor<1>> {
    let n = v.len();
    Param::from_tensor(Tensor::from_data(TensorData::new(v, [n]), device))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replicated_weight_reads_replicated_inputs_as_the_original() {
        // y = x W for a 2 × 3 W; widened r = 2 on both sides.
        let w = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let x = [0.5f32, -1.5];
        let y: Vec<f32> = (0..3).map(|o| x[0] * w[o] + x[1] * w[3 + o]).collect();
        let wide = matrix(&w, 2, 3, 2, 2, 1.0);
        let xw = replicate(&x, 2);
        let yw: Vec<f32> = (0..6)
            .map(|o| (0..4).map(|i| xw[i] * wide[i * 6 + o]).sum())
            .collect();
        assert_eq!(yw, replicate(&y, 2));
    }

    #[test]
    fn the_step_reads_what_the_issue_says() {
        let v = crate::likesworld::VOCAB;
        // r = 1: the trained target's count (tests/models.rs checks it against the weights).
        assert_eq!(params(v, 1), 84_584);
        let bytes = step_bytes(v, 16) as f64 / 1e6;
        assert!((75.0..77.0).contains(&bytes), "{bytes} MB");
    }

    /// A widened target with its blocks packed, as the page builds it, gives the unpacked one's
    /// logits (within 1e-4) through the packed path: the count of packed calls grows.
    #[cfg(feature = "flex")]
    #[test]
    fn packed_blocks_give_the_unpacked_targets_logits() {
        use crate::model::device::Backend;
        use crate::model::matmul::tests::PACKED_CALLS;
        use burn::tensor::{read_sync, Int};
        let device = Device::flex();
        let models = read_sync(crate::model::Models::load(Backend::Flex)).unwrap();
        let wide = read_sync(widen(models.trained(), 4, &device)).unwrap();
        let packed = Decoder {
            blocks: wide.blocks.iter().cloned().map(Block::packed).collect(),
            ..wide.clone()
        };
        assert!(packed.blocks.iter().all(|b| b.packed.is_some()));
        let ids: Vec<i64> = (0..9)
            .map(|i| (i * 5 + 2) % crate::likesworld::VOCAB as i64)
            .collect();
        let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids, [1, 9]), &device);
        let floats = |t| read_sync(crate::model::floats::<3>(t)).unwrap();
        let before = PACKED_CALLS.with(|n| n.get());
        let fast = floats(packed.forward_causal(tokens.clone()));
        let after = PACKED_CALLS.with(|n| n.get());
        assert!(after > before, "the packed path ran");
        let slow = floats(wide.forward_causal(tokens));
        assert_eq!(fast.len(), slow.len());
        for (i, (a, b)) in fast.iter().zip(&slow).enumerate() {
            assert!((a - b).abs() <= 1e-4, "logit {i}: {a} ≠ {b}");
        }
    }
}

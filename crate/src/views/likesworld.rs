//! The LikesWorld widget (lecture §3.1, demo 03.1): a world typed or drawn at random, and at every
//! position the target's and each draft's probability of the token that comes next, coloured by
//! what predicting it takes; per kind, the sampling acceptance β = Σ min(p, q) and the greedy
//! agreement of each draft with the target.

use crate::error::{check_range, Error};
use crate::i18n::Lang;
use crate::likesworld::{self, token_kinds, worlds, Split, TokenKind, BOS};
use crate::model::{floats, Decoder, Models};
use crate::plot::diagrams::ramp;
use crate::plot::{colors, render, Chart, Labels, Scale};
use crate::sampling::{argmax, overlap};
use burn::tensor::activation::softmax;
use burn::tensor::{Device, Int, Tensor, TensorData};

#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default)]
pub struct LikesWorldParams {
    /// The sequence, in LikesWorld words; empty: a random world from `seed`.
    pub text: String,
    pub seed: u64,
    /// flex or ndarray.
    pub backend: String,
    /// The language of the figure's texts.
    pub lang: Lang,
}

impl Default for LikesWorldParams {
    fn default() -> Self {
        LikesWorldParams {
            text: String::new(),
            seed: 0,
            backend: "flex".into(),
            lang: Lang::En,
        }
    }
}

/// One predicted position: the token that comes next and what each model gave it.
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

/// Acceptance by token kind (lecture §3.1).
#[derive(Debug, Clone, serde::Serialize)]
pub struct KindRow {
    pub kind: TokenKind,
    pub positions: usize,
    /// Mean sampling acceptance β of draft A and B.
    pub beta: [f64; 2],
    /// Fraction of positions where each draft's argmax equals the target's.
    pub greedy: [f64; 2],
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LikesWorldView {
    pub text: String,
    pub backend: &'static str,
    pub positions: Vec<Position>,
    pub kinds: Vec<KindRow>,
    pub svg: String,
    /// Set by the caller when it ran on another backend than the one asked for, and why.
    pub note: Option<String>,
}

/// Parses the widget's sequence (adding `<bos>` when missing) or draws a world.
pub fn sequence(params: &LikesWorldParams) -> Result<Vec<u32>, Error> {
    if params.text.trim().is_empty() {
        return Ok(worlds(Split::HeldOut, params.seed, 1)[0].tokens());
    }
    let mut tokens = likesworld::encode(&params.text)?;
    if tokens.first() != Some(&BOS) {
        tokens.insert(0, BOS);
    }
    check_range(
        "sequence length",
        tokens.len() as f64,
        2.0,
        likesworld::MAX_LEN as f64,
        "2 to 50 tokens",
    )?;
    Ok(tokens)
}

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

pub async fn likesworld_view(
    params: &LikesWorldParams,
    models: &Models,
) -> Result<LikesWorldView, Error> {
    let tokens = sequence(params)?;
    let d = [
        distributions(&models.target, &tokens, &models.device).await?,
        distributions(&models.draft_a, &tokens, &models.device).await?,
        distributions(&models.draft_b, &tokens, &models.device).await?,
    ];
    let kinds = token_kinds(&tokens);
    let positions: Vec<Position> = (0..tokens.len() - 1)
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
        .collect();
    let kinds = [
        TokenKind::Boilerplate,
        TokenKind::RandomFact,
        TokenKind::QuestionName,
        TokenKind::Answer,
    ]
    .into_iter()
    .filter_map(|kind| {
        let at: Vec<&Position> = positions.iter().filter(|p| p.kind == kind).collect();
        let n = at.len() as f64;
        (!at.is_empty()).then(|| KindRow {
            kind,
            positions: at.len(),
            beta: [0, 1].map(|j| at.iter().map(|p| p.beta[j]).sum::<f64>() / n),
            greedy: [0, 1].map(|j| at.iter().filter(|p| p.agree[j]).count() as f64 / n),
        })
    })
    .collect();
    Ok(LikesWorldView {
        text: likesworld::decode(&tokens),
        backend: models.backend.name(),
        svg: strip(&positions, params.lang),
        positions,
        kinds,
        note: None,
    })
}

/// The kind's background colour.
fn kind_color(kind: TokenKind) -> plotters::style::RGBColor {
    match kind {
        TokenKind::Boilerplate => colors::GREY,
        TokenKind::RandomFact => colors::PURPLE,
        TokenKind::QuestionName => colors::BLUE,
        TokenKind::Answer => colors::TEAL,
    }
}

fn strip(positions: &[Position], l: Lang) -> String {
    let n = positions.len();
    let width = (80 + 15 * n as i32).max(640) as u32;
    render(
        width,
        300,
        l.pick(
            "Probability of each next token under the target and the drafts",
            "目标模型和草稿模型给每个下一 token 的概率",
        ),
        |cv| {
            let labels = Labels {
                title: l.pick(
                    "P(next token): target (bars, coloured by kind), draft A and B (dots)",
                    "P(下一个 token)：目标模型（柱，按类别着色），草稿 A 和 B（点）",
                ),
                x: "",
                y: l.pick("probability", "概率"),
            };
            let ch = Chart::new(
                cv,
                (60, 40, width as i32 - 20, 220),
                Scale::categories(n),
                Scale::linear(0.0, 1.0),
                &labels,
            );
            for (i, p) in positions.iter().enumerate() {
                let x = i as f64;
                let (a, _) = ch.px(x, 0.0);
                let (b, _) = ch.px(x + 1.0, 0.0);
                cv.rect_rgba((a, 40), (b, 220), ramp(kind_color(p.kind), 0.12));
                ch.bar(x + 0.15, x + 0.85, p.p[0], kind_color(p.kind));
                ch.dots(&[(x + 0.5, p.p[1])], colors::ORANGE, 2);
                ch.dots(&[(x + 0.5, p.p[2])], colors::RED, 3);
                let (px, _) = ch.px(x + 0.5, 0.0);
                cv.text_vertical((px, 250), p.next, 9, colors::INK);
            }
            cv.legend(
                (60, 290),
                &[
                    (l.pick("boilerplate", "套话"), colors::GREY),
                    (l.pick("random fact", "随机事实"), colors::PURPLE),
                    (l.pick("question name", "问题里的名字"), colors::BLUE),
                    (l.pick("answer", "答案"), colors::TEAL),
                    (l.pick("draft A", "草稿 A"), colors::ORANGE),
                    (l.pick("draft B", "草稿 B"), colors::RED),
                ],
            );
        },
    )
}

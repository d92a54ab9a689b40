//! The LikesWorld widget (lecture §3.1, demo 03.1): a world typed or drawn at random, and at every
//! position the target's and each draft's probability of the token that comes next, coloured by
//! what predicting it takes; per kind, the sampling acceptance β = Σ min(p, q) and the greedy
//! agreement of each draft with the target.

use crate::error::{Error, Range};
use crate::i18n::Lang;
use crate::lab::acceptance::{self, KindAcceptance, Position};
use crate::likesworld::{self, worlds, Split, TokenKind, BOS};
use crate::model::Models;
use crate::plot::diagrams::ramp;
use crate::plot::{colors, figure_width, render, Chart, Labels, Scale};

/// A typed world, in tokens.
pub const LENGTH: Range = Range::new("sequence length", 2.0, likesworld::MAX_LEN as f64)
    .shown_as("length")
    .after("tokens", "个 token");

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
    /// The room the page has for a figure, in CSS px (none: each figure's own width): figures
    /// are drawn for it rather than scaled down, so that their labels keep their size.
    pub figure_width: Option<u32>,
}

impl Default for LikesWorldParams {
    fn default() -> Self {
        LikesWorldParams {
            text: String::new(),
            seed: 0,
            backend: "flex".into(),
            lang: Lang::En,
            figure_width: None,
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LikesWorldView {
    pub text: String,
    pub backend: &'static str,
    pub positions: Vec<Position>,
    pub kinds: Vec<KindAcceptance>,
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
    LENGTH.check(tokens.len() as f64)?;
    Ok(tokens)
}

pub async fn likesworld_view(
    params: &LikesWorldParams,
    models: &Models,
) -> Result<LikesWorldView, Error> {
    let tokens = sequence(params)?;
    let positions = acceptance::positions(models, &tokens).await?;
    let kinds = acceptance::by_kind(&positions);
    Ok(LikesWorldView {
        text: likesworld::decode(&tokens),
        backend: models.backend.name(),
        svg: strip(&positions, params.lang, params.figure_width),
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

fn strip(positions: &[Position], l: Lang, room: Option<u32>) -> String {
    let n = positions.len();
    // A column per token, each wide enough for its 11 px name: a long text keeps its columns and
    // the page scrolls the strip (its box is .scroll-x) rather than shrinking the names.
    let width = figure_width(640, room).max(80 + 15 * n as u32);
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
                cv.text_vertical((px, 250), p.next, 11, colors::INK);
            }
            cv.legend(
                (60, 290),
                &TokenKind::ALL
                    .map(|k| (k.label(l), kind_color(k)))
                    .into_iter()
                    .chain([
                        (l.pick("draft A", "草稿 A"), colors::ORANGE),
                        (l.pick("draft B", "草稿 B"), colors::RED),
                    ])
                    .collect::<Vec<_>>(),
            );
        },
    )
}

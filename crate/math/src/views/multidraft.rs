//! Multi-draft verification (lecture §4.5, demos 04.4–04.5, exercise 6): naive sampling against
//! multi-step speculative sampling for one position with one candidate per draft model, given
//! the candidates or averaged over them; and, on the toy LM, what happens to MSS when a node's
//! children are drawn i.i.d., without replacement, or deterministically as the top k.

use crate::error::{shown, Error, Range, Text};
use crate::i18n::Lang;
use crate::plot::{colors, figure_width, render, Align, Chart, Labels, Scale};
use crate::sampling::multi::{children_exact, verify_exact, verify_given, Children, Mode, Verdict};
use crate::sampling::{parse_dist, tv, Dist};
use crate::toy::{ToyConfig, ToyLm, VOCAB};

/// Candidates per position: at most the toy vocabulary.
pub const K: Range = Range::new("k", 1.0, VOCAB as f64);

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct MultiDraftParams {
    /// The target's distribution, comma-separated.
    pub p: String,
    /// One distribution per draft model, separated by `;`.
    pub drafts: String,
    /// The token each draft drew, comma-separated and numbered from 1 as the lecture numbers
    /// them (t1 … tn; `2` or `t2`); empty = average over the draws.
    pub given: String,
    /// Children per node on the toy LM panel.
    pub k: u32,
    pub toy: ToyConfig,
    /// The language of the figures' texts.
    pub lang: Lang,
    /// The room the page has for a figure, in CSS px (none: each figure's own width): figures
    /// are drawn for it rather than scaled down, so that their labels keep their size.
    pub figure_width: Option<u32>,
}

impl Default for MultiDraftParams {
    /// The slide example: LLM uniform over 4 tokens, SSM 1 always t1, SSM 2 uniform and drew t2.
    fn default() -> Self {
        MultiDraftParams {
            p: "0.25,0.25,0.25,0.25".into(),
            drafts: "1,0,0,0; 0.25,0.25,0.25,0.25".into(),
            given: "1,2".into(),
            k: 2,
            toy: ToyConfig::default(),
            lang: Lang::En,
            figure_width: None,
        }
    }
}

/// The same position verified both ways.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Comparison {
    pub naive: Verdict,
    pub mss: Verdict,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ChildrenRow {
    /// The sampler's name (`Children::name`) and its label in the view's language.
    pub children: &'static str,
    pub label: &'static str,
    /// Mean and worst TV of MSS's output to p over the toy's 25 contexts.
    pub tv_mean: f64,
    pub tv_max: f64,
    pub mss_acceptance: f64,
    pub naive_acceptance: f64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct MultiDraftView {
    pub p: Dist,
    pub given: Option<Comparison>,
    pub averaged: Comparison,
    pub children: Vec<ChildrenRow>,
    pub svg: String,
    pub svg_children: String,
}

/// Enumeration visits Π |supp q_j| draws; beyond this the page would stall.
const MAX_DRAWS: usize = 200_000;

pub fn multi_draft_view(params: &MultiDraftParams) -> Result<MultiDraftView, Error> {
    let p = parse_dist("p", &params.p)?;
    let qs = parse_drafts(&params.drafts, p.len())?;
    let given = parse_given(&params.given, &qs)?;
    K.check(f64::from(params.k))?;
    let lm = ToyLm::new(&params.toy.validate()?);
    let given = given.map(|xs| {
        let cands: Vec<(usize, &[f64])> = xs
            .iter()
            .zip(&qs)
            .map(|(&x, q)| (x, q.as_slice()))
            .collect();
        Comparison {
            naive: verify_given(&p, &cands, Mode::Naive),
            mss: verify_given(&p, &cands, Mode::Mss),
        }
    });
    let averaged = Comparison {
        naive: verify_exact(&p, &qs, Mode::Naive),
        mss: verify_exact(&p, &qs, Mode::Mss),
    };
    let w = figure_width(560, params.figure_width);
    let (children, svg_children) = children_panel(&params.toy, &lm, params.k, params.lang, w);
    Ok(MultiDraftView {
        svg: comparison_chart(&p, given.as_ref(), &averaged, params.lang, w),
        svg_children,
        p,
        given,
        averaged,
        children,
    })
}

/// Parses `q1; q2; …` (full-width separators too), each a distribution over the same tokens as p.
pub fn parse_drafts(text: &str, len: usize) -> Result<Vec<Dist>, Error> {
    let bad = |en: String, zh: String| Error::Parse {
        what: "drafts",
        text: text.to_string(),
        why: Text::new(en, zh),
    };
    let qs = crate::sampling::half_width(text)
        .split(';')
        .map(|q| parse_dist("draft", q))
        .collect::<Result<Vec<_>, _>>()?;
    if qs.is_empty() || qs.len() > 8 {
        return Err(bad(
            format!("needs 1 to 8 drafts, got {}", qs.len()),
            format!("需要 1 到 8 个草稿分布，给了 {} 个", qs.len()),
        ));
    }
    if let Some((j, q)) = qs.iter().enumerate().find(|(_, q)| q.len() != len) {
        return Err(bad(
            format!("draft {} has {} entries but p has {len}", j + 1, q.len()),
            format!("草稿分布 {} 有 {} 项，而 p 有 {len} 项", j + 1, q.len()),
        ));
    }
    // In u64 and saturating: a usize product wraps on wasm32 (16⁸ = 2³² ≡ 0).
    let draws: u64 = qs
        .iter()
        .map(|q| q.iter().filter(|&&x| x > 0.0).count() as u64)
        .fold(1, u64::saturating_mul);
    if draws > MAX_DRAWS as u64 {
        return Err(bad(
            format!("{draws} combinations of draws to enumerate (at most {MAX_DRAWS})"),
            format!("要枚举 {draws} 种抽取组合（最多 {MAX_DRAWS} 种）"),
        ));
    }
    Ok(qs)
}

/// Parses the drawn tokens: empty means none given; otherwise one per draft, each possible.
/// Tokens are numbered from 1, as the lecture numbers them (t1 … tn, "SSM 1 always gives t1"),
/// and may be written `2` or `t2`; the indices returned are 0-based.
pub fn parse_given(text: &str, qs: &[Dist]) -> Result<Option<Vec<usize>>, Error> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let bad = |en: String, zh: String| Error::Parse {
        what: "given tokens",
        text: text.to_string(),
        why: Text::new(en, zh),
    };
    let n = qs.first().map_or(0, Vec::len);
    let xs = crate::sampling::half_width(text)
        .split(',')
        .map(|t| {
            let t = t.trim();
            let digits = t.strip_prefix(['t', 'T']).unwrap_or(t);
            match digits.parse::<usize>() {
                Ok(x) if (1..=n).contains(&x) => Ok(x - 1),
                Ok(x) => Err(bad(
                    format!("token {x} is outside 1…{n}: tokens are numbered from 1, as in the lecture (t1 … t{n})"),
                    format!("token {x} 不在 1…{n} 之内：token 按课上的习惯从 1 编号（t1 … t{n}）"),
                )),
                // The part quoted unless it is the whole text, which the message quotes already.
                Err(_) if t == text.trim() => Err(bad(
                    format!("not a token number (t1 … t{n}, or 1 … {n})"),
                    format!("不是 token 编号（t1 … t{n}，或 1 … {n}）"),
                )),
                Err(_) => Err(bad(
                    format!("{:?} is not a token number (t1 … t{n}, or 1 … {n})", shown(t)),
                    format!("{:?} 不是 token 编号（t1 … t{n}，或 1 … {n}）", shown(t)),
                )),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    if xs.len() != qs.len() {
        return Err(bad(
            format!("{} tokens for {} drafts", xs.len(), qs.len()),
            format!("{} 个 token 对应 {} 个草稿分布", xs.len(), qs.len()),
        ));
    }
    for (j, (&x, q)) in xs.iter().zip(qs).enumerate() {
        if q[x] <= 0.0 {
            return Err(bad(
                format!(
                    "draft {} gives t{} probability 0, so it cannot have drawn it",
                    j + 1,
                    x + 1
                ),
                format!("草稿分布 {} 给 t{} 的概率为 0，不可能抽到它", j + 1, x + 1),
            ));
        }
    }
    Ok(Some(xs))
}

/// Toy-LM panels kept: the rows depend only on the toy and k, and enumerating them takes longer
/// than a frame at k ≥ 3, so moving the other controls, or k back and forth, reuses them; the
/// chart is drawn afresh for the figure's width (a phone turned).
const PANELS_KEPT: usize = 8;

type Panel = (Vec<ChildrenRow>, String);

/// The rows kept for a toy, k and language.
type Kept = (ToyConfig, u32, Lang, Vec<ChildrenRow>);

thread_local! {
    static PANELS: std::cell::RefCell<Vec<Kept>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The children rows for the toy and k, from the last [`PANELS_KEPT`] kept, and their chart.
fn children_panel(toy: &ToyConfig, lm: &ToyLm, k: u32, l: Lang, w: u32) -> Panel {
    let rows = PANELS.with(|panels| {
        let mut panels = panels.borrow_mut();
        let found = panels
            .iter()
            .position(|(t, kk, ll, _)| t == toy && *kk == k && *ll == l);
        let entry = match found {
            Some(i) => panels.remove(i),
            None => (*toy, k, l, children_rows(lm, k as usize, l)),
        };
        let rows = entry.3.clone();
        panels.push(entry);
        if panels.len() > PANELS_KEPT {
            panels.remove(0);
        }
        rows
    });
    let svg = children_chart(&rows, k, l, w);
    (rows, svg)
}

fn children_rows(lm: &ToyLm, k: usize, l: Lang) -> Vec<ChildrenRow> {
    let contexts: Vec<[usize; 2]> = (0..VOCAB * VOCAB).map(|i| [i / VOCAB, i % VOCAB]).collect();
    let n = contexts.len() as f64;
    Children::ALL
        .into_iter()
        .map(|c| {
            let (mut tv_sum, mut tv_max, mut mss, mut naive) = (0.0, 0.0f64, 0.0, 0.0);
            for ctx in &contexts {
                let (p, q) = (lm.p(ctx), lm.q(ctx));
                let m = children_exact(p, q, k, c, Mode::Mss);
                let t = tv(&m.output, p);
                tv_sum += t;
                tv_max = tv_max.max(t);
                mss += m.acceptance;
                naive += children_exact(p, q, k, c, Mode::Naive).acceptance;
            }
            ChildrenRow {
                children: c.name(),
                label: c.label(l),
                tv_mean: tv_sum / n,
                tv_max,
                mss_acceptance: mss / n,
                naive_acceptance: naive / n,
            }
        })
        .collect()
}

fn comparison_chart(
    p: &[f64],
    given: Option<&Comparison>,
    averaged: &Comparison,
    l: Lang,
    w: u32,
) -> String {
    let mut bars: Vec<(String, f64, plotters::style::RGBColor)> = Vec::new();
    let (naive, given_, avg) = (
        l.pick("naive", "朴素"),
        l.pick("given", "给定"),
        l.pick("averaged", "平均"),
    );
    if let Some(g) = given {
        bars.push((
            format!("{naive}\n{given_}"),
            g.naive.acceptance,
            colors::PURPLE,
        ));
        bars.push((format!("MSS\n{given_}"), g.mss.acceptance, colors::TEAL));
    }
    bars.push((
        format!("{naive}\n{avg}"),
        averaged.naive.acceptance,
        colors::PURPLE,
    ));
    bars.push((format!("MSS\n{avg}"), averaged.mss.acceptance, colors::TEAL));
    let output = given.map_or(&averaged.mss.output, |g| &g.mss.output);
    let label = l.pick(
        "Acceptance of naive sampling and multi-step speculative sampling, and MSS output against p",
        "朴素采样与多步推测采样（MSS）的接受概率，以及 MSS 的输出与 p 的对比",
    );
    // Side by side where the two titles fit over their halves (the first plot wide enough for
    // "averaged" under its bars); on a phone one above the other, each the figure's width (side
    // by side, the first title ran over the second).
    let stacked = w < 520;
    let wi = w as i32;
    render(w, if stacked { 490 } else { 300 }, label, |cv| {
        let labels = Labels {
            title: l.pick("P(a draft token is accepted)", "P（某个草稿 token 被接受）"),
            x: "",
            y: l.pick("probability", "概率"),
        };
        let ch = Chart::new(
            cv,
            (
                60,
                40,
                if stacked { wi - 20 } else { wi / 2 + 20 },
                if stacked { 200 } else { 230 },
            ),
            Scale::categories(bars.len()),
            Scale::linear(0.0, 1.05),
            &labels,
        );
        for (i, (_, v, color)) in bars.iter().enumerate() {
            let x = i as f64;
            ch.bar(x + 0.15, x + 0.85, *v, *color);
            ch.note(
                x + 0.5,
                *v,
                &format!("{:.2}%", v * 100.0),
                colors::INK,
                Align::Middle,
            );
        }
        let below = ch.categories(&bars.iter().map(|b| b.0.as_str()).collect::<Vec<_>>());
        let top = p.iter().chain(output).fold(0.0f64, |a, &b| a.max(b)) * 1.15;
        let title = match given {
            Some(_) => l.pick("MSS output | given vs p", "MSS 输出 | 给定，对比 p"),
            None => l.pick("MSS output vs p", "MSS 输出，对比 p"),
        };
        let labels = Labels {
            title,
            x: "",
            y: "",
        };
        let rect = if stacked {
            (60, below + 50, wi - 20, below + 200)
        } else {
            (wi / 2 + 60, 40, wi - 20, 230)
        };
        let ch = Chart::new(
            cv,
            rect,
            Scale::categories(p.len()),
            Scale::linear(0.0, top.max(0.01)),
            &labels,
        );
        for (i, (&pi, &oi)) in p.iter().zip(output).enumerate() {
            let x = i as f64;
            ch.bar(x + 0.1, x + 0.48, pi, colors::BLUE);
            ch.bar(x + 0.52, x + 0.9, oi, colors::TEAL);
        }
        let mut under = rect.3;
        if p.len() <= 12 {
            // t1 … tn, as the lecture, the introduction and the drawn tokens number them.
            let names: Vec<String> = (1..=p.len()).map(|i| format!("t{i}")).collect();
            under = ch.categories(&names.iter().map(String::as_str).collect::<Vec<_>>());
        }
        let legend_y = if stacked { under } else { under.max(below) } + 16;
        cv.legend(
            (rect.0, legend_y),
            &[
                ("p", colors::BLUE),
                (l.pick("MSS output", "MSS 输出"), colors::TEAL),
            ],
        );
    })
}

fn children_chart(rows: &[ChildrenRow], k: u32, l: Lang, w: u32) -> String {
    let label = l.pick(
        format!("Bias and acceptance of MSS on the toy LM with {k} children drawn three ways"),
        format!("玩具模型上用三种方式抽 {k} 个孩子时 MSS 的偏差和接受率"),
    );
    render(w, 280, &label, |cv| {
        let title = l.pick(
            format!("Toy LM, {k} children per node: MSS bias (TV) and acceptance"),
            format!("玩具模型，每个节点 {k} 个孩子：MSS 的偏差（TV）和接受率"),
        );
        let labels = Labels {
            title: &title,
            x: "",
            y: "",
        };
        let ch = Chart::new(
            cv,
            (60, 40, w as i32 - 20, 220),
            Scale::categories(rows.len()),
            Scale::linear(0.0, 1.05),
            &labels,
        );
        for (i, r) in rows.iter().enumerate() {
            let x = i as f64;
            ch.bar(x + 0.1, x + 0.35, r.tv_mean, colors::RED);
            ch.bar(x + 0.38, x + 0.63, r.mss_acceptance, colors::TEAL);
            ch.bar(x + 0.66, x + 0.9, r.naive_acceptance, colors::PURPLE);
            ch.note(
                x + 0.225,
                r.tv_mean,
                &format!("{:.3}", r.tv_mean),
                colors::RED,
                Align::Middle,
            );
        }
        let below = ch.categories(&rows.iter().map(|r| r.label).collect::<Vec<_>>());
        cv.legend(
            (70, (below + 16).max(270)),
            &[
                (
                    l.pick("mean TV(MSS output, p)", "平均 TV(MSS 输出, p)"),
                    colors::RED,
                ),
                (l.pick("MSS acceptance", "MSS 接受率"), colors::TEAL),
                (l.pick("naive acceptance", "朴素接受率"), colors::PURPLE),
            ],
        );
    })
}

#[cfg(test)]
pub(crate) mod tests;

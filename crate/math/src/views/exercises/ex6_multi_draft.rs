//! Exercise 6 of the lecture (§10, on §4.5): two drafts from two SSMs, and the probability that
//! some draft is accepted with naive sampling and with MSS.

use super::{check, close, Exercise};
use crate::i18n::Lang;
use crate::sampling::multi::{verify_given, Mode};
use crate::views::multidraft::parse_given;

/// The tokens the two SSMs drew, t2 and t3, as typed in the multi-draft widget (its Exercise 6
/// preset).
pub(super) const DRAWN: &str = "2,3";

pub(super) fn exercise(l: Lang) -> Exercise {
    let p = vec![0.25; 4];
    let qs = vec![vec![0.5, 0.5, 0.0, 0.0], vec![0.25; 4]];
    // "drew t2 … drew t3", read as the multi-draft widget reads its drawn tokens (numbered from
    // 1, as the lecture numbers them), so that the exercise and the widget's Exercise 6 preset
    // say the same thing.
    let drawn = parse_given(DRAWN, &qs)
        .expect("the exercise's draws are possible")
        .expect("the exercise gives its draws");
    let cands: Vec<(usize, &[f64])> = drawn
        .iter()
        .zip(&qs)
        .map(|(&x, q)| (x, q.as_slice()))
        .collect();
    let naive = verify_given(&p, &cands, Mode::Naive).acceptance;
    let mss = verify_given(&p, &cands, Mode::Mss).acceptance;
    let statement = l
        .pick(
            "The LLM is uniform over 4 tokens. SSM 1 is (0.5, 0.5, 0, 0) and drew t2; SSM 2 is \
             uniform and drew t3. What is the probability that some draft is accepted (1) with \
             naive sampling, (2) with MSS?",
            "LLM 的分布是 4 个 token 上的均匀分布。SSM 1 的分布是 (0.5, 0.5, 0, 0)，这一次采到 \
             t2；SSM 2 是均匀分布，这一次采到 t3。分别用（1）朴素采样和（2）MSS 算出“接受某个\
             草稿”的概率。",
        )
        .to_string();
    let checks = vec![
        check(
            l.pick("(1) naive sampling", "（1）朴素采样"),
            close(
                naive,
                0.005,
                l.pick(
                    "Naive sampling draws one token from the LLM and accepts if it is one of the \
                     drafted tokens.",
                    "朴素采样从 LLM 抽一个 token，如果它是某个草稿的 token 就接受。",
                ),
                l,
            ),
        ),
        check(
            l.pick("(2) MSS", "（2）MSS"),
            close(
                mss,
                0.005,
                l.pick(
                    "MSS tries t2 with min(1, p/q₁), and after a rejection tries t3 against the \
                     residual norm(max(0, p − q₁)) with min(1, r/q₂).",
                    "MSS 先以 min(1, p/q₁) 试 t2，被拒绝后再对剩余分布 norm(max(0, p − q₁)) 以 \
                     min(1, r/q₂) 试 t3。",
                ),
                l,
            ),
        ),
    ];
    let solution = l.pick(
        format!(
            "Naive: the LLM lands on t2 or t3 with probability {naive:.2}. MSS: t2 is accepted \
             with min(1, 0.25/0.5) = 0.5; the residual is (0, 0, 0.5, 0.5), against which t3 \
             passes with min(1, 0.5/0.25) = 1: in all {mss:.2}."
        ),
        format!(
            "朴素采样：LLM 落在 t2 或 t3 的概率是 {naive:.2}。MSS：t2 以 min(1, 0.25/0.5) = 0.5 \
             被接受；拒绝后剩余分布是 (0, 0, 0.5, 0.5)，再以 min(1, 0.5/0.25) = 1 接受 t3：\
             合计 {mss:.2}。"
        ),
    );
    (statement, checks, solution)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::multidraft::tests::token_labels;
    use crate::views::multidraft::{multi_draft_view, MultiDraftParams};

    /// The statement, the solution and the multi-draft widget count tokens alike (from 1, as the
    /// lecture): the tokens the statement says were drawn are the widget's drawn tokens, which
    /// give the exercise's answers, and the chart's axis names them so.
    #[test]
    fn the_statement_and_the_widget_number_tokens_alike() {
        for l in [Lang::En, Lang::Zh] {
            let (statement, _, solution) = exercise(l);
            let named: Vec<&str> = statement
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| w.len() == 2 && w.starts_with('t'))
                .collect();
            assert!(solution.contains("t2") && solution.contains("t3") && !solution.contains("t0"));
            let typed: Vec<String> = DRAWN.split(',').map(|x| format!("t{x}")).collect();
            assert_eq!(
                named, typed,
                "the statement's draws as the widget types them"
            );
            let v = multi_draft_view(&MultiDraftParams {
                drafts: "0.5,0.5,0,0; 0.25,0.25,0.25,0.25".into(),
                given: DRAWN.into(),
                lang: l,
                ..MultiDraftParams::default()
            })
            .unwrap();
            let g = v.given.unwrap();
            assert_eq!((g.naive.acceptance, g.mss.acceptance), (0.5, 1.0));
            assert_eq!(token_labels(&v.svg), ["t1", "t2", "t3", "t4"]);
        }
    }
}

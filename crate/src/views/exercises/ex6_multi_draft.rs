//! Exercise 6 of the lecture (§10, on §4.5): two drafts from two SSMs, and the probability that
//! some draft is accepted with naive sampling and with MSS.

use super::{check, close, Exercise};
use crate::i18n::Lang;
use crate::sampling::multi::{verify_given, Mode};

pub(super) fn exercise(l: Lang) -> Exercise {
    let p = vec![0.25; 4];
    let q1 = vec![0.5, 0.5, 0.0, 0.0];
    let q2 = vec![0.25; 4];
    // t2 and t3 of the lecture are tokens 1 and 2 here (numbered from 0).
    let cands: Vec<(usize, &[f64])> = vec![(1, q1.as_slice()), (2, q2.as_slice())];
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

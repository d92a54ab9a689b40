//! Exercise 7 of the lecture (§10): why taking the draft's most likely token deterministically
//! and then accepting with min(1, p/q) is biased, answered by a two-token counterexample.

use super::{check, distribution, Exercise};
use crate::i18n::Lang;
use crate::sampling::rule::single_position;
use crate::sampling::speculative::Variant;
use crate::sampling::tv;

pub(super) fn exercise(l: Lang) -> Exercise {
    let statement = l
        .pick(
            "Why is it biased to take the draft's most likely token deterministically, accept \
             it with min(1, p/q) and on rejection sample from norm(max(0, p − q))? Give a \
             two-token counterexample: p and q for which the output is not p.",
            "为什么“确定地取草稿概率最大的 1 个 token，再以 min(1, p/q) 接受、拒绝后从 \
             norm(max(0, p − q)) 采样”是有偏的？举一个两 token 的反例：输出不是 p 的 p 和 q。",
        )
        .to_string();
    let checks = vec![check(
        l.pick(
            "a counterexample: p; q (two probabilities each, e.g. 0.3, 0.7; 1, 0)",
            "反例：p; q（各两个概率，例如 0.3, 0.7; 1, 0）",
        ),
        move |text| {
            let (p, q) = text.split_once([';', '；']).ok_or(l.pick(
                "Type p, then a semicolon, then q: e.g. 0.3, 0.7; 1, 0.",
                "先输入 p，再输入分号，再输入 q：例如 0.3, 0.7; 1, 0。",
            ))?;
            let (p, q) = (distribution(p, 2, l)?, distribution(q, 2, l)?);
            let out = single_position(&p, &q, Variant::ArgmaxDraft).output;
            let d = tv(&out, &p);
            let (o0, o1) = (out[0], out[1]);
            Ok(if d > 1e-9 {
                Ok(())
            } else {
                Err(l.pick(
                    format!(
                        "With these, the output is ({o0:.3}, {o1:.3}) = p: not a \
                         counterexample. Where does the proof of exactness use that the draft \
                         is a sample from q?"
                    ),
                    format!(
                        "用这组数，输出是 ({o0:.3}, {o1:.3}) = p：不是反例。精确性的证明在哪里\
                         用到了草稿是从 q 采的样？"
                    ),
                ))
            })
        },
    )];
    let (p, q) = ([0.5, 0.5], [0.6, 0.4]);
    let out = single_position(&p, &q, Variant::ArgmaxDraft).output;
    let (o0, o1) = (out[0], out[1]);
    let solution = l.pick(
        format!(
            "For example p = (0.5, 0.5), q = (0.6, 0.4): the draft is always token 0, accepted \
             with 0.5/0.6; the residual is (0, 1), so the output is ({o0:.3}, {o1:.3}) ≠ p. The \
             proof needs P(draft = x) = q(x), so that the accepted mass is min(p, q); a \
             deterministic draft accepts min(1, p/q) instead. Fix: sample the draft from q \
             (take the argmax only with greedy verification), or, with several candidates, \
             sample without replacement and renormalise q after each."
        ),
        format!(
            "例如 p = (0.5, 0.5)，q = (0.6, 0.4)：草稿总是 token 0，以 0.5/0.6 被接受；剩余分布是 \
             (0, 1)，所以输出是 ({o0:.3}, {o1:.3}) ≠ p。证明需要 P(草稿 = x) = q(x)，这样被\
             接受的质量才是 min(p, q)；确定的草稿接受的却是 min(1, p/q)。改法：从 q 采样草稿\
             （只有贪心验证时才取 argmax），或者有多个候选时做无放回采样，每取一个就把 q \
             重新归一化。"
        ),
    );
    (statement, checks, solution)
}

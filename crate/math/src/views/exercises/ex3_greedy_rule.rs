//! Exercise 3 of the lecture (§10): the output distribution of correct speculative sampling
//! and of sampling with the greedy rule, for p = (0.6, 0.4) and q = (0.5, 0.5).

use super::{check, distribution, Exercise};
use crate::i18n::Lang;
use crate::sampling::rule::single_position;
use crate::sampling::speculative::Variant;
use crate::sampling::tv;

pub(super) fn exercise(l: Lang) -> Exercise {
    let (p, q) = (vec![0.6, 0.4], vec![0.5, 0.5]);
    let correct = single_position(&p, &q, Variant::Correct);
    let greedy = single_position(&p, &q, Variant::GreedyRule);
    let statement = l
        .pick(
            "p = (0.6, 0.4), q = (0.5, 0.5). Give the output distribution (1) of correct \
             speculative sampling and (2) of sampling with the greedy rule (accept the draft \
             only if it is argmax p, otherwise sample from p). Type two probabilities, e.g. \
             0.3, 0.7.",
            "p = (0.6, 0.4)，q = (0.5, 0.5)。分别求（1）正确的推测采样、以及（2）“随机采样时\
             用贪心规则”（草稿等于 argmax p 才接受，否则从 p 采样）的输出分布。输入两个概率，\
             例如 0.3, 0.7。",
        )
        .to_string();
    let dist_check = move |truth: Vec<f64>, hint: &'static str| {
        move |text: &str| {
            let d = distribution(text, 2, l)?;
            Ok(if tv(&d, &truth) <= 0.005 {
                Ok(())
            } else {
                Err(hint.to_string())
            })
        }
    };
    let checks = vec![
        check(
            l.pick("(1) correct speculative sampling", "（1）正确的推测采样"),
            dist_check(
                correct.output.clone(),
                l.pick(
                    "Not that. A drafted x is accepted with mass q(x)·min(1, p(x)/q(x)) = \
                     min(p, q); the rejected mass is then spread by norm(max(0, p − q)). Add \
                     the two.",
                    "不对。草稿 x 被接受的概率质量是 q(x)·min(1, p(x)/q(x)) = min(p, q)；\
                     被拒绝的质量再按 norm(max(0, p − q)) 分配。把两部分加起来。",
                ),
            ),
        ),
        check(
            l.pick("(2) the greedy rule", "（2）贪心规则"),
            dist_check(
                greedy.output.clone(),
                l.pick(
                    "Not that. The draft is token 0 (= argmax p) half the time and is then \
                     output as is; the other half, the output is a sample from p.",
                    "不对。草稿有一半的时候是 token 0（= argmax p），这时原样输出；另一半时候，\
                     输出是从 p 采的样。",
                ),
            ),
        ),
    ];
    let (a, rest, o0, o1, g0, g1, d) = (
        correct.acceptance,
        1.0 - correct.acceptance,
        correct.output[0],
        correct.output[1],
        greedy.output[0],
        greedy.output[1],
        tv(&greedy.output, &p),
    );
    let solution = l.pick(
        format!(
            "Correct: min(p, q) = (0.5, 0.4), α = {a:.2}; the residual norm(max(0, p − q)) = \
             (1, 0) takes the remaining {rest:.2}, so the output is ({o0:.2}, {o1:.2}) = p. \
             Greedy rule: ({g0:.2}, {g1:.2}) ≠ p, pushed towards the argmax (TV {d:.2})."
        ),
        format!(
            "正确的规则：min(p, q) = (0.5, 0.4)，α = {a:.2}；剩余分布 norm(max(0, p − q)) = (1, 0) \
             承担剩下的 {rest:.2}，所以输出是 ({o0:.2}, {o1:.2}) = p。贪心规则：\
             ({g0:.2}, {g1:.2}) ≠ p，被推向 argmax（TV {d:.2}）。"
        ),
    );
    (statement, checks, solution)
}

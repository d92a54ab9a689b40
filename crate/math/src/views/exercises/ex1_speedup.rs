//! Exercise 1 of the lecture (§10, on §2.5): for α, γ, c and ĉ, the tokens one step yields,
//! the wall-clock speedup and the factor by which the total computation grows.

use super::{check, close, Exercise};
use crate::i18n::Lang;
use crate::theory;

pub(super) fn exercise(l: Lang) -> Exercise {
    let (alpha, gamma, c, c_hat) = (0.75, 4, 0.05, 0.02);
    let e = theory::expected_tokens(alpha, gamma);
    let s = theory::speedup(alpha, gamma, c);
    let ops = theory::operations(alpha, gamma, c_hat);
    let statement = l.pick(
        format!(
            "α = {alpha}, γ = {gamma}. (1) How many tokens does one step yield on average? (2) \
             With c = {c}, what is the wall-clock speedup? (3) With ĉ = {c_hat}, by what factor \
             does the total computation grow? (Two decimals are enough.)"
        ),
        format!(
            "α = {alpha}，γ = {gamma}。（1）每步平均产生多少 token？（2）c = {c} 时墙钟加速比是\
             多少？（3）ĉ = {c_hat} 时总运算量变成多少倍？（保留两位小数即可。）"
        ),
    );
    let checks = vec![
        check(
            l.pick("(1) E, tokens per step", "（1）E，每步的 token 数"),
            close(
                e,
                0.01,
                l.pick(
                    "The first i drafts all pass with probability α^i, and a step always yields \
                     at least one token: E = Σ_{i=0}^{γ} α^i = (1 − α^{γ+1})/(1 − α).",
                    "前 i 个草稿全部通过的概率是 α^i，而每步至少产生一个 token：\
                     E = Σ_{i=0}^{γ} α^i = (1 − α^{γ+1})/(1 − α)。",
                ),
                l,
            ),
        ),
        check(
            l.pick("(2) speedup", "（2）加速比"),
            close(
                s,
                0.01,
                l.pick(
                    "A step costs γ draft calls and one target call, γc + 1 in units of a target \
                     call, and yields E tokens.",
                    "一步要 γ 次草稿调用和一次目标模型调用，以目标模型调用为单位是 γc + 1，\
                     产生 E 个 token。",
                ),
                l,
            ),
        ),
        check(
            l.pick("(3) operations factor", "（3）运算量倍数"),
            close(
                ops,
                0.01,
                l.pick(
                    "A step runs γ draft calls (ĉ each, in target-call operations) and scores \
                     γ + 1 tokens in the target, for E tokens.",
                    "一步运行 γ 次草稿调用（每次 ĉ，以目标模型调用的运算量为单位），目标模型\
                     算 γ + 1 个 token，换来 E 个 token。",
                ),
                l,
            ),
        ),
    ];
    let (gp1, cost, work) = (
        gamma + 1,
        f64::from(gamma) * c + 1.0,
        f64::from(gamma) * c_hat + f64::from(gamma) + 1.0,
    );
    let solution = l.pick(
        format!(
            "E = (1 − {alpha}^{gp1})/(1 − {alpha}) = {e:.4}; speedup = E/(γc + 1) = \
             {e:.4}/{cost:.2} = {s:.4}×; operations = (γĉ + γ + 1)/E = {work:.2}/{e:.4} = \
             {ops:.4}×: speculation spends more computation to save time."
        ),
        format!(
            "E = (1 − {alpha}^{gp1})/(1 − {alpha}) = {e:.4}；加速比 = E/(γc + 1) = \
             {e:.4}/{cost:.2} = {s:.4}×；运算量 = (γĉ + γ + 1)/E = {work:.2}/{e:.4} = \
             {ops:.4}×：推测解码多花运算来省时间。"
        ),
    );
    (statement, checks, solution)
}

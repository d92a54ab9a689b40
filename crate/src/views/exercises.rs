//! The lecture's exercises 1, 3, 4, 5, 6 and 7 (§10) as checks: the student's answers in, a
//! verdict per part out. The truth is computed here with the same core code the widgets use
//! (theory, exact sampling, roofline, token trees, multi-draft verification), never stored; a
//! wrong answer gets a hint that says what to compute, not the number, and the worked solution
//! is shown only once every part is right. Every text in English or Chinese (the lecture's).

use crate::error::{Error, Text};
use crate::i18n::Lang;
use crate::roofline::{self, Bound, Workload};
use crate::sampling::multi::{verify_given, Mode};
use crate::sampling::speculative::{single_position, Variant};
use crate::sampling::tv;
use crate::theory;
use crate::tree::TokenTree;

#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default)]
pub struct ExerciseParams {
    /// 1, 3, 4, 5, 6 or 7.
    pub exercise: u32,
    /// The student's answer to each part, as typed (empty: not answered yet).
    pub answers: Vec<String>,
    /// The language of the statement, the questions, the feedback and the solution.
    pub lang: Lang,
}

impl Default for ExerciseParams {
    fn default() -> Self {
        ExerciseParams {
            exercise: 1,
            answers: Vec::new(),
            lang: Lang::En,
        }
    }
}

/// The exercises there are checks for.
pub const EXERCISES: [u32; 6] = [1, 3, 4, 5, 6, 7];

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Nothing typed yet.
    Empty,
    /// Typed, but not in the form asked for (the feedback says which form).
    Unreadable,
    Wrong,
    Right,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Part {
    /// What the part asks, and in what form to answer.
    pub question: String,
    pub verdict: Verdict,
    /// For a wrong or unreadable answer: what is off and what to compute. Never the answer.
    pub feedback: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ExerciseView {
    pub exercise: u32,
    pub statement: String,
    pub parts: Vec<Part>,
    pub solved: bool,
    /// The worked solution, with the numbers from the core: only when every part is right.
    pub solution: Option<String>,
}

/// A judged answer: `Ok(Ok(()))` right, `Ok(Err(hint))` wrong, `Err(form)` not in the form asked.
type Judged = Result<Result<(), String>, String>;

/// How a part is checked against the truth.
struct Check {
    question: String,
    judge: Box<dyn Fn(&str) -> Judged>,
}

pub fn exercise_view(params: &ExerciseParams) -> Result<ExerciseView, Error> {
    let l = params.lang;
    let (statement, checks, solution) = match params.exercise {
        1 => exercise_1(l),
        3 => exercise_3(l),
        4 => exercise_4(l)?,
        5 => exercise_5(l),
        6 => exercise_6(l),
        7 => exercise_7(l),
        n => {
            return Err(Error::Unknown {
                what: "exercise",
                name: n.to_string(),
                known: "1, 3, 4, 5, 6, 7 (2 is a proof, 8 open-ended)".into(),
            })
        }
    };
    if params.answers.len() > checks.len() {
        return Err(Error::Parse {
            what: "answers",
            text: format!("{} answers", params.answers.len()),
            why: Text::new(
                format!("exercise {} has {} parts", params.exercise, checks.len()),
                format!("练习 {} 只有 {} 个小题", params.exercise, checks.len()),
            ),
        });
    }
    let parts: Vec<Part> = checks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let answer = params.answers.get(i).map(|a| a.trim()).unwrap_or("");
            let (verdict, feedback) = if answer.is_empty() {
                (Verdict::Empty, String::new())
            } else if answer.len() > 500 {
                let long = l.pick("That answer is too long.", "这个答案太长了。");
                (Verdict::Unreadable, long.to_string())
            } else {
                match (c.judge)(answer) {
                    Ok(Ok(())) => (Verdict::Right, String::new()),
                    Ok(Err(hint)) => (Verdict::Wrong, hint),
                    Err(form) => (Verdict::Unreadable, form),
                }
            };
            Part {
                question: c.question.clone(),
                verdict,
                feedback,
            }
        })
        .collect();
    let solved = parts.iter().all(|p| p.verdict == Verdict::Right);
    Ok(ExerciseView {
        exercise: params.exercise,
        statement,
        parts,
        solved,
        solution: solved.then_some(solution),
    })
}

type Exercise = (String, Vec<Check>, String);

fn check(question: &str, judge: impl Fn(&str) -> Judged + 'static) -> Check {
    Check {
        question: question.to_string(),
        judge: Box::new(judge),
    }
}

fn number(text: &str, l: Lang) -> Result<f64, String> {
    let t = text.trim().trim_end_matches(['×', 'x']).trim();
    t.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| {
            l.pick(
                format!("“{}” is not a number: type one such as 2.5.", clip(text)),
                format!("“{}” 不是数：请输入像 2.5 这样的数。", clip(text)),
            )
        })
}

fn clip(text: &str) -> String {
    text.chars().take(40).collect()
}

/// A number checked to within `tolerance` of `truth`; the hint says higher or lower.
fn close(truth: f64, tolerance: f64, hint: &'static str, l: Lang) -> impl Fn(&str) -> Judged {
    move |text| {
        let x = number(text, l)?;
        Ok(if (x - truth).abs() <= tolerance {
            Ok(())
        } else {
            Err(match (l, x > truth) {
                (Lang::En, true) => format!("{x} is too high. {hint}"),
                (Lang::En, false) => format!("{x} is too low. {hint}"),
                (Lang::Zh, true) => format!("{x} 偏大。{hint}"),
                (Lang::Zh, false) => format!("{x} 偏小。{hint}"),
            })
        })
    }
}

/// A distribution over `n` tokens, typed as numbers separated by commas.
fn distribution(text: &str, n: usize, l: Lang) -> Result<Vec<f64>, String> {
    let xs: Vec<f64> = text
        .split([',', '，', ' ', '(', ')', '（', '）'])
        .filter(|s| !s.is_empty())
        .map(|t| number(t, l))
        .collect::<Result<_, _>>()?;
    if xs.len() != n {
        return Err(l.pick(
            format!(
                "Type {n} probabilities separated by commas, one per token; got {}.",
                xs.len()
            ),
            format!(
                "请输入 {n} 个用逗号分隔的概率，每个 token 一个；这里有 {} 个。",
                xs.len()
            ),
        ));
    }
    if xs.iter().any(|&x| x < 0.0) || (xs.iter().sum::<f64>() - 1.0).abs() > 1e-3 {
        return Err(l
            .pick(
                "Probabilities are ≥ 0 and sum to 1.",
                "概率都 ≥ 0，且加起来等于 1。",
            )
            .to_string());
    }
    Ok(xs)
}

fn exercise_1(l: Lang) -> Exercise {
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

fn exercise_3(l: Lang) -> Exercise {
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
            "正确的规则：min(p, q) = (0.5, 0.4)，α = {a:.2}；残差 norm(max(0, p − q)) = (1, 0) \
             承担剩下的 {rest:.2}，所以输出是 ({o0:.2}, {o1:.2}) = p。贪心规则：\
             ({g0:.2}, {g1:.2}) ≠ p，被推向 argmax（TV {d:.2}）。"
        ),
    );
    (statement, checks, solution)
}

fn exercise_4(l: Lang) -> Result<Exercise, Error> {
    let gpu = roofline::gpu("a100-40gb")?;
    let model = roofline::model("opt-13b")?;
    let (batch, context) = (32, 512);
    let at = |k| -> Result<roofline::Step, Error> {
        Ok(roofline::step(
            &gpu,
            &model,
            &Workload::new(batch, context, k, 0.0)?,
        ))
    };
    let one = at(1)?;
    let mut last_memory = 1;
    for k in 1..=64 {
        if at(k)?.bound == Bound::Memory {
            last_memory = k;
        }
    }
    let (intensity, knee) = (one.intensity, gpu.knee());
    let statement = l.pick(
        format!(
            "{} on {}, batch {batch}, context {context}: plain decoding has an arithmetic \
             intensity of about {intensity:.1} FLOP/byte; the GPU's knee is about {knee:.0}. At \
             most how many tokens k can each request verify per step while the step stays \
             memory-bound? (A whole number.)",
            model.label, gpu.label,
        ),
        format!(
            "{} 在 {} 上，批 {batch}、上下文 {context} 时普通解码的算术强度约 {intensity:.1} \
             FLOPs / 字节，GPU 的拐点约 {knee:.0}。每个请求每步最多验证几个 token（k）还保持\
             访存受限？（一个整数。）",
            model.label, gpu.label,
        ),
    );
    let judge = move |text: &str| -> Judged {
        let x = number(text, l)?;
        if x.fract() != 0.0 || !(1.0..=1024.0).contains(&x) {
            return Err(l
                .pick(
                    "Type a whole number of tokens from 1 to 1024.",
                    "请输入 1 到 1024 之间的整数个 token。",
                )
                .to_string());
        }
        let k = x as u32;
        if k == last_memory {
            return Ok(Ok(()));
        }
        let s = roofline::step(
            &gpu,
            &model,
            &Workload::new(batch, context, k, 0.0).expect("1 ≤ k ≤ 1024 was checked above"),
        );
        let i = s.intensity;
        Ok(Err(match s.bound {
            Bound::Compute => l.pick(
                format!(
                    "At k = {k} the intensity is {i:.1} FLOP/byte, past the knee: the step is \
                     already compute-bound. Processing k tokens multiplies the FLOPs by about k \
                     while the bytes read barely change."
                ),
                format!(
                    "k = {k} 时算术强度是 {i:.1} FLOPs / 字节，已经过了拐点：这一步已经是\
                     算力受限。处理 k 个 token 让运算量大约变成 k 倍，而读的字节数几乎不变。"
                ),
            ),
            Bound::Memory => l.pick(
                format!(
                    "At k = {k} the step is still memory-bound (intensity {i:.1}), so \
                     verification is still almost free: try a larger k."
                ),
                format!(
                    "k = {k} 时这一步仍然访存受限（算术强度 {i:.1}），验证几乎还是免费的：\
                     试试更大的 k。"
                ),
            ),
        }))
    };
    let below = at(last_memory)?;
    let above = at(last_memory + 1)?;
    let checks = vec![check(
        l.pick("largest k still memory-bound", "仍然访存受限的最大 k"),
        judge,
    )];
    let (ratio, next, gamma) = (
        knee / intensity,
        last_memory + 1,
        last_memory.saturating_sub(1).max(1),
    );
    let (bt, bi, at_, ai) = (
        below.time_ms,
        below.intensity,
        above.time_ms,
        above.intensity,
    );
    let solution = l.pick(
        format!(
            "The intensity grows about k-fold: {intensity:.1}·k < {knee:.0} gives k < \
             {ratio:.1}. In the roofline model, k = {last_memory} is still memory-bound \
             ({bt:.2} ms, intensity {bi:.1}) and k = {next} is compute-bound ({at_:.2} ms, \
             intensity {ai:.1}): at batch {batch}, γ of about {gamma} keeps verification nearly \
             free."
        ),
        format!(
            "算术强度大约随 k 成倍增长：{intensity:.1}·k < {knee:.0} 得 k < {ratio:.1}。在 \
             roofline 模型里，k = {last_memory} 仍然访存受限（{bt:.2} ms，算术强度 {bi:.1}），\
             k = {next} 则算力受限（{at_:.2} ms，算术强度 {ai:.1}）：批 {batch} 时，γ 取 \
             {gamma} 左右，验证几乎是免费的。"
        ),
    );
    Ok((statement, checks, solution))
}

fn exercise_5(l: Lang) -> Exercise {
    let paths: Vec<Vec<String>> = [
        vec!["a", "b", "c"],
        vec!["a", "b", "d", "e"],
        vec!["f", "g"],
    ]
    .iter()
    .map(|p| p.iter().map(|s| s.to_string()).collect())
    .collect();
    let tree = TokenTree::merge(&paths, "r");
    let order = tree.linearize_dfs();
    let names: Vec<String> = order
        .iter()
        .map(|&n| tree.nodes()[n].token.clone())
        .collect();
    let depths = tree.depths(&order);
    let e = tree
        .nodes()
        .iter()
        .position(|n| n.token == "e")
        .expect("e is in the tree");
    let sees: Vec<String> = order
        .iter()
        .filter(|&&n| n != 0 && tree.is_ancestor(n, e))
        .map(|&n| tree.nodes()[n].token.clone())
        .collect();
    let statement = l
        .pick(
            "Three drafts guess [a b c], [a b d e] and [f g] after the verified token r. (1) \
             How many speculated nodes has the merged tree? (2) Write its depth-first order, \
             each node with its position offset (depth), e.g. r0 x1 y2. (3) Which speculated \
             nodes may e attend to (besides the verified prefix)?",
            "三个小模型在已验证的 token r 之后分别猜出 [a b c]、[a b d e]、[f g]。（1）合并后\
             的令牌树有几个猜测节点？（2）写出深度优先的顺序和每个节点的位置偏移（深度），例如 \
             r0 x1 y2。（3）节点 e 在注意力里能看到哪些猜测节点（已验证的前缀之外）？",
        )
        .to_string();
    let count = tree.speculated();
    let sequences = tree.sequence_tokens();
    let want_order: Vec<(String, usize)> = names.iter().cloned().zip(depths.clone()).collect();
    let want_sees = sees.clone();
    let checks = vec![
        check(
            l.pick("(1) speculated nodes", "（1）猜测节点数"),
            move |text| {
                let x = number(text, l)?;
                Ok(if x == count as f64 {
                    Ok(())
                } else if x == sequences as f64 {
                    Err(l
                        .pick(
                            "That counts every sequence on its own; shared prefixes are one node.",
                            "这是把每条序列单独数了；共享的前缀只算一个节点。",
                        )
                        .into())
                } else {
                    Err(l
                        .pick(
                            "Merge equal prefixes into one node, then count the nodes below r.",
                            "把相同的前缀合并成一个节点，再数 r 下面的节点。",
                        )
                        .into())
                })
            },
        ),
        check(
            l.pick(
                "(2) depth-first order with depths",
                "（2）深度优先顺序和深度",
            ),
            move |text| {
                let got = parse_order(text, l)?;
                let want: Vec<(String, usize)> = if got.first().is_some_and(|(t, _)| t == "r") {
                    want_order.clone()
                } else {
                    want_order[1..].to_vec()
                };
                Ok(if got == want {
                    Ok(())
                } else if got.iter().map(|x| &x.0).eq(want.iter().map(|x| &x.0)) {
                    Err(l
                        .pick(
                            "The order is right; a node's offset is its depth below r (r is 0).",
                            "顺序对了；节点的偏移是它在 r 下面的深度（r 是 0）。",
                        )
                        .into())
                } else {
                    Err(l
                        .pick(
                            "Depth first: go down the first branch to its end, then back up to \
                             the nearest node with a child not yet visited; siblings in the \
                             drafts' order.",
                            "深度优先：沿第一个分支走到底，再退回到最近的还有未访问孩子的节点；\
                             兄弟节点按草稿的顺序。",
                        )
                        .into())
                })
            },
        ),
        check(
            l.pick("(3) what e sees", "（3）e 能看到什么"),
            move |text| {
                let mut got: Vec<String> = text
                    .split([',', '，', '、', ' '])
                    .filter(|s| !s.is_empty() && *s != "r")
                    .map(str::to_string)
                    .collect();
                if got.iter().any(|t| t.chars().count() != 1) {
                    return Err(l
                        .pick(
                            "Type node names separated by spaces, e.g. a b.",
                            "请输入用空格分隔的节点名，例如 a b。",
                        )
                        .into());
                }
                got.sort();
                got.dedup();
                let mut want = want_sees.clone();
                want.sort();
                Ok(if got == want {
                    Ok(())
                } else {
                    Err(l
                        .pick(
                            "A node sees exactly its ancestors and itself, whatever comes before \
                         it in the layout.",
                            "一个节点恰好看到它的祖先和它自己，不管排列里它前面还有什么。",
                        )
                        .into())
                })
            },
        ),
    ];
    let layout = names
        .iter()
        .zip(&depths)
        .map(|(t, d)| format!("{t}({d})"))
        .collect::<Vec<_>>()
        .join(" ");
    let not_seen = names
        .iter()
        .filter(|t| *t != "r" && !sees.contains(t))
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    let seen = sees.join(", ");
    let solution = l.pick(
        format!(
            "{count} speculated nodes ({sequences} if every sequence ran alone: a and b are \
             shared). Depth first: {layout}. e sees the verified prefix and {seen}: not \
             {not_seen}, although c comes before it in the layout."
        ),
        format!(
            "{count} 个猜测节点（每条序列单独跑则是 {sequences} 个：a 和 b 是共享的）。深度\
             优先：{layout}。e 能看到已验证的前缀和 {seen}：看不到 {not_seen}，尽管 c 在排列里\
             排在它前面。"
        ),
    );
    (statement, checks, solution)
}

/// "r0 a1 b2" or "r(0) a(1)" → [(r, 0), (a, 1), (b, 2)].
fn parse_order(text: &str, l: Lang) -> Result<Vec<(String, usize)>, String> {
    let form = || {
        l.pick(
            "Write each node with its depth, e.g. r0 a1 b2 (or r(0) a(1) b(2)).",
            "每个节点写上它的深度，例如 r0 a1 b2（或 r(0) a(1) b(2)）。",
        )
        .to_string()
    };
    text.split([',', '，', ' '])
        .filter(|s| !s.is_empty())
        .map(|item| {
            let item = item.replace(['(', ')', '（', '）'], "");
            let split = item.find(|c: char| c.is_ascii_digit()).ok_or_else(form)?;
            let (name, depth) = item.split_at(split);
            if name.is_empty() {
                return Err(form());
            }
            Ok((name.to_string(), depth.parse().map_err(|_| form())?))
        })
        .collect()
}

fn exercise_6(l: Lang) -> Exercise {
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
            "(2) MSS",
            close(
                mss,
                0.005,
                l.pick(
                    "MSS tries t2 with min(1, p/q₁), and after a rejection tries t3 against the \
                     residual norm(max(0, p − q₁)) with min(1, r/q₂).",
                    "MSS 先以 min(1, p/q₁) 试 t2，被拒绝后再对残差 norm(max(0, p − q₁)) 以 \
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
             被接受；残差是 (0, 0, 0.5, 0.5)，t3 对它以 min(1, 0.5/0.25) = 1 通过：合计 \
             {mss:.2}。"
        ),
    );
    (statement, checks, solution)
}

fn exercise_7(l: Lang) -> Exercise {
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
            "a counterexample: p; q (two probabilities each, e.g. 0.3, 0.7; 0.4, 0.6)",
            "反例：p; q（各两个概率，例如 0.3, 0.7; 0.4, 0.6）",
        ),
        move |text| {
            let (p, q) = text.split_once([';', '；']).ok_or(l.pick(
                "Type p, then a semicolon, then q: e.g. 0.3, 0.7; 0.4, 0.6.",
                "先输入 p，再输入分号，再输入 q：例如 0.3, 0.7; 0.4, 0.6。",
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
            "例如 p = (0.5, 0.5)，q = (0.6, 0.4)：草稿总是 token 0，以 0.5/0.6 被接受；残差是 \
             (0, 1)，所以输出是 ({o0:.3}, {o1:.3}) ≠ p。证明需要 P(草稿 = x) = q(x)，这样被\
             接受的质量才是 min(p, q)；确定的草稿接受的却是 min(1, p/q)。改法：从 q 采样草稿\
             （只有贪心验证时才取 argmax），或者有多个候选时做无放回采样，每取一个就把 q \
             重新归一化。"
        ),
    );
    (statement, checks, solution)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(exercise: u32, answers: &[&str]) -> ExerciseView {
        run_in(Lang::En, exercise, answers)
    }

    fn run_in(lang: Lang, exercise: u32, answers: &[&str]) -> ExerciseView {
        exercise_view(&ExerciseParams {
            exercise,
            answers: answers.iter().map(|s| s.to_string()).collect(),
            lang,
        })
        .unwrap()
    }

    fn verdicts(v: &ExerciseView) -> Vec<Verdict> {
        v.parts.iter().map(|p| p.verdict).collect()
    }

    use Verdict::*;

    /// The lecture's reference answers (§10) pass, rounded as the lecture rounds them.
    #[test]
    fn the_lectures_answers_are_right() {
        let cases: [(u32, &[&str]); 6] = [
            (1, &["3.05", "2.54", "1.67"]),
            (3, &["0.6, 0.4", "(0.8, 0.2)"]),
            (4, &["5"]),
            (
                5,
                &["7", "r(0) a(1) b(2) c(3) d(3) e(4) f(1) g(2)", "a b d e"],
            ),
            (6, &["0.5", "1.0"]),
            (7, &["0.5, 0.5; 0.6, 0.4"]),
        ];
        for (n, answers) in cases {
            let v = run(n, answers);
            assert!(v.solved, "exercise {n}: {:?}", v.parts);
            assert!(v.solution.is_some());
        }
    }

    #[test]
    fn wrong_answers_get_a_hint_and_no_solution() {
        let v = run(1, &["3.05", "3.05", ""]);
        assert_eq!(verdicts(&v), [Right, Wrong, Empty]);
        assert!(
            v.parts[1].feedback.starts_with("3.05 is too high."),
            "{:?}",
            v.parts[1]
        );
        assert!(!v.solved && v.solution.is_none());
        // The hint never contains the answer.
        assert!(!v.parts[1].feedback.contains("2.54"));
        let v = run(3, &["0.5, 0.5", "0.6, 0.4"]);
        assert_eq!(verdicts(&v), [Wrong, Wrong]);
        let v = run(4, &["8"]);
        assert_eq!(verdicts(&v), [Wrong]);
        assert!(
            v.parts[0].feedback.contains("compute-bound"),
            "{:?}",
            v.parts
        );
        let v = run(4, &["2"]);
        assert!(v.parts[0].feedback.contains("still memory-bound"));
        let v = run(5, &["9", "r0 a1 b2 c3 d3 e4 f1 g3", "a b c d e"]);
        assert_eq!(verdicts(&v), [Wrong, Wrong, Wrong]);
        assert!(v.parts[0].feedback.contains("every sequence on its own"));
        assert!(v.parts[1].feedback.contains("The order is right"));
        // Without the root, and in another separator style, the order is still right.
        let v = run(5, &["", "a1, b2, c3, d3, e4, f1, g2", "e d b a"]);
        assert_eq!(verdicts(&v), [Empty, Right, Right]);
        let v = run(6, &["1", "0.5"]);
        assert_eq!(verdicts(&v), [Wrong, Wrong]);
        // A one-hot q is a sample from q: no counterexample. Even p = q is one (ties go to
        // token 0, which is then always accepted).
        let v = run(7, &["0.5, 0.5; 1, 0"]);
        assert_eq!(verdicts(&v), [Wrong]);
        assert!(v.parts[0].feedback.contains("not a counterexample"));
        assert!(run(7, &["0.2, 0.8; 0.9, 0.1"]).solved);
        assert!(run(7, &["0.5, 0.5; 0.5, 0.5"]).solved);
    }

    /// In Chinese every text is Chinese (statement, questions, hints, forms, solution), and the
    /// same answers get the same verdicts; Chinese punctuation in answers is read too.
    #[test]
    fn every_text_has_a_chinese_version() {
        let zh = |exercise: u32, answers: &[&str]| run_in(Lang::Zh, exercise, answers);
        let han = |t: &str| t.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
        let right: [(u32, &[&str]); 6] = [
            (1, &["3.05", "2.54", "1.67"]),
            (3, &["0.6，0.4", "（0.8, 0.2）"]),
            (4, &["5"]),
            (5, &["7", "r0 a1 b2 c3 d3 e4 f1 g2", "a、b、d、e"]),
            (6, &["0.5", "1.0"]),
            (7, &["0.5, 0.5；0.6, 0.4"]),
        ];
        for (n, answers) in right {
            let v = zh(n, answers);
            assert!(v.solved, "exercise {n}: {:?}", v.parts);
            assert!(
                han(&v.statement) && han(v.solution.as_deref().unwrap()),
                "{n}"
            );
            assert!(v
                .parts
                .iter()
                .all(|p| han(&p.question) || p.question == "(2) MSS"));
            let en = run(n, answers);
            assert_ne!(en.statement, v.statement);
        }
        let wrong: [(u32, &[&str]); 6] = [
            (1, &["9", "x", ""]),
            (3, &["0.5, 0.5", "0.7"]),
            (4, &["8"]),
            (5, &["9", "a b", "q"]),
            (6, &["1", "0.1"]),
            (7, &["0.5, 0.5; 1, 0"]),
        ];
        for (n, answers) in wrong {
            let (v, en) = (zh(n, answers), run(n, answers));
            assert_eq!(verdicts(&v), verdicts(&en), "exercise {n}");
            for p in v.parts.iter().filter(|p| p.verdict != Empty) {
                assert!(han(&p.feedback), "exercise {n}: {:?}", p.feedback);
            }
        }
        assert!(zh(4, &["2048"]).parts[0].feedback.contains("1 到 1024"));
    }

    #[test]
    fn malformed_answers_say_what_form_is_wanted() {
        let v = run(1, &["three", "", ""]);
        assert_eq!(v.parts[0].verdict, Unreadable);
        assert!(v.parts[0].feedback.contains("is not a number"));
        let v = run(3, &["0.6", "0.7, 0.7"]);
        assert_eq!(verdicts(&v), [Unreadable, Unreadable]);
        assert!(v.parts[0].feedback.contains("Type 2 probabilities"));
        assert!(v.parts[1].feedback.contains("sum to 1"));
        assert_eq!(run(4, &["4.5"]).parts[0].verdict, Unreadable);
        let v = run(4, &["2048"]);
        assert_eq!(v.parts[0].verdict, Unreadable);
        assert!(
            v.parts[0].feedback.contains("from 1 to 1024"),
            "the bound is named"
        );
        assert_eq!(run(5, &["", "a b c", ""]).parts[1].verdict, Unreadable);
        assert_eq!(run(7, &["0.5, 0.5"]).parts[0].verdict, Unreadable);
        let err = |n, answers: Vec<String>| {
            exercise_view(&ExerciseParams {
                exercise: n,
                answers,
                lang: Lang::En,
            })
            .unwrap_err()
            .to_string()
        };
        assert!(err(2, vec![]).contains("unknown exercise \"2\" (known: 1, 3, 4, 5, 6, 7"));
        assert!(err(6, vec!["1".into(); 3]).contains("\"3 answers\": exercise 6 has 2 parts"));
    }
}

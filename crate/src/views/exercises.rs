//! The lecture's exercises 1, 3, 4, 5, 6 and 7 (§10) as checks: the student's answers in, a
//! verdict per part out. The truth is computed here with the same core code the widgets use
//! (theory, exact sampling, roofline, token trees, multi-draft verification), never stored; a
//! wrong answer gets a hint that says what to compute, not the number, and the worked solution
//! is shown only once every part is right.

use crate::error::Error;
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
}

impl Default for ExerciseParams {
    fn default() -> Self {
        ExerciseParams {
            exercise: 1,
            answers: Vec::new(),
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
    let (statement, checks, solution) = match params.exercise {
        1 => exercise_1(),
        3 => exercise_3(),
        4 => exercise_4()?,
        5 => exercise_5(),
        6 => exercise_6(),
        7 => exercise_7(),
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
            why: format!("exercise {} has {} parts", params.exercise, checks.len()),
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
                (Verdict::Unreadable, "That answer is too long.".to_string())
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

fn number(text: &str) -> Result<f64, String> {
    let t = text.trim().trim_end_matches(['×', 'x']).trim();
    t.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("“{}” is not a number: type one such as 2.5.", clip(text)))
}

fn clip(text: &str) -> String {
    text.chars().take(40).collect()
}

/// A number checked to within `tolerance` of `truth`; the hint says higher or lower.
fn close(truth: f64, tolerance: f64, hint: &'static str) -> impl Fn(&str) -> Judged {
    move |text| {
        let x = number(text)?;
        Ok(if (x - truth).abs() <= tolerance {
            Ok(())
        } else {
            let side = if x > truth { "too high" } else { "too low" };
            Err(format!("{x} is {side}. {hint}"))
        })
    }
}

/// A distribution over `n` tokens, typed as numbers separated by commas.
fn distribution(text: &str, n: usize) -> Result<Vec<f64>, String> {
    let xs: Vec<f64> = text
        .split([',', ' ', '(', ')'])
        .filter(|s| !s.is_empty())
        .map(number)
        .collect::<Result<_, _>>()?;
    if xs.len() != n {
        return Err(format!(
            "Type {n} probabilities separated by commas, one per token; got {}.",
            xs.len()
        ));
    }
    if xs.iter().any(|&x| x < 0.0) || (xs.iter().sum::<f64>() - 1.0).abs() > 1e-3 {
        return Err("Probabilities are ≥ 0 and sum to 1.".to_string());
    }
    Ok(xs)
}

fn exercise_1() -> Exercise {
    let (alpha, gamma, c, c_hat) = (0.75, 4, 0.05, 0.02);
    let e = theory::expected_tokens(alpha, gamma);
    let s = theory::speedup(alpha, gamma, c);
    let ops = theory::operations(alpha, gamma, c_hat);
    let statement = format!(
        "α = {alpha}, γ = {gamma}. (1) How many tokens does one step yield on average? (2) With \
         c = {c}, what is the wall-clock speedup? (3) With ĉ = {c_hat}, by what factor does the \
         total computation grow? (Two decimals are enough.)"
    );
    let checks = vec![
        check(
            "(1) E, tokens per step",
            close(
                e,
                0.01,
                "The first i drafts all pass with probability α^i, and a step always yields at least \
                 one token: E = Σ_{i=0}^{γ} α^i = (1 − α^{γ+1})/(1 − α).",
            ),
        ),
        check(
            "(2) speedup",
            close(
                s,
                0.01,
                "A step costs γ draft calls and one target call, γc + 1 in units of a target call, \
                 and yields E tokens.",
            ),
        ),
        check(
            "(3) operations factor",
            close(
                ops,
                0.01,
                "A step runs γ draft calls (ĉ each, in target-call operations) and scores γ + 1 \
                 tokens in the target, for E tokens.",
            ),
        ),
    ];
    let solution = format!(
        "E = (1 − {alpha}^{})/(1 − {alpha}) = {e:.4}; speedup = E/(γc + 1) = {e:.4}/{:.2} = {s:.4}×; \
         operations = (γĉ + γ + 1)/E = {:.2}/{e:.4} = {ops:.4}×: speculation spends more \
         computation to save time.",
        gamma + 1,
        f64::from(gamma) * c + 1.0,
        f64::from(gamma) * c_hat + f64::from(gamma) + 1.0,
    );
    (statement, checks, solution)
}

fn exercise_3() -> Exercise {
    let (p, q) = (vec![0.6, 0.4], vec![0.5, 0.5]);
    let correct = single_position(&p, &q, Variant::Correct);
    let greedy = single_position(&p, &q, Variant::GreedyRule);
    let statement = "p = (0.6, 0.4), q = (0.5, 0.5). Give the output distribution (1) of correct \
                     speculative sampling and (2) of sampling with the greedy rule (accept the \
                     draft only if it is argmax p, otherwise sample from p). Type two \
                     probabilities, e.g. 0.3, 0.7."
        .to_string();
    let dist_check = |truth: Vec<f64>, hint: &'static str| {
        move |text: &str| {
            let d = distribution(text, 2)?;
            Ok(if tv(&d, &truth) <= 0.005 {
                Ok(())
            } else {
                Err(hint.to_string())
            })
        }
    };
    let checks = vec![
        check(
            "(1) correct speculative sampling",
            dist_check(
                correct.output.clone(),
                "Not that. A drafted x is accepted with mass q(x)·min(1, p(x)/q(x)) = min(p, q); \
                 the rejected mass is then spread by norm(max(0, p − q)). Add the two.",
            ),
        ),
        check(
            "(2) the greedy rule",
            dist_check(
                greedy.output.clone(),
                "Not that. The draft is token 0 (= argmax p) half the time and is then output \
                 as is; the other half, the output is a sample from p.",
            ),
        ),
    ];
    let solution = format!(
        "Correct: min(p, q) = (0.5, 0.4), α = {:.2}; the residual norm(max(0, p − q)) = (1, 0) \
         takes the remaining {:.2}, so the output is ({:.2}, {:.2}) = p. Greedy rule: \
         ({:.2}, {:.2}) ≠ p, pushed towards the argmax (TV {:.2}).",
        correct.acceptance,
        1.0 - correct.acceptance,
        correct.output[0],
        correct.output[1],
        greedy.output[0],
        greedy.output[1],
        tv(&greedy.output, &p),
    );
    (statement, checks, solution)
}

fn exercise_4() -> Result<Exercise, Error> {
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
    let statement = format!(
        "{} on {}, batch {batch}, context {context}: plain decoding has an arithmetic intensity \
         of about {:.1} FLOP/byte; the GPU's knee is about {:.0}. At most how many tokens k can \
         each request verify per step while the step stays memory-bound? (A whole number.)",
        model.label,
        gpu.label,
        one.intensity,
        gpu.knee()
    );
    let judge = move |text: &str| -> Judged {
        let x = number(text)?;
        if x.fract() != 0.0 || !(1.0..=1024.0).contains(&x) {
            return Err("Type a whole number of tokens, 1 or more.".to_string());
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
        Ok(Err(match s.bound {
            Bound::Compute => format!(
                "At k = {k} the intensity is {:.1} FLOP/byte, past the knee: the step is already \
                 compute-bound. Processing k tokens multiplies the FLOPs by about k while the \
                 bytes read barely change.",
                s.intensity
            ),
            Bound::Memory => format!(
                "At k = {k} the step is still memory-bound (intensity {:.1}), so verification \
                 is still almost free: try a larger k.",
                s.intensity
            ),
        }))
    };
    let below = at(last_memory)?;
    let above = at(last_memory + 1)?;
    let checks = vec![check("largest k still memory-bound", judge)];
    let solution = format!(
        "The intensity grows about k-fold: {:.1}·k < {:.0} gives k < {:.1}. In the roofline \
         model, k = {last_memory} is still memory-bound ({:.2} ms, intensity {:.1}) and k = {} \
         is compute-bound ({:.2} ms, intensity {:.1}): at batch {batch}, γ of about {} keeps \
         verification nearly free.",
        one.intensity,
        gpu.knee(),
        gpu.knee() / one.intensity,
        below.time_ms,
        below.intensity,
        last_memory + 1,
        above.time_ms,
        above.intensity,
        last_memory.saturating_sub(1).max(1),
    );
    Ok((statement, checks, solution))
}

fn exercise_5() -> Exercise {
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
    let statement = "Three drafts guess [a b c], [a b d e] and [f g] after the verified token r. \
                     (1) How many speculated nodes has the merged tree? (2) Write its depth-first \
                     order, each node with its position offset (depth), e.g. r0 x1 y2. (3) Which \
                     speculated nodes may e attend to (besides the verified prefix)?"
        .to_string();
    let count = tree.speculated();
    let sequences = tree.sequence_tokens();
    let want_order: Vec<(String, usize)> = names.iter().cloned().zip(depths.clone()).collect();
    let want_sees = sees.clone();
    let checks = vec![
        check("(1) speculated nodes", move |text| {
            let x = number(text)?;
            Ok(if x == count as f64 {
                Ok(())
            } else if x == sequences as f64 {
                Err("That counts every sequence on its own; shared prefixes are one node.".into())
            } else {
                Err("Merge equal prefixes into one node, then count the nodes below r.".into())
            })
        }),
        check("(2) depth-first order with depths", move |text| {
            let got = parse_order(text)?;
            let want: Vec<(String, usize)> = if got.first().is_some_and(|(t, _)| t == "r") {
                want_order.clone()
            } else {
                want_order[1..].to_vec()
            };
            Ok(if got == want {
                Ok(())
            } else if got.iter().map(|x| &x.0).eq(want.iter().map(|x| &x.0)) {
                Err("The order is right; a node's offset is its depth below r (r is 0).".into())
            } else {
                Err(
                    "Depth first: go down the first branch to its end, then back up to the \
                     nearest node with a child not yet visited; siblings in the drafts' order."
                        .into(),
                )
            })
        }),
        check("(3) what e sees", move |text| {
            let mut got: Vec<String> = text
                .split([',', ' '])
                .filter(|s| !s.is_empty() && *s != "r")
                .map(str::to_string)
                .collect();
            if got.iter().any(|t| t.chars().count() != 1) {
                return Err("Type node names separated by spaces, e.g. a b.".into());
            }
            got.sort();
            got.dedup();
            let mut want = want_sees.clone();
            want.sort();
            Ok(if got == want {
                Ok(())
            } else {
                Err(
                    "A node sees exactly its ancestors and itself, whatever comes before it \
                     in the layout."
                        .into(),
                )
            })
        }),
    ];
    let solution = format!(
        "{count} speculated nodes ({sequences} if every sequence ran alone: a and b are shared). \
         Depth first: {}. e sees the verified prefix and {}: not {}, although c comes before \
         it in the layout.",
        names
            .iter()
            .zip(&depths)
            .map(|(t, d)| format!("{t}({d})"))
            .collect::<Vec<_>>()
            .join(" "),
        sees.join(", "),
        names
            .iter()
            .filter(|t| *t != "r" && !sees.contains(t))
            .cloned()
            .collect::<Vec<_>>()
            .join(", "),
    );
    (statement, checks, solution)
}

/// "r0 a1 b2" or "r(0) a(1)" → [(r, 0), (a, 1), (b, 2)].
fn parse_order(text: &str) -> Result<Vec<(String, usize)>, String> {
    let form = || "Write each node with its depth, e.g. r0 a1 b2 (or r(0) a(1) b(2)).".to_string();
    text.split([',', ' '])
        .filter(|s| !s.is_empty())
        .map(|item| {
            let item = item.replace(['(', ')'], "");
            let split = item.find(|c: char| c.is_ascii_digit()).ok_or_else(form)?;
            let (name, depth) = item.split_at(split);
            if name.is_empty() {
                return Err(form());
            }
            Ok((name.to_string(), depth.parse().map_err(|_| form())?))
        })
        .collect()
}

fn exercise_6() -> Exercise {
    let p = vec![0.25; 4];
    let q1 = vec![0.5, 0.5, 0.0, 0.0];
    let q2 = vec![0.25; 4];
    // t2 and t3 of the lecture are tokens 1 and 2 here (numbered from 0).
    let cands: Vec<(usize, &[f64])> = vec![(1, q1.as_slice()), (2, q2.as_slice())];
    let naive = verify_given(&p, &cands, Mode::Naive).acceptance;
    let mss = verify_given(&p, &cands, Mode::Mss).acceptance;
    let statement = "The LLM is uniform over 4 tokens. SSM 1 is (0.5, 0.5, 0, 0) and drew t2; SSM \
                     2 is uniform and drew t3. What is the probability that some draft is \
                     accepted (1) with naive sampling, (2) with MSS?"
        .to_string();
    let checks = vec![
        check(
            "(1) naive sampling",
            close(
                naive,
                0.005,
                "Naive sampling draws one token from the LLM and accepts if it is one of the \
                 drafted tokens.",
            ),
        ),
        check(
            "(2) MSS",
            close(
                mss,
                0.005,
                "MSS tries t2 with min(1, p/q₁), and after a rejection tries t3 against the \
                 residual norm(max(0, p − q₁)) with min(1, r/q₂).",
            ),
        ),
    ];
    let solution = format!(
        "Naive: the LLM lands on t2 or t3 with probability {naive:.2}. MSS: t2 is accepted with \
         min(1, 0.25/0.5) = 0.5; the residual is (0, 0, 0.5, 0.5), against which t3 passes with \
         min(1, 0.5/0.25) = 1: in all {mss:.2}."
    );
    (statement, checks, solution)
}

fn exercise_7() -> Exercise {
    let statement = "Why is it biased to take the draft's most likely token deterministically, \
                     accept it with min(1, p/q) and on rejection sample from norm(max(0, p − q))? \
                     Give a two-token counterexample: p and q for which the output is not p."
        .to_string();
    let checks = vec![check(
        "a counterexample: p; q (two probabilities each, e.g. 0.3, 0.7; 0.4, 0.6)",
        |text| {
            let (p, q) = text
                .split_once(';')
                .ok_or("Type p, then a semicolon, then q: e.g. 0.3, 0.7; 0.4, 0.6.")?;
            let (p, q) = (distribution(p, 2)?, distribution(q, 2)?);
            let out = single_position(&p, &q, Variant::ArgmaxDraft).output;
            let d = tv(&out, &p);
            Ok(if d > 1e-9 {
                Ok(())
            } else {
                Err(format!(
                    "With these, the output is ({:.3}, {:.3}) = p: not a counterexample. Where \
                     does the proof of exactness use that the draft is a sample from q?",
                    out[0], out[1]
                ))
            })
        },
    )];
    let (p, q) = ([0.5, 0.5], [0.6, 0.4]);
    let out = single_position(&p, &q, Variant::ArgmaxDraft).output;
    let solution = format!(
        "For example p = (0.5, 0.5), q = (0.6, 0.4): the draft is always token 0, accepted with \
         0.5/0.6; the residual is (0, 1), so the output is ({:.3}, {:.3}) ≠ p. The proof needs \
         P(draft = x) = q(x), so that the accepted mass is min(p, q); a deterministic draft \
         accepts min(1, p/q) instead. Fix: sample the draft from q (take the argmax only with \
         greedy verification), or, with several candidates, sample without replacement and \
         renormalise q after each.",
        out[0], out[1]
    );
    (statement, checks, solution)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(exercise: u32, answers: &[&str]) -> ExerciseView {
        exercise_view(&ExerciseParams {
            exercise,
            answers: answers.iter().map(|s| s.to_string()).collect(),
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
        assert_eq!(run(5, &["", "a b c", ""]).parts[1].verdict, Unreadable);
        assert_eq!(run(7, &["0.5, 0.5"]).parts[0].verdict, Unreadable);
        let err = |n, answers: Vec<String>| {
            exercise_view(&ExerciseParams {
                exercise: n,
                answers,
            })
            .unwrap_err()
            .to_string()
        };
        assert!(err(2, vec![]).contains("unknown exercise \"2\" (known: 1, 3, 4, 5, 6, 7"));
        assert!(err(6, vec!["1".into(); 3]).contains("\"3 answers\": exercise 6 has 2 parts"));
    }
}

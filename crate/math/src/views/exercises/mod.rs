//! The lecture's exercises 1, 3, 4, 5, 6 and 7 (§10) as checks: the student's answers in, a
//! verdict per part out. The truth is computed here with the same core code the widgets use
//! (theory, exact sampling, roofline, token trees, multi-draft verification), never stored; a
//! wrong answer gets a hint that says what to compute, not the number, and the worked solution
//! is shown only once every part is right. Every text in English or Chinese (the lecture's).
//!
//! What lives where: this file holds the parameter and view types, [`exercise_view`] (which
//! picks the exercise and judges each part) and the helpers every exercise shares for reading
//! and checking an answer (a number, a number close to the truth, a distribution). Each
//! exercise, with its statement, its checks and its worked solution, is one file:
//!
//! - `ex1_speedup`: exercise 1, tokens per step, speedup and operations (theory);
//! - `ex3_greedy_rule`: exercise 3, correct speculative sampling against the greedy rule;
//! - `ex4_roofline`: exercise 4, the largest k that keeps the step memory-bound (roofline);
//! - `ex5_token_tree`: exercise 5, the merged token tree, its depth-first order and mask;
//! - `ex6_multi_draft`: exercise 6, naive sampling against MSS with two drafts;
//! - `ex7_argmax_draft`: exercise 7, why a deterministic argmax draft is biased.

mod ex1_speedup;
mod ex3_greedy_rule;
mod ex4_roofline;
mod ex5_token_tree;
mod ex6_multi_draft;
mod ex7_argmax_draft;

use crate::error::{Error, Text};
use crate::i18n::Lang;

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
        1 => ex1_speedup::exercise(l),
        3 => ex3_greedy_rule::exercise(l),
        4 => ex4_roofline::exercise(l)?,
        5 => ex5_token_tree::exercise(l),
        6 => ex6_multi_draft::exercise(l),
        7 => ex7_argmax_draft::exercise(l),
        n => {
            return Err(Error::Unknown {
                what: "exercise",
                name: n.to_string(),
                known: Text::new(
                    "1, 3, 4, 5, 6, 7 (2 is a proof, 8 open-ended)",
                    "1、3、4、5、6、7（2 是证明题，8 是开放题）",
                ),
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

/// A typed number, as people type it: full-width digits and signs (a Chinese input method's
/// "３.０５"), a decimal comma ("3,05"), and a trailing ×.
fn number(text: &str, l: Lang) -> Result<f64, String> {
    let ascii: String = text
        .chars()
        .map(|c| match c {
            '０'..='９' | '．' | '＋' | '－' | '，' | 'ｅ' | 'Ｅ' | 'ｘ' => {
                char::from_u32(u32::from(c) - 0xFEE0).unwrap_or(c)
            }
            '−' => '-',
            c => c,
        })
        .collect();
    let t = ascii.trim().trim_end_matches(['×', 'x', 'X']).trim();
    // One comma and no point is a decimal comma; anything else with a comma is not one number.
    let t = if t.matches(',').count() == 1 && !t.contains('.') {
        t.replace(',', ".")
    } else {
        t.to_string()
    };
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

/// A typed text as the feedback repeats it: trimmed, and shortened as every message quotes
/// what was typed (`error::shown`).
fn clip(text: &str) -> String {
    crate::error::shown(text.trim())
}

/// A number checked to within `tolerance` of `truth`; the hint says higher or lower.
fn close(truth: f64, tolerance: f64, hint: &'static str, l: Lang) -> impl Fn(&str) -> Judged {
    move |text| {
        let x = number(text, l)?;
        Ok(if (x - truth).abs() <= tolerance {
            Ok(())
        } else {
            // What was typed, not the parsed number: "-1e308" stays six characters.
            let typed = clip(text);
            Err(match (l, x > truth) {
                (Lang::En, true) => format!("{typed} is too high. {hint}"),
                (Lang::En, false) => format!("{typed} is too low. {hint}"),
                (Lang::Zh, true) => format!("{typed} 偏大。{hint}"),
                (Lang::Zh, false) => format!("{typed} 偏小。{hint}"),
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
        // The solution's step times are the roofline widget's: with the fixed overhead.
        let gpu = crate::roofline::gpu("a100-40gb").unwrap();
        let model = crate::roofline::model("opt-13b").unwrap();
        let overhead = crate::roofline::DEFAULT_OVERHEAD_MS;
        let k5 = crate::roofline::Workload::new(32, 512, 5, overhead).unwrap();
        let t5 = crate::roofline::step(&gpu, &model, &k5).time_ms;
        let v = run(4, &["5"]);
        let solution = v.solution.expect("k = 5 solves exercise 4");
        assert!(solution.contains(&format!("({t5:.2} ms")), "{solution}");
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
        // The field's own example shows the format without giving the answer away.
        let v = run(7, &["0.3, 0.7; 1, 0"]);
        assert!(v.parts[0].feedback.contains("not a counterexample"));
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
                .all(|p| han(&p.question) || p.question == "（2）MSS"));
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
    fn numbers_are_read_as_people_type_them_and_repeated_as_typed() {
        for typed in ["3.05", "3,05", "３.０５", "３．０５", "３，０５", " 3.05× "] {
            assert_eq!(run(1, &[typed, "", ""]).parts[0].verdict, Right, "{typed}");
        }
        assert_eq!(run(1, &["3,0,5", "", ""]).parts[0].verdict, Unreadable);
        let v = run(1, &["-1e308", "", ""]);
        assert_eq!(v.parts[0].verdict, Wrong);
        assert!(
            v.parts[0].feedback.starts_with("-1e308 is too low."),
            "{}",
            v.parts[0].feedback
        );
        let long = format!("1{}", "0".repeat(300));
        let v = run(1, &[&long, "", ""]);
        assert!(
            v.parts[0]
                .feedback
                .starts_with(&format!("1{}… is too high.", "0".repeat(38))),
            "{}",
            v.parts[0].feedback
        );
        let v = run(1, &[&"x".repeat(100_000), "", ""]);
        assert!(
            v.parts[0].feedback.chars().count() < 120,
            "{}",
            v.parts[0].feedback
        );
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

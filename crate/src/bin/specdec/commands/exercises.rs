//! `exercise`: the lecture's exercises 1, 3, 4, 5, 6 and 7 checked as the page checks them.

use crate::opts::{row, Opts, Report, Usage};
use specdec::i18n::Lang;
use specdec::views::exercises::{exercise_view, ExerciseParams, Verdict};

pub fn cmd_exercise(o: &mut Opts) -> Result<Report, Usage> {
    let exercise = o.number("number", None)?;
    // Parts separated by |, since an answer may hold commas and semicolons.
    let answers = o
        .take("answers")
        .map(|a| a.split('|').map(str::to_string).collect())
        .unwrap_or_default();
    let lang = match o.take("lang") {
        Some(name) => <specdec::i18n::Lang as specdec::error::Named>::parse(&name)?,
        None => Lang::En,
    };
    let v = exercise_view(&ExerciseParams {
        exercise,
        answers,
        lang,
    })?;
    let mut rows = vec![row(&format!("exercise {}", v.exercise), &v.statement)];
    for p in &v.parts {
        let said = match p.verdict {
            Verdict::Right => "right".to_string(),
            Verdict::Empty => "not answered".to_string(),
            Verdict::Wrong => format!("wrong: {}", p.feedback),
            Verdict::Unreadable => format!("unreadable: {}", p.feedback),
        };
        rows.push(row(&p.question, said));
    }
    if let Some(s) = &v.solution {
        rows.push(row("solution", s));
    }
    Ok(Report {
        json: serde_json::to_value(&v).expect("a serialisable view"),
        rows,
    })
}

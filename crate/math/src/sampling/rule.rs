//! A verification rule of one draft token at a time, whichever family it comes from: the
//! lecture's (Algorithm 1 and its wrong variants, [`Variant`]) or Medusa's typical acceptance
//! ([`Typical`]). Every caller — exact enumeration, Monte Carlo, the decoding engine's chains —
//! asks a [`Rule`] the same four questions: where the draft token is drawn from, with what
//! probability it is kept, what is drawn after a rejection, and where the bonus token comes from.

use super::speculative::Variant;
use super::typical::Typical;
use super::Dist;
use crate::error::{Error, Named};
use crate::i18n::Lang;

/// One rule, its family's parameters with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Lecture(Variant),
    Typical(Typical),
}

/// A rule is written as its name.
impl serde::Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl From<Variant> for Rule {
    fn from(v: Variant) -> Rule {
        Rule::Lecture(v)
    }
}

impl Rule {
    /// Every rule's name: the lecture's variants', then `typical`.
    pub fn names() -> Vec<&'static str> {
        let mut names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
        names.push("typical");
        names
    }

    /// The rule called `name`; `typical` takes `typical`'s thresholds (Medusa's when none).
    pub fn parse(name: &str, typical: Option<Typical>) -> Result<Rule, Error> {
        if name.trim() == "typical" {
            return Ok(Rule::Typical(typical.unwrap_or_default()));
        }
        Variant::parse(name.trim())
            .map(Rule::Lecture)
            .map_err(|_| Error::Unknown {
                what: "variant",
                name: name.into(),
                known: Rule::names().join(", ").into(),
            })
    }

    pub fn name(self) -> &'static str {
        match self {
            Rule::Lecture(v) => v.name(),
            Rule::Typical(_) => "typical",
        }
    }

    pub fn label(self, l: Lang) -> String {
        match self {
            Rule::Lecture(v) => v.label(l).into(),
            Rule::Typical(t) => {
                l.pick("typical acceptance", "典型接受").to_string()
                    + &format!(" (ε {}, δ {})", t.epsilon, t.delta)
            }
        }
    }

    /// Whether the rule is exact by construction (the correct rule only).
    pub fn is_correct(self) -> bool {
        self == Rule::Lecture(Variant::Correct)
    }

    /// The distribution the draft token is drawn from, given the draft's q.
    pub fn draft_dist(self, q: &[f64]) -> Dist {
        match self {
            Rule::Lecture(v) => v.draft_dist(q),
            Rule::Typical(_) => q.to_vec(),
        }
    }

    /// Probability of keeping draft token `x` given the target's p and the draft's q.
    pub fn accept_prob(self, p: &[f64], q: &[f64], x: usize) -> f64 {
        match self {
            Rule::Lecture(v) => v.accept_prob(p, q, x),
            Rule::Typical(t) => f64::from(u8::from(t.keeps(p, x))),
        }
    }

    /// The distribution drawn from after a rejection.
    pub fn reject_dist(self, p: &[f64], q: &[f64]) -> Dist {
        match self {
            Rule::Lecture(v) => v.reject_dist(p, q),
            Rule::Typical(_) => p.to_vec(),
        }
    }

    /// The bonus token's distribution after every draft was kept.
    pub fn bonus_dist(self, p_next: &[f64], q_next: &[f64]) -> Dist {
        match self {
            Rule::Lecture(v) => v.bonus_dist(p_next, q_next),
            Rule::Typical(_) => p_next.to_vec(),
        }
    }
}

/// The exact output distribution and acceptance of one position verified with `variant`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Position {
    pub output: Dist,
    pub acceptance: f64,
}

/// One position under any [`Rule`], exactly: Σ_x d(x)·[a(x)·δ_x + (1 − a(x))·r] where d is the
/// draft distribution.
/// (The bonus rule does not act at a single position.)
pub fn single_position(p: &[f64], q: &[f64], rule: impl Into<Rule>) -> Position {
    let variant: Rule = rule.into();
    let draft = variant.draft_dist(q);
    let reject = variant.reject_dist(p, q);
    let mut output = vec![0.0; p.len()];
    let mut acceptance = 0.0;
    for (x, &w) in draft.iter().enumerate().filter(|(_, &w)| w > 0.0) {
        let a = variant.accept_prob(p, q, x);
        output[x] += w * a;
        acceptance += w * a;
        for (y, &r) in reject.iter().enumerate() {
            output[y] += w * (1.0 - a) * r;
        }
    }
    Position { output, acceptance }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_an_unknown_one_lists_them() {
        for name in Rule::names() {
            assert_eq!(Rule::parse(name, None).unwrap().name(), name);
        }
        let t = Typical::new(0.2, 0.5).unwrap();
        assert_eq!(Rule::parse("typical", Some(t)).unwrap(), Rule::Typical(t));
        let msg = Rule::parse("typicall", None).unwrap_err().to_string();
        assert!(msg.contains("typicall") && msg.contains("correct, ") && msg.contains("typical"));
    }
}

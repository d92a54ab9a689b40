//! The named choices the experiments take: which draft model proposes, what proposes on the wall
//! clock, how a tree is shaped and verified, what a greedy experiment decodes beside. Each is an
//! enum with one name per value ([`Named`]: parsing and the list of known names come from one
//! list of values). The drafts on the target's hidden states and the step-through's kinds are
//! in [`super::hidden`]. Plain data: no experiment runs here.

use crate::decode::engine::TreeRule;
use crate::decode::free::kind::DrafterKind;
use crate::error::{named, Error, Named};
use crate::i18n::Lang;
use crate::model::Whose;

/// Which trained draft proposes: A (1 layer) or B (2 layers). Read from its name by
/// [`Named::parse`] everywhere, so a bad name gets the core's message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum Draft {
    A,
    #[default]
    B,
}

impl TryFrom<String> for Draft {
    type Error = Error;
    fn try_from(name: String) -> Result<Draft, Error> {
        Draft::parse(&name)
    }
}

impl Named for Draft {
    const WHAT: &'static str = "draft";
    fn all() -> &'static [Draft] {
        &[Draft::A, Draft::B]
    }
    fn key(self) -> &'static str {
        match self {
            Draft::A => "a",
            Draft::B => "b",
        }
    }
    fn aliases(self) -> &'static [&'static str] {
        match self {
            Draft::A => &["A", "draft-a"],
            Draft::B => &["B", "draft-b"],
        }
    }
}

impl Draft {
    /// The engine's index of this draft (the order the experiments hand the drafts over).
    pub fn index(self) -> usize {
        match self {
            Draft::A => 0,
            Draft::B => 1,
        }
    }

    /// The draft at the engine's index `i`.
    pub fn from_index(i: usize) -> Draft {
        if i == 0 {
            Draft::A
        } else {
            Draft::B
        }
    }

    /// "A" or "B", as reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Draft::A => "A",
            Draft::B => "B",
        }
    }

    /// How reports name this draft where `whose` drafts run, in `lang`: "draft B" (草稿 B), or
    /// "your draft" (你的草稿) where the student's own runs in both places.
    pub fn called(self, whose: Whose, lang: Lang) -> &'static str {
        match (whose, self) {
            (Whose::Yours, _) => lang.pick("your draft", "你的草稿"),
            (Whose::Shipped, Draft::A) => lang.pick("draft A", "草稿 A"),
            (Whose::Shipped, Draft::B) => lang.pick("draft B", "草稿 B"),
        }
    }
}

/// How a stochastic tree is verified: naive sampling or MSS (never greedy: a greedy tree is the
/// `tree` experiment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stochastic {
    Naive,
    Mss,
}

impl Stochastic {
    pub const ALL: [Stochastic; 2] = [Stochastic::Naive, Stochastic::Mss];

    pub fn name(self) -> &'static str {
        self.rule().name()
    }

    pub fn rule(self) -> TreeRule {
        match self {
            Stochastic::Naive => TreeRule::Naive,
            Stochastic::Mss => TreeRule::Mss,
        }
    }
}

named!(Stochastic, "stochastic verification");

/// What proposes in the wall-clock experiments: a draft model's chain of γ or static tree of
/// `config`, or a drafter without a model (lecture §5.3) proposing up to γ tokens a step (Prompt
/// Lookup's k, a suffix tree's node budget, Jacobi's window).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Proposing {
    #[default]
    Chain,
    Tree,
    PromptLookup,
    Suffix,
    Jacobi,
    Lookahead,
}

impl Proposing {
    pub const ALL: [Proposing; 6] = [
        Proposing::Chain,
        Proposing::Tree,
        Proposing::PromptLookup,
        Proposing::Suffix,
        Proposing::Jacobi,
        Proposing::Lookahead,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Proposing::Chain => "chain",
            Proposing::Tree => "tree",
            Proposing::PromptLookup => "prompt-lookup",
            Proposing::Suffix => "suffix",
            Proposing::Jacobi => "jacobi",
            Proposing::Lookahead => "lookahead",
        }
    }

    /// The drafter without a model this names, if it names one.
    pub fn free(self) -> Option<DrafterKind> {
        match self {
            Proposing::Chain | Proposing::Tree => None,
            Proposing::PromptLookup => Some(DrafterKind::PromptLookup),
            Proposing::Suffix => Some(DrafterKind::Suffix),
            Proposing::Jacobi => Some(DrafterKind::Jacobi),
            Proposing::Lookahead => Some(DrafterKind::Lookahead),
        }
    }
}

named!(Proposing, "drafting");

/// How a tree of a draft on the target's hidden states is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TreeKind {
    /// The budget's best rank paths by measured rank accuracy (Medusa's tree, EAGLE-1's).
    Sparse,
    /// k children per node, level by level.
    Balanced,
    /// EAGLE-2: grown per context by the draft's confidence.
    Dynamic,
}

impl TreeKind {
    pub const ALL: [TreeKind; 3] = [TreeKind::Sparse, TreeKind::Balanced, TreeKind::Dynamic];

    pub fn name(self) -> &'static str {
        match self {
            TreeKind::Sparse => "sparse",
            TreeKind::Balanced => "balanced",
            TreeKind::Dynamic => "dynamic",
        }
    }
}

named!(TreeKind, "tree");

/// How a proposal's children are chosen and verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verification {
    /// Deterministic children, VerifyGreedy: the output is the target's greedy output.
    Greedy,
    /// A dynamic tree whose children are drawn from the draft's q, verified by MSS (exact).
    Mss,
    /// EAGLE-2's top-k children verified by MSS as if they were drawn (biased: what it costs
    /// is measured).
    MssTopK,
    /// Medusa's typical acceptance on a static tree (lossy on purpose; not offered by name: it
    /// takes ε and δ).
    Typical(crate::sampling::typical::Typical),
}

impl Verification {
    pub const ALL: [Verification; 3] = [
        Verification::Greedy,
        Verification::Mss,
        Verification::MssTopK,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Verification::Greedy => "greedy",
            Verification::Mss => "mss",
            Verification::MssTopK => "mss-top-k",
            Verification::Typical(_) => "typical",
        }
    }
}

named!(Verification, "verification");

/// What a greedy chain or tree experiment decodes beside the γ or tree it is given: the lecture's
/// too (demo 03.2's γ values, demo 04.3's trees: what the page shows), or nothing (the CLI's
/// report of one γ or one tree).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Beside {
    #[default]
    Lecture,
    Nothing,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;

    #[test]
    fn every_named_choice_parses_its_own_names_and_lists_them_when_it_cannot() {
        fn round_trip<T: Named + std::fmt::Debug>() {
            for &v in T::all() {
                assert_eq!(T::parse(v.key()).unwrap(), v);
            }
            let e = T::parse("nonsense").unwrap_err();
            let known = T::known().en;
            assert!(e.to_string().contains(&known), "{e}");
            assert!(e.message(Lang::Zh).contains("nonsense"), "{e}");
        }
        round_trip::<Draft>();
        round_trip::<Stochastic>();
        round_trip::<Proposing>();
        round_trip::<TreeKind>();
        round_trip::<Verification>();
        round_trip::<super::super::hidden::HiddenMethod>();
        round_trip::<super::super::hidden::StepKind>();
        assert_eq!(Draft::parse("draft-a").unwrap(), Draft::A);
        let greedy = Stochastic::parse("greedy").unwrap_err().to_string();
        assert!(greedy.contains("naive, mss"), "{greedy}");
    }
}

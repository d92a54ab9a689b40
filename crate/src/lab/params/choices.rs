//! The named choices the experiments take: which draft model proposes, what proposes on the wall
//! clock, how a tree is shaped and verified, what a greedy experiment decodes beside. Each is an
//! enum with one name per value ([`Named`](crate::error::Named): parsing and the list of known names come from one
//! list of values). The drafts on the target's hidden states and the step-through's kinds are
//! in [`super::hidden`]. Plain data: no experiment runs here.

use crate::decode::engine::TreeRule;
use crate::decode::free::kind::DrafterKind;
use crate::error::named;
use crate::i18n::Lang;
use crate::model::Whose;

crate::error::choices! {
    /// Which trained draft proposes: A (1 layer) or B (2 layers), named `a`/`b` (also `A`,
    /// `draft-a`…) wherever it is read, so a bad name gets the core's message.
    #[derive(Default)]
    pub enum Draft("draft") {
        A = "a" | "A" | "draft-a",
        #[default]
        B = "b" | "B" | "draft-b",
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
    pub fn letter(self) -> &'static str {
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

crate::error::choices! {
    /// How a stochastic tree is verified: naive sampling or MSS (never greedy: a greedy tree is the
    /// `tree` experiment).
    pub enum Stochastic("stochastic verification") {
        Naive = "naive",
        Mss = "mss",
    }
}

impl Stochastic {
    pub fn rule(self) -> TreeRule {
        match self {
            Stochastic::Naive => TreeRule::Naive,
            Stochastic::Mss => TreeRule::Mss,
        }
    }
}

crate::error::choices! {
    /// What proposes in the wall-clock experiments: a draft model's chain of γ or static tree of
    /// `config`, or a drafter without a model (lecture §5.3) proposing up to γ tokens a step (Prompt
    /// Lookup's k, a suffix tree's node budget, Jacobi's window).
    #[derive(Default)]
    pub enum Proposing("drafting") {
        #[default]
        Chain = "chain",
        Tree = "tree",
        PromptLookup = "prompt-lookup",
        Suffix = "suffix",
        Jacobi = "jacobi",
        Lookahead = "lookahead",
    }
}

impl Proposing {
    /// What proposes, as the page's menu offers it (γ is what each reads), in `lang`.
    pub fn label(self, lang: Lang) -> &'static str {
        match self {
            Proposing::Chain => lang.pick("a chain of γ", "长 γ 的链"),
            Proposing::Tree => lang.pick("a tree ⟨k₁,…⟩", "一棵树 ⟨k₁,…⟩"),
            Proposing::PromptLookup => lang.pick(
                "no model: Prompt Lookup (k = γ)",
                "无模型：Prompt Lookup（k = γ）",
            ),
            Proposing::Suffix => lang.pick(
                "no model: suffix index (γ nodes)",
                "无模型：后缀索引（γ 个节点）",
            ),
            Proposing::Jacobi => {
                lang.pick("no model: Jacobi (window γ)", "无模型：Jacobi（窗口 γ）")
            }
            Proposing::Lookahead => lang.pick(
                "no model: Lookahead (γ nodes)",
                "无模型：Lookahead（γ 个节点）",
            ),
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

crate::error::choices! {
    /// How a tree of a draft on the target's hidden states is shaped.
    pub enum TreeKind("tree") {
        /// The budget's best rank paths by measured rank accuracy (Medusa's tree, EAGLE-1's).
        Sparse = "sparse",
        /// k children per node, level by level.
        Balanced = "balanced",
        /// EAGLE-2: grown per context by the draft's confidence.
        Dynamic = "dynamic",
    }
}

impl TreeKind {}

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
    /// The verification as the page's menu offers it, in `lang`.
    pub fn label(self, lang: Lang) -> &'static str {
        match self {
            Verification::Greedy => "VerifyGreedy",
            Verification::Mss => {
                lang.pick("children sampled, MSS (exact)", "孩子抽样，MSS（精确）")
            }
            Verification::MssTopK => {
                lang.pick("top-k children, MSS (biased)", "top-k 孩子，MSS（有偏）")
            }
            Verification::Typical(_) => lang.pick("typical acceptance", "典型接受"),
        }
    }

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
    use crate::error::Named;
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

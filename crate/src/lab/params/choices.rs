//! The named choices the experiments take: which draft model proposes, what proposes on the wall
//! clock, how a tree is shaped and verified, which draft on the target's hidden states runs, what
//! a step-through runs. Most are enums with one name per value ([`Named`]: parsing and the list
//! of known names come from one list of values); a hidden-state run is built from them as a
//! [`Drafter`] and a [`HiddenSpec`], which describe it in the lecture's words. Plain data: no
//! experiment runs here.

use super::ranges::{BUDGET, DEFAULT_DEPTH, DEPTH, HEADS};
use crate::decode::engine::TreeRule;
use crate::decode::free::kind::DrafterKind;
use crate::error::{named, Error, Named, Text};
use crate::i18n::Lang;
use crate::model::medusa::MAX_HEADS;

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
        }
    }
}

named!(Verification, "verification");

/// Which draft on the target's hidden states proposes, and how its tree is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Drafter {
    /// Medusa's first `heads` heads on a sparse (or balanced) static tree.
    Medusa { heads: usize, tree: TreeKind },
    /// EAGLE's draft (`ttt`: the one trained with the training-time test); a dynamic tree is
    /// EAGLE-2's, grown `depth` levels.
    Eagle {
        ttt: bool,
        tree: TreeKind,
        depth: usize,
    },
}

impl Drafter {
    /// Checks the drafter's own values and `budget`.
    pub fn check(&self, budget: usize) -> Result<(), Error> {
        BUDGET.check(budget as f64)?;
        match *self {
            Drafter::Medusa { heads, .. } => HEADS.check(heads as f64).map(|_| ()),
            Drafter::Eagle { depth, .. } => DEPTH.check(depth as f64).map(|_| ()),
        }
    }

    /// Whether its proposals can be verified by `verification`: sampled children need a tree
    /// grown draw by draw, EAGLE-2's.
    pub fn verified_by(&self, verification: Verification) -> Result<(), Error> {
        let dynamic = matches!(
            self,
            Drafter::Eagle {
                tree: TreeKind::Dynamic,
                ..
            }
        );
        if verification == Verification::Greedy || dynamic {
            return Ok(());
        }
        Err(Error::Unavailable {
            what: "verification",
            why: Text::new(
                "sampled verification runs on EAGLE-2's dynamic tree",
                "抽样验证只在 EAGLE-2 的动态树上运行",
            ),
        })
    }

    /// A short name for a figure's axis.
    pub fn short(&self) -> &'static str {
        match self {
            Drafter::Medusa { .. } => "Medusa",
            Drafter::Eagle {
                tree: TreeKind::Dynamic,
                ttt: true,
                ..
            } => "EAGLE-2+TTT",
            Drafter::Eagle {
                tree: TreeKind::Dynamic,
                ..
            } => "EAGLE-2",
            Drafter::Eagle { .. } => "EAGLE",
        }
    }

    /// The drafter in the lecture's words, in `lang`.
    pub fn describe(&self, budget: usize, verification: Verification, lang: Lang) -> String {
        let l = lang;
        let tree = |t: TreeKind| match t {
            TreeKind::Sparse => l.pick("a static sparse tree", "静态稀疏树"),
            TreeKind::Balanced => l.pick("a static balanced tree", "静态平衡树"),
            TreeKind::Dynamic => l.pick("a dynamic tree", "动态树"),
        };
        let how = match verification {
            Verification::Greedy => "VerifyGreedy",
            Verification::Mss => l.pick("children sampled, MSS", "子节点抽样，MSS"),
            Verification::MssTopK => l.pick(
                "top-k children verified by MSS as if sampled (biased)",
                "top-k 子节点当作抽样用 MSS 验证（有偏）",
            ),
        };
        let nodes = match l {
            Lang::En => format!(
                "of up to {budget} node{}",
                if budget == 1 { "" } else { "s" }
            ),
            Lang::Zh => format!("（至多 {budget} 个节点）"),
        };
        match *self {
            Drafter::Medusa { heads, tree: t } => match l {
                Lang::En => format!(
                    "Medusa, {heads} head{}, {} {nodes}, {how}",
                    if heads == 1 { "" } else { "s" },
                    tree(t)
                ),
                Lang::Zh => format!("Medusa，{heads} 个头，{}{nodes}，{how}", tree(t)),
            },
            Drafter::Eagle {
                ttt,
                tree: t,
                depth,
            } => {
                let name = if t == TreeKind::Dynamic {
                    "EAGLE-2"
                } else {
                    "EAGLE"
                };
                let ttt = if ttt {
                    l.pick(" + training-time test", " + 训练时测试")
                } else {
                    ""
                };
                // The depth drafted: a tree of `budget` nodes is at most that deep.
                let d = depth.min(budget);
                let deep = match l {
                    Lang::En => format!(", depth {d}"),
                    Lang::Zh => format!("，深度 {d}"),
                };
                match l {
                    Lang::En => format!("{name}{ttt}, {} {nodes}{deep}, {how}", tree(t)),
                    Lang::Zh => format!("{name}{ttt}，{}{nodes}{deep}，{how}", tree(t)),
                }
            }
        }
    }
}

/// What a run of a draft on the target's hidden states is: the drafter, its node budget and how
/// its proposals are verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HiddenSpec {
    pub drafter: Drafter,
    pub budget: usize,
    pub verification: Verification,
}

impl HiddenSpec {
    /// A greedy run of `drafter` at `budget` nodes.
    pub fn greedy(drafter: Drafter, budget: usize) -> HiddenSpec {
        HiddenSpec {
            drafter,
            budget,
            verification: Verification::Greedy,
        }
    }

    /// Checks the budget, the drafter's values, and that the drafter can be verified so.
    pub fn check(&self) -> Result<(), Error> {
        self.drafter.check(self.budget)?;
        self.drafter.verified_by(self.verification)
    }

    /// The run in the lecture's words, in `lang`.
    pub fn describe(&self, lang: Lang) -> String {
        self.drafter.describe(self.budget, self.verification, lang)
    }
}

/// Which draft on the target's hidden states runs, by name: the page offers Medusa, EAGLE on a
/// sparse or balanced tree, EAGLE-2 and EAGLE-2 with the training-time test; the CLI reaches the
/// other combinations of draft and tree too.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HiddenMethod {
    /// Medusa's heads on a static sparse tree.
    Medusa,
    /// Medusa's heads on a static balanced tree.
    MedusaBalanced,
    /// EAGLE on a static sparse tree.
    Eagle,
    /// EAGLE on a static balanced (binary) tree.
    EagleBalanced,
    /// EAGLE trained with the training-time test, on a static sparse tree.
    EagleTtt,
    /// EAGLE trained with the training-time test, on a static balanced tree.
    EagleBalancedTtt,
    /// EAGLE-2's dynamic tree.
    #[default]
    #[serde(rename = "eagle-2")]
    Eagle2,
    /// EAGLE-2's dynamic tree with the draft trained with the training-time test.
    #[serde(rename = "eagle-2-ttt")]
    Eagle2Ttt,
}

impl HiddenMethod {
    pub const ALL: [HiddenMethod; 8] = [
        HiddenMethod::Medusa,
        HiddenMethod::MedusaBalanced,
        HiddenMethod::Eagle,
        HiddenMethod::EagleBalanced,
        HiddenMethod::EagleTtt,
        HiddenMethod::EagleBalancedTtt,
        HiddenMethod::Eagle2,
        HiddenMethod::Eagle2Ttt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HiddenMethod::Medusa => "medusa",
            HiddenMethod::MedusaBalanced => "medusa-balanced",
            HiddenMethod::Eagle => "eagle",
            HiddenMethod::EagleBalanced => "eagle-balanced",
            HiddenMethod::EagleTtt => "eagle-ttt",
            HiddenMethod::EagleBalancedTtt => "eagle-balanced-ttt",
            HiddenMethod::Eagle2 => "eagle-2",
            HiddenMethod::Eagle2Ttt => "eagle-2-ttt",
        }
    }

    /// The drafter: Medusa with `heads` heads (at most [`MAX_HEADS`]), EAGLE grown `depth`
    /// levels.
    pub fn drafter(self, depth: usize, heads: usize) -> Drafter {
        let medusa = |tree| Drafter::Medusa {
            heads: heads.min(MAX_HEADS),
            tree,
        };
        let eagle = |ttt, tree| Drafter::Eagle { ttt, tree, depth };
        match self {
            HiddenMethod::Medusa => medusa(TreeKind::Sparse),
            HiddenMethod::MedusaBalanced => medusa(TreeKind::Balanced),
            HiddenMethod::Eagle => eagle(false, TreeKind::Sparse),
            HiddenMethod::EagleBalanced => eagle(false, TreeKind::Balanced),
            HiddenMethod::EagleTtt => eagle(true, TreeKind::Sparse),
            HiddenMethod::EagleBalancedTtt => eagle(true, TreeKind::Balanced),
            HiddenMethod::Eagle2 => eagle(false, TreeKind::Dynamic),
            HiddenMethod::Eagle2Ttt => eagle(true, TreeKind::Dynamic),
        }
    }

    /// The method that runs `drafter` (every drafter has one).
    /// The verifications its proposals can take ([`Drafter::verified_by`]), by name: what the
    /// page offers beside it.
    pub fn verifications(self) -> Vec<&'static str> {
        let drafter = self.drafter(DEFAULT_DEPTH, MAX_HEADS);
        Verification::ALL
            .into_iter()
            .filter(|&v| drafter.verified_by(v).is_ok())
            .map(Verification::name)
            .collect()
    }

    pub fn of(drafter: Drafter) -> HiddenMethod {
        let (depth, heads) = match drafter {
            Drafter::Medusa { heads, .. } => (DEFAULT_DEPTH, heads),
            Drafter::Eagle { depth, .. } => (depth, MAX_HEADS),
        };
        HiddenMethod::ALL
            .into_iter()
            .find(|m| m.drafter(depth, heads) == drafter)
            .expect("every drafter has a method")
    }
}

named!(HiddenMethod, "hidden-state draft");

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

/// What a step-through runs: a sampling chain, a greedy tree, or a draft on the target's hidden
/// states (greedy, [`super::ranges::STEP_BUDGET`] nodes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepKind {
    /// A chain of γ under a verification rule (`variant`).
    #[default]
    Chain,
    /// A greedy expansion tree of `config`.
    Tree,
    /// Medusa's heads, every one.
    Medusa,
    /// EAGLE-2's dynamic tree at its default depth.
    #[serde(rename = "eagle-2")]
    Eagle2,
}

impl StepKind {
    pub const ALL: [StepKind; 4] = [
        StepKind::Chain,
        StepKind::Tree,
        StepKind::Medusa,
        StepKind::Eagle2,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StepKind::Chain => "chain",
            StepKind::Tree => "tree",
            StepKind::Medusa => "medusa",
            StepKind::Eagle2 => "eagle-2",
        }
    }

    /// The draft on the target's hidden states it runs, if it runs one.
    pub fn hidden(self) -> Option<Drafter> {
        match self {
            StepKind::Chain | StepKind::Tree => None,
            StepKind::Medusa => Some(HiddenMethod::Medusa.drafter(DEFAULT_DEPTH, MAX_HEADS)),
            StepKind::Eagle2 => Some(HiddenMethod::Eagle2.drafter(DEFAULT_DEPTH, MAX_HEADS)),
        }
    }
}

named!(StepKind, "step-through");

#[cfg(test)]
mod tests {
    use super::*;

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
        round_trip::<HiddenMethod>();
        round_trip::<StepKind>();
        assert_eq!(Draft::parse("draft-a").unwrap(), Draft::A);
        let greedy = Stochastic::parse("greedy").unwrap_err().to_string();
        assert!(greedy.contains("naive, mss"), "{greedy}");
    }

    /// Sampled verification needs a tree grown draw by draw: only EAGLE-2's methods offer it.
    #[test]
    fn only_eagle_2_offers_sampled_verification() {
        for m in HiddenMethod::ALL {
            let dynamic = matches!(m, HiddenMethod::Eagle2 | HiddenMethod::Eagle2Ttt);
            let expected: &[&str] = if dynamic {
                &["greedy", "mss", "mss-top-k"]
            } else {
                &["greedy"]
            };
            assert_eq!(m.verifications(), expected, "{}", m.name());
        }
    }

    #[test]
    fn every_hidden_method_is_the_method_of_its_own_drafter() {
        for m in HiddenMethod::ALL {
            assert_eq!(HiddenMethod::of(m.drafter(7, 3)), m);
        }
        let medusa = HiddenMethod::Medusa.drafter(10, 9);
        assert_eq!(
            medusa,
            Drafter::Medusa {
                heads: MAX_HEADS,
                tree: TreeKind::Sparse
            }
        );
    }

    #[test]
    fn sampled_verification_runs_only_on_a_dynamic_tree() {
        let spec = |m: HiddenMethod, v| HiddenSpec {
            drafter: m.drafter(DEFAULT_DEPTH, MAX_HEADS),
            budget: 16,
            verification: v,
        };
        assert!(spec(HiddenMethod::Eagle2, Verification::Mss)
            .check()
            .is_ok());
        assert!(spec(HiddenMethod::Eagle2Ttt, Verification::MssTopK)
            .check()
            .is_ok());
        let e = spec(HiddenMethod::Eagle, Verification::Mss)
            .check()
            .unwrap_err();
        assert!(e.to_string().contains("EAGLE-2"), "{e}");
        let big = spec(HiddenMethod::Eagle2, Verification::Greedy);
        assert!(HiddenSpec { budget: 65, ..big }.check().is_err());
    }
}

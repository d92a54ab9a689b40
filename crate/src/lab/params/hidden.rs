//! The drafts on the target's hidden states (lecture §5.1–5.2, §4.7) as parameters: which draft
//! proposes and how its tree is shaped ([`Drafter`], by name [`HiddenMethod`]), a run's spec
//! ([`HiddenSpec`], described in the lecture's words), the experiments' and the §6 table's
//! parameters (node budget, depth, heads, verification), and what a step-through runs
//! ([`StepKind`]).

use super::choices::{TreeKind, Verification};
use super::ranges::{BUDGET, DEFAULT_BUDGET, DEFAULT_DEPTH, DEPTH, HEADS, PROMPTS};
use crate::error::{named, Error, Text};
use crate::i18n::Lang;
use crate::model::medusa::MAX_HEADS;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct HiddenRun {
    pub method: HiddenMethod,
    /// Nodes verified per call at most.
    pub budget: usize,
    /// Tree depth (EAGLE).
    pub depth: usize,
    /// Medusa's heads.
    pub heads: usize,
    pub verify: Verification,
    pub prompts: usize,
    pub seed: u64,
}

impl Default for HiddenRun {
    fn default() -> Self {
        HiddenRun {
            method: HiddenMethod::Eagle2,
            budget: DEFAULT_BUDGET,
            depth: DEFAULT_DEPTH,
            heads: MAX_HEADS,
            verify: Verification::Greedy,
            prompts: 30,
            seed: 0,
        }
    }
}

impl HiddenRun {
    pub fn drafter(&self) -> Drafter {
        self.method.drafter(self.depth, self.heads)
    }

    /// The run: the drafter, the budget and the verification.
    pub fn spec(&self) -> HiddenSpec {
        HiddenSpec {
            drafter: self.drafter(),
            budget: self.budget,
            verification: self.verify,
        }
    }

    pub(super) fn check(&self) -> Result<(), Error> {
        PROMPTS.check(self.prompts as f64)?;
        DEPTH.check(self.depth as f64)?;
        HEADS.check(self.heads as f64)?;
        self.spec().check()
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct MethodsRun {
    pub budget: usize,
    pub prompts: usize,
}

impl Default for MethodsRun {
    fn default() -> Self {
        MethodsRun {
            budget: DEFAULT_BUDGET,
            prompts: 10,
        }
    }
}

impl MethodsRun {
    pub(super) fn check(&self) -> Result<(), Error> {
        PROMPTS.check(self.prompts as f64)?;
        BUDGET.check(self.budget as f64).map(|_| ())
    }
}

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
        // Typical acceptance judges given candidates: a static tree's (Medusa's own use).
        if matches!(verification, Verification::Typical(_)) {
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
            Verification::Typical(_) => l.pick("typical acceptance (lossy)", "典型接受（有损）"),
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

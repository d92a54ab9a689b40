//! The drafts on the target's hidden states (lecture §5.1–5.2, §4.7) as parameters: which draft
//! proposes and how its tree is shaped ([`Drafter`], by name [`HiddenMethod`]), a run's spec
//! ([`HiddenSpec`], described in the lecture's words), the experiments' and the §6 table's
//! parameters (node budget — a number of nodes, or for the §6 table [`Budget::Auto`], each method
//! at its device-best size — depth, heads, verification), and what a step-through runs
//! ([`StepKind`]).

use super::choices::{TreeKind, Verification};
use super::ranges::{BUDGET, DEFAULT_BUDGET, DEFAULT_DEPTH, DEPTH, HEADS, PROMPTS};
use crate::error::{Error, Text};
use crate::i18n::Lang;
use crate::model::medusa::MAX_HEADS;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct HiddenRun {
    pub method: HiddenMethod,
    /// Nodes verified per call at most (a number: [`Budget::Auto`] is the §6 table's).
    pub budget: Budget,
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
            budget: Budget::Nodes(DEFAULT_BUDGET),
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
            budget: self.budget.nodes().unwrap_or(DEFAULT_BUDGET),
            verification: self.verify,
        }
    }

    pub(super) fn check(&self) -> Result<(), Error> {
        PROMPTS.check(self.prompts as f64)?;
        if self.budget == Budget::Auto {
            return Err(Error::Unavailable {
                what: "budget",
                why: Text::new(
                    "“auto” (each method at its device-best size) is the §6 table’s: one draft on the hidden states takes a number of nodes",
                    "“auto”（每种方法用这台设备上最好的规模）只用于 §6 表：单个读隐藏状态的草稿要给节点数",
                ),
            });
        }
        DEPTH.check(self.depth as f64)?;
        HEADS.check(self.heads as f64)?;
        self.spec().check()
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct MethodsRun {
    pub budget: Budget,
    pub prompts: usize,
}

impl Default for MethodsRun {
    fn default() -> Self {
        MethodsRun {
            budget: Budget::Nodes(DEFAULT_BUDGET),
            prompts: 10,
        }
    }
}

impl MethodsRun {
    pub(super) fn check(&self) -> Result<(), Error> {
        PROMPTS.check(self.prompts as f64)?;
        self.budget.check()
    }
}

/// A node budget: a number of nodes (within [`BUDGET`]), or `auto`: each method of the §6 table
/// at the size the hardware-aware choice picks for this device (lecture §4.7). Read from a number
/// (`16`, as the page always sent), a number typed as text (`"16"`, as a URL spells it) or the
/// word `auto`; written back the same way, so an old page's `{"budget": 16}` still reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "RawBudget")]
pub enum Budget {
    Nodes(usize),
    Auto,
}

/// What a budget is read from before it is checked.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum RawBudget {
    Number(f64),
    Text(String),
}

impl Budget {
    /// The number of nodes, where one is given.
    pub fn nodes(self) -> Option<usize> {
        match self {
            Budget::Nodes(n) => Some(n),
            Budget::Auto => None,
        }
    }

    /// A number of nodes within [`BUDGET`], or auto.
    pub fn check(self) -> Result<(), Error> {
        match self {
            Budget::Nodes(n) => BUDGET.check(n as f64).map(|_| ()),
            Budget::Auto => Ok(()),
        }
    }

    /// Reads `16` or `auto` (as the CLI and a URL spell it).
    pub fn parse(text: &str) -> Result<Budget, Error> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("auto") {
            return Ok(Budget::Auto);
        }
        match t.parse::<f64>() {
            Ok(x) => Budget::try_from(RawBudget::Number(x)),
            Err(_) => Err(bad_budget(text)),
        }
    }
}

fn bad_budget(text: &str) -> Error {
    Error::Parse {
        what: "budget",
        text: text.to_string(),
        why: Text::new(
            "a node budget is a whole number of nodes or “auto” (each method at its device-best size)",
            "节点预算是整数个节点，或“auto”（每种方法用这台设备上最好的规模）",
        ),
    }
}

impl TryFrom<RawBudget> for Budget {
    type Error = Error;
    fn try_from(raw: RawBudget) -> Result<Budget, Error> {
        match raw {
            RawBudget::Number(x) if x.is_finite() && x >= 0.0 && x.fract() == 0.0 => {
                Ok(Budget::Nodes(x as usize))
            }
            RawBudget::Number(x) => Err(bad_budget(&x.to_string())),
            RawBudget::Text(t) => Budget::parse(&t),
        }
    }
}

impl serde::Serialize for Budget {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Budget::Nodes(n) => s.serialize_u64(*n as u64),
            Budget::Auto => s.serialize_str("auto"),
        }
    }
}

impl std::fmt::Display for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Budget::Nodes(n) => write!(f, "{n}"),
            Budget::Auto => f.write_str("auto"),
        }
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

crate::error::choices! {
    /// Which draft on the target's hidden states runs, by name: the page offers Medusa, EAGLE on a
    /// sparse or balanced tree, EAGLE-2 and EAGLE-2 with the training-time test; the CLI reaches the
    /// other combinations of draft and tree too.
    #[derive(Default)]
    pub enum HiddenMethod("hidden-state draft") {
        /// Medusa's heads on a static sparse tree.
        Medusa = "medusa",
        /// Medusa's heads on a static balanced tree.
        MedusaBalanced = "medusa-balanced",
        /// EAGLE on a static sparse tree.
        Eagle = "eagle",
        /// EAGLE on a static balanced (binary) tree.
        EagleBalanced = "eagle-balanced",
        /// EAGLE trained with the training-time test, on a static sparse tree.
        EagleTtt = "eagle-ttt",
        /// EAGLE trained with the training-time test, on a static balanced tree.
        EagleBalancedTtt = "eagle-balanced-ttt",
        /// EAGLE-2's dynamic tree.
        #[default]
        Eagle2 = "eagle-2",
        /// EAGLE-2's dynamic tree with the draft trained with the training-time test.
        Eagle2Ttt = "eagle-2-ttt",
    }
}

impl HiddenMethod {
    /// The drafts the page's menu offers, in its order (the CLI reaches the others too).
    pub const OFFERED: [HiddenMethod; 5] = [
        HiddenMethod::Medusa,
        HiddenMethod::Eagle,
        HiddenMethod::EagleBalanced,
        HiddenMethod::Eagle2,
        HiddenMethod::Eagle2Ttt,
    ];

    /// The method as a menu offers it, in `lang`.
    pub fn label(self, lang: Lang) -> &'static str {
        match self {
            HiddenMethod::Medusa => lang.pick("Medusa’s heads, static tree", "Medusa 的头，静态树"),
            HiddenMethod::MedusaBalanced => lang.pick(
                "Medusa’s heads, static balanced tree",
                "Medusa 的头，静态平衡树",
            ),
            HiddenMethod::Eagle => lang.pick("EAGLE, static sparse tree", "EAGLE，静态稀疏树"),
            HiddenMethod::EagleBalanced => {
                lang.pick("EAGLE, static balanced tree", "EAGLE，静态平衡树")
            }
            HiddenMethod::EagleTtt => lang.pick(
                "EAGLE + training-time test, static sparse tree",
                "EAGLE + 训练时测试，静态稀疏树",
            ),
            HiddenMethod::EagleBalancedTtt => lang.pick(
                "EAGLE + training-time test, static balanced tree",
                "EAGLE + 训练时测试，静态平衡树",
            ),
            HiddenMethod::Eagle2 => lang.pick("EAGLE-2, dynamic tree", "EAGLE-2，动态树"),
            HiddenMethod::Eagle2Ttt => {
                lang.pick("EAGLE-2 + training-time test", "EAGLE-2 + 训练时测试")
            }
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

crate::error::choices! {
    /// What a step-through runs: a sampling chain, a greedy tree, or a draft on the target's hidden
    /// states (greedy, [`super::ranges::STEP_BUDGET`] nodes).
    #[derive(Default)]
    pub enum StepKind("step-through") {
        /// A chain of γ under a verification rule (`variant`).
        #[default]
        Chain = "chain",
        /// A greedy expansion tree of `config`.
        Tree = "tree",
        /// Medusa's heads, every one.
        Medusa = "medusa",
        /// EAGLE-2's dynamic tree at its default depth.
        Eagle2 = "eagle-2",
    }
}

impl StepKind {
    /// What the step-through runs, as its menu offers it, in `lang`.
    pub fn label(self, lang: Lang) -> &'static str {
        match self {
            StepKind::Chain => lang.pick("sampling chain", "采样链"),
            StepKind::Tree => lang.pick("greedy tree", "贪心树"),
            StepKind::Medusa => lang.pick("Medusa’s heads (greedy)", "Medusa 的头（贪心）"),
            StepKind::Eagle2 => lang.pick("EAGLE-2 (greedy)", "EAGLE-2（贪心）"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A budget reads from a number (as the page always sent it), a number as text (as a URL
    /// spells it) or `auto`, and writes back the same way; anything else is refused by name.
    #[test]
    fn a_budget_is_a_number_of_nodes_or_auto_and_nothing_else() {
        let read =
            |v: serde_json::Value| serde_json::from_value::<MethodsRun>(json!({"budget": v}));
        assert_eq!(read(json!(8)).unwrap().budget, Budget::Nodes(8));
        assert_eq!(read(json!("8")).unwrap().budget, Budget::Nodes(8));
        assert_eq!(read(json!("auto")).unwrap().budget, Budget::Auto);
        assert_eq!(read(json!("AUTO")).unwrap().budget, Budget::Auto);
        for bad in [json!("banana"), json!(2.5), json!(-1), json!("")] {
            let why = read(bad.clone()).unwrap_err().to_string();
            assert!(
                why.contains("budget") && why.contains("auto"),
                "{bad}: {why}"
            );
        }
        let zh = Budget::parse("banana").unwrap_err().message(Lang::Zh);
        assert!(zh.contains("预算") && zh.contains("auto"), "{zh}");
        assert_eq!(serde_json::to_value(Budget::Auto).unwrap(), json!("auto"));
        assert_eq!(serde_json::to_value(Budget::Nodes(16)).unwrap(), json!(16));
        // A number is checked against the range; auto is the §6 table's alone.
        let run = |budget| MethodsRun { budget, prompts: 2 };
        assert!(run(Budget::Auto).check().is_ok());
        assert!(run(Budget::Nodes(0)).check().is_err());
        let hidden = HiddenRun {
            budget: Budget::Auto,
            ..HiddenRun::default()
        };
        let why = hidden.check().unwrap_err().message(Lang::En);
        assert!(
            why.starts_with("budget unavailable") && why.contains("§6"),
            "{why}"
        );
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

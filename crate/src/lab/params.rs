//! The LikesWorld decoding experiments as types: an [`Experiment`] is one of the seven things the
//! decoding widget runs, with exactly the parameters that experiment reads, tagged by its name
//! (`{"experiment": "greedy", "draft": "b", "gamma": 4, …}`, the shape the page sends and the
//! benchmark lists). A range is written once: [`GAMMA`], [`PROMPTS`], [`REPEATS`] and the tree
//! limits are declared here and read by every boundary — [`Experiment::check`] for the wasm
//! export, the CLI's options (which build the same structs for the methods they run), and the
//! page's controls (through the `presets` export). Plain data: running an experiment is
//! [`super::experiment::run`].

use super::modelfree::DrafterKind;
use crate::decode::engine::{ChainRule, Method, TreeRule};
use crate::error::{Error, Range, Text};
use crate::lab::hidden::{Drafter, TreeKind, Verification};
use crate::sampling::multi::Children;
use crate::sampling::speculative::Variant;
use crate::tree::parse_config;

/// Draft tokens per call.
pub const GAMMA: Range = Range::new("gamma", 1.0, 16.0, "1 ≤ γ ≤ 16");
/// Held-out worlds decoded by one experiment.
pub const PROMPTS: Range = Range::new("prompts", 1.0, 1000.0, "1 ≤ prompts ≤ 1000");
/// Prompts decoded together in the speedup experiment (lecture §1.2: the batch that makes a
/// step compute-bound).
pub const BATCH: Range = Range::new("batch", 1.0, 64.0, "1 ≤ batch ≤ 64");
/// Samples per prompt.
pub const REPEATS: Range = Range::new("repeats", 1.0, 20.0, "1 ≤ repeats ≤ 20");
/// A LikesWorld tree: at most this many nodes…
pub const NODE_BUDGET: usize = 64;
/// …and levels.
pub const TREE_DEPTH: Range = Range::new("tree depth", 1.0, 8.0, "1 to 8 levels");

/// The lecture's tree shapes (demo 04.3), beside any the user types.
pub const TREE_SHAPES: [&str; 6] = [
    "<1,1,1,1>",
    "<2,1,1,1>",
    "<3,1,1,1>",
    "<1,3,1,1>",
    "<2,2,1,1>",
    "<2,2,2,2>",
];
/// γ values of demo 03.2, beside the user's.
pub const GAMMAS: [usize; 4] = [1, 2, 4, 6];

/// Which trained draft proposes: A (1 layer) or B (2 layers). Read from its name by
/// [`Draft::parse`] everywhere, so a bad name gets the core's message.
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

impl Draft {
    /// `a`, `b` (or `A`, `draft-a`, …).
    pub fn parse(name: &str) -> Result<Draft, Error> {
        match name {
            "a" | "A" | "draft-a" => Ok(Draft::A),
            "b" | "B" | "draft-b" => Ok(Draft::B),
            _ => Err(Error::Unknown {
                what: "draft",
                name: name.into(),
                known: "a, b".into(),
            }),
        }
    }

    /// The engine's index of this draft (the order [`super::run`] hands them over).
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
    pub fn parse(name: &str) -> Result<Stochastic, Error> {
        match TreeRule::parse(name)? {
            TreeRule::Naive => Ok(Stochastic::Naive),
            TreeRule::Mss => Ok(Stochastic::Mss),
            TreeRule::Greedy => Err(Error::Unknown {
                what: "stochastic verification",
                name: name.into(),
                known: "naive, mss".into(),
            }),
        }
    }

    pub fn rule(self) -> TreeRule {
        match self {
            Stochastic::Naive => TreeRule::Naive,
            Stochastic::Mss => TreeRule::Mss,
        }
    }
}

/// A LikesWorld tree configuration: within [`NODE_BUDGET`] and [`TREE_DEPTH`].
pub fn tree_widths(config: &str) -> Result<Vec<usize>, Error> {
    let widths = parse_config(config, NODE_BUDGET)?.widths().to_vec();
    TREE_DEPTH.check(widths.len() as f64)?;
    Ok(widths)
}

/// One experiment of the decoding widget, with its parameters (each defaulted).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "experiment", rename_all = "kebab-case")]
pub enum Experiment {
    /// Demo 03.1: acceptance by token kind.
    Acceptance(Worlds),
    /// Demo 03.2: greedy chains for every γ of the demo and the one chosen.
    Greedy(Chain),
    /// Demo 03.3: sampling under a verification rule, with its calibration test.
    Sample(Sampling),
    /// Demo 04.3: greedy trees of the lecture's shapes and the one typed.
    Tree(Tree),
    /// Demo 04.5: naive sampling, MSS, and MSS on top-k children, on one tree shape.
    Stochastic(StochasticTrees),
    /// Demo 04.6: measured c and wall-clock speedup of one chain, tree or model-free drafter, at
    /// a batch.
    Speedup(Speedup),
    /// Demo 5 answered by measurement: the speedup of every γ in a list, the best measured γ
    /// beside the formula's optimum.
    Sweep(Sweep),
    /// One seeded run, step by step: a sampling chain or a greedy tree.
    Step(Step),
    /// Lecture §5.1–5.2: Medusa's heads or EAGLE's feature draft, its tree drawn beside the
    /// other kind (static beside dynamic).
    Hidden(HiddenRun),
    /// Lecture §6 measured: every method on one wall-clock axis at one node budget.
    Methods(MethodsRun),
}

/// Which draft on the target's hidden states runs, in the page's words.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HiddenMethod {
    /// Medusa's heads on a static sparse tree.
    Medusa,
    /// EAGLE on a static sparse tree.
    Eagle,
    /// EAGLE on a static balanced (binary) tree.
    EagleBalanced,
    /// EAGLE-2's dynamic tree.
    #[default]
    #[serde(rename = "eagle-2")]
    Eagle2,
    /// EAGLE-2's dynamic tree with the draft trained with the training-time test.
    #[serde(rename = "eagle-2-ttt")]
    Eagle2Ttt,
}

impl HiddenMethod {
    pub const ALL: [HiddenMethod; 5] = [
        HiddenMethod::Medusa,
        HiddenMethod::Eagle,
        HiddenMethod::EagleBalanced,
        HiddenMethod::Eagle2,
        HiddenMethod::Eagle2Ttt,
    ];

    /// The drafter, with `depth` levels (Medusa: `depth` heads, at most 4).
    pub fn drafter(self, depth: usize) -> Drafter {
        let eagle = |ttt, tree| Drafter::Eagle { ttt, tree, depth };
        match self {
            HiddenMethod::Medusa => Drafter::Medusa {
                heads: depth.min(4),
                tree: TreeKind::Sparse,
            },
            HiddenMethod::Eagle => eagle(false, TreeKind::Sparse),
            HiddenMethod::EagleBalanced => eagle(false, TreeKind::Balanced),
            HiddenMethod::Eagle2 => eagle(false, TreeKind::Dynamic),
            HiddenMethod::Eagle2Ttt => eagle(true, TreeKind::Dynamic),
        }
    }
}

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
            budget: 16,
            depth: crate::lab::hidden::DEFAULT_DEPTH,
            heads: 4,
            verify: Verification::Greedy,
            prompts: 30,
            seed: 0,
        }
    }
}

impl HiddenRun {
    pub fn drafter(&self) -> Drafter {
        match self.method {
            HiddenMethod::Medusa => HiddenMethod::Medusa.drafter(self.heads),
            m => m.drafter(self.depth),
        }
    }

    fn check(&self) -> Result<(), Error> {
        PROMPTS.check(self.prompts as f64)?;
        crate::lab::hidden::BUDGET.check(self.budget as f64)?;
        crate::lab::hidden::DEPTH.check(self.depth as f64)?;
        crate::lab::hidden::HEADS.check(self.heads as f64)?;
        if self.verify != Verification::Greedy
            && !matches!(self.method, HiddenMethod::Eagle2 | HiddenMethod::Eagle2Ttt)
        {
            return Err(Error::Unavailable {
                what: "verification",
                why: crate::error::Text::new(
                    "sampled verification runs on EAGLE-2's dynamic tree",
                    "抽样验证只在 EAGLE-2 的动态树上运行",
                ),
            });
        }
        Ok(())
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
            budget: 16,
            prompts: 10,
        }
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Worlds {
    pub prompts: usize,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Chain {
    pub draft: Draft,
    pub gamma: u32,
    pub prompts: usize,
}

/// What proposes in the speedup experiment: a draft model's chain of γ or static tree of
/// `config`, or a drafter without a model (lecture §5.3) proposing up to γ tokens a step (Prompt
/// Lookup's k, a suffix tree's node budget, Jacobi's window).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    #[default]
    Chain,
    Tree,
    PromptLookup,
    Suffix,
    Jacobi,
    Lookahead,
}

impl Shape {
    pub const ALL: [Shape; 6] = [
        Shape::Chain,
        Shape::Tree,
        Shape::PromptLookup,
        Shape::Suffix,
        Shape::Jacobi,
        Shape::Lookahead,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Shape::Chain => "chain",
            Shape::Tree => "tree",
            Shape::PromptLookup => "prompt-lookup",
            Shape::Suffix => "suffix",
            Shape::Jacobi => "jacobi",
            Shape::Lookahead => "lookahead",
        }
    }

    pub fn parse(name: &str) -> Result<Shape, Error> {
        Shape::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| Error::Unknown {
                what: "drafting",
                name: name.into(),
                known: Shape::ALL.map(Shape::name).join(", ").into(),
            })
    }

    /// The drafter without a model this shape names, if it names one.
    pub fn free(self) -> Option<DrafterKind> {
        match self {
            Shape::Chain | Shape::Tree => None,
            Shape::PromptLookup => Some(DrafterKind::PromptLookup),
            Shape::Suffix => Some(DrafterKind::Suffix),
            Shape::Jacobi => Some(DrafterKind::Jacobi),
            Shape::Lookahead => Some(DrafterKind::Lookahead),
        }
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Speedup {
    pub draft: Draft,
    pub gamma: u32,
    pub prompts: usize,
    /// Prompts decoded together ([`BATCH`]).
    pub batch: usize,
    /// A chain of γ, a greedy static tree of `config`, or a drafter without a model.
    pub shape: Shape,
    pub config: String,
}

/// The γ values a sweep may list, at most.
pub const SWEEP_GAMMAS: usize = 8;
/// The sweep's γ when none are given: demo 5's neighbourhood of the optimum.
pub const DEFAULT_SWEEP: &str = "1,2,3,4,6";

/// The speedup of one shape of drafting for every γ of `gammas` (a chain's length, or a model-free
/// drafter's tokens a step; a static tree has no γ to sweep).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Sweep {
    pub draft: Draft,
    /// The γ values, as typed: `1,2,3,4,6`.
    pub gammas: String,
    pub prompts: usize,
    pub batch: usize,
    pub shape: Shape,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Sampling {
    pub draft: Draft,
    pub gamma: u32,
    pub prompts: usize,
    pub repeats: usize,
    pub seed: u64,
    pub variant: Variant,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Tree {
    pub draft: Draft,
    pub config: String,
    pub prompts: usize,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct StochasticTrees {
    pub config: String,
    pub children: Children,
    pub prompts: usize,
    pub seed: u64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Step {
    pub draft: Draft,
    /// A sampling chain (γ, variant) or, if false, a greedy tree (config).
    pub sampling: bool,
    pub gamma: u32,
    pub variant: Variant,
    pub config: String,
    /// Picks the prompt and seeds the run.
    pub seed: u64,
    /// A draft on the target's hidden states instead (greedy, 16 nodes): Medusa's heads or EAGLE-2.
    pub drafter: Option<HiddenMethod>,
}

/// The node budget of a step-through with a draft on the target's hidden states.
pub const STEP_BUDGET: usize = 16;

/// The page's defaults.
const DEFAULT_PROMPTS: usize = 50;
const DEFAULT_GAMMA: u32 = 4;
const DEFAULT_TREE: &str = "<2,2,1,1>";

impl Default for Worlds {
    fn default() -> Self {
        Worlds {
            prompts: DEFAULT_PROMPTS,
        }
    }
}

impl Default for Chain {
    fn default() -> Self {
        Chain {
            draft: Draft::B,
            gamma: DEFAULT_GAMMA,
            prompts: DEFAULT_PROMPTS,
        }
    }
}

impl Default for Speedup {
    fn default() -> Self {
        Speedup {
            draft: Draft::B,
            gamma: DEFAULT_GAMMA,
            prompts: 20,
            batch: 1,
            shape: Shape::Chain,
            config: DEFAULT_TREE.into(),
        }
    }
}

impl Speedup {
    pub fn check(&self) -> Result<(), Error> {
        GAMMA.check(f64::from(self.gamma))?;
        PROMPTS.check(self.prompts as f64)?;
        BATCH.check(self.batch as f64)?;
        unbatched_free(self.shape, self.batch)?;
        if self.shape == Shape::Tree {
            tree_widths(&self.config)?;
        }
        Ok(())
    }
}

/// A drafter without a model proposes for one sequence at a time (its indices and Jacobi's
/// window follow one request): it runs at batch 1 only.
fn unbatched_free(shape: Shape, batch: usize) -> Result<(), Error> {
    if shape.free().is_some() && batch > 1 {
        return Err(Error::Unavailable {
            what: "batch",
            why: Text::new(
                format!(
                    "drafting without a model ({}) follows one request at a time: batch 1 only, not {batch}",
                    shape.name()
                ),
                format!(
                    "无模型起草（{}）一次只跟随一个请求：只能用批大小 1，不能用 {batch}",
                    shape.name()
                ),
            ),
        });
    }
    Ok(())
}

impl Default for Sweep {
    fn default() -> Self {
        Sweep {
            draft: Draft::B,
            gammas: DEFAULT_SWEEP.into(),
            prompts: 20,
            batch: 1,
            shape: Shape::Chain,
        }
    }
}

impl Sweep {
    /// The γ list, checked: 1 to [`SWEEP_GAMMAS`] values, each within [`GAMMA`], sorted and
    /// without repeats.
    pub fn check(&self) -> Result<Vec<u32>, Error> {
        PROMPTS.check(self.prompts as f64)?;
        BATCH.check(self.batch as f64)?;
        unbatched_free(self.shape, self.batch)?;
        if self.shape == Shape::Tree {
            return Err(Error::Unavailable {
                what: "drafting",
                why: Text::new(
                    "a static tree has no γ to sweep: choose a chain or a drafter without a model",
                    "静态树没有可扫描的 γ：请选链或无模型起草器",
                ),
            });
        }
        parse_gammas(&self.gammas)
    }

    /// The speedup experiment of one γ of the sweep.
    pub fn at(&self, gamma: u32) -> Speedup {
        Speedup {
            draft: self.draft,
            gamma,
            prompts: self.prompts,
            batch: self.batch,
            shape: self.shape,
            config: String::new(),
        }
    }
}

/// How many γ a sweep lists.
pub const SWEEP_LENGTH: Range = Range::new("#γ", 1.0, SWEEP_GAMMAS as f64, "1 ≤ #γ ≤ 8");

/// A list of γ such as `1,2,3,4,6` (spaces allowed; `，` as typed on a Chinese keyboard too):
/// each a whole number within [`GAMMA`], 1 to [`SWEEP_GAMMAS`] of them; sorted, repeats dropped.
pub fn parse_gammas(text: &str) -> Result<Vec<u32>, Error> {
    let bad = |en: &str, zh: &str| Error::Parse {
        what: "γ list",
        text: text.chars().take(40).collect(),
        why: Text::new(en, zh),
    };
    let parts: Vec<&str> = text.split([',', '，']).collect();
    SWEEP_LENGTH.check(parts.len() as f64)?;
    let mut gammas = Vec::new();
    for part in parts {
        let part = part.trim();
        if part.is_empty() {
            return Err(bad(
                "expected whole numbers separated by commas, such as 1,2,4",
                "应为用逗号分隔的整数，例如 1,2,4",
            ));
        }
        let g: u32 = part.parse().map_err(|_| {
            bad(
                "every value must be a whole number, such as 1,2,4",
                "每个值都必须是整数，例如 1,2,4",
            )
        })?;
        GAMMA.check(f64::from(g))?;
        gammas.push(g);
    }
    gammas.sort_unstable();
    gammas.dedup();
    Ok(gammas)
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            draft: Draft::B,
            gamma: DEFAULT_GAMMA,
            prompts: DEFAULT_PROMPTS,
            repeats: 1,
            seed: 0,
            variant: Variant::Correct,
        }
    }
}

impl Default for Tree {
    fn default() -> Self {
        Tree {
            draft: Draft::B,
            config: DEFAULT_TREE.into(),
            prompts: DEFAULT_PROMPTS,
        }
    }
}

impl Default for StochasticTrees {
    fn default() -> Self {
        StochasticTrees {
            config: DEFAULT_TREE.into(),
            children: Children::WithoutReplacement,
            prompts: DEFAULT_PROMPTS,
            seed: 0,
        }
    }
}

impl Default for Step {
    fn default() -> Self {
        Step {
            draft: Draft::B,
            sampling: true,
            gamma: DEFAULT_GAMMA,
            variant: Variant::Correct,
            config: DEFAULT_TREE.into(),
            seed: 0,
            drafter: None,
        }
    }
}

impl Chain {
    /// A greedy chain of this draft with γ.
    pub fn method(&self, gamma: usize) -> Method {
        Method::Chain {
            draft: self.draft.index(),
            gamma,
            rule: ChainRule::Greedy,
        }
    }

    fn check(&self) -> Result<(), Error> {
        GAMMA.check(f64::from(self.gamma))?;
        PROMPTS.check(self.prompts as f64)?;
        Ok(())
    }
}

impl Sampling {
    pub fn method(&self) -> Method {
        Method::Chain {
            draft: self.draft.index(),
            gamma: self.gamma as usize,
            rule: ChainRule::Sample(self.variant),
        }
    }

    fn check(&self) -> Result<(), Error> {
        GAMMA.check(f64::from(self.gamma))?;
        PROMPTS.check(self.prompts as f64)?;
        REPEATS.check(self.repeats as f64)?;
        Ok(())
    }
}

impl Tree {
    /// The tree's widths, once the prompts and the tree are checked.
    pub fn check(&self) -> Result<Vec<usize>, Error> {
        PROMPTS.check(self.prompts as f64)?;
        tree_widths(&self.config)
    }
}

impl StochasticTrees {
    /// The tree's widths, once the prompts and the tree are checked.
    pub fn check(&self) -> Result<Vec<usize>, Error> {
        PROMPTS.check(self.prompts as f64)?;
        tree_widths(&self.config)
    }
}

impl Step {
    /// The run this step-through shows.
    pub fn method(&self) -> Result<Method, Error> {
        Ok(if self.sampling {
            GAMMA.check(f64::from(self.gamma))?;
            Method::Chain {
                draft: self.draft.index(),
                gamma: self.gamma as usize,
                rule: ChainRule::Sample(self.variant),
            }
        } else {
            Method::Expand {
                draft: self.draft.index(),
                widths: tree_widths(&self.config)?,
                children: Children::TopK,
                rule: TreeRule::Greedy,
            }
        })
    }
}

impl Experiment {
    /// The experiment's name, as the page and the benchmark call it.
    pub fn name(&self) -> &'static str {
        match self {
            Experiment::Acceptance(_) => "acceptance",
            Experiment::Greedy(_) => "greedy",
            Experiment::Sample(_) => "sample",
            Experiment::Tree(_) => "tree",
            Experiment::Stochastic(_) => "stochastic",
            Experiment::Speedup(_) => "speedup",
            Experiment::Sweep(_) => "sweep",
            Experiment::Step(_) => "step",
            Experiment::Hidden(_) => "hidden",
            Experiment::Methods(_) => "methods",
        }
    }

    /// Checks every value this experiment reads (and only those: a bad tree typed for one
    /// experiment does not stop another).
    pub fn check(&self) -> Result<(), Error> {
        match self {
            Experiment::Acceptance(w) => PROMPTS.check(w.prompts as f64).map(|_| ()),
            Experiment::Greedy(c) => c.check(),
            Experiment::Speedup(s) => s.check(),
            Experiment::Sweep(s) => s.check().map(|_| ()),
            Experiment::Sample(s) => s.check(),
            Experiment::Tree(t) => t.check().map(|_| ()),
            Experiment::Stochastic(s) => s.check().map(|_| ()),
            Experiment::Step(s) => s.method().map(|_| ()),
            Experiment::Hidden(h) => h.check(),
            Experiment::Methods(m) => {
                PROMPTS.check(m.prompts as f64)?;
                crate::lab::hidden::BUDGET
                    .check(m.budget as f64)
                    .map(|_| ())
            }
        }
    }
}

/// Experiments 1–5 at the lecture's sizes, as the benchmark times them (issue: under 10 s in all
/// on a CPU): natively `specdec decode-bench`, in the page `tests/bench.mjs` (through the
/// `decoding_bench_suite` export). Each is one call of [`super::experiment::run`].
pub fn bench_suite() -> Vec<(&'static str, Experiment)> {
    let chain = |draft, prompts| Chain {
        draft,
        prompts,
        ..Chain::default()
    };
    vec![
        (
            "1 acceptance by kind, 200 worlds",
            Experiment::Acceptance(Worlds { prompts: 200 }),
        ),
        (
            "2 greedy chains, draft A, γ 1 2 4 6, 200 prompts",
            Experiment::Greedy(chain(Draft::A, 200)),
        ),
        (
            "2 greedy chains, draft B, γ 1 2 4 6, 200 prompts",
            Experiment::Greedy(chain(Draft::B, 200)),
        ),
        (
            "3 sampling, B γ 4, 200 × 3 (+ target alone)",
            Experiment::Sample(Sampling {
                prompts: 200,
                repeats: 3,
                ..Sampling::default()
            }),
        ),
        (
            "4 greedy trees, 6 shapes, 100 prompts",
            Experiment::Tree(Tree {
                prompts: 100,
                ..Tree::default()
            }),
        ),
        (
            "5 naive / MSS / top-k trees ⟨1,1,3,1⟩, 100",
            Experiment::Stochastic(StochasticTrees {
                config: "<1,1,3,1>".into(),
                prompts: 100,
                ..StochasticTrees::default()
            }),
        ),
    ]
}

impl Experiment {
    /// The number of held-out prompts it decodes, where it has one (the benchmark divides it).
    pub fn prompts_mut(&mut self) -> Option<&mut usize> {
        match self {
            Experiment::Acceptance(Worlds { prompts })
            | Experiment::Greedy(Chain { prompts, .. })
            | Experiment::Speedup(Speedup { prompts, .. })
            | Experiment::Sweep(Sweep { prompts, .. })
            | Experiment::Sample(Sampling { prompts, .. })
            | Experiment::Tree(Tree { prompts, .. })
            | Experiment::Stochastic(StochasticTrees { prompts, .. })
            | Experiment::Hidden(HiddenRun { prompts, .. })
            | Experiment::Methods(MethodsRun { prompts, .. }) => Some(prompts),
            Experiment::Step(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> Experiment {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_pages_flat_parameters_become_the_experiment_they_name() {
        // The page sends every control's value; each experiment takes what it reads.
        let all = json!({"backend": "flex", "draft": "a", "gamma": 3, "prompts": 20, "repeats": 2,
            "seed": 7, "variant": "greedy-rule", "config": "<3,1>", "children": "iid",
            "sampling": false, "lang": "zh"});
        let with = |name: &str| {
            let mut v = all.clone();
            v["experiment"] = name.into();
            parse(v)
        };
        let chain = Chain {
            draft: Draft::A,
            gamma: 3,
            prompts: 20,
        };
        assert_eq!(with("greedy"), Experiment::Greedy(chain));
        assert_eq!(
            with("speedup"),
            Experiment::Speedup(Speedup {
                draft: Draft::A,
                gamma: 3,
                prompts: 20,
                batch: 1,
                shape: Shape::Chain,
                config: "<3,1>".into(),
            })
        );
        assert_eq!(
            with("acceptance"),
            Experiment::Acceptance(Worlds { prompts: 20 })
        );
        let Experiment::Sample(s) = with("sample") else {
            panic!("a sampling experiment")
        };
        assert_eq!((s.repeats, s.seed, s.variant), (2, 7, Variant::GreedyRule));
        let Experiment::Stochastic(t) = with("stochastic") else {
            panic!("a stochastic-tree experiment")
        };
        assert_eq!((t.config.as_str(), t.children), ("<3,1>", Children::Iid));
        let Experiment::Step(st) = with("step") else {
            panic!("a step-through")
        };
        assert!(!st.sampling);
        // What is not given takes the page's default.
        assert_eq!(
            parse(json!({"experiment": "greedy"})),
            Experiment::Greedy(Chain::default())
        );
        assert_eq!(Chain::default().gamma, 4);
        // A name that is no experiment, and a draft that is no draft, are refused.
        let bad = serde_json::from_value::<Experiment>(json!({"experiment": "medusa"}));
        assert!(bad.unwrap_err().to_string().contains("medusa"));
        let bad =
            serde_json::from_value::<Experiment>(json!({"experiment": "greedy", "draft": "c"}));
        let why = bad.unwrap_err().to_string();
        assert!(why.contains("unknown draft \"c\" (known: a, b)"), "{why}");
    }

    #[test]
    fn every_benchmark_experiment_round_trips_as_the_page_sends_it_back() {
        for (name, e) in bench_suite() {
            let back: Experiment =
                serde_json::from_value(serde_json::to_value(&e).unwrap()).unwrap();
            assert_eq!(back, e, "{name}");
            e.check().unwrap();
        }
    }

    #[test]
    fn each_experiment_checks_the_ranges_it_reads_and_only_those() {
        let greedy = |gamma, prompts| {
            Experiment::Greedy(Chain {
                gamma,
                prompts,
                ..Chain::default()
            })
        };
        assert!(greedy(16, 1000).check().is_ok());
        let e = greedy(0, 10).check().unwrap_err().to_string();
        assert!(e.contains("gamma = 0") && e.contains("1 ≤ γ ≤ 16"), "{e}");
        assert!(greedy(17, 10).check().is_err());
        assert!(greedy(4, 0)
            .check()
            .unwrap_err()
            .to_string()
            .contains("prompts = 0"));
        let sample = |repeats| {
            Experiment::Sample(Sampling {
                repeats,
                ..Sampling::default()
            })
        };
        assert!(sample(20).check().is_ok());
        assert!(sample(21)
            .check()
            .unwrap_err()
            .to_string()
            .contains("repeats = 21"));
        // A bad tree stops the tree experiments, not the chains.
        let tree = Experiment::Tree(Tree {
            config: "<2,,1>".into(),
            ..Tree::default()
        });
        assert!(tree
            .check()
            .unwrap_err()
            .to_string()
            .contains("level 2 is empty"));
        let deep = Experiment::Tree(Tree {
            config: "<1,1,1,1,1,1,1,1,1>".into(),
            ..Tree::default()
        });
        assert!(deep
            .check()
            .unwrap_err()
            .to_string()
            .contains("tree depth = 9"));
        let step = |sampling, gamma| {
            Experiment::Step(Step {
                sampling,
                gamma,
                config: "<9,9>".into(),
                ..Step::default()
            })
        };
        assert!(
            step(true, 4).check().is_ok(),
            "a chain step ignores the tree"
        );
        assert!(step(true, 0).check().is_err());
        assert!(step(false, 0)
            .check()
            .unwrap_err()
            .to_string()
            .contains("budget"));
    }

    #[test]
    fn drafts_and_stochastic_rules_parse_as_the_cli_writes_them() {
        assert_eq!(Draft::parse("A").unwrap(), Draft::A);
        assert_eq!(Draft::parse("draft-b").unwrap().index(), 1);
        assert_eq!(Draft::from_index(Draft::A.index()), Draft::A);
        assert!(Draft::parse("c")
            .unwrap_err()
            .to_string()
            .contains("unknown draft \"c\""));
        assert_eq!(Stochastic::parse("mss").unwrap().rule(), TreeRule::Mss);
        let greedy = Stochastic::parse("greedy").unwrap_err().to_string();
        assert!(greedy.contains("naive, mss"), "{greedy}");
    }
}

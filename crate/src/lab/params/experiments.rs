//! The LikesWorld decoding experiments as types: an [`Experiment`] is one of the eleven things the
//! decoding widget (and the CLI's `likesworld` commands) runs, with exactly the parameters that
//! experiment reads, tagged by its name (`{"experiment": "greedy", "draft": "b", "gamma": 4, …}`,
//! the shape the page sends and the benchmark lists). Each checks its values against the ranges
//! of [`super::ranges`]. Plain data: running an experiment is `lab::experiment::run`.

use super::choices::{Beside, Draft};
use super::hidden::StepKind;
use super::hidden::{HiddenRun, MethodsRun};
use super::ranges::{
    tree_widths, DEFAULT_GAMMA, DEFAULT_PROMPTS, DEFAULT_TREE, GAMMA, PROMPTS, REPEATS,
};
use super::timed::{Load, Speedup, Sweep};
use crate::decode::engine::{ChainRule, Method, TreeRule};
use crate::decode::Shape;
use crate::error::Error;
use crate::sampling::multi::Children;
use crate::sampling::speculative::Variant;

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
    /// Speculation under load: the speedup of one chain or tree at every batch of a list, beside
    /// the published serving figures.
    Load(Load),
    /// One seeded run, step by step: a sampling chain, a greedy tree, or a draft on the target's
    /// hidden states.
    Step(Step),
    /// Lecture §5.1–5.2: Medusa's heads or EAGLE's feature draft, its tree drawn beside the
    /// other kind (static beside dynamic).
    Hidden(HiddenRun),
    /// Lecture §6 measured: every method on one wall-clock axis at one node budget.
    Methods(MethodsRun),
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
    /// Demo 03.2's γ values beside `gamma`, or none.
    pub beside: Beside,
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
    /// Demo 04.3's trees beside `config`, or none.
    pub beside: Beside,
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
    /// What runs: a sampling chain (γ, variant), a greedy tree (config), or a draft on the
    /// target's hidden states.
    #[serde(rename = "stepkind")]
    pub kind: StepKind,
    pub gamma: u32,
    pub variant: Variant,
    pub config: String,
    /// Picks the prompt and seeds the run.
    pub seed: u64,
}

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
            beside: Beside::Lecture,
        }
    }
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
            beside: Beside::Lecture,
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
            kind: StepKind::Chain,
            gamma: DEFAULT_GAMMA,
            variant: Variant::Correct,
            config: DEFAULT_TREE.into(),
            seed: 0,
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
            rule: ChainRule::Sample(self.variant.into()),
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
    /// The engine's method this step-through runs, its values checked: a sampling chain or a
    /// greedy tree (None for a draft on the target's hidden states: [`StepKind::hidden`]).
    pub fn method(&self) -> Result<Option<Method>, Error> {
        Ok(match self.kind {
            StepKind::Chain => {
                GAMMA.check(f64::from(self.gamma))?;
                Some(Method::Chain {
                    draft: self.draft.index(),
                    gamma: self.gamma as usize,
                    rule: ChainRule::Sample(self.variant.into()),
                })
            }
            StepKind::Tree => Some(Method::Expand {
                draft: self.draft.index(),
                shape: Shape::Widths(tree_widths(&self.config)?),
                children: Children::TopK,
                rule: TreeRule::Greedy,
            }),
            StepKind::Medusa | StepKind::Eagle2 => None,
        })
    }
}

impl Experiment {
    /// Every experiment with its default parameters, in the order the page lists them.
    pub fn all() -> [Experiment; 11] {
        [
            Experiment::Acceptance(Worlds::default()),
            Experiment::Greedy(Chain::default()),
            Experiment::Sample(Sampling::default()),
            Experiment::Tree(Tree::default()),
            Experiment::Stochastic(StochasticTrees::default()),
            Experiment::Speedup(Speedup::default()),
            Experiment::Sweep(Sweep::default()),
            Experiment::Load(Load::default()),
            Experiment::Step(Step::default()),
            Experiment::Hidden(HiddenRun::default()),
            Experiment::Methods(MethodsRun::default()),
        ]
    }

    /// Whether its report holds wall-clock times (speedup and its sweeps over γ and the batch,
    /// the §6 table, and the hidden-state drafts' c): the page runs such a job alone, since two
    /// jobs at once share the CPU and its memory bandwidth (`www/jobs.js`, told by `presets`).
    pub fn timed(&self) -> bool {
        match self {
            Experiment::Speedup(_)
            | Experiment::Sweep(_)
            | Experiment::Load(_)
            | Experiment::Methods(_)
            | Experiment::Hidden(_) => true,
            Experiment::Acceptance(_)
            | Experiment::Greedy(_)
            | Experiment::Sample(_)
            | Experiment::Tree(_)
            | Experiment::Stochastic(_)
            | Experiment::Step(_) => false,
        }
    }

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
            Experiment::Load(_) => "load",
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
            Experiment::Load(l) => l.check().map(|_| ()),
            Experiment::Sample(s) => s.check(),
            Experiment::Tree(t) => t.check().map(|_| ()),
            Experiment::Stochastic(s) => s.check().map(|_| ()),
            Experiment::Step(s) => s.method().map(|_| ()),
            Experiment::Hidden(h) => h.check(),
            Experiment::Methods(m) => m.check(),
        }
    }
}

impl Experiment {
    /// The number of held-out prompts it decodes, where it has one (the benchmark divides it).
    pub fn prompts_mut(&mut self) -> Option<&mut usize> {
        match self {
            Experiment::Acceptance(Worlds { prompts })
            | Experiment::Greedy(Chain { prompts, .. })
            | Experiment::Speedup(Speedup { prompts, .. })
            | Experiment::Sweep(Sweep { prompts, .. })
            | Experiment::Load(Load { prompts, .. })
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
    use crate::lab::params::choices::Proposing;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> Experiment {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn every_experiment_is_listed_once_and_the_timed_ones_are_the_wall_clocks() {
        // Each listed experiment reads back from its name alone (so every variant's name is
        // its serde tag), and no name is listed twice.
        let all = Experiment::all();
        for e in &all {
            assert_eq!(&parse(json!({ "experiment": e.name() })), e);
        }
        // A new experiment fails to compile here until it is placed, and then this until `all`
        // lists it in that place.
        let place = |e: &Experiment| match e {
            Experiment::Acceptance(_) => 0,
            Experiment::Greedy(_) => 1,
            Experiment::Sample(_) => 2,
            Experiment::Tree(_) => 3,
            Experiment::Stochastic(_) => 4,
            Experiment::Speedup(_) => 5,
            Experiment::Sweep(_) => 6,
            Experiment::Load(_) => 7,
            Experiment::Step(_) => 8,
            Experiment::Hidden(_) => 9,
            Experiment::Methods(_) => 10,
        };
        assert_eq!(
            all.iter().map(place).collect::<Vec<_>>(),
            (0..11).collect::<Vec<_>>()
        );
        let timed: Vec<&str> = all.iter().filter(|e| e.timed()).map(|e| e.name()).collect();
        assert_eq!(timed, ["speedup", "sweep", "load", "hidden", "methods"]);
    }

    #[test]
    fn the_pages_flat_parameters_become_the_experiment_they_name() {
        // The page sends every control's value; each experiment takes what it reads.
        let all = json!({"backend": "flex", "draft": "a", "gamma": 3, "prompts": 20, "repeats": 2,
            "seed": 7, "variant": "greedy-rule", "config": "<3,1>", "children": "iid",
            "stepkind": "tree", "lang": "zh"});
        let with = |name: &str| {
            let mut v = all.clone();
            v["experiment"] = name.into();
            parse(v)
        };
        let chain = Chain {
            draft: Draft::A,
            gamma: 3,
            prompts: 20,
            beside: Beside::Lecture,
        };
        assert_eq!(with("greedy"), Experiment::Greedy(chain));
        assert_eq!(
            with("speedup"),
            Experiment::Speedup(Speedup {
                draft: Draft::A,
                gamma: 3,
                prompts: 20,
                batch: 1,
                shape: Proposing::Chain,
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
        assert_eq!(st.kind, StepKind::Tree);
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
        let step = |kind, gamma| {
            Experiment::Step(Step {
                kind,
                gamma,
                config: "<9,9>".into(),
                ..Step::default()
            })
        };
        assert!(
            step(StepKind::Chain, 4).check().is_ok(),
            "a chain step ignores the tree"
        );
        assert!(step(StepKind::Chain, 0).check().is_err());
        assert!(step(StepKind::Tree, 0)
            .check()
            .unwrap_err()
            .to_string()
            .contains("budget"));
    }
}

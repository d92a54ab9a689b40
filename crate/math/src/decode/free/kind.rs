//! The drafters without a model by name (lecture §5.3, demo 05.1): which one, its budget, and
//! the drafter it builds for a workload. They live with the drafters, below the experiments, so
//! that the experiments' vocabulary (`lab::params`) and the page can name them.

use super::jacobi::{Init, Jacobi, Pool};
use super::lookup::PromptLookup;
use super::suffix::{Indices, SuffixDrafter, SuffixIndex};
use super::workloads::{Kind, Workload};
use super::Drafter;
use crate::error::{Error, Range};
use crate::i18n::Lang;

crate::error::choices! {
    /// The drafters of demo 05.1.
    pub enum DrafterKind("drafter") {
        /// The lecture's Prompt Lookup (n from 3 down to 1, k = budget).
        PromptLookup = "prompt-lookup",
        /// The global suffix index: earlier outputs of the workload.
        Suffix = "suffix",
        /// SuffixDecoding's two trees: the request index (prompt + output, what Prompt Lookup
        /// copies from) and the global index, merged into one tree.
        Both = "both",
        /// Jacobi iteration over a window of `budget` guesses.
        Jacobi = "jacobi",
        /// Lookahead decoding: a Jacobi window and pooled n-grams in one tree.
        Lookahead = "lookahead",
    }
}

impl DrafterKind {
    /// The drafters the budget sweep takes: each proposes a tree (demo 05.2).
    pub const TREES: [DrafterKind; 2] = [DrafterKind::Suffix, DrafterKind::Both];

    /// The drafter as the page's menus and tables name it, in `lang`.
    pub fn menu_label(self, lang: Lang) -> &'static str {
        match self {
            DrafterKind::Suffix => {
                lang.pick("suffix index (earlier outputs)", "后缀索引（以前的输出）")
            }
            DrafterKind::Both => lang.pick(
                "request + global index (SuffixDecoding)",
                "请求 + 全局索引（SuffixDecoding）",
            ),
            other => other.label(lang),
        }
    }

    /// The drafter in the lecture's words, for reports.
    pub fn label(self, lang: Lang) -> &'static str {
        match self {
            DrafterKind::PromptLookup => "Prompt Lookup",
            DrafterKind::Suffix => lang.pick("the suffix index", "后缀索引"),
            DrafterKind::Both => lang.pick(
                "SuffixDecoding (request + global)",
                "SuffixDecoding（请求 + 全局）",
            ),
            DrafterKind::Jacobi => "Jacobi",
            DrafterKind::Lookahead => "Lookahead",
        }
    }
}

crate::error::choices! {
    /// How Jacobi's window starts (demo 05.3): random tokens, or one token repeated.
    #[derive(Default)]
    pub enum JacobiStart("init") {
        #[default]
        Random = "random",
        Fixed = "fixed",
    }
}

impl JacobiStart {
    /// The start as the page's menu offers it, in `lang`.
    pub fn label(self, lang: Lang) -> &'static str {
        match self {
            JacobiStart::Random => lang.pick("random tokens", "随机 token"),
            JacobiStart::Fixed => lang.pick("one token repeated", "重复同一个 token"),
        }
    }
}

/// Speculated tokens per call: k for Prompt Lookup, the node budget of a suffix tree, the
/// window of Jacobi, window + pool for Lookahead.
pub const BUDGET: Range = Range::new("budget", 1.0, 48.0);
/// Requests per workload.
pub const REQUESTS: Range = Range::new("requests", 1.0, 200.0);
/// The request whose drafts the highlight shows: an index below the most requests.
pub const REQUEST: Range = Range::new("request", 0.0, REQUESTS.max - 1.0);
/// Earlier outputs in the global index.
pub const EARLIER: usize = 20;
/// Jacobi's window in demo 05.3.
pub const WINDOW: Range = Range::new("window", 1.0, 24.0);

/// What a run is given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub workload: Kind,
    pub drafter: DrafterKind,
    pub budget: usize,
    pub requests: usize,
    pub seed: u64,
    /// Jacobi's initial guess: one token repeated (true) or random tokens.
    pub fixed_init: bool,
}

impl Settings {
    /// A run from a random initial guess (what every demo but 05.3's fixed start uses).
    pub fn new(
        workload: Kind,
        drafter: DrafterKind,
        budget: usize,
        requests: usize,
        seed: u64,
    ) -> Settings {
        Settings {
            workload,
            drafter,
            budget,
            requests,
            seed,
            fixed_init: false,
        }
    }

    pub fn check(&self) -> Result<(), Error> {
        BUDGET.check(self.budget as f64)?;
        REQUESTS.check(self.requests as f64)?;
        Ok(())
    }
}

/// The drafter of `s` for workload `w`, its global index holding the earlier outputs.
pub fn drafter(s: &Settings, w: &Workload) -> Box<dyn Drafter> {
    let global = || {
        let mut index = SuffixIndex::new();
        index.add_documents(w.earlier.iter().map(Vec::as_slice));
        index
    };
    let init = if s.fixed_init {
        Init::Fixed(0)
    } else {
        Init::Random(s.seed)
    };
    match s.drafter {
        DrafterKind::PromptLookup => {
            Box::new(PromptLookup::new(3, 1, s.budget).expect("checked budget"))
        }
        DrafterKind::Suffix => Box::new(SuffixDrafter::new(Indices::Global, s.budget, global())),
        DrafterKind::Both => Box::new(SuffixDrafter::new(Indices::Both, s.budget, global())),
        DrafterKind::Jacobi => Box::new(Jacobi::new(s.budget, init, None, w.vocab())),
        DrafterKind::Lookahead => {
            let window = s.budget.div_ceil(2);
            let pool = Pool {
                n: 3,
                candidates: ((s.budget - window) / 2).max(1),
            };
            Box::new(Jacobi::new(window, init, Some(pool), w.vocab()))
        }
    }
}

//! Speculative decoding with models: a draft proposes, the target verifies everything in one
//! call (lecture §2.4, §4.4–4.5; Leviathan et al. Algorithm 1; SpecInfer Algorithm 2).
//!
//! The engine is written once, against two small traits, so that the same loops run on the toy
//! LM of [`crate::toy`] (where every random choice can be enumerated, which checks the engine
//! itself exactly), on the burn decoders on every backend (put behind the traits by the
//! experiments' room, `lab`: this module knows no burn), and on model-free drafters:
//!
//! - [`LanguageModel`]: "a model that scores tokens on a KV cache". One call scores the next token
//!   after a context *and* after every node of a speculated tree hanging off the context's last
//!   token (a chain is a tree with one child per node). Keeping or rolling back the cache is the
//!   model's business: it sees the next context and keeps whatever of its cache still matches
//!   (the accepted path), so the engine never has to say "roll back".
//! - [`Chance`]: every random choice the engine makes. Real runs draw from a seeded generator;
//!   tests walk every branch with its probability ([`chance::enumerate`]).
//!
//! A step is `propose` (the drafts build a [`Proposal`], in [`propose`]) then `verify` (one target
//! call, then a rule walks the tree). [`engine`] holds the step, the verification and the
//! generation loop; [`batch`] runs many
//! generations at once, batching their model calls; [`stats`] what a run counts; [`toy`] the toy
//! LM as a [`LanguageModel`]; [`gallery`] the bugs of real runtimes re-created on the toy (one
//! Algorithm 1 against [`Chance`]) and the tests put to them. Model calls are async (a browser reads a
//! WebGPU buffer back only asynchronously), so the loops are async; native callers block on
//! them as the model code does.

pub mod batch;
pub mod chance;
pub mod engine;
pub mod free;
pub mod gallery;
pub mod propose;
pub mod stats;
pub mod toy;

pub use chance::{Chance, Seeded};

/// Runs a future that never waits to completion, without an executor: the toy LM and the rule
/// targets answer at once, so the engine's own tests need neither burn nor an async runtime.
#[cfg(test)]
pub fn ready<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => panic!("a future of the toy engine waited"),
    }
}
pub use engine::{generate, step, ChainRule, Config, Method, TreeRule};
pub use propose::Shape;
pub use stats::{Generation, Source, Stats};

use crate::error::Error;
use crate::sampling::Dist;

/// Speculated tokens hanging off the context's last token (the root). Parents come before their
/// children; `None` is the root.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Speculation {
    pub tokens: Vec<u32>,
    pub parents: Vec<Option<usize>>,
}

impl Speculation {
    /// A chain: each token the child of the one before.
    pub fn chain(tokens: &[u32]) -> Speculation {
        Speculation {
            tokens: tokens.to_vec(),
            parents: (0..tokens.len()).map(|i| i.checked_sub(1)).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Adds a node and returns its index.
    pub fn push(&mut self, token: u32, parent: Option<usize>) -> usize {
        debug_assert!(parent.is_none_or(|p| p < self.tokens.len()));
        self.tokens.push(token);
        self.parents.push(parent);
        self.tokens.len() - 1
    }

    /// Depth of every node (children of the root have depth 1).
    pub fn depths(&self) -> Vec<usize> {
        let mut d = Vec::with_capacity(self.len());
        for p in &self.parents {
            d.push(p.map_or(1, |p| d[p] + 1));
        }
        d
    }

    /// The nodes from the root's child down to `node`.
    pub fn path_to(&self, node: usize) -> Vec<usize> {
        let mut path = vec![node];
        while let Some(p) = self.parents[*path.last().expect("non-empty")] {
            path.push(p);
        }
        path.reverse();
        path
    }

    /// Whether node `a` is `b` or one of its ancestors.
    pub fn is_ancestor(&self, a: usize, b: usize) -> bool {
        let mut at = Some(b);
        while let Some(n) = at {
            if n == a {
                return true;
            }
            at = self.parents[n];
        }
        false
    }
}

/// A model that scores tokens on its own KV cache.
///
/// `score(context, tree)` returns `tree.len() + 1` next-token distributions: the first after
/// `context`, then one after each node (the context followed by the root-to-node path). An
/// implementation may keep whatever it cached of an earlier call that is a prefix of `context`
/// (plus the path of an earlier tree that `context` followed): that is the rollback after a
/// rejection and the "keep the accepted path" after a tree verify.
#[allow(async_fn_in_trait)] // the engine is generic over models; nobody needs `dyn` or `Send`
pub trait LanguageModel {
    /// Vocabulary size.
    fn vocab(&self) -> usize;
    /// Next-token distributions after `context` and after each node of `tree`.
    async fn score(&mut self, context: &[u32], tree: &Speculation) -> Result<Vec<Dist>, Error>;
}

/// One candidate child to verify at a tree position: the node, and the distribution it was
/// drawn from when it was sampled (`None`: chosen deterministically, as greedy drafts are).
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub node: usize,
    pub q: Option<Dist>,
}

/// What the drafts propose for one target call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Proposal {
    pub tree: Speculation,
    /// Per tree position (0: the root, 1 + i: node i), the candidates verified there, in order.
    /// Several candidates may name one node (two drafts that proposed the same token).
    pub candidates: Vec<Vec<Candidate>>,
    /// Per tree position, the draft's own next-token distribution there, where one was computed
    /// (for the statistics: what the draft thought of the token the target emitted).
    pub q: Vec<Option<Dist>>,
    /// Draft calls made.
    pub draft_calls: usize,
    /// Per node, where its token came from.
    pub sources: Vec<stats::Source>,
}

impl Proposal {
    pub fn empty() -> Proposal {
        Proposal {
            candidates: vec![Vec::new()],
            q: vec![None],
            ..Proposal::default()
        }
    }

    /// Adds a node under tree position `at` (0: the root), as a candidate drawn from `q`.
    pub fn add(&mut self, at: usize, token: u32, q: Option<Dist>) -> usize {
        let node = self.tree.push(token, at.checked_sub(1));
        self.candidates[at].push(Candidate { node, q });
        self.candidates.push(Vec::new());
        self.q.push(None);
        self.sources.push(stats::Source::Draft);
        node
    }

    /// The child of position `at` holding `token`, if any.
    pub fn child(&self, at: usize, token: u32) -> Option<usize> {
        self.candidates[at]
            .iter()
            .map(|c| c.node)
            .find(|&n| self.tree.tokens[n] == token)
    }

    /// A deterministic candidate `token` under position `at` from `source`, unless that child
    /// exists already. Returns the node and whether it is new.
    pub fn offer(&mut self, at: usize, token: u32, source: stats::Source) -> (usize, bool) {
        match self.child(at, token) {
            Some(node) => (node, false),
            None => {
                let node = self.add(at, token, None);
                self.sources[node] = source;
                (node, true)
            }
        }
    }

    /// Adds `token` under position `at` as a candidate drawn from `q`, reusing the child that
    /// already holds that token (a merge tree stores shared prefixes once). Returns the node.
    pub fn merge(&mut self, at: usize, token: u32, q: Option<Dist>) -> usize {
        let existing = (0..self.tree.len())
            .find(|&n| self.tree.parents[n] == at.checked_sub(1) && self.tree.tokens[n] == token);
        match existing {
            Some(node) => {
                self.candidates[at].push(Candidate { node, q });
                node
            }
            None => self.add(at, token, q),
        }
    }
}

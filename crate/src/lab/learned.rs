//! Learned speculators and collective boost-tuning (lecture §4.2), measured: a pool of small
//! models, each proposing a chain of γ (greedy, or sampled at T = 1), their chains merged into one
//! token tree (shared prefixes once) and verified in one target call with VerifyGreedy or MSS
//! ([`pool_report`]); what each member matches of the target's greedy output alone and the pool
//! together (coverage); tokens per call, tree size, greedy identity, and the wall-clock speedup
//! over the target alone. A pool of one is a trained draft's plain chain: how `specdec train
//! --model draft` reports the draft it trained; [`check`] is the same batched, without the wall
//! clock, with α by token kind: the training widget's quick check.
//!
//! Natively and in the page's training module this room also makes the training corpus
//! ([`corpus`]: the target's greedy outputs on training worlds, or their text) that
//! `model::distill` trains on, and reads the page's training parameters ([`TrainParams`]).

use super::acceptance::{alpha_by_kind, KindAlpha};
use super::context::Lab;
use super::lm::{Batch, Cached};
use crate::clock::Progress;
use crate::decode::batch::{generate_all, Job};
use crate::decode::chance::Seeded;
use crate::decode::engine::{generate, Config, Method, TreeRule};
use crate::decode::stats::{Generation, Stats};
use crate::error::{Error, Range};
use crate::i18n::Lang;
use crate::likesworld::{self, EOS};
use crate::model::eval::distributions_many;
use crate::model::Decoder;
use crate::sampling::argmax;

/// What a pool does on the experiments' prompts.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PoolReport {
    pub pool: usize,
    /// Trained with the filter (boost-tuning) or without (the control); `None`: not a pool.
    pub boosted: Option<bool>,
    pub gamma: usize,
    /// How the merged tree is verified: `greedy` (VerifyGreedy, the members' greedy chains) or
    /// `mss` (the members' chains sampled at T = 1, multi-step speculative sampling).
    pub verify: &'static str,
    pub prompts: usize,
    pub target_width: usize,
    /// Outputs identical to the target's own greedy output (greedy only: sampled outputs keep
    /// the target's distribution, not its tokens).
    pub identical: Option<usize>,
    pub tokens_per_call: f64,
    /// Speculated nodes verified per target call (the merged tree's size).
    pub tree_nodes: f64,
    /// Drafted tokens tested, and the fraction accepted.
    pub alpha: f64,
    /// Per member: the fraction of the target's output tokens it predicts (teacher-forced
    /// argmax), alone and the pool up to it together.
    pub coverage: Vec<Coverage>,
    /// Target alone over the pool's speculation, wall clock per output token, one prompt at a
    /// time.
    pub measured_speedup: f64,
    /// The spread (IQR) of the same ratio prompt by prompt: how far one run's speedup may move.
    pub measured_speedup_iqr: f64,
    pub target_ms: f64,
    pub speculative_ms: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Coverage {
    pub alone: f64,
    pub pool: f64,
}

crate::error::choices! {
    /// How a pool's merged tree is verified (lecture §4.2–4.5): VerifyGreedy on the members' greedy
    /// chains, or MSS on their chains sampled at T = 1.
    pub enum PoolVerify("pool verification") {
        Greedy = "greedy",
        Mss = "mss",
    }
}

impl PoolVerify {
    /// The verification as the boost widget's menu offers it, in `lang`.
    pub fn label(self, lang: Lang) -> &'static str {
        match self {
            PoolVerify::Greedy => {
                lang.pick("VerifyGreedy (greedy chains)", "VerifyGreedy（贪心链）")
            }
            PoolVerify::Mss => lang.pick("MSS (sampled chains)", "MSS（采样的链）"),
        }
    }

    pub fn rule(self) -> TreeRule {
        match self {
            PoolVerify::Greedy => TreeRule::Greedy,
            PoolVerify::Mss => TreeRule::Mss,
        }
    }
}

/// `pool`'s merged chains of `gamma` on `prompts` held-out prompts on the lab's target, verified
/// by `rule`: VerifyGreedy (greedy chains) or MSS (chains sampled at T = 1; the target samples).
pub async fn pool_report(
    lab: &Lab<'_>,
    pool: &[Decoder],
    boosted: Option<bool>,
    (gamma, rule): (usize, TreeRule),
    prompts: usize,
    progress: Progress<'_>,
) -> Result<PoolReport, Error> {
    let m = lab.models;
    let d = &m.draft_device;
    let (prompts, reference, speculative) = speculate(lab, pool, (gamma, rule), prompts).await?;
    let n = prompts.len() * 2;
    let mut done = prompts.len();
    progress(done, n);
    let merge = Method::Merge { gamma, rule };
    let (identical, stats) = tally(&reference, &speculative);
    let greedy = rule == TreeRule::Greedy;
    // Coverage on the target's own greedy outputs, whatever the verification (a property of
    // the members, not of one sampled run).
    let greedy_outputs = match greedy {
        true => reference,
        false => target_outputs(lab, &prompts, true).await?,
    };
    let rows: Vec<Vec<u32>> = prompts
        .iter()
        .zip(&greedy_outputs)
        .map(|(p, r)| p.iter().chain(&r.output).copied().collect())
        .collect();
    let mut covered: Vec<Vec<bool>> = Vec::new();
    let mut coverage = Vec::with_capacity(pool.len());
    let total: usize = greedy_outputs.iter().map(|r| r.output.len()).sum();
    for member in pool {
        let dists = distributions_many(member, &rows, d).await?;
        let hit: Vec<Vec<bool>> = rows
            .iter()
            .zip(&prompts)
            .zip(&dists)
            .map(|((row, p), dist)| {
                (p.len()..row.len())
                    .map(|t| argmax(&dist[t - 1]) == row[t] as usize)
                    .collect()
            })
            .collect();
        if covered.is_empty() {
            covered = hit.iter().map(|h| vec![false; h.len()]).collect();
        }
        for (c, h) in covered.iter_mut().zip(&hit) {
            for (c, h) in c.iter_mut().zip(h) {
                *c |= *h;
            }
        }
        let count = |v: &[Vec<bool>]| v.iter().flatten().filter(|&&b| b).count() as f64;
        coverage.push(Coverage {
            alone: count(&hit) / total.max(1) as f64,
            pool: count(&covered) / total.max(1) as f64,
        });
    }
    let config = to_the_end;
    // The wall clock: one prompt at a time, the target alone, then the pool; the first prompt
    // once untimed before (the first calls pay for allocations and warm caches).
    let alone = Method::Target { greedy };
    if let Some(p) = prompts.first() {
        timed(lab, &[], p, &config(alone.clone()), 0).await?;
        timed(lab, pool, p, &config(merge.clone()), 0).await?;
    }
    let (mut target_us, mut spec_us) = (0.0, 0.0);
    let (mut target_tokens, mut spec_tokens) = (0, 0);
    // Per token: sampled runs (MSS) give outputs of different lengths (greedy ones the same).
    let per_token = |us: f64, tokens: usize| us / tokens.max(1) as f64;
    let mut each = Vec::with_capacity(prompts.len());
    for (i, p) in prompts.iter().enumerate() {
        let (t_us, t_tokens) = timed(lab, &[], p, &config(alone.clone()), i as u64).await?;
        (target_us, target_tokens) = (target_us + t_us, target_tokens + t_tokens);
        let (s_us, s_tokens) = timed(lab, pool, p, &config(merge.clone()), i as u64).await?;
        (spec_us, spec_tokens) = (spec_us + s_us, spec_tokens + s_tokens);
        each.push(per_token(t_us, t_tokens) / per_token(s_us, s_tokens).max(1e-9));
        done += 1;
        progress(done, n);
    }
    Ok(PoolReport {
        pool: pool.len(),
        boosted,
        gamma,
        verify: rule.name(),
        prompts: prompts.len(),
        target_width: m.target_width(),
        identical: greedy.then_some(identical),
        tokens_per_call: stats.tokens as f64 / stats.target_calls.max(1) as f64,
        tree_nodes: stats.verified_nodes as f64 / stats.target_calls.max(1) as f64,
        alpha: stats.passed as f64 / stats.tested.max(1) as f64,
        coverage,
        measured_speedup: per_token(target_us, target_tokens)
            / per_token(spec_us, spec_tokens).max(1e-9),
        measured_speedup_iqr: match each.is_empty() {
            true => 0.0,
            false => crate::model::measure::iqr(each),
        },
        target_ms: target_us / 1e3,
        speculative_ms: spec_us / 1e3,
    })
}

/// A decoding of LikesWorld to its end by `method`.
fn to_the_end(method: Method) -> Config {
    Config {
        method,
        max_len: likesworld::MAX_LEN,
        eos: Some(EOS),
        trace: false,
    }
}

/// Prompt `i` with seed `i`.
fn jobs(prompts: &[Vec<u32>]) -> Vec<Job<Seeded>> {
    prompts
        .iter()
        .enumerate()
        .map(|(i, p)| Job {
            prompt: p.clone(),
            chance: Seeded::new(i as u64),
        })
        .collect()
}

/// The target's own outputs of `prompts`, greedy or sampled (batched).
async fn target_outputs(
    lab: &Lab<'_>,
    prompts: &[Vec<u32>],
    greedy: bool,
) -> Result<Vec<Generation>, Error> {
    let m = lab.models;
    generate_all(
        vec![Batch::new(&m.target, &m.device, 1.0, 16)],
        jobs(prompts),
        &to_the_end(Method::Target { greedy }),
        super::generate::BATCH_ROWS,
        lab.clock,
        &mut |_, _| {},
    )
    .await
}

/// `prompts` held-out prompts; the target's own outputs of them (greedy, or sampled under MSS),
/// and the pool's merged chains of `gamma` verified by `rule` (batched: no wall clock). Prompt
/// `i` draws from seed `i`.
async fn speculate(
    lab: &Lab<'_>,
    pool: &[Decoder],
    (gamma, rule): (usize, TreeRule),
    prompts: usize,
) -> Result<(Vec<Vec<u32>>, Vec<Generation>, Vec<Generation>), Error> {
    let m = lab.models;
    let (d, dd) = (&m.device, &m.draft_device);
    let prompts: Vec<Vec<u32>> = likesworld::prompts(prompts)
        .iter()
        .map(|w| w.prompt())
        .collect();
    let reference = target_outputs(lab, &prompts, rule == TreeRule::Greedy).await?;
    let merge = Method::Merge { gamma, rule };
    let mut batches = vec![Batch::new(&m.target, d, 1.0, 16)];
    batches.extend(pool.iter().map(|p| Batch::new(p, dd, 1.0, 16)));
    let speculative = generate_all(
        batches,
        jobs(&prompts),
        &to_the_end(merge),
        super::generate::BATCH_ROWS,
        lab.clock,
        &mut |_, _| {},
    )
    .await?;
    Ok((prompts, reference, speculative))
}

/// Outputs identical to the target's own, and the speculative runs' statistics summed.
fn tally(reference: &[Generation], speculative: &[Generation]) -> (usize, Stats) {
    let identical = reference
        .iter()
        .zip(speculative)
        .filter(|(r, s)| r.output == s.output)
        .count();
    let mut stats = Stats::default();
    for g in speculative {
        stats.add(&g.stats);
    }
    (identical, stats)
}

/// A trained draft checked as a draft in use (the training widget's quick check, every few
/// steps): its greedy chain of γ on held-out prompts, batched; for a pool, the members' chains
/// merged into one tree.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DraftCheck {
    pub pool: usize,
    pub gamma: usize,
    pub prompts: usize,
    /// Outputs identical to the target's own greedy output.
    pub identical: usize,
    pub tokens_per_call: f64,
    /// Speculated nodes verified per target call.
    pub tree_nodes: f64,
    pub alpha: f64,
    /// α by the kind of the token tested.
    pub by_kind: Vec<KindAlpha>,
}

/// [`DraftCheck`] of `pool` (one draft, or a pool's members) on the lab's target.
pub async fn check(
    lab: &Lab<'_>,
    pool: &[Decoder],
    gamma: usize,
    prompts: usize,
) -> Result<DraftCheck, Error> {
    let (prompts, reference, speculative) =
        speculate(lab, pool, (gamma, TreeRule::Greedy), prompts).await?;
    let (identical, stats) = tally(&reference, &speculative);
    let runs: Vec<(Vec<u32>, Generation)> = prompts.iter().cloned().zip(speculative).collect();
    Ok(DraftCheck {
        pool: pool.len(),
        gamma,
        prompts: prompts.len(),
        identical,
        tokens_per_call: stats.tokens as f64 / stats.target_calls.max(1) as f64,
        tree_nodes: stats.verified_nodes as f64 / stats.target_calls.max(1) as f64,
        alpha: stats.passed as f64 / stats.tested.max(1) as f64,
        by_kind: alpha_by_kind(&runs),
    })
}

/// One generation of `prompt` by the lab's target with `pool`'s members as its drafts (none: the
/// target alone), fresh caches, drawing from `seed`: its wall time in µs and its output tokens.
async fn timed(
    lab: &Lab<'_>,
    pool: &[Decoder],
    prompt: &[u32],
    config: &Config,
    seed: u64,
) -> Result<(f64, usize), Error> {
    let (d, dd) = (&lab.models.device, &lab.models.draft_device);
    let mut target = Cached::new(&lab.models.target, d, 1.0);
    let mut drafts: Vec<Cached> = pool.iter().map(|p| Cached::new(p, dd, 1.0)).collect();
    let start = (lab.clock)();
    let g = generate(
        &mut target,
        &mut drafts,
        prompt,
        config,
        &mut Seeded::new(seed),
        lab.clock,
    )
    .await?;
    Ok(((lab.clock)() - start, g.output.len()))
}

/// The corpus a draft distils from (natively): `n` training worlds; for the target's teachers
/// their prompts continued by the target's greedy decoding, for the text teacher their text;
/// learned from the end of the prompt on.
#[cfg(any(not(target_arch = "wasm32"), feature = "train"))]
pub async fn corpus(
    lab: &Lab<'_>,
    teacher: crate::model::distill::Teacher,
    n: usize,
    seed: u64,
    progress: Progress<'_>,
) -> Result<crate::model::distill::Corpus, Error> {
    use crate::likesworld::{worlds, Split};
    use crate::model::distill::{Corpus, Teacher};
    let worlds = worlds(Split::Train, seed, n);
    let prompts: Vec<Vec<u32>> = worlds.iter().map(|w| w.prompt()).collect();
    let from: Vec<usize> = prompts.iter().map(Vec::len).collect();
    let rows = match teacher {
        Teacher::Text => worlds.iter().map(|w| w.tokens()).collect(),
        Teacher::Greedy | Teacher::Kl => {
            let outputs =
                super::generate::target_greedy(lab.models, &prompts, lab.clock, progress).await?;
            prompts
                .iter()
                .zip(outputs)
                .map(|(p, g)| p.iter().copied().chain(g.output).collect())
                .collect()
        }
    };
    Ok(Corpus::new(rows, &from))
}

/// The page's training run (the training module's parameters; natively `specdec train` reads
/// the same from its options, with wider bounds): a draft of `shape` distilled from `teacher`
/// for `steps` steps of `batch` rows drawn from `corpus` training worlds, seeded; or a pool of
/// `pool` such drafts, boost-tuned (`filter`) or not, `steps` each on the target's greedy
/// outputs; checked with greedy chains of `gamma` on `prompts` held-out prompts.
#[cfg(any(not(target_arch = "wasm32"), feature = "train"))]
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default)]
pub struct TrainParams {
    pub shape: String,
    pub teacher: String,
    pub seed: u64,
    pub steps: usize,
    pub batch: usize,
    pub corpus: usize,
    pub gamma: usize,
    pub prompts: usize,
    /// 1: one draft; more: a pool (lecture §4.2), its members' chains merged into one tree.
    pub pool: usize,
    /// A pool's next members learn only what the pool misses (boost-tuning); off: the control.
    pub filter: bool,
}

#[cfg(any(not(target_arch = "wasm32"), feature = "train"))]
impl Default for TrainParams {
    fn default() -> Self {
        TrainParams {
            shape: "a".into(),
            teacher: "greedy".into(),
            seed: 1,
            steps: 1000,
            batch: 64,
            corpus: 1024,
            gamma: 4,
            prompts: 50,
            pool: 1,
            filter: true,
        }
    }
}

/// The page's bounds: what a browser tab trains in minutes and holds in its memory.
pub const TRAIN_STEPS: Range = Range::new("steps", 1.0, 20_000.0);
pub const TRAIN_BATCH: Range = Range::new("batch", 1.0, 256.0);
pub const TRAIN_CORPUS: Range = Range::new("corpus", 16.0, 4096.0);
pub const TRAIN_GAMMA: Range = Range::new("gamma", 1.0, 8.0).shown_as("γ");
pub const TRAIN_PROMPTS: Range = Range::new("prompts", 1.0, 500.0);

#[cfg(any(not(target_arch = "wasm32"), feature = "train"))]
impl TrainParams {
    /// The run these parameters ask for, every value checked (the first bad one named).
    pub fn config(&self) -> Result<crate::model::distill::DistillConfig, Error> {
        use crate::error::Named;
        use crate::model::distill::{DistillConfig, Teacher};
        let shape = crate::model::draft_file::shape(&self.shape)?;
        let teacher = Teacher::parse(&self.teacher)?;
        TRAIN_STEPS.check(self.steps as f64)?;
        TRAIN_BATCH.check(self.batch as f64)?;
        TRAIN_CORPUS.check(self.corpus as f64)?;
        TRAIN_GAMMA.check(self.gamma as f64)?;
        TRAIN_PROMPTS.check(self.prompts as f64)?;
        crate::model::draft_file::POOL.check(self.pool as f64)?;
        if self.pool > 1 && teacher != Teacher::Greedy {
            return Err(Error::Unavailable {
                what: "training",
                why: crate::error::Text::new(
                    format!("a pool learns from the target's greedy outputs (its members match the target's tokens), not from the {} teacher", teacher.name()),
                    format!("池只从目标模型的贪心输出学习（它的成员要和目标模型的 token 一致），不能用 {} 教师信号", teacher.name()),
                ),
            });
        }
        let mut config = DistillConfig::new(shape, teacher, self.seed, self.steps);
        config.batch = self.batch;
        // The held-out accuracy reads tensors back synchronously: the page's check is the
        // decoding one (`check`), asynchronous.
        config.eval_every = 0;
        Ok(config)
    }
}

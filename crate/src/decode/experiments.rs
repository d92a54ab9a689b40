//! The LikesWorld decoding experiments of lecture §3–§4 (demos 03.1–03.3, 04.3–04.5), on the
//! burn models of any backend. Each returns a plain serde report; the CLI prints it and the page
//! draws it. Prompts are held-out worlds (the facts); every random run takes a seed.

use super::batch::{generate_all, Job};
use super::chance::Seeded;
use super::engine::{generate, ChainRule, Config, Method, TreeRule};
use super::stats::{Generation, Span, Stats};
use crate::error::Error;
use crate::likesworld::{self, token_kinds, worlds, Split, TokenKind, World, EOS, Q};
use crate::model::bench::Clock;
use crate::model::lm::{Batch, Cached};
use crate::model::Models;
use crate::sampling::multi::{verify_given, Children, Mode};
use crate::sampling::speculative::Variant;
use crate::sampling::{argmax, overlap, tv};
use crate::theory;

/// Reports progress: (done, total).
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize);

/// Seed of the held-out worlds the experiments decode.
pub const WORLD_SEED: u64 = 17;

/// The prompts: the facts of `n` held-out worlds.
pub fn prompts(n: usize) -> Vec<World> {
    worlds(Split::HeldOut, WORLD_SEED, n)
}

/// A seed per (run, prompt, repeat), so that runs are independent and replayable.
pub fn derive_seed(seed: u64, i: usize, r: usize) -> u64 {
    let mut z = seed ^ ((i as u64) << 20) ^ (r as u64) ^ 0x9E37_79B9_7F4A_7C15;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One generation with the three models of `models` (drafts: 0 = A, 1 = B).
pub async fn run(
    models: &Models,
    method: Method,
    temperature: f64,
    prompt: &[u32],
    seed: u64,
    trace: bool,
    clock: Clock<'_>,
) -> Result<Generation, Error> {
    let d = &models.device;
    let mut target = Cached::new(&models.target, d, temperature);
    let mut drafts = [
        Cached::new(&models.draft_a, d, temperature),
        Cached::new(&models.draft_b, d, temperature),
    ];
    generate(
        &mut target,
        &mut drafts,
        prompt,
        &config(method, trace),
        &mut Seeded::new(seed),
        clock,
    )
    .await
}

/// Sequences decoded at once in a batched run (the target's cache for 256 rows of 64 slots is
/// 4 MB).
pub const BATCH_ROWS: usize = 1024;

/// Forgotten cache slots a batched run tolerates before compacting the cache.
const SLACK: usize = 16;

/// One generation per (prompt, seed) with `method`, all at once, every model call batched across
/// them (see [`super::batch`]): what [`run`] does for each, in far fewer model calls.
pub async fn run_all(
    models: &Models,
    method: Method,
    temperature: f64,
    jobs: Vec<(Vec<u32>, u64)>,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<Vec<Generation>, Error> {
    let d = &models.device;
    let batch = |m| Batch::new(m, d, temperature, SLACK);
    let jobs = jobs
        .into_iter()
        .map(|(prompt, seed)| Job {
            prompt,
            chance: Seeded::new(seed),
        })
        .collect();
    let models = vec![
        batch(&models.target),
        batch(&models.draft_a),
        batch(&models.draft_b),
    ];
    let config = config(method, false);
    generate_all(models, jobs, &config, BATCH_ROWS, clock, progress).await
}

/// How the experiments decode a LikesWorld prompt with `method`: up to the longest world, ending
/// at EOS.
fn config(method: Method, trace: bool) -> Config {
    Config {
        method,
        max_len: likesworld::MAX_LEN,
        eos: Some(EOS),
        trace,
    }
}

/// Measured acceptance of one token kind.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KindAlpha {
    pub kind: TokenKind,
    pub tested: usize,
    pub passed: usize,
    pub alpha: f64,
}

/// α by the kind of the output token at each tested position.
fn alpha_by_kind(runs: &[(Vec<u32>, Generation)]) -> Vec<KindAlpha> {
    let mut rows: Vec<KindAlpha> = KINDS
        .iter()
        .map(|&kind| KindAlpha {
            kind,
            tested: 0,
            passed: 0,
            alpha: f64::NAN,
        })
        .collect();
    for (prompt, g) in runs {
        let mut seq = prompt.clone();
        seq.extend(&g.output);
        let kinds = token_kinds(&seq);
        for &(at, passed) in &g.tests {
            let k = kinds[prompt.len() + at];
            let row = rows.iter_mut().find(|r| r.kind == k).expect("every kind");
            row.tested += 1;
            row.passed += usize::from(passed);
        }
    }
    rows.retain(|r| r.tested > 0);
    rows.iter_mut()
        .for_each(|r| r.alpha = r.passed as f64 / r.tested as f64);
    rows
}

const KINDS: [TokenKind; 4] = [
    TokenKind::Boilerplate,
    TokenKind::RandomFact,
    TokenKind::QuestionName,
    TokenKind::Answer,
];

/// Demo 03.1: acceptance by token kind, teacher-forced over whole held-out worlds.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KindAcceptance {
    pub kind: TokenKind,
    pub positions: usize,
    /// Sampling acceptance β = Σ min(p, q) of draft A and B.
    pub beta: [f64; 2],
    /// Greedy acceptance: how often each draft's argmax is the target's.
    pub greedy: [f64; 2],
}

/// Sequences scored in one teacher-forced forward by the experiments that need every position's
/// distribution.
const DISTRIBUTION_CHUNK: usize = 64;

pub async fn acceptance_by_kind(
    models: &Models,
    n: usize,
    progress: Progress<'_>,
) -> Result<Vec<KindAcceptance>, Error> {
    use crate::views::likesworld::distributions_many;
    let mut sums = [[0.0f64; 5]; 4]; // per kind: positions, β A, β B, greedy A, greedy B
    let worlds = prompts(n);
    let mut done = 0;
    // Teacher-forced forwards over many worlds at once (one model call per chunk, not per world).
    for chunk in worlds.chunks(DISTRIBUTION_CHUNK) {
        let seqs: Vec<Vec<u32>> = chunk.iter().map(World::tokens).collect();
        let d = &models.device;
        let p = distributions_many(&models.target, &seqs, d).await?;
        let a = distributions_many(&models.draft_a, &seqs, d).await?;
        let b = distributions_many(&models.draft_b, &seqs, d).await?;
        for (i, tokens) in seqs.iter().enumerate() {
            let (p, a, b) = (&p[i], &a[i], &b[i]);
            let kinds = token_kinds(tokens);
            for j in 0..tokens.len() - 1 {
                let k = KINDS
                    .iter()
                    .position(|&k| k == kinds[j + 1])
                    .expect("a kind");
                let top = argmax(&p[j]);
                let s = &mut sums[k];
                s[0] += 1.0;
                s[1] += overlap(&p[j], &a[j]);
                s[2] += overlap(&p[j], &b[j]);
                s[3] += f64::from(u8::from(argmax(&a[j]) == top));
                s[4] += f64::from(u8::from(argmax(&b[j]) == top));
            }
        }
        done += chunk.len();
        progress(done, n);
    }
    Ok(KINDS
        .iter()
        .zip(sums)
        .filter(|(_, s)| s[0] > 0.0)
        .map(|(&kind, s)| KindAcceptance {
            kind,
            positions: s[0] as usize,
            beta: [s[1] / s[0], s[2] / s[0]],
            greedy: [s[3] / s[0], s[4] / s[0]],
        })
        .collect())
}

/// The target's own greedy output for each prompt (the reference greedy runs must equal).
pub async fn target_greedy(
    models: &Models,
    prompts: &[Vec<u32>],
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<Vec<Generation>, Error> {
    let jobs = prompts.iter().map(|p| (p.clone(), 0)).collect();
    let m = Method::Target { greedy: true };
    run_all(models, m, 1.0, jobs, clock, progress).await
}

/// Demo 03.2 (and 04.3 for trees): greedy speculative decoding against the target's own.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GreedyReport {
    pub method: String,
    pub prompts: usize,
    /// Outputs identical to the target's own greedy output.
    pub identical: usize,
    pub tokens: usize,
    pub target_calls: usize,
    pub draft_calls: usize,
    pub tokens_per_call: f64,
    pub verified_nodes_per_call: f64,
    /// Measured α (drafted positions that passed / tested) and E(α, γ) of the i.i.d. formula.
    pub alpha: f64,
    pub formula_tokens_per_call: Option<f64>,
    pub accepted: Vec<usize>,
    pub by_kind: Vec<KindAlpha>,
    /// The target's own greedy decoding: calls (= tokens).
    pub reference_calls: usize,
}

/// Greedy decoding of every prompt with `method`, compared with `reference`.
pub async fn greedy(
    models: &Models,
    method: Method,
    prompts: &[Vec<u32>],
    reference: &[Generation],
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<GreedyReport, Error> {
    let jobs = prompts.iter().map(|p| (p.clone(), 0)).collect();
    let gens = run_all(models, method.clone(), 1.0, jobs, clock, progress).await?;
    let mut stats = Stats::default();
    let mut identical = 0;
    for (g, r) in gens.iter().zip(reference) {
        identical += usize::from(g.output == r.output);
        stats.add(&g.stats);
    }
    let runs: Vec<(Vec<u32>, Generation)> = prompts.iter().cloned().zip(gens).collect();
    let alpha = stats.alpha();
    let formula = match &method {
        Method::Chain { gamma, .. } => Some(theory::expected_tokens(alpha, *gamma as u32)),
        _ => None,
    };
    Ok(GreedyReport {
        method: describe(&method),
        prompts: prompts.len(),
        identical,
        tokens: stats.tokens,
        target_calls: stats.target_calls,
        draft_calls: stats.draft_calls,
        tokens_per_call: stats.tokens_per_call(),
        verified_nodes_per_call: stats.verified_per_call(),
        alpha,
        formula_tokens_per_call: formula,
        accepted: stats.accepted.clone(),
        by_kind: alpha_by_kind(&runs),
        reference_calls: reference.iter().map(|g| g.stats.target_calls).sum(),
    })
}

/// A method in the lecture's words, for reports.
pub fn describe(method: &Method) -> String {
    let draft = |d: &usize| if *d == 0 { "A" } else { "B" };
    match method {
        Method::Target { greedy } => format!(
            "target alone ({})",
            if *greedy { "greedy" } else { "sampling" }
        ),
        Method::Chain {
            draft: d,
            gamma,
            rule,
        } => match rule {
            ChainRule::Greedy => format!("draft {} chain γ {gamma}, greedy", draft(d)),
            ChainRule::Sample(v) => format!(
                "draft {} chain γ {gamma}, sampling ({})",
                draft(d),
                v.name()
            ),
        },
        Method::Expand {
            draft: d,
            widths,
            children,
            rule,
        } => {
            let w: Vec<String> = widths.iter().map(usize::to_string).collect();
            let how = match rule {
                TreeRule::Greedy => "greedy (top-k)".to_string(),
                r => format!(
                    "{} ({} children)",
                    if *r == TreeRule::Mss { "MSS" } else { "naive" },
                    children.name()
                ),
            };
            format!("draft {} tree ⟨{}⟩, {how}", draft(d), w.join(","))
        }
        Method::Merge { gamma, rule } => format!("merge of A and B, γ {gamma}, {rule:?}"),
    }
}

/// Output statistics of sampled sequences.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct OutputStats {
    pub sequences: usize,
    pub mean_length: f64,
    pub answers: usize,
    /// Questions answered with the item the facts give.
    pub answer_accuracy: f64,
    /// Mean log p of the emitted tokens under the target (its own samples: −entropy).
    pub mean_log_p: f64,
}

/// Demo 03.3: sampling at temperature 1 against the target's own sampling.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SampleReport {
    pub method: String,
    pub variant: Variant,
    pub prompts: usize,
    pub repeats: usize,
    pub tokens: usize,
    pub target_calls: usize,
    pub tokens_per_call: f64,
    pub alpha: f64,
    /// The calibration test: χ², its degrees of freedom, and P(χ² ≥ observed) if every emitted
    /// token were distributed as the target's p.
    pub chi_square: f64,
    pub df: usize,
    pub p_value: f64,
    /// The same test on the target's own samples (a control), and output statistics of both.
    pub target_p_value: f64,
    pub speculative: OutputStats,
    pub target: OutputStats,
    pub by_kind: Vec<KindAlpha>,
}

/// Sampling prompts: the facts and "q NAME" of the first person asked (lecture §3.4).
pub fn sampling_prompts(n: usize) -> Vec<Vec<u32>> {
    prompts(n)
        .iter()
        .map(|w| {
            let mut p = w.prompt();
            p.extend([Q, w.facts[w.order[0]].0]);
            p
        })
        .collect()
}

fn output_stats(runs: &[(Vec<u32>, Generation)]) -> OutputStats {
    let mut s = OutputStats::default();
    let mut log_p = (0.0, 0usize);
    for (prompt, g) in runs {
        s.sequences += 1;
        s.mean_length += g.output.len() as f64;
        let mut seq = prompt.clone();
        seq.extend(&g.output);
        let facts: Vec<(u32, u32)> = seq
            .windows(4)
            .take_while(|w| w[0] != Q)
            .filter(|w| w[1] == likesworld::LIKES)
            .map(|w| (w[0], w[2]))
            .collect();
        for (i, k) in token_kinds(&seq).into_iter().enumerate().skip(prompt.len()) {
            if k == TokenKind::Answer {
                s.answers += 1;
                let right = facts.iter().any(|&(n, it)| n == seq[i - 1] && it == seq[i]);
                s.answer_accuracy += f64::from(u8::from(right));
            }
        }
        log_p.0 += g.stats.calibration.log_p;
        log_p.1 += g.stats.calibration.tokens;
    }
    s.mean_length /= s.sequences.max(1) as f64;
    s.answer_accuracy /= s.answers.max(1) as f64;
    s.mean_log_p = log_p.0 / log_p.1.max(1) as f64;
    s
}

/// Sampling with `method` (a chain under any variant, or a stochastic tree), `repeats` times per
/// prompt, beside the target's own sampling of the same prompts with other seeds.
#[allow(clippy::too_many_arguments)]
pub async fn sample(
    models: &Models,
    method: Method,
    variant: Variant,
    prompts: &[Vec<u32>],
    repeats: usize,
    seed: u64,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<SampleReport, Error> {
    let jobs = |seed: u64| -> Vec<(Vec<u32>, u64)> {
        let each = prompts.iter().enumerate();
        each.flat_map(|(i, p)| (0..repeats).map(move |r| (p.clone(), derive_seed(seed, i, r))))
            .collect()
    };
    let (spec_jobs, own_jobs) = (jobs(seed), jobs(seed ^ 1));
    let each_prompt: Vec<Vec<u32>> = spec_jobs.iter().map(|(p, _)| p.clone()).collect();
    // The speculative runs, then the target's own sampling with other seeds: half the progress
    // each.
    let total = 2 * spec_jobs.len();
    let half = spec_jobs.len();
    let g = run_all(
        models,
        method.clone(),
        1.0,
        spec_jobs,
        clock,
        &mut |d, _| progress(d, total),
    )
    .await?;
    let t = Method::Target { greedy: false };
    let o = run_all(models, t, 1.0, own_jobs, clock, &mut |d, _| {
        progress(half + d, total)
    })
    .await?;
    let (mut stats, mut own_stats) = (Stats::default(), Stats::default());
    g.iter().for_each(|g| stats.add(&g.stats));
    o.iter().for_each(|o| own_stats.add(&o.stats));
    let runs: Vec<(Vec<u32>, Generation)> = each_prompt.iter().cloned().zip(g).collect();
    let own: Vec<(Vec<u32>, Generation)> = each_prompt.into_iter().zip(o).collect();
    let (chi_square, df) = stats.calibration.chi_square();
    Ok(SampleReport {
        method: describe(&method),
        variant,
        prompts: prompts.len(),
        repeats,
        tokens: stats.tokens,
        target_calls: stats.target_calls,
        tokens_per_call: stats.tokens_per_call(),
        alpha: stats.alpha(),
        chi_square,
        df,
        p_value: stats.calibration.p_value(),
        target_p_value: own_stats.calibration.p_value(),
        speculative: output_stats(&runs),
        target: output_stats(&own),
        by_kind: alpha_by_kind(&runs),
    })
}

/// Demo 04.5's biased variant: the exact one-position distortion TV(output, p) of verifying
/// the draft's deterministic top-k children with MSS as if sampled, averaged over the output
/// positions of the target's own greedy outputs (draft B's q there).
pub async fn top_k_distortion(
    models: &Models,
    reference: &[(Vec<u32>, Generation)],
    k: usize,
) -> Result<f64, Error> {
    use crate::views::likesworld::distributions_many;
    let (mut sum, mut n) = (0.0, 0usize);
    for chunk in reference.chunks(DISTRIBUTION_CHUNK) {
        let seqs: Vec<Vec<u32>> = chunk
            .iter()
            .map(|(prompt, g)| [prompt.as_slice(), &g.output].concat())
            .collect();
        let p = distributions_many(&models.target, &seqs, &models.device).await?;
        let q = distributions_many(&models.draft_b, &seqs, &models.device).await?;
        for (i, (prompt, _)) in chunk.iter().enumerate() {
            let (p, q) = (&p[i], &q[i]);
            for j in prompt.len() - 1..seqs[i].len() - 1 {
                let top = super::engine::top_k(&q[j], k);
                let cands: Vec<(usize, &[f64])> =
                    top.iter().map(|&x| (x as usize, q[j].as_slice())).collect();
                sum += tv(&verify_given(&p[j], &cands, Mode::Mss).output, &p[j]);
                n += 1;
            }
        }
    }
    Ok(sum / n.max(1) as f64)
}

/// Demo 04.5: stochastic trees, naive vs MSS.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StochasticReport {
    pub method: String,
    pub children: Children,
    pub verify: TreeRule,
    pub prompts: usize,
    pub tokens_per_call: f64,
    /// Drafted tokens accepted per call (SpecInfer Table 3 counts these).
    pub accepted_per_call: f64,
    pub verified_nodes_per_call: f64,
    pub p_value: f64,
    /// For top-k children: the mean exact one-step TV to the target (see [`top_k_distortion`]).
    pub distortion: Option<f64>,
}

/// Stochastic trees from draft B (children drawn as `children` says), verified with `rule`.
#[allow(clippy::too_many_arguments)]
pub async fn stochastic(
    models: &Models,
    widths: &[usize],
    children: Children,
    rule: TreeRule,
    prompts: &[Vec<u32>],
    seed: u64,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<StochasticReport, Error> {
    let method = Method::Expand {
        draft: 1,
        widths: widths.to_vec(),
        children,
        rule,
    };
    let jobs = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| (p.clone(), derive_seed(seed, i, 0)))
        .collect();
    let mut stats = Stats::default();
    for g in run_all(models, method.clone(), 1.0, jobs, clock, progress).await? {
        stats.add(&g.stats);
    }
    let distortion = if children == Children::TopK && rule == TreeRule::Mss {
        let reference = target_greedy(models, prompts, clock, &mut |_, _| {}).await?;
        let pairs: Vec<(Vec<u32>, Generation)> = prompts.iter().cloned().zip(reference).collect();
        Some(top_k_distortion(models, &pairs, widths.first().copied().unwrap_or(1)).await?)
    } else {
        None
    };
    Ok(StochasticReport {
        method: describe(&method),
        children,
        verify: rule,
        prompts: prompts.len(),
        tokens_per_call: stats.tokens_per_call(),
        accepted_per_call: stats.accepted_per_call(),
        verified_nodes_per_call: stats.verified_per_call(),
        p_value: stats.calibration.p_value(),
        distortion,
    })
}

/// Demo 04.6: measured wall clock against the formula's prediction.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SpeedupReport {
    pub backend: &'static str,
    pub method: String,
    pub prompts: usize,
    pub alpha: f64,
    /// Mean draft call / mean one-token target call, measured in these runs.
    pub c: f64,
    pub tokens_per_call: f64,
    /// E(α, γ) / (γc + 1).
    pub predicted_speedup: f64,
    /// Plain wall time / speculative wall time over the same prompts.
    pub measured_speedup: f64,
    pub plain_us: f64,
    pub speculative_us: f64,
    pub target_call_us: f64,
    pub verify_call_us: f64,
    pub draft_call_us: f64,
    /// The first prompt's calls on the wall clock: plain decoding and speculative decoding.
    pub plain_lane: Vec<Span>,
    pub speculative_lane: Vec<Span>,
}

/// Greedy chains from `draft` with γ, timed against the target alone on the same prompts.
pub async fn speedup(
    models: &Models,
    draft: usize,
    gamma: usize,
    prompts: &[Vec<u32>],
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<SpeedupReport, Error> {
    let spec = Method::Chain {
        draft,
        gamma,
        rule: ChainRule::Greedy,
    };
    // Warm up both paths once (first calls allocate and, on a GPU, compile kernels).
    let warm = &prompts[..1.min(prompts.len())];
    for p in warm {
        run(
            models,
            Method::Target { greedy: true },
            1.0,
            p,
            0,
            false,
            clock,
        )
        .await?;
        run(models, spec.clone(), 1.0, p, 0, false, clock).await?;
    }
    let (mut plain, mut fast) = (Stats::default(), Stats::default());
    let (mut plain_us, mut fast_us) = (0.0, 0.0);
    let (mut plain_lane, mut speculative_lane) = (Vec::new(), Vec::new());
    for (i, p) in prompts.iter().enumerate() {
        let t0 = clock();
        let a = run(
            models,
            Method::Target { greedy: true },
            1.0,
            p,
            0,
            i == 0,
            clock,
        )
        .await?;
        let t1 = clock();
        let b = run(models, spec.clone(), 1.0, p, 0, i == 0, clock).await?;
        let t2 = clock();
        plain_us += t1 - t0;
        fast_us += t2 - t1;
        plain.add(&a.stats);
        fast.add(&b.stats);
        if i == 0 {
            plain_lane = rebase(&a.spans);
            speculative_lane = rebase(&b.spans);
        }
        progress(i + 1, prompts.len());
    }
    let (target_call_us, _) = plain.mean_call_us();
    let (verify_call_us, draft_call_us) = fast.mean_call_us();
    let c = draft_call_us / target_call_us;
    let alpha = fast.alpha();
    Ok(SpeedupReport {
        backend: models.backend.name(),
        method: describe(&spec),
        prompts: prompts.len(),
        alpha,
        c,
        tokens_per_call: fast.tokens_per_call(),
        predicted_speedup: theory::speedup(alpha, gamma as u32, c),
        measured_speedup: plain_us / fast_us,
        plain_us,
        speculative_us: fast_us,
        target_call_us,
        verify_call_us,
        draft_call_us,
        plain_lane,
        speculative_lane,
    })
}

/// Spans relative to the first call's start.
fn rebase(spans: &[Span]) -> Vec<Span> {
    let t0 = spans.first().map_or(0.0, |s| s.start_us);
    spans
        .iter()
        .map(|s| Span {
            start_us: s.start_us - t0,
            end_us: s.end_us - t0,
            ..*s
        })
        .collect()
}

//! What a decoding run counts: calls, tokens, accepted drafts per step, verified nodes, time per
//! call kind; which drafted positions passed (for α by token kind); a trace of each step for the
//! step-through view; and an exact-null calibration test of the emitted tokens.
//!
//! The calibration test asks "is each emitted token distributed as the target's p given
//! everything before it?" — what lossless means, position by position. Under that hypothesis
//! f(y) − E_p[f] is a martingale difference for any f fixed before y is drawn; we use
//! f₁ = p(y) (is the output too peaked or too flat?) and f₂ = q(y), the draft's probability of
//! the emitted token where the draft computed one (does the draft leak into the output?). The
//! sums, scaled by their conditional variances, are χ² with 1–2 degrees of freedom (martingale
//! CLT). Every wrong verification rule of the lecture moves one of the two.

use crate::decode::Speculation;

/// Counts of one run or of many added up.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Stats {
    pub generations: usize,
    /// Target calls (= steps: one verify per step).
    pub target_calls: usize,
    pub draft_calls: usize,
    /// Output tokens.
    pub tokens: usize,
    /// accepted[n]: steps that accepted n speculated tokens.
    pub accepted: Vec<usize>,
    /// Speculated tokens sent to the target (nodes verified).
    pub verified_nodes: usize,
    /// Drafted positions tested, and how many passed (α = passed / tested).
    pub tested: usize,
    pub passed: usize,
    /// Wall time inside target and draft calls, µs.
    pub target_us: f64,
    pub draft_us: f64,
    pub calibration: Calibration,
}

impl Stats {
    pub fn add(&mut self, other: &Stats) {
        self.generations += other.generations;
        self.target_calls += other.target_calls;
        self.draft_calls += other.draft_calls;
        self.tokens += other.tokens;
        if self.accepted.len() < other.accepted.len() {
            self.accepted.resize(other.accepted.len(), 0);
        }
        for (a, b) in self.accepted.iter_mut().zip(&other.accepted) {
            *a += b;
        }
        self.verified_nodes += other.verified_nodes;
        self.tested += other.tested;
        self.passed += other.passed;
        self.target_us += other.target_us;
        self.draft_us += other.draft_us;
        self.calibration.add(&other.calibration);
    }

    pub fn step(&mut self, accepted: usize, nodes: usize) {
        if self.accepted.len() <= accepted {
            self.accepted.resize(accepted + 1, 0);
        }
        self.accepted[accepted] += 1;
        self.verified_nodes += nodes;
    }

    /// Tokens decided per target call.
    pub fn tokens_per_call(&self) -> f64 {
        self.tokens as f64 / self.target_calls.max(1) as f64
    }

    /// Measured acceptance rate α = passed / tested (NaN before any test).
    pub fn alpha(&self) -> f64 {
        self.passed as f64 / self.tested as f64
    }

    /// Speculated tokens accepted per target call (tokens per call less the target's own).
    pub fn accepted_per_call(&self) -> f64 {
        let accepted: usize = self.accepted.iter().enumerate().map(|(n, c)| n * c).sum();
        accepted as f64 / self.target_calls.max(1) as f64
    }

    /// Accepted speculated tokens over speculated tokens verified.
    pub fn accepted_node_fraction(&self) -> f64 {
        let accepted: usize = self.accepted.iter().enumerate().map(|(n, c)| n * c).sum();
        accepted as f64 / self.verified_nodes.max(1) as f64
    }

    pub fn verified_per_call(&self) -> f64 {
        self.verified_nodes as f64 / self.target_calls.max(1) as f64
    }

    /// Mean time of one target call and one draft call, µs.
    pub fn mean_call_us(&self) -> (f64, f64) {
        (
            self.target_us / self.target_calls.max(1) as f64,
            self.draft_us / self.draft_calls.max(1) as f64,
        )
    }
}

/// The martingale sums of the calibration test (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Calibration {
    /// Σ (f(y) − E_p f) for f = p, q.
    pub sum: [f64; 2],
    /// Σ of the conditional covariance matrix of (f₁, f₂).
    pub var: [[f64; 2]; 2],
    /// Emitted tokens observed, and how many of them had a draft distribution.
    pub tokens: usize,
    pub with_draft: usize,
    /// Σ ln p(y) over the emitted tokens.
    pub log_p: f64,
}

impl Calibration {
    pub fn add(&mut self, o: &Calibration) {
        for i in 0..2 {
            self.sum[i] += o.sum[i];
            for j in 0..2 {
                self.var[i][j] += o.var[i][j];
            }
        }
        self.tokens += o.tokens;
        self.with_draft += o.with_draft;
        self.log_p += o.log_p;
    }

    /// Records token `y` emitted where the target's distribution was `p` and the draft's `q`.
    pub fn observe(&mut self, p: &[f64], q: Option<&[f64]>, y: usize) {
        let e1: f64 = p.iter().map(|x| x * x).sum();
        let m11: f64 = p.iter().map(|x| x * x * x).sum();
        self.sum[0] += p[y] - e1;
        self.var[0][0] += m11 - e1 * e1;
        self.tokens += 1;
        self.log_p += p[y].ln();
        if let Some(q) = q {
            let e2: f64 = p.iter().zip(q).map(|(a, b)| a * b).sum();
            let m22: f64 = p.iter().zip(q).map(|(a, b)| a * b * b).sum();
            let m12: f64 = p.iter().zip(q).map(|(a, b)| a * a * b).sum();
            self.sum[1] += q[y] - e2;
            self.var[1][1] += m22 - e2 * e2;
            let c = m12 - e1 * e2;
            self.var[0][1] += c;
            self.var[1][0] += c;
            self.with_draft += 1;
        }
    }

    /// The χ² statistic and its degrees of freedom.
    pub fn chi_square(&self) -> (f64, usize) {
        let [[a, b], [_, d]] = self.var;
        let [s1, s2] = self.sum;
        let det = a * d - b * b;
        if d > 1e-12 && det > 1e-12 * a * d {
            ((d * s1 * s1 - 2.0 * b * s1 * s2 + a * s2 * s2) / det, 2)
        } else if a > 1e-12 {
            (s1 * s1 / a, 1)
        } else {
            (0.0, 0)
        }
    }

    /// P(χ² ≥ observed) under "every token ~ p": small means the output is not the target's.
    pub fn p_value(&self) -> f64 {
        match self.chi_square() {
            (_, 0) => 1.0,
            (x, 1) => erfc((x / 2.0).sqrt()),
            (x, _) => (-x / 2.0).exp(),
        }
    }
}

/// The complementary error function (Numerical Recipes' Chebyshev fit, relative error < 1.2e-7).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// One verification check in a step: a candidate tested at a tree position.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Check {
    /// The tree position (0: the root, 1 + i: node i) and the candidate node.
    pub at: usize,
    pub node: usize,
    pub token: u32,
    /// Target and draft probability of the candidate token; q is absent for greedy drafts.
    pub p: f64,
    pub q: Option<f64>,
    /// The acceptance probability and the uniform number compared with it (sampling rules).
    pub a: f64,
    pub u: Option<f64>,
    pub accepted: bool,
}

/// How the step's last token came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// Every candidate on the path passed; the target's own token after it (the bonus).
    Bonus,
    /// A candidate failed: drawn from the residual (or the rule's rejection distribution).
    Residual,
    /// The target's token (its argmax, or a draw from p) was not among the children.
    Target,
}

/// One step, for the step-through view.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StepTrace {
    /// Output tokens before the step.
    pub before: usize,
    pub tree: Speculation,
    pub checks: Vec<Check>,
    /// Accepted nodes, root to leaf.
    pub path: Vec<usize>,
    pub ending: Ending,
    /// A sampled chain: where the last token was drawn, the target's p, the draft's q, the
    /// residual norm(max(0, p − q)) that Algorithm 1 draws from, and what the rule in force drew
    /// from, side by side (a wrong rule shows here where it departs).
    pub compare: Vec<Compared>,
    /// The output ended (EOS, or the length limit) before the step's last token: `emitted` holds
    /// only the tokens output, and what the step decided after them is not part of the output.
    pub cut_at_end: bool,
    /// The distribution the last token came from (its largest entries), and the token.
    pub last_dist: Vec<(u32, f64)>,
    pub last: u32,
    /// The tokens this step emitted.
    pub emitted: Vec<u32>,
}

/// One token's row of a step's side-by-side comparison ([`StepTrace::compare`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Compared {
    pub token: u32,
    pub p: f64,
    pub q: f64,
    pub residual: f64,
    pub drawn: f64,
}

/// The largest `k` entries of a distribution, largest first.
pub fn top(d: &[f64], k: usize) -> Vec<(u32, f64)> {
    let mut v: Vec<(u32, f64)> = d
        .iter()
        .enumerate()
        .filter(|(_, &x)| x > 0.0)
        .map(|(i, &x)| (i as u32, x))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(k);
    v
}

/// One model call on the wall clock (for the two-lane picture).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Span {
    pub target: bool,
    pub start_us: f64,
    pub end_us: f64,
    /// Tokens decided by this call (target calls only).
    pub tokens: usize,
}

/// One generation: its output and what it counted.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Generation {
    pub output: Vec<u32>,
    pub stats: Stats,
    /// (output position, passed) for every drafted token tested.
    pub tests: Vec<(usize, bool)>,
    pub trace: Vec<StepTrace>,
    pub spans: Vec<Span>,
    /// Where each output token came from.
    pub sources: Vec<Source>,
}

impl Generation {
    /// Counts `calls` draft calls (or look-ups) that took `start`..`end` µs, and their span on
    /// the wall clock when `trace` is on.
    pub fn drafted(&mut self, calls: usize, start: f64, end: f64, trace: bool) {
        self.stats.draft_calls += calls;
        self.stats.draft_us += end - start;
        if trace {
            self.spans.push(Span {
                target: false,
                start_us: start,
                end_us: end,
                tokens: 0,
            });
        }
    }

    /// Cuts what the last step decided past the end of the output (eos or the length limit).
    pub fn finish(&mut self) {
        self.stats.tokens = self.output.len();
        self.tests.retain(|&(at, _)| at < self.output.len());
        self.sources.truncate(self.output.len());
        // The step-through shows what was output: the last step's tokens past the end are not.
        if let Some(last) = self.trace.last_mut() {
            let kept = self.output.len().saturating_sub(last.before);
            if kept < last.emitted.len() {
                last.emitted.truncate(kept);
                last.cut_at_end = true;
            }
        }
    }
}

/// Where an emitted token came from: the target's own choice at the end of a step, or the
/// accepted speculation of a drafter (lecture §5.3 names them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// The target's token: a correction, the bonus, or plain decoding.
    #[default]
    Target,
    /// A draft model.
    Draft,
    /// Copied from this request's prompt and output (Prompt Lookup, the request index).
    Request,
    /// From earlier outputs of the workload (the global suffix index).
    Earlier,
    /// A Jacobi window's guess (the lookahead branch).
    Jacobi,
    /// An n-gram of the Lookahead pool.
    Pool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfc_matches_known_values() {
        for (x, want) in [
            (0.0, 1.0),
            (0.5, 0.479_500_122_186_953_5),
            (1.0, 0.157_299_207_050_285_13),
            (2.0, 0.004_677_734_981_047_266),
            (-1.0, 1.842_700_792_949_715),
        ] {
            assert!((erfc(x) - want).abs() < 2e-7 * want.max(1e-3), "{x}");
        }
    }

    #[test]
    fn calibration_flags_a_biased_sampler_and_passes_a_fair_one() {
        use crate::sampling::sample;
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let p = [0.5, 0.3, 0.2];
        let q = [0.2, 0.3, 0.5];
        let biased = [0.45, 0.3, 0.25]; // 5% of p's mass moved toward q's favourite
        let (mut fair, mut bad) = (Calibration::default(), Calibration::default());
        for _ in 0..20_000 {
            fair.observe(&p, Some(&q), sample(&p, &mut rng));
            bad.observe(&p, Some(&q), sample(&biased, &mut rng));
        }
        // Fixed seed: the fair sampler's p-value is not small, the biased one's is tiny.
        assert!(fair.p_value() > 0.01, "{fair:?}");
        assert!(bad.p_value() < 1e-6, "{bad:?}");
    }
}

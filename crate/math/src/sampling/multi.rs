//! Verifying several candidate tokens for one position (lecture §4.5; SpecInfer Algorithm 2,
//! VerifyStochastic). Naive sampling draws y ~ p and accepts if y is among the candidates; it is
//! unbiased but ignores what the drafts knew. Multi-step speculative sampling (MSS) runs one
//! speculative-sampling round per candidate, handing the residual norm(max(0, r − q_j)) to the
//! next; it is unbiased and never accepts less (Theorems 4.2, 4.3) — *provided* each candidate x_j
//! was sampled from the q_j used to verify it. [`Children`] shows what happens when it was not.

use super::{residual, sample, Dist};
use crate::i18n::Lang;
use rand::Rng;

crate::error::choices! {
    /// How candidates are verified.
    pub enum Mode("mode") {
        Naive = "naive",
        Mss = "mss",
    }
}

crate::error::choices! {
    /// How a tree node's k children are drawn from one draft distribution q.
    pub enum Children("children sampler") {
        /// k independent draws from q, each verified against q (unbiased).
        Iid = "iid",
        /// k draws without replacement; the j-th is verified against q with the earlier draws removed
        /// and renormalised (unbiased).
        WithoutReplacement = "without-replacement",
        /// The k most probable tokens of q, deterministically, verified against q (biased).
        TopK = "top-k",
    }
}

impl Children {
    /// The sampler in the lecture's words, for tables and charts (its `name` is for parameters).
    pub fn label(self, lang: Lang) -> &'static str {
        match self {
            Children::Iid => lang.pick("i.i.d. draws", "独立同分布抽样"),
            Children::WithoutReplacement => lang.pick("without replacement", "无放回抽样"),
            Children::TopK => lang.pick("top-k (deterministic)", "top-k（确定性）"),
        }
    }
}

/// Outcome of verifying one position: P(some candidate accepted) and the output distribution.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Verdict {
    pub acceptance: f64,
    pub output: Dist,
}

impl Verdict {
    fn zero(len: usize) -> Verdict {
        Verdict {
            acceptance: 0.0,
            output: vec![0.0; len],
        }
    }

    fn add_scaled(&mut self, w: f64, other: &Verdict) {
        self.acceptance += w * other.acceptance;
        self.output
            .iter_mut()
            .zip(&other.output)
            .for_each(|(a, b)| *a += w * b);
    }
}

/// MSS's acceptance of candidate `x` drawn from `q` against the residual `r`: min(1, r/q). A
/// candidate q could not have drawn (q(x) = 0: top-k beyond the support, or underflow) is
/// accepted only where the residual still allows it; r(x) = 0 means the target forbids x.
fn accept_prob(r: &[f64], q: &[f64], x: usize) -> f64 {
    if q[x] > 0.0 {
        (r[x] / q[x]).min(1.0)
    } else {
        f64::from(u8::from(r[x] > 0.0))
    }
}

/// Verifies fixed candidates `(x_j, q_j)` in the order given, exactly (conditioned on them).
pub fn verify_given(p: &[f64], candidates: &[(usize, &[f64])], mode: Mode) -> Verdict {
    match mode {
        Mode::Naive => {
            let mut seen = vec![false; p.len()];
            candidates.iter().for_each(|&(x, _)| seen[x] = true);
            let acceptance = p
                .iter()
                .zip(&seen)
                .filter(|(_, &s)| s)
                .map(|(x, _)| x)
                .sum();
            Verdict {
                acceptance,
                output: p.to_vec(),
            }
        }
        Mode::Mss => {
            let mut r = p.to_vec();
            let mut still_rejected = 1.0;
            let mut v = Verdict::zero(p.len());
            for &(x, q) in candidates {
                let a = accept_prob(&r, q, x);
                v.output[x] += still_rejected * a;
                v.acceptance += still_rejected * a;
                still_rejected *= 1.0 - a;
                if still_rejected <= 0.0 {
                    return v;
                }
                r = residual(&r, q);
            }
            v.output
                .iter_mut()
                .zip(&r)
                .for_each(|(o, ri)| *o += still_rejected * ri);
            v
        }
    }
}

/// One candidate per draft model j, x_j ~ q_j independently, verified in order: the exact
/// average over the drafts' randomness (enumerates the product of the supports).
pub fn verify_exact(p: &[f64], qs: &[Dist], mode: Mode) -> Verdict {
    let mut total = Verdict::zero(p.len());
    let mut chosen: Vec<(usize, &[f64])> = Vec::with_capacity(qs.len());
    enumerate_independent(p, qs, mode, 1.0, &mut chosen, &mut total);
    total
}

fn enumerate_independent<'a>(
    p: &[f64],
    qs: &'a [Dist],
    mode: Mode,
    w: f64,
    chosen: &mut Vec<(usize, &'a [f64])>,
    total: &mut Verdict,
) {
    let j = chosen.len();
    if j == qs.len() {
        total.add_scaled(w, &verify_given(p, chosen, mode));
        return;
    }
    for (x, &qx) in qs[j].iter().enumerate().filter(|(_, &qx)| qx > 0.0) {
        chosen.push((x, &qs[j]));
        enumerate_independent(p, qs, mode, w * qx, chosen, total);
        chosen.pop();
    }
}

/// One tree node with k children drawn from q by `children`, verified with `mode`, exactly.
pub fn children_exact(p: &[f64], q: &[f64], k: usize, children: Children, mode: Mode) -> Verdict {
    match children {
        Children::Iid => verify_exact(p, &vec![q.to_vec(); k], mode),
        Children::TopK => {
            let mut order: Vec<usize> = (0..q.len()).collect();
            order.sort_by(|&a, &b| q[b].total_cmp(&q[a]).then(a.cmp(&b)));
            let cands: Vec<(usize, &[f64])> = order.into_iter().take(k).map(|x| (x, q)).collect();
            verify_given(p, &cands, mode)
        }
        Children::WithoutReplacement => {
            let k = k.min(q.iter().filter(|&&x| x > 0.0).count());
            let mut total = Verdict::zero(p.len());
            enumerate_without_replacement(p, q, k, mode, 1.0, &mut Vec::new(), &mut total);
            total
        }
    }
}

/// q with the tokens in `drawn` removed and renormalised.
fn without(q: &[f64], drawn: &[(usize, Dist)]) -> Dist {
    let mut d = q.to_vec();
    drawn.iter().for_each(|(x, _)| d[*x] = 0.0);
    let mass: f64 = d.iter().sum();
    d.iter_mut().for_each(|x| *x /= mass);
    d
}

fn enumerate_without_replacement(
    p: &[f64],
    q: &[f64],
    k: usize,
    mode: Mode,
    w: f64,
    drawn: &mut Vec<(usize, Dist)>,
    total: &mut Verdict,
) {
    if drawn.len() == k {
        let cands: Vec<(usize, &[f64])> = drawn.iter().map(|(x, qj)| (*x, qj.as_slice())).collect();
        total.add_scaled(w, &verify_given(p, &cands, mode));
        return;
    }
    let qj = without(q, drawn);
    for x in 0..q.len() {
        if qj[x] > 0.0 {
            drawn.push((x, qj.clone()));
            enumerate_without_replacement(p, q, k, mode, w * qj[x], drawn, total);
            drawn.pop();
        }
    }
}

/// Monte Carlo of [`verify_exact`]: samples the drafts and runs the verifier with real coin
/// flips, independently of the enumeration. Returns (acceptance rate, output frequencies).
pub fn simulate<R: Rng + ?Sized>(
    p: &[f64],
    qs: &[Dist],
    mode: Mode,
    runs: usize,
    rng: &mut R,
) -> Verdict {
    let mut v = Verdict::zero(p.len());
    for _ in 0..runs {
        let xs: Vec<usize> = qs.iter().map(|q| sample(q, rng)).collect();
        let (accepted, y) = match mode {
            Mode::Naive => {
                let y = sample(p, rng);
                (xs.contains(&y), y)
            }
            Mode::Mss => {
                let mut r = p.to_vec();
                let mut out = None;
                for (&x, q) in xs.iter().zip(qs) {
                    let a = accept_prob(&r, q, x);
                    if rng.random::<f64>() < a {
                        out = Some(x);
                        break;
                    }
                    r = residual(&r, q);
                }
                match out {
                    Some(x) => (true, x),
                    None => (false, sample(&r, rng)),
                }
            }
        };
        v.acceptance += f64::from(u8::from(accepted));
        v.output[y] += 1.0;
    }
    v.acceptance /= runs as f64;
    v.output.iter_mut().for_each(|x| *x /= runs as f64);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mss_never_emits_a_token_the_target_forbids() {
        // A candidate with q(x) = 0 where p(x) = 0 too (top-k past the support): rejected.
        let p = [0.5, 0.5, 0.0];
        let q = [0.5, 0.5, 0.0];
        let v = verify_given(&p, &[(2, &q[..])], Mode::Mss);
        assert_eq!(v.output[2], 0.0);
        assert!(tv(&v.output, &p) <= 1e-12, "{v:?}");
        // Where the residual still has mass on x, such a candidate is taken (r(x) > 0).
        let v = verify_given(&[0.2, 0.8, 0.0], &[(1, &[1.0, 0.0, 0.0][..])], Mode::Mss);
        assert_eq!(v.output[1], 1.0, "{v:?}");
    }
    use crate::sampling::tv;
    use rand::SeedableRng;

    const UNIFORM4: [f64; 4] = [0.25; 4];
    const T1: [f64; 4] = [1.0, 0.0, 0.0, 0.0];

    #[test]
    fn slide_example_given_t2() {
        // LLM uniform, SSM1 always t1, SSM2 uniform and drew t2: naive 50%, MSS 100%.
        let cands: [(usize, &[f64]); 2] = [(0, &T1), (1, &UNIFORM4)];
        assert!((verify_given(&UNIFORM4, &cands, Mode::Naive).acceptance - 0.5).abs() < 1e-15);
        assert!((verify_given(&UNIFORM4, &cands, Mode::Mss).acceptance - 1.0).abs() < 1e-15);
    }

    #[test]
    fn slide_example_averaged_over_ssm2() {
        let qs = vec![T1.to_vec(), UNIFORM4.to_vec()];
        let mss = verify_exact(&UNIFORM4, &qs, Mode::Mss);
        let naive = verify_exact(&UNIFORM4, &qs, Mode::Naive);
        assert!((mss.acceptance - 0.8125).abs() < 1e-15, "{mss:?}");
        assert!((naive.acceptance - 0.4375).abs() < 1e-15, "{naive:?}");
        // Theorem 4.2: averaged over the drafts, MSS outputs exactly p.
        assert!(tv(&mss.output, &UNIFORM4) <= 1e-12);
    }

    #[test]
    fn exercise_6() {
        let q1 = [0.5, 0.5, 0.0, 0.0];
        let cands: [(usize, &[f64]); 2] = [(1, &q1), (2, &UNIFORM4)];
        assert!((verify_given(&UNIFORM4, &cands, Mode::Naive).acceptance - 0.5).abs() < 1e-15);
        assert!((verify_given(&UNIFORM4, &cands, Mode::Mss).acceptance - 1.0).abs() < 1e-15);
    }

    #[test]
    fn children_iid_and_without_replacement_unbiased_top_k_biased() {
        let p = [0.1, 0.35, 0.05, 0.3, 0.2];
        let q = [0.3, 0.25, 0.2, 0.05, 0.2];
        for k in 1..=4 {
            for c in [Children::Iid, Children::WithoutReplacement] {
                let v = children_exact(&p, &q, k, c, Mode::Mss);
                assert!(tv(&v.output, &p) <= 1e-12, "{c:?} k={k}: {v:?}");
                // Theorem 4.3: never below naive.
                assert!(
                    v.acceptance + 1e-12 >= children_exact(&p, &q, k, c, Mode::Naive).acceptance
                );
            }
        }
        // Deterministic top-k is already biased at k = 1 (exercise 7's argument).
        assert!(
            tv(
                &children_exact(&p, &q, 1, Children::TopK, Mode::Mss).output,
                &p
            ) > 0.05
        );
    }

    /// Without-replacement children verified by MSS, by Monte Carlo with real coin flips against
    /// the enumeration: 200,000 runs, max |z| over the 5 outputs and acceptance ≤ 4.5 (false alarm
    /// ≤ 2·6·Φ(−4.5) < 1e-4); an error of 0.005 in any output probability shifts its z by ≥ 5.
    #[test]
    fn without_replacement_mss_by_monte_carlo() {
        use crate::sampling::{max_abs_z, sample};
        const RUNS: usize = 200_000;
        let p = [0.1, 0.35, 0.05, 0.3, 0.2];
        let q = [0.3, 0.25, 0.2, 0.05, 0.2];
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for k in 1..=3 {
            let exact = children_exact(&p, &q, k, Children::WithoutReplacement, Mode::Mss);
            let (mut out, mut accepted) = (vec![0.0; 5], 0.0);
            for _ in 0..RUNS {
                // Draw k distinct children, each from q renormalised without the earlier ones.
                let mut qj = q.to_vec();
                let mut r = p.to_vec();
                let mut y = None;
                for _ in 0..k {
                    let x = sample(&qj, &mut rng);
                    if rng.random::<f64>() < accept_prob(&r, &qj, x) {
                        y = Some(x);
                        break;
                    }
                    r = residual(&r, &qj);
                    qj[x] = 0.0;
                    let m: f64 = qj.iter().sum();
                    qj.iter_mut().for_each(|w| *w /= m);
                }
                accepted += f64::from(u8::from(y.is_some()));
                out[y.unwrap_or_else(|| sample(&r, &mut rng))] += 1.0 / RUNS as f64;
            }
            accepted /= RUNS as f64;
            assert!(
                max_abs_z(&out, &exact.output, RUNS) <= 4.5,
                "k={k}: {out:?} vs {exact:?}"
            );
            assert!(
                max_abs_z(&[accepted], &[exact.acceptance], RUNS) <= 4.5,
                "k={k}: {accepted}"
            );
            assert!(tv(&exact.output, &p) <= 1e-12);
        }
    }

    #[test]
    fn simulation_agrees_with_enumeration() {
        let p = [0.1, 0.35, 0.05, 0.3, 0.2];
        let qs = vec![vec![0.3, 0.25, 0.2, 0.05, 0.2], vec![0.2; 5]];
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for mode in [Mode::Mss, Mode::Naive] {
            let exact = verify_exact(&p, &qs, mode);
            let mc = simulate(&p, &qs, mode, 50_000, &mut rng);
            // sd of a frequency at n = 50,000 is ≤ 0.0023; 0.012 is > 5 sd per entry.
            assert!(
                (mc.acceptance - exact.acceptance).abs() < 0.012,
                "{mode:?}: {mc:?} vs {exact:?}"
            );
            assert!(mc
                .output
                .iter()
                .zip(&exact.output)
                .all(|(a, b)| (a - b).abs() < 0.012));
        }
    }
}

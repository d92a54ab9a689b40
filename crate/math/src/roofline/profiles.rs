//! Devices to choose how to speculate on (lecture §4.7; Sequoia's hardware-aware optimiser):
//! each a curve T(k), the time of a target call verifying k tokens, and the draft's cost per
//! level c as a fraction of T(1). Two were measured on LikesWorld's ×16 target and are kept as
//! data with their source (docs/performance.md); the others come from the roofline model of
//! this module, the lecture's pair (OPT-125M drafting for OPT-13B) at batch 1 on each GPU preset.

use super::{gpu, model, Pair, DEFAULT_OVERHEAD_MS, GPUS};
use crate::error::{Error, Text};
use crate::tree::choose::Times;

/// The largest call a profile covers: trees of up to 64 draft nodes.
pub const MAX_K: usize = 65;
/// The lecture's pair and context for the roofline profiles.
const LECTURE_DRAFT: &str = "opt-125m";
const LECTURE_TARGET: &str = "opt-13b";
const LECTURE_CONTEXT: u32 = 512;

/// A device's curve: measured points (k, T(k) in ms), joined by straight lines, and c.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub key: String,
    pub name: Text,
    /// Where the figures come from.
    pub source: Text,
    /// (k, T(k) in ms), k rising from 1.
    pub points: Vec<(usize, f64)>,
    pub draft_cost: f64,
}

impl Profile {
    /// T(1) … T(K), K the last point's k, each between two measured points read off the straight
    /// line that joins them.
    pub fn times(&self) -> Times {
        let last = self.points.last().expect("a profile has points").0;
        let t = (1..=last)
            .map(|k| {
                let i = self
                    .points
                    .iter()
                    .position(|&(pk, _)| pk >= k)
                    .expect("k ≤ last");
                let (k1, t1) = self.points[i];
                if k1 == k || i == 0 {
                    return t1;
                }
                let (k0, t0) = self.points[i - 1];
                t0 + (t1 - t0) * (k - k0) as f64 / (k1 - k0) as f64
            })
            .collect();
        Times::new(t).expect("profiles are positive")
    }
}

/// The H200 through wgpu, the ×16 target (issue 31's loan, 2026-12-04): T(1) 1.07 ms, T(8)/T(1)
/// 1.00, T(16)/T(1) 0.96–1.08 (1.02 here), T(32)/T(1) 1.12; draft B on the CPU beside it, c 0.066.
fn h200_measured() -> Profile {
    let t1 = 1.07;
    Profile {
        key: "h200-measured".into(),
        name: Text::new("H200, ×16 target (measured)", "H200，×16 目标（实测）"),
        source: Text::new(
            "docs/performance.md, “On a real GPU: an H200 through wgpu” (2026-12-04): T(1) 1.07 ms, T(8)/T(1) 1.00, T(16)/T(1) 0.96–1.08, T(32)/T(1) 1.12; draft B on the CPU, c 0.066",
            "docs/performance.md 中“在真实 GPU 上：经 wgpu 的 H200”一节（2026-12-04）：T(1) 1.07 ms，T(8)/T(1) 1.00，T(16)/T(1) 0.96–1.08，T(32)/T(1) 1.12；草稿 B 在 CPU 上，c 0.066",
        ),
        points: vec![(1, t1), (8, t1), (16, 1.02 * t1), (32, 1.12 * t1)],
        draft_cost: 0.066,
    }
}

/// This 2-core machine in the page, two threads with FMA, the ×16 target (issue 31, the shipped
/// kernel's row): T(1) 3.67, T(2) 4.97, T(4) 5.12, T(8) 7.74, T(16) 15.6 ms; draft B's c on ×16
/// 0.013 (natively, the same document).
fn cpu_measured() -> Profile {
    Profile {
        key: "cpu-measured".into(),
        name: Text::new(
            "2-core CPU, ×16 target, the page (measured)",
            "2 核 CPU，×16 目标，页面中（实测）",
        ),
        source: Text::new(
            "docs/performance.md, the ×16 table for 2 threads + FMA (the shipped kernel): T(1) 3.67, T(2) 4.97, T(4) 5.12, T(8) 7.74, T(16) 15.6 ms; draft B's c 0.013. These are bare calls: decoding pays more around each call, so these predictions run high on this CPU; the widget below measures the curve as decoding pays it",
            "docs/performance.md，×16、2 线程 + FMA 的表（发布的内核）：T(1) 3.67，T(2) 4.97，T(4) 5.12，T(8) 7.74，T(16) 15.6 ms；草稿 B 的 c 0.013。这些是单独计时的调用：解码在每次调用周围还要多花时间，所以在这台 CPU 上这里的预测偏高；下面的组件按解码实际付出的测出曲线",
        ),
        points: vec![(1, 3.67), (2, 4.97), (4, 5.12), (8, 7.74), (16, 15.6)],
        draft_cost: 0.013,
    }
}

/// The roofline model's curve on a GPU preset: the lecture's pair at batch 1, context 512.
pub fn roofline_profile(gpu_name: &str) -> Result<Profile, Error> {
    let g = gpu(gpu_name)?;
    let pair = Pair::single(
        g,
        model(LECTURE_DRAFT)?,
        model(LECTURE_TARGET)?,
        DEFAULT_OVERHEAD_MS,
    );
    let points = (1..=MAX_K)
        .map(|k| (k, pair.target_step(1, LECTURE_CONTEXT, k as u32).time_ms))
        .collect();
    Ok(Profile {
        key: g.name.into(),
        name: Text::new(
            format!("{} (roofline model)", g.label),
            format!("{}（roofline 模型）", g.label),
        ),
        source: Text::new(
            format!("the roofline model: OPT-125M drafting for OPT-13B on one {}, batch 1, context {LECTURE_CONTEXT}, overhead {DEFAULT_OVERHEAD_MS} ms a step", g.label),
            format!("roofline 模型：一块 {} 上 OPT-125M 为 OPT-13B 起草，批大小 1，上下文 {LECTURE_CONTEXT}，每步固定开销 {DEFAULT_OVERHEAD_MS} ms", g.label),
        ),
        points,
        draft_cost: pair.cost_ratio(1, LECTURE_CONTEXT),
    })
}

/// Every profile: the two measured, then the roofline's on each GPU preset.
pub fn profiles() -> Vec<Profile> {
    let mut all = vec![h200_measured(), cpu_measured()];
    all.extend(
        GPUS.iter()
            .map(|g| roofline_profile(g.name).expect("a preset")),
    );
    all
}

/// The profile named `key`.
pub fn profile(key: &str) -> Result<Profile, Error> {
    let all = profiles();
    let known = all
        .iter()
        .map(|p| p.key.clone())
        .collect::<Vec<_>>()
        .join(", ");
    all.into_iter()
        .find(|p| p.key == key)
        .ok_or_else(|| Error::Unknown {
            what: "device",
            name: key.into(),
            known: Text::new(known.clone(), known),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::choose::choose;
    use crate::tree::sequoia::Acceptance;

    #[test]
    fn times_join_the_points_with_straight_lines() {
        let p = cpu_measured();
        let t = p.times();
        assert_eq!(t.max_k(), 16);
        assert_eq!(t.entries()[0], 3.67);
        assert!((t.entries()[2] - (4.97 + 5.12) / 2.0).abs() < 1e-12);
        assert_eq!(t.entries()[15], 15.6);
        assert_eq!(h200_measured().times().max_k(), 32);
        assert_eq!(
            roofline_profile("a100-40gb").unwrap().times().max_k(),
            MAX_K
        );
    }

    #[test]
    fn a_gpu_takes_many_nodes_and_this_cpu_few() {
        // Draft B's greedy vector on LikesWorld is of this kind (`likesworld sequoia`).
        let p = Acceptance::parse("0.6,0.15,0.06,0.03,0.02").unwrap();
        let h200 = choose(&p, &h200_measured().times(), h200_measured().draft_cost).unwrap();
        let cpu = choose(&p, &cpu_measured().times(), cpu_measured().draft_cost).unwrap();
        assert!(h200.tree.nodes >= 16, "{:?}", h200.tree);
        assert!(h200.tree.predicted_speedup >= 2.0);
        assert!(cpu.tree.nodes <= 4, "{:?}", cpu.tree);
        let a100 = roofline_profile("a100-40gb").unwrap();
        let lecture = choose(&p, &a100.times(), a100.draft_cost).unwrap();
        assert!(lecture.tree.nodes > cpu.tree.nodes);
        assert!(profile("nope").is_err());
        assert_eq!(profiles().len(), 2 + GPUS.len());
    }
}

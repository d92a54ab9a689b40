//! The `specdec` CLI contract: one JSON object on stdout with --json, exit status 2 and one
//! line on stderr naming the bad value otherwise. Each case runs the real binary. The cases are
//! in ten files beside this one: [`analytic`] (theory, roofline, sampling, trees, exercises,
//! argument errors), [`models`] (the LikesWorld models, speculative and model-free decoding,
//! every size option), [`measured`] (the widened target, the measured roofline and the
//! wall-clock speedups), [`hidden`] (the hidden-state drafts: Medusa, EAGLE, the methods table),
//! [`treepaths`] (per-sequence against tree-parallel verification, issue 34), [`load`] (the
//! speedup against the batch: speculation under load), [`offload`] (the target's weights
//! crossing to the GPU before every call), [`drafts_on`] (the drafts on the CPU beside a GPU
//! target), [`learned`] (distilled drafts, the boost-tuned pool) and [`sequoia`] (Sequoia's
//! trees and the hardware-aware choice, issue 54).

mod analytic;
mod drafts_on;
mod hidden;
mod learned;
mod load;
mod lossless;
mod measured;
mod models;
mod offload;
mod sequoia;
mod treepaths;

use serde_json::Value;
use std::process::Command;

pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_specdec"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

pub fn json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.push("--json");
    let (code, stdout, stderr) = run(&a);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    assert_eq!(
        stdout.lines().count(),
        1,
        "exactly one line of JSON: {stdout}"
    );
    serde_json::from_str(&stdout).unwrap()
}

pub fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

/// `likesworld speedup` of draft B on wgpu at `gamma` (one γ or a list) over `prompts`, then
/// `extra`.
pub fn wgpu_speedup<'a>(gamma: &'a str, prompts: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "likesworld",
        "speedup",
        "--backend",
        "wgpu",
        "--draft",
        "b",
        "--gamma",
        gamma,
        "--prompts",
        prompts,
    ];
    a.extend_from_slice(extra);
    a
}

pub fn check_error(args: &[&str], needle: &str) {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 2, "{args:?}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
}

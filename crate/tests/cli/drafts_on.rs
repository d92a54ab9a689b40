//! The drafts on another backend than the target (issue 31): `--backend wgpu --drafts-on flex`
//! runs the target on the GPU (natively: lavapipe) and every draft model on the CPU beside it
//! (A, B, Medusa's heads, EAGLE), as the page runs WebGPU. The acceptance stays the same, the
//! report says where the drafts ran, a draft call costs what it costs on the CPU, and the option
//! is refused where no draft model would move.

use super::{check_error, f, json, run, wgpu_speedup};

#[test]
fn drafts_on_the_cpu_beside_a_gpu_target_keep_the_acceptance_and_run_at_cpu_speed() {
    let speedup = |extra: &[&'static str]| json(&wgpu_speedup("3", "4", extra));
    let apart = speedup(&["--drafts-on", "flex"]);
    let together = speedup(&[]);
    assert_eq!(apart["backend"], "wgpu", "{apart}");
    assert_eq!(apart["drafts_on"], "flex", "{apart}");
    assert!(together.get("drafts_on").is_none(), "{together}");
    // Greedy: the same acceptance and tokens per call wherever the drafts run (the outputs
    // themselves: tests/decoding.rs).
    for key in ["alpha", "tokens_per_call"] {
        assert_eq!(apart[key], together[key], "{key}");
    }
    // The drafts ran on the CPU: a draft call takes about what it takes with every model on flex
    // (on lavapipe a draft call on the GPU takes 10× that; on a real GPU it may not, so the
    // ratio c itself, which depends on the GPU, is not what is checked here).
    let on_flex = json(&[
        "likesworld",
        "speedup",
        "--draft",
        "b",
        "--gamma",
        "3",
        "--prompts",
        "4",
    ]);
    let (apart_us, flex_us) = (f(&apart, "draft_call_us"), f(&on_flex, "draft_call_us"));
    assert!(
        apart_us < 3.0 * flex_us,
        "a draft call beside the GPU target {apart_us} µs, with every model on flex {flex_us} µs"
    );
    // The table says so too.
    let (code, stdout, stderr) = run(&wgpu_speedup("2", "2", &["--drafts-on", "flex"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("flex, beside the target on wgpu"),
        "{stdout}"
    );
}

/// The drafts on the target's hidden states move too: they read the features the GPU target's
/// call reads back with its logits, so EAGLE-2 on the CPU beside it proposes the same trees, and
/// the §6 table runs every model draft there (its rows compared at one placement).
#[test]
fn hidden_state_drafts_and_the_methods_table_run_on_the_cpu_beside_a_gpu_target() {
    let eagle2 = |extra: &[&'static str]| {
        let a = ["likesworld", "eagle", "--dynamic", "--budget", "8"];
        json(&[&a, &["--prompts", "3", "--backend", "wgpu"][..], extra].concat())
    };
    let apart = eagle2(&["--drafts-on", "flex"]);
    let together = eagle2(&[]);
    assert_eq!(apart["drafts_on"], "flex", "{apart}");
    assert!(together.get("drafts_on").is_none(), "{together}");
    assert_eq!(apart["identical"].as_u64(), Some(3), "{apart}");
    for key in [
        "tokens_per_call",
        "verified_nodes_per_call",
        "draft_calls_per_step",
    ] {
        assert_eq!(apart[key], together[key], "{key}");
    }
    let medusa = [
        "likesworld",
        "medusa",
        "--prompts",
        "2",
        "--backend",
        "wgpu",
    ];
    let (code, stdout, stderr) = run(&[&medusa[..], &["--drafts-on", "flex"]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("flex, beside the target on wgpu"),
        "{stdout}"
    );
    let table = ["likesworld", "methods", "--budget", "4", "--prompts", "1"];
    let t = json(&[&table[..], &["--backend", "wgpu", "--drafts-on", "flex"]].concat());
    assert_eq!(t["drafts_on"], "flex", "{t}");
    assert_eq!(t["rows"].as_array().map(Vec::len), Some(8), "{t}");
}

#[test]
fn drafts_on_is_refused_where_no_draft_model_would_move() {
    let on_flex = |a: &[&'static str]| [a, &["--backend", "wgpu", "--drafts-on", "flex"]].concat();
    check_error(
        &wgpu_speedup("2", "2", &["--drafts-on", "tpu"]),
        "likesworld: --drafts-on: unknown backend \"tpu\"",
    );
    check_error(
        &on_flex(&["likesworld", "speedup", "--drafter", "prompt-lookup"]),
        "--drafts-on: a drafter without a model runs no draft model",
    );
    // A trained draft has no place beside a drafter without a model either.
    check_error(
        &[
            "likesworld",
            "speedup",
            "--drafter",
            "suffix",
            "--draft-file",
            "draft.bpk",
        ],
        "--draft-file: a drafter without a model runs neither draft A nor draft B",
    );
    check_error(
        &on_flex(&["likesworld", "widen-check", "--width", "2"]),
        "--drafts-on: the widening check runs no draft model",
    );
    check_error(
        &on_flex(&["likesworld", "tree-vs-paths", "--config", "eagle-2"]),
        "--drafts-on: it times the target's calls alone",
    );
}

//! The drafts on another backend than the target (issue 31): `--backend wgpu --drafts-on flex`
//! runs the target on the GPU (natively: lavapipe) and drafts A and B on the CPU beside it, as
//! the page runs WebGPU. The outputs stay the target's, the report says where the drafts ran, and
//! c is a draft's CPU time over the target's GPU step: far below a draft's GPU call over the
//! target's, where both pay the GPU's fixed cost of a call.

use super::{check_error, f, json, wgpu_speedup};

#[test]
fn drafts_on_the_cpu_beside_a_gpu_target_keep_the_outputs_and_cut_c() {
    let speedup = |extra: &[&'static str]| json(&wgpu_speedup("3", "4", extra));
    let apart = speedup(&["--drafts-on", "flex"]);
    let together = speedup(&[]);
    assert_eq!(apart["backend"], "wgpu", "{apart}");
    assert_eq!(apart["drafts_on"], "flex", "{apart}");
    assert!(together.get("drafts_on").is_none(), "{together}");
    // Greedy: the same tokens at the same acceptance wherever the drafts run.
    for key in ["tokens", "alpha", "tokens_per_call"] {
        assert_eq!(apart[key], together[key], "{key}");
    }
    // A draft call on the GPU pays about what a target call pays (c near 1 on lavapipe, whose
    // fixed cost per call dwarfs these models' arithmetic); on the CPU it costs a fraction.
    let (c_apart, c_together) = (f(&apart, "c"), f(&together, "c"));
    assert!(
        c_apart < 0.5 * c_together,
        "c with the drafts on the CPU {c_apart}, on the GPU {c_together}"
    );
}

#[test]
fn an_unknown_drafts_backend_is_refused_before_anything_loads() {
    check_error(&wgpu_speedup("2", "2", &["--drafts-on", "tpu"]), "tpu");
}

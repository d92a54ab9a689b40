//! Offloading on the command line (issue 34, part 2): `--offload` keeps the target's weights in
//! host memory and writes them into the GPU's buffers before every target call, on wgpu
//! (natively: lavapipe). The speedup reports the crossing beside the wall clock and its outputs
//! stay the target's; the measured roofline reports it beside T(k); the CPU backends refuse it.

use super::{check_error, f, json, run, wgpu_speedup as speedup};

#[test]
fn offloading_reports_the_crossing_and_the_cpu_backends_refuse_it() {
    let on = json(&speedup("2", "3", &["--offload"]));
    let off = json(&speedup("2", "3", &[]));
    // The trained target's 84,584 parameters, as f32, cross every call.
    let t = &on["transfer"];
    assert_eq!(t["bytes"].as_u64(), Some(4 * 84_584), "{on}");
    assert!(
        f(&t["crossing"], "median_us") > 0.0 && f(t, "gb_per_s") > 0.0,
        "{on}"
    );
    assert!(
        off.get("transfer").is_none(),
        "no crossing without --offload: {off}"
    );
    // The same prompts decode to the same tokens at the same acceptance either way (greedy: the
    // weights that crossed are the target's).
    for key in ["tokens", "alpha", "tokens_per_call"] {
        assert_eq!(on[key], off[key], "{key}");
    }
    let (code, stdout, _) = run(&[
        "roofline-measure",
        "--backend",
        "wgpu",
        "--k",
        "1,4",
        "--offload",
    ]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("offloaded      0.3 MB cross before every call: ")
            && stdout.contains(" µs a crossing (IQR "),
        "{stdout}"
    );
    let r = json(&[
        "roofline-measure",
        "--backend",
        "wgpu",
        "--k",
        "1",
        "--offload",
    ]);
    assert_eq!(
        r["transfer"]["bytes"],
        4 * r["params"].as_u64().unwrap(),
        "{r}"
    );
    // The γ sweep's table says what crossed too.
    let (code, stdout, stderr) = run(&speedup("1,2", "2", &["--offload"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("offloaded weights") && stdout.contains("0.3 MB cross before every call"),
        "{stdout}"
    );
    // Only the commands that report the crossing take --offload.
    check_error(
        &[
            "likesworld",
            "greedy",
            "--backend",
            "flex",
            "--draft",
            "b",
            "--gamma",
            "2",
            "--offload",
        ],
        "unknown option --offload",
    );
    for backend in ["flex", "ndarray"] {
        check_error(
            &[
                "likesworld",
                "speedup",
                "--draft",
                "b",
                "--gamma",
                "2",
                "--backend",
                backend,
                "--offload",
            ],
            &format!("--offload needs --backend wgpu (on {backend} the weights already live in host memory)"),
        );
    }
    check_error(
        &["roofline-measure", "--offload"],
        "roofline-measure: --offload needs --backend wgpu",
    );
}

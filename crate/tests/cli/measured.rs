//! The CLI's measured commands of issue 22: the widened, memory-bound target (the widening
//! check, the measured roofline, a speedup on it) and `likesworld speedup`'s wall-clock sweep over
//! γ with the drafters that need no model, each with the values it refuses.
//!
//! A file apart from `models.rs` because these cases are one contract, the issue's: the target
//! widened and what the clock says about speeding it up. `models.rs` keeps the trained models'
//! commands and the decoding experiments' first checks.

use super::{check_error, f, json};

/// The memory-bound target on the command line (issue 22's contract): the widening check, the
/// measured roofline, the speedup on a widened target, and their bad values.
#[test]
fn the_widened_target_on_the_command_line() {
    let w = json(&[
        "likesworld",
        "widen-check",
        "--width",
        "4",
        "--prompts",
        "8",
    ]);
    assert_eq!(w["width"], 4);
    // 16× the parameters of the matrices, ≈ 15.9× in all (the vocabulary is not widened).
    let params = w["params"].as_u64().unwrap();
    assert!((1_200_000..1_400_000).contains(&params), "{w}");
    // A step reads every matrix once, the embeddings only a row per token.
    let bytes = w["weight_bytes"].as_u64().unwrap();
    assert!(bytes > 4 * 1_150_000 && bytes < 4 * params, "{w}");
    assert!(f(&w, "max_abs_logit_diff") <= 1e-3, "{w}");
    assert_eq!(f(&w, "argmax_agreement"), 1.0, "{w}");
    // k = 64 fills the model's 64 positions (it runs on an empty cache).
    let r = json(&["roofline-measure", "--width", "2", "--k", "1,4,64"]);
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{r}");
    for (row, k) in rows.iter().zip([1, 4, 64]) {
        assert_eq!(
            (row["k"].as_u64(), row["batch"].as_u64()),
            (Some(k), Some(1))
        );
        assert!(f(row, "median_us") > 0.0 && f(row, "iqr_us") >= 0.0, "{r}");
    }
    for key in ["bandwidth_gbs", "peak_gflops", "memory_floor_us"] {
        assert!(f(&r, key) > 0.0, "{key}: {r}");
    }
    // The peak is a ceiling on real points: no call's rate (2 flops a weight and token) above it,
    // and never below the calibration's.
    let weights = f(&r, "weight_bytes") / 4.0;
    for row in rows {
        let rate = 2.0 * weights * f(row, "k") / f(row, "median_us") / 1e3;
        assert!(rate <= f(&r, "peak_gflops") * (1.0 + 1e-12), "{rate}: {r}");
    }
    assert!(
        f(&r, "peak_gflops") >= f(&r, "calibrated_peak_gflops"),
        "{r}"
    );
    assert_eq!(r["calibration_reused"], false, "{r}");
    assert_eq!(r["width"], 2);
    // How the CPU ran the matmuls: natively one thread (the pool is the page's threaded module's),
    // FMA where the kernel fuses, and the kernel named.
    let ex = &r["execution"];
    assert_eq!(ex["threads"], 1, "{r}");
    let kernel = ex["kernel"].as_str().unwrap();
    assert!(["AVX2 + FMA", "portable"].contains(&kernel), "{r}");
    assert_eq!(ex["fma"].as_bool(), Some(kernel == "AVX2 + FMA"), "{r}");
    // Natively nothing is packed: the row-major kernel takes two passes of 16 rows, burn past them.
    assert_eq!(
        (ex["packed"].as_bool(), ex["most_rows"].as_u64()),
        (Some(false), Some(32)),
        "{r}"
    );
    let sp = json(&[
        "likesworld",
        "speedup",
        "--draft",
        "a",
        "--gamma",
        "2",
        "--prompts",
        "4",
        "--batch",
        "2",
        "--target-width",
        "2",
    ]);
    assert_eq!(
        (sp["target_width"].as_u64(), sp["batch"].as_u64()),
        (Some(2), Some(2))
    );
    for key in ["predicted_speedup_curve", "measured_speedup", "c"] {
        assert!(f(&sp, key) > 0.0, "{key}: {sp}");
    }
    assert!(f(&sp, "measured_speedup_iqr") >= 0.0, "{sp}");
    check_error(&["likesworld", "widen-check", "--width", "0"], "width = 0");
    check_error(
        &["likesworld", "widen-check", "--width", "25"],
        "width = 25",
    );
    check_error(&["roofline-measure", "--k", "1,65"], "k = 65");
    check_error(
        &["roofline-measure", "--matmul", "blas"],
        "unknown --matmul \"blas\"",
    );
    check_error(
        &[
            "likesworld",
            "greedy",
            "--draft",
            "b",
            "--gamma",
            "2",
            "--target-width",
            "99",
        ],
        "width = 99",
    );
}

/// The wall clock over γ (demo 5 answered by measurement) and drafters without a model timed
/// against the target alone (issue 22): the sweep's rows and its best γ beside the formula's,
/// a look-up's c, and the values each refuses.
#[test]
fn the_speedup_sweeps_gamma_and_times_drafters_without_a_model() {
    let s = json(&[
        "likesworld",
        "speedup",
        "--draft",
        "b",
        "--gamma",
        "3,1",
        "--prompts",
        "3",
    ]);
    let rows = s["rows"].as_array().unwrap();
    let gammas: Vec<u64> = rows.iter().map(|r| r["gamma"].as_u64().unwrap()).collect();
    assert_eq!(gammas, [1, 3], "sorted: {s}");
    let best = s["best_gamma"].as_u64().unwrap();
    let top = rows
        .iter()
        .max_by(|a, b| f(a, "measured_speedup").total_cmp(&f(b, "measured_speedup")))
        .unwrap();
    assert_eq!(best, top["gamma"].as_u64().unwrap(), "{s}");
    assert_eq!(f(&s, "best_speedup"), f(top, "measured_speedup"));
    // The formula's optimum is the best of its values at every γ, the listed ones included (one
    // α and c for the whole sweep): it never promises less than a γ in the table.
    let optimum = s["formula_gamma"]
        .as_u64()
        .expect("a chain has the formula's optimum");
    let at: Vec<f64> = s["formula_at"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(at.len(), 2, "{s}");
    if optimum == 0 {
        assert!(at.iter().all(|&x| x < 1.0), "no γ pays, yet {at:?}: {s}");
    } else {
        assert!(
            at.iter().all(|&x| x <= f(&s, "formula_speedup") + 1e-12),
            "{s}"
        );
    }
    assert_eq!(s["method"], "draft B chains, greedy");
    // This device's choice beside the measured best: from T(1) … T(4) timed in the same run.
    let choice = &s["device_choice"];
    assert_eq!(choice["times_us"].as_array().expect("T(k)").len(), 4, "{s}");
    assert!(choice["gamma"].as_u64().expect("a γ") <= 3, "{s}");
    assert!(
        f(choice, "predicted_speedup") >= 1.0 && f(choice, "c") > 0.0,
        "{s}"
    );
    assert!(
        rows.iter().all(|r| r.get("plain_lane").is_none()),
        "no lanes in a sweep"
    );
    // Prompt Lookup: greedy, no draft model, its c the look-up's time over a target call.
    let p = json(&[
        "likesworld",
        "speedup",
        "--drafter",
        "prompt-lookup",
        "--gamma",
        "4",
        "--prompts",
        "3",
    ]);
    assert_eq!(p["shape"], "prompt-lookup");
    assert!(
        p["predicted_speedup"].is_null(),
        "no E(α, γ) for a look-up: {p}"
    );
    assert!(
        f(&p, "c") > 0.0 && f(&p, "c") < 0.5,
        "a look-up is cheap: {p}"
    );
    assert_eq!(
        f(&p, "draft_calls_per_step"),
        1.0,
        "one look-up a step: {p}"
    );
    assert!(f(&p, "predicted_speedup_curve") > 0.0 && f(&p, "measured_speedup") > 0.0);
    // Bad values: one line naming the value, exit 2.
    let speedup = |rest: &[&'static str]| [&["likesworld", "speedup"], rest].concat();
    let cases: [(Vec<&str>, &str); 7] = [
        (
            speedup(&["--drafter", "suffix", "--gamma", "4", "--batch", "4"]),
            "batch 1 only",
        ),
        (
            speedup(&["--drafter", "jacobi", "--draft", "a"]),
            "--drafter jacobi drafts without one",
        ),
        (
            speedup(&["--drafter", "medusa", "--gamma", "4"]),
            "unknown --drafter \"medusa\"",
        ),
        (speedup(&["--gamma", "1,x"]), "bad γ list \"1,x\""),
        (speedup(&["--gamma", "1,2,3,4,5,6,7,8,9"]), "#γ = 9"),
        (speedup(&["--gamma", "1,17"]), "gamma = 17"),
        (
            speedup(&["--config", "<2,1>", "--gamma", "1,2"]),
            "no γ to sweep",
        ),
    ];
    for (args, needle) in cases {
        check_error(&args, needle);
    }
}

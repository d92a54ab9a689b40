//! The CLI's commands with the LikesWorld models: accuracy and tree attention, the speculative
//! decoding experiments, model-free drafting, and the range of every size option.

use super::{check_error, f, json};

#[test]
fn likesworld_models_on_the_command_line() {
    let t = json(&["tree-attention", "--config", "<2,2,1>", "--prompts", "2"]);
    assert!(f(&t, "max_abs_diff") <= 1e-4, "{t}");
    assert_eq!(
        (t["tree_tokens"].as_u64(), t["path_tokens"].as_u64()),
        (Some(10), Some(12))
    );
    let t = json(&[
        "tree-attention",
        "--config",
        "⟨2,2,2,2⟩",
        "--prompts",
        "1",
        "--backend",
        "ndarray",
        "--no-cache",
    ]);
    assert!(f(&t, "max_abs_diff") <= 1e-4, "{t}");
    // On the GPU (natively Vulkan; lavapipe where the machine has no GPU).
    let t = json(&[
        "tree-attention",
        "--config",
        "<2,2,1>",
        "--prompts",
        "1",
        "--backend",
        "wgpu",
    ]);
    assert!(f(&t, "max_abs_diff") <= 1e-4, "{t}");
    let a = json(&[
        "likesworld",
        "accuracy",
        "--model",
        "target",
        "--worlds",
        "200",
    ]);
    assert_eq!(f(&a, "answer_accuracy"), 1.0, "{a}");
    assert_eq!(a["parameters"], 84_584);
    check_error(&["likesworld", "accuracy", "--model", "huge"], "\"huge\"");
    check_error(
        &["tree-attention", "--config", "<2,2,1>", "--backend", "cuda"],
        "\"cuda\"",
    );
    check_error(
        &["train", "--model", "target", "--seed", "1", "--steps", "0"],
        "steps = 0 is out of range",
    );
}

#[test]
fn speculative_decoding_on_the_command_line() {
    // The contract's keys, on small runs.
    let g = json(&[
        "likesworld",
        "greedy",
        "--draft",
        "b",
        "--gamma",
        "4",
        "--prompts",
        "20",
    ]);
    assert_eq!(
        (g["prompts"].as_u64(), g["identical"].as_u64()),
        (Some(20), Some(20)),
        "{g}"
    );
    for key in ["tokens", "target_calls"] {
        assert!(g[key].as_u64().unwrap() > 0, "{g}");
    }
    assert!(
        f(&g, "tokens_per_call") > 1.0 && f(&g, "alpha") > 0.0,
        "{g}"
    );
    assert!(
        f(&g, "formula_tokens_per_call") > f(&g, "tokens_per_call"),
        "{g}"
    );
    let s = json(&[
        "likesworld",
        "sample",
        "--draft",
        "a",
        "--gamma",
        "2",
        "--prompts",
        "10",
        "--repeats",
        "1",
        "--seed",
        "3",
    ]);
    for key in ["tokens_per_call", "alpha", "p_value"] {
        assert!(s[key].is_f64(), "{key}: {s}");
    }
    let t = json(&[
        "likesworld",
        "tree",
        "--config",
        "<2,2,1>",
        "--prompts",
        "10",
    ]);
    assert_eq!(t["identical"], 10, "{t}");
    assert!(
        f(&t, "verified_nodes_per_call") > 1.0 && f(&t, "tokens_per_call") > 1.0,
        "{t}"
    );
    let st = json(&[
        "likesworld",
        "stochastic",
        "--config",
        "<1,1,3,1>",
        "--verify",
        "mss",
        "--prompts",
        "5",
    ]);
    assert!(f(&st, "tokens_per_call") >= 1.0, "{st}");
    let sp = json(&[
        "likesworld",
        "speedup",
        "--draft",
        "b",
        "--gamma",
        "3",
        "--prompts",
        "3",
    ]);
    for key in ["alpha", "c", "predicted_speedup", "measured_speedup"] {
        assert!(f(&sp, key) > 0.0, "{key}: {sp}");
    }
    // Bad values: one line naming the value, exit 2, before any model is loaded.
    check_error(
        &["likesworld", "greedy", "--draft", "b", "--gamma", "0"],
        "gamma = 0",
    );
    check_error(
        &["likesworld", "greedy", "--draft", "b", "--gamma", "100000"],
        "gamma = 100000",
    );
    check_error(
        &["likesworld", "greedy", "--draft", "c", "--gamma", "2"],
        "unknown draft \"c\"",
    );
    check_error(
        &["likesworld", "tree", "--config", "<2,,1>"],
        "level 2 is empty",
    );
    check_error(
        &["likesworld", "tree", "--config", "<4,4,4>"],
        "over the budget of 64",
    );
    check_error(
        &["likesworld", "tree", "--config", "<1,1,1,1,1,1,1,1,1>"],
        "tree depth = 9",
    );
    check_error(
        &[
            "likesworld",
            "stochastic",
            "--config",
            "<2>",
            "--verify",
            "maybe",
        ],
        "\"maybe\"",
    );
    check_error(
        &[
            "likesworld",
            "sample",
            "--draft",
            "a",
            "--gamma",
            "2",
            "--variant",
            "lucky",
        ],
        "\"lucky\"",
    );
    check_error(
        &[
            "likesworld",
            "greedy",
            "--draft",
            "a",
            "--gamma",
            "2",
            "--prompts",
            "0",
        ],
        "prompts = 0",
    );
    check_error(&["likesworld", "juggle"], "unexpected argument \"juggle\"");
    check_error(&["likesworld", "--draft", "a"], "expected one of");
}

/// The contract promises `--seed` on every LikesWorld experiment; greedy decoding draws nothing,
/// so `likesworld greedy` takes the seed and its output is the same whatever the seed.
#[test]
fn greedy_decoding_accepts_a_seed_and_ignores_it() {
    let run = |seed: &str| {
        json(&[
            "likesworld",
            "greedy",
            "--draft",
            "b",
            "--gamma",
            "3",
            "--prompts",
            "6",
            "--seed",
            seed,
        ])
    };
    let (one, two) = (run("1"), run("987654321"));
    assert_eq!(one["identical"], 6, "{one}");
    assert_eq!(one, two, "two seeds, one greedy output");
    check_error(
        &[
            "likesworld",
            "greedy",
            "--draft",
            "b",
            "--gamma",
            "3",
            "--seed",
            "-3",
        ],
        "--seed",
    );
}

#[test]
fn model_free_drafting_on_the_command_line() {
    let d = json(&[
        "prompt-lookup",
        "--tokens",
        "1,2,3,4,1,2,3",
        "--ngram",
        "3",
        "--k",
        "3",
    ]);
    assert_eq!(d["draft"], serde_json::json!([4, 1, 2]));
    let none = json(&[
        "prompt-lookup",
        "--tokens",
        "1,2,3",
        "--ngram",
        "2",
        "--k",
        "4",
    ]);
    assert_eq!(none["draft"], serde_json::json!([]));
    // Code rewrite copies its prompt: Prompt Lookup decides several tokens per call.
    let pl = json(&[
        "modelfree",
        "--workload",
        "code-rewrite",
        "--drafter",
        "prompt-lookup",
        "--requests",
        "20",
    ]);
    assert!(f(&pl, "tokens_per_call") > 3.0, "{pl}");
    assert!((f(&pl, "tokens") / f(&pl, "target_calls") - f(&pl, "tokens_per_call")).abs() < 1e-12);
    assert_eq!(f(&pl, "identical"), 20.0);
    // LikesWorld with the real target: identical to its greedy output.
    let lw = json(&[
        "modelfree",
        "--workload",
        "likesworld",
        "--drafter",
        "suffix",
        "--budget",
        "4",
        "--requests",
        "10",
    ]);
    assert_eq!(f(&lw, "identical"), 10.0);
    assert!(f(&lw, "tokens_per_call") > 1.2, "{lw}");
    let sweep = json(&[
        "modelfree",
        "sweep",
        "--workload",
        "agent",
        "--requests",
        "10",
    ]);
    let rows = sweep["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    assert!(f(&rows[7], "tokens_per_call") > f(&rows[0], "tokens_per_call"));
    assert!(f(&rows[7], "accepted_node_fraction") < f(&rows[0], "accepted_node_fraction"));
    let bench = json(&["suffix-bench", "--max-tokens", "10000", "--lookups", "50"]);
    assert_eq!(bench["sizes"].as_array().unwrap().len(), 2);
    for (args, needle) in [
        (
            &[
                "prompt-lookup",
                "--tokens",
                "1,2",
                "--ngram",
                "0",
                "--k",
                "3",
            ][..],
            "ngram = 0",
        ),
        (
            &[
                "prompt-lookup",
                "--tokens",
                "1,2",
                "--ngram",
                "2",
                "--k",
                "100000",
            ],
            "k = 100000",
        ),
        (
            &[
                "prompt-lookup",
                "--tokens",
                "1,two",
                "--ngram",
                "2",
                "--k",
                "3",
            ],
            "\"two\"",
        ),
        (
            &["modelfree", "--workload", "chat", "--drafter", "suffix"],
            "\"chat\"",
        ),
        (
            &["modelfree", "--workload", "agent", "--drafter", "medusa"],
            "\"medusa\"",
        ),
        (
            &[
                "modelfree",
                "--workload",
                "agent",
                "--drafter",
                "suffix",
                "--budget",
                "0",
            ],
            "budget = 0",
        ),
        (
            &["modelfree", "sweep", "--drafter", "jacobi"],
            "suffix or both",
        ),
    ] {
        check_error(args, needle);
    }
}

/// Sizes with no bound were a way to exhaust memory or panic: each has a documented range now.
#[test]
fn every_size_option_has_a_range() {
    for (args, needle) in [
        (
            &[
                "tree",
                "--config",
                "<1000,1000,1000>",
                "--budget",
                "2000000000",
            ][..],
            "budget = 2000000000",
        ),
        (
            &["tree", "--config", "<1000,1000,1000>", "--budget", "100000"],
            "over the budget of 100000",
        ),
        (
            &[
                "likesworld",
                "accuracy",
                "--model",
                "target",
                "--worlds",
                "99999999",
            ],
            "worlds = 99999999",
        ),
        (
            &[
                "train", "--model", "target", "--seed", "1", "--batch", "100000",
            ],
            "batch = 100000",
        ),
        (
            &["tree-attention", "--config", "<2,1>", "--prompts", "5000"],
            "prompts = 5000",
        ),
        (
            &["model-bench", "--runs", "18446744073709551615"],
            "runs = 18446744073709552000",
        ),
        (&["model-bench", "--runs", "0"], "runs = 0"),
    ] {
        check_error(args, needle);
    }
}

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
    assert_eq!(r["width"], 2);
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

/// `likesworld medusa|eagle|methods`: the contract's keys, lossless greedy runs, and every bad
/// value of the list exiting 2 with one line.
#[test]
fn hidden_state_drafts_on_the_command_line() {
    let m = json(&[
        "likesworld",
        "medusa",
        "--heads",
        "3",
        "--budget",
        "8",
        "--prompts",
        "3",
    ]);
    assert_eq!(
        (m["prompts"].as_u64(), m["identical"].as_u64()),
        (Some(3), Some(3)),
        "{m}"
    );
    assert!(f(&m, "tokens_per_call") > 1.0, "{m}");
    assert_eq!(m["head_accuracy"].as_array().map(Vec::len), Some(3), "{m}");
    assert!(f(&m, "c") > 0.0, "{m}");
    let e = json(&[
        "likesworld",
        "eagle",
        "--dynamic",
        "--budget",
        "8",
        "--depth",
        "4",
        "--prompts",
        "3",
    ]);
    assert_eq!(e["identical"].as_u64(), Some(3), "{e}");
    assert!(f(&e, "verified_nodes_per_call") <= 8.0, "{e}");
    assert_eq!(
        e["acceptance_by_depth"].as_array().map(Vec::len),
        Some(4),
        "{e}"
    );
    assert!(e["p_value"].is_null(), "greedy: no calibration test: {e}");
    let s = json(&[
        "likesworld",
        "eagle",
        "--dynamic",
        "--ttt",
        "--verify",
        "mss",
        "--seed",
        "3",
        "--prompts",
        "3",
    ]);
    assert!(f(&s, "p_value") >= 0.0 && f(&s, "p_value") <= 1.0, "{s}");
    let t = json(&["likesworld", "methods", "--budget", "8", "--prompts", "2"]);
    let rows = t["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 8, "{t}");
    for r in rows {
        assert!(
            f(r, "tokens_per_call") >= 1.0 && f(r, "measured_speedup") > 0.0,
            "{r}"
        );
        assert!(r["method"].is_string() && f(r, "c") >= 0.0, "{r}");
    }
    let cases: [(&[&str], &str); 9] = [
        (&["likesworld", "medusa", "--heads", "0"], "heads = 0"),
        (&["likesworld", "medusa", "--heads", "5"], "heads = 5"),
        (&["likesworld", "medusa", "--budget", "0"], "budget = 0"),
        (&["likesworld", "eagle", "--budget", "65"], "budget = 65"),
        (&["likesworld", "eagle", "--depth", "0"], "depth = 0"),
        (
            &["likesworld", "eagle", "--verify", "mss"],
            "needs the dynamic tree",
        ),
        (
            &["likesworld", "eagle", "--verify", "typical"],
            "unknown verification",
        ),
        (&["likesworld", "medusa", "--tree", "dynamic"], "static"),
        (
            &["likesworld", "methods", "--budget", "100"],
            "budget = 100",
        ),
    ];
    for (args, needle) in cases {
        check_error(args, needle);
    }
}

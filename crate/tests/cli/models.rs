//! The CLI's commands with the LikesWorld models: accuracy and tree attention, the speculative
//! decoding experiments, model-free drafting, and the range of every size option.
//!
//! The models' other commands have files of their own, each one contract: the widened target and
//! the wall-clock speedups in `measured.rs`, the hidden-state drafts in `hidden.rs`.

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
    check_error(
        &["likesworld", "juggle"],
        "unknown experiment \"juggle\" (known: accuracy, acceptance, greedy",
    );
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

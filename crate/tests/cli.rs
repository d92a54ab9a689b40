//! The `specdec` CLI contract: one JSON object on stdout with --json, exit status 2 and one
//! line on stderr naming the bad value otherwise. Each case runs the real binary.

use serde_json::Value;
use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
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

fn json(args: &[&str]) -> Value {
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

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

fn check_error(args: &[&str], needle: &str) {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 2, "{args:?}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
}

#[test]
fn theory_and_optimal_gamma() {
    let v = json(&[
        "theory", "--alpha", "0.75", "--gamma", "4", "--c", "0.05", "--c-hat", "0.02",
    ]);
    assert_eq!(
        format!(
            "{:.2} {:.2} {:.2}",
            f(&v, "expected_tokens"),
            f(&v, "speedup"),
            f(&v, "operations")
        ),
        "3.05 2.54 1.67"
    );
    for (c, g) in [("0.01", 14), ("0.02", 11), ("0.05", 8), ("0.1", 6)] {
        assert_eq!(
            json(&["optimal-gamma", "--alpha", "0.8", "--c", c])["gamma"],
            g
        );
    }
}

#[test]
fn roofline_and_cost_ratio() {
    for (k, time, bound) in [("4", "26.90", "memory"), ("8", "37.63", "compute")] {
        let v = json(&[
            "roofline",
            "--gpu",
            "a100-40gb",
            "--model",
            "opt-13b",
            "--batch",
            "32",
            "--context",
            "512",
            "--k",
            k,
        ]);
        assert_eq!(
            (
                format!("{:.2}", f(&v, "time_ms")),
                v["bound"].as_str().unwrap()
            ),
            (time.into(), bound),
            "k = {k}"
        );
    }
    let v = json(&[
        "cost-ratio",
        "--draft",
        "opt-125m",
        "--target",
        "opt-13b",
        "--overhead-ms",
        "0.2",
    ]);
    assert_eq!(format!("{:.2}", f(&v, "c")), "0.02");
}

#[test]
fn sampling_exercises() {
    let v = json(&[
        "sample-dist",
        "--p",
        "0.6,0.4",
        "--q",
        "0.5,0.5",
        "--rule",
        "correct",
    ]);
    assert_eq!(v["output"], serde_json::json!([0.6, 0.4]));
    assert!((f(&v, "acceptance") - 0.9).abs() < 1e-12);
    let v = json(&[
        "sample-dist",
        "--p",
        "0.5,0.5",
        "--q",
        "0.6,0.4",
        "--rule",
        "argmax-draft",
    ]);
    assert_eq!(format!("{:.4}", v["output"][0].as_f64().unwrap()), "0.8333");
    assert!(
        f(
            &json(&["toy-exact", "--gamma", "4", "--variant", "correct"]),
            "tv"
        ) <= 1e-12
    );
    assert!(
        f(
            &json(&[
                "toy-exact",
                "--gamma",
                "3",
                "--variant",
                "greedy-rule",
                "--seed",
                "5"
            ]),
            "tv"
        ) > 0.1
    );
}

#[test]
fn multi_draft_slide_and_exercise_6() {
    let slide = [
        "multi-draft",
        "--p",
        "0.25,0.25,0.25,0.25",
        "--drafts",
        "1,0,0,0;0.25,0.25,0.25,0.25",
    ];
    let with = |extra: &[&str]| json(&[&slide[..], extra].concat());
    assert_eq!(
        f(&with(&["--mode", "naive", "--given", "0,1"]), "acceptance"),
        0.5
    );
    assert_eq!(
        f(&with(&["--mode", "mss", "--given", "0,1"]), "acceptance"),
        1.0
    );
    assert_eq!(f(&with(&["--mode", "mss"]), "acceptance"), 0.8125);
    assert_eq!(f(&with(&["--mode", "naive"]), "acceptance"), 0.4375);
    let ex6 = json(&[
        "multi-draft",
        "--p",
        "0.25,0.25,0.25,0.25",
        "--drafts",
        "0.5,0.5,0,0;0.25,0.25,0.25,0.25",
        "--mode",
        "mss",
        "--given",
        "1,2",
    ]);
    assert_eq!(f(&ex6, "acceptance"), 1.0);
}

#[test]
fn tree_exercise_5_and_configs() {
    let v = json(&["tree", "--paths", "a b c|a b d e|f g", "--root", "r"]);
    assert_eq!(
        v["order"],
        serde_json::json!(["r", "a", "b", "c", "d", "e", "f", "g"])
    );
    assert_eq!(v["depths"], serde_json::json!([0, 1, 2, 3, 3, 4, 1, 2]));
    assert_eq!(v["mask"][5], serde_json::json!([1, 1, 1, 0, 1, 1, 0, 0]));
    assert_eq!(
        (v["nodes"].as_u64(), v["sequence_tokens"].as_u64()),
        (Some(7), Some(9))
    );
    let no_root = json(&["tree", "--paths", "a b c|a b d e|f g"]);
    assert_eq!(no_root["order"].as_array().unwrap().len(), 7);
    let v = json(&["tree", "--config", "<2,2,1>"]);
    assert_eq!(
        (v["nodes"].as_u64(), v["sequence_tokens"].as_u64()),
        (Some(10), Some(12))
    );
    assert_eq!(json(&["tree", "--config", "⟨2,2,2,2⟩"])["nodes"], 30);
}

#[test]
fn bad_arguments_exit_2_with_one_line_naming_the_value() {
    check_error(&["theory", "--alpha", "1.5", "--gamma", "3"], "alpha = 1.5");
    check_error(&["theory", "--alpha", "abc", "--gamma", "3"], "\"abc\"");
    check_error(&["theory", "--gamma", "3"], "missing --alpha");
    check_error(
        &["theory", "--alpha", "0.5", "--gamma", "3", "--gama", "4"],
        "unknown option --gama",
    );
    check_error(
        &[
            "roofline",
            "--gpu",
            "v100",
            "--model",
            "opt-13b",
            "--batch",
            "1",
            "--context",
            "1",
            "--k",
            "1",
        ],
        "\"v100\"",
    );
    check_error(&["tree", "--config", "<2,,1>"], "level 2 is empty");
    check_error(&["tree", "--config", "<0>"], "width 0");
    check_error(&["tree", "--config", "<99,99,99,99>"], "over the budget");
    check_error(
        &[
            "sample-dist",
            "--p",
            "0.6,0.4",
            "--q",
            "0.5,0.5",
            "--rule",
            "magic",
        ],
        "\"magic\"",
    );
    check_error(
        &[
            "multi-draft",
            "--p",
            "0.5,0.5",
            "--drafts",
            "1,0",
            "--mode",
            "mss",
            "--given",
            "1",
        ],
        "probability 0",
    );
    check_error(&["frobnicate"], "unknown command \"frobnicate\"");
}

#[test]
fn tables_by_default() {
    let (code, stdout, _) = run(&["theory", "--alpha", "0.8", "--gamma", "5"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("speedup") && stdout.contains("3.6893×"),
        "{stdout}"
    );
}

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

#[cfg(unix)]
#[test]
fn a_non_utf8_argument_exits_2_with_one_line() {
    use std::os::unix::ffi::OsStrExt;
    let out = Command::new(env!("CARGO_BIN_EXE_specdec"))
        .args([
            std::ffi::OsStr::new("theory"),
            std::ffi::OsStr::from_bytes(b"--alpha\xff"),
        ])
        .output()
        .expect("the binary runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("argument 2") && err.contains("not valid UTF-8"),
        "{err}"
    );
}

#[test]
fn sample_dist_refuses_the_bonus_rule_it_cannot_show() {
    check_error(
        &[
            "sample-dist",
            "--p",
            "0.6,0.4",
            "--q",
            "0.5,0.5",
            "--rule",
            "bonus-from-draft",
        ],
        "toy-exact --variant bonus-from-draft",
    );
}

#[test]
fn exercises_are_checked_part_by_part() {
    let v = json(&[
        "exercise",
        "--number",
        "5",
        "--answers",
        "7|r0 a1 b2 c3 d3 e4 f1 g2|a b c",
    ]);
    let verdicts: Vec<&str> = v["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["right", "right", "wrong"]);
    assert_eq!(v["solved"], false);
    assert!(v["solution"].is_null());
    let v = json(&[
        "exercise",
        "--number",
        "7",
        "--answers",
        "0.5, 0.5; 0.6, 0.4",
    ]);
    assert_eq!(v["solved"], true);
    assert!(v["solution"].as_str().unwrap().contains("(0.833, 0.167)"));
    check_error(&["exercise", "--number", "2"], "unknown exercise \"2\"");
    check_error(&["exercise", "--number", "x"], "bad value for --number");
}

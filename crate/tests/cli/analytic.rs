//! The CLI's commands without models: closed forms, the roofline, sampling and multi-draft
//! verification, token trees, the exercises, and how bad arguments are refused.

use super::{check_error, f, json, run};
use std::process::Command;

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
fn roofline_on_many_gpus_and_offloaded() {
    // §1.1: LLaMA-2-70B on 4 A100-40GB (batch 4, context 2048 by default): 1.6% and 78%.
    let v = json(&[
        "roofline",
        "--model",
        "llama2-70b",
        "--gpu",
        "a100-40gb",
        "--tp",
        "4",
    ]);
    assert_eq!(
        format!(
            "{:.1} {:.1} {:.2} {:.2}",
            f(&v, "compute_utilisation") * 100.0,
            f(&v, "bandwidth_utilisation") * 100.0,
            f(&v, "comm_ms"),
            f(&v, "step_ms")
        ),
        "1.6 78.1 4.85 28.97"
    );
    // One GPU is today's model: no communication, the same step.
    let one = json(&[
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
        "4",
    ]);
    assert_eq!(format!("{:.2}", f(&one, "step_ms")), "26.90");
    assert_eq!(f(&one, "comm_ms"), 0.0);
    // Offloaded, OPT-30B's 60 GB cross PCIe every step and the best γ is the longest.
    let v = json(&[
        "roofline",
        "--gpu",
        "a10",
        "--model",
        "opt-30b",
        "--batch",
        "1",
        "--offload",
        "--draft",
        "opt-125m",
    ]);
    assert_eq!(v["bound"], "transfer");
    assert_eq!(f(&v, "transfer_ms"), 2400.0);
    assert_eq!(v["gamma"], 16);
    // At batch 1 every context's best γ is 16 where the step can run. At batch 256 the time model would have the
    // compute of 16 tokens pass the transfer, but the KV cache of 256 × 128 tokens (45 GB)
    // exceeds the A10's 24 GB: those steps could not run, and have no γ and no speedup.
    let map = json(&[
        "heat-map",
        "--target",
        "opt-30b",
        "--gpu",
        "a10",
        "--offload",
    ]);
    assert!(map["cells"][8]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["fits"] == false && c.get("gamma").is_none() && c.get("speedup").is_none()));
    // At batch 1 the cache of 32k tokens (45 GB) does not fit either.
    let batch_1 = map["cells"][0].as_array().unwrap();
    assert!(batch_1
        .iter()
        .all(|c| (c["fits"] == true) == (c["gamma"] == 16)));
    assert!(batch_1[0]["fits"] == true && batch_1[8]["fits"] == false);
    check_error(
        &[
            "roofline",
            "--gpu",
            "a100-40gb",
            "--model",
            "llama2-70b",
            "--tp",
            "3",
        ],
        "t divides both (1, 2, 4, 8)",
    );
    check_error(
        &[
            "roofline",
            "--gpu",
            "a100-40gb",
            "--model",
            "llama2-70b",
            "--tp",
            "0",
        ],
        "tp = 0 is out of range",
    );
    check_error(
        &["heat-map", "--target", "opt-13b", "--pp", "3"],
        "p divides 40",
    );
    check_error(
        &[
            "roofline",
            "--gpu",
            "a100-40gb",
            "--model",
            "llama2-70b",
            "--batch",
            "0",
        ],
        "batch = 0",
    );
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
        f(&with(&["--mode", "naive", "--given", "1,2"]), "acceptance"),
        0.5
    );
    assert_eq!(
        f(&with(&["--mode", "mss", "--given", "1,2"]), "acceptance"),
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
        "2,3",
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
    // A stray word is refused, as a stray option is.
    check_error(
        &["theory", "table", "--alpha", "0.5", "--gamma", "3"],
        "unexpected argument \"table\"",
    );
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
            "2",
        ],
        "draft 1 gives t2 probability 0",
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

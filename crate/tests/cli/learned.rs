//! Learned speculators on the command line (issue 33): `train --model draft` distils a draft
//! into a file and reports it in use; any decoding command speculates with it through
//! `--draft-file`; `likesworld boost` reports the shipped pool's merged tree; bad values exit 2
//! naming the value, and a bad file is refused before anything runs.

use super::{check_error, f, json, run};

#[test]
fn a_trained_draft_is_written_reported_and_decodes_through_draft_file() {
    let dir = std::env::temp_dir().join(format!("specdec-learned-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("mine.bpk");
    let out = out.to_str().unwrap();
    let t = json(&[
        "train",
        "--model",
        "draft",
        "--shape",
        "16,1,2,32",
        "--teacher",
        "kl",
        "--steps",
        "4",
        "--corpus",
        "16",
        "--prompts",
        "4",
        "--seed",
        "3",
        "--out",
        out,
    ]);
    assert_eq!(t["teacher"], "kl", "{t}");
    assert_eq!(t["shape"], "16,1,2,32", "{t}");
    assert_eq!(t["loss_curve"].as_array().unwrap().len(), 4, "{t}");
    assert_eq!(t["check"]["identical"], 4, "{t}");
    assert!(f(&t["check"], "tokens_per_call") >= 1.0, "{t}");
    assert!(std::path::Path::new(out).exists());
    let g = json(&[
        "likesworld",
        "greedy",
        "--draft-file",
        out,
        "--gamma",
        "3",
        "--prompts",
        "4",
    ]);
    assert_eq!(g["identical"], 4, "{g}");
    assert!(
        g["draft_file"].as_str().is_some_and(|f| f.starts_with(out)),
        "the report names the file: {g}"
    );
    assert_eq!(
        g["method"], "your draft chain γ 3, greedy",
        "the report names the draft as the student's, not draft A or B: {g}"
    );
    // The same draft in the chain as in the training run's check: the same α.
    let s = json(&[
        "likesworld",
        "greedy",
        "--draft-file",
        out,
        "--gamma",
        "4",
        "--prompts",
        "4",
    ]);
    let alpha = |v: &serde_json::Value| v["alpha"].as_f64();
    assert!(
        alpha(&s).is_some() && alpha(&s) == alpha(&t["check"]),
        "{s} vs {t}"
    );
    // A corrupt file is refused, naming it.
    let bad = dir.join("bad.bpk");
    std::fs::write(&bad, b"not a draft").unwrap();
    let bad = bad.to_str().unwrap();
    check_error(
        &["likesworld", "greedy", "--draft-file", bad, "--gamma", "2"],
        "bad.bpk",
    );
    check_error(
        &[
            "likesworld",
            "greedy",
            "--draft-file",
            "/no/such/file.bpk",
            "--gamma",
            "2",
        ],
        "/no/such/file.bpk",
    );
    // Where no draft model runs, the file is refused rather than ignored.
    check_error(
        &[
            "likesworld",
            "medusa",
            "--draft-file",
            out,
            "--prompts",
            "2",
        ],
        "runs neither draft A nor draft B",
    );
    check_error(
        &["likesworld", "boost", "--draft-file", out, "--prompts", "2"],
        "runs neither draft A nor draft B",
    );
    // Experiments that set drafts A and B side by side have no one place for it either.
    check_error(
        &["likesworld", "acceptance", "--draft-file", out],
        "--draft-file: acceptance by kind compares drafts A and B, so a trained draft has no place here",
    );
    check_error(
        &["likesworld", "methods", "--draft-file", out],
        "--draft-file: the §6 table compares drafts A and B",
    );
    // A directory is not a file (refused before it is read).
    let d = dir.to_str().unwrap();
    check_error(
        &["likesworld", "greedy", "--draft-file", d, "--gamma", "2"],
        "not a regular file",
    );
    // --out is checked before a minute of training.
    check_error(
        &[
            "train",
            "--model",
            "draft",
            "--shape",
            "a",
            "--out",
            "/no/such/dir/x.bpk",
        ],
        "its directory does not exist",
    );
    check_error(
        &["train", "--model", "draft", "--shape", "a", "--out", d],
        "not a file name",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_boost_report_has_its_keys_and_bad_values_name_themselves() {
    let r = json(&[
        "likesworld",
        "boost",
        "--pool",
        "2",
        "--prompts",
        "4",
        "--gamma",
        "2",
    ]);
    assert_eq!(r["pool"], 2, "{r}");
    assert_eq!(r["prompts"], 4, "{r}");
    assert_eq!(r["identical"], 4, "{r}");
    assert_eq!(r["boosted"], true, "{r}");
    assert_eq!(r["coverage"].as_array().unwrap().len(), 2, "{r}");
    for key in ["tokens_per_call", "tree_nodes", "measured_speedup"] {
        assert!(f(&r, key) > 0.0, "{key}: {r}");
    }
    let c = json(&[
        "likesworld",
        "boost",
        "--pool",
        "1",
        "--no-filter",
        "--prompts",
        "2",
    ]);
    assert_eq!(c["boosted"], false, "{c}");
    check_error(&["likesworld", "boost", "--pool", "0"], "pool");
    check_error(&["likesworld", "boost", "--pool", "9"], "pool");
    check_error(
        &["likesworld", "boost", "--verify", "naive"],
        "unknown pool verification \"naive\"",
    );
    let train = |extra: &[&'static str]| {
        let mut a = vec!["train", "--model", "draft", "--shape", "a"];
        a.extend_from_slice(extra);
        a
    };
    check_error(&train(&["--steps", "0"]), "steps");
    check_error(&train(&["--teacher", "oracle"]), "oracle");
    check_error(
        &["train", "--model", "draft", "--shape", "4096,1,4,64"],
        "d",
    );
    check_error(
        &["train", "--model", "draft", "--shape", "30,1,4,64"],
        "multiple of heads",
    );
    check_error(
        &["train", "--model", "draft", "--shape", "a,b"],
        "d,layers,heads,d_ff",
    );
    check_error(&["train", "--model", "pool", "--pool", "5"], "pool");
    let (code, _, err) = run(&["train", "--model", "draft"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("shape"), "{err}");
}

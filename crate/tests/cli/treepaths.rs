//! `likesworld tree-vs-paths` (issue 34): its JSON rows carry exactly the issue's keys, the token
//! counts are the lecture's, both ways agree, and bad values get one clear line.

use super::{check_error, f, json};

#[test]
fn tree_vs_paths_rows_carry_the_issues_keys_and_the_lectures_counts() {
    let v = json(&[
        "likesworld",
        "tree-vs-paths",
        "--config",
        "<2,2,2,2>",
        "--batch",
        "1,2",
        "--prompts",
        "2",
    ]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{v}");
    for (row, b) in rows.iter().zip([1, 2]) {
        let mut keys: Vec<&str> = row
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        keys.sort_unstable();
        let want = [
            "batch",
            "identical",
            "paths_iqr_us",
            "paths_us",
            "ratio",
            "tokens_paths",
            "tokens_tree",
            "tree_iqr_us",
            "tree_us",
        ];
        assert_eq!(keys, want, "{row}");
        assert_eq!(row["batch"], b);
        assert_eq!(
            (row["tokens_tree"].as_u64(), row["tokens_paths"].as_u64()),
            (Some(30 * b), Some(64 * b))
        );
        assert_eq!(row["identical"], true, "{row}");
        let (t, p) = (f(row, "tree_us"), f(row, "paths_us"));
        assert!(t > 0.0 && p > 0.0, "{row}");
        assert!(
            f(row, "tree_iqr_us") >= 0.0 && f(row, "paths_iqr_us") >= 0.0,
            "{row}"
        );
        assert!((f(row, "ratio") - p / t).abs() < 1e-9, "{row}");
    }
    assert_eq!(
        (v["nodes"].as_u64(), v["path_tokens"].as_u64()),
        (Some(30), Some(64))
    );
    let ex = json(&[
        "likesworld",
        "tree-vs-paths",
        "--config",
        "exercise-5",
        "--batch",
        "3",
    ]);
    let row = &ex["rows"][0];
    assert_eq!(
        (row["tokens_tree"].as_u64(), row["tokens_paths"].as_u64()),
        (Some(21), Some(27))
    );
}

#[test]
fn tree_vs_paths_takes_eagle2s_dynamic_tree_per_prompt() {
    let v = json(&[
        "likesworld",
        "tree-vs-paths",
        "--config",
        "eagle-2",
        "--batch",
        "1,2,4",
    ]);
    let trees = v["prompt_trees"].as_array().expect("a tree per prompt");
    assert_eq!(trees.len(), 4, "{v}");
    let count = |i: usize, key: &str| trees[i][key].as_u64().unwrap();
    let rows = v["rows"].as_array().unwrap();
    for (row, b) in rows.iter().zip([1, 2, 4]) {
        let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 9, "{row}");
        let sum = |key| (0..b).map(|i| count(i, key)).sum::<u64>();
        assert_eq!(row["tokens_tree"].as_u64(), Some(sum("nodes")), "{row}");
        assert_eq!(
            row["tokens_paths"].as_u64(),
            Some(sum("path_tokens")),
            "{row}"
        );
        assert_eq!(row["identical"], true, "{row}");
    }
    assert!((0..4).all(|i| count(i, "nodes") <= 16), "{v}");
    // A budget of its own; a static tree has no per-prompt counts.
    let small = json(&[
        "likesworld",
        "tree-vs-paths",
        "--config",
        "eagle-2:4",
        "--batch",
        "2",
    ]);
    assert!(small["prompt_trees"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["nodes"].as_u64() <= Some(4)));
    let fixed = json(&[
        "likesworld",
        "tree-vs-paths",
        "--config",
        "<2,2,1>",
        "--batch",
        "1",
    ]);
    assert!(fixed.get("prompt_trees").is_none(), "{fixed}");
}

#[test]
fn tree_vs_paths_refuses_bad_values_in_one_line() {
    let cmd = |extra: &[&'static str]| {
        let mut a = vec!["likesworld", "tree-vs-paths"];
        a.extend_from_slice(extra);
        a
    };
    check_error(
        &cmd(&["--config", "<2,2,1>", "--batch", "0"]),
        "batch = 0 is out of range",
    );
    check_error(
        &cmd(&["--config", "<2,2,1>", "--batch", "1,,4"]),
        "batch list",
    );
    check_error(
        &cmd(&["--config", "<2,2,1>", "--batch", "1;4"]),
        "every value must be a whole number",
    );
    check_error(&cmd(&["--config", "bushy"]), "tree config");
    check_error(&cmd(&["--config", "<2,,1>"]), "tree config");
    check_error(&cmd(&["--config", "<4,4,4>"]), "over the budget of 64");
    check_error(&cmd(&["--config", "eagle-2:0"]), "bad tree \"eagle-2:0\"");
    check_error(
        &cmd(&["--config", "eagle-2:999"]),
        "bad tree \"eagle-2:999\"",
    );
    check_error(&cmd(&["--config", "eagle-3"]), "bad tree \"eagle-3\"");
    check_error(&cmd(&["--batch", "2"]), "--config");
    check_error(&cmd(&["--config", "<2,2,1>", "--prompts", "0"]), "prompts");
    check_error(
        &cmd(&["--config", "<2,2,1>", "--target-width", "25"]),
        "width",
    );
    check_error(&cmd(&["--config", "<2,2,1>", "--backend", "tpu"]), "tpu");
}

//! The CLI's hidden-state drafts (`likesworld medusa|eagle|methods`): their contract's keys,
//! lossless greedy runs, a sampled run's calibration test, the methods table, and every bad value
//! exiting 2 with one line.
//!
//! A file apart from `models.rs` because these drafts are a family of their own: Medusa's heads
//! and EAGLE draft from the target's hidden state rather than from tokens, and their commands
//! take options (`--heads`, `--depth`, `--dynamic`, `--ttt`) that the draft models' do not.

use super::{check_error, f, json};

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
    // Lecture §5's question, on this machine's clock: the target alone's time per token over
    // the run's, with its spread over the prompts.
    assert!(
        f(&s, "measured_speedup") > 0.0 && f(&s, "measured_speedup_iqr") >= 0.0,
        "{s}"
    );
    let t = json(&["likesworld", "methods", "--budget", "8", "--prompts", "2"]);
    let rows = t["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 8, "{t}");
    for r in rows {
        assert!(
            f(r, "tokens_per_call") >= 1.0 && f(r, "measured_speedup") > 0.0,
            "{r}"
        );
        assert!(r["method"].is_string() && f(r, "c") >= 0.0, "{r}");
        // This device's limit: the same τ and drafting at its bandwidth and peak (at most τ: no
        // call priced under a one-token call), never under the wall clock's speedup.
        let (limit, wall) = (f(r, "limit_speedup"), f(r, "measured_speedup"));
        assert!(
            limit >= wall && limit <= f(r, "tokens_per_call").max(wall),
            "{r}"
        );
        assert!(
            r.get("auto").is_none(),
            "a budget of nodes chooses nothing: {r}"
        );
    }
    assert_eq!(t["budget"], 8);
    // With the budget auto, every row but the suffix index's names the size chosen for this
    // device, and the report the T(k) it chose from.
    let t = json(&[
        "likesworld",
        "methods",
        "--budget",
        "auto",
        "--prompts",
        "2",
    ]);
    assert_eq!(t["budget"], "auto");
    assert_eq!(t["times_us"].as_array().expect("T(k)").len(), 17, "{t}");
    assert_eq!(t["suffix_nodes"], 8);
    let rows = t["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 8, "{t}");
    for (i, r) in rows.iter().enumerate() {
        if i == 3 {
            assert!(
                r.get("auto").is_none(),
                "the suffix index keeps its budget: {r}"
            );
            continue;
        }
        let a = &r["auto"];
        assert!(a["size"].as_u64().expect("a size") >= 1, "{r}");
        assert!(
            f(a, "predicted_speedup") >= 1.0 && a["plain"].is_boolean(),
            "{r}"
        );
    }
    let cases: [(&[&str], &str); 14] = [
        // A count's message names its range, whatever is wrong with the text.
        (
            &["likesworld", "eagle", "--depth", "2.5"],
            "\"2.5\" is not a whole number (1 ≤ depth ≤",
        ),
        (
            &["likesworld", "eagle", "--depth", "deep"],
            "\"deep\" is not a number (1 ≤ depth ≤",
        ),
        // A mistyped option is named before the run (which would take minutes at 1000 prompts).
        (
            &["likesworld", "eagle", "--prompts", "1000", "--dept", "3"],
            "unknown option --dept",
        ),
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
        (
            &["likesworld", "methods", "--budget", "banana"],
            "bad budget \"banana\": a node budget is a whole number of nodes or “auto”",
        ),
        (
            &["likesworld", "eagle", "--budget", "auto"],
            "\"auto\" is not a number (1 ≤ budget ≤",
        ),
    ];
    for (args, needle) in cases {
        check_error(args, needle);
    }
}

/// One range from its one declaration to the command line: `--depth` is refused one past
/// `lab::params::DEPTH`'s upper bound, with the message written from that bound, and taken at
/// the bound (a test of the page's slider reading the same constant is in `hidden.test.mjs`).
#[test]
fn the_depth_option_reads_its_one_declaration() {
    use specdec::lab::params::DEPTH;
    let over = (DEPTH.max + 1.0).to_string();
    let allowed = DEPTH.allowed();
    let needle = format!("depth = {over} is out of range: {allowed}");
    check_error(&["likesworld", "eagle", "--depth", &over], &needle);
    // At the bound, with as many nodes as levels (a tree no deeper than its budget).
    let at = DEPTH.max.to_string();
    let run = json(&[
        "likesworld",
        "eagle",
        "--dynamic",
        "--depth",
        &at,
        "--budget",
        &at,
        "--prompts",
        "1",
    ]);
    let method = run["method"].as_str().unwrap_or_default();
    assert!(method.contains(&format!("depth {at}")), "{run}");
}

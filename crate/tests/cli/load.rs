//! The CLI's speculation under load (issue 34, part 4): `likesworld speedup --batch 1,2,…`
//! measures one chain or tree at every batch of a list and sets the published serving figures
//! beside it; sweeping γ and the batch at once, a batch of 0 or a malformed list is one line.
//! The runs are tiny (the trained target, two prompts, batches 1 and 2): the contract is the
//! report's shape, not its speed.

use super::{check_error, f, json, run};

#[test]
fn the_speedup_sweeps_the_batch_beside_the_published_serving_figures() {
    let r = json(&[
        "likesworld",
        "speedup",
        "--draft",
        "b",
        "--gamma",
        "2",
        "--batch",
        "2,1",
        "--prompts",
        "2",
    ]);
    let rows = r["rows"].as_array().unwrap();
    let batches: Vec<u64> = rows.iter().map(|x| x["batch"].as_u64().unwrap()).collect();
    assert_eq!(batches, [1, 2], "sorted: {r}");
    for x in rows {
        for key in [
            "plain_us_per_token",
            "speculative_us_per_token",
            "measured_speedup",
            "tokens_per_call",
            "accepted_per_call",
            "predicted_speedup_curve",
            "predicted_speedup",
        ] {
            assert!(f(x, key) > 0.0, "{key}: {x}");
        }
        // Greedy: a step yields the accepted tokens and the target's own one.
        let tau = f(x, "tokens_per_call");
        assert!((1.0..=3.0).contains(&tau), "{x}");
        assert!(f(x, "accepted_per_call") <= tau - 1.0 + 1e-9, "{x}");
        // The speedup is the ratio of the two times per token.
        let ratio = f(x, "plain_us_per_token") / f(x, "speculative_us_per_token");
        assert!((ratio - f(x, "measured_speedup")).abs() < 1e-9, "{x}");
        assert_eq!(x["gamma"], 2);
        assert!(x.get("plain_lane").is_none(), "no lanes in a sweep: {x}");
    }
    // The greedy outputs are the same at every batch: the same tokens decoded.
    assert_eq!(rows[0]["tokens"], rows[1]["tokens"]);
    let published = r["published"].as_array().unwrap();
    assert_eq!(published.len(), 2);
    assert_eq!(published[0]["system"], "SGLang");
    assert_eq!(published[0]["gpu"], "H100");
    assert_eq!(published[0]["chain"], 3);
    assert_eq!(published[1]["points"][1][0], 56.0);
    let caption = r["caption"].as_str().unwrap();
    assert!(
        caption.starts_with("Here the speedup goes from ") && caption.contains("at batch 2"),
        "{caption}"
    );
    assert_eq!(r["target_width"], 1);

    // A tree sweeps the batch too.
    let tree = [
        "likesworld",
        "speedup",
        "--config",
        "<2,1>",
        "--batch",
        "1,2",
        "--prompts",
        "2",
    ];
    let t = json(&tree);
    assert_eq!(t["shape"], "tree");
    assert!(t["rows"][1]["predicted_speedup"].is_null(), "{t}");
    // In words: batch 1 times two groups, whose spread is given; batch 2 one, which has none.
    let (code, stdout, stderr) = run(&tree);
    assert_eq!(code, 0, "{stderr}");
    let line = |b: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(b))
            .unwrap_or("")
    };
    assert!(line("batch 1 ").contains("over 2 groups"), "{stdout}");
    assert!(
        line("batch 2 ").contains("(one group: no spread)"),
        "{stdout}"
    );
}

#[test]
fn a_bad_batch_sweep_is_one_line() {
    let speedup = |rest: &[&'static str]| [&["likesworld", "speedup"], rest].concat();
    let cases: [(Vec<&str>, &str); 6] = [
        (
            speedup(&["--gamma", "1,2", "--batch", "1,2"]),
            "sweep γ or the batch, not both at once",
        ),
        (speedup(&["--batch", "0,2"]), "batch = 0 is out of range"),
        (speedup(&["--batch", "1,65"]), "batch = 65 is out of range"),
        (speedup(&["--batch", "1,,2"]), "bad batch list \"1,,2\""),
        (speedup(&["--batch", "1,2,3,4,5,6,7,8,9"]), "#batches = 9"),
        (
            speedup(&["--drafter", "suffix", "--batch", "1,2"]),
            "no batch to sweep",
        ),
    ];
    for (args, needle) in cases {
        check_error(&args, needle);
    }
}

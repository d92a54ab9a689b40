//! `tree --sequoia` and `choose` (issue 54): Sequoia's trees and the hardware-aware choice.

use super::{check_error, f, json, run};

#[test]
fn sequoia_tree_by_hand_and_its_contract() {
    // Two nodes: two children (0.5 + 0.3) beat a chain (0.5 + 0.25).
    let v = json(&[
        "tree",
        "--sequoia",
        "--acceptance",
        "0.5,0.3",
        "--budget",
        "2",
    ]);
    assert!((f(&v, "expected_tokens") - 1.8).abs() < 1e-12, "{v}");
    assert_eq!(
        (v["nodes"].as_u64(), v["depth"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(v["parents"], serde_json::json!([null, null]));
    // A depth limit of one: the root's children only, three ranks for three nodes.
    let v = json(&[
        "tree",
        "--sequoia",
        "--acceptance",
        "0.6,0.2,0.1",
        "--budget",
        "3",
        "--depth",
        "1",
    ]);
    assert!((f(&v, "expected_tokens") - 1.9).abs() < 1e-12, "{v}");
    assert_eq!(v["levels"], serde_json::json!([[3]]));
    // One rank: the chain, 1 + p + … + p⁴.
    let v = json(&["tree", "--sequoia", "--acceptance", "0.5", "--budget", "4"]);
    assert!((f(&v, "expected_tokens") - 1.9375).abs() < 1e-12, "{v}");
    assert_eq!(v["depth"], 4);
}

#[test]
fn choose_takes_few_nodes_on_a_steep_curve_and_many_on_a_flat_one() {
    let p = "0.55,0.15,0.07,0.04";
    let steep: Vec<String> = (0..33)
        .map(|k| format!("{}", 1.0 + 0.25 * k as f64))
        .collect();
    let flat: Vec<String> = (1..=33)
        .map(|k| format!("{}", 1.0 + 0.004 * k as f64))
        .collect();
    let cpu = json(&[
        "choose",
        "--acceptance",
        p,
        "--times",
        &steep.join(","),
        "--draft-cost",
        "0.07",
    ]);
    let gpu = json(&[
        "choose",
        "--acceptance",
        p,
        "--times",
        &flat.join(","),
        "--draft-cost",
        "0.07",
    ]);
    let nodes = |v: &serde_json::Value| v["tree"]["nodes"].as_u64().unwrap();
    assert!(nodes(&cpu) <= 4 && nodes(&gpu) >= 16, "{cpu} {gpu}");
    assert!(f(&gpu["tree"], "predicted_speedup") >= 2.0);
    for v in [&cpu, &gpu] {
        let (chain, tree) = (&v["chain"], &v["tree"]);
        assert!(f(tree, "predicted_speedup") >= f(chain, "predicted_speedup"));
        assert!(chain["gamma"].as_u64().unwrap() >= 1);
        assert!(f(chain, "expected_tokens") > 1.0 && tree["depth"].as_u64().unwrap() >= 1);
    }
}

#[test]
fn bad_input_names_the_parameter() {
    let tree = |p: &str, n: &str| {
        ["tree", "--sequoia", "--acceptance", p, "--budget", n].map(String::from)
    };
    let run = |a: [String; 6], needle: &str| check_error(&a.each_ref().map(String::as_str), needle);
    run(
        tree("1.2", "3"),
        "acceptance = 1.2 is out of range: 0 ≤ p_i ≤ 1",
    );
    run(tree("0.7,0.4", "3"), "sum to 1.1000, over 1");
    run(tree("0.5", "0"), "budget = 0 is out of range");
    check_error(
        &[
            "tree",
            "--sequoia",
            "--acceptance",
            "0.5",
            "--budget",
            "3",
            "--depth",
            "0",
        ],
        "depth = 0 is out of range",
    );
    let choose = |t: &str, c: &str| {
        [
            "choose",
            "--acceptance",
            "0.5",
            "--times",
            t,
            "--draft-cost",
            c,
        ]
        .map(String::from)
    };
    let run = |a: [String; 7], needle: &str| check_error(&a.each_ref().map(String::as_str), needle);
    run(
        choose("1,0", "0.1"),
        "every time T(k) must be a positive number",
    );
    run(
        choose("1,-1", "0.1"),
        "every time T(k) must be a positive number",
    );
    run(choose("1", "0.1"), "number of times = 1 is out of range");
    run(choose("1,2", "-1"), "draft-cost = -1 is out of range");
    check_error(
        &[
            "choose",
            "--acceptance",
            "-0.1",
            "--times",
            "1,2",
            "--draft-cost",
            "0",
        ],
        "acceptance = -0.1",
    );
}

/// `likesworld sequoia`: every tree decodes to the target's own greedy output on each backend,
/// the vector is a vector, and the tree refined on the replay replays at least as well as the
/// DP's trees it starts from.
#[test]
fn likesworld_sequoia_trees_are_lossless_on_every_backend() {
    for backend in ["flex", "ndarray", "wgpu"] {
        let v = json(&[
            "likesworld",
            "sequoia",
            "--budget",
            "4",
            "--depth",
            "4",
            "--prompts",
            "3",
            "--backend",
            backend,
        ]);
        let p: Vec<f64> = v["vector"]["p"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(p.len(), 8);
        assert!(p.iter().all(|&x| (0.0..=1.0).contains(&x)) && p.iter().sum::<f64>() <= 1.0 + 1e-9);
        assert!(p[0] > p[1], "draft B's first rank is its best: {p:?}");
        let rows = v["rows"].as_array().unwrap();
        let names: Vec<&str> = rows.iter().map(|r| r["tree"].as_str().unwrap()).collect();
        assert_eq!(
            &names[..3],
            ["sequoia", "sequoia-by-depth", "sequoia-refined"],
            "{backend}"
        );
        assert!(names.contains(&"<1,1,1,1>") && names.contains(&"<4>"));
        for r in rows {
            assert_eq!(r["identical"], 3, "{backend}: {r}");
            assert_eq!(r["nodes"], 4);
            assert!(f(r, "tokens_per_call") >= 1.0);
        }
        let replayed = |i: usize| f(&rows[i], "replayed_tokens");
        assert!(
            replayed(2) >= replayed(0).max(replayed(1)) - 1e-12,
            "{backend}: {v}"
        );
        assert_eq!(v["by_depth"].as_array().unwrap().len(), 4);
    }
}

/// `likesworld choose`: the measured inputs, the choice within the times measured, both timed,
/// EAGLE-2 at 8 nodes beside them; a bad size refused by name.
#[test]
fn likesworld_choose_measures_its_inputs_and_its_choice() {
    let v = json(&["likesworld", "choose", "--max-nodes", "4", "--prompts", "2"]);
    let times: Vec<f64> = v["times_us"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect();
    assert_eq!(times.len(), 5);
    assert!(times.iter().all(|&t| t > 0.0));
    // The calibration timed decoding at k = 1 and at the verification calls of draft B's chains
    // the curve reaches (γ 1 and 3 of 1, 3 and 7, with T(1) … T(5)), each at the tokens its calls
    // carried on average (at most γ + 1, more than one); the curve read starts at one call and
    // never falls.
    let points = v["engine"]["points"].as_array().unwrap();
    let ks: Vec<u64> = points.iter().map(|p| p["k"].as_u64().unwrap()).collect();
    assert_eq!(ks, vec![1, 2, 4], "{}", v["engine"]);
    assert_eq!(
        (f(&points[0], "tokens"), f(&points[0], "decoding")),
        (1.0, 1.0)
    );
    for p in &points[1..] {
        let tokens = f(p, "tokens");
        assert!(tokens > 1.0 && tokens <= p["k"].as_f64().unwrap(), "{p}");
    }
    assert!(times.windows(2).all(|w| w[1] >= w[0]), "{times:?}");
    assert!(f(&v["engine"], "draft_lift") >= 1.0);
    assert!(f(&v, "draft_cost") > 0.0);
    let (chain, tree) = (&v["chosen"]["chain"], &v["chosen"]["tree"]);
    assert!(chain["gamma"].as_u64().unwrap() <= 4 && tree["nodes"].as_u64().unwrap() <= 4);
    assert!(f(chain, "predicted_speedup") >= 1.0 && f(&tree["dp"], "predicted_speedup") >= 1.0);
    assert!(f(tree, "predicted_speedup") > 0.0 && f(tree, "replayed_tokens") >= 1.0);
    for x in [chain, tree] {
        assert!(
            f(x, "measured_speedup") > 0.0 && f(x, "tokens_per_call") >= 1.0,
            "{x}"
        );
    }
    assert_eq!(
        tree["labels"].as_array().unwrap().len(),
        tree["nodes"].as_u64().unwrap() as usize
    );
    // A step yields its accepted drafts and one token of the target's: no more than the chain's
    // γ + 1, or the tree's depth + 1.
    let gamma = chain["timed_gamma"].as_u64().unwrap() as f64;
    let depth = tree["depth"].as_u64().unwrap() as f64;
    assert!(f(chain, "tokens_per_call") <= gamma + 1.0, "{chain}");
    assert!(f(tree, "tokens_per_call") <= depth + 1.0, "{tree}");
    let eagle = &v["fixed_eagle2_8"];
    assert!(f(eagle, "measured_speedup") > 0.0);
    // The four decoded the same prompts in turn: one plain decoding for all, and EAGLE-2 set
    // against the faster of the chain and the tree on those prompts (the same tokens each way).
    let plain = f(chain, "plain_us_per_token");
    assert!([tree, eagle]
        .iter()
        .all(|x| f(x, "plain_us_per_token") == plain));
    let better = f(chain, "us_per_token").min(f(tree, "us_per_token"));
    let versus = f(&v["versus_eagle2"], "ratio");
    assert!(
        (versus - f(eagle, "us_per_token") / better).abs() < 1e-9 * versus,
        "{v}"
    );
    assert!(f(&v["versus_eagle2"], "iqr") >= 0.0);
    // Each timed row: measured, predicted from this run's curve, and the limit, which never falls
    // below what a run measured of the same drafts (it prices the same τ and drafting at the
    // device's bandwidth and peak).
    for x in [chain, tree, &v["fixed_eagle2_8"]] {
        // The prediction on the run's own curve is τ over its verification call and drafting,
        // each over the one-token call. (Those calls' ratio itself is not bounded here: with the
        // trained target's 0.1 ms calls and two prompts, a test running beside this one moves it
        // anywhere — a cold CI run read 0.42 for a call of two tokens.)
        let (v, drafting) = (f(x, "verify_over_target"), f(x, "drafting"));
        assert!(v > 0.0 && drafting > 0.0, "{x}");
        let curve = f(x, "tokens_per_call") / (v + drafting);
        assert!(
            (f(x, "predicted_speedup_curve") / curve - 1.0).abs() < 1e-12,
            "{x}"
        );
        assert!(
            f(x, "us_per_token") > 0.0 && f(x, "plain_us_per_token") > 0.0,
            "{x}"
        );
        // The limit prices a verification call at no less than a one-token call; a run beside
        // other tests can measure its own below one (0.81 was seen), which no device does, so
        // the curve's prediction is bounded with the run's ratio taken at 1 or more.
        let ratio = f(x, "verify_over_target").max(1.0);
        let curve = f(x, "tokens_per_call") / (ratio + f(x, "drafting"));
        assert!(f(x, "limit_speedup") >= curve * 0.95, "{x}");
        // Nor under what the run measured: what this device did, it can do.
        assert!(f(x, "limit_speedup") >= f(x, "measured_speedup"), "{x}");
    }
    // Every draft's vector (item 1): A and B both ways, shares of one total each; Medusa a depth
    // (one row a head), EAGLE's one row; B's greedy row is the vector the choice used.
    let models = v["vectors"]["models"].as_array().unwrap();
    let named: Vec<String> = models
        .iter()
        .map(|m| {
            format!(
                "{} {}",
                m["draft"].as_str().unwrap(),
                m["verify"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(named, ["A greedy", "A mss", "B greedy", "B mss"]);
    for m in models {
        let p: Vec<f64> = m["p"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(p.len(), 8);
        assert!(
            p.iter().all(|&x| x >= 0.0) && p.iter().sum::<f64>() <= 1.0 + 1e-12,
            "{p:?}"
        );
    }
    assert_eq!(models[2]["p"], v["vector"]["p"]);
    // The shipped pools of four as one proposer each, greedy: a child a distinct guess, so no
    // more than four children, and the boost-tuned pool's members (each trained on what those
    // before it miss) guess apart more often than the control's, whose members learn alike.
    let pools = v["vectors"]["pools"].as_array().unwrap();
    let pool_p = |i: usize| -> Vec<f64> {
        let p = pools[i]["p"].as_array().unwrap();
        p.iter().map(|x| x.as_f64().unwrap()).collect()
    };
    assert_eq!(
        (pools[0]["boosted"].as_bool(), pools[1]["boosted"].as_bool()),
        (Some(true), Some(false))
    );
    for i in 0..2 {
        let p = pool_p(i);
        assert_eq!(p.len(), 8);
        assert!(p[4..].iter().all(|&x| x == 0.0), "{p:?}");
        assert!(p.iter().sum::<f64>() <= 1.0 + 1e-12 && p[0] > 0.3, "{p:?}");
    }
    let beyond_first = |p: Vec<f64>| p[1..].iter().sum::<f64>();
    assert!(
        beyond_first(pool_p(0)) > beyond_first(pool_p(1)),
        "{pools:?}"
    );
    let hidden = v["vectors"]["hidden"].as_array().unwrap();
    assert_eq!(hidden[0]["draft"], "Medusa");
    assert!(hidden[0]["rows"].as_array().unwrap().len() >= 2);
    assert_eq!(hidden[1]["draft"], "EAGLE");
    assert_eq!(hidden[1]["rows"].as_array().unwrap().len(), 1);
    // What the chosen tree's decoding met a depth: one row per level of the tree decoded.
    assert_eq!(
        v["met_by_depth"].as_array().unwrap().len(),
        tree["depth"].as_u64().unwrap() as usize
    );
    // The device's limit: T_lim(k) from the measured bandwidth and peak, never falling with k.
    let limit: Vec<f64> = v["limit_times_us"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect();
    assert_eq!(limit.len(), 5);
    assert!(
        limit.windows(2).all(|w| w[1] >= w[0]) && limit[0] > 0.0,
        "{limit:?}"
    );
    assert!(
        f(&v, "limit_speedup") >= 1.0 && f(&v, "bandwidth_gbs") > 0.0 && f(&v, "peak_gflops") > 0.0
    );
    // The best choice at the limit is never under what the chosen chain or tree measured.
    for x in [chain, tree] {
        assert!(f(&v, "limit_speedup") >= f(x, "measured_speedup"), "{v}");
    }
    check_error(
        &["likesworld", "choose", "--max-nodes", "0"],
        "max-nodes = 0 is out of range",
    );
    // `--help` after a command prints that command's entry of the help (and measures nothing).
    for help in ["--help", "-h"] {
        let (code, out, _) = run(&["likesworld", "choose", help]);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("likesworld choose   [--max-nodes M]"), "{out}");
        assert!(!out.contains("likesworld sequoia"), "{out}");
    }
    // A tree by rank paths is a tree configuration the speedup experiment takes.
    let s = json(&[
        "likesworld",
        "speedup",
        "--config",
        "ranks:1 1.1 2",
        "--prompts",
        "2",
    ]);
    assert!(
        s["method"]
            .as_str()
            .unwrap()
            .contains("tree of 3 nodes by rank path"),
        "{s}"
    );
    check_error(
        &[
            "likesworld",
            "speedup",
            "--config",
            "ranks:1 1.2",
            "--prompts",
            "2",
        ],
        "not the next rank",
    );
}

/// The hidden-state drafts: their vector a depth measured, and Sequoia's tree for it never below
/// the sparse tree the page runs under the same vectors (the DP is the best; they tie when every
/// row falls).
#[test]
fn likesworld_sequoia_of_the_hidden_state_drafts() {
    for draft in ["medusa", "eagle"] {
        let v = json(&[
            "likesworld",
            "sequoia",
            "--draft",
            draft,
            "--budget",
            "8",
            "--depth",
            "4",
        ]);
        let rows = v["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 4, "{draft}");
        for r in rows {
            let s: f64 = r
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .sum();
            assert!(s > 0.3 && s <= 1.0 + 1e-9, "{draft}: {r}");
        }
        assert!(
            f(&v, "sequoia_tokens") >= f(&v, "sparse_tokens") - 1e-12,
            "{v}"
        );
        assert_eq!(v["sequoia_labels"].as_array().unwrap().len(), 8);
    }
}

//! Lossless or not (issue 55): Medusa's typical acceptance on one token, on the toy and on
//! LikesWorld; the gallery of real bugs with the tests that catch them; bad input refused by name.

use super::{check_error, f, json};

#[test]
fn typical_acceptance_on_one_token_is_its_closed_form() {
    // p = (0.9, 0.1), q = (0.5, 0.5), ε 0.2, δ 0.3: token 1 fails (0.1 ≤ 0.2), token 0 passes;
    // output q·k + (1 − 0.5)·p = (0.95, 0.05), acceptance 0.5.
    let v = json(&[
        "sample-dist",
        "--p",
        "0.9,0.1",
        "--q",
        "0.5,0.5",
        "--rule",
        "typical",
        "--epsilon",
        "0.2",
    ]);
    assert!((f(&v, "acceptance") - 0.5).abs() < 1e-15);
    let out: Vec<f64> = v["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!(
        (out[0] - 0.95).abs() < 1e-15 && (out[1] - 0.05).abs() < 1e-15,
        "{out:?}"
    );
    // On the toy, exactly: a TV well above rounding, reported with its thresholds.
    let t = json(&[
        "toy-exact",
        "--gamma",
        "3",
        "--variant",
        "typical",
        "--delta",
        "0.5",
    ]);
    assert!(f(&t, "tv") > 1e-3 && f(&t, "delta") == 0.5 && f(&t, "epsilon") == 0.09);
}

#[test]
fn bad_thresholds_and_rules_are_refused_by_name() {
    let base = ["sample-dist", "--p", "0.9,0.1", "--q", "0.5,0.5", "--rule"];
    let with = |extra: &[&'static str]| [&base[..], extra].concat();
    check_error(
        &with(&["typical", "--epsilon", "-0.1"]),
        "epsilon = -0.1 is out of range",
    );
    check_error(
        &with(&["typical", "--delta", "nan"]),
        "delta = NaN is out of range",
    );
    check_error(&with(&["typical", "--delta", "abc"]), "--delta");
    check_error(
        &with(&["correct", "--epsilon", "0.1"]),
        "--rule correct does not take it",
    );
    check_error(&with(&["typo"]), "typical");
    check_error(&["exactness", "--gallery", "--draft-noise", "-1"], "draft");
}

#[test]
fn the_gallery_names_its_sources_and_every_bug_is_caught() {
    let v = json(&["exactness", "--gallery"]);
    let variants = v["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 10);
    for b in variants {
        let url = b["source"]["url"].as_str().unwrap();
        assert!(url.starts_with("https://github.com/"), "{b}");
        assert!(f(b, "tv") > 1e-12, "{b}");
        assert!(!b["detected_by"].as_array().unwrap().is_empty(), "{b}");
        let (d, m) = (
            b["detected_by"].as_array().unwrap(),
            b["missed_by"].as_array().unwrap(),
        );
        let not_run = b["not_run"].as_array().unwrap();
        assert_eq!(d.len() + m.len() + not_run.len(), 4, "{b}");
    }
    let c = &v["correct"];
    assert!(f(c, "tv") <= 1e-12);
    assert_eq!(c["greedy_identical"], c["greedy_runs"]);
    for a in c["false_alarms"].as_array().unwrap() {
        assert!(a["alarms"].as_u64().unwrap() <= 4, "{a}");
    }
    // The rules' own table, typical acceptance among them with its trade.
    let r = json(&["exactness", "--epsilon", "0.2"]);
    let rules = r["rules"].as_array().unwrap();
    assert_eq!(rules.last().unwrap()["name"], "typical");
    assert!(f(&r["typical"], "tokens_per_call") > 1.0);
}

#[test]
fn typical_acceptance_on_likesworld_reports_its_gain_and_its_distortion() {
    let v = json(&["likesworld", "typical", "--prompts", "4", "--repeats", "1"]);
    // Algorithm 1's one-step law is p itself (to the f32 models' rounding: a p sums to 1 within
    // 1e-7); typical acceptance's is not.
    assert!(
        f(&v["chain_exact"], "step_tv") <= 1e-6,
        "{}",
        v["chain_exact"]
    );
    let chain = v["chain"].as_array().unwrap();
    assert_eq!(chain.len(), 6);
    assert!(f(&chain[0], "step_tv") > 1e-3, "{}", chain[0]);
    // Medusa: greedy is deterministic (no calibration p), typical sampled (one).
    assert!(v["medusa_greedy"]["p_value"].is_null());
    for m in v["medusa"].as_array().unwrap() {
        let p = f(m, "p_value");
        assert!(
            (0.0..=1.0).contains(&p) && f(m, "tokens_per_call") >= 1.0,
            "{m}"
        );
    }
}

#[test]
fn likesworld_gallery_reports_every_loop_bug_the_cache_and_the_unchecked_draft_caught_the_correct_loop_not(
) {
    let v = json(&["likesworld", "gallery", "--prompts", "20"]);
    let bugs = v["bugs"].as_array().unwrap();
    let names: Vec<&str> = bugs.iter().map(|b| b["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["first-draft-unchecked", "stale-cache", "row-numerics"]
    );
    for b in &bugs[..2] {
        assert!(b["identical"].as_u64() < b["runs"].as_u64(), "{b}");
        assert!(b["source"]["url"].as_str().unwrap().starts_with("https://"));
    }
    assert_eq!(v["correct"]["identical"], 80);
    assert_eq!(v["correct"]["runs"], 80);
    assert_eq!(v["window"], 12);
    check_error(&["likesworld", "gallery", "--prompts", "0"], "prompts");
}

#[test]
fn options_of_the_other_form_and_a_flag_given_twice_are_named() {
    check_error(
        &["exactness", "--gallery", "--epsilon", "0.1"],
        "--epsilon does not combine with --gallery",
    );
    check_error(
        &["exactness", "--gamma", "3", "--gallery"],
        "--gamma does not combine with --gallery",
    );
    check_error(
        &["exactness", "--seed", "3"],
        "--seed applies only with --gallery",
    );
    check_error(
        &["exactness", "--gallery", "--gallery"],
        "--gallery given twice",
    );
    check_error(&["exactness", "--json", "--json"], "--json given twice");
    check_error(&["exactness", "--gallery=1"], "--gallery takes no value");
}

/// A reader that stops early (`specdec … | head`) ends the command quietly: no panic, no
/// backtrace, exit 0.
#[test]
fn a_closed_pipe_ends_the_report_quietly() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_specdec"))
        .args(["heat-map", "--alpha", "0.8"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    drop(child.stdout.take()); // the reader is gone before the report is written
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

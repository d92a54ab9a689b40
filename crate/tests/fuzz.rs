//! Seeded random input for every parser and guard (a property test without a framework: the
//! seeds are fixed, so a failure replays). Arbitrary text gives a value that keeps the parser's
//! promises, or an error that names what was being parsed — never a panic, and never more work
//! than the budget allows. The CLI is driven the same way: exit 0 or exit 2 with one line.

use rand::{rngs::StdRng, Rng, SeedableRng};
use specdec::tree::{parse_config, parse_paths, TokenTree, DEFAULT_NODE_BUDGET};
use specdec::views::multidraft::{multi_draft_view, parse_drafts, MultiDraftParams};
use specdec::views::tree::{tree_view, TreeMode, TreeParams};

/// Pieces that make parsers work hard: brackets, separators, huge and odd numbers, Unicode.
const PIECES: &[&str] = &[
    "<",
    ">",
    "⟨",
    "⟩",
    ",",
    ",",
    " ",
    "|",
    ";",
    "0",
    "1",
    "2",
    "3",
    "9",
    "99",
    "1000",
    "18446744073709551616",
    "-1",
    "0.5",
    "0.25",
    "0.125",
    "1e308",
    "NaN",
    "inf",
    "+",
    "e",
    ".",
    "a",
    "b",
    "é",
    "\u{0}",
    "\n",
    "\t",
    "\u{202e}",
];

fn text(rng: &mut StdRng, max: usize) -> String {
    (0..rng.random_range(0..max))
        .map(|_| PIECES[rng.random_range(0..PIECES.len())])
        .collect()
}

#[test]
fn tree_configs_and_paths_parse_or_say_why() {
    let mut rng = StdRng::seed_from_u64(1);
    for _ in 0..20_000 {
        let t = text(&mut rng, 24);
        match parse_config(&t, DEFAULT_NODE_BUDGET) {
            Ok(c) => {
                assert!(
                    !c.widths().is_empty() && c.widths().iter().all(|&k| k >= 1),
                    "{t:?}"
                );
                assert!(c.nodes() <= DEFAULT_NODE_BUDGET as u64, "{t:?}");
                assert_eq!(TokenTree::expand(&c, "r").speculated() as u64, c.nodes());
            }
            Err(e) => {
                let m = e.to_string();
                assert!(
                    m.contains("tree config") || m.contains("budget"),
                    "{t:?}: {m}"
                );
            }
        }
        match parse_paths(&t) {
            Ok(p) => {
                assert!(p.iter().all(|x| !x.is_empty()), "{t:?}");
                assert!(p.iter().map(Vec::len).sum::<usize>() <= DEFAULT_NODE_BUDGET);
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
}

#[test]
fn distributions_and_drafts_parse_or_say_why() {
    let mut rng = StdRng::seed_from_u64(2);
    for _ in 0..20_000 {
        let t = text(&mut rng, 20);
        if let Ok(d) = specdec::sampling::parse_dist("p", &t) {
            assert!((2..=64).contains(&d.len()), "{t:?}");
            assert!(d.iter().all(|x| x.is_finite() && *x >= 0.0), "{t:?}");
            assert!((d.iter().sum::<f64>() - 1.0).abs() <= 1e-6, "{t:?}");
        }
        if let Ok(qs) = parse_drafts(&t, 2) {
            assert!((1..=8).contains(&qs.len()), "{t:?}");
        }
    }
}

#[test]
fn the_tree_and_multi_draft_views_take_anything() {
    let mut rng = StdRng::seed_from_u64(3);
    let dists = ["0.5,0.5", "0.25,0.25,0.25,0.25", "1,0", "0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625"];
    for _ in 0..3_000 {
        let p = if rng.random_bool(0.5) {
            dists[rng.random_range(0..dists.len())].to_string()
        } else {
            text(&mut rng, 10)
        };
        let drafts = (0..rng.random_range(0..10))
            .map(|_| dists[rng.random_range(0..dists.len())])
            .collect::<Vec<_>>()
            .join(";");
        let given = text(&mut rng, 6);
        let params = MultiDraftParams {
            p,
            drafts,
            given,
            ..MultiDraftParams::default()
        };
        let _ = multi_draft_view(&params); // a value or an error; a panic fails the test
        let tree = TreeParams {
            mode: TreeMode::ALL[rng.random_range(0..TreeMode::ALL.len())],
            paths: text(&mut rng, 20),
            config: text(&mut rng, 16),
            budget: rng.random_range(0..5000),
            highlight: Some(rng.random_range(0..2000)),
            ..TreeParams::default()
        };
        if let Ok(v) = tree_view(&tree) {
            assert!(v.nodes <= 4096, "{tree:?}");
        }
    }
}

#[test]
fn the_command_line_exits_0_or_2_with_one_line_whatever_it_is_given() {
    let mut rng = StdRng::seed_from_u64(4);
    let commands: &[(&str, &[&str])] = &[
        ("tree", &["--config", "--paths", "--budget", "--root"]),
        ("theory", &["--alpha", "--gamma", "--c", "--c-hat"]),
        ("sample-dist", &["--p", "--q", "--rule"]),
        (
            "prompt-lookup",
            &["--tokens", "--ngram", "--k", "--min-ngram"],
        ),
        ("multi-draft", &["--p", "--drafts", "--mode", "--given"]),
    ];
    for _ in 0..150 {
        let (cmd, opts) = commands[rng.random_range(0..commands.len())];
        let mut args = vec![cmd.to_string()];
        for _ in 0..rng.random_range(0..5) {
            args.push(opts[rng.random_range(0..opts.len())].to_string());
            args.push(text(&mut rng, 8).replace('\u{0}', ""));
        }
        if rng.random_bool(0.3) {
            args.push("--json".into());
        }
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_specdec"))
            .args(&args)
            .output()
            .expect("the binary runs");
        let code = out.status.code();
        assert!(code == Some(0) || code == Some(2), "{args:?}: {code:?}");
        if code == Some(2) {
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(out.stdout.is_empty(), "{args:?}");
        }
    }
}

use super::*;
use crate::roofline::profiles::profile;

fn view(acceptance: &str, device: &str) -> Result<ChooseView, Error> {
    choose_view(&ChooseParams {
        acceptance: acceptance.into(),
        device: device.into(),
        ..ChooseParams::default()
    })
}

#[test]
fn the_numbers_are_the_cores_choice() {
    for d in profiles() {
        let v = view(DEFAULT_ACCEPTANCE, &d.key).unwrap();
        let p = Acceptance::parse(DEFAULT_ACCEPTANCE).unwrap();
        let want = choose(&p, &d.times(), d.draft_cost).unwrap();
        assert_eq!(v.chain, want.chain, "{}", d.key);
        assert_eq!(
            (v.tree.nodes, v.tree.depth, v.tree.parents.clone()),
            (want.tree.nodes, want.tree.depth, want.tree.parents.clone())
        );
        assert_eq!(v.tree.predicted_speedup, want.tree.predicted_speedup);
        assert_eq!(v.tree.expected_tokens, want.tree.expected_tokens);
        assert_eq!(v.max_nodes, d.times().max_k() - 1);
        // The table has every device at its own c, this one's row the same choice.
        assert_eq!(v.devices.len(), profiles().len());
        let row = v.devices.iter().find(|r| r.key == d.key).unwrap();
        assert_eq!(
            (row.tree_nodes, row.tree_depth, &row.chain),
            (want.tree.nodes, want.tree.depth, &want.chain)
        );
        assert!(v.svg_heat.contains("<svg") && v.svg_tree.contains("<svg"));
        assert!(!v.svg_heat.contains("NaN") && !v.caption.contains("NaN"));
    }
}

#[test]
fn a_gpu_takes_many_nodes_and_this_cpu_few() {
    let cpu = view(DEFAULT_ACCEPTANCE, "cpu-measured").unwrap();
    let h200 = view(DEFAULT_ACCEPTANCE, "h200-measured").unwrap();
    assert!(cpu.tree.nodes <= 4, "{:?}", cpu.tree);
    assert!(h200.tree.nodes >= 16, "{:?}", h200.tree);
    assert!(
        cpu.caption.contains("the tree stays small"),
        "{}",
        cpu.caption
    );
    assert!(
        h200.caption.contains("nodes are nearly free"),
        "{}",
        h200.caption
    );
    // The tree's nodes are named by their ranks: the first child of the root is "1".
    assert_eq!(h200.tree.labels[0], "1");
    assert_eq!(h200.tree.labels.len(), h200.tree.nodes);
    for l in ["1", "2", "1.1"] {
        assert!(h200.svg_tree.contains(&format!("\n{l}\n")), "{l}");
    }
    assert!(h200.source.contains("docs/performance.md"));
}

#[test]
fn the_draft_cost_overrides_the_devices_own() {
    let own = view(DEFAULT_ACCEPTANCE, "h200-measured").unwrap();
    assert_eq!(own.draft_cost, profile("h200-measured").unwrap().draft_cost);
    let dear = choose_view(&ChooseParams {
        device: "h200-measured".into(),
        draft_cost: Some(0.5),
        ..ChooseParams::default()
    })
    .unwrap();
    assert_eq!(
        (dear.draft_cost, dear.device_draft_cost),
        (0.5, own.draft_cost)
    );
    // Each level of drafting costs half a target call: shallower trees, less speedup.
    assert!(dear.tree.depth < own.tree.depth);
    assert!(dear.tree.predicted_speedup < own.tree.predicted_speedup);
}

#[test]
fn plain_decoding_when_nothing_pays() {
    let v = choose_view(&ChooseParams {
        acceptance: "0.05".into(),
        draft_cost: Some(1.0),
        ..ChooseParams::default()
    })
    .unwrap();
    assert_eq!((v.chain.gamma, v.tree.nodes), (0, 0));
    assert!(
        v.caption.contains("plain decoding is faster"),
        "{}",
        v.caption
    );
    assert!(v.svg_tree.contains("plain decoding is faster"));
    assert!(v.svg_heat.contains("no tree beats plain decoding"));
}

#[test]
fn bad_input_is_the_cores_error() {
    for (acceptance, device) in [
        ("0.7,0.5", "cpu-measured"),
        ("-1", "cpu-measured"),
        ("abc", "cpu-measured"),
        ("", "cpu-measured"),
        ("0.6", "nope"),
    ] {
        let got = view(acceptance, device).unwrap_err();
        let want = Acceptance::parse(acceptance)
            .err()
            .or_else(|| profile(device).err())
            .unwrap();
        assert_eq!(got, want, "{acceptance} {device}");
    }
    assert!(view("0.7,0.5", "cpu-measured")
        .unwrap_err()
        .message(Lang::En)
        .contains("acceptance vector"));
    assert!(view("-1", "cpu-measured")
        .unwrap_err()
        .message(Lang::En)
        .contains("acceptance"));
    let c = choose_view(&ChooseParams {
        draft_cost: Some(-1.0),
        ..ChooseParams::default()
    })
    .unwrap_err();
    assert!(c.message(Lang::En).contains("draft-cost"), "{c}");
}

/// In Chinese the caption and the figures are Chinese.
#[test]
fn it_speaks_chinese() {
    let v = choose_view(&ChooseParams {
        lang: Lang::Zh,
        device: "h200-measured".into(),
        ..ChooseParams::default()
    })
    .unwrap();
    assert!(v.caption.contains("在这台设备上"), "{}", v.caption);
    assert!(v.svg_heat.contains("预测加速比") && v.svg_tree.contains("选出的树"));
    assert!(v.name.contains("实测"));
    assert!(!v.svg_heat.contains("speedup") && !v.caption.contains("device"));
}

/// On a phone the figures are drawn for its room; a wide grid keeps cells of at least 4 px.
#[test]
fn the_figures_fit_a_phone() {
    for device in ["cpu-measured", "h200-measured", "a100-40gb"] {
        let v = choose_view(&ChooseParams {
            device: device.into(),
            figure_width: Some(330),
            ..ChooseParams::default()
        })
        .unwrap();
        for svg in [&v.svg_heat, &v.svg_tree] {
            let w: u32 = svg
                .split("width=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(w <= 330, "{device}: {w}");
        }
    }
}

#[test]
fn every_nodes_best_tree_has_its_row() {
    // One rank: n nodes need n levels, so every column's best sits on its own row.
    let p = crate::tree::sequoia::Acceptance::parse("0.9").unwrap();
    let times = crate::tree::choose::Times::new((1..=32).map(|k| 1.0 + 0.004 * k as f64).collect())
        .unwrap();
    let choice = crate::tree::choose::choose(&p, &times, 0.066).unwrap();
    assert_eq!(super::rows_needed(&choice), 31);
    // Two ranks: the best trees of up to 31 nodes fit in fewer levels.
    let p = crate::tree::sequoia::Acceptance::parse("0.5,0.3").unwrap();
    let choice = crate::tree::choose::choose(&p, &times, 0.066).unwrap();
    let need = super::rows_needed(&choice);
    assert!(need < 31 && need >= choice.tree.depth, "{need}");
    for n in 1..=31 {
        let best = choice
            .grid
            .iter()
            .filter(|c| c.nodes == n)
            .map(|c| c.expected_tokens)
            .fold(0.0, f64::max);
        assert!(
            choice
                .grid
                .iter()
                .any(|c| c.nodes == n && c.depth <= need && c.expected_tokens + 1e-12 >= best),
            "{n}"
        );
    }
}

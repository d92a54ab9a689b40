//! The roofline view's tests, apart from the view: its numbers and its figures.

use super::*;

#[test]
fn default_view_is_the_lecture_example() {
    let v = roofline_view(&RooflineParams::default()).unwrap();
    assert_eq!(format!("{:.2}", v.step.time_ms), "26.90");
    assert_eq!(v.step.bound, roofline::Bound::Memory);
    assert_eq!(v.heat.len(), HEAT_BATCHES.len());
    assert!(v.svg.contains("memory-bound") && v.svg_heat.contains("off"));
    let zh = roofline_view(&RooflineParams {
        lang: Lang::Zh,
        ..RooflineParams::default()
    })
    .unwrap();
    assert!(zh.svg.contains("访存受限") && zh.svg.contains("每步时间"));
    assert!(zh.svg_heat.contains("演示 5") && zh.svg_heat.contains("不用"));
    assert!(!zh.svg.contains("bound") && !zh.svg_heat.contains("off"));
}

#[test]
fn deployed_target_shows_its_gpus_communication_and_utilisation() {
    let (b, l, k) = roofline::LECTURE_1_1;
    let p = RooflineParams {
        target: "llama2-70b".into(),
        draft: "llama-68m".into(),
        batch: b,
        context: l,
        k,
        tp: 4,
        ..RooflineParams::default()
    };
    let v = roofline_view(&p).unwrap();
    assert_eq!(v.served.gpus, 4);
    assert!(v.served.time_ms > v.step.time_ms / 4.0 + v.served.comm_ms);
    assert!(
        v.deployed.contains("4 GPUs: communication 4.85 ms"),
        "{}",
        v.deployed
    );
    assert!(
        v.deployed
            .contains("compute 1.6% of the datasheet peak (at most 60% in this model), memory bandwidth 78.1%"),
        "{}",
        v.deployed
    );
    assert!(v.svg.contains("4 × A100-40GB (tp 4)") && v.svg.contains("communication"));
    assert!(v.svg_heat.contains("LLaMA-2-70B on 4 × A100-40GB (tp 4)"));
    let zh = roofline_view(&RooflineParams {
        lang: Lang::Zh,
        ..p.clone()
    })
    .unwrap();
    assert!(
        zh.deployed.contains("4 块 GPU") && zh.deployed.contains("利用率"),
        "{}",
        zh.deployed
    );
    assert!(zh.svg.contains("通信") && !zh.svg.contains("communication"));
    // One A100-40GB cannot hold 138 GB; offloaded, it holds only the KV cache.
    let one = roofline_view(&RooflineParams { tp: 1, ..p.clone() }).unwrap();
    assert!(
        !one.served.fits
            && one.deployed.starts_with("does not fit: 140.7 GB per GPU, 40 GB each (the weights alone are 138.0 GB): add GPUs"),
        "{}",
        one.deployed
    );
    let off = roofline_view(&RooflineParams {
        tp: 1,
        offload: true,
        ..p.clone()
    })
    .unwrap();
    assert!(
        off.served.fits && off.deployed.contains("cross PCIe"),
        "{}",
        off.deployed
    );
    assert!(off.svg.contains("transfer-bound") && off.svg.contains("weights over PCIe"));
    // What overflows here is the KV cache, and the line says so.
    let long = roofline_view(&RooflineParams {
        batch: 256,
        context: 32768,
        ..p.clone()
    })
    .unwrap();
    assert!(
        long.deployed
            .contains("of it the KV cache of 256 × 32768 tokens: a smaller batch or context"),
        "{}",
        long.deployed
    );
    // With k tokens a step the cache holds the context and k − 1 of them.
    let wide = roofline_view(&RooflineParams {
        batch: 256,
        context: 32768,
        k: 8,
        ..p.clone()
    })
    .unwrap();
    assert!(
        wide.deployed.contains("KV cache of 256 × 32775 tokens"),
        "{}",
        wide.deployed
    );
    assert!(long
        .svg_heat
        .contains("the weights and KV cache exceed the GPUs’ memory: the step could not run"));
    assert!(!long.heat[8][8].fits && long.heat[0][0].fits);
    // A cell whose step could not run shows neither a γ nor a speedup: a dash, and the key.
    let cells = long.heat.iter().flatten();
    let (ran, not_run) = (
        cells
            .clone()
            .filter(|c| c.best.is_some_and(|b| b.gamma > 0))
            .count(),
        cells.clone().filter(|c| c.best.is_none()).count(),
    );
    assert!(not_run > 0 && ran > 0 && cells.clone().all(|c| c.fits == c.best.is_some()));
    assert_eq!(
        long.svg_heat.matches(" · ").count(),
        ran,
        "{}",
        long.svg_heat
    );
    // plotters writes a label on a line of its own inside its <text>.
    assert_eq!(long.svg_heat.matches(">\n—\n<").count(), not_run);
    assert!(long.optimal.best.is_none() && !long.optimal.fits);
    let e = roofline_view(&RooflineParams { tp: 3, ..p }).unwrap_err();
    assert!(e.to_string().contains("1, 2, 4, 8"), "{e}");
}

#[test]
fn unknown_gpu_is_reported() {
    let e = roofline_view(&RooflineParams {
        gpu: "tpu".into(),
        ..RooflineParams::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("unknown GPU \"tpu\""), "{e}");
}

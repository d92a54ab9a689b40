//! The wasm API in a real browser (headless Chromium via wasm-bindgen-test): the exports take
//! plain objects, return plain objects with the lecture's numbers, and turn bad input into a
//! thrown error naming the bad value.
#![cfg(target_arch = "wasm32")]

use js_sys::Reflect;
use serde_json::json;
use specdec::wasm;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn obj(v: serde_json::Value) -> JsValue {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap()
}

fn get(v: &JsValue, path: &[&str]) -> JsValue {
    path.iter().fold(v.clone(), |acc, k| {
        Reflect::get(&acc, &JsValue::from_str(k)).unwrap()
    })
}

fn num(v: &JsValue, path: &[&str]) -> f64 {
    get(v, path)
        .as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number"))
}

fn error_message(e: wasm_bindgen::JsError) -> String {
    let v: JsValue = e.into();
    get(&v, &["message"]).as_string().unwrap()
}

use serde::Serialize;

/// Hands the module the weights, as the page does after downloading them (the module does not
/// embed them); a second hand-over of the same bytes is accepted. First the module's start-up, as
/// wasm-bindgen's loader runs it in the page (this test binary's harness does not): it runs the
/// linker's constructors, which cubecl's WebGPU runtime needs.
fn provide_weights() {
    wasm::start();
    for (model, bytes) in [
        ("target", &include_bytes!("../assets/target.bpk")[..]),
        ("draft-a", &include_bytes!("../assets/draft-a.bpk")[..]),
        ("draft-b", &include_bytes!("../assets/draft-b.bpk")[..]),
    ] {
        wasm::provide_weights(model, bytes).unwrap();
    }
}

/// The backends this build has, and those it leaves out: the GPU module's features (which these
/// tests are built with in `scripts/test.sh`) have wgpu and flex (for drafts on the CPU beside a
/// WebGPU target); the CPU module's, flex and ndarray.
fn backends(present: bool) -> Vec<&'static str> {
    [
        ("flex", cfg!(feature = "flex")),
        ("ndarray", cfg!(feature = "ndarray")),
        ("wgpu", cfg!(feature = "wgpu")),
    ]
    .into_iter()
    .filter(|&(_, has)| has == present)
    .map(|(name, _)| name)
    .collect()
}

/// Where the model jobs below run: WebGPU when this build has it (the GPU module), else flex.
const MODELS_ON: &str = if cfg!(feature = "wgpu") {
    "wgpu"
} else {
    "flex"
};

#[wasm_bindgen_test]
fn weights_are_checked_when_handed_over() {
    let e = wasm::provide_weights("draft-c", b"").unwrap_err();
    assert!(error_message(e).contains("draft-c"));
    // Garbage is refused (as not a Burnpack file, or as different from what the module has).
    let e = wasm::provide_weights("target", b"not a burnpack file").unwrap_err();
    assert!(error_message(e).contains("target"));
    // A draft's file is not the target's.
    let e = wasm::provide_weights("target", include_bytes!("../assets/draft-a.bpk")).unwrap_err();
    assert!(error_message(e).contains("target"));
    provide_weights();
    provide_weights();
}

#[wasm_bindgen_test]
fn theory_reports_table_1() {
    let v = wasm::theory(obj(
        json!({"alpha": 0.8, "gamma": 5, "c": 0.0, "c_hat": 0.0}),
    ))
    .unwrap();
    assert_eq!(format!("{:.2}", num(&v, &["speedup"])), "3.69");
    assert_eq!(format!("{:.2}", num(&v, &["operations"])), "1.63");
    assert!(get(&v, &["svg"]).as_string().unwrap().starts_with("<svg"));
}

#[wasm_bindgen_test]
fn roofline_defaults_are_the_lecture_example() {
    let v = wasm::roofline(JsValue::UNDEFINED).unwrap();
    assert_eq!(format!("{:.2}", num(&v, &["step", "time_ms"])), "26.90");
    assert_eq!(get(&v, &["step", "bound"]).as_string().unwrap(), "memory");
}

#[wasm_bindgen_test]
fn exactness_correct_sampler_is_exact_in_the_browser() {
    let v = wasm::exactness(obj(json!({"gamma": 4}))).unwrap();
    let first = get(&v, &["tvs"]);
    let first = Reflect::get_u32(&first, 0).unwrap();
    assert_eq!(get(&first, &["variant"]).as_string().unwrap(), "correct");
    assert!(num(&first, &["tv"]) <= 1e-12);
}

#[wasm_bindgen_test]
fn multi_draft_slide_example() {
    let v = wasm::multi_draft(JsValue::NULL).unwrap();
    assert_eq!(num(&v, &["given", "mss", "acceptance"]), 1.0);
    assert_eq!(num(&v, &["averaged", "naive", "acceptance"]), 0.4375);
}

#[wasm_bindgen_test]
fn token_tree_and_its_errors() {
    let v = wasm::token_tree(obj(json!({"mode": "config", "config": "⟨2,2,1⟩"}))).unwrap();
    assert_eq!(num(&v, &["nodes"]), 10.0);
    let e = wasm::token_tree(obj(json!({"mode": "config", "config": "<2,,1>"}))).unwrap_err();
    assert!(error_message(e).contains("level 2 is empty"));
}

#[wasm_bindgen_test]
fn bad_parameter_types_are_reported() {
    let e = wasm::theory(obj(json!({"alpha": "high"}))).unwrap_err();
    assert!(error_message(e).contains("bad parameters"));
    let e = wasm::theory(obj(json!({"alpha": 2.0}))).unwrap_err();
    assert!(error_message(e).contains("alpha = 2"));
}

#[wasm_bindgen_test]
fn each_call_speaks_the_language_of_its_own_parameters() {
    // No language is remembered between calls: a Chinese call, then one that names none.
    let zh = wasm::theory(obj(json!({"alpha": 2.0, "lang": "zh"}))).unwrap_err();
    assert!(error_message(zh).contains("超出范围"));
    let en = wasm::theory(obj(json!({"alpha": 2.0}))).unwrap_err();
    assert!(error_message(en).contains("out of range"));
    let bad = wasm::token_tree(obj(
        json!({"mode": "config", "config": "<2,,1>", "lang": "zh"}),
    ));
    assert!(error_message(bad.unwrap_err()).contains("第 2 层"));
}

#[wasm_bindgen_test]
fn presets_declare_the_ranges_and_choices_the_page_reads() {
    use specdec::lab::params::{HiddenRun, BUDGET, DEPTH, GAMMA, HEADS, PROMPTS, REPEATS};
    let p = wasm::presets().unwrap();
    // The hidden-state drafts' ranges and defaults come from their one declaration each.
    let hidden = HiddenRun::default();
    for (name, range, default) in [
        ("budget", BUDGET, hidden.budget),
        ("depth", DEPTH, hidden.depth),
        ("heads", HEADS, hidden.heads),
    ] {
        assert_eq!(num(&p, &["decoding", name, "min"]), range.min, "{name}");
        assert_eq!(num(&p, &["decoding", name, "max"]), range.max, "{name}");
        assert_eq!(num(&p, &["decoding", "defaults", name]), default as f64);
    }
    assert_eq!(num(&p, &["decoding", "gamma", "max"]), GAMMA.max);
    assert_eq!(num(&p, &["decoding", "gamma", "min"]), GAMMA.min);
    assert_eq!(num(&p, &["decoding", "prompts", "max"]), PROMPTS.max);
    assert_eq!(num(&p, &["decoding", "repeats", "max"]), REPEATS.max);
    // Every other widget's ranges, and its defaults as its view's `Default` has them.
    use specdec::views::{modelfree::ModelfreeParams, theory::TheoryParams};
    for (path, range) in [
        (["theory", "gamma"], specdec::theory::GAMMA),
        (["theory", "c"], specdec::theory::C),
        (["roofline", "overhead_ms"], specdec::roofline::OVERHEAD_MS),
        (["exactness", "draft_noise"], specdec::toy::DRAFT_NOISE),
        (["multidraft", "k"], specdec::views::multidraft::K),
        (["modelfree", "window"], specdec::decode::free::kind::WINDOW),
    ] {
        assert_eq!(num(&p, &[path[0], path[1], "min"]), range.min, "{path:?}");
        assert_eq!(num(&p, &[path[0], path[1], "max"]), range.max, "{path:?}");
    }
    let (theory, modelfree) = (TheoryParams::default(), ModelfreeParams::default());
    assert_eq!(num(&p, &["theory", "defaults", "alpha"]), theory.alpha);
    assert_eq!(
        num(&p, &["modelfree", "defaults", "budget"]),
        modelfree.budget as f64
    );
    let toy = specdec::toy::ToyConfig::default();
    assert_eq!(
        num(&p, &["exactness", "defaults", "toy", "sharpness"]),
        toy.sharpness
    );
    let heat = specdec::views::roofline::HEAT_BATCHES;
    assert_eq!(
        num(&p, &["roofline", "heat_batches", "0"]),
        f64::from(heat[0])
    );
    let variants = js_sys::Array::from(&get(&p, &["variants"]));
    assert_eq!(variants.length(), 6);
    assert_eq!(variants.get(0).as_string().unwrap(), "correct");
    let kinds = js_sys::Array::from(&get(&p, &["token_kinds"]));
    assert_eq!(kinds.length(), 4);
    assert_eq!(get(&kinds.get(3), &["name"]).as_string().unwrap(), "answer");
    assert_eq!(get(&kinds.get(3), &["zh"]).as_string().unwrap(), "答案");
    let note = wasm::webgpu_fallback_note(obj(json!({"reason": "no-adapter", "lang": "zh"})));
    assert!(note.unwrap().contains("没有提供 WebGPU 适配器"));
}

#[wasm_bindgen_test]
async fn likesworld_models_run_in_the_browser_on_every_backend() {
    provide_weights();
    for backend in backends(false) {
        if backend == "wgpu" {
            continue; // a build without wgpu runs WebGPU jobs on flex, with a note
        }
        let e = wasm::likesworld(obj(json!({"backend": backend})), None)
            .await
            .unwrap_err();
        let m = error_message(e);
        assert!(m.contains(&format!("no {backend} backend")), "{m}");
    }
    for backend in backends(true) {
        // Worlds have 3 to 6 facts; the models never saw fewer.
        let text = "dan likes jam . fay likes nuts . eve likes tea . q fay nuts . q dan jam . q eve tea . <eos>";
        let v = wasm::likesworld(obj(json!({"text": text, "backend": backend})), None)
            .await
            .unwrap();
        // Chromium runs with --enable-unsafe-webgpu (SwiftShader): no fallback here.
        assert_eq!(get(&v, &["backend"]).as_string().unwrap(), backend);
        assert!(get(&v, &["note"]).is_null(), "{backend}: fell back");
        let positions = get(&v, &["positions"]);
        let n = js_sys::Array::from(&positions).length();
        let mut answers = 0;
        for i in 0..n {
            let p = Reflect::get_u32(&positions, i).unwrap();
            if get(&p, &["kind"]).as_string().unwrap() == "answer" {
                answers += 1;
                let target = Reflect::get_u32(&get(&p, &["p"]), 0)
                    .unwrap()
                    .as_f64()
                    .unwrap();
                assert!(
                    target > 0.9,
                    "{backend}: the target answers with p = {target}"
                );
            }
        }
        assert_eq!(answers, 3);
    }
    let e = wasm::likesworld(
        obj(json!({"text": "dan loves jam", "backend": MODELS_ON})),
        None,
    )
    .await
    .unwrap_err();
    assert!(error_message(e).contains("\"loves\""));
}

/// The worker asks the GPU module whether it can run WebGPU jobs before the first one: here it
/// can (the page's tests cover an adapter that gives no device).
#[wasm_bindgen_test]
async fn webgpu_is_usable_in_headless_chromium() {
    let note = wasm::webgpu_unavailable(obj(json!({"lang": "en"})))
        .await
        .unwrap();
    assert_eq!(note, None);
}

/// Tree attention on WebGPU (lecture §4.3): one forward over the tree equals every root-to-node
/// path run on its own, with and without a cached prefix; and, where the build has flex, WebGPU's
/// logits equal flex's (the page's tests compare the two modules' decoding token for token).
#[wasm_bindgen_test]
async fn tree_attention_on_webgpu_equals_every_path_and_the_cpu() {
    provide_weights();
    use specdec::likesworld::{encode, worlds, Split, VOCAB};
    use specdec::model::device::Backend;
    use specdec::model::tree_attention::check;
    use specdec::model::{weights, ModelKind};
    use specdec::tree::{parse_config, parse_paths, TokenTree, DEFAULT_NODE_BUDGET};

    let gpu = Backend::Wgpu
        .device()
        .await
        .expect("WebGPU in headless Chromium");
    let on_gpu = weights::load(ModelKind::Target, &gpu).unwrap();
    let prompt = worlds(Split::HeldOut, 5, 1)[0].prompt();
    for config in ["<2,2,1>", "<3,1,1,1>", "<2,2,2,2>"] {
        let tree = TokenTree::expand(&parse_config(config, DEFAULT_NODE_BUDGET).unwrap(), "r");
        let tokens: Vec<u32> = (0..tree.nodes().len())
            .map(|i| ((i * 11) % VOCAB) as u32)
            .collect();
        for cached in [true, false] {
            let c = check(&on_gpu, &prompt, &tree, &tokens, cached, &gpu)
                .await
                .unwrap();
            assert!(c.max_abs_diff <= 1e-4, "{config} cached={cached}: {c:?}");
        }
        #[cfg(feature = "flex")]
        {
            use specdec::model::tree_attention::tree_logits;
            let cpu = Backend::Flex.device().await.unwrap();
            let on_cpu = weights::load(ModelKind::Target, &cpu).unwrap();
            let g = tree_logits(&on_gpu, &prompt, &tree, &tokens, true, &gpu)
                .await
                .unwrap();
            let c = tree_logits(&on_cpu, &prompt, &tree, &tokens, true, &cpu)
                .await
                .unwrap();
            let worst = g
                .iter()
                .flatten()
                .zip(c.iter().flatten())
                .fold(0.0f32, |w, (a, b)| w.max((a - b).abs()));
            assert!(
                worst <= 1e-4,
                "{config}: WebGPU vs flex max |Δlogit| {worst}"
            );
        }
    }
    let paths = parse_paths("q dan jam | q dan nuts . | q fay").unwrap();
    let tree = TokenTree::merge(&paths, "root");
    let tokens: Vec<u32> = tree
        .nodes()
        .iter()
        .map(|n| n.parent.map_or(0, |_| encode(&n.token).unwrap()[0]))
        .collect();
    let c = check(&on_gpu, &prompt, &tree, &tokens, true, &gpu)
        .await
        .unwrap();
    assert!(c.max_abs_diff <= 1e-4, "merge: {c:?}");
    assert_eq!((c.tree_tokens, c.path_tokens), (6, 9));
}

/// Speculative decoding in the browser: greedy chains identical to the target's own greedy
/// decoding, and a seeded greedy-tree step-through on WebGPU (equal to the same run on flex, where
/// the build has it).
#[wasm_bindgen_test]
async fn speculative_decoding_runs_in_the_browser() {
    provide_weights();
    let v = wasm::likesworld_decode(
        obj(json!({"experiment": "greedy", "prompts": 5, "draft": "a", "backend": MODELS_ON})),
        None,
    )
    .await
    .unwrap();
    let reports = js_sys::Array::from(&get(&v, &["report"]));
    assert_eq!(reports.length(), 4, "γ 1, 2, 4, 6");
    for r in reports.iter() {
        assert_eq!(num(&r, &["identical"]), 5.0);
    }
    let step = |backend: &str| {
        obj(
            json!({"experiment": "step", "backend": backend, "sampling": false, "config": "<2,1>", "seed": 3}),
        )
    };
    let on_gpu = wasm::likesworld_decode(step("wgpu"), None).await.unwrap();
    assert_eq!(get(&on_gpu, &["backend"]).as_string().unwrap(), "wgpu");
    let steps = js_sys::Array::from(&get(&on_gpu, &["steps"]));
    assert!(steps.length() > 1, "a run of several steps");
    #[cfg(feature = "flex")]
    {
        let on_cpu = wasm::likesworld_decode(step("flex"), None).await.unwrap();
        let words = |v: &JsValue| js_sys::JSON::stringify(&get(v, &["report", "output"])).unwrap();
        assert_eq!(words(&on_gpu), words(&on_cpu));
        // The drafts on the CPU beside the WebGPU target (issue 31): the target's own greedy
        // outputs still, and the timed report says where the drafts ran.
        let apart = |experiment: &str| {
            obj(
                json!({"experiment": experiment, "prompts": 3, "gamma": 3, "draft": "b",
                "backend": "wgpu", "drafts": "flex"}),
            )
        };
        let greedy = wasm::likesworld_decode(apart("greedy"), None)
            .await
            .unwrap();
        for r in js_sys::Array::from(&get(&greedy, &["report"])).iter() {
            assert_eq!(num(&r, &["identical"]), 3.0);
        }
        let timed = wasm::likesworld_decode(apart("speedup"), None)
            .await
            .unwrap();
        assert_eq!(
            get(&timed, &["report", "backend"]).as_string().unwrap(),
            "wgpu"
        );
        assert_eq!(
            get(&timed, &["report", "drafts_on"]).as_string().unwrap(),
            "flex"
        );
    }
    // An experiment not named is the widget's default, greedy chains (here γ 4 among 1, 2, 6).
    let unnamed = wasm::likesworld_decode(obj(json!({"prompts": 1, "backend": MODELS_ON})), None)
        .await
        .unwrap();
    assert_eq!(
        get(&unnamed, &["experiment"]).as_string().unwrap(),
        "greedy"
    );
    assert_eq!(js_sys::Array::from(&get(&unnamed, &["report"])).length(), 4);
    let e = wasm::likesworld_decode(
        obj(json!({"experiment": "greedy", "gamma": 0, "backend": MODELS_ON})),
        None,
    )
    .await
    .unwrap_err();
    assert!(error_message(e).contains("gamma = 0"));
}

/// Drafting without a model in the browser: a rule workload without the models, LikesWorld with
/// them, outputs identical to the target's; bad values named.
#[wasm_bindgen_test]
async fn model_free_drafting_runs_in_the_browser() {
    provide_weights();
    let h = wasm::modelfree(
        obj(json!({"experiment": "highlight", "workload": "agent", "requests": 6, "request": 5})),
        None,
    )
    .await
    .unwrap();
    assert!(get(&h, &["highlight", "identical"]).as_bool().unwrap());
    assert!(
        get(&h, &["backend"]).is_null(),
        "no models for a rule workload"
    );
    let s = wasm::modelfree(
        obj(
            json!({"experiment": "jacobi", "workload": "likesworld", "requests": 4, "backend": MODELS_ON}),
        ),
        None,
    )
    .await
    .unwrap();
    let rows = js_sys::Array::from(&get(&s, &["report", "rows"]));
    assert_eq!(rows.length(), 3);
    for r in rows.iter() {
        assert_eq!(num(&r, &["row", "identical"]), 4.0);
    }
    let e = wasm::modelfree(obj(json!({"drafter": "medusa"})), None)
        .await
        .unwrap_err();
    assert!(error_message(e).contains("\"medusa\""));
}

/// The multi-draft size guard on wasm32, where usize is 32 bits: 16⁸ = 2³² combinations must be
/// refused, not wrapped to 0 and enumerated on the main thread.
#[wasm_bindgen_test]
fn the_multi_draft_size_guard_holds_on_32_bits() {
    let p = ["0.0625"; 16].join(",");
    let drafts = [p.as_str(); 8].join(";");
    let e = wasm::multi_draft(obj(json!({"p": p, "drafts": drafts}))).unwrap_err();
    let m = error_message(e);
    assert!(m.contains("4294967296 combinations"), "{m}");
}

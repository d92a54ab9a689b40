//! The multidraft view's tests, apart from the view: its numbers and its figures.

use super::*;

#[test]
fn slide_example_by_default() {
    let v = multi_draft_view(&MultiDraftParams::default()).unwrap();
    let g = v.given.unwrap();
    assert_eq!((g.naive.acceptance, g.mss.acceptance), (0.5, 1.0));
    assert_eq!(
        (v.averaged.naive.acceptance, v.averaged.mss.acceptance),
        (0.4375, 0.8125)
    );
}

/// A Chinese input method's commas and semicolons read as ASCII ones.
#[test]
fn full_width_separators_read_as_ascii_ones() {
    let ascii = multi_draft_view(&MultiDraftParams::default()).unwrap();
    let d = MultiDraftParams::default();
    let zh = multi_draft_view(&MultiDraftParams {
        p: d.p.replace(',', "，"),
        drafts: d.drafts.replace(',', "，").replace(';', "；"),
        given: d.given.replace(',', "，"),
        ..MultiDraftParams::default()
    })
    .unwrap();
    assert!(zh.given.is_some());
    assert_eq!(format!("{:?}", zh.given), format!("{:?}", ascii.given));
    assert_eq!(
        format!("{:?}", zh.averaged),
        format!("{:?}", ascii.averaged)
    );
}

#[test]
fn children_top_k_is_biased_on_the_toy() {
    let v = multi_draft_view(&MultiDraftParams::default()).unwrap();
    let row = |name| v.children.iter().find(|r| r.children == name).unwrap();
    assert!(row("iid").tv_max <= 1e-12 && row("without-replacement").tv_max <= 1e-12);
    // Lecture: TV 0.205 for top-k on its toy; same kind here.
    assert!(row("top-k").tv_mean > 0.05, "{:?}", row("top-k"));
    for r in &v.children {
        assert!(r.mss_acceptance + 1e-12 >= r.naive_acceptance, "{r:?}");
    }
}

/// The kept panels are the panels of the toy and k asked for, however the requests come.
#[test]
fn kept_toy_panels_equal_fresh_ones() {
    let toys = [
        ToyConfig::default(),
        ToyConfig {
            seed: 5,
            ..ToyConfig::default()
        },
    ];
    for _ in 0..2 {
        for (k, lang) in [3, 1, 2, 3, 4, 5, 1]
            .into_iter()
            .zip([Lang::En, Lang::Zh].iter().cycle())
        {
            for toy in toys {
                let v = multi_draft_view(&MultiDraftParams {
                    k,
                    toy,
                    lang: *lang,
                    ..MultiDraftParams::default()
                })
                .unwrap();
                let fresh = children_rows(&ToyLm::new(&toy), k as usize, *lang);
                assert_eq!(format!("{:?}", v.children), format!("{fresh:?}"), "k {k}");
                assert_eq!(v.svg_children, children_chart(&fresh, k, *lang, 560));
                let narrow = multi_draft_view(&MultiDraftParams {
                    k,
                    toy,
                    lang: *lang,
                    figure_width: Some(322),
                    ..MultiDraftParams::default()
                })
                .unwrap();
                assert_eq!(narrow.svg_children, children_chart(&fresh, k, *lang, 322));
            }
        }
    }
}

/// Both figures at the narrowest width, a 390 px phone's room and their own, in both
/// languages, given or averaged, for every k: no two texts overlap (on a phone the two
/// charts' titles once did, and "given" ran into "averaged"), none passes an edge.
#[test]
fn no_text_of_either_figure_overlaps_another() {
    use crate::plot::tests::text_clashes;
    use crate::plot::MIN_WIDTH;
    for w in [MIN_WIDTH, 322, 560] {
        for lang in [Lang::En, Lang::Zh] {
            let slide = MultiDraftParams::default().given;
            for (given, k) in [(slide.as_str(), 2), ("", 1), (slide.as_str(), 5)] {
                let v = multi_draft_view(&MultiDraftParams {
                    given: given.into(),
                    k,
                    lang,
                    figure_width: Some(w),
                    ..MultiDraftParams::default()
                })
                .unwrap();
                for svg in [&v.svg, &v.svg_children] {
                    assert_eq!(
                        text_clashes(svg, w as i32),
                        Vec::<String>::new(),
                        "{w} px, {lang:?}, given {given:?}, k {k}"
                    );
                    // Wrapped or staggered, every name is whole.
                    assert!(!svg.contains('…'), "{svg}");
                }
                // At its own width the names under the bars stand in one row.
                if w == 560 {
                    let rows: std::collections::BTreeSet<i32> =
                        crate::plot::tests::text_boxes(&v.svg)
                            .into_iter()
                            .filter(|(t, _)| ["naive", "朴素", "MSS"].contains(&t.as_str()))
                            .map(|(_, b)| b[1])
                            .collect();
                    assert_eq!(rows.len(), 1, "{lang:?}: {rows:?}");
                }
            }
        }
    }
}

#[test]
fn the_figures_speak_chinese() {
    let v = multi_draft_view(&MultiDraftParams {
        lang: Lang::Zh,
        ..MultiDraftParams::default()
    })
    .unwrap();
    assert!(v.svg.contains("P（某个草稿 token 被接受）") && v.svg.contains("朴素"));
    assert!(v.svg_children.contains("MSS 接受率"));
    assert!(!v.svg.contains("accepted") && !v.svg_children.contains("acceptance"));
}

#[test]
fn bad_inputs_say_what_is_wrong() {
    let with = |p: &str, d: &str, g: &str| MultiDraftParams {
        p: p.into(),
        drafts: d.into(),
        given: g.into(),
        ..MultiDraftParams::default()
    };
    let err = |m: MultiDraftParams| multi_draft_view(&m).unwrap_err().to_string();
    assert!(err(with("0.5,0.5", "1,0,0", "")).contains("draft 1 has 3 entries but p has 2"));
    assert!(err(with("0.5,0.5", "1,0", "2")).contains("draft 1 gives t2 probability 0"));
    assert!(err(with("0.5,0.5", "1,0", "1,1")).contains("2 tokens for 1 drafts"));
    assert!(
        err(with("0.5,0.5", "1,0", "x")).ends_with("\"x\": not a token number (t1 … t2, or 1 … 2)")
    );
    assert!(err(with("0.5,0.5", "1,0", "1,x")).contains("\"x\" is not a token number"));
    assert!(err(with("0.5,0.5", "1,0", "0")).contains("token 0 is outside 1…2"));
    assert!(err(with("0.5,0.5", "1,0", "3")).contains("numbered from 1"));
    // A pasted page is quoted by its start only.
    let long = err(with("0.5,0.5", "1,0", &"x".repeat(10_000)));
    assert!(long.chars().count() < 300, "{long}");
}

/// The texts of `svg` that name a token (t0, t1, …), in order.
pub(crate) fn token_labels(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim()))
        .filter(|t| t.len() > 1 && t.starts_with('t') && t[1..].bytes().all(|b| b.is_ascii_digit()))
        .map(String::from)
        .collect()
}

/// One numbering, the lecture's: tokens t1 … tn, typed as 1 … n (or t1 … tn), and the
/// chart's axis reads the same names. The slide example ("SSM 1 always gives t1, SSM 2 …
/// drew t2") is typed 1,2.
#[test]
fn tokens_are_numbered_from_1_as_in_the_lecture() {
    let v = multi_draft_view(&MultiDraftParams::default()).unwrap();
    assert_eq!(MultiDraftParams::default().given, "1,2");
    assert_eq!(token_labels(&v.svg), ["t1", "t2", "t3", "t4"]);
    let qs = parse_drafts("1,0,0,0; 0.25,0.25,0.25,0.25", 4).unwrap();
    assert_eq!(parse_given("1,2", &qs).unwrap(), Some(vec![0, 1]));
    assert_eq!(parse_given("t1, T2", &qs).unwrap(), Some(vec![0, 1]));
}

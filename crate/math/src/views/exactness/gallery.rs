//! The gallery of real bugs in the exactness lab (lecture §6, second principle): one row a bug —
//! what it is, its source, its exact TV, the samples a χ² test needs to see it, what catches it
//! and what misses it — the correct rule through the same tests, and a figure of the samples each
//! bug needs against the quick check's 1,000.

use crate::decode::gallery::power::{
    examine, false_alarms, Examined, CAP, EXACT, GAMMA, GREEDY, MONTE_CARLO, MONTE_CARLO_QUICK,
    QUICK, SEEDS, WINDOW,
};
use crate::error::Error;
use crate::i18n::Lang;
use crate::plot::{colors, figure_width, render, Align, Chart, Labels, Scale};
use crate::sampling::gallery::{Bug, Place, Source};
use crate::toy::{ToyConfig, ToyLm};

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct GalleryParams {
    /// The toy world the bugs run in (the lab's: its draft noise decides how subtle they are).
    pub toy: ToyConfig,
    /// The Monte Carlo runs' seed.
    pub seed: u64,
    pub lang: Lang,
    pub figure_width: Option<u32>,
}

impl Default for GalleryParams {
    fn default() -> Self {
        GalleryParams {
            toy: ToyConfig::default(),
            seed: 7,
            lang: Lang::En,
            figure_width: None,
        }
    }
}

/// One bug's row.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GalleryRow {
    pub name: &'static str,
    pub label: &'static str,
    pub what: &'static str,
    pub place: Place,
    pub source: Source,
    pub also: &'static [&'static str],
    #[serde(flatten)]
    pub examined: Examined,
}

/// The correct rule through the same tests.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Correct {
    pub tv: f64,
    pub quick_p_value: f64,
    pub greedy_identical: usize,
    pub greedy_runs: usize,
    /// χ² alarms over [`SEEDS`] seeds at each sample size: (samples, alarms).
    pub false_alarms: Vec<FalseAlarms>,
    pub seeds: u64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct FalseAlarms {
    pub samples: usize,
    pub alarms: u64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct GalleryView {
    pub variants: Vec<GalleryRow>,
    pub correct: Correct,
    /// The tests' names, in the order the table's columns give them, and their words.
    pub tests: Vec<(&'static str, String)>,
    pub gamma: usize,
    pub window: usize,
    pub quick: usize,
    pub cap: usize,
    /// What the gallery shows, in the numbers of this run.
    pub caption: String,
    pub svg: String,
}

/// Every bug and the correct rule through every test, in the toy world of `params`.
pub fn gallery_view(params: &GalleryParams) -> Result<GalleryView, Error> {
    let toy = params.toy.validate()?;
    let (lm, l) = (ToyLm::new(&toy), params.lang);
    let variants: Vec<GalleryRow> = Bug::ALL
        .into_iter()
        .map(|bug| GalleryRow {
            name: bug.name(),
            label: bug.label(l),
            what: bug.what(l),
            place: bug.place(),
            source: bug.source(),
            also: bug.also(),
            examined: examine(&lm, Some(bug), params.seed),
        })
        .collect();
    let c = examine(&lm, None, params.seed);
    let correct = Correct {
        tv: c.tv,
        quick_p_value: c.quick.p_value,
        greedy_identical: c.greedy_identical,
        greedy_runs: c.greedy_runs,
        false_alarms: false_alarms(&lm)
            .into_iter()
            .map(|(samples, alarms)| FalseAlarms { samples, alarms })
            .collect(),
        seeds: SEEDS,
    };
    let w = figure_width(560, params.figure_width);
    Ok(GalleryView {
        caption: caption(&variants, &correct, l),
        svg: needed_chart(&variants, l, w),
        tests: tests(l),
        gamma: GAMMA,
        window: WINDOW,
        quick: QUICK,
        cap: CAP,
        variants,
        correct,
    })
}

/// The tests in words.
fn tests(l: Lang) -> Vec<(&'static str, String)> {
    vec![
        (
            EXACT,
            l.pick(
                "exact enumeration (γ 1–3, window γ + 1)",
                "精确枚举（γ 1–3，窗口 γ + 1）",
            )
            .into(),
        ),
        (
            MONTE_CARLO_QUICK,
            l.pick(
                format!("χ² on {QUICK} samples"),
                format!("{QUICK} 个样本的 χ² 检验"),
            ),
        ),
        (
            MONTE_CARLO,
            l.pick(
                format!("χ² at the samples needed (run up to {CAP})"),
                format!("所需样本数的 χ² 检验（最多跑 {CAP} 个）"),
            ),
        ),
        (
            GREEDY,
            l.pick(
                "greedy identity (25 prompts × γ 1–4)",
                "贪心逐字相同（25 个提示 × γ 1–4）",
            )
            .into(),
        ),
    ]
}

fn count(rows: &[GalleryRow], test: &str) -> usize {
    rows.iter()
        .filter(|r| r.examined.detected_by.contains(&test))
        .count()
}

fn caption(all: &[GalleryRow], correct: &Correct, l: Lang) -> String {
    // A bug that changes nothing in this world (a draft equal to its target) is left out.
    let rows: Vec<GalleryRow> = all
        .iter()
        .filter(|r| r.examined.has_effect())
        .cloned()
        .collect();
    let rows = rows.as_slice();
    let n = rows.len();
    let idle = all.len() - n;
    let idle_note = if idle == 0 {
        String::new()
    } else {
        l.pick(
            format!(" {idle} of the ten change nothing in this world (its draft leaves them idle) and are left out."),
            format!(" 十个里有 {idle} 个在这个世界里不改变任何东西（草稿让它们无从发作），不计在内。"),
        )
    };
    let (exact, quick, greedy) = (
        count(rows, EXACT),
        count(rows, MONTE_CARLO_QUICK),
        count(rows, GREEDY),
    );
    let beyond = rows
        .iter()
        .filter(|r| r.examined.samples_needed.is_none_or(|s| s > QUICK as f64))
        .count();
    let alarms = correct
        .false_alarms
        .iter()
        .map(|f| {
            l.pick(
                format!(
                    "{} of {} seeds at {} samples",
                    f.alarms, correct.seeds, f.samples
                ),
                format!(
                    "{} 个样本时 {} 个种子中 {} 次",
                    f.samples, correct.seeds, f.alarms
                ),
            )
        })
        .collect::<Vec<_>>()
        .join(l.pick(", ", "，"));
    l.pick(
        format!(
            "Of {n} bugs, exact enumeration catches {exact}, a χ² check of {QUICK} samples {quick}, greedy identity {greedy}. {beyond} {} more than {QUICK} samples for a 95% chance of being seen: a quick Monte Carlo check passes them. The correct rule raises no alarm in enumeration (TV {:.0e}) or greedy identity ({}/{}); the χ² test's false alarms: {alarms} (its level is 5%).{idle_note}",
            if beyond == 1 { "needs" } else { "need" },
            correct.tv, correct.greedy_identical, correct.greedy_runs
        ),
        format!(
            "{n} 个缺陷中，精确枚举抓到 {exact} 个，{QUICK} 个样本的 χ² 检验抓到 {quick} 个，贪心逐字相同抓到 {greedy} 个。有 {beyond} 个要超过 {QUICK} 个样本才有 95% 的把握看出来：快速的蒙特卡洛检查会放过它们。正确规则在精确枚举（TV {:.0e}）和贪心逐字相同（{}/{}）里都不报警；χ² 检验的误报：{alarms}（检验水平 5%）。{idle_note}",
            correct.tv, correct.greedy_identical, correct.greedy_runs
        ),
    )
}

/// Samples each bug needs for 95% power (log), one bar a bug numbered as the table, with the
/// quick check's 1,000 and the largest run marked.
fn needed_chart(rows: &[GalleryRow], l: Lang, w: u32) -> String {
    let label = l.pick(
        "Samples a chi-square test needs to see each bug with 95% power",
        "χ² 检验以 95% 的把握看出每个缺陷所需的样本数",
    );
    render(w, 280, label, |cv| {
        let labels = Labels {
            title: l.pick(
                "Samples needed to see each bug (χ², 95% power)",
                "看出每个缺陷所需的样本数（χ²，95% 把握）",
            ),
            x: l.pick("bug (row of the table)", "缺陷（表中的行号）"),
            y: l.pick("samples (log)", "样本数（对数）"),
        };
        let top = 1e8;
        let ch = Chart::new(
            cv,
            (60, 40, w as i32 - 20, 220),
            Scale::categories(rows.len()),
            Scale::log(10.0, top),
            &labels,
        );
        for (i, r) in rows.iter().enumerate() {
            let x = i as f64;
            let n = r.examined.samples_needed.unwrap_or(top).min(top);
            let color = if r.examined.detected_by.contains(&GREEDY) {
                colors::PURPLE
            } else if n > QUICK as f64 {
                colors::ORANGE
            } else {
                colors::BLUE
            };
            ch.bar(x + 0.15, x + 0.85, n, color);
        }
        let numbers: Vec<String> = (1..=rows.len()).map(|i| i.to_string()).collect();
        ch.categories(&numbers.iter().map(String::as_str).collect::<Vec<_>>());
        ch.hline(QUICK as f64, colors::RED);
        ch.note(
            rows.len() as f64,
            QUICK as f64,
            &l.pick(
                format!("quick check: {QUICK}"),
                format!("快速检查：{QUICK}"),
            ),
            colors::RED,
            Align::End,
        );
        cv.legend(
            (70, 268),
            &[
                (
                    l.pick("seen by ≤ 1,000 samples", "≤ 1,000 个样本可见"),
                    colors::BLUE,
                ),
                (l.pick("needs more", "需要更多"), colors::ORANGE),
                (
                    l.pick("greedy identity sees it", "贪心逐字相同可见"),
                    colors::PURPLE,
                ),
            ],
        );
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gallery_view_reports_what_its_rows_say_in_both_languages() {
        // One run of every test (on a closer draft than the default: fewer rejections to
        // enumerate, a faster world), in Chinese; its rows then worded in English too, as the
        // view words them.
        let v = gallery_view(&GalleryParams {
            toy: ToyConfig {
                draft_noise: 0.3,
                ..ToyConfig::default()
            },
            lang: Lang::Zh,
            figure_width: Some(358),
            ..GalleryParams::default()
        })
        .unwrap();
        assert_eq!(v.variants.len(), Bug::ALL.len());
        assert!(v
            .variants
            .iter()
            .all(|r| !r.examined.detected_by.is_empty()));
        assert!(v.correct.tv <= 1e-12 && v.correct.false_alarms.len() == 2);
        assert!(v.caption.contains("精确枚举抓到") && v.svg.contains("快速检查"));
        assert_eq!(v.variants[8].label, "缓存没有回滚");
        let exact = count(&v.variants, EXACT);
        let en = caption(&v.variants, &v.correct, Lang::En);
        assert!(
            en.contains(&format!("exact enumeration catches {exact}")),
            "{en}"
        );
        assert!(needed_chart(&v.variants, Lang::En, 560).contains("quick check"));
        let json = serde_json::to_value(&v).unwrap();
        let row = &json["variants"][0];
        assert_eq!(row["name"], "softmax-residual");
        assert!(row["source"]["url"]
            .as_str()
            .unwrap()
            .contains("/pull/28508"));
        assert!(row["detected_by"]
            .as_array()
            .unwrap()
            .contains(&"exact-enumeration".into()));
        assert!(row["tv"].as_f64().unwrap() > 0.0);
    }

    #[test]
    fn a_bad_toy_world_is_refused_by_name() {
        let e = gallery_view(&GalleryParams {
            toy: ToyConfig {
                draft_noise: -1.0,
                ..ToyConfig::default()
            },
            ..GalleryParams::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("draft"), "{e}");
    }
}

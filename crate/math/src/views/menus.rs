//! What the analytic widgets' selects offer, declared once here and handed to the page by
//! `presets` (`menus`): each menu's choices, by name, with their labels in both languages. A
//! menu of the core's named choices comes from its enum ([`menu`]); where the page offers a few
//! values of a wider range (the roofline's deployments, the exactness lab's runs), they are
//! listed here and a test holds each to what the core takes. `specdec`'s `presets` adds the
//! model widgets' menus, built with the same [`Choice`].

use crate::error::Named;
use crate::i18n::Lang;
use crate::views::tree;
use serde::ser::{SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

/// A choice as a menu offers it: its name and its label in both languages.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Choice {
    pub name: &'static str,
    pub en: &'static str,
    pub zh: &'static str,
}

impl Choice {
    /// The choice `name`, labelled `en` and `zh`.
    pub const fn new(name: &'static str, en: &'static str, zh: &'static str) -> Choice {
        Choice { name, en, zh }
    }
}

/// A menu: choices listed in the core (data, no code per choice), choices built in the core (a
/// named choice's values, a catalogue's entries), or numbers, each named by its digits and
/// labelled with its thousands grouped (20,000). The page reads each as a list of `{name, en,
/// zh}`.
#[derive(Debug, Clone)]
pub enum Menu {
    Listed(&'static [Choice]),
    Named(Vec<Choice>),
    Numbers(&'static [u32]),
}

impl Menu {
    /// Every choice's name, in order.
    pub fn names(&self) -> Vec<String> {
        match self {
            Menu::Listed(c) => c.iter().map(|c| c.name.to_string()).collect(),
            Menu::Named(c) => c.iter().map(|c| c.name.to_string()).collect(),
            Menu::Numbers(n) => n.iter().map(|n| n.to_string()).collect(),
        }
    }

    /// Every choice's labels (English, Chinese), in order.
    pub fn labels(&self) -> Vec<(String, String)> {
        let of = |c: &Choice| (c.en.to_string(), c.zh.to_string());
        match self {
            Menu::Listed(c) => c.iter().map(of).collect(),
            Menu::Named(c) => c.iter().map(of).collect(),
            Menu::Numbers(n) => n.iter().map(|&n| (grouped(n), grouped(n))).collect(),
        }
    }
}

/// A number as a menu's choice: `{name: "20000", en: "20,000", zh: "20,000"}`.
struct Numbered(u32);

impl Serialize for Numbered {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let label = grouped(self.0);
        let mut c = s.serialize_struct("Choice", 3)?;
        c.serialize_field("name", &self.0.to_string())?;
        c.serialize_field("en", &label)?;
        c.serialize_field("zh", &label)?;
        c.end()
    }
}

impl Serialize for Menu {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Menu::Listed(c) => c.serialize(s),
            Menu::Named(c) => c.serialize(s),
            Menu::Numbers(n) => {
                let mut seq = s.serialize_seq(Some(n.len()))?;
                for &n in n.iter() {
                    seq.serialize_element(&Numbered(n))?;
                }
                seq.end()
            }
        }
    }
}

/// The menus the page's selects offer, by name: a widget's own by the widget and its control
/// (`roofline.tp`); one that several widgets offer by its own name (`backend`, `batch`). The page reads them as one
/// object; a list here, since a map's code costs the modules kilobytes.
#[derive(Debug, Clone, Default)]
pub struct Menus(pub Vec<(&'static str, Menu)>);

impl Menus {
    /// The menu `name`, if there is one.
    pub fn get(&self, name: &str) -> Option<&Menu> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, m)| m)
    }

    /// These menus and `more`'s.
    pub fn extend(&mut self, more: Menus) {
        self.0.extend(more.0);
    }
}

impl std::ops::Index<&str> for Menus {
    type Output = Menu;

    fn index(&self, name: &str) -> &Menu {
        self.get(name).unwrap_or_else(|| panic!("no menu {name}"))
    }
}

impl IntoIterator for Menus {
    type Item = (&'static str, Menu);
    type IntoIter = std::vec::IntoIter<(&'static str, Menu)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl Serialize for Menus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, menu) in &self.0 {
            map.serialize_entry(name, menu)?;
        }
        map.end()
    }
}

/// A menu of named choices, in the order given, each labelled by `label`.
pub fn menu<T: Named>(values: &[T], label: impl Fn(T, Lang) -> &'static str) -> Menu {
    let choice = |&v: &T| Choice::new(v.key(), label(v, Lang::En), label(v, Lang::Zh));
    Menu::Named(values.iter().map(choice).collect())
}

/// `n` with its thousands grouped by commas: 100000 → "100,000".
pub fn grouped(n: u32) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The targets the roofline widget offers (every one of [`crate::roofline::MODELS`] large enough
/// to serve), and its drafts, as [`crate::roofline::MODELS`] labels them.
pub const ROOFLINE_TARGETS: [&str; 7] = [
    "opt-1.3b",
    "opt-6.7b",
    "opt-13b",
    "opt-30b",
    "llama2-7b",
    "llama2-13b",
    "llama2-70b",
];
pub const ROOFLINE_DRAFTS: [&str; 4] = ["opt-125m", "opt-350m", "opt-1.3b", "llama-68m"];
/// The deployments the roofline widget offers: tensor-parallel GPUs (every listed target's
/// heads and layers divide these), pipeline stages, micro-batches.
pub const ROOFLINE_TP: [Choice; 4] = [
    Choice::new("1", "1 GPU", "1 块 GPU"),
    Choice::new("2", "2", "2"),
    Choice::new("4", "4", "4"),
    Choice::new("8", "8", "8"),
];
pub const ROOFLINE_PP: [u32; 3] = [1, 2, 4];
pub const ROOFLINE_MICRO_BATCHES: [u32; 4] = [1, 2, 4, 8];
/// Where the target's weights sit: the view's `offload` false (`gpu`) or true (`host`).
pub const ROOFLINE_WEIGHTS: [Choice; 2] = [
    Choice::new("gpu", "on the GPUs", "在 GPU 上"),
    Choice::new("host", "offloaded to host", "卸载到主机内存"),
];
/// The Monte Carlo runs the exactness lab offers.
pub const EXACTNESS_RUNS: [u32; 4] = [1_000, 5_000, 20_000, 100_000];
/// The exactness lab's window: γ + 1 by default, else every length of its range.
pub const EXACTNESS_WINDOW: [Choice; 8] = [
    Choice::new("auto", "auto: γ + 1", "自动：γ + 1"),
    Choice::new("1", "1", "1"),
    Choice::new("2", "2", "2"),
    Choice::new("3", "3", "3"),
    Choice::new("4", "4", "4"),
    Choice::new("5", "5", "5"),
    Choice::new("6", "6", "6"),
    Choice::new("7", "7", "7"),
];
/// The exercises there are checks for ([`crate::views::exercises::EXERCISES`]), as the widget's menu lists
/// them: each number and what it asks.
pub const EXERCISES: [Choice; 6] = [
    Choice::new(
        "1",
        "1 · tokens, speedup, operations",
        "1 · token 数、加速比、运算量",
    ),
    Choice::new(
        "3",
        "3 · the greedy rule under sampling",
        "3 · 随机采样下的贪心规则",
    ),
    Choice::new(
        "4",
        "4 · how many tokens are free",
        "4 · 多少个 token 是免费的",
    ),
    Choice::new(
        "5",
        "5 · merge and lay out a token tree",
        "5 · 合并并排列令牌树",
    ),
    Choice::new("6", "6 · naive sampling vs MSS", "6 · 朴素采样 vs MSS"),
    Choice::new("7", "7 · a counterexample", "7 · 一个反例"),
];
/// Where the speculation widget takes c from: the device's own, or the page's slider.
pub const CHOOSE_COST: [Choice; 2] = [
    Choice::new("device", "the device’s own", "用设备自己的"),
    Choice::new("set", "set by hand", "手动设定"),
];

/// The analytic widgets' menus: the roofline's GPUs, targets, drafts, deployments and where its
/// weights sit; the exactness lab's runs and windows; the exercises; the token tree's modes; and where the
/// speculation widget takes its c from.
pub fn lecture() -> Menus {
    let model = |&name: &&'static str| {
        let label = crate::roofline::model(name).map_or(name, |m| m.label);
        Choice::new(name, label, label)
    };
    let gpu = |g: &crate::roofline::Gpu| Choice::new(g.name, g.label, g.label);
    Menus(vec![
        (
            "roofline.gpu",
            Menu::Named(crate::roofline::GPUS.iter().map(gpu).collect()),
        ),
        (
            "roofline.target",
            Menu::Named(ROOFLINE_TARGETS.iter().map(model).collect()),
        ),
        (
            "roofline.draft",
            Menu::Named(ROOFLINE_DRAFTS.iter().map(model).collect()),
        ),
        ("roofline.tp", Menu::Listed(&ROOFLINE_TP)),
        ("roofline.pp", Menu::Numbers(&ROOFLINE_PP)),
        ("roofline.micro", Menu::Numbers(&ROOFLINE_MICRO_BATCHES)),
        ("roofline.weights", Menu::Listed(&ROOFLINE_WEIGHTS)),
        ("exactness.runs", Menu::Numbers(&EXACTNESS_RUNS)),
        ("exactness.window", Menu::Listed(&EXACTNESS_WINDOW)),
        ("exercises.exercise", Menu::Listed(&EXERCISES)),
        (
            "tree.mode",
            menu(&tree::TreeMode::ALL, tree::TreeMode::label),
        ),
        ("choose.cost", Menu::Listed(&CHOOSE_COST)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::{exactness, exercises, roofline};

    #[test]
    fn every_menu_is_named_once() {
        let mut names: Vec<&str> = lecture().into_iter().map(|(n, _)| n).collect();
        let all = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all);
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        let got: Vec<String> = [0, 999, 1_000, 20_000, 100_000, 1_234_567]
            .map(grouped)
            .into();
        assert_eq!(got, ["0", "999", "1,000", "20,000", "100,000", "1,234,567"]);
    }

    #[test]
    fn every_menu_has_choices_each_named_once_and_labelled_in_both_languages() {
        for (name, m) in lecture() {
            let mut names = m.names();
            assert!(!names.is_empty(), "{name}");
            names.sort();
            names.dedup();
            assert_eq!(names.len(), m.names().len(), "{name}: a name twice");
            for (en, zh) in m.labels() {
                assert!(!en.is_empty() && !zh.is_empty(), "{name}: {en:?} {zh:?}");
            }
            // The page reads each as `{name, en, zh}`.
            let json = serde_json::to_value(&m).unwrap();
            for (i, (n, (en, zh))) in m.names().iter().zip(m.labels()).enumerate() {
                assert_eq!(json[i]["name"], n.as_str(), "{name}");
                assert_eq!(json[i]["en"], en.as_str(), "{name}");
                assert_eq!(json[i]["zh"], zh.as_str(), "{name}");
            }
        }
    }

    #[test]
    fn the_roofline_takes_every_choice_its_menus_offer() {
        let menus = lecture();
        let names = |m: &str| menus[m].names();
        let number = |n: &String| n.parse::<u32>().unwrap();
        let base = roofline::RooflineParams::default();
        let runs = |p: &roofline::RooflineParams| {
            let at = format!(
                "{} {} {} t{} p{} m{}",
                p.gpu, p.target, p.draft, p.tp, p.pp, p.micro_batches
            );
            roofline::roofline_view(p).unwrap_or_else(|e| panic!("{at}: {e}"));
        };
        for gpu in names("roofline.gpu") {
            runs(&roofline::RooflineParams {
                gpu,
                ..base.clone()
            });
        }
        for draft in names("roofline.draft") {
            runs(&roofline::RooflineParams {
                draft,
                ..base.clone()
            });
        }
        // Every target the page offers, on every deployment it offers (their heads and layers
        // divide each), with its weights on the GPUs and offloaded.
        for target in names("roofline.target") {
            for tp in names("roofline.tp").iter().map(number) {
                for offload in [false, true] {
                    let target = target.clone();
                    runs(&roofline::RooflineParams {
                        target,
                        tp,
                        offload,
                        ..base.clone()
                    });
                }
            }
            for pp in names("roofline.pp").iter().map(number) {
                for micro_batches in names("roofline.micro").iter().map(number) {
                    let target = target.clone();
                    runs(&roofline::RooflineParams {
                        target,
                        pp,
                        micro_batches,
                        ..base.clone()
                    });
                }
            }
        }
    }

    #[test]
    fn the_analytic_widgets_defaults_are_choices_their_menus_offer() {
        let menus = lecture();
        let has = |m: &str, v: String| assert!(menus[m].names().contains(&v), "{m}: {v}");
        let r = roofline::RooflineParams::default();
        has("roofline.gpu", r.gpu);
        has("roofline.target", r.target);
        has("roofline.draft", r.draft);
        has("roofline.tp", r.tp.to_string());
        has("roofline.pp", r.pp.to_string());
        has("roofline.micro", r.micro_batches.to_string());
        has(
            "tree.mode",
            tree::TreeParams::default().mode.name().to_string(),
        );
        has(
            "exactness.runs",
            exactness::ExactnessParams::default().runs.to_string(),
        );
    }

    #[test]
    fn the_exactness_lab_takes_every_run_count_and_window_offered() {
        for runs in EXACTNESS_RUNS {
            exactness::RUNS.check(f64::from(runs)).unwrap();
        }
        // The window: auto, then every length of its range, in order.
        let w = exactness::WINDOW;
        let lengths = (w.min as u32..=w.max as u32).map(|n| n.to_string());
        let expected: Vec<String> = std::iter::once("auto".to_string()).chain(lengths).collect();
        assert_eq!(lecture()["exactness.window"].names(), expected);
    }

    #[test]
    fn every_exercise_offered_builds_and_its_title_is_its_own() {
        let menus = lecture();
        for c in EXERCISES {
            let n: u32 = c.name.parse().unwrap();
            let p = exercises::ExerciseParams {
                exercise: n,
                ..Default::default()
            };
            exercises::exercise_view(&p).unwrap();
            assert!(c.en.starts_with(&format!("{n} · ")), "{c:?}");
            assert!(c.zh.starts_with(&format!("{n} · ")), "{c:?}");
        }
        assert_eq!(
            menus["exercises.exercise"].names(),
            exercises::EXERCISES.map(|n| n.to_string())
        );
    }
}

//! The one error type of the core. Every variant names the offending value, so the CLI can print
//! it on one line and the page can show it beside the control that caused it, in the page's
//! language ([`Error::message`]; the CLI prints English). Beside it: [`Text`] (a message in both
//! languages), [`Range`] (a typed value's bounds, from which its message is written) and
//! [`Named`] with `choices!` (a choice declared once: its values, names and aliases).

mod named;
mod quote;

use crate::i18n::Lang;
pub use crate::{choices, named};
pub use named::{deserialize, Named};
pub use quote::{invisible_char, quoted_zh, shown, QUOTED_MAX};
#[doc(hidden)]
pub use serde as __serde;
use std::fmt;

/// A text in the page's two languages. Built from a plain string (a library's own message, a
/// file name) it reads the same in both.
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    pub en: String,
    pub zh: String,
}

impl Text {
    pub fn new(en: impl Into<String>, zh: impl Into<String>) -> Text {
        Text {
            en: en.into(),
            zh: zh.into(),
        }
    }

    pub fn get(&self, lang: Lang) -> &str {
        lang.pick(&self.en, &self.zh)
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text {
            zh: s.clone(),
            en: s,
        }
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text::from(s.to_string())
    }
}

/// A rejected input. The core validates at its boundary and cannot fail past it.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A number outside its allowed range: `name`, the value given, and the range in words.
    OutOfRange {
        name: &'static str,
        value: f64,
        allowed: Text,
    },
    /// A value that does not parse: what was being parsed, the text, and why.
    Parse {
        what: &'static str,
        text: String,
        why: Text,
    },
    /// A name that is not one of the known presets or variants. `known` lists them: names,
    /// which read the same in both languages, or a description in each (LikesWorld's words).
    Unknown {
        what: &'static str,
        name: String,
        known: Text,
    },
    /// A device or resource this machine or browser does not offer (no GPU adapter, say).
    Unavailable { what: &'static str, why: Text },
    /// A token tree over the node budget.
    TooLarge {
        what: Text,
        nodes: u64,
        budget: usize,
    },
}

impl Error {
    /// The message in `lang`: the value named as given, the frame and the reason translated.
    pub fn message(&self, lang: Lang) -> String {
        match (self, lang) {
            (
                Error::OutOfRange {
                    name,
                    value,
                    allowed,
                },
                Lang::En,
            ) => {
                format!(
                    "{name} = {} is out of range: {}",
                    number(*value),
                    allowed.en
                )
            }
            (
                Error::OutOfRange {
                    name,
                    value,
                    allowed,
                },
                Lang::Zh,
            ) => {
                format!(
                    "{} = {} 超出范围：{}",
                    range_name_zh(name),
                    number(*value),
                    allowed.zh
                )
            }
            (Error::Parse { what, text, why }, Lang::En) => {
                format!("bad {what} {:?}: {}", shown(text), why.en)
            }
            (Error::Parse { what, text, why }, Lang::Zh) => {
                format!("无法读取{}{}：{}", noun_zh(what), quoted_zh(text), why.zh)
            }
            (Error::Unknown { what, name, known }, Lang::En) => {
                format!("unknown {what} {:?} (known: {})", shown(name), known.en)
            }
            (Error::Unknown { what, name, known }, Lang::Zh) => {
                format!(
                    "未知的{}{}（可选：{}）",
                    noun_zh(what),
                    quoted_zh(name),
                    known.zh
                )
            }
            (Error::Unavailable { what, why }, Lang::En) => {
                format!("{what} unavailable: {}", why.en)
            }
            (Error::Unavailable { what, why }, Lang::Zh) => {
                format!("{}不可用：{}", noun_zh(what), why.zh)
            }
            (
                Error::TooLarge {
                    what,
                    nodes,
                    budget,
                },
                Lang::En,
            ) => {
                // A saturated count (a hostile width of twenty digits) is a lower bound.
                let at_least = if *nodes == u64::MAX { "at least " } else { "" };
                format!(
                    "{} has {at_least}{nodes} nodes, over the budget of {budget}",
                    what.en
                )
            }
            (
                Error::TooLarge {
                    what,
                    nodes,
                    budget,
                },
                Lang::Zh,
            ) => {
                let at_least = if *nodes == u64::MAX { "至少" } else { "" };
                format!(
                    "{} 有{at_least} {nodes} 个节点，超出 {budget} 个节点的预算",
                    what.zh
                )
            }
        }
    }
}

/// A rejected number as a message writes it: in full up to 20 digits (a count typed whole, such
/// as 18446744073709551615, reads as typed), in scientific notation beyond or below a millionth
/// (1e308 is not written out in 309 digits).
fn number(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-6..1e20).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// What a value is, in Chinese: every `what` the core names (a test reads the sources to check
/// that each has one).
fn noun_zh(what: &str) -> &str {
    match what {
        "acceptance vector" => "接受向量",
        "answers" => "答案",
        "batch" => "批大小",
        "budget" => "节点预算",
        "batch list" => "批大小列表",
        "backend" => "后端",
        "children sampler" => "子节点采样方式",
        "distribution" => "分布",
        "device" => "设备",
        "draft" => "草稿模型",
        "drafter" => "起草器",
        "drafter for the budget sweep" => "预算扫描的起草器",
        "drafting" => "起草方式",
        "draft file" => "草稿文件",
        "draft shape" => "草稿形状",
        "drafts" => "草稿分布",
        "exercise" => "练习",
        "experiment" => "实验",
        "flex backend" => "flex 后端",
        "given tokens" => "给定的 token",
        "GPU" => "GPU",
        "hidden-state draft" => "读隐藏状态的草稿",
        "γ list" => "γ 列表",
        "init" => "初始化方式",
        "language" => "语言",
        "LikesWorld target" => "LikesWorld 目标",
        "LikesWorld word" => "LikesWorld 词",
        "mode" => "模式",
        "offloading" => "权重卸载",
        "model" => "模型",
        "model weights" => "模型权重",
        "ndarray backend" => "ndarray 后端",
        "parallelism" => "并行方式",
        "paths" => "路径",
        "pool sizes" => "池大小",
        "pool verification" => "池的验证方式",
        "stale cache" => "未回滚的缓存",
        "step-through" => "逐步查看方式",
        "stochastic verification" => "随机验证方式",
        "teacher" => "教师信号",
        "times" => "调用时间",
        "token kind" => "token 类别",
        "tensor read-back" => "张量回读",
        "trained draft" => "训练的草稿",
        "training" => "训练",
        "tree" => "树",
        "tree config" => "树配置",
        "tree mode" => "树模式",
        "variant" => "变体",
        "bug" => "缺陷",
        "verification" => "验证方式",
        "weights" => "权重",
        "weights file" => "权重文件",
        "WebGPU/wgpu device" => "WebGPU/wgpu 设备",
        "workload" => "工作负载",
        other => other,
    }
}

/// A range's name in a Chinese message: its Chinese name before the key the URL and the CLI use
/// (`批大小 batch`); the Chinese name alone where the name is an English phrase, not a key
/// (`序列长度`); the name alone where it is a symbol (`gamma`, `tp`) or has none.
fn range_name_zh(name: &str) -> String {
    let zh = match name {
        "acceptance" => "接受概率",
        "acceptance entries" => "接受向量的项数",
        "budget" => "预算",
        "context" => "上下文长度",
        "context + speculation length" => "上下文加推测的长度",
        "corpus" => "语料大小",
        "depth" | "tree depth" => "树深度",
        "draft-cost" => "草稿开销",
        "heads" => "头数",
        "layers" => "层数",
        "lookups" => "查找次数",
        "max-tokens" => "最多 token 数",
        "micro_batches" => "微批数",
        "min-ngram" => "最短 n-gram",
        "ngram" => "n-gram 长度",
        "number of k" => "k 的个数",
        "#batches" => "批大小的个数",
        "#γ" => "γ 的个数",
        "pool" => "池大小",
        "prompts" => "提示数",
        "repeats" => "重复次数",
        "request" => "请求序号",
        "requests" => "请求数",
        "rollout" => "展开步数",
        "runs" => "运行次数",
        "sequence length" => "序列长度",
        "sharpness" => "锐度",
        "steps" => "训练步数",
        "target width" => "目标宽度",
        "number of times" => "调用时间的个数",
        "temperature" => "温度",
        "warmup" => "预热次数",
        "window" => "窗口",
        "worlds" => "世界数",
        "draft_noise" => "草稿噪声",
        "overhead_ms" => "固定开销",
        other => noun_zh(other),
    };
    if zh == name || name.contains(' ') {
        zh.to_string()
    } else {
        format!("{zh} {name}")
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(Lang::En))
    }
}

impl std::error::Error for Error {}

/// A range a user can type, declared once where the value is used and read by every boundary
/// that takes it (a CLI option, a wasm export's parameter, the page's control through the
/// `presets` export). Its error message is written from its bounds, so moving a bound here moves
/// the check, the message and the page's control together.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Range {
    pub name: &'static str,
    pub min: f64,
    pub max: f64,
    /// How the message writes the value (`γ` for gamma); its name unless set.
    #[serde(skip)]
    pub symbol: &'static str,
    /// What the message adds after the bounds (a unit, a note), in English and in Chinese;
    /// nothing unless set.
    #[serde(skip)]
    pub after: (&'static str, &'static str),
}

impl Range {
    pub const fn new(name: &'static str, min: f64, max: f64) -> Range {
        Range {
            name,
            min,
            max,
            symbol: name,
            after: ("", ""),
        }
    }

    /// The range with its value written as `symbol` in the message (`1 ≤ γ ≤ 16`).
    pub const fn shown_as(self, symbol: &'static str) -> Range {
        Range { symbol, ..self }
    }

    /// The range with `en` after its bounds in an English message (`1 ≤ budget ≤ 64 nodes`),
    /// `zh` in a Chinese one (`1 ≤ budget ≤ 64 个节点`).
    pub const fn after(self, en: &'static str, zh: &'static str) -> Range {
        Range {
            after: (en, zh),
            ..self
        }
    }

    /// The range in English words, from its bounds: `1 ≤ γ ≤ 16`.
    pub fn allowed(&self) -> String {
        self.allowed_in(Lang::En)
    }

    /// The range in `lang`'s words.
    pub fn allowed_in(&self, lang: Lang) -> String {
        let (lo, hi, symbol) = (self.min, self.max, self.symbol);
        match lang.pick(self.after.0, self.after.1) {
            "" => format!("{lo} ≤ {symbol} ≤ {hi}"),
            // No space before a full-width bracket.
            after if after.starts_with('（') => format!("{lo} ≤ {symbol} ≤ {hi}{after}"),
            after => format!("{lo} ≤ {symbol} ≤ {hi} {after}"),
        }
    }

    /// The range in both languages' words.
    pub fn allowed_text(&self) -> Text {
        Text::new(self.allowed_in(Lang::En), self.allowed_in(Lang::Zh))
    }

    /// `value` if it lies in the range, else the error that names it.
    pub fn check(&self, value: f64) -> Result<f64, Error> {
        if value.is_finite() && value >= self.min && value <= self.max {
            Ok(value)
        } else {
            Err(Error::OutOfRange {
                name: self.name,
                value,
                allowed: self.allowed_text(),
            })
        }
    }
}

named!(Lang, "language");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::parse_config;

    #[test]
    fn huge_and_tiny_numbers_are_written_short() {
        let r = Range::new("c", 0.0, 1.0);
        assert_eq!(
            r.check(1e308).unwrap_err().message(Lang::En),
            "c = 1e308 is out of range: 0 ≤ c ≤ 1"
        );
        assert!(r
            .check(-2e-9)
            .unwrap_err()
            .message(Lang::Zh)
            .contains("= -2e-9 超出范围"));
        assert!(r
            .check(1.5)
            .unwrap_err()
            .message(Lang::En)
            .starts_with("c = 1.5 is"));
        assert!(r
            .check(12345678.0)
            .unwrap_err()
            .message(Lang::En)
            .starts_with("c = 12345678 is"));
    }

    /// Every value an error names (each `what` literal in the core's sources) has a Chinese
    /// name, so an error raised on the Chinese page reads in Chinese (names that are symbols,
    /// such as GPU, stay as they are).
    #[test]
    fn every_named_value_has_a_chinese_name() {
        fn sources(dir: &std::path::Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).expect("src is readable") {
                let path = entry.expect("an entry").path();
                if path.is_dir() {
                    sources(&path, out);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    out.push(std::fs::read_to_string(&path).expect("a source file"));
                }
            }
        }
        // This crate's sources and those of `specdec` beside it (crate/src: the models and the
        // experiments name their values with this module's errors too).
        let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        sources(&here.join("src"), &mut files);
        let mine = files.len();
        sources(&here.join("../src"), &mut files);
        assert!(files.len() > mine + 50, "crate/src was read too");
        let mut named = 0;
        for file in &files {
            let literals = file
                .split("what: \"")
                .skip(1)
                .chain(file.split("WHAT: &'static str = \"").skip(1))
                .chain(
                    file.split("named!(")
                        .skip(1)
                        .filter_map(|p| p.split(')').next()?.split_once(", \"").map(|x| x.1)),
                )
                // `choices! { … pub enum Draft("draft") { … } }`
                .chain(file.split("choices! {").skip(1).filter_map(|p| {
                    let head = p.split('{').next()?.split_once(" enum ")?.1;
                    head.split_once("(\"").map(|x| x.1)
                }));
            for part in literals {
                let what = &part[..part.find('"').expect("a closed string")];
                named += 1;
                assert!(
                    noun_zh(what) != what || what == "GPU",
                    "no Chinese name for {what:?} (error.rs, noun_zh)"
                );
            }
        }
        assert!(
            named >= 30,
            "only {named} named values found: is the scan broken?"
        );
    }

    #[test]
    fn messages_follow_the_language() {
        let e = parse_config("<2,0,1>", 64).unwrap_err();
        assert_eq!(
            e.message(Lang::En),
            "bad tree config \"<2,0,1>\": level 2 has width 0; every level needs at least one child"
        );
        assert_eq!(e.to_string(), e.message(Lang::En));
        assert_eq!(
            e.message(Lang::Zh),
            "无法读取树配置“<2,0,1>”：第 2 层宽度为 0；每层至少需要一个子节点"
        );
        let big = parse_config("<9,9,9,9>", 64).unwrap_err().message(Lang::Zh);
        assert_eq!(big, "树配置 <9,9,9,9> 有 7380 个节点，超出 64 个节点的预算");
        let range = Range::new("gamma", 1.0, 16.0)
            .shown_as("γ")
            .check(0.0)
            .unwrap_err();
        assert_eq!(range.message(Lang::Zh), "gamma = 0 超出范围：1 ≤ γ ≤ 16");
        // A range's name in Chinese before its key, its unit in Chinese.
        let budget = Range::new("budget", 1.0, 64.0).after("nodes", "个节点");
        let e = budget.check(65.0).unwrap_err();
        assert_eq!(
            e.message(Lang::Zh),
            "预算 budget = 65 超出范围：1 ≤ budget ≤ 64 个节点"
        );
        let phrase = Range::new("sequence length", 2.0, 50.0)
            .check(1.0)
            .unwrap_err();
        assert_eq!(
            phrase.message(Lang::Zh),
            "序列长度 = 1 超出范围：2 ≤ sequence length ≤ 50"
        );
        assert_eq!(
            e.message(Lang::En),
            "budget = 65 is out of range: 1 ≤ budget ≤ 64 nodes"
        );
        let batch = Range::new("batch", 1.0, 64.0).after("(a note)", "（注）");
        let e = batch.check(-1.0).unwrap_err().message(Lang::Zh);
        assert_eq!(e, "批大小 batch = -1 超出范围：1 ≤ batch ≤ 64（注）");
        let unknown = Lang::parse("fr").unwrap_err().message(Lang::Zh);
        assert_eq!(unknown, "未知的语言“fr”（可选：en, zh）");
        // A library's own words read the same in both languages.
        let raw = Error::Unavailable {
            what: "tensor read-back",
            why: "BufferAsyncError".into(),
        };
        assert_eq!(raw.message(Lang::Zh), "张量回读不可用：BufferAsyncError");
    }

    /// Invisible characters are named where they are, in both languages; whitespace and visible
    /// characters are not.
    /// However long the text a person pasted, a message quotes a few dozen characters of it, in
    /// either language, whichever way it was rejected.
    #[test]
    fn every_message_quotes_a_few_dozen_characters_at_most() {
        let long = "x".repeat(10_000);
        let errors = [
            parse_config(&long, 64).unwrap_err(),
            parse_config(&format!("<{long}>"), 64).unwrap_err(),
            parse_config(&format!("<2,{long}"), 64).unwrap_err(),
            Lang::parse(&long).unwrap_err(),
            Error::Parse {
                what: "tree",
                text: long.clone(),
                why: "why".into(),
            },
        ];
        for e in errors {
            for l in [Lang::En, Lang::Zh] {
                let m = e.message(l);
                let xs = m.chars().filter(|&c| c == 'x').count();
                assert!(xs < QUOTED_MAX * 2, "{xs} x's quoted: {m}");
                assert!(m.chars().count() < 200 && m.contains('…'), "{m}");
            }
        }
        assert_eq!(shown(&long).chars().count(), QUOTED_MAX);
        assert_eq!(shown(&"y".repeat(QUOTED_MAX)), "y".repeat(QUOTED_MAX));
    }
}

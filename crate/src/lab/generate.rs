//! One generation, or many at once, of a LikesWorld prompt with the three models: the engine's
//! [`generate`] on the models' caches ([`super::lm`]), the target's own greedy reference that
//! greedy runs must equal, a seed per run, and a method in the lecture's words. Every experiment
//! decodes through these.

use super::lm::{Batch, Cached};
use super::params::Draft;
use crate::clock::{Clock, Progress};
use crate::decode::batch::{generate_all, Job};
use crate::decode::chance::Seeded;
use crate::decode::engine::{generate, ChainRule, Config, Method, TreeRule};
use crate::decode::stats::Generation;
use crate::decode::Shape;
use crate::error::Error;
use crate::i18n::{zh_join, Lang};
use crate::likesworld::{self, EOS};
use crate::model::{ModelKind, Models, Whose};

/// A seed per (run, prompt, repeat), so that runs are independent and replayable.
pub fn derive_seed(seed: u64, i: usize, r: usize) -> u64 {
    let mut z = seed ^ ((i as u64) << 20) ^ (r as u64) ^ 0x9E37_79B9_7F4A_7C15;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One generation with the three models of `models` (the engine's drafts: [`Draft::index`]).
pub async fn run(
    models: &Models,
    method: Method,
    temperature: f64,
    prompt: &[u32],
    seed: u64,
    trace: bool,
    clock: Clock<'_>,
) -> Result<Generation, Error> {
    let (d, dd) = (&models.device, &models.draft_device);
    let mut target = Cached::new(&models.target, d, temperature);
    let mut drafts = [
        Cached::new(&models.draft_a, dd, temperature),
        Cached::new(&models.draft_b, dd, temperature),
    ];
    generate(
        &mut target,
        &mut drafts,
        prompt,
        &config(method, trace),
        &mut Seeded::new(seed),
        clock,
    )
    .await
}

/// Sequences decoded at once in a batched run (the target's cache for 256 rows of 64 slots is
/// 4 MB).
pub const BATCH_ROWS: usize = 1024;

/// Forgotten cache slots a batched run tolerates before compacting the cache.
const SLACK: usize = 16;

/// One generation per (prompt, seed) with `method`, all at once, every model call batched across
/// them (see [`crate::decode::batch`]): what [`run`] does for each, in far fewer model calls.
pub async fn run_all(
    models: &Models,
    method: Method,
    temperature: f64,
    jobs: Vec<(Vec<u32>, u64)>,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<Vec<Generation>, Error> {
    let batch = |kind| Batch::new(models.get(kind), models.device_of(kind), temperature, SLACK);
    let jobs = jobs
        .into_iter()
        .map(|(prompt, seed)| Job {
            prompt,
            chance: Seeded::new(seed),
        })
        .collect();
    let models = ModelKind::ALL.map(batch).into();
    let config = config(method, false);
    generate_all(models, jobs, &config, BATCH_ROWS, clock, progress).await
}

/// How the experiments decode a LikesWorld prompt with `method`: up to the longest world, ending
/// at EOS.
fn config(method: Method, trace: bool) -> Config {
    Config {
        method,
        max_len: likesworld::MAX_LEN,
        eos: Some(EOS),
        trace,
    }
}

/// The target's own greedy output for each prompt (the reference greedy runs must equal).
pub async fn target_greedy(
    models: &Models,
    prompts: &[Vec<u32>],
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<Vec<Generation>, Error> {
    let jobs = prompts.iter().map(|p| (p.clone(), 0)).collect();
    let m = Method::Target { greedy: true };
    run_all(models, m, 1.0, jobs, clock, progress).await
}

/// A method in the lecture's words, for reports, in `lang` (the page shows it in its language;
/// the CLI prints English), its draft named as `whose` drafts run ([`Draft::called`]).
pub fn describe(method: &Method, whose: Whose, lang: Lang) -> String {
    let draft = |d: &usize| Draft::from_index(*d).called(whose, lang);
    let l = lang;
    match method {
        Method::Target { greedy } => {
            let how = match greedy {
                true => l.pick("greedy", "贪心"),
                false => l.pick("sampling", "采样"),
            };
            l.pick(
                format!("target alone ({how})"),
                format!("目标模型单独（{how}）"),
            )
        }
        Method::Chain {
            draft: d,
            gamma,
            rule,
        } => {
            let (d, how) = match rule {
                ChainRule::Greedy => (draft(d), l.pick("greedy".into(), "贪心".into())),
                ChainRule::Sample(v) => (
                    draft(d),
                    l.pick(
                        format!("sampling ({})", v.name()),
                        format!("采样（{}）", v.label(l)),
                    ),
                ),
            };
            l.pick(
                format!("{d} chain γ {gamma}, {how}"),
                format!("{} γ {gamma}，{how}", zh_join(d, "链")),
            )
        }
        Method::Expand {
            draft: d,
            shape,
            children,
            rule,
        } => {
            let (d, c) = (draft(d), children.name());
            let how = match rule {
                TreeRule::Greedy => l.pick("greedy (top-k)".into(), "贪心（top-k）".into()),
                TreeRule::Mss => l.pick(
                    format!("MSS ({c} children)"),
                    format!("MSS（子节点：{}）", children.label(l)),
                ),
                TreeRule::Naive => l.pick(
                    format!("naive ({c} children)"),
                    format!("朴素采样（子节点：{}）", children.label(l)),
                ),
            };
            match shape {
                Shape::Widths(widths) => {
                    let w: Vec<String> = widths.iter().map(usize::to_string).collect();
                    let w = w.join(",");
                    l.pick(
                        format!("{d} tree ⟨{w}⟩, {how}"),
                        format!("{} ⟨{w}⟩，{how}", zh_join(d, "树")),
                    )
                }
                Shape::Levels(_) => {
                    let n = shape.nodes();
                    l.pick(
                        format!("{d} tree of {n} nodes by rank path, {how}"),
                        format!(
                            "{} 按名次路径给出的树（{n} 个节点），{how}",
                            zh_join(d, "的")
                        ),
                    )
                }
            }
        }
        Method::Merge { gamma, rule } => {
            let how = match rule {
                TreeRule::Greedy => "贪心",
                TreeRule::Naive => "朴素采样",
                TreeRule::Mss => "MSS",
            };
            match whose {
                Whose::Shipped => l.pick(
                    format!("merge of A and B, γ {gamma}, {rule:?}"),
                    format!("A 与 B 合并，γ {gamma}，{how}"),
                ),
                Whose::Yours => l.pick(
                    format!("merge of two chains of your draft, γ {gamma}, {rule:?}"),
                    format!("你的草稿的两条链合并，γ {gamma}，{how}"),
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::multi::Children;
    use crate::sampling::speculative::Variant;

    #[test]
    fn a_method_is_described_in_the_pages_language() {
        let chain = Method::Chain {
            draft: 1,
            gamma: 1,
            rule: ChainRule::Greedy,
        };
        let shipped = Whose::Shipped;
        assert_eq!(
            describe(&chain, shipped, Lang::En),
            "draft B chain γ 1, greedy"
        );
        assert_eq!(describe(&chain, shipped, Lang::Zh), "草稿 B 链 γ 1，贪心");
        // The student's draft, in both places, is named as theirs: no space between Chinese words.
        assert_eq!(
            describe(&chain, Whose::Yours, Lang::En),
            "your draft chain γ 1, greedy"
        );
        assert_eq!(
            describe(&chain, Whose::Yours, Lang::Zh),
            "你的草稿链 γ 1，贪心"
        );
        let tree = Method::Expand {
            draft: 1,
            shape: Shape::Widths(vec![2, 1]),
            children: Children::Iid,
            rule: TreeRule::Mss,
        };
        assert_eq!(
            describe(&tree, shipped, Lang::Zh),
            "草稿 B 树 ⟨2,1⟩，MSS（子节点：独立同分布抽样）"
        );
        // A sampling rule by its Chinese name, as the exactness lab names it: its kebab-case id
        // ("greedy-rule") is the URL's, not the reader's.
        let rule = Method::Chain {
            draft: 0,
            gamma: 4,
            rule: ChainRule::Sample(Variant::GreedyRule.into()),
        };
        assert_eq!(
            describe(&rule, shipped, Lang::Zh),
            "草稿 A 链 γ 4，采样（贪心规则）"
        );
        assert_eq!(
            describe(&rule, shipped, Lang::En),
            "draft A chain γ 4, sampling (greedy-rule)"
        );
        // No English words left in any Chinese description ("MSS" and "top-k" are names, not
        // words), and no rule's id.
        let mut methods = vec![
            chain,
            tree,
            Method::Target { greedy: false },
            rule,
            Method::Merge {
                gamma: 3,
                rule: TreeRule::Naive,
            },
        ];
        methods.extend(Variant::ALL.map(|v| Method::Chain {
            draft: 0,
            gamma: 2,
            rule: ChainRule::Sample(v.into()),
        }));
        for (m, whose) in methods
            .iter()
            .flat_map(|m| [(m, shipped), (m, Whose::Yours)])
        {
            let zh = describe(m, whose, Lang::Zh);
            for word in [
                "draft", "chain", "tree", "greedy,", "sampling", "target", "merge",
            ] {
                assert!(!zh.contains(word), "{zh:?} contains {word:?}");
            }
            for v in Variant::ALL {
                assert!(!zh.contains(v.name()), "{zh:?} names {v:?} by its id");
            }
            // Where the student's draft runs, no report names a shipped draft.
            let en = describe(m, whose, Lang::En);
            if whose == Whose::Yours {
                for name in [" A", " B", "A ", "B "] {
                    assert!(!en.contains(name) && !zh.contains(name), "{en:?} / {zh:?}");
                }
            }
        }
    }
}

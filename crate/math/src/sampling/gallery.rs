//! A gallery of real bugs (lecture §6, second principle: losslessness comes from the verification
//! rule; a wrong rule or a broken premise silently changes the output). Each [`Bug`] re-creates one
//! fault reported in a public speculative-decoding runtime, named with its source, and says where
//! the fault sits: in the rejection sampler (only sampled decoding reaches it) or in the decoding
//! loop around it (greedy decoding too). `decode::gallery` runs them on the toy LM and puts every
//! test of the lecture to them.

use crate::i18n::Lang;

crate::error::choices! {
    /// One bug of the field, re-created.
    #[derive(Hash)]
    pub enum Bug("bug") {
        /// The residual max(0, p − q) passed through softmax instead of divided by its sum.
        SoftmaxResidual = "softmax-residual",
        /// The draft token taken as argmax q while the ratio and residual use the softmax q.
        ArgmaxDraft = "argmax-draft",
        /// The draft token drawn from top-k(q), the ratio and residual computed with the raw q.
        RawDraftQ = "raw-draft-q",
        /// The target's probabilities computed without the request's temperature, the draft's with it.
        UnwarpedTarget = "unwarped-target",
        /// A token kept when it equals an independent draw from p, or by the ratio test.
        SameTokenOr = "same-token-or",
        /// Each draft token checked against the target's next row (one position late).
        ShiftedRow = "shifted-row",
        /// After a rejection the replacement is dropped and the token drawn from the row after the
        /// rejected draft (which is conditioned on it).
        LateRejection = "late-rejection",
        /// The first draft of every call committed without a check.
        FirstDraftUnchecked = "first-draft-unchecked",
        /// The target's state not rolled back after a rejection: the rejected drafts stay in it.
        StaleCache = "stale-cache",
        /// A verification call of several rows computes the logits with another kernel (slightly
        /// different numbers than the one-row call of plain decoding).
        RowNumerics = "row-numerics",
    }
}

/// Where a fault sits, which decides what greedy decoding can see of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Place {
    /// Inside the rejection sampler: greedy decoding takes another path and never runs it.
    Sampler,
    /// In the decoding loop or the model call: greedy and sampled decoding both run it.
    Loop,
}

/// Where a bug was reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Source {
    pub project: &'static str,
    /// The thread: `PR #28508`, `issue #4190`.
    pub thread: &'static str,
    pub url: &'static str,
    /// The thread's title, verbatim.
    pub title: &'static str,
}

impl Bug {
    pub fn place(self) -> Place {
        match self {
            Bug::FirstDraftUnchecked | Bug::StaleCache | Bug::RowNumerics => Place::Loop,
            _ => Place::Sampler,
        }
    }

    /// The thread it was found in (the first, where several reported it).
    pub fn source(self) -> Source {
        let s = |project, thread, url, title| Source {
            project,
            thread,
            url,
            title,
        };
        match self {
            Bug::SoftmaxResidual => s(
                "huggingface/transformers",
                "PR #28508",
                "https://github.com/huggingface/transformers/pull/28508",
                "Fix `_speculative_sampling` implementation",
            ),
            Bug::ArgmaxDraft => s(
                "huggingface/transformers",
                "issue #32867",
                "https://github.com/huggingface/transformers/issues/32867",
                "Speculative sampling does not maintain probability distribution of main model",
            ),
            Bug::RawDraftQ => s(
                "huggingface/transformers",
                "issue #47932",
                "https://github.com/huggingface/transformers/issues/47932",
                "Speculative decoding: candidate generators return a `q` they did not sample from, breaking losslessness with `do_sample=True`",
            ),
            Bug::UnwarpedTarget => s(
                "vllm-project/vllm",
                "PR #10198",
                "https://github.com/vllm-project/vllm/pull/10198",
                "[Bugfix][SpecDecode] apply sampling parameters to target probabilities for consistency in rejection sampling.",
            ),
            Bug::SameTokenOr => s(
                "alibaba/rtp-llm",
                "PR #1295",
                "https://github.com/alibaba/rtp-llm/pull/1295",
                "fix: correct MTP speculative sampling semantics",
            ),
            Bug::ShiftedRow => s(
                "NVIDIA/TensorRT-LLM",
                "PR #15098",
                "https://github.com/NVIDIA/TensorRT-LLM/pull/15098",
                "[TRTLLM-13319][fix] fix output distribution correctness for Eagle3 dynamic-tree rejection sampling",
            ),
            Bug::LateRejection => s(
                "openvinotoolkit/openvino.genai",
                "issue #4190",
                "https://github.com/openvinotoolkit/openvino.genai/issues/4190",
                "Speculative decoding (`draft_model()`) + non-greedy sampling: crash and silent output corruption from a one-iteration-late rejection handler",
            ),
            Bug::FirstDraftUnchecked => s(
                "ohdearquant/lattice",
                "issue #243",
                "https://github.com/ohdearquant/lattice/issues/243",
                "fix(inference): n-gram speculative decoding is lossy — verify_draft commits draft[0] unverified (diverges from greedy)",
            ),
            Bug::StaleCache => s(
                "ml-explore/mlx-lm",
                "PR #1109",
                "https://github.com/ml-explore/mlx-lm/pull/1109",
                "Fix output corruption in speculative decoding",
            ),
            Bug::RowNumerics => s(
                "ggml-org/llama.cpp",
                "issue #25618",
                "https://github.com/ggml-org/llama.cpp/issues/25618",
                "Eval bug: Speculative decoding (draft-mtp / draft-dspark): greedy output diverges from vanilla on quantized targets",
            ),
        }
    }

    /// Other threads that report the same fault.
    pub fn also(self) -> &'static [&'static str] {
        match self {
            Bug::ArgmaxDraft => &[
                "huggingface/transformers PR #33534",
                "jaymody/speculative-sampling issue #3",
            ],
            Bug::UnwarpedTarget => &["vllm-project/vllm issue #9834"],
            Bug::StaleCache => &[
                "ml-explore/mlx-lm issue #1914",
                "ml-explore/mlx-lm issue #1423",
            ],
            Bug::RowNumerics => &[
                "huggingface/transformers issue #39421",
                "NVIDIA/TensorRT-LLM issue #2208",
            ],
            _ => &[],
        }
    }

    /// What the fault is, as re-created here (the toy's constants included).
    pub fn what(self, l: Lang) -> &'static str {
        match self {
            Bug::SoftmaxResidual => l.pick(
                "after a rejection, the token is drawn from softmax(max(0, p − q)) — a softmax of probabilities — instead of max(0, p − q) divided by its sum",
                "拒绝后从 softmax(max(0, p − q)) 采样——对概率再做一次 softmax——而不是把 max(0, p − q) 除以它的和",
            ),
            Bug::ArgmaxDraft => l.pick(
                "the draft proposes argmax q, but min(1, p/q) and the residual still use the softmax q (the draft never sampled from it)",
                "草稿直接取 argmax q，但 min(1, p/q) 和剩余分布仍然用 softmax 的 q（草稿根本没有从它采样）",
            ),
            Bug::RawDraftQ => l.pick(
                "the draft samples from top-2 of q (renormalised) but reports the raw q for the ratio and the residual",
                "草稿从 q 的前 2 名（重新归一）采样，却把原始的 q 交给比值和剩余分布",
            ),
            Bug::UnwarpedTarget => l.pick(
                "the request asks for temperature 0.5; the draft's q has it, the target's p used for the ratio, residual and bonus is computed at temperature 1",
                "请求的温度是 0.5；草稿的 q 用了它，而比值、剩余分布和奖励 token 用的目标 p 是按温度 1 算的",
            ),
            Bug::SameTokenOr => l.pick(
                "a draft token is kept if it equals an independent draw y ~ p, or else by u < p/q: kept with probability a + (1 − a)·p(x) instead of a = min(1, p/q)",
                "草稿 token 若等于另一个独立抽样 y ~ p 就接受，否则再用 u < p/q：接受概率是 a + (1 − a)·p(x) 而不是 a = min(1, p/q)",
            ),
            Bug::ShiftedRow => l.pick(
                "draft token i is checked against the target's row i + 1 (one position late; the thread does not say which rows were used, the shift by one is ours)",
                "第 i 个草稿 token 拿去和目标的第 i + 1 行比较（晚了一个位置；原帖没有说用错了哪几行，错一位是我们的假设）",
            ),
            Bug::LateRejection => l.pick(
                "on a rejection the replacement token is thrown away; the token is drawn from the target's row after the rejected draft, which is conditioned on it, and the rejected draft disappears",
                "拒绝时丢掉了替换 token；改从被拒绝草稿之后那一行采样——那一行是以被拒绝的 token 为条件的——被拒绝的 token 本身则消失了",
            ),
            Bug::FirstDraftUnchecked => l.pick(
                "the first draft token of every call is committed without comparing it with the target",
                "每次调用的第一个草稿 token 不经比较就直接提交",
            ),
            Bug::StaleCache => l.pick(
                "after a rejection the target's state is not rolled back: the rejected drafts stay in it, and the next call reads them as context",
                "拒绝后目标模型的状态没有回滚：被拒绝的草稿留在里面，下一次调用把它们当作上下文",
            ),
            Bug::RowNumerics => l.pick(
                "a call that verifies several rows runs another kernel: its logits differ from the one-row call's by up to 0.01 (the thread measured 0.0103). On a real model that flips near-ties and greedy output diverges; the toy has no two tokens that close, so here greedy identity cannot see it",
                "一次验证多行的调用走了另一个 kernel：它的 logits 和单行调用相差最多 0.01（原帖测得 0.0103）。在真实模型上这会翻转几乎相等的候选，贪心输出因此分叉；玩具模型里没有这么接近的两个 token，所以这里贪心逐字相同看不出它",
            ),
        }
    }

    /// A short name for a reader (a table's row).
    pub fn label(self, l: Lang) -> &'static str {
        l.pick(
            self.name(),
            match self {
                Bug::SoftmaxResidual => "剩余分布用了 softmax",
                Bug::ArgmaxDraft => "草稿取 argmax",
                Bug::RawDraftQ => "q 不是采样用的 q",
                Bug::UnwarpedTarget => "目标没用请求的温度",
                Bug::SameTokenOr => "“同一 token”或比值",
                Bug::ShiftedRow => "错一行的 p",
                Bug::LateRejection => "迟一步的拒绝处理",
                Bug::FirstDraftUnchecked => "第一个草稿不检查",
                Bug::StaleCache => "缓存没有回滚",
                Bug::RowNumerics => "行数改变数值",
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Named;

    #[test]
    fn every_bug_has_a_source_a_description_in_both_languages_and_a_parseable_name() {
        for b in Bug::ALL {
            assert_eq!(Bug::parse(b.name()).unwrap(), b);
            let s = b.source();
            assert!(s.url.starts_with("https://github.com/") && s.url.contains(s.project));
            let number = s.thread.rsplit('#').next().unwrap();
            assert!(s.url.ends_with(number), "{b:?}");
            assert!(!b.what(Lang::En).is_empty() && b.what(Lang::Zh) != b.what(Lang::En));
            assert_ne!(b.label(Lang::Zh), b.name());
        }
        let msg = Bug::parse("nope").unwrap_err().to_string();
        assert!(
            msg.contains("softmax-residual") && msg.contains("row-numerics"),
            "{msg}"
        );
    }
}

// A widget shown again in a later section of the course page (its data-prefix) keeps its controls
// and drawing but has a title, an introduction and presets of its own: §5's decoding widget
// answers §5's question — do drafts on the target's own features buy more tokens per target call,
// and does that pay on this device? — so it offers §5's runs, not §3's fifteen, and its report
// gives the measured wall-clock speedup beside τ and c.

/** Section prefix → widget name → what it shows instead of the widget's own. */
const SECTIONS = {
  s5: {
    decoding: {
      title: 'Drafts on the target’s own features: Medusa, EAGLE and EAGLE-2',
      title_zh: '读目标模型自身特征的草稿：Medusa、EAGLE 与 EAGLE-2',
      intro: 'Medusa’s heads and EAGLE’s one-layer draft read the target’s last hidden state, so no separate draft model runs over the context. '
        + 'A run decodes held-out prompts with one of them and says what it buys and what it costs: τ (tokens per target call), acceptance by depth, '
        + 'the drafting’s cost c, and the wall clock against the target alone on the same prompts — whether it pays on this device.',
      intro_zh: 'Medusa 的头和 EAGLE 的单层草稿读目标模型最后一层的隐藏状态，所以没有单独的草稿模型在上下文上运行。'
        + '一次运行用其中一种方法解码留出的提示词，给出它换来什么、花了什么：τ（每次目标调用的 token 数）、按深度的接受率、起草的开销 c，'
        + '以及在同样的提示词上与目标模型单独解码对比的墙钟时间——在这台设备上划不划算。',
      // Lecture §5.1–5.2, §5's question on a target of a real model's size, and §4.7's sampled
      // dynamic tree.
      presets: [
        { label: '§5.2 · EAGLE-2’s dynamic tree, 16 nodes', label_zh: '§5.2 · EAGLE-2 的动态树，16 个节点',
          values: { experiment: 'hidden', method: 'eagle-2', budget: '16', depth: 10, verify: 'greedy', prompts: '20' },
          note: 'a one-layer draft on the target’s own features, its tree grown where it is confident; drawn beside EAGLE’s static tree', note_zh: '读目标模型自身特征的单层草稿，树长在它有把握的地方；与 EAGLE 的静态树并排画出' },
        { label: '§5.1 · Medusa’s four heads', label_zh: '§5.1 · Medusa 的四个头',
          values: { experiment: 'hidden', method: 'medusa', budget: '16', heads: 4, verify: 'greedy', prompts: '20' },
          note: 'each head guesses without knowing the heads before it: its accuracy falls with the head', note_zh: '每个头猜的时候不知道前面的头选了什么：准确率随头的序号下降' },
        { label: '§5.2 · EAGLE’s static tree', label_zh: '§5.2 · EAGLE 的静态树',
          values: { experiment: 'hidden', method: 'eagle', budget: '16', depth: 10, verify: 'greedy', prompts: '20' },
          note: 'the same draft on a fixed tree: compare τ with EAGLE-2’s', note_zh: '同一个草稿，固定的树：与 EAGLE-2 的 τ 比较' },
        { label: '§5.2 · EAGLE-2 + training-time test', label_zh: '§5.2 · EAGLE-2 + 训练时测试',
          values: { experiment: 'hidden', method: 'eagle-2-ttt', budget: '16', depth: 10, verify: 'greedy', prompts: '20' },
          note: 'a draft trained on its own guesses, as it drafts', note_zh: '用自己的猜测训练的草稿，和起草时一样' },
        { label: '§5 · does it pay? EAGLE-2 on the ×16 target', label_zh: '§5 · 划算吗？×16 目标模型上的 EAGLE-2',
          values: { experiment: 'hidden', method: 'eagle-2', budget: '8', depth: 10, verify: 'greedy', prompts: '10', target_width: '16' },
          note: 'a target that reads 76 MB a step, as a real model does; 8 nodes, since on a CPU every verified node adds to the call', note_zh: '每步读 76 MB 的目标模型，和真实模型一样；8 个节点，因为在 CPU 上每多验证一个节点调用就更慢' },
        { label: '§4.7 · MSS on a sampled dynamic tree', label_zh: '§4.7 · 抽样动态树上的 MSS',
          values: { experiment: 'hidden', method: 'eagle-2', budget: '16', depth: 10, verify: 'mss', prompts: '50', seed: 1 },
          note: 'children drawn from the draft: the calibration test passes; pick “top-k children, MSS (biased)” to see it fail', note_zh: '孩子从草稿抽样：校准检验通过；选“top-k 孩子，MSS（有偏）”看它失败' },
      ],
    },
  },
};

/** `widget` as the course page shows it in the section of `prefix` (itself in any other). */
export function inSection(widget, prefix) {
  const own = widget && prefix ? SECTIONS[prefix]?.[widget.name] : null;
  return own ? { ...widget, ...own } : widget;
}

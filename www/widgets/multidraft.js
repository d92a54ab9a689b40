// Multi-draft verification (lecture §4.5; demos 04.4–04.5; exercise 6).
import { fmt, table } from '../html.js';
import { tr } from '../i18n.js';
import { coreRange, declare } from '../engine.js';

export default {
  name: 'multidraft',
  title: 'Several drafts, one position: naive sampling vs MSS',
  intro: 'Each draft model proposes one token for the same position. Naive sampling draws from the LLM and hopes to land on a '
    + 'candidate; multi-step speculative sampling (MSS) tries the candidates in turn, passing the residual norm(max(0, r − q_j)) on. '
    + 'Preloaded: the slide example (LLM uniform over 4 tokens, SSM 1 always t1, SSM 2 uniform and drew t2). Tokens are numbered '
    + 't1, t2, … as in the lecture: type the drawn ones as 1,2 (or t1,t2).',
  title_zh: '同一位置多个草稿：朴素采样 vs MSS',
  intro_zh: '每个草稿模型为同一位置提出一个 token。朴素采样从大模型采一个 token，碰上某个候选才算接受；多步推测采样（MSS）依次尝试各个候选，把剩余分布 norm(max(0, r − q_j)) 传下去。预置的是课上的例子（大模型在 4 个 token 上均匀，SSM 1 总是 t1，SSM 2 均匀并采到 t2）。token 和课上一样编号为 t1、t2……：采到的 token 写成 1,2（或 t1,t2）。',
  // Lecture §4.5: the slide example and exercise 6, its tokens numbered as the lecture numbers them
  // (t1 … t4; the drawn ones typed 1 … 4, as exercise 6's statement and the chart's axis name them).
  presets: [
    { label: 'The slide example', label_zh: '幻灯片上的例子', values: { p: '0.25,0.25,0.25,0.25', drafts: '1,0,0,0; 0.25,0.25,0.25,0.25', given: '1,2' } },
    { label: 'The slide example, averaged over SSM 2', label_zh: '幻灯片上的例子，对 SSM 2 取平均', values: { p: '0.25,0.25,0.25,0.25', drafts: '1,0,0,0; 0.25,0.25,0.25,0.25', given: '' }, note: 'naive 43.75%, MSS 81.25%', note_zh: '朴素 43.75%，MSS 81.25%' },
    { label: 'Exercise 6', label_zh: '练习 6', values: { p: '0.25,0.25,0.25,0.25', drafts: '0.5,0.5,0,0; 0.25,0.25,0.25,0.25', given: '2,3' }, note: 'naive 0.5, MSS 1.0', note_zh: '朴素 0.5，MSS 1.0' },
  ],
  controls: [
    { key: 'p', label: 'LLM p', label_zh: '大模型 p', type: 'text', value: '0.25,0.25,0.25,0.25' },
    { key: 'drafts', label: 'drafts q₁; q₂; …', label_zh: '草稿 q₁; q₂; …', type: 'text', value: '1,0,0,0; 0.25,0.25,0.25,0.25' },
    { key: 'given', label: 'drawn tokens, numbered from 1 (empty: average)', label_zh: '采到的 token，从 1 编号（空：取平均）', type: 'text', value: '1,2' },
    // k's range and default are the core's (views/multidraft.rs's K, MultiDraftParams' default). The
    // page stops one short of the core's bound, the toy's vocabulary: there the top k and the draws
    // without replacement both take every token.
    declare({ key: 'k', label: 'children k (toy LM)', label_zh: '孩子数 k（玩具模型）', type: 'range', step: 1 },
      { ...coreRange('multidraft', 'k'), max: (d) => d.multidraft.k.max - 1 }),
  ],
  render(s, ui) {
    const v = ui.call('multi_draft', { p: s.p, drafts: s.drafts, given: s.given, k: Number(s.k) });
    const pct = (x) => `${(100 * x).toFixed(2)}%`;
    const rows = [['', tr('naive', '朴素'), 'MSS']];
    if (v.given) rows.push([tr('given the drawn tokens', '给定采到的 token'), pct(v.given.naive.acceptance), pct(v.given.mss.acceptance)]);
    rows.push([tr('averaged over the drafts', '对草稿取平均'), pct(v.averaged.naive.acceptance), pct(v.averaged.mss.acceptance)]);
    const kids = [tr(['children of a node', 'MSS bias: mean TV', 'worst TV', 'MSS accepts', 'naive accepts'],
      ['节点的孩子', 'MSS 偏差：平均 TV', '最大 TV', 'MSS 接受率', '朴素接受率'])].concat(
      v.children.map((r) => [r.label, fmt(r.tv_mean), fmt(r.tv_max), pct(r.mss_acceptance), pct(r.naive_acceptance)]));
    return [
      table(rows, 'acceptance'),
      `<div class="plots">${v.svg}</div>`,
      tr(`<p class="numbers">On the toy LM, a node's k children drawn from the draft: i.i.d. and without replacement keep MSS exact;
        the deterministic top-k looks better and is biased.</p>`,
      '<p class="numbers">在玩具模型上，从草稿抽出一个节点的 k 个孩子：i.i.d. 与无放回抽样都让 MSS 保持精确；确定性的 top-k 看起来更好，却有偏。</p>') + table(kids, 'children'),
      `<div class="plots">${v.svg_children}</div>`,
    ];
  },
};

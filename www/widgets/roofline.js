// Roofline explorer (lecture §1.2, §2.5; demos 1, 4, 5).
import { fmt } from '../html.js';
import { tr } from '../i18n.js';
import { coreRange, declare } from '../engine.js';

const pow2 = (v) => 2 ** Number(v);

// The batch and context sliders pick powers of two (their values are the exponents) across the
// heat map's cells, its batches and contexts as the core lists them, within the core's bounds;
// the default is the exponent of RooflineParams' default.
const exponents = (name, axis) => ({
  min: (d) => Math.ceil(Math.log2(Math.max(d.roofline[axis][0], d.roofline[name].min))),
  max: (d) => Math.floor(Math.log2(Math.min(d.roofline[axis].at(-1), d.roofline[name].max))),
  value: (d) => Math.round(Math.log2(d.roofline.defaults[name])),
});

export default {
  name: 'roofline',
  title: 'Why verification is almost free: the roofline',
  intro: 'One decoding step in which each of B requests processes k tokens against a context of L. '
    + 'At batch 1 the step is memory-bound and k barely matters; at large batch the compute roof arrives early. '
    + 'The heat map shows the best γ (and speedup) per batch × context at the chosen α.',
  title_zh: '为什么验证几乎不要钱：屋顶线模型',
  intro_zh: 'B 个请求在一步解码里各处理 k 个 token，上下文长度为 L。批为 1 时这一步受访存限制，k 几乎不影响耗时；批大时很快碰到算力的屋顶。热力图给出在所选 α 下每个 批 × 上下文 的最优 γ（及加速比）。',
  // Lecture §1.2, §2.5 (demos 1, 4, 5) and exercise 4.
  presets: [
    { label: 'Demo 1 · OPT-13B, batch 32, context 512', label_zh: '演示 1 · OPT-13B，批大小 32，上下文 512', values: { gpu: 'a100-40gb', target: 'opt-13b', draft: 'opt-125m', batch: 5, context: 9, k: 4, overhead: 1.5 },
      note: 'k = 4: 26.90 ms, still memory-bound; k = 8 is compute-bound', note_zh: 'k = 4：26.90 ms，仍然访存受限；k = 8 已经算力受限' },
    { label: 'Demo 4 · overhead 0.2 ms: c ≈ 0.02', label_zh: '演示 4 · 固定开销 0.2 ms：c ≈ 0.02', values: { batch: 0, context: 9, overhead: 0.2 }, note: 'CUDA Graphs or a mega-kernel cut the fixed cost', note_zh: 'CUDA Graphs 或 mega-kernel 削减固定开销' },
    { label: 'Demo 5 · heat map at α = 0.8', label_zh: '演示 5 · α = 0.8 的热力图', values: { alpha: 0.8, overhead: 1.5 }, note: 'the best γ per batch × context', note_zh: '每个批大小 × 上下文的最优 γ' },
  ],
  controls: [
    { key: 'gpu', label: 'GPU', label_zh: 'GPU', type: 'select', value: 'a100-40gb', options: [
      ['a100-40gb', 'A100-40GB'], ['a100-80gb', 'A100-80GB'], ['h100-sxm', 'H100 SXM'], ['h200', 'H200'], ['rtx-4090', 'RTX 4090'], ['l4', 'L4']] },
    { key: 'target', label: 'target', label_zh: '目标模型', type: 'select', value: 'opt-13b', options: [
      ['opt-1.3b', 'OPT-1.3B'], ['opt-6.7b', 'OPT-6.7B'], ['opt-13b', 'OPT-13B'], ['opt-30b', 'OPT-30B']] },
    { key: 'draft', label: 'draft', label_zh: '草稿模型', type: 'select', value: 'opt-125m', options: [
      ['opt-125m', 'OPT-125M'], ['opt-350m', 'OPT-350M'], ['opt-1.3b', 'OPT-1.3B']] },
    // The sliders' ranges and defaults are the core's (`presets`: roofline.rs's and views/roofline.rs's
    // ranges, RooflineParams' defaults).
    declare({ key: 'batch', label: 'batch B = 2^', label_zh: '批大小 B = 2^', type: 'range', step: 1, format: (v) => `${v} → ${pow2(v)}` }, exponents('batch', 'heat_batches')),
    declare({ key: 'context', label: 'context L = 2^', label_zh: '上下文 L = 2^', type: 'range', step: 1, format: (v) => `${v} → ${pow2(v)}` }, exponents('context', 'heat_contexts')),
    // The page's k stops where the step chart's k axis ends (the core's K_AXIS); the core takes more.
    declare({ key: 'k', label: 'k tokens', label_zh: '每请求 token 数 k', type: 'range', step: 1 }, { ...coreRange('roofline', 'k'), max: (d) => Math.min(d.roofline.k_axis, d.roofline.k.max) }),
    // The page's overhead stops at 5 ms, past the lecture's 0.2–1.5 ms (a step's fixed cost); the core takes more.
    declare({ key: 'overhead', label: 'overhead (ms)', label_zh: '固定开销 (ms)', type: 'range', step: 0.1 }, { ...coreRange('roofline', 'overhead_ms'), max: (d) => Math.min(5, d.roofline.overhead_ms.max) }),
    declare({ key: 'alpha', label: 'α (heat map)', label_zh: 'α（热力图）', type: 'range', step: 0.01 }, coreRange('roofline', 'alpha')),
  ],
  render(s, ui) {
    const v = ui.call('roofline', {
      gpu: s.gpu, target: s.target, draft: s.draft, batch: pow2(s.batch), context: pow2(s.context),
      k: Number(s.k), overhead_ms: Number(s.overhead), alpha: Number(s.alpha),
    });
    const st = v.step;
    return [
      tr(`<p class="numbers"><b>${st.time_ms.toFixed(2)} ms</b> per step, <b>${st.bound}-bound</b>;
        intensity ${st.intensity.toFixed(1)} FLOP/B (knee ${v.knee.toFixed(1)});
        c = ${fmt(v.c)} for the draft; best γ here ${v.optimal.gamma} → ${v.optimal.speedup.toFixed(2)}×</p>`,
      `<p class="numbers">每步 <b>${st.time_ms.toFixed(2)} ms</b>，<b>${st.bound === 'memory' ? '访存受限' : '算力受限'}</b>；
        算术强度 ${st.intensity.toFixed(1)} FLOP/B（拐点 ${v.knee.toFixed(1)}）；
        草稿模型 c = ${fmt(v.c)}；此处最优 γ ${v.optimal.gamma} → ${v.optimal.speedup.toFixed(2)}×</p>`),
      `<div class="plots">${v.svg}</div>`,
      [v.svg_heat, v.svg_heat_marker],
    ];
  },
};

// Roofline explorer (lecture §1.2, §2.5; demos 1, 4, 5).
import { escapeHtml, fmt } from '../html.js';
import { tr } from '../i18n.js';
import { coreRange, declare, menuOptions } from '../engine.js';

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
    + 'The heat map shows the best γ (and speedup) per batch × context at the chosen α; a cell whose step could not run (the weights and KV cache exceed the GPUs’ memory) shows neither, where the lecture’s demo 5 follows the time model’s trend. '
    + 'The target can also run on t GPUs of a node (tensor parallel), across p nodes (pipeline stages), or with its weights in the host’s memory (offloaded), as SpecInfer serves it (§1.1, §4.6).',
  title_zh: '为什么验证几乎不要钱：屋顶线模型',
  intro_zh: 'B 个请求在一步解码里各处理 k 个 token，上下文长度为 L。批为 1 时这一步受访存限制，k 几乎不影响耗时；批大时很快碰到算力的屋顶。热力图给出在所选 α 下每个 批 × 上下文 的最优 γ（及加速比）；一步跑不起来的格子（权重和 KV 缓存超出 GPU 显存）两者都不显示，课上的演示 5 在那里只看时间模型的趋势。目标模型也可以像 SpecInfer 那样部署：节点内 t 块 GPU 张量并行、跨 p 个节点流水线并行，或者把权重放在主机内存里卸载（§1.1、§4.6）。',
  // Lecture §1.2, §2.5 (demos 1, 4, 5) and exercise 4.
  presets: [
    { label: 'Demo 1 · OPT-13B, batch 32, context 512', label_zh: '演示 1 · OPT-13B，批大小 32，上下文 512', values: { gpu: 'a100-40gb', target: 'opt-13b', draft: 'opt-125m', batch: 5, context: 9, k: 4, overhead: 1.5 },
      note: 'k = 4: 26.90 ms, still memory-bound; k = 8 is compute-bound', note_zh: 'k = 4：26.90 ms，仍然访存受限；k = 8 已经算力受限' },
    { label: 'Demo 4 · overhead 0.2 ms: c ≈ 0.02', label_zh: '演示 4 · 固定开销 0.2 ms：c ≈ 0.02', values: { batch: 0, context: 9, overhead: 0.2 }, note: 'CUDA Graphs or a mega-kernel cut the fixed cost', note_zh: 'CUDA Graphs 或 mega-kernel 削减固定开销' },
    { label: 'Demo 5 · heat map at α = 0.8', label_zh: '演示 5 · α = 0.8 的热力图', values: { alpha: 0.8, overhead: 1.5 }, note: 'the best γ per batch × context', note_zh: '每个批大小 × 上下文的最优 γ' },
    // Lecture §1.1, §4.6: the target on many GPUs, or its weights in the host's memory.
    { label: '§1.1 · LLaMA-2-70B on 4 × A100 (tensor parallel)', label_zh: '§1.1 · LLaMA-2-70B 在 4 块 A100 上（张量并行）', values: { gpu: 'a100-40gb', target: 'llama2-70b', draft: 'llama-68m', batch: 2, context: 11, k: 1, tp: '4' },
      note: 'the lecture measured 2% of the compute and 76% of the bandwidth; the model: batch 4, context 2048', note_zh: '讲义实测：算力利用率 2%、显存带宽 76%；模型取批 4、上下文 2048' },
    { label: '§4.6 · two nodes: tp 4 × pp 2', label_zh: '§4.6 · 两个节点：tp 4 × pp 2', values: { gpu: 'a100-40gb', target: 'llama2-70b', draft: 'llama-68m', batch: 4, context: 11, k: 1, tp: '4', pp: '2', micro: '2' },
      note: 'every step crosses the network and waits for the pipeline: fewer steps, fewer rounds', note_zh: '每一步都要跨网络、等流水线：步数少了，通信轮数也少了' },
    { label: '§4.6 · offloading: OPT-30B on one A10', label_zh: '§4.6 · 卸载：OPT-30B 在一块 A10 上', values: { gpu: 'a10', target: 'opt-30b', draft: 'opt-125m', batch: 0, context: 9, k: 1, weights: 'host' },
      note: '60 GB of weights cross PCIe every step, whatever k is: speculation gains most', note_zh: '60 GB 权重每步都要经 PCIe 搬一遍，与 k 无关：推测解码收益最大' },
  ],
  controls: [
    declare({ key: 'gpu', label: 'GPU', label_zh: 'GPU', type: 'select', value: 'a100-40gb' }, menuOptions('roofline.gpu')),
    declare({ key: 'target', label: 'target', label_zh: '目标模型', type: 'select', value: 'opt-13b' }, menuOptions('roofline.target')),
    declare({ key: 'draft', label: 'draft', label_zh: '草稿模型', type: 'select', value: 'opt-125m' }, menuOptions('roofline.draft')),
    // The target's deployment (every listed target's heads and layers divide these).
    declare({ key: 'tp', label: 'tensor parallel t', label_zh: '张量并行 t', type: 'select', value: '1' }, menuOptions('roofline.tp')),
    declare({ key: 'pp', label: 'pipeline stages p', label_zh: '流水线级数 p', type: 'select', value: '1' }, menuOptions('roofline.pp')),
    declare({ key: 'micro', label: 'micro-batches', label_zh: '微批数', type: 'select', value: '1' }, menuOptions('roofline.micro')),
    declare({ key: 'weights', label: 'weights', label_zh: '权重', type: 'select', value: 'gpu' }, menuOptions('roofline.weights')),
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
      tp: Number(s.tp), pp: Number(s.pp), micro_batches: Number(s.micro), offload: s.weights === 'host',
    });
    const st = v.served;
    const capped = v.optimal.gamma === v.max_gamma; // the heat map and the optimum search γ ≤ max_gamma
    // A step that could not run (out of the GPUs' memory) has no best γ and no speedup.
    const best = v.optimal.fits ? tr(`best γ here ${v.optimal.gamma}${capped ? ' (the largest searched)' : ''} → ${v.optimal.speedup.toFixed(2)}×`,
      `此处最优 γ ${v.optimal.gamma}${capped ? '（搜索的上限）' : ''} → ${v.optimal.speedup.toFixed(2)}×`)
      : tr('no best γ here: the step could not run', '此处没有最优 γ：这一步跑不起来');
    const bound = { memory: ['memory', '访存'], compute: ['compute', '算力'], communication: ['communication', '通信'], transfer: ['transfer', '搬运'] }[st.bound];
    return [
      tr(`<p class="numbers"><b>${st.time_ms.toFixed(2)} ms</b> per step, <b>${bound[0]}-bound</b>;
        intensity ${v.step.intensity.toFixed(1)} FLOP/B (knee ${v.knee.toFixed(1)});
        c = ${fmt(v.c)} for the draft; ${best}</p>`,
      `<p class="numbers">每步 <b>${st.time_ms.toFixed(2)} ms</b>，<b>${bound[1]}受限</b>；
        算术强度 ${v.step.intensity.toFixed(1)} FLOP/B（拐点 ${v.knee.toFixed(1)}）；
        草稿模型 c = ${fmt(v.c)}；${best}</p>`),
      `<p class="numbers deployed">${escapeHtml(v.deployed)}</p>`,
      `<div class="plots">${v.svg}</div>`,
      [v.svg_heat, v.svg_heat_marker],
    ];
  },
};

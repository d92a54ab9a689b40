// How to speculate on this device (lecture §4.7: balanced or unbalanced trees, static trees
// optimised offline; Sequoia's trees and its hardware-aware choice). Analytic: one call to the
// core's `choose` export draws the heat map, the chosen tree, the caption and every device's row.
import { escapeHtml, fmt, table } from '../html.js';
import { tr } from '../i18n.js';
import { coreRange, declarations, declare, menuOptions } from '../engine.js';

// The devices as the core lists them (`presets`: the measured ones, then each GPU preset through
// the roofline model), named in either language.
const devices = {
  options: (d) => d.choose.devices.map((x) => [x.key, x.en]),
  options_zh: (d) => d.choose.devices.map((x) => [x.key, x.zh]),
  value: (d) => d.choose.defaults.device,
};
// A device's own c: where the slider starts when c is set by hand (at load, the default device's).
const costOf = (d, key) => d.choose.devices.find((x) => x.key === key)?.draft_cost;
const ownCost = (d) => costOf(d, d.choose.defaults.device);
// widget root → what it drew last ({ cost, c }), and a vector from a link it refused (drawn meanwhile
// with the default vector: a link's mistake shows the widget working, not a blank, and says why).
const drawn = new WeakMap();
const refused = new WeakMap();

export default {
  name: 'choose',
  title: 'How to speculate on this device: the best chain and tree from T(k)',
  intro: 'Sequoia’s answer to §4.7’s open questions. Give the acceptance vector p₁, p₂, … (p_i: the chance that a node’s i-th most likely draft child is the one verification accepts) '
    + 'and a device: its time T(k) for a target call that verifies k tokens, and c, the draft’s cost per level over T(1). '
    + 'A tree of n nodes and depth d then yields E = 1 + Σ over its nodes of the product of p along the path, and predicts E / (T(n+1)/T(1) + d·c). '
    + 'The core finds the best tree for every (n, d) by dynamic programming and picks the best; the table makes the same choice on every device. '
    + 'E assumes each acceptance independent of the path, as the lecture’s α does (§3.3): on LikesWorld it comes out 15–25% above the measured τ, since a step begins after a rejection, at the names (docs/performance.md; specdec likesworld sequoia measures it).',
  title_zh: '在这台设备上怎么推测：按 T(k) 选最好的链和树',
  intro_zh: 'Sequoia 对 §4.7 几个开放问题的回答。给出接受向量 p₁, p₂, …（p_i：一个节点排第 i 的草稿孩子正是验证接受的那一个的概率）和一台设备：目标模型一次验证 k 个 token 的时间 T(k)，以及草稿每层的开销 c（相对 T(1)）。'
    + 'n 个节点、深度 d 的树每次调用产出 E = 1 + Σ（各节点路径上 p 的乘积），预测加速比为 E / (T(n+1)/T(1) + d·c)。核心用动态规划求出每个 (n, d) 最好的树，再从中挑最好的；下表在每台设备上做同样的选择。'
    + 'E 假设每次接受与路径无关，和课上的 α 一样（§3.3）：在 LikesWorld 上它比实测的 τ 高 15–25%，因为每一步都从一次拒绝之后、名字那里开始（实测见 docs/performance.md）。',
  // The measured devices and the lecture's GPU through the roofline model.
  presets: [
    { label: 'This 2-core CPU, measured', label_zh: '这台 2 核 CPU，实测', values: { device: 'cpu-measured' }, note: 'a short chain: every token in a call costs', note_zh: '短链：调用里每个 token 都要花时间' },
    { label: 'The H200, measured', label_zh: 'H200，实测', values: { device: 'h200-measured' }, note: 'dozens of nodes: T(16)/T(1) ≈ 1', note_zh: '几十个节点：T(16)/T(1) ≈ 1' },
    { label: 'A100 (roofline model)', label_zh: 'A100（roofline 模型）', values: { device: 'a100-40gb' }, note: 'the lecture’s pair, OPT-125M for OPT-13B', note_zh: '课上的一对：OPT-125M 为 OPT-13B 起草' },
    { label: 'The H200 with a dear draft, c = 0.3', label_zh: 'H200，草稿很贵，c = 0.3', values: { device: 'h200-measured', cost: 'set', c: 0.3 }, note: 'each level costs: a shallower tree', note_zh: '每层都贵：树变浅' },
  ],
  controls: [
    // The default vector is the core's (ChooseParams' default); a Chinese comma reads as a comma.
    // Its cap holds the core's most entries (16) at five decimals, and keeps the page's URL short.
    declare({ key: 'acceptance', label: 'acceptance p₁,p₂,…', label_zh: '接受向量 p₁,p₂,…', type: 'text', cap: 128, list: true },
      { value: (d) => d.choose.defaults.acceptance }),
    declare({ key: 'device', label: 'device', label_zh: '设备', type: 'select' }, devices),
    declare({ key: 'cost', label: 'draft cost c', label_zh: '草稿开销 c', type: 'select', value: 'device' }, menuOptions('choose.cost')),
    // c's range is the core's (DRAFT_COST); the page stops at 1, a draft level as dear as a target call.
    declare({ key: 'c', label: 'c', label_zh: 'c', type: 'range', step: 0.001, showIf: (s) => s.cost === 'set' },
      { ...coreRange('choose', 'draft_cost'), max: (d) => Math.min(1, d.choose.draft_cost.max), value: ownCost }),
  ],
  render(s, ui) {
    const last = drawn.get(ui.root);
    // "Set by hand" starts from the device's own c, not the default device's; a preset that sets
    // c with it (c moved too) keeps its own.
    if (last?.cost === 'device' && s.cost === 'set' && Number(s.c) === last.c) {
      const own = costOf(declarations(), s.device);
      if (own != null) ui.set('c', own);
    }
    const ask = (acceptance) => ui.call('choose', { acceptance, device: s.device, draft_cost: s.cost === 'set' ? Number(s.c) : null });
    let v;
    try {
      v = ask(s.acceptance);
      refused.delete(ui.root);
    } catch (e) {
      // A change typed here keeps the last drawing, greyed by the alert; a link's first drawing
      // uses the default vector and names what it refused.
      if (last && !refused.has(ui.root)) throw e;
      const fallback = declarations().choose.defaults.acceptance;
      v = ask(fallback);
      refused.set(ui.root, tr(`${e.message}; drawn with the default vector ${fallback}`, `${e.message}；先用默认向量 ${fallback} 画出`));
    }
    drawn.set(ui.root, { cost: s.cost, c: Number(s.c) });
    const c = s.cost === 'set'
      ? tr(`c = ${fmt(v.draft_cost)} (set by hand; the device’s own is ${fmt(v.device_draft_cost)})`, `c = ${fmt(v.draft_cost)}（手动设定；设备自己的是 ${fmt(v.device_draft_cost)}）`)
      : tr(`c = ${fmt(v.draft_cost)} (the device’s own)`, `c = ${fmt(v.draft_cost)}（设备自己的）`);
    const chain = v.chain.gamma === 0
      ? tr('chain: <b>plain decoding is faster</b>', '链：<b>不推测更快</b>')
      : tr(`chain: <b>γ = ${v.chain.gamma}</b>, E = ${fmt(v.chain.expected_tokens, 2)}, <b>${fmt(v.chain.predicted_speedup, 2)}×</b>`,
        `链：<b>γ = ${v.chain.gamma}</b>，E = ${fmt(v.chain.expected_tokens, 2)}，<b>${fmt(v.chain.predicted_speedup, 2)}×</b>`);
    const tree = v.tree.nodes === 0
      ? tr('tree: <b>plain decoding is faster</b>', '树：<b>不推测更快</b>')
      : tr(`tree: <b>${v.tree.nodes} nodes, depth ${v.tree.depth}</b>, E = ${fmt(v.tree.expected_tokens, 2)}, <b>${fmt(v.tree.predicted_speedup, 2)}×</b>`,
        `树：<b>${v.tree.nodes} 个节点，深度 ${v.tree.depth}</b>，E = ${fmt(v.tree.expected_tokens, 2)}，<b>${fmt(v.tree.predicted_speedup, 2)}×</b>`);
    const rows = [[tr('device', '设备'), 'c', 'T(K)/T(1)', tr('chain γ', '链 γ'), tr('tree n · d', '树 n · d'), tr('speedup: chain, tree', '加速比：链，树')]]
      .concat(v.devices.map((d) => {
        const name = escapeHtml(d.name);
        const nodes = d.tree_nodes === 0 ? '—' : `${d.tree_nodes}${d.tree_capped ? '+' : ''} · ${d.tree_depth}`;
        return [d.key === v.device ? `<b>${name}</b>` : name, fmt(d.draft_cost), `${fmt(d.top_ratio, 2)} (K = ${d.max_k})`,
          d.chain.gamma === 0 ? '—' : d.chain.gamma, nodes, `${fmt(d.chain.predicted_speedup, 2)}×, ${fmt(d.tree_speedup, 2)}×`];
      }));
    return [
      tr(`<p class="numbers">${escapeHtml(v.name)}, ${c}: ${chain}; ${tree}</p>`, `<p class="numbers">${escapeHtml(v.name)}，${c}：${chain}；${tree}</p>`),
      `<p class="note choose-why">${escapeHtml(v.caption)}</p>`,
      `<div class="plots">${v.svg_heat}</div>`,
      `<div class="plots">${v.svg_tree}</div>`,
      `<p class="numbers">${tr('Every device, each at its own c (n+: every node its times cover; more might pay):', '每台设备，各用自己的 c（n+：用满了给出的时间所覆盖的节点，更多也许还划算）：')}</p>${table(rows, 'choose-devices')}`,
      `<p class="choose-source">${tr('Source of this device’s figures: ', '这台设备数据的来源：')}${escapeHtml(v.source)}</p>`,
    ];
  },
  after(s, ui) {
    const why = refused.get(ui.root);
    if (why) ui.note(why);
  },
};

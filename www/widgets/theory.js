// Speedup explorer (lecture §2.5; Leviathan et al. Table 1, Figure 3; exercise 1).
import { fmt } from '../html.js';
import { tr } from '../i18n.js';
import { coreRange, declare } from '../engine.js';

// The intro's formulas, typeset (MathML, as the page's sections write theirs).
const E = '<math><mi>E</mi><mo>=</mo><mfrac><mrow><mn>1</mn><mo>−</mo><msup><mi>α</mi><mrow><mi>γ</mi><mo>+</mo><mn>1</mn></mrow></msup></mrow><mrow><mn>1</mn><mo>−</mo><mi>α</mi></mrow></mfrac></math>';
const CAP = '<math><mfrac><mn>1</mn><mrow><mn>1</mn><mo>−</mo><mi>α</mi></mrow></mfrac></math>';
const SPEEDUP = '<math><mfrac><mi>E</mi><mrow><mi>γ</mi><mi>c</mi><mo>+</mo><mn>1</mn></mrow></mfrac></math>';

export default {
  name: 'theory',
  title: 'How much faster: E, speedup and operations',
  intro: 'With acceptance α i.i.d. per token, a call yields ' + E + ' tokens, capped by ' + CAP + '. '
    + 'The speedup ' + SPEEDUP + ' peaks at an optimal γ; the operations factor shows that speculation spends compute to save time.',
  title_zh: '能快多少：E、加速比与运算量',
  intro_zh: '每个 token 以 α 的概率独立被接受时，一次调用产生 ' + E + ' 个 token，上限 ' + CAP + '。加速比 ' + SPEEDUP + ' 在某个最优 γ 处最大；运算量倍数说明推测解码是用算力换时间。',
  // Lecture §2.5: Leviathan et al. Table 1 and Figure 3, exercise 1.
  presets: [
    { label: 'Table 1 · α 0.8, γ 5, c = ĉ = 0', label_zh: '表 1 · α 0.8，γ 5，c = ĉ = 0', values: { alpha: 0.8, gamma: 5, c: 0, c_hat: 0 }, note: 'speedup 3.69×, operations 1.63×', note_zh: '加速比 3.69×，运算量 1.63×' },
    { label: 'Figure 3 · α 0.8, c 0.01', label_zh: '图 3 · α 0.8，c 0.01', values: { alpha: 0.8, c: 0.01, c_hat: 0 }, note: 'optimal γ 14, about 4.2×', note_zh: '最优 γ 14，约 4.2×' },
    { label: 'Figure 3 · α 0.8, c 0.1', label_zh: '图 3 · α 0.8，c 0.1', values: { alpha: 0.8, c: 0.1, c_hat: 0 }, note: 'optimal γ 6, 2.47× (the lecture rounds to 2.5)', note_zh: '最优 γ 6，2.47×（课上取整为 2.5）' },
    { label: 'Exercise 1 · α 0.75, γ 4, c 0.05, ĉ 0.02', label_zh: '练习 1 · α 0.75，γ 4，c 0.05，ĉ 0.02', values: { alpha: 0.75, gamma: 4, c: 0.05, c_hat: 0.02 } },
  ],
  controls: [
    // Every range and default is the core's (`presets`: theory.rs's ranges, TheoryParams' defaults).
    declare({ key: 'alpha', label: 'α', label_zh: 'α', type: 'range', step: 0.01 }, coreRange('theory', 'alpha')),
    // The page's γ stops where the first chart's γ axis ends (the core's GAMMA_AXIS); the core takes more.
    declare({ key: 'gamma', label: 'γ', label_zh: 'γ', type: 'range', step: 1 }, { ...coreRange('theory', 'gamma'), max: (d) => Math.min(d.theory.gamma_axis, d.theory.gamma.max) }),
    // The page's costs stop at 1, a draft step as dear as the target's; the core takes any cost.
    declare({ key: 'c', label: 'c', label_zh: 'c', type: 'range', step: 0.005 }, { ...coreRange('theory', 'c'), max: (d) => Math.min(1, d.theory.c.max) }),
    declare({ key: 'c_hat', label: 'ĉ', label_zh: 'ĉ', type: 'range', step: 0.005 }, { ...coreRange('theory', 'c_hat'), max: (d) => Math.min(1, d.theory.c_hat.max) }),
  ],
  render(s, ui) {
    const v = ui.call('theory', { alpha: Number(s.alpha), gamma: Number(s.gamma), c: Number(s.c), c_hat: Number(s.c_hat) });
    const optimal = Number(s.c) === 0 && Number(s.alpha) > 0
      ? tr('— (c = 0: every extra draft helps, up to the cap)', '—（c = 0：多猜一个总有好处，直到上限）')
      : v.optimal_beyond
        ? (Number(s.alpha) >= 1
          ? tr(`— (α = 1: the speedup rises with γ towards 1/c = ${fmt(1 / Number(s.c), 2)})`, `—（α = 1：加速比随 γ 一直上升，趋近 1/c = ${fmt(1 / Number(s.c), 2)}）`)
          : tr(`— (still rising at γ = ${v.optimal_gamma})`, `—（到 γ = ${v.optimal_gamma} 仍在上升）`))
        : tr(`<b>${v.optimal_gamma}</b> (${fmt(v.optimal_speedup, 2)}×)`, `<b>${v.optimal_gamma}</b>（${fmt(v.optimal_speedup, 2)}×）`);
    return [tr(`<p class="numbers">
        E = <b>${fmt(v.expected_tokens)}</b> tokens per call (cap ${fmt(v.cap, 2)}),
        speedup <b>${fmt(v.speedup, 2)}×</b>, operations <b>${fmt(v.operations, 2)}×</b>;
        optimal γ = ${optimal}</p>`, `<p class="numbers">
        E = 每次调用 <b>${fmt(v.expected_tokens)}</b> 个 token（上限 ${fmt(v.cap, 2)}），
        加速比 <b>${fmt(v.speedup, 2)}×</b>，运算量 <b>${fmt(v.operations, 2)}×</b>；
        最优 γ = ${optimal}</p>`),
      `<div class="plots">${v.svg}</div>`,
      `<div class="plots">${v.svg_optimal}</div>`];
  },
};

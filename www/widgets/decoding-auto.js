// Every method at its device-best size (lecture §4.7; issue 54): the decoding widget's "Auto (this
// device)" node budget for the §6 table, and the sweep's own choice of γ beside its measured best.
// The core times T(k), each draft's c and reads its acceptance vector in the same job, and picks
// with the hardware-aware choice (tree::choose); this module only says what it picked.
import { fmt } from '../html.js';
import { beyond } from '../noise.js';
import { tr } from '../i18n.js';
import { menuOptions } from '../declare.js';

/** The node budget's choices: the core's budgets, and "auto" for the §6 table (`decoding.budget`). */
export const budgetOptions = { ...menuOptions('decoding.budget'), value: (d) => String(d.decoding.defaults.budget) };

/** What the engine reads: "auto", or a number of nodes. */
export const budgetParam = (s) => (s.budget === 'auto' ? 'auto' : Number(s.budget));

/** Auto is the §6 table's alone: a single hidden-state draft takes a number of nodes. */
export const budgetOff = (v, s) => v === 'auto' && s.experiment !== 'methods';

const ratio = (t, k) => fmt(t[k - 1] / t[0], 2);

/** The §6 table's opening sentence with the budget auto: what was timed and how sizes were chosen ('' otherwise). */
export function autoIntro(r, target) {
  if (r.budget !== 'auto') return '';
  const t = r.times_us;
  const K = t.length;
  return tr(`<p class="numbers dec-auto">Every method at its <b>size for this device</b> on ${target}, ${r.prompts} prompts, greedy, timed against the target alone on the same prompts. `
    + `Timed in this job and lifted to what decoding pays (a few calibration prompts decoded in turn by the target alone and by draft B’s chains of 1, 3 and 7): T(1) = ${fmt(t[0], 0)} µs, and verifying 2, 4, 8 and ${K} tokens costs ${ratio(t, 2)}, ${ratio(t, Math.min(4, K))}, ${ratio(t, Math.min(8, K))} and ${ratio(t, K)} one-token calls. `
    + `For each draft its one-token call over T(1) (c) and its acceptance vector give the chain’s γ or the tree’s nodes that maximise E / (T(n + 1)/T(1) + depth · c) (Sequoia’s hardware-aware choice); `
    + `draft B’s static tree is Sequoia’s tree for its vector at the chosen size, and EAGLE-2 grows as many levels as the chosen tree is deep; `
    + `the suffix index has no vector to choose by and keeps ${r.suffix_nodes} nodes. `
    + 'A run’s own calls can still cost more (its c and T(n)/T(1) in the columns below; a tree’s calls are not calibrated apart), and its τ may fall short of the vector’s E: the gap between prediction and measurement is theirs.</p>',
  `<p class="numbers dec-auto">每种方法都用<b>这台设备上最好的规模</b>，${target}，${r.prompts} 个提示词，贪心，与目标模型单独解码同样的提示词对比计时。`
    + `本次任务中计时，并按解码实际付出的校准（目标模型单独、草稿 B 用长 1、3、7 的链，轮流解码几个校准提示词）：T(1) = ${fmt(t[0], 0)} µs，验证 2、4、8、${K} 个 token 分别要 ${ratio(t, 2)}、${ratio(t, Math.min(4, K))}、${ratio(t, Math.min(8, K))}、${ratio(t, K)} 次单 token 调用的时间。`
    + `每个草稿用它的单 token 调用比 T(1)（c）和它的接受向量，选出使 E / (T(n + 1)/T(1) + 深度 · c) 最大的链长 γ 或树的节点数（Sequoia 的硬件感知选择）；`
    + `草稿 B 的静态树是按它的接受向量在选定规模下的 Sequoia 树，EAGLE-2 生长的层数等于选定树的深度；`
    + `后缀索引没有接受向量可依据，固定用 ${r.suffix_nodes} 个节点。`
    + '真正运行时自己的调用仍可能花得更多（见下面各列里它自己的 c 和 T(n)/T(1)；树的调用没有单独校准），τ 也可能不及接受向量给出的 E：预测与实测之差就来自这两处。</p>');
}

/** The column of the chosen sizes, header and one cell a row (null with a budget of nodes). */
export function autoColumn(r) {
  if (r.budget !== 'auto') return null;
  const cell = (x) => {
    const a = x.auto;
    if (!a) return tr(`${r.suffix_nodes} nodes, fixed (no vector)`, `${r.suffix_nodes} 个节点，固定（无接受向量）`);
    const chain = /γ/.test(x.short);
    const size = chain ? `γ ${a.size}` : tr(`${a.size} node${a.size === 1 ? '' : 's'}, depth ${a.depth}`, `${a.size} 个节点，深度 ${a.depth}`);
    if (a.plain) return tr(`plain decoding (1.00×); ${size} ran`, `普通解码（1.00×）；运行的是 ${size}`);
    return `<b>${size}</b> · ${fmt(a.predicted_speedup, 2)}×`;
  };
  return { head: tr('size chosen · predicted', '选定规模 · 预测'), cell };
}

/** The sweep's chosen row marked in its γ cell. */
export function chosenGamma(r, gamma) {
  const d = r.device_choice;
  return d && d.gamma === gamma ? `${gamma} <b class="dec-chosen">${tr('◆ chosen', '◆ 选定')}</b>` : String(gamma);
}

/** The sweep's choice beside its measured best: whether they agree, within the spread ('' for a drafter without a model). */
export function sweepChoiceHtml(r) {
  const d = r.device_choice;
  if (!d) return '';
  const t = d.times_us;
  const best = r.rows.find((w) => w.gamma === r.best_gamma);
  const inputs = tr(`from T(k) timed in this job (T(2)/T(1) = ${ratio(t, 2)}, T(${t.length})/T(1) = ${ratio(t, t.length)}), the draft’s c = ${fmt(d.c, 3)} and its acceptance vector (p₁ = ${fmt(d.p[0], 2)})`,
    `依据本次任务中计时的 T(k)（T(2)/T(1) = ${ratio(t, 2)}，T(${t.length})/T(1) = ${ratio(t, t.length)}）、草稿的 c = ${fmt(d.c, 3)} 和它的接受向量（p₁ = ${fmt(d.p[0], 2)}）`);
  let verdict;
  if (d.gamma === 0) {
    const pays = beyond(best.measured_speedup, best.measured_speedup_iqr, 1, 0);
    verdict = pays
      ? tr(`The measured best, γ ${best.gamma} at ${fmt(best.measured_speedup, 2)}×, beats plain decoding beyond its spread: here the choice is too cautious.`,
        `实测最好的 γ ${best.gamma}（${fmt(best.measured_speedup, 2)}×）超出波动地快过普通解码：这里的选择太保守了。`)
      : tr(`No swept γ beats plain decoding beyond its spread (the best, γ ${best.gamma}, measures ${fmt(best.measured_speedup, 2)}×): the measurement agrees.`,
        `没有哪个扫描的 γ 超出波动地快过普通解码（最好的 γ ${best.gamma} 实测 ${fmt(best.measured_speedup, 2)}×）：实测与选择一致。`);
    return tr(`<p class="numbers dec-choice">This device’s choice, ${inputs}: <b>plain decoding</b> — no γ is predicted to pay. ${verdict}</p>`,
      `<p class="numbers dec-choice">这台设备的选择，${inputs}：<b>普通解码</b>——预测没有哪个 γ 划算。${verdict}</p>`);
  }
  const chosen = r.rows.find((w) => w.gamma === d.gamma);
  if (!chosen) {
    verdict = tr(`γ ${d.gamma} is not among the γ swept: add it to the list to measure it.`, `γ ${d.gamma} 不在扫描的 γ 里：把它加进列表就能实测。`);
  } else if (beyond(1, 0, chosen.measured_speedup, chosen.measured_speedup_iqr)) {
    // Predicted to pay, measured slower than plain decoding beyond its spread: whatever γ won.
    verdict = tr(`The chosen γ measures ${fmt(chosen.measured_speedup, 2)}×, slower than plain decoding beyond its spread: the prediction was too high here (the measured best, γ ${best.gamma}, ${fmt(best.measured_speedup, 2)}×).`,
      `选定的 γ 实测 ${fmt(chosen.measured_speedup, 2)}×，超出波动地慢过普通解码：这里预测偏高（实测最好的 γ ${best.gamma}，${fmt(best.measured_speedup, 2)}×）。`);
  } else if (chosen === best) {
    verdict = tr(`The measured best is the same γ: the choice agrees (${fmt(best.measured_speedup, 2)}× measured).`, `实测最好的也是这个 γ：选择与实测一致（实测 ${fmt(best.measured_speedup, 2)}×）。`);
  } else if (beyond(best.measured_speedup, best.measured_speedup_iqr, chosen.measured_speedup, chosen.measured_speedup_iqr)) {
    verdict = tr(`The measured best, γ ${best.gamma} at ${fmt(best.measured_speedup, 2)}×, beats the chosen γ’s ${fmt(chosen.measured_speedup, 2)}× beyond their spreads: the choice misses here.`,
      `实测最好的 γ ${best.gamma}（${fmt(best.measured_speedup, 2)}×）超出两者的波动地快过选定 γ 的 ${fmt(chosen.measured_speedup, 2)}×：这里选择没有选中。`);
  } else {
    verdict = tr(`The measured best, γ ${best.gamma} at ${fmt(best.measured_speedup, 2)}×, is within the spread of the chosen γ’s ${fmt(chosen.measured_speedup, 2)}×: the measurement cannot tell them apart, so it agrees.`,
      `实测最好的 γ ${best.gamma}（${fmt(best.measured_speedup, 2)}×）与选定 γ 的 ${fmt(chosen.measured_speedup, 2)}× 相差在波动之内：实测分不出两者，所以与选择一致。`);
  }
  return tr(`<p class="numbers dec-choice">This device’s choice, ${inputs}: <b>γ ${d.gamma}</b>, predicted <b>${fmt(d.predicted_speedup, 2)}×</b> (E = ${fmt(d.expected_tokens, 2)} tokens a step). ${verdict}</p>`,
    `<p class="numbers dec-choice">这台设备的选择，${inputs}：<b>γ ${d.gamma}</b>，预测 <b>${fmt(d.predicted_speedup, 2)}×</b>（每步期望 E = ${fmt(d.expected_tokens, 2)} 个 token）。${verdict}</p>`);
}

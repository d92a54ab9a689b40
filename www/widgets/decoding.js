// Speculative decoding on LikesWorld (lecture §3–§6: demos 03.1–03.3 and 04.3–04.6, demo 5 on
// the wall clock, a step-through, the drafts on the target's hidden states and the §6 table): the
// drafts propose, the target verifies in one call. Every experiment runs in a Web Worker, with
// progress and cancel; a newer run supersedes the older one.
import { fmt, table, escapeHtml, duration } from '../html.js';
import { beyond } from '../noise.js';
import { runBar, runInWorker } from '../runbar.js';
import { tr } from '../i18n.js';
import { backendOptions, declarations, menuOptions, declare, kindName, seedRange, targetSize, variantOptions, widthOptions } from '../engine.js';
import { loadHtml, noisyHtml, spreadHtml } from './decoding-load.js';
import { stepHtml } from './decoding-step.js';
import { autoColumn, autoIntro, budgetOff, budgetOptions, budgetParam, chosenGamma, sweepChoiceHtml } from './decoding-auto.js';
import { crossingHtml, draftsControl, draftsHtml, draftsOn, offloads, weightsControl } from './offload.js';

// The verification rules, token kinds, the ranges of γ, the repeats and the hidden-state drafts'
// budget, depth and heads, and their defaults, are the core's (`presets`), read when the widget
// mounts: none is typed here.
const range = (name) => ({ min: (d) => d.decoding[name].min, max: (d) => d.decoding[name].max });
const byDefault = (name) => ({ value: (d) => d.decoding.defaults[name] });

const uses = (...names) => (s) => names.includes(s.experiment);
// The wall-clock experiments: one γ, or a sweep over γ; `shape` says what proposes (no model: a look-up).
const timed = uses('speedup', 'sweep');
const modelFree = (shape) => !['chain', 'tree'].includes(shape);
const free = (s) => timed(s) && modelFree(s.shape);
const load = uses('load'); // speculation under load: one chain or tree at every batch of a list
/** The wall-clock experiments, where offloading the target's weights shows (lecture §4.6). */
const clocked = (s) => timed(s) || load(s);
// A step-through of a draft on the target's hidden states (no draft model, γ or tree to choose).
const hiddenStep = (s) => s.experiment === 'step' && ['medusa', 'eagle-2'].includes(s.stepkind);
// The runs with a draft model (A, B, Medusa's heads, EAGLE), which can sit on the CPU beside a WebGPU
// target (the hidden-state drafts read the features the target's calls read back).
const drafted = (s) => !free(s);
// The runs of one draft model (A or B), where the student's own may propose instead.
const oneDraft = (s) => !uses('acceptance', 'stochastic', 'hidden', 'methods')(s) && !free(s) && !hiddenStep(s);

// Whole numbers for the engine: a URL may carry an off-step value such as gamma=2.5.
function params(s) {
  return {
    experiment: s.experiment, backend: s.backend, draft: s.draft === 'yours' ? 'a' : s.draft, trained_draft: s.draft === 'yours' && oneDraft(s), gamma: Math.round(Number(s.gamma)), prompts: Number(s.prompts),
    repeats: Math.round(Number(s.repeats)), seed: Math.round(Number(s.seed)), variant: s.variant, config: s.config,
    children: s.children, stepkind: s.stepkind, target_width: Number(s.target_width), batch: Number(s.batch), shape: s.shape, gammas: s.gammas, batches: s.batches,
    method: s.method, budget: budgetParam(s), depth: Math.round(Number(s.depth)), heads: Math.round(Number(s.heads)), verify: s.verify,
    offload: offloads(s, clocked), drafts: draftsOn(s, drafted),
  };
}

/** What one run decodes, for the Run button of an element that waits for it (runbar.js). */
function cost(s) {
  const target = tr(`the ×${s.target_width} target (${targetSize(s.target_width)}) on ${s.backend}`,
    `${s.backend} 上的 ×${s.target_width} 目标模型（${targetSize(s.target_width)}）`);
  if (s.experiment === 'step') return tr(`steps through one prompt with ${target}`, `用 ${target}逐步解码一个提示词`);
  const samples = s.experiment === 'sample' && Number(s.repeats) > 1 ? tr(` × ${s.repeats} samples`, ` × ${s.repeats} 次采样`) : '';
  // A list's values; null when one is not a whole number (the run then names it).
  const count = (list) => { const xs = list.split(/[,，]/).filter((x) => x.trim()); return xs.length && xs.every((x) => /^\s*\d+\s*$/.test(x)) ? xs.length : null; };
  const [gammas, batches] = [count(s.gammas), count(s.batches)];
  const each = { sweep: gammas === null ? '' : tr(`, for each of ${gammas} γ value${gammas === 1 ? '' : 's'}`, `，${gammas} 个 γ 各一遍`),
    load: batches === null ? '' : tr(`, at each of ${batches} batch${batches === 1 ? '' : 'es'} (at least one whole batch each)`, `，${batches} 个批大小各一遍（每个至少一整批）`),
    methods: tr(', for every method of the §6 table', '，§6 表里的每种方法各一遍') }[s.experiment] ?? '';
  const wrong = ({ sweep: gammas, load: batches }[s.experiment] === null) ? tr('; a value of its list is not a whole number', '；但列表里有不是整数的值') : '';
  return tr(`decodes ${s.prompts} prompts${samples}${each} with ${target}${wrong}`, `用 ${target}解码 ${s.prompts} 个提示词${samples}${each}${wrong}`);
}

const pct = (x) => `${(100 * x).toFixed(1)}%`;
// Drafts on the target's hidden states (lecture §5).
const hidden = uses('hidden');
// A depth no step reached reads as a dash (JSON turns the core's NaN into null).
const list = (xs, d = 2) => (xs?.length ? xs.map((x) => (x == null ? '—' : fmt(x, d))).join(' · ') : '—');

// c is the drafting of a step (§6's τ/(1 + c)); a draft call's share of it.
const perCall = (r) => (r.draft_calls_per_step > 0 ? fmt(r.c / r.draft_calls_per_step, 3) : '—');

function hiddenHtml({ report: r, trees }) {
  // Timed prompt by prompt against the target alone: its spread is over the prompts.
  const timed = { ...r, batch: 1 };
  const p = r.p_value == null ? tr('— (for sampled runs; greedy ones are checked token for token above)', '—（用于采样运行；贪心运行已在上面逐 token 核对）') : `<b class="${r.p_value >= 0.01 ? 'ok' : 'bad'}">p = ${fmt(r.p_value)}</b>`;
  const rows = tr([['', 'measured'], ['identical to the target’s greedy output', r.p_value == null ? `${r.identical}/${r.prompts}` : tr('— (sampled)', '—')],
    ['τ (tokens per target call)', `<b>${fmt(r.tokens_per_call, 2)}</b>`], ['verified nodes per call', fmt(r.verified_nodes_per_call, 1)],
    ['accepted fraction of the nodes', pct(r.accepted_fraction)], ['acceptance by depth', list(r.acceptance_by_depth)],
    ['draft calls per step · c, the drafting of a step over a target call', `${fmt(r.draft_calls_per_step, 1)} · ${fmt(r.c, 3)} (${perCall(r)} a call)`],
    ['wall clock: the target alone’s time per token over this run’s', `<b>${fmt(r.measured_speedup, 2)}×</b>${spreadHtml(timed)}`], ['calibration test', p]],
  [['', '实测'], ['与目标模型贪心输出一致', r.p_value == null ? `${r.identical}/${r.prompts}` : '—（采样）'],
    ['τ（每次目标调用的 token 数）', `<b>${fmt(r.tokens_per_call, 2)}</b>`], ['每次调用验证的节点数', fmt(r.verified_nodes_per_call, 1)],
    ['被接受的节点比例', pct(r.accepted_fraction)], ['按深度的接受率', list(r.acceptance_by_depth)],
    ['每步草稿调用数 · c：一步的草拟耗时比一次目标调用', `${fmt(r.draft_calls_per_step, 1)} · ${fmt(r.c, 3)}（每次调用 ${perCall(r)}）`],
    ['墙钟：目标模型单独每个 token 的时间比本次运行的', `<b>${fmt(r.measured_speedup, 2)}×</b>${spreadHtml(timed)}`], ['校准检验', p]]);
  if (r.head_accuracy) {
    rows.push([tr('head accuracy, top-1', '各头准确率，top-1'), list(r.head_accuracy)], [tr('head accuracy, top-8', '各头准确率，top-8'), list(r.head_accuracy_top_k)]);
    for (const [kind, acc] of r.head_accuracy_by_kind ?? []) rows.push([tr(`top-1, next token: ${kindName(kind)}`, `top-1，下一个 token：${kindName(kind)}`), list(acc)]);
  }
  if (r.first_position_tv != null) rows.push([tr('first position: TV(output, p)', '第一个位置：TV(输出, p)'), `<b class="bad">${fmt(r.first_position_tv, 4)}</b>`]);
  const drawn = trees.map((t) => escapeHtml(t.method)).join(tr(' beside ', ' 与 '));
  return `<p class="numbers">${escapeHtml(r.method)}${tr(`, ${r.prompts} prompts.`, `，${r.prompts} 个提示词。`)}</p>` + table(rows, 'dec-hidden')
    + noisyHtml([timed]) + draftsHtml(r) + `<p class="numbers">${tr(`Drawn: one proposal of ${drawn}, for the same context. Orange: what the target accepts; the fill is the draft’s confidence in the path.`,
      `图中：同一上下文下 ${drawn} 各一次提议。橙色：目标模型接受的；填充深浅：草稿对这条路径的置信度。`)}</p>`;
}

function methodsHtml(r, v) {
  const target = r.target_width > 1 ? tr(`the target ×${r.target_width}`, `目标模型 ×${r.target_width}`) : tr('the trained target', '训练好的目标模型');
  // With the budget auto, a column of the sizes chosen for this device, after the method's name.
  const auto = autoColumn(r);
  const [head, cell] = auto ? [[auto.head], (x) => [auto.cell(x)]] : [[], () => []];
  return (autoIntro(r, target) || tr(`<p class="numbers">Every method at a budget of ${r.budget} nodes on ${target}, ${r.prompts} prompts, greedy (every output is the target’s own), timed against the target alone on the same prompts.</p>`,
    `<p class="numbers">每种方法，节点预算 ${r.budget}，${target}，${r.prompts} 个提示词，贪心（每个输出都是目标模型自己的），与目标模型单独解码同样的提示词对比计时。</p>`))
    + noisyHtml(r.rows.map((x) => ({ ...x, prompts: r.prompts, batch: 1 })), (x) => escapeHtml(x.method))
    + table([[tr('method', '方法'), ...head, ...tr(['τ', 'accepted / verified', 'draft calls / step', 'c (drafting a step)', 'T(n)/T(1) (verifying)', 'lecture’s formula', 'on the measured curve', 'measured', 'IQR (prompt by prompt)', 'this device’s limit'],
      ['τ', '接受 / 验证', '每步草稿调用', 'c（每步起草）', 'T(n)/T(1)（验证）', '课上的公式', '按实测曲线', '实测', 'IQR（逐个提示词）', '这台设备的极限'])]].concat(r.rows.map((x) => [escapeHtml(x.method), ...cell(x), fmt(x.tokens_per_call, 2),
      x.accepted_fraction == null ? '—' : pct(x.accepted_fraction), fmt(x.draft_calls_per_step, 1), fmt(x.c, 3), fmt(x.verify_over_target, 2),
      `${fmt(x.predicted_speedup, 2)}×`, `${fmt(x.predicted_speedup_curve, 2)}×`, `<b>${fmt(x.measured_speedup, 2)}×</b>`, fmt(x.measured_speedup_iqr, 2), x.limit_speedup == null ? '—' : `${fmt(x.limit_speedup, 2)}×`])), 'dec-methods')
    + tr('<p class="numbers">What the columns are. <b>Lecture’s formula</b>: τ/(1 + c), with c the drafting of a step (for a chain E(α, γ)/(γc + 1), with c a draft call’s), verification taken as free. '
      + '<b>T(n)/T(1)</b>: this run’s own mean verification call over its own mean one-token call. <b>On the measured curve</b>: τ/(T(n)/T(1) + c) (a chain: E(α, γ) for τ). '
      + '<b>Measured</b>: the target alone’s wall time over the method’s, on the same prompts. '
      + '<b>This device’s limit</b>: the same τ and drafting with every verification call at max(weights / bandwidth, k · FLOPs / peak), the bandwidth and peak measured here, each call never dearer than it cost here, and never under the measured column (what this device did, it can do): the gap from the measured column is the kernel’s and decoding’s own work, what remains below a perfect draft the draft’s. '
      + 'Since the curve column is built from the very call times the run spent, it matches the measured column by construction, up to the time spent outside model calls: '
      + 'it confirms that the calls explain the wall clock, not that the formula predicts it. The gap between the lecture’s formula and the measured column is what verifying costs on this device'
      + `${verifyCost(r)}.</p>`,
    '<p class="numbers">各列的含义。<b>课上的公式</b>：τ/(1 + c)，c 是一步起草的开销（链是 E(α, γ)/(γc + 1)，其中 c 是一次草稿调用的），把验证当作免费。'
      + '<b>T(n)/T(1)</b>：本次运行自己的平均验证调用除以自己的平均单 token 调用。<b>按实测曲线</b>：τ/(T(n)/T(1) + c)（链用 E(α, γ) 代替 τ）。'
      + '<b>实测</b>：目标模型单独解码同样提示词的墙钟时间除以该方法的墙钟时间。'
      + '<b>这台设备的极限</b>：同样的 τ 和起草，每次验证调用按 max(权重 / 带宽, k · FLOPs / 峰值) 计，带宽和峰值都是这里实测的，每次调用都不比这里实际花的更贵，也绝不低于实测一列（这台设备做到过的，它就做得到）：与实测一列的差距属于内核和解码自己的工作，低于完美草稿的部分属于草稿。'
      + '曲线一列用的正是这次运行花掉的调用时间，所以它与实测一列按构造就一致（差别只在模型调用之外花的时间）：'
      + '它证实的是“调用时间解释了墙钟时间”，而不是“公式预测了墙钟时间”。课上的公式与实测之间的差距，就是这台设备上验证的代价'
      + `${verifyCost(r)}。</p>`)
    + placementNote(r, v);
}

/** The §6 table on WebGPU: where its drafts ran, and the other placement to compare ('' elsewhere). */
export function placementNote(r, v) {
  if (v?.backend !== 'wgpu') return '';
  return r.drafts_on ? tr(`<p class="numbers gpu-methods">On WebGPU every draft model of the table (A, B, Medusa’s heads, EAGLE) ran on the CPU (${escapeHtml(r.drafts_on)}) beside the target on the GPU, reading the features its calls read back: c is a draft’s CPU time over the target’s GPU step. Put the drafts on the GPU to see each draft call pay a GPU call’s fixed cost.</p>`,
    `<p class="numbers gpu-methods">在 WebGPU 上，表里的每个草稿模型（A、B、Medusa 的头、EAGLE）都在 CPU（${escapeHtml(r.drafts_on)}）上、GPU 上的目标模型旁边运行，读取目标模型调用读回的特征：c 是草稿的 CPU 时间比目标模型的一步 GPU 时间。把草稿放到 GPU 上，就能看到每次草稿调用都付一次 GPU 调用的固定开销。</p>`)
    : tr('<p class="numbers gpu-methods">On WebGPU every row ran on the GPU, its drafts included, so that the rows are compared at one placement: a draft call here pays a GPU call’s fixed cost as the target’s does. Put the drafts on the CPU to see them beside the GPU target.</p>',
      '<p class="numbers gpu-methods">在 WebGPU 上，每一行（草稿也一样）都在 GPU 上运行，各行在同一种放置下比较：这里每次草稿调用都像目标模型一样付一次 GPU 调用的固定开销。把草稿放到 CPU 上，就能看到它们在 GPU 目标模型旁边运行。</p>');
}

/** What verifying cost in this run, from its own rows: the largest T(n)/T(1), and where. */
function verifyCost(r) {
  const rows = r.rows.filter((x) => Number.isFinite(x.verify_over_target));
  if (!rows.length) return '';
  const worst = rows.reduce((a, b) => (b.verify_over_target > a.verify_over_target ? b : a));
  return tr(` (here T(n)/T(1) is up to ${fmt(worst.verify_over_target, 2)}, for ${escapeHtml(worst.short)})`,
    `（这里 T(n)/T(1) 最高 ${fmt(worst.verify_over_target, 2)}，${escapeHtml(worst.short)}）`);
}
const byKind = (rows) => rows.map((k) => `${kindName(k.kind)} ${fmt(k.alpha, 2)}${tr(` (${k.tested})`, `（${k.tested}）`)}`).join(tr(', ', '，'));

function acceptanceHtml(rows) {
  return tr('<p class="numbers">Acceptance at every position of whole held-out worlds (teacher-forced): sampling β = Σ min(p, q), greedy: the draft’s argmax is the target’s.</p>',
    '<p class="numbers">在留出的整个世界的每个位置上的接受率（teacher forcing）：采样时 β = Σ min(p, q)，贪心时看草稿的 argmax 是否就是目标模型的。</p>')
    + table([tr(['next token is', 'positions', 'β draft A', 'β draft B', 'argmax agrees A', 'argmax agrees B'],
      ['下一个 token 是', '位置数', 'β 草稿 A', 'β 草稿 B', 'argmax 一致 A', 'argmax 一致 B'])].concat(rows.map((k) => [
      kindName(k.kind), k.positions, fmt(k.beta[0]), fmt(k.beta[1]), fmt(k.greedy[0]), fmt(k.greedy[1])])), 'dec-kinds');
}

function greedyHtml(reports, v) {
  const rows = reports.map((r) => [r.method, `${r.identical}/${r.prompts}`, fmt(r.tokens_per_call), r.formula_tokens_per_call == null ? '—' : fmt(r.formula_tokens_per_call),
    fmt(r.alpha), `${r.target_calls} (${r.reference_calls})`, fmt(r.verified_nodes_per_call, 2)]);
  return tr('<p class="numbers">Greedy speculative decoding against the target’s own greedy output. The formula E(α, γ) uses the measured α and assumes every position is accepted independently; '
    + 'the hard positions (the asked name, the answer) come every 4 tokens, so long runs are rarer than it thinks (lecture §3.3).'
    + (v.experiment === 'greedy' ? ' One row for each γ of the lecture’s, and one for the slider’s γ when it is not among them.' : '') + '</p>',
  '<p class="numbers">贪心推测解码，与目标模型自己的贪心输出对照。公式 E(α, γ) 用实测的 α，并假设每个位置独立地被接受；'
    + '难的位置（问到的名字、答案）每 4 个 token 出现一次，所以长串的接受比公式以为的少（课上 §3.3）。'
    + (v.experiment === 'greedy' ? '课上用的每个 γ 各一行；滑块的 γ 不在其中时再加一行。' : '') + '</p>')
    + table([tr(['method', 'identical', 'tokens / call', 'E(α, γ)', 'measured α', 'target calls (alone)', 'verified nodes / call'],
      ['方法', '一致', 'token / 调用', 'E(α, γ)', '实测 α', '目标模型调用（单独解码）', '验证节点 / 调用'])].concat(rows), 'dec-greedy')
    + `<p class="numbers">${tr('α by kind of the output token, last run', '按输出 token 类别的 α，最后一次运行')}${tr(': ', '：')}${byKind(reports[reports.length - 1].by_kind)}</p>`;
}

function sampleHtml(r) {
  const ok = r.p_value >= 0.01;
  const st = (o) => [o.sequences, fmt(o.mean_length, 2), pct(o.answer_accuracy), fmt(o.mean_log_p)];
  const p = `<b class="${ok ? 'ok' : 'bad'}">p = ${fmt(r.p_value)}</b>`;
  return tr(`<p class="numbers">${escapeHtml(r.method)}: <b>${fmt(r.tokens_per_call)}</b> tokens per target call, measured α ${fmt(r.alpha)}.
    Calibration test (is every emitted token distributed as the target’s p given what came before?): χ² ${fmt(r.chi_square, 2)} with ${r.df} df,
    ${p} — ${ok ? 'consistent with the target’s own sampling' : 'the output is not the target’s (p < 0.01)'};
    the same test on the target’s own samples: p = ${fmt(r.target_p_value)}.</p>`,
  `<p class="numbers">${escapeHtml(r.method)}：每次目标模型调用 <b>${fmt(r.tokens_per_call)}</b> 个 token，实测 α ${fmt(r.alpha)}。
    校准检验（每个输出的 token 是否按目标模型在前文条件下的 p 分布？）：χ² ${fmt(r.chi_square, 2)}，自由度 ${r.df}，
    ${p}——${ok ? '与目标模型自己采样一致' : '输出不是目标模型的分布（p < 0.01）'}；
    同样的检验用在目标模型自己的样本上：p = ${fmt(r.target_p_value)}。</p>`)
    + table([tr(['', 'sequences', 'mean length', 'answers right', 'mean ln p'], ['', '序列数', '平均长度', '答对', '平均 ln p']),
      [tr('speculative', '推测解码'), ...st(r.speculative)], [tr('target alone', '目标模型单独'), ...st(r.target)]], 'dec-sample')
    + `<p class="numbers">${tr('α by kind of the output token', '按输出 token 类别的 α')}${tr(': ', '：')}${byKind(r.by_kind)}</p>`;
}

function stochasticHtml(reports) {
  return tr('<p class="numbers">Children sampled from draft B (T = 1). Naive sampling draws from p and hopes to land in the tree; MSS tests each child in turn and hands the residual on. '
    + 'Top-k children verified as if sampled look good and are biased: the last column is its exact one-step distortion.</p>',
  '<p class="numbers">孩子从草稿 B 采样（T = 1）。朴素采样从 p 抽一个，指望它落在树里；MSS 依次检验每个孩子，把剩余分布传下去。'
    + '把 top-k 孩子当作采样来验证，看起来好，却有偏：最后一列是它精确的单步失真。</p>')
    + table([tr(['method', 'tokens / call', 'accepted drafts / call', 'verified nodes / call', 'calibration p', 'exact one-step TV'],
      ['方法', 'token / 调用', '被接受的草稿 / 调用', '验证节点 / 调用', '校准 p', '精确单步 TV'])].concat(reports.map((r) => [
      r.method, fmt(r.tokens_per_call), fmt(r.accepted_per_call), fmt(r.verified_nodes_per_call, 2), fmt(r.p_value), r.distortion != null ? fmt(r.distortion) : (r.verify === 'naive' ? tr('0 (a draw from p)', '0（从 p 抽取）') : tr('0 (Theorem 4.2)', '0（定理 4.2）'))])), 'dec-stochastic');
}

/** A measured speedup below 1 that its own spread (IQR over the groups) cannot reach 1 from:
 * "slower than plain decoding" is a finding only then (noise.js `beyond`). */
const surelySlower = (r) => r.measured_speedup < 1 && beyond(1, 0, r.measured_speedup, r.measured_speedup_iqr ?? null);

/** Why a measured speedup is below 1, in the student's words, from the measured numbers; where the
 * spread reaches 1, that this run cannot tell it from plain decoding. */
export function slowerHtml(r) {
  if (!surelySlower(r)) {
    const iqr = r.measured_speedup_iqr;
    // Which test held it back: the spread (half the IQR reaches 1), or the smallest difference a
    // sentence states (2%; 5% with no spread known).
    const spreadReaches = iqr > 0 && 1 - r.measured_speedup <= iqr / 2;
    const within = spreadReaches ? tr(`within this run’s spread (IQR ${fmt(iqr, 2)})`, `在这次运行的波动（IQR ${fmt(iqr, 2)}）之内`)
      : tr(`within ${iqr == null ? 5 : 2}% of it`, `和 1 相差不到 ${iqr == null ? 5 : 2}%`);
    return tr(`<p class="numbers"><b>About as fast as plain decoding.</b> ${fmt(r.measured_speedup, 2)}× is below 1, but ${within}: measure again, on a quieter device or with more prompts, before calling it slower.</p>`,
      `<p class="numbers"><b>和普通解码差不多快。</b>${fmt(r.measured_speedup, 2)}× 低于 1，但${within}：先在更空闲的设备上或用更多提示词再测一次，再说它更慢。</p>`);
  }
  const [drafting, look] = [r.draft_calls_per_step * r.c, r.shape && modelFree(r.shape)]; // look: no model, a look-up
  const cost = r.verify_over_target + drafting;
  const reasons = [];
  if (drafting >= 0.5) {
    reasons.push(tr(`the ${look ? 'look-up' : 'draft'} is not cheap: ${fmt(r.draft_calls_per_step, 1)} ${look ? 'look-ups' : 'draft calls'} at c = ${fmt(r.c, 2)} cost ${fmt(drafting, 2)} target calls a step`,
      `${look ? '查找' : '草稿'}并不便宜：${fmt(r.draft_calls_per_step, 1)} 次${look ? '查找' : '草稿调用'}，c = ${fmt(r.c, 2)}，每步就花掉 ${fmt(drafting, 2)} 次目标调用的时间`));
  }
  if (r.verify_over_target >= 1.5) {
    reasons.push(tr(`verification is not free on this device: one verify call costs ${fmt(r.verify_over_target, 2)}× a one-token call`,
      `在这台设备上验证并不免费：一次验证调用是一个 token 调用的 ${fmt(r.verify_over_target, 2)} 倍`));
  }
  if (!reasons.length) {
    reasons.push(tr(`too few tokens are accepted: τ = ${fmt(r.tokens_per_call, 2)} tokens a step`, `被接受的 token 太少：每步 τ = ${fmt(r.tokens_per_call, 2)} 个 token`));
  }
  return tr(`<p class="numbers"><b>Slower than plain decoding.</b> A step costs T(n)/T(1) + d·c = ${fmt(r.verify_over_target, 2)} + ${fmt(drafting, 2)} = ${fmt(cost, 2)} one-token target calls and yields τ = ${fmt(r.tokens_per_call, 2)} tokens: ${reasons.join('; and ')}.</p>`,
    `<p class="numbers"><b>比普通解码还慢。</b>一步花 T(n)/T(1) + d·c = ${fmt(r.verify_over_target, 2)} + ${fmt(drafting, 2)} = ${fmt(cost, 2)} 次单 token 目标调用，只得到 τ = ${fmt(r.tokens_per_call, 2)} 个 token：${reasons.join('；而且')}。</p>`);
}

/** The speedup at this device's limit, as a table row (none at batch > 1 or offloaded). */
const limitRow = (r, name) => (r.limit_speedup == null ? [] : [[name, `${fmt(r.limit_speedup, 2)}×`]]);

function speedupHtml(r) {
  const formula = r.predicted_speedup == null ? '—' : `${fmt(r.predicted_speedup, 2)}×`;
  const lookup = modelFree(r.shape);
  // A chain: the lecture's E(α, γ) over the measured cost; a tree has no E, so its measured τ.
  const curve = r.predicted_speedup == null ? 'τ/(T(n)/T(1) + d·c)' : 'E(α, γ)/(T(γ+1)/T(1) + γc)';
  const target = r.target_width > 1 ? tr(`the target ×${r.target_width}`, `目标模型 ×${r.target_width}`) : tr('the trained target', '训练好的目标模型');
  const rows = tr([['', 'measured'], ['α (acceptance)', fmt(r.alpha)], ['τ (tokens per target call)', fmt(r.tokens_per_call, 2)],
    [lookup ? 'c (look-up / target call)' : 'c (draft call / target call)', fmt(r.c)], ['T(n)/T(1) (verify call / one-token call)', fmt(r.verify_over_target, 2)],
    ['lecture’s formula E(α, γ)/(γc + 1)', formula], [`on the measured curve ${curve}`, `${fmt(r.predicted_speedup_curve, 2)}×`],
    ['wall clock (IQR over groups)', `<b>${fmt(r.measured_speedup, 2)}×</b>${spreadHtml(r)}`], ...limitRow(r, 'at this device’s limit (τ and drafting at max(weights / bandwidth, k · FLOPs / peak))')],
  [['', '实测'], ['α（接受率）', fmt(r.alpha)], ['τ（每次目标调用的 token 数）', fmt(r.tokens_per_call, 2)],
    [lookup ? 'c（查找 / 目标调用）' : 'c（草稿调用 / 目标调用）', fmt(r.c)], ['T(n)/T(1)（验证调用 / 单 token 调用）', fmt(r.verify_over_target, 2)],
    ['课上的公式 E(α, γ)/(γc + 1)', formula], [`按实测曲线 ${curve}`, `${fmt(r.predicted_speedup_curve, 2)}×`],
    ['墙钟（各组的 IQR）', `<b>${fmt(r.measured_speedup, 2)}×</b>${spreadHtml(r)}`], ...limitRow(r, '这台设备的极限（同样的 τ 和起草，调用按 max(权重 / 带宽, k · FLOPs / 峰值) 计）')]);
  return tr(`<p class="numbers">Measured here on <b>${r.backend}</b>, ${escapeHtml(r.method)} on ${target}, ${r.prompts} prompts, batch ${r.batch}:
    ${fmt(r.draft_call_us, 0)} µs ${lookup ? 'a look-up' : 'a draft call'}, ${fmt(r.target_call_us, 0)} µs a one-token target call, ${fmt(r.verify_call_us, 0)} µs a verify call;
    ${fmt(r.plain_us / 1000, 1)} ms plain, ${fmt(r.speculative_us / 1000, 1)} ms speculative.</p>`,
  `<p class="numbers">在这里的 <b>${r.backend}</b> 上实测，${escapeHtml(r.method)}，${target}，${r.prompts} 个提示词，批 ${r.batch}：
    ${lookup ? '查找' : '草稿调用'} ${fmt(r.draft_call_us, 0)} µs，单 token 目标调用 ${fmt(r.target_call_us, 0)} µs，验证调用 ${fmt(r.verify_call_us, 0)} µs；
    普通解码 ${fmt(r.plain_us / 1000, 1)} ms，推测解码 ${fmt(r.speculative_us / 1000, 1)} ms。</p>`)
    + table(rows, 'dec-speedup') + crossingHtml(r.transfer, r.target_call_us) + draftsHtml(r)
    + noisyHtml([r]) + (r.measured_speedup < 1 ? slowerHtml(r) : gapHtml(r));
}

/** Demo 5 answered by measurement: every γ's speedup, the best measured γ beside the formula's. */
function sweepHtml(r) {
  const x = (v) => (v == null ? '—' : `${fmt(v, 2)}×`);
  const rows = r.rows.map((w, i) => [chosenGamma(r, w.gamma), fmt(w.alpha), fmt(w.tokens_per_call, 2), fmt(w.c), fmt(w.verify_over_target, 2), x(r.formula_at[i]), x(w.predicted_speedup_curve),
    `<b>${fmt(w.measured_speedup, 2)}×</b>${spreadHtml(w)}`, x(w.limit_speedup)]);
  const head = tr(['γ', 'α', 'τ', 'c', 'T(n)/T(1)', 'E(α, γ)/(γc + 1), mean α, c', 'measured curve', 'wall clock', 'this device’s limit'], ['γ', 'α', 'τ', 'c', 'T(n)/T(1)', 'E(α, γ)/(γc + 1)，平均 α、c', '实测曲线', '墙钟', '这台设备的极限']);
  const best = r.rows.find((w) => w.gamma === r.best_gamma);
  const target = r.target_width > 1 ? tr(`the target ×${r.target_width}`, `目标模型 ×${r.target_width}`) : tr('the trained target', '训练好的目标模型');
  let formula = '';
  if (r.formula_gamma === 0) {
    formula = tr(`The lecture’s formula, with the measured α ${fmt(r.alpha)} and c ${fmt(r.c)}, says no γ pays: plain decoding (γ 0) is its optimum.`,
      `课上的公式用实测的 α ${fmt(r.alpha)} 和 c ${fmt(r.c)}，认为没有哪个 γ 划算：它的最优是普通解码（γ 0）。`);
  } else if (r.formula_gamma != null) {
    formula = tr(`The lecture’s formula, with the measured α ${fmt(r.alpha)} and c ${fmt(r.c)}, picks γ ${r.formula_gamma} and promises ${fmt(r.formula_speedup, 2)}× — it takes verification to be free.`,
      `课上的公式用实测的 α ${fmt(r.alpha)} 和 c ${fmt(r.c)}，选 γ ${r.formula_gamma}，承诺 ${fmt(r.formula_speedup, 2)}×——它假设验证是免费的。`);
  }
  // The trained target is as small as its drafts: say why no γ pays and where the lecture's regime is.
  const [cost, verify] = [r.c >= 1.1 ? ['more than', '比一次目标调用还贵'] : r.c >= 0.7 ? ['nearly', '几乎和一次目标调用一样贵'] : ['a large part of', '占一次目标调用的一大部分'], best.verify_over_target >= 1.25];
  const tiny = r.target_width === 1 && r.best_speedup < 1 && r.shape === 'chain' && !r.rows[0].drafts_on
    ? tr(`<p class="numbers">Why: the trained target has 85 k parameters and sits in the CPU’s cache, so a draft call costs ${cost[0]} what a target call costs (c ≈ ${fmt(r.c, 2)}, where the lecture’s c is 0.05)${verify ? ` and a verify call is not free either (${fmt(best.verify_over_target, 2)}× a one-token call at γ ${best.gamma})` : ''}. Widen the target (the “Demo 5, measured” preset, ×16) to see the lecture’s regime: a memory-bound target and a draft a hundred times cheaper.</p>`,
      `<p class="numbers">原因：训练好的目标模型只有 85 k 个参数，装得进 CPU 的缓存，所以一次草稿调用${cost[1]}（c ≈ ${fmt(r.c, 2)}，课上的 c 是 0.05）${verify ? `，验证调用也不免费（γ ${best.gamma} 时是一个 token 调用的 ${fmt(best.verify_over_target, 2)} 倍）` : ''}。把目标模型加宽（“演示 5，实测”预设，×16）就能看到课上的情形：目标模型受访存限制，草稿便宜一百倍。</p>`)
    : '';
  const summary = tr(`<p class="numbers">${escapeHtml(r.method)}. On <b>${r.rows[0].backend}</b>, ${target}, batch ${r.batch}: the best measured γ is <b>${r.best_gamma}</b>, at <b>${fmt(r.best_speedup, 2)}×</b>;
    the measured cost curve ranks γ ${r.curve_gamma} first (${fmt(r.curve_speedup, 2)}×). ${formula}</p>`,
  `<p class="numbers">${escapeHtml(r.method)}。在 <b>${r.rows[0].backend}</b> 上，${target}，批 ${r.batch}：实测最好的 γ 是 <b>${r.best_gamma}</b>，加速 <b>${fmt(r.best_speedup, 2)}×</b>；
    按实测开销曲线排第一的是 γ ${r.curve_gamma}（${fmt(r.curve_speedup, 2)}×）。${formula}</p>`);
  return summary + sweepChoiceHtml(r) + table([head].concat(rows), 'dec-sweep') + crossingHtml(r.rows[0].transfer, r.rows[0].target_call_us) + draftsHtml(r.rows[0]) + noisyHtml(r.rows) + (r.best_speedup < 1 ? slowerHtml(best) + tiny : '');
}

/** Why the wall clock gives less than the lecture's formula: the formula takes a verify call to cost
 * one token's. */
function gapHtml(r) {
  if (r.predicted_speedup == null || r.predicted_speedup <= r.measured_speedup * 1.15) return '';
  return tr(`<p class="numbers">The lecture’s formula assumes a verify call costs what a one-token call costs (T(γ+1)/T(1) = 1, memory-bound all the way).
    On this device it costs ${fmt(r.verify_over_target, 2)}×, so the wall clock gives ${fmt(r.measured_speedup, 2)}× rather than ${fmt(r.predicted_speedup, 2)}×;
    the formula on the measured curve, which puts that cost in, says ${fmt(r.predicted_speedup_curve, 2)}×.</p>`,
  `<p class="numbers">课上的公式假设一次验证调用和一个 token 的调用一样贵（T(γ+1)/T(1) = 1，一直受访存限制）。
    在这台设备上它是 ${fmt(r.verify_over_target, 2)} 倍，所以墙钟给出 ${fmt(r.measured_speedup, 2)}×，而不是 ${fmt(r.predicted_speedup, 2)}×；
    把这个开销算进去的实测曲线公式给出 ${fmt(r.predicted_speedup_curve, 2)}×。</p>`);
}

export default {
  name: 'decoding',
  // It runs the trained models: it mounts once their engine is loaded (app.js, specdec-widget.js).
  models: true,
  title: 'Speculative decoding on LikesWorld: chains, trees, and the wall clock',
  intro: 'The trained target and drafts of the LikesWorld widget, decoding together: the draft proposes, the target verifies everything in one call. '
    + 'Greedy outputs are identical to the target’s own, sampled ones are distributed as the target’s, and the target is called fewer times. '
    + 'Every experiment runs in a worker on the backend you pick; results are measured in this browser.',
  title_zh: '在 LikesWorld 上做推测解码：链、树与墙钟时间',
  intro_zh: 'LikesWorld 组件里训练好的目标模型和草稿模型一起解码：草稿提出，目标模型一次调用验证全部。贪心输出与目标模型自己的逐字相同，采样输出与目标模型同分布，而目标模型被调用的次数更少。每个实验都在后台的 Web Worker 里、在你选的后端上运行；结果是在这个浏览器里测的。',
  // Lecture §3 (demos 03.1–03.3) and §4.4–4.5 (demos 04.3, 04.5) at the lecture's sizes.
  presets: [
    { label: 'Demo 03.1 · acceptance by kind', label_zh: '演示 03.1 · 按 token 类别的接受率', values: { experiment: 'acceptance', prompts: '200' } },
    { label: 'Demo 03.2 · greedy chains, 200 prompts', label_zh: '演示 03.2 · 贪心链，200 个提示词', values: { experiment: 'greedy', draft: 'b', prompts: '200' } },
    { label: 'Demo 03.3 · sampling, 200 × 3', label_zh: '演示 03.3 · 采样，200 × 3', values: { experiment: 'sample', draft: 'b', gamma: 4, prompts: '200', repeats: 3, variant: 'correct' } },
    { label: 'Demo 04.3 · greedy trees, 100 prompts', label_zh: '演示 04.3 · 贪心树，100 个提示词', values: { experiment: 'tree', prompts: '100' } },
    { label: 'Demo 04.5 · naive vs MSS ⟨1,1,3,1⟩', label_zh: '演示 04.5 · 朴素采样 vs MSS ⟨1,1,3,1⟩', values: { experiment: 'stochastic', config: '<1,1,3,1>', prompts: '100' } },
    { label: 'Speedup on the widened target (×16, draft A, γ 2)', label_zh: '加宽的目标模型上的加速比（×16，草稿 A，γ 2）',
      values: { experiment: 'speedup', target_width: '16', draft: 'a', gamma: 2, prompts: '10', batch: '1', shape: 'chain' },
      note: 'a target that reads 76 MB a step; the report measures what verifying γ + 1 tokens costs on this device, T(γ+1)/T(1), and the draft’s c', note_zh: '每步读 76 MB 的目标模型；报告实测在这台设备上验证 γ + 1 个 token 的代价 T(γ+1)/T(1) 以及草稿的 c' },
    { label: 'Demo 5, measured: the best γ on the ×16 target', label_zh: '演示 5，实测：×16 目标模型上最好的 γ',
      values: { experiment: 'sweep', target_width: '16', draft: 'b', gammas: '1,2,3,4,6', prompts: '10', batch: '1', shape: 'chain' },
      note: 'every γ timed against the target alone; the best measured γ beside the formula’s', note_zh: '每个 γ 都与目标模型单独解码对比计时；实测最好的 γ 与公式的并列' },
    { label: 'Speculation under load: speedup against the batch (×16, chain of 3)', label_zh: '负载下的推测解码：加速比随批大小的变化（×16，长 3 的链）',
      values: { experiment: 'load', target_width: '16', draft: 'b', gamma: 3, batches: '1,2,4,8,16,32', prompts: '10', shape: 'chain' },
      note: 'the EAGLE-3 paper’s serving figures drawn beside it; each batch decodes at least one whole batch, so batch 32 decodes 32 prompts', note_zh: '旁边画出 EAGLE-3 论文的服务系统数据；每个批大小至少解码一整批，所以批 32 要解码 32 个提示词' },
    { label: 'WebGPU: the ×16 target on the GPU, draft B on the CPU', label_zh: 'WebGPU：×16 目标模型在 GPU 上，草稿 B 在 CPU 上',
      values: { experiment: 'speedup', backend: 'wgpu', drafts: 'cpu', weights: 'gpu', target_width: '16', draft: 'b', gamma: 3, prompts: '10', batch: '1', shape: 'chain' },
      note: 'c is a draft’s CPU time over the target’s GPU step; run it again with the drafts on the GPU, where every call pays the same fixed cost', note_zh: 'c 是草稿的 CPU 时间比目标模型的一步 GPU 时间；把草稿放到 GPU 上再跑一次，那里每次调用都付同样的固定开销' },
    { label: '§4.6 · offloading: the ×16 target’s weights cross to the GPU every call', label_zh: '§4.6 · 权重卸载：×16 目标模型的权重每次调用都传到 GPU',
      values: { experiment: 'speedup', backend: 'wgpu', weights: 'host', target_width: '16', draft: 'b', gamma: 4, prompts: '10', batch: '1', shape: 'chain' },
      note: 'every target call first writes 76 MB into the GPU’s buffers; run it again with the weights on the GPU to compare', note_zh: '每次目标调用前先把 76 MB 写进 GPU 的缓冲区；把权重放回 GPU 再跑一次来对比' },
    { label: 'Prompt Lookup on the ×16 target', label_zh: '×16 目标模型上的 Prompt Lookup',
      values: { experiment: 'speedup', target_width: '16', gamma: 4, prompts: '10', batch: '1', shape: 'prompt-lookup' },
      note: 'no draft model: the look-up costs microseconds (c ≈ 0)', note_zh: '没有草稿模型：查找只花几微秒（c ≈ 0）' },
    { label: '§5.2 · EAGLE-2’s dynamic tree, 16 nodes', label_zh: '§5.2 · EAGLE-2 的动态树，16 个节点',
      values: { experiment: 'hidden', method: 'eagle-2', budget: '16', depth: 10, verify: 'greedy', prompts: '20' },
      note: 'a one-layer draft on the target’s own features; drawn beside EAGLE’s static tree', note_zh: '读目标模型自身特征的单层草稿；与 EAGLE 的静态树并排画出' },
    { label: '§5.1 · Medusa’s four heads', label_zh: '§5.1 · Medusa 的四个头',
      values: { experiment: 'hidden', method: 'medusa', budget: '16', heads: 4, verify: 'greedy', prompts: '20' } },
    { label: '§4.7 · MSS on a sampled dynamic tree', label_zh: '§4.7 · 抽样动态树上的 MSS',
      values: { experiment: 'hidden', method: 'eagle-2', budget: '16', depth: 10, verify: 'mss', prompts: '50', seed: 1 },
      note: 'children drawn from the draft: the calibration test passes; pick “top-k children, MSS (biased)” to see it fail', note_zh: '孩子从草稿抽样：校准检验通过；选“top-k 孩子，MSS（有偏）”看它失败' },
    { label: '§6 measured · every method on the ×16 target', label_zh: '§6 实测 · ×16 目标模型上的每种方法',
      values: { experiment: 'methods', target_width: '16', budget: '8', prompts: '10' },
      note: 'chains, a tree, the suffix index, Medusa, EAGLE, EAGLE-2 and EAGLE-2 + training-time test on one wall-clock axis; 8 nodes, since on a CPU every verified token adds to the call: the report gives this device’s T(k)/T(1)', note_zh: '链、树、后缀索引、Medusa、EAGLE、EAGLE-2 与 EAGLE-2 + 训练时测试，放在同一条墙钟时间轴上；8 个节点，因为在 CPU 上每多验证一个 token 调用就更慢：报告给出这台设备的 T(k)/T(1)' },
    { label: '§6 measured · every method at its size for this device (×16)', label_zh: '§6 实测 · 每种方法用这台设备上最好的规模（×16）',
      values: { experiment: 'methods', target_width: '16', budget: 'auto', prompts: '10' },
      note: 'T(k), each draft’s c and acceptance vector measured first, then the hardware-aware choice sizes every row', note_zh: '先实测 T(k)、每个草稿的 c 和接受向量，再由硬件感知的选择定出每一行的规模' },
  ],
  controls: [
    declare({ key: 'experiment', label: 'experiment', label_zh: '实验', type: 'select', value: 'greedy' }, menuOptions('decoding.experiment')),
    declare({ key: 'backend', label: 'backend', label_zh: '后端', type: 'select', value: 'flex' }, backendOptions),
    weightsControl(clocked),
    draftsControl(drafted),
    declare({ key: 'target_width', label: 'target width', label_zh: '目标模型宽度', type: 'select', value: '1' }, widthOptions),
    declare({ key: 'draft', label: 'draft', label_zh: '草稿', type: 'select', value: 'b', showIf: oneDraft }, menuOptions('decoding.draft')),
    declare({ key: 'gamma', label: 'γ', label_zh: 'γ', type: 'range', step: 1, showIf: (s) => uses('greedy', 'sample')(s) || (uses('speedup', 'load')(s) && s.shape !== 'tree') || (s.experiment === 'step' && s.stepkind === 'chain') }, { ...range('gamma'), ...byDefault('gamma') }),
    declare({ key: 'prompts', label: 'prompts', label_zh: '提示词数', type: 'select', value: '20', showIf: (s) => s.experiment !== 'step' }, menuOptions('decoding.prompts')),
    // The page offers fewer repeats than the core allows (`page_repeats`).
    declare({ key: 'repeats', label: 'samples per prompt', label_zh: '每个提示词采样次数', type: 'range', step: 1, value: 1, showIf: uses('sample') }, range('page_repeats')),
    declare({ key: 'variant', label: 'verification rule', label_zh: '验证规则', type: 'select', value: 'correct', showIf: (s) => uses('sample')(s) || (s.experiment === 'step' && s.stepkind === 'chain') }, variantOptions),
    declare({ key: 'stepkind', label: 'run', label_zh: '运行', type: 'select', value: 'chain', showIf: uses('step') }, menuOptions('stepkind')),
    declare({ key: 'shape', label: 'drafts', label_zh: '草稿形状', type: 'select', value: 'chain', showIf: (s) => timed(s) || load(s),
      // A static tree has no γ to sweep; a drafter without a model follows one request (batch 1).
      optionOff: (v, s) => (s.experiment === 'sweep' && v === 'tree') || ((Number(s.batch) > 1 || load(s)) && modelFree(v)) }, menuOptions('proposing')),
    { key: 'gammas', label: 'γ values', label_zh: 'γ 取值', type: 'text', list: true, value: '1,2,3,4,6', showIf: uses('sweep') },
    // A list of batches is short by nature: its own small cap keeps the page's URL short (widget.js).
    declare({ key: 'batches', label: 'batches', label_zh: '批大小列表', type: 'text', cap: 40, list: true, showIf: load }, byDefault('batches')),
    declare({ key: 'batch', label: 'batch', label_zh: '批大小', type: 'select', value: '1', showIf: timed, optionOff: (v, s) => free(s) && v !== '1' }, menuOptions('batch')),
    { key: 'config', label: 'tree ⟨k₁,…⟩', label_zh: '树 ⟨k₁,…⟩', type: 'text', value: '<2,2,1,1>', showIf: (s) => uses('tree', 'stochastic')(s) || (uses('speedup', 'load')(s) && s.shape === 'tree') || (s.experiment === 'step' && s.stepkind === 'tree') },
    declare({ key: 'children', label: 'children', label_zh: '孩子节点', type: 'select', value: 'without-replacement', showIf: uses('stochastic') }, menuOptions('decoding.children')),
    declare({ key: 'method', label: 'draft on the hidden states', label_zh: '读隐藏状态的草稿', type: 'select', value: 'eagle-2', showIf: hidden }, menuOptions('method')),
    declare({ key: 'budget', label: 'node budget', label_zh: '节点预算', type: 'select', showIf: uses('hidden', 'methods'), optionOff: budgetOff }, budgetOptions),
    declare({ key: 'depth', label: 'depth', label_zh: '深度', type: 'range', step: 1, showIf: (s) => hidden(s) && !s.method.startsWith('medusa') }, { ...range('depth'), ...byDefault('depth') }),
    declare({ key: 'heads', label: 'Medusa heads', label_zh: 'Medusa 头数', type: 'range', step: 1, showIf: (s) => hidden(s) && s.method.startsWith('medusa') }, { ...range('heads'), ...byDefault('heads') }),
    declare({ key: 'verify', label: 'verification', label_zh: '验证', type: 'select', value: 'greedy', showIf: hidden,
      // What each draft's proposals can take is the core's rule (sampled children need a tree
      // grown per draw: EAGLE-2's), handed over by presets.
      optionOff: (v, s) => !(declarations().decoding.verifications[s.method] ?? []).includes(v) }, menuOptions('verification')),
    declare({ key: 'seed', label: 'seed', label_zh: '种子', type: 'number', step: 1, value: 0, showIf: uses('sample', 'stochastic', 'step', 'hidden') }, seedRange),
  ],
  cost,
  render(s) {
    const wide = Number(s.target_width) > 1
      ? `<p class="note dec-width">${tr(`The target here is the trained target widened ×${s.target_width}: the same model, made wider so that each step reads as many bytes as a real model would. Its answers are the trained target’s (the widening changes no output), only its cost changes.`,
        `这里的目标模型是训练好的目标模型加宽 ×${s.target_width}：同一个模型，变宽了，让每一步读的字节和真实模型一样多。它的回答就是训练好的目标模型的（加宽不改变任何输出），变的只是开销。`)}</p>`
      : '<p class="note dec-width" hidden></p>';
    // A wall-clock experiment's report says whether anything else ran while it was timed.
    return [runBar('dec'), '<p class="note dec-note" hidden></p>', wide, '<div class="dec-result"></div>', '<p class="numbers dec-during" hidden></p>',
      '<div class="plots dec-plot"></div>'];
  },
  after(s, ui, view) {
    const result = view.querySelector('.dec-result');
    runInWorker(ui, view, 'dec', 'likesworld_decode', { ...params(s), figure_width: ui.figureWidth() }, 'decode', (v) => {
      view.querySelector('.dec-plot').innerHTML = v.svg;
      ui.root.dataset.targetWidth = String(Number(s.target_width));
      const r = v.report;
      if (v.experiment === 'step') {
        let i = 0;
        const show = () => {
          result.innerHTML = `<div class="dec-step" tabindex="0" role="group" aria-label="${tr('Step-through: left and right arrow keys move between steps', '逐步查看：左右方向键切换步骤')}">
            <p class="numbers">${tr(`${escapeHtml(r.method)}, seed ${s.seed}: ${r.stats.tokens} tokens in ${r.stats.target_calls} target calls.`,
    `${escapeHtml(r.method)}，种子 ${s.seed}：${r.stats.target_calls} 次目标模型调用得到 ${r.stats.tokens} 个 token。`)}
            <button type="button" class="dec-prev">${tr('◀ previous', '◀ 上一步')}</button> <button type="button" class="dec-next">${tr('next ▶', '下一步 ▶')}</button></p>${stepHtml(v, i)}</div>`;
          const box = result.querySelector('.dec-step');
          result.querySelector('.dec-prev').onclick = ui.inLang(() => { i = Math.max(0, i - 1); show(); result.querySelector('.dec-step').focus(); });
          result.querySelector('.dec-next').onclick = ui.inLang(() => { i = Math.min(v.steps.length - 1, i + 1); show(); result.querySelector('.dec-step').focus(); });
          box.onkeydown = ui.inLang((ev) => {
            if (ev.key === 'ArrowRight') { i = Math.min(v.steps.length - 1, i + 1); show(); result.querySelector('.dec-step').focus(); ev.preventDefault(); }
            if (ev.key === 'ArrowLeft') { i = Math.max(0, i - 1); show(); result.querySelector('.dec-step').focus(); ev.preventDefault(); }
          });
          ui.root.dataset.step = String(i + 1);
        };
        show();
      } else {
        result.innerHTML = {
          acceptance: acceptanceHtml, greedy: greedyHtml, sample: sampleHtml, tree: greedyHtml, stochastic: stochasticHtml, speedup: speedupHtml, sweep: sweepHtml, load: loadHtml,
          hidden: hiddenHtml, methods: methodsHtml,
        }[v.experiment](r, v);
      }
      // The view names the draft models' backend when it is not the target's, whatever ran.
      const apart = v.drafts_on;
      return tr(`Done on ${v.backend}${apart ? `, the drafts on ${apart},` : ''} in ${duration(v.elapsed_ms)}.`,
        `在 ${v.backend} 上完成${apart ? `（草稿在 ${apart} 上）` : ''}，用时 ${duration(v.elapsed_ms)}。`);
    });
  },
};

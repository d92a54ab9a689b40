// Learned speculators and collective boost-tuning, measured (lecture §4.2, the slides' figure:
// 1 → 2 → 4 small models, verified tokens per step rising): pools of small models shipped with the
// page — boost-tuned as SpecInfer's (each next model trained only on the samples the pool misses)
// and a control trained without the filter — their greedy chains merged into one token tree and
// verified by the target in one call. Tokens per call, tree size, how much of the target's output
// the pool covers, greedy identity, and the wall clock. Runs in a worker, only when asked (it
// times this device); the pools' weights are fetched for it alone.
import { fmt, table, escapeHtml } from '../html.js';
import { runInWorker } from '../runbar.js';
import { tr } from '../i18n.js';
import { backendOptions, declare, menuOptions, targetSize, widthOptions } from '../engine.js';
import { beyond, noisyNote, spread } from '../noise.js';


/** The slides' figure beside this run: do the tokens rise with the pool, does boosting pay, and the clock? */
export function sentence(v) {
  // A pool of one (boosted: null) is the same model either way: it starts both series.
  const boost = v.rows.filter((r) => r.boosted !== false);
  const plain = v.rows.filter((r) => r.boosted !== true);
  const [first, last] = [boost[0], boost[boost.length - 1]];
  const control = plain[plain.length - 1];
  const tau = (rows) => rows.map((r) => fmt(r.tokens_per_call, 2)).join(' → ');
  const sizes = boost.map((r) => r.pool).join(tr(', ', '、'));
  const rises = boost.every((r, i) => i === 0 || r.tokens_per_call > boost[i - 1].tokens_per_call);
  const rise = (last.tokens_per_call / first.tokens_per_call - 1) * 100;
  const head = boost.length < 2
    ? tr('One pool size: choose several to see the trend of the slides’ figure. ', '只选了一种池大小：多选几种，才能看到讲义图中的趋势。')
    : rises
      ? tr(`Tokens per target call with boost-tuned pools of ${sizes} small models: <b>${tau(boost)}</b> (+${fmt(rise, 0)}%), as in the slides’ figure, where 1 → 2 → 4 small models verify more tokens per step each time. `,
        `boost-tuning 训练的 ${sizes} 个小模型的池，每次目标调用得到 <b>${tau(boost)}</b> 个 token（+${fmt(rise, 0)}%），和讲义的图一样：1 → 2 → 4 个小模型，每步验证的 token 一次比一次多。`)
      : tr(`Tokens per target call with boost-tuned pools of ${sizes} small models: <b>${tau(boost)}</b> — unlike the slides’ figure, they do not rise at every step here. `,
        `boost-tuning 训练的 ${sizes} 个小模型的池，每次目标调用得到 <b>${tau(boost)}</b> 个 token——和讲义的图不同，这里并不是每一步都上升。`);
  const ratio = last.tokens_per_call / control.tokens_per_call;
  const cover = (r) => fmt(100 * r.coverage[r.coverage.length - 1].pool, 0);
  let versus = '';
  if (last.pool > 1 && ratio > 1.02) {
    versus = tr(`The same pool trained without the filter (every model on every sample): ${tau(plain)}; with ${last.pool} models boost-tuning gives <b>${fmt(ratio, 2)}×</b> the control’s tokens per call, since each next model learned where the earlier ones miss (the pool covers ${cover(last)}% of the target’s tokens, the control ${cover(control)}%). `,
      `同样的池不过滤地训练（每个模型都在全部样本上训练）：${tau(plain)}；${last.pool} 个模型时，boost-tuning 每次调用得到的 token 数是对照的 <b>${fmt(ratio, 2)} 倍</b>，因为下一个模型学的正是前面的模型没命中的地方（池覆盖目标模型 ${cover(last)}% 的 token，对照 ${cover(control)}%）。`);
  } else if (last.pool > 1) {
    const [than, thanZh] = ratio < 0.98 ? ['fewer tokens per call than', '比对照少'] : ['about as many tokens per call as', '和对照差不多'];
    versus = tr(`The same pool trained without the filter: ${tau(plain)}; with these settings boost-tuning gives ${than} the control (${fmt(ratio, 2)}×). `,
      `同样的池不过滤地训练：${tau(plain)}；在这组设置下，boost-tuning 每次调用得到的 token ${thanZh}（${fmt(ratio, 2)} 倍）。`);
  }
  const speedups = boost.map((r) => tr(`${fmt(r.measured_speedup, 2)}×`, `${fmt(r.measured_speedup, 2)} 倍`)).join(tr(', ', '、'));
  // Slower only where the whole spread lies under 1: a sentence holds for every row it names.
  const clock = boost.every((r) => beyond(1, 0, r.measured_speedup, r.measured_speedup_iqr))
    ? tr(`On the wall clock every pool is slower than the target alone here (${speedups}): a call of this target is so cheap that the drafts’ calls cost more than they save; a wider target (the ×16 preset) makes each step memory-bound, where speculation pays. `,
      `从墙钟时间看，这里每个池都比目标模型单独解码慢（${speedups}）：这个目标模型的一次调用太便宜，草稿调用花的时间比省下的多；更宽的目标模型（×16 预设）让每一步都受内存带宽限制，推测才划算。`)
    : tr(`On the wall clock, over the target alone: ${speedups}. `, `从墙钟时间看，相对目标模型单独解码：${speedups}。`);
  const members = tr('Here the members draft one after another, so each adds its own draft calls; SpecInfer runs them in parallel on separate GPUs, with no extra drafting latency (the larger tree still costs its verification).',
    '这里池里的模型一个接一个地起草，每个都加上自己的草稿调用；SpecInfer 把它们并行放在不同的 GPU 上，起草不增加延迟（更大的树在验证时仍要花时间）。');
  // Faster beyond both rows' spreads; the tree sizes are stated beside it, not as its cause (one
  // run's rows need not order by tree size).
  const faster = last.pool > 1 && beyond(control.measured_speedup, control.measured_speedup_iqr, last.measured_speedup, last.measured_speedup_iqr)
    ? tr(` With ${last.pool} models the control is faster on the wall clock here, beyond both spreads (${fmt(control.measured_speedup, 2)}× against ${fmt(last.measured_speedup, 2)}×); its tree has ${fmt(control.tree_nodes, 1)} nodes a call against ${fmt(last.tree_nodes, 1)}.`,
      `${last.pool} 个模型时，这里对照在墙钟时间上更快，超出了两者的波动（${fmt(control.measured_speedup, 2)} 倍对 ${fmt(last.measured_speedup, 2)} 倍）；它的树每次调用 ${fmt(control.tree_nodes, 1)} 个节点，对 ${fmt(last.tree_nodes, 1)} 个。`)
    : '';
  const same = v.rows.every((r) => r.identical === r.prompts);
  const sampled = v.rows.some((r) => r.verify === 'mss');
  const check = sampled
    ? tr(' The members’ chains were sampled (T = 1) and the merged tree verified with MSS: outputs are not compared token for token, since MSS keeps the target’s distribution, not its greedy tokens (proved exactly on the toy model, the exactness widget).',
      '池里各模型的链是采样得来的（T = 1），合并后的树用 MSS 验证：输出不逐词比较，因为 MSS 保持的是目标模型的分布，而不是它的贪心 token（在玩具模型上精确证明，见精确性组件）。')
    : same
    ? tr(` Every output is identical to the target’s own greedy output (${v.rows.length} pools × ${first.prompts} prompts).`, `每个输出都和目标模型自己的贪心输出相同（${v.rows.length} 个池 × ${first.prompts} 个提示词）。`)
    : tr(' <b>Some output differs from the target’s greedy output</b>: a bug, please report it.', '<b>有输出和目标模型的贪心输出不同</b>：这是 bug，请报告。');
  return `<p class="numbers">${head}${versus}${clock}${members}${faster}${check}</p>`;
}

const way = (r) => (r.boosted === null ? tr('either (one model)', '两者相同（一个模型）') : r.boosted ? tr('boost-tuned', 'boost-tuning') : tr('no filter', '不过滤'));

/** The rows whose wall clock spread over more than half itself from prompt to prompt. */
export function noisyRows(v) {
  const noisy = v.rows.filter((r) => spread(r.measured_speedup, r.measured_speedup_iqr));
  const named = noisy.map((r) => tr(`${r.pool} (${way(r)})`, `${r.pool}（${way(r)}）`)).join(tr(', ', '、'));
  return noisyNote('bt-noisy', noisy.length ? [[`the speedup of the pool${noisy.length > 1 ? 's' : ''} of ${named} varied by more than half itself from prompt to prompt (IQR)`,
    `池 ${named} 的加速比在提示词之间的波动（IQR）超过它自身的一半`]] : []);
}

function resultHtml(v) {
  const rows = v.rows.map((r) => [r.pool, way(r),
    fmt(r.tokens_per_call, 3), fmt(r.tree_nodes, 2), `${fmt(100 * r.coverage[r.coverage.length - 1].pool, 1)}%`,
    r.identical === null ? '—' : `${r.identical}/${r.prompts}`, `${fmt(r.measured_speedup, 2)}×`, fmt(r.measured_speedup_iqr, 2)]);
  return noisyRows(v) + sentence(v) + table([tr(['models', 'trained', 'tokens / call', 'tree nodes / call', 'pool covers', 'identical', 'speedup', 'IQR (prompt by prompt)'],
    ['模型数', '训练方式', 'token / 调用', '树节点 / 调用', '池的覆盖率', '相同', '加速比', 'IQR（逐个提示词）'])].concat(rows), 'bt-rows');
}

export default {
  name: 'boost',
  // It runs the trained models: it mounts once their engine is loaded (app.js, specdec-widget.js).
  models: true,
  title: 'Learned speculators: a pool of small models, boost-tuned',
  intro: 'SpecInfer’s small models are learned from the LLM: collective boost-tuning fine-tunes one small model as well as it can, drops the samples on which it agrees with the LLM, fine-tunes the next one on the rest, and so on, so that the pool together covers as much of the LLM’s output as possible; their proposals are merged into one token tree and verified in one call (lecture §4.2). '
    + 'Here pools of up to four small models of draft A’s shape, trained that way on the target’s outputs and shipped with the page, each propose a chain (greedy, or sampled for MSS); the target verifies the merged tree. The control is the same pool trained without the filter.',
  title_zh: '学习型推测器：用 boost-tuning 训练的小模型池',
  intro_zh: 'SpecInfer 的小模型是从大模型学来的：集体 boost-tuning 先把一个小模型微调到最好，去掉它和大模型一致的样本，用剩下的微调下一个，依此类推，让一池小模型合起来尽可能覆盖大模型的输出；它们的提议合并成一棵令牌树，一次调用验证（讲义 §4.2）。'
    + '这里至多四个和草稿 A 一样大的小模型，按这种方式在目标模型的输出上训练好、随页面一起提供，各自提出一条链（贪心的，或为 MSS 采样的）；目标模型验证合并后的树。对照组是同样的池不过滤地训练。',
  presets: [
    { label: '1 → 2 → 4', label_zh: '1 → 2 → 4', values: { pools: '1,2,4', gamma: '4' }, note: 'the slides’ figure', note_zh: '讲义的图' },
    { label: '×16 target', label_zh: '×16 目标模型', values: { pools: '1,2,4', width: '16', prompts: '10' }, note: 'each step memory-bound', note_zh: '每一步都受内存带宽限制' },
  ],
  controls: [
    declare({ key: 'pools', label: 'pool sizes', label_zh: '池大小', type: 'select' }, { ...menuOptions('boost.pools'), value: (d) => d.boost.defaults.pools }),
    declare({ key: 'gamma', label: 'γ (each chain)', label_zh: 'γ（每条链）', type: 'select' }, { ...menuOptions('boost.gamma'), value: (d) => String(d.boost.defaults.gamma) }),
    declare({ key: 'verify', label: 'verification', label_zh: '验证方式', type: 'select', value: 'greedy' }, menuOptions('pool_verify')),
    declare({ key: 'prompts', label: 'prompts', label_zh: '提示词数', type: 'select' }, { ...menuOptions('boost.prompts'), value: (d) => String(d.boost.defaults.prompts) }),
    declare({ key: 'width', label: 'target width', label_zh: '目标模型宽度', type: 'select', value: '1' }, widthOptions),
    declare({ key: 'backend', label: 'backend', label_zh: '后端', type: 'select', value: 'flex' }, backendOptions),
  ],
  asks: true,
  cost: (s) => {
    const on = { flex: 'CPU (flex)', ndarray: 'CPU (ndarray)', wgpu: 'WebGPU' }[s.backend] ?? s.backend;
    return tr(`decodes ${s.prompts} prompts with each pool (sizes ${s.pools}; boost-tuned and the control) and with the ×${s.width} target (${targetSize(s.width)}) alone on ${on}, after downloading the pools (0.40 MB) once: seconds on the trained target, about a minute on a wide one`,
      `在 ${on} 上用每个池（大小 ${s.pools}；boost-tuning 和对照各一组）和 ×${s.width} 目标模型（${targetSize(s.width)}）单独解码 ${s.prompts} 个提示词，之前先下载一次小模型池（0.40 MB）：训练好的目标模型要几秒，加宽的约一分钟`);
  },
  render() {
    return [`<div class="dec-run"><button type="button" class="bt-go">${tr('Measure', '测量')}</button>
      <p class="numbers bt-status" aria-live="polite"></p>
      <progress class="bt-progress" max="1" value="0" hidden></progress> <button type="button" class="bt-cancel" hidden>${tr('Cancel', '取消')}</button>
      <button type="button" class="bt-retry" hidden>${tr('Retry', '重试')}</button></div>`,
    '<p class="note bt-note" hidden></p>', '<div class="bt-result"></div>', '<p class="numbers bt-during" hidden></p>', '<div class="plots bt-plot"></div>'];
  },
  after(s, ui, view) {
    const params = { backend: s.backend, target_width: Number(s.width), pools: s.pools, gamma: Number(s.gamma), verify: s.verify, prompts: Number(s.prompts), figure_width: ui.figureWidth() };
    runInWorker(ui, view, 'bt', 'boost_pools', params, 'measure', (v) => {
      view.querySelector('.bt-plot').innerHTML = v.svg;
      view.querySelector('.bt-result').innerHTML = resultHtml(v);
      return tr(`Measured on ${escapeHtml(v.backend)}.`, `在 ${escapeHtml(v.backend)} 上测完。`);
    });
  },
};

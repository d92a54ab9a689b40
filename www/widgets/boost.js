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
import { declare, targetSize, widthOptions } from '../engine.js';

const POOLS = ['1,2,4', '1,2,3,4', '1,2', '4'].map((p) => [p, p]);
const GAMMAS = ['2', '3', '4', '6'].map((g) => [g, g]);
const PROMPTS = ['10', '30', '100'].map((p) => [p, p]);

/** The slides' figure beside this run: do the tokens rise with the pool, and does boosting pay? */
function sentence(v) {
  const boost = v.rows.filter((r) => r.boosted);
  const plain = v.rows.filter((r) => !r.boosted);
  const [first, last] = [boost[0], boost[boost.length - 1]];
  const control = plain[plain.length - 1];
  const rise = (last.tokens_per_call / first.tokens_per_call - 1) * 100;
  const each = boost.map((r) => fmt(r.tokens_per_call, 2)).join(' → ');
  const ctrl = plain.map((r) => fmt(r.tokens_per_call, 2)).join(' → ');
  const same = v.rows.every((r) => r.identical === r.prompts);
  const head = boost.length < 2
    ? tr(`One pool size: choose several to see the trend of the slides’ figure. `, `只选了一种池大小：多选几种，才能看到讲义图中的趋势。`)
    : tr(`Tokens per target call with boost-tuned pools of ${boost.map((r) => r.pool).join(', ')} small models: <b>${each}</b> (${rise >= 0 ? '+' : ''}${fmt(rise, 0)}%), as in the slides’ figure, where 1 → 2 → 4 small models verify more tokens per step each time. `,
      `boost-tuning 训练的 ${boost.map((r) => r.pool).join('、')} 个小模型的池，每次目标调用得到 <b>${each}</b> 个 token（${rise >= 0 ? '+' : ''}${fmt(rise, 0)}%），和讲义的图一样：1 → 2 → 4 个小模型，每步验证的 token 一次比一次多。`);
  const versus = last.pool > 1
    ? tr(`The same pool trained without the filter (every model on every sample): ${ctrl}; with ${last.pool} models boost-tuning gives <b>${fmt(last.tokens_per_call / control.tokens_per_call, 2)}×</b> its tokens per call, since each next model learned where the earlier ones miss (the pool covers ${fmt(100 * last.coverage[last.coverage.length - 1].pool, 0)}% of the target’s tokens, against ${fmt(100 * control.coverage[control.coverage.length - 1].pool, 0)}%). `,
      `同样的池不过滤地训练（每个模型都在全部样本上训练）：${ctrl}；${last.pool} 个模型时，boost-tuning 得到的每次调用 token 数是它的 <b>${fmt(last.tokens_per_call / control.tokens_per_call, 2)} 倍</b>，因为下一个模型学的正是前面的模型没命中的地方（池覆盖目标模型 ${fmt(100 * last.coverage[last.coverage.length - 1].pool, 0)}% 的 token，对照只有 ${fmt(100 * control.coverage[control.coverage.length - 1].pool, 0)}%）。`)
    : '';
  const clock = tr(`On this device the members draft one after another, so the tree grows and the wall clock gains less than the tokens do (${boost.map((r) => `${fmt(r.measured_speedup, 2)}×`).join(', ')} over the target alone); SpecInfer runs them in parallel on separate GPUs, where more members cost no extra latency.`,
    `在这台设备上，池里的模型一个接一个地起草，所以树变大了，墙钟时间的收益比 token 数的少（相对目标模型单独解码：${boost.map((r) => `${fmt(r.measured_speedup, 2)} 倍`).join('、')}）；SpecInfer 把它们并行放在不同的 GPU 上，多用几个并不增加延迟。`);
  const check = same
    ? tr(` Every output is identical to the target’s own greedy output (${v.rows.length} runs of ${first.prompts} prompts).`, ` 每个输出都和目标模型自己的贪心输出相同（${v.rows.length} 组，每组 ${first.prompts} 个提示词）。`)
    : tr(' <b>Some output differs from the target’s greedy output</b>: a bug, please report it.', ' <b>有输出和目标模型的贪心输出不同</b>：这是 bug，请报告。');
  return `<p class="numbers">${head}${versus}${clock}${check}</p>`;
}

function resultHtml(v) {
  const rows = v.rows.map((r) => [r.pool, r.boosted ? tr('boost-tuned', 'boost-tuning') : tr('no filter', '不过滤'),
    fmt(r.tokens_per_call, 3), fmt(r.tree_nodes, 2), `${fmt(100 * r.coverage[r.coverage.length - 1].pool, 1)}%`,
    `${r.identical}/${r.prompts}`, `${fmt(r.measured_speedup, 2)}×`]);
  return sentence(v) + table([tr(['models', 'trained', 'tokens / call', 'tree nodes / call', 'pool covers', 'identical', 'speedup'],
    ['模型数', '训练方式', 'token / 调用', '树节点 / 调用', '池的覆盖率', '相同', '加速比'])].concat(rows), 'bt-rows');
}

export default {
  name: 'boost',
  title: 'Learned speculators: a pool of small models, boost-tuned',
  intro: 'SpecInfer’s small models are learned from the LLM: collective boost-tuning fine-tunes one small model as well as it goes, drops the samples on which it agrees with the LLM, fine-tunes the next one on the rest, and so on, so that the pool together covers as much of the LLM’s output as possible; their proposals are merged into one token tree and verified in one call (lecture §4.2). '
    + 'Here pools of up to four small models of draft A’s shape, trained that way on the target’s outputs and shipped with the page, each propose a greedy chain; the target verifies the merged tree. The control is the same pool trained without the filter.',
  title_zh: '学习型推测器：用 boost-tuning 训练的小模型池',
  intro_zh: 'SpecInfer 的小模型是从大模型学来的：集体 boost-tuning 先把一个小模型微调到最好，去掉它和大模型一致的样本，用剩下的微调下一个，依此类推，让一池小模型合起来尽可能覆盖大模型的输出；它们的提议合并成一棵令牌树，一次调用验证（讲义 §4.2）。'
    + '这里至多四个和草稿 A 一样大的小模型，按这种方式在目标模型的输出上训练好、随页面一起提供，各自提出一条贪心链；目标模型验证合并后的树。对照组是同样的池不过滤地训练。',
  presets: [
    { label: '1 → 2 → 4', label_zh: '1 → 2 → 4', values: { pools: '1,2,4', gamma: '4' }, note: 'the slides’ figure', note_zh: '讲义的图' },
    { label: '×16 target', label_zh: '×16 目标模型', values: { pools: '1,2,4', width: '16', prompts: '10' }, note: 'each step memory-bound', note_zh: '每一步都受内存带宽限制' },
  ],
  controls: [
    declare({ key: 'pools', label: 'pool sizes', label_zh: '池大小', type: 'select', options: POOLS }, { value: (d) => d.boost.defaults.pools }),
    declare({ key: 'gamma', label: 'γ (each chain)', label_zh: 'γ（每条链）', type: 'select', options: GAMMAS }, { value: (d) => String(d.boost.defaults.gamma) }),
    declare({ key: 'prompts', label: 'prompts', label_zh: '提示词数', type: 'select', options: PROMPTS }, { value: (d) => String(d.boost.defaults.prompts) }),
    declare({ key: 'width', label: 'target width', label_zh: '目标模型宽度', type: 'select', value: '1' }, widthOptions),
    { key: 'backend', label: 'backend', label_zh: '后端', type: 'select', value: 'flex', options: [['flex', 'CPU: flex'], ['ndarray', 'CPU: ndarray'], ['wgpu', 'GPU: WebGPU']] },
  ],
  asks: true,
  cost: (s) => tr(`decodes ${s.prompts} prompts with each pool (${s.pools}, boost-tuned and not) and with the ×${s.width} target (${targetSize(s.width)}) alone on ${s.backend}, and downloads the pools (0.45 MB) once: seconds on the trained target, minutes on a wide one`,
    `在 ${s.backend} 上用每个池（${s.pools}，boost-tuning 和不过滤各一组）和 ×${s.width} 目标模型（${targetSize(s.width)}）单独解码 ${s.prompts} 个提示词，并下载一次小模型池（0.45 MB）：训练好的目标模型要几秒，加宽的要几分钟`),
  render() {
    return [`<div class="dec-run"><button type="button" class="bt-go">${tr('Measure', '测量')}</button>
      <p class="numbers bt-status" aria-live="polite"></p>
      <progress class="bt-progress" max="1" value="0" hidden></progress> <button type="button" class="bt-cancel" hidden>${tr('Cancel', '取消')}</button></div>`,
    '<p class="note bt-note" hidden></p>', '<div class="bt-result"></div>', '<p class="numbers bt-during" hidden></p>', '<div class="plots bt-plot"></div>'];
  },
  after(s, ui, view) {
    const params = { backend: s.backend, target_width: Number(s.width), pools: s.pools, gamma: Number(s.gamma), prompts: Number(s.prompts), figure_width: ui.figureWidth() };
    runInWorker(ui, view, 'bt', 'boost_pools', params, 'measure', (v) => {
      view.querySelector('.bt-plot').innerHTML = v.svg;
      view.querySelector('.bt-result').innerHTML = resultHtml(v);
      return tr(`Measured on ${escapeHtml(v.backend)}.`, `在 ${escapeHtml(v.backend)} 上测完。`);
    });
  },
};

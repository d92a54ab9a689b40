// Drafting without a model (lecture §5.3, demos 05.1–05.3): Prompt Lookup, the suffix index,
// Jacobi and Lookahead on three workloads. Runs in a Web Worker with progress and cancel; a
// newer run supersedes the older one.
import { fmt, table, escapeHtml, duration } from '../html.js';
import { runBar, runInWorker } from '../runbar.js';
import { tr } from '../i18n.js';
import { backendOptions, coreRange, declare, menuLabel, menuOptions, seedRange } from '../engine.js';

const SOURCES_EN = { target: 'the target', request: 'this prompt + output', earlier: 'earlier outputs', jacobi: 'Jacobi window', pool: 'n-gram pool', draft: 'draft model' };
const SOURCES_ZH = { target: '目标模型', request: '本提示词 + 输出', earlier: '以前的输出', jacobi: 'Jacobi 窗口', pool: 'n-gram 池', draft: '草稿模型' };
const sourceNames = () => tr(SOURCES_EN, SOURCES_ZH);
const uses = (...names) => (s) => names.includes(s.experiment);
const pct = (x) => `${(100 * x).toFixed(1)}%`;

function params(s) {
  return {
    experiment: s.experiment, backend: s.backend, workload: s.workload, drafter: s.experiment === 'sweep' ? s.treedrafter : s.drafter,
    budget: Math.round(Number(s.budget)), requests: Number(s.requests), seed: Math.round(Number(s.seed)), init: s.init,
    request: Math.round(Number(s.request)), window: Math.round(Number(s.window)),
  };
}

/** What one run computes, for the Run button of an element that waits for it (runbar.js). */
function cost(s) {
  const models = s.experiment === 'table' || s.workload === 'likesworld'
    ? tr(` (LikesWorld’s with the trained target on ${s.backend})`, `（LikesWorld 的请求用 ${s.backend} 上训练好的目标模型）`) : '';
  const what = s.experiment === 'table' ? tr('of every workload with every drafter', '，每种负载、每种草稿方法各一遍')
    : tr(`of the ${menuLabel('workload', s.workload)} workload`, `，负载为${menuLabel('workload', s.workload)}`);
  const budgets = s.experiment === 'sweep' ? tr(', for every node budget', '，每个节点预算各一遍') : '';
  return tr(`drafts and verifies ${s.requests} requests ${what}${budgets}${models}`, `起草并验证 ${s.requests} 个请求${what}${budgets}${models}`);
}

const sources = (r) => r.sources.map(([k, n]) => `${sourceNames()[k] ?? k} ${n}`).join(tr(', ', '，'));
const rowCells = (r) => [fmt(r.tokens_per_call), pct(r.accepted_node_fraction), fmt(r.verified_nodes_per_call, 1), `${r.identical}/${r.requests}`, sources(r)];
const head = () => tr(['tokens / call', 'accepted nodes', 'nodes / call', 'identical', 'output tokens from'],
  ['token / 调用', '被接受的节点', '节点 / 调用', '一致', '输出 token 来自']);

function tableHtml(r) {
  const rows = r.rows.map((x) => [menuLabel('workload', x.workload), menuLabel('drafter', x.drafter), ...rowCells(x)]);
  const b = r.draft_b;
  if (b) rows.push(['LikesWorld', tr('draft model B, γ 6', '草稿模型 B，γ 6'), fmt(b.tokens_per_call), '—', fmt(b.verified_nodes_per_call, 1), `${b.identical}/${b.prompts}`, tr('draft model', '草稿模型')]);
  return tr(`<p class="numbers">Each drafter on each workload, ${r.requests} requests, budget ${r.budget} speculated tokens per call, verified by VerifyGreedy. `
    + 'A lookup costs almost nothing (c ≈ 0), so tokens per call is the speedup it can give; it depends entirely on what repeats. '
    + 'Code rewrite copies its prompt (Prompt Lookup breaks only at the renamed identifier); agent outputs repeat templates (earlier outputs) '
    + 'with slots from the prompt (this request), so the two indices together do best; the rule targets predict noise off their path, so Jacobi gains nothing there.</p>',
  `<p class="numbers">每种草稿方法在每个负载上：${r.requests} 个请求，每次调用最多 ${r.budget} 个推测 token，由 VerifyGreedy 验证。`
    + '查表几乎不花时间（c ≈ 0），所以每次调用决定的 token 数就是它能带来的加速比；它完全取决于什么会重复。'
    + '代码改写照抄提示词（Prompt Lookup 只在改了名的标识符处断开）；智能体的输出重复模板（以前的输出），模板里的槽位来自提示词（本请求），所以两个索引合起来最好；'
    + '规则型目标模型离开自己的路径就预测噪声，所以 Jacobi 在那里毫无收益。</p>')
    + table([[tr('workload', '负载'), tr('drafter', '草稿方法'), ...head()]].concat(rows), 'mf-table');
}

function sweepHtml(r) {
  return tr('<p class="numbers">More nodes per call decide more tokens, with diminishing returns, while the accepted fraction of the verified nodes falls: '
    + 'the budget is best spent where acceptance is likely (SuffixDecoding, EAGLE-2).</p>',
  '<p class="numbers">每次调用的节点越多，决定的 token 越多，但收益递减，而被验证节点中被接受的比例下降：预算最好花在可能被接受的地方（SuffixDecoding、EAGLE-2）。</p>')
    + table([[tr('budget', '预算'), ...head()]].concat(r.rows.map((x) => [x.budget, ...rowCells(x)])), 'mf-sweep');
}

function jacobiHtml(r) {
  return tr('<p class="numbers">Jacobi iteration puts guesses for the next positions after the context; one call predicts each position as if the guesses before it were right, '
    + 'and the predictions become the next guesses. On a target whose every prediction depends on the whole prefix (the rule workloads), the guesses after the first '
    + 'wrong one are conditioned on a wrong token, so the window never catches up: 1.00 tokens per call from a fixed start, barely more from a random one. '
    + 'Where a token depends only on the few before it (LikesWorld’s “.” and “q”, an answer after its name) the window does converge, and the pooled n-grams of Lookahead add to it.</p>',
  '<p class="numbers">Jacobi 迭代在上下文之后放上对接下来几个位置的猜测；一次调用在“前面的猜测都对”的假设下预测每个位置，预测又成为下一轮的猜测。'
    + '如果目标模型的每个预测都依赖整个前缀（规则型负载），第一个错的猜测之后的位置都以错的 token 为条件，窗口永远追不上：固定初值时每次调用正好 1.00 个 token，随机初值也只多一点。'
    + '如果一个 token 只依赖它前面的几个（LikesWorld 的 “.” 和 “q”，名字后面的答案），窗口确实会收敛，Lookahead 收集的 n-gram 还能再添一些。</p>')
    + table([[tr('start', '初值'), ...head()]].concat(r.rows.map(({ init, row }) => [tr(init, { fixed: '固定', random: '随机' }[init] ?? init), ...rowCells(row)])), 'mf-jacobi');
}

function highlightHtml(h) {
  let i = 0;
  const calls = h.steps.map((n) => {
    const toks = h.output.slice(i, i + n).map((w, j) => {
      const src = h.sources[i + j];
      return `<span class="mf-tok mf-src-${src}" title="${escapeHtml(sourceNames()[src] ?? src)}">${escapeHtml(w)}</span>`;
    }).join(' ');
    i += n;
    return `<span class="mf-call">${toks}</span>`;
  }).join(' ');
  const legend = Object.entries(sourceNames()).filter(([k]) => h.sources.includes(k))
    .map(([k, t]) => `<span class="mf-tok mf-src-${k}">${escapeHtml(t)}</span>`).join(' ');
  const same = h.identical ? tr('Identical to the target’s own greedy output.', '与目标模型自己的贪心输出完全相同。')
    : `<b class="bad">${tr('Differs from the target’s greedy output.', '与目标模型的贪心输出不同。')}</b>`;
  return `<p class="numbers">${tr('Prompt', '提示词')}: <span class="mf-prompt">${h.prompt.map(escapeHtml).join(' ')}</span></p>
    <p class="mf-output">${calls}</p>
    <p class="numbers">${tr(`Colour: where each output token came from — ${legend}. A box is one target call (${h.steps.length} calls for ${h.output.length} tokens, `
    + `${fmt(h.row.tokens_per_call)} per call over the requests so far).`, `颜色：每个输出 token 的来源——${legend}。一个方框是一次目标模型调用（${h.output.length} 个 token 用了 ${h.steps.length} 次调用，`
    + `到目前为止的请求平均每次 ${fmt(h.row.tokens_per_call)} 个）。`)} ${same}</p>`;
}

export default {
  name: 'modelfree',
  // It runs the trained models: it mounts once their engine is loaded (app.js, specdec-widget.js).
  models: true,
  title: 'Drafting without a model: Prompt Lookup, suffix trees, Jacobi and Lookahead',
  intro: 'No draft model at all: the speculation is looked up in the prompt, in earlier outputs, or in the target’s own Jacobi trajectory, '
    + 'and verified by the target in one call. Outputs are always the target’s own greedy output; what changes is how many tokens one call decides.',
  title_zh: '不用模型的推测：Prompt Lookup、后缀树、Jacobi 与 Lookahead',
  intro_zh: '完全没有草稿模型：猜测来自提示词、以前的输出，或目标模型自己的 Jacobi 轨迹，再由目标模型一次调用验证。输出总是目标模型自己的贪心输出；变化的是一次调用能确定几个 token。',
  // Lecture §5.3 (demos 05.1–05.3).
  presets: [
    { label: 'Demo 05.1 · every drafter', label_zh: '演示 05.1 · 所有草稿方法', values: { experiment: 'table' } },
    { label: 'Demo 05.2 · budget 1 → 48', label_zh: '演示 05.2 · 预算 1 → 48', values: { experiment: 'sweep', workload: 'likesworld', treedrafter: 'suffix' } },
    { label: 'Demo 05.3 · Jacobi starts', label_zh: '演示 05.3 · Jacobi 的初始化', values: { experiment: 'jacobi', workload: 'likesworld' } },
  ],
  controls: [
    declare({ key: 'experiment', label: 'experiment', label_zh: '实验', type: 'select', value: 'table' }, menuOptions('modelfree.experiment')),
    declare({ key: 'workload', label: 'workload', label_zh: '负载', type: 'select', value: 'agent', showIf: (s) => s.experiment !== 'table' }, menuOptions('workload')),
    declare({ key: 'drafter', label: 'drafter', label_zh: '猜测来源', type: 'select', value: 'both', showIf: uses('highlight') }, menuOptions('drafter')),
    declare({ key: 'treedrafter', label: 'tree from', label_zh: '树来自', type: 'select', value: 'suffix', showIf: uses('sweep') }, menuOptions('tree_drafter')),
    // The sliders' ranges and defaults are the core's (`presets`: decode/free/kind.rs's ranges,
    // ModelfreeParams' defaults).
    declare({ key: 'budget', label: 'budget (tokens per call)', label_zh: '预算（每次调用的 token）', type: 'range', step: 1, showIf: uses('table', 'highlight') }, coreRange('modelfree', 'budget')),
    declare({ key: 'window', label: 'Jacobi window', label_zh: 'Jacobi 窗口', type: 'range', step: 1, showIf: uses('jacobi') }, coreRange('modelfree', 'window')),
    declare({ key: 'init', label: 'Jacobi start', label_zh: 'Jacobi 初值', type: 'select', value: 'random', showIf: (s) => s.experiment === 'highlight' && ['jacobi', 'lookahead'].includes(s.drafter) }, menuOptions('init')),
    declare({ key: 'requests', label: 'requests', label_zh: '请求数', type: 'select', value: '30' }, menuOptions('modelfree.requests')),
    // A request's index, below the most requests the core runs.
    declare({ key: 'request', label: 'show request', label_zh: '显示请求', type: 'range', step: 1, showIf: uses('highlight') }, coreRange('modelfree', 'request')),
    declare({ key: 'backend', label: 'LikesWorld backend', label_zh: 'LikesWorld 后端', type: 'select', value: 'flex', showIf: (s) => s.experiment === 'table' || s.workload === 'likesworld' }, backendOptions),
    declare({ key: 'seed', label: 'seed', label_zh: '种子', type: 'number', step: 1, value: 0 }, seedRange),
  ],
  cost,
  render() {
    return [runBar('mf'), '<p class="note mf-note" hidden></p>', '<div class="dec-result mf-result"></div>', '<div class="plots mf-plot"></div>'];
  },
  after(s, ui, view) {
    runInWorker(ui, view, 'mf', 'modelfree', { ...params(s), figure_width: ui.figureWidth() }, 'modelfree', (v) => {
      view.querySelector('.mf-plot').innerHTML = v.svg;
      view.querySelector('.mf-result').innerHTML = v.experiment === 'highlight' ? highlightHtml(v.highlight)
        : { table: tableHtml, sweep: sweepHtml, jacobi: jacobiHtml }[v.experiment](v.report);
      return tr(`Done${v.backend ? ` (LikesWorld on ${v.backend})` : ''} in ${duration(v.elapsed_ms)}.`,
        `完成${v.backend ? `（LikesWorld 运行于 ${v.backend}）` : ''}，用时 ${duration(v.elapsed_ms)}。`);
    });
  },
};

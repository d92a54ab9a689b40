// Speculative decoding on LikesWorld (lecture §3–§4, demos 03.1–03.3, 04.3–04.5): the drafts
// propose, the target verifies in one call. Every experiment runs in a Web Worker, with progress
// and cancel; a newer run supersedes the older one.
import { fmt, table, escapeHtml, runBar, runInWorker } from '../widget.js';

const VARIANTS = ['correct', 'resample-from-target', 'greedy-rule', 'argmax-draft', 'accept-q-over-p', 'bonus-from-draft'];
const KINDS = { boilerplate: 'boilerplate', 'random-fact': 'random fact', 'question-name': 'question name', answer: 'answer' };
const uses = (...names) => (s) => names.includes(s.experiment);

// Whole numbers for the engine: a URL may carry an off-step value such as gamma=2.5.
function params(s) {
  return {
    experiment: s.experiment, backend: s.backend, draft: s.draft, gamma: Math.round(Number(s.gamma)), prompts: Number(s.prompts),
    repeats: Math.round(Number(s.repeats)), seed: Math.round(Number(s.seed)), variant: s.variant, config: s.config, verify: 'mss',
    children: s.children, sampling: s.stepkind === 'chain',
  };
}

const pct = (x) => `${(100 * x).toFixed(1)}%`;
const kind = (k) => KINDS[k] ?? k;
const byKind = (rows) => rows.map((k) => `${kind(k.kind)} ${fmt(k.alpha, 2)} (${k.tested})`).join(', ');

function acceptanceHtml(rows) {
  return '<p class="numbers">Acceptance at every position of whole held-out worlds (teacher-forced): sampling β = Σ min(p, q), greedy: the draft’s argmax is the target’s.</p>'
    + table([['next token is', 'positions', 'β draft A', 'β draft B', 'argmax agrees A', 'argmax agrees B']].concat(rows.map((k) => [
      kind(k.kind), k.positions, fmt(k.beta[0]), fmt(k.beta[1]), fmt(k.greedy[0]), fmt(k.greedy[1])])), 'dec-kinds');
}

function greedyHtml(reports) {
  const rows = reports.map((r) => [r.method, `${r.identical}/${r.prompts}`, fmt(r.tokens_per_call), r.formula_tokens_per_call == null ? '—' : fmt(r.formula_tokens_per_call),
    fmt(r.alpha), `${r.target_calls} (${r.reference_calls})`, fmt(r.verified_nodes_per_call, 2)]);
  return '<p class="numbers">Greedy speculative decoding against the target’s own greedy output. The formula E(α, γ) uses the measured α and assumes every position is accepted independently; '
    + 'the hard positions (the asked name, the answer) come every 4 tokens, so long runs are rarer than it thinks (lecture §3.3).</p>'
    + table([['method', 'identical', 'tokens / call', 'E(α, γ)', 'measured α', 'target calls (alone)', 'verified nodes / call']].concat(rows), 'dec-greedy')
    + `<p class="numbers">α by kind of the output token, last run: ${byKind(reports[reports.length - 1].by_kind)}</p>`;
}

function sampleHtml(r) {
  const ok = r.p_value >= 0.01;
  const st = (o) => [o.sequences, fmt(o.mean_length, 2), pct(o.answer_accuracy), fmt(o.mean_log_p)];
  return `<p class="numbers">${escapeHtml(r.method)}: <b>${fmt(r.tokens_per_call)}</b> tokens per target call, measured α ${fmt(r.alpha)}.
    Calibration test (is every emitted token distributed as the target’s p given what came before?): χ² ${fmt(r.chi_square, 2)} with ${r.df} df,
    <b class="${ok ? 'ok' : 'bad'}">p = ${fmt(r.p_value)}</b> — ${ok ? 'consistent with the target’s own sampling' : 'the output is not the target’s (p < 0.01)'};
    the same test on the target’s own samples: p = ${fmt(r.target_p_value)}.</p>`
    + table([['', 'sequences', 'mean length', 'answers right', 'mean ln p'], ['speculative', ...st(r.speculative)], ['target alone', ...st(r.target)]], 'dec-sample')
    + `<p class="numbers">α by kind of the output token: ${byKind(r.by_kind)}</p>`;
}

function stochasticHtml(reports) {
  return '<p class="numbers">Children sampled from draft B (T = 1). Naive sampling draws from p and hopes to land in the tree; MSS tests each child in turn and hands the residual on. '
    + 'Top-k children verified as if sampled look good and are biased: the last column is its exact one-step distortion.</p>'
    + table([['method', 'tokens / call', 'accepted drafts / call', 'verified nodes / call', 'calibration p', 'exact one-step TV']].concat(reports.map((r) => [
      r.method, fmt(r.tokens_per_call), fmt(r.accepted_per_call), fmt(r.verified_nodes_per_call, 2), fmt(r.p_value), r.distortion != null ? fmt(r.distortion) : (r.verify === 'naive' ? '0 (a draw from p)' : '0 (Theorem 4.2)')])), 'dec-stochastic');
}

function speedupHtml(r) {
  return `<p class="numbers">Measured here on <b>${r.backend}</b>, ${escapeHtml(r.method)}, ${r.prompts} prompts: α ${fmt(r.alpha)}, c = draft call / target call = <b>${fmt(r.c)}</b>
    (${fmt(r.draft_call_us, 0)} µs / ${fmt(r.target_call_us, 0)} µs; one verify call ${fmt(r.verify_call_us, 0)} µs).
    The formula predicts <b>${fmt(r.predicted_speedup, 2)}×</b>; the wall clock says <b>${fmt(r.measured_speedup, 2)}×</b>
    (${fmt(r.plain_us / 1000, 1)} ms plain, ${fmt(r.speculative_us / 1000, 1)} ms speculative).
    ${r.measured_speedup < 1 ? 'Slower: with models this small the draft is not cheap next to the target (c far from 0), and a verify call costs more than one token.' : ''}</p>`;
}

const depth = (tree, j) => (tree.parents[j] === null ? 1 : 1 + depth(tree, tree.parents[j]));

/** One step of the step-through, as HTML. */
function stepHtml(v, i) {
  const st = v.steps[i];
  const w = (t) => escapeHtml(v.words[t] ?? '?');
  const before = v.prompt.concat(v.report.output.slice(0, st.before));
  const tail = before.slice(-8).map(escapeHtml).join(' ');
  const tree = st.tree;
  const chain = tree.parents.every((p, j) => (j === 0 ? p === null : p === j - 1));
  const onPath = new Set(st.path);
  // The lecture lays a tree out depth-first (ancestors first); the engine builds it level by level.
  const order = [];
  const visit = (parent) => tree.parents.forEach((p, j) => { if (p === parent) { order.push(j); visit(j); } });
  visit(null);
  const nodes = order.map((j) => `<span class="dec-node${onPath.has(j) ? ' on' : ''}" title="depth ${depth(tree, j)}">${w(tree.tokens[j])}</span>`).join(chain ? ' → ' : ' ');
  const checks = st.checks.map((c) => [c.at === 0 ? 'root' : `after ${w(tree.tokens[c.at - 1])}`, w(c.token), fmt(c.p), c.q == null ? '—' : fmt(c.q), fmt(c.a),
    c.u == null ? '—' : fmt(c.u), c.accepted ? '<span class="ok">accepted</span>' : '<span class="bad">rejected</span>']);
  const ending = { bonus: 'every check passed: the bonus token from the target’s p after the last one',
    residual: 'a check failed: drawn from the residual norm(max(0, r − q))', target: 'the target’s own token (no draft token matched)' }[st.ending];
  let mask = '';
  if (!chain) {
    const anc = (a, b) => { for (let n = b; n !== null; n = tree.parents[n]) if (n === a) return true; return false; };
    const head = ['mask (depth-first)'].concat(order.map((j) => w(tree.tokens[j])));
    mask = table([head].concat(order.map((r) => [w(tree.tokens[r])].concat(order.map((c) => (anc(c, r) ? '✓' : '·'))))), 'dec-mask');
  }
  return `<p class="numbers">Step ${i + 1} of ${v.steps.length} · context …${tail}</p>
    <p class="dec-tree">${chain ? 'draft chain' : 'token tree'}: ${nodes || '(none)'}</p>`
    + (checks.length ? table([['at', 'candidate x', 'p(x)', 'q(x)', st.checks.some((c) => c.u != null) ? 'accept prob a = min(1, p/q)' : 'a (greedy: x = argmax p)', 'uniform u', 'verdict']].concat(checks), 'dec-checks') : '')
    + `<p class="numbers">Then ${ending}: ${st.last_dist.map(([t, p]) => `${w(t)} ${fmt(p, 3)}`).join(', ')} → <b>${w(st.last)}</b>.
      This step emitted: <b>${st.emitted.map(w).join(' ')}</b> (${st.emitted.length} token${st.emitted.length > 1 ? 's' : ''} for one target call).</p>${mask}`;
}

export default {
  name: 'decoding',
  title: 'Speculative decoding on LikesWorld: chains, trees, and the wall clock',
  intro: 'The trained target and drafts of the LikesWorld widget, decoding together: the draft proposes, the target verifies everything in one call. '
    + 'Greedy outputs are identical to the target’s own, sampled ones are distributed as the target’s, and the target is called fewer times. '
    + 'Every experiment runs in a worker on the backend you pick; results are measured in this browser.',
  title_zh: '在 LikesWorld 上做推测解码：链、树与墙钟时间',
  intro_zh: 'LikesWorld 组件里训练好的目标模型和草稿模型一起解码：草稿提出，目标模型一次调用验证全部。贪心输出与目标模型自己的逐字相同，采样输出与目标模型同分布，而目标模型被调用的次数更少。每个实验都在 worker 里、在你选的后端上运行；结果是在这个浏览器里测的。',
  // Lecture §3 (demos 03.1–03.3) and §4.4–4.5 (demos 04.3, 04.5) at the lecture's sizes.
  presets: [
    { label: 'Demo 03.1 · acceptance by kind', values: { experiment: 'acceptance', prompts: '200' } },
    { label: 'Demo 03.2 · greedy chains, 200 prompts', values: { experiment: 'greedy', draft: 'b', prompts: '200' } },
    { label: 'Demo 03.3 · sampling, 200 × 3', values: { experiment: 'sample', draft: 'b', gamma: 4, prompts: '200', repeats: 3, variant: 'correct' } },
    { label: 'Demo 04.3 · greedy trees, 100 prompts', values: { experiment: 'tree', prompts: '100' } },
    { label: 'Demo 04.5 · naive vs MSS ⟨1,1,3,1⟩', values: { experiment: 'stochastic', config: '<1,1,3,1>', prompts: '100' } },
  ],
  controls: [
    { key: 'experiment', label: 'experiment', label_zh: '实验', type: 'select', value: 'greedy', options: [
      ['acceptance', 'acceptance by token kind (03.1)'], ['greedy', 'greedy chains over γ (03.2)'], ['sample', 'sampling and its test (03.3)'],
      ['tree', 'greedy trees (04.3)'], ['stochastic', 'naive vs MSS trees (04.5)'], ['speedup', 'wall clock: c and speedup'], ['step', 'step through one run']] },
    { key: 'backend', label: 'backend', label_zh: '后端', type: 'select', value: 'flex', options: [['flex', 'CPU: flex'], ['ndarray', 'CPU: ndarray'], ['wgpu', 'GPU: WebGPU']] },
    { key: 'draft', label: 'draft', label_zh: '草稿', type: 'select', value: 'b', options: [['a', 'A (1 layer)'], ['b', 'B (2 layers)']], showIf: (s) => !uses('acceptance', 'stochastic')(s) },
    { key: 'gamma', label: 'γ', label_zh: 'γ', type: 'range', min: 1, max: 16, step: 1, value: 4, showIf: (s) => uses('greedy', 'sample', 'speedup')(s) || (s.experiment === 'step' && s.stepkind === 'chain') },
    { key: 'prompts', label: 'prompts', label_zh: '提示词数', type: 'select', value: '20', options: [['10', '10'], ['20', '20'], ['50', '50'], ['100', '100'], ['200', '200']], showIf: (s) => s.experiment !== 'step' },
    { key: 'repeats', label: 'samples per prompt', label_zh: '每个提示词采样次数', type: 'range', min: 1, max: 5, step: 1, value: 1, showIf: uses('sample') },
    { key: 'variant', label: 'verification rule', label_zh: '验证规则', type: 'select', value: 'correct', options: VARIANTS.map((v) => [v, v]), showIf: (s) => uses('sample')(s) || (s.experiment === 'step' && s.stepkind === 'chain') },
    { key: 'stepkind', label: 'run', label_zh: '运行', type: 'select', value: 'chain', options: [['chain', 'sampling chain'], ['tree', 'greedy tree']], showIf: uses('step') },
    { key: 'config', label: 'tree ⟨k₁,…⟩', label_zh: '树 ⟨k₁,…⟩', type: 'text', value: '<2,2,1,1>', showIf: (s) => uses('tree', 'stochastic')(s) || (s.experiment === 'step' && s.stepkind === 'tree') },
    { key: 'children', label: 'children', label_zh: '孩子节点', type: 'select', value: 'without-replacement', options: [['without-replacement', 'sampled without replacement'], ['iid', 'sampled i.i.d.']], showIf: uses('stochastic') },
    { key: 'seed', label: 'seed', label_zh: '种子', type: 'number', min: 0, max: 4294967295, step: 1, value: 0, showIf: uses('sample', 'stochastic', 'step') },
  ],
  render() {
    return [runBar('dec'), '<p class="note dec-note" hidden></p>', '<div class="dec-result"></div>', '<div class="plots dec-plot"></div>'];
  },
  after(s, ui, view) {
    const result = view.querySelector('.dec-result');
    runInWorker(ui, view, 'dec', 'likesworld_decode', params(s), 'decode', (v) => {
      view.querySelector('.dec-plot').innerHTML = v.svg;
      const r = v.report;
      if (v.experiment === 'step') {
        let i = 0;
        const show = () => {
          result.innerHTML = `<div class="dec-step" tabindex="0" role="group" aria-label="Step-through: left and right arrow keys move between steps">
            <p class="numbers">${escapeHtml(r.method)}, seed ${s.seed}: ${r.stats.tokens} tokens in ${r.stats.target_calls} target calls.
            <button type="button" class="dec-prev">◀ previous</button> <button type="button" class="dec-next">next ▶</button></p>${stepHtml(v, i)}</div>`;
          const box = result.querySelector('.dec-step');
          result.querySelector('.dec-prev').onclick = () => { i = Math.max(0, i - 1); show(); result.querySelector('.dec-step').focus(); };
          result.querySelector('.dec-next').onclick = () => { i = Math.min(v.steps.length - 1, i + 1); show(); result.querySelector('.dec-step').focus(); };
          box.onkeydown = (ev) => {
            if (ev.key === 'ArrowRight') { i = Math.min(v.steps.length - 1, i + 1); show(); result.querySelector('.dec-step').focus(); ev.preventDefault(); }
            if (ev.key === 'ArrowLeft') { i = Math.max(0, i - 1); show(); result.querySelector('.dec-step').focus(); ev.preventDefault(); }
          };
          ui.root.dataset.step = String(i + 1);
        };
        show();
      } else {
        result.innerHTML = {
          acceptance: acceptanceHtml, greedy: greedyHtml, sample: sampleHtml, tree: greedyHtml, stochastic: stochasticHtml, speedup: speedupHtml,
        }[v.experiment](r);
      }
      return `Done on ${v.backend} in ${(v.elapsed_ms / 1000).toFixed(1)} s.`;
    });
  },
};

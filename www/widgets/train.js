// Train a draft in the page (lecture §4.2: learned speculators): a draft of a chosen shape
// distilled from the target — on its greedy outputs, its next-token distributions (KL) or the
// LikesWorld text — in a worker of its own, on the training module (pkg/train/, autodiff), which
// only this widget downloads. The loss curve and, every few steps, a quick check of the draft as
// a draft in use (greedy chains of γ 4: tokens per call, α by token kind, identity with the
// target's output) are drawn as it learns, beside the shipped draft of the same shape. A pool of
// two trains the same way, boost-tuned as SpecInfer's or without the filter (its control), and is
// checked as one merged tree, beside its first member alone. Cancel
// stops it (the worker is terminated). A finished draft is kept in the browser's storage
// (trained.js) until Forget, downloadable as a file and loadable again; the decoding widget
// speculates with it (its draft “yours”).
import { fmt, table, escapeHtml, duration } from '../html.js';
import { lang, tr } from '../i18n.js';
import { call, declare, kindName, menuLabel, menuOptions, startWorker } from '../engine.js';
import { forgetTrained, loadTrained, saveTrained } from '../trained.js';
import { onStop } from '../runbar.js';

// What trains: one draft, or a pool of two trained as SpecInfer's (boost-tuned) or without the
// filter (the core's menu `train.models`).
const modelsName = (m) => menuLabel('train.models', m);
// Quick checks per run (the first before any step).
const CHECKS = 8;
const WORKER_URL = new URL('../train-worker.js', import.meta.url);
// The largest file read (the core's limit for any weights file, model::weights::MAX_WEIGHTS_BYTES).
const MAX_FILE = 16 * 1024 * 1024;

const TEACHERS_SHORT = [['greedy', 'greedy'], ['kl', 'KL'], ['text', 'text']];
const TEACHERS_SHORT_ZH = [['greedy', '贪心'], ['kl', 'KL'], ['text', '文本']];
const teacherShort = (k) => Object.fromEntries(tr(TEACHERS_SHORT, TEACHERS_SHORT_ZH))[k] ?? k;
const teacherName = (k) => menuLabel('train.teacher', k);
const shapeName = (s) => (s === 'a' ? tr('draft A’s shape', '草稿 A 的形状') : s === 'b' ? tr('draft B’s shape', '草稿 B 的形状') : s);

// widget root → the run in progress or last run: { worker, params, points, checks, shipped, started, phase, done, error }
const runs = new WeakMap();
// Finished runs of this visit, to compare teachers and shapes side by side.
const history = [];

/** The loss (log scale) and the checks' tokens per call, with the shipped draft's as a line. */
function chartSvg(run, width) {
  const w = Math.max(280, Math.min(width ?? 640, 760));
  const [h, left, right, top, bottom] = [230, 46, 46, 14, 34];
  const total = run.params.steps * run.params.pool;
  const x = (step) => left + (w - left - right) * (step / Math.max(1, total));
  const losses = run.points.map((p) => p.loss).filter((l) => l > 0);
  const lo = Math.log10(Math.min(...losses, 1)), hi = Math.log10(Math.max(...losses, 2));
  const yl = (l) => top + (h - top - bottom) * (1 - (Math.log10(l) - lo) / Math.max(1e-9, hi - lo));
  const taus = run.checks.map((c) => c.check.tokens_per_call).concat(run.shipped ? [run.shipped.check.tokens_per_call] : []);
  const tmax = Math.max(2, ...taus) * 1.1;
  const yt = (t) => top + (h - top - bottom) * (1 - (t - 1) / (tmax - 1));
  // One point per pixel at most.
  const every = Math.max(1, Math.floor(run.points.length / (w - left - right)));
  const line = run.points.filter((_, i) => i % every === 0).map((p) => `${x(p.step).toFixed(1)},${yl(p.loss).toFixed(1)}`).join(' ');
  const dots = run.checks.map((c) => `<circle cx="${x(c.step).toFixed(1)}" cy="${yt(c.check.tokens_per_call).toFixed(1)}" r="3.5" fill="#e07b00"><title>${tr('step', '第')} ${c.step}: τ ${fmt(c.check.tokens_per_call, 2)}</title></circle>`).join('');
  // The label at the right, where the loss has fallen, on a white halo where the line still
  // passes behind it.
  const ref = run.shipped ? (() => {
    const y = yt(run.shipped.check.tokens_per_call).toFixed(1);
    const name = run.shipped.model === 'draft-b' ? tr('shipped draft B', '附带的草稿 B') : tr('shipped draft A', '附带的草稿 A');
    return `<line x1="${left}" x2="${w - right}" y1="${y}" y2="${y}" stroke="#e07b00" stroke-dasharray="5 4"/><text x="${w - right - 6}" y="${Number(y) - 5}" text-anchor="end" font-size="11" fill="#a05800" stroke="#fff" stroke-width="3" paint-order="stroke">${name}${tr(': ', '：')}τ ${fmt(run.shipped.check.tokens_per_call, 2)}</text>`;
  })() : '';
  // A pool: where each next member starts.
  const bounds = Array.from({ length: run.params.pool - 1 }, (_, i) => x(run.params.steps * (i + 1)).toFixed(1))
    .map((bx) => `<line x1="${bx}" x2="${bx}" y1="${top}" y2="${h - bottom}" stroke="#888" stroke-dasharray="2 3"/>`).join('');
  const ticks = [0, 0.5, 1].map((f) => Math.round(total * f)).map((s) => `<text x="${x(s)}" y="${h - bottom + 15}" text-anchor="middle" font-size="11">${s}</text>`).join('');
  const lossTicks = [lo, (lo + hi) / 2, hi].map((e) => `<text x="${left - 5}" y="${yl(10 ** e) + 4}" text-anchor="end" font-size="11" fill="#1f5fa8">${fmt(10 ** e, 2)}</text>`).join('');
  const tauTicks = [1, (1 + tmax) / 2, tmax].map((t) => `<text x="${w - right + 5}" y="${yt(t) + 4}" font-size="11" fill="#a05800">${fmt(t, 1)}</text>`).join('');
  return `<svg viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="${tr('training curve', '训练曲线')}">
    <rect x="${left}" y="${top}" width="${w - left - right}" height="${h - top - bottom}" fill="none" stroke="#bbb"/>
    <polyline points="${line}" fill="none" stroke="#1f5fa8" stroke-width="1.5"/>${bounds}${ref}${dots}${ticks}${lossTicks}${tauTicks}
    <text x="${(left + w - right) / 2}" y="${h - 4}" text-anchor="middle" font-size="11">${tr('step', '步数')}</text>
    <text x="12" y="${h - bottom}" font-size="11" fill="#1f5fa8" transform="rotate(-90 12 ${h - bottom})">${tr('loss (log)', '损失（对数）')}</text>
    <text x="${w - 4}" y="${h - bottom}" font-size="11" fill="#a05800" transform="rotate(-90 ${w - 4} ${h - bottom})">${tr('tokens per call τ', '每次调用的 token 数 τ')}</text></svg>`;
}

/** The latest check beside the shipped draft's: τ, α, identity, α by token kind. */
function checkHtml(run) {
  const last = run.checks[run.checks.length - 1];
  if (!last) return '';
  const c = last.check;
  const s = run.shipped?.check;
  const name = run.shipped?.model === 'draft-b' ? tr('shipped B', '附带的 B') : tr('shipped A', '附带的 A');
  const kinds = c.by_kind.map((k) => {
    const other = s?.by_kind.find((x) => x.kind === k.kind);
    return [escapeHtml(kindName(k.kind)), k.tested, fmt(k.alpha, 3), other ? fmt(other.alpha, 3) : '—'];
  });
  const chains = c.pool > 1 ? tr(`the ${c.pool} members’ greedy chains of γ ${c.gamma}, merged,`, `${c.pool} 个模型 γ ${c.gamma} 的贪心链合并后`) : tr(`greedy chains of γ ${c.gamma}`, `γ ${c.gamma} 的贪心链`);
  const head = tr(`<p class="numbers">At step ${last.step}: ${chains} on ${c.prompts} held-out prompts give <b>τ ${fmt(c.tokens_per_call, 2)}</b> tokens per target call (α ${fmt(c.alpha, 3)}); ${s ? `the ${name} gives τ ${fmt(s.tokens_per_call, 2)}, α ${fmt(s.alpha, 3)}` : ''}. ${c.identical}/${c.prompts} outputs identical to the target’s own.</p>`,
    `<p class="numbers">第 ${last.step} 步：在 ${c.prompts} 个留出提示词上用 ${chains}，每次目标调用得到 <b>τ ${fmt(c.tokens_per_call, 2)}</b> 个 token（α ${fmt(c.alpha, 3)}）；${s ? `${name} 得到 τ ${fmt(s.tokens_per_call, 2)}，α ${fmt(s.alpha, 3)}` : ''}。${c.identical}/${c.prompts} 个输出和目标模型自己的相同。</p>`);
  return head + poolHtml(run) + table([tr(['next token is', 'tested', 'α yours', `α ${name}`], ['下一个 token 是', '检验数', 'α 你的', `α ${name}`])].concat(kinds), 'tr-kinds');
}

/** A pool's run: the first member alone against the pool (its chains merged), and what each covers. */
function poolHtml(run) {
  if (run.params.pool < 2) return '';
  const first = run.checks.find((c) => c.step === run.params.steps)?.check;
  const last = run.checks[run.checks.length - 1];
  if (!first || last.step <= run.params.steps) return '';
  const [a, b] = [first.tokens_per_call, last.check.tokens_per_call];
  const way = run.params.filter ? tr('boost-tuned: the second member trained only on the samples the first one misses', 'boost-tuning：第二个模型只在第一个没命中的样本上训练')
    : tr('no filter: the second member trained on every sample, with its own seed', '不过滤：第二个模型在全部样本上训练，用它自己的种子');
  const rise = (b / a - 1) * 100;
  const text = tr(`<p class="numbers">The first member alone: τ ${fmt(a, 2)}; the pool of ${run.params.pool} at step ${last.step} (${way}), its chains merged into one tree of ${fmt(last.check.tree_nodes, 1)} nodes a call: <b>τ ${fmt(b, 2)}</b> (${rise >= 0 ? '+' : ''}${fmt(rise, 1)}%).</p>`,
    `<p class="numbers">第一个模型单独：τ ${fmt(a, 2)}；第 ${last.step} 步时 ${run.params.pool} 个模型的池（${way}），它们的链合并成每次调用 ${fmt(last.check.tree_nodes, 1)} 个节点的一棵树：<b>τ ${fmt(b, 2)}</b>（${rise >= 0 ? '+' : ''}${fmt(rise, 1)}%）。</p>`);
  const members = (run.members ?? []).map((m, i) => [i + 1, m.samples, `${fmt(100 * m.coverage, 1)}%`, `${fmt(100 * m.pool_coverage, 1)}%`]);
  return text + (members.length ? table([tr(['member', 'samples trained on', 'covers alone', 'the pool covers'], ['模型', '训练样本数', '单独覆盖', '池的覆盖'])].concat(members), 'tr-members') : '');
}

function historyHtml() {
  if (!history.length) return '';
  const rows = history.map((r) => [escapeHtml(modelsName(r.models)), escapeHtml(r.shape), escapeHtml(teacherShort(r.teacher)), r.steps, r.seed, duration(r.ms), fmt(r.check.tokens_per_call, 2), fmt(r.check.alpha, 3), `${r.check.identical}/${r.check.prompts}`]);
  return `<p class="numbers">${tr('Runs of this visit (change the teacher to compare them at equal steps):', '本次访问的训练（换一个教师信号，在相同步数下比较）：')}</p>`
    + table([tr(['what', 'shape', 'teacher', 'steps', 'seed', 'time', 'τ', 'α', 'identical'], ['训练什么', '形状', '教师信号', '步数', '种子', '用时', 'τ', 'α', '相同'])].concat(rows), 'tr-history');
}

function keptHtml(kept) {
  if (!kept) return tr('No draft is kept in this browser: train one, or load a draft file.', '这个浏览器里没有保存草稿：训练一个，或载入一个草稿文件。');
  const from = kept.teacher ? tr(`${escapeHtml(teacherName(kept.teacher))}, ${kept.steps} steps, seed ${kept.seed}`, `${escapeHtml(teacherName(kept.teacher))}，${kept.steps} 步，种子 ${kept.seed}`) : tr('loaded from a file', '从文件载入');
  const tau = kept.check ? tr(`, τ ${fmt(kept.check.tokens_per_call, 2)} at γ ${kept.check.gamma}`, `，γ ${kept.check.gamma} 时 τ ${fmt(kept.check.tokens_per_call, 2)}`) : '';
  return tr(`Kept in this browser: your draft (${escapeHtml(kept.shape)}: d, layers, heads, d_ff; ${from}${tau}). The decoding widget speculates with it: choose the draft “yours”.`,
    `这个浏览器里保存着：你的草稿（${escapeHtml(kept.shape)}：d、层数、头数、d_ff；${from}${tau}）。解码小部件可以用它做推测：选草稿“你的”。`);
}

/** Shows the kept draft and wires Download and Forget. */
async function showKept(ui, view) {
  const line = view.querySelector('.tr-kept');
  let kept = null;
  try {
    kept = await loadTrained();
  } catch (e) {
    line.textContent = e.message;
    return;
  }
  ui.inLang(() => {
    line.innerHTML = keptHtml(kept);
    view.querySelector('.tr-download').hidden = !kept;
    view.querySelector('.tr-forget').hidden = !kept;
    view.querySelector('.tr-download').onclick = () => {
      const a = document.createElement('a');
      a.href = URL.createObjectURL(new Blob([kept.bytes], { type: 'application/octet-stream' }));
      a.download = `specdec-draft-${kept.shape.replaceAll(',', '-')}.bpk`;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    };
  })();
}

/** Redraws the run's curve, check and status. */
function drawRun(ui, view, run) {
  view.querySelector('.tr-chart').innerHTML = run.points.length || run.checks.length ? chartSvg(run, ui.figureWidth()) : '';
  view.querySelector('.tr-check').innerHTML = checkHtml(run) + historyHtml();
  const status = view.querySelector('.tr-status');
  const bar = view.querySelector('.tr-progress');
  const steps = run.points.length ? run.points[run.points.length - 1].step : 0;
  if (run.error) status.textContent = tr('The training stopped.', '训练停止了。');
  else if (run.cancelled) status.textContent = tr(`Cancelled at step ${steps}: nothing was kept (a draft kept before stays).`, `在第 ${steps} 步取消：什么都没保存（之前保存的草稿还在）。`);
  else if (run.finishedMs && run.params.pool > 1) status.textContent = tr(`Trained a pool of ${run.params.pool}, ${run.params.steps} steps each, in ${duration(run.finishedMs)}; a pool is measured here, not kept (the decoding widget speculates with one draft).`, `${duration(run.finishedMs)}内训练了 ${run.params.pool} 个模型的池，每个 ${run.params.steps} 步；池只在这里测量，不保存（解码小部件用一个草稿做推测）。`);
  else if (run.finishedMs) status.textContent = tr(`Trained ${run.params.steps} steps in ${duration(run.finishedMs)}; kept in this browser.`, `${duration(run.finishedMs)}内训练了 ${run.params.steps} 步；已保存在这个浏览器里。`);
  else if (run.phase === 'download') status.textContent = tr('Downloading the training module…', '正在下载训练模块…');
  else if (run.phase === 'corpus') status.textContent = tr(`Making the corpus: the target decodes ${run.corpus.done}/${run.corpus.total} training worlds…`, `正在生成语料：目标模型解码训练世界 ${run.corpus.done}/${run.corpus.total}…`);
  else if (!steps) status.textContent = tr('Checking the untrained draft and the shipped one…', '正在检查未训练的草稿和附带的草稿…');
  else if (run.params.pool > 1) {
    const m = run.points[run.points.length - 1].member + 1;
    status.textContent = tr(`Training member ${m} of ${run.params.pool}: step ${steps} of ${run.params.steps * run.params.pool}, loss ${fmt(run.points[run.points.length - 1].loss, 3)}…`,
      `训练第 ${m}/${run.params.pool} 个模型：第 ${steps}/${run.params.steps * run.params.pool} 步，损失 ${fmt(run.points[run.points.length - 1].loss, 3)}…`);
  } else status.textContent = tr(`Training ${run.params.shape} on ${teacherShort(run.params.teacher)}: step ${steps} of ${run.params.steps}, loss ${fmt(run.points[run.points.length - 1].loss, 3)}…`, `训练中（${run.params.shape}，${teacherShort(run.params.teacher)}）：第 ${steps}/${run.params.steps} 步，损失 ${fmt(run.points[run.points.length - 1].loss, 3)}…`);
  bar.value = steps / (run.params.steps * run.params.pool);
  const busy = run.worker !== null;
  bar.hidden = !busy;
  view.querySelector('.tr-cancel').hidden = !busy;
  view.querySelector('.tr-go').disabled = busy;
  ui.root.setAttribute('aria-busy', String(busy));
}

// While a draft trains, leaving or reloading the page (the language switch reloads it) asks first.
const training = new Set();
function guard(e) {
  if (training.size) e.preventDefault();
}

function stop(run) {
  run.worker?.terminate();
  run.worker = null;
  training.delete(run);
  if (!training.size) window.removeEventListener('beforeunload', guard);
}

function start(s, ui, view) {
  const before = runs.get(ui.root);
  if (before?.worker) return;
  ui.alert('');
  const pool = s.models === '1' ? 1 : 2;
  const params = { shape: s.shape, teacher: pool > 1 ? 'greedy' : s.teacher, steps: Number(s.steps), seed: Number(s.seed), pool, filter: s.models !== '2-plain', models: s.models, lang: lang() };
  const run = { worker: null, params, points: [], checks: [], shipped: null, started: performance.now(), phase: 'download', corpus: { done: 0, total: 0 } };
  runs.set(ui.root, run);
  const count = (key) => { ui.root.dataset[key] = String(Number(ui.root.dataset[key] || 0) + 1); };
  try {
    run.worker = startWorker(WORKER_URL);
    training.add(run);
    window.addEventListener('beforeunload', guard);
    // A <specdec-widget> taken out of the page stops its training with it.
    onStop(ui.root, () => { if (run.worker) { stop(run); run.cancelled = true; } });
  } catch (e) {
    run.error = e.message;
    ui.alert(e.message);
    drawRun(ui, view, run);
    return;
  }
  const redraw = ui.inLang(() => { if (runs.get(ui.root) === run) drawRun(ui, view, run); });
  run.worker.onerror = ui.inLang((e) => {
    stop(run);
    run.error = tr(`the training module could not be loaded (${e.message ?? 'a network error'}); if the page was just started with scripts/serve.sh, it is still being built: try again in a few minutes`,
      `训练模块无法加载（${e.message ?? '网络错误'}）；如果页面刚用 scripts/serve.sh 启动，它还在构建中：几分钟后再试`);
    ui.alert(run.error);
    count('failed');
    redraw();
  });
  run.worker.onmessage = ui.inLang(async ({ data }) => {
    if (data.kind === 'phase') Object.assign(run, { phase: data.phase, corpus: { done: data.done, total: data.total } });
    else if (data.kind === 'shipped') Object.assign(run, { shipped: data, phase: 'check' });
    else if (data.kind === 'points') {
      run.points.push(...data.points);
      run.phase = 'train';
    }
    else if (data.kind === 'check') run.checks.push({ step: data.step, check: data.check });
    else if (data.kind === 'error') {
      stop(run);
      run.error = data.message;
      ui.alert(data.message);
      count('failed');
    } else if (data.kind === 'done') {
      stop(run);
      run.finishedMs = performance.now() - run.started;
      const check = run.checks[run.checks.length - 1].check;
      history.push({ ...params, ms: run.finishedMs, check });
      run.members = data.members;
      // A pool is measured here, not kept: the decoding widget speculates with one draft.
      if (params.pool === 1) {
        const bytes = new Uint8Array(data.file);
        try {
          const shape = call('provide_trained_draft', { bytes });
          await saveTrained({ bytes, shape, teacher: params.teacher, steps: params.steps, seed: params.seed, check, saved: Date.now() });
        } catch (e) {
          ui.alert(e.message);
        }
        await showKept(ui, view);
      }
      // Counted once everything it shows is drawn.
      redraw();
      count('trained');
      return;
    }
    redraw();
  });
  run.worker.postMessage({ params, every: Math.max(1, Math.round((params.steps * pool) / CHECKS)) });
  redraw();
}

/** Loads a draft file chosen by the student: checked by the engine, kept only when good. */
async function upload(ui, view, file) {
  if (file.size > MAX_FILE) {
    ui.alert(tr(`${file.name}: ${file.size} bytes is over the limit of ${MAX_FILE} (a draft’s file is far smaller) — nothing was changed.`,
      `${file.name}：${file.size} 字节超过了上限 ${MAX_FILE}（草稿文件小得多）——什么都没有改变。`));
    ui.root.dataset.refused = String(Number(ui.root.dataset.refused || 0) + 1);
    return;
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  try {
    const shape = call('provide_trained_draft', { bytes, name: file.name });
    await saveTrained({ bytes, shape, saved: Date.now() });
    ui.alert('');
    ui.root.dataset.loaded = String(Number(ui.root.dataset.loaded || 0) + 1);
  } catch (e) {
    ui.alert(tr(`${e.message} — nothing was changed.`, `${e.message}——什么都没有改变。`));
    ui.root.dataset.refused = String(Number(ui.root.dataset.refused || 0) + 1);
  }
  await showKept(ui, view);
}

export default {
  name: 'train',
  // It runs the trained models: it mounts once their engine is loaded (app.js, specdec-widget.js).
  models: true,
  title: 'Train a draft here: learned speculators',
  intro: 'SpecInfer’s small models are learned from the LLM (lecture §4.2). Train one in this page: a draft of the shape you choose, distilled from the target — on its greedy outputs, on its whole next-token distributions (a KL loss), or on the LikesWorld text the target itself learned from. '
    + 'The loss falls as it learns; every few steps the draft is checked as a draft in use (greedy chains of γ 4 verified by the target), beside the shipped draft A (draft B for draft B’s shape). The finished draft stays in this browser until you forget it, and the decoding widget can speculate with it.',
  title_zh: '在这里训练一个草稿：学习型推测器',
  intro_zh: 'SpecInfer 的小模型是从大模型学来的（讲义 §4.2）。在本页训练一个：一个你选定形状的草稿，从目标模型蒸馏而来——用它的贪心输出、它完整的下一个 token 分布（KL 损失），或目标模型自己学过的 LikesWorld 文本。'
    + '它学习时损失下降；每隔几步，把草稿当作真正使用的草稿检查一次（γ 4 的贪心链由目标模型验证），和附带的草稿 A（草稿 B 的形状则和草稿 B）并排比较。训练好的草稿保存在这个浏览器里，直到你删除它，解码小部件可以用它做推测。',
  presets: [
    { label: 'Draft A’s shape, 1000 steps', label_zh: '草稿 A 的形状，1000 步', values: { shape: 'a', teacher: 'greedy', steps: '1000' }, note: 'about the shipped draft A’s tokens per call', note_zh: '每次调用的 token 数接近附带的草稿 A' },
    { label: 'KL teacher', label_zh: 'KL 教师信号', values: { shape: 'a', teacher: 'kl', steps: '1000' }, note: 'the target’s whole distributions', note_zh: '目标模型完整的分布' },
    { label: 'Text teacher', label_zh: '文本教师信号', values: { shape: 'a', teacher: 'text', steps: '1000' }, note: 'what the target learned from, not what it says', note_zh: '目标模型学过的文本，而不是它说的话' },
    { label: 'Pool of 2, boost-tuned', label_zh: '2 个模型的池，boost-tuning', values: { shape: 'a', models: '2', steps: '500' }, note: 'the second model learns where the first misses', note_zh: '第二个模型学第一个没猜中的地方' },
    { label: 'Its control', label_zh: '它的对照', values: { shape: 'a', models: '2-plain', steps: '500' }, note: 'the same pool without the filter', note_zh: '同样的池，不过滤' },
  ],
  controls: [
    declare({ key: 'shape', label: 'shape (d, layers, heads, d_ff)', label_zh: '形状（d、层数、头数、d_ff）', type: 'select', value: 'a' }, menuOptions('train.shape')),
    declare({ key: 'models', label: 'what trains', label_zh: '训练什么', type: 'select', value: '1' }, menuOptions('train.models')),
    // A pool's members match the target's tokens: they learn from its greedy outputs.
    declare({ key: 'teacher', label: 'learns from', label_zh: '学习对象', type: 'select', value: 'greedy', showIf: (s) => s.models === '1' }, menuOptions('train.teacher')),
    declare({ key: 'steps', label: 'steps', label_zh: '步数', type: 'select', value: '1000' }, menuOptions('train.steps')),
    declare({ key: 'seed', label: 'seed', label_zh: '种子', type: 'select', value: '1' }, menuOptions('train.seed')),
  ],
  render() {
    return [`<div class="dec-run"><button type="button" class="tr-go">${tr('Train', '训练')}</button>
      <p class="numbers tr-status" aria-live="polite">${tr('Press Train to start: the training module (0.8 MB) is downloaded once, then the draft trains here, on this device’s CPU (under a minute for 1000 steps of draft A’s shape on a two-core laptop).', '按“训练”开始：先下载一次训练模块（0.8 MB），然后草稿就在这台设备的 CPU 上训练（草稿 A 的形状 1000 步，在双核笔记本上不到一分钟）。')}</p>
      <progress class="tr-progress" max="1" value="0" hidden></progress> <button type="button" class="tr-cancel" hidden>${tr('Cancel', '取消')}</button></div>`,
    '<div class="plots tr-chart"></div>', '<div class="tr-check"></div>',
    `<p class="numbers tr-kept"></p><p><button type="button" class="tr-download" hidden>${tr('Download', '下载')}</button>
      <button type="button" class="tr-upload-button">${tr('Load a draft file…', '载入草稿文件…')}</button><input type="file" class="tr-upload" accept=".bpk,application/octet-stream" aria-label="${tr('Load a draft file', '载入草稿文件')}" hidden>
      <button type="button" class="tr-forget" hidden>${tr('Forget', '删除')}</button></p>`];
  },
  after(s, ui, view) {
    view.querySelector('.tr-go').onclick = ui.inLang(() => start(s, ui, view));
    view.querySelector('.tr-cancel').onclick = ui.inLang(() => {
      const run = runs.get(ui.root);
      if (!run?.worker) return;
      stop(run);
      run.cancelled = true;
      ui.root.dataset.cancelled = String(Number(ui.root.dataset.cancelled || 0) + 1);
      drawRun(ui, view, run);
    });
    view.querySelector('.tr-forget').onclick = ui.inLang(async () => {
      try {
        await forgetTrained();
      } catch (e) {
        ui.alert(e.message);
      }
      await showKept(ui, view);
    });
    // The browser's own file button speaks the browser's language, not the page's: a button of
    // the page's opens the chooser.
    view.querySelector('.tr-upload-button').onclick = () => view.querySelector('.tr-upload').click();
    view.querySelector('.tr-upload').onchange = ui.inLang(async (ev) => {
      const file = ev.target.files?.[0];
      ev.target.value = '';
      if (file) await upload(ui, view, file);
    });
    const run = runs.get(ui.root);
    if (run) drawRun(ui, view, run);
    showKept(ui, view);
  },
};

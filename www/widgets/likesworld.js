// LikesWorld (lecture §3.1, demo 03.1): the trained target and drafts on burn, in a Web Worker.
import { fmt, table, escapeHtml } from '../html.js';
import { channelOf, duringText, titleOf, waitsForRun } from '../runbar.js';
import { runJob, CancelledError, backendOptions, declare, kindName, seedRange } from '../engine.js';
import { tr } from '../i18n.js';
import { noisyNote, spread } from '../noise.js';

const WORKLOADS = [['decode1', 'one token', '1 个 token'], ['chain5', 'a chain of 5', '5 个的链'], ['tree31', 'a tree of 31', '31 个的树']];

/** What makes the latency table noisy: a workload whose blocks spread over half their median, or
 * one timed more than a fifth cheaper than a smaller one (more tokens cannot cost less). */
export function latencyNoise(l) {
  const models = [['target', tr('target', '目标模型')], ['draft_a', tr('draft A', '草稿 A')], ['draft_b', tr('draft B', '草稿 B')]];
  return models.flatMap(([key, name]) => {
    const m = l[key];
    const spreads = WORKLOADS.filter(([w]) => spread(m[w].median_us, m[w].iqr_us ?? 0));
    const falls = [0, 1].filter((i) => m[WORKLOADS[i + 1][0]].median_us < 0.8 * m[WORKLOADS[i][0]].median_us).map((i) => [WORKLOADS[i], WORKLOADS[i + 1]]);
    return [
      ...(spreads.length ? [[`${name}: ${spreads.map(([, en]) => en).join(', ')} varied by more than half the median (IQR)`, `${name}：${spreads.map(([, , zh]) => zh).join('、')}的波动（IQR）超过中位数的一半`]] : []),
      ...falls.map(([[, aEn, aZh], [, bEn, bZh]]) => [`${name}: ${bEn} was timed cheaper than ${aEn}, though more tokens cannot cost less`, `${name}：${bZh}测得比${aZh}还便宜，而更多的 token 不会更便宜`]),
    ];
  });
}

export default {
  name: 'likesworld',
  // It runs the trained models: it mounts once their engine is loaded (app.js, specdec-widget.js).
  models: true,
  title: 'LikesWorld: a real (tiny) target and two drafts',
  intro: 'Facts “NAME likes ITEM .”, then one question per person, “q NAME ITEM .”: the answer must be looked up in the facts. '
    + 'The target (85k parameters, trained with burn by this project’s own program) answers every question; draft A (1 layer) and draft B (2 layers) cannot. '
    + 'Type a world (the words: &lt;bos&gt; likes . q &lt;eos&gt;, names such as dan fay eve, items such as jam nuts tea) or leave it empty for a random one.',
  title_zh: 'LikesWorld：一个真的（很小的）目标模型和两个草稿',
  intro_zh: '先是事实“名字 likes 物品 .”，然后每人一个问题“q 名字 物品 .”：答案要在事实里查。目标模型（8.5 万参数，由本项目自己的程序用 burn 训练）能回答所有问题；草稿 A（1 层）和草稿 B（2 层）不能。输入一个世界（词：&lt;bos&gt; likes . q &lt;eos&gt;，名字如 dan fay eve，物品如 jam nuts tea），或留空随机生成。',
  controls: [
    { key: 'text', label: 'world', label_zh: '世界', type: 'text', value: '' },
    declare({ key: 'seed', label: 'random world seed', label_zh: '随机世界的种子', type: 'number', step: 1, value: 0 }, seedRange),
    declare({ key: 'backend', label: 'backend', label_zh: '后端', type: 'select', value: 'flex' }, backendOptions),
  ],
  // What one run computes (the latency's runs are after()'s), for the Run button of an element.
  cost: (s) => tr(`scores one world with the target and both drafts, then times ${s.backend === 'wgpu' ? 10 : 150} calls of each on ${s.backend}`,
    `用目标模型和两个草稿给一个世界打分，然后在 ${s.backend} 上为每个模型的 ${s.backend === 'wgpu' ? 10 : 150} 次调用计时`),
  render() {
    return [
      `<div class="dec-run"><p class="numbers lw-status" aria-live="polite">${tr('Running the models in a worker…', '正在后台的 Web Worker 里运行模型…')}</p>
        <button type="button" class="lw-go" hidden>${tr('Run', '运行')}</button></div>`,
      '<p class="note lw-note" hidden></p>',
      '<div class="plots lw-plot scroll-x"></div>',
      '<div class="lw-kinds"></div>',
      `<div class="lw-latency"><p class="numbers">${tr('Per-call latency: waiting…', '每次调用的延迟：等待中…')}</p></div>`,
    ];
  },
  after(s, ui, view) {
    if (waitsForRun(ui, view, 'lw', () => ui.redraw())) return;
    const params = { text: s.text, seed: Number(s.seed), backend: s.backend };
    const status = view.querySelector('.lw-status');
    const note = view.querySelector('.lw-note');
    runJob('likesworld', { ...params, figure_width: ui.figureWidth() }, ui.inLang((st) => { status.textContent = `${tr('Models', '模型')}: ${st}…`; }), channelOf(ui, 'likesworld'), titleOf(ui)).promise.then(ui.inLang((v) => {
      status.innerHTML = `<code>${escapeHtml(v.text)}</code> ${tr('on', '运行于')} <b>${v.backend}</b>`;
      // No WebGPU adapter here: the engine ran on the CPU instead, and says why.
      note.hidden = !v.note;
      note.textContent = v.note ?? '';
      view.querySelector('.lw-plot').innerHTML = v.svg;
      const rows = [tr(['next token is', 'positions', 'β draft A', 'β draft B', 'argmax agrees A', 'argmax agrees B'],
        ['下一个 token 是', '位置数', 'β 草稿 A', 'β 草稿 B', 'argmax 一致 A', 'argmax 一致 B'])].concat(v.kinds.map((k) => [
        kindName(k.kind), k.positions, fmt(k.beta[0]), fmt(k.beta[1]), fmt(k.greedy[0]), fmt(k.greedy[1])]));
      view.querySelector('.lw-kinds').innerHTML = table(rows, 'kinds');
      ui.root.dataset.model = String(Number(ui.root.dataset.model || 0) + 1);
      const lat = view.querySelector('.lw-latency');
      lat.innerHTML = `<p class="numbers">${tr('Per-call latency: measuring in the worker…', '每次调用的延迟：正在后台的 Web Worker 里测量…')}</p>`;
      // A GPU call dispatches ~100 kernels and waits for its read-back (on a CPU-emulated GPU,
      // a large fraction of a second): far fewer calls there.
      const gpu = v.backend === 'wgpu';
      const runs = gpu ? 10 : 150;
      const progress = ui.inLang((st) => { lat.firstElementChild.textContent = `${tr('Per-call latency', '每次调用的延迟')}: ${st}…`; });
      return runJob('likesworld_latency', { backend: v.backend, runs, warmup: gpu ? 2 : undefined }, progress, channelOf(ui, 'likesworld'), titleOf(ui)).promise.then(ui.inLang((l) => {
        const time = (t) => (t >= 10_000 ? `${(t / 1000).toFixed(0)} ms` : `${t.toFixed(0)} µs`);
        const us = ({ median_us: t, iqr_us: q }) => `${time(t)}${q == null ? '' : tr(` (IQR ${time(q)})`, `（IQR ${time(q)}）`)}`;
        const row = (name, m) => [name, us(m.decode1), us(m.chain5), us(m.tree31)];
        lat.innerHTML = noisyNote('lw-noisy', latencyNoise(l), l.target.decode1.median_us) + tr(`<p class="numbers">Measured here, on <b>${l.backend}</b> in this browser (median over blocks of 10 calls, ${runs} calls, logits read back):
          c = draft/target for one token: A ${fmt(l.c[0], 2)}, B ${fmt(l.c[1], 2)}.</p>`,
        `<p class="numbers">在这个浏览器里、在 <b>${l.backend}</b> 上实测（每 10 次调用一组取中位数，共 ${runs} 次，读回 logits）：
          单个 token 的 c = 草稿/目标：A ${fmt(l.c[0], 2)}，B ${fmt(l.c[1], 2)}。</p>`)
          + table([tr(['model', '1 token, 32 cached', 'chain of 5', 'tree of 31'], ['模型', '1 个 token，缓存 32', '5 个的链', '31 个的树']),
            row(tr('target', '目标'), l.target), row(tr('draft A', '草稿 A'), l.draft_a), row(tr('draft B', '草稿 B'), l.draft_b)], 'latency')
          + `<p class="numbers lw-during">${duringText(l.during, l.execution)}</p>`;
        ui.root.dataset.latency = String(Number(ui.root.dataset.latency || 0) + 1);
      }));
    })).catch(ui.inLang((e) => {
      if (e instanceof CancelledError) return;
      status.textContent = tr('The models could not run on this input.', '模型无法在这个输入上运行。');
      ui.alert(e.message);
    }));
  },
};

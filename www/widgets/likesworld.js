// LikesWorld (lecture §3.1, demo 03.1): the trained target and drafts on burn, in a Web Worker.
import { fmt, table, escapeHtml } from '../widget.js';
import { runJob, CancelledError } from '../engine.js';

const KINDS = { boilerplate: 'boilerplate', 'random-fact': 'random fact', 'question-name': 'question name', answer: 'answer' };

export default {
  name: 'likesworld',
  title: 'LikesWorld: a real (tiny) target and two drafts',
  intro: 'Facts “NAME likes ITEM .”, then one question per person, “q NAME ITEM .”: the answer must be looked up in the facts. '
    + 'The target (85k parameters, trained here with burn) answers every question; draft A (1 layer) and draft B (2 layers) cannot. '
    + 'Type a world (the words: &lt;bos&gt; likes . q &lt;eos&gt;, names such as dan fay eve, items such as jam nuts tea) or leave it empty for a random one.',
  title_zh: 'LikesWorld：一个真的（很小的）目标模型和两个草稿',
  intro_zh: '先是事实“NAME likes ITEM .”，然后每人一个问题“q NAME ITEM .”：答案要在事实里查。目标模型（8.5 万参数，用 burn 在这里训练）能回答所有问题；草稿 A（1 层）和草稿 B（2 层）不能。输入一个世界（词：&lt;bos&gt; likes . q &lt;eos&gt;，名字如 dan fay eve，物品如 jam nuts tea），或留空随机生成。',
  controls: [
    { key: 'text', label: 'world', label_zh: '世界', type: 'text', value: '' },
    { key: 'seed', label: 'random world seed', label_zh: '随机世界的种子', type: 'number', min: 0, max: 4294967295, step: 1, value: 0 },
    { key: 'backend', label: 'backend', label_zh: '后端', type: 'select', value: 'flex', options: [['flex', 'CPU: flex (faster)'], ['ndarray', 'CPU: ndarray'], ['wgpu', 'GPU: WebGPU']] },
  ],
  render() {
    return [
      '<p class="numbers lw-status" aria-live="polite">Running the models in a worker…</p>',
      '<p class="note lw-note" hidden></p>',
      '<div class="plots lw-plot"></div>',
      '<div class="lw-kinds"></div>',
      '<div class="lw-latency"><p class="numbers">Per-call latency: waiting…</p></div>',
    ];
  },
  after(s, ui, view) {
    const params = { text: s.text, seed: Number(s.seed), backend: s.backend };
    const status = view.querySelector('.lw-status');
    const note = view.querySelector('.lw-note');
    runJob('likesworld', params, (st) => { status.textContent = `Models: ${st}…`; }, 'likesworld').promise.then((v) => {
      status.innerHTML = `<code>${escapeHtml(v.text)}</code> on <b>${v.backend}</b>`;
      // No WebGPU adapter here: the engine ran on the CPU instead, and says why.
      note.hidden = !v.note;
      note.textContent = v.note ?? '';
      view.querySelector('.lw-plot').innerHTML = v.svg;
      const rows = [['next token is', 'positions', 'β draft A', 'β draft B', 'argmax agrees A', 'argmax agrees B']].concat(v.kinds.map((k) => [
        KINDS[k.kind] ?? k.kind, k.positions, fmt(k.beta[0]), fmt(k.beta[1]), fmt(k.greedy[0]), fmt(k.greedy[1])]));
      view.querySelector('.lw-kinds').innerHTML = table(rows, 'kinds');
      ui.root.dataset.model = String(Number(ui.root.dataset.model || 0) + 1);
      const lat = view.querySelector('.lw-latency');
      lat.innerHTML = '<p class="numbers">Per-call latency: measuring in the worker…</p>';
      // A GPU call dispatches ~100 kernels and waits for its read-back (on a CPU-emulated GPU,
      // a large fraction of a second): far fewer calls there.
      const gpu = v.backend === 'wgpu';
      const runs = gpu ? 10 : 150;
      const progress = (st) => { lat.firstElementChild.textContent = `Per-call latency: ${st}…`; };
      return runJob('likesworld_latency', { backend: v.backend, runs, warmup: gpu ? 2 : undefined }, progress, 'likesworld').promise.then((l) => {
        const us = ({ median_us: t }) => (t >= 10_000 ? `${(t / 1000).toFixed(0)} ms` : `${t.toFixed(0)} µs`);
        const row = (name, m) => [name, us(m.decode1), us(m.chain5), us(m.tree31)];
        lat.innerHTML = `<p class="numbers">Measured here, on <b>${l.backend}</b> in this browser (median over blocks of 10 calls, ${runs} calls, logits read back):
          c = draft/target for one token: A ${fmt(l.c[0], 2)}, B ${fmt(l.c[1], 2)}.</p>`
          + table([['model', '1 token, 32 cached', 'chain of 5', 'tree of 31'], row('target', l.target), row('draft A', l.draft_a), row('draft B', l.draft_b)], 'latency');
        ui.root.dataset.latency = String(Number(ui.root.dataset.latency || 0) + 1);
      });
    }).catch((e) => {
      if (e instanceof CancelledError) return;
      status.textContent = 'The models could not run on this input.';
      ui.alert(e.message);
    });
  },
};

// The exactness lab's gallery of real bugs (lecture §6, second principle): losslessness comes from
// the verification rule, and a wrong rule silently changes the output. Ten bugs that shipped in
// speculative-decoding runtimes, each put through every test the lab has (exact enumeration, a
// quick χ² check, χ² at the samples it needs, greedy identity), beside the correct rule.
//
// A run takes seconds (enumeration, Monte Carlo and greedy runs of eleven rules), so it runs in a
// worker after its Run button, never on a slider move; a newer run or Cancel stops an older one.
// The part's markup names the toy world it runs in: another world (the lab's seed, draft noise or
// T moved) draws a fresh part, which drops a result that no longer belongs to it.
import { escapeHtml, fmt, table } from '../html.js';
import { runJob, CancelledError } from '../engine.js';
import { channelOf, titleOf } from '../runbar.js';
import { tr } from '../i18n.js';

const jobs = new WeakMap(); // widget root → the gallery's job, while it runs

/** The gallery's part of the view, for the toy world `toy` (params().toy). */
export function galleryPart(toy) {
  const world = [toy.seed, toy.draft_noise, toy.temperature].join(' ');
  return `<section class="gallery" data-world="${escapeHtml(world)}">
    <h3>${tr('A gallery of real bugs', '真实缺陷陈列')}</h3>
    <p class="gallery-intro">${tr('The lecture’s second principle (§6): losslessness comes from the verification rule alone. A wrong rule does not crash or slow down: it silently changes the output. The ten bugs below were in real runtimes; each runs here on this toy world and through every test of this lab, beside the correct rule.',
    '课上的第二条原则（§6）：无损只来自验证规则。错误的规则不会崩溃，也不会变慢：它悄悄地改变输出。下面十个缺陷都出现在真实的推理框架里；每一个都在这个玩具世界里运行，过一遍本实验的每一种测试，旁边是正确的规则。')}</p>
    <div class="gallery-run"><button type="button" class="gallery-go">${tr('Run the gallery', '运行缺陷陈列')}</button>
      <button type="button" class="gallery-cancel" hidden>${tr('Cancel', '取消')}</button><progress hidden></progress>
      <span class="numbers gallery-status" aria-live="polite">${tr('Ten bugs and the correct rule through every test, in a worker: a few seconds.', '十个缺陷和正确规则过一遍每种测试，在后台线程里运行：几秒钟。')}</span></div>
    <div class="gallery-result"></div></section>`;
}

/** The tests' names as the core words them, joined; a dash for none. */
const testNames = (g, names) => names.map((n) => escapeHtml(g.tests.find(([t]) => t === n)?.[1] ?? n)).join(tr('; ', '；')) || '—';

/** The bug's source as a link: “vLLM PR #4190”, its thread's title on hover. */
const sourceLink = ({ project, thread, url, title }) => `<a href="${escapeHtml(url)}" rel="noopener" target="_blank" title="${escapeHtml(title)}">${escapeHtml(`${project} ${thread}`)}</a>`;

/** Samples a χ² test needs for 95% power, or “never” (no finite run sees it). */
const needed = (n) => (n === null || n === undefined ? tr('never', '永远看不出') : Math.ceil(n).toLocaleString('en'));

/** Tests not run (a χ² run over the largest made), said so rather than counted as a miss. */
const notRun = (g, b) => ((b.not_run ?? []).length ? `<br><small>${tr(`not run (over ${g.cap.toLocaleString('en')} samples): `, `没有运行（超过 ${g.cap.toLocaleString('en')} 个样本）：`)}${testNames(g, b.not_run)}</small>` : '');

/** The result: caption, the samples-needed figure, one row a bug, and the correct rule's row. */
export function galleryHtml(g) {
  const head = ['#', tr('bug', '缺陷'), tr('what it does', '它做了什么'), tr('source', '出处'), tr(`exact TV (γ = ${g.gamma}, ${g.window} tokens)`, `精确 TV（γ = ${g.gamma}，${g.window} 个 token）`),
    tr('samples needed (χ², 95%)', '所需样本数（χ²，95%）'), tr('caught by', '能发现它的'), tr('missed by', '漏掉它的')];
  const rows = g.variants.map((b, i) => [String(i + 1), escapeHtml(b.label), escapeHtml(b.what), sourceLink(b.source), `<span class="bad">${fmt(b.tv)}</span>`,
    needed(b.samples_needed), testNames(g, b.detected_by), testNames(g, b.missed_by) + notRun(g, b)]);
  const c = g.correct;
  const alarms = c.false_alarms.map((f) => tr(`${f.alarms} of ${c.seeds} seeds at ${f.samples.toLocaleString('en')} samples`,
    `${f.samples.toLocaleString('en')} 个样本时 ${c.seeds} 个种子中 ${f.alarms} 次`)).join(tr(', ', '，'));
  rows.push(['✓', tr('the correct rule', '正确的规则'), tr('the lecture’s Algorithm 1', '课上的算法 1'), '—', `<span class="ok">${fmt(c.tv)}</span>`, '—',
    tr(`no alarm in enumeration or greedy identity (${c.greedy_identical}/${c.greedy_runs}), rightly; χ² false alarms (level 5%): ${alarms}`,
      `精确枚举和贪心逐字相同（${c.greedy_identical}/${c.greedy_runs}）都不报警，本该如此；χ² 误报（检验水平 5%）：${alarms}`), '—']);
  return `<p class="numbers gallery-caption">${escapeHtml(g.caption)}</p><div class="plots">${g.svg}</div>${table([head, ...rows], 'gallery-bugs')}`;
}

/** Wires a freshly drawn gallery part (its Run, Cancel); a part already wired is left as it is. */
export function wireGallery(ui, view, toy) {
  const part = view.querySelector('section.gallery');
  if (!part || part.dataset.wired) return;
  part.dataset.wired = '1';
  // A fresh part is another world: a run for the old one is no longer wanted.
  jobs.get(ui.root)?.cancel();
  const [go, cancel, bar, status, result] = ['.gallery-go', '.gallery-cancel', 'progress', '.gallery-status', '.gallery-result'].map((s) => part.querySelector(s));
  const busy = (on) => { cancel.hidden = !on; bar.hidden = !on; go.disabled = on; part.setAttribute('aria-busy', String(on)); };
  go.onclick = ui.inLang(() => {
    const job = runJob('gallery', { toy, figure_width: ui.figureWidth() },
      ui.inLang((st) => { status.textContent = `${tr('Gallery', '缺陷陈列')}: ${st}…`; }), channelOf(ui, 'gallery'), titleOf(ui));
    jobs.set(ui.root, job);
    busy(true);
    cancel.onclick = () => job.cancel();
    job.promise.then(ui.inLang((g) => {
      status.textContent = tr(`Done: ${g.variants.length} bugs and the correct rule.`, `完成：${g.variants.length} 个缺陷和正确的规则。`);
      result.innerHTML = galleryHtml(g);
      ui.root.dataset.gallery = String(Number(ui.root.dataset.gallery || 0) + 1);
    }), ui.inLang((e) => {
      status.textContent = e instanceof CancelledError ? tr('Gallery: cancelled.', '缺陷陈列：已取消。') : `${tr('Gallery failed', '缺陷陈列失败')}: ${e.message}`;
    })).finally(() => { if (jobs.get(ui.root) === job) jobs.delete(ui.root); busy(false); });
  });
}

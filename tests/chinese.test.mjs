// The Chinese page, walked as a student would (issue 23): every widget, every experiment of the
// decoding and model-free widgets (small jobs), the notes the page writes for bad URL values, the
// engine's errors, the WebGPU fallback note, the export menus, the Share link and the footer.
// It fails on any English sentence left in what the page shows.
//
// "An English sentence", precisely: in one text node (or a title, aria-label, placeholder or alt
// attribute), three or more ASCII words of letters in a row, at least two of them of two letters
// or more, separated only by spaces, parentheses, "+" or apostrophes ("suffix index (earlier
// outputs)", "the control’s steps of"), after the names below are taken out (names of methods,
// libraries and units, which the Chinese lecture also writes in Latin letters). Not a sentence: a
// run of one-letter tokens ("a b d e", the lecture's exercise), a list with commas (control keys
// such as "alpha, gamma, c"), and a run made only of LikesWorld's vocabulary (a world, a prompt,
// an output: "dan likes tea"), which is the model's text, not the page's; nor the tokens of the
// model-free widget's outputs and of the tree widget's typed sequences, which are data.
//
// Nor may the Chinese page show two things a sentence test misses (`leftovers`): an identifier
// of the URL's in place of a name ("采样（greedy-rule）": lower-case words of two letters or more
// joined by hyphens, such as a rule's id; "top-k" and "n-gram" are names), and a Latin colon
// between Latin words ("CPU: flex", which Chinese writes "CPU：flex").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, wake } from './browser.mjs';
import { setControl, alertOf, decoded, mfDone } from './helpers.mjs';

/** Names written in Latin letters on the Chinese page too (longest first where they overlap). */
export const NAMES = [
  'Prompt Lookup', 'Speculative decoding, exactly', 'specdec-playground', 'LikesWorld', 'WebGPU', 'WebAssembly', 'SpecInfer',
  'SuffixDecoding', 'Lookahead', 'Jacobi', 'EAGLE-2', 'EAGLE', 'VerifyGreedy', 'MSS', 'flex', 'ndarray', 'burn', 'Rust',
  'teacher forcing', 'boost-tuning', 'mega-kernel', 'top-k', 'argmax', 'Monte Carlo', 'Okabe–Ito', 'SVG', 'PNG', 'CSV', 'GPU', 'CPU', 'OPT', 'A100', 'H100',
  'H200', 'RTX', 'token', 'tokens', 'logits', 'worker', 'norm', 'min', 'max', 'softmax', 'log', 'exp', 'ms', 'µs', 'GB', 'MB', 'KB', 'TFLOPS', 'FLOPs',
];
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// Whole names only: "min" is a name, the "min" of "minimum" is not.
const NAME_RE = new RegExp(`(?<![A-Za-z])(?:${NAMES.map(escape).join('|')})(?![A-Za-z])`, 'g');
/** LikesWorld's vocabulary (crate/math/src/likesworld/mod.rs): a run of only these is a world. */
const VOCAB = new Set(['likes', 'q', 'ann', 'bob', 'cal', 'dan', 'eve', 'fay', 'gus', 'hal', 'ivy', 'jon', 'kim', 'lee', 'max', 'ned',
  'oli', 'pam', 'rex', 'sue', 'jam', 'nuts', 'tea', 'figs', 'rice', 'soup', 'cake', 'pie', 'eggs', 'milk', 'corn', 'plums', 'beans',
  'honey', 'salt', 'kale', 'bos', 'eos', 'pad']);
/** Elements that show a model's tokens or a person's typed data, not the page's words. */
const DATA = '.mf-prompt, .mf-output, code, [data-widget="tree"] table.order td';

/** The English runs in `text`: three or more ASCII words in a row, the names taken out. */
export function englishRuns(text) {
  const rest = text.replace(NAME_RE, ' · ');
  const runs = rest.match(/[A-Za-z]+(?:[\s()+'’]+[A-Za-z]+){2,}/g) ?? [];
  return runs.filter((r) => {
    const words = r.split(/[^A-Za-z]+/);
    return words.filter((w) => w.length >= 2).length >= 2 && !words.every((w) => VOCAB.has(w));
  });
}

/** An id of the URL's or a Latin colon left in `text` (see the header), the names taken out. */
export function leftovers(text) {
  const rest = text.replace(NAME_RE, ' · ');
  // Not inside a path ("pkg/mt-fma/"), which is a name.
  const ids = rest.match(/(?<![\w/-])[a-z]{2,}(?:-[a-z]{2,})+(?![\w/-])/g) ?? [];
  const colons = text.match(/[A-Za-z]+: [A-Za-z]+/g) ?? [];
  return [...ids, ...colons];
}

/** Every text of the document the page can show, with where it is: [where, text]. */
function pageTexts(dataSelector) {
  const out = [];
  const where = (el) => {
    const w = el.closest('[data-widget]');
    const tag = el.closest('footer') ? 'footer' : el.tagName.toLowerCase();
    return `${w ? w.dataset.widget : 'page'} ${tag}${el.className && typeof el.className === 'string' ? `.${el.className.split(' ')[0]}` : ''}`;
  };
  const skip = (el) => el.closest('script, style, [data-lang="en"]') || el.closest(dataSelector);
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!skip(n.parentElement) && n.textContent.trim()) out.push([where(n.parentElement), n.textContent]);
  }
  for (const el of document.body.querySelectorAll('[title], [aria-label], [placeholder], [alt]')) {
    if (skip(el)) continue;
    for (const a of ['title', 'aria-label', 'placeholder', 'alt']) if (el.getAttribute(a)) out.push([`${where(el)}[${a}]`, el.getAttribute(a)]);
  }
  out.push(['document title', document.title]);
  return out;
}

let env;
before(async () => { env = await start({ webgpu: false }); });
after(async () => { await env?.close(); });

/** A page opened at `path` (this browser has no WebGPU: choosing it gives the fallback note). */
async function openZh(path) {
  const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(env.url + path);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  await wake(page);
  return { page, errors };
}

/** Collects the English runs on `page` now into `found` (a Map run → where, step). */
async function collect(page, step, found) {
  for (const [where, t] of await page.evaluate(pageTexts, DATA)) {
    for (const run of [...englishRuns(t), ...leftovers(t)]) if (!found.has(run)) found.set(run, `${where} (${step}): “${t.trim().slice(0, 160)}”`);
  }
}

const report = (found) => [...found].map(([run, at]) => `  “${run}” in ${at}`).join('\n');

test('the definition of an English sentence: three words in a row, names and LikesWorld worlds aside', () => {
  assert.deepEqual(englishRuns('α: “abc” is not a number; using 0.8'), ['is not a number']);
  assert.deepEqual(englishRuns('draft B chain γ 1, greedy'), ['draft B chain']);
  assert.deepEqual(englishRuns('草稿 B 链 γ 1，贪心'), []);
  assert.deepEqual(englishRuns('Prompt Lookup 只在改了名的标识符处断开'), []);
  assert.deepEqual(englishRuns('<bos> dan likes tea . q dan tea'), []);
  assert.deepEqual(englishRuns('在 LikesWorld on flex 上'), []);
  assert.deepEqual(englishRuns('Done on flex in 0.4 s.'), []);
  assert.deepEqual(englishRuns('Done on the CPU in 0.4 s.'), ['Done on the']);
  assert.deepEqual(englishRuns('后缀 · suffix index (earlier outputs)'), ['suffix index (earlier outputs']);
  assert.deepEqual(englishRuns('γ: 2.5 is not on the control’s steps of 1'), ['is not on the control’s steps of']);
  assert.deepEqual(englishRuns('练习 5 · [a b c] [a b d e] [f g]'), []);
  assert.deepEqual(englishRuns('hide：“x” 不是这个组件的控件（alpha, gamma, c, c_hat）'), []);
  // What a sentence test misses: a rule's id in place of its name, a Latin colon.
  assert.deepEqual(leftovers('草稿 A 链 γ 3，采样（greedy-rule）'), ['greedy-rule']);
  assert.deepEqual(leftovers('CPU: flex'), ['CPU: flex']);
  assert.deepEqual(leftovers('集体 boost-tuning · pkg/mt-fma/ · mega-kernel'), []);
  assert.deepEqual(leftovers('草稿 A 链 γ 3，采样（贪心规则） · CPU：flex · top-k（确定性） · 最短 n-gram · EAGLE-2 · specdec-playground'), []);
});

test('the Chinese page (?lang=zh) shows no English sentence: every widget, experiment, note, error, export menu and the footer', async () => {
  const found = new Map();
  const bad = 'theory.alpha=abc&exactness.seed=-3&roofline.gpu=nope&theory.gamma=2.5&likesworld.text=dan%20loves%20tea%20.';
  const small = 'decoding.experiment=acceptance&decoding.prompts=10&decoding.backend=wgpu&modelfree.requests=10&modelfree.backend=wgpu';
  const { page, errors } = await openZh(`?lang=zh&${bad}&${small}`);
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN', '?lang=zh gives the Chinese page');
  await decoded(page, 1);
  await mfDone(page, 1);
  await page.waitForFunction(() => document.querySelector('[data-widget="likesworld"] [role="alert"]').textContent.includes('loves'), null, { timeout: 60_000 });
  assert.match(await alertOf(page, 'likesworld'), /loves/);
  assert.match(await alertOf(page, 'theory'), /abc/);
  assert.match(await page.textContent('[data-widget="decoding"] .dec-note'), /WebGPU/, 'the fallback note');
  await collect(page, 'bad URL values, acceptance on WebGPU, model-free table', found);
  // The Share link, in the widget's alert.
  await page.click('[data-widget="theory"] .share');
  await collect(page, 'Share', found);
  // Every choice of every analytic widget's selects (they redraw at once).
  for (const w of ['roofline', 'theory', 'exactness', 'multidraft', 'tree', 'choose']) {
    const selects = await page.$$eval(`[data-widget="${w}"] select`, (ss) => ss.map((s) => [s.dataset.key, [...s.options].map((o) => o.value)]));
    for (const [key, values] of selects) {
      for (const v of values) {
        await page.$eval(`[data-widget="${w}"] [data-key="${key}"]`, (el, x) => { el.value = x; el.dispatchEvent(new Event('input', { bubbles: true })); }, v);
        await collect(page, `${w}.${key}=${v}`, found);
      }
    }
  }
  // The sampling rules are named in Chinese: their ids ("bonus-from-draft") are the URL's.
  const rules = await page.$$eval('[data-widget="exactness"] [data-key="variant"] option, [data-widget="exactness"] table.tvs tbody td:first-child', (els) => els.map((e) => e.textContent));
  assert.ok(rules.includes('奖励取自草稿') && rules.every((r) => !/^[a-z]+(-[a-z]+)+$/.test(r)), rules.join(' | '));
  // Every experiment of the decoding widget, small, on flex.
  await setControl(page, 'decoding', 'backend', 'flex');
  const jobs = [
    ['greedy', { gamma: 2 }], ['sample', { gamma: 2, repeats: 1 }], ['tree', { config: '<2,1>' }], ['stochastic', { config: '<1,2>' }],
    ['speedup', { gamma: 2, batch: '1' }], ['load', { gamma: 2, batches: '1,2', shape: 'chain' }], ['step', { stepkind: 'chain' }], ['step', { stepkind: 'tree', config: '<2,1>' }],
    // This device's choice: the sweep's sentence and marked row, the §6 table's sizes.
    ['sweep', { gammas: '1,2', shape: 'chain', batch: '1' }], ['methods', { budget: 'auto' }],
  ];
  for (const [experiment, values] of jobs) {
    const n = Number(await page.getAttribute('[data-widget="decoding"]', 'data-decoded'));
    for (const [k, v] of Object.entries(values)) {
      await page.$eval(`[data-widget="decoding"] [data-key="${k}"]`, (el, x) => { el.value = String(x); }, v);
    }
    await setControl(page, 'decoding', 'experiment', experiment);
    await decoded(page, n + 1);
    await collect(page, `decoding ${experiment} ${JSON.stringify(values)}`, found);
  }
  // The step-through of a sampling chain under a wrong rule names the rule in its header, in
  // Chinese ("采样（greedy-rule）" once): the rule set as a person sets it, the header awaited.
  await setControl(page, 'decoding', 'experiment', 'step');
  for (const [k, v] of [['stepkind', 'chain'], ['variant', 'greedy-rule']]) {
    if (await page.inputValue(`[data-widget="decoding"] [data-key="${k}"]`) !== v) await setControl(page, 'decoding', k, v);
  }
  await page.waitForFunction(() => /采样（贪心规则）/.test(document.querySelector('[data-widget="decoding"] .view').textContent), null, { timeout: 120_000 })
    .catch(async (e) => assert.fail(`${e.message}: ${(await page.textContent('[data-widget="decoding"] .view')).replace(/\s+/g, ' ').slice(0, 400)} · alert: ${await page.textContent('[data-widget="decoding"] [role="alert"]')} · variant ${await page.inputValue('[data-widget="decoding"] [data-key="variant"]')}`));
  await collect(page, 'decoding step, greedy rule', found);
  // A cancelled job and a core error from the worker.
  await setControl(page, 'decoding', 'experiment', 'greedy');
  await page.click('[data-widget="decoding"] .dec-cancel');
  await collect(page, 'decoding cancelled', found);
  await setControl(page, 'decoding', 'experiment', 'tree');
  await page.fill('[data-widget="decoding"] [data-key="config"]', '<9,9>');
  await page.waitForFunction(() => document.querySelector('[data-widget="decoding"] [role="alert"]').textContent.includes('64'), null, { timeout: 60_000 });
  await collect(page, 'decoding tree over budget', found);
  // Every experiment of the model-free widget, and each drafter and workload shown by name.
  for (const [experiment, extra] of [['sweep', {}], ['jacobi', {}], ['highlight', { drafter: 'lookahead', workload: 'likesworld' }]]) {
    const n = Number(await page.getAttribute('[data-widget="modelfree"]', 'data-decoded'));
    for (const [k, v] of Object.entries(extra)) await page.$eval(`[data-widget="modelfree"] [data-key="${k}"]`, (el, x) => { el.value = x; }, v);
    await setControl(page, 'modelfree', 'experiment', experiment);
    await mfDone(page, n + 1);
    await collect(page, `modelfree ${experiment}`, found);
  }
  // Every widget's export menu, opened.
  for (const w of await page.$$eval('[data-widget]', (els) => els.map((e) => e.dataset.widget))) {
    await page.click(`[data-widget="${w}"] details.export summary`);
    await page.waitForFunction((x) => document.querySelector(`[data-widget="${x}"] .export-list`).children.length > 0, w);
    await collect(page, `${w} export menu`, found);
  }
  assert.equal(found.size, 0, `English left on the Chinese page:\n${report(found)}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the Chinese embed page: an unknown widget, a hidden control that does not exist, a bad value', async () => {
  const found = new Map();
  const { page } = await openZh('embed.html?lang=zh&widget=nope');
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
  await collect(page, 'embed: unknown widget', found);
  await page.goto(`${env.url}embed.html?lang=zh&widget=theory&hide=nope,alpha&gamma=99`);
  await page.waitForSelector('html[data-ready="true"]');
  assert.match(await alertOf(page, 'theory'), /nope/);
  await collect(page, 'embed: hide and a value out of range', found);
  assert.equal(found.size, 0, `English left on the Chinese embed page:\n${report(found)}`);
  await page.close();
});

// Browser tests of per-sequence against tree-parallel verification (§4.3, issue 34): a run shows
// the lecture's exact token counts per batch, both times and their ratio, identical verdicts and
// the comparison with SpecInfer's Figure 11, in English and in Chinese; at 390 px nothing makes
// the page scroll sideways; bad values get one clear message and the widget keeps working;
// EAGLE-2's dynamic tree, one per prompt, with each prompt's own counts; and the same run on
// WebGPU (SwiftShader here).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { setControl, text, alertOf, tooWide } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const W = '[data-widget="treepaths"]';
const measured = (page, n) => page.waitForFunction((k) => Number(document.querySelector('[data-widget="treepaths"]')?.dataset.decoded || 0) >= k, n, { timeout: 240_000 });

/** The table's rows after the header: [batch, tokens tree, tokens paths, tree µs, paths µs, ratio,
 * verdict], each time without its IQR (checked to be there). */
async function rows(page) {
  const all = await page.$$eval(`${W} table.tp-rows tr`, (trs) => trs.slice(1).map((r) => [...r.cells].map((c) => c.textContent.trim())));
  for (const r of all) for (const t of [r[3], r[4]]) assert.match(t, /^\d+ ?[(（]IQR \d+[)）]$/, r.join(' | '));
  return all.map((r) => r.map((c) => c.split(/ ?[(（]/)[0]));
}

test('tree vs paths: ⟨2,2,1⟩ at batch 1, 2, 4, 8 computes 10 vs 12 tokens a prompt, both timed, verdicts identical, beside Figure 11', async () => {
  const { page, errors } = await open(env, '?treepaths.batches=1,2,4,8');
  // Nothing runs until asked: it times this device.
  assert.equal(await page.$(`${W} table.tp-rows`), null);
  await page.click(`${W} .tp-go`);
  await measured(page, 1);
  const r = await rows(page);
  assert.deepEqual(r.map((x) => x.slice(0, 3)), [['1', '10', '12'], ['2', '20', '24'], ['4', '40', '48'], ['8', '80', '96']]);
  for (const x of r) {
    const [tree, paths, ratio] = [Number(x[3]), Number(x[4]), Number(x[5])];
    assert.ok(tree > 0 && paths > 0, x.join(' '));
    assert.ok(Math.abs(ratio - paths / tree) < 0.02 + 0.01 * ratio, x.join(' '));
    assert.equal(x[6], 'identical');
  }
  const all = await text(page, `${W} .tp-result`);
  assert.match(all, /Figure 11(, where it rises)? \(comparable at small batch, up to 1\.8× at large batch\)/);
  assert.match(all, /Tree ⟨2,2,1⟩: 10 nodes .* 12 tokens over its 4 root-to-leaf paths/);
  assert.match(all, /Per sequence computes 1\.20× the tokens \(12 instead of 10 per prompt\)/);
  assert.match(all, /Both ways gave every prompt the same verdict/);
  // A batch whose calls spread over half their median is flagged; a steady table is not.
  const noise = await page.evaluate(async () => {
    const { noisyBatches } = await import('./widgets/treepaths.js');
    const row = (batch, tree_iqr_us) => ({ batch, tree_us: 1000, paths_us: 1200, tree_iqr_us, paths_iqr_us: 10 });
    return [noisyBatches({ rows: [row(1, 10), row(8, 600)] }), noisyBatches({ rows: [row(1, 10), row(8, 400)] })];
  });
  assert.match(noise[0], /Noisy: at batch 8 the calls varied by more than half their median \(IQR\)/);
  assert.equal(noise[1], '');
  assert.match(await text(page, `${W} .tp-status`), /Measured on flex/);
  assert.match(await page.$eval(`${W} .tp-plot svg`, (s) => s.textContent), /10 nodes vs 12 path tokens/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('tree vs paths: exercise 5, ⟨2,2,2,2⟩ and the slides’ example give the lecture’s counts (7 vs 9, 30 vs 64)', async () => {
  const { page, errors } = await open(env, '?treepaths.batches=8&treepaths.config=exercise-5');
  await page.click(`${W} .tp-go`);
  await measured(page, 1);
  assert.deepEqual((await rows(page)).map((x) => x.slice(0, 3)), [['8', '56', '72']]);
  assert.match(await text(page, `${W} .tp-result`), /as fast at batch 8; measure several batch sizes to compare the trend with SpecInfer’s Figure 11/);
  // After the first Measure every change measures again.
  await setControl(page, 'treepaths', 'config', '<2,2,2,2>');
  await measured(page, 2);
  assert.deepEqual((await rows(page)).map((x) => [...x.slice(0, 3), x[6]]), [['8', '240', '512', 'identical']]);
  await setControl(page, 'treepaths', 'config', 'slides');
  await measured(page, 3);
  assert.deepEqual((await rows(page)).map((x) => x.slice(0, 3)), [['8', '48', '56']]);
  assert.deepEqual(errors, []);
  await page.close();
});

/** The per-prompt counts the result states: [[nodes, path tokens], …] in the prompts' order. */
function perPrompt(all) {
  const m = all.match(/(?:nodes \/ path tokens|节点数 \/ 路径 token 数)：?:? ?([\d/, ，]+)/);
  assert.ok(m, all);
  return m[1].split(/[,，]\s*/).filter(Boolean).map((x) => x.trim().split('/').map(Number));
}

test('tree vs paths: EAGLE-2’s dynamic tree on flex grows a tree per prompt, counts each prompt’s own tokens, and the verdicts agree (English and Chinese)', async () => {
  const { page, errors } = await open(env, '?treepaths.batches=1,2,4,8&treepaths.config=eagle-2');
  await page.click(`${W} .tp-go`);
  await measured(page, 1);
  const r = await rows(page);
  assert.deepEqual(r.map((x) => x[0]), ['1', '2', '4', '8']);
  const all = await text(page, `${W} .tp-result`);
  assert.match(all, /EAGLE-2 grew a tree of its own after each of the 8 prompts, on the target’s features/);
  const trees = perPrompt(all);
  assert.equal(trees.length, 8, all);
  // The trees differ between prompts, and each row adds its prompts' own counts.
  assert.ok(new Set(trees.map((t) => t.join('/'))).size >= 2, all);
  for (const x of r) {
    const b = Number(x[0]);
    const sum = (k) => trees.slice(0, b).reduce((s, t) => s + t[k], 0);
    assert.deepEqual([Number(x[1]), Number(x[2])], [sum(0), sum(1)], x.join(' '));
    assert.ok(Number(x[3]) > 0 && Number(x[4]) > 0, x.join(' '));
    assert.equal(x[6], 'identical');
  }
  assert.match(all, /Tree EAGLE-2's dynamic tree per prompt \(16 nodes at most\)/);
  assert.match(all, /a tree per prompt\)/);
  assert.match(all, /Both ways gave every prompt the same verdict/);
  assert.match(await text(page, `${W} .tp-status`), /Measured on flex/);
  assert.deepEqual(errors, []);
  await page.close();
  const zh = await open(env, 'embed.html?widget=treepaths&lang=zh&batches=8&config=eagle-2', { width: 390, height: 844 });
  await zh.page.click(`${W} .tp-go`);
  await measured(zh.page, 1);
  const zr = await rows(zh.page);
  const zall = await text(zh.page, `${W} .tp-result`);
  assert.match(zall, /EAGLE-2 在目标模型的特征上，为 8 个提示词各长出一棵树/);
  const zsum = (k) => perPrompt(zall).reduce((s, t) => s + t[k], 0);
  assert.deepEqual(zr.map((x) => [x[0], Number(x[1]), Number(x[2]), x[6]]), [['8', zsum(0), zsum(1), '相同']]);
  assert.doesNotMatch(zall, /tokens|verdict|grew/);
  assert.deepEqual(zh.errors, []);
  await zh.page.close();
});

test('tree vs paths: bad values get one clear message and the widget keeps working; a tree whose paths share no node is not said to cost more tokens', async () => {
  const { page, errors } = await open(env, '?treepaths.config=%3C2,,1%3E&treepaths.batches=1');
  assert.match(await alertOf(page, 'treepaths'), /tree: “<2,,1>” is not one of the choices; using “⟨2,2,1⟩” \(<2,2,1>\)/);
  // The engine's own checks, in the worker: a batch of 0, a malformed list, a bad tree, too many
  // nodes, a width off the range.
  const refused = await page.evaluate(async () => {
    const { runJob } = await import('./engine.js');
    const why = (p) => runJob('tree_vs_paths', p, null, 'tp-test').promise.then(() => 'ran', (e) => e.message);
    return [await why({ batches: '0,4' }), await why({ batches: '1,x' }), await why({ config: '<2,,1>' }),
      await why({ config: '<4,4,4>' }), await why({ target_width: 25 }), await why({ config: 'eagle-2:0' }), await why({ config: 'eagle-3' })];
  });
  assert.match(refused[0], /batch = 0 is out of range/, refused[0]);
  assert.match(refused[1], /bad batch list "1,x": every value must be a whole number/, refused[1]);
  assert.match(refused[2], /tree config/, refused[2]);
  assert.match(refused[3], /84 nodes, over the budget of 64/, refused[3]);
  assert.match(refused[4], /width.*25/, refused[4]);
  assert.match(refused[5], /bad tree "eagle-2:0": EAGLE-2’s node budget|bad tree "eagle-2:0": EAGLE-2's node budget/, refused[5]);
  assert.match(refused[6], /bad tree "eagle-3"/, refused[6]);
  // The widget still measures, with the value it fell back on.
  await page.click(`${W} .tp-go`);
  await measured(page, 1);
  assert.deepEqual((await rows(page)).map((x) => x.slice(0, 3)), [['1', '10', '12']]);
  // A tree of one level, ⟨8⟩: both ways compute 8 tokens, so a slower per-sequence call is put
  // down to the copies of the cache, not to tokens it does not compute.
  const flat = await page.evaluate(async () => {
    const { compareSentence } = await import('./widgets/treepaths.js');
    const row = (batch, ratio) => ({ batch, ratio, tokens_tree: 8 * batch, tokens_paths: 8 * batch });
    return compareSentence({ rows: [row(1, 1.19), row(8, 1.3)], nodes: 8, path_tokens: 8, backend: 'flex', prompt_trees: null });
  });
  assert.match(flat, /though here it computes no more tokens/);
  assert.match(flat, /as many tokens as the tree here \(8 per prompt: no node lies on two paths\)/);
  assert.doesNotMatch(flat, /grows with the tokens|1\.00× the tokens|instead of/);
  // Timed rows whose calls spread widely: no "slower", no trend, no "beyond" read from them; the
  // same ratios from steady calls are read.
  const [noisy, steady] = await page.evaluate(async () => {
    const { compareSentence } = await import('./widgets/treepaths.js');
    const row = (batch, ratio, iqr) => ({ batch, ratio, tokens_tree: 10 * batch, tokens_paths: 12 * batch, tree_us: 1000, tree_iqr_us: iqr, paths_us: 1000 * ratio, paths_iqr_us: iqr * ratio });
    const v = (iqr) => ({ rows: [row(1, 1.3, iqr), row(8, 1.6, iqr)], nodes: 10, path_tokens: 12, backend: 'flex', prompt_trees: null });
    return [compareSentence(v(300)), compareSentence(v(10))];
  });
  assert.match(noisy, /but within its calls’ spread \(IQR\), so no trend can be read/);
  assert.match(noisy, /At batch 1 per sequence took 1\.30× as long, but within its calls’ spread/);
  assert.doesNotMatch(noisy, /rises with the batch|already slower|goes beyond it/);
  assert.match(steady, /the ratio rises with the batch/);
  assert.match(steady, /already slower at batch 1/);
  assert.match(steady, /and here it goes beyond it/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('tree vs paths in Chinese, at 390 px: the numbers, the Figure 11 sentence, and nothing wider than the phone', async () => {
  const { page, errors } = await open(env, 'embed.html?widget=treepaths&lang=zh&batches=1,2,4,8', { width: 390, height: 844 });
  await page.click(`${W} .tp-go`);
  await measured(page, 1);
  const r = await rows(page);
  assert.deepEqual(r.map((x) => [...x.slice(0, 3), x[6]]), [['1', '10', '12', '相同'], ['2', '20', '24', '相同'], ['4', '40', '48', '相同'], ['8', '80', '96', '相同']]);
  const all = await text(page, `${W} .tp-result`);
  assert.match(all, /SpecInfer 的图 11/);
  assert.match(all, /两种方式给每个提示词的判定都相同/);
  assert.doesNotMatch(all, /Figure|tokens|verdict/);
  assert.match(await page.$eval(`${W} .tp-plot svg`, (s) => s.textContent), /树形并行/);
  assert.deepEqual(await tooWide(page, 'treepaths', '.tp-plot svg'), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('tree vs paths on WebGPU (SwiftShader): the same counts and identical verdicts, or the note of a CPU run', async () => {
  const { page, errors } = await open(env, '?treepaths.batches=1&treepaths.backend=wgpu');
  await page.click(`${W} .tp-go`);
  await measured(page, 1);
  const r = await rows(page);
  assert.deepEqual(r.map((x) => [...x.slice(0, 3), x[6]]), [['1', '10', '12', 'identical']]);
  const status = await text(page, `${W} .tp-status`);
  const note = await page.$eval(`${W} .tp-note`, (n) => (n.hidden ? '' : n.textContent));
  // Where the browser has no adapter the job runs on flex and says so.
  if (note) assert.match(status, /Measured on flex/, note);
  else assert.match(status, /Measured on wgpu/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('tree vs paths: EAGLE-2’s dynamic tree on WebGPU (SwiftShader) too: the hidden drafts reach the GPU module, verdicts identical', async () => {
  const { page, errors } = await open(env, '?treepaths.batches=1&treepaths.backend=wgpu&treepaths.config=eagle-2');
  await page.click(`${W} .tp-go`);
  await measured(page, 1);
  const [t] = perPrompt(await text(page, `${W} .tp-result`));
  assert.deepEqual((await rows(page)).map((x) => [x[0], Number(x[1]), Number(x[2]), x[6]]), [['1', t[0], t[1], 'identical']]);
  assert.match(await text(page, `${W} .tp-status`), /Measured on (wgpu|flex)/);
  assert.deepEqual(errors, []);
  await page.close();
});

// Browser tests of training a draft in the page (issue 33; lecture §4.2): a tiny, fast
// configuration trains in the widget's worker on the training module, draws its loss curve and
// checks, and keeps the draft in the browser's storage; the decoding widget then speculates with
// it (every greedy output the target's own), also after a reload, with the same α; the same seed
// gives the same loss curve; Download gives the file, and Load takes it back while a corrupt or
// foreign file is refused with a message and changes nothing; Forget forgets it; Cancel stops a
// run mid-way and keeps nothing; in Chinese at 390 px nothing is wider than the phone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { start, open, wake } from './browser.mjs';
import { text, alertOf, rowsOf, decoded, tooWide, setControl } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const W = '[data-widget="train"]';
const TINY = '?train.shape=16,1,2,32&train.steps=50';
const count = (page, key) => page.$eval(W, (e, k) => Number(e.dataset[k] || 0), key);
const trained = (page, n) => page.waitForFunction((k) => Number(document.querySelector('[data-widget="train"]')?.dataset.trained || 0) >= k, n, { timeout: 240_000 });
const kept = (page) => text(page, `${W} .tr-kept`);

/** A greedy chain of the trained draft in the decoding widget: its rows. */
async function decodeWithYours(page) {
  // The course page's decoding widget runs by itself on load: wait for that run first.
  await decoded(page, 1);
  const n = await page.$eval('[data-widget="decoding"]', (e) => Number(e.dataset.decoded));
  await setControl(page, 'decoding', 'draft', 'yours');
  await decoded(page, n + 1);
  return rowsOf(page, '[data-widget="decoding"] table.dec-greedy');
}

test('train: a tiny draft trains, is checked beside the shipped one, kept, and speculates in the decoding widget — after a reload too', async () => {
  const { page, errors } = await open(env, `${TINY}&decoding.experiment=greedy&decoding.prompts=10&decoding.gamma=2#train`, { height: 1400 });
  await page.click(`${W} .tr-go`);
  await trained(page, 1);
  assert.match(await text(page, `${W} .tr-status`), /^Trained 50 steps in .*; kept in this browser\.$/);
  const check = await text(page, `${W} .tr-check`);
  assert.match(check, /At step 50: greedy chains of γ 4 on 50 held-out prompts give τ \d\.\d\d tokens per target call \(α 0\.\d{3}\); the shipped A gives τ 2\.\d\d, α 0\.\d{3}\. 50\/50 outputs identical to the target’s own\./);
  const kinds = await page.$$eval(`${W} table.tr-kinds tr td:first-child`, (c) => c.map((x) => x.textContent));
  assert.ok(kinds.includes('boilerplate') && kinds.includes('answer'), kinds.join(', '));
  // The curve: a loss line and the checks: before any step, every round(50 / 8) = 6 steps, and at the end.
  assert.equal(await page.$$eval(`${W} .tr-chart circle`, (c) => c.length), 1 + 8 + 1);
  const ys = await page.$eval(`${W} .tr-chart polyline`, (p) => p.getAttribute('points').split(' ').map((xy) => Number(xy.split(',')[1])));
  assert.ok(ys[ys.length - 1] > ys[0] + 20, `the loss falls (lower on the chart): ${ys[0]} → ${ys[ys.length - 1]}`);
  assert.match(await kept(page), /^Kept in this browser: your draft \(16,1,2,32: d, layers, heads, d_ff; the target’s greedy outputs, 50 steps, seed 1, τ \d\.\d\d at γ 4\)/);

  const rows = await decodeWithYours(page);
  assert.ok(rows.length > 1 && rows.slice(1).every((r) => /^your draft chain γ \d+, greedy 10\/10 /.test(r)), rows.join(' | '));
  const note = await text(page, '[data-widget="decoding"] .dec-note');
  assert.match(note, /Your draft trained in this page \(16,1,2,32: d, layers, heads, d_ff\) proposes in this run, in the place of drafts A and B\./);

  // A reload: the draft is still kept, and decodes the same (the same α and τ to the digit).
  await page.reload();
  await page.waitForSelector('html[data-ready="true"]');
  await wake(page);
  await page.waitForFunction(() => /Kept in this browser/.test(document.querySelector('[data-widget="train"] .tr-kept')?.textContent));
  const again = await decodeWithYours(page);
  assert.deepEqual(again.map((r) => r.replace(/\d+(\.\d+)? ?(ms|µs|s)\b.*$/, '')), rows.map((r) => r.replace(/\d+(\.\d+)? ?(ms|µs|s)\b.*$/, '')));
  // An experiment without a choice of draft (acceptance runs both shipped drafts) does not take
  // the draft chosen before: no note says the student's draft proposed.
  const n = await page.$eval('[data-widget="decoding"]', (e) => Number(e.dataset.decoded));
  await setControl(page, 'decoding', 'experiment', 'acceptance');
  await decoded(page, n + 1);
  assert.ok(await page.$eval('[data-widget="decoding"] .dec-note', (e) => e.hidden || !/Your draft/.test(e.textContent)));
  assert.deepEqual(errors, []);
  await page.close();
});

test('train: the same seed gives the same loss curve; another seed another', async () => {
  const { page } = await open(env, '?train.steps=50');
  const curve = (seed) => page.evaluate((params) => new Promise((resolve, reject) => {
    const w = new Worker(new URL('train-worker.js', location.href), { type: 'module' });
    const losses = [];
    w.onmessage = ({ data }) => {
      if (data.kind === 'points') losses.push(...data.points.map((p) => p.loss));
      if (data.kind === 'error') reject(new Error(data.message));
      if (data.kind === 'done') { w.terminate(); resolve(losses); }
    };
    w.postMessage({ params, every: 20 });
  }), { shape: '16,1,2,32', teacher: 'kl', steps: 20, batch: 8, corpus: 32, prompts: 4, seed, lang: 'en' });
  const [a, b, c] = [await curve(3), await curve(3), await curve(4)];
  assert.equal(a.length, 20);
  assert.ok(a.every((l) => Number.isFinite(l) && l > 0), a.join(' '));
  assert.deepEqual(a, b, 'the same seed, the same losses, bit for bit');
  assert.notDeepEqual(a, c, 'another seed, another run');
  await page.close();
});

test('train: Download gives the file; Load takes it back; a corrupt or foreign file is refused and changes nothing; Forget forgets', async () => {
  const { page, errors } = await open(env, `${TINY}&decoding.experiment=greedy&decoding.prompts=10&decoding.gamma=2#train`, { height: 1400 });
  assert.match(await kept(page), /^No draft is kept in this browser: train one/);
  // Before any draft: the decoding widget says there is none, and keeps working.
  await setControl(page, 'decoding', 'draft', 'yours');
  await page.waitForFunction(() => /no draft is kept in this browser \(none was trained here yet, or it was forgotten\)/.test(document.querySelector('[data-widget="decoding"] [role="alert"]')?.textContent));
  await page.click(`${W} .tr-go`);
  await trained(page, 1);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(`${W} .tr-download`)]);
  assert.equal(download.suggestedFilename(), 'specdec-draft-16-1-2-32.bpk');
  const file = readFileSync(await download.path());
  const before = await kept(page);
  // Through the page's own button (the browser's file input would speak the browser's language).
  const load = async (name, buffer) => {
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.click(`${W} .tr-upload-button`)]);
    await chooser.setFiles({ name, mimeType: 'application/octet-stream', buffer });
  };
  // Corrupt: the file cut in half; foreign: the target's own weights (not a draft's file).
  await load('cut.bpk', file.subarray(0, file.length >> 1));
  await page.waitForFunction(() => Number(document.querySelector('[data-widget="train"]').dataset.refused || 0) >= 1);
  assert.match(await alertOf(page, 'train'), /^bad draft file "cut\.bpk": .+ — nothing was changed\.$/);
  await load('target.bpk', readFileSync(new URL('../pkg/weights/target.bpk', import.meta.url)));
  await page.waitForFunction(() => Number(document.querySelector('[data-widget="train"]').dataset.refused || 0) >= 2);
  assert.match(await alertOf(page, 'train'), /^bad draft file "target\.bpk": .*(not|draft).* — nothing was changed\.$/);
  assert.equal(await kept(page), before, 'the kept draft is the trained one still');
  // Forget, then Load the downloaded file: kept again, and the decoding widget runs it.
  await page.click(`${W} .tr-forget`);
  await page.waitForFunction(() => /No draft is kept/.test(document.querySelector('[data-widget="train"] .tr-kept').textContent));
  await load('mine.bpk', file);
  await page.waitForFunction(() => Number(document.querySelector('[data-widget="train"]').dataset.loaded || 0) >= 1);
  assert.match(await kept(page), /^Kept in this browser: your draft \(16,1,2,32: d, layers, heads, d_ff; loaded from a file\)/);
  assert.equal(await alertOf(page, 'train'), '');
  const n = await page.$eval('[data-widget="decoding"]', (e) => Number(e.dataset.decoded || 0));
  await setControl(page, 'decoding', 'gamma', '3');
  await decoded(page, n + 1);
  const rows = await rowsOf(page, '[data-widget="decoding"] table.dec-greedy');
  assert.ok(rows.length > 1 && rows.slice(1).every((r) => / greedy 10\/10 /.test(r)), rows.join(' | '));
  assert.match(await text(page, '[data-widget="decoding"] .dec-note'), /Your draft trained in this page \(16,1,2,32/);
  // Forgotten again: the next run cannot run, and what the last one left is greyed out, and said to be.
  await page.click(`${W} .tr-forget`);
  await setControl(page, 'decoding', 'gamma', '2');
  await page.waitForFunction(() => /greyed out below is from the last run that did/.test(document.querySelector('[data-widget="decoding"] .dec-status').textContent));
  assert.match(await alertOf(page, 'decoding'), /no draft is kept in this browser/);
  // Every part of the view under the run bar (result, note, figure, timing line) is greyed; the bar is not.
  const shade = await page.$eval('[data-widget="decoding"] .view', (v) => [...v.children].map((e) => [e.querySelector('.dec-run, .dec-result, .dec-plot') ? e.firstElementChild.className : '', getComputedStyle(e).opacity]));
  assert.deepEqual(shade.filter(([c, o]) => (o === '1') !== /dec-run/.test(c)), [], JSON.stringify(shade));
  assert.ok(shade.some(([c]) => /dec-result/.test(c)) && shade.length >= 4, JSON.stringify(shade));
  assert.deepEqual(errors.filter((e) => !/no draft is kept in this browser/.test(e)), []);
  await page.close();
});

test('train in Chinese at 390 px: Cancel stops a run mid-way and keeps nothing; nothing wider than the phone', async () => {
  const { page } = await open(env, '?lang=zh&train.steps=3000#train', { width: 390, height: 844 });
  await page.click(`${W} .tr-go`);
  await page.waitForFunction(() => /训练中（a，贪心）：第 \d+\/3000 步/.test(document.querySelector('[data-widget="train"] .tr-status').textContent), null, { timeout: 120_000 });
  await page.click(`${W} .tr-cancel`);
  assert.equal(await count(page, 'cancelled'), 1);
  assert.match(await text(page, `${W} .tr-status`), /^在第 \d+ 步取消：什么都没保存（之前保存的草稿还在）。$/);
  assert.equal(await count(page, 'trained'), 0);
  assert.match(await kept(page), /这个浏览器里没有保存草稿/);
  assert.match(await text(page, `${W} .tr-check`), /留出提示词上用 γ 4 的贪心链/);
  assert.deepEqual(await tooWide(page, 'train', '.tr-chart svg'), []);
  assert.equal(await page.$eval(`${W} .tr-cancel`, (b) => b.hidden), true);
  await page.close();
});

test('train: a pool of 2, boost-tuned and its control, trains member after member and is checked as one merged tree', async () => {
  const { page, errors } = await open(env, '?train.shape=16,1,2,32&train.steps=50&train.models=2#train', { height: 1400 });
  const members = () => page.$$eval(`${W} table.tr-members tr`, (trs) => trs.slice(1).map((r) => [...r.cells].map((c) => c.textContent.trim())));
  await page.click(`${W} .tr-go`);
  await trained(page, 1);
  assert.match(await text(page, `${W} .tr-status`), /^Trained a pool of 2, 50 steps each, in .*; a pool is measured here, not kept/);
  const check = await text(page, `${W} .tr-check`);
  assert.match(check, /At step 100: the 2 members’ greedy chains of γ 4, merged, on 50 held-out prompts give τ \d\.\d\d .* 50\/50 outputs identical to the target’s own\./);
  assert.match(check, /The first member alone: τ \d\.\d\d; the pool of 2 at step 100 \(boost-tuned: the second member trained only on the samples the first one misses\), its chains merged into one tree of \d+\.\d nodes a call: τ \d\.\d\d/);
  const boosted = await members(page);
  assert.equal(boosted.length, 2);
  assert.ok(Number(boosted[1][1]) < Number(boosted[0][1]), `the second member learns only what the first misses: ${boosted.join(' | ')}`);
  assert.ok(parseFloat(boosted[1][3]) >= parseFloat(boosted[0][3]), 'the pool covers at least what its first member covers');
  // A member boundary on the chart; nothing kept (a pool is measured, not kept).
  assert.equal(await page.$$eval(`${W} .tr-chart line[stroke-dasharray="2 3"]`, (l) => l.length), 1);
  assert.match(await kept(page), /No draft is kept/);
  // The control: every member trains on every sample.
  await setControl(page, 'train', 'models', '2-plain');
  await page.click(`${W} .tr-go`);
  await trained(page, 2);
  const plain = await members(page);
  assert.equal(plain[1][1], plain[0][1], `without the filter both members see every sample: ${plain.join(' | ')}`);
  assert.match(await text(page, `${W} .tr-check`), /no filter: the second member trained on every sample/);
  assert.equal(await page.$$eval(`${W} table.tr-history tr`, (r) => r.length), 1 + 2);
  assert.deepEqual(errors, []);
  await page.close();
});

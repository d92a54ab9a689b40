// Browser tests of the wall-clock experiments of the decoding widget: the sweep over γ (demo 5
// answered by measurement: the best measured γ beside the formula's) and the drafters without a
// model timed against the target alone, with the bad values each refuses.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { setControl, text, alertOf, rowsOf, decoded } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

test('the sweep over γ: every γ measured, the best measured γ beside the formula’s; drafters without a model on the wall clock', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=sweep&decoding.gammas=2,1&decoding.prompts=10');
  await decoded(page, 1);
  const rows = await rowsOf(page, '[data-widget="decoding"] table.dec-sweep');
  assert.equal(rows.length, 3, rows.join(' | '));
  assert.match(rows[1], /^1 /, 'γ in increasing order');
  assert.match(rows[2], /^2 /);
  // The formula, the measured curve, the wall clock, and this device's limit: at or above the wall
  // clock, which the limit never falls under (what this device did, it can do).
  for (const r of rows.slice(1)) {
    assert.match(r, /[\d.]+× [\d.]+× [\d.]+× \(IQR [\d.]+\) [\d.]+×$/, r);
    const [measured, limit] = r.match(/([\d.]+)× \(IQR [\d.]+\) ([\d.]+)×$/).slice(1).map(Number);
    assert.ok(limit >= measured, `limit under measured: ${r}`);
  }
  const summary = await text(page, '[data-widget="decoding"] .dec-result');
  assert.match(summary, /the best measured γ is [12], at [\d.]+×; the measured cost curve ranks γ [12] first/, summary);
  // The trained target: the draft costs about what the target does, so the formula finds no γ that pays.
  assert.match(summary, /The lecture’s formula, with the measured α [\d.]+ and c [\d.]+, (says no γ pays|picks γ \d+)/, summary);
  assert.match(await page.$eval('[data-widget="decoding"] .dec-plot', (el) => el.innerHTML), /<svg[^]*Speedup against γ: measured, predicted, and the formula/);

  // Prompt Lookup on the wall clock: no draft model, its c a look-up.
  await setControl(page, 'decoding', 'experiment', 'speedup');
  await setControl(page, 'decoding', 'shape', 'prompt-lookup');
  // The chain's job may finish or be superseded: wait for the look-up's result itself.
  await page.waitForFunction(() => /Prompt Lookup without a model/.test(document.querySelector('[data-widget="decoding"] .dec-result').textContent), null, { timeout: 180_000 });
  const cells = await rowsOf(page, '[data-widget="decoding"] table.dec-speedup');
  assert.ok(cells.some((r) => /^c \(look-up \/ target call\) [\d.e-]+$/.test(r)), cells.join(' | '));
  assert.ok(cells.some((r) => /^lecture’s formula E\(α, γ\)\/\(γc \+ 1\) —$/.test(r)), 'no E(α, γ) for a look-up');
  assert.match(await text(page, '[data-widget="decoding"] .dec-result'), /Prompt Lookup without a model, 4 tokens a step, greedy/);
  assert.equal(await page.$eval('[data-widget="decoding"] [data-key="draft"]', (el) => el.offsetParent === null), true, 'no draft model to choose');

  // The choices that cannot run are greyed out: batches over 1 for a drafter without a model,
  // a tree in the sweep. Asked for anyway (a URL may), each gets the core's message.
  const off = (key) => page.$$eval(`[data-widget="decoding"] [data-key="${key}"] option`, (os) => os.filter((o) => o.disabled).map((o) => o.value).join(','));
  assert.equal(await off('batch'), '4,16,64');
  assert.equal(await off('shape'), '');
  // Bad values: a drafter without a model at a batch, and a γ list that is no list.
  await setControl(page, 'decoding', 'batch', '4');
  await page.waitForFunction(() => /batch 1 only/.test(document.querySelector('[data-widget="decoding"] [role="alert"]').textContent), null, { timeout: 30_000 });
  await setControl(page, 'decoding', 'batch', '1');
  await setControl(page, 'decoding', 'experiment', 'sweep');
  assert.equal(await off('shape'), 'tree');
  await setControl(page, 'decoding', 'gammas', '1,x');
  await page.waitForFunction(() => /bad γ list "1,x": every value must be a whole number/.test(document.querySelector('[data-widget="decoding"] [role="alert"]').textContent), null, { timeout: 30_000 });
  assert.match(await alertOf(page, 'decoding'), /γ list/);
  // The widget keeps working.
  await setControl(page, 'decoding', 'gammas', '3');
  const before = Number(await page.getAttribute('[data-widget="decoding"]', 'data-decoded'));
  await decoded(page, before + 1);
  assert.equal((await rowsOf(page, '[data-widget="decoding"] table.dec-sweep')).length, 2);
  assert.deepEqual(errors, []);
  await page.close();
});

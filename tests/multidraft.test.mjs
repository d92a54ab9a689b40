// Browser tests of the multi-draft widget: bad distributions and drawn tokens are explained; the
// children samplers read by their names in the page's language.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { alertOf, rowsOf, alertShown } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

test('bad distributions in the multi-draft widget are explained', async () => {
  const { page } = await open(env, '');
  await page.fill('[data-widget="multidraft"] [data-key="p"]', '0.5,0.6');
  assert.match(await alertOf(page, 'multidraft'), /sums to 1\.1/);
  await page.fill('[data-widget="multidraft"] [data-key="p"]', '0.25,0.25,0.25,0.25');
  await page.fill('[data-widget="multidraft"] [data-key="given"]', '1,1');
  assert.match(await alertOf(page, 'multidraft'), /draft 1 gives token 1 probability 0/);
  await page.fill('[data-widget="multidraft"] [data-key="given"]', '');
  assert.equal(await alertShown(page, 'multidraft'), false);
  assert.deepEqual(await rowsOf(page, '[data-widget="multidraft"] table.acceptance'), [' naive MSS', 'averaged over the drafts 43.75% 81.25%']);
  await page.close();
});

test('the children samplers are named in words, in English and in Chinese (at 390 px), in the table and the chart', async () => {
  for (const [path, width, names] of [['', 1280, ['i.i.d. draws', 'without replacement', 'top-k (deterministic)']],
    ['?lang=zh', 390, ['独立同分布抽样', '无放回抽样', 'top-k（确定性）']]]) {
    const { page, errors } = await open(env, path, { width });
    const rows = await rowsOf(page, '[data-widget="multidraft"] table.children');
    const first = await page.$$eval('[data-widget="multidraft"] table.children tr', (trs) => trs.slice(1).map((r) => r.cells[0].textContent.trim()));
    assert.deepEqual(first, names, rows.join(' | '));
    const chart = await page.$eval('[data-widget="multidraft"] .part:last-child svg', (svg) => svg.textContent);
    for (const n of names) assert.ok(chart.includes(n), `${n} in ${chart}`);
    assert.doesNotMatch(rows.join(' ') + chart, /\biid\b|without-replacement/);
    assert.deepEqual(errors, []);
    await page.close();
  }
});

// Browser tests of the multi-draft widget: bad distributions and drawn tokens are explained.
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

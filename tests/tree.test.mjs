// Browser tests of the token-tree widget: a malformed tree config and the recovery from it, and the
// highlight slider when the tree shrinks under it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { setControl, text, alertOf, alertShown } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

test('a malformed tree config shows an alert and the widget recovers', async () => {
  const { page, errors } = await open(env, '');
  await setControl(page, 'tree', 'mode', 'config');
  for (const [bad, msg] of [['<2,,1>', /level 2 is empty/], ['<0>', /width 0/], ['<99,99,99,99>', /over the budget/], ['<2,x', /not closed/]]) {
    await page.fill('[data-widget="tree"] [data-key="config"]', bad);
    assert.ok(await alertShown(page, 'tree'), bad);
    assert.match(await alertOf(page, 'tree'), msg);
    assert.equal(await page.getAttribute('[data-widget="tree"]', 'data-state'), 'error');
  }
  await page.fill('[data-widget="tree"] [data-key="config"]', '⟨2,2,1⟩');
  assert.equal(await alertShown(page, 'tree'), false);
  assert.equal(await page.getAttribute('[data-widget="tree"]', 'data-state'), 'ok');
  assert.match(await text(page, '[data-widget="tree"] .numbers'), /^10 speculated nodes vs 12 tokens/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('when the tree shrinks under the highlighted node, the label, the thumb and the drawing move to its last node', async () => {
  const { page, errors } = await open(env, '');
  const w = '[data-widget="tree"]';
  await setControl(page, 'tree', 'highlight', 6);
  await setControl(page, 'tree', 'mode', 'config');
  await page.fill(`${w} [data-key="config"]`, '<2>');
  const [value, max, label] = await page.$eval(`${w} [data-key="highlight"]`, (el) => [el.value, el.max, el.parentElement.querySelector('output').textContent]);
  assert.deepEqual([value, max, label], ['2', '2', '2']);
  await page.waitForURL(/tree\.highlight=2/);
  // The drawing was made with the node the label names: the same as choosing it by hand.
  const drawn = await page.$eval(`${w} .view svg`, (el) => el.outerHTML);
  await setControl(page, 'tree', 'highlight', 1);
  await setControl(page, 'tree', 'highlight', 2);
  assert.equal(await page.$eval(`${w} .view svg`, (el) => el.outerHTML), drawn);
  assert.deepEqual(errors, []);
  await page.close();
});

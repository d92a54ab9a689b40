// Browser tests of issue 32's "what a student was taught wrong": an exactness verdict names what
// it covers and says when its window cannot decide (item 1), a preset is a whole state (item 6),
// every formula a reader sees is typeset (item 7), and §5 and §6 answer their questions with a
// widget each (item 5). At 390 px and in Chinese where it applies.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { rowsOf, text } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const bonusRow = async (page) => (await rowsOf(page, '[data-widget="exactness"] table.tvs')).find((r) => r.startsWith('bonus-from-draft'));

test('demo 02.2 shows bonus-from-draft biased, with the window named; a window short of the bonus token is undecided', async () => {
  const { page, errors } = await open(env, '');
  await page.click('[data-widget="exactness"] [data-preset="0"]');
  await page.waitForFunction(() => /γ = 4/.test(document.querySelector('[data-widget="exactness"] table.tvs')?.textContent));
  assert.match(await bonusRow(page), /biased within 5 tokens$/);
  assert.match(await text(page, '[data-widget="exactness"] .coverage'), /first 5 output tokens of this toy world \(seed 0.*reaches the first call's bonus token \(token 5\)/);
  await page.click('[data-widget="exactness"] [data-preset="1"]');
  await page.waitForFunction(() => /first 4 tokens/.test(document.querySelector('[data-widget="exactness"] table.tvs')?.textContent));
  assert.match(await bonusRow(page), /undecided: 4 tokens end before the bonus token$/);
  assert.match(await text(page, '[data-widget="exactness"] .coverage'), /undecided, not exact\. Widen the window to γ \+ 1 = 5/);
  const correct = (await rowsOf(page, '[data-widget="exactness"] table.tvs'))[1];
  assert.doesNotMatch(correct, /exact over/, 'no rule is called exact by a window that cannot decide');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the window verdicts in Chinese at 390 px', async () => {
  const { page, errors } = await open(env, '?lang=zh&exactness.gamma=4&exactness.window=4', { width: 390 });
  assert.match(await bonusRow(page), /未判定：4 个 token 在奖励 token 之前结束$/);
  assert.match(await text(page, '[data-widget="exactness"] .coverage'), /判定只覆盖这一个玩具世界（种子 0.*前 4 个 token/);
  await page.selectOption('[data-widget="exactness"] [data-key="window"]', 'auto');
  await page.waitForFunction(() => /前 5 个 token/.test(document.querySelector('[data-widget="exactness"] table.tvs')?.textContent));
  assert.match(await bonusRow(page), /前 5 个 token 内有偏$/);
  assert.deepEqual(errors, []);
  await page.close();
});

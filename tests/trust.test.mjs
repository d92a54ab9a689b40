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

// The rule's row, by its English id or its Chinese name.
const bonusRow = async (page) => (await rowsOf(page, '[data-widget="exactness"] table.tvs')).find((r) => /^(bonus-from-draft|奖励取自草稿)/.test(r));

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

test('a preset is a whole state: after the ×16 preset, demo 03.2 runs on the trained target', async () => {
  const { page, errors } = await open(env, '');
  const D = '#s3 [data-widget="decoding"]';
  await page.click(`${D} [data-preset="5"]`); // Speedup on the widened target (×16, draft A, γ 2)
  assert.equal(await page.$eval(`${D} [data-key="target_width"]`, (e) => e.value), '16');
  await page.click(`${D} [data-preset="1"]`); // Demo 03.2 · greedy chains, 200 prompts
  const values = await page.$$eval(`${D} [data-key]`, (els) => Object.fromEntries(els.map((e) => [e.dataset.key, e.value])));
  assert.equal(values.target_width, '1', 'the width it does not name returns to its default');
  assert.equal(values.experiment, 'greedy');
  assert.equal(values.prompts, '200');
  assert.equal(values.batch, '1');
  await page.waitForURL(/decoding\.target_width=1(&|$)/, { timeout: 5_000 }); // written at most every 200 ms
  assert.deepEqual(errors, []);
  await page.close();
});

test('formulas are typeset: the theory intro in MathML, exercise 1’s hint and solution with real exponents (Chinese, 390 px)', async () => {
  const { page, errors } = await open(env, '?lang=zh&exercises.exercise=1', { width: 390 });
  const intro = '[data-widget="theory"] .intro';
  assert.ok(await page.$(`${intro} math msup`), 'α^(γ+1) is an msup');
  assert.doesNotMatch(await text(page, intro), /\^\{|_\{/);
  const w = '[data-widget="exercises"]';
  await page.fill(`${w} input[data-part="0"]`, '2');
  await page.press(`${w} input[data-part="0"]`, 'Enter');
  await page.waitForFunction((s) => document.querySelector(s).dataset.checks, w);
  const hint = await page.$eval(`${w} .ex-says`, (e) => ({ html: e.innerHTML, text: e.textContent }));
  assert.match(hint.html, /Σ<sub>i=0<\/sub><sup>γ<\/sup> α<sup>i<\/sup>/, hint.html);
  assert.doesNotMatch(hint.text, /\^|_\{/, hint.text);
  assert.deepEqual(errors, []);
  await page.close();
});

test('§5 and §6 each answer their question with a widget of their own, which waits for Run and says what it costs', async () => {
  const { page, errors } = await open(env, '?s6.target_width=1&s6.prompts=10');
  const [S5, S6] = ['#s5 [data-widget="decoding"]', '#s6 [data-widget="decoding"]'];
  assert.match(await text(page, '#s5 h2'), /Medusa|EAGLE/);
  assert.match(await text(page, '#s5 .explain'), /§5\.1 Medusa.*§5\.2 EAGLE/);
  assert.equal(await page.$eval(`${S5} [data-key="experiment"]`, (e) => e.value), 'hidden');
  assert.equal(await page.$eval(`${S6} [data-key="experiment"]`, (e) => e.value), 'methods');
  for (const w of [S5, S6]) {
    assert.match(await text(page, `${w} .dec-status`), /Press Run to start\. A run/);
    assert.equal(await page.getAttribute(w, 'data-decoded'), null, 'nothing ran on load');
  }
  // The §3 widget keeps its own state: the sections' URL keys are s5.* and s6.*.
  assert.equal(await page.$eval('#s3 [data-widget="decoding"] [data-key="experiment"]', (e) => e.value), 'greedy');
  await page.click(`${S6} .dec-go`);
  await page.waitForFunction((s) => Number(document.querySelector(s).dataset.decoded || 0) >= 1, S6, { timeout: 300_000 });
  const head = await rowsOf(page, `${S6} table.dec-methods`);
  assert.match(head[0], /T\(n\)\/T\(1\) \(verifying\)/);
  assert.equal(head.length, 9, 'eight methods');
  assert.match(await text(page, S6), /matches the measured column by construction.*T\(n\)\/T\(1\) is up to [\d.]+, for/);
  assert.doesNotMatch(await text(page, S6), /almost for free/);
  assert.deepEqual(errors, []);
  await page.close();
});

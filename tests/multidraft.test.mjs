// Browser tests of the multi-draft widget: bad distributions and drawn tokens are explained; the
// children samplers read by their names in the page's language; one numbering of the tokens (the
// lecture's, from 1) in the introduction, the presets, exercise 6, the drawn tokens and the chart.
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
  await page.fill('[data-widget="multidraft"] [data-key="given"]', '2,1');
  assert.match(await alertOf(page, 'multidraft'), /draft 1 gives t2 probability 0/);
  // Tokens count from 1: a 0 says how they are numbered.
  await page.fill('[data-widget="multidraft"] [data-key="given"]', '0,1');
  assert.match(await alertOf(page, 'multidraft'), /token 0 is outside 1…4: tokens are numbered from 1, as in the lecture \(t1 … t4\)/);
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
    // A name may be wrapped onto lines of its own (on a phone): read without the line breaks.
    const chart = await page.$eval('[data-widget="multidraft"] .part:last-child svg', (svg) => svg.textContent.replace(/\s+/g, ''));
    for (const n of names) assert.ok(chart.includes(n.replace(/\s+/g, '')), `${n} in ${chart}`);
    assert.doesNotMatch(rows.join(' ') + chart, /\biid\b|without-replacement/);
    assert.deepEqual(errors, []);
    await page.close();
  }
});

/** The token names (t1, t2, …) a text mentions, in order. */
const tokensIn = (text) => text.match(/(?<![A-Za-z0-9])t\d+(?!\d)/g) ?? [];

test('one numbering, the lecture’s: the introduction, the presets, exercise 6, the drawn tokens and the chart count tokens from 1', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, errors } = await open(env, `?lang=${lang}&exercises.exercise=6`);
    const md = '[data-widget="multidraft"]';
    const given = () => page.inputValue(`${md} [data-key="given"]`);
    const axis = () => page.$$eval(`${md} .plots svg text`, (ts) => ts.map((t) => t.textContent.trim()).filter((t) => /^t\d+$/.test(t)));
    // The slide example as the introduction tells it ("SSM 1 always t1, SSM 2 … drew t2") is the
    // drawn tokens as typed, and the chart's axis names the tokens as the introduction does.
    const intro = await page.$eval(`${md} .intro`, (e) => e.textContent);
    const told = tokensIn(intro).slice(0, 2);
    assert.deepEqual(told, ['t1', 't2'], intro);
    assert.equal(await given(), told.map((t) => t.slice(1)).join(','));
    assert.deepEqual(await axis(), ['t1', 't2', 't3', 't4']);
    // Exercise 6 (its statement in the exercises widget) and the widget's preset for it.
    const statement = await page.$eval('[data-widget="exercises"] .ex-statement', (e) => e.textContent);
    const drawn = tokensIn(statement);
    assert.deepEqual(drawn, ['t2', 't3'], statement);
    const before = await page.getAttribute(md, 'data-renders');
    await page.click(`${md} .presets button:nth-of-type(3)`);
    await page.waitForFunction(([s, b]) => document.querySelector(s).dataset.renders !== b, [md, before]);
    assert.equal(await given(), drawn.map((t) => t.slice(1)).join(','), 'the preset draws what the statement says');
    assert.match((await page.$$eval(`${md} table.acceptance tr`, (rs) => rs.map((r) => r.textContent)))[1], /50\.00%\s*100\.00%/);
    assert.deepEqual(await axis(), ['t1', 't2', 't3', 't4']);
    // The solution the exercise shows names the same tokens.
    const w = '[data-widget="exercises"]';
    for (const [i, v] of ['0.5', '1'].entries()) await page.fill(`${w} input[data-part="${i}"]`, v);
    await page.click(`${w} button[type="submit"]`);
    await page.waitForSelector(`${w} .ex-solution:not([hidden])`);
    const solution = await page.$eval(`${w} .ex-solution`, (e) => e.textContent);
    assert.deepEqual([...new Set(tokensIn(solution))], ['t2', 't3'], solution);
    assert.deepEqual(errors, []);
    await page.close();
  }
});

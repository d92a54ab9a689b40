// Browser tests of the exercises widget: answers checked by the core, hints, the solution; numbers
// typed as people type them (a decimal comma, full-width digits) and long answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { setControl, text, alertOf } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

test('exercises: answers are checked by the core, wrong ones get a hint, the solution only when solved', async () => {
  const { page, errors } = await open(env, '?exercises.exercise=1');
  const w = '[data-widget="exercises"]';
  const answer = async (values) => {
    const before = await page.getAttribute(w, 'data-checks');
    const inputs = await page.$$(`${w} input[data-part]`);
    for (const [i, v] of values.entries()) await inputs[i].fill(v);
    await inputs[0].press('Enter'); // keyboard: Enter checks
    await page.waitForFunction(([s, b]) => document.querySelector(s).dataset.checks !== b, [w, before]);
    return page.$$eval(`${w} .ex-says`, (xs) => xs.map((x) => x.textContent));
  };
  let says = await answer(['3.05', '3', '']);
  assert.equal(says[0], '✓ right');
  assert.match(says[1], /^✗ 3 is too high\. A step costs γ draft calls/);
  assert.equal(says[2], 'not answered yet');
  assert.equal(await page.$eval(`${w} .ex-solution`, (e) => e.hidden), true);
  assert.ok(!(await text(page, w)).includes('2.54'), 'the answer is not revealed');
  says = await answer(['3.05', '2.54', 'many']);
  assert.match(says[2], /“many” is not a number/);
  assert.equal(await page.$eval(`${w} input[data-part="2"]`, (e) => e.getAttribute('aria-invalid')), 'true');
  says = await answer(['3.05', '2.54', '1.67']);
  assert.deepEqual(says, ['✓ right', '✓ right', '✓ right']);
  assert.match(await text(page, `${w} .ex-solution`), /^Solved\. E = \(1 − 0\.755\)\/\(1 − 0\.75\) = 3\.0508/);
  assert.match(await page.$eval(`${w} .ex-solution`, (e) => e.innerHTML), /0\.75<sup>5<\/sup>/, 'the exponent typeset');
  // Another exercise from the menu: the tree of exercise 5, one part wrong.
  await setControl(page, 'exercises', 'exercise', '5');
  says = await answer(['9', 'r0 a1 b2 c3 d3 e4 f1 g2', 'a b d e']);
  assert.match(says[0], /every sequence on its own/);
  assert.deepEqual(says.slice(1), ['✓ right', '✓ right']);
  assert.deepEqual(errors, []);
  await page.close();
});

test('exercises: a decimal comma and full-width digits are numbers; feedback repeats what was typed, shortened; a 100k answer is cut and said so', async () => {
  const { page, errors } = await open(env, '?exercises.exercise=1');
  const w = '[data-widget="exercises"]';
  const answer = async (value) => {
    const before = await page.getAttribute(w, 'data-checks');
    await page.fill(`${w} input[data-part="0"]`, value);
    await page.press(`${w} input[data-part="0"]`, 'Enter');
    await page.waitForFunction(([s, b]) => document.querySelector(s).dataset.checks !== b, [w, before]);
    return page.$eval(`${w} .ex-says`, (x) => x.textContent);
  };
  for (const typed of ['3,05', '３.０５', '３．０５']) assert.equal(await answer(typed), '✓ right', typed);
  assert.match(await answer('-1e308'), /^✗ -1e308 is too low\./);
  const says = await answer(`1${'0'.repeat(300)}`);
  assert.match(says, /^✗ 10{38}… is too high\./);
  // 100,000 characters: cut to the page's one cap as typed, the person told, the feedback short.
  const long = await answer('7'.repeat(100_000));
  assert.ok(long.length < 200, long);
  assert.equal((await page.inputValue(`${w} input[data-part="0"]`)).length, 500);
  assert.match(await alertOf(page, 'exercises'), /answer 1: the text was cut to its first 500 characters/);
  assert.deepEqual(errors, []);
  await page.close();
});

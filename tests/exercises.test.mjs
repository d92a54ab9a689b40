// Browser tests of the exercises widget: answers checked by the core, hints, the solution.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { setControl, text } from './helpers.mjs';

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
  assert.match(await text(page, `${w} .ex-solution`), /^Solved\. E = \(1 − 0\.75\^5\)\/\(1 − 0\.75\) = 3\.0508/);
  // Another exercise from the menu: the tree of exercise 5, one part wrong.
  await setControl(page, 'exercises', 'exercise', '5');
  says = await answer(['9', 'r0 a1 b2 c3 d3 e4 f1 g2', 'a b d e']);
  assert.match(says[0], /every sequence on its own/);
  assert.deepEqual(says.slice(1), ['✓ right', '✓ right']);
  assert.deepEqual(errors, []);
  await page.close();
});

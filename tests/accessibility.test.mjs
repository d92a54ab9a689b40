// Browser tests of accessibility: the audit of a11y.mjs (labels, names, live regions, contrast)
// on every page, and the keyboard alone operating a slider and the tree editor.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { audit } from './a11y.mjs';
import { text } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

test('accessibility: labels, names, live regions and contrast on every page, with no violation', async () => {
  for (const path of ['', 'docs.html', 'embed.html?widget=exercises', 'embed.html?widget=decoding', 'embed.html?widget=decoding&autorun=0']) {
    const { page, errors } = await open(env, path);
    if (path === '') {
      await page.waitForSelector('[data-widget="decoding"][data-decoded]', { timeout: 120_000 });
      await page.waitForSelector('[data-widget="modelfree"][data-decoded]', { timeout: 120_000 });
      await page.waitForSelector('[data-widget="likesworld"][data-latency]', { timeout: 120_000 });
    }
    if (path === 'docs.html') await page.waitForSelector('section#roofline specdec-widget[data-state="ok"]');
    // An exercise checked (results shown) and an export menu open, so their texts are audited too.
    if (path.includes('exercises')) {
      await page.fill('input[data-part="0"]', '1');
      await page.press('input[data-part="0"]', 'Enter');
      await page.waitForSelector('.ex-says.ex-wrong');
    }
    // An embed asleep (autorun=0) has no Export until its Run: its title, introduction, Run and the
    // status that will say the engine is loading (a live region) are audited.
    if (path.includes('autorun=0')) assert.ok(await page.$('[data-waiting="load"] .sw-run'), path);
    else {
      await page.click('details.export summary');
      await page.waitForSelector('.export-list li');
    }
    assert.deepEqual(await audit(page), [], path || 'index.html');
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('keyboard only: a slider and the tree editor are operated with Tab, arrows and typing', async () => {
  const { page, errors } = await open(env, 'embed.html?widget=theory');
  // Tab from the top of the page reaches the α slider; arrow keys move it and the widget redraws.
  let guard = 0;
  while (!(await page.evaluate(() => document.activeElement?.dataset?.key === 'alpha')) && guard++ < 20) await page.keyboard.press('Tab');
  assert.ok(guard < 20, 'the α slider is reachable with Tab');
  const before = await text(page, '[data-widget="theory"] .numbers');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.$eval('[data-key="alpha"]', (e) => e.value), '0.82');
  assert.notEqual(await text(page, '[data-widget="theory"] .numbers'), before);
  assert.equal(await page.$eval('[data-key="alpha"]', (e) => getComputedStyle(e).outlineStyle), 'solid', 'focus is visible');
  await page.close();
  // The tree editor: pick "sequences", type the exercise-5 drafts, and the tree follows.
  const tree = await open(env, 'embed.html?widget=tree');
  guard = 0;
  while (!(await tree.page.evaluate(() => document.activeElement?.dataset?.key === 'paths')) && guard++ < 20) await tree.page.keyboard.press('Tab');
  assert.ok(guard < 20, 'the sequences field is reachable with Tab');
  await tree.page.keyboard.press('Control+A');
  await tree.page.keyboard.type('a b c | a b d e | f g');
  await tree.page.keyboard.press('Tab');
  await tree.page.keyboard.press('Control+A');
  await tree.page.keyboard.type('r');
  assert.match(await text(tree.page, '[data-widget="tree"] .numbers'), /7 speculated nodes vs 9 tokens/);
  // The highlight slider, by keyboard: End goes to the last node of the tree on screen.
  guard = 0;
  while (!(await tree.page.evaluate(() => document.activeElement?.dataset?.key === 'highlight')) && guard++ < 20) await tree.page.keyboard.press('Tab');
  await tree.page.keyboard.press('End');
  assert.equal(await tree.page.$eval('[data-key="highlight"]', (e) => e.value), '7');
  assert.deepEqual([...errors, ...tree.errors], []);
  await tree.page.close();
});

// Browser tests of the widget "how to speculate on this device" (lecture §4.7; Sequoia's trees
// and the hardware-aware choice): it draws in English and Chinese on a desktop and a phone; the
// measured H200 takes a large tree where this CPU takes a few nodes; a bad acceptance vector is
// refused by name and a later good one draws again; the state lives in the URL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { alertOf, alertShown, rowsOf, setControl, text, tooWide } from './helpers.mjs';

let env;
before(async () => { env = await start({ webgpu: false }); });
after(async () => { await env?.close(); });

const W = '[data-widget="choose"]';
/** The chosen tree's nodes as the numbers line says them (0: plain decoding). */
const treeNodes = async (page) => {
  const t = await text(page, `${W} .numbers`);
  const m = t.match(/(?:tree|树)：?:? ?(\d+) (?:nodes|个节点)/);
  return m ? Number(m[1]) : 0;
};

for (const [path, width, words] of [['', 1280, /tree: \d+ nodes, depth \d+/], ['?lang=zh', 1280, /树：\d+ 个节点，深度 \d+/],
  ['', 390, /tree: \d+ nodes/], ['?lang=zh', 390, /树：\d+ 个节点/]]) {
  test(`the widget draws ${path ? 'in Chinese' : 'in English'} at ${width} px: the choice, the heat map, the tree, every device`, async () => {
    const { page, errors } = await open(env, path, { width });
    assert.equal(await page.getAttribute(W, 'data-state'), 'ok');
    assert.match(await text(page, `${W} .numbers`), words);
    assert.equal(await page.$$eval(`${W} .plots svg`, (s) => s.length), 2);
    // Every device in the table, the one chosen for in bold.
    const devices = await page.evaluate(async () => (await import('./engine.js')).declarations().choose.devices.length);
    const rows = await rowsOf(page, `${W} table.choose-devices`);
    assert.equal(rows.length, devices + 1, rows.join(' | '));
    assert.equal(await page.$$eval(`${W} table.choose-devices tbody b`, (b) => b.length), 1);
    assert.match(await text(page, `${W} .choose-source`), /docs\/performance\.md/);
    assert.match(await text(page, `${W} .choose-why`), path ? /T\(k\)\/T\(1\)/ : /verifying k tokens costs T\(k\)\/T\(1\) one-token calls/);
    if (path) assert.doesNotMatch(await page.$eval(`${W} .plots svg`, (s) => s.textContent), /speedup|nodes n/);
    if (width < 500) assert.deepEqual(await tooWide(page, 'choose', '.plots svg'), []);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('the measured H200 takes a large tree where this CPU takes a few nodes; the caption says why', async () => {
  const { page, errors } = await open(env, '');
  assert.equal(await page.inputValue(`${W} [data-key="device"]`), 'cpu-measured');
  const cpu = await treeNodes(page);
  assert.ok(cpu >= 1 && cpu <= 4, `${cpu}`);
  assert.match(await text(page, `${W} .choose-why`), /the tree stays small/);
  await setControl(page, 'choose', 'device', 'h200-measured');
  const h200 = await treeNodes(page);
  assert.ok(h200 >= 16, `${h200}`);
  assert.match(await text(page, `${W} .choose-why`), /nodes are nearly free here/);
  // The heat map outlines the choice, as its key says.
  assert.match(await page.$eval(`${W} .plots svg`, (s) => s.textContent), new RegExp(`the choice, n = ${h200}`));
  // A draft cost set by hand: dearer levels, a shallower tree.
  const depth = Number((await text(page, `${W} .numbers`)).match(/depth (\d+)/)[1]);
  await setControl(page, 'choose', 'cost', 'set');
  await setControl(page, 'choose', 'c', 0.5);
  assert.match(await text(page, `${W} .numbers`), /c = 0\.500 \(set by hand; the device’s own is 0\.066\)/);
  assert.ok(Number((await text(page, `${W} .numbers`)).match(/depth (\d+)/)[1]) < depth);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a bad acceptance vector is refused by name, the page keeps working, and a good one draws again', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, errors } = await open(env, `?lang=${lang}`);
    const before = await treeNodes(page);
    const cases = lang === 'en'
      ? [['0.7,0.5', /^bad acceptance vector "0\.7,0\.5": its entries sum to 1\.2000, over 1/], ['-1', /^acceptance = -1 is out of range: 0 ≤ p_i ≤ 1/],
        ['abc', /^bad acceptance vector "abc": "abc" is not a number/]]
      : [['0.7,0.5', /^无法读取接受向量“0\.7,0\.5”：各项之和为 1\.2000，超过 1/], ['-1', /^接受概率 acceptance = -1 超出范围/], ['abc', /^无法读取接受向量“abc”/]];
    for (const [typed, says] of cases) {
      await page.fill(`${W} [data-key="acceptance"]`, typed);
      assert.match(await alertOf(page, 'choose'), says, typed);
      assert.equal(await page.getAttribute(W, 'data-state'), 'error');
      // The last good drawing stays.
      assert.equal(await treeNodes(page), before);
    }
    // The other widgets still answer.
    await setControl(page, 'theory', 'alpha', 0.6);
    assert.equal(await page.getAttribute('[data-widget="theory"]', 'data-state'), 'ok');
    await page.fill(`${W} [data-key="acceptance"]`, '0.8,0.1');
    assert.equal(await alertShown(page, 'choose'), false);
    assert.equal(await page.getAttribute(W, 'data-state'), 'ok');
    assert.notEqual(await treeNodes(page), before);
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('the state lives in the URL: a shared link reopens the device and the vector; an unknown device gets a note', async () => {
  const { page, errors } = await open(env, '?choose.device=h200-measured&choose.acceptance=0.5,0.2');
  assert.equal(await page.inputValue(`${W} [data-key="device"]`), 'h200-measured');
  assert.match(await text(page, `${W} .numbers`), /^H200/);
  assert.equal(await page.getAttribute(W, 'data-state'), 'ok');
  await page.close();
  const bad = await open(env, '?choose.device=nope');
  assert.match(await alertOf(bad.page, 'choose'), /device: “nope” is not one of the choices; using .*cpu-measured/);
  assert.equal(await bad.page.inputValue(`${W} [data-key="device"]`), 'cpu-measured');
  assert.deepEqual([...errors, ...bad.errors], []);
  await bad.page.close();
});

test('a link with a bad vector draws the default one and names the refused; c set by hand starts at the device’s own c; a 31-node tree’s labels fit a phone', async () => {
  const { page, errors } = await open(env, 'embed.html?widget=choose&acceptance=0.7,0.5');
  assert.match(await alertOf(page, 'choose'), /^bad acceptance vector "0\.7,0\.5": its entries sum to 1\.2000, over 1 \(at most one child is accepted\); drawn with the default vector 0\.763/);
  assert.equal(await page.getAttribute(W, 'data-state'), 'ok');
  assert.equal(await page.$$eval(`${W} .plots svg`, (s) => s.length), 2);
  // The fix drawn, the note gone.
  await page.fill(`${W} [data-key="acceptance"]`, '0.8,0.1');
  assert.equal(await alertShown(page, 'choose'), false);
  await page.close();
  // "Set by hand" on the H200 starts from the H200's c, not the default device's.
  const h = await open(env, 'embed.html?widget=choose&device=h200-measured');
  const own = await h.page.evaluate(async () => (await import('./engine.js')).declarations().choose.devices.find((d) => d.key === 'h200-measured').draft_cost);
  await setControl(h.page, 'choose', 'cost', 'set');
  // (the slider's step is 0.001)
  assert.ok(Math.abs(Number(await h.page.inputValue(`${W} [data-key="c"]`)) - own) <= 0.0005, `${own}`);
  // The preset that sets c with the cost keeps its own c.
  await h.page.click(`${W} [data-preset="3"]`);
  assert.equal(Number(await h.page.inputValue(`${W} [data-key="c"]`)), 0.3);
  await h.page.close();
  // At 390 px the H200's 31-node tree names each node by its own rank: no label cut.
  const phone = await open(env, 'embed.html?widget=choose&device=h200-measured&acceptance=0.763,0.113,0.072,0.032,0.014,0.005', { width: 390 });
  const tree = await phone.page.$$eval(`${W} .plots svg`, (s) => s[1].textContent.replace(/\s+/g, ' '));
  assert.match(tree, /31 nodes/);
  assert.match(tree, /its rank among its siblings/);
  assert.doesNotMatch(tree, /…/);
  assert.deepEqual(await tooWide(phone.page, 'choose', '.plots svg'), []);
  assert.deepEqual([...errors, ...h.errors, ...phone.errors], []);
  await phone.page.close();
});

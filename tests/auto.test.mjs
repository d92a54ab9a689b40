// Browser tests of every method at its device-best size (lecture §4.7; issue 54): the §6 table
// with the node budget "Auto (this device)" names each row's chosen size, in English and Chinese;
// the sweep over γ says which γ this device's choice picks and marks its row; a bad budget from
// a URL, and auto where it does not apply, are refused by name with the page still working.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { rowsOf, decoded, alertOf, setControl, text } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const widget = '[data-widget="decoding"]';

test('the §6 table with the budget auto: every row names the size chosen for this device', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=methods&decoding.prompts=2&decoding.budget=auto');
  await decoded(page, 1);
  assert.match(await text(page, `${widget} .dec-auto`), /size for this device.*T\(1\) = \d+ µs.*suffix index has no vector to choose by and keeps 8 nodes/);
  const rows = await rowsOf(page, `${widget} table.dec-methods`);
  assert.equal(rows.length, 1 + 8, rows.join(' | '));
  assert.match(rows[0], /^method size chosen · predicted τ/);
  // Chains name their γ, trees their nodes and depth (or that the choice is plain decoding), the
  // suffix index its fixed budget.
  for (const r of rows.slice(1, 3)) assert.match(r, /(γ \d+ · [\d.]+×|plain decoding \(1\.00×\); γ 1 ran)/, r);
  for (const r of [rows[3], ...rows.slice(5)]) assert.match(r, /(\d+ nodes?, depth \d+ · [\d.]+×|plain decoding \(1\.00×\); 1 node, depth 1 ran)/, r);
  assert.match(rows[4], /8 nodes, fixed \(no vector\)/);
  // The rest of each row as at a budget of nodes: the formula, the curve, the wall clock, its spread.
  for (const r of rows.slice(1)) {
    assert.match(r, /[\d.]+× [\d.]+× [\d.]+× [\d.]+ [\d.]+×$/, r);
    // This device's limit: the same τ and drafting at the bandwidth and peak measured here, never
    // under the wall clock (what this device did, it can do).
    const [measured, limit] = r.match(/([\d.]+)× [\d.]+ ([\d.]+)×$/).slice(1).map(Number);
    assert.ok(limit >= measured, `limit under measured: ${r}`);
  }
  // Auto is the §6 table's alone: greyed for one hidden-state draft.
  const { page: hidden } = await open(env, '?decoding.experiment=hidden&decoding.prompts=2');
  assert.equal(await hidden.$eval(`${widget} [data-key="budget"] option[value="auto"]`, (o) => o.disabled), true);
  await hidden.close();
  assert.deepEqual(errors, []);
  await page.close();
});

test('the §6 table with the budget auto in Chinese', async () => {
  const { page, errors } = await open(env, '?lang=zh&decoding.experiment=methods&decoding.prompts=2&decoding.budget=auto');
  await decoded(page, 1);
  assert.match(await text(page, `${widget} .dec-auto`), /这台设备上最好的规模.*后缀索引没有接受向量可依据，固定用 8 个节点/);
  const rows = await rowsOf(page, `${widget} table.dec-methods`);
  assert.match(rows[0], /^方法 选定规模 · 预测 τ/);
  assert.match(rows[4], /8 个节点，固定（无接受向量）/);
  assert.match(await page.$eval(`${widget} [data-key="budget"] option[value="auto"]`, (o) => o.textContent), /自动（这台设备）/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a bad budget from a URL is refused by name, auto where it does not apply by the core, and the page keeps working', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=methods&decoding.prompts=2&decoding.budget=banana');
  assert.match(await alertOf(page, 'decoding'), /node budget: “banana” is not one of the choices; using 16/);
  await decoded(page, 1);
  assert.match(await text(page, `${widget} .dec-result`), /Every method at a budget of 16 nodes/);
  await page.close();
  // A URL may still ask for auto on one hidden-state draft: the core says why not.
  const { page: hidden } = await open(env, '?decoding.experiment=hidden&decoding.prompts=2&decoding.budget=auto');
  await hidden.waitForFunction((w) => /budget unavailable: “auto”.*§6 table/.test(document.querySelector(`${w} [role="alert"]`).textContent), widget, { timeout: 30_000 });
  await setControl(hidden, 'decoding', 'budget', '4');
  await decoded(hidden, 1);
  await hidden.close();
  assert.deepEqual(errors, []);
});

test('the sweep over γ sets this device’s choice beside the measured best', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=sweep&decoding.prompts=2&decoding.gammas=1,2,3&decoding.shape=chain');
  await decoded(page, 1);
  const said = await text(page, `${widget} .dec-choice`);
  assert.match(said, /^This device’s choice, from T\(k\) timed in this job \(T\(2\)\/T\(1\) = [\d.]+, T\(4\)\/T\(1\) = [\d.]+\), the draft’s c = [\d.]+ and its acceptance vector \(p₁ = [\d.]+\): /);
  // Plain decoding, or a γ with its prediction; then whether the measured best agrees.
  assert.match(said, /(plain decoding — no γ is predicted to pay\.|γ \d, predicted [\d.]+×)/);
  assert.match(said, /(agrees|too cautious|misses here|not among the γ swept|prediction was too high)/);
  const rows = await rowsOf(page, `${widget} table.dec-sweep`);
  const marked = rows.filter((r) => r.includes('◆ chosen'));
  // Chosen: plain decoding (no row marked), or one γ (a verdict may still compare it with plain decoding).
  assert.equal(marked.length, /plain decoding — no γ is predicted to pay/.test(said) ? 0 : 1, `${said} | ${rows.join(' | ')}`);
  assert.deepEqual(errors, []);
  await page.close();
});

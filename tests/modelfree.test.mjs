// Browser tests of the model-free drafting widget: every drafter on every workload, the budget
// sweep, Jacobi, tokens by source, bad input and cancel, and the CPU fallback when the GPU
// module is missing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open, wake } from './browser.mjs';
import { setControl, text, alertOf, rowsOf, alertShown, mfDone } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

test('model-free drafting: every drafter on every workload, identical outputs, draft B beside', async () => {
  const { page, errors } = await open(env, '?modelfree.requests=10');
  await mfDone(page, 1);
  const rows = await rowsOf(page, '[data-widget="modelfree"] table.mf-table');
  assert.equal(rows.length, 1 + 3 * 5 + 1, rows.join(' | '));
  for (const r of rows.slice(1)) assert.match(r, / 10\/10 /, r);
  const tpc = (prefix) => Number(rows.find((r) => r.startsWith(prefix)).slice(prefix.length).trim().split(' ')[0]);
  assert.ok(tpc('code rewrite Prompt Lookup') > 2, rows.join(' | '));
  assert.ok(tpc('agent request + global index (SuffixDecoding)') > tpc('agent Prompt Lookup'), rows.join(' | '));
  assert.ok(rows.some((r) => r.startsWith('LikesWorld draft model B, γ 6')), rows.join(' | '));
  assert.ok(await page.$('[data-widget="modelfree"] .mf-plot svg'), 'the bar chart');
  assert.deepEqual(errors, []);
  await page.close();
});

test('model-free drafting: the budget sweep, Jacobi starts, and tokens coloured by source', async () => {
  const { page, errors } = await open(env, '?modelfree.experiment=sweep&modelfree.workload=agent&modelfree.requests=10');
  await mfDone(page, 1);
  const sweep = await rowsOf(page, '[data-widget="modelfree"] table.mf-sweep');
  assert.equal(sweep.length, 1 + 8, sweep.join(' | '));
  const frac = (r) => Number(r.split(/\s+/)[2].replace('%', ''));
  assert.ok(frac(sweep[1]) > frac(sweep[8]), `accepted fraction falls: ${sweep.join(' | ')}`);
  await setControl(page, 'modelfree', 'experiment', 'jacobi');
  await mfDone(page, 2);
  const jac = await rowsOf(page, '[data-widget="modelfree"] table.mf-jacobi');
  assert.match(jac[1], /^fixed\s*1\.0\d\d /, jac.join(' | '));
  await setControl(page, 'modelfree', 'experiment', 'highlight');
  await mfDone(page, 3);
  const kinds = await page.$$eval('[data-widget="modelfree"] .mf-output .mf-tok', (t) => [...new Set(t.map((x) => x.className))]);
  assert.ok(kinds.includes('mf-tok mf-src-earlier') && kinds.includes('mf-tok mf-src-target'), kinds.join(', '));
  assert.match(await text(page, '[data-widget="modelfree"] .mf-result'), /Identical to the target’s own greedy output/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('model-free drafting: bad input is named, a run can be cancelled, and the widget recovers', async () => {
  const { page, errors } = await open(env, '?modelfree.experiment=highlight&modelfree.requests=10&modelfree.request=50');
  await page.waitForSelector('[data-widget="modelfree"][data-state="error"]', { timeout: 60_000 });
  assert.match(await alertOf(page, 'modelfree'), /request = 50 is out of range/);
  await setControl(page, 'modelfree', 'request', 3);
  await mfDone(page, 1);
  assert.equal(await alertShown(page, 'modelfree'), false);
  await setControl(page, 'modelfree', 'requests', 200);
  await setControl(page, 'modelfree', 'experiment', 'table');
  await page.waitForFunction(() => Number(document.querySelector('[data-widget="modelfree"] .mf-progress')?.value) > 0, null, { timeout: 60_000 });
  await page.click('[data-widget="modelfree"] .mf-cancel');
  await page.waitForSelector('[data-widget="modelfree"][data-cancelled]', { timeout: 10_000 });
  assert.match(await text(page, '[data-widget="modelfree"] .mf-status'), /Cancelled/);
  await setControl(page, 'modelfree', 'requests', 10);
  await mfDone(page, 2);
  assert.deepEqual(errors, []);
  await page.close();
});

test('WebGPU chosen before the GPU module exists: the job runs on the CPU and says so', async () => {
  const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  await page.route('**/pkg/gpu/**', (route) => route.fulfill({ status: 404, body: 'not built yet' }));
  await page.goto(`${env.url}?modelfree.experiment=highlight&modelfree.workload=likesworld&modelfree.requests=2&modelfree.request=1&modelfree.backend=wgpu`);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  await wake(page);
  await mfDone(page, 1);
  assert.match(await text(page, '[data-widget="modelfree"] .mf-status'), /LikesWorld on flex/);
  assert.match(await text(page, '[data-widget="modelfree"] .mf-note'), /WebGPU engine could not be loaded .* ran on the CPU \(flex\)/);
  await page.close();
});

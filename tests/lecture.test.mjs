// The lecture's module first (issue 56): a first visit to the course page fetches the lecture's
// wasm module (crate/math: no burn) and no model; its analytic widgets run on it; a model widget
// sleeps until it comes into view or its Run is pressed, and then fetches the models' module and
// weights, once for the page. A models' engine that cannot be had is said in that widget, with a
// Retry, and the analytic widgets keep working.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { setControl, text } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const MODELS_MODULE = /\/pkg\/(mt\/|fma\/|mt-fma\/)?specdec(_bg\.wasm|\.js)$/;
const fetchedModels = (requests) => requests.filter((r) => MODELS_MODULE.test(r) || r.startsWith('/pkg/weights/'));
const MODEL_WIDGETS = ['measured', 'likesworld', 'decoding', 'train', 'boost', 'treepaths', 'choosehere', 'modelfree'];

test('a first visit fetches the lecture’s module and no model; the analytic widgets run on it', async () => {
  const requests = [];
  const { page, errors } = await open(env, '', { requests, asleep: true });
  assert.ok(requests.includes('/pkg/math/specdec_math_bg.wasm'), requests.join(' '));
  await setControl(page, 'theory', 'c', 0);
  assert.match(await text(page, '[data-widget="theory"] .numbers'), /E = 3\.689 .* speedup 3\.69×/);
  // The exactness lab's Monte Carlo ran in a worker, on the lecture's module too.
  await page.waitForSelector('[data-widget="exactness"][data-mc]', { timeout: 30_000 });
  // Every model widget of the page sleeps, out of view: title, introduction, Run.
  const asleep = await page.$$eval('[data-waiting="load"]', (els) => [...new Set(els.map((e) => e.dataset.widget))]);
  assert.deepEqual(asleep.sort(), [...MODEL_WIDGETS].sort());
  assert.match(await text(page, '#decoding .sw-status'), /loads when it comes into view, or now with Run/);
  assert.deepEqual(fetchedModels(requests), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a model widget that comes into view fetches the models’ engine and mounts; the others wake as they come', async () => {
  const requests = [];
  const { page, errors } = await open(env, '', { requests, asleep: true });
  await page.locator('#likesworld').scrollIntoViewIfNeeded();
  await page.waitForSelector('[data-widget="likesworld"]:not([data-waiting="load"]) .view', { timeout: 60_000 });
  assert.ok(fetchedModels(requests).some((r) => r.endsWith('_bg.wasm')), requests.join(' '));
  for (const m of ['target', 'draft-a', 'draft-b']) assert.ok(requests.includes(`/pkg/weights/${m}.bpk`), m);
  // Far below, the §6 table still sleeps; brought into view, it mounts without a second download.
  assert.equal(await page.getAttribute('#methods', 'data-waiting'), 'load');
  // (Each worker imports the module's bindings, a few KB; the module and weights are handed over.)
  const downloads = () => fetchedModels(requests).filter((r) => !r.endsWith('.js')).length;
  const before = downloads();
  await page.locator('#methods').scrollIntoViewIfNeeded();
  await page.waitForSelector('#methods:not([data-waiting="load"]) select', { timeout: 60_000 });
  assert.equal(downloads(), before, 'the models were downloaded once');
  assert.deepEqual(errors, []);
  await page.close();
});

test('Run on a sleeping model widget wakes it and runs it', async () => {
  const { page, errors } = await open(env, '', { asleep: true });
  // Clicked where it is, out of view (a scroll would wake it by itself).
  await page.$eval('#likesworld .sw-run', (b) => b.click());
  await page.waitForSelector('[data-widget="likesworld"][data-model]', { timeout: 60_000 });
  assert.equal(await page.getAttribute('[data-widget="likesworld"]', 'data-state'), 'ok');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a models’ engine that cannot be had is said in its widget, with a Retry, and the analytic widgets keep working', async () => {
  const prepare = (p) => p.route(MODELS_MODULE, (route) => route.fulfill({ status: 404, body: 'gone' }));
  const { page, errors } = await open(env, '', { prepare, asleep: true });
  await page.locator('#likesworld').scrollIntoViewIfNeeded();
  await page.waitForSelector('#likesworld [role="alert"] .retry', { timeout: 60_000 });
  assert.match(await text(page, '#likesworld [role="alert"]'), /Could not load the WebAssembly engine: .*HTTP 404/);
  // The closed forms still answer.
  await setControl(page, 'theory', 'c', 0);
  assert.match(await text(page, '[data-widget="theory"] .numbers'), /speedup 3\.69×/);
  // The engine comes back: Retry mounts the widget.
  await page.unroute(MODELS_MODULE);
  await page.click('#likesworld .retry');
  await page.waitForSelector('[data-widget="likesworld"]:not([data-waiting="load"]) .view', { timeout: 60_000 });
  assert.ok(errors.every((e) => /404|Failed to load resource/.test(e)), errors.join('\n'));
  await page.close();
});
